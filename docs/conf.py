"""Sphinx configuration of aeskit's documentation site (furo theme, MyST Markdown).

Build it from an environment where aeskit is installed, since the API reference is read
from the built module: ``pip install '.[docs]' && sphinx-build -W --keep-going docs OUT``.
The signatures come from the typed stubs (``aeskit/__init__.pyi``), the text from the
module's docstrings.
"""

import ast
import logging
import re
from pathlib import Path

import aeskit

project = "aeskit"
author = "aeskit developers"
copyright = "aeskit developers, Apache-2.0"
release = aeskit.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
# myst-parser logs its whole configuration at every build: keep it out of the output
logging.getLogger("sphinx.myst_parser.sphinx_ext.main").addFilter(
    lambda record: "myst v" not in str(record.msg))

html_theme = "furo"
html_title = f"aeskit {release}"
html_static_path = []

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_typehints = "signature"

# ---- signatures from the stubs ---------------------------------------------------------
# The C types carry their signatures in their docstrings (or __text_signature__) without
# types; the stubs have the types. Each (class, member) signature is read from the .pyi.

_STUB = Path(aeskit.__file__).with_name("__init__.pyi")


_DOCS = {}  # (qualified name) -> the stub's docstring, for members the module leaves bare


_ORDER = {}  # class name -> its public members in the stub's order


def _stub_signatures():
    sigs = {}
    tree = ast.parse(_STUB.read_text(encoding="utf-8"))

    def add(qual, fn):
        args = fn.args
        if args.posonlyargs and args.posonlyargs[0].arg in ("self", "cls"):
            args.posonlyargs = args.posonlyargs[1:]
        elif args.args and args.args[0].arg in ("self", "cls"):
            args.args = args.args[1:]
        ret = ast.unparse(fn.returns) if fn.returns else None
        sigs.setdefault(qual, (f"({ast.unparse(args)})", ret))
        doc = ast.get_docstring(fn)
        if doc:
            _DOCS.setdefault(qual, doc)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            add(f"aeskit.{node.name}", node)
        elif isinstance(node, ast.ClassDef):
            _ORDER[node.name] = [
                (item.name, "attribute" if any(isinstance(d, ast.Name) and d.id == "property"
                                               for d in item.decorator_list) else "method")
                for item in node.body
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")]
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    ctor = item.name in ("__new__", "__init__")
                    add(f"aeskit.{node.name}" if ctor else f"aeskit.{node.name}.{item.name}", item)
    return sigs


_SIGS = _stub_signatures()


# the file objects open_encrypting and open_decrypting return: made by those, never
# called by a user, so shown without their constructor's (private) arguments
_NOT_CALLED = ("aeskit.streaming.EncryptingWriter", "aeskit.streaming.DecryptingReader")


def _signature(app, what, name, obj, options, signature, return_annotation):
    if name in _NOT_CALLED:
        return "", None
    if what in ("class", "method", "function", "exception") and name in _SIGS:
        sig, ret = _SIGS[name]
        return sig, (None if what == "class" else ret)
    return signature, return_annotation


# ---- members in source order ------------------------------------------------------------
# autodoc orders a class's members by its source, which a C type does not have: it lists
# them alphabetically, whatever order :members: gives. The stub is the C types' typed
# source, so each ``.. autoclass::`` of the reference without options of its own gets
# its members one directive each, in the stub's order (a public member the stub lacks,
# which stubtest refuses, would follow).


def _members_in_source_order(app, docname, source):
    if docname != "api":
        return

    def order(m):
        name = m.group(1)
        cls = getattr(aeskit, name, None)
        if name not in _ORDER or cls is None:
            return m.group(0)
        members = list(_ORDER[name])
        members += [(n, "attribute" if not callable(getattr(cls, n)) else "method")
                    for n in sorted(dir(cls)) if not n.startswith("_")
                    and n not in vars(BaseException) and n not in dict(members)]
        if not members:
            return m.group(0)
        body = [f"   .. auto{kind}:: aeskit.{name}.{member}" for member, kind in members]
        return "\n".join([m.group(0), "   :no-members:", "", *body, ""])

    source[0] = re.sub(r"^\.\. autoclass:: (\w+)$(?!\n   :)", order, source[0],
                       flags=re.MULTILINE)


# ---- docstrings as plain text ----------------------------------------------------------
# The module's docstrings are plain text written for help(), not reStructuredText: escape
# what reST would read as markup, but for ``literal`` spans (the Python package's
# docstrings use them), and keep indented runs (lists of arguments, examples) as they
# are written, in literal blocks.

_MARKUP = re.compile(r"([\\*`|])")
_LITERAL = re.compile(r"(``[^`]+``)")
_SIG_LINE = re.compile(r"^[\w.]+\(.*\)( -> .*)?$")


def _escape(line):
    """line with reST markup escaped, its ``literal`` spans kept."""
    parts = _LITERAL.split(line)
    return "".join(part if i % 2 else _MARKUP.sub(r"\\\1", part)
                   for i, part in enumerate(parts))


def _plain_docstring(app, what, name, obj, options, lines):
    if not any(line.strip() for line in lines) and name in _DOCS:
        lines[:] = _DOCS[name].splitlines()
    if not lines:
        return
    if _SIG_LINE.match(lines[0]):  # a signature line that autodoc did not take
        del lines[0]
    out, para = [], []

    def flush():
        if not para:
            return
        if any(line[:1].isspace() for line in para[1:]) or para[0][:1].isspace():
            out.extend(["::", ""] + ["    " + line for line in para] + [""])
        else:
            out.extend([_escape(line).rstrip("_") if line.endswith("_")
                        else _escape(line) for line in para] + [""])
        para.clear()

    for line in lines:
        if line.strip():
            para.append(line)
        else:
            flush()
    flush()
    lines[:] = out
    if what == "class" and name.startswith("aeskit.") and name[7:] in _FACTS:
        lines.extend(_facts_table(_FACTS[name[7:]]))


# ---- each mode's facts, from the C descriptors -----------------------------------------
# A table at the head of each mode's class, made from aeskit._modes.MODES (what the C
# registry's descriptors state, the same records the code checks its arguments by), so
# that it cannot drift from what the class does. The few rules a descriptor does not
# hold as a number are in _RULES, keyed by mode name (checked against the registry).

from aeskit._modes import MODES  # noqa: E402

_FACTS = {m.class_name: m for m in MODES}
_RULES = {
    "CCM": {"data": "at most 2^(8 × (15 − nonce length)) − 1 bytes: 65,535 with a 13-byte "
                    "nonce, 2^24 − 1 with 12, 2^32 − 1 with 11",
            "limit": True},
    "KW": {"data": "a multiple of 8 bytes; unwrap: at least 24"},
    "KWP": {"data": "unwrap: a multiple of 8 bytes, at least 16"},
    "SIV": {"aad": "a list of at most 126 components, each of any length, or None"},
    "XTS": {"data": "one data unit per call; encrypt_sectors: whole sectors of 16 bytes to "
                    "2^24 each"},
}
_unknown = set(_RULES) - {m.name for m in MODES}
if _unknown:
    raise RuntimeError(f"docs/conf.py: _RULES names modes the registry lacks: {_unknown}")


def _size(n):
    """n bytes, as a power of two less a little where it is one, else with separators."""
    k = n.bit_length()
    if n == 1 << (k - 1):
        return f"2^{k - 1}"
    if (1 << k) - n <= 64:
        return f"2^{k} − {(1 << k) - n}"
    return f"{n:,}"


def _choices(values, unit="bytes"):
    values = list(values)
    if len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]} to {values[-1]} {unit}"
    if len(values) == 1:
        return f"{values[0]} {unit}"
    return f"{', '.join(map(str, values[:-1]))} or {values[-1]} {unit}"


def _facts_table(m):
    rules = _RULES.get(m.name, {})
    rows = []
    keys = _choices(m.key_sizes)
    if m.n_keys == 2:
        keys += f": two AES keys of {_choices([k // 2 for k in m.key_sizes])}"
    rows.append(("key", keys))
    if m.nonce_name is not None:
        if m.nonce_max is None:
            rng = "any length" if m.nonce_min == 0 else f"{m.nonce_min} byte or more"
        else:
            rng = _choices(range(m.nonce_min, m.nonce_max + 1))
        rows.append((m.nonce_name, rng))
    if m.tag_lengths:
        tag = _choices(m.tag_lengths)
        if m.family == "aead":
            tag += ", before the ciphertext" if m.tag_first else ", after the ciphertext"
        rows.append(("tag", tag))
    data = []
    if m.whole_blocks:
        data.append("a multiple of 16 bytes" + (" (any length with padding='pkcs7')"
                                                if m.padding else ""))
    if m.min_len:
        data.append(f"at least {m.min_len} bytes")
    if m.max_data is not None:
        data.append(f"at most {_size(m.max_data)} bytes")
    if "data" in rules:
        data.append(rules["data"])
    rows.append(("data", "; ".join(data) or "any length"))
    if m.aead:
        aad = rules.get("aad") or ("any length" if m.max_aad is None
                                   else f"at most {_size(m.max_aad)} bytes")
        rows.append(("associated data", aad))
    if m.streams:
        rows.append(("streams", "yes: new() gives a MACContext" if m.family == "mac" else
                     "yes: encryptor() and decryptor() give an "
                     + ("AEADContext" if m.aead else "CipherContext")))
    else:
        rows.append(("streams", "no: one call per message"))
    exc = [":exc:`TypeError` (a wrong type)", ":exc:`ValueError` (a wrong size or value)"]
    if m.max_data is not None or m.max_aad is not None or rules.get("limit"):
        exc.append(":exc:`~aeskit.LimitExceeded` (past the data limit)")
    if m.family == "keywrap":
        exc.append(":exc:`~aeskit.InvalidUnwrap` (unwrap)")
    elif m.aead or m.family == "mac":
        exc.append(":exc:`~aeskit.InvalidTag` ("
                   + ("decrypt" if m.aead else "verify") + ")")
    if m.streams and m.family != "mac":
        exc.append(":exc:`~aeskit.AlreadyFinalized` (a context after finalize)")
    rows.append(("exceptions", ", ".join(exc)))
    out = ["", ".. list-table::", "   :widths: 20 80", ""]
    for k, v in rows:
        out += [f"   * - {k}", f"     - {v}"]
    return out + [""]


def setup(app):
    app.connect("source-read", _members_in_source_order)
    app.connect("autodoc-process-signature", _signature)
    app.connect("autodoc-process-docstring", _plain_docstring)
