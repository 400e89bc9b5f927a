"""Speed by data length, drawn: in the terminal (built in) and as PNG/SVG.

A table of nine lengths hides the shape that matters: where a curve bends,
flattens or falls. Like the seeds' gnuplot plots, x is the data length on a
log scale and y is MiB/s, one line per backend or peer. The terminal plot
needs nothing; the file plot needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from typing import Any

from .results import LengthRow
from .sizes import human

MARKERS = "o+x#@%&="
FILE_MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*")
FILE_FORMATS = (".png", ".svg", ".pdf")

Curve = tuple[str, Sequence[tuple[int, float]]]  # label, (bytes, MiB/s) points


def _y_step(top: float) -> float:
    """A round tick step giving about five ticks up to top."""
    raw = top / 5
    mag = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * mag:
            return mult * mag
    return 10 * mag


def text_plot(title: str, curves: Sequence[Curve], width: int = 64, height: int = 16) -> list[str]:
    """An ASCII plot: MiB/s up, log2 of the length across, a marker per curve.

    Points are drawn with the curve's marker and joined by the same marker
    (straight in log-x). Where curves meet, the one listed first is on top:
    aeskit's kernel, then its API, then the peers.
    """
    pts = [(n, s) for _, c in curves for n, s in c if n > 0 and math.isfinite(s) and s >= 0]
    if not pts:
        return [title, "  (no data)"]
    xs = [math.log2(n) for n, _ in pts]
    x_lo, x_hi = min(xs), max(xs)
    step = _y_step(max(s for _, s in pts) or 1.0)
    y_hi = step * math.ceil(max(s for _, s in pts) / step) or step

    def col(n: int) -> int:
        if x_hi == x_lo:
            return 0
        return round((math.log2(n) - x_lo) / (x_hi - x_lo) * (width - 1))

    def row(s: float) -> int:
        return height - 1 - round(min(s, y_hi) / y_hi * (height - 1))

    grid = [[" "] * width for _ in range(height)]
    for idx, (_, curve) in reversed(list(enumerate(curves))):
        mark = MARKERS[idx % len(MARKERS)]
        good = sorted((n, s) for n, s in curve if n > 0 and math.isfinite(s) and s >= 0)
        for (n0, s0), (n1, s1) in zip(good, good[1:]):
            c0, c1 = col(n0), col(n1)
            for c in range(c0, c1 + 1):
                t = (c - c0) / (c1 - c0) if c1 != c0 else 0.0
                grid[row(s0 + t * (s1 - s0))][c] = mark
        for n, s in good:
            grid[row(s)][col(n)] = mark

    label_w = max(len(f"{y_hi:g}"), 5)
    lines = [title, f"{'MiB/s':>{label_w}}"]
    ticks = {row(k * step): f"{k * step:g}" for k in range(round(y_hi / step) + 1)}
    for r in range(height):
        lines.append(f"{ticks.get(r, ''):>{label_w}} |" + "".join(grid[r]).rstrip())
    lines.append(" " * label_w + " +" + "-" * width)
    axis = [" "] * (width + 8)
    last_end = -1
    for n in sorted({n for n, _ in pts}):
        text = human(n)
        start = max(0, col(n) - len(text) // 2)
        if start <= last_end:
            continue  # would overlap the previous label
        axis[start:start + len(text)] = list(text)
        last_end = start + len(text)
    lines.append(" " * (label_w + 2) + "".join(axis).rstrip())
    lines.append(" " * (label_w + 2) + "data length in bytes (log scale)")
    lines.append(" " * (label_w + 2) + "   ".join(f"{MARKERS[i % len(MARKERS)]} {label}"
                                                 for i, (label, _) in enumerate(curves)))
    return lines


def curves_for(rows: Sequence[LengthRow]) -> list[tuple[str, list[Curve]]]:
    """(title, curves) per operation, in run order."""
    out: dict[str, list[Curve]] = {}
    for r in rows:
        out.setdefault(f"{r.op.algo} {r.op.label}", []).append((r.who.label, r.speeds()))
    return list(out.items())


def text_plots(rows: Sequence[LengthRow]) -> list[str]:
    lines: list[str] = []
    for title, curves in curves_for(rows):
        lines.append("")
        lines.extend(text_plot(f" {title}: speed by data length", curves))
    return lines


def check_file_plot(path: str) -> str | None:
    """Why ``--plot path`` cannot work, before the run starts; None if it can."""
    if not path.lower().endswith(FILE_FORMATS):
        return f"--plot: {path!r} must end in one of {', '.join(FILE_FORMATS)}"
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        return "--plot needs matplotlib: pip install 'aeskit[plot]'"
    return None


def file_plot(rows: Sequence[LengthRow], path: str, title: str) -> None:
    """One panel per operation, one line per backend or peer, saved as PNG/SVG/PDF."""
    mpl: Any = importlib.import_module("matplotlib")
    mpl.use("Agg")  # no display needed
    plt: Any = importlib.import_module("matplotlib.pyplot")
    groups = curves_for(rows)
    ncols = 2 if len(groups) > 1 else 1
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (name, curves) in zip([a for row in axes for a in row], groups):
        for idx, (label, pts) in enumerate(curves):
            good = sorted((n, s) for n, s in pts if math.isfinite(s))
            ax.plot([n for n, _ in good], [s for _, s in good],
                    marker=FILE_MARKERS[idx % len(FILE_MARKERS)], markersize=4, label=label)
        sizes = sorted({n for _, pts in curves for n, _ in pts})
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([human(n) for n in sizes], fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("data length (bytes)", fontsize=8)
        ax.set_ylabel("MiB/s", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in [a for row in axes for a in row][len(groups):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
