"""How fast a mode can possibly run here: the limits of the units a backend uses.

Every number comes from this CPU (``_aeskit.aes_probe`` and ``unit_probe``:
chains of one instruction timed against a chain of adds, in core cycles),
not from a table, since cores differ: Zen 4 has a 4-cycle AESENC, Ice Lake
a 3-cycle one.

Each backend's parallel code runs on one register width (``WIDTHS``):
``aesni`` on xmm, one block per instruction; ``vaes_avx2`` on ymm, two;
``vaes_avx512`` on zmm, four. For that width:

- a parallel mode (ECB, CBC/CFB decryption, CTR, GCM, OCB3) is bound by AES
  throughput: rounds x (cycles per AES instruction over independent blocks)
  / blocks per instruction, per 16 bytes;
- a serial mode (CBC/CFB encryption, OFB) is bound by latency: each block
  waits for the previous one's last round, rounds x AESENC latency per 16
  bytes whatever the width (a wider register does not shorten a chain of one
  block; the vaes tables run aesni's code for these); CFB8 pays that per
  byte;
- GHASH is bound by carry-less multiply throughput: Karatsuba's 3 multiplies
  per block x cycles per (V)PCLMULQDQ / blocks per instruction, per 16
  bytes. The reduction, one per many blocks, and the XORs are left out.

A floor is that of the backend's width for every parallel mode, even where
the table fills a slot with narrower code (OCB3 on the vaes tables is
aesni's): the gap then shows what a kernel of the full width could gain.
The ``portable`` backend has no floor.

GCM's floor counts what its multiplies take from AES. On Zen 4 AES and
carry-less multiplies share execution pipes, so GHASH cannot hide behind the
rounds for free: the probe times one AES-128 GCM batch's mix on 8 registers
(80 AES rounds interleaved with Karatsuba's 24 multiplies, ``gcm_mix_*``)
and takes (mix - 80 x AES cycles) / 24 as the AES cycles each multiply
costs. Per register, GCM's floor is then rounds x AES cycles + 3 x that
cost, or 3 x the multiply's own cycles if the multiplier is the tighter
limit, over blocks per instruction and 16 bytes. Measured here: zmm 103-104
cycles for the mix against 80 rounds alone (a cycle per multiply: AES-128
floor 0.202 c/B where the AES part alone is 0.156), ymm 53 against 40, xmm
54 against 40. Where the mix is not measured, the AES part alone is the
floor. The byte swaps, sums and reductions a real kernel adds are left out,
as OCB3's offset and checksum XORs are; and so is the fixed per-message
cost (key-dependent setup, the tag), which is the intercept, not the slope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .targets import Operation

ROUNDS = {128: 10, 192: 12, 256: 14}
#: (mode, encrypt) pairs whose blocks each wait for the previous one.
SERIAL = {("CBC", True), ("CFB", True), ("OFB", True), ("OFB", False),
          ("CFB8", True), ("CFB8", False)}
#: Carry-less multiplies per GHASH block (Karatsuba).
CLMUL_PER_BLOCK = 3
#: What the gcm_mix probe runs: AES-128's rounds and Karatsuba's multiplies, on 8 registers.
MIX_ROUNDS, MIX_CLMULS = 8 * 10, 8 * CLMUL_PER_BLOCK
BLOCK = 16


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
    """A floor in cycles per byte, and which limit it is."""

    cycles_per_byte: float
    basis: str  # e.g. "zmm AES throughput", "AESENC latency", "ymm CLMUL throughput"


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
        None (no floor for this backend, or the CPU lacks the width)."""
        width = WIDTHS.get(backend)
        if width is None:
            return None
        if op.mode == "GHASH":
            clmul = self.clmul.get(width.name)
            if clmul is None:
                return None
            return Floor(CLMUL_PER_BLOCK * clmul / width.blocks / BLOCK,
                         f"{width.name} CLMUL throughput")
        rounds = ROUNDS[op.key_bits]
        if op.mode == "CFB8":
            return Floor(rounds * self.latency, "AESENC latency, per byte")
        if (op.mode, op.encrypt) in SERIAL:
            return Floor(rounds * self.latency / BLOCK, "AESENC latency")
        aes = self.aes.get(width.name)
        if aes is None:
            return None
        if op.mode == "GCM":
            mix, clmul = self.gcm_mix.get(width.name), self.clmul.get(width.name)
            if mix is not None and clmul is not None:
                taken = max(0.0, (mix - MIX_ROUNDS * aes) / MIX_CLMULS)
                per_register = max(rounds * aes + CLMUL_PER_BLOCK * taken,
                                   CLMUL_PER_BLOCK * clmul)
                return Floor(per_register / width.blocks / BLOCK,
                             f"{width.name} AES + CLMUL mix")
        return Floor(rounds * aes / width.blocks / BLOCK, f"{width.name} AES throughput")

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
