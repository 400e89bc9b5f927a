"""The self-check: a bulk line that disagrees with the run's own timings of the same call.

Whole runs of ``execute`` on made-up targets whose calls cost exactly
intercept + slope * bytes, times a factor in the groups a test makes slow:
a slow group must be caught, timed again for real, and marked and warned
about only if it still disagrees; a consistent row must get neither. Then
the rule itself, and the report's side: the mark, the JSON and CSV fields.
"""

import argparse
import math

import pytest

from aeskit.bench import command, floor, report, selfcheck, system
from aeskit.bench.results import Run, SlopeRow, Who
from aeskit.bench.selfcheck import Comparison, SelfCheck
from aeskit.bench.sizes import BULK_SIZES, LARGE, SMALL
from aeskit.bench.stats import Fit, fit_line, mib_per_s
from aeskit.bench.system import ClockReading
from aeskit.bench.targets import Operation

INTERCEPT, SLOPE = 200.0, 0.25  # ns, ns per byte
SLOW = 1.5  # what a slowed group's calls take, against the others'
REAL_CORES = system.Cores


class State:
    """Which group runs now (its sizes, and whether extra), and whether it is slowed."""

    def __init__(self, slow):
        self.slow_rule = slow
        self.groups = []  # (sizes, extra) of every group, in order
        self.slow = False


class GroupTarget:
    """Exactly INTERCEPT + SLOPE * size ns per call; SLOW times that in a slowed group
    when ``slowed`` (the other target of the run is never slowed)."""

    impl, layer, in_place = "aeskit", "kernel", True

    def __init__(self, backend, state, slowed):
        self.backend = self.name = backend
        self.state = state
        self.slowed = slowed
        self.calls = []  # (group number, size)

    def prepare(self, max_size):
        pass

    def release(self):
        pass

    def time(self, size, loops):
        self.calls.append((len(self.state.groups) - 1, size))
        factor = SLOW if self.slowed and self.state.slow else 1.0
        return round(loops * factor * (INTERCEPT + SLOPE * size))


def run_with(monkeypatch, slow, *argv):
    """execute() on two made-up targets per operation ("slowed" and "steady");
    ``slow(sizes, extra)`` says which groups run slow for the first."""
    state = State(slow)
    made = {}

    def targets(op, backends, layers, peers, offset):
        made[op] = [GroupTarget("slowed", state, True), GroupTarget("steady", state, False)]
        return made[op]

    timed_group = command._timed_group

    def group(op, targets, group_sizes, *args, **kwargs):
        state.groups.append((tuple(group_sizes), kwargs.get("extra", False)))
        state.slow = slow(tuple(group_sizes), kwargs.get("extra", False))
        return timed_group(op, targets, group_sizes, *args, **kwargs)

    monkeypatch.setattr(command, "make_targets", targets)
    monkeypatch.setattr(command, "_timed_group", group)
    monkeypatch.setattr(floor, "probe", lambda native: None)
    # no pinning to a CPU, no clock samples: the made-up times need neither
    monkeypatch.setattr(system, "Cores", lambda: REAL_CORES(probe=lambda rounds: None))
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--modes", "CTR", "--key-bits", "128", "--peers", "none",
                              "--repetitions", "1", "--slope-range", "16:208:64",
                              "--cpu-mhz", "3000", *argv])
    opts = command.resolve(args, parser)
    run = command.execute(opts, command.Progress(enabled=False))
    return run, made, state


def main_pass(sizes, extra):
    """The row's own groups: the short series and the bulk sizes (both passes)."""
    return min(sizes) < 1024 and not extra


def bulk_retime(sizes, extra):
    return extra and sizes == BULK_SIZES


def row_of(run, op, backend):
    return next(r for r in run.slope if r.op == op and r.who.backend == backend)


def true_ns(n):
    return INTERCEPT + SLOPE * n


CTR_ENC = Operation("CTR", True, 128)


def text_of(run):
    return report.render_plain(report.text_lines(run) + report.closing_lines(run))


def test_a_consistent_run_is_neither_retimed_nor_marked(monkeypatch):
    run, _, state = run_with(monkeypatch, lambda sizes, extra: False)
    assert not any(extra for _, extra in state.groups)  # no group timed again
    for r in run.slope:
        check = r.self_check
        assert check is not None and not check.disagrees and not check.retimed
        # without --sizes: the row's own timings and a separate group's, at both sizes
        assert sorted((c.source, c.size) for c in check.comparisons) == sorted(
            (s, n) for s in (selfcheck.DIRECT, selfcheck.SEPARATE) for n in selfcheck.SIZES)
        assert all(abs(c.difference) < 1e-3 for c in check.comparisons)
    assert report.DISAGREES not in text_of(run).split(" summary, ")[0]
    assert not report.warnings(run)
    assert run.meta["self_check"]["rows_retimed"] == 0


def test_a_slow_group_is_timed_again_and_marked_when_it_stays_slow(monkeypatch):
    # both passes of the row, and its retime, slow; the separate timings are not
    run, made, state = run_with(monkeypatch,
                                lambda sizes, extra: main_pass(sizes, extra)
                                or bulk_retime(sizes, extra))
    slowed, steady = row_of(run, CTR_ENC, "slowed"), row_of(run, CTR_ENC, "steady")
    assert slowed.disagrees and slowed.self_check.retimed
    assert not steady.disagrees and not steady.self_check.retimed
    worst = slowed.self_check.worst
    assert worst.source == selfcheck.SEPARATE
    assert worst.difference == pytest.approx(1 / SLOW - 1, abs=0.01)  # -33%
    # the retime timed the slowed target's bulk sizes again, in two passes; the steady
    # one was left alone
    retimes = [i for i, (sizes, extra) in enumerate(state.groups) if bulk_retime(sizes, extra)]
    assert len(retimes) == 2 * 2  # two passes for each of CTR enc and dec
    for target in made[CTR_ENC]:
        again = {n for g, n in target.calls if g in retimes}
        assert again == (set(BULK_SIZES) if target is made[CTR_ENC][0] else set())
    # marked on its bulk cells, explained, and warned about by name
    text = text_of(run)
    line = next(ln for ln in text.split("aeskit slowed kernel", 1)[1].splitlines()
                if ln.strip().startswith("CTR enc"))
    assert line.split("|")[1].split() == [f"{report.num(slowed.bulk_mib_per_s)}?",
                                          f"{report.num(slowed.bulk_cycles_per_byte)}?"]
    steady_text = text.split("aeskit steady kernel", 1)[1].split(" summary, ")[0]
    assert report.DISAGREES not in steady_text
    assert f"? {report.MARK_TEXT[report.DISAGREES]}" in " ".join(text.split())
    # two rows (enc and dec): one warning names both, each with its worst miss
    warned = [w for w in report.warnings(run) if "AES-128 CTR enc slowed kernel (" in w]
    assert len(warned) == 1 and warned[0].startswith("2 rows' bulk lines miss")
    assert "also when timed again" in warned[0]
    assert "AES-128 CTR enc slowed kernel (-33% at 16 KiB, a separate timing)" in warned[0]
    assert "AES-128 CTR dec slowed kernel (" in warned[0]
    assert not any("steady" in w for w in report.warnings(run))
    assert run.meta["self_check"]["rows_disagreeing"] == 2  # enc and dec
    # one row alone gets the whole sentence
    dec = row_of(run, Operation("CTR", False, 128), "slowed")
    dec.self_check = None
    warned = [w for w in report.warnings(run) if w.startswith("AES-128 CTR enc slowed kernel:")]
    assert len(warned) == 1 and "also when the row was timed again" in warned[0]
    assert "a separate timing" in warned[0] and "(-33.3%)" in warned[0]


def test_a_slow_group_consistent_on_the_retime_ends_unmarked_with_the_new_figures(monkeypatch):
    run, made, state = run_with(monkeypatch, main_pass)
    retimes = [i for i, (sizes, extra) in enumerate(state.groups) if bulk_retime(sizes, extra)]
    for op in (CTR_ENC, Operation("CTR", False, 128)):
        slowed, steady = made[op]
        # timed again for real: the slowed target at every bulk size, the steady one not
        assert {n for g, n in slowed.calls if g in retimes} == set(BULK_SIZES)
        assert not [n for g, n in steady.calls if g in retimes]
        row = row_of(run, op, "slowed")
        check = row.self_check
        assert check.retimed and not check.disagrees
        # the first check saw the slow line, the new one agrees
        assert any(c.disagrees for c in check.before)
        assert all(abs(c.difference) < 1e-3 for c in check.comparisons)
        # the figures are the retime's (the true line), not the slow passes'
        assert row.bulk.slope == pytest.approx(SLOPE, rel=1e-3)
        assert row.bulk_mib_per_s == pytest.approx(mib_per_s(SLOPE), rel=1e-3)
        assert row.direct[LARGE] == pytest.approx(true_ns(LARGE), rel=1e-3)
        assert all(ns == pytest.approx(true_ns(n), rel=1e-3)
                   for n, ns in row.points if n in BULK_SIZES)
        # the short line keeps the (slow) passes' timings: only the bulk sizes were redone
        assert dict(row.points)[SMALL] == pytest.approx(SLOW * true_ns(SMALL), rel=1e-3)
    assert not report.warnings(run)
    assert report.DISAGREES not in text_of(run).split(" summary, ")[0]
    assert run.meta["self_check"]["rows_retimed"] == 2


def test_a_slow_separate_timing_is_timed_again_before_the_row(monkeypatch):
    # the separate group ran slow once: timing it again (it is cheap) settles it,
    # and the row itself is not redone
    first_separate = []

    def slow(sizes, extra):
        if sizes == selfcheck.SIZES and not first_separate:
            first_separate.append(True)
            return True
        return False

    run, _, state = run_with(monkeypatch, slow)
    row = row_of(run, CTR_ENC, "slowed")
    assert not row.disagrees and not row.self_check.retimed
    assert [(sizes, extra) for sizes, extra in state.groups if extra] == [
        (selfcheck.SIZES, True)]
    assert not report.warnings(run)


def test_the_by_length_cells_are_compared_where_the_run_has_them(monkeypatch):
    # --sizes with both sizes: no separate group; the by-length group is steady,
    # the row's passes slow, and the retime too: the table's cells catch it
    run, _, state = run_with(monkeypatch,
                             lambda sizes, extra: main_pass(sizes, extra)
                             or bulk_retime(sizes, extra),
                             "--sizes", "16K,64K,1M")
    assert (selfcheck.SIZES, False) not in state.groups
    row = row_of(run, CTR_ENC, "slowed")
    assert row.disagrees
    assert {c.source for c in row.self_check.comparisons} == {selfcheck.DIRECT,
                                                              selfcheck.BY_LENGTH}
    assert row.self_check.worst.source == selfcheck.BY_LENGTH
    assert any("CTR enc slowed kernel (" in w and "the by-length table's timing)" in w
               for w in report.warnings(run))
    # only the size the by-length set lacks gets a separate group
    run, _, state = run_with(monkeypatch, lambda sizes, extra: False, "--sizes", "16K,1M")
    assert (((64 << 10),), False) in state.groups
    assert run.meta["self_check"]["separate_sizes"] == [64 << 10]


# ---------------------------------------------------------------- the rule


def test_the_tolerance_and_sizes():
    assert selfcheck.TOLERANCE == 0.05
    assert selfcheck.SIZES == (16 << 10, 64 << 10)
    line = Fit(1.0, 0.0, 1.0, 7)
    at = {selfcheck.BY_LENGTH: {16 << 10: 16384 * 1.049, 64 << 10: 65536 * 1.051, 1024: 1.0}}
    found = selfcheck.compare(line, at)
    assert [(c.size, c.disagrees) for c in found] == [(16 << 10, False), (64 << 10, True)]
    assert [c.disagrees for c in selfcheck.compare(line, {"x": {16 << 10: 16384 * 0.949}})] \
        == [True]
    assert not SelfCheck(found[:1]).disagrees and SelfCheck(found).disagrees
    assert SelfCheck(found).worst.size == 64 << 10 and not SelfCheck(found).retimed
    assert SelfCheck((), before=found).retimed and SelfCheck(()).worst is None


def test_a_bent_line_is_caught_by_its_own_timings():
    # no other timing: the line's own 16 and 64 KiB points say it is bent
    row = synthetic_row(CTR_ENC, "aesni")
    assert command._compared(row, {}, {}) == tuple(
        Comparison(selfcheck.DIRECT, n, pytest.approx(true_ns(n)), true_ns(n))
        for n in selfcheck.SIZES)
    row.bulk = Fit(SLOPE * 1.2, INTERCEPT - SLOPE * 0.2 * 16384, 0.99, 7)  # right at 16 KiB
    assert row.bulk_problem is None
    found = command._compared(row, {}, {})
    assert [(c.source, c.size) for c in found if c.disagrees] == [(selfcheck.DIRECT, 64 << 10)]
    row.bulk = Fit(-1.0, 0.0, 0.99, 7)  # a poor line: its figures are a direct timing
    assert command._compared(row, {}, {}) is None


def test_a_line_that_predicts_no_time_disagrees():
    c = Comparison(selfcheck.DIRECT, 16 << 10, -5.0, 1000.0)
    assert c.difference == math.inf and c.disagrees


# ---------------------------------------------------------------- the report

MHZ = 3000.0
META = {"versions": {"aeskit": "0", "python": "CPython"}, "cpu": {"model": "test cpu"},
        "backends": {"default": "aesni"}, "clock": {"source": "auto", "mhz": MHZ},
        "settings": {"slope_sizes": [16, 80], "repetitions": 5, "min_time_ns": 100000,
                     "budget_s": 100.0, "unaligned": 0},
        "noise": {"off_cpu_checked": True, "timings": 10, "retried": 0, "disturbed": 0}}


def synthetic_row(op, backend, check=None):
    short = [(n, true_ns(n)) for n in (16, 1024, 4096)]
    bulk = [(n, true_ns(n)) for n in BULK_SIZES]
    return SlopeRow(op, Who("aeskit", backend, "kernel", True), fit_line(*zip(*short)),
                    short + bulk, ClockReading(MHZ, 0.001, "auto"), 1,
                    bulk=fit_line(*zip(*bulk)), direct={SMALL: true_ns(SMALL),
                                                        LARGE: true_ns(LARGE)},
                    self_check=check)


def test_json_and_csv_carry_the_check():
    miss = Comparison(selfcheck.BY_LENGTH, 16 << 10, 4300.0, 3000.0)
    fine = Comparison(selfcheck.DIRECT, 16 << 10, 4300.0, 4310.0)
    bad = synthetic_row(CTR_ENC, "aesni", SelfCheck((miss, fine), before=(miss,)))
    good = synthetic_row(CTR_ENC, "vaes_avx2", SelfCheck((fine,)))
    unchecked = synthetic_row(CTR_ENC, "portable")
    run = Run(META, [bad, good, unchecked], [], [])
    doc = report.to_json(run)
    got = {r["backend"]: r["self_check"] for r in doc["slope"]}
    assert got["portable"] is None
    assert got["vaes_avx2"]["disagrees"] is False and got["vaes_avx2"]["retimed"] is False
    assert got["vaes_avx2"]["before_retime"] is None
    assert got["aesni"]["disagrees"] is True and got["aesni"]["retimed"] is True
    assert got["aesni"]["difference"] == pytest.approx(3000.0 / 4300.0 - 1)
    assert got["aesni"]["comparisons"][0] == {
        "source": "by-length", "bytes": 16384, "predicted_ns": 4300.0, "timed_ns": 3000.0,
        "difference": pytest.approx(3000.0 / 4300.0 - 1)}
    assert len(got["aesni"]["before_retime"]) == 1
    assert any(w.startswith("AES-128 CTR enc aesni kernel: its bulk line")
               for w in doc["warnings"])
    header, *rows = [line.split(",") for line in report.csv_text(run).splitlines()]
    assert header[-2:] == ["self_check", "self_check_difference"]
    assert all(len(r) == len(header) for r in rows)
    bulk = {r[0]: r[-2:] for r in rows if r[3] == "bulk"}
    assert bulk["aeskit-aesni-kernel"] == ["disagrees", f"{3000.0 / 4300.0 - 1:.4f}"]
    assert bulk["aeskit-vaes_avx2-kernel"][0] == "agrees"
    assert bulk["aeskit-portable-kernel"] == ["", ""]
    assert all(r[-2:] == ["", ""] for r in rows if r[3] == "")  # short-line rows
