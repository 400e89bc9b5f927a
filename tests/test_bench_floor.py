"""The floors: pure functions of a probe, checked on made-up cycles; the probe's shape.

No timing is asserted: the hand-made probe has cycles chosen so that every
width gives a different floor (a backend that read the wrong width fails),
and the real probe is checked for its keys and types only.
"""

import pytest

import aeskit
from aeskit.bench import floor, report
from aeskit.bench.floor import UnitProbe
from aeskit.bench.results import Run, SlopeRow, Who
from aeskit.bench.stats import Fit
from aeskit.bench.system import ClockReading, native
from aeskit.bench.targets import Operation
from conftest import EMULATED

FAKE = UnitProbe(latency=4.0, aes={"xmm": 0.5, "ymm": 0.75, "zmm": 1.25},
                 clmul={"xmm": 2.0, "ymm": 2.5, "zmm": 3.0},
                 gcm_mix={"xmm": 40.0, "ymm": 72.0, "zmm": 124.0})
PROBE_KEYS = {"vaes_ymm", "vaes_zmm", "clmul_xmm", "clmul_ymm", "clmul_zmm",
              "gcm_mix_xmm", "gcm_mix_ymm", "gcm_mix_zmm"}


def cpb(op, backend, probe=FAKE):
    got = probe.floor(op, backend)
    return None if got is None else got.cycles_per_byte


@pytest.mark.parametrize("mode, encrypt", [("ECB", True), ("ECB", False), ("CBC", False),
                                           ("CFB", False), ("CTR", True), ("OCB", True),
                                           ("OCB", False)])
def test_parallel_modes_use_the_backends_width(mode, encrypt):
    for bits, rounds in ((128, 10), (192, 12), (256, 14)):
        op = Operation(mode, encrypt, bits)
        assert cpb(op, "aesni") == pytest.approx(rounds * 0.5 / 16)
        assert cpb(op, "vaes_avx2") == pytest.approx(rounds * 0.75 / 2 / 16)
        assert cpb(op, "vaes_avx512") == pytest.approx(rounds * 1.25 / 4 / 16)
    assert FAKE.floor(Operation(mode, encrypt, 128), "vaes_avx512").basis == "zmm AES throughput"
    assert FAKE.floor(Operation(mode, encrypt, 128), "aesni").basis == "xmm AES throughput"


@pytest.mark.parametrize("mode, encrypt", [("CBC", True), ("CFB", True), ("OFB", True),
                                           ("OFB", False)])
def test_serial_modes_are_latency_bound_on_every_width(mode, encrypt):
    for backend in floor.FLOOR_BACKENDS:
        assert cpb(Operation(mode, encrypt, 128), backend) == pytest.approx(10 * 4.0 / 16)
        assert cpb(Operation(mode, encrypt, 256), backend) == pytest.approx(14 * 4.0 / 16)
        assert FAKE.floor(Operation(mode, encrypt, 128), backend).basis == "AESENC latency"


def test_cfb8_pays_the_latency_per_byte():
    for backend in floor.FLOOR_BACKENDS:
        assert cpb(Operation("CFB8", True, 128), backend) == pytest.approx(40.0)
        assert cpb(Operation("CFB8", False, 192), backend) == pytest.approx(48.0)


def test_gcm_adds_what_its_multiplies_take_from_aes():
    """FAKE's mixes: xmm 40 = 80 x 0.5 (multiplies free: the multiplier bounds, 3 x 2.0),
    ymm 72 = 80 x 0.75 + 24 x 0.5, zmm 124 = 80 x 1.25 + 24 x 1.0."""
    for encrypt in (True, False):
        for bits, rounds in ((128, 10), (256, 14)):
            op = Operation("GCM", encrypt, bits)
            assert cpb(op, "aesni") == pytest.approx(max(rounds * 0.5, 3 * 2.0) / 16)
            assert cpb(op, "vaes_avx2") == pytest.approx((rounds * 0.75 + 3 * 0.5) / 2 / 16)
            assert cpb(op, "vaes_avx512") == pytest.approx((rounds * 1.25 + 3 * 1.0) / 4 / 16)
        assert FAKE.floor(op, "vaes_avx512").basis == "zmm AES + CLMUL mix"
    # a mix faster than the rounds alone (noise) takes nothing from AES
    quick = UnitProbe(4.0, {"zmm": 1.0}, {"zmm": 0.1}, {"zmm": 70.0})
    assert cpb(Operation("GCM", True, 128), "vaes_avx512", quick) == pytest.approx(10 / 4 / 16)
    # no mix measured: the AES part alone
    no_mix = UnitProbe(4.0, {"zmm": 1.0}, {"zmm": 2.0})
    got = no_mix.floor(Operation("GCM", True, 128), "vaes_avx512")
    assert got.cycles_per_byte == pytest.approx(10 / 4 / 16)
    assert got.basis == "zmm AES throughput"


def test_ghash_is_three_multiplies_per_block_at_the_backends_width():
    for bits in (128, 256):  # the key size does not enter
        op = Operation("GHASH", True, bits)
        assert cpb(op, "aesni") == pytest.approx(3 * 2.0 / 1 / 16)
        assert cpb(op, "vaes_avx2") == pytest.approx(3 * 2.5 / 2 / 16)
        assert cpb(op, "vaes_avx512") == pytest.approx(3 * 3.0 / 4 / 16)
    assert FAKE.floor(Operation("GHASH", True, 128), "vaes_avx2").basis == "ymm CLMUL throughput"


def test_no_floor_without_a_width_or_its_figure():
    op = Operation("CTR", True, 128)
    assert FAKE.floor(op, "portable") is None
    assert FAKE.floor(op, "no_such_backend") is None
    narrow = UnitProbe(latency=4.0, aes={"xmm": 0.5}, clmul={})
    assert cpb(op, "aesni", narrow) == pytest.approx(0.3125)
    assert narrow.floor(op, "vaes_avx2") is None
    assert narrow.floor(Operation("GHASH", True, 128), "aesni") is None
    assert cpb(Operation("CBC", True, 128), "vaes_avx2", narrow) == pytest.approx(2.5)


def test_from_native_and_as_dict():
    got = floor.from_native((4.0, 0.5), {"vaes_ymm": 0.5, "vaes_zmm": None, "clmul_xmm": 2.0,
                                         "clmul_ymm": 2.25, "clmul_zmm": None,
                                         "gcm_mix_xmm": 54.0, "gcm_mix_ymm": 53.0,
                                         "gcm_mix_zmm": None})
    assert got == UnitProbe(4.0, {"xmm": 0.5, "ymm": 0.5}, {"xmm": 2.0, "ymm": 2.25},
                            {"xmm": 54.0, "ymm": 53.0})
    assert got.as_dict() == {
        "aesenc_latency_cycles": 4.0, "aesenc_cycles_per_instruction": 0.5,
        "vaes_ymm_cycles_per_instruction": 0.5, "vaes_zmm_cycles_per_instruction": None,
        "clmul_xmm_cycles_per_instruction": 2.0, "clmul_ymm_cycles_per_instruction": 2.25,
        "clmul_zmm_cycles_per_instruction": None, "gcm_mix_xmm_cycles": 54.0,
        "gcm_mix_ymm_cycles": 53.0, "gcm_mix_zmm_cycles": None}
    assert floor.from_native(None, dict.fromkeys(PROBE_KEYS)) is None


def test_widths():
    assert {name: (w.name, w.blocks) for name, w in floor.WIDTHS.items()} == {
        "aesni": ("xmm", 1), "vaes_avx2": ("ymm", 2), "vaes_avx512": ("zmm", 4)}
    assert set(floor.FLOOR_BACKENDS) == set(floor.WIDTHS)


def test_probe_shape_follows_the_cpu_features():
    got = native().unit_probe()
    assert set(got) == PROBE_KEYS
    feats = aeskit.cpu_features()
    need = {"vaes_ymm": ("vaes", "avx2"), "vaes_zmm": ("vaes", "avx512f"),
            "clmul_xmm": ("pclmulqdq",), "clmul_ymm": ("vpclmulqdq", "avx"),
            "clmul_zmm": ("vpclmulqdq", "avx512f"), "gcm_mix_xmm": ("aes", "pclmulqdq"),
            "gcm_mix_ymm": ("vaes", "vpclmulqdq", "avx2"),
            "gcm_mix_zmm": ("vaes", "vpclmulqdq", "avx512f")}
    for key, bits in need.items():
        if all(feats.get(b) for b in bits):
            assert isinstance(got[key], float) and got[key] > 0, key
        else:
            assert got[key] is None, key
    aes = native().aes_probe()
    if feats["aes"]:
        assert isinstance(aes, tuple) and len(aes) == 2 and all(v > 0 for v in aes)
    else:
        assert aes is None


def test_every_available_backend_with_a_width_gets_floors_here():
    probe = floor.probe(native())
    if not aeskit.cpu_features()["aes"]:
        assert probe is None
        return
    # an emulated backend (test-only emulate_wide build) has no instruction to probe
    for backend in set(aeskit.backends().available) & set(floor.FLOOR_BACKENDS) - set(EMULATED):
        for op in (Operation("CTR", True, 128), Operation("GHASH", True, 128),
                   Operation("CBC", True, 256)):
            got = probe.floor(op, backend)
            assert got is not None and got.cycles_per_byte > 0, (backend, op)


def _row(op, backend, floor_cpb, basis):
    return SlopeRow(op, Who("aeskit", backend, "kernel", True), Fit(0.05, 10.0, 1.0, 2),
                    [(16, 10.8), (4096, 214.8)], ClockReading(3000.0, 0.0, "auto"), 1,
                    floor=floor_cpb, floor_basis=basis)


def test_report_names_each_backends_width_and_shows_the_floor():
    rows = []
    for backend in ("vaes_avx512", "aesni", "portable"):
        for op in (Operation("GHASH", True, 128), Operation("GCM", True, 128)):
            got = FAKE.floor(op, backend)
            rows.append(_row(op, backend, got and got.cycles_per_byte, got and got.basis))
    meta = {"aes_probe": FAKE.as_dict(),
            "floor_widths": {n: {"width": w.name, "blocks_per_instruction": w.blocks}
                             for n, w in floor.WIDTHS.items()}}
    text = report.render_plain(report._floor_lines(Run(meta, rows, [], [])))
    assert "AES xmm 0.50, ymm 0.75, zmm 1.25" in text
    assert "carry-less multiply xmm 2.00, ymm 2.50, zmm 3.00" in text
    assert "vaes_avx512 zmm (4 per instruction)" in text and "aesni xmm (1 per instruction)" in text
    assert "vaes_avx2" not in text  # not in this run
    assert "GHASH: 3 (Karatsuba)" in text and "GCM: (rounds x AES cycles + 3 x" in text
    assert "24 multiplies interleaved xmm 40.00, ymm 72.00, zmm 124.00" in text
    table = report.render_plain(report.slope_lines(rows))
    ghash_512 = next(line for line in table.splitlines() if line.strip().startswith("GHASH"))
    assert f"{3 * 3.0 / 4 / 16:.3f}" in ghash_512  # 0.141, zmm
    assert table.count("floor c/B") == 2  # not on the portable block
    doc = report.to_json(Run({}, rows, [], []))
    by = {(r["backend"], r["mode"]): r for r in doc["slope"]}
    assert by[("vaes_avx512", "GHASH")]["floor_basis"] == "zmm CLMUL throughput"
    assert by[("aesni", "GCM")]["floor_cycles_per_byte"] == pytest.approx(0.375)  # 3 x 2.0
    assert by[("vaes_avx512", "GCM")]["floor_basis"] == "zmm AES + CLMUL mix"
    assert by[("portable", "GCM")]["floor_basis"] is None
