"""Output files that have no name until they are complete.

``StreamingAEAD.encrypt_file``/``decrypt_file`` to a path and the CLI's OUT write
through :class:`AtomicFile`:

- On Linux the data goes to an unnamed file (``O_TMPFILE``) in OUT's directory.
  When it is complete, it is fsynced and given its name by ``linkat`` through
  ``/proc/self/fd/N`` (``AT_SYMLINK_FOLLOW``, which needs no privilege), and the
  directory is fsynced. Until then no name exists, so no way of ending the
  process leaves anything behind: a SIGKILL or a power cut included, the
  kernel frees an unnamed file with its last descriptor.
- Replacing an existing OUT: the finished file is linked to a fresh hidden name
  beside it and renamed over OUT, so OUT is the old file or the new one, never
  a mix; then the directory is fsynced.
- Where ``O_TMPFILE`` is refused (a file system without it, another system), a
  named temporary file ``.OUT.XXXXXXXX.part`` (mode 0600) takes its place and
  is removed on every error that reaches Python. The CLI's signal handlers
  remove it on SIGTERM, SIGHUP and SIGINT; a SIGKILL or a power cut leaves that
  one file behind. The environment variable ``AESKIT_NO_O_TMPFILE=1`` forces
  this path (the tests use it).

Errors name the user's path, never a temporary one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from types import TracebackType
from typing import Any

#: set to "1" to use the named temporary file even where O_TMPFILE works
NO_O_TMPFILE_ENV = "AESKIT_NO_O_TMPFILE"
#: errno values with which open(O_TMPFILE) says "not here" rather than "no":
#: the file system lacks it (EOPNOTSUPP), or a kernel older than 3.11 read the
#: flag as O_DIRECTORY (EISDIR) or refused it (EINVAL)
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)


def _stat(f: Any) -> os.stat_result:
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.stat(f)
    return os.fstat(f.fileno())


def same_file(a: Any, b: Any) -> bool:
    """Whether a and b (each a path or an object with fileno()) are one file: the same
    device and inode, so hard links and symlinks count too."""
    try:
        return os.path.samestat(_stat(a), _stat(b))
    except (OSError, AttributeError, ValueError, TypeError):
        return False


class AtomicFile:
    """A binary file for ``path`` that gets that name only on :meth:`commit`.

    ``replace`` allows an existing file at ``path`` to be replaced; without it
    an existing ``path`` is ``FileExistsError``, at once and again at commit.
    ``file`` is the unbuffered file object to write to. As a context manager
    it commits when the block ends without an exception and discards the
    data otherwise.
    """

    def __init__(self, path: str | bytes | os.PathLike[Any], *, replace: bool) -> None:
        self.path = os.fsdecode(path)
        self.replace = replace
        self.dir = os.path.dirname(os.path.abspath(self.path))
        #: the named temporary file that holds the data, when there is one
        self.temp: str | None = None
        #: set once commit() starts: from then on the output may have its name
        self.committing = False
        self._dirfd: int | None = None
        if os.path.isdir(self.path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
        if not replace and os.path.lexists(self.path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), self.path)
        fd = self._open_unnamed()
        if fd is None:
            fd = self._open_named()
        self.file = os.fdopen(fd, "wb", buffering=0)

    # -- opening ----------------------------------------------------------------------
    def _error(self, e: OSError) -> OSError:
        """e, about the user's path rather than a directory or a temporary name."""
        return OSError(e.errno, e.strerror, self.path)

    def _open_unnamed(self) -> int | None:
        flag = getattr(os, "O_TMPFILE", 0)
        if not flag or os.environ.get(NO_O_TMPFILE_ENV) == "1":
            return None
        try:
            dirfd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise self._error(e) from None
        try:
            fd = os.open(".", flag | os.O_WRONLY, 0o600, dir_fd=dirfd)
        except OSError as e:
            os.close(dirfd)
            if e.errno in _NO_TMPFILE:
                return None
            raise self._error(e) from None
        if not os.path.exists(f"/proc/self/fd/{fd}"):
            # no /proc: the file could never be given a name
            os.close(fd)
            os.close(dirfd)
            return None
        self._dirfd = dirfd
        return fd

    def _open_named(self) -> int:
        base = os.path.basename(self.path)
        while True:
            name = os.path.join(self.dir, f".{base}.{secrets.token_hex(4)}.part")
            try:
                # O_BINARY: Windows opens a descriptor in text mode without it
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_BINARY", 0), 0o600)
            except FileExistsError:
                continue
            except OSError as e:
                raise self._error(e) from None
            self.temp = name
            return fd

    # -- the end ----------------------------------------------------------------------
    def commit(self) -> None:
        """Make the data durable and give it the name ``path``."""
        self.committing = True
        try:
            os.fsync(self.file.fileno())
            if self.temp is None:
                self._link()
            else:
                self._move()
        except BaseException as e:
            self.discard()
            if isinstance(e, OSError):
                raise self._error(e) from None
            raise
        self.file.close()
        self._sync_dir()

    def _link(self) -> None:
        assert self._dirfd is not None
        proc = f"/proc/self/fd/{self.file.fileno()}"
        d = self._dirfd
        base = os.path.basename(self.path)
        try:
            # with a dir_fd, os.link is linkat(..., AT_SYMLINK_FOLLOW): the link is
            # to the open file, not to the /proc symlink
            os.link(proc, base, src_dir_fd=d, dst_dir_fd=d)
            return
        except FileExistsError:
            if not self.replace:
                raise
        while True:
            name = f".{base}.{secrets.token_hex(4)}.part"
            try:
                os.link(proc, name, src_dir_fd=d, dst_dir_fd=d)
                break
            except FileExistsError:
                continue
        self.temp = os.path.join(self.dir, name)
        os.replace(name, base, src_dir_fd=d, dst_dir_fd=d)
        self.temp = None

    def _move(self) -> None:
        assert self.temp is not None
        if self.replace:
            os.replace(self.temp, self.path)
        else:
            try:
                os.link(self.temp, self.path)   # fails, rather than replaces, a new path
            except FileExistsError:
                raise
            except OSError:
                os.rename(self.temp, self.path)  # a file system without hard links
                self.temp = None
                return
            os.unlink(self.temp)
        self.temp = None

    def _sync_dir(self) -> None:
        with contextlib.suppress(OSError):
            if self._dirfd is None:
                self._dirfd = os.open(self.dir, os.O_RDONLY)
            os.fsync(self._dirfd)
        self._close_dir()

    def _close_dir(self) -> None:
        if self._dirfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._dirfd)
            self._dirfd = None

    def discard(self) -> None:
        """Drop the data: close the file, remove a named temporary file."""
        with contextlib.suppress(OSError):
            self.file.close()
        if self.temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp)
            self.temp = None
        self._close_dir()

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
