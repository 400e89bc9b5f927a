"""Wide kernels at their loop boundaries: every backend byte-identical to `portable`.

W is the blocks per main-loop iteration of the widest kernel, the largest batch_blocks of the
compiled-in backends (backend_constants): vaes_avx512 runs 8 zmm of 4 blocks (32), vaes_avx2
8 ymm of 2 (16), aesni 8 xmm. Every length 0..(3W+2)*16+17 and
16kW+d (d in +-{0, 1, 15, 16, 17}) crosses each handover: full batches, the half batch, one
vector at a time, the last 1..3 blocks of a vector, and CTR's head that aligns the counter
(TESTING.md). ECB and CBC take whole blocks, so their lengths are the multiples of 16.

Counters: AESCTR (BE128) from counters 1..W+17 blocks short of a carry out of 32, 64 and
128 bits, so the carry falls in the head, in every group of a batch and in the tail. The
32-bit counter (BE32) is GCM's: AESGCM with a 16-byte nonce solved for a chosen J0 puts the
2^32 wrap at the same positions, over messages long enough for vaes_avx512's fused GCM
kernel; such a counter depends on the key, so modes/gcm.c takes them through the
constant-time generic CTR instead (a 12-byte nonce's counter cannot wrap). The
little-endian 32-bit counter (LE32, for GCM-SIV) has no public mode yet: test_slots.py
calls the backends' ctr slot directly for it and for BE32.
"""

import ctypes
import functools

import pytest
from aead_helpers import (AEAD, gcm_j0, gcm_model_ciphertext, new_aead, nonce_for_j0, rand,
                          ref_seal, stream_seal)
from helpers import (CIPHER, CIPHERS, GCM_FUSED_MIN, GHASH_POWERS, KEY_SIZES, WIDE_BATCH,
                     decrypt, decrypt_into, encrypt, encrypt_into, new, ref, spec_params)

GCM = AEAD["GCM"]
W = WIDE_BATCH
# Every mode: the serial ones (CFB8, OFB, CBC/CFB encryption) run aesni's code on the vaes
# tables, but a table that pointed a slot at the wrong function would show here.
LENGTHS = sorted(
    set(range((3 * W + 2) * 16 + 18))
    | {16 * k * W + s * d for k in range(1, 9) for d in (0, 1, 15, 16, 17) for s in (1, -1)}
)
MAX_LEN = LENGTHS[-1]
# Pseudo-random, never periodic (an affine byte pattern repeats every 16 blocks and can
# hide a kernel that pairs the wrong blocks or powers; see test_wide_aead.py).
DATA = rand(167, MAX_LEN)
KEYS = {ks: rand(29 + ks, ks) for ks in KEY_SIZES}
IV = bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f")
# A handful of lengths around each handover, for the alignment sweep.
ALIGN_LENGTHS = sorted({0, 16, 17, 48, 63, 64, 65, 112, 16 * W // 2 - 1, 16 * W // 2 + 16,
                        16 * W - 1, 16 * W, 16 * W + 1, 16 * W + 80, 3 * 16 * W + 17})


def _lengths(spec):
    return [n for n in LENGTHS if spec.takes(n)]


@functools.cache
def _portable(spec, ks):
    """portable's ciphertext of DATA[:n] for every length n of the sweep."""
    obj = new(spec, KEYS[ks], backend="portable")
    return {n: encrypt(obj, spec, IV, DATA[:n]) for n in _lengths(spec)}


@pytest.mark.parametrize("ks", KEY_SIZES)
@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_every_length(backend, spec, ks):
    obj = new(spec, KEYS[ks], backend=backend)
    want = _portable(spec, ks)
    for n in _lengths(spec):
        pt, ct = DATA[:n], want[n]
        assert encrypt(obj, spec, IV, pt) == ct, n
        assert decrypt(obj, spec, IV, ct) == pt, n
        buf = bytearray(pt)
        assert encrypt_into(obj, spec, IV, buf, buf) == n
        assert buf == ct, n
        assert decrypt_into(obj, spec, IV, buf, buf) == n
        assert buf == pt, n


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_unaligned(backend, spec):
    """Source and destination at every offset 1..15 past a 64-byte-aligned start (bytearray
    data is 16-aligned at best, so the offsets cover every vector alignment), in place too."""
    ks = 16
    obj = new(spec, KEYS[ks], backend=backend)
    want = _portable(spec, ks)
    for n in ALIGN_LENGTHS:
        if not spec.takes(n):
            continue
        pt, ct = DATA[:n], want[n]
        for off in range(1, 16):
            src = bytearray(n + 80)
            dst = bytearray(n + 80)
            s0 = off + (-_address(src)) % 64
            d0 = (2 * off) % 16 + (-_address(dst)) % 64
            sv, dv = memoryview(src)[s0:s0 + n], memoryview(dst)[d0:d0 + n]
            sv[:] = pt
            assert encrypt_into(obj, spec, IV, sv, dv) == n
            assert bytes(dv) == ct, (n, off)
            sv[:] = ct
            assert decrypt_into(obj, spec, IV, sv, sv) == n
            assert bytes(sv) == pt, (n, off)
            assert bytes(src[:s0]) == bytes(s0) and bytes(src[s0 + n:]) == bytes(80 - s0)
            assert bytes(dst[:d0]) == bytes(d0) and bytes(dst[d0 + n:]) == bytes(80 - d0)


def _address(buf):
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


# ---------------------------------------------------------------- counters

CARRY_SHORT = range(1, W + 18)          # blocks before the carry
CARRY_LEN = (3 * W + 2) * 16 + 5
# The fused GCM kernel's minimum after its head, then 3 batches
GCM_CARRY_LEN = (GCM_FUSED_MIN + 3 * W + 2) * 16 + 5


def _be128_ivs():
    for bits in (32, 64, 128):
        for prefix in (b"\xff", b"\xa5"):
            for short in CARRY_SHORT:
                low = (2**bits - short).to_bytes(bits // 8, "big")
                yield (prefix * (16 - bits // 8) + low)


@pytest.mark.parametrize("ks", (16, 32))
def test_ctr_be128_carry(backend, ks):
    key = KEYS[ks]
    obj = new(CIPHER["CTR"], key, backend=backend)
    ref_obj = new(CIPHER["CTR"], key, backend="portable")
    data = DATA[:CARRY_LEN]
    for iv in _be128_ivs():
        want = ref_obj.encrypt(iv, data)
        assert obj.encrypt(iv, data) == want, iv.hex()
        buf = bytearray(want)
        assert obj.decrypt_into(iv, buf, buf) == len(data)
        assert buf == data, iv.hex()
    # and the reference itself, for one IV per width, against OpenSSL
    for iv in (b"\xff" * 12 + (2**32 - 5).to_bytes(4, "big"), b"\xff" * 16):
        assert ref_obj.encrypt(iv, data) == ref(CIPHER["CTR"], key, iv, data)


@functools.cache
def _nonce(key, j0):
    nonce = nonce_for_j0(key, j0)
    assert gcm_j0(key, nonce) == j0
    return nonce


@pytest.mark.parametrize("ks", (16, 32))
def test_ctr_be32_wrap_via_gcm(backend, ks):
    """inc32 wraps modulo 2^32 and leaves bytes 0..11 alone, at every position of a batch."""
    key = KEYS[ks]
    obj = new_aead(GCM, key, backend=backend)
    ref_obj = new_aead(GCM, key, backend="portable")
    data = DATA[:GCM_CARRY_LEN]
    for short in CARRY_SHORT:
        j0 = b"\xff" * 12 + (2**32 - short).to_bytes(4, "big")
        nonce = _nonce(key, j0)
        sealed = ref_obj.encrypt(nonce, data, b"")
        assert obj.encrypt(nonce, data, b"") == sealed, short
        assert obj.decrypt(nonce, sealed, b"") == data, short
        if short in (1, 17, W + 1):
            assert sealed[:-16] == gcm_model_ciphertext(key, j0, data)
            assert sealed == ref_seal(GCM, key, nonce, data)


# ---------------------------------------------------------------- GHASH

# Blocks under one reduction of the widest GHASH, the most powers a backend's GHASH key
# holds (vaes_avx512: 128; vaes_avx2: 32; aesni: 8)
GHASH_W = GHASH_POWERS
GHASH_NONCES = (bytes(range(16)), rand(13, 16 * GHASH_W + 1))


@pytest.mark.parametrize("nonce", GHASH_NONCES, ids=lambda n: f"nonce{len(n)}")
def test_ghash_every_block_count(backend, nonce):
    """GHASH through AAD hashing: AAD of every block count 1..3G+1 after a prefix of 0, G and
    2G blocks (G = GHASH_W), in one call and as two AAD updates split at the prefix, against
    portable. A non-12-byte nonce runs J0 through GHASH too (one block, then 16G+1 bytes)."""
    key = KEYS[16]
    obj = new_aead(GCM, key, backend=backend)
    ref_obj = new_aead(GCM, key, backend="portable")
    pt = DATA[:37]
    for prefix in (0, GHASH_W, 2 * GHASH_W):
        for k in range(1, 3 * GHASH_W + 2):
            aad = DATA[:16 * (prefix + k)]
            want = ref_obj.encrypt(nonce, pt, aad)
            assert obj.encrypt(nonce, pt, aad) == want, (prefix, k)
            split = 16 * prefix
            got = stream_seal(obj, GCM, nonce, pt, [aad[:split], aad[split:]], [pt])
            assert got == (want[:-16], want[-16:]), (prefix, k)
