"""pyca/cryptography's key-wrap functions (``cryptography.hazmat.primitives.keywrap``),
with its names, argument order and ignored ``backend`` argument, on aeskit's KW and KWP:
code written against pyca runs unchanged. A failed unwrap raises
:class:`aeskit.InvalidUnwrap`; a wrong length of the key to wrap, ``ValueError``. The
functions are the C module's, so that their errors name them and their arguments
("aes_key_wrap: wrapping_key must be 16, 24 or 32 bytes, got 15"); their types are in
keywrap.pyi."""

from ._aeskit import (
    aes_key_unwrap,
    aes_key_unwrap_with_padding,
    aes_key_wrap,
    aes_key_wrap_with_padding,
)

__all__ = [
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
]
