"""The writer and the reader of a stream: ``StreamingAEAD.open_encrypting`` and
``open_decrypting``.

The writer buffers one segment and seals it when the next byte arrives (only
what follows says a segment is not the last); a write of many segments seals
them straight from the caller's buffer, a run at a time. The reader reads
sequentially from any file object, or, on the first seek or ``size()``, from a
seekable one in random access, the last segment authenticated first.
"""

from __future__ import annotations

import contextlib
import io
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from .. import AESGCM, InvalidTag, LimitExceeded
from .format import (
    MAX_SEGMENTS,
    TAG,
    _bad_segment,
    _Key,
    _nonce,
    _run_of,
    _stream_open,
    _stream_seal,
)

if TYPE_CHECKING:
    from . import StreamingAEAD


def _read_full(src: Any, mv: memoryview) -> int:
    """Fill mv from src (readinto, else read) until full or end of input."""
    got, n = 0, len(mv)
    readinto = getattr(src, "readinto", None)
    while got < n:
        if readinto is not None:
            k = readinto(mv[got:])
        else:
            chunk = src.read(n - got)
            k = None if chunk is None else len(chunk)
            if k:
                mv[got:got + k] = chunk
        if k is None:
            continue
        if k == 0:
            break
        got += k
    return got


class _Pushback:
    """A read-only source with bytes pushed back in front of it (key trials, read-ahead)."""

    def __init__(self, src: Any) -> None:
        self.src = src
        self.pending = memoryview(b"")

    def push(self, data: bytes | bytearray | memoryview) -> None:
        self.pending = memoryview(bytes(data) + bytes(self.pending))

    def fill(self, mv: memoryview) -> int:
        k = min(len(self.pending), len(mv))
        if k:
            mv[:k] = self.pending[:k]
            self.pending = self.pending[k:]
        if k == len(mv):
            return k
        return k + _read_full(self.src, mv[k:])

    def at_end(self) -> bool:
        """True when no byte is left; otherwise the byte read stays pending."""
        if len(self.pending):
            return False
        one = bytearray(1)
        if _read_full(self.src, memoryview(one)) == 0:
            return True
        self.pending = memoryview(bytes(one))
        return False


# -- the writer ----------------------------------------------------------------
class EncryptingWriter(io.RawIOBase):
    """A stream being encrypted: a writable binary file object (``io.RawIOBase``) that
    ``StreamingAEAD.open_encrypting`` returns.

    It writes the header to the destination at once, then each segment as soon as it
    is full; ``close()`` (or leaving a ``with`` block normally) seals the last one,
    which makes the stream valid. ``abort()``, an exception out of the ``with`` block
    or dropping the object unclosed end it unsealed: what was written is then not a
    stream any reader accepts, not even truncated. The plaintext it holds is wiped on
    closing. Not for several threads at once.
    """

    def __init__(self, sa: StreamingAEAD, dst: Any, aad: bytes) -> None:
        super().__init__()
        k = sa._primary
        header, salt, self._prefix = k.new_header()
        self._gcm = k.gcm(salt, aad)
        self._key = k
        self._dst = dst
        self._seg = sa._first_segment
        self._first = True
        self._buf = bytearray(k.segment_size)
        self._mv = memoryview(self._buf)
        self._n = 0
        self._run: bytearray | None = None   # _seal_run's output (ciphertext only)
        self._sealed = False
        self._aborted = False
        self._write_all(header)

    def _write_all(self, data: memoryview | bytes) -> None:
        try:
            mv = memoryview(data)
            while len(mv):
                k = self._dst.write(mv)
                if k is None:
                    k = 0
                mv = mv[k:]
        except BaseException:
            self._aborted = True
            raise

    def _cap(self) -> int:
        return self._key.first_plain if self._first else self._key.plain

    def _seal(self, last: bool) -> None:
        n = self._n
        if not last and self._seg + 1 >= MAX_SEGMENTS:
            self._aborted = True
            raise LimitExceeded("a stream holds at most 2**32 segments")
        nonce = _nonce(self._prefix, self._seg, last)
        self._gcm.encrypt_into(nonce, self._mv[:n], None, self._mv[:n + TAG])
        self._write_all(self._mv[:n + TAG])
        self._seg += 1
        self._first = False
        self._n = 0

    def _seal_run(self, mv: memoryview) -> memoryview:
        """Seal whole segments straight from mv, which holds more than one, in one
        _stream_seal call (a run of up to _RUN_BYTES): at least its last byte is left,
        since only what follows says a segment is not the last. Returns the rest."""
        k = self._key
        count = min((len(mv) - 1) // k.plain, _run_of(k))
        if self._seg + count >= MAX_SEGMENTS:     # the one-segment path says where
            count = max(MAX_SEGMENTS - 1 - self._seg, 0)
            if count == 0:
                self._aborted = True
                raise LimitExceeded("a stream holds at most 2**32 segments")
        if self._run is None or len(self._run) < count * k.segment_size:
            self._run = bytearray(_run_of(k) * k.segment_size)
        n = count * k.plain
        w = _stream_seal(self._gcm, self._prefix, self._seg, False, mv[:n], self._run, k.plain)
        self._write_all(memoryview(self._run)[:w])
        self._seg += count
        return mv[n:]

    def writable(self) -> bool:
        """True."""
        return True

    def write(self, b: Any) -> int:
        """Encrypt the bytes of ``b`` (any bytes-like object) into the stream and return
        their count, all of them: full segments go to the destination, the rest waits
        for more or for ``close()``. ``ValueError`` once closed or aborted."""
        if self.closed:
            raise ValueError("write to a closed stream")
        if self._aborted:
            raise ValueError("write to a failed stream: it was not sealed")
        mv = memoryview(b).cast("B")
        total = len(mv)
        while len(mv):
            cap = self._cap()
            if self._n == cap:
                self._seal(last=False)
                cap = self._cap()
            if self._n == 0 and not self._first and len(mv) > cap:
                mv = self._seal_run(mv)
                continue
            k = min(cap - self._n, len(mv))
            self._mv[self._n:self._n + k] = mv[:k]
            self._n += k
            mv = mv[k:]
        return total

    def abort(self) -> None:
        """Close without sealing: what was written is not a valid stream."""
        self._aborted = True
        self.close()

    def close(self) -> None:
        """Seal the last segment (unless aborted), flush the destination and wipe the
        buffer. The destination itself stays open. A second call does nothing."""
        if self.closed:
            return
        try:
            if not self._aborted and not self._sealed:
                self._seal(last=True)
                self._sealed = True
                flush = getattr(self._dst, "flush", None)
                if flush is not None:
                    flush()
        finally:
            self._buf[:] = bytes(len(self._buf))   # an unsealed segment is plaintext
            self._mv.release()
            super().close()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self._aborted = True
        self.close()

    def __del__(self) -> None:
        # dropped without close(): never seal
        self._aborted = True
        with contextlib.suppress(Exception):
            self.close()


# -- the reader ----------------------------------------------------------------
class DecryptingReader(io.RawIOBase):
    """A stream being decrypted: a readable binary file object (``io.RawIOBase``) that
    ``StreamingAEAD.open_decrypting`` returns, seekable when its source is.

    It reads and authenticates one segment at a time and never returns a byte of a
    segment that did not authenticate: that read raises ``InvalidTag``, and so does
    every later call. The first ``seek()`` or ``size()`` authenticates the last
    segment, so truncation is caught when reading from the middle too. The source is
    not closed. Not for several threads at once.
    """

    def __init__(self, sa: StreamingAEAD, src: Any, aad: bytes) -> None:
        super().__init__()
        self._sa = sa
        self._src = src
        self._aad = aad
        self._first_segment = sa._first_segment
        self._key: _Key | None = None
        self._gcm: AESGCM | None = None
        self._prefix = b""
        self._failed: BaseException | None = None
        self._pos = 0
        self._done = 0
        # current plaintext segment
        self._cur = -1
        self._buf = bytearray(max(k.segment_size for k in sa._keys))
        self._plain = memoryview(b"")
        # sequential mode
        self._seq = _Pushback(src)
        self._next = 0  # next segment number to read sequentially
        self._seq_eof = False
        self._run: bytearray | None = None  # _seq_run's ciphertext
        # random access mode
        self._ra = False
        self._base = 0
        self._size = 0
        self._nseg = 0
        try:
            self._seekable = bool(src.seekable())
            if self._seekable:
                self._base = src.tell()
        except (AttributeError, OSError):
            self._seekable = False

    def readable(self) -> bool:
        """True."""
        return True

    def seekable(self) -> bool:
        """Whether ``seek()`` and ``size()`` work: whether the source is seekable."""
        return self._seekable

    def _fail(self, e: BaseException) -> NoReturn:
        self._failed = e
        self._plain = memoryview(b"")
        self._buf[:] = bytes(len(self._buf))
        raise e

    def _check(self) -> None:
        if self.closed:
            raise ValueError("read from a closed stream")
        if self._failed is not None:
            raise InvalidTag("the stream failed to authenticate earlier")

    def _open(self, k: _Key, gcm: AESGCM, mv: memoryview, n: int, i: int, last: bool) -> int:
        """Decrypt the n ciphertext bytes in mv in place; return the plaintext length."""
        if n < TAG:
            raise InvalidTag(_bad_segment(i, last))
        try:
            nonce = _nonce(self._prefix, self._first_segment + i, last)
        except LimitExceeded:
            raise InvalidTag("segment number past 2**32") from None
        try:
            return gcm.decrypt_into(nonce, mv[:n], None, mv[:n - TAG])
        except InvalidTag:
            raise InvalidTag(_bad_segment(i, last)) from None

    # sequential: header and segment 0 decide the key
    def _seq_start(self) -> None:
        keys = self._sa._keys
        longest = max(k.segment_size for k in keys) + 1
        head = bytearray(longest)
        got = self._seq.fill(memoryview(head))
        head = head[:got]
        mv = memoryview(self._buf)
        for k in keys:
            hdr = k.parse_header(head[:k.header_length])
            if hdr is None:
                continue
            salt, prefix = hdr
            seg0 = head[k.header_length:k.segment_size]
            last = got <= k.segment_size
            mv[:len(seg0)] = seg0
            self._prefix = prefix
            gcm = k.gcm(salt, self._aad)
            try:
                n = self._open(k, gcm, mv, len(seg0), 0, last)
            except InvalidTag:
                continue
            self._key, self._gcm = k, gcm
            self._seq.push(head[k.segment_size:])
            self._cur, self._plain, self._next = 0, mv[:n], 1
            self._seq_eof = last
            return
        self._fail(InvalidTag("no key authenticates the stream's first segment: a wrong key "
                              "or associated data, a modified stream or another format"))

    def _seq_load(self) -> bool:
        """Decrypt the next segment in order; False at the end of the stream."""
        if self._key is None:
            self._seq_start()
            return True
        if self._seq_eof:
            return False
        k, i = self._key, self._next
        assert self._gcm is not None
        mv = memoryview(self._buf)
        n = self._seq.fill(mv[:k.segment_size])
        last = n < k.segment_size or self._seq.at_end()
        try:
            p = self._open(k, self._gcm, mv, n, i, last)
        except InvalidTag as e:
            self._fail(e)
        self._cur, self._plain, self._next, self._seq_eof = i, mv[:p], i + 1, last
        return True

    def _seq_run(self, out: memoryview, done: int) -> bool:
        """Open the next whole segments, as many as fit in out[done:] (at least two) up
        to a run of _RUN_BYTES, straight into it with one _stream_open call; False to
        leave it to _seq_load (near the segment limit)."""
        k, i, gcm = self._key, self._next, self._gcm
        assert k is not None and gcm is not None
        count = min((len(out) - done) // k.plain, _run_of(k))
        if self._first_segment + i + count > MAX_SEGMENTS:
            return False
        cap = count * k.segment_size
        if self._run is None or len(self._run) < cap + 1:
            self._run = bytearray(_run_of(k) * k.segment_size + 1)   # ciphertext only
        mv = memoryview(self._run)
        n = self._seq.fill(mv[:cap + 1])    # one byte more: does the run hold the last?
        last = n <= cap
        if not last:
            self._seq.push(mv[cap:cap + 1])
            n = cap
        count = max(1, -(-n // k.segment_size))
        written, bad = _stream_open(gcm, self._prefix, self._first_segment + i, last,
                                    mv[:n], out[done:], k.segment_size)
        self._done = done + written
        self._pos += written
        self._cur, self._plain = i + count - 1, memoryview(b"")
        self._next, self._seq_eof = i + count, last
        if bad >= 0:
            self._fail(InvalidTag(_bad_segment(i + bad, last and bad == count - 1)))
        return True

    # random access: the size from the underlying file, the last segment checked first
    def _ra_start(self) -> None:
        if not self._seekable:
            raise io.UnsupportedOperation("the underlying file is not seekable")
        end = self._src.seek(0, io.SEEK_END)
        ct = end - self._base
        mv = memoryview(self._buf)
        keys = [self._key] if self._key is not None else self._sa._keys
        for k in keys:
            if ct < k.header_length + TAG:
                continue
            nseg = -(-ct // k.segment_size)
            last_len = ct - (nseg - 1) * k.segment_size
            if nseg == 1:
                last_len -= k.header_length
            if last_len < TAG:
                continue
            if self._key is None:
                self._src.seek(self._base)
                head = bytearray(k.header_length)
                if _read_full(self._src, memoryview(head)) != k.header_length:
                    continue
                hdr = k.parse_header(head)
                if hdr is None:
                    continue
                gcm, prefix = k.gcm(hdr[0], self._aad), hdr[1]
            else:
                assert self._gcm is not None
                gcm, prefix = self._gcm, self._prefix
            self._src.seek(self._base + k.ct_start(nseg - 1))
            got = _read_full(self._src, mv[:last_len])
            saved, self._prefix = self._prefix, prefix
            try:
                p = self._open(k, gcm, mv, got, nseg - 1, True)
            except InvalidTag:
                self._prefix = saved
                continue
            self._key, self._gcm = k, gcm
            self._nseg = nseg
            self._size = k.plain_start(nseg - 1) + p
            self._cur, self._plain = nseg - 1, mv[:p]
            self._ra = True
            return
        self._fail(InvalidTag("no key authenticates the stream's last segment: a wrong key "
                              "or associated data, a modified or truncated stream"))

    def _ra_load(self, i: int) -> None:
        k, gcm = self._key, self._gcm
        assert k is not None and gcm is not None
        last = i == self._nseg - 1
        start = k.ct_start(i)
        n = (self._ct_end() if last else (i + 1) * k.segment_size) - start
        mv = memoryview(self._buf)
        self._src.seek(self._base + start)
        got = _read_full(self._src, mv[:n])
        try:
            if got != n:
                raise InvalidTag("the stream changed size while it was read")
            p = self._open(k, gcm, mv, n, i, last)
        except InvalidTag as e:
            self._fail(e)
        self._cur, self._plain = i, mv[:p]

    def _ct_end(self) -> int:
        assert self._key is not None
        return self._key.header_length + self._size + TAG * self._nseg

    def size(self) -> int:
        """The plaintext size (authenticates the last segment first)."""
        self._check()
        if not self._ra:
            self._ra_start()
        return self._size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to a plaintext offset (``whence``: ``io.SEEK_SET``, ``SEEK_CUR`` or
        ``SEEK_END``) and return it; a read there decrypts only the segments it
        touches."""
        self._check()
        if not self._ra:
            self._ra_start()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def tell(self) -> int:
        """The plaintext offset of the next read."""
        self._check()
        return self._pos

    def readinto(self, b: Any) -> int:
        """Decrypt into the writable buffer ``b``; return the count, 0 at the end. The
        bytes of segments that authenticated before a bad one are returned first; the
        next call raises ``InvalidTag``."""
        self._check()
        out = memoryview(b).cast("B")
        try:
            return self._readinto(out)
        except InvalidTag:
            # the bytes of good segments already copied in this call are returned; the
            # reader is failed now, so the next call raises
            if self._done:
                return self._done
            raise

    def _readinto(self, out: memoryview) -> int:
        self._done = done = 0
        while done < len(out):
            k = self._key
            if self._ra:
                assert k is not None
                if self._pos >= self._size:
                    break
                i, off = k.segment_of(self._pos)
                if i != self._cur:
                    self._ra_load(i)
            else:
                if k is None or self._pos >= k.plain_start(self._cur) + len(self._plain):
                    if (k is not None and not self._seq_eof
                            and len(out) - done >= 2 * k.plain and self._seq_run(out, done)):
                        done = self._done
                        continue
                    if not self._seq_load():
                        break
                    k = self._key
                    assert k is not None
                    if self._pos >= k.plain_start(self._cur) + len(self._plain):
                        continue
                off = self._pos - k.plain_start(self._cur)
            take = min(len(self._plain) - off, len(out) - done)
            if take <= 0:
                break
            out[done:done + take] = self._plain[off:off + take]
            done += take
            self._done = done
            self._pos += take
        return done

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes of plaintext (all that is left for -1 or None); ``b""``
        at the end."""
        if size is None or size < 0:
            chunks: list[bytes] = []
            while True:
                c = super().read(1 << 20)
                if not c:
                    return b"".join(chunks)
                chunks.append(c)
        return super().read(size) or b""

    def readall(self) -> bytes:
        """The rest of the plaintext."""
        return self.read(-1)

    def close(self) -> None:
        """Wipe the plaintext held; the source stays open. A second call does nothing."""
        if not self.closed:
            self._plain = memoryview(b"")
            self._buf[:] = bytes(len(self._buf))
        super().close()
