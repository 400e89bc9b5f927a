"""pyca/cryptography's AEAD classes (``cryptography.hazmat.primitives.ciphers.aead``)
with pyca's exact rules on aeskit's kernels.

Each class checks its arguments as pyca does and in pyca's order: the types of all
arguments first, then the nonce's length, the 2**31 - 1 byte limit on data and on each
piece of associated data, CCM's limit set by the nonce, the exact size of an ``_into``
buffer and, as pyca 51, that buffer sharing no byte with the data; and a message shorter than its tag fails authentication. The messages and
exception types are pyca's, and so is the exception for a tag that does not
authenticate (exceptions.py). What aeskit's native classes take beyond these rules
(shorter nonces, larger buffers, tag_length for GCM and OCB3) is refused here as pyca
refuses it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

import aeskit

from ._buffers import MAX_AEAD, OVERLAP, TOO_LONG, apart, meet, not_instance, rbuf, usize, wbuf
from .exceptions import InvalidTag

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["AESCCM", "AESGCM", "AESGCMSIV", "AESOCB3", "AESSIV"]

_NATIVE_FAILURE = (aeskit.InvalidTag, aeskit.LimitExceeded)
_DIRECT = frozenset((bytes, bytearray))


def _generate_key(bit_length: Any, sizes: tuple[int, ...], message: str) -> bytes:
    bits = usize(bit_length)
    if bits not in sizes:
        raise ValueError(message)
    return os.urandom(bits // 8)


class _NonceAEAD:
    """The four AEADs called with (nonce, data, associated_data): AESGCM, AESOCB3,
    AESGCMSIV, AESCCM. A subclass states its sizes and messages."""

    __slots__ = ("_k", "_t")

    _native: ClassVar[Any]
    _key_bytes: ClassVar[tuple[int, ...]] = (16, 24, 32)
    _key_error: ClassVar[str]
    _bits: ClassVar[tuple[int, ...]] = (128, 192, 256)
    _bits_error: ClassVar[str] = "bit_length must be 128, 192, or 256"
    _nonce_min: ClassVar[int]
    _nonce_max: ClassVar[int]
    _nonce_error: ClassVar[str]
    _limited: ClassVar[bool] = False

    _k: Any
    _t: int

    def __new__(cls, key: Any) -> Self:
        return cls._make(key)  # type: ignore[no-any-return]

    @classmethod
    def generate_key(cls, bit_length: int) -> bytes:
        """A random key (bytes) of bit_length bits, from os.urandom."""
        return _generate_key(bit_length, cls._bits, cls._bits_error)

    @classmethod
    def _make(cls, key: Any, tag_length: int = 16) -> Any:
        k = rbuf(key)
        if len(k) not in cls._key_bytes:
            raise ValueError(cls._key_error)
        self = object.__new__(cls)
        self._k = cls._native(k) if tag_length == 16 else cls._native(k, tag_length)
        self._t = tag_length
        return self

    def _data_limit(self, nonce: Any, length: int, decrypting: bool) -> None:
        """CCM's limit, set by the nonce's length (the others have none under pyca's
        2**31 - 1); called when _limited."""

    # The four methods below take pyca's steps inline, in pyca's order: each call costs
    # one Python frame over the native call. Bytes and bytearray need no buffer check,
    # and bytes or a bytearray in with another bytearray out no overlap check (apart's
    # test, written inline: no second frame).

    def encrypt(self, nonce: Any, data: Any, associated_data: Any) -> bytes:
        ad = associated_data
        if type(nonce) not in _DIRECT:
            nonce = rbuf(nonce)
        if type(data) not in _DIRECT:
            data = rbuf(data)
        if ad is not None and type(ad) not in _DIRECT:
            ad = rbuf(ad)
        if len(data) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        if not self._nonce_min <= len(nonce) <= self._nonce_max:
            raise ValueError(self._nonce_error)
        if self._limited:
            self._data_limit(nonce, len(data), False)
        if ad is not None and len(ad) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        return self._k.encrypt(nonce, data, ad)  # type: ignore[no-any-return]

    def encrypt_into(self, nonce: Any, data: Any, associated_data: Any, buf: Any) -> int:
        ad = associated_data
        if type(nonce) not in _DIRECT:
            nonce = rbuf(nonce)
        if type(data) not in _DIRECT:
            data = rbuf(data)
        if ad is not None and type(ad) not in _DIRECT:
            ad = rbuf(ad)
        if type(buf) is not bytearray:
            buf = wbuf(buf)
        if not self._nonce_min <= len(nonce) <= self._nonce_max:
            raise ValueError(self._nonce_error)
        if len(data) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        limited = self._limited
        if limited:
            self._data_limit(nonce, len(data), True)
        want = len(data) + self._t
        if len(buf) != want:
            raise ValueError(f"buffer must be {want} bytes")
        if (data is buf or type(buf) is not bytearray or type(data) not in _DIRECT) and meet(
            data, buf
        ):
            raise ValueError(OVERLAP)
        if ad is not None and len(ad) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        if limited:
            # CCM's one length past the field, which OpenSSL fails only once it runs
            self._data_limit(nonce, len(data), False)
        return self._k.encrypt_into(nonce, data, ad, buf)  # type: ignore[no-any-return]

    def decrypt(self, nonce: Any, data: Any, associated_data: Any) -> bytes:
        ad = associated_data
        if type(nonce) not in _DIRECT:
            nonce = rbuf(nonce)
        if type(data) not in _DIRECT:
            data = rbuf(data)
        if ad is not None and type(ad) not in _DIRECT:
            ad = rbuf(ad)
        if not self._nonce_min <= len(nonce) <= self._nonce_max:
            raise ValueError(self._nonce_error)
        if len(data) < self._t:
            raise InvalidTag()
        if self._limited:
            self._data_limit(nonce, len(data) - self._t, True)
        if ad is not None and len(ad) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        try:
            return self._k.decrypt(nonce, data, ad)  # type: ignore[no-any-return]
        except _NATIVE_FAILURE:
            raise InvalidTag() from None

    def decrypt_into(self, nonce: Any, data: Any, associated_data: Any, buf: Any) -> int:
        ad = associated_data
        if type(nonce) not in _DIRECT:
            nonce = rbuf(nonce)
        if type(data) not in _DIRECT:
            data = rbuf(data)
        if ad is not None and type(ad) not in _DIRECT:
            ad = rbuf(ad)
        if type(buf) is not bytearray:
            buf = wbuf(buf)
        if not self._nonce_min <= len(nonce) <= self._nonce_max:
            raise ValueError(self._nonce_error)
        if len(data) < self._t:
            raise InvalidTag()
        want = len(data) - self._t
        if self._limited:
            self._data_limit(nonce, want, True)
        if len(buf) != want:
            raise ValueError(f"buffer must be {want} bytes")
        if (data is buf or type(buf) is not bytearray or type(data) not in _DIRECT) and meet(
            data, buf
        ):
            raise ValueError(OVERLAP)
        if ad is not None and len(ad) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        try:
            return self._k.decrypt_into(nonce, data, ad, buf)  # type: ignore[no-any-return]
        except _NATIVE_FAILURE:
            raise InvalidTag() from None


class AESGCM(_NonceAEAD):
    """AES-GCM as pyca has it: 16-, 24- or 32-byte keys, nonces of 8 to 128 bytes,
    16-byte tags."""

    __slots__ = ()
    _native = aeskit.AESGCM
    _key_error = "AESGCM key must be 128, 192, or 256 bits."
    _nonce_min, _nonce_max = 8, 128
    _nonce_error = "Nonce must be between 8 and 128 bytes"


class AESOCB3(_NonceAEAD):
    """AES-OCB3 as pyca has it: 16-, 24- or 32-byte keys, nonces of 12 to 15 bytes,
    16-byte tags."""

    __slots__ = ()
    _native = aeskit.AESOCB3
    _key_error = "AESOCB3 key must be 128, 192, or 256 bits."
    _nonce_min, _nonce_max = 12, 15
    _nonce_error = "Nonce must be between 12 and 15 bytes"


class AESGCMSIV(_NonceAEAD):
    """AES-GCM-SIV as pyca has it: 16-, 24- or 32-byte keys, 12-byte nonces, 16-byte
    tags."""

    __slots__ = ()
    _key_error = "AES-GCM-SIV key must be 128, 192 or 256 bits."
    _nonce_min = _nonce_max = 12
    _nonce_error = "Nonce must be 12 bytes long"

    @staticmethod
    def _native(key: Any) -> Any:
        return aeskit.AESGCMSIV(key)


class AESCCM(_NonceAEAD):
    """AES-CCM as pyca has it: 16-, 24- or 32-byte keys, tags of 4, 6, 8, 10, 12, 14
    or 16 bytes, nonces of 7 to 13 bytes and data below 2**(8 * (15 - len(nonce)))
    bytes."""

    __slots__ = ()
    _native = aeskit.AESCCM
    _key_error = "AESCCM key must be 128, 192, or 256 bits."
    _nonce_min, _nonce_max = 7, 13
    _nonce_error = "Nonce must be between 7 and 13 bytes"
    _limited = True

    def __new__(cls, key: Any, tag_length: Any = None) -> Self:
        t = 16 if tag_length is None else usize(tag_length)
        k = rbuf(key)
        if len(k) not in cls._key_bytes:
            raise ValueError(cls._key_error)
        if t not in (4, 6, 8, 10, 12, 14, 16):
            raise ValueError("Invalid tag_length")
        return cls._make(k, t)  # type: ignore[no-any-return]

    def _data_limit(self, nonce: Any, length: int, decrypting: bool) -> None:
        # pyca refuses more than 2**(8L) bytes; exactly 2**(8L), one more than the
        # length field holds, fails in OpenSSL (InternalError on encryption, InvalidTag
        # on decryption). Here encryption refuses it with pyca's ValueError, and the
        # native class's refusal on decryption becomes InvalidTag. encrypt_into asks
        # with decrypting=True first (pyca's own limit) and refuses 2**(8L) last, after
        # the buffer's checks, where OpenSSL would fail.
        limit = 1 << 8 * (15 - len(nonce))
        if length > limit or (length == limit and not decrypting):
            raise ValueError("Data too long for nonce")


class AESSIV:
    """AES-SIV as pyca has it: 32-, 48- or 64-byte keys, associated data a list of
    buffers or None, output SIV then ciphertext."""

    __slots__ = ("_k",)
    _k: Any

    def __new__(cls, key: Any) -> Self:
        k = rbuf(key)
        if len(k) not in (32, 48, 64):
            raise ValueError("AESSIV key must be 256, 384, or 512 bits.")
        self = object.__new__(cls)
        self._k = aeskit.AESSIV(k)
        return self

    @staticmethod
    def generate_key(bit_length: int) -> bytes:
        return _generate_key(bit_length, (256, 384, 512), "bit_length must be 256, 384, or 512")

    @staticmethod
    def _list(associated_data: Any) -> Any:
        if associated_data is not None and not isinstance(associated_data, list):
            raise not_instance(associated_data, "list")
        return associated_data

    @staticmethod
    def _items(ad: list[Any] | None) -> list[Any] | None:
        if not ad:
            return None
        items = []
        for item in ad:
            b = rbuf(item)
            if len(b) > MAX_AEAD:
                raise OverflowError(TOO_LONG)
            items.append(b)
        return items

    def encrypt(self, data: Any, associated_data: Any) -> bytes:
        d, ad = rbuf(data), self._list(associated_data)
        if len(d) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        return self._k.encrypt(d, self._items(ad))  # type: ignore[no-any-return]

    def encrypt_into(self, data: Any, associated_data: Any, buf: Any) -> int:
        d, ad, b = rbuf(data), self._list(associated_data), wbuf(buf)
        if len(d) > MAX_AEAD:
            raise OverflowError(TOO_LONG)
        if len(b) != len(d) + 16:
            raise ValueError(f"buffer must be {len(d) + 16} bytes")
        apart(d, b)
        return self._k.encrypt_into(d, self._items(ad), b)  # type: ignore[no-any-return]

    def decrypt(self, data: Any, associated_data: Any) -> bytes:
        d, ad = rbuf(data), self._list(associated_data)
        if len(d) < 16:
            raise InvalidTag()
        items = self._items(ad)
        try:
            return self._k.decrypt(d, items)  # type: ignore[no-any-return]
        except _NATIVE_FAILURE:
            raise InvalidTag() from None

    def decrypt_into(self, data: Any, associated_data: Any, buf: Any) -> int:
        d, ad, b = rbuf(data), self._list(associated_data), wbuf(buf)
        if len(d) < 16:
            raise InvalidTag()
        if len(b) != len(d) - 16:
            raise ValueError(f"buffer must be {len(d) - 16} bytes")
        apart(d, b)
        items = self._items(ad)
        try:
            return self._k.decrypt_into(d, items, b)  # type: ignore[no-any-return]
        except _NATIVE_FAILURE:
            raise InvalidTag() from None
