"""Shared helpers: the block-cipher modes' spec table, a uniform call shape over aeskit, the
pyca reference."""

import functools
import math
import os
import platform
import signal
from collections.abc import Callable
from dataclasses import dataclass

import aeskit
import pytest
from aeskit import _aeskit
from aeskit._modes import BY_NAME, MODES
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers import modes as _modes

try:  # cryptography >= 47 moved the legacy modes here
    from cryptography.hazmat.decrepit.ciphers import modes as _legacy
except ImportError:  # pragma: no cover - older cryptography
    _legacy = _modes

KEY_SIZES = (16, 24, 32)


def default_sigint() -> None:
    """preexec_fn of a child that a test sends SIGINT, as a terminal's Ctrl-C would: a
    test runner's worker may ignore SIGINT, a child inherits that, and Python then never
    installs the handler that raises KeyboardInterrupt (the child ran on and exited 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass(frozen=True)
class CipherSpec:
    """What the tests know about one block-cipher mode, aeskit.AES<name>: tests read these
    attributes instead of asking which mode they have, so a new mode is one entry in
    CIPHERS (plus its known answers)."""

    name: str
    # A 16-byte iv comes before the data in every call (all but ECB).
    has_iv: bool
    # Whole blocks only: one-shot data must be whole blocks, update() returns whole blocks
    # and holds back the rest, finalize() refuses a partial block (ECB, CBC). Otherwise any
    # length, and update() continues mid-block and returns every byte.
    whole_blocks: bool
    # The output is the data XOR a keystream of key and iv alone (OFB, CTR): encrypting
    # zeros hands out the keystream itself.
    keystream: bool
    # pyca/cryptography's mode object for an iv (None for a mode without one).
    ref_mode: Callable[[bytes | None], object]
    # Bytes per AES call: 1 for CFB8, whose large-message tests are sized down to match.
    segment: int = 16
    # Key argument lengths (XTS: two AES keys, 32 or 64 bytes).
    key_sizes: tuple[int, ...] = KEY_SIZES
    # The shortest data a call or a whole stream takes (XTS: a block), else ValueError.
    min_len: int = 0
    # The last whole block may change with what follows (XTS's ciphertext stealing): a
    # stream holds it back with the partial block after it until 16 more bytes come.
    steals: bool = False

    @property
    def cls(self):
        return getattr(aeskit, BY_NAME[self.name].class_name)

    def takes(self, n):
        """Whether a one-shot call takes n bytes."""
        return n >= self.min_len and not (self.whole_blocks and n % 16)


#: What the tests know of each block-cipher mode beyond its descriptor: pyca's mode object
#: (the reference), whether the output is a keystream, whether it steals.
CIPHER_REFS = {
    "ECB": {"ref_mode": lambda iv: _modes.ECB(), "keystream": False},
    "CBC": {"ref_mode": _modes.CBC, "keystream": False},
    "CFB": {"ref_mode": _legacy.CFB, "keystream": False},
    "CFB8": {"ref_mode": _legacy.CFB8, "keystream": False},
    "OFB": {"ref_mode": _legacy.OFB, "keystream": True},
    "CTR": {"ref_mode": _modes.CTR, "keystream": True},
    "XTS": {"ref_mode": _modes.XTS, "keystream": False, "steals": True},
}


def cipher_spec(mode):
    """The spec of one block-cipher mode: what its descriptor states (aeskit._modes) and
    what the tests know of it (CIPHER_REFS)."""
    if mode.name not in CIPHER_REFS:
        raise LookupError(f"{mode.name}: a block-cipher mode of the registry without its "
                          "entry in CIPHER_REFS (tests/helpers.py)")
    return CipherSpec(mode.name, has_iv=mode.nonce_name is not None,
                      whole_blocks=mode.whole_blocks, segment=16 // mode.chained_aes,
                      key_sizes=mode.key_sizes, min_len=mode.min_len, **CIPHER_REFS[mode.name])


CIPHERS = tuple(cipher_spec(m) for m in MODES if m.family == "cipher")
CIPHER = {spec.name: spec for spec in CIPHERS}


def spec_params(table, **want):
    """The specs of table whose attributes have the values given (all of them without any),
    as pytest parameters with the mode's name as id."""
    return [pytest.param(s, id=s.name) for s in table
            if all(getattr(s, k) == v for k, v in want.items())]


def cls(spec):
    return spec.cls


def new(spec, key, backend="auto"):
    return spec.cls(key_for(spec, key), backend=backend)


def ivargs(spec, iv):
    """Leading positional arguments of every call: () without an iv (ECB), (iv,) otherwise."""
    return (iv,) if spec.has_iv else ()


def encrypt(obj, spec, iv, data):
    return obj.encrypt(*ivargs(spec, iv), data)


def decrypt(obj, spec, iv, data):
    return obj.decrypt(*ivargs(spec, iv), data)


def encrypt_into(obj, spec, iv, data, buf):
    return obj.encrypt_into(*ivargs(spec, iv), data, buf)


def decrypt_into(obj, spec, iv, data, buf):
    return obj.decrypt_into(*ivargs(spec, iv), data, buf)


def encryptor(obj, spec, iv):
    return obj.encryptor(*ivargs(spec, iv))


def decryptor(obj, spec, iv):
    return obj.decryptor(*ivargs(spec, iv))


def op(obj, spec, iv, direction):
    """A streaming context for direction 'encrypt' or 'decrypt'."""
    return (encryptor if direction == "encrypt" else decryptor)(obj, spec, iv)


def ref(spec, key, iv, data, direction="encrypt"):
    """pyca/cryptography's answer (OpenSSL)."""
    mode = spec.ref_mode(bytes(iv) if iv is not None else None)
    c = Cipher(algorithms.AES(bytes(key_for(spec, key))), mode)
    ctx = c.encryptor() if direction == "encrypt" else c.decryptor()
    return ctx.update(bytes(data)) + ctx.finalize()


def fit(spec, n):
    """The longest length <= n that a one-shot call of the mode takes (its shortest if
    none is)."""
    return max(n - n % 16 if spec.whole_blocks else n, spec.min_len)


def key_for(spec, key):
    """key as the mode takes it: unchanged if it can, else stretched to the nearest size
    it takes, for a two-key mode (XTS) with a second half that differs from the first."""
    n = memoryview(key).nbytes
    raw = bytes(memoryview(key).cast("B"))
    if n in spec.key_sizes and not (spec.steals and raw[:n // 2] == raw[n // 2:]):
        return key
    size = min(spec.key_sizes, key=lambda s: (abs(s - n), s))
    k = (raw * (size // n + 1))[:size]
    return k[:size // 2] + bytes(b ^ 0x5A for b in k[size // 2:])


def stream_len(spec, pending, n):
    """Output length of one update() with pending bytes held: whole blocks for a whole-
    block mode, whole blocks but the last for a stealing one, everything otherwise."""
    if spec.whole_blocks:
        return 16 * ((pending + n) // 16)
    if spec.steals:
        return 16 * max((pending + n) // 16 - 1, 0)
    return n


# ---------------------------------------------------------------- kernel boundaries
# Where the backends' kernels hand over, as each table exports it (backend_constants): the
# sweeps cross these, so a wider kernel widens them without a test edit.

BACKEND_CONSTANTS = {name: _aeskit.backend_constants(name) for name in aeskit.backends().all}
# Blocks per main-loop iteration of each compiled-in backend's kernels (available here or
# not): its parallel modes' batch_blocks and any kernel's own (aesni's gcm_, ocb_ and
# ghash_batch_blocks).
BATCHES = tuple(sorted({v for c in BACKEND_CONSTANTS.values() for k, v in c.items()
                        if k.endswith("batch_blocks")}))
# W: the widest batch (vaes_avx512: 32 blocks).
WIDE_BATCH = BATCHES[-1]
# Every multiple of this many blocks is a multiple of every backend's batch.
BATCH_STEP = functools.reduce(math.gcd, BATCHES)
# The most GHASH powers a backend's key holds: the most blocks under one reduction (W where
# no backend says).
GHASH_POWERS = max([c.get("ghash_key_powers", 0) for c in BACKEND_CONSTANTS.values()]
                   + [WIDE_BATCH])
# A 12-byte nonce's data starts at counter 2, 14 blocks before the first counter whose low
# 4 bits are 0, where the fused GCM kernel starts its batches.
GCM_FUSED_HEAD = 14


# Each backend's fused GCM kernel (vaes_gcm.h: vaes_avx512 and vaes_avx2): its batch, the
# fewest blocks it takes after GCM_FUSED_HEAD, and the most batches it hashes under one
# reduction (its GHASH key's powers over its batch).
GCM_FUSED = {name: (c["batch_blocks"], c["gcm_fused_min_blocks"],
                    c["ghash_key_powers"] // c["batch_blocks"])
             for name, c in BACKEND_CONSTANTS.items() if "gcm_fused_min_blocks" in c}


def _fused_gcm():
    """vaes_avx512's fused GCM (the widest): its fewest blocks and its chunk, as above."""
    if "vaes_avx512" not in GCM_FUSED:
        # Only a build without the x86 backends lacks it; on x86-64 that fails the session
        # (conftest.py), and the sweeps must not quietly shrink meanwhile.
        if platform.machine().lower() in ("x86_64", "amd64"):
            raise RuntimeError(f"an x86-64 build without vaes_avx512: {aeskit.backends()!r}")
        return 3 * WIDE_BATCH, max(GHASH_POWERS // WIDE_BATCH, 1)
    return GCM_FUSED["vaes_avx512"][1:]


GCM_FUSED_MIN, GCM_FUSED_CHUNK = _fused_gcm()


def chunks(data, cuts):
    """Split data at the sorted cut points (duplicates give empty chunks)."""
    out, prev = [], 0
    for c in sorted(cuts):
        out.append(data[prev:c])
        prev = c
    out.append(data[prev:])
    return out


def parse_vectors(path):
    """Parse a `name = hex` block file into a list of dicts (see vectors/PROVENANCE.md)."""
    vectors, cur = [], {}
    with open(path, encoding="ascii") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if line.startswith("#"):
                continue
            if not line:
                if cur:
                    vectors.append(cur)
                    cur = {}
                continue
            name, sep, value = line.partition("=")
            if not sep:
                raise ValueError(f"{path}:{lineno}: expected 'name = value'")
            name, value = name.strip(), value.strip()
            if name in cur:
                raise ValueError(f"{path}:{lineno}: duplicate {name!r}")
            cur[name] = value
    if cur:
        vectors.append(cur)
    for v in vectors:
        v["file"] = os.path.basename(path)
    return vectors


VECTOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")


def all_vectors():
    out = []
    for name in sorted(os.listdir(VECTOR_DIR)):
        if name.endswith(".txt"):
            out.extend(parse_vectors(os.path.join(VECTOR_DIR, name)))
    return out
