"""pyca/cryptography's key-wrap functions (``cryptography.hazmat.primitives.keywrap``),
with its names, argument order and ignored ``backend`` argument, on aeskit's AESKW and
AESKWP: code written against pyca runs unchanged. A failed unwrap raises
:class:`aeskit.InvalidUnwrap`; a wrong length of the key to wrap, ``ValueError``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# from the package, whose __init__ binds them before it imports this module: its stubs
# type them (the C module has none of its own)
from . import AESKW, AESKWP

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = [
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
]


def aes_key_wrap(wrapping_key: Buffer, key_to_wrap: Buffer, backend: Any = None) -> bytes:
    """RFC 3394 key wrap: key_to_wrap a multiple of 8 bytes, at least 16."""
    return AESKW(wrapping_key).wrap(key_to_wrap)


def aes_key_unwrap(wrapping_key: Buffer, wrapped_key: Buffer, backend: Any = None) -> bytes:
    """RFC 3394 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a wrong
    length."""
    return AESKW(wrapping_key).unwrap(wrapped_key)


def aes_key_wrap_with_padding(wrapping_key: Buffer, key_to_wrap: Buffer,
                              backend: Any = None) -> bytes:
    """RFC 5649 key wrap with padding: key_to_wrap 1 to 2**32 - 1 bytes."""
    return AESKWP(wrapping_key).wrap(key_to_wrap)


def aes_key_unwrap_with_padding(wrapping_key: Buffer, wrapped_key: Buffer,
                                backend: Any = None) -> bytes:
    """RFC 5649 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a wrong
    length."""
    return AESKWP(wrapping_key).unwrap(wrapped_key)
