"""Shared helpers: the mode table, a uniform call shape over aeskit, the pyca reference."""

import os

import aeskit
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers import modes as _modes

try:  # cryptography >= 47 moved the legacy modes here
    from cryptography.hazmat.decrepit.ciphers import modes as _legacy
except ImportError:  # pragma: no cover - older cryptography
    _legacy = _modes

MODES = ("ECB", "CBC", "CFB", "CFB8", "OFB", "CTR")
BLOCK_MODES = ("ECB", "CBC")  # whole blocks only, one-shot and at finalize
STREAM_MODES = ("CFB", "CFB8", "OFB", "CTR")  # any length, continue mid-block
KEY_SIZES = (16, 24, 32)

_REF_MODE = {
    "ECB": lambda iv: _modes.ECB(),
    "CBC": lambda iv: _modes.CBC(iv),
    "CFB": lambda iv: _legacy.CFB(iv),
    "CFB8": lambda iv: _legacy.CFB8(iv),
    "OFB": lambda iv: _legacy.OFB(iv),
    "CTR": lambda iv: _modes.CTR(iv),
}


def cls(mode):
    return getattr(aeskit, "AES" + mode)


def new(mode, key, backend="auto"):
    return cls(mode)(key, backend=backend)


def has_iv(mode):
    return mode != "ECB"


def ivargs(mode, iv):
    """Leading positional arguments of every call: () for ECB, (iv,) otherwise."""
    return (iv,) if has_iv(mode) else ()


def encrypt(obj, mode, iv, data):
    return obj.encrypt(*ivargs(mode, iv), data)


def decrypt(obj, mode, iv, data):
    return obj.decrypt(*ivargs(mode, iv), data)


def encrypt_into(obj, mode, iv, data, buf):
    return obj.encrypt_into(*ivargs(mode, iv), data, buf)


def decrypt_into(obj, mode, iv, data, buf):
    return obj.decrypt_into(*ivargs(mode, iv), data, buf)


def encryptor(obj, mode, iv):
    return obj.encryptor(*ivargs(mode, iv))


def decryptor(obj, mode, iv):
    return obj.decryptor(*ivargs(mode, iv))


def op(obj, mode, iv, direction):
    """A streaming context for direction 'encrypt' or 'decrypt'."""
    return (encryptor if direction == "encrypt" else decryptor)(obj, mode, iv)


def ref(mode, key, iv, data, direction="encrypt"):
    """pyca/cryptography's answer (OpenSSL)."""
    c = Cipher(algorithms.AES(bytes(key)), _REF_MODE[mode](bytes(iv) if iv is not None else None))
    ctx = c.encryptor() if direction == "encrypt" else c.decryptor()
    return ctx.update(bytes(data)) + ctx.finalize()


def stream_len(mode, pending, n):
    """Output length of one update(): whole blocks for ECB/CBC, everything otherwise."""
    if mode in BLOCK_MODES:
        return 16 * ((pending + n) // 16)
    return n


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
