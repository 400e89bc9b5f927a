"""The tests' spec tables name exactly the modes the C registry builds types from
(aeskit._aeskit.MODES): a mode added in C without its spec entry fails here, and with it
every parametrized test runs the new mode."""

import aeskit
from aeskit import _aeskit

from helpers import CIPHER, CIPHERS


def test_cipher_specs_are_the_registry():
    names = [spec.name for spec in CIPHERS]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(_aeskit.MODES["ciphers"])
    assert set(CIPHER) == set(names)
    for spec in CIPHERS:
        assert spec.cls is getattr(aeskit, "AES" + spec.name)
