"""Timing: loop counts calibrated to the timer, interleaved repetitions, medians.

One *group* is one operation (mode, direction, key size) timed on every
target (aeskit per backend and layer, then the peers) over a list of sizes.
The targets take turns at each size within each repetition, so a change in
clock speed or machine load during the group touches all of them alike and
their ratio stays honest. The group is bracketed by two clock samples and
redone (a bounded number of times) until they agree within the tolerance,
as bench-slope does, because a clock that moved makes cycles/byte wrong.
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass, field

from .progress import Progress
from .sizes import for_mode
from .stats import median
from .system import Clock, ClockReading, Cores
from .targets import Operation, Target

MAX_LOOPS = 1 << 24
#: A call this long is timed alone without further calibration, and its
#: warm-up counts as a repetition.
LONG_CALL_NS = 10_000_000
#: Timings longer than this are not redone when disturbed: on a busy machine
#: the next try would be disturbed too, and each costs that long again.
RETRY_MAX_NS = 50_000_000
#: A timing during which the thread was off the CPU for more than this share
#: of its length is redone (up to MAX_RETRIES times), keeping the least
#: disturbed one.
OFF_CPU_LIMIT = 0.02
MAX_RETRIES = 3
#: The thread clock must resolve well below a timing for the check to work.
_THREAD_CLOCK_OK = time.get_clock_info("thread_time").resolution <= 1e-6


@dataclass
class Noise:
    """How much other programs got in the way, over a whole run.

    On a shared machine another process can take the core in the middle of
    a timing; wall-clock time then counts the wait. Each timing is bracketed
    by the thread's CPU clock, so a disturbed one is seen and redone. What
    stays disturbed after the retries is counted and reported, because long
    calls (milliseconds) on a busy machine rarely run undisturbed.
    """

    checked: bool = _THREAD_CLOCK_OK
    timings: int = 0
    retried: int = 0
    disturbed: int = 0

    @property
    def disturbed_share(self) -> float:
        return self.disturbed / self.timings if self.timings else 0.0


_bracket_ns: int | None = None


def _bracket_cost() -> int:
    """What the bracket itself reads as off-CPU time (reading the thread clock is a
    system call that the wall clock sees in full), measured once and subtracted."""
    global _bracket_ns
    if _bracket_ns is None:
        costs = []
        for _ in range(101):
            w0 = time.perf_counter_ns()
            c0 = time.thread_time_ns()
            c1 = time.thread_time_ns()
            w1 = time.perf_counter_ns()
            costs.append((w1 - w0) - (c1 - c0))
        _bracket_ns = max(0, int(median(costs)))
    return _bracket_ns


def timed(target: Target, size: int, loops: int, noise: Noise) -> int:
    """One timing of target, redone while another process stole the CPU from it."""
    bracket = _bracket_cost() if noise.checked else 0
    best_ns = 0
    best_off = math.inf
    for attempt in range(MAX_RETRIES + 1):
        if not noise.checked:
            return target.time(size, loops)
        w0 = time.perf_counter_ns()
        c0 = time.thread_time_ns()
        ns = target.time(size, loops)
        c1 = time.thread_time_ns()
        w1 = time.perf_counter_ns()
        off = max(0, (w1 - w0) - (c1 - c0) - bracket) / max(ns, 1)
        if off < best_off:
            best_ns, best_off = ns, off
        if off <= OFF_CPU_LIMIT or ns >= RETRY_MAX_NS:
            break
        if attempt < MAX_RETRIES:
            noise.retried += 1
    noise.timings += 1
    if best_off > OFF_CPU_LIMIT:
        noise.disturbed += 1
    return best_ns


@dataclass(frozen=True)
class Settings:
    """How hard to measure.

    ``min_time_ns``: each timing covers at least this long (enough loops), so
    the timer's resolution and the cost of reading it vanish in the result.
    ``point_budget_ns``: each cell's (one target at one size) share of time;
    a group of cells pools its shares (module Budget). Sizes go up, and a
    cell whose calibration (about SKIP_FACTOR single calls) would not fit
    in what the pool has left, after a minimal reserve for the cells still
    to come, is skipped; after calibration every cell may spend an equal
    part of what is left, stopping once it has at least ``min(3,
    repetitions)`` timings (one, if a single call takes more than half its
    part).
    """

    repetitions: int
    min_time_ns: int
    clock_tolerance: float = 0.02
    clock_attempts: int = 3
    point_budget_ns: int = 2_000_000_000


#: A cell is skipped when this many calls at its size (what calibrating it
#: takes), estimated from the same target's smaller sizes, would overrun the
#: group's pool.
SKIP_FACTOR = 3
#: What a cell costs at least, in timings of min_time_ns (calibration and a
#: few repetitions): reserved in the pool for each cell not yet calibrated.
CELL_MINIMUM = 4


class Budget:
    """A run's time, shared out over the work it has planned.

    Work is counted in units: a cell (one target at one size) of a slope
    group is one unit, a by-length cell more (its sizes go to 16 MiB). Each
    group may spend an equal share per unit of what is left (``allowance``),
    so a run of any number of modes fits the total: cheap cells (short
    calls, a few 100 µs timings) leave their unused share to the later ones,
    and slow targets at large sizes are sampled less or skipped instead of
    taking minutes.
    """

    def __init__(self, total_ns: int, units: int) -> None:
        self.total_ns = total_ns
        self.units = max(1, units)
        self.spent_ns = 0
        self.done = 0

    @property
    def remaining_ns(self) -> int:
        return max(0, self.total_ns - self.spent_ns)

    def allowance(self) -> int:
        """ns each unit of the next group may spend."""
        return self.remaining_ns // max(1, self.units - self.done)

    def charge(self, ns: int, units: int) -> None:
        self.spent_ns += ns
        self.done += units

    def eta_ns(self, elapsed_ns: int) -> int:
        """Time still to run: the units left at the rate so far, at most what is left."""
        if not self.done:
            return self.remaining_ns
        rate = elapsed_ns / self.done
        return int(min(self.remaining_ns, rate * max(0, self.units - self.done)))


@dataclass
class Series:
    """One target's median time per call at each size, and the sizes skipped."""

    target: Target
    points: list[tuple[int, float]]
    skipped: list[int] = field(default_factory=list)
    loops: dict[int, int] = field(default_factory=dict)  # calls per timing, by size


@dataclass
class GroupResult:
    op: Operation
    series: list[Series]
    clock: ClockReading
    attempts: int


def calibrate(target: Target, size: int, min_time_ns: int) -> tuple[int, int | None]:
    """The loop count at which one timing of size bytes lasts min_time_ns.

    Starts with a warm-up call (first-call costs: caches, lazy set-up, page
    faults), discarded unless the call is so long (LONG_CALL_NS) that those
    costs vanish in it: then it is returned as a first sample, since such
    calls are timed one at a time and each one costs real seconds. Otherwise
    the count is confirmed with a second timing, since one interrupted timing
    would leave a count far too small, and the cost of reading the timer
    would then show up as time per call.
    """
    loops, first, _, _ = _calibrate(target, size, min_time_ns)
    return loops, first


def _calibrate(target: Target, size: int,
               min_time_ns: int) -> tuple[int, int | None, float, int]:
    """calibrate, an estimate of ns per call, and the ns its timings took."""
    first = target.time(size, 1)
    used = first
    if first >= max(10 * min_time_ns, LONG_CALL_NS):
        return 1, first, float(first), used
    loops = 1
    while True:
        ns = target.time(size, loops)
        used += ns
        if ns >= min_time_ns:
            ns = target.time(size, loops)
            used += ns
            if ns >= min_time_ns // 2 or loops >= MAX_LOOPS:
                return loops, None, ns / loops, used
        if loops >= MAX_LOOPS:
            return loops, None, ns / loops, used
        want = math.ceil(loops * 1.2 * min_time_ns / max(ns, 1))
        loops = min(MAX_LOOPS, max(loops * 2, want))


def measure_once(targets: list[Target], sizes: tuple[int, ...], settings: Settings,
                 noise: Noise, progress: Progress | None = None,
                 known: list[Series] | None = None) -> list[Series]:
    """Median ns per call of every target at every size, targets interleaved.

    Sizes go up; a target's size that would overrun the group's pool
    (Settings, estimated from its last size's time per byte) is skipped,
    and so are its larger ones. ``known``: an earlier pass over the same
    targets and sizes, whose loop counts are used instead of calibrating
    and whose skipped sizes are skipped again.
    """
    loops: dict[tuple[int, int], int] = {}
    samples: dict[tuple[int, int], list[float]] = {}
    spent: dict[tuple[int, int], int] = {}
    least: dict[tuple[int, int], float] = {}
    per_byte: dict[int, float] = {}
    skipped: dict[int, list[int]] = {ti: [] for ti in range(len(targets))}
    reps = settings.repetitions
    cells = len(sizes) * len(targets)
    pool = settings.point_budget_ns * cells
    used = 0
    was_enabled = gc.isenabled()
    gc.disable()  # a collection in the middle of a Python timing loop is noise
    try:
        for si, size in enumerate(sizes):
            for ti, target in enumerate(targets):
                key = (ti, size)
                later = cells - (si * len(targets) + ti) - 1
                room = pool - used - later * CELL_MINIMUM * settings.min_time_ns
                if known is not None:
                    if size not in known[ti].loops:
                        skipped[ti].append(size)
                        continue
                    loops[key], first = known[ti].loops[size], None
                    call_ns, cost = dict(known[ti].points)[size], 0
                elif skipped[ti] or (ti in per_byte
                                     and SKIP_FACTOR * per_byte[ti] * size > room):
                    skipped[ti].append(size)
                    continue
                else:
                    loops[key], first, call_ns, cost = _calibrate(target, size,
                                                                  settings.min_time_ns)
                used += cost
                per_byte[ti] = call_ns / max(size, 1)
                samples[key] = [] if first is None else [float(first)]
                spent[key] = 0 if first is None else first
                least[key] = call_ns
        # what is left, filled up from the cheapest cell: each gets what all its
        # repetitions take, or an equal part of the rest if that is less
        timing = {key: loops[key] * call_ns for key, call_ns in least.items()}
        allow: dict[tuple[int, int], float] = {}
        left = float(max(0, pool - used))
        for i, key in enumerate(sorted(timing, key=lambda k: timing[k])):
            allow[key] = min(reps * timing[key], left / (len(timing) - i))
            left -= allow[key]
        for key in least:
            least[key] = 1 if 2 * timing[key] > allow[key] else min(3, reps)
        for rep in range(reps):
            if progress is not None:
                progress.step(f"repetition {rep + 1}/{reps}")
            for size in sizes:
                for ti, target in enumerate(targets):
                    key = (ti, size)
                    if key not in samples:
                        continue
                    if len(samples[key]) >= reps or (len(samples[key]) >= least[key]
                                                     and spent[key] >= allow[key]):
                        continue
                    ns = timed(target, size, loops[key], noise)
                    spent[key] += ns
                    samples[key].append(ns / loops[key])
    finally:
        if was_enabled:
            gc.enable()
    return [Series(target, [(size, median(samples[(ti, size)])) for size in sizes
                            if (ti, size) in samples], skipped[ti],
                   {size: loops[(ti, size)] for size in sizes if (ti, size) in samples})
            for ti, target in enumerate(targets)]


def run_group(op: Operation, targets: list[Target], sizes: tuple[int, ...], settings: Settings,
              clock: Clock, noise: Noise, progress: Progress | None = None,
              known: list[Series] | None = None, cores: Cores | None = None) -> GroupResult:
    """measure_once, bracketed by clock samples and repeated until they agree.

    If the clock never settles within ``clock_attempts``, the attempt whose
    samples agreed best is kept and its spread is reported with the result.
    Each attempt first moves to the CPU whose AES units are least shared
    (system.Cores), when given, and is redone like a moving clock when that
    CPU's AES got slower by the end of it.
    """
    sizes = for_mode(sizes, op.whole_blocks)
    for target in targets:
        target.prepare(max(sizes))
    best: GroupResult | None = None
    best_rank = (True, 0.0)
    try:
        for attempt in range(1, settings.clock_attempts + 1):
            if cores is not None:
                cores.pick()
            before = clock.sample() if clock.measured else None
            series = measure_once(targets, sizes, settings, noise, progress, known)
            unshared = cores is None or cores.still_unshared()
            after = clock.sample() if clock.measured else None
            reading = clock.reading(before, after)
            result = GroupResult(op, series, reading, attempt)
            # an attempt on a CPU that stayed unshared beats one that did not,
            # then the steadier clock wins
            rank = (not unshared, reading.diff or 0.0)
            if best is None or rank < best_rank:
                best, best_rank = result, rank
            settled = reading.diff is None or reading.diff <= settings.clock_tolerance
            if settled and unshared:
                break
            if progress is not None:
                progress.step("the CPU's AES units became shared, again" if not unshared
                              else f"clock moved {reading.diff:.1%}, again")
    finally:
        for target in targets:
            target.release()
    assert best is not None
    best.attempts = attempt
    return best
