"""pyca/cryptography's AES algorithm objects (``ciphers.algorithms``: ``AES``,
``AES128``, ``AES256``), for :class:`~aeskit.compat.cryptography.Cipher`, with pyca's
checks and messages. :class:`Cipher` takes pyca's own objects too."""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["AES", "AES128", "AES256", "BlockCipherAlgorithm", "CipherAlgorithm"]


class CipherAlgorithm(metaclass=abc.ABCMeta):
    """A cipher: its name, key sizes (bits) and key size."""

    @property
    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def key_sizes(self) -> frozenset[int]: ...

    @property
    @abc.abstractmethod
    def key_size(self) -> int: ...


class BlockCipherAlgorithm(CipherAlgorithm):
    """A block cipher: a cipher with a block size (bits) and a key."""

    key: Any

    @property
    @abc.abstractmethod
    def block_size(self) -> int: ...


def check_byteslike(name: str, value: Any) -> None:
    """pyca's check of a bytes-like constructor argument."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return
    try:
        memoryview(value)
    except TypeError:
        raise TypeError(f"{name} must be bytes-like") from None


def _verify_key_size(algorithm: CipherAlgorithm, key: Any) -> Any:
    check_byteslike("key", key)
    if len(key) * 8 not in algorithm.key_sizes:
        raise ValueError(f"Invalid key size ({len(key) * 8}) for {algorithm.name}.")
    return key


class AES(BlockCipherAlgorithm):
    """AES with a 128-, 192- or 256-bit key, or a 256- or 512-bit key for XTS."""

    name = "AES"
    block_size = 128
    key_sizes = frozenset([128, 192, 256, 512])

    def __init__(self, key: Any) -> None:
        self.key = _verify_key_size(self, key)

    @property
    def key_size(self) -> int:
        return len(self.key) * 8


class _OneKeySize(BlockCipherAlgorithm):
    name = "AES"
    block_size = 128

    def __init__(self, key: Any) -> None:
        self.key = _verify_key_size(self, key)


class AES128(_OneKeySize):
    """AES with a 128-bit key."""

    key_sizes = frozenset([128])
    key_size = 128


class AES256(_OneKeySize):
    """AES with a 256-bit key."""

    key_sizes = frozenset([256])
    key_size = 256
