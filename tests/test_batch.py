"""The batch methods (docs/batch.md): for every class, a batch gives what one call per
message gives, in both forms (sequences; packed with int32 or int64 offsets, numpy's
included), with every form of associated data and threads=1 or 2; a failure zeroes and
reports as documented; the errors come before any work; the GIL is released for the
batch. The modes come from the descriptors' facts, so a new mode is covered here at once."""

import array
import mmap
import random
import threading

import aeskit
import numpy as np
import pytest
from aeskit._modes import MODES

KEY = bytes(range(64))


def _key(mode):
    """A key the class takes (two halves that differ for XTS and SIV)."""
    return KEY[:mode.n_keys * mode.key_sizes[0]]


def _obj(mode, backend, **kw):
    kw = dict(kw)
    return getattr(aeskit, mode.class_name)(_key(mode), backend=backend, **kw)


def _params(family):
    return [pytest.param(m, id=m.class_name) for m in MODES if m.family == family]


def _lengths(mode, rng, n):
    """n random message lengths the mode takes, 0 (where taken) and odd ones included."""
    out = []
    for i in range(n):
        k = rng.choice((0, 1, 15, 16, 17, 31, 64, 100, 255, 256, 1500, 4096))
        if mode.family == "keywrap":
            k = max(k, 1) if mode.name == "KWP" else max(16, k // 8 * 8)
        elif mode.whole_blocks:
            k = k // 16 * 16
        k = max(k, mode.min_len)
        out.append(k)
    return out


def _nonce_len(mode):
    return 12 if mode.nonce_min <= 12 <= (mode.nonce_max or 12) else mode.nonce_min


def _packed(items, width):
    """items back to back, and their offsets as an array of the width."""
    offsets = array.array("i" if width == 4 else "q", [0])
    for x in items:
        offsets.append(offsets[-1] + len(x))
    return b"".join(items), offsets


def _zeros(size):
    """size bytes of zeros that take no memory: a read-only private anonymous mapping."""
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                     | getattr(mmap, "MAP_NORESERVE", 0x4000), prot=mmap.PROT_READ)


def _split(buf, offsets):
    return [bytes(buf[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


# ---- AEADs ----------------------------------------------------------------------------

def _aead_case(mode, seed, n=40):
    rng = random.Random(seed)
    lens = _lengths(mode, rng, n)
    nonces = [rng.randbytes(_nonce_len(mode)) for _ in lens] if mode.nonce_name else None
    data = [rng.randbytes(k) for k in lens]
    return rng, nonces, data


def _ad_forms(mode, rng, n):
    """Each form associated_data takes: (batch argument, per-message one-shot argument)."""
    if mode.name == "SIV":
        lists = [[rng.randbytes(rng.randrange(20)) for _ in range(rng.randrange(3))]
                 for _ in range(n)]
        lists[0] = None
        return {"none": (None, [None] * n), "lists": (lists, lists)}
    each = [rng.randbytes(rng.randrange(40)) for _ in range(n)]
    each[1] = None
    return {"none": (None, [None] * n), "one": (b"header", [b"header"] * n),
            "each": (each, each)}


def _args(mode, nonces):
    return (nonces,) if mode.nonce_name else ()


@pytest.mark.parametrize("threads", (1, 2))
@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_sequence_equals_one_call_each(backend, mode, threads):
    obj = _obj(mode, backend)
    rng, nonces, data = _aead_case(mode, 1)
    for form, (ad, each) in _ad_forms(mode, rng, len(data)).items():
        if mode.nonce_name:
            one = [obj.encrypt(x, d, a) for x, d, a in zip(nonces, data, each)]
        else:
            one = [obj.encrypt(d, a) for d, a in zip(data, each)]
        sealed = obj.encrypt_many(*_args(mode, nonces), data, ad, threads=threads)
        assert sealed == one, form
        assert obj.decrypt_many(*_args(mode, nonces), sealed, ad, threads=threads) == data


@pytest.mark.parametrize("width", (4, 8))
@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_packed_equals_one_call_each(backend, mode, width):
    obj = _obj(mode, backend)
    rng, nonces, data = _aead_case(mode, 2)
    n = len(data)
    src, offsets = _packed(data, width)
    packed_nonces = b"".join(nonces) if nonces else None
    ad_each = [rng.randbytes(rng.randrange(30)) for _ in range(n)]
    ad_src, ad_offsets = _packed(ad_each, width)
    forms = {"none": (None, None, [None] * n),
             "one": (b"for all", None, [[b"for all"] if mode.name == "SIV" else b"for all"] * n),
             "each": (ad_src, ad_offsets,
                      [[a] if mode.name == "SIV" else a for a in ad_each])}
    for form, (ad, ad_off, each) in forms.items():
        if mode.nonce_name:
            one = [obj.encrypt(x, d, a) for x, d, a in zip(nonces, data, each)]
        else:
            one = [obj.encrypt(d, a if a is not None else None) for d, a in zip(data, each)]
        pre = (packed_nonces,) if mode.nonce_name else ()
        dst = bytearray(len(src) + 16 * n + 7)
        out = obj.encrypt_many_into(*pre, src, offsets, dst, ad, ad_off)
        assert type(out) is array.array and out.typecode == offsets.typecode
        assert _split(dst, out) == one, form
        assert bytes(dst[out[-1]:]) == bytes(7)   # nothing written past the outputs
        back = bytearray(len(src))
        got = obj.decrypt_many_into(*pre, bytes(dst), out, back, ad, ad_off)
        assert list(got) == list(offsets) and bytes(back) == src


@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_numpy_offsets_come_back_as_numpy(backend, mode):
    obj = _obj(mode, backend)
    _, nonces, data = _aead_case(mode, 3, n=9)
    src = b"".join(data)
    for dtype in (np.int32, np.int64):
        offsets = np.cumsum([0] + [len(d) for d in data]).astype(dtype)
        dst = np.zeros(len(src) + 16 * len(data), dtype=np.uint8)
        pre = (b"".join(nonces),) if mode.nonce_name else ()
        out = obj.encrypt_many_into(*pre, src, offsets, dst)
        assert isinstance(out, np.ndarray) and out.dtype == dtype
        assert out is not offsets and list(offsets) == list(np.cumsum([0] + [len(d) for d in data]))
        want = obj.encrypt_many(*_args(mode, nonces), data)
        assert _split(dst.tobytes(), out) == want


@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_failure_sequence_zeroes_all_and_names_indices(backend, mode):
    obj = _obj(mode, backend)
    _, nonces, data = _aead_case(mode, 4, n=12)
    sealed = obj.encrypt_many(*_args(mode, nonces), data)
    bad = list(sealed)
    for i in (2, 7):
        bad[i] = bytes([bad[i][0] ^ 1]) + bad[i][1:]
    bad[9] = bad[9][:obj.tag_length - 1]   # shorter than the tag: fails as a wrong tag
    with pytest.raises(aeskit.InvalidTag) as info:
        obj.decrypt_many(*_args(mode, nonces), bad)
    assert info.value.failed == [2, 7, 9]
    assert "failed for 3 of 12 messages (indices 2, 7, 9)" in str(info.value)


@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_failure_packed_raise_and_zero(backend, mode):
    obj = _obj(mode, backend)
    _, nonces, data = _aead_case(mode, 5, n=10)
    pre = (b"".join(nonces),) if mode.nonce_name else ()
    src, offsets = _packed(data, 8)
    dst = bytearray(len(src) + 16 * len(data))
    out = obj.encrypt_many_into(*pre, src, offsets, dst)
    sealed = bytearray(dst)
    sealed[out[4]] ^= 1
    back = bytearray(b"\xaa" * len(src))
    with pytest.raises(aeskit.InvalidTag) as info:
        obj.decrypt_many_into(*pre, sealed, out, back)
    assert info.value.failed == [4]
    assert back == bytes(len(back))   # all or nothing: every output zeroed
    back = bytearray(b"\xaa" * len(src))
    ok = obj.decrypt_many_into(*pre, sealed, out, back, on_failure="zero")
    assert type(ok) is bytearray and list(ok) == [1, 1, 1, 1, 0, 1, 1, 1, 1, 1]
    got = _split(back, offsets)
    assert got[4] == bytes(len(data[4]))   # the failed one zeroed
    assert got[:4] + got[5:] == data[:4] + data[5:]


@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_packed_refuses_in_place(mode):
    obj = _obj(mode, "auto")
    _, nonces, data = _aead_case(mode, 6, n=3)
    pre = (b"".join(nonces),) if mode.nonce_name else ()
    buf = bytearray(b"".join(data) + bytes(64))
    _, offsets = _packed(data, 8)
    with pytest.raises(ValueError, match="dst overlaps src: each output is longer or shorter"):
        obj.encrypt_many_into(*pre, memoryview(buf)[:offsets[-1]], offsets, buf)


def test_aead_limits_per_message():
    """Each message keeps its mode's limits: CCM's length field with a 13-byte nonce."""
    ccm = aeskit.AESCCM(bytes(16))
    with pytest.raises(aeskit.LimitExceeded, match="2\\*\\*16 - 1 bytes with this nonce's"):
        ccm.encrypt_many([bytes(12), bytes(13)], [b"", bytes(1 << 16)])


def test_int32_offsets_that_would_overflow():
    """Outputs past what int32 offsets hold: LimitExceeded before any work (the source is a
    read-only mapping of zeros that takes no memory, dst one byte)."""
    gcm = aeskit.AESGCM(bytes(16))
    n = (1 << 31) - 8
    with _zeros(n) as src, pytest.raises(aeskit.LimitExceeded, match="int32 offsets hold"):
        gcm.encrypt_many_into(bytes(12), src, array.array("i", [0, n]), bytearray(1))


@pytest.mark.parametrize("code", ["i", "q"])
def test_offsets_scan_finds_the_first_fault(code):
    """The offsets are checked in one pass without a branch per offset, and the fault found
    again only for its message: each kind at the start, middle and end of a long column, the
    message naming the first fault (a negative offset reads as one that decreases)."""
    cmac = aeskit.AESCMAC(bytes(16))
    n = 1000
    src = bytes(16 * n)
    good = [16 * i for i in range(n + 1)]
    cmac.mac_many_into(src, array.array(code, good), bytearray(16 * n))
    neg = -(1 << 31) if code == "i" else -(1 << 63)
    for at in (1, 2, n // 2, n - 1, n):
        for bad, shown in ((good[at - 1] - 1, good[at - 1] - 1), (neg, neg)):
            offs = list(good)
            offs[at] = bad
            if at + 2 <= n:
                offs[at + 2] = 0   # a later fault: not the one named
            with pytest.raises(ValueError, match=rf"offsets\[{at}\] is {shown}, after "
                                                 rf"{good[at - 1]}$"):
                cmac.mac_many_into(src, array.array(code, offs), bytearray(16 * n))


@pytest.mark.parametrize("mode", _params("aead"))
def test_aead_mixed_lengths_and_bad_offsets(mode):
    obj = _obj(mode, "auto")
    nonce = bytes(_nonce_len(mode))
    pre = (nonce * 2,) if mode.nonce_name else ()
    src = bytes(32)
    for offsets, words in ((array.array("q", [0, 20, 10]), "must not decrease"),
                           (array.array("q", [0, 10, 33]), "runs past its data")):
        with pytest.raises(ValueError, match=words):
            obj.encrypt_many_into(*pre, src, offsets, bytearray(100))
    with pytest.raises(ValueError, match="dst must be at least 64 bytes"):
        obj.encrypt_many_into(*pre, src, array.array("q", [0, 16, 32]), bytearray(63))
    if mode.nonce_name:
        with pytest.raises(ValueError, match="nonces must have one item per message"):
            obj.encrypt_many([nonce], [b"a", b"b"])
        with pytest.raises(ValueError, match="nonces must be 2 items of one length"):
            obj.encrypt_many_into(nonce + b"x", src, array.array("q", [0, 16, 32]),
                                  bytearray(64))
    with pytest.raises(ValueError, match="ad_offsets must have one offset per message"):
        obj.encrypt_many_into(*pre, src, array.array("q", [0, 16, 32]), bytearray(64),
                              b"ad", array.array("q", [0, 2]))


# ---- block modes --------------------------------------------------------------------

def _cipher_objs(mode, backend):
    yield _obj(mode, backend)
    if mode.padding:
        yield _obj(mode, backend, padding="pkcs7")


def _cipher_case(mode, obj, seed, n=40):
    rng = random.Random(seed)
    padded = getattr(obj, "padding", None)
    lens = [rng.randrange(100) for _ in range(n)] if padded else _lengths(mode, rng, n)
    ivs = [rng.randbytes(16) for _ in lens] if mode.nonce_name else None
    return ivs, [rng.randbytes(k) for k in lens]


@pytest.mark.parametrize("n", (1, 5, 6, 7, 15, 16, 17, 23, 40))
@pytest.mark.parametrize("mode", [m for m in _params("aead") if m.values[0].name in ("GCM", "SIV")]
                         + [m for m in _params("cipher") if m.values[0].name in ("CBC", "XTS")])
def test_batch_sizes_across_the_held_records_and_views(backend, mode, n):
    """Around what a batch holds without allocating (py/batch.h: 16 records, 6 buffer
    views): every message a memoryview or bytearray, so that each takes a view of its own
    and the views run past the first six into allocated blocks, in both forms, and a
    failure among them still zeroes and names the one that failed."""
    obj = _obj(mode, backend)
    if mode.family == "aead":
        rng, nonces, data = _aead_case(mode, 1000 + n, n)
        ad = [[b"a"] for _ in data] if mode.name == "SIV" else [rng.randbytes(5) for _ in data]
        side = [memoryview(x) for x in nonces] if nonces else None
        one = [obj.encrypt(*((x,) if nonces else ()), d, a)
               for x, d, a in zip(nonces or [None] * n, data, ad)]
        views = [bytearray(d) if i % 2 else memoryview(d) for i, d in enumerate(data)]
        assert obj.encrypt_many(*((side,) if side else ()), views, ad) == one
        one_hdr = [obj.encrypt(*((x,) if nonces else ()), d, [b"hdr"] if mode.name == "SIV"
                               else b"hdr") for x, d in zip(nonces or [None] * n, data)]
        src, offsets = _packed(data, 8)
        dst = bytearray(len(src) + 16 * n)
        out = obj.encrypt_many_into(*((b"".join(nonces),) if nonces else ()), memoryview(src),
                                    offsets, dst, b"hdr")
        assert _split(dst, out) == one_hdr
        bad = [bytearray(c) for c in one]
        bad[n // 2][-1] ^= 1
        with pytest.raises(aeskit.InvalidTag) as e:
            obj.decrypt_many(*((side,) if side else ()), bad, ad)
        assert e.value.failed == [n // 2]
    else:
        ivs, data = _cipher_case(mode, obj, 2000 + n, n)
        pre = ([memoryview(x) for x in ivs],) if ivs else ()
        one = [obj.encrypt(*((iv,) if ivs else ()), d)
               for iv, d in zip(ivs or [None] * n, data)]
        views = [bytearray(d) if i % 2 else memoryview(d) for i, d in enumerate(data)]
        assert obj.encrypt_many(*pre, views) == one
        src, offsets = _packed(data, 4)
        dst = bytearray(len(src))
        out = obj.encrypt_many_into(*((b"".join(ivs),) if ivs else ()), src, offsets, dst)
        assert _split(dst, out) == one


@pytest.mark.parametrize("threads", (1, 2))
@pytest.mark.parametrize("mode", _params("cipher"))
def test_cipher_sequence_equals_one_call_each(backend, mode, threads):
    for obj in _cipher_objs(mode, backend):
        ivs, data = _cipher_case(mode, obj, 7)
        pre = (ivs,) if ivs else ()
        one = [obj.encrypt(*((iv,) if ivs else ()), d)
               for iv, d in zip(ivs or [None] * len(data), data)]
        out = obj.encrypt_many(*pre, data, threads=threads)
        assert out == one
        assert obj.decrypt_many(*pre, out, threads=threads) == data


@pytest.mark.parametrize("width", (4, 8))
@pytest.mark.parametrize("mode", _params("cipher"))
def test_cipher_packed_and_in_place(backend, mode, width):
    for obj in _cipher_objs(mode, backend):
        ivs, data = _cipher_case(mode, obj, 8)
        pre = (b"".join(ivs),) if ivs else ()
        want = obj.encrypt_many(*((ivs,) if ivs else ()), data)
        src, offsets = _packed(data, width)
        dst = bytearray(sum(map(len, want)))
        out = obj.encrypt_many_into(*pre, src, offsets, dst)
        assert _split(dst, out) == want
        buf = bytearray(dst)
        back = obj.decrypt_many_into(*pre, buf, out, buf)   # exactly in place
        assert _split(buf, back) == data and list(back) == list(offsets)
        assert bytes(buf[back[-1]:]) == bytes(len(buf) - back[-1])   # what moved is zeroed
        if not getattr(obj, "padding", None):
            buf = bytearray(src)
            obj.encrypt_many_into(*pre, buf, offsets, buf)
            assert _split(buf, offsets) == want
            big = bytearray(src + bytes(16))
            with pytest.raises(ValueError, match="dst partially overlaps src"):
                obj.encrypt_many_into(*pre, memoryview(big)[:len(src)], offsets,
                                      memoryview(big)[1:])


def test_cipher_padding_failure():
    cbc = aeskit.AESCBC(bytes(16), padding="pkcs7")
    ivs = [bytes(16)] * 3
    sealed = cbc.encrypt_many(ivs, [b"a", b"bb", b"ccc"])
    bad = [sealed[0], cbc.encrypt(bytes(16), bytes(16))[:16], sealed[2]]
    with pytest.raises(ValueError, match="removing the padding failed") as info:
        cbc.decrypt_many(ivs, bad)
    assert info.value.failed == [1]


def test_cipher_bad_message_named_by_index():
    # batch_check names a message only when it fails: the name must still be its own
    cbc = aeskit.AESCBC(bytes(16))
    data = [bytes(32), bytes(16), bytes(17), bytes(48)]
    with pytest.raises(ValueError, match=r"data\[2\]"):
        cbc.encrypt_many([bytes(16)] * 4, data)
    src, offsets = _packed(data, 8)
    with pytest.raises(ValueError, match=r"data\[2\]"):
        cbc.encrypt_many_into(bytes(64), src, offsets, bytearray(len(src)))
    assert cbc.encrypt_many([bytes(16)] * 2, data[:2]) == [
        cbc.encrypt(bytes(16), d) for d in data[:2]]


# ---- CMAC and the key wraps -----------------------------------------------------------

@pytest.mark.parametrize("threads", (1, 2))
@pytest.mark.parametrize("mode", _params("mac"))
def test_mac_many(backend, mode, threads):
    obj = _obj(mode, backend, tag_length=12)
    rng = random.Random(9)
    msgs = [rng.randbytes(k) for k in _lengths(mode, rng, 50)]
    tags = obj.mac_many(msgs, threads=threads)
    assert tags == [obj.mac(m) for m in msgs]
    assert obj.verify_many(msgs, tags, threads=threads) is None
    src, offsets = _packed(msgs, 4)
    dst = bytearray(12 * len(msgs))
    out = obj.mac_many_into(src, offsets, dst)
    assert list(out) == list(range(0, 12 * len(msgs) + 1, 12)) and dst == b"".join(tags)
    bad = list(tags)
    bad[3] = bytes(12)
    bad[8] = tags[8][:11]   # another length fails as a wrong tag does
    with pytest.raises(aeskit.InvalidTag) as info:
        obj.verify_many(msgs, bad)
    assert info.value.failed == [3, 8]


@pytest.mark.parametrize("threads", (1, 2))
@pytest.mark.parametrize("mode", _params("keywrap"))
def test_keywrap_many(backend, mode, threads):
    obj = _obj(mode, backend)
    rng = random.Random(10)
    keys = [rng.randbytes(k) for k in _lengths(mode, rng, 60)]
    wrapped = obj.wrap_many(keys, threads=threads)
    assert wrapped == [obj.wrap(k) for k in keys]
    assert obj.unwrap_many(wrapped, threads=threads) == keys
    for width in (4, 8):
        src, offsets = _packed(keys, width)
        dst = bytearray(sum(map(len, wrapped)))
        out = obj.wrap_many_into(src, offsets, dst)
        assert _split(dst, out) == wrapped
        back = bytearray(len(dst))
        got = obj.unwrap_many_into(bytes(dst), out, back)
        assert _split(back, got) == keys   # KWP: each key without its padding, moved down
    bad = list(wrapped)
    bad[5] = bad[5][:-8] if len(bad[5]) > 24 else bad[5] + bytes(1)
    bad[6] = bytes(len(bad[6]))
    with pytest.raises(aeskit.InvalidUnwrap) as info:
        obj.unwrap_many(bad)
    assert info.value.failed == [5, 6]


# ---- threads and the GIL ------------------------------------------------------------

def test_empty_batches():
    gcm = aeskit.AESGCM(bytes(16))
    assert gcm.encrypt_many([], []) == []
    out = gcm.encrypt_many_into(b"", b"", array.array("i", [0]), bytearray())
    assert list(out) == [0]
    assert aeskit.AESKW(bytes(16)).wrap_many((), threads=4) == []


def test_threads_split_a_large_batch():
    """Many threads over a batch: each message once, in its place."""
    gcm = aeskit.AESGCM(bytes(16))
    n = 3000
    nonces = [i.to_bytes(12, "big") for i in range(n)]
    data = [bytes([i & 0xFF]) * (i % 97) for i in range(n)]
    want = [gcm.encrypt(x, d, None) for x, d in zip(nonces, data)]
    for threads in (2, 3, 8, 256):
        assert gcm.encrypt_many(nonces, data, threads=threads) == want


def test_gil_released_for_the_batch():
    """A Python thread makes progress while one batch call runs: the batch (CFB8 over
    zeros, about a second of work serially) releases the GIL for its whole run."""
    cfb8 = aeskit.AESCFB8(bytes(16))
    data = [bytes(1 << 16)] * 64
    ivs = [bytes(16)] * 64
    ticks = []
    started, stop = threading.Event(), threading.Event()

    def count():
        started.set()
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=count)
    t.start()
    started.wait()
    before = len(ticks)
    cfb8.encrypt_many(ivs, data)
    during = len(ticks) - before
    stop.set()
    t.join()
    # With the GIL held for the call, the counting thread would not run at all until the
    # call returned; released, it counts for the whole call (hundreds of thousands).
    assert during > 1000, during


@pytest.mark.parametrize("what", ("nonces", "associated_data"))
def test_packed_dst_apart_from_what_later_messages_read(what):
    """A message's output must not land on a later message's nonce or associated data."""
    gcm = aeskit.AESGCM(bytes(16))
    buf = bytearray(200)
    offsets = array.array("q", [0, 16, 32])
    src = bytes(32)
    if what == "nonces":
        nonces, ad = memoryview(buf)[40:64], None
    else:
        nonces, ad = bytes(24), memoryview(buf)[40:50]
    with pytest.raises(ValueError, match=f"dst overlaps {what}: pass a separate buffer"):
        gcm.encrypt_many_into(nonces, src, offsets, buf, ad)
