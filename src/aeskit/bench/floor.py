"""How fast a mode can possibly run here: the limits of the units a backend uses.

Every number comes from this CPU (``_aeskit.aes_probe`` and ``unit_probe``:
chains of one instruction timed against a chain of adds, in core cycles),
not from a table, since cores differ: Zen 4 has a 4-cycle AESENC, Ice Lake
a 3-cycle one.

Each backend's parallel code runs on one register width (``WIDTHS``):
``aesni`` on xmm, one block per instruction; ``vaes_avx2`` on ymm, two;
``vaes_avx512`` on zmm, four. Each mode and direction has a kind
(``MODE_KINDS``, ``kind_of``; ``KIND_TEXT`` gives each formula in a line),
which says what bounds it, per 16 bytes, at that width:

- parallel (ECB, CTR, CBC/CFB decryption, OCB3, XTS): the blocks are
  independent, so AES throughput: rounds x (cycles per AES instruction over
  independent blocks) / blocks per instruction;
- serial (CBC/CFB encryption, OFB, CFB8, CMAC, CCM, EAX, SIV decryption,
  KW): one chain of AES calls, each waiting for the previous one's last
  round, so latency: rounds x AESENC latency x the chain's AES calls per 16
  bytes (``CHAINED_AES``: 1; CFB8 16, one per byte; KW 12, RFC 3394's 6 per
  64-bit half block), whatever the width (a wider register does not shorten
  a chain of one block; the vaes tables run aesni's code for these). CCM's
  CBC-MAC, EAX's OMAC and SIV decryption's S2V are such a chain over data
  their CTR produces or consumes; the CTR keystream does not wait for the
  chain, and its rounds issue in the chain's idle cycles (an AES
  instruction's throughput is a fraction of its latency), so the chain
  alone bounds. KW's unwrapping chains AESDEC, taken to have AESENC's
  latency;
- clmul (GHASH): Karatsuba's 3 multiplies per block x cycles per
  (V)PCLMULQDQ / blocks per instruction. The reduction, one per many
  blocks, and the XORs are left out;
- aes+clmul (GCM, GCM-SIV decryption): AES and the multiplies in one pass,
  below. POLYVAL's multiplies are GHASH's, and GCM-SIV decryption can hash
  the plaintext as CTR produces it;
- clmul then aes (GCM-SIV encryption): POLYVAL over the plaintext gives the
  tag, which is CTR's first counter, so within a message the two passes
  cannot overlap: the clmul floor plus the parallel one (none unless both
  units' figures are there);
- serial+parallel (SIV encryption): S2V's CMAC chain over the plaintext
  gives CTR's IV: the serial floor plus the parallel one.

Each mode's kinds and chain length come from its C descriptor
(``_modes.MODES``: ``floor_enc``, ``floor_dec``, ``chained_aes``), under its
canonical name ("OCB3", "GCM-SIV", "KW" for RFC 3394's key wrap); GHASH, a
slot and no mode, is the one entry written here. GHASH and CMAC have one
direction (key ``None`` in ``MODE_KINDS``). ``key_bits`` is
the AES key size: XTS and SIV take two keys of that size. A mode without an
entry raises ``ValueError`` rather than getting a guessed floor.

A floor is that of the backend's width for every parallel mode, even where
the table fills a slot with narrower code (OCB3 on the vaes tables is
aesni's): the gap then shows what a kernel of the full width could gain.
The ``portable`` backend has no floor.

The aes+clmul floor counts what the multiplies take from AES. On Zen 4 AES
and carry-less multiplies share execution pipes, so GHASH cannot hide behind
the rounds for free: the probe times one AES-128 GCM batch's mix on 8
registers (80 AES rounds interleaved with Karatsuba's 24 multiplies,
``gcm_mix_*``) and takes (mix - 80 x AES cycles) / 24 as the AES cycles each
multiply costs. Per register, the floor is then rounds x AES cycles + 3 x
that cost, or 3 x the multiply's own cycles if the multiplier is the
tighter limit, over blocks per instruction and 16 bytes. Measured here: zmm
103-104 cycles for the mix against 80 rounds alone (a cycle per multiply:
AES-128 GCM floor 0.202 c/B where the AES part alone is 0.156), ymm 53
against 40, xmm 54 against 40. On a Zen 3 (EPYC, 2 vCPUs) the probe reads
xmm 59.3 for the mix against 40.8 for the rounds (AES-128 GCM floor 0.463
c/B), and loops shaped like a batch (the ubench tool: 8 AES chains, 3
independent multiplies after each of rounds 1..8) agree: 59.2-59.5, 73.4-
73.7 with AES-256's 112 rounds (the formula: 75.6). What a kernel adds is
left out on purpose, as a cost a kernel can cut, not a limit: the
reduction's 2 multiplies (61.6-62.3 with them; one reduction per 16 blocks
halves that), and the XORs and shuffles, which cost nothing beside AES
alone (80 rounds and 40 XORs: 40.4-41.0) but 0.3-0.5 cycle each beside
the mix (40 XORs and 16 shuffles: 67-71). Where the mix is not measured,
the AES part alone is the floor. The byte swaps, sums and reductions a real kernel adds
are left out, as OCB3's offset and checksum XORs and XTS's tweak doublings
are; and so is the fixed per-message cost (key-dependent setup, the
associated data, the tag), which is the intercept, not the slope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import _modes
from .targets import Operation

ROUNDS = {128: 10, 192: 12, 256: 14}
#: What bounds a mode (module docstring): one of KINDS. A plain str, not a
#: Literal alias: mypy's stubtest cannot compare a Literal alias in a module
#: that is its own stub with the runtime object, and CI runs stubtest.
Kind = str
KINDS = ("serial", "parallel", "clmul", "aes+clmul", "clmul then aes", "serial+parallel")


def _mode_kinds() -> dict[tuple[str, str | None], Kind]:
    kinds: dict[tuple[str, str | None], Kind] = {("GHASH", None): "clmul"}
    for m in _modes.MODES:
        if m.floor_dec is None:
            kinds[m.name, None] = m.floor_enc
        else:
            kinds[m.name, "enc"], kinds[m.name, "dec"] = m.floor_enc, m.floor_dec
    assert set(kinds.values()) <= set(KINDS), kinds
    return kinds


#: (mode, direction: "enc", "dec", or None for a mode with one) -> its kind, for every mode
#: of the registry and GHASH.
MODE_KINDS: Mapping[tuple[str, str | None], Kind] = _mode_kinds()
#: Each kind's floor in c/B, one line each, for a report's footer.
KIND_TEXT: Mapping[Kind, str] = {
    "serial": "rounds x AESENC latency x chained AES per 16 B (1; KW 12, CFB8 16) / 16",
    "parallel": "rounds x AES cycles / blocks per instruction / 16",
    "clmul": "3 (Karatsuba) x multiply cycles / blocks per instruction / 16",
    "aes+clmul": "max(rounds x AES cycles + 3 x a multiply's cost in the mix, 3 x multiply)"
                 " / blocks / 16",
    "clmul then aes": "clmul + parallel: POLYVAL's pass, then CTR's with its tag",
    "serial+parallel": "serial + parallel: S2V's CMAC chain, then CTR with its IV",
}
#: AES calls per 16 bytes in a serial mode's chain, where not 1.
CHAINED_AES: Mapping[str, int] = {m.name: m.chained_aes for m in _modes.MODES
                                   if m.chained_aes != 1}
#: Carry-less multiplies per GHASH (or POLYVAL) block (Karatsuba).
CLMUL_PER_BLOCK = 3
#: What the gcm_mix probe runs: AES-128's rounds and Karatsuba's multiplies, on 8 registers.
MIX_ROUNDS, MIX_CLMULS = 8 * 10, 8 * CLMUL_PER_BLOCK

#: how far from a whole number of cycles a probed latency is taken as it
LATENCY_SNAP = 0.35
BLOCK = 16


def kind_of(mode: str, encrypt: bool) -> Kind:
    """What bounds mode in that direction (``MODE_KINDS``); ValueError for a mode it lacks."""
    direction = "enc" if encrypt else "dec"
    kind = MODE_KINDS.get((mode, direction)) or MODE_KINDS.get((mode, None))
    if kind is None:
        raise ValueError(f"no floor kind for {mode} {direction}: MODE_KINDS has the registry's "
                         "modes (their descriptors' facts, modes/facts.h) and GHASH")
    return kind


@dataclass(frozen=True)
class Width:
    """The registers a backend's parallel kernels use."""

    name: str    # "xmm", "ymm", "zmm"
    blocks: int  # 16-byte blocks per instruction


#: The backends that have floors, and the width each assumes.
WIDTHS: Mapping[str, Width] = {
    "aesni": Width("xmm", 1),
    "vaes_avx2": Width("ymm", 2),
    "vaes_avx512": Width("zmm", 4),
}
FLOOR_BACKENDS = tuple(WIDTHS)


@dataclass(frozen=True)
class Floor:
    """A floor in cycles per byte, which limit it is, and the mode's kind."""

    cycles_per_byte: float
    basis: str  # e.g. "zmm AES throughput", "AESENC latency", "ymm CLMUL throughput"
    kind: Kind


#: A floor's cycles per byte and basis, before it is given its kind.
_Part = tuple[float, str]


@dataclass(frozen=True)
class UnitProbe:
    """Core cycles: AESENC latency, and per instruction over independent chains.

    ``aes`` and ``clmul`` map a width ("xmm", "ymm", "zmm") to cycles per
    AES round or carry-less multiply instruction, ``gcm_mix`` to cycles for
    an AES-128 GCM batch's mix (module docstring); a width this CPU (or OS)
    lacks is absent.
    """

    latency: float
    aes: Mapping[str, float]
    clmul: Mapping[str, float]
    #: width -> core cycles for 80 AES rounds and 24 multiplies interleaved
    gcm_mix: Mapping[str, float] = field(default_factory=dict)

    def floor(self, op: Operation, backend: str) -> Floor | None:
        """Cycles per byte no code of backend's width can beat for op here, or
        None (no floor for this backend, or the CPU lacks the width).

        Raises ValueError for a mode ``MODE_KINDS`` lacks, whatever the backend.
        """
        kind = kind_of(op.mode, op.encrypt)
        width = WIDTHS.get(backend)
        if width is None:
            return None
        part: _Part | None
        if kind == "serial":
            part = self._serial(op)
        elif kind == "parallel":
            part = self._parallel(op, width)
        elif kind == "clmul":
            part = self._clmul(width)
        elif kind == "aes+clmul":
            part = self._mix(op, width)
        elif kind == "clmul then aes":
            part = _sum(self._clmul(width), self._parallel(op, width), ", two passes")
        else:  # "serial+parallel"
            part = _sum(self._serial(op), self._parallel(op, width), "")
        return None if part is None else Floor(part[0], part[1], kind)

    def _serial(self, op: Operation) -> _Part:
        chained = CHAINED_AES.get(op.mode, 1)
        basis = ("AESENC latency" if chained == 1 else "AESENC latency, per byte"
                 if chained == BLOCK else f"AESENC latency, {chained} per 16 bytes")
        return ROUNDS[op.key_bits] * self.latency * chained / BLOCK, basis

    def _parallel(self, op: Operation, width: Width) -> _Part | None:
        aes = self.aes.get(width.name)
        if aes is None:
            return None
        return (ROUNDS[op.key_bits] * aes / width.blocks / BLOCK,
                f"{width.name} AES throughput")

    def _clmul(self, width: Width) -> _Part | None:
        clmul = self.clmul.get(width.name)
        if clmul is None:
            return None
        return CLMUL_PER_BLOCK * clmul / width.blocks / BLOCK, f"{width.name} CLMUL throughput"

    def _mix(self, op: Operation, width: Width) -> _Part | None:
        aes = self.aes.get(width.name)
        mix, clmul = self.gcm_mix.get(width.name), self.clmul.get(width.name)
        if aes is None or mix is None or clmul is None:
            return self._parallel(op, width)
        taken = max(0.0, (mix - MIX_ROUNDS * aes) / MIX_CLMULS)
        per_register = max(ROUNDS[op.key_bits] * aes + CLMUL_PER_BLOCK * taken,
                           CLMUL_PER_BLOCK * clmul)
        return per_register / width.blocks / BLOCK, f"{width.name} AES + CLMUL mix"

    def as_dict(self) -> dict[str, float | None]:
        """The JSON's ``meta.aes_probe``: cycles, null where the width is missing."""
        out: dict[str, float | None] = {
            "aesenc_latency_cycles": round(self.latency, 3),
            # the 128-bit figure keeps its name from before the wide ones
            "aesenc_cycles_per_instruction": _rounded(self.aes.get("xmm")),
        }
        for name in ("ymm", "zmm"):
            out[f"vaes_{name}_cycles_per_instruction"] = _rounded(self.aes.get(name))
        for name in ("xmm", "ymm", "zmm"):
            out[f"clmul_{name}_cycles_per_instruction"] = _rounded(self.clmul.get(name))
        for name in ("xmm", "ymm", "zmm"):
            out[f"gcm_mix_{name}_cycles"] = _rounded(self.gcm_mix.get(name))
        return out


def _sum(first: _Part | None, then: _Part | None, note: str) -> _Part | None:
    """Two floors paid one after the other; None unless both are known."""
    if first is None or then is None:
        return None
    return first[0] + then[0], f"{first[1]} + {then[1]}{note}"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def from_native(aes_probe: tuple[float, float] | None,
                unit_probe: Mapping[str, float | None]) -> UnitProbe | None:
    """The probe from what ``_aeskit.aes_probe()`` and ``unit_probe()`` return;
    None without AES-NI (no floors at all then)."""
    if aes_probe is None:
        return None
    latency, xmm = aes_probe
    aes = {"xmm": float(xmm)}
    # An instruction's latency is a whole number of cycles: what a reading
    # has past the nearest one is a neighbour's contention (it only adds) or
    # the two chains' clocks, so a reading near a whole number is taken as it.
    # A shared Zen 3 read 4.0-4.3 under load (4 in truth); 4.4 put CBC
    # encryption's floor above its measured speed.
    whole = round(latency)
    if abs(latency - whole) <= LATENCY_SNAP:
        latency = whole
    clmul: dict[str, float] = {}
    for width in ("ymm", "zmm"):
        got = unit_probe.get(f"vaes_{width}")
        if got is not None:
            aes[width] = float(got)
    mix: dict[str, float] = {}
    for width in ("xmm", "ymm", "zmm"):
        got = unit_probe.get(f"clmul_{width}")
        if got is not None:
            clmul[width] = float(got)
        got = unit_probe.get(f"gcm_mix_{width}")
        if got is not None:
            mix[width] = float(got)
    return UnitProbe(float(latency), aes, clmul, mix)


def probe(native: Any) -> UnitProbe | None:
    """Measure, or None where the CPU has no AES-NI."""
    return from_native(native.aes_probe(), native.unit_probe())
