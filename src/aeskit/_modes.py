"""The modes as their C descriptors state them, and the names derived from them.

``_aeskit.MODES`` holds one record per mode of the C registry
(``modes/registry.c``), read from its descriptor (``py/facts.c``): its one
canonical name ("GCM-SIV"), its class ("AESGCMSIV"), its call shape, its
limits, and what bounds its speed. The package's exports, the benchmark's
mode sets and floors, and the tests' specs are derived from these, so that a
mode added in C needs no list kept by hand in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from . import _aeskit  # type: ignore[attr-defined]  # the C module: no stub


@dataclass(frozen=True)
class ModeFacts:
    """One mode's facts, field for field as ``_aeskit.ModeFacts`` holds them (each
    field's doc is there)."""

    name: str
    family: str
    class_name: str
    aliases: tuple[str, ...]
    key_sizes: tuple[int, ...]
    n_keys: int
    nonce_name: str | None
    nonce_min: int
    nonce_max: int | None
    tag_lengths: tuple[int, ...]
    aead: bool
    streams: bool
    whole_blocks: bool
    padding: bool
    sectors: bool
    tag_first: bool
    tag_positional: bool
    min_len: int
    max_data: int | None
    max_aad: int | None
    floor_enc: str
    floor_dec: str | None
    chained_aes: int

    @classmethod
    def of(cls, record: Any) -> ModeFacts:
        """The facts of one record of ``_aeskit.MODES``."""
        return cls(**{f.name: getattr(record, f.name) for f in fields(cls)})


#: The families of modes, one per kind of Python type the C glue makes.
FAMILIES = ("cipher", "aead", "mac", "keywrap")

#: Every mode, in the registry's order: block ciphers, AEADs, MACs, key wraps.
MODES: tuple[ModeFacts, ...] = tuple(ModeFacts.of(m) for m in _aeskit.MODES)

#: Canonical name -> facts.
BY_NAME: Mapping[str, ModeFacts] = {m.name: m for m in MODES}

#: The mode classes aeskit exports, in the registry's order.
CLASS_NAMES: tuple[str, ...] = tuple(m.class_name for m in MODES)


def names_of(mode: ModeFacts) -> tuple[str, ...]:
    """Every name a user may give mode, upper case: its own, without hyphens, its class
    name and its aliases, each once, its own first."""
    names = (mode.name, mode.name.replace("-", ""), mode.class_name, *mode.aliases)
    return tuple(dict.fromkeys(n.upper() for n in names))


def of_family(family: str) -> tuple[ModeFacts, ...]:
    """The modes of one family (FAMILIES), in the registry's order."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    return tuple(m for m in MODES if m.family == family)
