"""The results of a run as plain data: what the reports and the JSON read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .anomaly import Anomaly
from .sizes import human_bytes
from .stats import Fit, cycles_per_byte, mib_per_s, num
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


@dataclass
class SlopeRow:
    """One operation on one implementation: the fitted line over the slope series."""

    op: Operation
    who: Who
    fit: Fit
    points: list[tuple[int, float]]
    clock: ClockReading
    attempts: int
    vs: dict[str, float] = field(default_factory=dict)  # peer -> aeskit speed / peer speed
    floor: float | None = None  # c/B the backend's units allow here (floor.py), where known
    floor_basis: str | None = None  # which limit floor is, e.g. "zmm AES throughput"

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
    def over_floor(self) -> float | None:
        """Measured c/B over the floor: 1.00 is as fast as the hardware allows."""
        cpb = self.cycles_per_byte
        return cpb / self.floor if cpb is not None and self.floor else None


@dataclass
class LengthRow:
    """One operation on one implementation: time per call at each data length."""

    op: Operation
    who: Who
    points: list[tuple[int, float]]  # (bytes, median ns per call)
    clock: ClockReading

    def speeds(self) -> list[tuple[int, float]]:
        """(bytes, MiB/s) per length."""
        return [(n, mib_per_s(ns / n)) for n, ns in self.points]


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


def add_ratios(rows: list[SlopeRow]) -> None:
    """Fill each aeskit row's ``vs``: its speed over each peer's, same operation.

    From the slopes, so per-call overhead (which differs between a C loop and
    a Python loop) does not enter: the ratio compares the bulk speed.
    """
    peers: dict[Operation, list[SlopeRow]] = {}
    for row in rows:
        if row.who.is_peer:
            peers.setdefault(row.op, []).append(row)
    for row in rows:
        if row.who.is_peer or row.ns_per_byte <= 0:
            continue
        for peer in peers.get(row.op, []):
            if peer.ns_per_byte > 0:
                row.vs[peer.who.impl] = peer.ns_per_byte / row.ns_per_byte


def finite(value: float | None) -> float | None:
    """JSON has no infinity or NaN: those become null."""
    if value is None or not math.isfinite(value):
        return None
    return value
