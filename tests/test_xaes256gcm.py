"""XAES-256-GCM (C2SP XAES-256-GCM.md v1.0.0): the spec's two worked examples (with the
derivation's L, K1 and Kx) through every entry point on every backend; its accumulated
randomized test (10,000 iterations on every backend, 1,000,000 under the slow marker); the
spec's derivation over pyca/cryptography's AES and AESGCM at the lengths where the mode's
code hands over; streaming against one-shot; tampering, zeroing and the call shape (32-byte
keys, 24-byte nonces, 16-byte tags).

Its own file, not the shared AEAD suites: those take 12-byte nonces and keys of every AES
size, which XAES-256-GCM refuses."""

import hashlib
import random
from types import SimpleNamespace

import pytest

import aeskit
from Crypto.Hash import SHAKE128
from aeskit import _aeskit
from aead_helpers import (
    _xaes_derive,
    _xaes_open,
    _xaes_seal,
    aead_vectors,
    check_every_bit_tampered,
    check_every_path,
    check_seal_open_refuse,
    rand,
    stream_open,
    stream_seal,
    vector_id,
)

X = aeskit.XAES256GCM
VECTORS = aead_vectors("xaes256gcm.txt")
# what check_every_path and the stream helpers read of a spec
SPEC = SimpleNamespace(streams=True, whole_blocks=False)
GCM = _aeskit.mode_constants("GCM")


def _backend_constant(backend, name, default=0):
    return _aeskit.backend_constants(backend).get(name, default)


# ---------------------------------------------------------------- known answers

@pytest.mark.known_answer("XAES-256-GCM")
def test_vector_file_is_complete():
    assert len(VECTORS) == 2
    assert {v["l"][0] >> 7 for v in VECTORS} == {0, 1}   # both branches of K1
    assert all(len(v["key"]) == 32 and len(v["nonce"]) == 24 and len(v["tag"]) == 16
               for v in VECTORS)


@pytest.mark.known_answer("XAES-256-GCM")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_vectors(backend, v):
    x = X(v["key"], backend=backend)
    assert x.key_size == 256 and x.tag_length == 16
    check_every_path(x, SPEC, v["nonce"], v["aad"], v["plaintext"], v["ciphertext"] + v["tag"])


@pytest.mark.known_answer("XAES-256-GCM")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_the_derivation_steps(backend, v):
    """The reference gives the spec's Kx; aeskit's AESGCM under Kx and the nonce's second
    half seals as XAES256GCM does."""
    kx, n = _xaes_derive(v["key"], v["nonce"])
    assert kx == v["kx"] and n == v["nonce"][12:]
    sealed = v["ciphertext"] + v["tag"]
    assert _xaes_seal(v["key"], v["nonce"], v["plaintext"], v["aad"], 16) == sealed
    assert aeskit.AESGCM(kx, backend=backend).encrypt(n, v["plaintext"], v["aad"]) == sealed


def _accumulated(iterations, backend):
    """C2SP's accumulated randomized test: key, nonce, plaintext<0..255>, aad<0..255> read
    from one SHAKE-128 stream of the empty input, each ciphertext into another SHAKE-128,
    whose first 32 bytes are the result. The stream is read as it goes (pycryptodome's
    SHAKE128: hashlib's has no incremental read, and the longest run would need 568 MB)."""
    stream = SHAKE128.new()
    out = hashlib.shake_128()
    for _ in range(iterations):
        key, nonce = stream.read(32), stream.read(24)
        pt = stream.read(stream.read(1)[0])
        aad = stream.read(stream.read(1)[0])
        x = X(key, backend=backend)
        ct = x.encrypt(nonce, pt, aad)
        assert x.decrypt(nonce, ct, aad) == pt
        out.update(ct)
    return out.hexdigest(32)


@pytest.mark.known_answer("XAES-256-GCM")
def test_accumulated_10000(backend):
    assert _accumulated(10_000, backend) == \
        "e6b9edf2df6cec60c8cbd864e2211b597fb69a529160cd040d56c0c210081939"


@pytest.mark.slow
def test_accumulated_1000000(backend):
    """The spec's 1,000,000 iterations on every backend: 2-4 minutes each on a loaded
    2-vCPU Zen 4 (-n 2; mostly Python's per-call work); deselected by default (pyproject's
    addopts), run with -m slow."""
    assert _accumulated(1_000_000, backend) == \
        "2163ae1445985a30b60585ee67daa55674df06901b890593e824b8a7c885ab15"


# ---------------------------------------------------------------- against the reference

def _lengths(backend):
    """Data lengths around GCM's short path (AAD and data of at most short_blocks blocks
    together), the fused kernel's least message, the length from which the message's GHASH
    key is built whole (xaes_whole_key_blocks: data blocks, so 16 * whole - 1 bytes takes
    the per-message key and 16 * whole the whole one), and a few bulk sizes."""
    short = 16 * GCM["short_blocks"]
    fused = 16 * _backend_constant(backend, "gcm_fused_min_blocks", 8)
    around = {short - 16, short - 1, short, short + 1, fused - 1, fused, fused + 15,
              fused + 16, fused + 17, 16 * 256 + 5}
    whole = 16 * _backend_constant(backend, "xaes_whole_key_blocks", 0)
    if whole:
        around |= {whole - 1, whole, whole + 17}
    return sorted({0, 1, 15, 16, 17, 63, 64, 65, 16384} | {n for n in around if n >= 0})


def test_matches_the_reference(backend):
    x = X(rand(1, 32), backend=backend)
    for n in _lengths(backend):
        for aad_len in (0, 1, 16, 40, 300):
            nonce, pt, aad = rand(n, 24), rand(n + 1, n), rand(aad_len, aad_len)
            sealed = x.encrypt(nonce, pt, aad)
            assert sealed == _xaes_seal(rand(1, 32), nonce, pt, aad, 16), (n, aad_len)
            assert x.decrypt(nonce, sealed, aad) == pt
            assert _xaes_open(rand(1, 32), nonce, sealed[:-16], sealed[-16:], aad) == pt


# The short-message kernel (short_msg in an xaes sub-table) takes a message whole when its
# GHASH input, AAD and data each padded plus the lengths block, is at most this many blocks.
XSHORT = max((_aeskit.backend_constants(b).get("xaes_short_blocks", 0)
              for b in aeskit.backends().available), default=8) or 8
XSHORT_AADS = sorted({0, 1, 15, 16, 17, 33, 16 * XSHORT - 17, 16 * XSHORT - 16,
                      16 * XSHORT - 1, 16 * XSHORT, 16 * XSHORT + 1})


def test_every_short_message_matches_the_reference(backend):
    """Every data length up to past the short kernel's reach, with AAD lengths on each side
    of the block boundaries: sealed as the reference seals, opened in place, and a wrong
    tag releases nothing."""
    key = rand(11, 32)
    x = X(key, backend=backend)
    for a in XSHORT_AADS:
        aad = rand(a + 3, a)
        for n in range(16 * XSHORT + 18):
            nonce, data = rand(a + n, 24), rand(n + 5, n)
            check_seal_open_refuse(x, nonce, data, aad, _xaes_seal(key, nonce, data, aad, 16),
                                   (a, n))


def test_short_message_over_its_own_nonce(backend):
    """Sealed in place over data whose first 24 bytes are the nonce (one buffer): the
    short kernel reads the nonce before it writes."""
    x = X(rand(12, 32), backend=backend)
    for n in (24, 40, 64, 100):
        data = rand(n + 2, n)
        sealed = x.encrypt(data[:24], data, None)
        buf = bytearray(data + bytes(16))
        view = memoryview(buf)
        assert x.encrypt_into(view[:24], view[:n], None, view) == n + 16
        assert bytes(buf) == sealed, n


def test_streaming_matches_one_shot(backend):
    """Random splits of the AAD and the data, through update and update_into, seal and
    open as the one-shot calls do."""
    r = random.Random(7)
    x = X(rand(2, 32), backend=backend)
    for n in (0, 1, 31, 64, 500, 4096 + 33, 16384):
        nonce, pt, aad = rand(3 * n, 24), rand(n, n), rand(n + 5, r.randrange(0, 70))
        sealed = x.encrypt(nonce, pt, aad)
        ct, tag = sealed[:n], sealed[n:]
        cuts = sorted(r.sample(range(n + 1), min(n + 1, 5)))
        pieces = [pt[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
        acut = r.randrange(len(aad) + 1)
        into = [r.random() < 0.5 for _ in pieces]
        assert stream_seal(x, SPEC, nonce, pt, [aad[:acut], aad[acut:]], pieces, into) == \
            (ct, tag)
        cpieces = [ct[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
        assert stream_open(x, SPEC, nonce, tag, [aad[:acut], aad[acut:]], cpieces, into) == pt


# ---------------------------------------------------------------- tampering

def test_every_bit_tampered_fails_and_releases_nothing(backend):
    """Any bit of the tag, the ciphertext, the AAD or the nonce (both halves: the first
    makes the key, the second GCM's nonce) flipped: InvalidTag, and decrypt_into leaves
    zeros in its buffer, in place too; a streaming open refuses the tag."""
    key, nonce, pt, aad = rand(11, 32), rand(12, 24), rand(13, 40), rand(14, 7)
    x = X(key, backend=backend)
    sealed = check_every_bit_tampered(x, nonce, aad, pt)
    ctx = x.decryptor(nonce)
    ctx.authenticate_additional_data(aad)
    ctx.update(sealed[:-16])
    bad = bytes([sealed[-16] ^ 1]) + sealed[-15:]
    with pytest.raises(aeskit.InvalidTag):
        ctx.finalize_with_tag(bad)


# ---------------------------------------------------------------- the call shape

def test_call_shape(backend):
    for n in (0, 16, 24, 31, 33, 64):
        with pytest.raises(ValueError, match=f"XAES256GCM: key must be 32 bytes, got {n}"):
            X(bytes(n), backend=backend)
    assert X(bytes(32), tag_length=16, backend=backend).tag_length == 16
    with pytest.raises(ValueError, match="tag_length must be 16"):
        X(bytes(32), tag_length=12, backend=backend)
    x = X(bytes(32), backend=backend)
    for n in (0, 12, 16, 23, 25, 32):
        for call in (lambda: x.encrypt(bytes(n), b"data", None),
                     lambda: x.decrypt(bytes(n), bytes(32), None),
                     lambda: x.encryptor(bytes(n))):
            with pytest.raises(ValueError, match=f"nonce must be 24 bytes .*, got {n}"):
                call()
    assert len(X.generate_key()) == 32 and len(X.generate_key(256)) == 32
    assert X.generate_key() != X.generate_key()
    with pytest.raises(ValueError, match="bit_length"):
        X.generate_key(128)
    for short in (b"", bytes(15)):
        with pytest.raises(aeskit.InvalidTag):
            x.decrypt(bytes(24), short, None)
