"""``aeskit keygen``, ``aeskit encrypt`` and ``aeskit decrypt``: files in Tink's streaming format.

Nothing lost, nothing released: an output file is written to a temporary file
(mode 0600) in its target directory, fsynced, and moved into place only when
the whole input was processed (decryption: every segment authenticated); an
existing file is replaced only with ``--force``; a key file is created with
O_CREAT|O_EXCL and mode 0600. Any failure (a bad segment, a full disk,
Ctrl-C) removes the temporary file and ends with one line on stderr and a
non-zero exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from . import InvalidTag, LimitExceeded
from .streaming import StreamingAEAD

STDOUT_NOTE = ("With OUT '-' (stdout) nothing can be held back: plaintext of the segments "
               "that authenticated is written before a later bad segment is found, and "
               "the exit status is then non-zero. Check it, or decrypt to a file.")


class CLIError(Exception):
    """One line for the user, exit status 1."""


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
                "OUT is written to a temporary file beside it and renamed into place only "
                "when all of IN was processed"
                + (" and every segment authenticated" if name == "decrypt" else "")
                + "; an existing OUT is replaced only with --force. '-' is stdin/stdout.")
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
    from .stream_bench import add_command

    add_command(sub)


def run(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command; every failure is one line on stderr and a non-zero status."""
    try:
        return func(args)
    except KeyboardInterrupt:
        _say("interrupted; no output written" if not _to_stdout(args)
             else "interrupted; the output on stdout is incomplete")
        return 130
    except InvalidTag as e:
        _say(f"decryption failed: {e}"
             + ("; no output written" if not _to_stdout(args)
                else "; the output on stdout is incomplete"))
        return 1
    except (CLIError, LimitExceeded, ValueError) as e:
        _say(str(e))
        return 1
    except OSError as e:
        where = f": {e.filename}" if e.filename else ""
        _say(f"{e.strerror or e}{where}"
             + ("; no output written" if getattr(args, "output", "-") != "-" else ""))
        return 1


def _to_stdout(args: argparse.Namespace) -> bool:
    return getattr(args, "output", None) == "-"


def _say(line: str) -> None:
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
    if args.force:
        with _atomic_output(args.out, force=True) as f:
            f.write(text)
        return 0
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CLIError(f"{args.out} exists; a lost key loses every file encrypted with "
                       "it (--force replaces it)") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(args.out)
        raise
    return 0


# -- encrypt, decrypt -------------------------------------------------------------
@contextlib.contextmanager
def _atomic_output(path: str, force: bool) -> Iterator[IO[bytes]]:
    """A 0600 temp file beside path, moved onto it when the block ends without error."""
    if not force and os.path.lexists(path):
        raise CLIError(f"{path} exists (--force replaces it)")
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".",
                               suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)   # fails, rather than replaces, if path appeared meanwhile
            except FileExistsError:
                raise CLIError(f"{path} exists (--force replaces it)") from None
            except OSError:
                os.rename(tmp, path)  # no hard links here (some file systems)
        with contextlib.suppress(OSError):
            dfd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


class _Bar:
    """bytes, MiB/s and ETA on one rewritten stderr line, at most ten times a second."""

    def __init__(self, total: int | None) -> None:
        self.total, self.done = total, 0
        self.start = self.last = time.monotonic()

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= 0.1:
            self.last = now
            self.draw(now)

    def draw(self, now: float) -> None:
        secs = max(now - self.start, 1e-9)
        rate = self.done / secs
        text = f"{self.done / 2**20:10.1f} MiB  {rate / 2**20:8.1f} MiB/s"
        if self.total:
            share = min(1.0, self.done / self.total)
            width = 24
            fill = int(share * width)
            eta = (self.total - self.done) / rate if rate > 0 else 0.0
            text = f"[{'#' * fill}{'.' * (width - fill)}] {share:4.0%} {text}  ETA {eta:5.0f}s"
        sys.stderr.write("\r" + text)
        sys.stderr.flush()

    def finish(self) -> None:
        self.draw(time.monotonic())
        sys.stderr.write("\n")


def _input_size(f: Any) -> int | None:
    try:
        st = os.fstat(f.fileno())
    except (OSError, AttributeError, io.UnsupportedOperation):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def cmd_crypt(args: argparse.Namespace, encrypt: bool) -> int:
    try:
        with open(args.key, "rb") as kf:
            sa = StreamingAEAD.from_keyset(kf.read())
    except ValueError as e:
        raise CLIError(f"{args.key}: {e}") from None
    if args.threads is not None and args.threads < 1:
        raise CLIError("--threads must be at least 1")
    aad = args.aad.encode()
    with contextlib.ExitStack() as stack:
        if args.input == "-":
            src: Any = sys.stdin.buffer
        else:
            src = stack.enter_context(open(args.input, "rb", buffering=0))
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
            with _atomic_output(args.output, args.force) as out:
                _crypt(sa, src, out, aad, args.threads, bar, encrypt)
        if bar is not None:
            bar.finish()
    return 0


def _crypt(sa: StreamingAEAD, src: Any, out: Any, aad: bytes, threads: int | None,
           bar: _Bar | None, encrypt: bool) -> None:
    if encrypt:
        sa.encrypt_file(src, out, aad, threads=threads, progress=bar)
    else:
        sa.decrypt_file(src, out, aad, threads=threads, progress=bar)
