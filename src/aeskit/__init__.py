"""aeskit: AES for Python at the speed of the hardware.

Every mode is a class built from a key (expanded once, immutable, safe to
share between threads) with one-shot methods, zero-copy ``_into`` methods
and streaming contexts. The backend (``portable``, ``aesni``, ...) is
chosen once per key: the best one this CPU has, unless ``backend=`` or the
``AESKIT_BACKEND`` environment variable names another.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _aeskit
from ._aeskit import (
    AEADContext,
    AESCBC,
    AESCFB,
    AESCFB8,
    AESCTR,
    AESECB,
    AESGCM,
    AESGCMSIV,
    AESKW,
    AESKWP,
    AESOCB3,
    AESOFB,
    AESXTS,
    AlreadyFinalized,
    CipherContext,
    InvalidTag,
    InvalidUnwrap,
    LimitExceeded,
    NotYetFinalized,
    AESCCM,
    AESCMAC,
    AESEAX,
    MACContext,
    AESSIV,
)
from .keywrap import (
    aes_key_unwrap,
    aes_key_unwrap_with_padding,
    aes_key_wrap,
    aes_key_wrap_with_padding,
)

from ._version import __version__

__all__ = [
    "AEADContext",
    "AESCBC",
    "AESCFB",
    "AESCFB8",
    "AESCTR",
    "AESECB",
    "AESGCM",
    "AESGCMSIV",
    "AESKW",
    "AESKWP",
    "AESOCB3",
    "AESOFB",
    "AESXTS",
    "AlreadyFinalized",
    "BackendInfo",
    "CipherContext",
    "InvalidTag",
    "InvalidUnwrap",
    "LimitExceeded",
    "NotYetFinalized",
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
    "backends",
    "cpu_features",
    "__version__",
    "AESCCM",
    "AESCMAC",
    "AESEAX",
    "MACContext",
    "AESSIV",
]


class BackendInfo(NamedTuple):
    """Which backends this build has, which this CPU can run, and the default."""

    all: tuple[str, ...]
    available: tuple[str, ...]
    default: str


def backends() -> BackendInfo:
    """The backends compiled in (best first), those usable here, and the default."""
    return BackendInfo(*_aeskit.backends())


def cpu_features() -> dict[str, bool]:
    """CPU features aeskit looks for; True only where the OS supports them too."""
    return _aeskit.cpu_features()
