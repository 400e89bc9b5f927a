"""``aeskit bench``: options, the run, and where the output goes."""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import aeskit

from . import batch, floor, paths, plot, report, selfcheck, sizes, system
from .anomaly import find_anomalies
from .measure import Budget, GroupResult, Noise, Series, Settings, run_group
from .progress import Progress
from .results import Finding, LengthRow, Run, SlopeRow, Who, add_ratios
from .system import ClockReading
from .stats import (
    PER_CALL_DOMINATES,
    Fit,
    fit_line,
    fit_problem,
    fit_robust,
    median,
    mib_per_s,
)
from .targets import (
    KEY_BITS,
    MODE_ALIASES,
    MODE_KEY_BITS,
    MODES,
    ONE_KEY_SIZE_MODES,
    ONE_WAY_MODES,
    PEER_EXTRA,
    PEERS,
    SECTOR_COUNTS,
    SECTOR_SIZE,
    Operation,
    Target,
    make_targets,
    missing_peers,
    peer_available,
)

#: The whole run's time budget (--budget): the default selection, with the
#: by-length view, and --quick. Measured with every x86 backend on 2 cores.
BUDGET_S, BUDGET_LENGTHS_S, BUDGET_QUICK_S = 100.0, 150.0, 20.0

QUICK_NOTE = ("AES-128 on the default backend only (and peers), by-length up to 1 MiB; "
              "the method is the full one")


@dataclass(frozen=True)
class Options:
    """The resolved selection: what --quick and the defaults leave after the flags."""

    quick: bool
    modes: list[str]
    key_bits: list[int]
    backends: list[str]
    layers: list[str]
    peers: list[str]
    repetitions: int
    unaligned: int
    cpu_mhz: float | None
    slope_sizes: tuple[int, ...]
    lengths: tuple[int, ...] | None
    min_time_ns: int
    clock_attempts: int
    budget_s: float = 120.0
    peers_default: bool = False  # --peers not given: missing peers are worth a hint
    verbose: bool = False
    log_y: bool = False  # the by-length plots' MiB/s on a log scale


def add_arguments(p: argparse.ArgumentParser) -> None:
    sel = p.add_argument_group("selection")
    sel.add_argument("--quick", action="store_true",
                     help=QUICK_NOTE + "; explicit flags still win (under 30 s on 2 cores)")
    sel.add_argument("--modes", metavar="LIST",
                     help=f"comma-separated modes, any case (default all: {','.join(MODES)}); "
                          "aeskit's class names and the modes' other names work too "
                          "(AESCTR, OCB, GCMSIV)")
    sel.add_argument("--key-bits", metavar="LIST",
                     help="comma-separated key sizes in bits (default 128,192,256)")
    sel.add_argument("--backend", metavar="all|auto|NAME[,NAME]",
                     help="aeskit backends: all available (default), auto (the default one), "
                          "or names")
    sel.add_argument("--layer", choices=("kernel", "api", "both"), default="both",
                     help="kernel: C loop, GIL released; api: encrypt_into from Python "
                          "(default both)")
    sel.add_argument("--peers", metavar="all|none|LIST",
                     help="peer libraries run interleaved with aeskit: all importable "
                          f"(default), none, or names ({','.join(PEERS)})")
    how = p.add_argument_group("method")
    how.add_argument("--repetitions", type=int, metavar="N",
                     help="timings per size, the median is kept (default 5)")
    how.add_argument("--unaligned", type=int, default=0, metavar="N",
                     help="start buffers N bytes (0-63) past a 64-byte boundary")
    how.add_argument("--budget", type=float, metavar="SECONDS",
                     help="time for the whole run, shared out over every mode, size and "
                          "target: slow ones are sampled less, a size whose single call "
                          f"would overrun its share is skipped (default {BUDGET_S:.0f}, "
                          f"{BUDGET_LENGTHS_S:.0f} with --sizes, {BUDGET_QUICK_S:.0f} "
                          "with --quick)")
    how.add_argument("--cpu-mhz", type=float, metavar="MHZ",
                     help="core clock for cycles/byte instead of measuring it (auto MHz)")
    how.add_argument("--slope-range", metavar="MIN:MAX:STEP",
                     help="the slope series (default 16:4096:64)")
    view = p.add_argument_group("views")
    view.add_argument("--sizes", nargs="?", const="", metavar="LIST",
                      help="also the by-length table, terminal plot and anomaly check at "
                           "these lengths (default 16,64,256,1K,8K,16K,64K,1M,16M; "
                           "quick stops at 1M)")
    view.add_argument("--plot", metavar="FILE",
                      help="write the by-length plot as PNG/SVG/PDF (needs the plot extra, "
                           "matplotlib); implies --sizes")
    view.add_argument("--verbose", "-v", action="store_true",
                      help="the method in full: every row's clock, the units' probe, how "
                           "each layer and peer is called")
    view.add_argument("--log-y", action="store_true",
                      help="MiB/s on a log scale in the terminal and file plots, so slow "
                           "peers and portable do not sit flat on zero; implies --sizes")
    view.add_argument("--batch", action="store_true",
                      help="the batch view instead: n messages of L bytes in one batch call "
                           "(packed and sequence forms) beside one call per message and "
                           "pyca's, per message; --modes (default "
                           f"{','.join(batch.DEFAULT_MODES)}), --backend (one), --peers "
                           "(all, cryptography or none), --quick (a smaller grid), "
                           "--repetitions and --cpu-mhz apply, the others are refused")
    view.add_argument("--json", nargs="?", const="-", metavar="FILE",
                      help="write JSON with metadata to FILE, or alone to stdout")
    view.add_argument("--csv", nargs="?", const="-", metavar="FILE",
                      help="write bench-slope CSV rows to FILE, or alone to stdout")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Options:
    """Check every flag and fill in the defaults (which --quick changes)."""
    quick = bool(args.quick)
    if args.modes is None:
        modes = list(MODES)
    else:
        modes = []
        for m in _split(args.modes):
            mode = MODE_ALIASES.get(m.upper())
            if mode is None:
                aliases = [a for a in MODE_ALIASES if a not in MODES]
                parser.error(f"--modes: unknown mode {m!r} (choose from {', '.join(MODES)}; "
                             f"or the aliases {', '.join(aliases)})")
            if mode not in modes:
                modes.append(mode)
    if args.key_bits is None:
        key_bits = [128] if quick else list(KEY_BITS)
    else:
        key_bits = []
        for k in _split(args.key_bits):
            if not k.isdigit() or int(k) not in KEY_BITS:
                parser.error(f"--key-bits: {k!r} is not one of 128, 192, 256")
            if int(k) not in key_bits:
                key_bits.append(int(k))
    if not modes or not key_bits:
        parser.error("nothing selected: --modes and --key-bits need at least one value")

    info = aeskit.backends()
    spec = args.backend if args.backend is not None else ("auto" if quick else "all")
    if spec == "all":
        backends = list(info.available)
    elif spec == "auto":
        backends = [info.default]
    else:
        backends = []
        for b in _split(spec):
            if b not in info.all:
                parser.error(f"--backend: no backend {b!r} in this build ({', '.join(info.all)})")
            if b not in info.available:
                parser.error(f"--backend: {b!r} does not run on this CPU "
                             f"(available: {', '.join(info.available)})")
            if b not in backends:
                backends.append(b)
    layers = ["kernel", "api"] if args.layer == "both" else [args.layer]

    pspec = args.peers if args.peers is not None else "all"
    if pspec == "all":
        peers = [p for p in PEERS if peer_available(p)]
    elif pspec == "none":
        peers = []
    else:
        peers = []
        for p in _split(pspec):
            if p not in PEERS:
                parser.error(f"--peers: unknown peer {p!r} (choose from {', '.join(PEERS)})")
            if not peer_available(p):
                parser.error(f"--peers: {p} is not installed ({PEER_EXTRA})")
            if p not in peers:
                peers.append(p)

    reps = args.repetitions if args.repetitions is not None else 5
    if reps < 1:
        parser.error("--repetitions must be at least 1")
    if not 0 <= args.unaligned <= 63:
        parser.error("--unaligned must be 0..63")
    if args.cpu_mhz is not None and not args.cpu_mhz > 0:
        parser.error("--cpu-mhz must be positive")
    try:
        lo, hi, step = (sizes.parse_range(args.slope_range) if args.slope_range
                        else sizes.SLOPE_DEFAULT)
        slope_sizes = sizes.slope_series(lo, hi, step)
        if len(slope_sizes) < 2 or len(sizes.for_mode(slope_sizes, True)) < 2:
            raise ValueError("--slope-range gives fewer than two sizes (two whole blocks "
                             "for ECB/CBC/GHASH) to fit a line through")
        lengths: tuple[int, ...] | None = None
        if args.sizes:
            lengths = sizes.parse_size_list(args.sizes)
        elif args.sizes == "" or args.plot or args.log_y:
            lengths = sizes.LENGTHS_QUICK if quick else sizes.LENGTHS_DEFAULT
    except ValueError as exc:
        parser.error(str(exc))
    if args.plot:
        problem = plot.check_file_plot(args.plot)
        if problem:
            parser.error(problem)
    problem = paths.output_problem({"--plot": args.plot, "--json": args.json,
                                    "--csv": args.csv})
    if problem:
        parser.error(problem)
    if args.json == "-" and args.csv == "-":
        parser.error("--json and --csv cannot both go to stdout: give one a FILE")
    if args.budget is not None and not args.budget > 0:
        parser.error("--budget must be a positive number of seconds")
    budget = (args.budget if args.budget is not None
              else BUDGET_QUICK_S if quick else BUDGET_LENGTHS_S if lengths else BUDGET_S)
    return Options(quick=quick, modes=modes, key_bits=key_bits, backends=backends,
                   layers=layers, peers=peers, repetitions=reps, unaligned=args.unaligned,
                   cpu_mhz=args.cpu_mhz, slope_sizes=slope_sizes, lengths=lengths,
                   min_time_ns=100_000, clock_attempts=3, budget_s=budget,
                   peers_default=args.peers is None, verbose=bool(args.verbose),
                   log_y=bool(args.log_y))


def _operations(opts: Options) -> list[Operation]:
    """bench-slope's order: key size, then mode, encryption before decryption.

    A one-way mode (GHASH, CMAC) runs in one direction; GHASH only once,
    under the first key size: its speed does not depend on the AES key size.
    """
    ops = []
    for bits in opts.key_bits:
        for mode in opts.modes:
            if bits not in MODE_KEY_BITS.get(mode, (bits,)):
                continue  # XTS has no AES-192
            if mode in ONE_WAY_MODES:
                if bits == opts.key_bits[0] or mode not in ONE_KEY_SIZE_MODES:
                    ops.append(Operation(mode, True, bits))
            else:
                ops += [Operation(mode, True, bits), Operation(mode, False, bits)]
    return ops


def _sector_operations(opts: Options) -> list[Operation]:
    """XTS's sectors row, when XTS is selected: per XTS key size, both directions."""
    if "XTS" not in opts.modes:
        return []
    return [Operation("XTS", enc, bits, SECTOR_SIZE) for bits in opts.key_bits
            if bits in MODE_KEY_BITS["XTS"] for enc in (True, False)]


#: The sectors row's series: 1 to 256 sectors per call.
SECTOR_SIZES = tuple(SECTOR_SIZE * k for k in SECTOR_COUNTS)
#: A sectors cell's weight in the budget: its calls reach 1 MiB.
SECTOR_WEIGHT = 4


def _check(row: LengthRow, target: Target, caches: system.Caches, settings: Settings,
           clock: system.Clock, noise: Noise, progress: Progress) -> list[Finding]:
    """The anomaly check on one by-length curve, each drop confirmed by a re-measurement.

    A single disturbed timing can fake a drop, so the two lengths involved are
    timed again, alone and with twice the repetitions; only a drop that is
    still there is reported, with the numbers of the second measurement.
    """
    found: list[Finding] = []
    per_byte = 1 if row.who.in_place else 2
    for first in find_anomalies(row.speeds(), caches.levels, bytes_per_length=per_byte):
        progress.step(f"confirming a drop on {row.who.label}")
        again = run_group(row.op, [target], (first.from_size, first.to_size),
                          replace(settings, repetitions=2 * settings.repetitions,
                                  clock_attempts=1), clock,
                          noise, progress)
        ns = dict(again.series[0].points)
        if first.from_size not in ns or first.to_size not in ns:
            continue
        speeds = [(n, mib_per_s(ns[n] / n)) for n in (first.from_size, first.to_size)]
        for confirmed in find_anomalies(speeds, caches.levels, bytes_per_length=per_byte):
            found.append(Finding(row, confirmed))
    return found


def _line(points: list[tuple[int, float]], keep: set[int],
          robust: bool = False) -> tuple[Fit, list[tuple[int, float]]]:
    """The line through the points at the sizes in keep: least squares, or Theil-Sen
    when robust (a non-line with n < 2 when fewer were timed: fit_problem says so)."""
    pts = [(n, ns) for n, ns in points if n in keep]
    if len({n for n, _ in pts}) < 2:
        return Fit(math.nan, math.nan, 0.0, len(pts)), pts
    fit = fit_robust if robust else fit_line
    return fit([float(n) for n, _ in pts], [ns for _, ns in pts]), pts


#: A by-length cell's weight in the budget against a slope or bulk cell's: its
#: sizes reach 16 MiB, where one call of a slow target takes a second.
LENGTH_WEIGHT = 8


def _plan(opts: Options, ops: list[Operation]) -> tuple[dict[Operation, list[Target]], int]:
    """Every operation's targets, and how many units of work (measure.Budget) the run has."""
    targets = {op: make_targets(op, opts.backends, opts.layers, opts.peers, opts.unaligned)
               for op in ops}
    units = 0
    for op, ts in targets.items():
        per_target = 2 * len(_main_sizes(opts, op))  # two passes
        if opts.lengths:
            per_target += LENGTH_WEIGHT * len(sizes.for_mode(opts.lengths, op.whole_blocks))
        per_target += len(_separate_sizes(opts, op))
        units += per_target * len(ts)
    for op in _sector_operations(opts):
        targets[op] = make_targets(op, opts.backends, opts.layers, opts.peers, opts.unaligned)
        units += SECTOR_WEIGHT * len(SECTOR_SIZES) * len(targets[op])
    return targets, units


def _main_sizes(opts: Options, op: Operation) -> tuple[int, ...]:
    """One group per operation: the short series, the bulk sizes and the direct ones."""
    return sizes.for_mode(opts.slope_sizes + sizes.BULK_SIZES + (sizes.SMALL, sizes.LARGE),
                          op.whole_blocks)


def _separate_sizes(opts: Options, op: Operation) -> tuple[int, ...]:
    """The self-check's sizes that the by-length group does not time (all of them
    without --sizes): they get a group of their own."""
    lengths = set(sizes.for_mode(opts.lengths, op.whole_blocks)) if opts.lengths else set()
    return tuple(n for n in sizes.for_mode(selfcheck.SIZES, op.whole_blocks) if n not in lengths)


#: A clock that takes no samples, for the self-check's groups: they compare
#: times per call (a retimed row keeps its passes' clock reading), and a
#: group's two clock samples (10 ms) cost about what a separate group's
#: timings do.
_NO_CLOCK = system.Clock(None, sampler=lambda _ms: None)


def _timed_group(op: Operation, targets: list[Target], group_sizes: tuple[int, ...],
                 settings: Settings, budget: Budget, clock: system.Clock, noise: Noise,
                 progress: Progress, weight: int = 1,
                 known: list[Series] | None = None,
                 cores: system.Cores | None = None, extra: bool = False) -> GroupResult:
    """run_group with this group's share of the budget, charged for what it took.

    The clock retry, which redoes a whole group, is given up once less than
    a quarter of the budget is left: a late retry would starve the rest.
    ``extra``: work the plan did not count (the self-check's re-measurements,
    of calls of at most 64 KiB): not cut short by the share, which late in a
    run would leave it nothing to time, and charged its time but no units.
    """
    sizes_here = sizes.for_mode(group_sizes, op.whole_blocks)
    units = 0 if extra else len(sizes_here) * len(targets) * weight
    attempts = settings.clock_attempts if budget.remaining_ns > budget.total_ns // 4 else 1
    share = settings.point_budget_ns if extra else budget.allowance() * weight
    t0 = time.monotonic_ns()
    group = run_group(op, targets, sizes_here,
                      replace(settings, point_budget_ns=share, clock_attempts=attempts),
                      clock, noise, progress, known, cores)
    budget.charge(time.monotonic_ns() - t0, units)
    progress.advance(units)
    return group


def _retime_noisy_bulk(op: Operation, group: GroupResult, bulk: set[int], settings: Settings,
                       budget: Budget, clock: system.Clock, noise: Noise,
                       progress: Progress) -> None:
    """Time the bulk sizes again, with twice the repetitions, for the targets whose
    bulk line came out noisy (r2 low, or a slope <= 0), and keep the better line.

    One disturbed timing among seven sizes bends a line; a peer whose per-call
    cost dominates stays poor however often it is timed, so it is not redone.
    """
    def noisy(points: list[tuple[int, float]]) -> bool:
        problem = fit_problem(_line(points, bulk, robust=True)[0], max(bulk))
        return problem is not None and problem != PER_CALL_DOMINATES

    redo = [s for s in group.series if noisy(s.points)]
    if not redo:
        return
    progress.step(f"bulk line noisy for {len(redo)}, timing again")
    again = _timed_group(op, [s.target for s in redo], tuple(sorted(bulk)),
                         replace(settings, repetitions=2 * settings.repetitions,
                                 clock_attempts=1), budget, clock, noise, progress)
    for old, new in zip(redo, again.series):
        before = _line(old.points, bulk, robust=True)[0]
        merged = sorted({**dict(old.points), **dict(new.points)}.items())
        after = _line(merged, bulk, robust=True)[0]
        if after.r2 >= before.r2 or not before.slope > 0:
            old.points = merged


def _who(t: Target) -> Who:
    return Who(t.impl, t.backend, t.layer, t.in_place)


def _compared(row: SlopeRow, by_length: dict[Who, dict[int, float]],
              separate: dict[Who, dict[int, float]]) -> tuple[selfcheck.Comparison, ...] | None:
    """The row's bulk line against its own timings at the self-check's sizes, the
    by-length table's and the separate ones; None for a poor line (its figures are
    a direct timing already, and marked)."""
    if row.bulk is None or row.bulk_problem is not None:
        return None
    own = dict(row.points)
    timings = {selfcheck.DIRECT: {n: own[n] for n in selfcheck.SIZES if n in own},
               selfcheck.BY_LENGTH: by_length.get(row.who, {}),
               selfcheck.SEPARATE: separate.get(row.who, {})}
    return selfcheck.compare(row.bulk, timings)


def _retimed_bulk(row: SlopeRow, series: Series, bulk: tuple[int, ...]) -> None:
    """The row's bulk figures from a new timing of its bulk sizes alone: the line, its
    points and the direct 16 KiB timing (one of them) are replaced, not merged. The
    clock reading stays the row's passes' (the retime takes no samples)."""
    row.points = sorted([p for p in row.points if p[0] not in bulk] + series.points)
    row.bulk, pts = _line(series.points, set(bulk), robust=True)
    row.bulk_max = max(n for n, _ in pts) if pts else max(bulk)
    new = dict(series.points)
    if sizes.LARGE in new:
        row.direct[sizes.LARGE] = new[sizes.LARGE]


def _self_check(op: Operation, made: list[tuple[SlopeRow, Target]],
                by_length: dict[Who, dict[int, float]], separate: dict[Who, dict[int, float]],
                separate_sizes: tuple[int, ...], settings: Settings, budget: Budget,
                noise: Noise, progress: Progress, cores: system.Cores | None = None) -> int:
    """Each row's bulk line against the run's other timings of the same call
    (selfcheck.py); a row that misses one by more than selfcheck.TOLERANCE is
    timed again, and keeps the new figures whatever they say. Returns how many
    rows were timed again.

    A separate timing that is missed is the check's own and cheap: it is
    timed once more first, and the faster of its two kept (only ever added
    time makes a timing slow, and a neighbour's burst over that small group
    is the likelier cause). A row that still misses is timed again as it was
    timed, its bulk sizes in two passes whose lower medians are kept: a new
    line, and new timings of its own at 16 and 64 KiB. The by-length table's
    cells stay what the table prints, so a row that still misses one is marked.
    """
    def check(row: SlopeRow) -> None:
        found = _compared(row, by_length, separate)
        row.self_check = None if found is None else selfcheck.SelfCheck(found)

    def missed_separate(row: SlopeRow) -> bool:
        return row.self_check is not None and any(
            c.disagrees and c.source == selfcheck.SEPARATE for c in row.self_check.comparisons)

    for row, _ in made:
        check(row)
    redo = [(row, t) for row, t in made if row.disagrees]
    redo_separate = [(row, t) for row, t in redo if missed_separate(row)]
    if redo_separate:
        progress.step(f"self-check: {len(redo_separate)} separate timing(s) missed, again")
        group = _timed_group(op, [t for _, t in redo_separate], separate_sizes,
                             replace(settings, clock_attempts=1), budget, _NO_CLOCK, noise,
                             progress, cores=cores, extra=True)
        for s in group.series:
            kept = separate.setdefault(_who(s.target), {})
            kept.update({n: min(ns, kept.get(n, ns)) for n, ns in s.points})
        for row, _ in redo_separate:
            check(row)
        redo = [(row, t) for row, t in redo if row.disagrees]
    if not redo:
        return 0
    progress.step(f"self-check: {len(redo)} bulk line(s) miss a timing of the same call, "
                  f"timing again")
    targets = [t for _, t in redo]
    bulk = sizes.for_mode(sizes.BULK_SIZES, op.whole_blocks)
    one = _timed_group(op, targets, bulk, settings, budget, _NO_CLOCK, noise, progress,
                       cores=cores, extra=True)
    two = _timed_group(op, targets, bulk, settings, budget, _NO_CLOCK, noise, progress,
                       known=one.series, cores=cores, extra=True)
    for (row, _), series in zip(redo, _fastest(one, two).series):
        assert row.self_check is not None
        first = row.self_check.comparisons
        _retimed_bulk(row, series, bulk)
        found = _compared(row, by_length, separate)
        row.self_check = selfcheck.SelfCheck(found or (), before=first)
    return len(redo)


def _fastest(one: GroupResult, two: GroupResult) -> GroupResult:
    """Two passes over the same targets and sizes merged: the lower median at
    each size (only ever added time makes a timing slow), and the higher clock
    (a disturbed sample reads low), with the larger spread."""
    series = []
    for a, b in zip(one.series, two.series):
        at = dict(b.points)
        points = [(n, min(ns, at.get(n, ns))) for n, ns in a.points]
        series.append(Series(a.target, points, a.skipped, a.loops))
    mhz = [r.mhz for r in (one.clock, two.clock) if r.mhz is not None]
    diffs = [r.diff for r in (one.clock, two.clock) if r.diff is not None]
    clock = ClockReading(max(mhz) if mhz else None,
                         max(diffs) if diffs else None, one.clock.source)
    return GroupResult(one.op, series, clock, max(one.attempts, two.attempts))


def execute(opts: Options, progress: Progress) -> Run:
    """Time every selected operation; fit, compare and check the results.

    Ctrl-C ends the timing at once: the operations finished so far are
    returned, and the run's meta says it was interrupted.
    """
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    cpu0 = time.process_time()
    load0 = system.loadavg()
    clock = system.Clock(opts.cpu_mhz)
    noise = Noise()
    settings = Settings(repetitions=opts.repetitions, min_time_ns=opts.min_time_ns,
                        clock_attempts=opts.clock_attempts)
    ops = _operations(opts)
    all_targets, planned = _plan(opts, ops)
    budget = Budget(int(opts.budget_s * 1e9), planned)
    progress.start_work(planned, budget)
    slope_rows: list[SlopeRow] = []
    length_rows: list[LengthRow] = []
    sector_rows: list[LengthRow] = []
    findings: list[Finding] = []
    skipped: list[dict[str, Any]] = []
    caches = system.caches()
    # every group runs on the CPU whose AES units are least shared, and so
    # does the probe the floors come from
    cores = system.Cores()
    cores.pick()
    aes = floor.probe(system.native())
    # a second estimate of the clock, from a chain of another known latency:
    # a disagreement means cycles/byte cannot be trusted (warned about)
    check = system.check_clock() if clock.measured else None
    interrupted = False
    first: dict[Operation, GroupResult] = {}
    done: set[Operation] = set()
    # the self-check's timings from other groups than the row's own, per operation
    by_length: dict[Operation, dict[Who, dict[int, float]]] = {}
    separate: dict[Operation, dict[Who, dict[int, float]]] = {}
    # what the self-check's separate groups and its retimes took, and how many rows it retimed
    checking = {"separate_ns": 0, "retime_ns": 0, "retimed": 0}

    def rows_of(op: Operation, group: GroupResult,
                retime: bool = True) -> list[tuple[SlopeRow, Target]]:
        """The slope rows of one operation's main group (both passes merged)."""
        bulk = set(sizes.for_mode(sizes.BULK_SIZES, op.whole_blocks))
        short = set(sizes.for_mode(opts.slope_sizes, op.whole_blocks))
        if retime:
            _retime_noisy_bulk(op, group, bulk, settings, budget, clock, noise, progress)
        made = []
        for series in group.series:
            t = series.target
            bound = (aes.floor(op, t.backend) if aes is not None and t.impl == "aeskit"
                     else None)
            short_fit, short_pts = _line(series.points, short)
            bulk_fit, bulk_pts = _line(series.points, bulk, robust=True)
            timed_at = dict(series.points)
            row = SlopeRow(
                op, _who(t), short_fit,
                series.points, group.clock, group.attempts,
                floor=bound.cycles_per_byte if bound else None,
                floor_basis=bound.basis if bound else None,
                bulk=bulk_fit,
                direct={n: timed_at[n] for n in (sizes.SMALL, sizes.LARGE) if n in timed_at},
                short_max=max(n for n, _ in short_pts) if short_pts else max(short),
                bulk_max=max(n for n, _ in bulk_pts) if bulk_pts else max(bulk))
            slope_rows.append(row)
            made.append((row, t))
            if series.skipped:
                skipped.append({**_ident(op, t), "bytes": series.skipped})
        done.add(op)
        return made

    def sector_rows_of(op: Operation, group: GroupResult) -> None:
        """The sectors row's by-count rows (both passes merged)."""
        for series in group.series:
            t = series.target
            bound = (aes.floor(op, t.backend) if aes is not None and t.impl == "aeskit"
                     else None)
            sector_rows.append(LengthRow(op, Who(t.impl, t.backend, t.layer, t.in_place),
                                         series.points, group.clock,
                                         floor=bound.cycles_per_byte if bound else None,
                                         skipped=list(series.skipped)))
        done.add(op)

    try:
        for op in ops:
            targets = all_targets[op]
            progress.begin(f"{op.algo} {op.label}")
            first[op] = _timed_group(op, targets, _main_sizes(opts, op), settings, budget,
                                     clock, noise, progress, cores=cores)
            if opts.lengths:
                progress.begin(f"{op.algo} {op.label} by length")
                # one pass: a by-length group can hold long calls, and its clock only
                # labels c/B in the JSON and CSV (the spread is recorded with it)
                group = _timed_group(op, targets, opts.lengths,
                                     replace(settings, clock_attempts=1), budget, clock,
                                     noise, progress, weight=LENGTH_WEIGHT, cores=cores)
                for series in group.series:
                    t = series.target
                    bound = (aes.floor(op, t.backend) if aes is not None and t.impl == "aeskit"
                             else None)
                    row = LengthRow(op, Who(t.impl, t.backend, t.layer, t.in_place),
                                    series.points, group.clock,
                                    floor=bound.cycles_per_byte if bound else None,
                                    skipped=list(series.skipped))
                    length_rows.append(row)
                    by_length.setdefault(op, {})[row.who] = dict(series.points)
                    findings += _check(row, t, caches, replace(settings, point_budget_ns=
                                                               budget.allowance()),
                                       clock, noise, progress)
            if _separate_sizes(opts, op):
                progress.begin(f"{op.algo} {op.label} self-check")
                t1 = time.monotonic_ns()
                group = _timed_group(op, targets, _separate_sizes(opts, op),
                                     replace(settings, clock_attempts=1), budget, _NO_CLOCK,
                                     noise, progress, cores=cores)
                separate[op] = {_who(s.target): dict(s.points) for s in group.series}
                checking["separate_ns"] += time.monotonic_ns() - t1
        # XTS's sectors row: its own series, aeskit's sectors calls beside its
        # one data unit of the same length; two passes, as above
        sector_ops = _sector_operations(opts)

        def sector_group(op: Operation, known: list[Series] | None = None) -> GroupResult:
            progress.begin(f"{op.algo} {op.label}" + (" (second pass)" if known else ""))
            return _timed_group(op, all_targets[op], SECTOR_SIZES,
                                replace(settings, clock_attempts=1), budget, clock, noise,
                                progress, weight=SECTOR_WEIGHT, known=known, cores=cores)

        for op in sector_ops:
            first[op] = sector_group(op)
        # the second pass, seconds later: a neighbour's burst that slowed an
        # operation in the first is unlikely to hit it again (min of medians)
        for op in ops:
            progress.begin(f"{op.algo} {op.label} (second pass)")
            again = _timed_group(op, all_targets[op], _main_sizes(opts, op), settings, budget,
                                 clock, noise, progress, known=first[op].series, cores=cores)
            made = rows_of(op, _fastest(first[op], again))
            t1 = time.monotonic_ns()
            checking["retimed"] += _self_check(op, made, by_length.get(op, {}),
                                            separate.get(op, {}), _separate_sizes(opts, op),
                                            settings, budget, noise, progress, cores)
            checking["retime_ns"] += time.monotonic_ns() - t1
        for op in sector_ops:
            sector_rows_of(op, _fastest(first[op], sector_group(op, first[op].series)))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        cores.restore()
    for op in ops:  # what the second pass did not reach, from the first alone
        if op in first and op not in done:
            rows_of(op, first[op], retime=False)
    for op in _sector_operations(opts):
        if op in first and op not in done:
            sector_rows_of(op, first[op])
    add_ratios(slope_rows)
    mhz_values = [r.clock.mhz for r in slope_rows if r.clock.mhz is not None]
    info = aeskit.backends()
    wall = time.monotonic() - t0
    meta: dict[str, Any] = {
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(wall, 3),
        "interrupted": interrupted,
        "budget": {"total_s": opts.budget_s, "spent_s": round(budget.spent_ns / 1e9, 3),
                   "units_planned": planned, "units_done": budget.done,
                   "skipped": skipped},
        "noise": {
            "cpu_share": round((time.process_time() - cpu0) / wall, 3) if wall > 0 else None,
            "loadavg_before": load0,
            "loadavg_after": system.loadavg(),
            "off_cpu_checked": noise.checked,
            "timings": noise.timings,
            "retried": noise.retried,
            "disturbed": noise.disturbed,
        },
        "versions": system.versions(),
        "platform": {"system": platform.system(), "release": platform.release(),
                     "machine": platform.machine()},
        "cpu": {"model": system.cpu_model(), "flags": system.cpu_flags(),
                "features": aeskit.cpu_features(), "caches": caches.levels,
                "caches_source": caches.source, "logical_cpus": os.cpu_count()},
        "backends": info._asdict(),
        "peers_missing": missing_peers() if opts.peers_default else [],
        "aes_probe": aes.as_dict() if aes is not None else None,
        "cores": cores.as_dict(),
        "floor_widths": {name: {"width": w.name, "blocks_per_instruction": w.blocks}
                         for name, w in floor.WIDTHS.items()},
        "clock": {"source": clock.source,
                  "mhz": median(mhz_values) if mhz_values else None,
                  "tolerance": settings.clock_tolerance},
        "clock_check": None if check is None else {
            **check.as_dict(), "warning": check.warning(), "text": check.info_text()},
        "self_check": {
            "tolerance": selfcheck.TOLERANCE, "sizes": list(selfcheck.SIZES),
            "separate_sizes": [n for n in selfcheck.SIZES
                               if not opts.lengths or n not in opts.lengths],
            "rows_retimed": checking["retimed"],
            "rows_disagreeing": sum(r.disagrees for r in slope_rows),
            "separate_s": round(checking["separate_ns"] / 1e9, 3),
            "retimes_s": round(checking["retime_ns"] / 1e9, 3)},
        "settings": {**{k: v for k, v in asdict(opts).items()
                        if k not in ("slope_sizes", "lengths")},
                     "slope_sizes": list(opts.slope_sizes),
                     "bulk_sizes": list(sizes.BULK_SIZES),
                     "direct_sizes": [sizes.SMALL, sizes.LARGE],
                     "lengths": list(opts.lengths) if opts.lengths else None},
    }
    return Run(meta, slope_rows, length_rows, findings, sector_rows)


def _ident(op: Operation, t: Target) -> dict[str, Any]:
    return {"mode": op.mode, "direction": op.direction, "key_bits": op.key_bits,
            "impl": t.impl, "backend": t.backend, "layer": t.layer}


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    print(f"wrote {path}", file=sys.stderr)


def _color() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR"))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The whole command: exit status 0, or 130 after Ctrl-C (with what was measured)."""
    if args.batch:
        return batch.run(args, parser)
    opts = resolve(args, parser)
    progress = Progress()
    try:
        result = execute(opts, progress)
    except KeyboardInterrupt:  # before the first operation: nothing to show
        progress.clear()
        print("aeskit bench: interrupted", file=sys.stderr)
        return 130
    interrupted = bool(result.meta["interrupted"])
    progress.done(interrupted)
    status = 130 if interrupted else 0
    to_stdout = "-" in (args.json, args.csv)
    if args.json == "-":
        sys.stdout.write(report.json_text(result))
    elif args.json:
        _write(args.json, report.json_text(result))
    if args.csv == "-":
        sys.stdout.write(report.csv_text(result))
    elif args.csv:
        _write(args.csv, report.csv_text(result))
    if args.plot and result.lengths:
        plot.file_plot(result.lengths, args.plot,
                       f"aeskit {aeskit.__version__}: speed by data length, "
                       f"{result.meta['cpu']['model']}", log_y=opts.log_y)
        print(f"wrote {args.plot}", file=sys.stderr)
    if to_stdout:
        for text in report.warnings(result):  # warnings still reach a person
            print("warning: " + text, file=sys.stderr)
        return status
    lines = report.text_lines(result, verbose=opts.verbose)
    if result.lengths:
        drawn = plot.text_plots(result.lengths, log_y=opts.log_y)
        lines += [[("", "")]] + [[(text, "")] for text in drawn]
    lines += report.closing_lines(result, verbose=opts.verbose)
    report.print_lines(lines, _color())
    return status
