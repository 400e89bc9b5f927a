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
import aeskit._modes
# imported here, with the real classes, before any example's `import aeskit` gets the
# tracked copy below: the streaming layer needs aeskit's own AESGCM objects
import aeskit.streaming

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)

# class name -> the name of the argument that must be fresh per key (first positional)
NONCED = {
    "AESCBC": "iv", "AESCFB": "iv", "AESCFB8": "iv", "AESOFB": "iv", "AESCTR": "iv",
    "AESGCM": "nonce", "AESOCB3": "nonce", "AESCCM": "nonce", "AESEAX": "nonce",
    "AESGCMSIV": "nonce",
}
ENCRYPTING = ("encrypt", "encrypt_into", "encryptor")
# the batches (docs/batch.md): a sequence of nonces, or n of them packed in one buffer
BATCHES = ("encrypt_many", "encrypt_many_into")


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
                if name not in ENCRYPTING + BATCHES:
                    return attr

                def call(*args, **kwargs):
                    first = args[0] if args else kwargs[argname + ("s" if name in BATCHES
                                                                    else "")]
                    if name == "encrypt_many":
                        nonces = [bytes(x) for x in first]
                    elif name == "encrypt_many_into":
                        offsets = memoryview(args[2] if len(args) > 2 else kwargs["offsets"])
                        n = offsets.nbytes // offsets.itemsize - 1
                        packed = bytes(first)
                        size = len(packed) // n if n else 0
                        nonces = [packed[i * size:(i + 1) * size] for i in range(n)]
                    else:
                        nonces = [bytes(first)]
                    for nonce in nonces:
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
    """The README's three (an AEAD, a block mode, a file) and the docs' pages, the sdist's
    included (it carries docs/)."""
    assert FILES[0].name == "README.md"
    assert len(FENCE.findall(FILES[0].read_text(encoding="utf-8"))) >= 3
    assert {"modes.md", "streaming.md", "index.md"} <= {p.name for p in FILES[1:]}


DOCS_SITE = "https://aeskit.readthedocs.io/en/latest/"
REPO = "https://github.com/aeskit/aeskit/blob/main/"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_links_work_on_a_package_index():
    """A package index shows the README alone: every link is absolute, to the docs site
    or the repository (pyproject.toml's [project.urls]), and names what exists there: a
    page built from docs/, an API entry of an object aeskit has, a file of this tree."""
    import tomllib

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    urls = urls["project"]["urls"]
    assert DOCS_SITE.startswith(urls["Documentation"]) and REPO.startswith(urls["Source"])
    links = LINK.findall(FILES[0].read_text(encoding="utf-8"))
    assert len(links) > 20
    pages = {p.stem for p in (ROOT / "docs").iterdir() if p.suffix in (".md", ".rst")}
    for link in links:
        if link.startswith(REPO):
            assert (ROOT / link[len(REPO):]).is_file(), link
            continue
        assert link.startswith(DOCS_SITE), f"not the docs site or the repository: {link}"
        page, _, anchor = link[len(DOCS_SITE):].partition("#")
        assert page == "" or (page.endswith(".html") and page[:-5] in pages), link
        if anchor:
            assert page == "api.html", link
            obj = aeskit
            for part in anchor.split(".")[1:]:
                obj = getattr(obj, part)   # AttributeError: no such object


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
    batch = """
import array, aeskit
gcm = aeskit.AESGCM(bytes(16))
gcm.encrypt_many([bytes(12), bytes([1]) * 12], [b"a", b"b"])
gcm.encrypt_many_into(bytes(11) + b"\\x02" + bytes([1]) * 12, b"ab", array.array("q", [0, 1, 2]),
                      bytearray(64))
"""
    with pytest.raises(NonceReuse, match="AESGCM.encrypt_many_into: a key encrypts twice "
                                         "with nonce 010101010101010101010101"):
        _run([batch], monkeypatch, tmp_path)


def _docs_conf():
    """docs/conf.py as a module (it needs aeskit, not Sphinx, to load)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("aeskit_docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_api_reference_tables_say_what_the_classes_do():
    """Each mode class's table in the API reference (made from the descriptors) against
    the class itself: it accepts the smallest and largest key the table gives and refuses
    a size between none of them; it streams exactly when the table says so."""
    conf = _docs_conf()
    assert set(conf._FACTS) == {m.class_name for m in aeskit._modes.MODES}
    for name, facts in conf._FACTS.items():
        rows = dict((k.strip("* -"), v.strip("- ")) for k, v in zip(
            *[iter(line for line in conf._facts_table(facts)
                   if line.startswith(("   * -", "     -")))] * 2))
        assert {"key", "data", "streams", "exceptions"} <= set(rows), name
        cls = getattr(aeskit, name)
        for size in facts.key_sizes:
            assert str(size) in rows["key"], name
        cls(bytes(range(facts.key_sizes[0])))
        with pytest.raises(ValueError):
            cls(bytes(facts.key_sizes[0] + 1))
        streams = any(hasattr(cls, m) for m in ("encryptor", "new"))
        assert rows["streams"].startswith("yes" if streams else "no"), (name, rows)
        assert ("InvalidTag" in rows["exceptions"]) == (facts.aead or facts.family == "mac")


def test_api_reference_member_order_is_the_stubs():
    conf = _docs_conf()
    source = [".. autoclass:: AESGCM\n.. autoclass:: AESCTR\n   :members: encrypt\n"]
    conf._members_in_source_order(None, "api", source)
    lines = source[0].splitlines()
    assert lines[1] == "   :no-members:"
    names = [line.rsplit(".", 1)[1] for line in lines if "auto" in line and "AESGCM." in line]
    assert names[0] == "generate_key" and names.index("encrypt") < names.index("decrypt")
    assert names.index("encrypt") < names.index("encrypt_into") < names.index("encryptor")
    assert set(names) == {n for n in dir(aeskit.AESGCM) if not n.startswith("_")}
    assert ".. autoclass:: AESCTR\n   :members: encrypt" in source[0]   # left as written
