"""The anomaly check: speed that falls as data grows within one cache level.

Throughput should rise with length (the fixed cost per call is spread over
more bytes) and then stay flat while the data fits in the same cache level;
it may drop when the data spills into the next level or into memory. A drop
*within* a level means the code itself got slower on longer data: the seeds'
libgcrypt OCB case, where a separate checksum pass fell off above 32 KiB on
Intel while looking faster at bench-slope's 16 B to 4 KiB. This check flags
such a drop of more than ``threshold`` (5%) so it is seen, not averaged away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

THRESHOLD = 0.05
#: Below this length the curve is shaped by the fixed cost per call and, for
#: the serial modes (CBC/CFB encryption, OFB, CFB8), by independent calls
#: overlapping in the out-of-order core, which makes short data run faster
#: per byte in a tight loop. That range is the slope table's; the check
#: starts where one call is long enough to stand alone.
MIN_LENGTH = 4096


@dataclass(frozen=True)
class Anomaly:
    """The largest fall within one level: from the fastest earlier length to a later one."""

    level: str
    from_size: int
    to_size: int
    from_speed: float
    to_speed: float

    @property
    def drop(self) -> float:
        return 1.0 - self.to_speed / self.from_speed


def level_of(working_set: int, caches: Mapping[str, int]) -> str:
    """The smallest cache level that comfortably holds working_set bytes, else 'memory'.

    Comfortably: at most half the level. Data as large as a cache does not
    stay in it (the key schedule, the stack, the interpreter and the other
    core's traffic share it, and associativity evicts early), so a 1 MiB
    buffer on a 1 MiB L2 already runs partly from L3 and a slowdown there is
    the expected one between levels, not an anomaly.
    """
    for name, size in sorted(caches.items(), key=lambda kv: kv[1]):
        if 2 * working_set <= size:
            return name
    return "memory"


def find_anomalies(points: Sequence[tuple[int, float]], caches: Mapping[str, int],
                   threshold: float = THRESHOLD, bytes_per_length: int = 1,
                   min_length: int = MIN_LENGTH) -> list[Anomaly]:
    """Drops of more than threshold within a cache level, worst one per level.

    points: (data length, speed) pairs, in any order; lengths below
    min_length, speeds of 0 or less and non-finite ones are ignored.
    bytes_per_length: the working set per byte of data (2 when input and
    output are separate buffers).
    """
    by_level: dict[str, list[tuple[int, float]]] = {}
    for size, speed in sorted(points):
        if size < min_length or not (speed > 0 and speed != float("inf")):
            continue
        by_level.setdefault(level_of(size * bytes_per_length, caches), []).append((size, speed))
    found: list[Anomaly] = []
    for level, pts in by_level.items():
        worst: Anomaly | None = None
        best_size, best_speed = pts[0]
        for size, speed in pts[1:]:
            if speed < best_speed * (1.0 - threshold):
                cand = Anomaly(level, best_size, size, best_speed, speed)
                if worst is None or cand.drop > worst.drop:
                    worst = cand
            if speed >= best_speed:  # on a tie, the nearer length tells more
                best_size, best_speed = size, speed
        if worst is not None:
            found.append(worst)
    return found
