"""Inputs and outputs that end right before an unmapped page.

bytes objects carry a trailing NUL and allocator slack, so a kernel that
reads or writes a few bytes past the end never faults on them. Here the
byte after the buffer is a PROT_NONE page: any over-read or over-write
kills the process, which pytest reports as a crash.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap

import pytest

from aead_helpers import AEAD, AEADS, AeadSpec, new_aead, rand
from helpers import (BATCHES, CIPHERS, GCM_FUSED, GCM_FUSED_CHUNK, GCM_FUSED_HEAD, GCM_FUSED_MIN,
                     WIDE_BATCH, CipherSpec, fit, ivargs, new, spec_params)

GCM = AEAD["GCM"]
PAGE = mmap.PAGESIZE
PROT_NONE = 0
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _protect(base: int, offset: int) -> None:
    if _libc.mprotect(ctypes.c_void_p(base + offset), PAGE, PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")


class GuardedBuffer:
    """A writable buffer whose last byte is followed by an inaccessible page, or, with
    before=True, whose first byte follows one."""

    def __init__(self, size: int, before: bool = False) -> None:
        pages = (size + PAGE - 1) // PAGE + 1
        self._map = mmap.mmap(-1, pages * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
        if before:
            _protect(base, 0)
            start = PAGE
        else:
            _protect(base, (pages - 1) * PAGE)
            start = (pages - 1) * PAGE - size
        self.view = memoryview(self._map)[start : start + size]


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
@pytest.mark.parametrize("length", sorted({16, 17, 31, 32, 255, 256, 4096}
                                          | {16 * b + d for b in BATCHES for d in (-16, 0, 1, 16)}))
def test_no_access_past_the_end(backend: str, spec: CipherSpec, length: int) -> None:
    length = fit(spec, length)
    iv = bytes(range(16, 32))
    k = new(spec, bytes(range(32)), backend)
    src = GuardedBuffer(length)
    src.view[:] = bytes((i * 7) & 0xFF for i in range(length))
    dst = GuardedBuffer(length)
    n = k.encrypt_into(*ivargs(spec, iv), src.view, dst.view)
    assert n == length
    assert bytes(dst.view) == k.encrypt(*ivargs(spec, iv), bytes(src.view))
    # in place, decrypting back
    k.decrypt_into(*ivargs(spec, iv), dst.view, dst.view)
    assert bytes(dst.view) == bytes(src.view)
    # streaming, an odd split
    ctx = k.encryptor(*ivargs(spec, iv))
    out = ctx.update(src.view[: length // 3]) + ctx.update(src.view[length // 3 :])
    assert out + ctx.finalize() == k.encrypt(*ivargs(spec, iv), bytes(src.view))


# Around the wide kernels' handovers: vaes_avx512's fused GCM starts its first batch at the
# aligned counter before the data (for a 12-byte nonce, 2 blocks before it) and ends with
# the last blocks of a message; OCB3's kernels have heads and tails of their own. FUSED is
# the shortest message the fused GCM takes, then one batch more, and a long one.
W = WIDE_BATCH
FUSED = GCM_FUSED_HEAD + GCM_FUSED_MIN
AEAD_LENGTHS = [16, 17, 16 * FUSED, 16 * FUSED + 5, 16 * (FUSED + W), 16 * (FUSED + W + 1) + 9,
                16 * (FUSED + 6 * W) + 15]


@pytest.mark.parametrize("before", [False, True], ids=["guard-after", "guard-before"])
@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_aead_no_access_outside(backend: str, spec: AeadSpec, before: bool) -> None:
    """Sealing and opening, in place and not, with an inaccessible page right after the
    buffers' last byte, or right before their first."""
    aead = new_aead(spec, rand(5, min(spec.key_sizes)), backend=backend)
    nonce, aad = rand(6, spec.nonce_len), b"guard"
    for length in AEAD_LENGTHS:
        data = rand(length, length)
        sealed = aead.encrypt(nonce, data, aad)
        src, dst = GuardedBuffer(length, before), GuardedBuffer(length + 16, before)
        src.view[:] = data
        assert aead.encrypt_into(nonce, src.view, aad, dst.view) == length + 16
        assert bytes(dst.view) == sealed, length
        plain = GuardedBuffer(length, before)
        assert aead.decrypt_into(nonce, dst.view, aad, plain.view) == length
        assert bytes(plain.view) == data, length
        # in place both ways: the plaintext, then the tag after it
        place = GuardedBuffer(length + 16, before)
        place.view[:length] = data
        assert aead.encrypt_into(nonce, place.view[:length], aad, place.view) == length + 16
        assert bytes(place.view) == sealed, length
        assert aead.decrypt_into(nonce, place.view, aad, place.view) == length
        assert bytes(place.view[:length]) == data, length


# The fused GCM (vaes_avx512's and vaes_avx2's, each with its batch of w blocks, its
# minimum and its chunk: GCM_FUSED) starts its first batch `skip` = (first counter mod 16)
# blocks before the data and ends with a tail of 0..w-1 blocks. With a 12-byte nonce the data
# starts at counter 2, so a first update of `pre` blocks puts the second, fused, update at
# skip (2 + pre) mod 16. Every skip x every tail, with the fewest batches that hold the
# kernel's minimum even when skip is 15 and up to chunk - 1 more, so the first chunk of
# batches takes every size. A backend without the kernel takes vaes_avx512's cases. (Other
# nonce lengths never reach the fused kernel: modes/gcm.c.)
FUSED_NONCE = bytes(range(12))


def _fused_cases(w, least, chunk):
    batches = -(-(least + 15) // w)
    return tuple((pre, w * (batches + (skip + tail) % chunk) + tail - skip)
                 for pre in range(16) for skip in [(2 + pre) % 16] for tail in range(w))


@functools.cache
def _fused_gcm_reference(ks, cases):
    """(plaintext, ciphertext, tag) per case, from portable."""
    key = rand(400 + ks, ks)
    ref = new_aead(GCM, key, backend="portable")
    out = []
    for pre, blocks in cases:
        data = rand(pre * 1000 + blocks, 16 * (pre + blocks))
        sealed = ref.encrypt(FUSED_NONCE, data, b"a")
        out.append((data, sealed[:-16], sealed[-16:]))
    return key, out


@pytest.mark.parametrize("ks", [16, 24, 32])
def test_gcm_every_first_counter_and_tail(backend: str, ks: int) -> None:
    """Streaming `pre` blocks, then the rest in place with an inaccessible page right
    before it, sealing and opening."""
    fused = _fused_cases(*GCM_FUSED.get(backend, (W, GCM_FUSED_MIN, GCM_FUSED_CHUNK)))
    key, cases = _fused_gcm_reference(ks, fused)
    aead = new_aead(GCM, key, backend=backend)
    for (pre, blocks), (data, ct, tag) in zip(fused, cases):
        head, n = 16 * pre, 16 * blocks
        for enc, src, want in ((True, data, ct), (False, ct, data)):
            ctx = aead.encryptor(FUSED_NONCE) if enc else aead.decryptor(FUSED_NONCE)
            ctx.authenticate_additional_data(b"a")
            first = bytearray(head)
            assert ctx.update_into(src[:head], first) == head
            place = GuardedBuffer(n, before=True)
            place.view[:] = src[head:]
            assert ctx.update_into(place.view, place.view) == n
            assert bytes(first) + bytes(place.view) == want, (pre, blocks, enc)
            if enc:
                assert ctx.finalize() == b"" and ctx.tag == tag, (pre, blocks)
            else:
                assert ctx.finalize_with_tag(tag) == b"", (pre, blocks)
