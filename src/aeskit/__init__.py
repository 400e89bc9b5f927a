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
    AlreadyFinalized,
    CipherContext,
    InvalidTag,
    InvalidUnwrap,
    LimitExceeded,
    MACContext,
    NotYetFinalized,
)
from ._modes import CLASS_NAMES
from ._version import __version__
from .keywrap import (
    aes_key_unwrap,
    aes_key_unwrap_with_padding,
    aes_key_wrap,
    aes_key_wrap_with_padding,
)

# One class per mode of the C registry (AESGCM, AESCBC, ...), named by its descriptor
# (_modes.CLASS_NAMES); __init__.pyi declares each, and tests/test_api_surface.py checks
# that it declares exactly these.
globals().update({name: getattr(_aeskit, name) for name in CLASS_NAMES})

__all__ = [
    "AEADContext",
    "AlreadyFinalized",
    "BackendInfo",
    "CipherContext",
    "InvalidTag",
    "InvalidUnwrap",
    "LimitExceeded",
    "MACContext",
    "NotYetFinalized",
    "__version__",
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
    "backends",
    "cpu_features",
]
__all__ += list(CLASS_NAMES)


class BackendInfo(NamedTuple):
    """Which backends this build has, which this CPU can run, and the default."""

    all: tuple[str, ...]
    available: tuple[str, ...]
    default: str


BackendInfo.all.__doc__ = (
    "Every backend compiled into this build, best first: portable and the backends of "
    "this CPU family (x86-64: aesni, vaes_avx2, vaes_avx512), whether or not this CPU "
    "can run them.")
BackendInfo.available.__doc__ = (
    "The backends of .all that this CPU and operating system can run, best first; "
    "portable always. A key object's backend argument takes one of these.")
BackendInfo.default.__doc__ = (
    "The backend a key object gets with backend='auto': the first of .available, or "
    "the one the AESKIT_BACKEND environment variable named at import.")


def backends() -> BackendInfo:
    """The backends compiled in (best first), those usable here, and the default."""
    return BackendInfo(*_aeskit.backends())


def cpu_features() -> dict[str, bool]:
    """CPU features aeskit looks for; True only where the OS supports them too."""
    return _aeskit.cpu_features()
