"""The AEADs at the wide kernels' boundaries: every backend byte-identical to `portable`.

W is the widest batch, the largest batch_blocks of the compiled-in backends
(backend_constants; vaes_avx512's 32 today): vaes_avx512's OCB3 kernel runs W blocks from a
block index that is a multiple of W (vaes_avx2 16, aesni 8), with a head up to that index
and a tail of whole vectors after it. vaes_avx512's fused GCM kernel (vaes_gcm.h) takes a
message only from FUSED_GCM = 14 + gcm_fused_min_blocks blocks (a 12-byte nonce's counter
starts 14 blocks before a multiple of 16, then at least that minimum, 3W today); its first
batch starts at that multiple of 16 less 16, the blocks before the data absent (2 for a
12-byte nonce, any of 0..15 when streaming), its last 0..W-1 blocks go one vector at a time,
and it hashes its batches in chunks of up to GCM_FUSED_CHUNK (its GHASH key's powers over
W: four), one reduction per chunk, the short chunk first. vaes_avx2's is the same kernel on
batches of W/2 (from 14 + 24 blocks, chunks of four), inside the same lengths. Every length
0..(FUSED_GCM+4W+2)*16+17 crosses each handover (the start, whole batches, chunks of every
size, the half batch, one vector at a time, a partial last vector, a partial last block),
for sealing and opening, one-shot and in place. AAD lengths cross the same boundaries (OCB3's
HASH and GCM's GHASH). Unaligned buffers take every offset 1..63 for a few lengths.
Streaming puts the fused kernel's first block at indices that are not multiples of W: two
pieces split at every block count 0..2W+1 (and at odd byte counts), and steps of 1, W/2+1,
W-1, W+1 and 2W-1 blocks, plus and minus a few bytes.

portable's results are computed once per length (functools.cache); the loops over lengths
run inside each test, not as thousands of parametrized cases.
"""

import ctypes
import functools

import pytest
from aead_helpers import AEADS, new_aead, rand, ref_seal, spec_params, stream_open, stream_seal
from helpers import GCM_FUSED_HEAD, GCM_FUSED_MIN, WIDE_BATCH

W = WIDE_BATCH
FUSED_GCM = GCM_FUSED_HEAD + GCM_FUSED_MIN   # blocks: the shortest message the fused GCM takes
MAX_LEN = (FUSED_GCM + 4 * W + 2) * 16 + 17
LENGTHS = range(MAX_LEN + 1)
# Pseudo-random, never periodic: an affine byte pattern repeats every 16 blocks, and with
# it a fused GCM batch hashed with the other batch's Karatsuba halves still passed.
DATA = rand(151, MAX_LEN + 64)
KEYS = {ks: rand(37 + ks, ks) for ks in (16, 24, 32)}
NONCE = bytes.fromhex("cafebabefacedbaddecaf888")


def _nonce(spec):
    """NONCE at the spec's usual length (aead_helpers.AeadSpec.nonce_len: 12, or
    XAES-256-GCM's 24)."""
    return (NONCE * 3)[:spec.nonce_len]


def _ks(spec):
    """The key size of the tests that take one: 16 bytes, or the mode's shortest."""
    return min(spec.key_sizes)
AAD = b"wide kernels"
# Around each handover of a W-block batch, and of half and a quarter of one.
AAD_LENGTHS = sorted({0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65}
                     | {16 * b + d for b in (W // 4, W // 2, W, 2 * W, 3 * W)
                        for d in (-17, -16, -1, 0, 1, 16, 17)})
AAD_DATA_LENGTHS = (0, 1, 16, 16 * W + 17, 16 * (FUSED_GCM + W) + 17)
ALIGN_LENGTHS = (16, 64, 16 * W // 2 + 3, 16 * W, 16 * W + 17, 16 * 2 * W + 48,
                 16 * (FUSED_GCM + 3 * W) + 5)
STEP_BLOCKS = (1, W // 2 + 1, W - 1, W + 1, 2 * W - 1)


@functools.cache
def _portable(spec, ks):
    """portable's ciphertext || tag of DATA[:n] for every length n."""
    obj = new_aead(spec, KEYS[ks], backend="portable")
    return {n: obj.encrypt(_nonce(spec), DATA[:n], AAD) for n in LENGTHS}


@functools.cache
def _portable_aad(spec):
    obj = new_aead(spec, KEYS[_ks(spec)], backend="portable")
    return {(na, n): obj.encrypt(_nonce(spec), DATA[:n], DATA[:na])
            for na in AAD_LENGTHS for n in AAD_DATA_LENGTHS}


@pytest.mark.parametrize("spec,ks", [pytest.param(spec, ks, id=f"{ks}-{spec.name}")
                                     for spec in AEADS for ks in spec.key_sizes])
def test_every_length(backend, spec, ks):
    """Seal and open DATA[:n] for every n, one-shot and in place, against portable."""
    obj = new_aead(spec, KEYS[ks], backend=backend)
    want = _portable(spec, ks)
    for n in LENGTHS:
        pt, sealed = DATA[:n], want[n]
        assert obj.encrypt(_nonce(spec), pt, AAD) == sealed, n
        assert obj.decrypt(_nonce(spec), sealed, AAD) == pt, n
        store = bytearray(pt) + bytearray(16)
        assert obj.encrypt_into(_nonce(spec), memoryview(store)[:n], AAD, store) == n + 16
        assert store == sealed, n
        assert obj.decrypt_into(_nonce(spec), store, AAD, store) == n
        assert store[:n] == pt, n


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_portable_is_the_standard(spec):
    """The reference of this file, checked against OpenSSL at the handovers."""
    want = _portable(spec, _ks(spec))
    for n in (0, 1, 16, 17, 16 * W - 1, 16 * W, 16 * W + 17, MAX_LEN):
        assert want[n] == ref_seal(spec, KEYS[_ks(spec)], _nonce(spec), DATA[:n], AAD), n


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_aad_lengths(backend, spec):
    obj = new_aead(spec, KEYS[_ks(spec)], backend=backend)
    want = _portable_aad(spec)
    for (na, n), sealed in want.items():
        aad, pt = DATA[:na], DATA[:n]
        assert obj.encrypt(_nonce(spec), pt, aad) == sealed, (na, n)
        assert obj.decrypt(_nonce(spec), sealed, aad) == pt, (na, n)


def _address(buf):
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def _at(buf, off, n):
    """A view of n bytes of buf starting `off` bytes past a 64-byte boundary."""
    start = (-_address(buf)) % 64 + off
    return memoryview(buf)[start:start + n], start


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_unaligned(backend, spec):
    """Input and output at every offset 1..63 past a 64-byte boundary (different offsets
    for source and destination), and in place at each offset; nothing written around."""
    obj = new_aead(spec, KEYS[_ks(spec)], backend=backend)
    want = _portable(spec, _ks(spec))
    for n in ALIGN_LENGTHS:
        pt, sealed = DATA[:n], want[n]
        for off in range(1, 64):
            src, dst = bytearray(n + 160), bytearray(n + 160)
            sv, _ = _at(src, off, n)
            dv, d0 = _at(dst, (off * 7 + 5) % 64, n + 16)
            sv[:] = pt
            assert obj.encrypt_into(_nonce(spec), sv, AAD, dv) == n + 16
            assert bytes(dv) == sealed, (n, off)
            assert not any(dst[:d0]) and not any(dst[d0 + n + 16:]), (n, off)
            place, p0 = _at(src, off, n + 16)
            place[:] = sealed
            assert obj.decrypt_into(_nonce(spec), place, AAD, place) == n
            assert bytes(place[:n]) == pt, (n, off)
            assert not any(src[:p0]) and bytes(src[p0 + n:p0 + n + 16]) == sealed[n:]
            assert not any(src[p0 + n + 16:]), (n, off)


def _pieces(data, sizes):
    """data cut into pieces of the given sizes, cycled, the last one whatever is left."""
    out, pos, i = [], 0, 0
    while pos < len(data):
        size = sizes[i % len(sizes)]
        out.append(data[pos:pos + size])
        pos += size
        i += 1
    return out


def _check_stream(obj, spec, want, data_pieces, aad_pieces=(AAD,)):
    n = sum(len(p) for p in data_pieces)
    ct, tag = want[:n], want[n:]
    data = b"".join(data_pieces)
    assert stream_seal(obj, spec, _nonce(spec), data, list(aad_pieces), data_pieces) == (ct, tag)
    ct_pieces, pos = [], 0
    for p in data_pieces:
        ct_pieces.append(ct[pos:pos + len(p)])
        pos += len(p)
    assert stream_open(obj, spec, _nonce(spec), tag, list(aad_pieces), ct_pieces) == data


@pytest.mark.parametrize("spec", spec_params(AEADS, streams=True))
def test_streaming_two_pieces(backend, spec):
    """The first update ends at block k (and k blocks plus 7 bytes), for every k in
    0..2W+1: the second update's fused call starts at block k + 1, any residue mod W."""
    obj = new_aead(spec, KEYS[_ks(spec)], backend=backend)
    want = _portable(spec, _ks(spec))[MAX_LEN]
    data = DATA[:MAX_LEN]
    for k in range(2 * W + 2):
        for cut in (16 * k, 16 * k + 7):
            _check_stream(obj, spec, want, [data[:cut], data[cut:]])


@pytest.mark.parametrize("spec", spec_params(AEADS, streams=True))
def test_streaming_steps(backend, spec):
    """Steps of 1, W/2+1, W-1, W+1 and 2W-1 blocks, exact and off by odd byte counts, and
    mixed; the AAD in two pieces too."""
    obj = new_aead(spec, KEYS[_ks(spec)], backend=backend)
    want = _portable(spec, _ks(spec))[MAX_LEN]
    data = DATA[:MAX_LEN]
    for blocks in STEP_BLOCKS:
        for extra in (0, 1, -1, 5, 15):
            size = 16 * blocks + extra
            if size > 0:
                _check_stream(obj, spec, want, _pieces(data, [size]))
    mixed = [16 * b + e for b, e in zip(STEP_BLOCKS, (3, 0, 13, 1, 9))]
    _check_stream(obj, spec, want, _pieces(data, mixed))
    _check_stream(obj, spec, want, _pieces(data, [1] + mixed), [AAD[:5], AAD[5:]])
