"""The backends' slots called one at a time (aeskit._aeskit._*_slot, test-only entry points,
contracts in aeskit.h), including those no public mode uses yet: every available backend
against `portable` and against a Python model built on pyca/cryptography's AES.

- ctr: the 32-bit counters, BE32 (GCM's inc32) and LE32 (GCM-SIV's), wrap modulo 2^32
  inside a wide batch and leave the other 12 bytes alone.
- cbc_mac: the chain of CBC encryption with only its last block kept, from any chaining
  value; two calls with the chaining value carried equal one.
- xts: IEEE 1619 on whole blocks with the already encrypted tweak T: block i is
  E(P_i ^ T_i) ^ T_i (D for decryption), T_(i+1) = T_i * alpha (the little-endian doubling
  with 0x87 fed back into byte 0), from tweaks whose multiples carry across the 64-bit
  halves and out of bit 127; the tweak comes back advanced, so two calls equal one;
  and with T = E(K2, tweak) it is pyca's AES-XTS of a data unit of whole blocks.
- ghash: a key built for calls of at most max_blocks blocks (a backend may build fewer
  powers for it) gives what a key for any length and portable's give, for max_blocks
  around every backend's boundary.

Block counts run 0..3W+2 and a few larger, W the widest batch (helpers.WIDE_BATCH, from
backend_constants), so each kernel's batches, half batches and tails are crossed. The
models and portable's answers are computed once (functools.cache) and the loops over
counts run inside each test.
"""

import functools

import pytest
from aeskit import _aeskit

from aead_helpers import gf_mul, rand
from helpers import BACKEND_CONSTANTS, CIPHER, GHASH_POWERS, KEY_SIZES, WIDE_BATCH, ref

W = WIDE_BATCH
SLOT_BLOCKS = 3 * W + 2
COUNTS = list(range(SLOT_BLOCKS + 1)) + [4 * W + 1, 8 * W - 1, 8 * W + 5, 16 * W + 3]
MAX_BLOCKS = COUNTS[-1]
# Pseudo-random, never periodic (see test_wide_aead.py).
DATA = rand(167, 16 * MAX_BLOCKS)
KEYS = {ks: rand(29 + ks, ks) for ks in KEY_SIZES}


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def _ecb(key, data, encrypt=True):
    """AES of whole blocks by pyca/cryptography (OpenSSL)."""
    return ref(CIPHER["ECB"], key, None, data, "encrypt" if encrypt else "decrypt")


# ---------------------------------------------------------------- ctr

CARRY_SHORT = range(1, W + 18)          # blocks before the wrap


def _ctr_slot(backend, key, kind, counter, data):
    return _aeskit._ctr_slot(backend, key, kind, counter, data)


def _slot_counter(kind, value):
    """A counter block whose 32-bit counter holds value, the other 12 bytes fixed."""
    if kind == "le32":
        return value.to_bytes(4, "little") + bytes(range(0xa0, 0xac))
    return bytes(range(0xa0, 0xac)) + value.to_bytes(4, "big")


def _ctr_model(key, kind, counter, data):
    """The counter kind's keystream, block by block, XORed with data."""
    order = "little" if kind == "le32" else "big"
    word = slice(0, 4) if kind == "le32" else slice(12, 16)
    value = int.from_bytes(counter[word], order)
    blocks = bytearray()
    for i in range(len(data) // 16):
        block = bytearray(counter)
        block[word] = ((value + i) % 2**32).to_bytes(4, order)
        blocks += block
    return _xor(_ecb(key, bytes(blocks)), data)


@pytest.mark.parametrize("kind", ("be32", "le32"))
@pytest.mark.parametrize("ks", (16, 32))
def test_ctr_slot_32bit_wrap(backend, kind, ks):
    """The 32-bit counters wrap modulo 2^32 inside a wide batch and leave the other 12
    bytes alone; the head that aligns the counter starts at every residue mod 16."""
    key = KEYS[ks]
    data = DATA[:16 * SLOT_BLOCKS]
    starts = [2**32 - short for short in CARRY_SHORT] + list(range(16))
    for start in starts:
        counter = _slot_counter(kind, start)
        want = _ctr_slot("portable", key, kind, counter, data)
        assert _ctr_slot(backend, key, kind, counter, data) == want, start
        assert want[1] == _slot_counter(kind, (start + SLOT_BLOCKS) % 2**32), start
        for n in (1, 3, 15, 16, 17, W // 2, W - 1, W + 1):
            assert _ctr_slot(backend, key, kind, counter, data[:16 * n])[0] == want[0][:16 * n]
    for start in (2**32 - 1, 2**32 - W - 1, 5):
        counter = _slot_counter(kind, start)
        got = _ctr_slot("portable", key, kind, counter, data)[0]
        assert got == _ctr_model(key, kind, counter, data)


def _ctr128_model(key, counter, data):
    """BE128 counters (all 16 bytes, modulo 2^128), block by block, XORed with data."""
    value = int.from_bytes(counter, "big")
    blocks = b"".join(((value + i) % 2**128).to_bytes(16, "big") for i in range(len(data) // 16))
    return _xor(_ecb(key, blocks), data)


@pytest.mark.parametrize("ks", (16, 32))
def test_ctr_slot_be128_secret(backend, ks):
    """be128_secret (EAX's counter) counts exactly as be128: carries out of the low 8, 32,
    64 and 96 bits and the wrap modulo 2^128 fall at every position of a wide batch and of
    the tail, from counters at every residue mod 16 (no head aligns them: the slot may not
    branch on this counter)."""
    key = KEYS[ks]
    data = DATA[:16 * SLOT_BLOCKS]
    prefix = bytes(range(0xa0, 0xb0))
    starts = []
    for bits in (8, 32, 64, 96, 128):
        top = int.from_bytes(prefix, "big") >> bits << bits
        starts += [(top + 2**bits - short) % 2**128 for short in CARRY_SHORT]
    starts += [int.from_bytes(prefix, "big") + r for r in range(16)]
    for start in starts:
        counter = start.to_bytes(16, "big")
        want = _ctr_slot(backend, key, "be128", counter, data)
        got = _ctr_slot(backend, key, "be128_secret", counter, data)
        assert got == want, hex(start)
        assert got[1] == ((start + SLOT_BLOCKS) % 2**128).to_bytes(16, "big"), hex(start)
        for n in (1, 3, 15, 16, 17, W // 2, W - 1, W + 1):
            part = _ctr_slot(backend, key, "be128_secret", counter, data[:16 * n])
            assert part == (want[0][:16 * n], ((start + n) % 2**128).to_bytes(16, "big"))
    for start in (2**128 - 1, 2**128 - W - 1, 2**64 - 3):
        counter = start.to_bytes(16, "big")
        got = _ctr_slot(backend, key, "be128_secret", counter, data)[0]
        assert got == _ctr128_model(key, counter, data)


# ---------------------------------------------------------------- cbc_mac

# Chaining values: zero (plain CBC-MAC), and pseudo-random ones.
MACS = (bytes(16), rand(501, 16), rand(502, 16))


@functools.cache
def _cbc_mac_model(ks, mac):
    """The MAC after each count of DATA's blocks: CBC encryption's last block from iv mac
    (pyca's AES-CBC), mac itself for none."""
    ct = ref(CIPHER["CBC"], KEYS[ks], mac, DATA)
    return [mac] + [ct[16 * i - 16:16 * i] for i in range(1, MAX_BLOCKS + 1)]


@functools.cache
def _cbc_mac_portable(ks, mac):
    return {n: _aeskit._cbc_mac_slot("portable", KEYS[ks], mac, DATA[:16 * n]) for n in COUNTS}


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_cbc_mac_every_block_count(backend, ks):
    key = KEYS[ks]
    for mac in MACS:
        model, port = _cbc_mac_model(ks, mac), _cbc_mac_portable(ks, mac)
        for n in COUNTS:
            got = _aeskit._cbc_mac_slot(backend, key, mac, DATA[:16 * n])
            assert type(got) is bytes
            assert got == port[n] == model[n], (mac.hex(), n)


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_cbc_mac_split_anywhere(backend, ks):
    """One chain of SLOT_BLOCKS blocks in two calls, the MAC carried, cut at every block:
    the first call's MAC is the prefix's, the second ends where one call does."""
    key, mac = KEYS[ks], MACS[1]
    model = _cbc_mac_model(ks, mac)
    data = DATA[:16 * SLOT_BLOCKS]
    for cut in range(SLOT_BLOCKS + 1):
        mid = _aeskit._cbc_mac_slot(backend, key, mac, data[:16 * cut])
        assert mid == model[cut], cut
        assert _aeskit._cbc_mac_slot(backend, key, mid, data[16 * cut:]) == model[SLOT_BLOCKS], cut


def test_cbc_mac_leaves_its_arguments_alone(backend):
    mac, data = bytearray(MACS[1]), bytearray(DATA[:16 * (W + 3)])
    got = _aeskit._cbc_mac_slot(backend, KEYS[16], mac, data)
    assert got == _cbc_mac_model(16, MACS[1])[W + 3]
    assert mac == MACS[1] and data == DATA[:16 * (W + 3)]


# ---------------------------------------------------------------- xts

def xts_double(t):
    """T * alpha in GF(2^128) as IEEE 1619 5.2 has it: T a little-endian 128-bit number,
    shifted left by one; a bit shifted out of the top comes back as 0x87 in byte 0."""
    v = int.from_bytes(t, "little") << 1
    if v >> 128:
        v ^= (1 << 128) | 0x87
    return v.to_bytes(16, "little")


def xts_model(key, encrypt, tweak, data):
    """(out, next tweak): block i is E(P_i ^ T_i) ^ T_i (D for decryption), T_0 = tweak."""
    tweaks = [tweak]
    for _ in range(len(data) // 16):
        tweaks.append(xts_double(tweaks[-1]))
    mask = b"".join(tweaks[:-1])
    return _xor(_ecb(key, _xor(data, mask), encrypt), mask), tweaks[-1]


# T: pseudo-random; its top bit set, so the first doubling reduces; only the top bit (the
# doubling gives 0x87 and zeros); all ones; one; only the top 16 bits of each 64-bit half,
# which the wide kernels' multiplies by x^1..x^15 (their first vectors) and by x^8 or x^16
# (each later vector) carry from the low half into the high and out of bit 127 into 0x87,
# with no other bit to hide a lost or misplaced carry.
TWEAKS = (rand(601, 16), rand(602, 15) + b"\xc3", bytes(15) + b"\x80", b"\xff" * 16,
          b"\x01" + bytes(15), (bytes(6) + b"\xff\xff") * 2)


def test_xts_double_model():
    """The model's doubling, by hand: a carry between bytes, the 0x87 feedback."""
    assert xts_double(b"\x01" + bytes(15)) == b"\x02" + bytes(15)
    assert xts_double(b"\x80" + bytes(15)) == b"\x00\x01" + bytes(14)
    assert xts_double(bytes(15) + b"\x80") == b"\x87" + bytes(15)
    assert xts_double(b"\xff" * 16) == b"\x79" + b"\xff" * 15
    assert xts_double(bytes(15) + b"\x40") == bytes(15) + b"\x80"


@functools.cache
def _xts_model(ks, encrypt, tweak):
    """The model's output for all of DATA, and the tweak after each count of blocks (its
    output for n blocks is the first 16n bytes: block i depends on P_i and T_i only)."""
    out, _ = xts_model(KEYS[ks], encrypt, tweak, DATA)
    tweaks = [tweak]
    for _ in range(MAX_BLOCKS):
        tweaks.append(xts_double(tweaks[-1]))
    return out, tweaks


@functools.cache
def _xts_portable(ks, encrypt, tweak):
    return {n: _aeskit._xts_slot("portable", KEYS[ks], encrypt, tweak, DATA[:16 * n])
            for n in COUNTS}


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_xts_every_block_count(backend, ks):
    """Encryption and decryption of every count, from each tweak, against the model and
    portable, with the tweak advanced by the count; decryption undoes encryption."""
    key = KEYS[ks]
    for tweak in TWEAKS:
        for encrypt in (True, False):
            out, tweaks = _xts_model(ks, encrypt, tweak)
            port = _xts_portable(ks, encrypt, tweak)
            for n in COUNTS:
                got = _aeskit._xts_slot(backend, key, encrypt, tweak, DATA[:16 * n])
                assert got == port[n], (tweak.hex(), encrypt, n)
                assert got == (out[:16 * n], tweaks[n]), (tweak.hex(), encrypt, n)
                back, _ = _aeskit._xts_slot(backend, key, not encrypt, tweak, got[0])
                assert back == DATA[:16 * n], (tweak.hex(), encrypt, n)


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_xts_split_anywhere(backend, ks):
    """SLOT_BLOCKS blocks in two calls, the tweak carried, cut at every block, both
    directions: the same output and final tweak as one call."""
    key, tweak = KEYS[ks], TWEAKS[1]
    data = DATA[:16 * SLOT_BLOCKS]
    for encrypt in (True, False):
        out, tweaks = _xts_model(ks, encrypt, tweak)
        for cut in range(SLOT_BLOCKS + 1):
            first, mid = _aeskit._xts_slot(backend, key, encrypt, tweak, data[:16 * cut])
            assert mid == tweaks[cut], (encrypt, cut)
            second, end = _aeskit._xts_slot(backend, key, encrypt, mid, data[16 * cut:])
            assert (first + second, end) == (out[:16 * SLOT_BLOCKS], tweaks[SLOT_BLOCKS])


@pytest.mark.parametrize("ks", (16, 32))   # pyca's XTS: AES-128 and AES-256 only
def test_xts_is_pyca_xts(backend, ks):
    """With the tweak encrypted under the tweak key (T = E(K2, tweak)), the slot on the data
    key K1 is pyca/cryptography's AES-XTS of a data unit of whole blocks, both ways."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    k1, k2 = KEYS[ks], rand(700 + ks, ks)
    for unit_tweak in (rand(701, 16), b"\xff" * 16, bytes(16)):
        t = _ecb(k2, unit_tweak)
        for n in (1, 2, 3, W - 1, W, W + 1, SLOT_BLOCKS, MAX_BLOCKS):
            data = DATA[:16 * n]
            xts = Cipher(algorithms.AES(k1 + k2), modes.XTS(unit_tweak))
            enc, dec = xts.encryptor(), xts.decryptor()
            want_ct = enc.update(data) + enc.finalize()
            want_pt = dec.update(data) + dec.finalize()
            assert _aeskit._xts_slot(backend, k1, True, t, data)[0] == want_ct, n
            assert _aeskit._xts_slot(backend, k1, False, t, data)[0] == want_pt, n


# ---------------------------------------------------------------- ghash

def _ghash_max_blocks():
    """Key sizes (max_blocks) around every boundary a backend exports (batches, the short
    and few-block paths, the key's powers; each, twice it, +-1), 1..8, and long ones."""
    edges = {v for c in BACKEND_CONSTANTS.values() for v in c.values()}
    near = {m * e + d for e in edges for m in (1, 2) for d in (-1, 0, 1)}
    return sorted({m for m in near if m > 0} | set(range(1, 9))
                  | {2 * GHASH_POWERS + W + 3, 300})


GHASH_MAX_BLOCKS = _ghash_max_blocks()
GHASH_DATA_BLOCKS = GHASH_MAX_BLOCKS[-1]
GHASH_DATA = rand(801, 16 * GHASH_DATA_BLOCKS)
ANY_LENGTH = 2**40   # max_blocks of a key for any call
GHASH_KEYS = ((rand(802, 16), rand(803, 16)), (rand(804, 16), bytes(16)))   # (H, acc)


def _ghash_counts(m):
    """Block counts for calls on a key built for m: every count up to 40, the last 8 up to
    m, and every exported boundary (and twice it) +-1, all at most m."""
    edges = {v for c in BACKEND_CONSTANTS.values() for v in c.values()}
    near = {k * e + d for e in edges for k in (1, 2) for d in (-1, 0, 1)}
    return sorted(n for n in set(range(41)) | set(range(m - 8, m + 1)) | near if 0 <= n <= m)


@functools.cache
def _ghash_model(h, acc):
    """The accumulator after each count of GHASH_DATA's blocks: acc = (acc ^ block) * H
    (SP 800-38D, aead_helpers.gf_mul)."""
    hv, y = int.from_bytes(h, "big"), int.from_bytes(acc, "big")
    out = [acc]
    for i in range(GHASH_DATA_BLOCKS):
        y = gf_mul(y ^ int.from_bytes(GHASH_DATA[16 * i:16 * i + 16], "big"), hv)
        out.append(y.to_bytes(16, "big"))
    return out


@pytest.mark.parametrize("keys", GHASH_KEYS, ids=("acc", "acc0"))
def test_ghash_partial_key(backend, keys):
    """For each max_blocks, calls of each count on a key built for it equal a key for any
    length, portable's, and the model."""
    h, acc = keys
    model = _ghash_model(h, acc)
    for m in GHASH_MAX_BLOCKS:
        for n in _ghash_counts(m):
            data = GHASH_DATA[:16 * n]
            got = _aeskit._ghash_slot(backend, h, acc, data, m)
            assert type(got) is bytes
            assert got == model[n], (m, n)
            assert got == _aeskit._ghash_slot(backend, h, acc, data, ANY_LENGTH), (m, n)
            assert got == _aeskit._ghash_slot("portable", h, acc, data, m), (m, n)


def _has_polyval(backend):
    try:
        _aeskit._ghash_slot(backend, bytes(16), bytes(16), b"", 0, True)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("keys", GHASH_KEYS, ids=("acc", "acc0"))
def test_polyval_slot_is_ghash_of_reversed_blocks(backend, keys):
    """A backend's polyval slot (GCM-SIV) equals ghash on the byte-reversed blocks at
    every count its key serves; a backend without one says so."""
    h, acc = keys
    if not _has_polyval(backend):
        with pytest.raises(ValueError, match="no polyval slot"):
            _aeskit._ghash_slot(backend, h, acc, b"", 0, True)
        return
    model = _ghash_model(h, acc)
    rev = b"".join(GHASH_DATA[i:i + 16][::-1] for i in range(0, len(GHASH_DATA), 16))
    for m in (GHASH_MAX_BLOCKS[0], GHASH_MAX_BLOCKS[-1]):
        for n in _ghash_counts(m):
            assert _aeskit._ghash_slot(backend, h, acc, rev[:16 * n], m, True) == model[n], (m, n)


def test_gcmsiv_open_slot_is_ctr_then_polyval(backend):
    """A fused GCM-SIV opening equals the ctr slot (LE32) and then the polyval slot over
    what it wrote, on the prefix it did: with its hash key built for any call and as the
    mode builds it (poly_blocks powers), from counters at every position of a group of
    16 (the wide kernel starts its first batch at the aligned one), the counter wrapping
    inside a batch, at lengths around the kernels' batches and hand-overs; a backend
    without one says so."""
    key, h = KEYS[16], GHASH_KEYS[0][0]
    try:
        _aeskit._gcmsiv_open_slot(backend, key, h, bytes(16), b"")
    except ValueError as e:
        assert "no gcmsiv_open slot" in str(e)
        return
    c = BACKEND_CONSTANTS[backend]
    marks = {v for k, v in c.items() if "batch" in k or "fused_min" in k}
    counts = sorted({0, 1, 40} | {m + d for m in marks for d in (-1, 0, 1, 17)}
                    | {max(marks) + 2 * c.get("batch_blocks", 8) + 15})
    data = rand(805, 16 * counts[-1])
    poly = _aeskit.mode_constants("GCM-SIV")["poly_blocks"]
    high = bytes(11) + b"\x80"   # bytes 4..15 of a counter block from a tag
    starts = [(2**32 - 3).to_bytes(4, "little") + high,   # wraps in the first batch
              (2**32 - 48).to_bytes(4, "little") + high,  # and in a later one
              *((0x1234560 + a).to_bytes(4, "little") + high for a in (0, 1, 9, 15))]
    did = 0
    for max_blocks in (None, poly):
        for counter in starts:
            for n in counts:
                args = (backend, key, h, counter, data[:16 * n])
                out, nxt, acc, done = _aeskit._gcmsiv_open_slot(
                    *args, *(() if max_blocks is None else (max_blocks,)))
                assert 0 <= done <= n, (n, done)
                did = max(did, done)
                want, want_next = _aeskit._ctr_slot("portable", key, "le32", counter,
                                                    data[:16 * done])
                assert out == want and nxt == want_next, (n, counter.hex(), max_blocks)
                assert acc == _aeskit._ghash_slot("portable", h, bytes(16),
                                                  b"".join(want[i:i + 16][::-1]
                                                           for i in range(0, len(want), 16)),
                                                  ANY_LENGTH), (n, counter.hex(), max_blocks)
    assert did >= counts[-1] - 31   # the kernel ran: it leaves at most a batch's tail


def test_ghash_key_says_where_it_wrote(backend):
    """ghash_key writes only inside the range it records (from, used), which a key made
    per message (GCM-SIV) wipes instead of the whole 3 KiB struct; a short key's range is
    a fraction of it."""
    h = GHASH_KEYS[0][0]
    for m in sorted({0, 1, 5, 8, 9, 31, 32, 33, 64, 128, ANY_LENGTH}):
        start, used, outside = _aeskit._ghash_key_extent(backend, h, m)
        assert outside == 0, (m, start, used)
        assert start + used <= 3072
        if m <= 8:
            assert used <= 512, (m, used)


def test_ghash_more_blocks_than_built_for(backend):
    """A call of more blocks than the key was built for is refused before it runs."""
    h, acc = GHASH_KEYS[0]
    for m in (0, 1, 6, 7, 8, W, GHASH_POWERS, GHASH_POWERS + 1):
        with pytest.raises(ValueError):
            _aeskit._ghash_slot(backend, h, acc, GHASH_DATA[:16 * (m + 1)], m)
        assert _aeskit._ghash_slot(backend, h, acc, GHASH_DATA[:16 * m], m) == \
            _ghash_model(h, acc)[m]


# ---------------------------------------------------------------- bad arguments

def _calls(backend, key=KEYS[16], block=bytes(16), data=bytes(32)):
    """Each slot called with these arguments (the ghash slot's key is h)."""
    return {
        "ctr": lambda: _aeskit._ctr_slot(backend, key, "be32", block, data),
        "cbc_mac": lambda: _aeskit._cbc_mac_slot(backend, key, block, data),
        "xts": lambda: _aeskit._xts_slot(backend, key, True, block, data),
        "ghash": lambda: _aeskit._ghash_slot(backend, key, block, data, 100),
    }


@pytest.mark.parametrize("slot", ("ctr", "cbc_mac", "xts", "ghash"))
def test_slots_refuse_bad_arguments(backend, backends_info, slot):
    """A block (counter, MAC, tweak, accumulator) of other than 16 bytes, data that is not
    whole blocks, a key (or h) of a wrong length, an unknown or unavailable backend: a
    ValueError; a non-buffer or a backend that is not a str: a TypeError."""
    assert _calls(backend)[slot]() is not None
    for n in (0, 1, 15, 17, 32):
        with pytest.raises(ValueError):
            _calls(backend, block=bytes(n))[slot]()
    for n in (1, 15, 17, 31, 33):
        with pytest.raises(ValueError):
            _calls(backend, data=bytes(n))[slot]()
    for n in (0, 8, 15, 17, 20, 33):
        with pytest.raises(ValueError):
            _calls(backend, key=bytes(n))[slot]()
    unavailable = [b for b in backends_info.all if b not in backends_info.available]
    for name in ["no-such-backend", "PORTABLE", *unavailable]:
        with pytest.raises(ValueError, match=name):
            _calls(name)[slot]()
    for bad in ("x" * 16, None, 16, [0] * 16):
        with pytest.raises(TypeError):
            _calls(backend, block=bad)[slot]()
        with pytest.raises(TypeError):
            _calls(backend, data=bad)[slot]()
        with pytest.raises(TypeError):
            _calls(backend, key=bad)[slot]()
    for bad in (None, 1, b"portable"):
        with pytest.raises(TypeError):
            _calls(bad)[slot]()


def test_ctr_slot_refuses_unknown_kinds(backend):
    for kind in ("be64", "BE32", "", "le128"):
        with pytest.raises(ValueError, match="kind"):
            _aeskit._ctr_slot(backend, KEYS[16], kind, bytes(16), bytes(16))
    with pytest.raises(TypeError):
        _aeskit._ctr_slot(backend, KEYS[16], None, bytes(16), bytes(16))


def test_ghash_slot_refuses_bad_max_blocks(backend):
    h, acc = GHASH_KEYS[0]
    for bad in (-1, -(2**40)):
        with pytest.raises(ValueError):
            _aeskit._ghash_slot(backend, h, acc, b"", bad)
    with pytest.raises(OverflowError):
        _aeskit._ghash_slot(backend, h, acc, b"", 2**70)
    for bad in ("3", 3.0, None):
        with pytest.raises(TypeError):
            _aeskit._ghash_slot(backend, h, acc, b"", bad)


def test_backend_constants(backends_info):
    """Every compiled-in backend, available or not, exports its batch; an unknown name is
    a ValueError."""
    for name in backends_info.all:
        c = _aeskit.backend_constants(name)
        assert isinstance(c, dict) and c["batch_blocks"] >= 1
        assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in c.items())
    with pytest.raises(ValueError, match="no-such-backend"):
        _aeskit.backend_constants("no-such-backend")
    with pytest.raises(TypeError):
        _aeskit.backend_constants(3)


def test_mode_constants():
    """Every AEAD exports where its own code hands over (possibly nothing); GCM its
    one-shot short path and chunks; an unknown name is a ValueError."""
    for name in (m.name for m in _aeskit.MODES if m.aead):
        c = _aeskit.mode_constants(name)
        assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in c.items())
    assert {"short_blocks", "chunk_blocks"} <= set(_aeskit.mode_constants("GCM"))
    with pytest.raises(ValueError, match="no-such-mode"):
        _aeskit.mode_constants("no-such-mode")


def test_xts_slot_direction_is_a_bool():
    """The direction is True or False: a truthy string must not pass for encryption."""
    with pytest.raises(TypeError):
        _aeskit._xts_slot("portable", KEYS[16], "decrypt", bytes(16), bytes(16))
    with pytest.raises(TypeError):
        _aeskit._xts_slot("portable", KEYS[16], 1, bytes(16), bytes(16))


# ---------------------------------------------------------------- ctr_cbcmac (fused, optional)

# The x86 tables have it (aesni's kernel, which the vaes tables share); portable has none.
CTR_CBCMAC_TABLES = ("aesni", "vaes_avx2", "vaes_avx512")
# BE128 counters: pseudo-random; the low 64 bits a few blocks before they wrap (the carry
# into the high half); all ones (the whole counter wraps to zero); CCM's shape (flags,
# nonce, a 2-byte block index about to pass 0xff and 0xffff).
CTR_CBCMAC_COUNTERS = (rand(701, 16), rand(702, 8) + (2**64 - 3).to_bytes(8, "big"),
                       b"\xff" * 16, b"\x01" + rand(703, 13) + b"\xff\xfe")


@functools.cache
def _ctr_cbcmac_split(ks, mac_dst, counter, n):
    """portable's ctr and cbc_mac slots one after the other: what the fused slot does."""
    key, data = KEYS[ks], DATA[:16 * n]
    out, next_counter = _aeskit._ctr_slot("portable", key, "be128", counter, data)
    mac = _aeskit._cbc_mac_slot("portable", key, MACS[1], out if mac_dst else data)
    return out, next_counter, mac


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_ctr_cbcmac_is_ctr_then_cbc_mac(backend, ks):
    """At every block count (0..3W+2 and larger), both directions (MAC what is read or what
    is written) and counters whose low half or whole wraps inside the call, the fused slot
    gives what the ctr and cbc_mac slots give one after the other: output, next counter,
    MAC. It does every block (it returns the count it did, here all of them)."""
    key = KEYS[ks]
    probe = _aeskit._ctr_cbcmac_slot(backend, key, False, bytes(16), MACS[1], bytes(16))
    assert (probe is None) == (backend not in CTR_CBCMAC_TABLES), backend
    if probe is None:
        return
    for counter in CTR_CBCMAC_COUNTERS:
        for mac_dst in (False, True):
            for n in COUNTS:
                got = _aeskit._ctr_cbcmac_slot(backend, key, mac_dst, counter, MACS[1],
                                               DATA[:16 * n])
                assert got[3] == n, (n, mac_dst)
                assert got[:3] == _ctr_cbcmac_split(ks, mac_dst, counter, n), (
                    counter.hex(), mac_dst, n)


def test_ctr_cbcmac_with_two_keys(backend):
    """SIV's opening: CTR under one key and the MAC under another, both directions, at
    counts across aesni's blocks one at a time and the counter wrapping: the ctr slot under
    the CTR key, then the cbc_mac slot under the MAC key."""
    if _aeskit._ctr_cbcmac_slot(backend, KEYS[16], False, bytes(16), MACS[1], b"") is None:
        return
    for ks in KEY_SIZES:
        mac_key, ctr_key = KEYS[ks], bytes(range(100, 100 + ks))
        for mac_dst in (False, True):
            for n in (0, 1, 2, 3, 9, 17):
                data = DATA[:16 * n]
                counter = CTR_CBCMAC_COUNTERS[-1]
                out, nxt, mac, done = _aeskit._ctr_cbcmac_slot(backend, mac_key, mac_dst, counter,
                                                               MACS[1], data, ctr_key)
                want, want_next = _aeskit._ctr_slot("portable", ctr_key, "be128", counter, data)
                assert done == n and out == want and nxt == want_next, (ks, mac_dst, n)
                assert mac == _aeskit._cbc_mac_slot("portable", mac_key, MACS[1],
                                                    want if mac_dst else data), (ks, mac_dst, n)
    with pytest.raises(ValueError, match="as long"):
        _aeskit._ctr_cbcmac_slot(backend, KEYS[16], False, bytes(16), MACS[1], b"", KEYS[32])


def test_ctr_cbcmac_split_anywhere(backend):
    """One message in two calls, counter and MAC carried, cut at every block."""
    key, counter, data = KEYS[16], CTR_CBCMAC_COUNTERS[1], DATA[:16 * SLOT_BLOCKS]
    if _aeskit._ctr_cbcmac_slot(backend, key, False, counter, MACS[1], b"") is None:
        return
    for mac_dst in (False, True):
        want = _ctr_cbcmac_split(16, mac_dst, counter, SLOT_BLOCKS)
        for cut in range(SLOT_BLOCKS + 1):
            a = _aeskit._ctr_cbcmac_slot(backend, key, mac_dst, counter, MACS[1],
                                         data[:16 * cut])
            b = _aeskit._ctr_cbcmac_slot(backend, key, mac_dst, a[1], a[2], data[16 * cut:])
            assert (a[0] + b[0], b[1], b[2]) == want, (mac_dst, cut)
