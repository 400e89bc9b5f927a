"""Speed by data length, drawn: in the terminal (built in) and as PNG/SVG/PDF.

A table of nine lengths hides the shape that matters: where a curve bends,
flattens or falls. Like the seeds' gnuplot plots, x is the data length on a
log scale and y is MiB/s, one line per backend or peer. The terminal plot
needs nothing; the file plot needs matplotlib (the ``plot`` extra).

Every series in a plot is told apart by its own marker (terminal) or its
own colour and marker pair (file): ``--backend all`` draws ten curves, and a
marker that means two of them makes the plot lie. ``log_y`` puts MiB/s on
a log scale, so that ``portable`` and the slow peers, a hundredth of the
fastest backend, show their shape instead of lying flat on zero.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .results import LengthRow
from .sizes import human

#: One per curve, in curve order; all distinct, punctuation first, then letters.
MARKERS = "o+x*#@%&$=~^?<>ABCDEFGHKMNPRSUVWXYZ"
#: Shared by the curves past len(MARKERS), and the legend says so.
OVERFLOW_MARKER = "."
#: The terminal plot's widest line, axis labels and legend included.
MAX_COLUMNS = 100
#: File plot: colour and marker both cycle, with coprime periods (10 and 11),
#: so the first 110 series of a figure each get their own pair.
FILE_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
               "tab:pink", "tab:gray", "tab:olive", "tab:cyan")
FILE_MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*", "P", "X", "<")
FILE_FORMATS = (".png", ".svg", ".pdf")
#: Legend entries side by side per column of panels: three "vaes_avx512 kernel" fit 6.4 in.
LEGEND_COLUMNS = 3
#: 2 and 5 ticks between the powers of ten need this many text rows per decade.
ROWS_FOR_2_5 = 6.0
#: The rows of tick labels a file plot's panel has room for (8-point labels).
FILE_PANEL_ROWS = 18

Curve = tuple[str, Sequence[tuple[int, float]]]  # label, (bytes, MiB/s) points


def drawable(speed: float, log_y: bool) -> bool:
    """Whether a speed has a place on the y axis: a log axis has none for zero."""
    return math.isfinite(speed) and (speed > 0 if log_y else speed >= 0)


@dataclass(frozen=True)
class YAxis:
    """The MiB/s axis: its range, linear or log, and the values that get a label."""

    lo: float
    hi: float
    log: bool
    ticks: tuple[float, ...]

    def shows(self, speed: float) -> bool:
        return drawable(speed, self.log)

    def fraction(self, speed: float) -> float:
        """Where speed sits from the bottom (0) to the top (1), clamped."""
        if self.log:
            lo, hi, at = math.log10(self.lo), math.log10(self.hi), math.log10(speed)
        else:
            lo, hi, at = self.lo, self.hi, speed
        return min(max((at - lo) / (hi - lo), 0.0), 1.0)


def _y_step(top: float) -> float:
    """A round tick step giving about five ticks up to top."""
    raw = top / 5
    mag = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * mag:
            return mult * mag
    return 10 * mag


def linear_axis(top: float) -> YAxis:
    """0 to top rounded up to a round step, a tick at every step."""
    step = _y_step(top if top > 0 else 1.0)
    hi = step * math.ceil(top / step) or step
    return YAxis(0.0, hi, False, tuple(k * step for k in range(round(hi / step) + 1)))


def _is_power_of_ten(value: float) -> bool:
    return value > 0 and math.isclose(math.log10(value), round(math.log10(value)))


def _one_two_five(lo: float, hi: float) -> list[float]:
    """The values 1, 2 and 5 times a power of ten from lo to hi (with a rounding margin)."""
    out = []
    for exp in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for mult in (1, 2, 5):
            value = mult * 10.0 ** exp
            if lo * (1 - 1e-9) <= value <= hi * (1 + 1e-9):
                out.append(value)
    return out


def log_bounds(lo: float, hi: float) -> tuple[float, float]:
    """lo rounded down and hi rounded up to 1, 2 or 5 times a power of ten.

    Finer than whole decades, so the curves use the height, and each end of
    the axis is a round value that gets a label.
    """
    bottom = _one_two_five(lo / 10, lo)[-1]  # a decade always holds one
    top = _one_two_five(hi, hi * 10)[0]
    if top <= bottom:  # one value: widen to the next step each way
        bottom = [v for v in _one_two_five(bottom / 10, bottom) if v < bottom][-1]
        top = next(v for v in _one_two_five(top, top * 10) if v > top)
    return bottom, top


def log_ticks(lo: float, hi: float, rows: float) -> list[float]:
    """The labelled values of a log axis from lo to hi that is rows text rows high.

    Every power of ten, and 2 and 5 between them when a decade has
    ROWS_FOR_2_5 rows or more. When fewer than two powers of ten fall in the
    range, lo and hi are labelled too (log_bounds makes them 1-2-5 values),
    so the axis always has two labels to read a scale from.
    """
    values = _one_two_five(lo, hi)
    powers = [v for v in values if _is_power_of_ten(v)]
    if rows / math.log10(hi / lo) >= ROWS_FOR_2_5:
        return values
    if len(powers) >= 2:
        return powers
    return sorted({lo, *powers, hi})


def log_axis(lo: float, hi: float, rows: float) -> YAxis:
    """A log axis over the speeds lo to hi (both > 0), labelled for its height."""
    bottom, top = log_bounds(lo, hi)
    return YAxis(bottom, top, True, tuple(log_ticks(bottom, top, rows)))


def _axis_for(speeds: Sequence[float], log_y: bool, rows: float) -> YAxis | None:
    """The y axis that fits these speeds; None when none of them can be drawn."""
    good = [s for s in speeds if drawable(s, log_y)]
    if not good:
        return None
    return log_axis(min(good), max(good), rows) if log_y else linear_axis(max(good))


def _tick_text(value: float) -> str:
    return f"{value:g}"


def markers_for(count: int) -> list[str]:
    """One marker per curve; the curves past MARKERS share OVERFLOW_MARKER."""
    return [MARKERS[i] if i < len(MARKERS) else OVERFLOW_MARKER for i in range(count)]


def _legend(marks: Sequence[str], labels: Sequence[str], indent: int) -> list[str]:
    """The legend in as many columns as fit MAX_COLUMNS, in curve order along the rows.

    Curves that had to share OVERFLOW_MARKER are named on a line of their own,
    so nobody takes that marker for one series.
    """
    entries = [f"{m} {label}" for m, label in zip(marks, labels) if m != OVERFLOW_MARKER]
    shared = [label for m, label in zip(marks, labels) if m == OVERFLOW_MARKER]
    lines = []
    if entries:
        cell = max(len(e) for e in entries) + 3
        per_line = max(1, (MAX_COLUMNS - indent) // cell)
        for i in range(0, len(entries), per_line):
            row = entries[i:i + per_line]
            lines.append(" " * indent + "".join(e.ljust(cell) for e in row).rstrip())
    if shared:
        head = (f"{OVERFLOW_MARKER} {len(shared)} curves share this marker (more curves than "
                f"the {len(MARKERS)} markers):")
        lines += _wrap_items(head, shared, indent)
    return lines


def _wrap_items(head: str, items: Sequence[str], indent: int) -> list[str]:
    """head and the items, comma-separated, in lines of MAX_COLUMNS; no item is split."""
    lines = [" " * indent + head]
    for i, item in enumerate(items):
        text = item + ("," if i < len(items) - 1 else "")
        if len(lines[-1]) + 1 + len(text) > MAX_COLUMNS:
            lines.append(" " * (indent + 2) + text)
        else:
            lines[-1] += " " + text
    return lines


def _x_axis_text(lengths: Sequence[int], col: Callable[[int], int], width: int) -> str:
    """The length labels under their columns, skipping one that would overlap."""
    axis = [" "] * (width + 8)
    last_end = -1
    for n in sorted(set(lengths)):
        text = human(n)
        start = max(0, col(n) - len(text) // 2)
        if start <= last_end:
            continue
        axis[start:start + len(text)] = list(text)
        last_end = start + len(text)
    return "".join(axis).rstrip()


def text_plot(title: str, curves: Sequence[Curve], width: int = 64, height: int = 16, *,
              log_y: bool = False) -> list[str]:
    """An ASCII plot: MiB/s up (linear or log), log2 of the length across, a marker per curve.

    Points are drawn with the curve's marker and joined by the same marker
    (straight in the plot's own scale). Where curves meet, the one listed
    first is on top: aeskit's kernel, then its API, then the peers.
    """
    pts = [(n, s) for _, c in curves for n, s in c if n > 0]
    yaxis = _axis_for([s for _, s in pts], log_y, height - 1)
    if yaxis is None:
        return [title, "  (no data)"]
    lengths = [n for n, s in pts if yaxis.shows(s)]
    x_lo, x_hi = math.log2(min(lengths)), math.log2(max(lengths))

    def col(n: int) -> int:
        if x_hi == x_lo:
            return 0
        return round((math.log2(n) - x_lo) / (x_hi - x_lo) * (width - 1))

    def row_at(frac: float) -> int:
        return height - 1 - round(frac * (height - 1))

    marks = markers_for(len(curves))
    grid = [[" "] * width for _ in range(height)]
    for mark, (_, curve) in reversed(list(zip(marks, curves))):
        good = sorted((n, yaxis.fraction(s)) for n, s in curve if n > 0 and yaxis.shows(s))
        for (n0, f0), (n1, f1) in itertools.pairwise(good):
            c0, c1 = col(n0), col(n1)
            for c in range(c0, c1 + 1):
                t = (c - c0) / (c1 - c0) if c1 != c0 else 0.0
                grid[row_at(f0 + t * (f1 - f0))][c] = mark
        for n, f in good:
            grid[row_at(f)][col(n)] = mark

    ticks: dict[int, str] = {}
    for value in sorted(yaxis.ticks, key=lambda v: not _is_power_of_ten(v)):
        ticks.setdefault(row_at(yaxis.fraction(value)), _tick_text(value))
    label_w = max([5, *(len(t) for t in ticks.values())])
    indent = label_w + 2
    lines = [title, f"{'MiB/s':>{label_w}}" + (" (log scale)" if log_y else "")]
    for r in range(height):
        lines.append(f"{ticks.get(r, ''):>{label_w}} |" + "".join(grid[r]).rstrip())
    lines.append(" " * label_w + " +" + "-" * width)
    lines.append(" " * indent + _x_axis_text(lengths, col, width))
    lines.append(" " * indent + "data length in bytes (log scale)")
    lines += _legend(marks, [label for label, _ in curves], indent)
    return lines


def curves_for(rows: Sequence[LengthRow]) -> list[tuple[str, list[Curve]]]:
    """(title, curves) per operation, in run order."""
    out: dict[str, list[Curve]] = {}
    for r in rows:
        out.setdefault(f"{r.op.algo} {r.op.label}", []).append((r.who.label, r.speeds()))
    return list(out.items())


def text_plots(rows: Sequence[LengthRow], *, log_y: bool = False) -> list[str]:
    """A terminal plot per operation, each after a blank line."""
    lines: list[str] = []
    for title, curves in curves_for(rows):
        lines.append("")
        lines.extend(text_plot(f" {title}: speed by data length", curves, log_y=log_y))
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


def file_style(index: int) -> tuple[str, str]:
    """The colour and marker of a figure's index-th series (see FILE_COLORS)."""
    return FILE_COLORS[index % len(FILE_COLORS)], FILE_MARKERS[index % len(FILE_MARKERS)]


def _format_panel(ax: Any, name: str, curves: Sequence[Curve], log_y: bool) -> None:
    """Axes, ticks and title of one operation's panel."""
    ticker: Any = importlib.import_module("matplotlib.ticker")
    sizes = sorted({n for _, pts in curves for n, _ in pts})
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([human(n) for n in sizes], fontsize=8)
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    yaxis = _axis_for([s for _, pts in curves for _, s in pts], log_y, FILE_PANEL_ROWS)
    if yaxis is not None and yaxis.log:
        ax.set_yscale("log")
        ax.set_ylim(yaxis.lo, yaxis.hi)
        ax.set_yticks(yaxis.ticks, [_tick_text(v) for v in yaxis.ticks], fontsize=8)
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    else:
        ax.set_ylim(bottom=0)
        ax.tick_params(axis="y", labelsize=8)
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("data length (bytes)", fontsize=8)
    ax.set_ylabel("MiB/s (log scale)" if log_y else "MiB/s", fontsize=8)
    ax.grid(True, which="major", alpha=0.3)


def build_figure(rows: Sequence[LengthRow], title: str, *, log_y: bool = False) -> Any:
    """One panel per operation, one line per backend or peer, one legend for all.

    A series keeps its colour and marker in every panel, which is what lets
    the panels share a legend. The legend sits below the panels, outside
    them, so it never covers a curve, and the title above them; the
    constrained layout keeps the three apart. Built on matplotlib's Figure,
    not pyplot: no display and no global state.
    """
    mfig: Any = importlib.import_module("matplotlib.figure")
    groups = curves_for(rows)
    labels = list(dict.fromkeys(label for _, curves in groups for label, _ in curves))
    style = {label: file_style(i) for i, label in enumerate(labels)}
    ncols = 2 if len(groups) > 1 else 1
    nrows = max(1, math.ceil(len(groups) / ncols))
    legend_cols = min(max(1, len(labels)), LEGEND_COLUMNS * ncols)
    legend_rows = math.ceil(len(labels) / legend_cols)
    fig = mfig.Figure(figsize=(6.4 * ncols, 3.6 * nrows + 0.5 + 0.2 * legend_rows),
                      layout="constrained")
    panels = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    handles: dict[str, Any] = {}
    for ax, (name, curves) in zip(panels, groups):
        for label, pts in curves:
            good = sorted((n, s) for n, s in pts if drawable(s, log_y))
            colour, marker = style[label]
            (line,) = ax.plot([n for n, _ in good], [s for _, s in good], color=colour,
                              marker=marker, markersize=5, label=label)
            handles.setdefault(label, line)
        _format_panel(ax, name, curves, log_y)
    for ax in panels[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    if labels:
        fig.legend([handles[label] for label in labels], labels, loc="outside lower center",
                   fontsize=8, ncols=legend_cols)
    return fig


def file_plot(rows: Sequence[LengthRow], path: str, title: str, *, log_y: bool = False) -> None:
    """The by-length figure (build_figure) saved as PNG/SVG/PDF, by path's extension."""
    fig = build_figure(rows, title, log_y=log_y)
    fig.savefig(path, bbox_inches="tight")
