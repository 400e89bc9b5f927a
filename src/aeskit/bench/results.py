"""The results of a run as plain data: what the reports and the JSON read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .anomaly import Anomaly
from .selfcheck import SelfCheck
from .sizes import BULK_SIZES, LARGE, SMALL, human_bytes
from .stats import Fit, cycles_per_byte, fit_problem, mib_per_s, num
from .system import ClockReading
from .targets import Operation


@dataclass(frozen=True)
class Who:
    """Which implementation: aeskit (backend, layer) or a peer (its engine, api layer)."""

    impl: str
    backend: str
    layer: str
    in_place: bool = field(compare=False)  # a property of the call, not of who it is

    @property
    def is_peer(self) -> bool:
        return self.impl != "aeskit"

    @property
    def label(self) -> str:
        return self.impl if self.is_peer else f"{self.backend} {self.layer}"

    @property
    def section(self) -> str:
        """Hyphenated label for the CSV's first column."""
        return self.impl if self.is_peer else f"aeskit-{self.backend}-{self.layer}"


#: A row this far under its floor is a measurement error, not a result:
#: the clock estimate carries about 2% (its before/after tolerance).
FLOOR_SLACK = 0.03


@dataclass(frozen=True)
class Ratio:
    """aeskit's speed over a peer's, and what it was computed from.

    ``basis`` "bulk": the two bulk lines (the per-byte costs). "16K": direct
    timings of 16 KiB calls, because one of the two lines fits poorly
    (stats.fit_problem); per-call costs then count too, and the cell is marked.
    """

    value: float
    basis: str

    @property
    def direct(self) -> bool:
        return self.basis != "bulk"


@dataclass
class SlopeRow:
    """One operation on one implementation, in two regimes and two direct timings.

    ``fit``: bench-slope's line over the short sizes (16 B .. 4 KiB): its
    slope, and its intercept as the fixed cost per call. ``bulk``: the line
    over sizes.BULK_SIZES, where every kernel path is active; ``x floor``
    and the ratios to peers come from it. ``direct``: ns per call at
    sizes.SMALL and sizes.LARGE. ``points``: every (bytes, ns per call) timed.
    ``self_check``: the bulk line against the run's own timings of the same
    call (selfcheck.py); None where it was not made (a poor bulk line, whose
    figures are a direct timing already, or a row Ctrl-C left unfinished).
    """

    op: Operation
    who: Who
    fit: Fit
    points: list[tuple[int, float]]
    clock: ClockReading
    attempts: int
    vs: dict[str, Ratio] = field(default_factory=dict)  # peer -> aeskit speed / peer speed
    floor: float | None = None  # c/B the backend's units allow here (floor.py), where known
    floor_basis: str | None = None  # which limit floor is, e.g. "zmm AES throughput"
    bulk: Fit | None = None
    direct: dict[int, float] = field(default_factory=dict)
    short_max: int = 4096  # the largest size of the short line
    bulk_max: int = BULK_SIZES[-1]
    vs_small: dict[str, float] = field(default_factory=dict)  # peer -> speed ratio at SMALL
    self_check: SelfCheck | None = None

    # ---- the short regime (bench-slope's numbers, kept for its CSV)

    @property
    def ns_per_byte(self) -> float:
        return self.fit.slope

    @property
    def mib_per_s(self) -> float:
        return mib_per_s(self.fit.slope)

    @property
    def cycles_per_byte(self) -> float | None:
        return cycles_per_byte(self.fit.slope, self.clock.mhz)

    @property
    def short_problem(self) -> str | None:
        """Why the short slope is not a cost per byte (a poor line, or under the
        floor: the line bends where a kernel path changes), or None."""
        problem = fit_problem(self.fit, self.short_max)
        if problem is None and self._under(self.cycles_per_byte):
            problem = "under the floor: the line bends between paths"
        return problem

    # ---- the bulk regime

    @property
    def bulk_problem(self) -> str | None:
        return fit_problem(self.bulk, self.bulk_max)

    @property
    def bulk_ns_per_byte(self) -> float | None:
        """The bulk line's slope; if it fits poorly, a direct 16 KiB call's ns per byte
        (which includes the per-call cost: the cell is marked)."""
        if self.bulk is not None and self.bulk_problem is None:
            return self.bulk.slope
        ns = self.direct.get(LARGE)
        return ns / LARGE if ns is not None else None

    @property
    def bulk_direct(self) -> bool:
        """True when the bulk figures come from a direct 16 KiB timing."""
        return self.bulk_problem is not None

    @property
    def bulk_mib_per_s(self) -> float | None:
        ns = self.bulk_ns_per_byte
        return mib_per_s(ns) if ns is not None else None

    @property
    def bulk_cycles_per_byte(self) -> float | None:
        ns = self.bulk_ns_per_byte
        return cycles_per_byte(ns, self.clock.mhz) if ns is not None else None

    @property
    def disagrees(self) -> bool:
        """The bulk line misses a timing of the same call by more than
        selfcheck.TOLERANCE, also after the row was timed again."""
        return self.self_check is not None and self.self_check.disagrees

    @property
    def over_floor(self) -> float | None:
        """Bulk c/B over the floor: 1.00 is as fast as the hardware allows."""
        cpb = self.bulk_cycles_per_byte
        return cpb / self.floor if cpb is not None and self.floor else None

    @property
    def below_floor(self) -> bool:
        """Faster than the units allow: a measurement error to find, not a result."""
        return self._under(self.bulk_cycles_per_byte)

    def _under(self, cpb: float | None) -> bool:
        return (cpb is not None and self.floor is not None
                and cpb < self.floor * (1.0 - FLOOR_SLACK))


@dataclass
class LengthRow:
    """One operation on one implementation: time per call at each data length."""

    op: Operation
    who: Who
    points: list[tuple[int, float]]  # (bytes, median ns per call)
    clock: ClockReading
    floor: float | None = None  # c/B, as the slope row's
    skipped: list[int] = field(default_factory=list)  # lengths over the time budget

    def speeds(self) -> list[tuple[int, float]]:
        """(bytes, MiB/s) per length."""
        return [(n, mib_per_s(ns / n)) for n, ns in self.points]

    def under_floor(self) -> list[int]:
        """Lengths whose time per call is under the floor's: a whole call,
        fixed cost and all, cannot beat the per-byte floor."""
        mhz = self.clock.mhz
        if self.floor is None or not mhz:
            return []
        return [n for n, ns in self.points
                if ns * mhz / 1000.0 < self.floor * n * (1.0 - FLOOR_SLACK)]


@dataclass
class Finding:
    """An anomaly on one by-length curve."""

    row: LengthRow
    anomaly: Anomaly

    def message(self) -> str:
        a = self.anomaly
        return (f"{self.row.op.algo} {self.row.op.label} {self.row.who.label}: speed falls "
                f"{a.drop:.0%} from {human_bytes(a.from_size)} ({num(a.from_speed)} MiB/s) to "
                f"{human_bytes(a.to_size)} ({num(a.to_speed)} MiB/s) within {a.level}, "
                f"confirmed by a second measurement")


@dataclass
class Run:
    meta: dict[str, Any]
    slope: list[SlopeRow]
    lengths: list[LengthRow]
    findings: list[Finding]
    #: XTS's sectors row: time per call by sectors per call (LengthRow's bytes)
    sectors: list[LengthRow] = field(default_factory=list)


def add_ratios(rows: list[SlopeRow]) -> None:
    """Fill each aeskit row's ``vs`` and ``vs_small`` against each peer, same operation.

    ``vs`` compares bulk speeds: the two bulk lines' slopes, so per-call
    overhead (a C loop against a Python loop) does not enter; where either
    line fits poorly, direct 16 KiB timings instead (Ratio.basis "16K").
    ``vs_small``: direct timings of 64-byte calls, what small messages cost.
    """
    peers: dict[Operation, list[SlopeRow]] = {}
    for row in rows:
        if row.who.is_peer:
            peers.setdefault(row.op, []).append(row)
    for row in rows:
        if row.who.is_peer:
            continue
        row.vs.clear()
        row.vs_small.clear()
        for peer in peers.get(row.op, []):
            name = peer.who.impl
            if row.bulk_problem is None and peer.bulk_problem is None:
                assert row.bulk is not None and peer.bulk is not None
                row.vs[name] = Ratio(peer.bulk.slope / row.bulk.slope, "bulk")
            elif LARGE in row.direct and LARGE in peer.direct:
                row.vs[name] = Ratio(peer.direct[LARGE] / row.direct[LARGE], "16K")
            if SMALL in row.direct and SMALL in peer.direct:
                row.vs_small[name] = peer.direct[SMALL] / row.direct[SMALL]


def finite(value: float | None) -> float | None:
    """JSON has no infinity or NaN: those become null."""
    if value is None or not math.isfinite(value):
        return None
    return value
