"""The multi-buffer path of the serial modes (docs/batch.md, "What runs interleaved"): the
backend's cbc_x slot (independent CBC chains in lockstep, aeskit.h) and the scheduler over
it (modes/chains.c), reached through AESCBC.encrypt_many*, AESCMAC.mac_many/verify_many and
AESCCM.encrypt_many/decrypt_many.

- the slot alone: for every chain count 1..W (W the backend's cbc_x_chains, from
  backend_constants), CBC encryption and CBC-MAC of each chain equal the one-chain cbc_mac
  slot's and pyca's CBC, from any chaining values, and W + 1 chains are refused;
- the modes: for every message count 1..W + 1 (so the lanes are full, and one more chain
  waits for a lane), messages of equal and of unequal lengths (a lane whose chain ends is
  refilled mid-run), empty ones, and CBC in place (the packed form with dst = src), the batch
  gives what one call per message gives, on every backend (the `backend` fixture);
- CCM's opening of a batch with one forged message zeroes that message only (the packed
  form's on_failure="zero") and gives the others' plaintext. (An AEAD batch never runs in
  place: its outputs differ in length from its inputs.)
"""

import array
import random

import aeskit
import pytest
from aeskit import _aeskit

from aead_helpers import rand
from helpers import BACKEND_CONSTANTS, CIPHER, KEY_SIZES, ref

KEYS = {ks: rand(41 + ks, ks) for ks in KEY_SIZES}


def _w(backend):
    return BACKEND_CONSTANTS[backend]["cbc_x_chains"]


def _packed(items):
    offsets = array.array("q", [0])
    for x in items:
        offsets.append(offsets[-1] + len(x))
    return b"".join(items), offsets


def _lengths(rng, n, equal, whole=False):
    if equal:
        return [64] * n
    out = [rng.choice((0, 1, 15, 16, 17, 33, 64, 100, 255, 256, 1000)) for _ in range(n)]
    return [k // 16 * 16 for k in out] if whole else out


# ---------------------------------------------------------------- the slot


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_cbc_x_slot_every_chain_count(backend, ks):
    key, w = KEYS[ks], _w(backend)
    for chains in range(1, w + 1):
        for blocks in (0, 1, 3, 4, 9, 12):   # 4 on: cbc_x_lines' whole lines (vaes_avx512)
            ivs = rand(chains * 7 + blocks, 16 * chains)
            data = rand(chains * 11 + blocks + 1, 16 * blocks * chains)
            out, nxt = _aeskit._cbc_x_slot(backend, key, ivs, data, True)
            none, macs = _aeskit._cbc_x_slot(backend, key, ivs, data, False)
            assert none is None and macs == nxt
            for c in range(chains):
                iv, part = ivs[16 * c:16 * c + 16], data[16 * blocks * c:16 * blocks * (c + 1)]
                want = ref(CIPHER["CBC"], key, iv, part)
                assert out[16 * blocks * c:16 * blocks * (c + 1)] == want, (chains, c)
                last = want[-16:] if blocks else iv
                assert nxt[16 * c:16 * c + 16] == last, (chains, c)
                assert _aeskit._cbc_mac_slot(backend, key, iv, part) == last


@pytest.mark.parametrize("shift", (0, 16, 32, 48, 1))
def test_cbc_encrypt_many_records_4k_apart(backend, shift):
    # records 4 KiB apart, dst at every offset within a line (vaes_avx512's whole-line
    # encryption starts at dst's next line boundary, so it runs a head of blocks first)
    cbc = aeskit.AESCBC(KEYS[16], backend=backend)
    n = BACKEND_CONSTANTS[backend]["cbc_x_chains"] + 3
    rng = random.Random(shift)
    msgs = [rng.randbytes(4096) for _ in range(n - 2)] + [rng.randbytes(64), rng.randbytes(4160)]
    ivs = rng.randbytes(16 * n)
    src, offsets = _packed(msgs)
    buf = bytearray(len(src) + 128)
    dst = memoryview(buf)[shift:shift + len(src)]
    cbc.encrypt_many_into(ivs, src, offsets, dst)
    want = b"".join(cbc.encrypt(ivs[16 * i:16 * i + 16], m) for i, m in enumerate(msgs))
    assert bytes(dst) == want
    dst[:] = src   # in place
    cbc.encrypt_many_into(ivs, dst, offsets, dst)
    assert bytes(dst) == want


def test_cbc_x_slot_refuses_more_chains_than_it_has(backend):
    w = _w(backend)
    with pytest.raises(ValueError, match="cbc_x takes 1 to"):
        _aeskit._cbc_x_slot(backend, KEYS[16], bytes(16 * (w + 1)), bytes(16 * (w + 1)), True)


# ---------------------------------------------------------------- the modes


@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_cmac_many_every_count(backend, equal):
    rng = random.Random(5)
    for ks in KEY_SIZES:
        obj = aeskit.AESCMAC(KEYS[ks], backend=backend)
        for n in range(1, _w(backend) + 2):
            msgs = [rand(1000 * n + i, k) for i, k in enumerate(_lengths(rng, n, equal))]
            want = [obj.mac(m) for m in msgs]
            assert obj.mac_many(msgs) == want, (ks, n)
            obj.verify_many(msgs, want)
            src, offsets = _packed(msgs)
            dst = bytearray(16 * n)
            obj.mac_many_into(src, offsets, dst)
            assert bytes(dst) == b"".join(want)


def test_cmac_many_empty_and_verify_failure(backend):
    obj = aeskit.AESCMAC(KEYS[16], backend=backend)
    msgs = [b"", b"a", b"", bytes(16), b""] * 7
    want = [obj.mac(m) for m in msgs]
    assert obj.mac_many(msgs) == want
    bad = list(want)
    bad[3] = bytes(16)
    with pytest.raises(aeskit.InvalidTag) as e:
        obj.verify_many(msgs, bad)
    assert list(e.value.failed) == [3]


@pytest.mark.parametrize("pkcs7", (False, True), ids=("whole", "pkcs7"))
@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_cbc_encrypt_many_every_count(backend, pkcs7, equal):
    rng = random.Random(7)
    kw = {"padding": "pkcs7"} if pkcs7 else {}
    for ks in KEY_SIZES:
        obj = aeskit.AESCBC(KEYS[ks], backend=backend, **kw)
        for n in range(1, _w(backend) + 2):
            msgs = [rand(2000 * n + i, k)
                    for i, k in enumerate(_lengths(rng, n, equal, whole=not pkcs7))]
            ivs = [rand(3000 * n + i, 16) for i in range(n)]
            want = [obj.encrypt(iv, m) for iv, m in zip(ivs, msgs)]
            assert obj.encrypt_many(ivs, msgs) == want, (ks, n)
            assert obj.decrypt_many(ivs, want) == msgs


def test_cbc_encrypt_many_in_place(backend):
    rng = random.Random(9)
    obj = aeskit.AESCBC(KEYS[32], backend=backend)
    n = 2 * _w(backend) + 3
    msgs = [rand(4000 + i, k) for i, k in enumerate(_lengths(rng, n, False, whole=True))]
    ivs = [rand(5000 + i, 16) for i in range(n)]
    src, offsets = _packed(msgs)
    buf = bytearray(src)
    obj.encrypt_many_into(b"".join(ivs), buf, offsets, buf)
    assert bytes(buf) == b"".join(obj.encrypt(iv, m) for iv, m in zip(ivs, msgs))


@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_ccm_many_every_count(backend, equal):
    rng = random.Random(11)
    for ks in KEY_SIZES:
        for tag in (4, 16):
            obj = aeskit.AESCCM(KEYS[ks], tag, backend=backend)
            for n in range(1, _w(backend) + 2):
                msgs = [rand(6000 * n + i, k) for i, k in enumerate(_lengths(rng, n, equal))]
                nonces = [rand(7000 * n + i, rng.choice((7, 12, 13))) for i in range(n)]
                ads = [rand(8000 * n + i, rng.choice((0, 1, 14, 15, 16, 40, 300)))
                       for i in range(n)]
                want = [obj.encrypt(v, m, a) for v, m, a in zip(nonces, msgs, ads)]
                assert obj.encrypt_many(nonces, msgs, ads) == want, (ks, tag, n)
                assert obj.decrypt_many(nonces, want, ads) == msgs, (ks, tag, n)


def test_ccm_many_one_forgery(backend):
    rng = random.Random(13)
    obj = aeskit.AESCCM(KEYS[16], backend=backend)
    n = _w(backend) + 5
    msgs = [rand(9000 + i, k) for i, k in enumerate(_lengths(rng, n, False))]
    nonces = [rand(9500 + i, 13) for i in range(n)]
    sealed = [obj.encrypt(v, m, b"hdr") for v, m in zip(nonces, msgs)]
    src, offsets = _packed(sealed)
    buf = bytearray(src)
    bad = n // 2
    buf[offsets[bad + 1] - 1] ^= 1   # the forged message's last tag byte
    dst = bytearray(b"\xaa" * len(buf))
    ok = obj.decrypt_many_into(b"".join(nonces), buf, offsets, dst, b"hdr", on_failure="zero")
    assert list(ok) == [int(i != bad) for i in range(n)]
    at = 0
    for i in range(n):
        got = bytes(dst[at:at + len(msgs[i])])
        assert got == (bytes(len(msgs[i])) if i == bad else msgs[i]), i
        at += len(msgs[i])
