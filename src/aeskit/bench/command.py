"""``aeskit bench``: options, the run, and where the output goes."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import aeskit

from . import floor, paths, plot, report, sizes, system
from .anomaly import find_anomalies
from .measure import Noise, Settings, run_group
from .progress import Progress
from .results import Finding, LengthRow, Run, SlopeRow, Who, add_ratios
from .stats import fit_line, median, mib_per_s
from .targets import (
    KEY_BITS,
    MODE_ALIASES,
    MODES,
    ONE_WAY_MODES,
    PEER_EXTRA,
    PEERS,
    Operation,
    Target,
    make_targets,
    peer_available,
)

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
    log_y: bool = False  # the by-length plots' MiB/s on a log scale


def add_arguments(p: argparse.ArgumentParser) -> None:
    sel = p.add_argument_group("selection")
    sel.add_argument("--quick", action="store_true",
                     help=QUICK_NOTE + "; explicit flags still win (under 30 s on 2 cores)")
    sel.add_argument("--modes", metavar="LIST",
                     help=f"comma-separated modes, any case (default all: {','.join(MODES)}); "
                          "aeskit's class names work too (AESCTR, AESOCB3, OCB3)")
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
    view.add_argument("--log-y", action="store_true",
                      help="MiB/s on a log scale in the terminal and file plots, so slow "
                           "peers and portable do not sit flat on zero; implies --sizes")
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
    return Options(quick=quick, modes=modes, key_bits=key_bits, backends=backends,
                   layers=layers, peers=peers, repetitions=reps, unaligned=args.unaligned,
                   cpu_mhz=args.cpu_mhz, slope_sizes=slope_sizes, lengths=lengths,
                   min_time_ns=100_000, clock_attempts=3, log_y=bool(args.log_y))


def _operations(opts: Options) -> list[Operation]:
    """bench-slope's order: key size, then mode, encryption before decryption.

    A one-way mode (GHASH) runs once, under the first key size: its speed
    does not depend on the AES key size.
    """
    ops = []
    for bits in opts.key_bits:
        for mode in opts.modes:
            if mode in ONE_WAY_MODES:
                if bits == opts.key_bits[0]:
                    ops.append(Operation(mode, True, bits))
            else:
                ops += [Operation(mode, True, bits), Operation(mode, False, bits)]
    return ops


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
        speeds = [(n, mib_per_s(ns[n] / n)) for n in (first.from_size, first.to_size)]
        for confirmed in find_anomalies(speeds, caches.levels, bytes_per_length=per_byte):
            found.append(Finding(row, confirmed))
    return found


def execute(opts: Options, progress: Progress) -> Run:
    """Time every selected operation; fit, compare and check the results."""
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    cpu0 = time.process_time()
    load0 = system.loadavg()
    clock = system.Clock(opts.cpu_mhz)
    noise = Noise()
    settings = Settings(repetitions=opts.repetitions, min_time_ns=opts.min_time_ns,
                        clock_attempts=opts.clock_attempts)
    ops = _operations(opts)
    slope_rows: list[SlopeRow] = []
    length_rows: list[LengthRow] = []
    findings: list[Finding] = []
    caches = system.caches()
    aes = floor.probe(system.native())
    progress.total = len(ops) * (2 if opts.lengths else 1)
    for op in ops:
        targets = make_targets(op, opts.backends, opts.layers, opts.peers, opts.unaligned)
        progress.begin(f"{op.algo} {op.label} slope")
        group = run_group(op, targets, opts.slope_sizes, settings, clock, noise, progress)
        for series in group.series:
            t = series.target
            xs = [float(n) for n, _ in series.points]
            ys = [ns for _, ns in series.points]
            bound = (aes.floor(op, t.backend) if aes is not None and t.impl == "aeskit"
                     else None)
            slope_rows.append(SlopeRow(op, Who(t.impl, t.backend, t.layer, t.in_place),
                                       fit_line(xs, ys), series.points, group.clock,
                                       group.attempts,
                                       floor=bound.cycles_per_byte if bound else None,
                                       floor_basis=bound.basis if bound else None))
        if opts.lengths:
            progress.begin(f"{op.algo} {op.label} by length")
            # one pass: a by-length group can hold seconds-long calls, and its clock
            # only labels c/B in the JSON and CSV (the spread is recorded with it)
            group = run_group(op, targets, opts.lengths, replace(settings, clock_attempts=1),
                              clock, noise, progress)
            for series in group.series:
                t = series.target
                row = LengthRow(op, Who(t.impl, t.backend, t.layer, t.in_place),
                                series.points, group.clock)
                length_rows.append(row)
                findings += _check(row, t, caches, settings, clock, noise, progress)
    add_ratios(slope_rows)
    mhz_values = [r.clock.mhz for r in slope_rows if r.clock.mhz is not None]
    info = aeskit.backends()
    wall = time.monotonic() - t0
    meta: dict[str, Any] = {
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(wall, 3),
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
        "aes_probe": aes.as_dict() if aes is not None else None,
        "floor_widths": {name: {"width": w.name, "blocks_per_instruction": w.blocks}
                         for name, w in floor.WIDTHS.items()},
        "clock": {"source": clock.source,
                  "mhz": median(mhz_values) if mhz_values else None,
                  "tolerance": settings.clock_tolerance},
        "settings": {**{k: v for k, v in asdict(opts).items()
                        if k not in ("slope_sizes", "lengths")},
                     "slope_sizes": list(opts.slope_sizes),
                     "lengths": list(opts.lengths) if opts.lengths else None},
    }
    return Run(meta, slope_rows, length_rows, findings)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    print(f"wrote {path}", file=sys.stderr)


def _color() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR"))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    opts = resolve(args, parser)
    progress = Progress(0)
    result = execute(opts, progress)
    progress.done()
    to_stdout = "-" in (args.json, args.csv)
    if args.json == "-":
        sys.stdout.write(report.json_text(result))
    elif args.json:
        _write(args.json, report.json_text(result))
    if args.csv == "-":
        sys.stdout.write(report.csv_text(result))
    elif args.csv:
        _write(args.csv, report.csv_text(result))
    if args.plot:
        plot.file_plot(result.lengths, args.plot,
                       f"aeskit {aeskit.__version__}: speed by data length, "
                       f"{result.meta['cpu']['model']}")
        print(f"wrote {args.plot}", file=sys.stderr)
    if to_stdout:
        for f in result.findings:  # warnings still reach a person
            print("warning: " + f.message(), file=sys.stderr)
        return 0
    lines = report.header_lines(result)
    lines += report.slope_lines(result.slope)
    if result.lengths:
        lines += report.length_lines(result.lengths)
        lines += [[(text, "")] for text in plot.text_plots(result.lengths)]
    lines += report.finding_lines(result.findings, checked=bool(result.lengths))
    lines += report.noise_lines(result)
    report.print_lines(lines, _color())
    return 0
