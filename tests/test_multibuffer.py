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


@pytest.mark.parametrize("length", (0, 1, 15, 16, 17, 32, 33, 100))
def test_cmac_many_one_length(backend, length):
    """Messages of one length run in lockstep (chains.h, aeskit_cbc_macs_even) in groups as
    even as they can be: every count up to past two groups of lanes and past the glue's
    group of messages, each last block whole, padded or absent."""
    obj = aeskit.AESCMAC(KEYS[16], backend=backend)
    for n in sorted({1, 2, _w(backend) + 1, 2 * _w(backend) + 3, 70}):
        msgs = [rand(1500 * n + i, length) for i in range(n)]
        want = [obj.mac(m) for m in msgs]
        assert obj.mac_many(msgs) == want, n
        src, offsets = _packed(msgs)
        dst = bytearray(16 * n)
        obj.mac_many_into(src, offsets, dst)
        assert bytes(dst) == b"".join(want), n


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


@pytest.mark.parametrize("length", (0, 1, 16, 64, 100))
@pytest.mark.parametrize("ad_len", (0, 14, 40))
def test_ccm_many_one_shape(backend, length, ad_len):
    """Messages alike in data and AAD length (one nonce length) run in lockstep
    (aeskit_cbc_macs): every count up to past two groups of lanes."""
    obj = aeskit.AESCCM(KEYS[24], 8, backend=backend)
    for n in sorted({1, _w(backend) + 1, 2 * _w(backend) + 3}):
        msgs = [rand(6100 * n + i, length) for i in range(n)]
        nonces = [rand(7100 * n + i, 12) for i in range(n)]
        ads = [rand(8100 * n + i, ad_len) for i in range(n)]
        want = [obj.encrypt(v, m, a) for v, m, a in zip(nonces, msgs, ads)]
        assert obj.encrypt_many(nonces, msgs, ads) == want, n
        assert obj.decrypt_many(nonces, want, ads) == msgs, n


@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_eax_many_every_count(backend, equal):
    """EAX's three OMACs as chains (aeskit_cmac_chain after [t]) and its CTR in one
    aeskit_ctr_many: nonces and AAD of every kind of length, the empty ones included
    (their OMAC is the key's stored value), every count past a group of lanes."""
    rng = random.Random(17)
    for ks in KEY_SIZES:
        for tag in (4, 16):
            obj = aeskit.AESEAX(KEYS[ks], tag_length=tag, backend=backend)
            for n in range(1, _w(backend) + 2):
                msgs = [rand(6200 * n + i, k) for i, k in enumerate(_lengths(rng, n, equal))]
                nl = rng.choice((0, 1, 16, 17, 40))
                nonces = [rand(7200 * n + i, nl if equal else rng.choice((0, 1, 16, 17, 40)))
                          for i in range(n)]
                al = rng.choice((0, 15, 16, 300))
                ads = [rand(8200 * n + i, al if equal else rng.choice((0, 1, 15, 16, 17, 300)))
                       for i in range(n)]
                want = [obj.encrypt(v, m, a) for v, m, a in zip(nonces, msgs, ads)]
                assert obj.encrypt_many(nonces, msgs, ads) == want, (ks, tag, n)
                assert obj.decrypt_many(nonces, want, ads) == msgs, (ks, tag, n)


@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_siv_many_every_count(backend, equal):
    """SIV's S2V as chains across messages (groups of many_chains, folded in order) and
    its CTR in one aeskit_ctr_many: lists of associated data of every size, empty items
    and no list included, plaintexts of 0, under 16, 16 to 31 and longer bytes, enough
    chains in all to cross a group."""
    rng = random.Random(23)
    group = _aeskit.mode_constants("SIV")["many_chains"]
    obj = aeskit.AESSIV(KEYS[32], backend=backend)
    for n in (1, 2, 9, 32, 40):
        msgs = [rand(6300 * n + i, k) for i, k in enumerate(_lengths(rng, n, equal))]
        k_ad = rng.choice((0, 1, 3, 5))
        ads = []
        for i in range(n):
            k = k_ad if equal else rng.choice((0, 1, 2, 7))
            ad = [rand(8300 * n + 10 * i + j, rng.choice((0, 1, 16, 17, 40))) for j in range(k)]
            ads.append(None if k == 0 and i % 2 else ad)
        assert n < 32 or sum(len(a or ()) + 1 for a in ads[:32]) > group or equal
        want = [obj.encrypt(m, a) for m, a in zip(msgs, ads)]
        assert obj.encrypt_many(msgs, ads) == want, n
        assert obj.decrypt_many(want, ads) == msgs, n


def test_siv_many_one_forgery(backend):
    """One forged message among 40 (its SIV or its ciphertext's last byte): it alone fails,
    and every output of the sequence form is withheld."""
    rng = random.Random(29)
    obj = aeskit.AESSIV(KEYS[32], backend=backend)
    n = 40
    msgs = [rand(9100 + i, k or 1) for i, k in enumerate(_lengths(rng, n, False))]
    ads = [[rand(9200 + i, 20), b"nonce%d" % i] for i in range(n)]
    sealed = [obj.encrypt(m, a) for m, a in zip(msgs, ads)]
    for bad, where in ((7, 0), (31, -1)):
        forged = list(sealed)
        flipped = bytearray(sealed[bad])
        flipped[where] ^= 1
        forged[bad] = bytes(flipped)
        with pytest.raises(aeskit.InvalidTag) as e:
            obj.decrypt_many(forged, ads)
        assert list(e.value.failed) == [bad]


@pytest.mark.parametrize("mode", ("CCM", "EAX"))
@pytest.mark.parametrize("where", ("tag", "data"))
def test_many_one_forgery(backend, mode, where):
    """One forged message among many of unequal length: its output alone is zeroed and
    reported, the others open."""
    rng = random.Random(13)
    obj = getattr(aeskit, "AES" + mode)(KEYS[16], backend=backend)
    n = _w(backend) + 5
    lengths = [k or 1 for k in _lengths(rng, n, False)]   # a byte to forge in each
    msgs = [rand(9000 + i, k) for i, k in enumerate(lengths)]
    nonces = [rand(9500 + i, 13) for i in range(n)]
    sealed = [obj.encrypt(v, m, b"hdr") for v, m in zip(nonces, msgs)]
    src, offsets = _packed(sealed)
    buf = bytearray(src)
    bad = n // 2
    buf[offsets[bad + 1] - 1 if where == "tag" else offsets[bad]] ^= 1
    dst = bytearray(b"\xaa" * len(buf))
    ok = obj.decrypt_many_into(b"".join(nonces), buf, offsets, dst, b"hdr", on_failure="zero")
    assert list(ok) == [int(i != bad) for i in range(n)]
    at = 0
    for i in range(n):
        got = bytes(dst[at:at + len(msgs[i])])
        assert got == (bytes(len(msgs[i])) if i == bad else msgs[i]), i
        at += len(msgs[i])
    with pytest.raises(aeskit.InvalidTag) as e:
        obj.decrypt_many(nonces, [bytes(buf[offsets[i]:offsets[i + 1]]) for i in range(n)],
                         b"hdr")
    assert list(e.value.failed) == [bad]


@pytest.mark.parametrize("equal", (True, False), ids=("equal", "unequal"))
def test_ctr_many_every_length(backend, equal):
    """AESCTR's batch through aeskit_ctr_many: short messages' keystream from one ECB pass
    over their counters, long ones' whole blocks through the ctr slot and their tails in
    the pass; more blocks than its buffer holds (a flush mid-group), counters that carry
    across 64 bits and wrap at 128, decryption through the same path, and in place."""
    rng = random.Random(19)
    obj = aeskit.AESCTR(KEYS[16], backend=backend)
    cases = [(n, [k] * n) for n in (1, 5, 64, 70) for k in (0, 17, 48, 63, 64, 100)] if equal \
        else [(n, [rng.choice((0, 1, 15, 16, 17, 31, 48, 63, 64, 65, 100, 255, 256, 1000))
                   for _ in range(n)]) for n in (1, 5, 64, 70)]
    for n, lengths in cases:
        msgs = [rand(9900 * n + i, k) for i, k in enumerate(lengths)]
        edges = (b"\xff" * 16, b"\x00" * 8 + b"\xff" * 8, bytes(15) + b"\xfe")
        ivs = [edges[i % 3] if i % 4 == 0 else rand(9950 * n + i, 16) for i in range(n)]
        want = [obj.encrypt(iv, m) for iv, m in zip(ivs, msgs)]
        assert obj.encrypt_many(ivs, msgs) == want, n
        assert obj.decrypt_many(ivs, want) == msgs, n
        src, offsets = _packed(msgs)
        buf = bytearray(src)
        obj.encrypt_many_into(b"".join(ivs), buf, offsets, buf)
        assert bytes(buf) == b"".join(want), n


# ------------------------------------------- aeskit_ctr_many's split (ctr_many_long)


def test_ctr_many_around_the_direct_length(backend):
    """A batch's CTR (modes/generic.c, aeskit_ctr_many) gives a message of at least the
    backend's ctr_many_long whole blocks to the ctr slot and gathers the shorter ones, and
    CCM's tag masks, into one ECB pass: messages on both sides of that length, mixed in
    one batch, with partial last blocks, give what one call per message gives (CTR, CCM,
    whose masks ride in that pass, and EAX)."""
    long_ = BACKEND_CONSTANTS[backend]["ctr_many_long"]
    assert 1 <= long_ <= 16
    lengths = [16 * b + r for b in (0, 1, long_ - 1, long_, long_ + 1) for r in (0, 1, 15)]
    rng = random.Random(long_)
    rng.shuffle(lengths)
    msgs = [rng.randbytes(k) for k in lengths]
    n = len(msgs)
    ctr = aeskit.AESCTR(KEYS[16], backend=backend)
    ivs = [bytes(15) + bytes([i]) if i % 2 else b"\xff" * 16 for i in range(n)]  # carries
    assert ctr.encrypt_many(ivs, msgs) == [ctr.encrypt(iv, m) for iv, m in zip(ivs, msgs)]
    for cls, nonce_len in ((aeskit.AESCCM, 13), (aeskit.AESCCM, 7), (aeskit.AESEAX, 16)):
        obj = cls(KEYS[16], backend=backend)
        nonces = [rng.randbytes(nonce_len) for _ in range(n)]
        want = [obj.encrypt(nc, m, None) for nc, m in zip(nonces, msgs)]
        assert obj.encrypt_many(nonces, msgs) == want, cls
        assert obj.decrypt_many(nonces, want) == msgs, cls
