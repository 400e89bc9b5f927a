"""Shared by the differential tests of aeskit.compat.cryptography against pyca itself:
the outcome of a call (its result, or its exception's type and message), and the
argument values that break each of pyca's rules."""

import array
import functools

import numpy as np
from aead_helpers import zero_map


def outcome(f, *args, **kwargs):
    """('ok', result) or (exception type, message): what a differential compares.
    Exceptions are compared by their class, which is pyca's own in both libraries
    when pyca defines it (the layer raises pyca's classes when pyca is installed)."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - every exception is part of the behaviour
        return (type(e), str(e))


@functools.cache
def huge():
    """2**31 bytes: one more than pyca's AEAD limit; reserves no memory and is never
    read (both libraries refuse it first)."""
    return memoryview(zero_map(2**31))


def bad_buffers():
    """Values pyca refuses as a buffer, each for its own reason: not a buffer (str, with
    its own hint; int; None), items that are not bytes, zero dimensions, not
    C-contiguous."""
    return {
        "str": "x" * 16,
        "int": 16,
        "None": None,
        "array-b": array.array("b", bytes(16)),
        "numpy-u16": np.zeros(8, np.uint16),
        "numpy-0d": np.zeros((), np.uint8),
        "strided": memoryview(bytes(32))[::2],
        "fortran": np.zeros((4, 4), np.uint8, order="F"),
    }


def byte_buffers(data):
    """The same bytes in each kind of buffer pyca takes."""
    return {
        "bytes": bytes(data),
        "bytearray": bytearray(data),
        "memoryview": memoryview(bytes(data)),
        "mv-c": memoryview(bytes(data)).cast("c"),
        "array-B": array.array("B", data),
        "numpy-u8": np.frombuffer(bytes(data), np.uint8).copy(),
    }
