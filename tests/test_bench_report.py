"""The report never prints a number it cannot stand behind, and fits 100 columns.

Synthetic rows only: a bad fit and a row under its floor are injected into
the report code and must come out marked, with warnings, never as ratios
from a slope. Also the fit rule, the time budget's arithmetic and skipping,
and Ctrl-C on a real run (its exit status, not its timings).
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from aeskit.bench import report
from aeskit.bench.command import _fastest
from aeskit.bench.measure import Budget, GroupResult, Noise, Series, Settings, measure_once
from aeskit.bench.results import LengthRow, Run, SlopeRow, Who, add_ratios
from aeskit.bench.sizes import BULK_SIZES, LARGE, SMALL
from aeskit.bench.stats import (
    PER_CALL_DOMINATES,
    R2_MIN,
    Fit,
    fit_line,
    fit_problem,
    fit_robust,
)
from aeskit.bench.system import ClockReading
from aeskit.bench.targets import Operation
from helpers import default_sigint

MHZ = 3000.0
CLOCK = ClockReading(MHZ, 0.001, "auto")
CTR = Operation("CTR", True, 128)
META = {"versions": {"aeskit": "0", "python": "CPython"}, "cpu": {"model": "test cpu"},
        "backends": {"default": "aesni"}, "clock": {"source": "auto", "mhz": MHZ},
        "settings": {"slope_sizes": [16, 80], "repetitions": 5, "min_time_ns": 100000,
                     "budget_s": 100.0, "unaligned": 0},
        "noise": {"off_cpu_checked": True, "timings": 10, "retried": 0, "disturbed": 0}}


def line_row(op, who, intercept, slope, floor=None):
    """A row whose timings lie exactly on intercept + slope * bytes, both regimes."""
    short = [(n, intercept + slope * n) for n in (16, 1024, 4096)]
    bulk = [(n, intercept + slope * n) for n in BULK_SIZES]
    direct = {n: intercept + slope * n for n in (SMALL, LARGE)}
    return SlopeRow(op, who, fit_line(*zip(*short)), short + bulk, CLOCK, 1, floor=floor,
                    floor_basis="xmm AES throughput" if floor else None,
                    bulk=fit_line(*zip(*bulk)), direct=direct)


def aeskit_who(backend="aesni", layer="api"):
    return Who("aeskit", backend, layer, True)


def peer_who(name):
    return Who(name, name, "api", True)


def render(run, verbose=False):
    return report.render_plain(report.text_lines(run, verbose) + report.closing_lines(run,
                                                                                      verbose))


def test_fit_rule():
    good = Fit(0.1, 50.0, 0.999, 7)
    assert fit_problem(good, 65536) is None
    assert fit_problem(None, 65536) == "not measured"
    assert fit_problem(Fit(0.1, 50.0, 1.0, 1), 65536) == "not measured"
    assert fit_problem(Fit(-0.988, 50.0, 0.9, 7), 65536) == "slope <= 0"
    assert fit_problem(Fit(0.0, 50.0, 0.9, 7), 65536) == "slope <= 0"
    assert fit_problem(Fit(0.1, 50.0, R2_MIN - 0.01, 7), 65536).startswith("r2 ")
    assert fit_problem(Fit(0.1, 50.0, R2_MIN, 7), 65536) is None
    # pycryptodome's GCM: 170 us per call, 0.04 ns/B: the intercept outweighs 64 KiB
    assert fit_problem(Fit(0.038, 170_000.0, 0.99, 7), 65536) == PER_CALL_DOMINATES
    assert fit_problem(Fit(1.0, 65536.0, 0.99, 7), 65536) is None  # equal: the bytes hold


def test_bad_fit_gives_no_slope_ratio_and_is_marked():
    mine = line_row(CTR, aeskit_who(), 150.0, 0.16)
    # the pycryptodome GCM: per-call cost dominates, a tiny (or negative) slope
    slow = line_row(CTR, peer_who("pycryptodome"), 170_000.0, 0.038)
    noisy = line_row(CTR, peer_who("cryptography"), 400.0, 0.2)
    noisy.bulk = Fit(-0.929, 9000.0, 0.04, 7)  # what a disturbed run fitted
    rows = [mine, slow, noisy]
    add_ratios(rows)
    assert slow.bulk_problem == PER_CALL_DOMINATES and noisy.bulk_problem == "slope <= 0"
    for peer in (slow, noisy):
        got = mine.vs[peer.who.impl]
        assert got.basis == "16K" and got.direct
        assert got.value == pytest.approx(peer.direct[LARGE] / mine.direct[LARGE])
    # the slope ratio would have said 0.24x for pycryptodome: it must not appear
    assert mine.vs["pycryptodome"].value > 10
    text = render(Run(META, rows, [], []))
    table = text.split(" summary, ", 1)[0]
    mine_line = next(line for line in table.splitlines()
                     if line.strip().startswith("CTR enc") and "x" in line.split("|")[-1])
    assert f"{mine.vs['pycryptodome'].value:.2f}x*" in mine_line
    assert f"{slow.bulk.slope / mine.bulk.slope:.2f}x" not in text
    assert "0.24x" not in text
    assert report.MARK_TEXT[report.DIRECT] in text
    # the peer's own bulk cells are marked too: they are a direct 16 KiB timing
    slow_block = table.split("AES-128 pycryptodome", 1)[1].split("\n\n", 1)[0]
    assert "*" in slow_block.splitlines()[-1]
    doc = report.to_json(Run(META, rows, [], []))
    row = next(r for r in doc["slope"] if r["impl"] == "aeskit")
    assert row["vs"]["pycryptodome"]["basis"] == "16K"


def test_row_under_its_floor_is_marked_and_warned():
    # 0.1 ns/B at 3000 MHz is 0.3 c/B, under a floor of 0.5: impossible, so an error
    fast = line_row(CTR, aeskit_who("aesni", "kernel"), 20.0, 0.1, floor=0.5)
    fine = line_row(Operation("CTR", False, 128), aeskit_who("aesni", "kernel"), 20.0, 0.2,
                    floor=0.5)
    assert fast.below_floor and not fine.below_floor
    assert fast.over_floor == pytest.approx(0.6)
    # a whole 64-byte call in 12 ns is 0.56 c/B... per byte under a 1.0 floor
    length = LengthRow(CTR, aeskit_who("aesni", "kernel"), [(64, 12.0), (4096, 2000.0)],
                       CLOCK, floor=1.0)
    assert length.under_floor() == [64]
    run = Run(META, [fast, fine], [length], [])
    text = render(run)
    assert "0.60x!" in text
    assert report.MARK_TEXT[report.UNDER_FLOOR] in text
    warned = report.warnings(run)
    assert any("CTR enc aesni kernel: bulk 0.300 c/B is under its floor" in w for w in warned)
    assert any("64 under the floor" in w for w in warned)
    assert "warning: " in text
    assert not any("CTR dec" in w for w in warned)
    lengths = report.render_plain(report.length_lines([length]))
    assert "!" in next(line for line in lengths.splitlines() if line.strip().startswith("64 "))
    doc = report.to_json(run)
    assert [r["below_floor"] for r in doc["slope"]] == [True, False]
    assert doc["by_length"][0]["under_floor_bytes"] == [64]
    assert doc["warnings"] == warned


def test_short_line_that_bends_is_marked_but_bulk_is_not():
    # GCM: a slower path under 1.5 KiB tilts the short line under the floor
    op = Operation("GCM", True, 128)
    row = line_row(op, aeskit_who(), 100.0, 0.2, floor=0.5)
    row.fit = Fit(0.12, 300.0, 0.999, 64)  # 0.36 c/B: under 0.5
    assert row.short_problem is not None and not row.below_floor
    text = render(Run(META, [row], [], []))
    gcm = next(line for line in text.splitlines() if line.strip().startswith("GCM enc"))
    assert "~" in gcm.split("|")[2] and "~" not in gcm.split("|")[1]


def test_every_line_fits_100_columns_with_ten_targets_and_long_names():
    rows, lengths = [], []
    whos = [aeskit_who(b, la) for b in ("aesni", "vaes_avx2", "vaes_avx512", "portable")
            for la in ("kernel", "api")] + [peer_who("cryptography"), peer_who("pycryptodome")]
    for op in (Operation("CFB8", True, 256), Operation("GCM", False, 256),
               Operation("GHASH", True, 256)):
        for i, who in enumerate(whos):
            rows.append(line_row(op, who, 123456.0 * (i + 1), 37.19 * (i + 1),
                                 floor=40.0 if not who.is_peer else None))
            lengths.append(LengthRow(op, who, [(16, 99999.0), (16 << 20, 9.9e9)], CLOCK,
                                     skipped=[1 << 30]))
    add_ratios(rows)
    meta = dict(META, peers_missing=["pycryptodome"],
                clock_check={"warning": "clock estimates differ by 4.1% (add chain 2523 MHz, "
                                        "multiply 2420 MHz): c/B may be off",
                             "text": "clock: 2521 MHz (add chain)"},
                noise={"off_cpu_checked": True, "timings": 100000, "retried": 5000,
                       "disturbed": 400, "loadavg_after": 3.5},
                interrupted=True,
                aes_probe={"aesenc_latency_cycles": 4.0},
                floor_widths={"aesni": {"width": "xmm", "blocks_per_instruction": 1}})
    meta["cpu"] = {"model": "Intel(R) Xeon(R) Platinum 8480+ with a very long model name " * 2}
    run = Run(meta, rows, lengths, [])
    for verbose in (False, True):
        text = render(run, verbose) + report.render_plain(report.length_lines(lengths))
        widest = max(text.splitlines(), key=len)
        assert len(widest) <= 100, widest
    assert "interrupted" in render(run)
    assert "pip install 'aeskit[bench]'" in render(run)
    assert "differ by 4.1%" in render(run)


def test_summary_takes_the_best_backend_and_the_best_peer():
    fast = line_row(CTR, aeskit_who("vaes_avx2"), 100.0, 0.05)
    slow = line_row(CTR, aeskit_who("aesni"), 100.0, 0.2)
    openssl = line_row(CTR, peer_who("cryptography"), 300.0, 0.1)
    dome = line_row(CTR, peer_who("pycryptodome"), 5000.0, 0.5)
    rows = [fast, slow, openssl, dome]
    add_ratios(rows)
    lines = report.render_plain(report.summary_lines(rows)).splitlines()
    ctr = next(line for line in lines if line.strip().startswith("CTR"))
    assert "vaes_avx2 api" in ctr and ctr.rstrip().endswith("cryptography")
    assert "2.00x" in ctr  # 0.1 / 0.05: against the best peer, not pycryptodome's 10x


def test_budget_shares_what_is_left():
    budget = Budget(total_ns=1000, units=10)
    assert budget.allowance() == 100
    budget.charge(100, 5)  # the first half cost little: the rest get more
    assert budget.allowance() == 180
    assert budget.eta_ns(100) == 100  # 20 per cell so far, 5 cells left
    budget.charge(2000, 5)
    assert budget.allowance() == 0 and budget.eta_ns(2100) == 0


class SlowTarget:
    """Made-up time: 1 ns per byte, so a 1 MiB call takes a millisecond."""

    impl, backend, layer, in_place = "fake", "fake", "api", True
    name = "fake"

    def __init__(self):
        self.calls = []

    def time(self, size, loops):
        self.calls.append(size)
        return size * loops

    def prepare(self, max_size):
        pass

    def release(self):
        pass


def test_sizes_over_budget_are_skipped_not_timed():
    target = SlowTarget()
    # 4 cells of 1 ms each: a pool of 4 ms for the group
    settings = Settings(repetitions=5, min_time_ns=1000, point_budget_ns=1_000_000)
    (series,) = measure_once([target], (1024, 16 << 10, 1 << 20, 16 << 20), settings, Noise())
    # 1 MiB takes 1 ms a call: three (calibrating it) fit in what is left; 16 MiB's
    # 16 ms a call do not, so it is never called
    assert [n for n, _ in series.points] == [1024, 16 << 10, 1 << 20]
    assert series.skipped == [16 << 20]
    assert max(target.calls) == 1 << 20
    # the cheap cells got all five repetitions, the expensive one fewer
    assert target.calls.count(1024) >= 5 + 2
    assert 1 <= target.calls.count(1 << 20) - 1 < 5


def test_a_skipped_size_skips_the_larger_ones_too():
    target = SlowTarget()
    settings = Settings(repetitions=3, min_time_ns=1000, point_budget_ns=10_000)
    (series,) = measure_once([target], (1024, 1 << 20, 2 << 20), settings, Noise())
    assert series.skipped == [1 << 20, 2 << 20] and max(target.calls) == 1024


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child")
def test_ctrl_c_prints_what_was_measured_and_exits_130():
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "aeskit", "bench", "--backend", "auto",
                             "--peers", "none", "--key-bits", "128", "--repetitions", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=default_sigint)
    # wait until the first operation is done (its progress line names the second)
    deadline = time.monotonic() + 120
    seen = ""
    while time.monotonic() < deadline and "ECB dec" not in seen:
        seen += proc.stderr.readline()
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err and "interrupted" in out
    assert "ECB enc" in out  # what was measured is printed
    assert "OCB dec" not in out


def test_robust_bulk_line_ignores_one_slow_size():
    xs = [float(n) for n in BULK_SIZES]
    ys = [30.0 + 0.16 * x for x in xs]
    ys[-1] *= 1.15  # the 64 KiB point came out slow in every repetition
    robust = fit_robust(xs, ys)
    assert robust.slope == pytest.approx(0.16) and robust.intercept == pytest.approx(30.0)
    assert fit_line(xs, ys).slope > 0.17  # least squares tilts by more than 6%


def test_second_pass_keeps_the_lower_median_and_reuses_the_loop_counts():
    target = SlowTarget()
    settings = Settings(repetitions=3, min_time_ns=1000, point_budget_ns=10**9)
    quiet = Noise(checked=False)  # made-up times: the off-CPU check would retry them
    (first,) = measure_once([target], (1024, 4096), settings, quiet)
    calls = len(target.calls)
    (again,) = measure_once([target], (1024, 4096), settings, quiet, known=[first])
    assert len(target.calls) - calls == 2 * 3  # no calibration: the repetitions only
    assert again.loops == first.loops
    slow = Series(target, [(n, 2 * ns) for n, ns in first.points], [], first.loops)
    one = GroupResult(CTR, [slow], ClockReading(3000.0, 0.01, "auto"), 1)
    two = GroupResult(CTR, [again], ClockReading(3100.0, 0.02, "auto"), 2)
    merged = _fastest(one, two)
    assert merged.series[0].points == again.points
    assert merged.clock.mhz == 3100.0 and merged.clock.diff == 0.02
    assert merged.attempts == 2


class FakeCores:
    """The pinned CPU turns shared during the first attempt only."""

    def __init__(self):
        self.answers = [False, True]
        self.picked = 0

    def pick(self):
        self.picked += 1

    def still_unshared(self):
        return self.answers.pop(0)


def test_a_group_whose_cpu_became_shared_is_timed_again():
    from aeskit.bench.measure import run_group
    from aeskit.bench.system import Clock

    cores = FakeCores()
    settings = Settings(repetitions=1, min_time_ns=1000, clock_attempts=3)
    got = run_group(CTR, [SlowTarget()], (1024,), settings, Clock(3000.0),
                    Noise(checked=False), cores=cores)
    assert got.attempts == 2 and cores.picked == 2 and cores.answers == []


def test_a_short_slope_that_is_not_positive_prints_a_dash():
    # pycryptodome's EAX: per-call costs of 150-220 us tilt the short line below zero
    neg = line_row(CTR, aeskit_who(), 150.0, 0.16)
    neg.fit = Fit(-0.02, 210.0, 0.3, 64)
    pos = line_row(Operation("CTR", False, 128), aeskit_who(), 150.0, 0.16)
    assert neg.cycles_per_byte < 0 and neg.short_problem == "slope <= 0"
    text = report.render_plain(report.table_lines([neg, pos]))
    enc = next(ln for ln in text.splitlines() if ln.strip().startswith("CTR enc"))
    dec = next(ln for ln in text.splitlines() if ln.strip().startswith("CTR dec"))
    assert enc.split("|")[2].split() == ["-", "210", "ns~"]  # ns/call keeps the mark
    assert "-0." not in enc
    assert dec.split("|")[2].split()[0] == report.num(pos.cycles_per_byte)


def skipped_rows(n):
    return [{"mode": "CFB8", "direction": "enc", "key_bits": 128 << (i % 2), "impl": "aeskit",
             "backend": "portable", "layer": "kernel", "bytes": [48 << 10, 56 << 10, 64 << 10]}
            for i in range(n)]


def skipped_note(entries):
    meta = dict(META, budget={"skipped": entries})
    return report.render_plain(report.closing_lines(Run(meta, [], [], [])))


def test_the_skipped_note_names_the_rows():
    one = " ".join(skipped_note(skipped_rows(1)).split())
    assert ("1 row skipped sizes whose single call would overrun the time budget (--budget): "
            "AES-128 CFB8 enc portable kernel (from 48K)") in one
    peer = dict(skipped_rows(1)[0], impl="pycryptodome", backend="pycryptodome", layer="api",
                mode="GHASH", direction=None, bytes=[64 << 10])
    two = " ".join(skipped_note([*skipped_rows(1), peer]).split())
    assert ("2 rows skipped sizes whose single call would overrun the time budget (--budget): "
            "AES-128 CFB8 enc portable kernel (from 48K), AES-128 GHASH pycryptodome "
            "(from 64K)") in two
    many = " ".join(skipped_note(skipped_rows(9)).split())
    assert "9 rows skipped sizes" in many
    assert many.count("portable kernel") == report.SKIPPED_NAMED
    assert "AES-256 CFB8 enc portable kernel (from 48K)" in many
    assert f"and {9 - report.SKIPPED_NAMED} more (all in --json, meta.budget.skipped)" in many
    assert max(len(line) for line in skipped_note(skipped_rows(40)).splitlines()) <= 100
