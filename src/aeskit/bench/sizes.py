"""Buffer sizes: the slope series and the by-length list, and their parsing.

ECB, CBC and GHASH take whole blocks only, so their sizes are rounded down
to a multiple of 16 (never below 16); every other mode takes any length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

BLOCK = 16

#: bench-slope's series: 16 B to about 4 KiB in 64-byte steps (64 sizes).
SLOPE_DEFAULT = (16, 4096, 64)
#: The bulk regime: a second line over sizes where every kernel path is
#: active (GCM's fused kernel starts near 1.5 KiB, aesni's 8-block loops at
#: 128 B) and the data still sits in L2 on common cores. ``x floor`` and the
#: ratios to the peers come from it.
BULK_SIZES = tuple(n << 10 for n in range(16, 65, 8))
#: Timed directly on every row: a small message and the smallest bulk size.
#: A row whose line fits poorly is compared on these, never on its slope.
SMALL, LARGE = 64, 16 << 10
#: The by-length view (--sizes): L1, L2, L3 and memory on common CPUs.
LENGTHS_DEFAULT = (16, 64, 256, 1024, 8 << 10, 16 << 10, 64 << 10, 1 << 20, 16 << 20)
#: --quick stops at 1 MiB: 16 MiB of CFB8 alone takes seconds per call.
LENGTHS_QUICK = tuple(n for n in LENGTHS_DEFAULT if n <= 1 << 20)
MAX_SIZE = 1 << 30

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
          "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'4096', '4K', '4KiB', '16M' -> bytes (binary units)."""
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (use e.g. 64, 8K, 16M)")
    n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if not 1 <= n <= MAX_SIZE:
        raise ValueError(f"size {text!r} out of range 1 B .. 1 GiB")
    return n


def parse_size_list(text: str) -> tuple[int, ...]:
    """'16,1K,16M' -> sorted unique sizes."""
    sizes = sorted({parse_size(part) for part in text.split(",") if part.strip()})
    if not sizes:
        raise ValueError("empty size list")
    return tuple(sizes)


def parse_range(text: str) -> tuple[int, int, int]:
    """'MIN:MAX:STEP' (each a size) -> the triple, checked."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"not MIN:MAX:STEP: {text!r}")
    lo, hi, step = (parse_size(p) for p in parts)
    if hi <= lo:
        raise ValueError(f"MAX must exceed MIN in {text!r}")
    return lo, hi, step


def slope_series(lo: int, hi: int, step: int) -> tuple[int, ...]:
    """lo, lo+step, ... up to hi (inclusive when it falls on a step)."""
    return tuple(range(lo, hi + 1, step))


def for_mode(sizes: Iterable[int], whole_blocks: bool) -> tuple[int, ...]:
    """The sizes a mode can take: rounded down to whole blocks for ECB/CBC/GHASH."""
    if not whole_blocks:
        return tuple(sorted(set(sizes)))
    return tuple(sorted({max(BLOCK, n - n % BLOCK) for n in sizes}))


def human(n: int) -> str:
    """16 -> '16', 8192 -> '8K', 16777216 -> '16M' (exact binary units only)."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def human_bytes(n: int) -> str:
    """16 -> '16 B', 8192 -> '8 KiB', 1048576 -> '1 MiB' (exact binary units only)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"
