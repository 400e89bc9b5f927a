"""Tink's AES-GCM-HKDF streaming AEAD on aeskit's GCM: files and streams.

``StreamingAEAD`` is the public interface, with the file objects its
``open_encrypting`` and ``open_decrypting`` return (``EncryptingWriter``,
``DecryptingReader``); its parts, one concern each:

- ``format``: the segment format (header, key derivation, nonces) and its size
  arithmetic;
- ``keyset``: Tink's cleartext JSON keysets and the protobuf key data in them;
- ``streams``: the writer (``open_encrypting``) and the reader
  (``open_decrypting``);
- ``files``: ``encrypt_file`` and ``decrypt_file``, segments on worker threads;
- ``output``: output files that have no name until they are complete;
- ``cli`` and ``bench``: the ``aeskit keygen``, ``encrypt``, ``decrypt`` and
  ``bench-stream`` commands.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from .. import AESGCM
from .files import _run_file
from .format import MAX_SEGMENTS as MAX_SEGMENTS
from .format import NONCE_PREFIX as NONCE_PREFIX
from .format import TAG as TAG
from .format import _Key
from .keyset import KEY_TYPE_URL as KEY_TYPE_URL
from .keyset import NOT_A_KEYSET as NOT_A_KEYSET
from .keyset import _from_json, _new_key_id, _to_json
from .streams import DecryptingReader as DecryptingReader
from .streams import EncryptingWriter as EncryptingWriter

if TYPE_CHECKING:
    from typing import TypeAlias

    from typing_extensions import Buffer

    _Path: TypeAlias = str | bytes | os.PathLike[str] | os.PathLike[bytes]
    _File: TypeAlias = IO[bytes] | BinaryIO | io.RawIOBase | io.BufferedIOBase

__all__ = ["DecryptingReader", "EncryptingWriter", "StreamingAEAD"]


def _bytes_of(data: Any, what: str) -> bytes:
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object, not {type(data).__name__}") from None


class StreamingAEAD:
    """Tink's AES-GCM-HKDF streaming AEAD: segment-authenticated, seekable streams.

    ``key`` is the input key material: at least max(16, derived_key_size) bytes.
    ``segment_size`` is the ciphertext segment size (Tink's), ``derived_key_size``
    16 or 32, ``hkdf_hash`` "sha1", "sha256" or "sha512". The defaults are Tink's
    AES256_GCM_HKDF_1MB. Keysets from Tink (``from_keyset``) may hold several keys:
    encryption uses the primary one, decryption every enabled one.
    """

    def __init__(self, key: Buffer, *, segment_size: int = 1 << 20, derived_key_size: int = 32,
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
        """The primary key's ciphertext segment size in bytes (int): each segment but the
        last is this long, its 16-byte tag included; the first also holds the header."""
        return self._primary.segment_size

    @property
    def derived_key_size(self) -> int:
        """The size in bytes (int) of each stream's AES-GCM key, derived by HKDF from the
        primary key and the stream's random salt: 16 or 32."""
        return self._primary.derived_key_size

    @property
    def hkdf_hash(self) -> str:
        """The hash of the primary key's HKDF (str): "sha1", "sha256" or "sha512"."""
        return self._primary.hkdf_hash

    @property
    def header_length(self) -> int:
        """The length in bytes (int) of the header a stream of the primary key starts with:
        a length byte, the salt (derived_key_size bytes) and the 7-byte nonce prefix."""
        return self._primary.header_length

    def ciphertext_size(self, plaintext_size: int) -> int:
        """The size of the primary key's ciphertext of plaintext_size bytes."""
        return self._primary.ciphertext_size(plaintext_size)

    # -- streams ----------------------------------------------------------------
    def open_encrypting(self, fileobj: _File, associated_data: Buffer = b"",
                        ) -> EncryptingWriter:
        """A writable binary file object; close() seals the last segment.

        Leaving a ``with`` block by an exception, or dropping the writer without
        closing it, does not seal: an aborted write never yields a valid
        (truncated) stream. ``fileobj`` is not closed.
        """
        return EncryptingWriter(self, fileobj, _bytes_of(associated_data, "associated_data"))

    def open_decrypting(self, fileobj: _File, associated_data: Buffer = b"",
                        ) -> DecryptingReader:
        """A readable binary file object, seekable when ``fileobj`` is.

        Reading never returns bytes of a segment that did not authenticate
        (``InvalidTag`` instead). The first seek or ``size()`` authenticates the
        last segment, so truncation is caught when reading from the middle.
        ``fileobj`` is not closed.
        """
        return DecryptingReader(self, fileobj, _bytes_of(associated_data, "associated_data"))

    def encrypt_file(self, src: _Path | _File, dst: _Path | _File,
                     associated_data: Buffer = b"", *,
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

    def decrypt_file(self, src: _Path | _File, dst: _Path | _File,
                     associated_data: Buffer = b"", *,
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
        keys, extra = _from_json(keyset, backend)
        self = cls.__new__(cls)
        self._keys = keys
        self._primary = keys[0]
        self._extra = extra
        self._first_segment = 0
        AESGCM(bytes(keys[0].derived_key_size), backend=backend)
        return self

    def to_keyset(self) -> str:
        """This object's keys as a Tink cleartext JSON keyset (secret: store it as such)."""
        return _to_json(self._keys, self._primary, self._extra)
