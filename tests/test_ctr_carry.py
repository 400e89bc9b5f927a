"""CTR: the initial block is one 128-bit big-endian counter. It carries across all 16
bytes and wraps modulo 2**128 (as OpenSSL and pyca/cryptography's modes.CTR).

The IVs put the counter 3, 2 and 1 blocks short of a carry out of the low 32, 64, 96 and
128 bits, and the lengths (1..3W+1 blocks, W the widest batch: up to 3 batches plus one)
make the carry fall at every position inside a wide batch and in the tail.
"""

import pytest

from helpers import BATCHES, CIPHER, WIDE_BATCH, chunks, new, ref

CTR = CIPHER["CTR"]
BATCH = WIDE_BATCH
MAX_BLOCKS = 3 * BATCH + 1


def _ivs():
    out = []
    for width in (4, 8, 12, 16):
        for k in (2, 1, 0):  # low bits ...fd, ...fe, ...ff
            low = ((1 << (8 * width)) - 1 - k).to_bytes(width, "big")
            for prefix in (bytes(16 - width), bytes(range(0xA0, 0xA0 + 16 - width))):
                iv = prefix + low
                if iv not in out:
                    out.append(iv)
    # Carry out of bit 31/63/95 into a byte that itself ripples further.
    out.append(bytes.fromhex("00000000ffffffffffffffffffffffff"))
    out.append(bytes.fromhex("0000000000000000fffffffffffffffe"))
    out.append(bytes.fromhex("7fffffffffffffffffffffffffffffff"))
    return out


IVS = _ivs()
KEY = {16: bytes(range(16)), 24: bytes(range(24)), 32: bytes(range(32))}


@pytest.mark.parametrize("iv", IVS, ids=lambda iv: iv.hex())
@pytest.mark.parametrize("ks", (16, 24, 32))
def test_carry_one_shot(backend, iv, ks):
    key = KEY[ks]
    obj = new(CTR, key, backend=backend)
    pt = bytes((i * 7 + 3) & 0xFF for i in range(MAX_BLOCKS * 16 + 15))
    for nblocks in range(1, MAX_BLOCKS + 1):
        for extra in (0, 5):  # whole blocks and a partial last block
            data = pt[:nblocks * 16 + extra]
            want = ref(CTR, key, iv, data)
            assert obj.encrypt(iv, data) == want, (nblocks, extra)
            assert obj.decrypt(iv, want) == data, (nblocks, extra)
            buf = bytearray(data)
            assert obj.encrypt_into(iv, buf, buf) == len(data)
            assert buf == want, (nblocks, extra)


@pytest.mark.parametrize("iv", IVS, ids=lambda iv: iv.hex())
def test_carry_streaming_splits(backend, iv):
    key = KEY[16]
    obj = new(CTR, key, backend=backend)
    n = MAX_BLOCKS * 16 + 7
    data = bytes((i * 13 + 1) & 0xFF for i in range(n))
    want = ref(CTR, key, iv, data)
    splits = [
        [16], [32], [48], [40], [47], [49],             # one split right at / around the carry
        list(range(1, n, 1))[:80],                       # byte by byte across the first 5 blocks
        list(range(5, n, 11)),                           # odd sizes straddling block borders
        list(range(16, n, 16)),                          # whole blocks, one per call
        *[list(range(0, n, 16 * b)) + [n, n] for b in BATCHES],  # batch-sized, empty calls
        [3, 3, 35, 35, 35, 200, 399],
    ]
    for cuts in splits:
        cuts = [c for c in cuts if c <= n]
        ctx = obj.encryptor(iv)
        out = b"".join(ctx.update(p) for p in chunks(data, cuts)) + ctx.finalize()
        assert out == want, cuts
        ctx = obj.decryptor(iv)
        out = bytearray()
        for p in chunks(want, cuts):
            buf = bytearray(len(p))
            assert ctx.update_into(p, buf) == len(p)
            out += buf
        assert ctx.finalize() == b""
        assert out == data, cuts


def test_wraps_modulo_2_128(backend):
    """All-ones wraps to zero: block 2 of IV ff..ff is the keystream of IV 00..00."""
    key = KEY[32]
    obj = new(CTR, key, backend=backend)
    zeros = bytes(64)
    ks_wrap = obj.encrypt(b"\xff" * 16, zeros)
    ks_zero = obj.encrypt(bytes(16), zeros)
    assert ks_wrap[16:] == ks_zero[:48]
    assert ks_wrap[:16] != ks_zero[:16]
    assert ks_wrap == ref(CTR, key, b"\xff" * 16, zeros)


def test_carry_is_not_32_or_64_bit(backend):
    """A counter that only incremented the low 32 or 64 bits would repeat keystream
    from a different IV; a full 128-bit counter continues into the next prefix."""
    key = KEY[16]
    obj = new(CTR, key, backend=backend)
    for width in (4, 8, 12):
        iv = bytes(16 - width) + b"\xff" * width
        nxt = (int.from_bytes(iv, "big") + 1).to_bytes(16, "big")
        wrapped_low = bytes(16)  # what a width-limited counter would produce
        ks = obj.encrypt(iv, bytes(32))
        assert ks[16:] == obj.encrypt(nxt, bytes(16))
        assert ks[16:] != obj.encrypt(wrapped_low, bytes(16))
