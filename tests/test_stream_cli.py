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
import threading
import time

import pytest

from aeskit import cli
from aeskit.streaming import StreamingAEAD
from aeskit.streaming import cli as stream_cli
from aeskit.streaming import files as stream_files
from aeskit.streaming import format as fmt

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
    real, calls = stream_files._write_all, []

    def failing(f, mv):
        calls.append(1)
        if len(calls) == 4:
            raise exc
        real(f, mv)

    monkeypatch.setattr(stream_files, "_write_all", failing)
    monkeypatch.setattr(fmt, "_RUN_BYTES", 1)   # a write a segment: the 4th is mid-stream
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


def test_stdin_stdout(tmp_path, keyfile):
    """A real process: a pipe through encrypt and decrypt, and a bad last segment.
    (Signals mid-stream, through a pipe and to files: test_stream_kill.py.)"""
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


@pytest.mark.parametrize("named", [False, True], ids=["o_tmpfile", "named_temp"])
def test_errors_name_the_users_path(tmp_path, keyfile, capsys, monkeypatch, named):
    """Never the temporary file's name, nor only the directory's."""
    if named:
        monkeypatch.setenv("AESKIT_NO_O_TMPFILE", "1")
    (tmp_path / "a").write_bytes(b"data")
    target = tmp_path / "no such dir" / "out.enc"
    capsys.readouterr()
    assert run("encrypt", "--key", keyfile, tmp_path / "a", target) == 1
    err = capsys.readouterr().err
    assert err == f"aeskit: No such file or directory: {target}; no output written\n"
    assert files(tmp_path) == ["a", "key.json"]


def test_directory_as_out(tmp_path, keyfile, capsys):
    (tmp_path / "a").write_bytes(b"data")
    (tmp_path / "d").mkdir()
    for force in ([], ["--force"]):
        capsys.readouterr()
        assert run("encrypt", "--key", keyfile, *force, tmp_path / "a", tmp_path / "d") == 1
        err = capsys.readouterr().err
        assert err.startswith(f"aeskit: {tmp_path / 'd'} is a directory"), err
        assert "exists" not in err
    assert files(tmp_path) == ["a", "d", "key.json"] and files(tmp_path / "d") == []


@pytest.mark.parametrize("how", ["same", "hardlink", "symlink"])
@pytest.mark.parametrize("cmd", ["encrypt", "decrypt"])
def test_in_and_out_the_same_file(tmp_path, keyfile, capsys, how, cmd):
    """Refused, --force or not: the output would replace the input."""
    f = tmp_path / "f"
    f.write_bytes(b"precious")
    g = {"same": f, "hardlink": tmp_path / "g", "symlink": tmp_path / "g"}[how]
    if how == "hardlink":
        os.link(f, g)
    elif how == "symlink":
        os.symlink(f, g)
    listing = files(tmp_path)
    for force in ([], ["--force"]):
        capsys.readouterr()
        assert run(cmd, "--key", keyfile, *force, f, g) == 1
        err = capsys.readouterr().err
        assert err == f"aeskit: {f} and {g} are the same file: the output would destroy " \
                      "the input (write to another name)\n"
    assert f.read_bytes() == b"precious" and files(tmp_path) == listing


def test_library_refuses_the_same_file_and_a_directory(tmp_path):
    sa = StreamingAEAD(os.urandom(32))
    f = tmp_path / "f"
    f.write_bytes(b"precious")
    os.link(f, tmp_path / "g")
    for dst in (f, tmp_path / "g"):
        with pytest.raises(ValueError, match="same file"):
            sa.encrypt_file(f, dst)
    with open(f, "rb") as src, pytest.raises(ValueError, match="same file"):
        sa.encrypt_file(src, f)
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError) as e:
        sa.encrypt_file(f, tmp_path / "d")
    assert e.value.filename == str(tmp_path / "d")
    assert f.read_bytes() == b"precious" and files(tmp_path) == ["d", "f", "g"]


def test_library_installs_no_signal_handler(tmp_path):
    """encrypt_file is a library call: the signal dispositions it runs under are the
    caller's, while it runs and after."""
    sa = StreamingAEAD(os.urandom(32), segment_size=4096)
    (tmp_path / "a").write_bytes(os.urandom(100_000))
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = [signal.getsignal(s) for s in sigs]
    seen = []
    sa.encrypt_file(tmp_path / "a", tmp_path / "b",
                    progress=lambda n: seen.append([signal.getsignal(s) for s in sigs]))
    assert seen and all(s == before for s in seen)
    assert [signal.getsignal(s) for s in sigs] == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads Linux's /proc")
def test_library_threads_leave_signals_to_the_caller(tmp_path):
    """encrypt_file's worker threads hold every asynchronous signal, so the kernel gives
    each to the calling thread, where Python runs handlers: a worker that took one left
    a main thread blocked in a read of a pipe asleep."""
    sa = StreamingAEAD(os.urandom(32), segment_size=4096)
    (tmp_path / "a").write_bytes(os.urandom(3 << 20))
    masks = []

    def look(n):
        for t in threading.enumerate():
            if t.name.startswith("aeskit-stream-") and t.native_id is not None:
                with open(f"/proc/self/task/{t.native_id}/status") as f:
                    blk = next(line for line in f if line.startswith("SigBlk:"))
                masks.append(int(blk.split()[1], 16))

    sa.encrypt_file(tmp_path / "a", tmp_path / "b", threads=2, progress=look)
    assert masks
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        assert all(m & (1 << (sig - 1)) for m in masks), (sig, masks)
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, [])   # the caller's is untouched


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"{} x", b"[]", b"{}",
                                     b'{"key": 3, "primaryKeyId": 1}', b""])
def test_key_file_that_is_not_a_keyset(tmp_path, capsys, content):
    """One plain sentence, none of the JSON parser's or the codec's own words."""
    (tmp_path / "k").write_bytes(content)
    (tmp_path / "a").write_bytes(b"x")
    assert run("encrypt", "--key", tmp_path / "k", tmp_path / "a", tmp_path / "b") == 1
    assert capsys.readouterr().err == f"aeskit: {tmp_path / 'k'} is not a Tink JSON keyset\n"
    assert files(tmp_path) == ["a", "k"]


@pytest.mark.parametrize("width", [10, 20, 40, 60, 80, 132, 300])
def test_progress_bar_fits_the_terminal(monkeypatch, width):
    monkeypatch.setattr(stream_cli.shutil, "get_terminal_size",
                        lambda fallback=None: os.terminal_size((width, 24)))
    for total, done in ((None, 5 << 20), (10 << 20, 5 << 20), (10 << 20, 12 << 20),
                        (10 << 20, 10 << 20), (10 << 20, 0)):
        bar = stream_cli._Bar(total)
        bar.start -= 2.0
        bar.done = done
        text = bar.text(bar.start + 2.0, width)
        assert len(text) <= width - 1, (width, text)
        assert "-0" not in text and "ETA -" not in text
        if total and width >= 60:
            assert "ETA" in text and "%" in text
    bar = stream_cli._Bar(10 << 20)
    bar.done = 12 << 20        # a decryption's estimate of the total can fall short
    assert bar.text(bar.start + 1.0, 80).endswith("ETA 0s")


def test_interrupted_message_starts_on_its_own_line(tmp_path, keyfile, capsys, monkeypatch):
    (tmp_path / "a").write_bytes(os.urandom(3000))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)

    def interrupt(*args, **kwargs):
        bar = args[5]
        bar.draw(time.monotonic())
        raise KeyboardInterrupt

    monkeypatch.setattr(stream_cli, "_crypt", interrupt)
    capsys.readouterr()
    assert run("encrypt", "--key", keyfile, tmp_path / "a", tmp_path / "b") == 130
    err = capsys.readouterr().err
    assert err.endswith("\naeskit: interrupted (SIGINT); no output written\n"), repr(err)
    assert "MiB/s" in err.split("\n")[0]


def test_a_signal_while_committing_waits_for_the_commit():
    """Once the output is complete and being named, a signal is held until that is
    done: the file is kept, and the exit still says which signal came."""

    class Out:
        committing = False

    sigs = stream_cli._Signals()
    sigs.out = Out()
    with pytest.raises(stream_cli.Interrupted) as e:
        sigs._handler(signal.SIGTERM, None)
    assert e.value.signum == signal.SIGTERM and not e.value.done
    sigs = stream_cli._Signals()
    sigs.out = Out()
    sigs.out.committing = True
    with pytest.raises(stream_cli.Interrupted) as e:
        with sigs:
            sigs._handler(signal.SIGHUP, None)     # held: no exception here
            sigs._handler(signal.SIGTERM, None)    # a second one changes nothing
    assert e.value.signum == signal.SIGHUP and e.value.done
