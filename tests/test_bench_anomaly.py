"""The anomaly check on synthetic speed-by-length curves: no timing involved."""

from aeskit.bench import find_anomalies
from aeskit.bench.anomaly import MIN_LENGTH, level_of

CACHES = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}
LENGTHS = (16, 64, 256, 1024, 4096, 8 << 10, 16 << 10, 24 << 10, 64 << 10, 256 << 10,
           512 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20)


def curve(speed_at):
    return [(n, speed_at(n)) for n in LENGTHS]


def test_flat_curve_passes():
    assert find_anomalies(curve(lambda n: 5000.0), CACHES) == []


def test_rising_then_flat_passes():
    # fixed cost per call spread over more bytes: speed rises with length
    assert find_anomalies(curve(lambda n: 8000.0 * n / (n + 300)), CACHES) == []


def test_injected_ten_percent_drop_is_flagged():
    pts = curve(lambda n: 5000.0 if n < 16 << 10 else 4500.0 if n <= 32 << 10 else 5000.0)
    found = find_anomalies(pts, CACHES)
    assert len(found) == 1
    a = found[0]
    assert a.level == "L1d"
    assert a.from_size == 8 << 10 and a.to_size == 16 << 10
    assert abs(a.drop - 0.10) < 1e-9


def test_drop_below_threshold_passes():
    pts = curve(lambda n: 5000.0 if n < 16 << 10 else 4800.0)  # 4%
    assert find_anomalies(pts, CACHES) == []


def test_drop_between_levels_is_expected():
    # data spilling out of L2 into L3 and then memory: slower, and that is fine
    by_level = {"L1d": 5000.0, "L2": 5000.0, "L3": 4000.0, "memory": 2500.0}
    assert find_anomalies(curve(lambda n: by_level[level_of(n, CACHES)]), CACHES) == []


def test_seeds_ocb_case_gradual_fall_within_l2_is_flagged():
    # libgcrypt's OCB encryption on Haswell: fine to 32 KiB, then sliding down
    speeds = {64 << 10: 2600.0, 256 << 10: 2500.0, 512 << 10: 2400.0}
    found = find_anomalies(curve(lambda n: speeds.get(n, 2600.0)), CACHES)
    assert [(a.level, a.from_size, a.to_size) for a in found] == [("L2", 64 << 10, 512 << 10)]
    assert 0.076 < found[0].drop < 0.077


def test_short_lengths_are_left_to_the_slope_table():
    # serial modes in a tight loop: short calls overlap and look faster
    pts = curve(lambda n: 3000.0 if n < MIN_LENGTH else 1400.0)
    assert find_anomalies(pts, CACHES) == []
    assert find_anomalies(pts, CACHES, min_length=16) != []


def test_separate_output_buffer_doubles_the_working_set():
    pts = [(4 << 10, 5000.0), (12 << 10, 4000.0)]
    assert [a.level for a in find_anomalies(pts, CACHES)] == ["L1d"]
    # 24 KiB of working set for 12 KiB of data: past half of L1d, so L2
    assert find_anomalies(pts, CACHES, bytes_per_length=2) == []


def test_level_of():
    # a level holds what fits in half of it
    assert level_of(16 << 10, CACHES) == "L1d"
    assert level_of((16 << 10) + 1, CACHES) == "L2"
    assert level_of(1 << 20, CACHES) == "L3"
    assert level_of(32 << 20, CACHES) == "memory"


def test_ignores_unusable_points():
    pts = [(8 << 10, 5000.0), (16 << 10, float("inf")), (24 << 10, 0.0), (30 << 10, 4990.0)]
    assert find_anomalies(pts, CACHES) == []
