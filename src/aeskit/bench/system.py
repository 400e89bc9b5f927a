"""What the numbers were measured on: CPU, caches, versions, and the clock.

A benchmark result without its machine is not reproducible, so the JSON
carries all of this. The cache sizes also give the anomaly check its levels.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
from dataclasses import dataclass
from typing import Any, Callable

#: Largest relative difference between the add-chain and multiply-chain clock
#: estimates that passes without a warning.
CLOCK_AGREEMENT = 0.03

#: When the OS does not tell (no sysfs): a typical recent x86 core. Marked
#: as assumed in the JSON so nobody mistakes it for a measurement.
ASSUMED_CACHES = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}


def native() -> Any:
    """The C extension (imported here, untyped: it has no stub of its own)."""
    return importlib.import_module("aeskit._aeskit")


def _cpuinfo_field(name: str) -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.split(":", 1)[0].strip() == name:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    return _cpuinfo_field("model name") or platform.processor() or platform.machine()


def cpu_flags() -> list[str]:
    """The kernel's flag list (x86: 'flags', arm64: 'Features'); empty if unknown."""
    text = _cpuinfo_field("flags") or _cpuinfo_field("Features") or ""
    return sorted(text.split())


def _parse_cache_size(text: str) -> int | None:
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * mult if digits.isdigit() else None


@dataclass(frozen=True)
class Caches:
    """Data-cache sizes of one core, smallest first, and where they came from."""

    levels: dict[str, int]
    source: str  # "sysfs" or "assumed"


def caches() -> Caches:
    base = "/sys/devices/system/cpu/cpu0/cache"
    found: dict[str, int] = {}
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        entries = []
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            with open(os.path.join(base, entry, "level")) as f:
                level = f.read().strip()
            with open(os.path.join(base, entry, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(base, entry, "size")) as f:
                size = _parse_cache_size(f.read())
        except OSError:
            continue
        if kind == "Instruction" or size is None:
            continue
        found["L1d" if level == "1" else f"L{level}"] = size
    if not found:
        return Caches(dict(ASSUMED_CACHES), "assumed")
    return Caches(dict(sorted(found.items(), key=lambda kv: kv[1])), "sysfs")


def loadavg() -> float | None:
    """The 1-minute load average: above the core count, other work was competing."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def versions() -> dict[str, str]:
    """aeskit, Python and every peer library that imports, with its own backend."""
    import aeskit

    out = {
        "aeskit": aeskit.__version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    try:
        import cryptography
        from cryptography.hazmat.backends.openssl import backend as ossl

        out["cryptography"] = cryptography.__version__
        out["openssl"] = ossl.openssl_version_text()
    except ImportError:
        pass
    with contextlib.suppress(ImportError):
        out["pycryptodome"] = str(importlib.import_module("Crypto").__version__)
    return out


@dataclass(frozen=True)
class ClockReading:
    """The clock for one operation: mean of the samples around it, and their spread."""

    mhz: float | None
    diff: float | None  # |1 - before/after|, None when not measured
    source: str  # "auto", "user" or "none"


class Clock:
    """The core clock, as bench-slope's "auto MHz": sampled before and after.

    Turbo and frequency scaling change the clock while a benchmark runs, and
    cycles/byte is only as good as the clock it was multiplied by, so every
    operation is bracketed by two samples and redone until they agree.
    ``--cpu-mhz`` replaces the measurement with a fixed value.
    """

    def __init__(self, user_mhz: float | None, sample_ms: float = 1.0, samples: int = 5,
                 sampler: Callable[[float], float | None] | None = None) -> None:
        self.user_mhz = user_mhz
        self.sample_ms = sample_ms
        self.samples = samples
        self._sampler = sampler if sampler is not None else native().clock_mhz
        # one reading tells whether this CPU can be measured at all (None: not x86)
        self.available = user_mhz is not None or self._sampler(self.sample_ms) is not None

    @property
    def source(self) -> str:
        if self.user_mhz is not None:
            return "user"
        return "auto" if self.available else "none"

    @property
    def measured(self) -> bool:
        """True when samples are taken (and so worth repeating an operation for)."""
        return self.user_mhz is None and self.available

    def sample(self) -> float | None:
        """The fastest of a few short readings.

        Another process taking the core during a reading makes the chain
        look slower, never faster, so the highest reading is the clock; short
        readings are the likeliest to run undisturbed on a busy machine.
        """
        if self.user_mhz is not None:
            return self.user_mhz
        values = [self._sampler(self.sample_ms) for _ in range(self.samples)]
        found = [float(v) for v in values if v is not None]
        return max(found) if found else None

    def reading(self, before: float | None, after: float | None) -> ClockReading:
        if self.user_mhz is not None:
            return ClockReading(self.user_mhz, None, "user")
        if before is None or after is None:
            return ClockReading(None, None, "none")
        # the higher of the two: a sample the core was taken from in the middle
        # (by the hypervisor, which the thread's CPU clock does not always see)
        # reads low, never high; a clock that really moved shows in the spread
        return ClockReading(max(before, after), abs(1.0 - before / after), "auto")


@dataclass(frozen=True)
class ClockCheck:
    """The core clock measured two ways, and two rates shown for information.

    The add chain (one cycle per add) is what ``Clock`` samples; a chain of
    64-bit multiplies (three cycles each, on another unit) should give the
    same clock. When the two disagree, something skews the estimate and
    cycles/byte with it. The TSC and /proc/cpuinfo's ``cpu MHz`` give a
    fixed nominal rate, not a boosting core's: they are shown, never compared.
    """

    add_mhz: float
    mul_mhz: float
    tsc_mhz: float | None
    cpuinfo_mhz: float | None

    @property
    def disagreement(self) -> float:
        """|add - multiply| over their mean."""
        return abs(self.add_mhz - self.mul_mhz) / ((self.add_mhz + self.mul_mhz) / 2.0)

    def warning(self) -> str | None:
        """One line when the two chains disagree by more than CLOCK_AGREEMENT, else None."""
        if self.disagreement <= CLOCK_AGREEMENT:
            return None
        return (f"warning: clock estimates differ by {self.disagreement:.1%} (add chain "
                f"{self.add_mhz:.0f} MHz, multiply {self.mul_mhz:.0f} MHz): c/B may be off")

    def info_text(self) -> str:
        """One line: both estimates, then the nominal rates marked as information."""
        nominal = [f"{name} {mhz:.0f}" for name, mhz in
                   (("TSC", self.tsc_mhz), ("cpuinfo", self.cpuinfo_mhz)) if mhz is not None]
        text = f"clock: {self.add_mhz:.0f} MHz (add chain), {self.mul_mhz:.0f} MHz (multiply)"
        return text + (f"; {', '.join(nominal)} MHz (info only)" if nominal else "")

    def as_dict(self) -> dict[str, float | None]:
        """The JSON's clock check: MHz to 0.1, the disagreement to 0.0001."""
        return {
            "add_mhz": round(self.add_mhz, 1),
            "mul_mhz": round(self.mul_mhz, 1),
            "tsc_mhz": None if self.tsc_mhz is None else round(self.tsc_mhz, 1),
            "cpuinfo_mhz": None if self.cpuinfo_mhz is None else round(self.cpuinfo_mhz, 1),
            "disagreement": round(self.disagreement, 4),
        }


def cpuinfo_mhz() -> float | None:
    """The first core's ``cpu MHz`` from /proc/cpuinfo; None when absent (not x86 Linux)."""
    text = _cpuinfo_field("cpu MHz")
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def check_clock(ms: float = 50.0,
                probe: Callable[[float], dict[str, float | None] | None] | None = None
                ) -> ClockCheck | None:
    """Both clock estimates over about ms milliseconds; None where the CPU cannot be
    measured (not x86). ``probe`` replaces the native ``clock_check`` (tests)."""
    got = (probe if probe is not None else native().clock_check)(ms)
    if got is None:
        return None
    add, mul, tsc = got["add_mhz"], got["mul_mhz"], got.get("tsc_mhz")
    if add is None or mul is None or not (add > 0 and mul > 0):
        return None
    return ClockCheck(float(add), float(mul), None if tsc is None else float(tsc), cpuinfo_mhz())


#: CPUs tried per pick: enough for the 2-vCPU VMs this is measured on, few
#: enough that a 64-core machine does not spend its run probing.
MAX_CANDIDATES = 4
#: A CPU this much slower at AES than the best one has its units shared.
SHARED_BY = 0.03


class Cores:
    """Runs each group of timings on the CPU whose AES units are least shared.

    On a shared VM a vCPU's SMT sibling may belong to another guest, and
    when that guest runs AES code the two share the AES units: a parallel
    mode (CTR, GCM, OCB3) then ran 1.3-1.9x slower on that vCPU while a
    serial one (CBC encryption) did not notice, and which vCPU it was moved
    over minutes, so whole operations came out that much apart from one run
    to the next. Before each group, every candidate CPU times a burst of
    independent AESENCs (``_aeskit.aes_share``, about 0.5 ms) and the thread
    is pinned to the fastest. Off Linux, on one CPU or without AES-NI it does
    nothing. ``restore`` gives back the CPUs the process had.
    """

    def __init__(self, probe: Callable[[int], float | None] | None = None,
                 cpus: set[int] | None = None,
                 setter: Callable[[set[int]], None] | None = None) -> None:
        getter = getattr(os, "sched_getaffinity", None)
        if setter is None and hasattr(os, "sched_setaffinity"):
            def setter(cpus: set[int]) -> None:
                os.sched_setaffinity(0, cpus)
        self._pin = setter
        self.original = set(cpus) if cpus is not None else (set(getter(0)) if getter else set())
        self.candidates = sorted(self.original)[:MAX_CANDIDATES]
        self._probe = probe if probe is not None else native().aes_share
        self.enabled = (self._pin is not None and len(self.candidates) > 1
                        and self._probe(1) is not None)
        self.picks: dict[int, int] = {}
        self.shared = 0  # picks where another candidate was SHARED_BY slower
        self.turned = 0  # groups after which the pinned CPU had become shared
        self._at_pick: float | None = None

    def pick(self) -> int | None:
        """Pin to the candidate that runs AES fastest now; the CPU, or None if disabled."""
        if not self.enabled:
            return None
        assert self._pin is not None
        times: dict[int, float] = {}
        try:
            for cpu in self.candidates:
                self._pin({cpu})
                got = self._probe(8)
                if got is not None:
                    times[cpu] = got
            if not times:
                return None
            best = min(times, key=lambda c: times[c])
            self._pin({best})
        except OSError:  # a sandbox that refuses affinity: run where the OS puts us
            self.enabled = False
            return None
        self._at_pick = times[best]
        self.picks[best] = self.picks.get(best, 0) + 1
        if max(times.values()) > times[best] * (1.0 + SHARED_BY):
            self.shared += 1
        return best

    def still_unshared(self) -> bool:
        """After a group: True unless the pinned CPU's AES got SHARED_BY slower than at
        the pick (a neighbour started in the middle; the group is worth redoing)."""
        if not self.enabled or self._at_pick is None:
            return True
        now = self._probe(8)
        if now is None or now <= self._at_pick * (1.0 + SHARED_BY):
            return True
        self.turned += 1
        return False

    def restore(self) -> None:
        if self.enabled and self._pin is not None and self.original:
            self._pin(self.original)

    def as_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "enabled": self.enabled,
                "picks": {str(c): n for c, n in sorted(self.picks.items())},
                "shared": self.shared, "turned": self.turned}

