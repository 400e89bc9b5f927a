"""pyca/cryptography's mode objects (``ciphers.modes``) for the modes
:class:`~aeskit.compat.cryptography.Cipher` runs: ECB, CBC, CTR, CFB, CFB8, OFB, XTS
and GCM, with pyca's checks and messages. :class:`Cipher` takes pyca's own mode
objects too; the checks below accept pyca's algorithm objects as well as these."""

from __future__ import annotations

import abc
from typing import Any

from . import algorithms
from .algorithms import check_byteslike
from .exceptions import UNSUPPORTED_CIPHER, UnsupportedAlgorithm

__all__ = [
    "CBC",
    "CFB",
    "CFB8",
    "CTR",
    "ECB",
    "GCM",
    "OFB",
    "XTS",
    "Mode",
    "ModeWithAuthenticationTag",
    "ModeWithInitializationVector",
    "ModeWithNonce",
    "ModeWithTweak",
]

try:
    from cryptography.hazmat.primitives import _cipheralgorithm as _pyca_alg
    from cryptography.hazmat.primitives.ciphers import algorithms as _pyca_algs
except ImportError:
    _BLOCK: tuple[type, ...] = (algorithms.BlockCipherAlgorithm,)
    _AES_FIXED: tuple[type, ...] = (algorithms.AES128, algorithms.AES256)
else:
    _BLOCK = (algorithms.BlockCipherAlgorithm, _pyca_alg.BlockCipherAlgorithm)
    _AES_FIXED = (algorithms.AES128, algorithms.AES256, _pyca_algs.AES128, _pyca_algs.AES256)


def _is_block(algorithm: Any) -> bool:
    return isinstance(algorithm, _BLOCK)


class Mode(metaclass=abc.ABCMeta):
    """A mode: its name, and a check of the algorithm it is used with."""

    @property
    @abc.abstractmethod
    def name(self) -> str: ...

    @abc.abstractmethod
    def validate_for_algorithm(self, algorithm: Any) -> None: ...


class ModeWithInitializationVector(Mode, metaclass=abc.ABCMeta):
    @property
    @abc.abstractmethod
    def initialization_vector(self) -> Any: ...


class ModeWithTweak(Mode, metaclass=abc.ABCMeta):
    @property
    @abc.abstractmethod
    def tweak(self) -> Any: ...


class ModeWithNonce(Mode, metaclass=abc.ABCMeta):
    @property
    @abc.abstractmethod
    def nonce(self) -> Any: ...


class ModeWithAuthenticationTag(Mode, metaclass=abc.ABCMeta):
    @property
    @abc.abstractmethod
    def tag(self) -> bytes | None: ...


def _check_aes_key_length(self: Mode, algorithm: Any) -> None:
    if algorithm.key_size > 256 and algorithm.name == "AES":
        raise ValueError("Only 128, 192, and 256 bit keys are allowed for this AES mode")


def _check_iv_and_key_length(self: Any, algorithm: Any) -> None:
    if not _is_block(algorithm):
        raise UnsupportedAlgorithm(
            f"{self} requires a block cipher algorithm", UNSUPPORTED_CIPHER
        )
    _check_aes_key_length(self, algorithm)
    iv_len = len(self.initialization_vector)
    if iv_len * 8 != algorithm.block_size:
        raise ValueError(f"Invalid IV size ({iv_len}) for {self.name}.")


class _IVMode(ModeWithInitializationVector):
    def __init__(self, initialization_vector: Any) -> None:
        check_byteslike("initialization_vector", initialization_vector)
        self._initialization_vector = initialization_vector

    @property
    def initialization_vector(self) -> Any:
        return self._initialization_vector

    validate_for_algorithm = _check_iv_and_key_length


class CBC(_IVMode):
    name = "CBC"


class CFB(_IVMode):
    name = "CFB"


class CFB8(_IVMode):
    name = "CFB8"


class OFB(_IVMode):
    name = "OFB"


class ECB(Mode):
    name = "ECB"

    validate_for_algorithm = _check_aes_key_length


class CTR(ModeWithNonce):
    name = "CTR"

    def __init__(self, nonce: Any) -> None:
        check_byteslike("nonce", nonce)
        self._nonce = nonce

    @property
    def nonce(self) -> Any:
        return self._nonce

    def validate_for_algorithm(self, algorithm: Any) -> None:
        _check_aes_key_length(self, algorithm)
        if not _is_block(algorithm):
            raise UnsupportedAlgorithm(
                f"{self.name} requires a block cipher algorithm", UNSUPPORTED_CIPHER
            )
        if len(self.nonce) * 8 != algorithm.block_size:
            raise ValueError(f"Invalid nonce size ({len(self.nonce)}) for {self.name}.")


class XTS(ModeWithTweak):
    name = "XTS"

    def __init__(self, tweak: Any) -> None:
        check_byteslike("tweak", tweak)
        if len(tweak) != 16:
            raise ValueError("tweak must be 128-bits (16 bytes)")
        self._tweak = tweak

    @property
    def tweak(self) -> Any:
        return self._tweak

    def validate_for_algorithm(self, algorithm: Any) -> None:
        if isinstance(algorithm, _AES_FIXED):
            raise TypeError(
                "The AES128 and AES256 classes do not support XTS, please use "
                "the standard AES class instead."
            )
        if algorithm.key_size not in (256, 512):
            raise ValueError(
                "The XTS specification requires a 256-bit key for AES-128-XTS"
                " and 512-bit key for AES-256-XTS"
            )


class GCM(ModeWithInitializationVector, ModeWithAuthenticationTag):
    name = "GCM"
    _MAX_ENCRYPTED_BYTES = (2**39 - 256) // 8
    _MAX_AAD_BYTES = (2**64 - 1) // 8

    def __init__(
        self, initialization_vector: Any, tag: bytes | None = None, min_tag_length: int = 16
    ) -> None:
        check_byteslike("initialization_vector", initialization_vector)
        if len(initialization_vector) < 8 or len(initialization_vector) > 128:
            raise ValueError(
                "initialization_vector must be between 8 and 128 bytes (64 and 1024 bits)."
            )
        self._initialization_vector = initialization_vector
        if min_tag_length < 4:
            raise ValueError("min_tag_length must be >= 4")
        if tag is not None:
            if not isinstance(tag, bytes):
                raise TypeError("tag must be bytes")
            if len(tag) < min_tag_length:
                raise ValueError(f"Authentication tag must be {min_tag_length} bytes or longer.")
        self._tag = tag
        self._min_tag_length = min_tag_length

    @property
    def tag(self) -> bytes | None:
        return self._tag

    @property
    def initialization_vector(self) -> Any:
        return self._initialization_vector

    def validate_for_algorithm(self, algorithm: Any) -> None:
        _check_aes_key_length(self, algorithm)
        if not _is_block(algorithm):
            raise UnsupportedAlgorithm(
                "GCM requires a block cipher algorithm", UNSUPPORTED_CIPHER
            )
        block_size_bytes = algorithm.block_size // 8
        if self._tag is not None and len(self._tag) > block_size_bytes:
            raise ValueError(f"Authentication tag cannot be more than {block_size_bytes} bytes.")
