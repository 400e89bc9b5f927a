"""A killed ``aeskit encrypt``/``decrypt`` leaves nothing behind: real children, real signals.

Each case runs the CLI as a child process whose IN is a FIFO. The test feeds it a 20 MiB
input a piece at a time and watches the child's output file grow: through
``/proc/PID/fd``, since that file has no name (``O_TMPFILE``). Once the output reaches a
third of its final size, or two thirds, the test stops feeding and sends the signal.
So the signal always lands mid-stream, by progress, never by a clock.

The matrix: encrypt and decrypt; to a new OUT and with ``--force`` over an existing one;
SIGTERM, SIGHUP, SIGINT and SIGKILL; at a third and at two thirds; with ``O_TMPFILE`` and
on the named-temporary-file fallback (``AESKIT_NO_O_TMPFILE=1``). After each signal:
- the directory lists exactly what it did before, hidden names included, and a
  pre-existing OUT is byte for byte what it was;
- the exit status is 128 + the signal's number (143, 129, 130), with one line on stderr;
  SIGKILL ends the child by the signal itself.
The one allowed difference: SIGKILL on the fallback leaves its 0600 ``.OUT.*.part`` file.
"""

from __future__ import annotations

import errno
import os
import re
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aeskit.streaming import StreamingAEAD

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux")
                                     and os.path.isdir("/proc/self/fd")),
                                reason="watches the child through Linux's /proc")

SIZE = 20 << 20
SEGMENT = 256 << 10      # 80 segments: the output grows in steps of a few percent
PIECE = 256 << 10        # what the test feeds between two looks at the output
TIMEOUT = 60
EXIT = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130,
        signal.SIGKILL: -signal.SIGKILL}
NAMED_TEMP = re.compile(r"^\.out\.[0-9a-f]{8}\.part$")


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    """A keyset, a 20 MiB plaintext and its ciphertext, shared by every case."""
    d = tmp_path_factory.mktemp("kill")
    sa = StreamingAEAD(os.urandom(32), segment_size=SEGMENT)
    key = d / "key.json"
    key.write_text(sa.to_keyset())
    plain = os.urandom(SIZE)
    (d / "plain").write_bytes(plain)
    sa.encrypt_file(d / "plain", d / "cipher")
    cipher = (d / "cipher").read_bytes()
    return key, plain, cipher


def _defaults() -> None:
    """preexec_fn: the child starts with the default action for every signal sent
    here (a test runner's worker may ignore SIGINT, and the CLI leaves ignored
    signals ignored)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def _output_size(pid: int, d: Path) -> int | None:
    """The size of the file the child writes in d: an unnamed one (O_TMPFILE's
    '/dir/#inode (deleted)') or the named temporary file."""
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except FileNotFoundError:
        return None
    for fd in names:
        try:
            target = os.readlink(f"{fds}/{fd}")
        except OSError:
            continue
        if target.startswith(f"{d}/#") or target.startswith(f"{d}/.out."):
            try:
                return os.stat(f"{fds}/{fd}").st_size
            except OSError:
                return None
    return None


def _open_fifo(fifo: Path, p: subprocess.Popen[bytes]) -> int:
    """The FIFO's write end, once the child has opened it for reading."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        assert p.poll() is None, p.communicate()[1]
        assert time.monotonic() < deadline, "the child never opened IN"
        time.sleep(0.005)


def _feed_until(fd: int, data: bytes, p: subprocess.Popen[bytes], d: Path,
                target: int) -> None:
    """Write data into the FIFO until the child's output holds target bytes."""
    mv, sent = memoryview(data), 0
    deadline = time.monotonic() + TIMEOUT
    while True:
        size = _output_size(p.pid, d)
        if size is not None and size >= target:
            return
        assert p.poll() is None, f"the child ended early: {p.communicate()[1]!r}"
        assert time.monotonic() < deadline, f"output stuck at {size} of {target}"
        if sent < len(mv) and select.select([], [fd], [], 0.01)[1]:
            try:
                sent += os.write(fd, mv[sent:sent + PIECE])
            except BlockingIOError:
                pass
        elif sent == len(mv):
            time.sleep(0.005)


def _kill_case(tmp_path, material, cmd, force, sig, share, named, stdin=False):
    key, plain, cipher = material
    d = tmp_path / "d"
    d.mkdir()
    fifo = d / "in"
    if not stdin:
        os.mkfifo(fifo)
    out = d / "out"
    old = os.urandom(1000)
    if force:
        out.write_bytes(old)
    before = sorted(os.listdir(d))
    data, final = (plain, len(cipher)) if cmd == "encrypt" else (cipher, len(plain))
    env = dict(os.environ)
    env.pop("AESKIT_NO_O_TMPFILE", None)
    if named:
        env["AESKIT_NO_O_TMPFILE"] = "1"
    argv = [sys.executable, "-m", "aeskit", cmd, "--key", str(key), "--threads", "2",
            *(["--force"] if force else []), "-" if stdin else str(fifo), str(out)]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else None,
                         stderr=subprocess.PIPE, env=env, preexec_fn=_defaults)
    fd = -1
    try:
        if stdin:
            fd = os.dup(p.stdin.fileno())
            p.stdin.close()
            p.stdin = None          # the test writes through fd; communicate() must not
            os.set_blocking(fd, False)
        else:
            fd = _open_fifo(fifo, p)
        _feed_until(fd, data, p, d, int(final * share))
        p.send_signal(sig)
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if fd >= 0:
            os.close(fd)
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == EXIT[sig], (p.returncode, err)
    if sig != signal.SIGKILL:
        text = err.decode()
        assert text.count("\n") == 1 and text.startswith("aeskit: interrupted"), text
        assert "no output written" in text, text
    after = sorted(os.listdir(d))
    if named and sig == signal.SIGKILL:
        left = sorted(set(after) - set(before))
        assert len(left) == 1 and NAMED_TEMP.match(left[0]), (before, after)
        assert stat.S_IMODE(os.stat(d / left[0]).st_mode) == 0o600
        os.unlink(d / left[0])
        after = sorted(os.listdir(d))
    assert after == before
    if force:
        assert out.read_bytes() == old


@pytest.mark.parametrize("share", [1 / 3, 2 / 3], ids=["third", "two_thirds"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT,
                                 signal.SIGKILL], ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("force", [False, True], ids=["new", "force"])
@pytest.mark.parametrize("cmd", ["encrypt", "decrypt"])
@pytest.mark.parametrize("named", [False, True], ids=["o_tmpfile", "named_temp"])
def test_killed_cli_leaves_nothing(tmp_path, material, cmd, force, sig, share,
                                   named):
    _kill_case(tmp_path, material, cmd, force, sig, share, named)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT,
                                 signal.SIGKILL], ids=lambda s: signal.Signals(s).name)
def test_killed_cli_reading_stdin(tmp_path, material, sig):
    """IN '-': the same, the input coming down a pipe (as in ``tar c | aeskit encrypt``).
    The signal comes while the child may be waiting for input that never comes: it must
    end the wait (stdin's BufferedReader once read on in C after the handler had run,
    and hung)."""
    _kill_case(tmp_path, material, "encrypt", False, sig, 1 / 2, False, stdin=True)


def test_a_whole_run_through_the_fifo(tmp_path, material):
    """The same set-up, fed to the end, writes the right file: the cases above stop a
    run that works."""
    key, plain, _ = material
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    p = subprocess.Popen([sys.executable, "-m", "aeskit", "encrypt", "--key", str(key),
                          str(fifo), str(tmp_path / "out")], stderr=subprocess.PIPE)
    fd = _open_fifo(fifo, p)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as f:
        f.write(plain)
    assert p.wait(timeout=TIMEOUT) == 0, p.communicate()[1]
    sa = StreamingAEAD.from_keyset(key.read_text())
    sa.decrypt_file(tmp_path / "out", tmp_path / "back")
    assert (tmp_path / "back").read_bytes() == plain
    assert sorted(os.listdir(tmp_path)) == ["back", "in", "out"]
