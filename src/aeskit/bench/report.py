"""The views of a run: slope and by-length tables (text), JSON and CSV.

Text is built as lines of (text, style) segments so the same tables print
plain everywhere and in colour through ``rich`` when it is installed and
stdout is a terminal; the styles never carry information the text lacks.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import floor, selfcheck, system
from .results import LengthRow, Run, SlopeRow, Who, finite
from .sizes import BULK_SIZES, LARGE, human, human_bytes
from .stats import cycles_per_byte, mib_per_s, num
from .targets import PEER_EXTRA, Operation

Segment = tuple[str, str]  # (text, style); style "" for none
Line = list[Segment]

SCHEMA = "aeskit-bench/2"


def _plus_minus() -> str:
    """bench-slope's '±' where stdout can print it, '+-' elsewhere."""
    try:
        "±".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return "+-"
    return "±"


def duration(ns: float) -> str:
    """ns per call in the unit that keeps 3 significant digits."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def _plain(text: str) -> Line:
    return [(text, "")]


def _ops_in_order(ops: Iterable[Operation]) -> list[Operation]:
    seen: dict[Operation, None] = {}
    for op in ops:
        seen.setdefault(op, None)
    return list(seen)


def _whos_in_order(whos: Iterable[Who]) -> list[Who]:
    seen: dict[Who, None] = {}
    for who in whos:
        seen.setdefault(who, None)
    return list(seen)


WIDTH = 100  # the text output fits this many columns
#: Marks on a cell; each one present is explained under the tables.
DIRECT, SHORT_POOR, UNDER_FLOOR, DISAGREES = "*", "~", "!", "?"
MARK_TEXT = {
    DIRECT: "from a direct 16 KiB timing (per-call cost included): the bulk line fits poorly",
    SHORT_POOR: "the short line fits poorly or bends between kernel paths: read with care",
    UNDER_FLOOR: "faster than the floor: a measurement error, not a result",
    DISAGREES: (f"the bulk line misses this run's own timing of the same call at "
                f"{' or '.join(human_bytes(n) for n in selfcheck.SIZES)} by more than "
                f"{selfcheck.TOLERANCE:.0%}, also when timed again: one of them is wrong"),
}


def _wrapped(text: str, indent: str = "", first: str = "") -> list[Line]:
    """text wrapped to WIDTH columns, as plain lines."""
    lines = textwrap.wrap(text, WIDTH - 1, initial_indent=first, subsequent_indent=indent,
                          break_on_hyphens=False)
    return [_plain(line) for line in lines]


def _clock_text(run: Run) -> str:
    clock = run.meta["clock"]
    if clock["source"] == "user":
        return f"clock {clock['mhz']:.0f} MHz (--cpu-mhz)"
    if clock["source"] == "auto" and clock["mhz"]:
        return f"clock {clock['mhz']:.0f} MHz (median; a dependent add chain around each mode)"
    return "clock unknown on this CPU: pass --cpu-mhz for cycles/byte"


def text_lines(run: Run, verbose: bool = False) -> list[Line]:
    """The header, the table of every implementation, and the by-length tables."""
    m = run.meta
    head = (f"aeskit {m['versions']['aeskit']} bench: {m['cpu']['model']}, "
            f"{m['versions']['python']}, default backend {m['backends']['default']}")
    lines: list[Line] = [[(head[:WIDTH - 1], "title")], _plain(_clock_text(run))]
    if verbose:
        lines += method_lines(run)
    lines += table_lines(run.slope)
    if run.lengths:
        lines += length_lines(run.lengths)
    lines += sector_lines(run.sectors)
    return lines


def method_lines(run: Run) -> list[Line]:
    """--verbose: how it was measured, each paragraph wrapped to WIDTH."""
    s = run.meta["settings"]
    slope = s["slope_sizes"]
    step = slope[1] - slope[0] if len(slope) > 1 else 0
    paras = [
        f"method: each mode once per key size; all targets take turns at each size; median "
        f"of {s['repetitions']} timings, each >= {s['min_time_ns'] / 1000:.0f} us; every "
        f"timed call waits for the one before (its IV or nonce takes in the previous "
        f"output), so short calls of a serial mode cannot overlap. Time budget "
        f"{s['budget_s']:.0f} s for the run, shared out per cell."
        + (f" Buffers 64-byte aligned + {s['unaligned']}." if s["unaligned"] else ""),
        f"short: a least-squares line over {len(slope)} sizes {slope[0]}..{slope[-1]} B "
        f"step {step} (libgcrypt's bench-slope): slope = cost per byte there, intercept = "
        f"ns/call. bulk: a second line over 16..64 KiB, where every kernel path is active; "
        f"x floor and the ratios to peers come from it. A line fits poorly when r2 < 0.98, "
        f"its slope <= 0, or its intercept outweighs the bytes at its largest size.",
        (f"self-check: the bulk line's time for a call of "
         f"{' and '.join(human_bytes(n) for n in selfcheck.SIZES)} against the row's own "
         f"timings there and the by-length table's, or a separate group's where the table has "
         f"none; a row more than {selfcheck.TOLERANCE:.0%} off is timed again, and marked "
         f"{DISAGREES} if it still is."),
        "layers: kernel = aeskit's C loop, GIL released; api = encrypt_into on a reused "
        "buffer from Python. Peers: reused context, update_into / output=.",
    ]
    if any(row.op.aead for row in run.slope):
        paras.append("AEADs (GCM, OCB = OCB3, GCM-SIV, CCM, EAX, SIV): one call = one "
                     "message, 12-byte nonce (CCM: 11) + data, no associated data, 16-byte tag "
                     "(SIV: the nonce is its one associated-data component, the tag first); "
                     "api = encrypt_into in place / decrypt_into from a kept ciphertext; peers: "
                     "one-shot encrypt_into, pycryptodome AES.new per message.")
    if any(row.op.mac for row in run.slope):
        paras.append("CMAC: one direction, one call = the 16-byte tag of one message; kernel = "
                     "the one-shot MAC, each tag XORed into the next message; api = "
                     "AESCMAC.mac(); peers: cryptography's CMAC copy() + update + finalize, "
                     "pycryptodome's CMAC.new(...).digest() per message.")
    ghash = [row for row in run.slope if row.op.mode == "GHASH"]
    if ghash:
        paras.append(f"GHASH: one direction, whole blocks, H from an AES-{ghash[0].op.key_bits} "
                     f"key; kernel = the backend's ghash slot alone; api and peers = GMAC "
                     f"(AES-GCM with the bytes as associated data, no data).")
    out: list[Line] = []
    for para in paras:
        out += _wrapped(para, indent="  ")
    for text in _floor_text(run):
        out += _wrapped(text, indent="  ")
    return out


def _cycles(probe: dict[str, Any], key: str) -> str:
    value = probe.get(key)
    return "-" if value is None else f"{value:.2f}"


def _floor_text(run: Run) -> list[str]:
    """What the units measured, and which floor each backend's rows use (floor.py)."""
    probe = run.meta.get("aes_probe")
    if not probe:
        return []
    out = [
        f"units here (core cycles): AESENC latency {probe['aesenc_latency_cycles']:.2f}; "
        f"per instruction over independent blocks: AES xmm "
        f"{_cycles(probe, 'aesenc_cycles_per_instruction')}, ymm "
        f"{_cycles(probe, 'vaes_ymm_cycles_per_instruction')}, zmm "
        f"{_cycles(probe, 'vaes_zmm_cycles_per_instruction')}; carry-less multiply xmm "
        f"{_cycles(probe, 'clmul_xmm_cycles_per_instruction')}, ymm "
        f"{_cycles(probe, 'clmul_ymm_cycles_per_instruction')}, zmm "
        f"{_cycles(probe, 'clmul_zmm_cycles_per_instruction')}; 80 AES rounds with 24 "
        f"multiplies interleaved xmm {_cycles(probe, 'gcm_mix_xmm_cycles')}, ymm "
        f"{_cycles(probe, 'gcm_mix_ymm_cycles')}, zmm {_cycles(probe, 'gcm_mix_zmm_cycles')}"]
    widths = run.meta.get("floor_widths") or {}
    shown = [name for name in widths
             if any(r.floor and r.who.backend == name and not r.who.is_peer for r in run.slope)]
    if not shown:
        return out
    out.append("floor c/B by the backend's width: "
               + ", ".join(f"{name} {widths[name]['width']} "
                           f"({widths[name]['blocks_per_instruction']} per instruction)"
                           for name in shown)
               + "; x floor = bulk c/B / floor")
    kinds: dict[floor.Kind, list[str]] = {}
    for r in run.slope:
        if r.floor and not r.who.is_peer:
            labels = kinds.setdefault(floor.kind_of(r.op.mode, r.op.encrypt), [])
            if r.op.label not in labels:
                labels.append(r.op.label)
    for kind, labels in kinds.items():
        out.append(f"{kind} ({', '.join(labels)}): {floor.KIND_TEXT[kind]}")
    return out


def _cell(value: float | None, mark: str = "", fmt: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return (format(value, fmt) if fmt else num(value)) + mark


def _row_marks(r: SlopeRow) -> tuple[str, str]:
    """(mark for the bulk cells, mark for the short cells)."""
    bulk = DIRECT if r.bulk_direct else ""
    if r.below_floor:
        bulk += UNDER_FLOOR
    if r.disagrees:
        bulk += DISAGREES
    return bulk, SHORT_POOR if r.short_problem else ""


def table_lines(rows: Sequence[SlopeRow]) -> list[Line]:
    """Per key size and implementation, one row per mode and direction, in two regimes.

    bulk (16..64 KiB): MiB/s, c/B, the floor and x floor; short (16 B..4 KiB,
    bench-slope's line): c/B and the fixed cost per call; then aeskit's bulk
    speed over each peer's.
    """
    out: list[Line] = []
    peers = sorted({p for row in rows for p in row.vs})
    lw = max([8] + [len(row.op.label) for row in rows])   # "GCM-SIV enc" takes 11
    for bits in sorted({row.op.key_bits for row in rows}):
        for who in _whos_in_order(row.who for row in rows if row.op.key_bits == bits):
            block = [r for r in rows if r.op.key_bits == bits and r.who == who]
            title = f"AES-{bits} {'aeskit ' if not who.is_peer else ''}{who.label}"
            if who.is_peer and who.backend != who.impl:
                title += f" ({who.backend})"
            show_vs = [p for p in peers if any(p in r.vs for r in block)]
            show_floor = any(r.floor for r in block)
            bulk_w = 33 if show_floor else 17
            top = f" {'':>{lw}} | {'bulk, 16-64 KiB':^{bulk_w}} | {'short, 16 B-4 KiB':^19} |"
            head = f" {'mode':>{lw}} | {'MiB/s':>8} {'c/B':>8}"
            if show_floor:
                head += f" {'floor':>7} {'x floor':>7}"
            head += f" | {'c/B':>8} {'ns/call':>10} |"
            if show_vs:
                top += f" {'bulk speed vs':^{13 * len(show_vs) - 1}}"
                head += "".join(f" {p[:12]:>12}" for p in show_vs)
            out.append([("", "")])
            out.append([(f" {title}", "title")])
            out.append([(top.rstrip(), "dim")])
            out.append([(head, "dim")])
            for r in block:
                bmark, smark = _row_marks(r)
                text = (f" {r.op.label:>{lw}} | {_cell(r.bulk_mib_per_s, bmark):>8}"
                        f" {_cell(r.bulk_cycles_per_byte, bmark):>8}")
                if show_floor:
                    over = r.over_floor
                    text += (f" {_cell(r.floor):>7}"
                             f" {_cell(over, 'x' + (UNDER_FLOOR if r.below_floor else ''), '.2f'):>7}")
                ns_call = r.fit.intercept
                # a short slope that is not positive is no cost per byte: "-" (and
                # the row is marked ~ on ns/call, as a line that fits poorly)
                short_cpb = r.cycles_per_byte if r.fit.slope > 0 else None
                text += (f" | {_cell(short_cpb, smark):>8}"
                         f" {(duration(ns_call) if ns_call > 0 else '~0') + smark:>10} |")
                line: Line = [(text, "")]
                for p in show_vs:
                    ratio = r.vs.get(p)
                    cell = (f"{ratio.value:.2f}x" + (DIRECT if ratio.direct else "")
                            if ratio is not None else "-")
                    style = "" if ratio is None else ("good" if ratio.value >= 1.0 else "bad")
                    line.append((f" {cell:>12}", style))
                out.append(line)
    return out


def _length_label(who: Who) -> tuple[str, str]:
    return (who.impl, "") if who.is_peer else (who.backend, who.layer)


def length_lines(rows: Sequence[LengthRow], what: str = "data length", column: str = "length",
                 label: Callable[[int], str] = human) -> list[Line]:
    """Per operation: MiB/s at each data length, one column per target, as many
    tables side by side as WIDTH needs; ! marks a cell under the floor,
    'skip' a length the budget left out. ``what``, ``column`` and ``label``
    name the first column and its values (the sectors row counts sectors)."""
    out: list[Line] = []
    cell = 13
    per_table = (WIDTH - 12) // cell
    for op in _ops_in_order(r.op for r in rows):
        block = [r for r in rows if r.op == op]
        sizes = sorted({n for r in block for n in [n for n, _ in r.points] + r.skipped})
        for first in range(0, len(block), per_table):
            part = block[first:first + per_table]
            out.append([("", "")])
            out.append([(f" {op.algo} {op.label}: MiB/s by {what}", "title")])
            labels = [_length_label(r.who) for r in part]
            out.append([(f" {column:>8} |" + "".join(f" {a[:cell - 1]:>{cell - 1}}"
                                                     for a, _ in labels), "dim")])
            if any(b for _, b in labels):
                out.append([(f" {'':>8} |" + "".join(f" {b[:cell - 1]:>{cell - 1}}"
                                                     for _, b in labels), "dim")])
            for n in sizes:
                text = f" {label(n):>8} |"
                for r in part:
                    ns = dict(r.points).get(n)
                    if n in r.skipped:
                        value = "skip"
                    elif ns is None:
                        value = "-"
                    else:
                        value = num(mib_per_s(ns / n)) + (UNDER_FLOOR if n in r.under_floor()
                                                          else "")
                    text += f" {value:>{cell - 1}}"
                out.append(_plain(text))
    return out


def sector_lines(rows: Sequence[LengthRow]) -> list[Line]:
    """XTS's sectors row: MiB/s by sectors per call, and for each backend what
    its most sectors cost in the kernel loop against one data unit of the same
    length."""
    if not rows:
        return []
    unit = rows[0].op.sector_size
    out = length_lines(rows, f"sectors of {human_bytes(unit)} per call", "sectors",
                       lambda n: str(n // unit))
    for op in _ops_in_order(r.op for r in rows):
        block = [r for r in rows if r.op == op]
        units = {r.who.backend: r for r in block if r.who.layer == "one unit"}
        for r in block:
            # like for like: the kernel loop's sectors against its one unit (the
            # api row adds a Python call's cost and its own buffer)
            yard = units.get(r.who.backend)
            if r.who.is_peer or yard is None or r.who.layer != "kernel":
                continue
            both = sorted(set(dict(r.points)) & set(dict(yard.points)))
            if not both:
                continue
            n = both[-1]
            ratio = dict(r.points)[n] / dict(yard.points)[n]
            out.append(_plain(f"   {op.algo} {op.label}, {r.who.label}: {n // unit} sectors "
                              f"take {ratio:.3f}x the time of one {human_bytes(n)} unit"))
    if any(r.who.is_peer for r in rows):
        out.append(_plain("   cryptography has no sectors call: one XTS context per sector, "
                          "in a Python loop"))
    return out


def _best_aeskit(rows: Sequence[SlopeRow], mode: str, bits: int) -> str | None:
    """The backend whose rows of this mode are fastest in bulk (geometric mean of
    the directions), on the api layer when it ran, else the kernel."""
    mine = [r for r in rows if not r.who.is_peer and r.op.mode == mode and r.op.key_bits == bits
            and r.bulk_ns_per_byte]
    layers = {r.who.layer for r in mine}
    layer = "api" if "api" in layers else "kernel"
    scores: dict[str, float] = {}
    for backend in {r.who.backend for r in mine}:
        costs = [r.bulk_ns_per_byte for r in mine
                 if r.who.backend == backend and r.who.layer == layer and r.bulk_ns_per_byte]
        if costs:
            scores[backend] = math.prod(costs) ** (1 / len(costs))
    return min(scores, key=lambda b: scores[b]) if scores else None


def summary_lines(rows: Sequence[SlopeRow]) -> list[Line]:
    """One line per mode: aeskit's best backend against the best peer, bulk and 64 B.

    For the first key size of the run; api layer (what a Python caller gets,
    as the peers are called) when it ran. Without peers: MiB/s and x floor.
    """
    if not rows:
        return []
    bits = rows[0].op.key_bits
    modes = list(dict.fromkeys(r.op.mode for r in rows if r.op.key_bits == bits))
    with_peers = any(r.vs for r in rows if r.op.key_bits == bits)
    out: list[Line] = [[("", "")]]
    if with_peers:
        out.append([(f" summary, AES-{bits}: aeskit's best backend / the best peer, in speed",
                     "title")])
        out.append([(f" {'mode':>6} | {'aeskit':<18} | {'bulk enc':>8} {'dec':>7} | "
                     f"{'64 B enc':>8} {'dec':>7} | best peer (bulk)", "dim")])
    else:
        out.append([(f" summary, AES-{bits}: aeskit's best backend", "title")])
        out.append([(f" {'mode':>6} | {'aeskit':<18} | {'MiB/s enc':>9} {'dec':>8} | "
                     f"{'x floor enc':>11} {'dec':>7}", "dim")])
    for mode in modes:
        backend = _best_aeskit(rows, mode, bits)
        if backend is None:
            continue
        mine = [r for r in rows if not r.who.is_peer and r.op.mode == mode
                and r.op.key_bits == bits and r.who.backend == backend]
        layer = "api" if any(r.who.layer == "api" for r in mine) else "kernel"
        mine = [r for r in mine if r.who.layer == layer]
        enc = next((r for r in mine if r.op.encrypt), None)
        dec = next((r for r in mine if not r.op.encrypt and not r.op.one_way), None)
        who = f"{backend} {layer}"
        if with_peers:
            def best(r: SlopeRow | None, small: bool) -> tuple[str, str]:
                """The ratio to the peer aeskit leads least, and that peer."""
                if r is None:
                    return "", ""
                if small:
                    if not r.vs_small:
                        return "-", ""
                    name = min(r.vs_small, key=lambda p: r.vs_small[p])
                    return f"{r.vs_small[name]:.2f}x", name
                if not r.vs:
                    return "-", ""
                name = min(r.vs, key=lambda p: r.vs[p].value)
                got = r.vs[name]
                return f"{got.value:.2f}x" + (DIRECT if got.direct else ""), name
            (eb, ep), (db, dp) = best(enc, False), best(dec, False)
            (es, _), (ds, _) = best(enc, True), best(dec, True)
            names = ep if dp in ("", ep) else f"{ep} / {dp}"
            out.append(_plain(f" {mode:>6} | {who:<18} | {eb:>8} {db:>7} | {es:>8} {ds:>7} | "
                              f"{names}"))
        else:
            def mib(r: SlopeRow | None) -> str:
                return "" if r is None else _cell(r.bulk_mib_per_s)

            def over(r: SlopeRow | None) -> str:
                return "" if r is None else _cell(r.over_floor, "x", ".2f")
            out.append(_plain(f" {mode:>6} | {who:<18} | {mib(enc):>9} {mib(dec):>8} | "
                              f"{over(enc):>11} {over(dec):>7}"))
    return out


def warnings(run: Run) -> list[str]:
    """What a reader must not miss: numbers under a floor, confirmed anomalies, a clock
    the second estimate contradicts, an interrupted run."""
    out: list[str] = []
    for r in run.slope:
        if r.below_floor:
            out.append(f"{r.op.algo} {r.op.label} {r.who.label}: bulk {num(r.bulk_cycles_per_byte)}"
                       f" c/B is under its floor {num(r.floor)} c/B: a measurement error")
    disagreeing = [r for r in run.slope if r.disagrees]
    if len(disagreeing) == 1:
        out.append(_disagreement_text(disagreeing[0]))
    elif disagreeing:
        out.append(_disagreements_text(disagreeing))
    for lr in run.lengths:
        under = lr.under_floor()
        if under:
            out.append(f"{lr.op.algo} {lr.op.label} {lr.who.label}: "
                       f"{', '.join(human(n) for n in under)} under the floor: a measurement "
                       f"error")
    out += [f.message() for f in run.findings]
    check = run.meta.get("clock_check") or {}
    if check.get("warning"):
        out.append(str(check["warning"]))
    if run.meta.get("interrupted"):
        out.append("interrupted (Ctrl-C): only the operations finished before it are shown")
    return out


def _disagreement_text(r: SlopeRow) -> str:
    """The warning for a row marked DISAGREES: its worst miss, named in full."""
    check = r.self_check
    worst = check.worst if check is not None else None
    assert worst is not None
    again = ", also when the row was timed again" if check is not None and check.retimed else ""
    diff = worst.difference
    return (f"{r.op.algo} {r.op.label} {r.who.label}: its bulk line "
            f"({num(r.bulk_mib_per_s)} MiB/s) predicts {duration(worst.predicted_ns)} for a "
            f"{human_bytes(worst.size)} call, {selfcheck.SOURCE_TEXT[worst.source]} took "
            f"{duration(worst.timed_ns)}" + (f" ({diff:+.1%})" if math.isfinite(diff) else "")
            + f"{again}: its bulk figures are doubtful")


def _disagreements_text(rows: Sequence[SlopeRow]) -> str:
    """One warning for several rows marked DISAGREES: each named with its worst miss
    (a run on a busy machine can have many, and a page of warnings hides the rest)."""
    def name(r: SlopeRow) -> str:
        worst = r.self_check.worst if r.self_check is not None else None
        assert worst is not None
        diff = (f"{worst.difference:+.0%}" if math.isfinite(worst.difference) else "no time")
        return (f"{r.op.algo} {r.op.label} {r.who.label} ({diff} at "
                f"{human_bytes(worst.size)}, {selfcheck.SOURCE_TEXT[worst.source]})")
    return (f"{len(rows)} rows' bulk lines miss another timing of the same call by more "
            f"than {selfcheck.TOLERANCE:.0%}, also when timed again (their bulk figures are "
            f"doubtful; the run's --json has each timing): " + "; ".join(map(name, rows)))


#: The rows a note on budget-skipped sizes names before it counts the rest.
SKIPPED_NAMED = 4


def _skipped_text(skipped: Sequence[dict[str, Any]]) -> str:
    """The rows whose largest sizes the budget skipped, the first few by name."""
    def name(s: dict[str, Any]) -> str:
        who = f"{s['backend']} {s['layer']}" if s["impl"] == "aeskit" else s["impl"]
        mode = f"{s['mode']} {s['direction']}" if s["direction"] else s["mode"]
        return f"AES-{s['key_bits']} {mode} {who} (from {human(min(s['bytes']))})"
    rows = "1 row skipped sizes" if len(skipped) == 1 else f"{len(skipped)} rows skipped sizes"
    named = ", ".join(name(s) for s in skipped[:SKIPPED_NAMED])
    more = len(skipped) - SKIPPED_NAMED
    if more > 0:
        named += f" and {more} more (all in --json, meta.budget.skipped)"
    return (f"{rows} whose single call would overrun the time budget (--budget): "
            f"{named}")


def cores_note(cores: dict[str, Any], each: str, what: str) -> str | None:
    """What system.Cores did (its as_dict), for a view's notes; None if it did not run.
    each: what ran on the picked CPU ("group", "cell"); what: what the picks count."""
    if not cores.get("enabled"):
        return None
    picks, turned = sum(cores["picks"].values()), cores["turned"]
    return (f"each {each} ran on the CPU (of {', '.join(map(str, cores['candidates']))}) whose "
            f"AES units were least shared at the time; another one was over "
            f"{system.SHARED_BY:.0%} slower at AES before {cores['shared']} of {picks} {what}, "
            f"and {turned} {'was' if turned == 1 else 'were'} timed again when theirs became "
            "shared")

def closing_lines(run: Run, verbose: bool = False) -> list[Line]:
    """The summary, the marks' meaning, warnings and notes on the run."""
    out = summary_lines(run.slope)
    marks = _marks_used(run)
    notes: list[str] = []
    if any(r.floor for r in run.slope):
        notes.append("x floor = bulk c/B over the floor the backend's units allow here "
                     "(1.00x: as fast as the hardware)")
    if any(r.vs for r in run.slope):
        notes.append("bulk speed vs = aeskit's speed / the peer's (above 1: aeskit is "
                     "faster); 64 B = per call")
    notes += [f"{mark} {MARK_TEXT[mark]}" for mark in marks]
    missing = run.meta.get("peers_missing") or []
    if missing:
        notes.append(f"not installed, so not compared: {', '.join(missing)} "
                     f"({PEER_EXTRA})")
    if run.lengths and not run.findings:
        notes.append("anomaly check: no speed drop above 5% within a cache level (from 4 KiB)")
    budget = run.meta.get("budget") or {}
    if budget.get("skipped"):
        notes.append(_skipped_text(budget["skipped"]))
    cores = cores_note(run.meta.get("cores") or {}, "group", "groups")
    if cores is not None:
        notes.append(cores)
    check = run.meta.get("clock_check") or {}
    if check.get("text") and verbose:
        notes.append(str(check["text"]))
    if not verbose:
        notes.append("--verbose: the method, the units' probe and the floors")
    if notes:
        out.append([("", "")])
        for text in notes:
            out += _wrapped(text, indent="   ", first=" ")
    out += noise_lines(run)
    warned = warnings(run)
    if warned:
        out.append([("", "")])
        for text in warned:
            lines = textwrap.wrap(text, WIDTH - 1 - len("warning: "))
            out.append([("warning: ", "warn"), (lines[0], "")])
            out += [_plain(" " * len("warning: ") + more) for more in lines[1:]]
        if run.findings:
            out.append(_plain("  (a drop within one cache level means the code slows on "
                              "longer data; run again to rule out noise)"))
    return out


def _marks_used(run: Run) -> list[str]:
    used: set[str] = set()
    for r in run.slope:
        bulk, short = _row_marks(r)
        used.update(bulk)
        used.update(short)
        used.update(DIRECT for ratio in r.vs.values() if ratio.direct)
    used.update(UNDER_FLOOR for lr in run.lengths if lr.under_floor())
    return [m for m in (DIRECT, SHORT_POOR, UNDER_FLOOR, DISAGREES) if m in used]


def noise_lines(run: Run) -> list[Line]:
    """Say so when other programs competed for the CPU during the run."""
    noise = run.meta["noise"]
    if not noise["off_cpu_checked"] or not noise["timings"]:
        return []
    share = noise["disturbed"] / noise["timings"]
    if noise["retried"] == 0:
        return []
    text = (f"another program took the CPU during {noise['retried']} of "
            f"{noise['timings']} timings (load average {noise['loadavg_after']}); those were "
            f"redone")
    if noise["disturbed"]:
        text += (f", {share:.1%} stayed disturbed (mostly long calls): numbers from a busy "
                 f"machine read slow")
    lines = textwrap.wrap(text, WIDTH - 1 - len(" note: "))
    return [[(" note: ", "warn"), (lines[0], "")]] + [_plain("       " + x) for x in lines[1:]]


def render_plain(lines: Sequence[Line]) -> str:
    return "".join("".join(text for text, _ in line).rstrip() + "\n" for line in lines)


def print_lines(lines: Sequence[Line], color: bool) -> None:
    """Plain print, or through rich (optional extra ``cli``) when color is wanted."""
    if color:
        try:
            from importlib import import_module

            rich_console: Any = import_module("rich.console")
            rich_text: Any = import_module("rich.text")
        except ImportError:
            color = False
    if not color:
        print(render_plain(lines), end="")
        return
    styles = {"title": "bold", "dim": "dim", "good": "green", "bad": "red", "warn": "bold yellow"}
    console = rich_console.Console(highlight=False, soft_wrap=True)
    for line in lines:
        text = rich_text.Text()
        for part, style in line:
            text.append(part, style=styles.get(style, ""))
        text.rstrip()
        console.print(text)


# ---------------------------------------------------------------- machines


def _ident(op: Operation, who: Who) -> dict[str, Any]:
    return {"algo": op.algo, "key_bits": op.key_bits, "mode": op.mode,
            "direction": op.direction, "impl": who.impl, "backend": who.backend,
            "layer": who.layer, "in_place": who.in_place}


def _comparisons_json(found: Sequence[selfcheck.Comparison]) -> list[dict[str, Any]]:
    return [{"source": c.source, "bytes": c.size, "predicted_ns": c.predicted_ns,
             "timed_ns": c.timed_ns, "difference": finite(c.difference)} for c in found]


def _self_check_json(r: SlopeRow) -> dict[str, Any] | None:
    """The bulk line against the run's timings of the same call (null: not checked)."""
    check = r.self_check
    if check is None:
        return None
    worst = check.worst
    return {"disagrees": check.disagrees,
            "difference": None if worst is None else finite(worst.difference),
            "retimed": check.retimed,
            "comparisons": _comparisons_json(check.comparisons),
            "before_retime": (None if check.before is None
                              else _comparisons_json(check.before))}


def to_json(run: Run) -> dict[str, Any]:
    """Everything, with nulls where a value is unknown or not finite.

    ``direction`` is "enc", "dec", or null for a one-way row (GHASH).
    """
    slope = []
    for r in run.slope:
        bulk = r.bulk
        slope.append({
            **_ident(r.op, r.who),
            "ns_per_byte": finite(r.ns_per_byte),
            "mib_per_s": finite(r.mib_per_s),
            "cycles_per_byte": finite(r.cycles_per_byte),
            "ns_per_call": finite(r.fit.intercept),
            "r2": r.fit.r2,
            "short_problem": r.short_problem,
            "bulk": {
                "ns_per_byte": finite(r.bulk_ns_per_byte),
                "mib_per_s": finite(r.bulk_mib_per_s),
                "cycles_per_byte": finite(r.bulk_cycles_per_byte),
                "from_direct_16k": r.bulk_direct,
                "fit": None if bulk is None else {
                    "slope": finite(bulk.slope), "intercept": finite(bulk.intercept),
                    "r2": bulk.r2, "n": bulk.n},
                "problem": r.bulk_problem,
            },
            "direct_ns_per_call": {str(n): ns for n, ns in sorted(r.direct.items())},
            "mhz": finite(r.clock.mhz),
            "mhz_diff": finite(r.clock.diff),
            "clock_attempts": r.attempts,
            "vs": {p: {"ratio": v.value, "basis": v.basis} for p, v in r.vs.items()},
            "vs_at_64_bytes": dict(r.vs_small),
            "floor_cycles_per_byte": r.floor,
            "floor_basis": r.floor_basis,
            "floor_kind": (floor.kind_of(r.op.mode, r.op.encrypt) if r.floor else None),
            "over_floor": finite(r.over_floor),
            "below_floor": r.below_floor,
            "self_check": _self_check_json(r),
            "points": [{"bytes": n, "ns_per_call": ns} for n, ns in r.points],
        })
    lengths = []
    for lr in run.lengths:
        lengths.append({
            **_ident(lr.op, lr.who),
            "mhz": finite(lr.clock.mhz),
            "floor_cycles_per_byte": lr.floor,
            "under_floor_bytes": lr.under_floor(),
            "skipped_bytes": list(lr.skipped),
            "points": [{"bytes": n, "ns_per_call": ns, "mib_per_s": finite(mib_per_s(ns / n)),
                        "cycles_per_byte": finite(cycles_per_byte(ns / n, lr.clock.mhz))}
                       for n, ns in lr.points],
        })
    anomalies = [{**_ident(f.row.op, f.row.who), "level": f.anomaly.level,
                  "from_bytes": f.anomaly.from_size, "to_bytes": f.anomaly.to_size,
                  "from_mib_per_s": f.anomaly.from_speed, "to_mib_per_s": f.anomaly.to_speed,
                  "drop": f.anomaly.drop} for f in run.findings]
    sectors = [{**_ident(lr.op, lr.who), "sector_bytes": lr.op.sector_size,
                "mhz": finite(lr.clock.mhz),
                "points": [{"sectors": n // lr.op.sector_size, "bytes": n, "ns_per_call": ns,
                            "mib_per_s": finite(mib_per_s(ns / n))} for n, ns in lr.points],
                "skipped_bytes": list(lr.skipped)}
               for lr in run.sectors]
    return {"schema": SCHEMA, "meta": run.meta, "slope": slope, "by_length": lengths,
            "sectors": sectors,
            "anomalies": anomalies, "warnings": warnings(run)}


def json_text(run: Run) -> str:
    return json.dumps(to_json(run), indent=2, allow_nan=False) + "\n"


def _csv_algo(op: Operation) -> str:
    """libgcrypt's names: AES, AES192, AES256."""
    return "AES" if op.key_bits == 128 else f"AES{op.key_bits}"


CSV_HEADER = ["section", "algo", "mode", "length", "length_unit", "ns_per_byte", "unit",
              "mib_per_s", "unit", "cycles_per_byte", "unit", "mhz", "unit", "mhz_diff",
              "unit", "ns_per_call", "unit", "self_check", "self_check_difference"]


def csv_text(run: Run) -> str:
    """A header row, then bench-slope's --csv rows and aeskit's extra pairs.

    Fields 1-13 are bench-slope's: section, algo, mode, two spare fields,
    ns,ns/B, MiB,MiB/s, c,c/B, MHz,Mhz. aeskit names the implementation in
    the section field and appends MHz-diff and the intercept (ns/call).
    The short line's rows leave the spare fields empty; the bulk line's say
    ``bulk,16K-64K`` (ns/call is its intercept; a poor line's row gives the
    direct 16 KiB timing's ns/B with ``bulk-direct,16K``); by-length rows put
    the length there (n,B) and report that length's own ns/B, so every
    value keeps its column. The bulk line's rows end with its self-check
    (selfcheck.py): ``agrees`` or ``disagrees`` (the cells marked ?) and the
    largest difference found, timed / predicted - 1; other rows leave both empty.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)

    def row(who: Who, op: Operation, field4: str, field5: str, ns_b: float | None,
            mhz: float | None, diff: float | None, ns_call: float,
            check: selfcheck.SelfCheck | None = None) -> None:
        cpb = cycles_per_byte(ns_b, mhz) if ns_b is not None else None
        worst = check.worst if check is not None else None
        w.writerow([who.section, _csv_algo(op), op.label, field4, field5,
                    num(ns_b), "ns/B", num(mib_per_s(ns_b) if ns_b else None), "MiB/s",
                    "" if cpb is None else num(cpb), "c/B",
                    "" if mhz is None else f"{mhz:.0f}", "Mhz",
                    "" if diff is None or mhz is None else f"{diff * mhz:.0f}", "Mhz-diff",
                    num(ns_call), "ns/call",
                    "" if check is None else "disagrees" if check.disagrees else "agrees",
                    "" if worst is None else f"{worst.difference:.4f}"])

    for r in run.slope:
        row(r.who, r.op, "", "", r.ns_per_byte, r.clock.mhz, r.clock.diff, r.fit.intercept)
    bulk_range = f"{human(BULK_SIZES[0])}-{human(BULK_SIZES[-1])}"
    for r in run.slope:
        if r.bulk_direct:
            row(r.who, r.op, "bulk-direct", human(LARGE), r.bulk_ns_per_byte, r.clock.mhz,
                r.clock.diff, r.direct.get(LARGE, math.nan))
        elif r.bulk is not None:
            row(r.who, r.op, "bulk", bulk_range, r.bulk.slope, r.clock.mhz, r.clock.diff,
                r.bulk.intercept, r.self_check)
    for lr in [*run.lengths, *run.sectors]:
        for n, ns in lr.points:
            row(lr.who, lr.op, str(n), "B", ns / n, lr.clock.mhz, lr.clock.diff, ns)
    return buf.getvalue()
