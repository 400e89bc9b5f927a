"""Inputs and outputs that end right before an unmapped page.

bytes objects carry a trailing NUL and allocator slack, so a kernel that
reads or writes a few bytes past the end never faults on them. Here the
byte after the buffer is a PROT_NONE page: any over-read or over-write
kills the process, which pytest reports as a crash.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap

import pytest

from helpers import BLOCK_MODES, MODES, ivargs, new

PAGE = mmap.PAGESIZE
PROT_NONE = 0
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class GuardedBuffer:
    """A writable buffer whose last byte is followed by an inaccessible page."""

    def __init__(self, size: int) -> None:
        pages = (size + PAGE - 1) // PAGE + 1
        self._map = mmap.mmap(-1, pages * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
        guard = base + (pages - 1) * PAGE
        if _libc.mprotect(ctypes.c_void_p(guard), PAGE, PROT_NONE) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
        start = (pages - 1) * PAGE - size
        self.view = memoryview(self._map)[start : start + size]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length", [16, 17, 31, 32, 112, 128, 129, 144, 255, 256, 4096])
def test_no_access_past_the_end(backend: str, mode: str, length: int) -> None:
    if mode in BLOCK_MODES:
        length -= length % 16
    iv = bytes(range(16, 32))
    k = new(mode, bytes(range(32)), backend)
    src = GuardedBuffer(length)
    src.view[:] = bytes((i * 7) & 0xFF for i in range(length))
    dst = GuardedBuffer(length)
    n = k.encrypt_into(*ivargs(mode, iv), src.view, dst.view)
    assert n == length
    assert bytes(dst.view) == k.encrypt(*ivargs(mode, iv), bytes(src.view))
    # in place, decrypting back
    k.decrypt_into(*ivargs(mode, iv), dst.view, dst.view)
    assert bytes(dst.view) == bytes(src.view)
    # streaming, an odd split
    ctx = k.encryptor(*ivargs(mode, iv))
    out = ctx.update(src.view[: length // 3]) + ctx.update(src.view[length // 3 :])
    assert out + ctx.finalize() == k.encrypt(*ivargs(mode, iv), bytes(src.view))
