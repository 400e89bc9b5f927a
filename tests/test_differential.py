"""Differential tests against pyca/cryptography, and every backend against "portable".

hypothesis draws lengths weighted to the places kernels hand over to their tails: every
block boundary up to (3W+2)*16+17 for W the widest batch, and multiples of every backend's
batch (helpers.BATCHES, as the backends export them), each +-1, 15, 16, 17.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (
    BATCH_STEP,
    CIPHERS,
    KEY_SIZES,
    WIDE_BATCH,
    chunks,
    decrypt,
    decrypt_into,
    encrypt,
    encrypt_into,
    fit,
    new,
    op,
    ref,
    spec_params,
    stream_len,
)

MAX_LEN = max(4096, (3 * WIDE_BATCH + 2) * 16 + 17)
_DELTAS = (0, 1, -1, 15, -15, 16, -16, 17, -17)
BOUNDARY_LENGTHS = sorted(
    {n for n in range(48)}
    | {b + d for b in range(0, MAX_LEN + 1, 16 * BATCH_STEP) for d in _DELTAS
       if 0 <= b + d <= MAX_LEN}
    | {b + d for b in range(0, (3 * WIDE_BATCH + 2) * 16 + 18, 16) for d in (0, 1, -1)
       if b + d >= 0}
)

lengths = st.one_of(st.sampled_from(BOUNDARY_LENGTHS), st.integers(0, MAX_LEN))
seeds = st.integers(0, 2**64 - 1)
offsets = st.one_of(st.integers(1, 15), st.just(0))


def _near_wrap(width, k, rnd):
    """rnd's leading bytes, then the low `width` bytes equal to 2**(8*width)-1-k."""
    return rnd[:16 - width] + ((1 << (8 * width)) - 1 - k).to_bytes(width, "big")


ivs = st.one_of(
    st.binary(min_size=16, max_size=16),
    st.builds(_near_wrap, st.sampled_from([4, 8, 12, 16]), st.integers(0, 40),
              st.binary(min_size=16, max_size=16)),
)


def _rand(seed, n):
    return random.Random(seed).randbytes(n)


spec_param = pytest.mark.parametrize("spec", spec_params(CIPHERS))
ks_param = pytest.mark.parametrize("ks", KEY_SIZES)


@spec_param
@ks_param
@given(n=lengths, seed=seeds, iv=ivs)
def test_one_shot_matches_reference(backend, spec, ks, n, seed, iv):
    n = fit(spec, n)
    key, pt, junk = _rand(seed, ks), _rand(seed + 1, n), _rand(seed + 2, n)
    obj = new(spec, key, backend=backend)
    ct = encrypt(obj, spec, iv, pt)
    assert type(ct) is bytes
    assert ct == ref(spec, key, iv, pt, "encrypt")
    assert decrypt(obj, spec, iv, ct) == pt
    # Decrypting data that is not our own ciphertext is its own code path (CBC, CFB).
    dj = decrypt(obj, spec, iv, junk)
    assert dj == ref(spec, key, iv, junk, "decrypt")
    if backend != "portable":
        port = new(spec, key, backend="portable")
        assert encrypt(port, spec, iv, pt) == ct
        assert decrypt(port, spec, iv, junk) == dj


@spec_param
@ks_param
@given(data=st.data(), n=lengths, seed=seeds, iv=ivs)
def test_streaming_splits_match_one_shot(backend, spec, ks, data, n, seed, iv):
    n = fit(spec, n)
    key, pt = _rand(seed, ks), _rand(seed + 1, n)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=10), label="cuts")
    use_into = data.draw(st.lists(st.booleans(), min_size=len(cuts) + 1,
                                  max_size=len(cuts) + 1), label="use_into")
    direction = data.draw(st.sampled_from(["encrypt", "decrypt"]), label="direction")
    want = ref(spec, key, iv, pt, direction)
    obj = new(spec, key, backend=backend)
    ctx = op(obj, spec, iv, direction)
    out, pending = [], 0
    for piece, into in zip(chunks(pt, cuts), use_into):
        need = stream_len(spec, pending, len(piece))
        if into:
            buf = bytearray(need)
            assert ctx.update_into(piece, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(piece)
            assert type(got) is bytes
            assert len(got) == need
            out.append(got)
        pending += len(piece) - need
    tail = ctx.finalize()
    assert len(tail) == pending
    assert b"".join(out) + tail == want


@spec_param
@ks_param
@given(n=lengths, seed=seeds, iv=ivs, in_off=offsets, out_off=offsets, key_off=offsets,
       slack=st.sampled_from([0, 1, 16, 100]), encrypting=st.booleans())
def test_unaligned_into(backend, spec, ks, n, seed, iv, in_off, out_off, key_off, slack,
                        encrypting):
    n = fit(spec, n)
    key, src = _rand(seed, ks), _rand(seed + 1, n)
    key_store = bytearray(key_off + ks)
    key_store[key_off:] = key
    iv_store = bytearray(b"\xa5" * in_off) + iv
    in_store = bytearray(b"\x5a" * in_off) + src
    sentinel = bytes((i * 37 + 11) & 0xFF for i in range(out_off + n + slack))
    out_store = bytearray(sentinel)
    obj = new(spec, memoryview(key_store)[key_off:], backend=backend)
    fn = encrypt_into if encrypting else decrypt_into
    got = fn(obj, spec, memoryview(iv_store)[in_off:], memoryview(in_store)[in_off:],
             memoryview(out_store)[out_off:])
    assert got == n
    want = ref(spec, key, iv, src, "encrypt" if encrypting else "decrypt")
    assert out_store[out_off:out_off + n] == want
    # Nothing written outside [out_off, out_off + n), input untouched.
    assert out_store[:out_off] == sentinel[:out_off]
    assert out_store[out_off + n:] == sentinel[out_off + n:]
    assert in_store[in_off:] == src


# A quarter of the profile's examples for the two tests below, whose ground the sweeps
# cover exhaustively: in place (buf, buf) at every length around every batch hand-over on
# every backend, mode and key size is test_wide_boundaries.py::test_every_length, at every
# offset 1..15 its test_unaligned; a one-shot seal opened in pieces is
# test_streaming.py::test_every_two_way_split and test_every_three_way_split (every split
# point, both directions, against pyca) and test_streaming_splits_match_one_shot above (up
# to 10 random cuts at these lengths). They took 117 s of the README run's 1690 s of test
# time (Zen 3, 2 busy cores), a quarter of the hypothesis tests of this file.
covered = settings(max_examples=max(10, settings.default.max_examples // 4))


@spec_param
@ks_param
@covered
@given(n=lengths, seed=seeds, iv=ivs, off=offsets)
def test_in_place(backend, spec, ks, n, seed, iv, off):
    n = fit(spec, n)
    key, pt = _rand(seed, ks), _rand(seed + 1, n)
    obj = new(spec, key, backend=backend)
    ct = ref(spec, key, iv, pt, "encrypt")
    # The very same object as data and buf.
    buf = bytearray(pt)
    assert encrypt_into(obj, spec, iv, buf, buf) == n
    assert buf == ct
    assert decrypt_into(obj, spec, iv, buf, buf) == n
    assert buf == pt
    # Two distinct memoryviews of the same memory at the same (unaligned) offset.
    store = bytearray(b"\x77" * off) + pt + b"\x88" * 3
    a = memoryview(store)[off:off + n]
    b = memoryview(store)[off:off + n]
    assert encrypt_into(obj, spec, iv, a, b) == n
    assert store[off:off + n] == ct
    assert decrypt_into(obj, spec, iv, b, a) == n
    assert store == bytearray(b"\x77" * off) + pt + b"\x88" * 3


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=False, steals=False))
@ks_param
@given(data=st.data(), n=lengths, seed=seeds, iv=ivs)
def test_streaming_in_place(backend, spec, ks, data, n, seed, iv):
    key, pt = _rand(seed, ks), _rand(seed + 1, n)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6), label="cuts")
    obj = new(spec, key, backend=backend)
    buf = bytearray(pt)
    mv = memoryview(buf)
    ctx = op(obj, spec, iv, "encrypt")
    pos = 0
    for piece in chunks(range(n), cuts):
        m = len(piece)
        assert ctx.update_into(mv[pos:pos + m], mv[pos:pos + m]) == m
        pos += m
    assert ctx.finalize() == b""
    assert buf == ref(spec, key, iv, pt, "encrypt")


@spec_param
@ks_param
@covered
@given(n=lengths, seed=seeds, iv=ivs)
def test_round_trip_through_streaming(backend, spec, ks, n, seed, iv):
    """encrypt one-shot, decrypt in 3 updates (and the reverse) gives the input back."""
    n = fit(spec, n)
    key, pt = _rand(seed, ks), _rand(seed + 1, n)
    obj = new(spec, key, backend=backend)
    ct = encrypt(obj, spec, iv, pt)
    d = op(obj, spec, iv, "decrypt")
    third = n // 3
    back = d.update(ct[:third]) + d.update(ct[third:2 * third + 1]) + d.update(ct[2 * third + 1:])
    assert back + d.finalize() == pt
    e = op(obj, spec, iv, "encrypt")
    ct2 = e.update(pt[:1]) + e.update(pt[1:]) + e.finalize()
    assert ct2 == ct
    assert decrypt(obj, spec, iv, ct2) == pt
