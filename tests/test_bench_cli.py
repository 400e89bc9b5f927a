"""``aeskit bench`` end to end on tiny runs, the JSON schema, the CSV layout, the views.

Tiny sizes and one repetition keep each run to about a second. Nothing here
asserts a timing: numbers are checked for type and presence, never value.
"""

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import types

import pytest

import aeskit
from aeskit import cli
from aeskit._modes import MODES
from aeskit.bench import command, paths, targets
from aeskit.bench.plot import text_plot
from aeskit.bench.report import SCHEMA
from conftest import EMULATED

TINY = ["--key-bits", "128", "--backend", "auto", "--repetitions", "1",
        "--slope-range", "16:208:64"]
HAVE_CRYPTOGRAPHY = importlib.util.find_spec("cryptography") is not None
HAVE_PYCRYPTODOME = importlib.util.find_spec("Crypto") is not None


def bench(*args, check=True):
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "aeskit", "bench", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


NUMBER = (int, float)
OPTIONAL_NUMBER = (int, float, type(None))
IDENT = {"algo": str, "key_bits": int, "mode": str, "direction": (str, type(None)), "impl": str,
         "backend": str, "layer": str, "in_place": bool}
SLOPE_ROW = {**IDENT, "ns_per_byte": OPTIONAL_NUMBER, "mib_per_s": OPTIONAL_NUMBER,
             "cycles_per_byte": OPTIONAL_NUMBER, "ns_per_call": OPTIONAL_NUMBER, "r2": NUMBER,
             "mhz": OPTIONAL_NUMBER, "mhz_diff": OPTIONAL_NUMBER, "clock_attempts": int,
             "vs": dict, "vs_at_64_bytes": dict, "points": list, "bulk": dict,
             "direct_ns_per_call": dict, "below_floor": bool,
             "self_check": (dict, type(None))}
SELF_CHECK = {"disagrees": bool, "difference": OPTIONAL_NUMBER, "retimed": bool,
              "comparisons": list, "before_retime": (list, type(None))}
COMPARISON = {"source": str, "bytes": int, "predicted_ns": NUMBER, "timed_ns": NUMBER,
              "difference": OPTIONAL_NUMBER}
BULK = {"ns_per_byte": OPTIONAL_NUMBER, "mib_per_s": OPTIONAL_NUMBER,
        "cycles_per_byte": OPTIONAL_NUMBER, "from_direct_16k": bool,
        "fit": (dict, type(None)), "problem": (str, type(None))}
LENGTH_ROW = {**IDENT, "mhz": OPTIONAL_NUMBER, "points": list}
LENGTH_POINT = {"bytes": int, "ns_per_call": NUMBER, "mib_per_s": OPTIONAL_NUMBER,
                "cycles_per_byte": OPTIONAL_NUMBER}
SECTOR_ROW = {**IDENT, "sector_bytes": int, "mhz": OPTIONAL_NUMBER, "points": list,
              "skipped_bytes": list}
SECTOR_POINT = {"sectors": int, "bytes": int, "ns_per_call": NUMBER,
                "mib_per_s": OPTIONAL_NUMBER}
ANOMALY = {**IDENT, "level": str, "from_bytes": int, "to_bytes": int,
           "from_mib_per_s": NUMBER, "to_mib_per_s": NUMBER, "drop": NUMBER}
META = {"started": str, "duration_s": NUMBER, "noise": dict, "versions": dict,
        "platform": dict, "cpu": dict, "backends": dict, "clock": dict, "settings": dict,
        "self_check": dict}
CPU = {"model": str, "flags": list, "features": dict, "caches": dict, "caches_source": str}
CLOCK = {"source": str, "mhz": OPTIONAL_NUMBER, "tolerance": NUMBER}


def check_shape(obj, shape, where):
    assert isinstance(obj, dict), where
    for key, kind in shape.items():
        assert key in obj, f"{where}: no {key!r}"
        assert isinstance(obj[key], kind), f"{where}.{key}: {type(obj[key]).__name__}"
        if kind in (int, NUMBER):
            assert not isinstance(obj[key], bool), f"{where}.{key} is a bool"


def check_schema(doc):
    assert doc["schema"] == SCHEMA
    check_shape(doc["meta"], META, "meta")
    check_shape(doc["meta"]["cpu"], CPU, "meta.cpu")
    check_shape(doc["meta"]["clock"], CLOCK, "meta.clock")
    assert doc["meta"]["clock"]["source"] in ("auto", "user", "none")
    assert doc["meta"]["versions"]["aeskit"] == aeskit.__version__
    bulk_problem = {(r["impl"], r["backend"], r["layer"], r["mode"], r["direction"],
                     r["key_bits"]): r["bulk"]["problem"] for r in doc["slope"]}
    for row in doc["slope"]:
        check_shape(row, SLOPE_ROW, "slope[]")
        if row["mode"] == "GHASH":  # one way
            assert row["direction"] is None
        else:
            assert row["direction"] in ("enc", "dec")
        assert row["layer"] in ("kernel", "api")
        assert len(row["points"]) >= 2
        for p in row["points"]:
            check_shape(p, {"bytes": int, "ns_per_call": NUMBER}, "slope[].points[]")
        check_shape(row["bulk"], BULK, "slope[].bulk")
        check = row["self_check"]
        # checked wherever the bulk line is the row's figure; where it fits poorly,
        # only a retime that left it so is recorded, with nothing to compare
        if row["bulk"]["problem"] is None and not doc["meta"]["interrupted"]:
            assert check is not None
        elif check is not None:
            assert check["retimed"] and check["comparisons"] == []
        if check is not None:
            check_shape(check, SELF_CHECK, "slope[].self_check")
            for c in check["comparisons"] + (check["before_retime"] or []):
                check_shape(c, COMPARISON, "slope[].self_check.comparisons[]")
                assert c["source"] in ("direct", "by-length", "separate")
                assert c["bytes"] in doc["meta"]["self_check"]["sizes"]
        for peer, ratio in row["vs"].items():
            assert peer in ("cryptography", "pycryptodome")
            check_shape(ratio, {"ratio": NUMBER, "basis": str}, "slope[].vs[]")
            assert ratio["basis"] in ("bulk", "16K")
            # a ratio never comes from a poor line, aeskit's or the peer's
            peer_problem = next(v for k, v in bulk_problem.items() if k[0] == peer
                                and k[3:] == (row["mode"], row["direction"], row["key_bits"]))
            good = row["bulk"]["problem"] is None and peer_problem is None
            assert (ratio["basis"] == "bulk") == good
    for row in doc["by_length"]:
        check_shape(row, LENGTH_ROW, "by_length[]")
        for p in row["points"]:
            check_shape(p, LENGTH_POINT, "by_length[].points[]")
    for row in doc["sectors"]:
        check_shape(row, SECTOR_ROW, "sectors[]")
        assert row["mode"] == "XTS" and row["direction"] in ("enc", "dec")
        for p in row["points"]:
            check_shape(p, SECTOR_POINT, "sectors[].points[]")
            assert p["bytes"] == p["sectors"] * row["sector_bytes"]
    for a in doc["anomalies"]:
        check_shape(a, ANOMALY, "anomalies[]")


def test_text_run():
    proc = bench(*TINY, "--modes", "CTR,ECB", "--peers", "none")
    out = proc.stdout
    backend = aeskit.backends().default
    for text in (f"AES-128 aeskit {backend} kernel", f"AES-128 aeskit {backend} api",
                 "CTR enc", "CTR dec", "ECB enc", "ECB dec", "bulk, 16-64 KiB",
                 "short, 16 B-4 KiB", "MiB/s", "c/B", "ns/call", "summary, AES-128"):
        assert text in out, text
    assert "benchmark done" in proc.stderr  # progress goes to stderr, not stdout
    assert "left]" not in out and "peer" not in out  # no peers: nothing says so
    assert max(len(line) for line in out.splitlines()) <= 100


def test_json_run_with_views():
    peers = ["--peers", "cryptography"] if HAVE_CRYPTOGRAPHY else ["--peers", "none"]
    proc = bench(*TINY, "--modes", "CFB8,CBC", "--layer", "both", *peers,
                 "--sizes", "16,64,4K,8K", "--cpu-mhz", "3000", "--unaligned", "5", "--json")
    doc = json.loads(proc.stdout)  # stdout is the JSON and nothing else
    check_schema(doc)
    meta = doc["meta"]
    assert meta["clock"] == {"source": "user", "mhz": 3000.0, "tolerance": 0.02}
    assert meta["settings"]["unaligned"] == 5
    assert meta["settings"]["lengths"] == [16, 64, 4096, 8192]
    impls = {(r["impl"], r["layer"]) for r in doc["slope"]}
    want = {("aeskit", "kernel"), ("aeskit", "api")}
    if HAVE_CRYPTOGRAPHY:
        want.add(("cryptography", "api"))
    assert impls == want
    ops = {(r["mode"], r["direction"]) for r in doc["slope"]}
    assert ops == {(m, d) for m in ("CFB8", "CBC") for d in ("enc", "dec")}
    for r in doc["slope"]:
        assert r["mhz"] == 3000.0 and r["key_bits"] == 128
        if r["impl"] == "aeskit":
            assert r["backend"] == aeskit.backends().default
            # a ratio needs both slopes positive, which 4 sizes and 1 repetition
            # do not promise: only its key is checked
            assert set(r["vs"]) <= {"cryptography"}
        # ECB/CBC take whole blocks: every size a multiple of 16
        if r["mode"] == "CBC":
            assert all(p["bytes"] % 16 == 0 for p in r["points"])
    assert len(doc["by_length"]) == len(doc["slope"])
    for r in doc["by_length"]:
        assert [p["bytes"] for p in r["points"]] == [16, 64, 4096, 8192]


def test_aead_text_run():
    peers = ["--peers", "cryptography"] if HAVE_CRYPTOGRAPHY else ["--peers", "none"]
    proc = bench(*TINY, "--modes", "GCM,OCB", *peers, "--sizes", "16,4K", "--verbose")
    out = proc.stdout
    backend = aeskit.backends().default
    for text in (f"AES-128 aeskit {backend} kernel", f"AES-128 aeskit {backend} api",
                 "GCM enc", "GCM dec", "OCB3 enc", "OCB3 dec", "16-byte tag",
                 "AES-128 GCM enc: MiB/s by data length",
                 "AES-128 OCB3 dec: MiB/s by data length"):
        assert text in " ".join(out.split()), text  # the method text is wrapped
    assert max(len(line) for line in out.splitlines()) <= 100
    if HAVE_CRYPTOGRAPHY:
        assert "AES-128 cryptography" in out


def test_aead_json_run():
    installed = [name for name, have in (("cryptography", HAVE_CRYPTOGRAPHY),
                                         ("pycryptodome", HAVE_PYCRYPTODOME)) if have]
    peers = ["--peers", ",".join(installed) or "none"]
    proc = bench(*TINY, "--modes", "ctr,gcm,ocb,ccm", "--backend", "all", *peers,
                 "--sizes", "16,100", "--json")
    doc = json.loads(proc.stdout)
    check_schema(doc)
    assert doc["meta"]["settings"]["modes"] == ["CTR", "GCM", "OCB3", "CCM"]
    ops = {(r["mode"], r["direction"]) for r in doc["slope"]}
    assert ops == {(m, d) for m in ("CTR", "GCM", "OCB3", "CCM") for d in ("enc", "dec")}
    # CCM's peers: both libraries have it
    assert {r["impl"] for r in doc["slope"] if r["mode"] == "CCM"} == {"aeskit", *installed}
    layers = {(r["backend"], r["layer"]) for r in doc["slope"] if r["impl"] == "aeskit"}
    assert layers == {(b, la) for b in aeskit.backends().available for la in ("kernel", "api")}
    for r in doc["slope"] + doc["by_length"]:
        if r["mode"] in ("GCM", "OCB3", "CCM") and r["impl"] == "aeskit" and r["layer"] == "api":
            # an AEAD decryption reads a kept ciphertext into a second buffer
            assert r["in_place"] == (r["direction"] == "enc")
    for r in doc["slope"]:
        if (r["mode"] in ("GCM", "OCB3", "CCM") and r["impl"] == "aeskit"
                and r["backend"] == "aesni"):
            assert isinstance(r["floor_cycles_per_byte"], (int, float))
    assert len(doc["by_length"]) == len(doc["slope"])


# A floor is the CPU's own instruction throughput: an emulated backend (a test-only
# emulate_wide build) has none, like portable.
FLOORED = [b for b in aeskit.backends().available
           if b in ("aesni", "vaes_avx2", "vaes_avx512") and b not in EMULATED]


@pytest.mark.skipif(not FLOORED, reason="no backend with a floor on this CPU")
def test_floors_per_backend_in_json_and_text():
    args = [*TINY, "--modes", "GHASH,CTR,OFB,GCM", "--backend", "all", "--layer", "kernel",
            "--peers", "none"]
    doc = json.loads(bench(*args, "--json").stdout)
    check_schema(doc)
    probe = doc["meta"]["aes_probe"]
    assert set(probe) == {"aesenc_latency_cycles", "aesenc_cycles_per_instruction",
                          "vaes_ymm_cycles_per_instruction", "vaes_zmm_cycles_per_instruction",
                          "clmul_xmm_cycles_per_instruction", "clmul_ymm_cycles_per_instruction",
                          "clmul_zmm_cycles_per_instruction", "gcm_mix_xmm_cycles",
                          "gcm_mix_ymm_cycles", "gcm_mix_zmm_cycles"}
    widths = doc["meta"]["floor_widths"]
    assert widths["vaes_avx512"] == {"width": "zmm", "blocks_per_instruction": 4}
    for r in doc["slope"]:
        if r["backend"] in FLOORED:
            assert isinstance(r["floor_cycles_per_byte"], float), (r["backend"], r["mode"])
            assert isinstance(r["floor_basis"], str)
            if r["mode"] == "OFB":
                assert r["floor_basis"] == "AESENC latency"
            elif r["mode"] == "GCM":  # the mix is measured wherever the width's AES is
                assert r["floor_basis"] == f"{widths[r['backend']]['width']} AES + CLMUL mix"
            else:
                width = widths[r["backend"]]["width"]
                unit = "CLMUL" if r["mode"] == "GHASH" else "AES"
                assert r["floor_basis"] == f"{width} {unit} throughput"
        elif r["backend"] not in EMULATED:  # portable; an emulated one has OFB's (aesni's)
            assert r["floor_cycles_per_byte"] is None and r["floor_basis"] is None
    out = bench(*args, "--verbose").stdout
    flat = " ".join(out.split())  # the method text is wrapped
    assert "floor c/B by the backend's width:" in flat
    for b in FLOORED:
        assert f"{b} {widths[b]['width']} ({widths[b]['blocks_per_instruction']} per" in flat
        block = out.split(f"aeskit {b} kernel", 1)[1].split("\n\n", 1)[0]
        assert "floor" in block and "x floor" in block
    assert "floor c/B by" not in bench(*args).stdout  # the method is for --verbose


def test_ghash_runs_once_in_one_direction():
    peers = ["--peers", "cryptography"] if HAVE_CRYPTOGRAPHY else ["--peers", "none"]
    args = [*TINY, "--key-bits", "192,256", "--modes", "GHASH,CTR", *peers, "--sizes", "16,100"]
    doc = json.loads(bench(*args, "--json").stdout)
    check_schema(doc)
    ghash = [r for r in doc["slope"] if r["mode"] == "GHASH"]
    impls = {(r["impl"], r["layer"]) for r in ghash}
    assert impls == {("aeskit", "kernel"), ("aeskit", "api")} | (
        {("cryptography", "api")} if HAVE_CRYPTOGRAPHY else set())
    assert len(ghash) == len(impls)  # one row each: no enc/dec pair, no second key size
    assert {r["key_bits"] for r in ghash} == {192} and {r["direction"] for r in ghash} == {None}
    for r in ghash:
        assert all(p["bytes"] % 16 == 0 for p in r["points"])  # whole blocks
    ghash_lengths = [r for r in doc["by_length"] if r["mode"] == "GHASH"]
    assert len(ghash_lengths) == len(ghash)
    for r in ghash_lengths:  # 100 rounds down to 96
        assert [p["bytes"] for p in r["points"]] == [16, 96]
    assert {r["key_bits"] for r in doc["slope"] if r["mode"] == "CTR"} == {192, 256}

    out = bench(*args, "--verbose").stdout
    flat = " ".join(out.split())  # the method text is wrapped
    assert "GHASH: one direction" in flat and "AES-192 key" in flat
    tables = out.split(" summary, ", 1)[0]
    rows = [line.split("|")[0].strip() for line in tables.splitlines() if "|" in line]
    assert rows.count("GHASH") == len(ghash)
    assert "GHASH enc" not in out and "GHASH dec" not in out
    assert "AES-192 GHASH: MiB/s by data length" in out

    csv_rows = [line.split(",") for line in bench(*args, "--csv").stdout.splitlines()]
    assert len([r for r in csv_rows if r[2] == "GHASH" and r[3] == ""]) == len(ghash)
    assert len([r for r in csv_rows if r[2] == "GHASH" and r[3].startswith("bulk")]) == len(ghash)


def test_xts_sectors_row():
    # XTS brings its sectors row: 1 to 256 sectors of 4 KiB per call, aeskit's
    # kernel and api beside one data unit of the same length, and cryptography's
    # context per sector; nothing for a run without XTS
    peers = ["--peers", "cryptography"] if HAVE_CRYPTOGRAPHY else ["--peers", "none"]
    args = [*TINY, "--key-bits", "256", "--modes", "XTS", "--layer", "both", *peers]
    doc = json.loads(bench(*args, "--json").stdout)
    check_schema(doc)
    rows = doc["sectors"]
    assert {(r["direction"], r["key_bits"]) for r in rows} == {("enc", 256), ("dec", 256)}
    want = {("aeskit", "kernel"), ("aeskit", "one unit"), ("aeskit", "api")}
    if HAVE_CRYPTOGRAPHY:
        want.add(("cryptography", "api"))
    for direction in ("enc", "dec"):
        got = [(r["impl"], r["layer"]) for r in rows if r["direction"] == direction]
        assert sorted(got) == sorted(want)
    for r in rows:
        assert r["sector_bytes"] == 4096
        counts = [p["sectors"] for p in r["points"]] + [
            n // 4096 for n in r["skipped_bytes"]]
        assert sorted(counts) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert {r["mode"] for r in doc["slope"]} == {"XTS"}  # no slope row of its own

    out = bench(*args).stdout
    assert "AES-256 XTS sectors enc: MiB/s by sectors of 4 KiB per call" in out
    assert "AES-256 XTS sectors dec, " in out and "256 sectors take" in out
    assert " api: 256 sectors" not in out  # the ratio is the kernel layer's alone
    csv_rows = [line.split(",") for line in bench(*args, "--csv").stdout.splitlines()]
    assert len([r for r in csv_rows if r[2] == "XTS sectors enc"]) == 9 * len(want)
    assert json.loads(bench(*TINY, "--modes", "CTR", "--peers", "none",
                            "--json").stdout)["sectors"] == []


def test_csv_run_has_bench_slope_layout():
    proc = bench(*TINY, "--modes", "OFB", "--peers", "none", "--layer", "kernel",
                 "--sizes", "64,4K", "--csv")
    header, *rows = [line.split(",") for line in proc.stdout.splitlines()]
    assert header[:4] == ["section", "algo", "mode", "length"] and len(header) == 19
    assert header[17:] == ["self_check", "self_check_difference"]
    slope = [r for r in rows if r[3] == ""]
    bulk = [r for r in rows if r[3].startswith("bulk")]
    length = [r for r in rows if r[3].isdigit()]
    assert len(slope) == 2 and len(bulk) == 2 and len(length) == 4
    for r in rows:
        assert len(r) == 19
        # the bulk line's self-check: a word and the difference, on its rows alone
        if r[3].startswith("bulk"):
            assert r[17] in ("agrees", "disagrees", "")
            assert (r[18] == "") == (r[17] == "")
        else:
            assert r[17:] == ["", ""]
        assert r[1] == "AES" and r[2] in ("OFB enc", "OFB dec")
        assert (r[6], r[8], r[10], r[12], r[14], r[16]) == (
            "ns/B", "MiB/s", "c/B", "Mhz", "Mhz-diff", "ns/call")
        assert r[0].startswith("aeskit-") and r[0].endswith("-kernel")
    assert sorted({int(r[3]) for r in length}) == [64, 4096]
    assert all(r[4] == "B" for r in length)


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="the plot extra (matplotlib) is not installed")
def test_plot_file(tmp_path):
    path = tmp_path / "speed.png"
    proc = bench(*TINY, "--modes", "CTR", "--peers", "none", "--sizes", "16,4K",
                 "--plot", str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "speed by data length" in proc.stdout  # the terminal plot too
    assert "data length in bytes (log scale)" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["--modes", "XEX"], "unknown mode"),
    (["--key-bits", "512"], "--key-bits"),
    (["--backend", "no_such_backend"], "no backend"),
    (["--unaligned", "64"], "--unaligned"),
    (["--repetitions", "0"], "--repetitions"),
    (["--slope-range", "16:16:16"], "MAX must exceed MIN"),
    (["--sizes", "16,banana"], "not a size"),
    (["--json", "--csv"], "cannot both go to stdout"),
    (["--plot", "out.txt"], "--plot"),
    (["--peers", "openssl"], "unknown peer"),
])
def test_bad_options_are_refused(args, message):
    proc = bench(*args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_terminal_plot_draws_every_curve():
    lines = text_plot("title", [("one", [(16, 100.0), (4096, 900.0), (1 << 20, 1000.0)]),
                                ("two", [(16, 50.0), (4096, 400.0), (1 << 20, 450.0)])])
    body = "\n".join(lines)
    assert lines[0] == "title"
    assert "o one" in body and "+ two" in body
    assert body.count("o") > 10 and body.count("+") > 10  # joined lines, not just points
    for label in ("16", "4K", "1M"):
        assert label in lines[-3]


def test_version():
    proc = subprocess.run([sys.executable, "-m", "aeskit", "--version"], check=False,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"aeskit {aeskit.__version__}\n"


def test_info_json(capsys):
    assert cli.main(["info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    info = aeskit.backends()
    assert doc == {
        "version": aeskit.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": {"model": doc["cpu"]["model"], "features": aeskit.cpu_features()},
        "backends": {"all": list(info.all), "available": list(info.available),
                     "default": info.default},
    }
    assert isinstance(doc["cpu"]["model"], str) and doc["cpu"]["model"]


def test_info_text_is_unchanged(capsys):
    assert cli.main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    info = aeskit.backends()
    assert lines[0] == (f"aeskit {aeskit.__version__} (Python {platform.python_version()}, "
                        f"{platform.machine()})")
    assert lines[1].startswith("cpu: ") and lines[2].startswith("features: ")
    assert lines[3] == "backends:"
    assert [line.split()[0] for line in lines[4:]] == list(info.all)
    assert f"{info.default:<12} available (default)" in lines[4 + info.all.index(info.default)]


def resolve(*argv):
    """The bench's options from argv, in process (no run)."""
    parser = argparse.ArgumentParser(prog="aeskit bench")
    command.add_arguments(parser)
    return command.resolve(parser.parse_args(list(argv)), parser)


def refused(capsys, *argv):
    """The error message resolve gives for argv."""
    with pytest.raises(SystemExit) as exc:
        resolve(*argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


CLASS_ALIASES = {"AESECB": "ECB", "AESCBC": "CBC", "AESCFB": "CFB", "AESCFB8": "CFB8",
                 "AESOFB": "OFB", "AESCTR": "CTR", "AESGCM": "GCM", "AESOCB3": "OCB3",
                 "OCB": "OCB3", "GCMSIV": "GCM-SIV", "AESGCMSIV": "GCM-SIV"}


@pytest.mark.parametrize("alias, mode", [
    *CLASS_ALIASES.items(),
    *((a.lower(), m) for a, m in CLASS_ALIASES.items()),
    ("AesOcb3", "OCB3"), ("ocb", "OCB3"), ("aesCfb8", "CFB8"), ("ghash", "GHASH"),
    ("gcm-siv", "GCM-SIV"),
])
def test_modes_take_class_names(alias, mode):
    assert resolve("--modes", alias).modes == [mode]


#: aeskit classes the benchmark has no rows for: key wrap is a few dozen bytes
#: at a time (the mode issue says it needs none)
NOT_BENCHED = {m.class_name for m in MODES if m.family == "keywrap"}


def test_every_aeskit_class_is_a_mode_name():
    classes = [n for n in aeskit.__all__ if n.startswith("AES") and n not in NOT_BENCHED]
    assert classes and all(n.upper() in targets.MODE_ALIASES for n in classes)
    assert {"AESKW", "AESKWP"} <= NOT_BENCHED <= set(aeskit.__all__)


def test_modes_aliases_and_names_collapse_in_order():
    assert resolve("--modes", "aesgcm,CTR,gcm,AESCTR,ocb3,OCB").modes == ["GCM", "CTR", "OCB3"]


def test_a_new_mode_gets_its_class_alias(monkeypatch):
    """A mode's names come from its facts: its own, without hyphens, its class, its
    aliases."""
    xex = types.SimpleNamespace(name="XEX-2", class_name="AESXEX2", aliases=("XE",))
    monkeypatch.setattr(targets, "_TIMED", (*targets._TIMED, xex))
    aliases = targets._mode_aliases()
    assert aliases["XEX-2"] == aliases["XEX2"] == aliases["AESXEX2"] == aliases["XE"] == "XEX-2"
    assert "AESGHASH" not in aliases  # a one-way mode has no aeskit class


def test_unknown_mode_lists_the_names(capsys):
    err = refused(capsys, "--modes", "CTR,XEX")
    assert "unknown mode 'XEX'" in err
    for name in (*targets.MODES, *CLASS_ALIASES):
        assert name in err


def test_missing_peers(monkeypatch):
    assert targets.PEER_EXTRA == "pip install 'aeskit[bench]'"
    assert targets.missing_peers() == [p for p in targets.PEERS
                                       if not targets.peer_available(p)]
    monkeypatch.setitem(targets._PEER_MODULES, "pycryptodome", "aeskit_no_such_module")
    assert "pycryptodome" in targets.missing_peers()
    assert "pycryptodome" not in resolve().peers  # the default, all, leaves it out


def test_a_missing_peer_named_says_what_installs_it(monkeypatch, capsys):
    monkeypatch.setitem(targets._PEER_MODULES, "pycryptodome", "aeskit_no_such_module")
    err = refused(capsys, "--peers", "pycryptodome")
    assert "--peers: pycryptodome is not installed (pip install 'aeskit[bench]')" in err


def test_output_paths_that_work(tmp_path):
    (tmp_path / "old.csv").write_text("kept until the run writes it")
    assert paths.output_problem({"--plot": str(tmp_path / "a.png"),
                                 "--json": str(tmp_path / "a.json"),
                                 "--csv": str(tmp_path / "old.csv")}) is None
    assert paths.output_problem({"--plot": None, "--json": "-", "--csv": None}) is None


def test_output_paths_refused(tmp_path):
    (tmp_path / "file").write_text("")
    cases = {
        str(tmp_path): "is a directory",
        str(tmp_path / "nowhere" / "a.json"): "does not exist",
        str(tmp_path / "file" / "a.json"): "is not a directory",
        "": "empty",
    }
    for path, message in cases.items():
        problem = paths.output_problem({"--json": path})
        assert problem is not None and problem.startswith("--json: ") and message in problem


def test_output_paths_not_writable(tmp_path, monkeypatch):
    (tmp_path / "old.json").write_text("")
    monkeypatch.setattr(paths.os, "access", lambda path, mode: False)
    assert "is not writable" in paths.output_problem({"--csv": str(tmp_path / "old.json")})
    problem = paths.output_problem({"--csv": str(tmp_path / "new.csv")})
    assert problem == f"--csv: the directory {str(tmp_path)!r} is not writable"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write anywhere")
def test_output_paths_in_a_read_only_directory(tmp_path):
    tmp_path.chmod(0o500)
    try:
        assert "not writable" in paths.output_problem({"--json": str(tmp_path / "a.json")})
    finally:
        tmp_path.chmod(0o700)


def test_two_outputs_one_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.json").symlink_to(tmp_path / "out.json")
    for other in ("out.json", str(tmp_path / "out.json"), "./sub/../out.json", "link.json"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        problem = paths.output_problem({"--json": "out.json", "--csv": other})
        assert problem == f"--json and --csv both name {other!r}: give each its own file"


def test_resolve_checks_outputs_before_the_run(tmp_path, capsys):
    assert "is a directory" in refused(capsys, "--csv", str(tmp_path))
    assert "does not exist" in refused(capsys, "--json", str(tmp_path / "no" / "a.json"))
    same = str(tmp_path / "out")
    assert "--json and --csv both name" in refused(capsys, "--json", same, "--csv", same)


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="the plot extra (matplotlib) is not installed")
def test_resolve_checks_the_plot_path(tmp_path, capsys):
    assert "does not exist" in refused(capsys, "--plot", str(tmp_path / "no" / "a.png"))
    same = str(tmp_path / "out.svg")
    assert "--plot and --json both name" in refused(capsys, "--plot", same, "--json", same)


def test_log_y_option():
    assert resolve().log_y is False
    opts = resolve("--log-y")
    assert opts.log_y is True and opts.lengths  # a log plot needs the by-length view
    assert resolve("--log-y", "--sizes", "16,1K").lengths == (16, 1024)
