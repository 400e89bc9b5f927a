"""The segment format of Tink's AES-GCM-HKDF streaming AEAD, and its size arithmetic.

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
"""

from __future__ import annotations

import hmac
import os
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import AESGCM, LimitExceeded
from .. import _aeskit as _native  # type: ignore[attr-defined]  # the C module: no stub

if TYPE_CHECKING:
    from typing_extensions import Buffer

TAG = 16
NONCE_PREFIX = 7
# Segment numbers are 4 bytes in the nonce: at most 2**32 segments a stream.
MAX_SEGMENTS = 1 << 32
#: the bytes of segments one _stream_seal/_stream_open call takes at once (_run_of)
_RUN_BYTES = 1 << 20
_HASHES = {"sha1": 1, "sha256": 3, "sha512": 4}  # Tink's HashType enum values

# Runs of segments in one C call (py/segments.c), typed here. aead is an aeskit AEAD
# object with 16-byte tags (AESGCM here).
_stream_seal: Callable[[object, bytes, int, bool, Buffer, Buffer, int], int] = \
    _native._stream_seal
_stream_open: Callable[[object, bytes, int, bool, Buffer, Buffer, int], tuple[int, int]] = \
    _native._stream_open


def _hkdf(hash_name: str, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF (extract, then expand) with the standard library's HMAC."""
    prk = hmac.new(salt, ikm, hash_name).digest()
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([i]), hash_name).digest()
        out += block
        i += 1
    return out[:length]


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

    def ciphertext_size(self, plaintext_size: int) -> int:
        """The size of this key's ciphertext of plaintext_size bytes."""
        if plaintext_size < 0:
            raise ValueError("plaintext_size must be >= 0")
        if plaintext_size <= self.first_plain:
            n = 1
        else:
            n = 1 + -(-(plaintext_size - self.first_plain) // self.plain)
        return self.header_length + plaintext_size + TAG * n


def _nonce(prefix: bytes, i: int, last: bool) -> bytes:
    if i >= MAX_SEGMENTS:
        raise LimitExceeded(f"a stream holds at most 2**32 segments (segment {i})")
    return prefix + struct.pack(">IB", i, last)


def _run_of(k: _Key) -> int:
    """Segments a run: encrypt_file and decrypt_file hand the threads runs of whole
    segments of about _RUN_BYTES, one _stream_seal/_stream_open call each (the GIL
    released for the run): 4 KiB segments one call at a time ran at 0.4 GB/s and
    slowed down on 2 threads."""
    return max(1, _RUN_BYTES // k.segment_size)


def _bad_segment(i: int, last: bool) -> str:
    return (f"segment {i}{' (the last)' if last else ''} did not authenticate: a modified, "
            "reordered, truncated or extended stream")
