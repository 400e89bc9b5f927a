"""pyca/cryptography's ``Cipher`` (``ciphers.base``) for AES in ECB, CBC, CTR, CFB,
CFB8, OFB, XTS and GCM, with pyca's rules, messages and exceptions, on aeskit's
kernels.

A context keeps pyca's behaviour where it differs from aeskit's native contexts:

- ``update_into`` wants ``len(data) + 15`` bytes of room for ECB and CBC and
  ``len(data)`` for the others, as pyca does, and (as pyca 51) refuses a ``buf`` that
  shares a byte with ``data``, in place included;
- ECB and CBC's ``finalize`` refuses a partial block and leaves the context open;
- XTS (OpenSSL's): every ``update`` is a data unit of its own under the mode's tweak,
  of 16 bytes to 2**20 blocks (or empty); a key whose halves are equal is refused for
  encryption, and decrypts on pyca itself (aeskit's XTS refuses it both ways);
- GCM counts data and associated data against pyca's limits, and checks a tag of any
  length from the mode's ``min_tag_length`` to 16 bytes. A length aeskit's GCM has no
  native verification for (5, 6, 7, 9, 10 or 11 bytes) is checked against the full
  tag, which a second native context computes over the same ciphertext; only a
  decryptor that may meet such a tag (``min_tag_length`` below 16 with no tag in the
  mode, or such a tag in it) pays for it.
"""

from __future__ import annotations

import hmac
from typing import Any, Generic, TypeVar

import aeskit
from aeskit._modes import BY_NAME

from . import algorithms, modes
from ._buffers import DIRECT, OVERLAP, apart, meet, not_instance, rbuf, wbuf
from .exceptions import (
    PYCA,
    UNSUPPORTED_CIPHER,
    AlreadyFinalized,
    AlreadyUpdated,
    InvalidTag,
    NotYetFinalized,
    UnsupportedAlgorithm,
)

__all__ = ["AEADDecryptionContext", "AEADEncryptionContext", "Cipher", "CipherContext"]

_NATIVE = {
    "ECB": aeskit.AESECB,  # type: ignore[attr-defined]
    "CBC": aeskit.AESCBC,  # type: ignore[attr-defined]
    "CTR": aeskit.AESCTR,  # type: ignore[attr-defined]
    "CFB": aeskit.AESCFB,  # type: ignore[attr-defined]
    "CFB8": aeskit.AESCFB8,  # type: ignore[attr-defined]
    "OFB": aeskit.AESOFB,  # type: ignore[attr-defined]
    "XTS": aeskit.AESXTS,  # type: ignore[attr-defined]
    "GCM": aeskit.AESGCM,  # type: ignore[attr-defined]
}
#: Where each mode keeps its IV, nonce or tweak.
_IV_ATTR = {
    "ECB": None,
    "CBC": "initialization_vector",
    "CTR": "nonce",
    "CFB": "initialization_vector",
    "CFB8": "initialization_vector",
    "OFB": "initialization_vector",
    "XTS": "tweak",
    "GCM": "initialization_vector",
}
#: The tag lengths aeskit's GCM verifies natively.
_GCM_TAGS = frozenset(BY_NAME["GCM"].tag_lengths)
_XTS_UNIT = (
    "In XTS mode you must supply at least a full block in the first update call. "
    "For AES this is 16 bytes."
)
_XTS_MAX = 16 << 20
_FINALIZED = "Context was already finalized."

_ALGORITHM_TYPES: tuple[type, ...] = (algorithms.CipherAlgorithm,)
_MODE_TYPES: tuple[type, ...] = (modes.Mode,)
_AES_TYPES: dict[type, type | None] = {
    algorithms.AES: None,
    algorithms.AES128: None,
    algorithms.AES256: None,
}
_OWN_MODES: tuple[Any, ...] = (
    modes.ECB, modes.CBC, modes.CTR, modes.CFB, modes.CFB8, modes.OFB, modes.XTS, modes.GCM,
)
_MODE_NAMES: dict[type, str] = {cls: cls.name for cls in _OWN_MODES}
_PYCA_MODES: frozenset[Any] = frozenset()
try:
    from cryptography.hazmat.decrepit.ciphers import modes as _pyca_decrepit
    from cryptography.hazmat.primitives import _cipheralgorithm as _pyca_alg
    from cryptography.hazmat.primitives import _modes as _pyca_modes_base
    from cryptography.hazmat.primitives.ciphers import Cipher as _pyca_cipher
    from cryptography.hazmat.primitives.ciphers import algorithms as _pyca_algs
    from cryptography.hazmat.primitives.ciphers import modes as _pyca_modes
except ImportError:
    pass
else:
    _ALGORITHM_TYPES += (_pyca_alg.CipherAlgorithm,)
    _MODE_TYPES += (_pyca_modes_base.Mode,)
    _AES_TYPES.update({_pyca_algs.AES: None, _pyca_algs.AES128: None, _pyca_algs.AES256: None})
    # a pyca mode validates with pyca's algorithm classes: ours are converted for it
    _AES_TYPES.update({
        algorithms.AES: _pyca_algs.AES,
        algorithms.AES128: _pyca_algs.AES128,
        algorithms.AES256: _pyca_algs.AES256,
    })
    _PYCA_MODES = frozenset((
        _pyca_modes.ECB, _pyca_modes.CBC, _pyca_modes.CTR, _pyca_decrepit.CFB,
        _pyca_decrepit.CFB8, _pyca_decrepit.OFB, _pyca_modes.XTS, _pyca_modes.GCM,
    ))
    _MODE_NAMES.update({cls: cls.name for cls in _PYCA_MODES})

_M = TypeVar("_M")


def _is_instance(obj: Any, types: tuple[type, ...]) -> bool:
    """isinstance, without narrowing obj's type for mypy (the types are a tuple)."""
    return isinstance(obj, types)


def _finalized() -> Exception:
    return AlreadyFinalized(_FINALIZED)


class Cipher(Generic[_M]):
    """pyca's ``Cipher(algorithm, mode)``: AES (this module's ``algorithms.AES``,
    ``AES128``, ``AES256`` or pyca's) in one of this module's modes or pyca's. Other
    algorithms raise UnsupportedAlgorithm from ``encryptor()`` and ``decryptor()``."""

    algorithm: Any
    mode: _M

    def __init__(self, algorithm: Any, mode: _M, backend: Any = None) -> None:
        if not _is_instance(algorithm, _ALGORITHM_TYPES):
            raise TypeError("Expected interface of CipherAlgorithm.")
        m: Any = mode
        if m is not None:
            assert _is_instance(m, _MODE_TYPES)
            check_with = _AES_TYPES.get(type(algorithm))
            if check_with is not None and type(m) in _PYCA_MODES:
                m.validate_for_algorithm(check_with(algorithm.key))
            else:
                m.validate_for_algorithm(algorithm)
        self.algorithm = algorithm
        self.mode = mode

    def encryptor(self) -> Any:
        m: Any = self.mode
        if _MODE_NAMES.get(type(m)) == "GCM" and m.tag is not None:
            raise ValueError("Authentication tag must be None when encrypting.")
        return self._context(True)

    def decryptor(self) -> Any:
        return self._context(False)

    def _context(self, enc: bool) -> Any:
        algorithm: Any = self.algorithm
        mode: Any = self.mode
        name = _MODE_NAMES.get(type(mode))
        if type(algorithm) not in _AES_TYPES or name is None:
            shown = mode.name if mode else mode
            msg = f"cipher {algorithm.name} in {shown} mode is not supported "
            if algorithm.name != "AES":
                msg += "by aeskit.compat.cryptography, which runs AES only"
            raise UnsupportedAlgorithm(msg, UNSUPPORTED_CIPHER)
        attr = _IV_ATTR[name]
        iv: Any = None if attr is None else rbuf(getattr(mode, attr))
        key = rbuf(algorithm.key)
        if name == "XTS":
            half = len(key) // 2
            if hmac.compare_digest(bytes(key[:half]), bytes(key[half:])):
                if enc or not PYCA:
                    raise ValueError("In XTS mode duplicated keys are not allowed")
                # OpenSSL refuses equal halves only to encrypt; aeskit's XTS refuses them
                # both ways, so pyca decrypts what it alone would have
                return _pyca_cipher(_pyca_algs.AES(bytes(key)), _pyca_modes.XTS(bytes(iv))).decryptor()
            return CipherContext._xts(_NATIVE[name](key), iv, enc)
        if name == "GCM":
            if enc:
                return AEADEncryptionContext._make(key, iv, mode)
            return AEADDecryptionContext._make(key, iv, mode)
        native = _NATIVE[name](key)
        return CipherContext._make(native, name, iv, enc)


class CipherContext:
    """pyca's ``CipherContext``, for every mode but GCM."""

    __slots__ = ("_bs", "_ctx", "_enc", "_iv", "_key", "_name", "_pending")

    _ctx: Any
    _key: Any
    _iv: Any
    _enc: bool
    _bs: int
    _pending: int
    _name: str

    @classmethod
    def _make(cls, native: Any, name: str, iv: Any, enc: bool) -> CipherContext:
        self = object.__new__(cls)
        self._key, self._iv, self._enc, self._name = native, iv, enc, name
        self._bs = 16 if name in ("ECB", "CBC") else 1
        self._pending = 0
        if iv is None:
            self._ctx = native.encryptor() if enc else native.decryptor()
        else:
            self._ctx = native.encryptor(iv) if enc else native.decryptor(iv)
        return self

    @classmethod
    def _xts(cls, native: Any, tweak: Any, enc: bool) -> CipherContext:
        self = object.__new__(cls)
        self._key, self._iv, self._enc, self._name = native, tweak, enc, "XTS"
        self._bs, self._pending = 1, 0
        self._ctx = True  # no native context: each update is a data unit
        return self

    def _unit(self, data: Any, buf: Any) -> Any:
        n = len(data)
        if n == 0:
            return 0 if buf is not None else b""
        if n < 16 or n > _XTS_MAX:
            raise ValueError(_XTS_UNIT)
        x = self._key
        if buf is None:
            return x.encrypt(self._iv, data) if self._enc else x.decrypt(self._iv, data)
        if self._enc:
            return x.encrypt_into(self._iv, data, buf)
        return x.decrypt_into(self._iv, data, buf)

    def update(self, data: Any) -> bytes:
        d = rbuf(data)
        if self._ctx is None:
            raise _finalized()
        if self._ctx is True:
            return self._unit(d, None)  # type: ignore[no-any-return]
        if self._bs != 1:
            self._pending = (self._pending + len(d)) & 15
        return self._ctx.update(d)  # type: ignore[no-any-return]

    def update_into(self, data: Any, buf: Any) -> int:
        d, b = rbuf(data), wbuf(buf)
        if self._ctx is None:
            raise _finalized()
        need = len(d) + self._bs - 1
        if len(b) < need:
            raise ValueError(f"buffer must be at least {need} bytes for this payload")
        if (d is b or type(b) is not bytearray or type(d) not in DIRECT) and meet(d, b):
            raise ValueError(OVERLAP)  # apart(d, b), inline: no Python call per update
        if self._ctx is True:
            return self._unit(d, b)  # type: ignore[no-any-return]
        if self._bs != 1:
            self._pending = (self._pending + len(d)) & 15
        return self._ctx.update_into(d, b)  # type: ignore[no-any-return]

    def finalize(self) -> bytes:
        if self._ctx is None:
            raise _finalized()
        if self._pending:
            raise ValueError(
                "The length of the provided data is not a multiple of the block length."
            )
        out = b"" if self._ctx is True else self._ctx.finalize()
        self._ctx = None
        return out  # type: ignore[no-any-return]

    def reset_nonce(self, nonce: Any) -> None:
        n = rbuf(nonce)
        if self._ctx is None:
            raise _finalized()
        if self._name != "CTR":
            raise UnsupportedAlgorithm(
                "This algorithm or mode does not support resetting the nonce.",
                UNSUPPORTED_CIPHER,
            )
        if len(n) != 16:
            raise ValueError("Nonce must be 16 bytes long")
        self._ctx = self._key.encryptor(n) if self._enc else self._key.decryptor(n)


class _GCMContext:
    __slots__ = ("_aad_left", "_ctx", "_left", "_mode", "_updated")

    _ctx: Any
    _mode: Any
    _updated: bool
    _left: int
    _aad_left: int

    def _start(self, mode: Any) -> None:
        self._mode = mode
        self._updated = False
        self._left = mode._MAX_ENCRYPTED_BYTES
        self._aad_left = mode._MAX_AAD_BYTES

    def _count(self, n: int) -> None:
        self._updated = True
        if n > self._left:
            raise ValueError("Exceeded maximum encrypted byte limit")
        self._left -= n
        if self._ctx is None:
            raise _finalized()

    def update(self, data: Any) -> bytes:
        d = rbuf(data)
        self._count(len(d))
        return self._ctx.update(d)  # type: ignore[no-any-return]

    def update_into(self, data: Any, buf: Any) -> int:
        d, b = rbuf(data), wbuf(buf)
        self._count(len(d))
        if len(b) < len(d):
            raise ValueError(f"buffer must be at least {len(d)} bytes for this payload")
        apart(d, b)
        return self._ctx.update_into(d, b)  # type: ignore[no-any-return]

    def authenticate_additional_data(self, data: Any) -> None:
        d = rbuf(data)
        if self._ctx is None:
            raise _finalized()
        if self._updated:
            raise AlreadyUpdated("Update has been called on this context.")
        if len(d) > self._aad_left:
            raise ValueError("Exceeded maximum AAD byte limit")
        self._aad_left -= len(d)
        self._ctx.authenticate_additional_data(d)

    def reset_nonce(self, nonce: Any) -> None:
        rbuf(nonce)
        if self._ctx is None:
            raise _finalized()
        raise UnsupportedAlgorithm(
            "This algorithm or mode does not support resetting the nonce.", UNSUPPORTED_CIPHER
        )


class AEADEncryptionContext(_GCMContext):
    """pyca's ``AEADEncryptionContext``: GCM encryption; ``tag`` after finalize()."""

    __slots__ = ("_tag",)

    _tag: bytes | None

    @classmethod
    def _make(cls, key: Any, iv: Any, mode: Any) -> AEADEncryptionContext:
        self = object.__new__(cls)
        self._start(mode)
        self._ctx = _NATIVE["GCM"](key).encryptor(iv)
        self._tag = None
        return self

    def finalize(self) -> bytes:
        if self._ctx is None:
            raise _finalized()
        out = self._ctx.finalize()
        self._tag = self._ctx.tag
        self._ctx = None
        return out  # type: ignore[no-any-return]

    @property
    def tag(self) -> bytes:
        if self._tag is None:
            raise NotYetFinalized("You must finalize encryption before getting the tag.")
        return self._tag


class AEADDecryptionContext(_GCMContext):
    """pyca's ``AEADDecryptionContext``: GCM decryption, ended by finalize() with the
    mode's tag or finalize_with_tag(tag)."""

    __slots__ = ("_full",)

    #: None, or an encryptor that recomputes the full tag over the same ciphertext,
    #: for a tag length aeskit's GCM does not verify natively.
    _full: Any

    @classmethod
    def _make(cls, key: Any, iv: Any, mode: Any) -> AEADDecryptionContext:
        self = object.__new__(cls)
        self._start(mode)
        tag = mode.tag
        native = _NATIVE["GCM"]
        if tag is not None and len(tag) in _GCM_TAGS:
            t = len(tag)
        elif tag is None and mode._min_tag_length >= 16:
            t = 16
        else:
            t = 0
        if t:
            self._ctx = native(key, tag_length=t).decryptor(iv)
            self._full = None
        else:
            k = native(key)
            self._ctx = k.decryptor(iv)
            self._full = k.encryptor(iv)
        return self

    def update(self, data: Any) -> bytes:
        out = super().update(data)
        if self._full is not None:
            self._full.update(out)
        return out

    def update_into(self, data: Any, buf: Any) -> int:
        n = super().update_into(data, buf)
        if self._full is not None:
            self._full.update(memoryview(buf).cast("B")[:n])
        return n

    def authenticate_additional_data(self, data: Any) -> None:
        super().authenticate_additional_data(data)
        if self._full is not None:
            self._full.authenticate_additional_data(data)

    def finalize(self) -> bytes:
        if self._ctx is None:
            raise _finalized()
        tag = self._mode.tag
        if tag is None:
            raise ValueError("Authentication tag must be provided when decrypting.")
        return self._check(tag)

    def finalize_with_tag(self, tag: Any) -> bytes:
        if not isinstance(tag, bytes):
            raise not_instance(tag, "bytes")
        if self._ctx is None:
            raise _finalized()
        if self._mode.tag is not None:
            raise ValueError("Authentication tag must be provided only once.")
        least = self._mode._min_tag_length
        if len(tag) < least:
            raise ValueError(f"Authentication tag must be {least} bytes or longer.")
        if len(tag) > 16:
            raise ValueError("Authentication tag cannot be more than 16 bytes.")
        return self._check(tag)

    def _check(self, tag: bytes) -> bytes:
        ctx, full = self._ctx, self._full
        self._ctx = self._full = None
        if full is None:
            try:
                return ctx.finalize_with_tag(tag)  # type: ignore[no-any-return]
            except aeskit.InvalidTag:
                raise InvalidTag() from None
        full.finalize()
        if not hmac.compare_digest(full.tag[: len(tag)], tag):
            raise InvalidTag()
        return b""
