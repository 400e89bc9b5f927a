"""The floors: pure functions of a probe, checked on made-up cycles; the probe's shape.

No timing is asserted: the hand-made probe has cycles chosen so that every
width gives a different floor (a backend that read the wrong width fails),
and the real probe is checked for its keys and types only.
"""

import pytest

import aeskit
from aeskit.bench import floor, report, targets
from aeskit._modes import MODES
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
                                           ("CFB", False), ("CTR", True), ("OCB3", True),
                                           ("OCB3", False)])
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


#: Each mode and direction, and its kind: the spec for MODE_KINDS, which reads them from the
#: descriptors (a mode added later is checked by the kinds' own rules, not listed here).
#: The one-way modes (GHASH, CMAC) are timed with encrypt=True.
SPEC_KINDS = {
    ("ECB", True): "parallel", ("ECB", False): "parallel",
    ("CBC", True): "serial", ("CBC", False): "parallel",
    ("CFB", True): "serial", ("CFB", False): "parallel",
    ("CFB8", True): "serial", ("CFB8", False): "serial",
    ("OFB", True): "serial", ("OFB", False): "serial",
    ("CTR", True): "parallel", ("CTR", False): "parallel",
    ("GHASH", True): "clmul",
    ("GCM", True): "aes+clmul", ("GCM", False): "aes+clmul",
    ("OCB3", True): "parallel", ("OCB3", False): "parallel",
    ("XTS", True): "parallel", ("XTS", False): "parallel",
    ("CMAC", True): "serial",
    ("CCM", True): "serial", ("CCM", False): "serial",
    ("EAX", True): "serial", ("EAX", False): "serial",
    ("SIV", True): "serial+parallel", ("SIV", False): "serial",
    ("GCM-SIV", True): "clmul then aes", ("GCM-SIV", False): "aes+clmul",
    ("KW", True): "serial", ("KW", False): "serial",
    ("KWP", True): "serial", ("KWP", False): "serial",
}
#: The registry's modes the bench does not time (key wrap): they have floors all the same.
UNTIMED = tuple(m.name for m in MODES if m.name not in targets.MODES)
#: AES calls per 16 bytes in a serial mode's chain.
CHAIN = {"CFB8": 16, "KW": 12, "KWP": 12}
BACKEND_OF = {"xmm": "aesni", "ymm": "vaes_avx2", "zmm": "vaes_avx512"}
#: FAKE's floors in c/B by hand, per kind, key size and width. FAKE: latency 4; AES xmm 0.5,
#: ymm 0.75, zmm 1.25; CLMUL 2.0, 2.5, 3.0; mixes 40, 72, 124: a multiply takes 0, 0.5 and
#: 1.0 AES cycles. Rounds 10 (128) and 14 (256); 1, 2 and 4 blocks per instruction.
HAND = {
    # 10 x 4 / 16, 14 x 4 / 16 on every width (x CHAIN where not 1)
    "serial": {128: {"xmm": 2.5, "ymm": 2.5, "zmm": 2.5},
               256: {"xmm": 3.5, "ymm": 3.5, "zmm": 3.5}},
    # 10 x 0.5 / 16, 10 x 0.75 / 32, 10 x 1.25 / 64; 14 x the same
    "parallel": {128: {"xmm": 0.3125, "ymm": 0.234375, "zmm": 0.1953125},
                 256: {"xmm": 0.4375, "ymm": 0.328125, "zmm": 0.2734375}},
    # 3 x 2.0 / 16, 3 x 2.5 / 32, 3 x 3.0 / 64; no rounds
    "clmul": {128: {"xmm": 0.375, "ymm": 0.234375, "zmm": 0.140625},
              256: {"xmm": 0.375, "ymm": 0.234375, "zmm": 0.140625}},
    # xmm max(5, 6) / 16 and max(7, 6) / 16; ymm (7.5 + 1.5) / 32, (10.5 + 1.5) / 32;
    # zmm (12.5 + 3) / 64, (17.5 + 3) / 64
    "aes+clmul": {128: {"xmm": 0.375, "ymm": 0.28125, "zmm": 0.2421875},
                  256: {"xmm": 0.4375, "ymm": 0.375, "zmm": 0.3203125}},
    # clmul + parallel
    "clmul then aes": {128: {"xmm": 0.6875, "ymm": 0.46875, "zmm": 0.3359375},
                       256: {"xmm": 0.8125, "ymm": 0.5625, "zmm": 0.4140625}},
    # serial + parallel
    "serial+parallel": {128: {"xmm": 2.8125, "ymm": 2.734375, "zmm": 2.6953125},
                        256: {"xmm": 3.9375, "ymm": 3.828125, "zmm": 3.7734375}},
}
HAND_BASIS = {
    "serial": "AESENC latency", "parallel": "{w} AES throughput",
    "clmul": "{w} CLMUL throughput", "aes+clmul": "{w} AES + CLMUL mix",
    "clmul then aes": "{w} CLMUL throughput + {w} AES throughput, two passes",
    "serial+parallel": "AESENC latency + {w} AES throughput",
}


def test_the_table_holds_every_mode_and_direction_with_its_kind():
    assert {(m, e): floor.kind_of(m, e) for m, e in SPEC_KINDS} == SPEC_KINDS
    directions = {"enc": True, "dec": False, None: True}
    assert {(m, directions[d]) for m, d in floor.MODE_KINDS} >= set(SPEC_KINDS)
    assert {m for m, _ in floor.MODE_KINDS} == {m.name for m in MODES} | {"GHASH"}
    for mode in {m for m, _ in floor.MODE_KINDS}:  # one direction, or both: not both kinds of key
        assert ((mode, None) in floor.MODE_KINDS) != ((mode, "enc") in floor.MODE_KINDS), mode
    assert set(floor.KIND_TEXT) == set(floor.MODE_KINDS.values()) == set(HAND)
    assert all(0 < len(text) <= 90 for text in floor.KIND_TEXT.values())


@pytest.mark.parametrize("mode", targets.MODES + UNTIMED)
def test_every_mode_has_a_kind_in_each_of_its_directions(mode):
    one_way = mode in targets.ONE_WAY_MODES
    for encrypt in (True,) if one_way else (True, False):
        got = floor.kind_of(mode, encrypt)
        assert got in floor.KIND_TEXT
        assert FAKE.floor(Operation(mode, encrypt, 128), "aesni").kind == got


def test_a_mode_without_a_kind_raises_whatever_the_backend():
    for backend in floor.FLOOR_BACKENDS + ("portable",):
        with pytest.raises(ValueError, match="no floor kind for NOPE enc.*modes/facts.h"):
            FAKE.floor(Operation("NOPE", True, 128), backend)
    with pytest.raises(ValueError, match="GCMSIV dec"):
        floor.kind_of("GCMSIV", False)  # an alias: the bench's name is the canonical GCM-SIV
    with pytest.raises(ValueError):
        floor.kind_of("ctr", True)


@pytest.mark.parametrize("mode, encrypt", sorted(SPEC_KINDS))
def test_each_mode_gets_its_kinds_floor(mode, encrypt):
    kind = SPEC_KINDS[mode, encrypt]
    for bits in (128, 256):
        for width, backend in BACKEND_OF.items():
            got = FAKE.floor(Operation(mode, encrypt, bits), backend)
            chain = CHAIN.get(mode, 1) if kind == "serial" else 1
            assert got.cycles_per_byte == pytest.approx(HAND[kind][bits][width] * chain), \
                (bits, backend)
            assert got.kind == kind
            if chain == 1:
                assert got.basis == HAND_BASIS[kind].format(w=width)


def test_key_wrap_chains_twelve_aes_per_16_bytes():
    for backend in floor.FLOOR_BACKENDS:
        for encrypt in (True, False):
            got = FAKE.floor(Operation("KW", encrypt, 128), backend)
            assert got.cycles_per_byte == pytest.approx(30.0)  # 6 x 2 half blocks x 10 x 4 / 16
            assert got.basis == "AESENC latency, 12 per 16 bytes"
            assert cpb(Operation("KW", encrypt, 256), backend) == pytest.approx(42.0)
        cfb8 = FAKE.floor(Operation("CFB8", True, 128), backend)
        assert cfb8.basis == "AESENC latency, per byte"


def test_the_combined_kinds_are_their_parts():
    for bits in (128, 192, 256):
        for backend in floor.FLOOR_BACKENDS:
            serial, parallel = (cpb(Operation("CBC", True, bits), backend),
                                cpb(Operation("CTR", True, bits), backend))
            clmul = cpb(Operation("GHASH", True, bits), backend)
            assert cpb(Operation("SIV", True, bits), backend) == pytest.approx(serial + parallel)
            two = cpb(Operation("GCM-SIV", True, bits), backend)
            assert two == pytest.approx(clmul + parallel)
            one = cpb(Operation("GCM-SIV", False, bits), backend)
            assert one == pytest.approx(cpb(Operation("GCM", True, bits), backend))
            assert two > one, (bits, backend)
            # decryption hashes as CTR runs: the chain alone, like CCM's and EAX's
            assert cpb(Operation("SIV", False, bits), backend) == pytest.approx(serial)


def test_combined_kinds_need_both_figures():
    no_clmul = UnitProbe(4.0, {"xmm": 0.5, "ymm": 0.75}, {"xmm": 2.0})
    assert no_clmul.floor(Operation("GCM-SIV", True, 128), "vaes_avx2") is None
    assert no_clmul.floor(Operation("SIV", True, 128), "vaes_avx2").cycles_per_byte == \
        pytest.approx(2.5 + 0.234375)
    narrow = UnitProbe(4.0, {"xmm": 0.5}, {"xmm": 2.0, "ymm": 2.5})
    assert narrow.floor(Operation("SIV", True, 128), "vaes_avx2") is None
    assert narrow.floor(Operation("GCM-SIV", True, 128), "vaes_avx2") is None
    assert cpb(Operation("CCM", True, 128), "vaes_avx2", narrow) == pytest.approx(2.5)
    # GCM-SIV decryption without the mix: the AES part alone, as GCM's
    got = narrow.floor(Operation("GCM-SIV", False, 128), "aesni")
    assert got.cycles_per_byte == pytest.approx(0.3125) and got.basis == "xmm AES throughput"
    assert got.kind == "aes+clmul"


def test_no_floor_without_a_width_or_its_figure():
    op = Operation("CTR", True, 128)
    assert FAKE.floor(op, "portable") is None
    assert FAKE.floor(op, "no_such_backend") is None
    narrow = UnitProbe(latency=4.0, aes={"xmm": 0.5}, clmul={})
    assert cpb(op, "aesni", narrow) == pytest.approx(0.3125)
    assert narrow.floor(op, "vaes_avx2") is None
    assert narrow.floor(Operation("GHASH", True, 128), "aesni") is None
    assert cpb(Operation("CBC", True, 128), "vaes_avx2", narrow) == pytest.approx(2.5)


@pytest.mark.parametrize("read, taken", [(4.0, 4.0), (4.27, 4.0), (3.9, 4.0), (4.34, 4.0),
                                         (4.5, 4.5), (6.7, 7.0), (6.62, 6.62), (2.4, 2.4)])
def test_latency_is_taken_as_whole_cycles_near_one(read, taken):
    got = floor.from_native((read, 0.5), dict.fromkeys(PROBE_KEYS))
    assert got.latency == taken


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
    text = "\n".join(report._floor_text(Run(meta, rows, [], [])))
    assert "AES xmm 0.50, ymm 0.75, zmm 1.25" in text
    assert "carry-less multiply xmm 2.00, ymm 2.50, zmm 3.00" in text
    assert "vaes_avx512 zmm (4 per instruction)" in text and "aesni xmm (1 per instruction)" in text
    assert "vaes_avx2" not in text  # not in this run
    assert f"clmul (GHASH): {floor.KIND_TEXT['clmul']}" in text
    assert f"aes+clmul (GCM enc): {floor.KIND_TEXT['aes+clmul']}" in text
    assert "24 multiplies interleaved xmm 40.00, ymm 72.00, zmm 124.00" in text
    table = report.render_plain(report.table_lines(rows))
    ghash_512 = next(line for line in table.splitlines() if line.strip().startswith("GHASH"))
    assert f"{3 * 3.0 / 4 / 16:.3f}" in ghash_512  # 0.141, zmm
    assert table.count("x floor") == 2  # not on the portable block
    doc = report.to_json(Run({}, rows, [], []))
    by = {(r["backend"], r["mode"]): r for r in doc["slope"]}
    assert by[("vaes_avx512", "GHASH")]["floor_basis"] == "zmm CLMUL throughput"
    assert by[("aesni", "GCM")]["floor_cycles_per_byte"] == pytest.approx(0.375)  # 3 x 2.0
    assert by[("vaes_avx512", "GCM")]["floor_basis"] == "zmm AES + CLMUL mix"
    assert by[("portable", "GCM")]["floor_basis"] is None


def test_every_kind_is_one_of_the_kinds_and_has_its_text():
    assert set(floor.MODE_KINDS.values()) == set(floor.KINDS)
    assert set(floor.KIND_TEXT) == set(floor.KINDS)
