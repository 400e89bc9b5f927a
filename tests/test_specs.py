"""The tests' spec tables name exactly the modes the C registry builds types from
(aeskit._aeskit.MODES): a mode added in C without its spec entry fails here, and with it
every parametrized test runs the new mode."""

import os

import aeskit
from aeskit import _aeskit

from aead_helpers import AEAD, AEADS, OWN_SUITE_AEADS, aead_vectors
from helpers import CIPHER, CIPHERS


def test_cipher_specs_are_the_registry():
    names = [spec.name for spec in CIPHERS]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(_aeskit.MODES["ciphers"])
    assert set(CIPHER) == set(names)
    for spec in CIPHERS:
        assert isinstance(spec.cls, type), spec.name  # aeskit.AES<name> exists


def test_aead_specs_are_the_registry():
    names = [spec.name for spec in AEADS]
    assert len(set(names)) == len(names)
    assert not set(names) & set(OWN_SUITE_AEADS)
    assert sorted(names + list(OWN_SUITE_AEADS)) == sorted(_aeskit.MODES["aeads"])
    assert set(AEAD) == set(names)
    for spec in AEADS:
        assert isinstance(spec.cls, type), spec.name  # aeskit.AES<name> exists
    for name in OWN_SUITE_AEADS:   # their own test file and known answers
        stem = name.lower().replace("-", "")
        assert isinstance(getattr(aeskit, "AES" + stem.upper()), type), name
        assert os.path.exists(os.path.join(os.path.dirname(__file__), f"test_{stem}.py")), name
        assert aead_vectors(stem + ".txt"), name


def test_aead_specs_are_consistent():
    """Each spec's lists agree with each other: the default tag accepted, no length both
    accepted and refused, nonce lengths within nonce_max, a reference for the defaults."""
    for spec in AEADS:
        assert 16 in spec.tag_lengths
        assert not set(spec.tag_lengths) & set(spec.bad_tag_lengths), spec.name
        assert not set(spec.nonce_lengths) & set(spec.bad_nonce_lengths), spec.name
        assert 12 in spec.nonce_lengths, spec.name
        if spec.nonce_max is not None:
            assert max(spec.nonce_lengths) == spec.nonce_max, spec.name
            assert spec.nonce_max + 1 in spec.bad_nonce_lengths, spec.name
        for t in spec.tag_lengths:
            assert any(r.takes(12, t) for r in spec.refs), (spec.name, t)
        assert set(spec.unreferenced_nonces) <= set(spec.nonce_lengths), spec.name
        for n in spec.nonce_lengths:
            referenced = any(r.takes(n, min(spec.tag_lengths)) for r in spec.refs)
            assert referenced != (n in spec.unreferenced_nonces), (spec.name, n)


def test_every_aead_has_known_answers():
    """tests/vectors/aead/<name lowercased>.txt exists and holds vectors."""
    for spec in AEADS:
        assert aead_vectors(spec.name.lower() + ".txt"), spec.name


def test_macs_are_the_registry():
    """Every MAC in the registry is a class (its own test file, test_<name>.py, holds its
    known answers and references)."""
    assert _aeskit.MODES["macs"] == ("CMAC",)
    for name in _aeskit.MODES["macs"]:
        assert isinstance(getattr(aeskit, "AES" + name), type), name


def test_keywrap_specs_are_the_registry():
    from kw_helpers import KEYWRAP, KEYWRAPS, keywrap_vectors

    names = [spec.name for spec in KEYWRAPS]
    assert sorted(names) == sorted(_aeskit.MODES["keywraps"])
    assert set(KEYWRAP) == set(names)
    for spec in KEYWRAPS:
        assert isinstance(spec.cls, type), spec.name
        assert any(v["mode"] == spec.name for v in keywrap_vectors()), spec.name
