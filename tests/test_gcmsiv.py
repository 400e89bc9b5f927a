"""AES-GCM-SIV (RFC 8452): Wycheproof's whole set (RFC 8452 Appendix C among it, its
counter-wrap vectors, spoilt tags) on every backend through every entry point; the LE32
counter wrapping inside a wide batch, on messages built to seal to a chosen tag;
pyca/cryptography at the lengths where the mode's own code hands over; the call shape
(no streaming, 12-byte nonces, 16-, 24- or 32-byte keys). AES-192-GCM-SIV, which RFC 8452
does not define but OpenSSL 3.2+ and pyca have: pyca's 46 vectors, and pyca at every
length above where its OpenSSL has it."""

import os

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCMSIV as PycaGCMSIV
from hypothesis import given, settings
from hypothesis import strategies as st

import aeskit
from aeskit import _aeskit
from aead_helpers import (
    aead_vectors,
    check_every_bit_tampered,
    check_seal_open_refuse,
    gf_inv,
    gf_mul,
    rand,
    vector_id,
    zero_map,
)
from helpers import WIDE_BATCH

VECTORS = aead_vectors("gcmsiv.txt")
VALID = [v for v in VECTORS if v["valid"] == b"\x01"]
SPOILT = [v for v in VECTORS if v["valid"] == b"\x00"]
CONSTANTS = _aeskit.mode_constants("GCM-SIV")
VECTORS_192 = aead_vectors("gcmsiv192.txt")


def _pyca_has_192():
    try:
        PycaGCMSIV(bytes(24)).encrypt(bytes(12), b"", None)
    except Exception:   # an OpenSSL before 3.2: pyca refuses the key or the cipher
        return False
    return True


# Key sizes to compare with pyca: 24 only where its OpenSSL has AES-192-GCM-SIV.
KEY_SIZES_PYCA = (16, pytest.param(24, marks=pytest.mark.skipif(
    not _pyca_has_192(), reason="pyca's OpenSSL has no AES-192-GCM-SIV")), 32)


@pytest.mark.known_answer("GCM-SIV")
def test_vector_file_is_complete():
    assert len(VECTORS) == 202 and len(VALID) == 136 and len(SPOILT) == 66
    rfc = [v for v in VECTORS if "(Ktv): RFC 8452" in v["section"]]
    assert len(rfc) == 50   # RFC 8452 C.1 and C.2 (24 each) and C.3 (2)
    assert {len(v["key"]) for v in rfc} == {16, 32}
    assert len([v for v in VECTORS if "WrappedIv" in v["section"]]) == 10
    assert all(len(v["nonce"]) == 12 and len(v["tag"]) == 16 for v in VECTORS)


@pytest.mark.known_answer("GCM-SIV")
def test_192_vector_file_is_complete():
    assert len(VECTORS_192) == 46
    assert [v["section"] for v in VECTORS_192] == [f"COUNT {i}" for i in range(46)]
    assert all(len(v["key"]) == 24 and len(v["nonce"]) == 12 and len(v["tag"]) == 16
               for v in VECTORS_192)
    assert {len(v["aad"]) > 0 for v in VECTORS_192} == {False, True}


@pytest.mark.known_answer("GCM-SIV")
@pytest.mark.parametrize("v", VALID + VECTORS_192, ids=vector_id)
def test_valid_vectors(backend, v):
    x = aeskit.AESGCMSIV(v["key"], backend=backend)
    sealed = v["ciphertext"] + v["tag"]
    aad = v["aad"]
    assert x.encrypt(v["nonce"], v["plaintext"], aad) == sealed
    assert x.decrypt(v["nonce"], sealed, aad) == v["plaintext"]
    buf = bytearray(sealed)
    assert x.encrypt_into(v["nonce"], v["plaintext"], aad, buf) == len(sealed)
    assert buf == sealed
    out = bytearray(len(v["plaintext"]))
    assert x.decrypt_into(v["nonce"], sealed, aad, out) == len(out)
    assert out == v["plaintext"]
    inplace = bytearray(sealed)   # opening over the ciphertext itself
    assert x.decrypt_into(v["nonce"], inplace, aad, inplace) == len(out)
    assert inplace[:len(out)] == v["plaintext"]


@pytest.mark.parametrize("v", SPOILT, ids=vector_id)
def test_spoilt_tags_fail_and_release_nothing(backend, v):
    x = aeskit.AESGCMSIV(v["key"], backend=backend)
    sealed = v["ciphertext"] + v["tag"]
    with pytest.raises(aeskit.InvalidTag):
        x.decrypt(v["nonce"], sealed, v["aad"])
    out = bytearray(b"\xa5" * len(v["ciphertext"]))
    with pytest.raises(aeskit.InvalidTag):
        x.decrypt_into(v["nonce"], sealed, v["aad"], out)
    assert out == bytes(len(out))   # zeroed, not the plaintext


# ---------------------------------------------------------------- the counter wrapping

def _aes(key, block):
    e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return e.update(block) + e.finalize()


def _aes_inv(key, block):
    d = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return d.update(block) + d.finalize()


def _keys(key, nonce):
    """RFC 8452 4: the message's POLYVAL key and AES key (as long as key)."""
    n = 2 + len(key) // 8
    halves = [_aes(key, i.to_bytes(4, "little") + nonce)[:8] for i in range(n)]
    return halves[0] + halves[1], b"".join(halves[2:])


def _ghash_key(h):
    """mulX_GHASH(rev(H)) as a GHASH-order int (RFC 8452 Appendix A)."""
    v = int.from_bytes(h[::-1], "big")
    return (v >> 1) ^ (0xE1 << 120) if v & 1 else v >> 1


def sealing_to(key, nonce, tag, nblocks, free):
    """nblocks of plaintext that seal to tag under key and nonce with no AAD: random but
    for block `free`, solved from POLYVAL's linearity (by way of GHASH: rev(S) is
    sum rev(X_i) H'^(n+1-i) over the blocks and the lengths block, n + 1 of them)."""
    h, k_enc = _keys(key, nonce)
    s = bytearray(_aes_inv(k_enc, tag))
    assert s[15] & 0x80 == 0   # the caller picked a tag an S can have
    for i in range(12):
        s[i] ^= nonce[i]
    hp = _ghash_key(h)
    blocks = [bytearray(rand(nblocks, 16)) for _ in range(nblocks)]
    lens = (0).to_bytes(8, "little") + (128 * nblocks).to_bytes(8, "little")
    terms = blocks + [lens]
    n = len(terms)

    power = [1 << 127]   # H'^0, the field's one
    for _ in range(n):
        power.append(gf_mul(power[-1], hp))
    want = int.from_bytes(bytes(s)[::-1], "big")
    rest = 0
    for i, b in enumerate(terms):
        if i != free:
            rest ^= gf_mul(int.from_bytes(bytes(b)[::-1], "big"), power[n - i])
    x = gf_mul(want ^ rest, gf_inv(power[n - free]))
    blocks[free] = bytearray(x.to_bytes(16, "big")[::-1])
    return b"".join(bytes(b) for b in blocks)


def tag_with_counter(key, nonce, first):
    """A tag whose counter block starts at `first` (bytes 0..3, little-endian) and that
    some S decrypts from (its AES inverse has bit 127 clear)."""
    _, k_enc = _keys(key, nonce)
    for salt in range(256):
        tag = first.to_bytes(4, "little") + bytes([salt]) + bytes(10) + b"\x11"
        if _aes_inv(k_enc, tag)[15] & 0x80 == 0:
            return tag
    raise AssertionError("no tag found")


@pytest.mark.parametrize("ks", KEY_SIZES_PYCA)
def test_counter_wraps_inside_a_wide_batch(backend, ks):
    # 3 wide batches of blocks whose 32-bit counter passes 2^32 - 1 in the middle of the
    # second: the blocks after it count from 0 with bytes 4..15 unchanged
    key, nonce = rand(ks, ks), rand(12, 12)
    nblocks = 3 * WIDE_BATCH + 3
    tag = tag_with_counter(key, nonce, 2**32 - WIDE_BATCH - WIDE_BATCH // 2)
    pt = sealing_to(key, nonce, tag, nblocks, free=5)
    x = aeskit.AESGCMSIV(key, backend=backend)
    sealed = x.encrypt(nonce, pt, None)
    assert sealed[-16:] == tag
    assert sealed == PycaGCMSIV(key).encrypt(nonce, pt, None)
    assert x.decrypt(nonce, sealed, None) == pt


def test_sealing_to_builds_what_it_says():
    key, nonce = rand(1, 16), rand(2, 12)
    tag = tag_with_counter(key, nonce, 7)
    pt = sealing_to(key, nonce, tag, 4, free=0)
    assert PycaGCMSIV(key).encrypt(nonce, pt, None)[-16:] == tag


# ---------------------------------------------------------------- against pyca

POLY = CONSTANTS["poly_blocks"]     # a ghash call's blocks, the reversal buffer
CHUNK = CONSTANTS["chunk_blocks"]   # opening's CTR-then-POLYVAL chunk
# the mode's hand-overs, and the fused opening kernels' batches (backend constants)
BATCHES_HERE = {v for c in (_aeskit.backend_constants(b) for b in aeskit.backends().available)
                for k, v in c.items() if "batch" in k}
LENGTHS = sorted({0, 1, 15, 16, 17} | {16 * b + d for b in (POLY, 2 * POLY, CHUNK, 2 * CHUNK)
                                       for d in (-17, -16, -1, 0, 1, 16, 17)}
                 | {16 * b + d for b in BATCHES_HERE for d in (-1, 0, 1, 16, 17)})


@pytest.mark.parametrize("ks", KEY_SIZES_PYCA)
@pytest.mark.parametrize("n", LENGTHS)
def test_handovers_match_pyca(backend, ks, n):
    key, nonce = rand(ks + n, ks), rand(n, 12)
    data, aad = rand(n + 1, n), rand(n + 2, n % 67 + (16 * POLY if n % 2 else 0))
    x = aeskit.AESGCMSIV(key, backend=backend)
    sealed = PycaGCMSIV(key).encrypt(nonce, data, aad)
    assert x.encrypt(nonce, data, aad) == sealed
    buf = bytearray(sealed)
    assert x.decrypt_into(nonce, buf, aad, buf) == n and buf[:n] == data


# The short-message kernels (short_msg in a gcmsiv sub-table) take a message whole when its POLYVAL
# input, AAD and data each padded plus the lengths block, is at most this many blocks.
SHORT = max((c.get("gcmsiv_short_blocks", 0) for c in
             (_aeskit.backend_constants(b) for b in aeskit.backends().available)), default=8) or 8
SHORT_AADS = sorted({0, 1, 12, 15, 16, 17, 31, 32, 33, 16 * SHORT - 17, 16 * SHORT - 16,
                     16 * SHORT - 1, 16 * SHORT, 16 * SHORT + 1})


@pytest.mark.parametrize("ks", KEY_SIZES_PYCA)
def test_every_short_message_matches_pyca(backend, ks):
    """Every data length up to past the short kernel's reach, with AAD lengths on each side
    of the block boundaries: sealed as pyca seals, opened in place, and a wrong tag
    releases nothing."""
    key, nonce = rand(ks + 1, ks), rand(ks + 2, 12)
    x, ref = aeskit.AESGCMSIV(key, backend=backend), PycaGCMSIV(key)
    for a in SHORT_AADS:
        aad = rand(a + 3, a)
        for n in range(16 * SHORT + 18):
            data = rand(n + 5, n)
            check_seal_open_refuse(x, nonce, data, aad, ref.encrypt(nonce, data, aad), (a, n))


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from((16, 24, 32) if _pyca_has_192() else (16, 32)).flatmap(
           lambda n: st.binary(min_size=n, max_size=n)),
       nonce=st.binary(min_size=12, max_size=12), data=st.binary(max_size=1200),
       aad=st.binary(max_size=700))
def test_hypothesis_against_pyca(key, nonce, data, aad):
    sealed = PycaGCMSIV(key).encrypt(nonce, data, aad)
    for b in aeskit.backends().available:
        x = aeskit.AESGCMSIV(key, backend=b)
        assert x.encrypt(nonce, data, aad) == sealed
        assert x.decrypt(nonce, sealed, aad) == data


# ---------------------------------------------------------------- the call shape

def test_call_shape(backend):
    for n in (0, 8, 31, 33, 64):
        with pytest.raises(ValueError):
            aeskit.AESGCMSIV(bytes(n), backend=backend)
    for n in (16, 24, 32):
        assert aeskit.AESGCMSIV(bytes(n), backend=backend).key_size == 8 * n
    x = aeskit.AESGCMSIV(bytes(32), backend=backend)
    assert x.key_size == 256 and x.tag_length == 16
    for n in (0, 8, 11, 13, 16):
        with pytest.raises(ValueError, match="nonce"):
            x.encrypt(bytes(n), b"data", None)
    with pytest.raises(ValueError):
        aeskit.AESGCMSIV(bytes(16), tag_length=12, backend=backend)
    # two passes over the data: no streaming contexts
    assert not hasattr(x, "encryptor") and not hasattr(x, "decryptor")
    for short in (b"", bytes(15)):
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt(bytes(12), short, None)


def test_a_repeated_nonce_shows_only_equality(backend):
    x = aeskit.AESGCMSIV(os.urandom(16), backend=backend)
    nonce = bytes(12)
    a, b = x.encrypt(nonce, b"attack at dawn", None), x.encrypt(nonce, b"attack at dusk", None)
    assert x.encrypt(nonce, b"attack at dawn", None) == a
    assert a[-16:] != b[-16:] and a[:-16] != b[:-16]


def test_limits_before_any_work(backend):
    """2^36 bytes of data and of AAD (RFC 8452 6), refused with LimitExceeded before the
    data is read or the output allocated (a sparse mapping stands in for 64 GiB)."""
    assert _aeskit._aead_max_data("GCM-SIV", 12) == 2**36
    x = aeskit.AESGCMSIV(bytes(16), backend=backend)
    big = memoryview(zero_map(2**36 + 32))
    nonce = bytes(12)
    for call in (lambda: x.encrypt(nonce, big[:2**36 + 1], None),
                 lambda: x.decrypt(nonce, big[:2**36 + 17], None),
                 lambda: x.encrypt(nonce, b"", big[:2**36 + 1]),
                 lambda: x.decrypt(nonce, bytes(16), big[:2**36 + 1]),
                 lambda: x.encrypt_into(nonce, big[:2**36 + 1], None, bytearray(16))):
        with pytest.raises(aeskit.LimitExceeded):
            call()


def test_every_bit_tampered_fails_and_releases_nothing(backend):
    """Any bit of the tag, the ciphertext, the AAD or the nonce flipped: InvalidTag, and
    decrypt_into leaves zeros (not plaintext) in its buffer, in place too. (GCM-SIV's
    12-byte nonces and 16-byte tags only fit the shared AEAD suites' parameters in part.)"""
    key, nonce, pt, aad = rand(1, 32), rand(2, 12), rand(3, 40), rand(4, 7)
    check_every_bit_tampered(aeskit.AESGCMSIV(key, backend=backend), nonce, aad, pt)
