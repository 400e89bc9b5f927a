"""``aeskit bench --batch``: n messages of L bytes in one batch call, beside one call per
message and beside pyca/cryptography's one call per message, in the same run.

For each mode, length L and count n, four ways of doing the same work are timed
alternately, and each is checked first to give the same bytes as the others:

- ``packed``: the packed batch method (``encrypt_many_into``, ``mac_many_into``,
  ``wrap_many_into``), the messages back to back with int64 offsets;
- ``seq``: the sequence batch method (``encrypt_many``, ...), a list in, a list out;
- ``loop``: aeskit's one-shot method called once per message from Python;
- ``pyca``: pyca/cryptography's, once per message (where it has the mode);
- ``kernel``: the one-shot kernel called once per message in a C loop, each call waiting
  for the last (``kernel_time``, the kernel layer of ``aeskit bench``; not for the key
  wraps): what the batch's kernels gain over one message at a time, without Python.

A figure is the median of the timings of one call of the whole batch (or the whole
loop), divided by n: nanoseconds per message, and cycles per byte at the clock
measured around the run (or ``--cpu-mhz``). Each cell runs on the CPU whose AES units
are least shared (``system.Cores``), and is timed again when they became shared.
``loop/packed`` and ``kernel/packed`` are how many times faster per message the packed
batch is.
"""

from __future__ import annotations

import argparse
import array
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aeskit
from aeskit import _modes

from . import report, system

#: The grid: counts and lengths (bytes) of the issue's batch targets.
COUNTS = (1, 16, 64, 256, 4096)
LENGTHS = (16, 64, 256, 1500, 4096)
#: The modes timed when --modes is not given: one of each kind of batch.
DEFAULT_MODES = ("GCM", "CCM", "CBC", "CMAC", "KW")
#: Each way's timings per cell; the median is kept.
REPETITIONS = 5
#: Times a cell is timed at most: again when its CPU's AES units became shared during it.
CELL_ATTEMPTS = 3
#: A timing repeats its call until it has taken this long.
MIN_SAMPLE_NS = 2_000_000

WAYS = ("packed", "seq", "loop", "pyca", "kernel")


@dataclass(frozen=True)
class Cell:
    """One mode, length and count: nanoseconds per message of each way timed."""

    mode: str
    length: int
    count: int
    ns: dict[str, float]


def _time(fn: Callable[[], object], repetitions: int) -> float:
    """The median time of one call of fn, in ns."""
    fn()
    calls, spent = 1, 0
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        spent = time.perf_counter_ns() - t0
        if spent >= MIN_SAMPLE_NS or calls >= 1 << 20:
            break
        calls *= 2
    samples = [spent / calls]
    for _ in range(repetitions - 1):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - t0) / calls)
    return statistics.median(samples)


def _as_float(x: object) -> float:
    assert isinstance(x, float)
    return x


def _pyca(mode: _modes.ModeFacts, key: bytes) -> Callable[..., bytes] | None:
    """pyca/cryptography's one call for a message of mode, as (side, data) -> bytes."""
    try:
        from cryptography.hazmat.primitives import cmac, keywrap
        from cryptography.hazmat.primitives.ciphers import Cipher, aead, algorithms, modes
    except ImportError:
        return None
    if mode.family == "aead":
        cls = getattr(aead, mode.class_name, None)
        if cls is None:
            return None
        obj = cls(key)
        if mode.nonce_name is None:
            return lambda side, data: obj.encrypt(data, None)
        return lambda side, data: obj.encrypt(side, data, None)
    if mode.family == "mac":
        def mac(side: Any, data: bytes) -> bytes:
            c = cmac.CMAC(algorithms.AES(key))
            c.update(data)
            return c.finalize()
        return mac
    if mode.family == "keywrap":
        wrap = (keywrap.aes_key_wrap if mode.name == "KW"
                else keywrap.aes_key_wrap_with_padding)
        return lambda side, data: wrap(key, data)
    makers: dict[str, Callable[[Any], modes.Mode]] = {
        "ECB": lambda iv: modes.ECB(), "CBC": modes.CBC, "CTR": modes.CTR, "XTS": modes.XTS}
    make = makers.get(mode.name)
    if make is None:
        return None

    def crypt(side: Any, data: bytes) -> bytes:
        cipher: Any = Cipher(algorithms.AES(key), make(side))   # its stubs type by mode
        enc = cipher.encryptor()
        return enc.update(data) + enc.finalize()
    return crypt


def _ways(mode: _modes.ModeFacts, backend: str, length: int, count: int,
          pyca: bool = True) -> dict[str, Callable[[], object]]:
    """The four ways over one batch (pyca's only if pyca), checked to agree, as calls that
    take no arguments."""
    key = os.urandom(mode.n_keys * mode.key_sizes[0])
    if mode.name in ("XTS", "SIV"):
        key = bytes(range(len(key)))   # halves that differ
    obj = getattr(aeskit, mode.class_name)(key, backend=backend)
    data = [os.urandom(length) for _ in range(count)]
    src = b"".join(data)
    offsets = array.array("q", range(0, length * count + 1, length))
    side_len = 0 if mode.family in ("mac", "keywrap") or mode.nonce_name is None else (
        16 if mode.family == "cipher" else
        12 if mode.nonce_min <= 12 <= (mode.nonce_max or 12) else mode.nonce_min)
    sides: list[bytes | None] | None = (
        [os.urandom(side_len) for _ in range(count)] if side_len else None)
    packed_sides = b"".join(s for s in sides if s is not None) if sides else None
    extra: tuple[None, ...] = ()
    if mode.family == "aead":
        name, one_name, extra = "encrypt_many", "encrypt", (None,)
        out_len = length + obj.tag_length
    elif mode.family == "cipher":
        name, one_name, extra, out_len = "encrypt_many", "encrypt", (), length
    elif mode.family == "mac":
        name, one_name, extra, out_len = "mac_many", "mac", (), obj.tag_length
    else:
        name, one_name, extra = "wrap_many", "wrap", ()
        out_len = len(obj.wrap(bytes(length)))
    many, many_into, one = (getattr(obj, name), getattr(obj, name + "_into"),
                            getattr(obj, one_name))
    dst = bytearray(out_len * count)
    pre = (sides,) if sides else ()
    pre_packed = (packed_sides,) if sides else ()
    pairs = list(zip(sides or [None] * count, data))

    def packed() -> object:
        return many_into(*pre_packed, src, offsets, dst)

    def seq() -> object:
        return many(*pre, data, *extra)

    def loop() -> list[bytes]:
        if sides:
            return [one(s, d, *extra) for s, d in pairs]
        return [one(d, *extra) for d in data]

    ways: dict[str, Callable[[], object]] = {"packed": packed, "seq": seq, "loop": loop}
    if mode.family != "keywrap":
        extra_args = (side_len,) if mode.family == "aead" and side_len else ()
        # its own timer: the ns of count one-shot calls in C, per message
        kernel_time = system.native().kernel_time
        ways["kernel"] = lambda: kernel_time(obj, True, length, count, 0, *extra_args) / count
    peer = _pyca(mode, key) if pyca else None
    if peer is not None:
        ways["pyca"] = lambda: [peer(s, d) for s, d in pairs]
    want: list[bytes] = loop()
    packed()
    if bytes(dst) != b"".join(want) or seq() != want or (
            peer is not None and ways["pyca"]() != want):
        raise AssertionError(f"bench --batch: {mode.name} ways disagree at L={length}, n={count}")
    return ways


def measure(modes: list[str], backend: str, lengths: tuple[int, ...],
            counts: tuple[int, ...], repetitions: int = REPETITIONS,
            progress: Callable[[str], None] | None = None,
            cores: system.Cores | None = None, pyca: bool = True) -> list[Cell]:
    """Every cell of the grid, each way timed in turn. With cores (system.Cores, as the
    main view's groups), each cell runs on the CPU whose AES units are least shared, and
    is timed again (up to CELL_ATTEMPTS times in all) when that CPU's AES got slower
    during it: a neighbour on its SMT sibling slows the batches' mixed kernels far more
    than it slows AES alone, and by an amount that changes from one cell to the next."""
    cells = []
    for name in modes:
        mode = _modes.BY_NAME[name]
        for length in lengths:
            if (mode.whole_blocks and length % 16) or (mode.name == "KW" and length % 8):
                continue   # a length the mode does not take
            for count in counts:
                if progress is not None:
                    progress(f"{name} L={length} n={count}")
                ways = _ways(mode, backend, length, count, pyca)
                for _ in range(CELL_ATTEMPTS):
                    if cores is not None:
                        cores.pick()
                    ns = {w: (statistics.median(_as_float(fn()) for _ in range(repetitions))
                              if w == "kernel" else _time(fn, repetitions) / count)
                          for w, fn in ways.items()}
                    if cores is None or cores.still_unshared():
                        break
                cells.append(Cell(name, length, count, ns))
    return cells


def table(cells: list[Cell], mhz: float | None) -> list[str]:
    """The view: per message, ns and cycles/byte of each way, and the loop's time over
    the packed batch's."""
    head = (f"{'mode':<6} {'L':>5} {'n':>5}  {'packed ns':>10} {'c/B':>6}  {'seq ns':>9} "
            f"{'loop ns':>9} {'c/B':>6}  {'kernel ns':>9}  {'pyca ns':>9}  {'loop/packed':>11} "
            f"{'kernel/packed':>13}")
    lines = [head, "-" * len(head)]

    def cpb(ns: float | None, length: int) -> str:
        return f"{ns * mhz / 1000 / length:6.2f}" if ns is not None and mhz else f"{'-':>6}"

    def opt(ns: float | None) -> str:
        return f"{ns:9.1f}" if ns is not None else f"{'-':>9}"

    for c in cells:
        kernel, packed = c.ns.get("kernel"), c.ns["packed"]
        gain = f"{kernel / packed:>12.1f}x" if kernel is not None else f"{'-':>13}"
        lines.append(
            f"{c.mode:<6} {c.length:>5} {c.count:>5}  {packed:>10.1f} "
            f"{cpb(packed, c.length)}  {c.ns['seq']:>9.1f} {c.ns['loop']:>9.1f} "
            f"{cpb(c.ns['loop'], c.length)}  {opt(kernel)}  {opt(c.ns.get('pyca'))}  "
            f"{c.ns['loop'] / packed:>10.1f}x {gain}")
    return lines


def resolve_modes(text: str | None) -> list[str]:
    """--modes for the batch view: canonical names of modes with batch methods."""
    if text is None:
        return list(DEFAULT_MODES)
    names = {n: m.name for m in _modes.MODES for n in _modes.names_of(m)}
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part.upper() not in names:
            raise ValueError(f"--modes: unknown mode {part!r} for --batch (choose from "
                             f"{', '.join(m.name for m in _modes.MODES)})")
        if names[part.upper()] not in out:
            out.append(names[part.upper()])
    return out


#: The main view's options, which the batch view does not take (an error, not ignored).
NOT_BATCH = ("key_bits", "layer", "unaligned", "budget", "slope_range", "sizes", "plot",
             "log_y", "verbose", "json", "csv")


def resolve_peers(spec: str | None) -> bool:
    """--peers for the batch view: whether pyca/cryptography's calls are timed (all,
    cryptography; the default), or not (none). ValueError for the others: the view
    compares with pyca alone."""
    names = [p.strip() for p in (spec or "all").split(",") if p.strip()]
    if names in (["all"], ["cryptography"]):
        return True
    if names == ["none"]:
        return False
    raise ValueError(f"--peers: {spec!r} for --batch: all, cryptography or none (the batch "
                     "view compares with pyca/cryptography's one call per message)")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``aeskit bench --batch``: the grid, timed and printed."""
    given = [f"--{name.replace('_', '-')}" for name in NOT_BATCH
             if getattr(args, name, None) != parser.get_default(name)]
    if given:
        parser.error(f"{', '.join(given)}: not for --batch, which takes --modes, --backend, "
                     "--peers, --quick, --repetitions and --cpu-mhz")
    try:
        modes = resolve_modes(args.modes)
        pyca = resolve_peers(args.peers)
    except ValueError as e:
        parser.error(str(e))
    backend = "auto" if args.backend in (None, "all", "auto") else args.backend
    if backend not in ("auto", *aeskit.backends().available):
        parser.error(f"--backend: {backend!r} for --batch must be one available backend "
                     f"({', '.join(aeskit.backends().available)})")
    counts = (1, 64, 4096) if args.quick else COUNTS
    lengths = (64, 1500) if args.quick else LENGTHS
    clock = system.Clock(args.cpu_mhz)
    before = clock.sample()
    tty = sys.stderr.isatty()
    cores = system.Cores()
    try:
        cells = measure(modes, backend, lengths, counts, args.repetitions or REPETITIONS,
                        progress=(lambda text: print(f"  {text:<30}", end="\r", flush=True,
                                                     file=sys.stderr)) if tty else None,
                        cores=cores, pyca=pyca)
    finally:
        cores.restore()
    mhz = clock.reading(before, clock.sample()).mhz
    if tty:
        print(" " * 40, end="\r", file=sys.stderr)
    used = aeskit.AESGCM(bytes(16), backend=backend).backend
    print(f"aeskit bench --batch: backend {used}, AES-128 (XTS, SIV: two keys), "
          f"clock {f'{mhz:.0f} MHz' if mhz else 'not measured (c/B not shown)'}; "
          "ns and cycles/byte per message, medians of "
          f"{args.repetitions or REPETITIONS} timings")
    for line in table(cells, mhz):
        print(line)
    note = report.cores_note(cores.as_dict(), "cell", "timings of a cell")
    if note is not None:
        print(note)
    return 0
