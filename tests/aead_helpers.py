"""AEAD helpers: the AEADs' spec table with their references, a Python model of GHASH and
of GCM's J0, boundary-weighted lengths, buffers that cost no memory or end at a guard page,
and the checks that run a known answer through every entry point.

References: pyca/cryptography (OpenSSL) wherever it takes the parameters, pycryptodome where
it refuses them (cryptography's GCM takes nonces of 8..128 bytes, its AESOCB3 nonces of
12..15 bytes and 16-byte tags only; pycryptodome takes GCM nonces of any length >= 1 and
tags of 4..16 bytes, OCB nonces of 1..15 bytes and tags of 8..16 bytes). cryptography has
no EAX; pycryptodome's takes nonces of any length >= 1 (not the empty one EAX allows).
"""

import ctypes
import mmap
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

import aeskit
import pytest
from aeskit._modes import BY_NAME, MODES
from Crypto.Cipher import AES as _PyCryptodomeAES
from cryptography.exceptions import InvalidTag as _PycaInvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _PycaGCM
from cryptography.hazmat.primitives.ciphers.aead import AESOCB3 as _PycaOCB3
from cryptography.hazmat.primitives.ciphers.aead import AESCCM as _PycaCCM

from helpers import (  # noqa: F401 (re-exported)
    BATCH_STEP,
    BATCHES,
    KEY_SIZES,
    VECTOR_DIR,
    WIDE_BATCH,
    chunks,
    parse_vectors,
    spec_params,
)

AEAD_VECTOR_DIR = os.path.join(VECTOR_DIR, "aead")  # not directly in vectors/: see PROVENANCE.md


# ---------------------------------------------------------------- references

@dataclass(frozen=True)
class Reference:
    """One library's implementation of an AEAD: the parameters it takes, and the calls."""

    lib: str
    nonce_lengths: range
    tag_lengths: range
    # seal(key, nonce, data, aad, tag_length) -> ciphertext || tag
    seal: Callable[[bytes, bytes, bytes, bytes, int], bytes]
    # open(key, nonce, ciphertext, tag, aad) -> plaintext; raises on a bad tag
    open: Callable[[bytes, bytes, bytes, bytes, bytes], bytes]

    def takes(self, nonce_len, tag_length):
        return nonce_len in self.nonce_lengths and tag_length in self.tag_lengths


def _pyca_gcm_seal(key, nonce, data, aad, tag_length):
    if tag_length == 16:
        return _PycaGCM(key).encrypt(nonce, data, aad)
    enc = Cipher(algorithms.AES(key), modes.GCM(nonce)).encryptor()
    enc.authenticate_additional_data(aad)
    ct = enc.update(data) + enc.finalize()
    return ct + enc.tag[:tag_length]  # SP 800-38D: T = MSB_t(S)


def _pyca_gcm_open(key, nonce, ct, tag, aad):
    dec = Cipher(algorithms.AES(key), modes.GCM(nonce, tag, min_tag_length=len(tag))).decryptor()
    dec.authenticate_additional_data(aad)
    return dec.update(ct) + dec.finalize()


def _pyca_ocb3_seal(key, nonce, data, aad, tag_length):
    return _PycaOCB3(key).encrypt(nonce, data, aad)


def _pyca_ocb3_open(key, nonce, ct, tag, aad):
    return _PycaOCB3(key).decrypt(nonce, ct + tag, aad)


def _pyca_ccm_seal(key, nonce, data, aad, tag_length):
    return _PycaCCM(key, tag_length).encrypt(nonce, data, aad)


def _pyca_ccm_open(key, nonce, ct, tag, aad):
    return _PycaCCM(key, len(tag)).decrypt(nonce, ct + tag, aad)


def _xaes_derive(key, nonce):
    """XAES-256-GCM's AES-256-GCM key and nonce (C2SP XAES-256-GCM.md, "Detailed key
    derivation algorithm"), from pyca's AES-256 block cipher."""
    ecb = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    l_ = int.from_bytes(ecb.update(bytes(16)), "big")
    k1 = ((l_ << 1) ^ (0x87 if l_ >> 127 else 0)) & (2**128 - 1)
    m = [bytes([0, i, 0x58, 0]) + nonce[:12] for i in (1, 2)]
    kx = ecb.update(b"".join((int.from_bytes(b, "big") ^ k1).to_bytes(16, "big") for b in m))
    return kx, nonce[12:]


def _xaes_seal(key, nonce, data, aad, tag_length):
    kx, n = _xaes_derive(key, nonce)
    return _PycaGCM(kx).encrypt(n, data, aad)


def _xaes_open(key, nonce, ct, tag, aad):
    kx, n = _xaes_derive(key, nonce)
    return _PycaGCM(kx).decrypt(n, ct + tag, aad)


def _pycryptodome(mode):
    """pycryptodome's seal and open for one of its AEAD modes."""

    def seal(key, nonce, data, aad, tag_length):
        c = _PyCryptodomeAES.new(key, mode, nonce=nonce, mac_len=tag_length)
        c.update(aad)
        ct, tag = c.encrypt_and_digest(data)
        return ct + tag

    def open_(key, nonce, ct, tag, aad):
        c = _PyCryptodomeAES.new(key, mode, nonce=nonce, mac_len=len(tag))
        c.update(aad)
        return c.decrypt_and_verify(ct, tag)

    return seal, open_


# ---------------------------------------------------------------- the spec table

@dataclass(frozen=True)
class AeadSpec:
    """What the tests know about one AEAD, aeskit.AES<name>: tests read these attributes
    instead of asking which AEAD they have, so a new one is one entry in AEADS (plus its
    known answers)."""

    name: str
    # Tag lengths accepted (16, the default, among them) and refused by the constructor.
    tag_lengths: tuple[int, ...]
    bad_tag_lengths: tuple[int, ...]
    # Nonce lengths accepted (the ones worth testing) and refused by every entry point.
    nonce_lengths: tuple[int, ...]
    bad_nonce_lengths: tuple[int, ...]
    # The longest nonce accepted; None: no bound (then far longer ones are tried too).
    nonce_max: int | None
    # The libraries to compare with, preferred first.
    refs: tuple[Reference, ...]
    # update() returns whole blocks only and holds back the 0..15 bytes after them for
    # finalize() (OCB3); otherwise it returns every byte at once (GCM).
    whole_blocks: bool
    # Most bytes of data and of AAD in one message, cumulative when streaming; None: no
    # limit a test can reach.
    max_data: int | None = None
    max_aad: int | None = None
    # Online, with encryptor()/decryptor() contexts; CCM is not (B0 holds the length).
    streams: bool = True
    # tag_length may be given second, positionally (pyca's AESCCM(key, tag_length)).
    tag_positional: bool = False
    # Nonce lengths no reference takes (EAX's empty nonce): the mode's own test file checks
    # them against a model instead; the differential suite leaves them out.
    unreferenced_nonces: tuple[int, ...] = ()
    # Key sizes in bytes the constructor takes (XAES-256-GCM: 32 only).
    key_sizes: tuple[int, ...] = (16, 24, 32)

    @property
    def nonce_len(self):
        """The nonce length the suites use where any would do: 12 where the mode takes it
        (GCM's fast path, OCB's usual), else the shortest it takes (XAES-256-GCM's 24)."""
        return 12 if 12 in self.nonce_lengths else self.nonce_lengths[0]

    @property
    def key_size(self):
        """The key size the suites use where any would do: the largest."""
        return max(self.key_sizes)

    @property
    def cls(self):
        return getattr(aeskit, BY_NAME[self.name].class_name)


_pycryptodome_gcm = _pycryptodome(_PyCryptodomeAES.MODE_GCM)
_pycryptodome_ocb = _pycryptodome(_PyCryptodomeAES.MODE_OCB)
_pycryptodome_ccm = _pycryptodome(_PyCryptodomeAES.MODE_CCM)
_pycryptodome_eax = _pycryptodome(_PyCryptodomeAES.MODE_EAX)

#: The references of each AEAD the shared suites take, preferred first.
AEAD_REFS = {
    "GCM": (Reference("cryptography", range(8, 129), range(4, 17), _pyca_gcm_seal, _pyca_gcm_open),
            Reference("pycryptodome", range(1, sys.maxsize), range(4, 17), *_pycryptodome_gcm)),
    "OCB3": (Reference("cryptography", range(12, 16), range(16, 17),
                       _pyca_ocb3_seal, _pyca_ocb3_open),
             Reference("pycryptodome", range(1, 16), range(8, 17), *_pycryptodome_ocb)),
    "CCM": (Reference("cryptography", range(7, 14), range(4, 17, 2),
                      _pyca_ccm_seal, _pyca_ccm_open),
            Reference("pycryptodome", range(7, 14), range(4, 17, 2), *_pycryptodome_ccm)),
    # pycryptodome refuses EAX's empty nonce (the EAX paper allows it)
    "EAX": (Reference("pycryptodome", range(1, sys.maxsize), range(4, 17), *_pycryptodome_eax),),
    # no library of these has it: the spec's derivation over pyca's AES and AESGCM
    "XAES-256-GCM": (Reference("cryptography", range(24, 25), range(16, 17),
                               _xaes_seal, _xaes_open),),
}
#: Nonce lengths no reference takes, which the mode's own test file checks against a model
#: instead (tests/test_eax.py: EAX's empty nonce).
UNREFERENCED_NONCES = {"EAX": (0,)}
#: Nonce lengths worth testing where a mode takes any length from its shortest on.
UNBOUNDED_NONCES = (0, 1, 2, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33, 60, 64, 100, 128)
# AEADs in the registry whose call shape the shared suites do not take, tested in their own
# file (test_<name lowercased, without "-">.py, known answers in the .txt of that name): the
# suites stream every AEAD, and GCM-SIV has no streaming (two passes); SIV has none either,
# and no nonce argument, a list of associated data and its tag first.
OWN_SUITE_AEADS = ("GCM-SIV", "SIV")


def aead_spec(mode):
    """The spec of one AEAD: what its descriptor states (aeskit._modes), the lengths worth
    trying that follow from it, and its references (AEAD_REFS)."""
    if mode.name not in AEAD_REFS:
        raise LookupError(f"{mode.name}: an AEAD of the registry without its references in "
                          "AEAD_REFS (tests/aead_helpers.py), nor in OWN_SUITE_AEADS")
    tags = mode.tag_lengths
    if mode.nonce_max is None:
        nonces = tuple(n for n in UNBOUNDED_NONCES if n >= mode.nonce_min)
        too_long = ()
    else:
        nonces = tuple(range(mode.nonce_min, mode.nonce_max + 1))
        too_long = tuple(sorted({mode.nonce_max + 1, mode.nonce_max + 2, mode.nonce_max + 3, 32}))
    return AeadSpec(
        mode.name,
        tag_lengths=tuple(sorted(tags, reverse=True)),
        bad_tag_lengths=tuple(t for t in (-1, *range(18), 32) if t not in tags),
        nonce_lengths=nonces,
        bad_nonce_lengths=tuple(range(mode.nonce_min)) + too_long,
        nonce_max=mode.nonce_max,
        refs=AEAD_REFS[mode.name],
        whole_blocks=mode.whole_blocks,
        max_data=mode.max_data,
        max_aad=mode.max_aad,
        streams=mode.streams,
        tag_positional=mode.tag_positional,
        unreferenced_nonces=UNREFERENCED_NONCES.get(mode.name, ()),
        key_sizes=mode.key_sizes,
    )


AEADS = tuple(aead_spec(m) for m in MODES if m.aead and m.name not in OWN_SUITE_AEADS)
AEAD = {spec.name: spec for spec in AEADS}


def aead_cls(spec):
    return spec.cls


def new_aead(spec, key, tag_length=16, backend="auto"):
    return spec.cls(key, tag_length=tag_length, backend=backend)


def aead_vectors(filename):
    """The vectors of tests/vectors/aead/<filename>, hex fields decoded to bytes."""
    out = []
    for v in parse_vectors(os.path.join(AEAD_VECTOR_DIR, filename)):
        d = {k: (val if k in ("section", "file") else
                 int(val) if k in ("tag_bits", "aad_repeat") else bytes.fromhex(val))
             for k, val in v.items()}
        if "aad_repeat" in d:  # associated data given by a rule (SP 800-38C Example 4)
            d["aad"] *= d["aad_repeat"]
        out.append(d)
    return out


def vector_id(v):
    return v["section"]


def rand(seed, n):
    return random.Random(seed).randbytes(n)


def ref_libs(spec, nonce_len, tag_length=16):
    """The references that accept these parameters, preferred first."""
    return [r.lib for r in spec.refs if r.takes(nonce_len, tag_length)]


def _reference(spec, nonce_len, tag_length, lib):
    refs = [r for r in spec.refs if r.takes(nonce_len, tag_length) and lib in (None, r.lib)]
    if not refs:
        raise ValueError(f"no reference for {spec.name} with a {nonce_len}-byte nonce, "
                         f"{tag_length}-byte tag (lib={lib})")
    return refs[0]


def ref_seal(spec, key, nonce, data, aad=b"", tag_length=16, lib=None):
    """ciphertext || tag from one reference library (default: the preferred one)."""
    key, nonce, data, aad = bytes(key), bytes(nonce), bytes(data), bytes(aad or b"")
    return _reference(spec, len(nonce), tag_length, lib).seal(key, nonce, data, aad, tag_length)


def ref_open(spec, key, nonce, data, aad=b"", tag_length=16, lib=None):
    """The plaintext, or None when the reference rejects the tag."""
    key, nonce, data, aad = bytes(key), bytes(nonce), bytes(data), bytes(aad or b"")
    ref = _reference(spec, len(nonce), tag_length, lib)
    if len(data) < tag_length:
        return None
    ct, tag = data[:len(data) - tag_length], data[len(data) - tag_length:]
    try:
        return ref.open(key, nonce, ct, tag, aad)
    except (_PycaInvalidTag, ValueError):
        return None


def stream_len(spec, pending, n):
    """Output length of one update(): whole blocks for a whole-block AEAD (OCB3), everything
    otherwise (GCM)."""
    if spec.whole_blocks:
        return 16 * ((pending + n) // 16)
    return n


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
    """Every length 0..(3W+2)*16+17 for W the widest batch (TESTING.md), 10,000 +-17, and
    every multiple of every backend's batch up to 10,000 +-{0, 1, 15, 16, 17}."""
    small = set(range((3 * WIDE_BATCH + 2) * 16 + 18))
    near = {10000 + d for d in range(-17, 18)}
    batches = {b + d for b in range(0, 10001, 16 * BATCH_STEP)
               for d in (0, 1, -1, 15, -15, 16, -16, 17, -17) if b + d >= 0}
    return sorted(small | near | batches)


# ---------------------------------------------------------------- huge buffers

MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux value; Python < 3.12 lacks it


def zero_map(size):
    """A read-only private mapping of `size` zero bytes that reserves no memory (no page is
    touched unless read)."""
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE,
                     prot=mmap.PROT_READ)


# ---------------------------------------------------------------- every way to call

def stream_seal(obj, spec, nonce, data, aad_pieces, data_pieces, use_into=()):
    """Encrypt through an encryptor; returns (ciphertext, tag). Checks each update's length."""
    ctx = obj.encryptor(nonce)
    for a in aad_pieces:
        assert ctx.authenticate_additional_data(a) is None
    out, pending = [], 0
    for i, p in enumerate(data_pieces):
        need = stream_len(spec, pending, len(p))
        if i < len(use_into) and use_into[i]:
            buf = bytearray(b"\xee" * need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert type(got) is bytes
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending = (pending + len(p)) % 16 if spec.whole_blocks else 0
    last = ctx.finalize()
    assert type(last) is bytes and len(last) == pending
    out.append(last)
    tag = ctx.tag
    assert type(tag) is bytes and len(tag) == obj.tag_length
    return b"".join(out), tag


def stream_open(obj, spec, nonce, tag, aad_pieces, data_pieces, use_into=()):
    """Decrypt through a decryptor ending in finalize_with_tag; returns the plaintext."""
    ctx = obj.decryptor(nonce)
    for a in aad_pieces:
        assert ctx.authenticate_additional_data(a) is None
    out, pending = [], 0
    for i, p in enumerate(data_pieces):
        need = stream_len(spec, pending, len(p))
        if i < len(use_into) and use_into[i]:
            buf = bytearray(b"\xee" * need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending = (pending + len(p)) % 16 if spec.whole_blocks else 0
    last = ctx.finalize_with_tag(tag)
    assert type(last) is bytes and len(last) == pending
    out.append(last)
    return b"".join(out)


def check_seal_open_refuse(obj, nonce, data, aad, sealed, where=None):
    """obj seals data as sealed, opens it in place, and refuses it with its last bit
    flipped: InvalidTag, and nothing of the plaintext in the output."""
    assert obj.encrypt(nonce, data, aad) == sealed, where
    buf = bytearray(sealed)
    n = len(data)
    assert obj.decrypt_into(nonce, buf, aad, buf) == n and buf[:n] == data, where
    bad = bytearray(sealed)
    bad[-1] ^= 1
    out = bytearray(b"\xa5" * n)
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(nonce, bad, aad, out)
    assert not any(out), where


def check_every_bit_tampered(obj, nonce, aad, pt):
    """Any bit of the tag, the ciphertext, the AAD or the nonce of obj's seal of pt
    flipped, a byte of AAD more or of the message less: InvalidTag, and decrypt_into
    leaves zeros (not plaintext) in its buffer, in place too; the message as sealed still
    opens. For a mode with 16-byte tags after the ciphertext and a nonce argument."""
    sealed = obj.encrypt(nonce, pt, aad)

    def refused(n, data, a):
        with pytest.raises(aeskit.InvalidTag):
            obj.decrypt(n, data, a)
        buf = bytearray(data)
        with pytest.raises(aeskit.InvalidTag):
            obj.decrypt_into(n, buf, a, buf)
        assert buf[:len(data) - 16] == bytes(len(data) - 16)   # the output's bytes

    def flipped(b, i):
        c = bytearray(b)
        c[i // 8] ^= 1 << i % 8
        return bytes(c)
    for i in range(8 * len(sealed)):   # ciphertext and tag
        refused(nonce, flipped(sealed, i), aad)
    for i in range(8 * len(aad)):
        refused(nonce, sealed, flipped(aad, i))
    for i in range(8 * len(nonce)):
        refused(flipped(nonce, i), sealed, aad)
    refused(nonce, sealed, aad + b"\x00")
    refused(nonce, sealed[:-1], aad)
    assert obj.decrypt(nonce, sealed, aad) == pt
    return sealed


def check_every_path(obj, spec, nonce, aad, pt, sealed):
    """obj gives `sealed` (ciphertext || tag) for pt and opens it, through every entry point:
    one-shot, keywords, _into (larger buffer), in place, and streaming (one piece and
    byte-at-a-time pieces of AAD and data) for an AEAD that streams."""
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
    if not spec.streams:
        assert not hasattr(obj, "encryptor") and not hasattr(obj, "decryptor")
        return
    # Streaming: whole, and in 1-byte pieces (AAD too).
    aad = bytes(aad or b"")
    whole = stream_seal(obj, spec, nonce, pt, [aad], [pt])
    assert whole == (ct, tag)
    bytewise = [pt[i:i + 1] for i in range(n)]
    aadwise = [aad[i:i + 1] for i in range(len(aad))]
    assert stream_seal(obj, spec, nonce, pt, aadwise, bytewise) == (ct, tag)
    assert stream_open(obj, spec, nonce, tag, [aad], [ct]) == pt
    ctwise = [ct[i:i + 1] for i in range(n)]
    assert stream_open(obj, spec, nonce, tag, aadwise, ctwise, [True] * n) == pt


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
