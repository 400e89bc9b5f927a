"""Key wrap (AESKW, AESKWP) for the tests: the spec table, which test_specs.py checks
against the C registry, and the known answers (vectors/keywrap/, see PROVENANCE.md)."""

import os
from dataclasses import dataclass

import aeskit

from helpers import parse_vectors

KEYWRAP_DIR = os.path.join(os.path.dirname(__file__), "vectors", "keywrap")


@dataclass(frozen=True)
class KeywrapSpec:
    name: str            # the mode's canonical name (aeskit._modes)
    cls: type
    wrap_min: int
    wrap_multiple: int
    unwrap_min: int


KEYWRAPS = (
    KeywrapSpec("KW", aeskit.AESKW, wrap_min=16, wrap_multiple=8, unwrap_min=24),
    KeywrapSpec("KWP", aeskit.AESKWP, wrap_min=1, wrap_multiple=1, unwrap_min=16),
)
KEYWRAP = {spec.name: spec for spec in KEYWRAPS}


def keywrap_vectors():
    out = []
    for name in sorted(os.listdir(KEYWRAP_DIR)):
        if name.endswith(".txt"):
            out.extend(parse_vectors(os.path.join(KEYWRAP_DIR, name)))
    return out
