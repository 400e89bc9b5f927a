"""How fast a mode can possibly run here: the AES units' own limits.

A parallel mode (ECB, CBC/CFB decryption, CTR, GCM, OCB3) is bound by AES
throughput: rounds x (cycles per AESENC over independent blocks) per 16
bytes. A serial
mode (CBC/CFB encryption, OFB) is bound by latency: each block waits for the
previous one's last round, rounds x latency per 16 bytes; CFB8 pays that per
byte. Both numbers are measured on this CPU (``_aeskit.aes_probe``), not
taken from a table, since they differ between cores: Zen 4 has a 4-cycle
AESENC, Ice Lake a 3-cycle one.

The AEADs are parallel in both directions. OCB3's own work beside AES (the
offset and checksum XORs) is light, so its floor is close to the real limit.
GCM adds GHASH, a carry-less multiply per block that runs on another
execution unit (PCLMULQDQ) alongside AESENC: its floor is the AES part
alone, and the gap above it is what GHASH fails to hide. Both leave out the
fixed per-message cost (key-dependent setup, the tag), which is the
intercept, not the slope.

These are the floors of the 128-bit AES-NI instructions, which the ``aesni``
and ``portable`` fallbacks' rows are not held to; wide (VAES) backends run
four blocks per instruction and have their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .targets import Operation

ROUNDS = {128: 10, 192: 12, 256: 14}
#: (mode, encrypt) pairs whose blocks each wait for the previous one.
SERIAL = {("CBC", True), ("CFB", True), ("OFB", True), ("OFB", False),
          ("CFB8", True), ("CFB8", False)}
#: The backends these floors describe.
FLOOR_BACKENDS = ("aesni",)


@dataclass(frozen=True)
class AesProbe:
    """Core cycles per 128-bit AESENC: in one dependent chain, and in throughput."""

    latency: float
    throughput: float

    def floor(self, op: Operation) -> float:
        """Cycles per byte no 128-bit AES-NI code can beat for op here.

        GCM and OCB are parallel (not in SERIAL): rounds x throughput / 16, the
        AES part only; GCM's GHASH runs on another unit and is not added.
        """
        rounds = ROUNDS[op.key_bits]
        if op.mode == "CFB8":
            return rounds * self.latency
        per_round = self.latency if (op.mode, op.encrypt) in SERIAL else self.throughput
        return rounds * per_round / 16

    def as_dict(self) -> dict[str, float]:
        return {"aesenc_latency_cycles": round(self.latency, 3),
                "aesenc_cycles_per_instruction": round(self.throughput, 3)}


def probe(native: Any) -> AesProbe | None:
    """Measure, or None where the CPU has no AES-NI."""
    got = native.aes_probe()
    if got is None:
        return None
    latency, throughput = got
    return AesProbe(float(latency), float(throughput))
