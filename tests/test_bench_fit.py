"""The bench-slope fit and the measuring machinery, on synthetic timings.

No real timing is asserted anywhere: the targets here return made-up
nanoseconds from a known line, so the expected slope and intercept are exact.
"""

import math
import random

import pytest

from aeskit.bench import fit_line
from aeskit.bench.measure import Noise, Settings, calibrate, measure_once
from aeskit.bench.sizes import (
    LENGTHS_DEFAULT,
    SLOPE_DEFAULT,
    for_mode,
    parse_range,
    parse_size,
    parse_size_list,
    slope_series,
)
from aeskit.bench.stats import cycles_per_byte, median, mib_per_s
from aeskit.bench.system import Clock


def test_exact_line_recovered():
    xs = [float(n) for n in slope_series(*SLOPE_DEFAULT)]
    ys = [25.0 + 0.35 * x for x in xs]
    fit = fit_line(xs, ys)
    assert fit.slope == pytest.approx(0.35, rel=1e-12)
    assert fit.intercept == pytest.approx(25.0, rel=1e-9)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.n == 64


def test_noisy_line_recovered():
    rng = random.Random(1234)
    xs = [float(n) for n in slope_series(*SLOPE_DEFAULT)]
    ys = [(60.0 + 0.09 * x) * (1 + rng.uniform(-0.01, 0.01)) for x in xs]
    fit = fit_line(xs, ys)
    assert fit.slope == pytest.approx(0.09, rel=0.02)
    assert fit.intercept == pytest.approx(60.0, abs=3.0)
    assert fit.r2 > 0.99


def test_outlier_is_what_medians_are_for():
    rng = random.Random(7)
    xs = [float(n) for n in slope_series(16, 4096, 256)]
    reps = [[10.0 + 0.5 * x for _ in range(5)] for x in xs]
    for r in reps:  # one repetition per size hit by an "interrupt"
        r[rng.randrange(5)] *= 3
    fit = fit_line(xs, [median(r) for r in reps])
    assert fit.slope == pytest.approx(0.5)
    assert fit.intercept == pytest.approx(10.0)


def test_fit_needs_two_distinct_sizes():
    with pytest.raises(ValueError):
        fit_line([16.0], [1.0])
    with pytest.raises(ValueError):
        fit_line([16.0, 16.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        fit_line([16.0, 32.0], [1.0])


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
    with pytest.raises(ValueError):
        median([])


def test_units():
    assert mib_per_s(1.0) == pytest.approx(1e9 / 2**20)
    assert mib_per_s(0.0) == math.inf
    assert cycles_per_byte(0.25, 4000.0) == pytest.approx(1.0)
    assert cycles_per_byte(0.25, None) is None


class LineTarget:
    """A fake target whose calls cost exactly intercept + slope * size ns."""

    impl = "aeskit"
    backend = "synthetic"
    layer = "kernel"
    in_place = True

    def __init__(self, name, intercept, slope, log):
        self.name = name
        self.intercept = intercept
        self.slope = slope
        self.log = log

    def prepare(self, max_size):
        self.max_size = max_size

    def time(self, size, loops):
        self.log.append((self.name, size))
        return round(loops * (self.intercept + self.slope * size))

    def release(self):
        pass


def test_calibration_reaches_the_minimum_time():
    t = LineTarget("a", 30.0, 0.1, [])
    loops, first = calibrate(t, 16, 100_000)
    assert first is None  # a short call's warm-up is thrown away
    assert t.time(16, loops) >= 100_000
    assert loops < 100_000 / 31.6 * 3  # not wildly more than needed


def test_a_long_call_is_timed_alone_and_its_warm_up_kept():
    t = LineTarget("a", 0.0, 300.0, [])  # 16 MiB of a slow mode: ~5 s per call
    loops, first = calibrate(t, 16 << 20, 100_000)
    assert (loops, first) == (1, t.time(16 << 20, 1))
    assert len(t.log) == 2  # the warm-up, and the check above


def test_measuring_machinery_recovers_a_known_line():
    log = []
    t1, t2 = LineTarget("a", 40.0, 0.088, log), LineTarget("b", 250.0, 0.7, log)
    sizes = slope_series(16, 4096, 128)
    for t in (t1, t2):
        t.prepare(max(sizes))
    series = measure_once([t1, t2], sizes, Settings(repetitions=3, min_time_ns=20_000), Noise())
    for s, t in zip(series, (t1, t2)):
        fit = fit_line([float(n) for n, _ in s.points], [ns for _, ns in s.points])
        assert fit.slope == pytest.approx(t.slope, rel=1e-3)
        assert fit.intercept == pytest.approx(t.intercept, rel=1e-2)
    # interleaved: in the last repetition the targets take turns at each size
    # (a timing redone because the machine was busy repeats its entry: dropped)
    turns = [entry for i, entry in enumerate(log) if i == 0 or log[i - 1] != entry]
    assert turns[-2 * len(sizes):] == [(name, n) for n in sizes for name in ("a", "b")]


def test_clock_takes_the_fastest_sample_and_reports_the_spread():
    readings = iter([3000.0,  # the constructor's check that the clock can be read
                     1500.0, 2990.0, 2000.0, 2500.0, 3100.0, 900.0, 3050.0, 3000.0, 3000.0,
                     2000.0])
    clock = Clock(None, sample_ms=1.0, samples=5, sampler=lambda ms: next(readings))
    assert clock.available and clock.measured and clock.source == "auto"
    before = clock.sample()  # 1500, 2990, 2000, 2500, 3100 -> 3100
    after = clock.sample()   # 900, 3050, 3000, 3000, 2000 -> 3050
    r = clock.reading(before, after)
    assert r.mhz == 3100.0  # the higher sample: a disturbed one only reads low
    assert r.diff == pytest.approx(abs(1 - 3100 / 3050))


def test_clock_user_value_and_unmeasurable():
    user = Clock(2500.0, sampler=lambda ms: None)
    assert user.source == "user" and not user.measured
    assert user.reading(None, None).mhz == 2500.0
    none = Clock(None, sampler=lambda ms: None)
    assert none.source == "none" and not none.measured
    assert none.reading(None, None).mhz is None


def test_sizes():
    assert parse_size("16") == 16
    assert parse_size("8K") == parse_size("8KiB") == 8192
    assert parse_size("16M") == 16 << 20
    for bad in ("", "x", "16Q", "0", "-5"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert parse_size_list("1K,16,1K") == (16, 1024)
    assert parse_range("16:4K:64") == (16, 4096, 64)
    with pytest.raises(ValueError):
        parse_range("4K:16:64")
    series = slope_series(*SLOPE_DEFAULT)
    assert series[0] == 16 and series[1] - series[0] == 64 and len(series) == 64
    assert all(n % 16 == 0 for n in LENGTHS_DEFAULT)
    assert for_mode((1, 17, 40, 48), whole_blocks=True) == (16, 32, 48)
    assert for_mode((1, 17, 40), whole_blocks=False) == (1, 17, 40)
