"""``aeskit keygen``, ``aeskit encrypt`` and ``aeskit decrypt``: files in Tink's streaming format.

Nothing lost, nothing released: OUT has no name until the whole input was
processed (decryption: every segment authenticated) and the output fsynced
(``output.py``: an unnamed ``O_TMPFILE`` file on Linux, else a hidden 0600
temporary file beside OUT); an existing file is replaced only with ``--force``;
a key file is created with O_CREAT|O_EXCL and mode 0600. Any failure (a bad
segment, a full disk, SIGINT, SIGTERM, SIGHUP) leaves no file behind and ends
with one line on stderr and a non-zero exit status: 128 + the signal's number
for a signal (130, 143, 129), 1 otherwise. A signal that arrives while the
finished output is being given its name is acted on once that is done.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import select
import shutil
import signal
import stat
import sys
import time
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from .. import InvalidTag, LimitExceeded
from . import StreamingAEAD
from .keyset import NOT_A_KEYSET
from .output import AtomicFile, same_file

STDOUT_NOTE = ("With OUT '-' (stdout) nothing can be held back: plaintext of the segments "
               "that authenticated is written before a later bad segment is found, and "
               "the exit status is then non-zero. Check it, or decrypt to a file.")


class CLIError(Exception):
    """One line for the user, exit status 1."""


class Interrupted(BaseException):
    """A signal asked the CLI to stop: exit status 128 + its number.

    A BaseException, as KeyboardInterrupt is, so that no ``except Exception`` on
    the way up swallows it; every ``finally`` and context manager runs."""

    def __init__(self, signum: int, done: bool = False) -> None:
        super().__init__(signum)
        self.signum, self.done = signum, done


#: the signals after which the CLI cleans up and exits 128 + signum
SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, n))


class _Signals:
    """SIGINT, SIGTERM and SIGHUP raise Interrupted in the main thread, once.

    A signal that the process ignores (nohup's SIGHUP, SIGINT in a background
    job) stays ignored. While ``out`` is committing (its data complete and being
    named), a signal is held and raised when the block ends, so an output is
    never named and then removed."""

    def __init__(self) -> None:
        self.out: AtomicFile | None = None
        self.fired: int | None = None
        self.saved: dict[int, Any] = {}
        self.wake: int | None = None     # the read end of the wakeup pipe
        self.wake_fds: tuple[int, int] | None = None
        self.old_wakeup = -1

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.fired is not None:
            return                  # already on the way out: let the cleanup finish
        self.fired = signum
        if self.out is not None and self.out.committing:
            return
        raise Interrupted(signum)

    def __enter__(self) -> _Signals:
        if hasattr(os, "pipe2") and hasattr(select, "poll"):
            # Python's C-level handler writes each signal's number here, so that a
            # wait for input that began after the signal came still ends (wakeable)
            self.wake_fds = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self.wake = self.wake_fds[0]
            self.old_wakeup = signal.set_wakeup_fd(self.wake_fds[1],
                                                   warn_on_full_buffer=False)
        for s in SIGNALS:
            old = signal.getsignal(s)
            if old is not signal.SIG_IGN:
                self.saved[s] = old
                signal.signal(s, self._handler)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for s, old in self.saved.items():
            signal.signal(s, old)
        if self.wake_fds is not None:
            signal.set_wakeup_fd(self.old_wakeup)
            for fd in self.wake_fds:
                os.close(fd)
            self.wake_fds = self.wake = None
        if exc_type is None and self.fired is not None:
            raise Interrupted(self.fired, done=True)

    def wakeable(self, f: Any) -> Any:
        """f, or where reading it may wait for ever (a pipe, a FIFO, a terminal), f
        read so that a signal always ends the wait."""
        try:
            regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
        except (OSError, AttributeError, io.UnsupportedOperation):
            return f
        if regular or self.wake is None:
            return f
        return _WakeableInput(f, self.wake)


class _WakeableInput(io.RawIOBase):
    """Reads of a file that may block for ever, woken by any signal.

    A signal handler runs in the main thread between bytecodes. If the signal comes
    after the last check and before read() blocks, read() waits for input that may
    never come (``aeskit encrypt - OUT`` fed by a stalled pipe), and SIGTERM is
    not acted on. Each read here first polls the file and the wakeup pipe that the
    C-level handler writes to, so the wait ends either way; the handler then runs
    on the next bytecode."""

    def __init__(self, f: Any, wake: int) -> None:
        super().__init__()
        self.f, self.wake = f, wake
        self.poll = select.poll()
        self.poll.register(f.fileno(), select.POLLIN)
        self.poll.register(wake, select.POLLIN)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return int(self.f.fileno())

    def readinto(self, b: Any) -> int:
        while True:
            ready = dict(self.poll.poll())
            if self.wake in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake, 64)
            if any(fd != self.wake for fd in ready):
                return int(self.f.readinto(b))


def add_commands(sub: Any) -> None:
    """Register keygen, encrypt and decrypt on the ``aeskit`` parser's subparsers."""
    p = sub.add_parser(
        "keygen", help="make a streaming AEAD key (a Tink JSON keyset)",
        description="Make a Tink cleartext JSON keyset holding one AES-GCM-HKDF streaming "
        "key (default: Tink's AES256_GCM_HKDF_1MB: 32-byte derived keys, HKDF-SHA256, "
        "1 MiB segments). The file is created with mode 0600 and never replaces an "
        "existing one without --force: a lost key loses every file encrypted with it. "
        "Without --out the keyset goes to stdout.")
    p.add_argument("--out", metavar="FILE", help="write the keyset here (mode 0600)")
    p.add_argument("--force", action="store_true", help="replace an existing FILE")
    p.add_argument("--segment-size", type=int, default=1 << 20, metavar="BYTES",
                   help="ciphertext segment size (default 1048576)")
    p.add_argument("--derived-key-size", type=int, default=32, choices=(16, 32))
    p.add_argument("--hkdf-hash", default="sha256", choices=("sha1", "sha256", "sha512"))
    p.set_defaults(func=lambda a: run(cmd_keygen, a))
    for name, verb in (("encrypt", "Encrypt"), ("decrypt", "Decrypt")):
        desc = (f"{verb} IN to OUT in Tink's AES-GCM-HKDF streaming format, on every core. "
                "OUT gets its name only when all of IN was processed"
                + (" and every segment authenticated" if name == "decrypt" else "")
                + " and the output is on disk: a failure or a signal (SIGINT, SIGTERM, "
                "SIGHUP: exit 128 + its number) leaves nothing behind. An existing OUT is "
                "replaced only with --force. '-' is stdin/stdout.")
        if name == "decrypt":
            desc += " " + STDOUT_NOTE
        q = sub.add_parser(name, help=f"{name} a file with a keyset from 'aeskit keygen' "
                           "or Tink", description=desc)
        q.add_argument("--key", required=True, metavar="FILE", help="Tink JSON keyset file")
        q.add_argument("--aad", default="", metavar="TEXT",
                       help="associated data (UTF-8): must be the same to decrypt")
        q.add_argument("--threads", type=int, default=None, metavar="N",
                       help="cores to use (default: all)")
        q.add_argument("--force", action="store_true", help="replace an existing OUT")
        q.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
        q.add_argument("input", metavar="IN", help="input file, or - for stdin")
        q.add_argument("output", metavar="OUT", help="output file, or - for stdout")
        q.set_defaults(func=lambda a, n=name: run(
            lambda a: cmd_crypt(a, encrypt=n == "encrypt"), a))
    from .bench import add_command

    add_command(sub)


def run(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command; every failure is one line on stderr and a non-zero status."""
    try:
        return func(args)
    except (KeyboardInterrupt, Interrupted) as e:
        signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
        name = signal.Signals(signum).name
        if isinstance(e, Interrupted) and e.done:
            _say(f"{name}: stopped after the output was complete and written")
        elif _to_stdout(args):
            _say(f"interrupted ({name}); the output on stdout is incomplete")
        else:
            _say(f"interrupted ({name}); no output written")
        return 128 + signum
    except InvalidTag as e:
        _say(f"decryption failed: {e}"
             + ("; no output written" if not _to_stdout(args)
                else "; the output on stdout is incomplete"))
        return 1
    except (CLIError, LimitExceeded, ValueError) as e:
        _say(str(e))
        return 1
    except OSError as e:
        _say(_os_error(e) + ("; no output written" if getattr(args, "output", "-") != "-"
                             else ""))
        return 1


def _os_error(e: OSError) -> str:
    if isinstance(e, IsADirectoryError) and e.filename:
        return f"{e.filename} is a directory"
    if isinstance(e, FileExistsError) and e.filename:
        return f"{e.filename} exists (--force replaces it)"
    where = f": {e.filename}" if e.filename else ""
    return f"{e.strerror or e}{where}"


def _to_stdout(args: argparse.Namespace) -> bool:
    return getattr(args, "output", None) == "-"


def _say(line: str) -> None:
    _Bar.end_line()
    sys.stderr.write(f"aeskit: {line}\n")
    sys.stderr.flush()


# -- keygen ------------------------------------------------------------------------
def cmd_keygen(args: argparse.Namespace) -> int:
    size = max(16, args.derived_key_size)
    sa = StreamingAEAD(os.urandom(size), segment_size=args.segment_size,
                       derived_key_size=args.derived_key_size, hkdf_hash=args.hkdf_hash)
    text = (sa.to_keyset() + "\n").encode()
    if args.out is None or args.out == "-":
        sys.stdout.buffer.write(text)
        sys.stdout.flush()
        return 0
    try:
        with AtomicFile(args.out, replace=args.force) as out:
            _write(out.file, text)
    except FileExistsError:
        raise CLIError(f"{args.out} exists; a lost key loses every file encrypted with "
                       "it (--force replaces it)") from None
    return 0


# -- encrypt, decrypt -------------------------------------------------------------
def _write(f: Any, data: bytes) -> None:
    mv = memoryview(data)
    while mv:
        mv = mv[f.write(mv):]


class _Bar:
    """bytes, MiB/s and ETA on one rewritten stderr line, at most ten times a second,
    never wider than the terminal."""

    #: the bar whose line is open on stderr (drawn, not yet ended by a newline)
    open_line: _Bar | None = None

    def __init__(self, total: int | None) -> None:
        self.total, self.done = total, 0
        self.start = self.last = time.monotonic()

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= 0.1:
            self.last = now
            self.draw(now)

    def text(self, now: float, width: int) -> str:
        """The line for a terminal of width columns: the parts that fit, most useful first."""
        rate = self.done / max(now - self.start, 1e-9)
        size = f"{self.done / 2**20:.1f} MiB"
        speed = f"{rate / 2**20:.1f} MiB/s"
        if not self.total:
            parts = [size, speed]
        else:
            share = min(1.0, self.done / self.total)
            left = max(0, self.total - self.done)
            eta = f"ETA {round(left / rate) if rate > 0 else 0}s"
            parts = [f"{share:4.0%}", size, speed, eta]
            room = width - 1 - len("  ".join(parts)) - 2 - 2
            if room >= 10:
                fill = int(share * room)
                parts.insert(0, f"[{'#' * fill}{'.' * (room - fill)}]")
        line = "  ".join(parts)
        while len(line) > width - 1 and len(parts) > 1:
            parts.pop()
            line = "  ".join(parts)
        return line[:max(0, width - 1)]

    def draw(self, now: float) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        sys.stderr.write("\r" + self.text(now, min(width, 100)) + "\x1b[K")
        sys.stderr.flush()
        _Bar.open_line = self

    def finish(self) -> None:
        self.draw(time.monotonic())
        _Bar.end_line()

    @staticmethod
    def end_line() -> None:
        """End the bar's line, so that what follows starts on its own."""
        if _Bar.open_line is not None:
            _Bar.open_line = None
            sys.stderr.write("\n")


def _input_size(f: Any) -> int | None:
    try:
        st = os.fstat(f.fileno())
    except (OSError, AttributeError, io.UnsupportedOperation):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def cmd_crypt(args: argparse.Namespace, encrypt: bool) -> int:
    if args.threads is not None and args.threads < 1:
        raise CLIError("--threads must be at least 1")
    aad = args.aad.encode()
    with _Signals() as signals, contextlib.ExitStack() as stack:
        sa = _load_keyset(args.key)
        if args.input == "-":
            # fd 0 unbuffered: stdin's BufferedReader reads on in C after a signal
            src: Any = stack.enter_context(open(sys.stdin.fileno(), "rb", buffering=0,
                                                closefd=False))
        else:
            src = stack.enter_context(open(args.input, "rb", buffering=0))
        src = signals.wakeable(src)
        if args.output != "-" and same_file(src, args.output):
            raise CLIError(f"{args.input} and {args.output} are the same file: the output "
                           "would destroy the input (write to another name)")
        bar = None
        if not args.quiet and sys.stderr.isatty():
            total = _input_size(src)
            if total is not None and not encrypt:
                seg = sa.segment_size
                total = max(0, total - sa.header_length - 16 * -(-total // seg))
            bar = _Bar(total)
        if args.output == "-":
            out: Any = sys.stdout.buffer
            _crypt(sa, src, out, aad, args.threads, bar, encrypt)
            out.flush()
        else:
            with AtomicFile(args.output, replace=args.force) as atomic:
                signals.out = atomic
                _crypt(sa, src, atomic.file, aad, args.threads, bar, encrypt)
        if bar is not None:
            bar.finish()
    return 0


def _load_keyset(path: str) -> StreamingAEAD:
    with open(path, "rb") as kf:
        text = kf.read()
    try:
        return StreamingAEAD.from_keyset(text)
    except ValueError as e:
        if str(e) == NOT_A_KEYSET:
            raise CLIError(f"{path} is not a Tink JSON keyset") from None
        raise CLIError(f"{path}: {e}") from None


def _crypt(sa: StreamingAEAD, src: Any, out: Any, aad: bytes, threads: int | None,
           bar: _Bar | None, encrypt: bool) -> None:
    if encrypt:
        sa.encrypt_file(src, out, aad, threads=threads, progress=bar)
    else:
        sa.decrypt_file(src, out, aad, threads=threads, progress=bar)
