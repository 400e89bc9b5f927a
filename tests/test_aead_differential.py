"""Differential tests of the AEADs (GCM, OCB3, CCM, EAX, XAES-256-GCM) against
pyca/cryptography and pycryptodome (every reference that takes the parameters; for
XAES-256-GCM, which neither has, the spec's construction over pyca's AES and AESGCM), and
every backend against "portable".

hypothesis draws data and AAD lengths weighted to where kernels hand over to their tails:
every length 0..(3W+2)*16+17 for W the widest batch, multiples of every backend's batch
+-{0, 1, 15, 16, 17}, and 10,000 +-17 (the batches as the backends export them:
helpers.BATCHES); nonce and tag lengths over everything each mode allows.
"""

import hashlib
import mmap
import threading

import aeskit
from aeskit import _aeskit
import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from aead_helpers import (
    AEAD,
    AEADS,
    BATCHES,
    WIDE_BATCH,
    GuardedBuffer,
    boundary_lengths,
    chunks,
    new_aead,
    rand,
    ref_libs,
    ref_open,
    ref_seal,
    spec_params,
    stream_open,
    stream_seal,
    zero_map,
)
from conftest import BACKENDS

GCM = AEAD["GCM"]
BOUNDARY = boundary_lengths()
lengths = st.one_of(
    st.sampled_from(BOUNDARY),
    st.integers(0, (3 * WIDE_BATCH + 2) * 16 + 17),
    st.integers(10000 - 17, 10000 + 17),
)
aad_lengths = st.one_of(st.just(0), lengths)
seeds = st.integers(0, 2**64 - 1)
offsets = st.one_of(st.just(0), st.integers(1, 15))


def nonces(spec):
    """The usual length half the time (12: GCM's fast path, OCB's usual; XAES-256-GCM's
    24), otherwise any allowed length that a reference takes (not EAX's empty nonce:
    tests/test_eax.py has it)."""
    referenced = [n for n in spec.nonce_lengths if n not in spec.unreferenced_nonces]
    return st.one_of(st.just(spec.nonce_len), st.sampled_from(referenced)).flatmap(
        lambda n: st.binary(min_size=n, max_size=n))


def tag_lengths(spec):
    return st.one_of(st.just(16), st.sampled_from(spec.tag_lengths))




def spec_ks_params(specs):
    """(spec, key size) for every key size each spec takes."""
    return pytest.mark.parametrize("spec,ks", [pytest.param(spec, ks, id=f"{spec.name}-{ks}")
                                               for spec in specs for ks in spec.key_sizes])


spec_param = pytest.mark.parametrize("spec", spec_params(AEADS))


@spec_ks_params(AEADS)
@given(data=st.data(), n=lengths, na=aad_lengths, seed=seeds)
def test_one_shot_matches_references(backend, spec, ks, data, n, na, seed):
    nonce = data.draw(nonces(spec), label="nonce")
    t = data.draw(tag_lengths(spec), label="tag_length")
    key, pt, aad = rand(seed, ks), rand(seed + 1, n), rand(seed + 2, na)
    obj = new_aead(spec, key, tag_length=t, backend=backend)
    sealed = obj.encrypt(nonce, pt, aad)
    assert type(sealed) is bytes and len(sealed) == n + t
    libs = ref_libs(spec, len(nonce), t)
    assert libs
    for lib in libs:
        assert sealed == ref_seal(spec, key, nonce, pt, aad, t, lib=lib), lib
    assert obj.decrypt(nonce, sealed, aad) == pt
    assert ref_open(spec, key, nonce, sealed, aad, t) == pt
    if backend != "portable":
        port = new_aead(spec, key, tag_length=t, backend="portable")
        assert port.encrypt(nonce, pt, aad) == sealed
        assert port.decrypt(nonce, sealed, aad) == pt


# Blocks of AAD and data together on modes/gcm.c's one-shot short path.
GCM_SHORT = _aeskit.mode_constants("GCM")["short_blocks"]


@pytest.mark.parametrize("ks", GCM.key_sizes)
def test_gcm_one_shot_short_path(backend, ks):
    """Every AAD length 0..3*16+1, each with every data length 0..48 and every length within
    17 bytes of where AAD and data together pass GCM_SHORT blocks, so the short path
    (aeskit_gcm_oneshot: a 12-byte nonce, AAD and data of at most GCM_SHORT blocks
    together) meets every padding and hands over to the long one at every split: sealed
    and opened one-shot, and in place, against OpenSSL; a flipped tag bit is refused and
    zeroes the buffer."""
    key, nonce = rand(ks, ks), rand(ks + 1, 12)
    obj = new_aead(GCM, key, backend=backend)
    pt_all, aad_all = rand(ks + 2, (GCM_SHORT + 2) * 16), rand(ks + 3, 3 * 16 + 1)
    for na in range(3 * 16 + 2):
        aad = aad_all[:na]
        edge = 16 * (GCM_SHORT - (na + 15) // 16)
        for n in sorted(set(range(49)) | set(range(edge - 17, edge + 18))):
            pt = pt_all[:n]
            sealed = ref_seal(GCM, key, nonce, pt, aad)
            assert obj.encrypt(nonce, pt, aad) == sealed, (na, n)
            assert obj.decrypt(nonce, sealed, aad) == pt, (na, n)
            buf = bytearray(sealed)
            assert obj.decrypt_into(nonce, buf, aad, buf) == n
            assert buf[:n] == pt, (na, n)
        bad = bytearray(sealed)
        bad[-1] ^= 1
        with pytest.raises(aeskit.InvalidTag):
            obj.decrypt_into(nonce, bad, aad, bad)
        assert not any(bad[:n]), na


@spec_ks_params([spec for spec in AEADS if spec.streams])
@given(data=st.data(), n=lengths, na=aad_lengths, seed=seeds)
def test_streaming_splits_match_one_shot(backend, spec, ks, data, n, na, seed):
    """Any split of AAD and data into calls, empty calls included, update and update_into
    mixed, equals one-shot, both directions."""
    nonce = data.draw(nonces(spec), label="nonce")
    t = data.draw(tag_lengths(spec), label="tag_length")
    key, pt, aad = rand(seed, ks), rand(seed + 1, n), rand(seed + 2, na)
    obj = new_aead(spec, key, tag_length=t, backend=backend)
    sealed = ref_seal(spec, key, nonce, pt, aad, t)
    ct, tag = sealed[:n], sealed[n:]
    cuts = data.draw(st.lists(st.integers(0, n), max_size=8), label="cuts")
    acuts = data.draw(st.lists(st.integers(0, na), max_size=5), label="aad_cuts")
    into = data.draw(st.lists(st.booleans(), min_size=len(cuts) + 1, max_size=len(cuts) + 1),
                     label="use_into")
    assert stream_seal(obj, spec, nonce, pt, chunks(aad, acuts), chunks(pt, cuts),
                       into) == (ct, tag)
    assert stream_open(obj, spec, nonce, tag, chunks(aad, acuts), chunks(ct, cuts),
                       into) == pt


@spec_ks_params(AEADS)
@given(data=st.data(), n=lengths, na=aad_lengths, seed=seeds, off=offsets)
def test_in_place(backend, spec, ks, data, n, na, seed, off):
    """encrypt_into with data at the start of buf, decrypt_into with buf the data itself,
    at an unaligned offset."""
    nonce = data.draw(nonces(spec), label="nonce")
    t = data.draw(tag_lengths(spec), label="tag_length")
    key, pt, aad = rand(seed, ks), rand(seed + 1, n), rand(seed + 2, na)
    obj = new_aead(spec, key, tag_length=t, backend=backend)
    sealed = ref_seal(spec, key, nonce, pt, aad, t)
    store = bytearray(b"\x77" * off) + pt + bytearray(t) + b"\x88" * 3
    mv = memoryview(store)
    assert obj.encrypt_into(nonce, mv[off:off + n], aad, mv[off:off + n + t]) == n + t
    assert store[off:off + n + t] == sealed
    assert obj.decrypt_into(nonce, mv[off:off + n + t], aad, mv[off:off + n + t]) == n
    assert store[off:off + n] == pt
    assert store[:off] == b"\x77" * off and store[off + n + t:] == b"\x88" * 3
    # The very same bytearray as data and buf.
    buf = bytearray(sealed)
    assert obj.decrypt_into(nonce, buf, aad, buf) == n
    assert buf[:n] == pt


@spec_ks_params(AEADS)
@given(data=st.data(), n=lengths, na=aad_lengths, seed=seeds, offs=st.tuples(*[offsets] * 5),
       slack=st.sampled_from([0, 1, 16, 100]), encrypting=st.booleans())
def test_unaligned_into(backend, spec, ks, data, n, na, seed, offs, slack, encrypting):
    nonce = data.draw(nonces(spec), label="nonce")
    t = data.draw(tag_lengths(spec), label="tag_length")
    key, pt, aad = rand(seed, ks), rand(seed + 1, n), rand(seed + 2, na)
    sealed = ref_seal(spec, key, nonce, pt, aad, t)
    src, want = (pt, sealed) if encrypting else (sealed, pt)
    k_off, n_off, a_off, d_off, o_off = offs

    def placed(b, off):
        return memoryview(bytearray(b"\xa5" * off) + b)[off:]

    sentinel = bytes((i * 37 + 11) & 0xFF for i in range(o_off + len(want) + slack))
    out = bytearray(sentinel)
    obj = new_aead(spec, placed(key, k_off), tag_length=t, backend=backend)
    fn = obj.encrypt_into if encrypting else obj.decrypt_into
    assert fn(placed(nonce, n_off), placed(src, d_off), placed(aad, a_off),
              memoryview(out)[o_off:]) == len(want)
    assert out[o_off:o_off + len(want)] == want
    assert out[:o_off] == sentinel[:o_off]
    assert out[o_off + len(want):] == sentinel[o_off + len(want):]


@pytest.mark.parametrize("spec,t", [pytest.param(spec, t, id=f"{spec.name}-{t}")
                                    for spec in AEADS for t in spec.tag_lengths])
def test_short_tags_write_exactly_tag_length(backend, spec, t):
    """Go #80288 wrote 16 tag bytes whatever the tag length."""
    key, nonce, pt = rand(1, min(spec.key_sizes)), rand(2, spec.nonce_len), rand(3, 40)
    obj = new_aead(spec, key, tag_length=t, backend=backend)
    buf = bytearray(b"\xee" * (40 + 16))
    assert obj.encrypt_into(nonce, pt, b"", buf) == 40 + t
    assert buf[:40 + t] == ref_seal(spec, key, nonce, pt, b"", t)
    assert buf[40 + t:] == b"\xee" * (16 - t)
    if not spec.streams:
        return
    enc = obj.encryptor(nonce)
    enc.update(pt)
    enc.finalize()
    assert len(enc.tag) == t


# The two 512 MiB tests below on every backend but portable, which runs them only where it
# is the sole backend (the default). What they check is not a kernel's: the length block
# is modes/gcm.c's (lengths_block, shared by every backend) and the chunking the glue's;
# portable's kernels at every length and batch hand-over are test_wide_aead's and
# test_wide_boundaries'. Portable's bitsliced GCM is an order of magnitude slower than
# aesni: these two took 39 + 7.5 s on it, against 2.8 + under 1.5 on aesni (Zen 3, 2 busy
# cores, pytest --durations), the suite's second-longest test.
LARGE_BACKENDS = tuple(b for b in BACKENDS if b != "portable") or ("portable",)
large_backends = pytest.mark.parametrize("backend", LARGE_BACKENDS, indirect=True)


@large_backends
def test_large_aad_bit_length(backend):
    """GCM's length block holds bit counts in 64 bits: 2^29 + 16 bytes of AAD is more than
    2^32 bits (wrong tags for AAD >= 512 MB in the wild). A NORESERVE zero mapping costs no
    memory."""
    n = 2**29 + 16
    m = zero_map(n)
    try:
        key, nonce, pt = rand(5, 16), rand(6, 12), rand(7, 33)
        obj = new_aead(GCM, key, backend=backend)
        sealed = obj.encrypt(nonce, pt, m)
        assert sealed == ref_seal(GCM, key, nonce, pt, memoryview(m))
        assert obj.decrypt(nonce, sealed, m) == pt
    finally:
        m.close()


@spec_param
def test_mmap_inputs(backend, spec):
    """Inputs straight from an mmap (read-only), as large-file users pass them."""
    n = 3 * 4096 + 5
    m = mmap.mmap(-1, n)
    m.write(rand(8, n))
    ro = zero_map(4096)
    key, nonce = rand(9, 32), rand(10, spec.nonce_len)
    obj = new_aead(spec, key, backend=backend)
    sealed = obj.encrypt(nonce, m, ro)
    assert sealed == ref_seal(spec, key, nonce, m[:], bytes(4096))
    m.close()
    ro.close()


@large_backends
def test_large_plaintext_bit_length(backend):
    """2^29 + 16 bytes of plaintext is more than 2^32 bits (wrong tags past 2 GB and decrypt
    failures past 256 MiB in the wild): encrypt_into, then decrypt_into in place, against
    pyca/cryptography streaming over the same zero pages."""
    n = 2**29 + 16
    zeros = zero_map(n)
    key, nonce, aad = rand(11, 16), rand(12, 12), b"big"
    enc = Cipher(algorithms.AES(key), modes.GCM(nonce)).encryptor()
    enc.authenticate_additional_data(aad)
    want_hash = hashlib.sha256()
    for i in range(0, n, 1 << 24):
        want_hash.update(enc.update(memoryview(zeros)[i:i + (1 << 24)]))
    enc.finalize()
    buf = mmap.mmap(-1, n + 16)
    try:
        obj = new_aead(GCM, key, backend=backend)
        assert obj.encrypt_into(nonce, zeros, aad, buf) == n + 16
        assert buf[n:] == enc.tag
        assert hashlib.sha256(memoryview(buf)[:n]).digest() == want_hash.digest()
        assert obj.decrypt_into(nonce, buf, aad, buf) == n
        assert not np.frombuffer(buf, dtype=np.uint8, count=n).any()
    finally:
        buf.close()
        zeros.close()


@pytest.mark.parametrize("spec", spec_params(AEADS))
@pytest.mark.parametrize("length", sorted(
    {0, 1, 15, 16, 17, 31, 32, 255, 256, 257, 4096, 4097}
    | {16 * b + d for b in BATCHES for d in (-16, -1, 0, 1, 15, 16)}))
def test_no_access_past_the_end(backend, spec, length):
    """Every input and output ends right before an unmapped page (bytes objects have slack
    that hides a few bytes of over-read)."""
    nl = spec.nonce_len
    key, nonce = GuardedBuffer(32, rand(1, 32)), GuardedBuffer(nl, rand(2, nl))
    obj = new_aead(spec, key.view, backend=backend)
    pt = GuardedBuffer(length, rand(3, length))
    aad = GuardedBuffer(length % 37 + (length & 16), rand(4, length % 37 + (length & 16)))
    want = ref_seal(spec, bytes(key.view), bytes(nonce.view), bytes(pt.view), bytes(aad.view))
    out = GuardedBuffer(length + 16)
    assert obj.encrypt_into(nonce.view, pt.view, aad.view, out.view) == length + 16
    assert bytes(out.view) == want
    assert obj.encrypt(nonce.view, pt.view, aad.view) == want
    back = GuardedBuffer(length)
    assert obj.decrypt_into(nonce.view, out.view, aad.view, back.view) == length
    assert bytes(back.view) == bytes(pt.view)
    assert obj.decrypt_into(nonce.view, out.view, aad.view, out.view) == length  # in place
    assert bytes(out.view[:length]) == bytes(pt.view)
    if not spec.streams:
        return
    # Streaming over guarded pieces, and the tag through a guarded buffer.
    ctx = obj.encryptor(nonce.view)
    ctx.authenticate_additional_data(aad.view)
    third = GuardedBuffer(length // 3, bytes(pt.view[:length // 3]))
    rest = GuardedBuffer(length - length // 3, bytes(pt.view[length // 3:]))
    got = ctx.update(third.view) + ctx.update(rest.view) + ctx.finalize()
    assert got + ctx.tag == want
    dec = obj.decryptor(nonce.view)
    dec.authenticate_additional_data(aad.view)
    ct = GuardedBuffer(length, want[:length])
    tag = GuardedBuffer(16, want[length:])
    assert dec.update(ct.view) + dec.finalize_with_tag(tag.view) == bytes(pt.view)


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_shared_key_object_threads(backend, spec):
    """4 threads share one key object: one-shot, _into and streaming equal serial use."""
    key = rand(13, 32)
    obj = new_aead(spec, key, backend=backend)
    sizes = [0, 16, 161, 4096, 1 << 14, (1 << 20) + 33]
    jobs = [(t, rand(t * 10 + k, spec.nonce_len), rand(t * 10 + k, n), rand(k, k * 7))
            for t in range(4) for k, n in enumerate(sizes)]
    serial = {(t, nonce): obj.encrypt(nonce, data, aad) for t, nonce, data, aad in jobs}
    results, errors = {}, []
    barrier = threading.Barrier(4)

    def work(me):
        try:
            barrier.wait()
            for t, nonce, data, aad in jobs:
                if t != me:
                    continue
                sealed = obj.encrypt(nonce, data, aad)
                assert obj.decrypt(nonce, sealed, aad) == data
                s = sealed
                if spec.streams:
                    ctx = obj.encryptor(nonce)
                    ctx.authenticate_additional_data(aad)
                    s = ctx.update(data[:len(data) // 2]) + ctx.update(data[len(data) // 2:])
                    s += ctx.finalize() + ctx.tag
                buf = bytearray(data) + bytearray(16)
                obj.encrypt_into(nonce, memoryview(buf)[:len(data)], aad, buf)
                assert sealed == s == buf
                results[(t, nonce)] = sealed
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    assert not errors, errors
    assert results == serial
    t, nonce, data, aad = jobs[-1]
    assert serial[(t, nonce)] == ref_seal(spec, key, nonce, data, aad)
