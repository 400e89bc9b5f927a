"""The tests' spec tables name exactly the modes the C registry builds types from
(aeskit._aeskit.MODES): a mode added in C without its spec entry fails here, and with it
every parametrized test runs the new mode. The registry and aeskit's classes agree (the
check conftest.py runs before any test), and the known-answer selection (the marker the
wheel's tests select by) covers every mode."""

import dataclasses
import os
import subprocess
import sys

import aeskit
import pytest
from aeskit import _aeskit
from aeskit._modes import MODES, ModeFacts

from aead_helpers import AEAD, AEADS, OWN_SUITE_AEADS, aead_vectors
from conftest import registry_mismatches
from helpers import CIPHER, CIPHERS

TESTS = os.path.dirname(os.path.abspath(__file__))


def _names(family):
    return [m.name for m in MODES if m.family == family]


def test_cipher_specs_are_the_registry():
    names = [spec.name for spec in CIPHERS]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(_names("cipher"))
    assert set(CIPHER) == set(names)
    for spec in CIPHERS:
        assert isinstance(spec.cls, type), spec.name  # aeskit.AES<name> exists


def test_aead_specs_are_the_registry():
    names = [spec.name for spec in AEADS]
    assert len(set(names)) == len(names)
    assert not set(names) & set(OWN_SUITE_AEADS)
    assert sorted(names + list(OWN_SUITE_AEADS)) == sorted(_names("aead"))
    assert set(AEAD) == set(names)
    for spec in AEADS:
        assert isinstance(spec.cls, type), spec.name  # aeskit.AES<name> exists
    for name in OWN_SUITE_AEADS:   # their own test file and known answers
        stem = name.lower().replace("-", "")
        assert isinstance(getattr(aeskit, _aeskit_class(name)), type), name
        assert os.path.exists(os.path.join(os.path.dirname(__file__), f"test_{stem}.py")), name
        assert aead_vectors(stem + ".txt"), name


def test_aead_specs_are_consistent():
    """Each spec's lists agree with each other: the default tag accepted, no length both
    accepted and refused, nonce lengths within nonce_max, a reference for the defaults."""
    for spec in AEADS:
        assert 16 in spec.tag_lengths
        assert not set(spec.tag_lengths) & set(spec.bad_tag_lengths), spec.name
        assert not set(spec.nonce_lengths) & set(spec.bad_nonce_lengths), spec.name
        assert spec.nonce_len in spec.nonce_lengths, spec.name
        assert spec.key_sizes and set(spec.key_sizes) <= {16, 24, 32}, spec.name
        if spec.nonce_max is not None:
            assert max(spec.nonce_lengths) == spec.nonce_max, spec.name
            assert spec.nonce_max + 1 in spec.bad_nonce_lengths, spec.name
        for t in spec.tag_lengths:
            assert any(r.takes(spec.nonce_len, t) for r in spec.refs), (spec.name, t)
        assert set(spec.unreferenced_nonces) <= set(spec.nonce_lengths), spec.name
        for n in spec.nonce_lengths:
            referenced = any(r.takes(n, min(spec.tag_lengths)) for r in spec.refs)
            assert referenced != (n in spec.unreferenced_nonces), (spec.name, n)


def test_every_aead_has_known_answers():
    """tests/vectors/aead/<name lowercased, without "-">.txt exists and holds vectors."""
    for spec in AEADS:
        assert aead_vectors(spec.name.lower().replace("-", "") + ".txt"), spec.name


def test_macs_are_the_registry():
    """Every MAC in the registry is a class (its own test file, test_<name>.py, holds its
    known answers and references)."""
    assert _names("mac") == ["CMAC"]
    for m in MODES:
        if m.family == "mac":
            assert isinstance(getattr(aeskit, m.class_name), type), m.name
            assert os.path.exists(os.path.join(TESTS, f"test_{m.name.lower()}.py")), m.name


def test_keywrap_specs_are_the_registry():
    from kw_helpers import KEYWRAP, KEYWRAPS, keywrap_vectors

    names = [spec.name for spec in KEYWRAPS]
    assert sorted(names) == sorted(_names("keywrap"))
    assert set(KEYWRAP) == set(names)
    for spec in KEYWRAPS:
        assert isinstance(spec.cls, type), spec.name
        assert any(v["mode"] == spec.name for v in keywrap_vectors()), spec.name


def _aeskit_class(name):
    return next(m.class_name for m in MODES if m.name == name)


# ---- the registry and the classes: conftest.py's check, and its negative controls -------

def test_every_mode_has_its_class_and_every_key_class_its_mode():
    assert registry_mismatches(MODES, vars(aeskit)) == []
    assert {m.family for m in MODES} == {"cipher", "aead", "mac", "keywrap"}
    assert len({m.name for m in MODES}) == len(MODES)
    assert len({m.class_name for m in MODES}) == len(MODES)


def _fake_mode(like, **changes):
    """A mode's facts like another one's, with some fields changed."""
    return dataclasses.replace(like, **changes)


def test_the_facts_are_the_c_records():
    """aeskit._modes.ModeFacts holds every field of _aeskit.ModeFacts, in its order."""
    record = _aeskit.MODES[0]
    assert [f.name for f in dataclasses.fields(ModeFacts)] == list(type(record).__match_args__)
    assert [ModeFacts.of(m) for m in _aeskit.MODES] == list(MODES)


def test_a_descriptor_without_a_class_is_caught():
    xex = _fake_mode(MODES[0], name="XEX", class_name="AESXEX")
    assert registry_mismatches((*MODES, xex), vars(aeskit)) == [
        "the mode XEX has no class aeskit.AESXEX"]
    misnamed = dict(vars(aeskit), AESXEX=aeskit.AESECB)   # a class, but another mode's
    assert registry_mismatches((*MODES, xex), misnamed) == [
        "the mode XEX has no class aeskit.AESXEX"]


def test_a_class_without_a_descriptor_is_caught():
    class AESXEX:
        key_size = 128

    got = registry_mismatches(MODES, dict(vars(aeskit), AESXEX=AESXEX))
    assert got == ["aeskit.AESXEX is a key class without a mode descriptor"]
    dropped = tuple(m for m in MODES if m.name != "CTR")
    assert registry_mismatches(dropped, vars(aeskit)) == [
        "aeskit.AESCTR is a key class without a mode descriptor"]


def test_a_mode_without_a_spec_entry_fails_the_spec_tables(monkeypatch):
    """A new mode whose spec entries are missing stops the tests' helpers at import."""
    import aead_helpers
    import helpers

    xex = _fake_mode(next(m for m in MODES if m.family == "cipher"), name="XEX")
    with pytest.raises(LookupError, match="XEX: a block-cipher mode .* CIPHER_REFS"):
        helpers.cipher_spec(xex)
    xocb = _fake_mode(next(m for m in MODES if m.aead), name="XOCB")
    with pytest.raises(LookupError, match="XOCB: an AEAD .* AEAD_REFS"):
        aead_helpers.aead_spec(xocb)


# ---- the known-answer selection ------------------------------------------------------

def known_answer_gaps(selected, modes):
    """What the known-answer selection lacks: selected maps each selected test's node id to
    the modes its marks name; a test that names no mode, and a mode no test names, are gaps."""
    gaps = [f"{node} names no mode" for node, named in selected.items() if not named]
    if not selected:
        gaps.append("no test is selected")
    named = {mode for named in selected.values() for mode in named}
    gaps += [f"{mode} has no known-answer test" for mode in sorted(modes - named)]
    gaps += [f"{mode} is no mode of the registry" for mode in sorted(named - modes)]
    return gaps


def test_known_answer_gaps_are_found():
    """known_answer_gaps' negative controls: a mode with no test, a test with no mode, an
    unknown mode, nothing selected."""
    modes = {"GCM", "CTR"}
    assert known_answer_gaps({"a": ["GCM"], "b": ["CTR"]}, modes) == []
    assert known_answer_gaps({"a": ["GCM"]}, modes) == ["CTR has no known-answer test"]
    assert known_answer_gaps({"a": ["GCM", "CTR"], "b": []}, modes) == ["b names no mode"]
    assert known_answer_gaps({"a": ["GCM", "CTR", "XEX"]}, modes) == [
        "XEX is no mode of the registry"]
    assert known_answer_gaps({}, modes)[0] == "no test is selected"


def test_known_answer_selection_covers_every_mode():
    """`pytest -m known_answer` (the wheel's tests, pyproject.toml's cibuildwheel
    test-command) selects tests that name their modes, and every mode of the registry."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-o", "addopts=",
         "-p", "known_answer_modes", "--collect-only", "-m", "known_answer", TESTS],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    selected = {}
    for line in proc.stdout.splitlines():
        if line.startswith("KNOWN_ANSWER\t"):
            node, *named = line.split("\t")[1:]
            selected[node] = named
    assert known_answer_gaps(selected, {m.name for m in MODES}) == []
