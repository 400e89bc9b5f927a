"""AES-CMAC (AESCMAC and its MACContext): RFC 4493 and SP 800-38B known answers, pyca/
cryptography (full tags) and pycryptodome (tags truncated with mac_len) as references with
hypothesis over data lengths and splits, every backend against portable, and the context in
the manner of hmac: copy independence, digest() not ending it, verify() refusing every tag
of another length than tag_length."""

import hashlib
import os
import threading

import aeskit
import pytest
from Crypto.Cipher import AES as _CryptodomeAES
from Crypto.Hash import CMAC as _CryptodomeCMAC
from cryptography.hazmat.primitives import cmac as _pyca_cmac
from cryptography.hazmat.primitives.ciphers import algorithms
from hypothesis import given
from hypothesis import strategies as st

from aead_helpers import GuardedBuffer, boundary_lengths, chunks, rand
from helpers import KEY_SIZES, VECTOR_DIR, WIDE_BATCH, parse_vectors

VECTORS = [{k: (v if k in ("section", "file") else bytes.fromhex(v)) for k, v in d.items()}
           for d in parse_vectors(os.path.join(VECTOR_DIR, "mac", "cmac.txt"))]
TAG_LENGTHS = tuple(range(4, 17))
BAD_TAG_LENGTHS = (-1, 0, 1, 2, 3, 17, 32)


def pyca_cmac(key, data):
    c = _pyca_cmac.CMAC(algorithms.AES(bytes(key)))
    c.update(bytes(data))
    return c.finalize()


def cryptodome_cmac(key, data, tag_length):
    return _CryptodomeCMAC.new(bytes(key), bytes(data), ciphermod=_CryptodomeAES,
                               mac_len=tag_length).digest()


def vid(v):
    return v["section"]


# ---------------------------------------------------------------- known answers

@pytest.mark.known_answer("CMAC")
def test_vector_file_is_complete():
    assert len(VECTORS) == 12
    assert [len(v["key"]) for v in VECTORS] == [16] * 4 + [24] * 4 + [32] * 4
    # each key size: the empty message (K2), one block and 64 bytes (K1), 40 bytes (K2)
    for i in range(0, 12, 4):
        assert [len(v["message"]) for v in VECTORS[i:i + 4]] == [0, 16, 40, 64]
    for v in VECTORS:
        assert len(v["tag"]) == 16
        assert pyca_cmac(v["key"], v["message"]) == v["tag"], v["section"]


@pytest.mark.known_answer("CMAC")
@pytest.mark.parametrize("v", VECTORS, ids=vid)
def test_known_answer(backend, v):
    key, msg, tag = v["key"], v["message"], v["tag"]
    obj = aeskit.AESCMAC(key, backend=backend)
    assert obj.backend == backend and obj.key_size == 8 * len(key) and obj.tag_length == 16
    assert obj.mac(msg) == tag
    assert obj.mac(bytearray(msg)) == tag and obj.mac(memoryview(msg)) == tag
    assert obj.verify(msg, tag) is None
    ctx = obj.new()
    for i in range(len(msg)):
        ctx.update(msg[i:i + 1])
    assert ctx.digest() == tag
    assert ctx.hexdigest() == tag.hex()
    assert ctx.verify(tag) is None
    assert obj.new(msg).digest() == tag
    # a truncated tag is the leading bytes of the full one (SP 800-38B 6.2 step 7)
    for t in TAG_LENGTHS:
        short = aeskit.AESCMAC(key, tag_length=t, backend=backend)
        assert short.mac(msg) == tag[:t]
        short.verify(msg, tag[:t])
        if t < 16:
            with pytest.raises(aeskit.InvalidTag):
                short.verify(msg, tag)  # the full tag is not a t-byte tag
        assert short.new(msg).digest() == tag[:t]


# ---------------------------------------------------------------- references

lengths = st.one_of(
    st.sampled_from(boundary_lengths()),
    st.integers(0, (3 * WIDE_BATCH + 2) * 16 + 17),
)


@pytest.mark.parametrize("ks", KEY_SIZES)
@given(n=lengths, seed=st.integers(0, 2**64 - 1), t=st.sampled_from(TAG_LENGTHS),
       data=st.data())
def test_matches_references(backend, ks, n, seed, t, data):
    key, msg = rand(seed, ks), rand(seed + 1, n)
    full = pyca_cmac(key, msg)
    assert aeskit.AESCMAC(key, backend=backend).mac(msg) == full
    obj = aeskit.AESCMAC(key, tag_length=t, backend=backend)
    got = obj.mac(msg)
    assert got == cryptodome_cmac(key, msg, t) == full[:t]
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6), label="cuts")
    ctx = obj.new()
    for piece in chunks(msg, cuts):
        ctx.update(piece)
    assert ctx.digest() == got
    if backend != "portable":
        assert aeskit.AESCMAC(key, tag_length=t, backend="portable").mac(msg) == got


@pytest.mark.parametrize("ks", (16, 32))
def test_every_backend_matches_portable_around_batches(backend, ks):
    """The cbc_mac slot is serial, but the block count still crosses every backend's batch
    sizes here (the mode holds back the last block of each call)."""
    key = rand(ks, ks)
    port = aeskit.AESCMAC(key, backend="portable")
    obj = aeskit.AESCMAC(key, backend=backend)
    msg = rand(7, 16 * (3 * WIDE_BATCH + 2) + 17)
    for n in range(0, len(msg) + 1, 7):
        assert obj.mac(msg[:n]) == port.mac(msg[:n]), n


def test_every_split_in_two(backend):
    """Every split point of a 5-block message (whole, partial, empty pieces) into two
    update calls, and into three around each block boundary."""
    key = rand(3, 16)
    obj = aeskit.AESCMAC(key, backend=backend)
    msg = rand(4, 80)
    want = pyca_cmac(key, msg)
    for i in range(len(msg) + 1):
        ctx = obj.new()
        ctx.update(msg[:i])
        ctx.update(msg[i:])
        assert ctx.digest() == want, i
    for b in range(0, 81, 16):
        for i in range(max(b - 1, 0), min(b + 2, 81)):
            first, second, third = chunks(msg, [i, b])
            ctx = obj.new(first)
            ctx.update(b"")
            ctx.update(second)
            ctx.update(third)
            assert ctx.digest() == want, (b, i)


def test_long_message_releases_the_gil(backend):
    """Past the GIL threshold the call still gives the reference's tag (one shot and
    through a context, in pieces on either side of the threshold)."""
    key = rand(5, 32)
    msg = rand(6, 3 * aeskit._aeskit.GIL_THRESHOLD + 5)
    obj = aeskit.AESCMAC(key, backend=backend)
    want = pyca_cmac(key, msg)
    assert obj.mac(msg) == want
    ctx = obj.new()
    for piece in chunks(msg, [100, 5000, 9000]):
        ctx.update(piece)
    assert ctx.digest() == want


def test_no_read_past_the_data(backend):
    """Messages ending at a guard page: a read past the last byte kills the process."""
    key = rand(8, 16)
    obj = aeskit.AESCMAC(key, backend=backend)
    for n in (0, 1, 15, 16, 17, 31, 32, 33, 64, 100):
        msg = rand(n, n)
        g = GuardedBuffer(n, msg)
        assert obj.mac(g.view) == pyca_cmac(key, msg), n
        ctx = obj.new()
        ctx.update(g.view)
        assert ctx.digest() == pyca_cmac(key, msg)


# ---------------------------------------------------------------- verify

def test_verify_refuses_every_other_tag(backend):
    key, msg = rand(9, 16), rand(10, 40)
    for t in (4, 8, 16):
        obj = aeskit.AESCMAC(key, tag_length=t, backend=backend)
        tag = obj.mac(msg)
        ctx = obj.new(msg)
        # every bit of the tag
        for i in range(8 * t):
            bad = bytearray(tag)
            bad[i // 8] ^= 1 << (i % 8)
            with pytest.raises(aeskit.InvalidTag):
                obj.verify(msg, bad)
            with pytest.raises(aeskit.InvalidTag):
                ctx.verify(bad)
        # every other length, the tag's own prefixes and extensions included
        full = aeskit.AESCMAC(key, backend=backend).mac(msg)
        for n in range(0, 20):
            if n == t:
                continue
            for cand in {full[:n], (tag + bytes(20))[:n]} - {tag}:
                with pytest.raises(aeskit.InvalidTag):
                    obj.verify(msg, cand)
                with pytest.raises(aeskit.InvalidTag):
                    ctx.verify(cand)
        # every byte of the message
        for i in range(len(msg)):
            bad = bytearray(msg)
            bad[i] ^= 0x40
            with pytest.raises(aeskit.InvalidTag):
                obj.verify(bad, tag)
        with pytest.raises(aeskit.InvalidTag):
            obj.verify(msg[:-1], tag)
        with pytest.raises(aeskit.InvalidTag):
            obj.verify(msg + b"\0", tag)
        obj.verify(msg, tag)
        ctx.verify(tag)
    assert issubclass(aeskit.InvalidTag, ValueError)


def test_empty_and_whole_block_messages_differ(backend):
    """The empty message (K2, padded) and 16 bytes of 0x80 || 0 (K1, whole) are different
    tags, as are 15 bytes and the same with the 10* pad written out."""
    obj = aeskit.AESCMAC(rand(11, 16), backend=backend)
    assert obj.mac(b"") != obj.mac(b"\x80" + bytes(15))
    m = rand(12, 15)
    assert obj.mac(m) != obj.mac(m + b"\x80")


# ---------------------------------------------------------------- the context

def test_context_is_like_hmac(backend):
    key = rand(13, 24)
    obj = aeskit.AESCMAC(key, tag_length=12, backend=backend)
    ctx = obj.new()
    assert isinstance(ctx, aeskit.MACContext)
    assert ctx.digest_size == 12 and ctx.block_size == 16
    assert ctx.digest() == obj.mac(b"")
    # digest() does not end the context; update may follow it
    ctx.update(b"abc")
    d1 = ctx.digest()
    assert d1 == ctx.digest() == obj.mac(b"abc")
    assert ctx.hexdigest() == d1.hex() and type(ctx.hexdigest()) is str
    ctx.update(b"d" * 30)
    assert ctx.digest() == obj.mac(b"abc" + b"d" * 30)
    # copies are independent, both ways
    cp = ctx.copy()
    assert isinstance(cp, aeskit.MACContext) and cp.digest() == ctx.digest()
    cp.update(b"x")
    assert cp.digest() == obj.mac(b"abc" + b"d" * 30 + b"x")
    assert ctx.digest() == obj.mac(b"abc" + b"d" * 30)
    ctx.update(b"yz")
    assert ctx.digest() == obj.mac(b"abc" + b"d" * 30 + b"yz")
    assert cp.digest() == obj.mac(b"abc" + b"d" * 30 + b"x")
    # a copy outlives its source and the key object
    del ctx, obj
    cp.update(b"!")
    assert cp.digest() == aeskit.AESCMAC(key, tag_length=12).mac(b"abc" + b"d" * 30 + b"x!")


def test_copy_at_every_block_boundary(backend):
    """Copies taken with 0..16 bytes held back go on as the original would."""
    key, msg = rand(14, 16), rand(15, 64)
    obj = aeskit.AESCMAC(key, backend=backend)
    for i in range(0, 49):
        ctx = obj.new(msg[:i])
        cp = ctx.copy()
        cp.update(msg[i:])
        ctx.update(msg[i:48])
        assert cp.digest() == pyca_cmac(key, msg), i
        assert ctx.digest() == pyca_cmac(key, msg[:48]), i


def test_context_types_and_errors():
    obj = aeskit.AESCMAC(bytes(16))
    ctx = obj.new()
    with pytest.raises(TypeError):
        ctx.update("text")
    with pytest.raises(TypeError):
        ctx.update(None)
    with pytest.raises(TypeError):
        ctx.verify("00" * 16)
    with pytest.raises(TypeError):
        obj.new(b"a", b"b")
    assert obj.new(None).digest() == obj.mac(b"")
    with pytest.raises(TypeError):
        aeskit.MACContext()
    with pytest.raises(TypeError):
        obj.mac()
    with pytest.raises(TypeError):
        obj.mac("text")
    with pytest.raises(TypeError):
        obj.verify(b"")
    with pytest.raises(TypeError):
        obj.verify(b"", None)


def test_shared_context_from_two_threads(backend):
    """Two threads hammer one context with long updates (the GIL released): each update
    raises RuntimeError or is taken whole, and the digest covers exactly the ones taken."""
    big = bytes(64 * 1024)
    obj = aeskit.AESCMAC(rand(16, 16), backend=backend)
    ctx = obj.new()
    taken, raised, errors = [], [], []
    lock = threading.Lock()
    barrier = threading.Barrier(2)

    def work():
        try:
            barrier.wait()
            for _ in range(3):
                try:
                    ctx.update(big)
                except RuntimeError as e:
                    with lock:
                        raised.append(e)
                    continue
                with lock:
                    taken.append(1)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert taken and len(taken) + len(raised) == 6
    assert ctx.digest() == obj.mac(big * len(taken))


def test_key_object_shared_by_threads(backend):
    obj = aeskit.AESCMAC(rand(17, 32), backend=backend)
    msgs = [rand(100 + i, 3000 + 97 * i) for i in range(8)]
    want = [pyca_cmac(rand(17, 32), m) for m in msgs]
    results = {}

    def work(i):
        results[i] = [obj.mac(m) for m in msgs]

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(r == want for r in results.values())


# ---------------------------------------------------------------- construction

def test_constructor():
    for ks in KEY_SIZES:
        obj = aeskit.AESCMAC(bytes(ks))
        assert obj.key_size == 8 * ks and obj.tag_length == 16
        assert obj.backend == aeskit.backends().default
        assert repr(obj) == (f"<aeskit.AESCMAC key_size={8 * ks} tag_length=16 "
                             f"backend={obj.backend}>")
    for t in TAG_LENGTHS:
        assert aeskit.AESCMAC(bytes(16), tag_length=t).tag_length == t
    for t in BAD_TAG_LENGTHS:
        with pytest.raises(ValueError, match="tag_length must be 4 to 16"):
            aeskit.AESCMAC(bytes(16), tag_length=t)
    for n in (0, 8, 15, 17, 31, 33, 64):
        with pytest.raises(ValueError, match="key must be 16, 24 or 32 bytes"):
            aeskit.AESCMAC(bytes(n))
    with pytest.raises(TypeError):
        aeskit.AESCMAC(bytes(16), 8)  # tag_length is keyword-only
    with pytest.raises(TypeError):
        aeskit.AESCMAC("0" * 16)
    with pytest.raises(ValueError, match="backend"):
        aeskit.AESCMAC(bytes(16), backend="nonesuch")


def test_same_key_same_tag_across_objects():
    """No hidden state: two objects from one key agree, and a digest of a hashlib-style
    fingerprint of many tags is stable across backends."""
    key = rand(18, 16)
    fps = set()
    for be in aeskit.backends().available:
        obj = aeskit.AESCMAC(key, backend=be)
        fps.add(hashlib.sha256(b"".join(obj.mac(rand(i, i)) for i in range(200))).hexdigest())
    assert len(fps) == 1
