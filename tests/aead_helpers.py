"""AEAD helpers: the AES-GCM and AES-OCB3 references, a Python model of GHASH and of GCM's
J0, boundary-weighted lengths, buffers that cost no memory or end at a guard page, and the
checks that run a known answer through every entry point.

References: pyca/cryptography (OpenSSL) wherever it takes the parameters, pycryptodome where
it refuses them (cryptography's GCM takes nonces of 8..128 bytes, its AESOCB3 nonces of
12..15 bytes and 16-byte tags only; pycryptodome takes GCM nonces of any length >= 1 and
tags of 4..16 bytes, OCB nonces of 1..15 bytes and tags of 8..16 bytes).
"""

import ctypes
import mmap
import os
import random

import aeskit
from Crypto.Cipher import AES as _PyCryptodomeAES
from cryptography.exceptions import InvalidTag as _PycaInvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _PycaGCM
from cryptography.hazmat.primitives.ciphers.aead import AESOCB3 as _PycaOCB3

from helpers import KEY_SIZES, VECTOR_DIR, chunks, parse_vectors  # noqa: F401 (re-exported)

AEAD_VECTOR_DIR = os.path.join(VECTOR_DIR, "aead")  # not directly in vectors/: see PROVENANCE.md

AEADS = ("GCM", "OCB3")
TAG_LENGTHS = {"GCM": (16, 15, 14, 13, 12, 8, 4), "OCB3": tuple(range(8, 17))}
BAD_TAG_LENGTHS = {
    "GCM": (-1, 0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 17, 32),
    "OCB3": (-1, 0, 1, 4, 7, 17, 32),
}
# Nonce lengths each mode accepts (GCM: any length >= 1; these are the ones worth testing).
NONCE_LENGTHS = {
    "GCM": (1, 2, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33, 60, 64, 100, 128),
    "OCB3": tuple(range(1, 16)),
}
BAD_NONCE_LENGTHS = {"GCM": (0,), "OCB3": (0, 16, 17, 32)}


def aead_cls(name):
    return getattr(aeskit, "AES" + name)


def new_aead(name, key, tag_length=16, backend="auto"):
    return aead_cls(name)(key, tag_length=tag_length, backend=backend)


def aead_vectors(filename):
    """The vectors of tests/vectors/aead/<filename>, hex fields decoded to bytes."""
    out = []
    for v in parse_vectors(os.path.join(AEAD_VECTOR_DIR, filename)):
        d = {k: (val if k in ("section", "file") else
                 int(val) if k == "tag_bits" else bytes.fromhex(val)) for k, val in v.items()}
        out.append(d)
    return out


def vector_id(v):
    return v["section"]


def rand(seed, n):
    return random.Random(seed).randbytes(n)


# ---------------------------------------------------------------- references

def ref_libs(name, nonce_len, tag_length=16):
    """The references that accept these parameters, preferred first."""
    libs = []
    if name == "GCM":
        if 8 <= nonce_len <= 128:
            libs.append("cryptography")
        if nonce_len >= 1 and 4 <= tag_length <= 16:
            libs.append("pycryptodome")
    else:
        if 12 <= nonce_len <= 15 and tag_length == 16:
            libs.append("cryptography")
        if 1 <= nonce_len <= 15 and 8 <= tag_length <= 16:
            libs.append("pycryptodome")
    return libs


def _pycryptodome(name, key, nonce, tag_length):
    mode = _PyCryptodomeAES.MODE_GCM if name == "GCM" else _PyCryptodomeAES.MODE_OCB
    return _PyCryptodomeAES.new(bytes(key), mode, nonce=bytes(nonce), mac_len=tag_length)


def ref_seal(name, key, nonce, data, aad=b"", tag_length=16, lib=None):
    """ciphertext || tag from one reference library (default: the preferred one)."""
    key, nonce, data, aad = bytes(key), bytes(nonce), bytes(data), bytes(aad or b"")
    lib = lib or ref_libs(name, len(nonce), tag_length)[0]
    if lib == "cryptography":
        if name == "GCM":
            if tag_length == 16:
                return _PycaGCM(key).encrypt(nonce, data, aad)
            enc = Cipher(algorithms.AES(key), modes.GCM(nonce)).encryptor()
            enc.authenticate_additional_data(aad)
            ct = enc.update(data) + enc.finalize()
            return ct + enc.tag[:tag_length]  # SP 800-38D: T = MSB_t(S)
        return _PycaOCB3(key).encrypt(nonce, data, aad)
    c = _pycryptodome(name, key, nonce, tag_length)
    c.update(aad)
    ct, tag = c.encrypt_and_digest(data)
    return ct + tag


def ref_open(name, key, nonce, data, aad=b"", tag_length=16, lib=None):
    """The plaintext, or None when the reference rejects the tag."""
    key, nonce, data, aad = bytes(key), bytes(nonce), bytes(data), bytes(aad or b"")
    lib = lib or ref_libs(name, len(nonce), tag_length)[0]
    if len(data) < tag_length:
        return None
    ct, tag = data[:len(data) - tag_length], data[len(data) - tag_length:]
    try:
        if lib == "cryptography":
            if name == "GCM":
                dec = Cipher(algorithms.AES(key),
                             modes.GCM(nonce, tag, min_tag_length=tag_length)).decryptor()
                dec.authenticate_additional_data(aad)
                return dec.update(ct) + dec.finalize()
            return _PycaOCB3(key).decrypt(nonce, data, aad)
        c = _pycryptodome(name, key, nonce, tag_length)
        c.update(aad)
        return c.decrypt_and_verify(ct, tag)
    except (_PycaInvalidTag, ValueError):
        return None


def stream_len(name, pending, n):
    """Output length of one update(): everything for GCM, whole blocks for OCB3."""
    if name == "GCM":
        return n
    return 16 * ((pending + n) // 16)


# ---------------------------------------------------------------- GHASH model (SP 800-38D)

_R = 0xE1 << 120


def gf_mul(x, y):
    """Product in GF(2^128) with GCM's bit order (blocks as big-endian ints)."""
    z, v = 0, x
    for i in range(127, -1, -1):
        if (y >> i) & 1:
            z ^= v
        v = (v >> 1) ^ _R if v & 1 else v >> 1
    return z


def gf_inv(x):
    """x^(2^128 - 2), the inverse of x != 0."""
    result, base, e = 1 << 127, x, 2**128 - 2  # 1 << 127 is the field's one
    while e:
        if e & 1:
            result = gf_mul(result, base)
        base = gf_mul(base, base)
        e >>= 1
    return result


def ghash(h, data):
    """GHASH_H over data zero-padded to whole blocks; h and the result as ints."""
    y = 0
    for i in range(0, len(data), 16):
        y = gf_mul(y ^ int.from_bytes(data[i:i + 16].ljust(16, b"\0"), "big"), h)
    return y


def aes_block(key, block):
    enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()
    return enc.update(bytes(block)) + enc.finalize()


def hash_key(key):
    return int.from_bytes(aes_block(key, bytes(16)), "big")


def gcm_j0(key, nonce):
    """The pre-counter block J0 (SP 800-38D section 7.1, step 2)."""
    nonce = bytes(nonce)
    if len(nonce) == 12:
        return nonce + b"\0\0\0\1"
    pad = (-len(nonce)) % 16
    s = nonce + bytes(pad + 8) + (8 * len(nonce)).to_bytes(8, "big")
    return ghash(hash_key(key), s).to_bytes(16, "big")


def nonce_for_j0(key, j0):
    """A 16-byte nonce whose J0 under key is j0: GHASH over (N, L) is (N*H ^ L)*H, so
    N = (J0*H^-1 ^ L)*H^-1 with L = [0]_64 || [128]_64."""
    h_inv = gf_inv(hash_key(key))
    y1 = gf_mul(int.from_bytes(bytes(j0), "big"), h_inv) ^ 128
    return gf_mul(y1, h_inv).to_bytes(16, "big")


def inc32(block, k=1):
    """block with its low 32 bits advanced by k modulo 2^32 (SP 800-38D inc_32)."""
    block = bytes(block)
    low = (int.from_bytes(block[12:], "big") + k) % 2**32
    return block[:12] + low.to_bytes(4, "big")


def gcm_model_ciphertext(key, j0, data):
    """GCTR from inc32(J0) over data, from single AES blocks: the counter-mode half of GCM,
    independent of any GCM implementation."""
    out = bytearray()
    for i in range(0, len(data), 16):
        ks = aes_block(key, inc32(j0, 1 + i // 16))
        out += bytes(a ^ b for a, b in zip(data[i:i + 16], ks))
    return bytes(out)


# ---------------------------------------------------------------- lengths

def boundary_lengths():
    """Every length 0..(3W+2)*16+17 for W = 8 blocks per batch (TESTING.md; it covers
    0..3*8*16+17), 10,000 +-17, and every multiple of the 8-block batch up to 10,000
    +-{0, 1, 15, 16, 17}."""
    small = set(range(0, (3 * 8 + 2) * 16 + 18))
    near = {10000 + d for d in range(-17, 18)}
    batches = {b + d for b in range(0, 10001, 128) for d in (0, 1, -1, 15, -15, 16, -16, 17, -17)
               if b + d >= 0}
    return sorted(small | near | batches)


# ---------------------------------------------------------------- huge buffers

MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux value; Python < 3.12 lacks it


def zero_map(size):
    """A read-only private mapping of `size` zero bytes that reserves no memory (no page is
    touched unless read)."""
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE,
                     prot=mmap.PROT_READ)


# ---------------------------------------------------------------- every way to call

def stream_seal(obj, name, nonce, data, aad_pieces, data_pieces, use_into=()):
    """Encrypt through an encryptor; returns (ciphertext, tag). Checks each update's length."""
    ctx = obj.encryptor(nonce)
    for a in aad_pieces:
        assert ctx.authenticate_additional_data(a) is None
    out, pending = [], 0
    for i, p in enumerate(data_pieces):
        need = stream_len(name, pending, len(p))
        if i < len(use_into) and use_into[i]:
            buf = bytearray(b"\xee" * need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert type(got) is bytes
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending = (pending + len(p)) % 16 if name != "GCM" else 0
    last = ctx.finalize()
    assert type(last) is bytes and len(last) == pending
    out.append(last)
    tag = ctx.tag
    assert type(tag) is bytes and len(tag) == obj.tag_length
    return b"".join(out), tag


def stream_open(obj, name, nonce, tag, aad_pieces, data_pieces, use_into=()):
    """Decrypt through a decryptor ending in finalize_with_tag; returns the plaintext."""
    ctx = obj.decryptor(nonce)
    for a in aad_pieces:
        assert ctx.authenticate_additional_data(a) is None
    out, pending = [], 0
    for i, p in enumerate(data_pieces):
        need = stream_len(name, pending, len(p))
        if i < len(use_into) and use_into[i]:
            buf = bytearray(b"\xee" * need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending = (pending + len(p)) % 16 if name != "GCM" else 0
    last = ctx.finalize_with_tag(tag)
    assert type(last) is bytes and len(last) == pending
    out.append(last)
    return b"".join(out)


def check_every_path(obj, name, nonce, aad, pt, sealed):
    """obj gives `sealed` (ciphertext || tag) for pt and opens it, through every entry point:
    one-shot, keywords, _into (larger buffer), in place, and streaming (one piece and
    byte-at-a-time pieces of AAD and data)."""
    t = obj.tag_length
    n = len(pt)
    ct, tag = sealed[:n], sealed[n:]
    assert len(tag) == t
    got = obj.encrypt(nonce, pt, aad)
    assert type(got) is bytes and got == sealed
    assert obj.encrypt(nonce=nonce, data=pt, associated_data=aad) == sealed
    assert obj.decrypt(nonce, sealed, aad) == pt
    assert obj.decrypt(nonce=nonce, data=sealed, associated_data=aad) == pt
    if not aad:
        assert obj.encrypt(nonce, pt, None) == sealed
        assert obj.decrypt(nonce, sealed, None) == pt
    # _into, into a larger buffer: the count, the bytes, nothing written past them.
    buf = bytearray(b"\xee" * (n + t + 7))
    assert obj.encrypt_into(nonce, pt, aad, buf) == n + t
    assert buf[:n + t] == sealed and buf[n + t:] == b"\xee" * 7
    buf = bytearray(b"\xee" * (n + 7))
    assert obj.decrypt_into(nonce, sealed, aad, buf) == n
    assert buf[:n] == pt and buf[n:] == b"\xee" * 7
    # In place: plaintext at the start of a buffer with room for the tag, and back.
    store = bytearray(pt) + bytearray(t)
    assert obj.encrypt_into(nonce, memoryview(store)[:n], aad, store) == n + t
    assert store == sealed
    assert obj.decrypt_into(nonce, store, aad, store) == n
    assert store[:n] == pt
    # Streaming: whole, and in 1-byte pieces (AAD too).
    aad = bytes(aad or b"")
    whole = stream_seal(obj, name, nonce, pt, [aad], [pt])
    assert whole == (ct, tag)
    bytewise = [pt[i:i + 1] for i in range(n)]
    aadwise = [aad[i:i + 1] for i in range(len(aad))]
    assert stream_seal(obj, name, nonce, pt, aadwise, bytewise) == (ct, tag)
    assert stream_open(obj, name, nonce, tag, [aad], [ct]) == pt
    ctwise = [ct[i:i + 1] for i in range(n)]
    assert stream_open(obj, name, nonce, tag, aadwise, ctwise, [True] * n) == pt


# ---------------------------------------------------------------- guard pages

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class GuardedBuffer:
    """A writable buffer of `size` bytes whose last byte is followed by a PROT_NONE page:
    an over-read or over-write kills the process instead of passing silently."""

    def __init__(self, size, fill=b""):
        page = mmap.PAGESIZE
        pages = (size + page - 1) // page + 1
        self._map = mmap.mmap(-1, pages * page)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
        if _libc.mprotect(base + (pages - 1) * page, page, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
        start = (pages - 1) * page - size
        self.view = memoryview(self._map)[start:start + size]
        if fill:
            self.view[:] = fill
