"""pyca/cryptography's rules for the buffers it takes, with its messages.

pyca takes a buffer whose items are unsigned bytes (format ``B`` or ``c``, with an
optional ``@``) in at least one dimension, laid out C-contiguously; an output buffer
must also be writable. aeskit's native classes take any C-contiguous buffer, so the
layer checks first. ``bytes`` and ``bytearray``, by far the most common, skip the
checks.
"""

from __future__ import annotations

import operator
from typing import Any

#: pyca's limit on one AEAD call's data and each piece of associated data.
MAX_AEAD = 2**31 - 1
TOO_LONG = "Data or associated data too long. Max 2**31 - 1 bytes"

_BYTE_FORMATS = frozenset(("B", "c", "@B", "@c"))
_U64 = 2**64


def _not_a_buffer(obj: object) -> TypeError:
    msg = f'Cannot convert "{type(obj)}" instance to a buffer.'
    if isinstance(obj, str):
        msg += "\nDid you mean to pass a bytestring instead?"
    return TypeError(msg)


def _view(obj: Any, writable: bool) -> memoryview:
    try:
        view = memoryview(obj)
    except TypeError:
        raise _not_a_buffer(obj) from None
    if view.format not in _BYTE_FORMATS or view.ndim == 0:
        raise _not_a_buffer(obj)
    if writable and view.readonly:
        raise TypeError("Buffer is not writable.")
    if not view.c_contiguous:
        raise BufferError("Buffer is not contiguous.")
    return view if view.ndim == 1 and view.format == "B" else view.cast("B")


def rbuf(obj: Any) -> Any:
    """obj if pyca would read it as a buffer (then len() is its byte count), or the
    error pyca raises."""
    t = type(obj)
    if t is bytes or t is bytearray:
        return obj
    return _view(obj, False)


def wbuf(obj: Any) -> Any:
    """obj if pyca would write into it, as rbuf."""
    if type(obj) is bytearray:
        return obj
    return _view(obj, True)


def usize(obj: Any) -> int:
    """An integer argument as pyca (a Rust usize) takes it, with its errors."""
    n = operator.index(obj)
    if n < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if n >= _U64:
        raise OverflowError("int too big to convert")
    return n


def not_instance(obj: object, of: str) -> TypeError:
    """pyca's error for an argument of the wrong Python type."""
    return TypeError(f"'{type(obj).__qualname__}' object is not an instance of '{of}'")
