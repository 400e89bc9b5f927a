"""AESXTS (IEEE 1619, SP 800-38E): known answers, pyca/cryptography as the reference,
every backend against portable around the kernels' batches, ciphertext stealing at every
partial length in both directions, streaming hold-back and limits, sectors, bad input."""

import os
import random

import aeskit
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from helpers import BATCHES, WIDE_BATCH, parse_vectors

_DIR = os.path.join(os.path.dirname(__file__), "vectors", "xts")
VECTORS = [v for name in sorted(os.listdir(_DIR)) for v in parse_vectors(os.path.join(_DIR, name))]
LIMIT = 16 << 20  # 2**20 blocks per data unit (SP 800-38E)
KEYS = {32: bytes(range(32)), 64: bytes(range(64, 128))}
TWEAK = bytes(range(0xA0, 0xB0))


def ref(key, tweak, data, direction="encrypt"):
    c = Cipher(algorithms.AES(bytes(key)), modes.XTS(bytes(tweak)))
    ctx = c.encryptor() if direction == "encrypt" else c.decryptor()
    return ctx.update(bytes(data)) + ctx.finalize()


def ref_sectors(key, first, data, size, direction="encrypt"):
    return b"".join(ref(key, (first + i).to_bytes(16, "little"), data[o:o + size], direction)
                    for i, o in enumerate(range(0, len(data), size)))


def by_hand(key, tweak, data):
    """IEEE 1619 5.3 from AES-ECB alone, for the vector pyca refuses (equal key halves)."""
    half = len(key) // 2
    ecb = Cipher(algorithms.AES(key[:half]), modes.ECB()).encryptor()
    t = int.from_bytes(Cipher(algorithms.AES(key[half:]), modes.ECB()).encryptor()
                       .update(tweak), "little")
    out = b""
    assert len(data) % 16 == 0
    for i in range(0, len(data), 16):
        tb = t.to_bytes(16, "little")
        x = bytes(a ^ b for a, b in zip(data[i:i + 16], tb))
        out += bytes(a ^ b for a, b in zip(ecb.update(x), tb))
        t = (t << 1) ^ (0x87 if t >> 127 else 0)
        t &= (1 << 128) - 1
    return out


def rand(seed, n):
    return random.Random(seed).randbytes(n)


# ---------------------------------------------------------------- known answers

def _vid(v):
    return v["section"].split(" XTS-AES")[0].replace("Annex B ", "")


@pytest.mark.known_answer("XTS")
@pytest.mark.parametrize("v", VECTORS, ids=_vid)
def test_vector(backend, v):
    key, tweak = bytes.fromhex(v["key"]), bytes.fromhex(v["iv"])
    pt, ct = bytes.fromhex(v["plaintext"]), bytes.fromhex(v["ciphertext"])
    if key[:len(key) // 2] == key[len(key) // 2:]:
        # Vector 1 has equal halves, which aeskit (like pyca/OpenSSL) refuses.
        assert by_hand(key, tweak, pt) == ct
        with pytest.raises(ValueError, match="differ"):
            aeskit.AESXTS(key, backend=backend)
        return
    assert ref(key, tweak, pt) == ct
    x = aeskit.AESXTS(key, backend=backend)
    assert x.key_size == len(key) * 8
    assert x.encrypt(tweak, pt) == ct
    assert x.decrypt(tweak, ct) == pt
    buf = bytearray(pt)
    assert x.encrypt_into(tweak, buf, buf) == len(pt)
    assert buf == ct
    assert x.decrypt_into(tweak, buf, buf) == len(pt)
    assert buf == pt
    for direction, src, want in (("encrypt", pt, ct), ("decrypt", ct, pt)):
        ctx = getattr(x, direction + "or")(tweak)
        assert b"".join(ctx.update(src[i:i + 1]) for i in range(len(src))) + ctx.finalize() == want
    if len(pt) % 16 == 0 and "sector" in v:
        sector = int(v["sector"], 16)
        assert x.encrypt_sectors(sector, pt, sector_size=len(pt)) == ct
        assert x.decrypt_sectors(sector, ct, sector_size=len(pt)) == pt


@pytest.mark.known_answer("XTS")
def test_vectors_on_file():
    names = {_vid(v) for v in VECTORS}
    assert names >= {f"vector {i}" for i in (1, 2, 3, 4, 5, 10, 15, 16, 17, 18)}
    assert len([n for n in names if n.startswith("CAVP")]) == 2
    assert {len(bytes.fromhex(v["plaintext"])) for v in VECTORS} >= {17, 18, 19, 20, 25}


# ---------------------------------------------------------------- against pyca

@pytest.mark.parametrize("ks", (32, 64))
@given(n=st.integers(16, 16 * 3 * WIDE_BATCH + 40), seed=st.integers(0, 2**32),
       tweak=st.binary(min_size=16, max_size=16))
def test_matches_pyca(backend, ks, n, seed, tweak):
    key, pt, junk = rand(seed, ks), rand(seed + 1, n), rand(seed + 2, n)
    if key[:ks // 2] == key[ks // 2:]:
        return
    x = aeskit.AESXTS(key, backend=backend)
    ct = x.encrypt(tweak, pt)
    assert ct == ref(key, tweak, pt)
    assert x.decrypt(tweak, ct) == pt
    # Decrypting what we did not encrypt: stealing's swapped tweaks are checked on their own.
    assert x.decrypt(tweak, junk) == ref(key, tweak, junk, "decrypt")


@pytest.mark.parametrize("ks", (32, 64))
@pytest.mark.parametrize("blocks", (1, 2, 3, WIDE_BATCH, WIDE_BATCH + 1))
def test_ciphertext_stealing_every_partial_length(backend, ks, blocks):
    key = KEYS[ks]
    x = aeskit.AESXTS(key, backend=backend)
    for b in range(16):
        n = 16 * blocks + b
        pt, junk = rand(n, n), rand(n + 1000, n)
        assert x.encrypt(TWEAK, pt) == ref(key, TWEAK, pt), n
        assert x.decrypt(TWEAK, junk) == ref(key, TWEAK, junk, "decrypt"), n


def _lengths():
    out = set(range(16, 16 * 3 + 16))
    for b in BATCHES:
        for k in (1, 2, 3):
            for d in range(-17, 18):
                if 16 * k * b + d >= 16:
                    out.add(16 * k * b + d)
    return sorted(out)


@pytest.mark.parametrize("ks", (32, 64))
def test_every_backend_agrees_with_portable(backend, ks):
    key = KEYS[ks]
    x, port = aeskit.AESXTS(key, backend=backend), aeskit.AESXTS(key, backend="portable")
    for n in _lengths():
        pt = rand(n, n)
        ct = port.encrypt(TWEAK, pt)
        assert x.encrypt(TWEAK, pt) == ct, n
        assert x.decrypt(TWEAK, ct) == pt, n
        buf = bytearray(ct)
        assert x.decrypt_into(TWEAK, buf, buf) == n
        assert buf == pt, n


# ---------------------------------------------------------------- streaming

def test_stream_holds_back_for_stealing(backend):
    key = KEYS[32]
    x = aeskit.AESXTS(key, backend=backend)
    pt = rand(1, 70)
    want = ref(key, TWEAK, pt)
    e = x.encryptor(TWEAK)
    assert e.update(pt[:16]) == b""         # might be the block that stealing rewrites
    assert e.update(pt[16:31]) == b""
    assert e.update(pt[31:32]) == want[:16]
    assert e.update(pt[32:60]) == want[16:32]
    assert e.update(b"") == b""
    assert e.update(pt[60:]) == want[32:48]
    assert e.finalize() == want[48:]        # the last block and the stolen tail


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_stream_in_place_with_bytes_held(backend, direction):
    """update_into(buf, buf) with bytes held: the output lags the input (exact overlap)."""
    key = KEYS[64]
    x = aeskit.AESXTS(key, backend=backend)
    for held in (1, 15, 16, 17, 31):
        for n in (1, 16, 17, 33, 16 * 70 + 5):
            if 16 * max((held + n) // 16 - 1, 0) > n:
                continue  # more out than in: no room in place
            data = rand(held * 1000 + n, held + n + 16 + held % 7)
            want = ref(key, TWEAK, data, direction)
            ctx = getattr(x, direction + "or")(TWEAK)
            out = ctx.update(data[:held])
            buf = bytearray(data[held:held + n])
            k = ctx.update_into(buf, buf)
            out += bytes(buf[:k]) + ctx.update(data[held + n:]) + ctx.finalize()
            assert out == want, (held, n)


@pytest.mark.parametrize("n", range(16))
def test_stream_under_a_block_fails_at_finalize(backend, n):
    ctx = aeskit.AESXTS(KEYS[32], backend=backend).encryptor(TWEAK)
    assert ctx.update(bytes(n)) == b""
    with pytest.raises(ValueError, match="at least 16"):
        ctx.finalize()
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.finalize()


def test_stream_limit_counts_across_updates(backend):
    x = aeskit.AESXTS(KEYS[32], backend=backend)
    ctx = x.encryptor(TWEAK)
    ctx.update(bytes(LIMIT - 16))
    buf = bytearray(b"\xee" * 64)
    with pytest.raises(aeskit.LimitExceeded):
        ctx.update_into(bytes(17), buf)
    assert buf == b"\xee" * 64
    with pytest.raises(ValueError):  # LimitExceeded is a ValueError too
        ctx.update(bytes(17))
    ctx.update(bytes(16))            # exactly 2**20 blocks still goes
    assert len(ctx.finalize()) == 16


# ---------------------------------------------------------------- sectors

@pytest.mark.parametrize("size", [16, 32, 512, 4096, 16 * (WIDE_BATCH + 1)])
def test_sectors_match_per_unit_reference(backend, size):
    key = KEYS[64]
    x = aeskit.AESXTS(key, backend=backend)
    data = rand(size, 5 * size)
    for first in (0, 7, 2**64 - 2, 2**128 - 5):  # 2**64 - 2: the count carries into byte 8
        want = ref_sectors(key, first, data, size)
        assert x.encrypt_sectors(first, data, sector_size=size) == want
        assert x.decrypt_sectors(first, want, sector_size=size) == data
        buf = bytearray(data)
        assert x.encrypt_sectors_into(first, buf, buf, sector_size=size) == len(data)
        assert buf == want
        out = bytearray(len(data))
        assert x.decrypt_sectors_into(first, want, out, sector_size=size) == len(data)
        assert out == data


# modes/xts.c encrypts the sector tweaks this many at a time (SECTOR_BATCH), and a
# backend's xts_units slot runs that many sectors in one pass. aesni's is one run of
# batches when a sector is whole batches of its kernel (8 blocks): 128 bytes (every
# batch starts a sector), 256 and 4096; 32 and 48 bytes take its one-call-a-sector
# path. The vaes slots restart their window at each sector: 32 and 48 bytes (at most
# 4 blocks) go to aesni's slot, 128 is one vector-at-a-time tail (vaes_avx512) or a
# half batch (vaes_avx2), 256 a half (zmm) or whole (ymm) batch, 4096 whole batches
SECTOR_BATCH = 32


@pytest.mark.parametrize("size", [32, 48, 128, 256, 4096])
def test_sectors_across_tweak_batches(backend, size):
    # 2 * SECTOR_BATCH + 1 sectors cross two batch ends, with the count carrying out
    # of byte 7 inside a batch; first numbers on both sides of 2**63, where the
    # glue's fast path ends
    key = KEYS[32]
    x = aeskit.AESXTS(key, backend=backend)
    count = 2 * SECTOR_BATCH + 1
    data = rand(count, count * size)
    for first in (2**64 - 9, 2**63 - 1, 2**63, 3):
        want = ref_sectors(key, first, data, size)
        assert x.encrypt_sectors(first, data, sector_size=size) == want
        assert x.decrypt_sectors(first, want, sector_size=size) == data


def test_sectors_default_size_and_largest(backend):
    key = KEYS[32]
    x = aeskit.AESXTS(key, backend=backend)
    data = rand(3, 8192)
    assert x.encrypt_sectors(3, data) == ref_sectors(key, 3, data, 4096)
    big = bytes(1 << 24)
    assert x.encrypt_sectors(1, big, sector_size=1 << 24) == x.encrypt((1).to_bytes(16, "little"), big)


def test_sectors_refuse_bad_input(backend):
    x = aeskit.AESXTS(KEYS[32], backend=backend)
    data = bytes(64)
    buf = bytearray(b"\xee" * 64)
    for first, kw, exc in [
        (-1, {"sector_size": 16}, aeskit.LimitExceeded),
        (2**128 - 3, {"sector_size": 16}, aeskit.LimitExceeded),  # 4 sectors: last 2**128
        (2**128, {"sector_size": 64}, aeskit.LimitExceeded),
        (0, {"sector_size": 0}, ValueError),
        (0, {"sector_size": 24}, ValueError),
        (0, {"sector_size": (1 << 24) + 16}, ValueError),
        (0, {"sector_size": 48}, ValueError),          # 64 bytes are not whole sectors
        (0, {}, ValueError),                           # nor of the default 4096
    ]:
        with pytest.raises(exc):
            x.encrypt_sectors(first, data, **kw)
        with pytest.raises(exc):
            x.decrypt_sectors_into(first, data, buf, **kw)
        assert buf == b"\xee" * 64
    assert x.encrypt_sectors(2**128 - 4, data, sector_size=16)  # last sector 2**128 - 1
    with pytest.raises(ValueError):
        x.encrypt_sectors(0, b"", sector_size=16)
    with pytest.raises(TypeError):
        x.encrypt_sectors(1.0, data, sector_size=16)
    with pytest.raises(TypeError):
        x.encrypt_sectors(0, data, 16)  # sector_size is keyword-only
    for kw in ({"sector_size": "16"}, {"sector_size": 16.0}, {"sectorsize": 16},
               {"sector_size": 16, "first_sector": 0}):
        with pytest.raises(TypeError):
            x.encrypt_sectors(0, data, **kw)
    with pytest.raises(ValueError, match="sector_size"):
        x.encrypt_sectors_into(0, data, buf, sector_size=2**70)
    with pytest.raises(TypeError):
        x.encrypt_sectors_into(0, data, sector_size=16)  # no buf
    assert issubclass(aeskit.LimitExceeded, OverflowError)


# ---------------------------------------------------------------- bad input

def test_keys(backend):
    for n in (0, 16, 24, 31, 33, 48, 63, 65, 128):
        with pytest.raises(ValueError, match="32 or 64"):
            aeskit.AESXTS(bytes(n), backend=backend)
    for ks in (32, 64):
        half = os.urandom(ks // 2)
        with pytest.raises(ValueError, match="differ"):
            aeskit.AESXTS(half + half, backend=backend)
        # One bit apart is enough, in any byte.
        for i in (0, ks // 2 - 1):
            other = bytearray(half)
            other[i] ^= 1
            aeskit.AESXTS(half + bytes(other), backend=backend)


def test_short_and_long_data_leave_no_output(backend):
    x = aeskit.AESXTS(KEYS[32], backend=backend)
    for n in range(16):
        buf = bytearray(b"\xee" * 16)
        for call in (x.encrypt, x.decrypt):
            with pytest.raises(ValueError, match="at least 16"):
                call(TWEAK, bytes(n))
        for call in (x.encrypt_into, x.decrypt_into):
            with pytest.raises(ValueError, match="at least 16"):
                call(TWEAK, bytes(n), buf)
        assert buf == b"\xee" * 16
    big = bytes(LIMIT + 1)
    out = bytearray(LIMIT + 1)
    with pytest.raises(aeskit.LimitExceeded):
        x.encrypt(TWEAK, big)
    with pytest.raises(aeskit.LimitExceeded):
        x.decrypt_into(TWEAK, big, out)
    assert not any(out[:4096])
    for bad in (bytes(15), bytes(17), b""):
        with pytest.raises(ValueError, match="tweak must be 16"):
            x.encrypt(bad, bytes(32))
        with pytest.raises(ValueError, match="tweak must be 16"):
            x.encryptor(bad)


def test_limit_is_inclusive(backend):
    x = aeskit.AESXTS(KEYS[32], backend=backend)
    data = rand(9, LIMIT)
    ct = x.encrypt(TWEAK, data)
    assert x.decrypt(TWEAK, ct) == data
