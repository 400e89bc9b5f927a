"""The clock cross-check: the warning's threshold and the texts on made-up readings; the
real probe's shape, and its two chains roughly agreeing.

No speed is asserted: the real probe's add and multiply chains need only agree within
10%, far looser than the 3% the benchmark warns at (a loaded machine must not fail it).
"""

import platform

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from aeskit.bench import system
from aeskit.bench.system import CLOCK_AGREEMENT, ClockCheck, check_clock, native

X86 = platform.machine().lower() in {"x86_64", "amd64", "i386", "i686", "x86"}
on_x86 = pytest.mark.skipif(not X86, reason="the clock chains are x86 only")
KEYS = {"add_mhz", "mul_mhz", "tsc_mhz", "cpuinfo_mhz", "disagreement"}


def reading(add, mul, tsc=2000.0, cpuinfo=2000.0):
    return ClockCheck(add, mul, tsc, cpuinfo)


def test_disagreement_is_relative_to_the_mean():
    assert reading(1015.0, 985.0).disagreement == pytest.approx(0.03)
    assert reading(985.0, 1015.0).disagreement == reading(1015.0, 985.0).disagreement
    assert reading(2500.0, 2500.0).disagreement == 0.0


@pytest.mark.parametrize("add, mul", [(1015.0, 985.0), (985.0, 1015.0), (2500.0, 2500.0),
                                      (2520.0, 2500.0)])
def test_no_warning_at_or_below_the_threshold(add, mul):
    assert reading(add, mul).disagreement <= CLOCK_AGREEMENT
    assert reading(add, mul).warning() is None


@pytest.mark.parametrize("add, mul", [(1015.1, 984.9), (984.9, 1015.1), (2523.0, 2420.0)])
def test_warning_just_above_the_threshold(add, mul):
    check = reading(add, mul)
    assert check.disagreement > CLOCK_AGREEMENT
    text = check.warning()
    assert text is not None and text.startswith("warning: ")
    assert f"{add:.0f} MHz" in text and f"{mul:.0f} MHz" in text
    assert f"{check.disagreement:.1%}" in text


def test_threshold_is_three_percent():
    assert CLOCK_AGREEMENT == 0.03


def test_info_text_marks_the_nominal_rates_as_information():
    text = reading(2523.0, 2519.0, 2445.0, 2445.3).info_text()
    assert text.startswith("clock: 2523 MHz (add chain), 2519 MHz (multiply)")
    assert "TSC 2445" in text and "cpuinfo 2445" in text and "info only" in text
    bare = reading(2523.0, 2519.0, None, None).info_text()
    assert "TSC" not in bare and "cpuinfo" not in bare and "info only" not in bare
    assert "TSC" not in reading(2523.0, 2519.0, None, 2445.0).info_text()


mhz = st.floats(min_value=1.0, max_value=99999.0, allow_nan=False)


@given(add=mhz, mul=mhz, tsc=st.none() | mhz, cpuinfo=st.none() | mhz)
@example(add=10000.0, mul=99999.0, tsc=99999.0, cpuinfo=99999.0)  # the widest warning
@example(add=99999.0, mul=99999.0, tsc=99999.0, cpuinfo=99999.0)
def test_texts_fit_in_100_columns(add, mul, tsc, cpuinfo):
    check = ClockCheck(add, mul, tsc, cpuinfo)
    assert len(check.info_text()) <= 100 and "\n" not in check.info_text()
    warning = check.warning()
    assert warning is None or (len(warning) <= 100 and "\n" not in warning)


def test_as_dict():
    d = reading(2523.04, 2420.06, None, 2445.26).as_dict()
    assert set(d) == KEYS
    assert d == {"add_mhz": 2523.0, "mul_mhz": 2420.1, "tsc_mhz": None, "cpuinfo_mhz": 2445.3,
                 "disagreement": pytest.approx(0.0417, abs=1e-4)}


def test_check_clock_takes_the_probes_values(monkeypatch):
    monkeypatch.setattr(system, "_cpuinfo_field", lambda name: "1996.249")
    asked = []

    def probe(ms):
        asked.append(ms)
        return {"add_mhz": 2500.0, "mul_mhz": 2510.0, "tsc_mhz": 1996.0}

    assert check_clock(20.0, probe=probe) == ClockCheck(2500.0, 2510.0, 1996.0, 1996.249)
    assert asked == [20.0]


def test_check_clock_without_a_measurement(monkeypatch):
    assert check_clock(probe=lambda ms: None) is None
    monkeypatch.setattr(system, "_cpuinfo_field", lambda name: None)
    got = check_clock(probe=lambda ms: {"add_mhz": 2500.0, "mul_mhz": 2500.0, "tsc_mhz": None})
    assert got == ClockCheck(2500.0, 2500.0, None, None)


def test_native_rejects_bad_durations():
    for bad in (0.0, -1.0, 10001.0, float("nan")):
        with pytest.raises(ValueError):
            native().clock_check(bad)


@on_x86
def test_real_probe_shape_and_rough_agreement():
    for _ in range(3):
        got = native().clock_check(20.0)
        assert set(got) == {"add_mhz", "mul_mhz", "tsc_mhz"}
        assert all(isinstance(v, float) and v > 0 for v in got.values())
        check = check_clock(20.0)
        assert check is not None
        assert check.add_mhz > 0 and check.mul_mhz > 0
        if check.disagreement <= 0.10:
            return
    pytest.fail(f"add and multiply chains disagree by {check.disagreement:.1%}: {check}")


@pytest.mark.skipif(X86, reason="x86 measures the clock")
def test_real_probe_off_x86_measures_nothing():
    assert native().clock_check(1.0) is None
    assert check_clock(1.0) is None


class FakeCpus:
    """CPUs whose AES speed the test sets: a probe that answers for the pinned one."""

    def __init__(self, ns):
        self.ns = dict(ns)
        self.pinned = set(ns)
        self.history = []

    def set(self, cpus):
        self.pinned = set(cpus)
        self.history.append(set(cpus))

    def probe(self, rounds):
        (cpu,) = self.pinned if len(self.pinned) == 1 else (min(self.pinned),)
        return self.ns[cpu]


def test_cores_pin_to_the_cpu_whose_aes_is_least_shared():
    from aeskit.bench.system import Cores

    fake = FakeCpus({0: 0.2, 1: 0.3})  # cpu 1's sibling runs a neighbour's AES
    cores = Cores(probe=fake.probe, cpus={0, 1}, setter=fake.set)
    assert cores.enabled and cores.pick() == 0 and fake.pinned == {0}
    fake.ns = {0: 0.25, 1: 0.2}  # the neighbour moved
    assert cores.pick() == 1 and fake.pinned == {1}
    fake.ns = {0: 0.2, 1: 0.202}  # within 3%: not counted as shared
    assert cores.pick() == 0
    assert cores.still_unshared()
    fake.ns = {0: 0.3, 1: 0.2}  # a neighbour starts on cpu 0 during the group
    assert not cores.still_unshared()
    assert cores.as_dict() == {"candidates": [0, 1], "enabled": True,
                               "picks": {"0": 2, "1": 1}, "shared": 2, "turned": 1}
    cores.restore()
    assert fake.pinned == {0, 1}


def test_cores_do_nothing_on_one_cpu_or_without_aes():
    from aeskit.bench.system import Cores

    fake = FakeCpus({3: 0.2})
    one = Cores(probe=fake.probe, cpus={3}, setter=fake.set)
    assert not one.enabled and one.pick() is None
    none = Cores(probe=lambda rounds: None, cpus={0, 1}, setter=fake.set)
    assert not none.enabled and none.pick() is None
    none.restore()
    assert fake.history == []


def test_cores_give_up_where_affinity_is_refused():
    from aeskit.bench.system import Cores

    def refuse(cpus):
        raise PermissionError("no affinity here")

    cores = Cores(probe=lambda rounds: 0.2, cpus={0, 1}, setter=refuse)
    assert cores.enabled and cores.pick() is None and not cores.enabled
    cores.restore()  # nothing to give back, and no error
