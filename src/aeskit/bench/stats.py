"""Medians and the least-squares line of the bench-slope method.

Timing one buffer size mixes two costs: the fixed cost of a call (argument
parsing, key and IV setup, the Python call itself) and the cost per byte.
Timing many sizes and fitting a straight line separates them: the slope is
the per-byte cost that matters for bulk data, the intercept the per-call cost
that matters for small messages. Medians, not means, so that one repetition
hit by an interrupt or a frequency change does not move the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIB = 1024 * 1024


def median(values: Sequence[float]) -> float:
    """The middle value (mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of no values")
    s = sorted(values)
    mid = len(s) // 2
    if len(s) % 2:
        return float(s[mid])
    return (s[mid - 1] + s[mid]) / 2.0


@dataclass(frozen=True)
class Fit:
    """A straight line ns_per_call = intercept + slope * bytes.

    ``r2`` says how well a line describes the timings: a poor fit (well below
    0.99) means the per-byte cost changed across the sizes (noise, or a real
    effect such as a cache boundary) and the slope should be read with care.
    """

    slope: float
    intercept: float
    r2: float
    n: int

    @property
    def ns_per_byte(self) -> float:
        return self.slope

    @property
    def mib_per_s(self) -> float:
        return mib_per_s(self.slope)


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """Ordinary least squares of ys on xs, as bench-slope's get_slope()."""
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    if n < 2:
        raise ValueError("a line needs at least two points")
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a line needs at least two distinct sizes")
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit(slope=slope, intercept=intercept, r2=r2, n=n)


#: A line that explains less than this share of the timings' variance says
#: little about the cost per byte.
R2_MIN = 0.98
PER_CALL_DOMINATES = "per-call cost dominates"


def fit_problem(fit: Fit | None, largest: int) -> str | None:
    """Why a fitted slope must not be read as the cost per byte, or None if it can.

    Three ways a line fails: it explains the timings poorly (r² below
    R2_MIN: noise, or a cost that changes across the sizes); its slope is
    zero or negative (no per-byte cost seen at all); or the fixed cost per
    call is larger than the per-byte cost even at the largest size timed,
    so the slope is a small difference of large noisy numbers (a peer whose
    AEAD call costs 100 µs before its first byte). Such a row is compared on
    direct timings instead, and marked.
    """
    if fit is None or fit.n < 2:
        return "not measured"
    if not fit.slope > 0:
        return "slope <= 0"
    if fit.intercept > fit.slope * largest:
        return PER_CALL_DOMINATES
    if fit.r2 < R2_MIN:
        return f"r2 {fit.r2:.2f}"
    return None


def fit_robust(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """The Theil-Sen line: the median of the slopes between every pair of points,
    and the median intercept under it; ``r2`` as for least squares, against it.

    One size whose timings all came out slow (a placement that aliased the key
    schedule, a neighbour's burst) tilts a least-squares line through seven
    points by up to 10%, most at the ends; the median of the pairwise slopes
    does not move. The bulk line uses it.
    """
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i])
              for i in range(n) for j in range(i + 1, n) if xs[j] != xs[i]]
    if not slopes:
        raise ValueError("a line needs at least two distinct sizes")
    slope = median(slopes)
    intercept = median([y - slope * x for x, y in zip(xs, ys)])
    my = sum(ys) / n
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit(slope=slope, intercept=intercept, r2=r2, n=n)


def mib_per_s(ns_per_byte: float) -> float:
    """Throughput in MiB/s for a cost in ns per byte (inf for a zero cost)."""
    if ns_per_byte <= 0:
        return math.inf
    return 1e9 / (ns_per_byte * MIB)


def cycles_per_byte(ns_per_byte: float, mhz: float | None) -> float | None:
    """ns/B times the clock; None when the clock is unknown."""
    if mhz is None:
        return None
    return ns_per_byte * mhz / 1000.0


def num(value: float | None) -> str:
    """bench-slope's double_to_str: 3 decimals below 1, 2 below 100, 1 below 1000."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) < 1.0:
        return f"{value:.3f}"
    if abs(value) < 100.0:
        return f"{value:.2f}"
    if abs(value) < 1000.0:
        return f"{value:.1f}"
    return f"{value:.0f}"
