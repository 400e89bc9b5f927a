"""pyca/cryptography's key-wrap functions, with its names, argument order and ignored
``backend`` argument, on aeskit's KW and KWP."""

from typing import Any

from typing_extensions import Buffer

__all__ = [
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
]

def aes_key_wrap(wrapping_key: Buffer, key_to_wrap: Buffer, backend: Any = None) -> bytes:
    """RFC 3394 key wrap: key_to_wrap a multiple of 8 bytes, at least 16."""

def aes_key_unwrap(wrapping_key: Buffer, wrapped_key: Buffer, backend: Any = None) -> bytes:
    """RFC 3394 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a wrong
    length."""

def aes_key_wrap_with_padding(
    wrapping_key: Buffer, key_to_wrap: Buffer, backend: Any = None
) -> bytes:
    """RFC 5649 key wrap with padding: key_to_wrap 1 to 2**32 - 1 bytes."""

def aes_key_unwrap_with_padding(
    wrapping_key: Buffer, wrapped_key: Buffer, backend: Any = None
) -> bytes:
    """RFC 5649 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a wrong
    length."""
