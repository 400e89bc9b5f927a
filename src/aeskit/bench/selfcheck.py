"""The self-check: a row's bulk line against the run's own timings of the same call.

The bulk line (a Theil-Sen line over sizes.BULK_SIZES) predicts what one call
of L bytes takes: intercept + slope * L. The run also times such calls one
size at a time: the row's own timings at 16 and 64 KiB (two of the line's
points), and the by-length table's cells at those sizes, from a group timed
at another moment. All of them time the same call at the same size, so they
must agree. A group slowed as a whole (a neighbour on the sibling core for
the length of both passes) moves the line and its own points together; only
a timing from another group shows it, so where the by-length table has no
cell at a size, that size is timed in a separate group for this check alone.

A row whose line misses one of those timings by more than TOLERANCE is timed
again (command.py); if the new line still misses, the row is marked and
warned about: one of the run's figures for that call is wrong, and the
bulk figures cannot be read as the cost per byte.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .stats import Fit

#: More than this relative difference between the bulk line's prediction and
#: a timing of the same call is a disagreement (the anomaly check's threshold
#: too: anomaly.THRESHOLD).
TOLERANCE = 0.05
#: The sizes compared: the bulk range's two ends, both in the default
#: by-length set.
SIZES = (16 << 10, 64 << 10)

#: Where a timing compared with the line comes from, as the JSON names it.
DIRECT, BY_LENGTH, SEPARATE = "direct", "by-length", "separate"
SOURCE_TEXT = {
    DIRECT: "its own timing",
    BY_LENGTH: "the by-length table's timing",
    SEPARATE: "a separate timing",
}


@dataclass(frozen=True)
class Comparison:
    """One timing of a call of ``size`` bytes against the line's prediction for it."""

    source: str
    size: int
    predicted_ns: float
    timed_ns: float

    @property
    def difference(self) -> float:
        """timed / predicted - 1: above 0, the call took longer than the line says
        (infinite when the line predicts no time at all)."""
        if not self.predicted_ns > 0:
            return math.inf
        return self.timed_ns / self.predicted_ns - 1.0

    @property
    def disagrees(self) -> bool:
        return not abs(self.difference) <= TOLERANCE


def compare(line: Fit, timings: Mapping[str, Mapping[int, float]]) -> tuple[Comparison, ...]:
    """The line against every timing at SIZES, per source (source -> {bytes: ns per call});
    sizes a source lacks (skipped by the budget, not in its set) are left out."""
    return tuple(Comparison(source, n, line.intercept + line.slope * n, at[n])
                 for source, at in timings.items() for n in SIZES if n in at)


@dataclass(frozen=True)
class SelfCheck:
    """A row's comparisons; ``before`` holds the first ones when the row was timed again."""

    comparisons: tuple[Comparison, ...]
    before: tuple[Comparison, ...] | None = None

    @property
    def retimed(self) -> bool:
        return self.before is not None

    @property
    def worst(self) -> Comparison | None:
        if not self.comparisons:
            return None
        return max(self.comparisons, key=lambda c: abs(c.difference))

    @property
    def disagrees(self) -> bool:
        return any(c.disagrees for c in self.comparisons)
