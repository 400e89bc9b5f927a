"""Every ```python example in README.md and docs/ runs, so none can rot.

The blocks of one file run in order in one namespace, as a reader would paste them, in
a scratch directory. While they run, `import aeskit` gets a copy of the module whose key
classes record every encryption's (key, IV or nonce): an example that encrypts twice
under one key with one IV or nonce (a real bug for whoever copies it) fails. Deterministic
modes take no nonce and are not tracked (ECB, SIV, key wrap, CMAC), nor is XTS, whose
tweak is the sector number by design.
"""

import re
import sys
import types
from pathlib import Path

import pytest

import aeskit

ROOT = Path(__file__).resolve().parent.parent
# docs/ is not in the sdist (.gitattributes): from there only the README runs.
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)

# class name -> the name of the argument that must be fresh per key (first positional)
NONCED = {
    "AESCBC": "iv", "AESCFB": "iv", "AESCFB8": "iv", "AESOFB": "iv", "AESCTR": "iv",
    "AESGCM": "nonce", "AESOCB3": "nonce", "AESCCM": "nonce", "AESEAX": "nonce",
    "AESGCMSIV": "nonce",
}
ENCRYPTING = ("encrypt", "encrypt_into", "encryptor")


class NonceReuse(AssertionError):
    pass


def _tracked_module(seen):
    """A copy of aeskit whose nonce-taking classes check (key, nonce) for reuse."""
    mod = types.ModuleType("aeskit")
    mod.__dict__.update(vars(aeskit))

    def wrap(cls, argname):
        class Tracked:
            def __init__(self, key, *args, **kwargs):
                self._obj = cls(key, *args, **kwargs)
                self._key = bytes(key)

            def __getattr__(self, name):
                attr = getattr(self._obj, name)
                if name not in ENCRYPTING:
                    return attr

                def call(*args, **kwargs):
                    nonce = bytes(args[0] if args else kwargs[argname])
                    if (self._key, nonce) in seen:
                        raise NonceReuse(f"{cls.__name__}.{name}: a key encrypts twice "
                                         f"with {argname} {nonce.hex()}")
                    seen.add((self._key, nonce))
                    return attr(*args, **kwargs)
                return call

        Tracked.__name__ = Tracked.__qualname__ = cls.__name__
        for name in ("generate_key",):
            if hasattr(cls, name):
                setattr(Tracked, name, staticmethod(getattr(cls, name)))
        return Tracked

    for name, argname in NONCED.items():
        setattr(mod, name, wrap(getattr(aeskit, name), argname))
    return mod


def _run(blocks, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "aeskit", _tracked_module(set()))
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__example__"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"<example {i + 1}>", "exec"), namespace)  # noqa: S102 (the examples)


def test_examples_are_found():
    assert FILES[0].name == "README.md"
    assert len(FENCE.findall(FILES[0].read_text(encoding="utf-8"))) >= 8


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_examples_run(path, monkeypatch, tmp_path):
    blocks = FENCE.findall(path.read_text(encoding="utf-8"))
    _run(blocks, monkeypatch, tmp_path)


def test_nonce_reuse_is_caught(monkeypatch, tmp_path):
    """The check above can fail: an example that uses one IV twice under one key."""
    reuse = """
import os, aeskit
key, iv = os.urandom(32), os.urandom(16)
ctr = aeskit.AESCTR(key)
ct = ctr.encrypt(iv, b"attack at dawn")
buf = bytearray(64)
ctr.encrypt_into(iv, buf, buf)
"""
    with pytest.raises(NonceReuse, match="AESCTR.encrypt_into"):
        _run([reuse], monkeypatch, tmp_path)
    gcm = """
import aeskit
gcm = aeskit.AESGCM(bytes(16))
gcm.encrypt(bytes(12), b"a", None)
enc = gcm.encryptor(nonce=bytes(12))
"""
    with pytest.raises(NonceReuse, match="AESGCM.encryptor"):
        _run([gcm], monkeypatch, tmp_path)
