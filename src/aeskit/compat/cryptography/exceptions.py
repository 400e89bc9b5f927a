"""The exceptions the layer raises: pyca/cryptography's own classes when it is
installed (so that ``except cryptography.exceptions.InvalidTag`` catches them), and
otherwise aeskit's (:class:`aeskit.InvalidTag`, :class:`aeskit.AlreadyFinalized`,
:class:`aeskit.NotYetFinalized`) and two defined here with pyca's names."""

from __future__ import annotations

import enum

__all__ = [
    "PYCA",
    "AlreadyFinalized",
    "AlreadyUpdated",
    "InvalidTag",
    "NotYetFinalized",
    "UnsupportedAlgorithm",
]


class _AlreadyUpdated(Exception):
    """Associated data came after update(), which closed it."""


class _Reasons(enum.Enum):
    UNSUPPORTED_CIPHER = 2


class _UnsupportedAlgorithm(Exception):
    """The algorithm, mode or key size is not one this layer provides."""

    def __init__(self, message: str, reason: object = None) -> None:
        super().__init__(message)
        self._reason = reason


try:
    from cryptography import exceptions as _pyca
except ImportError:
    import aeskit as _own

    PYCA = False
    AlreadyFinalized: type[Exception] = _own.AlreadyFinalized
    InvalidTag: type[Exception] = _own.InvalidTag
    NotYetFinalized: type[Exception] = _own.NotYetFinalized
    AlreadyUpdated: type[Exception] = _AlreadyUpdated
    UnsupportedAlgorithm: type[Exception] = _UnsupportedAlgorithm
    UNSUPPORTED_CIPHER: object = _Reasons.UNSUPPORTED_CIPHER
else:
    PYCA = True
    AlreadyFinalized = _pyca.AlreadyFinalized
    InvalidTag = _pyca.InvalidTag
    NotYetFinalized = _pyca.NotYetFinalized
    AlreadyUpdated = _pyca.AlreadyUpdated
    UnsupportedAlgorithm = _pyca.UnsupportedAlgorithm
    UNSUPPORTED_CIPHER = _pyca._Reasons.UNSUPPORTED_CIPHER
