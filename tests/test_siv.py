"""AES-SIV (RFC 5297): RFC 5297 Appendix A and Project Wycheproof's whole set (spoilt tags
among it) on every backend through every entry point; pyca/cryptography with hypothesis over
the data, the number of associated-data components (0..126) and their lengths; every backend
against portable where S2V's side-by-side chains hand over; tampering; the 126-component
limit; the call shape.

The shared AEAD suites (aead_helpers.AEADS) are written for encrypt(nonce, data, aad) with one
buffer of associated data, ciphertext || tag, and streaming contexts; SIV takes no nonce
argument, a list of components, puts its tag first and does not stream. Fitting it there
would mean a second call shape through every test of four files, so its API, tamper,
zeroing and guard-page checks are here instead (aead_helpers.OWN_SUITE_AEADS names it)."""

import threading

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESSIV as PycaSIV
from hypothesis import given, settings
from hypothesis import strategies as st

import aeskit
from aeskit import _aeskit
from aead_helpers import GuardedBuffer, aead_vectors, rand

VECTORS = aead_vectors("siv.txt")
VALID = [v for v in VECTORS if v["valid"] == b"\x01"]
SPOILT = [v for v in VECTORS if v["valid"] == b"\x00"]
CONSTANTS = _aeskit.mode_constants("SIV")
CHUNK = CONSTANTS["chunk_blocks"]
MAX_AD = 126
KEY_SIZES = (32, 48, 64)


def ads_of(v):
    """The vector's associated-data components, in order."""
    return [v[f"ad{i}"] for i in range(len(v)) if f"ad{i}" in v]


def pyca(key, data, ads):
    return PycaSIV(bytes(key)).encrypt(bytes(data), [bytes(a) for a in ads] or None)


# ---------------------------------------------------------------- known answers

@pytest.mark.known_answer("SIV")
def test_vector_file_is_complete():
    assert len(VECTORS) == 444 and len(VALID) == 120 and len(SPOILT) == 324
    rfc = [v for v in VECTORS if v["section"].startswith("RFC 5297")]
    assert [len(ads_of(v)) for v in rfc] == [1, 3]   # A.1; A.2 with its nonce last
    assert {len(v["key"]) for v in VECTORS} == set(KEY_SIZES)
    assert all(len(v["tag"]) == 16 and len(v["ciphertext"]) == len(v["plaintext"])
               for v in VECTORS)
    assert len([v for v in VECTORS if "EdgeCaseSiv" in v["section"]]) == 30


@pytest.mark.known_answer("SIV")
@pytest.mark.parametrize("ks", KEY_SIZES)
def test_valid_vectors(backend, ks):
    for v in (v for v in VALID if len(v["key"]) == ks):
        x = aeskit.AESSIV(v["key"], backend=backend)
        ads, pt = ads_of(v), v["plaintext"]
        sealed = v["tag"] + v["ciphertext"]
        assert x.encrypt(pt, ads) == sealed, v["section"]
        assert x.decrypt(sealed, ads) == pt, v["section"]
        buf = bytearray(len(sealed))
        assert x.encrypt_into(pt, ads, buf) == len(sealed) and buf == sealed, v["section"]
        out = bytearray(len(pt))
        assert x.decrypt_into(sealed, ads, out) == len(pt) and out == pt, v["section"]
        inplace = bytearray(sealed)   # opening over the sealed message itself
        assert x.decrypt_into(inplace, ads, inplace) == len(pt), v["section"]
        assert inplace[:len(pt)] == pt, v["section"]


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_spoilt_tags_fail_and_release_nothing(backend, ks):
    for v in (v for v in SPOILT if len(v["key"]) == ks):
        x = aeskit.AESSIV(v["key"], backend=backend)
        sealed = v["tag"] + v["ciphertext"]
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt(sealed, ads_of(v))
        out = bytearray(b"\xa5" * len(v["ciphertext"]))
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt_into(sealed, ads_of(v), out)
        assert out == bytes(len(out)), v["section"]   # zeroed, not the plaintext


# ---------------------------------------------------------------- against pyca and portable

# Component and data lengths around S2V's own boundaries: the empty one (one padded block),
# a block either side of 16 (K1 or K2, xorend or dbl-and-pad), 32 (the plaintext's chain
# shares no block with its input below 32 bytes), and around opening's CTR chunk.
EDGES = (0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49)
CHUNK_LENS = tuple(16 * CHUNK + d for d in (-17, -16, -1, 0, 1, 15, 16, 17, 32))


def _lengths():
    return st.one_of(st.sampled_from(EDGES), st.integers(0, 300))


@settings(max_examples=60, deadline=None)
@given(ks=st.sampled_from(KEY_SIZES), data=st.data())
def test_hypothesis_against_pyca(ks, data):
    n_ad = data.draw(st.one_of(st.integers(0, 4), st.integers(0, MAX_AD)), label="n_ad")
    lens = data.draw(st.lists(_lengths(), min_size=n_ad, max_size=n_ad), label="ad lengths")
    n = data.draw(st.one_of(st.sampled_from(EDGES + CHUNK_LENS), st.integers(0, 2000)),
                  label="data length")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    key = rand(seed, ks)
    ads = [rand(seed + 1 + i, m) for i, m in enumerate(lens)]
    pt = rand(seed - 1, n)
    sealed = pyca(key, pt, ads)
    for b in aeskit.backends().available:
        x = aeskit.AESSIV(key, backend=b)
        assert x.encrypt(pt, ads) == sealed, b
        assert x.decrypt(sealed, ads) == pt, b


def _shapes():
    """(component lengths, data length): the chains ending together, one by one, the
    plaintext's chain longest and shortest, and one long component after many short."""
    yield [], 0
    for n in EDGES + CHUNK_LENS:
        yield [], n
        yield [n], 33
        yield [n, n, n], n
    yield [16 * i for i in range(MAX_AD)], 100
    yield [i for i in range(MAX_AD, 0, -1)], 16 * CHUNK + 1
    yield [0] * 60 + [4000] + [17] * 65, 3
    yield [5000, 1, 5000], 2 * 16 * CHUNK + 5


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_backends_match_portable_and_pyca(backend, ks):
    ref = aeskit.AESSIV(rand(ks, ks), backend="portable")
    x = aeskit.AESSIV(rand(ks, ks), backend=backend)
    for i, (lens, n) in enumerate(_shapes()):
        ads = [rand(1000 * i + j, m) for j, m in enumerate(lens)]
        pt = rand(i, n)
        sealed = ref.encrypt(pt, ads)
        assert x.encrypt(pt, ads) == sealed, (lens, n)
        assert x.decrypt(sealed, ads) == pt, (lens, n)
        if i % 7 == 0:
            assert sealed == pyca(rand(ks, ks), pt, ads), (lens, n)


# ---------------------------------------------------------------- the components

def test_no_empty_and_several_empty_components_differ(backend):
    """OpenSSL CVE-2023-2975 ignored empty associated data: no component, one empty one and
    two empty ones are three different S2V inputs."""
    x = aeskit.AESSIV(rand(1, 32), backend=backend)
    for pt in (b"", b"msg", bytes(40)):
        outs = [x.encrypt(pt, ads) for ads in (None, [b""], [b"", b""], [b"", b"", b""])]
        assert len(set(outs)) == 4
        assert x.encrypt(pt, []) == outs[0]
        for ads, sealed in zip((None, [b""], [b"", b""], [b"", b"", b""]), outs):
            assert sealed == pyca(rand(1, 32), pt, ads or [])
            assert x.decrypt(sealed, ads) == pt


def test_order_and_boundaries_of_components_matter(backend):
    x = aeskit.AESSIV(rand(2, 48), backend=backend)
    pt = b"payload"
    sealed = x.encrypt(pt, [b"ab", b"cd"])
    for other in ([b"cd", b"ab"], [b"abcd"], [b"a", b"bcd"], [b"ab", b"cd", b""],
                  [b"", b"ab", b"cd"], [b"ab"], None):
        assert x.encrypt(pt, other) != sealed
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt(sealed, other)


def test_component_limit(backend):
    x = aeskit.AESSIV(rand(3, 32), backend=backend)
    ads = [bytes([i]) for i in range(MAX_AD)]
    sealed = x.encrypt(b"data", ads)
    assert sealed == pyca(rand(3, 32), b"data", ads)
    assert x.decrypt(sealed, ads) == b"data"
    over = ads + [b""]
    buf = bytearray(100)
    for call in (lambda: x.encrypt(b"data", over), lambda: x.decrypt(sealed, over),
                 lambda: x.encrypt_into(b"data", over, buf),
                 lambda: x.decrypt_into(sealed, over, buf)):
        with pytest.raises(ValueError, match="126") as ei:
            call()
        assert not isinstance(ei.value, aeskit.InvalidTag)
    assert buf == bytearray(100)   # refused before any work


def test_nonce_is_the_last_component(backend):
    """RFC 5297 3: a nonce-based use puts the nonce last; two nonces give two SIVs."""
    x = aeskit.AESSIV(rand(4, 32), backend=backend)
    a = x.encrypt(b"same", [b"header", bytes(16)])
    b = x.encrypt(b"same", [b"header", bytes(15) + b"\x01"])
    assert a != b and a[16:] != b[16:]
    assert x.encrypt(b"same", [b"header", bytes(16)]) == a   # deterministic


# ---------------------------------------------------------------- tampering

def test_every_bit_of_tag_ciphertext_and_components(backend):
    x = aeskit.AESSIV(rand(5, 32), backend=backend)
    ads, pt = [rand(6, 5), rand(7, 0), rand(8, 20)], rand(9, 37)
    sealed = x.encrypt(pt, ads)
    for i in range(8 * len(sealed)):
        bad = bytearray(sealed)
        bad[i // 8] ^= 1 << (i % 8)
        out = bytearray(b"\xa5" * len(pt))
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt_into(bad, ads, out)
        assert out == bytes(len(pt))
    for j, a in enumerate(ads):
        for i in range(8 * len(a)):
            bad_ads = list(ads)
            spoilt = bytearray(a)
            spoilt[i // 8] ^= 1 << (i % 8)
            bad_ads[j] = bytes(spoilt)
            with pytest.raises(aeskit.InvalidTag):
                x.decrypt(sealed, bad_ads)


def test_truncated_extended_and_wrong_key(backend):
    x = aeskit.AESSIV(rand(10, 64), backend=backend)
    sealed = x.encrypt(b"sixteen bytes!!!", [b"h"])
    for bad in (sealed[:-1], sealed[1:], sealed + b"\0", sealed[:16], sealed[:15], b""):
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt(bad, [b"h"])
    for key in (rand(11, 64), rand(10, 64)[32:] + rand(10, 64)[:32]):   # K1 and K2 swapped
        with pytest.raises(aeskit.InvalidTag):
            aeskit.AESSIV(key, backend=backend).decrypt(sealed, [b"h"])


# ---------------------------------------------------------------- the call shape

def test_call_shape(backend):
    for n in (0, 16, 24, 31, 33, 47, 49, 63, 65, 128):
        with pytest.raises(ValueError):
            aeskit.AESSIV(bytes(n), backend=backend)
    for ks in KEY_SIZES:
        x = aeskit.AESSIV(bytes(ks), backend=backend)
        assert x.key_size == 8 * ks and x.tag_length == 16 and x.backend == backend
        assert len(aeskit.AESSIV.generate_key(8 * ks)) == ks
    with pytest.raises(ValueError):
        aeskit.AESSIV.generate_key(128)
    x = aeskit.AESSIV(bytes(32), backend=backend)
    # no nonce argument, and two passes over the data: no streaming contexts
    assert not hasattr(x, "encryptor") and not hasattr(x, "decryptor")
    with pytest.raises(TypeError):
        x.encrypt(bytes(12), b"data", None)
    sealed = x.encrypt(data=b"data", associated_data=[b"a"])
    assert x.decrypt(data=sealed, associated_data=[b"a"]) == b"data"
    buf = bytearray(20)
    assert x.encrypt_into(data=b"data", associated_data=[b"a"], buf=buf) == 20
    assert x.encrypt(b"data", (b"a",)) == sealed == bytes(buf)   # a tuple is a list here
    with pytest.raises(ValueError):
        aeskit.AESSIV(bytes(32), tag_length=12, backend=backend)


@pytest.mark.parametrize("bad", [b"one buffer", bytearray(3), "text", 5, {b"a": 1}])
def test_associated_data_must_be_a_list(backend, bad):
    x = aeskit.AESSIV(bytes(32), backend=backend)
    with pytest.raises(TypeError):
        x.encrypt(b"data", bad)


@pytest.mark.parametrize("item", ["text", 5, None, [b"nested"]])
def test_components_must_be_buffers(backend, item):
    x = aeskit.AESSIV(bytes(32), backend=backend)
    with pytest.raises(TypeError):
        x.encrypt(b"data", [b"ok", item])
    with pytest.raises(TypeError):
        x.decrypt(bytes(20), [item])


def test_buffers_of_every_kind(backend):
    import array

    import numpy as np

    x = aeskit.AESSIV(rand(12, 32), backend=backend)
    want = x.encrypt(b"0123456789", [b"ab", b"cdef"])
    assert x.encrypt(memoryview(b"0123456789"),
                     [bytearray(b"ab"), np.frombuffer(b"cdef", np.uint8)]) == want
    assert x.encrypt(array.array("B", b"0123456789"), [memoryview(b"xabx")[1:3],
                                                       b"cdef"]) == want


def test_into_sizes_and_overlap(backend):
    x = aeskit.AESSIV(rand(13, 32), backend=backend)
    pt, ads = rand(14, 40), [b"hdr"]
    sealed = x.encrypt(pt, ads)
    for size in (0, 55):
        with pytest.raises(ValueError):
            x.encrypt_into(pt, ads, bytearray(size))
    with pytest.raises(ValueError):
        x.decrypt_into(sealed, ads, bytearray(39))
    big = bytearray(b"\xee" * 70)   # larger is fine; nothing past the output is touched
    assert x.encrypt_into(pt, ads, big) == 56 and big[:56] == sealed and big[56:] == b"\xee" * 14
    # in place: the plaintext at the start of a buffer with room for the tag; the body
    # moves by the tag's length before the mode runs
    store = bytearray(pt) + bytearray(16)
    assert x.encrypt_into(memoryview(store)[:40], ads, store) == 56 and store == sealed
    assert x.decrypt_into(store, ads, store) == 40 and store[:40] == pt
    # partial overlap other than that is refused
    store = bytearray(sealed) + bytearray(8)
    with pytest.raises(ValueError):
        x.decrypt_into(memoryview(store)[:56], ads, memoryview(store)[3:43])


def test_output_over_a_component(backend):
    """The mode reads every component before it writes: a component that is the output
    buffer itself still authenticates what it held before the call."""
    x = aeskit.AESSIV(rand(15, 32), backend=backend)
    pt, ad = rand(16, 40), rand(17, 40)
    sealed = x.encrypt(pt, [b"h", ad])
    buf = bytearray(ad)   # decrypt over the component
    assert x.decrypt_into(sealed, [b"h", buf], buf) == 40 and buf == pt
    buf = bytearray(ad) + bytearray(16)   # encrypt over it
    assert x.encrypt_into(pt, [b"h", memoryview(buf)[:40]], buf) == 56 and buf == sealed


@pytest.mark.parametrize("length", [0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 4096, 4097,
                                    16 * CHUNK + 17])
def test_no_access_past_the_end(backend, length):
    """Every input and output ends right before an unmapped page."""
    key = GuardedBuffer(48, rand(1, 48))
    x = aeskit.AESSIV(key.view, backend=backend)
    pt = GuardedBuffer(length, rand(2, length))
    ads = [GuardedBuffer(m, rand(3 + m, m)) for m in (0, length % 37, 16, length)]
    views = [a.view for a in ads]
    want = pyca(bytes(key.view), bytes(pt.view), [bytes(v) for v in views])
    out = GuardedBuffer(length + 16)
    assert x.encrypt_into(pt.view, views, out.view) == length + 16
    assert bytes(out.view) == want
    back = GuardedBuffer(length)
    assert x.decrypt_into(out.view, views, back.view) == length
    assert bytes(back.view) == bytes(pt.view)


def test_shared_key_object_threads(backend):
    x = aeskit.AESSIV(rand(18, 64), backend=backend)
    jobs = [([rand(i, i * 7 % 100)] * (i % 5), rand(i + 50, i * 611)) for i in range(24)]
    want = [x.encrypt(pt, ads) for ads, pt in jobs]
    got, errors = [None] * len(jobs), []

    def work(k):
        try:
            for _ in range(5):
                for i in range(k, len(jobs), 4):
                    ads, pt = jobs[i]
                    got[i] = x.encrypt(pt, ads)
                    assert x.decrypt(got[i], ads) == pt
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == want


def test_a_repeated_message_shows_only_equality(backend):
    x = aeskit.AESSIV(rand(19, 32), backend=backend)
    a, b = x.encrypt(b"attack at dawn", None), x.encrypt(b"attack at dusk", None)
    assert x.encrypt(b"attack at dawn", None) == a
    assert a[:16] != b[:16] and a[16:] != b[16:]
