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
from typing import Protocol, cast

from . import _aeskit  # type: ignore[attr-defined]  # the C module: no stub


class ModeFacts(Protocol):
    """One mode's facts (``_aeskit.ModeFacts``; each field's doc is there)."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def class_name(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def key_sizes(self) -> tuple[int, ...]: ...
    @property
    def n_keys(self) -> int: ...
    @property
    def nonce_name(self) -> str | None: ...
    @property
    def nonce_min(self) -> int: ...
    @property
    def nonce_max(self) -> int | None: ...
    @property
    def tag_lengths(self) -> tuple[int, ...]: ...
    @property
    def aead(self) -> bool: ...
    @property
    def streams(self) -> bool: ...
    @property
    def whole_blocks(self) -> bool: ...
    @property
    def padding(self) -> bool: ...
    @property
    def sectors(self) -> bool: ...
    @property
    def tag_first(self) -> bool: ...
    @property
    def tag_positional(self) -> bool: ...
    @property
    def min_len(self) -> int: ...
    @property
    def max_data(self) -> int | None: ...
    @property
    def max_aad(self) -> int | None: ...
    @property
    def floor_enc(self) -> str: ...
    @property
    def floor_dec(self) -> str | None: ...
    @property
    def chained_aes(self) -> int: ...


#: The families of modes, one per kind of Python type the C glue makes.
FAMILIES = ("cipher", "aead", "mac", "keywrap")

#: Every mode, in the registry's order: block ciphers, AEADs, MACs, key wraps.
MODES: tuple[ModeFacts, ...] = cast("tuple[ModeFacts, ...]", tuple(_aeskit.MODES))

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
