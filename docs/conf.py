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
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    ctor = item.name in ("__new__", "__init__")
                    add(f"aeskit.{node.name}" if ctor else f"aeskit.{node.name}.{item.name}", item)
    return sigs


_SIGS = _stub_signatures()


def _signature(app, what, name, obj, options, signature, return_annotation):
    if what in ("class", "method", "function", "exception") and name in _SIGS:
        sig, ret = _SIGS[name]
        return sig, (None if what == "class" else ret)
    return signature, return_annotation


# ---- docstrings as plain text ----------------------------------------------------------
# The module's docstrings are plain text written for help(), not reStructuredText: escape
# what reST would read as markup, and keep indented runs (lists of arguments, examples)
# as they are written, in literal blocks.

_MARKUP = re.compile(r"([\\*`|])")
_SIG_LINE = re.compile(r"^[\w.]+\(.*\)( -> .*)?$")


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
            out.extend([_MARKUP.sub(r"\\\1", line).rstrip("_") if line.endswith("_")
                        else _MARKUP.sub(r"\\\1", line) for line in para] + [""])
        para.clear()

    for line in lines:
        if line.strip():
            para.append(line)
        else:
            flush()
    flush()
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-signature", _signature)
    app.connect("autodoc-process-docstring", _plain_docstring)
