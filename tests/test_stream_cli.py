"""``aeskit keygen``, ``encrypt``, ``decrypt``: round trips, modes, and no partial output
under injected failures (a bad segment, a full disk, an I/O error, Ctrl-C)."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

import aeskit.streaming as st
from aeskit import cli
from aeskit.streaming import StreamingAEAD
from helpers import default_sigint

SMALL = ["--segment-size", "100"]


def run(*argv):
    return cli.main([str(a) for a in argv])


@pytest.fixture
def keyfile(tmp_path):
    k = tmp_path / "key.json"
    assert run("keygen", "--out", k, *SMALL) == 0
    return k


def files(d):
    return sorted(p.name for p in d.iterdir())


def test_keygen_mode_defaults_and_no_overwrite(tmp_path, capsys):
    k = tmp_path / "k.json"
    assert run("keygen", "--out", k) == 0
    assert stat.S_IMODE(os.stat(k).st_mode) == 0o600
    sa = StreamingAEAD.from_keyset(k.read_text())
    assert (sa.segment_size, sa.derived_key_size, sa.hkdf_hash) == (1 << 20, 32, "sha256")
    before = k.read_bytes()
    capsys.readouterr()
    assert run("keygen", "--out", k) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists" in err and "--force" in err
    assert k.read_bytes() == before
    assert run("keygen", "--out", k, "--force") == 0
    assert k.read_bytes() != before and stat.S_IMODE(os.stat(k).st_mode) == 0o600
    assert files(tmp_path) == ["k.json"]
    assert run("keygen", "--derived-key-size", "16", "--hkdf-hash", "sha1") == 0
    out = json.loads(capsys.readouterr().out)
    assert StreamingAEAD.from_keyset(json.dumps(out)).derived_key_size == 16


def test_round_trip_files(tmp_path, keyfile, capsys):
    pt = os.urandom(1234)
    (tmp_path / "a").write_bytes(pt)
    capsys.readouterr()
    assert run("encrypt", "--key", keyfile, "--aad", "x", "--threads", "2",
               tmp_path / "a", tmp_path / "b") == 0
    assert capsys.readouterr() == ("", "")       # no progress bar when not on a terminal
    assert stat.S_IMODE(os.stat(tmp_path / "b").st_mode) == 0o600
    sa = StreamingAEAD.from_keyset(keyfile.read_text())
    assert sa.open_decrypting(io.BytesIO((tmp_path / "b").read_bytes()), b"x").read() == pt
    assert run("decrypt", "--key", keyfile, "--aad", "x", tmp_path / "b", tmp_path / "c") == 0
    assert (tmp_path / "c").read_bytes() == pt


def test_existing_output_needs_force(tmp_path, keyfile, capsys):
    (tmp_path / "a").write_bytes(b"data")
    (tmp_path / "b").write_bytes(b"keep me")
    assert run("encrypt", "--key", keyfile, tmp_path / "a", tmp_path / "b") == 1
    assert (tmp_path / "b").read_bytes() == b"keep me"
    assert capsys.readouterr().err.count("\n") == 1
    assert run("encrypt", "--key", keyfile, "--force", tmp_path / "a", tmp_path / "b") == 0
    assert (tmp_path / "b").read_bytes() != b"keep me"
    assert files(tmp_path) == ["a", "b", "key.json"]


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_bad_segment_leaves_no_output(tmp_path, keyfile, capsys, threads, where):
    sa = StreamingAEAD.from_keyset(keyfile.read_text())
    bio = io.BytesIO()
    with sa.open_encrypting(bio) as w:
        w.write(os.urandom(900))
    ct = bytearray(bio.getvalue())
    ct[{"first": 40, "middle": 450, "last": len(ct) - 3}[where]] ^= 1
    (tmp_path / "in").write_bytes(ct)
    (tmp_path / "out").write_bytes(b"old")
    capsys.readouterr()
    assert run("decrypt", "--key", keyfile, "--threads", threads, "--force",
               tmp_path / "in", tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "decryption failed" in err and "no output" in err
    assert (tmp_path / "out").read_bytes() == b"old"      # untouched, even with --force
    assert files(tmp_path) == ["in", "key.json", "out"]   # no temporary file left


@pytest.mark.parametrize("exc, status, text", [
    (OSError(errno.ENOSPC, "No space left on device"), 1, "No space left on device"),
    (KeyboardInterrupt(), 130, "interrupted"),
])
@pytest.mark.parametrize("cmd", ["encrypt", "decrypt"])
def test_injected_failure_leaves_no_output(tmp_path, keyfile, capsys, monkeypatch,
                                           exc, status, text, cmd):
    sa = StreamingAEAD.from_keyset(keyfile.read_text())
    pt = os.urandom(2000)
    bio = io.BytesIO()
    with sa.open_encrypting(bio) as w:
        w.write(pt)
    (tmp_path / "in").write_bytes(pt if cmd == "encrypt" else bio.getvalue())
    real, calls = st._write_all, []

    def failing(f, mv):
        calls.append(1)
        if len(calls) == 4:
            raise exc
        real(f, mv)

    monkeypatch.setattr(st, "_write_all", failing)
    monkeypatch.setattr(st, "_RUN_BYTES", 1)   # a write a segment: the 4th is mid-stream
    capsys.readouterr()
    assert run(cmd, "--key", keyfile, "--threads", "2", tmp_path / "in", tmp_path / "out") \
        == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and text in err
    assert files(tmp_path) == ["in", "key.json"]


def test_bad_key_file_and_threads(tmp_path, capsys):
    (tmp_path / "k").write_text("{}")
    (tmp_path / "a").write_bytes(b"x")
    assert run("encrypt", "--key", tmp_path / "k", tmp_path / "a", tmp_path / "b") == 1
    assert "not a Tink JSON keyset" in capsys.readouterr().err
    assert run("encrypt", "--key", tmp_path / "nope", tmp_path / "a", tmp_path / "b") == 1
    assert "No such file" in capsys.readouterr().err
    assert files(tmp_path) == ["a", "k"]


def test_stdin_stdout_and_ctrl_c(tmp_path, keyfile):
    """A real process: a pipe through encrypt and decrypt, then SIGINT mid-stream."""
    exe = [sys.executable, "-m", "aeskit"]
    pt = os.urandom(5000)
    enc = subprocess.run(exe + ["encrypt", "--key", str(keyfile), "-", "-"], input=pt,
                         capture_output=True, check=True)
    dec = subprocess.run(exe + ["decrypt", "--key", str(keyfile), "-", "-"], input=enc.stdout,
                         capture_output=True, check=True)
    assert dec.stdout == pt and dec.stderr == b""
    bad = bytearray(enc.stdout)
    bad[-1] ^= 1
    dec = subprocess.run(exe + ["decrypt", "--key", str(keyfile), "-", "-"], input=bytes(bad),
                         capture_output=True, check=False)
    assert dec.returncode == 1 and pt.startswith(dec.stdout) and len(dec.stdout) < len(pt)
    assert dec.stderr.count(b"\n") == 1 and b"stdout is incomplete" in dec.stderr
    out = tmp_path / "out.enc"
    p = subprocess.Popen(exe + ["encrypt", "--key", str(keyfile), "-", str(out)],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=default_sigint)
    p.stdin.write(os.urandom(3000))
    p.stdin.flush()
    deadline = time.monotonic() + 30
    while not any(n.startswith(".out.enc.") for n in os.listdir(tmp_path)):
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert err.decode().count("\n") == 1 and "interrupted" in err.decode()
    assert files(tmp_path) == ["key.json"]


def test_bench_stream_runs(capsys):
    """The benchmark's figures are all there and finite (their values are never judged)."""
    assert run("bench-stream", "--size", "3", "--repetitions", "1", "--rss-sizes", "0.01",
               "--json") == 0
    r = json.loads(capsys.readouterr().out)
    for k in ("plain_encrypt_into_1t_mibs", "stream_1t_mibs", "stream_1t_vs_plain",
              "stream_2t_speedup", "plain_buffers_2t_speedup", "speedup_ratio",
              "plain_slices_2t_speedup", "speedup_ratio_slices", "stream_4k_1t_mibs",
              "stream_4k_all_mibs"):
        assert r[k] > 0, k
    assert r["peak_rss_mib"]["0.01 GiB"] > 0
    if r["tink_mibs"] is not None:
        assert r["stream_1t_vs_tink"] > 0 and r["stream_4k_all_cores_vs_tink"] > 0


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_bar_on_a_terminal(tmp_path, keyfile, capsys, monkeypatch, quiet):
    (tmp_path / "a").write_bytes(os.urandom(3000))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    capsys.readouterr()
    assert run("encrypt", "--key", keyfile, *(["--quiet"] if quiet else []),
               tmp_path / "a", tmp_path / "b") == 0
    err = capsys.readouterr().err
    if quiet:
        assert err == ""
    else:
        assert "MiB/s" in err and "100%" in err and "ETA" in err
