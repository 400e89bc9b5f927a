"""AES-GCM known answers (McGrew-Viega test cases 1-18, CAVP truncated tags and odd IV
lengths, Wycheproof's J0 wrap cases), on every backend through every entry point; and the
32-bit counter wrapping inside long messages, for nonces built to give any J0."""

import functools

import pytest

from aead_helpers import (
    AEAD,
    BATCHES,
    KEY_SIZES,
    WIDE_BATCH,
    aead_vectors,
    chunks,
    check_every_path,
    gcm_j0,
    gcm_model_ciphertext,
    inc32,
    new_aead,
    nonce_for_j0,
    rand,
    ref_libs,
    ref_open,
    ref_seal,
    stream_open,
    stream_seal,
    vector_id,
)

GCM = AEAD["GCM"]
VECTORS = aead_vectors("gcm.txt")
# every test here is a known-answer test (or checks the vectors and models they use)
pytestmark = pytest.mark.known_answer("GCM")
MCGREW_VIEGA = [v for v in VECTORS if v["section"].startswith("McGrew-Viega")]


def test_vector_file_is_complete():
    sections = [v["section"] for v in VECTORS]
    assert len(sections) == len(set(sections)) == 35
    cases = {int(s.split()[3]) for s in sections if s.startswith("McGrew-Viega")}
    assert cases == set(range(1, 19))
    assert len([s for s in sections if s.startswith("CAVP")]) == 8
    assert len([s for s in sections if s.startswith("Wycheproof")]) == 9
    for v in MCGREW_VIEGA:
        bits = int(v["section"].split()[4].split("-")[1])
        assert len(v["key"]) * 8 == bits
    # What the vectors must cover: key sizes, IV lengths, tag lengths, wrap J0s.
    assert {len(v["key"]) for v in VECTORS} == {16, 24, 32}
    assert {1, 8, 12, 16, 60, 128} <= {len(v["nonce"]) for v in VECTORS}
    assert {4, 8, 12, 13, 14, 15, 16} <= {len(v["tag"]) for v in VECTORS}
    assert {v["j0"][12:].hex() for v in VECTORS if "j0" in v} >= {"ffffffff", "fffffffe"}
    for v in VECTORS:
        assert len(v["ciphertext"]) == len(v["plaintext"])


@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_vectors_agree_with_references(v):
    """The stored hex is what pyca/cryptography and pycryptodome compute."""
    t = len(v["tag"])
    libs = ref_libs(GCM, len(v["nonce"]), t)
    assert libs
    for lib in libs:
        assert ref_seal(GCM, v["key"], v["nonce"], v["plaintext"], v["aad"], t,
                        lib=lib) == v["ciphertext"] + v["tag"], lib
        assert ref_open(GCM, v["key"], v["nonce"], v["ciphertext"] + v["tag"], v["aad"], t,
                        lib=lib) == v["plaintext"], lib
    if "j0" in v:
        assert gcm_j0(v["key"], v["nonce"]) == v["j0"]
        assert v["ciphertext"] == gcm_model_ciphertext(v["key"], v["j0"], v["plaintext"])


@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_kat(v, backend):
    obj = new_aead(GCM, v["key"], tag_length=len(v["tag"]), backend=backend)
    assert obj.backend == backend
    assert obj.key_size == len(v["key"]) * 8
    assert obj.tag_length == len(v["tag"])
    check_every_path(obj, GCM, v["nonce"], v["aad"], v["plaintext"],
                     v["ciphertext"] + v["tag"])


@pytest.mark.parametrize("tag_length", GCM.tag_lengths)
@pytest.mark.parametrize("v", MCGREW_VIEGA, ids=vector_id)
def test_kat_truncated_tags(v, backend, tag_length):
    """SP 800-38D 7.1 step 6: a t-byte tag is the first t bytes of the full one."""
    obj = new_aead(GCM, v["key"], tag_length=tag_length, backend=backend)
    sealed = v["ciphertext"] + v["tag"][:tag_length]
    assert obj.encrypt(v["nonce"], v["plaintext"], v["aad"]) == sealed
    assert obj.decrypt(v["nonce"], sealed, v["aad"]) == v["plaintext"]
    ct, tag = stream_seal(obj, GCM, v["nonce"], v["plaintext"], [v["aad"]], [v["plaintext"]])
    assert ct + tag == sealed
    assert stream_open(obj, GCM, v["nonce"], v["tag"][:tag_length], [v["aad"]],
                       [v["ciphertext"]]) == v["plaintext"]
    buf = bytearray(len(sealed))
    assert obj.encrypt_into(v["nonce"], v["plaintext"], v["aad"], buf) == len(sealed)
    assert buf == sealed


# ---------------------------------------------------------------- counter wrap

# Low 32 bits of J0. The first data block uses inc32(J0), so J0 = ...fffffffe wraps after one
# block, ...ffffffff at once; 2^32 - b and 2^32 - b + 1 wrap at the end of a first batch of b
# blocks, or one block before it, for every backend's batch b (helpers.BATCHES).
WRAP_LOWS = tuple(sorted({0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0x00000000, 0x7FFFFFFF}
                         | {2**32 - b + d for b in BATCHES for d in (0, 1)}, reverse=True))
# High 96 bits: all ones (a carry out of the low word must not reach them), all zeros, mixed.
WRAP_HIGHS = (b"\xff" * 12, bytes(12), bytes.fromhex("000102030405060708090a0b"))
# Messages of 1..4 blocks, of every batch and one block either side, and of 3/4 and 5/4 of
# the widest.
WRAP_BLOCKS = tuple(sorted({1, 2, 3, 4, WIDE_BATCH * 3 // 4, WIDE_BATCH * 5 // 4}
                           | {b + d for b in BATCHES for d in (-1, 0, 1)}))


@functools.lru_cache(maxsize=None)
def _wrap_nonce(key, j0):
    nonce = nonce_for_j0(key, j0)
    assert gcm_j0(key, nonce) == j0
    return nonce


def _wrap_cases():
    for ks in KEY_SIZES:
        for hi in WRAP_HIGHS:
            for lo in WRAP_LOWS:
                yield pytest.param(ks, hi + lo.to_bytes(4, "big"),
                                   id=f"{ks * 8}-{hi.hex()[:4]}..{lo:08x}")


def test_nonce_for_j0_matches_wycheproof():
    """The model that builds wrap nonces reproduces Wycheproof's J0 comments."""
    wp = [v for v in VECTORS if "j0" in v]
    assert len(wp) == 4
    for v in wp:
        assert nonce_for_j0(v["key"], v["j0"]) == v["nonce"]


@pytest.mark.parametrize("ks,j0", list(_wrap_cases()))
def test_counter_wrap(backend, ks, j0):
    """Long messages whose 32-bit counter wraps (inc32: modulo 2^32 in the low word only),
    against pyca/cryptography and the single-block model, one-shot and streamed."""
    key = rand(ks * 1000 + j0[-1], ks)
    nonce = _wrap_nonce(key, j0)
    obj = new_aead(GCM, key, backend=backend)
    aad = rand(7, 20)
    for nblocks in WRAP_BLOCKS:
        for tail in (0, 5):
            n = 16 * nblocks + tail
            pt = rand(n, n)
            sealed = obj.encrypt(nonce, pt, aad)
            want = ref_seal(GCM, key, nonce, pt, aad)
            assert sealed == want, (nblocks, tail)
            assert sealed[:n] == gcm_model_ciphertext(key, j0, pt)
            assert obj.decrypt(nonce, sealed, aad) == pt
    # Streamed, cut at and around the block where the counter wraps.
    n = 16 * max(WRAP_BLOCKS) + 3
    pt = rand(99, n)
    want = ref_seal(GCM, key, nonce, pt, aad)
    wrap_at = 16 * ((0x100000000 - int.from_bytes(j0[12:], "big") - 1) % 2**32)
    for cuts in ([wrap_at], [wrap_at - 1], [wrap_at + 1], [wrap_at - 16, wrap_at + 16],
                 [1, wrap_at, wrap_at, n - 1]):
        cuts = [min(max(c, 0), n) for c in cuts]
        ct, tag = stream_seal(obj, GCM, nonce, pt, [aad], chunks(pt, cuts))
        assert ct + tag == want, cuts


def test_inc32_model():
    assert inc32(b"\xff" * 16) == b"\xff" * 12 + bytes(4)
    assert inc32(bytes(12) + b"\xff\xff\xff\xfe", 3) == bytes(12) + b"\0\0\0\1"
