"""Tink's AES-GCM-HKDF streaming AEAD on aeskit's GCM: files and streams.

The format (Tink's "AES-GCM-HKDF Streaming AEAD", read in both directions by
Tink's Java, Go, C++ and Python implementations):

    header  = len(header) (1 byte) || salt (derived key size) || nonce prefix (7)
    key     = HKDF(hash, ikm=key, salt=salt, info=associated data, derived key size)
    segment = AES-GCM(key, nonce = prefix || segment number (4, big-endian)
                      || last-segment flag (1), data, no associated data)

Ciphertext segments are ``segment_size`` bytes, the first one including the
header, the last one shorter or equal. The associated data goes only into
HKDF. The salt and nonce prefix come from ``os.urandom`` per stream: the one
place where aeskit picks a random value itself, because the format says so.

Keys load from and save to Tink's cleartext JSON keysets (as ``tinkey``
writes them). The three protobuf messages involved have five scalar fields
between them, so they are parsed and written by hand here (``_pb_*``): the
``protobuf`` package would be a run-time dependency for that alone.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hmac
import io
import json
import os
import queue
import secrets
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import IO, Any, BinaryIO, NoReturn

from ._aeskit import AESGCM, InvalidTag, LimitExceeded, _stream_open, _stream_seal
from ._output import AtomicFile, same_file

__all__ = ["StreamingAEAD"]

TAG = 16
NONCE_PREFIX = 7
# Segment numbers are 4 bytes in the nonce: at most 2**32 segments a stream.
MAX_SEGMENTS = 1 << 32
#: encrypt_file/decrypt_file: the bytes of segments a thread takes at once (_run_of)
_RUN_BYTES = 1 << 20
_HASHES = {"sha1": 1, "sha256": 3, "sha512": 4}  # Tink's HashType enum values
_HASH_NAMES = {v: k for k, v in _HASHES.items()}
KEY_TYPE_URL = "type.googleapis.com/google.crypto.tink.AesGcmHkdfStreamingKey"
#: from_keyset's error for text that is not a keyset at all
NOT_A_KEYSET = "not a Tink JSON keyset"


def _hkdf(hash_name: str, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF (extract, then expand) with the standard library's HMAC."""
    prk = hmac.new(salt, ikm, hash_name).digest()
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([i]), hash_name).digest()
        out += block
        i += 1
    return out[:length]


def _bytes_of(data: Any, what: str) -> bytes:
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object, not {type(data).__name__}") from None


class _Key:
    """One key: its input key material and parameters, and the stream geometry."""

    def __init__(self, ikm: bytes, segment_size: int, derived_key_size: int, hkdf_hash: str,
                 key_id: int, backend: str) -> None:
        if not isinstance(segment_size, int) or isinstance(segment_size, bool):
            raise TypeError("segment_size must be an int")
        if derived_key_size not in (16, 32):
            raise ValueError(f"derived_key_size must be 16 or 32, not {derived_key_size!r}")
        if hkdf_hash not in _HASHES:
            raise ValueError(f"hkdf_hash must be one of {', '.join(_HASHES)}, not {hkdf_hash!r}")
        need = max(16, derived_key_size)
        if len(ikm) < need:
            raise ValueError(f"key must be at least {need} bytes for a derived key of "
                             f"{derived_key_size} bytes, got {len(ikm)}")
        header = 1 + derived_key_size + NONCE_PREFIX
        if not header + TAG < segment_size < 1 << 31:
            raise ValueError(f"segment_size must be more than {header + TAG} (header "
                             f"{header} + tag {TAG}) and less than 2**31, got {segment_size}")
        self.ikm = ikm
        self.segment_size = segment_size
        self.derived_key_size = derived_key_size
        self.hkdf_hash = hkdf_hash
        self.key_id = key_id
        self.backend = backend
        self.header_length = header
        self.first_plain = segment_size - header - TAG
        self.plain = segment_size - TAG

    def gcm(self, salt: bytes, associated_data: bytes) -> AESGCM:
        dk = _hkdf(self.hkdf_hash, self.ikm, salt, associated_data, self.derived_key_size)
        return AESGCM(dk, backend=self.backend)

    def new_header(self) -> tuple[bytes, bytes, bytes]:
        salt = os.urandom(self.derived_key_size)
        prefix = os.urandom(NONCE_PREFIX)
        return bytes([self.header_length]) + salt + prefix, salt, prefix

    def parse_header(self, header: bytes | bytearray | memoryview) -> tuple[bytes, bytes] | None:
        """(salt, nonce prefix), or None when the header is not one of this key's."""
        if len(header) != self.header_length or header[0] != self.header_length:
            return None
        return bytes(header[1:1 + self.derived_key_size]), bytes(header[1 + self.derived_key_size:])

    def segment_of(self, pos: int) -> tuple[int, int]:
        """(segment number, offset in it) of plaintext position pos."""
        if pos < self.first_plain:
            return 0, pos
        i, off = divmod(pos - self.first_plain, self.plain)
        return i + 1, off

    def plain_start(self, i: int) -> int:
        return 0 if i == 0 else self.first_plain + (i - 1) * self.plain

    def ct_start(self, i: int) -> int:
        return self.header_length if i == 0 else i * self.segment_size


def _nonce(prefix: bytes, i: int, last: bool) -> bytes:
    if i >= MAX_SEGMENTS:
        raise LimitExceeded(f"a stream holds at most 2**32 segments (segment {i})")
    return prefix + struct.pack(">IB", i, last)


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


class StreamingAEAD:
    """Tink's AES-GCM-HKDF streaming AEAD: segment-authenticated, seekable streams.

    ``key`` is the input key material: at least max(16, derived_key_size) bytes.
    ``segment_size`` is the ciphertext segment size (Tink's), ``derived_key_size``
    16 or 32, ``hkdf_hash`` "sha1", "sha256" or "sha512". The defaults are Tink's
    AES256_GCM_HKDF_1MB. Keysets from Tink (``from_keyset``) may hold several keys:
    encryption uses the primary one, decryption every enabled one.
    """

    def __init__(self, key: Any, *, segment_size: int = 1 << 20, derived_key_size: int = 32,
                 hkdf_hash: str = "sha256", backend: str = "auto") -> None:
        ikm = _bytes_of(key, "key")
        k = _Key(ikm, segment_size, derived_key_size, hkdf_hash, _new_key_id(), backend)
        AESGCM(bytes(derived_key_size), backend=backend)  # an unknown backend fails here
        self._keys = [k]
        self._primary = k
        self._extra: list[dict[str, Any]] = []  # non-enabled keyset entries, kept as read
        # Test hook: the number of the first segment (the limit is tested near 2**32).
        self._first_segment = 0

    # -- parameters -------------------------------------------------------------
    @property
    def segment_size(self) -> int:
        return self._primary.segment_size

    @property
    def derived_key_size(self) -> int:
        return self._primary.derived_key_size

    @property
    def hkdf_hash(self) -> str:
        return self._primary.hkdf_hash

    @property
    def header_length(self) -> int:
        return self._primary.header_length

    def ciphertext_size(self, plaintext_size: int) -> int:
        """The size of the primary key's ciphertext of plaintext_size bytes."""
        k = self._primary
        if plaintext_size < 0:
            raise ValueError("plaintext_size must be >= 0")
        if plaintext_size <= k.first_plain:
            n = 1
        else:
            n = 1 + -(-(plaintext_size - k.first_plain) // k.plain)
        return k.header_length + plaintext_size + TAG * n

    # -- streams ----------------------------------------------------------------
    def open_encrypting(self, fileobj: IO[bytes] | BinaryIO, associated_data: Any = b"",
                        ) -> _EncryptingWriter:
        """A writable binary file object; close() seals the last segment.

        Leaving a ``with`` block by an exception, or dropping the writer without
        closing it, does not seal: an aborted write never yields a valid
        (truncated) stream. ``fileobj`` is not closed.
        """
        return _EncryptingWriter(self, fileobj, _bytes_of(associated_data, "associated_data"))

    def open_decrypting(self, fileobj: IO[bytes] | BinaryIO, associated_data: Any = b"",
                        ) -> _DecryptingReader:
        """A readable binary file object, seekable when ``fileobj`` is.

        Reading never returns bytes of a segment that did not authenticate
        (``InvalidTag`` instead). The first seek or ``size()`` authenticates the
        last segment, so truncation is caught when reading from the middle.
        ``fileobj`` is not closed.
        """
        return _DecryptingReader(self, fileobj, _bytes_of(associated_data, "associated_data"))

    def encrypt_file(self, src: Any, dst: Any, associated_data: Any = b"", *,
                     threads: int | None = None,
                     progress: Callable[[int], None] | None = None) -> int:
        """Encrypt src to dst (paths or binary file objects); return the plaintext size.

        Segments are sealed on ``threads`` cores (default: all), output in order,
        memory bounded by a few segments a thread. A path ``dst`` (replaced if it
        exists) gets its name only when the whole output is written and fsynced:
        until then it is an unnamed file (Linux's ``O_TMPFILE``), or where that is
        refused a hidden 0600 temporary file beside it, removed on any error (a
        SIGKILL leaves that one behind). src and dst may not be the same file.
        """
        aad = _bytes_of(associated_data, "associated_data")
        return _run_file(self, src, dst, aad, threads, progress, encrypt=True)

    def decrypt_file(self, src: Any, dst: Any, associated_data: Any = b"", *,
                     threads: int | None = None,
                     progress: Callable[[int], None] | None = None) -> int:
        """Decrypt src to dst; return the plaintext size. ``InvalidTag`` at the first bad segment.

        A path ``dst`` appears only when every segment authenticated. A file
        object ``dst`` may have received segments that authenticated before a
        later bad one was found (never any of a bad one): discard it on error.
        """
        aad = _bytes_of(associated_data, "associated_data")
        return _run_file(self, src, dst, aad, threads, progress, encrypt=False)

    # -- keysets ----------------------------------------------------------------
    @classmethod
    def from_keyset(cls, keyset: str | bytes, *, backend: str = "auto") -> StreamingAEAD:
        """Read a Tink cleartext JSON keyset of AesGcmHkdfStreamingKey keys."""
        try:
            ks = json.loads(keyset)
            entries = list(ks["key"])
            primary_id = int(ks["primaryKeyId"])
            if not all(isinstance(e, dict) for e in entries):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            # the parser's own words (a line and column, a codec) mean nothing to
            # someone who gave the wrong file
            raise ValueError(NOT_A_KEYSET) from None
        keys: list[_Key] = []
        extra: list[dict[str, Any]] = []
        primary = None
        for e in entries:
            kid = int(e.get("keyId", 0))
            status = e.get("status")
            if status != "ENABLED":
                if kid == primary_id:
                    raise ValueError(f"keyset: the primary key {kid} is {status}, not ENABLED")
                extra.append(e)
                continue
            kd = e.get("keyData", {})
            if kd.get("typeUrl") != KEY_TYPE_URL:
                raise ValueError(f"keyset: key {kid} is a {kd.get('typeUrl')}, not an "
                                 "AesGcmHkdfStreamingKey")
            if e.get("outputPrefixType") != "RAW":
                raise ValueError(f"keyset: key {kid} has output prefix "
                                 f"{e.get('outputPrefixType')}; streaming keys are RAW")
            if kd.get("keyMaterialType", "SYMMETRIC") != "SYMMETRIC":
                raise ValueError(f"keyset: key {kid} is not SYMMETRIC key material")
            try:
                version, seg, dks, hash_type, ikm = _pb_parse_key(base64.b64decode(kd["value"]))
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(f"keyset: key {kid}: bad key data: {err}") from None
            if version != 0:
                raise ValueError(f"keyset: key {kid} has version {version}, only 0 is known")
            if hash_type not in _HASH_NAMES:
                raise ValueError(f"keyset: key {kid} has HKDF hash type {hash_type}; "
                                 "SHA1 (1), SHA256 (3) and SHA512 (4) are supported")
            k = _Key(ikm, seg, dks, _HASH_NAMES[hash_type], kid, backend)
            keys.append(k)
            if kid == primary_id:
                primary = k
        if primary is None:
            raise ValueError(f"keyset: no enabled key has the primary id {primary_id}")
        self = cls.__new__(cls)
        self._keys = [primary] + [k for k in keys if k is not primary]
        self._primary = primary
        self._extra = extra
        self._first_segment = 0
        AESGCM(bytes(primary.derived_key_size), backend=backend)
        return self

    def to_keyset(self) -> str:
        """This object's keys as a Tink cleartext JSON keyset (secret: store it as such)."""
        entries = []
        for k in self._keys:
            value = _pb_key(k.segment_size, k.derived_key_size, _HASHES[k.hkdf_hash], k.ikm)
            entries.append({
                "keyData": {"typeUrl": KEY_TYPE_URL, "value": base64.b64encode(value).decode(),
                            "keyMaterialType": "SYMMETRIC"},
                "status": "ENABLED", "keyId": k.key_id, "outputPrefixType": "RAW"})
        entries += self._extra
        return json.dumps({"primaryKeyId": self._primary.key_id, "key": entries}, indent=2)


def _new_key_id() -> int:
    return secrets.randbelow((1 << 31) - 1) + 1


# -- protobuf, by hand: varints (wire type 0) and length-delimited fields (2) ----
def _pb_varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _pb_fields(b: bytes) -> Iterator[tuple[int, int | bytes]]:
    i = 0
    while i < len(b):
        tag, i = _pb_varint(b, i)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            v, i = _pb_varint(b, i)
            yield field, v
        elif wire == 2:
            n, i = _pb_varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field")
            yield field, b[i:i + n]
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


def _pb_parse_key(b: bytes) -> tuple[int, int, int, int, bytes]:
    """AesGcmHkdfStreamingKey{1 version, 2 params{1 segment, 2 derived size, 3 hash}, 3 key}."""
    version, params, ikm = 0, b"", b""
    for f, v in _pb_fields(b):
        if f == 1 and isinstance(v, int):
            version = v
        elif f == 2 and isinstance(v, bytes):
            params = v
        elif f == 3 and isinstance(v, bytes):
            ikm = v
    seg = dks = hash_type = 0
    for f, v in _pb_fields(params):
        if isinstance(v, int):
            if f == 1:
                seg = v
            elif f == 2:
                dks = v
            elif f == 3:
                hash_type = v
    return version, seg, dks, hash_type, ikm


def _pb_enc_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _pb_key(seg: int, dks: int, hash_type: int, ikm: bytes) -> bytes:
    params = (b"\x08" + _pb_enc_varint(seg) + b"\x10" + _pb_enc_varint(dks)
              + b"\x18" + _pb_enc_varint(hash_type))
    # version 0 is proto3's default and, as Tink writes it, omitted
    return (b"\x12" + _pb_enc_varint(len(params)) + params
            + b"\x1a" + _pb_enc_varint(len(ikm)) + ikm)


# -- the writer ----------------------------------------------------------------
class _EncryptingWriter(io.RawIOBase):
    """See StreamingAEAD.open_encrypting."""

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
        return True

    def write(self, b: Any) -> int:
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
class _DecryptingReader(io.RawIOBase):
    """See StreamingAEAD.open_decrypting."""

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
        return True

    def seekable(self) -> bool:
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
        self._check()
        return self._pos

    def readinto(self, b: Any) -> int:
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
        if size is None or size < 0:
            chunks: list[bytes] = []
            while True:
                c = super().read(1 << 20)
                if not c:
                    return b"".join(chunks)
                chunks.append(c)
        return super().read(size) or b""

    def readall(self) -> bytes:
        return self.read(-1)

    def close(self) -> None:
        if not self.closed:
            self._plain = memoryview(b"")
            self._buf[:] = bytes(len(self._buf))
        super().close()


# -- whole files, on several cores -------------------------------------------------
def _run_file(sa: StreamingAEAD, src: Any, dst: Any, aad: bytes, threads: int | None,
              progress: Callable[[int], None] | None, encrypt: bool) -> int:
    if threads is None:
        # the cores this process may run on (a container or taskset may allow fewer)
        threads = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1)
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    with contextlib.ExitStack() as stack:
        if isinstance(src, (str, bytes, os.PathLike)):
            src = stack.enter_context(open(src, "rb", buffering=0))
        if same_file(src, dst):
            raise ValueError(f"src and dst are the same file: {_name_of(dst)}")
        if isinstance(dst, (str, bytes, os.PathLike)):
            out = stack.enter_context(AtomicFile(dst, replace=True)).file
        else:
            out = dst
        if encrypt:
            n = _encrypt_segments(sa, src, out, aad, threads, progress)
        else:
            n = _decrypt_segments(sa, src, out, aad, threads, progress)
        flush = getattr(out, "flush", None)
        if flush is not None:
            flush()
        return n


def _name_of(f: Any) -> str:
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(f)
    return str(getattr(f, "name", f))


def _write_all(f: Any, mv: memoryview) -> None:
    while len(mv):
        k = f.write(mv)
        mv = mv[k if k is not None else 0:]


#: signals the kernel sends to a thread of its own choosing rather than to the thread
#: that caused them (all but the synchronous faults)
_ASYNC_SIGNALS = frozenset(getattr(signal, n) for n in (
    "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGCHLD",
    "SIGWINCH", "SIGPIPE") if hasattr(signal, n))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Threads started in this block never take a process's signal: they inherit a mask
    that holds them, so the kernel gives each to the calling thread. Python runs signal
    handlers in the main thread only; when a worker took one, the main thread, blocked
    in a read of a pipe, was not woken, and a SIGTERM to ``aeskit encrypt - OUT`` waited
    for more input that might never come."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _ASYNC_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Pipeline:
    """Segments sealed/opened on worker threads, written in order, a bounded window.

    Jobs go on one queue.SimpleQueue that the N - 1 workers take from; each buffer has
    its own SimpleQueue for the outcome of the job that fills it. This thread, the
    writer, waits for the oldest buffer's outcome and, while it is not there, takes
    jobs from the queue itself: the N threads share the work as they are free, so a
    thread on a slower CPU (a busy neighbour on a VM) takes fewer segments. The queues
    are C code that release the GIL while they wait, so a segment costs a few
    bytecodes besides its seal. With ThreadPoolExecutor (a Future, a Condition and a
    work item a segment, all Python under the GIL) and segment i given to thread
    i mod N, 2 threads sped 1 MiB segments up 1.5-1.6x on 2 cores where independent
    encrypt_into calls got 1.9-2.0x; with these queues and the shared work, 1.8x."""

    def __init__(self, threads: int, size: int, out: Any,
                 progress: Callable[[int], None] | None) -> None:
        self.stop = False
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.workers = [threading.Thread(target=self._work, daemon=True,
                                         name=f"aeskit-stream-{w}")
                        for w in range(threads - 1)]
        with _signals_held():
            for t in self.workers:
                t.start()
        # one thread: seal, write, next (depth 0, one buffer); more: about one segment
        # a thread in flight besides the one being written (a window of 2 a thread
        # was no faster and spills more of the cache)
        self.depth = threads + 1 if threads > 1 else 0
        self.free = [(bytearray(size), queue.SimpleQueue[Any]()) for _ in range(self.depth + 1)]
        self.next: tuple[bytearray, queue.SimpleQueue[Any]] | None = None
        self.window: collections.deque[tuple[bytearray, queue.SimpleQueue[Any]]] = \
            collections.deque()
        self.out = out
        self.progress = progress

    def _run(self, job: tuple[Callable[[], int], queue.SimpleQueue[Any]]) -> None:
        fn, done = job
        if self.stop:               # closing after a failure: nothing more is wanted
            done.put(0)
            return
        try:
            done.put(fn())
        except Exception as e:      # handed to the writer, which raises it in order
            done.put(e)

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                self._run(job)
            except BaseException as e:  # the writer waits for an outcome: always one
                job[1].put(e)

    def buffer(self) -> bytearray:
        """The buffer for the next job, which fills it: submit() takes it with the job."""
        if self.next is None:
            if not self.free:
                self.drain_one()
            self.next = self.free.pop()
        return self.next[0]

    def submit(self, fn: Callable[[], int]) -> None:
        slot, self.next = self.next, None
        assert slot is not None, "buffer() first"
        self.window.append(slot)
        if self.workers:
            self.jobs.put((fn, slot[1]))
        else:
            self._run((fn, slot[1]))
        while len(self.window) > self.depth:
            self.drain_one()

    def drain_one(self) -> None:
        buf, done = self.window.popleft()
        while done.empty():
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            self._run(job)
        outcome = done.get()
        self.free.append((buf, done))
        if isinstance(outcome, BaseException):
            raise outcome
        _write_all(self.out, memoryview(buf)[:outcome])
        if self.progress is not None:
            self.progress(outcome)

    def drain(self) -> None:
        while self.window:
            self.drain_one()

    def close(self, ok: bool) -> None:
        if not ok:
            self.stop = True
        for _ in self.workers:
            self.jobs.put(None)
        for t in self.workers:
            t.join()
        for buf, _ in list(self.window) + self.free + ([self.next] if self.next else []):
            buf[:] = bytes(len(buf))


def _memory_view(fin: Any) -> tuple[memoryview, int] | None:
    """An in-memory source's bytes from its position on, without a copy, and that
    position: io.BytesIO's buffer. Its segments are then sealed straight from it into
    the output buffers by the sealing threads: a readinto would copy each segment in
    this thread, holding the GIL, and on 2 cores took the second one's gain away
    (encrypt_file with 2 threads ran at 0.9x its 1-thread speed; from the view, 1.6x)."""
    if not isinstance(fin, io.BytesIO):
        return None
    pos = fin.tell()
    # getvalue() hands out the BytesIO's own bytes object, without a copy, where
    # getbuffer() would first copy a buffer the BytesIO shares with the bytes it was
    # made from (io.BytesIO(data)): a whole extra pass over the input
    view = memoryview(fin.getvalue())
    return view[min(pos, len(view)):], pos


def _run_of(k: _Key) -> int:
    """Segments a run: encrypt_file and decrypt_file hand the threads runs of whole
    segments of about _RUN_BYTES, one _stream_seal/_stream_open call each (the GIL
    released for the run): 4 KiB segments one call at a time ran at 0.4 GB/s and
    slowed down on 2 threads."""
    return max(1, _RUN_BYTES // k.segment_size)


def _encrypt_segments(sa: StreamingAEAD, fin: Any, out: Any, aad: bytes, threads: int,
                      progress: Callable[[int], None] | None) -> int:
    k = sa._primary
    header, salt, prefix = k.new_header()
    gcm = k.gcm(salt, aad)
    _write_all(out, memoryview(header))
    mem = _memory_view(fin)
    per = _run_of(k)
    # A buffer: the run's ciphertext, then (a file source, more than one segment a run)
    # its plaintext as read. A one-segment run is sealed in place.
    out_size = per * k.segment_size
    in_size = 0 if per == 1 or mem is not None else per * k.plain + 1
    in_off = out_size if in_size else 0
    pipe = _Pipeline(threads, out_size + in_size, out, progress)
    ok = False
    try:
        # Segment 0 is a run of its own (its plaintext is shorter by the header), then
        # runs of `per`. A file object's run is read with one byte more than it holds:
        # that byte says whether the run holds the last segment, and is carried to the
        # next run. An in-memory one is sealed from its bytes, whose length says which
        # is the last.
        first = sa._first_segment
        i, total, carry = 0, 0, b""
        while True:
            mv = memoryview(pipe.buffer())
            size = k.first_plain if i == 0 else k.plain
            cap = size if i == 0 else per * size
            if mem is not None:
                n = min(cap, len(mem[0]) - total)
                last = total + n == len(mem[0])
                src = mem[0][total:total + n]
            else:
                inp = mv[in_off:]
                c = len(carry)
                inp[:c] = carry
                got = c + _read_full(fin, inp[c:cap + 1])
                last = got <= cap
                n = got if last else cap
                carry = b"" if last else bytes(inp[cap:cap + 1])
                src = inp[:n]
            count = max(1, -(-n // size)) if last else n // size
            if first + i + count - last >= MAX_SEGMENTS:
                raise LimitExceeded("a stream holds at most 2**32 segments")
            pipe.submit(_run_sealer(gcm, prefix, first + i, last, src, mv[:out_size], size))
            total += n
            if last:
                break
            i += count
        pipe.drain()
        ok = True
        if mem is not None:
            fin.seek(mem[1] + total)
        return total
    finally:
        pipe.close(ok)


def _run_sealer(gcm: AESGCM, prefix: bytes, index: int, last: bool, src: memoryview,
                dst: memoryview, size: int) -> Callable[[], int]:
    def seal() -> int:
        return _stream_seal(gcm, prefix, index, last, src, dst, size)
    return seal


def _bad_segment(i: int, last: bool) -> str:
    return (f"segment {i}{' (the last)' if last else ''} did not authenticate: a modified, "
            "reordered, truncated or extended stream")


def _run_opener(gcm: AESGCM, prefix: bytes, index: int, last: bool, src: memoryview,
                dst: memoryview, size: int, i: int, count: int) -> Callable[[], int]:
    """Opens the run of count segments whose first is segment i of the stream (numbered
    index in the nonces); the first that fails raises InvalidTag naming it."""
    def open_() -> int:
        written, bad = _stream_open(gcm, prefix, index, last, src, dst, size)
        if bad >= 0:
            raise InvalidTag(_bad_segment(i + bad, last and bad == count - 1))
        return int(written)
    return open_


def _failing(exc: BaseException) -> Callable[[], int]:
    """A job that fails in its turn (after the runs before it were checked)."""
    def fail() -> int:
        raise exc
    return fail


def _decrypt_segments(sa: StreamingAEAD, fin: Any, out: Any, aad: bytes, threads: int,
                      progress: Callable[[int], None] | None) -> int:
    # Segment 0 picks the key (one or more trials), in this thread.
    reader = _DecryptingReader(sa, fin, aad)
    reader._seq_start()
    k, gcm = reader._key, reader._gcm
    assert k is not None and gcm is not None
    first0 = bytes(reader._plain)
    _write_all(out, memoryview(first0))
    if progress is not None:
        progress(len(first0))
    total = len(first0)
    src = reader._seq
    reader._buf[:] = bytes(len(reader._buf))
    if reader._seq_eof:
        return total
    seg = k.segment_size
    per = _run_of(k)
    cap = per * seg
    # A buffer: the run's plaintext, then its ciphertext as read (with one byte more:
    # does the run hold the last segment?). A one-segment run is opened in place.
    out_size = per * (seg - TAG)
    in_off = 0 if per == 1 else out_size
    pipe = _Pipeline(threads, in_off + cap + 1, out, progress)
    ok = False
    try:
        i = 1
        while True:
            mv = memoryview(pipe.buffer())
            inp = mv[in_off:]
            n = src.fill(inp[:cap + 1])
            last = n <= cap
            if not last:
                src.push(inp[cap:cap + 1])
                n = cap
            count = max(1, -(-n // seg))
            index = sa._first_segment + i
            if index + count - 1 >= MAX_SEGMENTS:
                job = _failing(InvalidTag("segment number past 2**32"))
            else:
                job = _run_opener(gcm, reader._prefix, index, last, inp[:n], mv[:out_size],
                                  seg, i, count)
            pipe.submit(job)
            total += max(n - TAG * count, 0)
            if last:
                break
            i += count
        pipe.drain()
        ok = True
        return total
    finally:
        pipe.close(ok)
