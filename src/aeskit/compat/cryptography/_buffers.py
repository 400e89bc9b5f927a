"""pyca/cryptography's rules for the buffers it takes, with its messages.

pyca takes a buffer whose items are unsigned bytes (format ``B`` or ``c``, with an
optional ``@``) in at least one dimension, laid out C-contiguously; an output buffer
must also be writable. aeskit's native classes take any C-contiguous buffer, so the
layer checks first. ``bytes`` and ``bytearray``, by far the most common, skip the
checks.

pyca 51 also refuses an output buffer that shares a byte with the input data
(``OVERLAP``), which needs the two buffers' addresses: ``meet`` is the native
helper that compares them. ``apart`` keeps the common case (bytes or a bytearray
in, another bytearray out: separate allocations) off that call.
"""

from __future__ import annotations

import operator
from typing import Any

from aeskit import _aeskit  # type: ignore[attr-defined]  # the C module: no stub

#: pyca's limit on one AEAD call's data and each piece of associated data.
MAX_AEAD = 2**31 - 1
TOO_LONG = "Data or associated data too long. Max 2**31 - 1 bytes"

#: pyca 51's refusal of an output buffer over the input data, exactly or partly
#: (adjacent buffers, and a nonce or associated data under the output, are fine).
OVERLAP = "data and buf must not overlap"

meet = _aeskit.buffers_meet

_BYTE_FORMATS = frozenset(("B", "c", "@B", "@c"))
_U64 = 2**64
DIRECT = frozenset((bytes, bytearray))


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


def apart(data: Any, buf: Any) -> None:
    """pyca 51's overlap check: ValueError if data and buf share a byte. A bytes or
    bytearray object and a distinct bytearray never do, so they skip the native call."""
    if (data is buf or type(buf) is not bytearray or type(data) not in DIRECT) and meet(
        data, buf
    ):
        raise ValueError(OVERLAP)
