"""pyca/cryptography's API with pyca's exact behaviour, on aeskit's kernels.

Replace ``from cryptography.hazmat.primitives.ciphers.aead import AESGCM`` with
``from aeskit.compat.cryptography import AESGCM`` (and likewise ``Cipher``,
``algorithms`` and ``modes``): key sizes, nonce and tag ranges, buffer sizes, data
limits, the order in which arguments are checked, exception types and messages are
pyca's. A tag that does not authenticate raises ``cryptography.exceptions.InvalidTag``
when pyca is installed and :class:`aeskit.InvalidTag` when it is not; so do the other
exceptions pyca defines (exceptions.py). docs/migrating.md lists what is not pyca's.
"""

from __future__ import annotations

from . import algorithms, exceptions, modes
from .aead import AESCCM, AESGCM, AESGCMSIV, AESOCB3, AESSIV
from .base import AEADDecryptionContext, AEADEncryptionContext, Cipher, CipherContext
from .exceptions import (
    AlreadyFinalized,
    AlreadyUpdated,
    InvalidTag,
    NotYetFinalized,
    UnsupportedAlgorithm,
)

__all__ = [
    "AESCCM",
    "AESGCM",
    "AESGCMSIV",
    "AESOCB3",
    "AESSIV",
    "AEADDecryptionContext",
    "AEADEncryptionContext",
    "AlreadyFinalized",
    "AlreadyUpdated",
    "Cipher",
    "CipherContext",
    "InvalidTag",
    "NotYetFinalized",
    "UnsupportedAlgorithm",
    "algorithms",
    "exceptions",
    "modes",
]
