"""The by-length plots: a marker (terminal) or colour and marker (file) per series, the log
y axis, and a file plot whose legend covers no data.

The data are made up: ten series shaped like ``--backend all`` with both peers, three
orders of magnitude apart, as portable and a fast backend are. The file plot's layout is
checked with the Agg backend, by the drawn extents of the legend, the title and the panels.
"""

import importlib.util
import math

import pytest

from aeskit.bench import plot
from aeskit.bench.plot import (
    MARKERS,
    MAX_COLUMNS,
    OVERFLOW_MARKER,
    log_bounds,
    log_ticks,
    text_plot,
    text_plots,
)
from aeskit.bench.results import LengthRow, Who
from aeskit.bench.system import ClockReading
from aeskit.bench.targets import Operation

LENGTHS = (16, 64, 256, 1024, 8192, 65536, 1 << 20)
BACKENDS = ("vaes_avx512", "vaes_avx2", "aesni", "portable")
WHOS = [Who("aeskit", b, layer, True) for b in BACKENDS for layer in ("kernel", "api")] + [
    Who("cryptography", "openssl", "api", True), Who("pycryptodome", "pycryptodome", "api", True)]
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
needs_matplotlib = pytest.mark.skipif(not HAVE_MATPLOTLIB,
                                      reason="the plot extra (matplotlib) is not installed")


def top_speed(who):
    """MiB/s at 1 MiB: portable and pycryptodome far below the rest."""
    if who.backend == "portable":
        return 60.0 if who.layer == "kernel" else 50.0
    if who.impl == "pycryptodome":
        return 900.0
    return 2000.0 * (1 + WHOS.index(who))


def speeds(who):
    """A curve that rises with the length and levels off, as a real one does."""
    return [(n, top_speed(who) * n / (n + 200)) for n in LENGTHS]


def length_rows(ops=(("CTR", True), ("CTR", False), ("GCM", True))):
    rows = []
    for mode, encrypt in ops:
        for who in WHOS:
            ns = [(n, n / (s * 1.048576e-3)) for n, s in speeds(who)]  # back to ns per call
            rows.append(LengthRow(Operation(mode, encrypt, 128), who, ns,
                                  ClockReading(None, None, "none")))
    return rows


def curves(count=None):
    """The series as text_plot takes them; past len(WHOS), renamed copies."""
    count = len(WHOS) if count is None else count
    base = [(w.label, speeds(w)) for w in WHOS]
    return [(f"{label} #{i // len(base)}" if i >= len(base) else label, pts)
            for i, (label, pts) in ((i, base[i % len(base)]) for i in range(count))]


def legend(lines):
    """The legend lines: those after the x axis caption."""
    return lines[next(i for i, line in enumerate(lines) if "data length in bytes" in line) + 1:]


def grid(lines):
    """The plot area's rows: (tick label, cells)."""
    return [(line.split("|", 1)[0].strip(), line.split("|", 1)[1]) for line in lines
            if "|" in line]


def test_markers_are_distinct_and_not_the_axes():
    assert len(MARKERS) >= 16 and len(set(MARKERS)) == len(MARKERS)
    assert not set(MARKERS) & set(" |-.") and OVERFLOW_MARKER not in MARKERS


@pytest.mark.parametrize("log_y", [False, True])
def test_every_series_has_its_own_marker(log_y):
    lines = text_plot("t", curves(), log_y=log_y)
    entries = [e for line in legend(lines) for e in line.split("   ") if e.strip()]
    marks = [e.strip()[0] for e in entries]
    assert [e.strip()[2:].strip() for e in entries] == [w.label for w in WHOS]
    assert len(set(marks)) == len(WHOS) == len(marks)
    if log_y:  # on a linear axis the slow ones hide each other on zero
        assert {c for _, cells in grid(lines) for c in cells} >= set(marks)
    assert all(len(line) <= MAX_COLUMNS for line in lines)


def test_more_curves_than_markers_says_so():
    count = len(MARKERS) + 3
    lines = text_plot("t", curves(count))
    text = "\n".join(legend(lines))
    assert f"{OVERFLOW_MARKER} 3 curves share this marker" in text
    for label, _ in curves(count)[len(MARKERS):]:
        assert label in text
    named = [e.strip() for line in legend(lines) for e in line.split("   ") if e.strip()]
    own = [e[0] for e in named if e[0] in MARKERS and e[1] == " "]
    assert len(own) == len(set(own)) == len(MARKERS)  # no marker named twice
    assert all(len(line) <= MAX_COLUMNS for line in lines)


def one_two_five(value):
    mant = value / 10 ** math.floor(math.log10(value) + 1e-9)
    return any(math.isclose(mant, m) for m in (1, 2, 5))


def test_log_y_lifts_the_slow_curves_off_zero():
    fast, slow = WHOS[0], WHOS[7]
    assert slow.label == "portable api"
    pair = [(fast.label, speeds(fast)), (slow.label, speeds(slow))]

    def rows_of(lines, mark):
        return {label or i for i, (label, cells) in enumerate(grid(lines)) if mark in cells}

    linear = text_plot("t", pair)
    log = text_plot("t", pair, log_y=True)
    assert rows_of(linear, MARKERS[1]) == {"0"}  # flat on zero
    assert len(rows_of(log, MARKERS[1])) >= 4  # its rise from 16 B to 1 MiB shows
    assert "MiB/s (log scale)" in log[1] and "log" not in linear[1]


def test_log_y_ticks_are_round_and_rise():
    lines = text_plot("t", curves(), log_y=True)
    labels = [float(t) for t, _ in grid(lines) if t]
    assert len(labels) >= 3 and labels == sorted(labels, reverse=True)
    assert all(one_two_five(v) for v in labels)
    assert any(math.isclose(v, 1000) for v in labels)


@pytest.mark.parametrize("lo, hi, bounds", [
    (3.0, 12000.0, (2.0, 20000.0)),
    (300.0, 12000.0, (200.0, 20000.0)),
    (1000.0, 1000.0, (500.0, 2000.0)),
    (0.4, 20.0, (0.2, 20.0)),
])
def test_log_bounds(lo, hi, bounds):
    assert log_bounds(lo, hi) == pytest.approx(bounds)


def test_log_ticks_add_2_and_5_where_there_is_room():
    assert log_ticks(10.0, 10000.0, 30) == pytest.approx(
        [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000])
    assert log_ticks(10.0, 10000.0, 12) == pytest.approx([10, 100, 1000, 10000])
    # under two powers of ten in range: the ends are labelled too
    assert log_ticks(200.0, 5000.0, 3) == pytest.approx([200, 1000, 5000])


def test_log_y_leaves_out_zero_speeds():
    lines = text_plot("t", [("a", [(16, 0.0), (1024, 10.0), (65536, 100.0)])], log_y=True)
    assert sum(cells.count("o") for _, cells in grid(lines)) > 3


def test_text_plots_take_log_y():
    rows = length_rows()
    assert "MiB/s (log scale)" in "\n".join(text_plots(rows, log_y=True))
    linear = text_plots(rows)
    assert "(log scale)" not in "\n".join(line for line in linear if "MiB/s" in line)
    assert sum("speed by data length" in line for line in linear) == 3


def test_file_styles_are_distinct():
    pairs = [plot.file_style(i) for i in range(len(plot.FILE_COLORS) * len(plot.FILE_MARKERS))]
    assert len(set(pairs)) == len(pairs)


@needs_matplotlib
@pytest.mark.parametrize("name", ["speed.png", "speed.svg"])
def test_file_plot_writes_the_file(tmp_path, name):
    path = tmp_path / name
    plot.file_plot(length_rows(), str(path), "title", log_y=True)
    head = path.read_bytes()[:200]
    assert head.startswith(b"\x89PNG\r\n\x1a\n") if name.endswith(".png") else b"<svg" in head


def drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


@needs_matplotlib
@pytest.mark.parametrize("log_y", [False, True])
@pytest.mark.parametrize("ops", [(("CTR", True),), (("CTR", True), ("CTR", False), ("GCM", True))])
def test_file_plot_series_and_legend(log_y, ops):
    from matplotlib.colors import to_hex
    from matplotlib.text import Text

    title = "aeskit 0.1.0: speed by data length, a CPU with a long model name (R) @ 3.00GHz"
    fig = plot.build_figure(length_rows(ops), title, log_y=log_y)
    renderer = drawn(fig)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(ops)
    style = {}
    for ax in panels:
        lines = ax.get_lines()
        pairs = [(to_hex(line.get_color()), line.get_marker()) for line in lines]
        assert len(lines) == len(WHOS) and len(set(pairs)) == len(pairs)
        for line, pair in zip(lines, pairs):
            assert style.setdefault(line.get_label(), pair) == pair  # same in every panel
        assert ax.get_legend() is None
        assert ax.get_yscale() == ("log" if log_y else "linear")
    (legend,) = fig.legends  # one, shared
    assert [t.get_text() for t in legend.get_texts()] == [w.label for w in WHOS]
    box = legend.get_window_extent(renderer)
    (suptitle,) = [t for t in fig.findobj(Text) if t.get_text() == title]
    title_box = suptitle.get_window_extent(renderer)
    assert not box.overlaps(title_box)
    for ax in panels:
        assert not box.overlaps(ax.get_window_extent(renderer))
        assert not title_box.overlaps(ax.get_window_extent(renderer))
        if log_y:
            lo, hi = ax.get_ylim()
            ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
            assert len(ticks) >= 3 and all(one_two_five(t) for t in ticks)
            assert lo <= 50 * 16 / 216  # portable at 16 B is on the plot, not under it
