"""The views of a run: slope and by-length tables (text), JSON and CSV.

Text is built as lines of (text, style) segments so the same tables print
plain everywhere and in colour through ``rich`` when it is installed and
stdout is a terminal; the styles never carry information the text lacks.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .results import Finding, LengthRow, Run, SlopeRow, Who, finite
from .sizes import human
from .stats import cycles_per_byte, mib_per_s, num
from .targets import Operation

Segment = tuple[str, str]  # (text, style); style "" for none
Line = list[Segment]

SCHEMA = "aeskit-bench/1"


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


def header_lines(run: Run) -> list[Line]:
    m = run.meta
    cpu = m["cpu"]
    clock = m["clock"]
    s = m["settings"]
    if clock["source"] == "user":
        clock_text = f"{clock['mhz']:.0f} MHz (--cpu-mhz)"
    elif clock["source"] == "auto":
        clock_text = "auto MHz per row (dependent add chain, sampled before and after)"
    else:
        clock_text = "unknown on this CPU: pass --cpu-mhz for cycles/byte"
    slope = s["slope_sizes"]
    step = slope[1] - slope[0] if len(slope) > 1 else 0
    lines = [
        [(f"aeskit {m['versions']['aeskit']} bench", "title"),
         (f": {cpu['model']}, {m['versions']['python']}, default backend "
          f"{m['backends']['default']}", "")],
        _plain(f"clock: {clock_text}"),
        _plain(f"method: {len(slope)} sizes {slope[0]}..{slope[-1]} B step {step}, median of "
               f"{s['repetitions']}, each timing >= {s['min_time_ns'] / 1000:.0f} us; "
               f"slope = ns/B, intercept = ns/call"
               + (f"; buffers 64-byte aligned + {s['unaligned']}" if s["unaligned"] else "")),
        _plain("layers: kernel = C loop, GIL released; api = encrypt_into on a reused buffer;"
               " peers: reused context, update_into / output="),
    ]
    if any(row.op.aead for row in run.slope):
        lines.append(_plain("AEADs (GCM, OCB = OCB3): one call = one message, 12-byte nonce + "
                            "data, no associated data, 16-byte tag; api = encrypt_into in place"
                            " / decrypt_into from a kept ciphertext; peers: one-shot "
                            "encrypt_into, pycryptodome AES.new per message"))
    ghash = [row for row in run.slope if row.op.mode == "GHASH"]
    if ghash:
        lines.append(_plain(
            f"GHASH: one direction, whole blocks, H from an AES-{ghash[0].op.key_bits} key and "
            f"run under that key size only (GHASH does not depend on it); kernel = the "
            f"backend's ghash slot alone; api and peers = GMAC: AES-GCM encrypt_into with no "
            f"data and the bytes as associated data, tag to a reused buffer (pycryptodome: "
            f"AES.new + update + digest per message)"))
    lines += _floor_lines(run)
    if any(row.vs for row in run.slope):
        lines.append(_plain("vs PEER: aeskit speed / peer speed, from the slopes "
                            "(above 1: aeskit is faster)"))
    return lines


def _cycles(probe: dict[str, Any], key: str) -> str:
    value = probe.get(key)
    return "-" if value is None else f"{value:.2f}"


def _floor_lines(run: Run) -> list[Line]:
    """What the units measured, and which floor each backend's rows use (floor.py)."""
    probe = run.meta.get("aes_probe")
    if not probe:
        return []
    lines = [_plain(
        f"units here (core cycles): AESENC latency {probe['aesenc_latency_cycles']:.2f}; "
        f"per instruction over independent blocks: AES xmm "
        f"{_cycles(probe, 'aesenc_cycles_per_instruction')}, ymm "
        f"{_cycles(probe, 'vaes_ymm_cycles_per_instruction')}, zmm "
        f"{_cycles(probe, 'vaes_zmm_cycles_per_instruction')}; carry-less multiply xmm "
        f"{_cycles(probe, 'clmul_xmm_cycles_per_instruction')}, ymm "
        f"{_cycles(probe, 'clmul_ymm_cycles_per_instruction')}, zmm "
        f"{_cycles(probe, 'clmul_zmm_cycles_per_instruction')}; 80 AES rounds with 24 "
        f"multiplies interleaved xmm {_cycles(probe, 'gcm_mix_xmm_cycles')}, ymm "
        f"{_cycles(probe, 'gcm_mix_ymm_cycles')}, zmm {_cycles(probe, 'gcm_mix_zmm_cycles')}")]
    widths = run.meta.get("floor_widths") or {}
    shown = [name for name in widths
             if any(r.floor and r.who.backend == name and not r.who.is_peer for r in run.slope)]
    if not shown:
        return lines
    modes = {r.op.mode for r in run.slope}
    text = ("floor c/B by the backend's width: "
            + ", ".join(f"{name} {widths[name]['width']} "
                        f"({widths[name]['blocks_per_instruction']} per instruction)"
                        for name in shown)
            + "; parallel modes: rounds x AES cycles / blocks / 16; serial ones (CBC/CFB "
              "enc, OFB): rounds x latency / 16 on every width (CFB8: per byte)")
    if "GHASH" in modes:
        text += "; GHASH: 3 (Karatsuba) x multiply cycles / blocks / 16"
    if "GCM" in modes:
        text += ("; GCM: (rounds x AES cycles + 3 x the AES cycles a multiply takes, from "
                 "the measured mix of 80 rounds and 24 multiplies; or 3 x multiply cycles if "
                 "more) / blocks / 16")
    lines.append(_plain(text + "; x floor = measured / floor"))
    return lines


def slope_lines(rows: Sequence[SlopeRow]) -> list[Line]:
    """bench-slope's table: per key size and implementation, one row per mode and direction."""
    out: list[Line] = []
    peers = sorted({p for row in rows for p in row.vs})
    for bits in sorted({row.op.key_bits for row in rows}):
        for who in _whos_in_order(row.who for row in rows if row.op.key_bits == bits):
            block = [r for r in rows if r.op.key_bits == bits and r.who == who]
            title = f"AES-{bits} {'aeskit ' if not who.is_peer else ''}{who.label}"
            if who.is_peer:
                title += f" ({who.backend})" if who.backend != who.impl else ""
            show_vs = [p for p in peers if any(p in r.vs for r in block)]
            show_floor = any(r.floor for r in block)
            head = (f" {'':<9}| {'nanosecs/byte':>14} {'mebibytes/sec':>15} {'cycles/byte':>13}"
                    f" {'auto MHz':>9} | {'ns/call':>9}")
            if show_floor:
                head += f" | {'floor c/B':>9} {'x floor':>7}"
            if show_vs:
                head += " |" + "".join(f" {'vs ' + p:>16}" for p in show_vs)
            out.append([("", "")])
            out.append([(f" {title}", "title")])
            out.append([(head, "dim")])
            for r in block:
                mhz = r.clock.mhz
                diff = ""
                if r.clock.source == "auto" and r.clock.diff is not None and mhz:
                    spread = r.clock.diff * mhz
                    diff = f"{_plus_minus()}{spread:.0f}" if spread >= 0.5 else ""
                line: Line = [(
                    f" {r.op.label:>8} | {num(r.ns_per_byte):>9} ns/B {num(r.mib_per_s):>9} MiB/s"
                    f" {num(r.cycles_per_byte):>9} c/B {num(mhz) if mhz else '-':>9}{diff:<4}"
                    f"| {duration(r.fit.intercept) if r.fit.intercept > 0 else '~0':>9}", "")]
                if show_floor:
                    over = r.over_floor
                    line.append((f" | {num(r.floor) if r.floor else '-':>9}"
                                 f" {f'{over:.2f}x' if over is not None else '-':>7}", ""))
                if show_vs:
                    line.append((" |", ""))
                    for p in show_vs:
                        ratio = r.vs.get(p)
                        text = f"{ratio:.2f}x" if ratio is not None else "-"
                        style = "" if ratio is None else ("good" if ratio >= 1.0 else "bad")
                        line.append((f" {text:>16}", style))
                out.append(line)
            out.append(_plain(f" {'':<8} ="))
    return out


def length_lines(rows: Sequence[LengthRow]) -> list[Line]:
    """Per operation: MiB/s and time per call at each data length, one column pair per target."""
    out: list[Line] = []
    for op in _ops_in_order(r.op for r in rows):
        block = [r for r in rows if r.op == op]
        sizes = sorted({n for r in block for n, _ in r.points})
        cell = 20
        out.append([("", "")])
        out.append([(f" {op.algo} {op.label}: speed by data length", "title")])
        out.append([(f" {'length':>8} |" + "".join(f" {r.who.label[:cell]:>{cell}}" for r in block),
                     "dim")])
        out.append([(f" {'':>8} |" + "".join(f" {'MiB/s':>9} {'per call':>10}" for _ in block),
                     "dim")])
        for n in sizes:
            text = f" {human(n):>8} |"
            for r in block:
                ns = dict(r.points).get(n)
                if ns is None:
                    text += f" {'-':>9} {'-':>10}"
                else:
                    text += f" {num(mib_per_s(ns / n)):>9} {duration(ns):>10}"
            out.append(_plain(text))
    return out


def noise_lines(run: Run) -> list[Line]:
    """Say so when other programs competed for the CPU during the run."""
    noise = run.meta["noise"]
    if not noise["off_cpu_checked"] or not noise["timings"]:
        return []
    share = noise["disturbed"] / noise["timings"]
    if noise["retried"] == 0:
        return []
    text = (f"note: another program took the CPU during {noise['retried']} of "
            f"{noise['timings']} timings (load average {noise['loadavg_after']}); those were "
            f"redone")
    if noise["disturbed"]:
        text += (f", {share:.1%} stayed disturbed (mostly long calls): numbers from a busy "
                 f"machine read slow")
    return [[("", "")], [("note: ", "warn"), (text[len("note: "):], "")]]


def finding_lines(findings: Sequence[Finding], checked: bool) -> list[Line]:
    if not checked:
        return []
    if not findings:
        return [[("", "")], _plain("anomaly check: no speed drop above 5% within a cache level "
                                   "(lengths from 4 KiB)")]
    out: list[Line] = [[("", "")]]
    for f in findings:
        out.append([("warning: ", "warn"), (f.message(), "")])
    out.append(_plain("  (a drop within one cache level means the code slows on longer data; "
                      "run again to rule out noise)"))
    return out


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


def to_json(run: Run) -> dict[str, Any]:
    """Everything, with nulls where a value is unknown or not finite.

    ``direction`` is "enc", "dec", or null for a one-way row (GHASH).
    """
    slope = []
    for r in run.slope:
        slope.append({
            **_ident(r.op, r.who),
            "ns_per_byte": r.ns_per_byte,
            "mib_per_s": finite(r.mib_per_s),
            "cycles_per_byte": finite(r.cycles_per_byte),
            "ns_per_call": r.fit.intercept,
            "r2": r.fit.r2,
            "mhz": finite(r.clock.mhz),
            "mhz_diff": finite(r.clock.diff),
            "clock_attempts": r.attempts,
            "vs": dict(r.vs),
            "floor_cycles_per_byte": r.floor,
            "floor_basis": r.floor_basis,
            "over_floor": finite(r.over_floor),
            "points": [{"bytes": n, "ns_per_call": ns} for n, ns in r.points],
        })
    lengths = []
    for lr in run.lengths:
        lengths.append({
            **_ident(lr.op, lr.who),
            "mhz": finite(lr.clock.mhz),
            "points": [{"bytes": n, "ns_per_call": ns, "mib_per_s": finite(mib_per_s(ns / n)),
                        "cycles_per_byte": finite(cycles_per_byte(ns / n, lr.clock.mhz))}
                       for n, ns in lr.points],
        })
    anomalies = [{**_ident(f.row.op, f.row.who), "level": f.anomaly.level,
                  "from_bytes": f.anomaly.from_size, "to_bytes": f.anomaly.to_size,
                  "from_mib_per_s": f.anomaly.from_speed, "to_mib_per_s": f.anomaly.to_speed,
                  "drop": f.anomaly.drop} for f in run.findings]
    return {"schema": SCHEMA, "meta": run.meta, "slope": slope, "by_length": lengths,
            "anomalies": anomalies}


def json_text(run: Run) -> str:
    return json.dumps(to_json(run), indent=2, allow_nan=False) + "\n"


def _csv_algo(op: Operation) -> str:
    """libgcrypt's names: AES, AES192, AES256."""
    return "AES" if op.key_bits == 128 else f"AES{op.key_bits}"


def csv_text(run: Run) -> str:
    """bench-slope's --csv rows, then aeskit's extra pairs.

    Fields 1-13 are bench-slope's: section, algo, mode, two spare fields,
    ns,ns/B, MiB,MiB/s, c,c/B, MHz,Mhz. aeskit names the implementation in
    the section field and appends MHz-diff and the intercept (ns/call).
    By-length rows use the two spare fields for the length (n,B) and report
    that length's own ns/B, so every value keeps its column.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")

    def row(who: Who, op: Operation, length: int | None, ns_b: float, mhz: float | None,
            diff: float | None, ns_call: float) -> None:
        cpb = cycles_per_byte(ns_b, mhz)
        w.writerow([who.section, _csv_algo(op), op.label,
                    "" if length is None else length, "" if length is None else "B",
                    num(ns_b), "ns/B", num(mib_per_s(ns_b)), "MiB/s",
                    "" if cpb is None else num(cpb), "c/B",
                    "" if mhz is None else f"{mhz:.0f}", "Mhz",
                    "" if diff is None or mhz is None else f"{diff * mhz:.0f}", "Mhz-diff",
                    num(ns_call), "ns/call"])

    for r in run.slope:
        row(r.who, r.op, None, r.ns_per_byte, r.clock.mhz, r.clock.diff, r.fit.intercept)
    for lr in run.lengths:
        for n, ns in lr.points:
            row(lr.who, lr.op, n, ns / n, lr.clock.mhz, lr.clock.diff, ns)
    return buf.getvalue()
