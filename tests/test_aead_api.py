"""The AEAD Python surface (AESGCM, AESOCB3, AESCCM): construction, generate_key, nonce and
tag lengths, argument types and keywords, `_into` buffers and overlap, accepted buffer types,
streaming contexts for the AEADs that stream (not CCM), and the length limits of those that
have a fixed one, GCM's (LimitExceeded before any work, one-shot and cumulative; CCM's
depend on the nonce: test_ccm.py)."""

import array
import json
import mmap
import os
import subprocess
import sys
import textwrap

import aeskit
import numpy as np
import pytest

from aead_helpers import (
    AEADS,
    aead_cls,
    new_aead,
    rand,
    ref_libs,
    ref_seal,
    spec_params,
)

KEY = bytes(range(0x10, 0x30))
NONCE = bytes(range(0x40, 0x58))


def key_of(spec):
    """The suite's key: 16 bytes, or as many as the mode's shortest (XAES-256-GCM: 32)."""
    return KEY[:min(spec.key_sizes)]


def nonce_of(spec):
    """The suite's nonce at the mode's usual length (aead_helpers.AeadSpec.nonce_len)."""
    return NONCE[:spec.nonce_len]
AAD = b"header"
DATA = bytes(range(40))
NON_BUFFERS = ["0123456789abcdef", 16, list(range(16)), 1.5, object()]

spec_param = pytest.mark.parametrize("spec", spec_params(AEADS))


def _ids(x):
    return type(x).__name__


def _sealed(spec, t=16, key=None, nonce=None, data=DATA, aad=AAD):
    key = key_of(spec) if key is None else key
    nonce = nonce_of(spec) if nonce is None else nonce
    return ref_seal(spec, key, nonce, data, aad, t)


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("spec,ks", [pytest.param(spec, ks, id=f"{ks}-{spec.name}")
                                     for spec in AEADS for ks in spec.key_sizes])
def test_attributes(backend, backends_info, spec, ks):
    for t in spec.tag_lengths:
        obj = new_aead(spec, bytes(ks), tag_length=t, backend=backend)
        assert obj.backend == backend
        assert obj.key_size == ks * 8
        assert obj.tag_length == t
    auto = aead_cls(spec)(bytes(ks))
    assert auto.backend == backends_info.default
    assert auto.tag_length == 16
    assert aead_cls(spec)(bytes(ks), backend="auto").backend == backends_info.default


@spec_param
def test_attributes_are_read_only(spec):
    obj = aead_cls(spec)(key_of(spec))
    for attr, value in (("backend", "portable"), ("key_size", 256), ("tag_length", 8)):
        with pytest.raises((AttributeError, TypeError)):
            setattr(obj, attr, value)


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS + [None], ids=_ids)
def test_key_not_a_buffer(spec, bad):
    with pytest.raises(TypeError):
        aead_cls(spec)(bad)


@spec_param
@pytest.mark.parametrize("n", [0, 1, 8, 15, 16, 17, 20, 23, 24, 25, 31, 32, 33, 48, 64])
def test_key_bad_length(spec, n):
    if n in spec.key_sizes:
        return
    with pytest.raises(ValueError) as ei:
        aead_cls(spec)(bytes(n))
    msg = str(ei.value)
    for size in spec.key_sizes:
        assert str(size) in msg, msg


@spec_param
def test_keyword_only_options(spec):
    """backend= is keyword-only; tag_length too, unless the spec takes it second (pyca's
    AESCCM(key, tag_length))."""
    if spec.tag_positional:
        assert aead_cls(spec)(key_of(spec), 8).tag_length == 8
        assert aead_cls(spec)(key_of(spec), 8, backend="portable").backend == "portable"
    else:
        with pytest.raises(TypeError):
            aead_cls(spec)(key_of(spec), 16)
    with pytest.raises(TypeError):
        aead_cls(spec)(key_of(spec), 16, "portable")
    with pytest.raises(TypeError):
        aead_cls(spec)(key_of(spec), tag_length=16, nonsense=1)
    assert aead_cls(spec)(key=key_of(spec)).key_size == 8 * len(key_of(spec))


@spec_param
def test_unknown_backend(spec, backends_info):
    with pytest.raises(ValueError) as ei:
        aead_cls(spec)(key_of(spec), backend="no-such-backend")
    assert "no-such-backend" in str(ei.value) or any(b in str(ei.value)
                                                     for b in backends_info.all)


@spec_param
@pytest.mark.parametrize("t", sorted({t for spec in AEADS for t in spec.bad_tag_lengths}))
def test_bad_tag_length(spec, t):
    if t in spec.tag_lengths:
        assert aead_cls(spec)(key_of(spec), tag_length=t).tag_length == t
        return
    with pytest.raises(ValueError) as ei:
        aead_cls(spec)(key_of(spec), tag_length=t)
    assert "tag" in str(ei.value).lower(), str(ei.value)


@spec_param
@pytest.mark.parametrize("bad", [16.0, "16", b"\x10", None], ids=_ids)
def test_tag_length_wrong_type(spec, bad):
    with pytest.raises(TypeError):
        aead_cls(spec)(key_of(spec), tag_length=bad)


# ---------------------------------------------------------------- generate_key

@pytest.mark.parametrize("spec,bits", [pytest.param(spec, 8 * ks, id=f"{spec.name}-{8 * ks}")
                                       for spec in AEADS for ks in spec.key_sizes])
def test_generate_key(backend, spec, bits):
    cls = aead_cls(spec)
    k1, k2 = cls.generate_key(bits), cls.generate_key(bits)
    assert type(k1) is bytes and len(k1) == bits // 8
    assert k1 != k2
    obj = cls(k1, backend=backend)
    assert obj.key_size == bits
    assert obj.encrypt(nonce_of(spec), DATA, None) == ref_seal(spec, k1, nonce_of(spec), DATA, b"")
    assert type(cls(key_of(spec)).generate_key(bits)) is bytes  # a classmethod, also via an instance


@spec_param
def test_generate_key_keyword(spec):
    """pyca/cryptography's generate_key takes bit_length= by name too."""
    ks = spec.key_sizes[len(spec.key_sizes) // 2]
    assert len(aead_cls(spec).generate_key(bit_length=8 * ks)) == ks


@spec_param
@pytest.mark.parametrize("bits", [0, -128, 64, 127, 129, 255, 257, 384, 512, 1024])
def test_generate_key_bad_size(spec, bits):
    with pytest.raises(ValueError):
        aead_cls(spec).generate_key(bits)


@spec_param
@pytest.mark.parametrize("bad", [128.0, "128", None, b"\x80", [128]], ids=_ids)
def test_generate_key_wrong_type(spec, bad):
    if bad is None and len(spec.key_sizes) == 1:   # its one size is the default (XAES)
        assert len(aead_cls(spec).generate_key(bad)) == spec.key_sizes[0]
        return
    with pytest.raises(TypeError):
        aead_cls(spec).generate_key(bad)


# ---------------------------------------------------------------- nonces

@spec_param
def test_nonce_lengths_accepted(backend, spec):
    for ks in spec.key_sizes:
        key = rand(ks, ks)
        obj = new_aead(spec, key, backend=backend)
        for nl in spec.nonce_lengths + ((200, 1000) if spec.nonce_max is None else ()):
            nonce = rand(nl, nl)
            sealed = obj.encrypt(nonce, DATA, AAD)
            libs = ref_libs(spec, nl, 16)
            if libs:
                assert sealed == ref_seal(spec, key, nonce, DATA, AAD), nl
            assert obj.decrypt(nonce, sealed, AAD) == DATA
            if not spec.streams:
                continue
            enc = obj.encryptor(nonce)
            enc.authenticate_additional_data(AAD)
            assert enc.update(DATA) + enc.finalize() + enc.tag == sealed


@spec_param
def test_streaming_contexts_as_the_spec_says(spec):
    """encryptor() and decryptor() exist exactly for the AEADs that stream."""
    obj = aead_cls(spec)(key_of(spec))
    for name in ("encryptor", "decryptor"):
        assert hasattr(obj, name) == spec.streams, name
        assert hasattr(aead_cls(spec), name) == spec.streams, name


def _all_entry_points(obj, nonce, data=DATA, aad=AAD, buf=None):
    """Every call that takes a nonce; the streaming ones where the type has them
    (test_streaming_contexts_as_the_spec_says)."""
    buf = bytearray(100) if buf is None else buf
    return [
        ("encrypt", lambda: obj.encrypt(nonce, data, aad)),
        ("decrypt", lambda: obj.decrypt(nonce, data, aad)),
        ("encrypt_into", lambda: obj.encrypt_into(nonce, data, aad, buf)),
        ("decrypt_into", lambda: obj.decrypt_into(nonce, data, aad, buf)),
    ] + ([] if not hasattr(obj, "encryptor") else [
        ("encryptor", lambda: obj.encryptor(nonce)),
        ("decryptor", lambda: obj.decryptor(nonce)),
    ])


@spec_param
def test_nonce_bad_length(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    for nl in spec.bad_nonce_lengths:
        for label, call in _all_entry_points(obj, bytes(nl), data=sealed):
            with pytest.raises(ValueError) as ei:
                call()
            assert not isinstance(ei.value, aeskit.InvalidTag), (label, nl)
            assert "nonce" in str(ei.value).lower(), (label, str(ei.value))


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS + [None], ids=_ids)
def test_nonce_not_a_buffer(backend, spec, bad):
    obj = new_aead(spec, key_of(spec), backend=backend)
    for _label, call in _all_entry_points(obj, bad):
        with pytest.raises(TypeError):
            call()


# ---------------------------------------------------------------- data, AAD, keywords

@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS + [None], ids=_ids)
def test_data_not_a_buffer(backend, spec, bad):
    obj = new_aead(spec, key_of(spec), backend=backend)
    for _label, call in _all_entry_points(obj, nonce_of(spec), data=bad)[:4]:
        with pytest.raises(TypeError):
            call()
    if not spec.streams:
        return
    for make in (obj.encryptor, obj.decryptor):
        with pytest.raises(TypeError):
            make(nonce_of(spec)).update(bad)
        with pytest.raises(TypeError):
            make(nonce_of(spec)).update_into(bad, bytearray(64))


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_aad_not_a_buffer(backend, spec, bad):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    for _label, call in _all_entry_points(obj, nonce_of(spec), data=sealed, aad=bad)[:4]:
        with pytest.raises(TypeError):
            call()
    if not spec.streams:
        return
    for make in (obj.encryptor, obj.decryptor):
        with pytest.raises(TypeError):
            make(nonce_of(spec)).authenticate_additional_data(bad)
    with pytest.raises(TypeError):
        obj.encryptor(nonce_of(spec)).authenticate_additional_data(None)


@spec_param
def test_aad_none_is_empty(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec, aad=b"")
    assert obj.encrypt(nonce_of(spec), DATA, None) == sealed == obj.encrypt(nonce_of(spec), DATA, b"")
    assert obj.decrypt(nonce_of(spec), sealed, None) == DATA
    buf = bytearray(len(sealed))
    assert obj.encrypt_into(nonce_of(spec), DATA, None, buf) == len(sealed) and buf == sealed
    assert obj.decrypt_into(nonce_of(spec), sealed, None, buf) == len(DATA) and buf[:40] == DATA


@spec_param
def test_keywords_like_pyca(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    assert obj.encrypt(nonce=nonce_of(spec), data=DATA, associated_data=AAD) == sealed
    assert obj.encrypt(nonce_of(spec), data=DATA, associated_data=AAD) == sealed
    assert obj.encrypt(nonce_of(spec), DATA, associated_data=AAD) == sealed
    assert obj.decrypt(nonce=nonce_of(spec), data=sealed, associated_data=AAD) == DATA
    buf = bytearray(len(sealed))
    assert obj.encrypt_into(nonce=nonce_of(spec), data=DATA, associated_data=AAD, buf=buf) == len(sealed)
    assert buf == sealed
    out = bytearray(len(DATA))
    assert obj.decrypt_into(nonce_of(spec), sealed, AAD, buf=out) == len(DATA)
    assert out == DATA


@spec_param
def test_wrong_argument_counts(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    with pytest.raises(TypeError):
        obj.encrypt(nonce_of(spec), DATA)  # associated_data is required, as in pyca
    with pytest.raises(TypeError):
        obj.encrypt(nonce_of(spec), DATA, AAD, bytearray(100))
    with pytest.raises(TypeError):
        obj.decrypt(nonce_of(spec), sealed)
    with pytest.raises(TypeError):
        obj.encrypt_into(nonce_of(spec), DATA, AAD)
    with pytest.raises(TypeError):
        obj.encrypt(nonce_of(spec), DATA, AAD, nonce=nonce_of(spec))
    with pytest.raises(TypeError):
        obj.encrypt(nonce_of(spec), DATA, associated_data=AAD, extra=1)
    if not spec.streams:
        return
    with pytest.raises(TypeError):
        obj.encryptor()
    with pytest.raises(TypeError):
        obj.encryptor(nonce_of(spec)).update()


@spec_param
def test_results(backend, spec):
    t = 12 if 12 in spec.tag_lengths else 16
    obj = new_aead(spec, key_of(spec), tag_length=t, backend=backend)
    src = bytearray(DATA)
    sealed = obj.encrypt(nonce_of(spec), src, AAD)
    assert type(sealed) is bytes and len(sealed) == len(DATA) + t
    assert src == DATA  # the input is never modified by the bytes-returning call
    opened = obj.decrypt(nonce_of(spec), bytearray(sealed), AAD)
    assert type(opened) is bytes and opened == DATA
    assert type(obj.encrypt_into(nonce_of(spec), DATA, AAD, bytearray(len(sealed)))) is int


# ---------------------------------------------------------------- _into buffers

@pytest.mark.parametrize("spec,t", [pytest.param(spec, t, id=f"{spec.name}-{t}")
                                    for spec in AEADS for t in (16, 8) if t in spec.tag_lengths])
def test_into_buffer_too_small(backend, spec, t):
    obj = new_aead(spec, key_of(spec), tag_length=t, backend=backend)
    sealed = _sealed(spec, t)
    for short in (0, 1, len(DATA) + t - 1):
        buf = bytearray(b"\xee" * short)
        with pytest.raises(ValueError, match=rf"\b{len(DATA) + t}\b"):
            obj.encrypt_into(nonce_of(spec), DATA, AAD, buf)
        assert buf == b"\xee" * short
    for short in (0, 1, len(DATA) - 1):
        buf = bytearray(b"\xee" * short)
        with pytest.raises(ValueError, match=rf"\b{len(DATA)}\b") as ei:
            obj.decrypt_into(nonce_of(spec), sealed, AAD, buf)
        assert not isinstance(ei.value, aeskit.InvalidTag)
        assert buf == b"\xee" * short


@spec_param
@pytest.mark.parametrize("make", [bytes, lambda n: memoryview(bytes(n))],
                         ids=["bytes", "readonly-memoryview"])
def test_into_readonly_buffer(backend, spec, make):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    with pytest.raises(TypeError):
        obj.encrypt_into(nonce_of(spec), DATA, AAD, make(100))
    with pytest.raises(TypeError):
        obj.decrypt_into(nonce_of(spec), sealed, AAD, make(100))
    for ctx in (obj.encryptor(nonce_of(spec)), obj.decryptor(nonce_of(spec))) if spec.streams else ():
        with pytest.raises(TypeError):
            ctx.update_into(DATA, make(100))


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS + [None], ids=_ids)
def test_into_buffer_not_a_buffer(backend, spec, bad):
    obj = new_aead(spec, key_of(spec), backend=backend)
    with pytest.raises(TypeError):
        obj.encrypt_into(nonce_of(spec), DATA, AAD, bad)
    with pytest.raises(TypeError):
        obj.decrypt_into(nonce_of(spec), _sealed(spec), AAD, bad)
    if spec.streams:
        with pytest.raises(TypeError):
            obj.encryptor(nonce_of(spec)).update_into(DATA, bad)


def _views(store, a, b, n, m):
    mv = memoryview(store)
    return mv[a:a + n], mv[b:b + m]


@spec_param
@pytest.mark.parametrize("shift", [1, -1, 15, -15, 16, -16, 17, 39, -39, 55, -55])
def test_into_partial_overlap(backend, spec, shift):
    """data and buf in one bytearray, `shift` bytes apart: refused when they overlap (a
    shift of 55 overlaps only the 56-byte sealed input of decrypt_into), nothing written;
    fine when they do not."""
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    n = len(DATA)
    for fn, src_len, out_len, src, want in ((obj.encrypt_into, n, n + 16, DATA, sealed),
                                            (obj.decrypt_into, n + 16, n, sealed, DATA)):
        store = bytearray(200)
        base = 70
        store[base:base + src_len] = src
        data, buf = _views(store, base, base + shift, src_len, out_len)
        overlap = base < base + shift + out_len and base + shift < base + src_len
        if not overlap:
            assert fn(nonce_of(spec), data, AAD, buf) == len(want)
            assert bytes(buf) == want
            continue
        before = bytes(store)
        with pytest.raises(ValueError) as ei:
            fn(nonce_of(spec), data, AAD, buf)
        assert not isinstance(ei.value, aeskit.InvalidTag)
        assert bytes(store) == before
    if abs(shift) < 48 and spec.streams:
        for ctx in (obj.encryptor(nonce_of(spec)), obj.decryptor(nonce_of(spec))):
            store = bytearray(range(200))
            data, buf = _views(store, 70, 70 + shift, 48, 48)
            with pytest.raises(ValueError):
                ctx.update_into(data, buf)


@spec_param
def test_into_adjacent_is_not_overlap(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    n = len(DATA)
    store = bytearray(DATA) + bytearray(n + 16)
    mv = memoryview(store)
    assert obj.encrypt_into(nonce_of(spec), mv[:n], AAD, mv[n:]) == n + 16
    assert store[n:] == sealed and store[:n] == DATA
    store = bytearray(n) + bytearray(sealed)
    mv = memoryview(store)
    assert obj.decrypt_into(nonce_of(spec), mv[n:], AAD, mv[:n]) == n
    assert store[:n] == DATA


@spec_param
def test_in_place(backend, spec):
    """The data itself as buf: decrypt with the very same object, encrypt with the data at
    the start of a buffer that has room for the tag."""
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    n = len(DATA)
    buf = bytearray(DATA) + bytearray(16)
    assert obj.encrypt_into(nonce_of(spec), memoryview(buf)[:n], AAD, buf) == n + 16
    assert buf == sealed
    assert obj.decrypt_into(nonce_of(spec), buf, AAD, buf) == n
    assert buf[:n] == DATA


# ---------------------------------------------------------------- buffer types

def _variants(data):
    n = len(data)
    mm = mmap.mmap(-1, max(n, 1))
    mm.write(data)

    def arr(code):
        a = array.array(code)
        a.frombytes(data)
        return a

    out = [
        ("bytes", data),
        ("bytearray", bytearray(data)),
        ("memoryview", memoryview(data)),
        ("memoryview-slice", memoryview(b"xyz" + data)[3:]),
        ("array-B", arr("B")),
        ("mmap", mm if n == len(mm) else memoryview(mm)[:n]),
        ("numpy-u8", np.frombuffer(data, dtype=np.uint8).copy()),
    ]
    if n % 4 == 0 and n:
        out += [("array-I", arr("I")),
                ("numpy-u32-2d", np.frombuffer(data, dtype=np.uint32).reshape(-1, 2).copy()
                 if n % 8 == 0 else np.frombuffer(data, dtype=np.uint32).copy())]
    return out


@spec_param
def test_accepted_input_types(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    for label, v in _variants(DATA):
        assert obj.encrypt(nonce_of(spec), v, AAD) == sealed, label
        if spec.streams:
            ctx = obj.encryptor(nonce_of(spec))
            ctx.authenticate_additional_data(AAD)
            assert ctx.update(v) + ctx.finalize() + ctx.tag == sealed, label
    for label, v in _variants(sealed):
        assert obj.decrypt(nonce_of(spec), v, AAD) == DATA, label
    for label, v in _variants(AAD + b"xy"):  # 8 bytes so that the 4-byte types fit
        want = ref_seal(spec, key_of(spec), nonce_of(spec), DATA, AAD + b"xy")
        assert obj.encrypt(nonce_of(spec), DATA, v) == want, label
    for label, v in _variants(key_of(spec)):
        assert new_aead(spec, v, backend=backend).encrypt(nonce_of(spec), DATA, AAD) == sealed, label
    for label, v in _variants(nonce_of(spec)):
        assert obj.encrypt(v, DATA, AAD) == sealed, label
    for label, v in _variants(sealed[-16:]) if spec.streams else ():
        ctx = obj.decryptor(nonce_of(spec))
        ctx.authenticate_additional_data(AAD)
        assert ctx.update(sealed[:-16]) + ctx.finalize_with_tag(v) == DATA, label


@spec_param
def test_accepted_output_buffer_types(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    sealed = _sealed(spec)
    for label, buf in _variants(bytes(len(sealed))):
        if memoryview(buf).readonly:
            continue
        assert obj.encrypt_into(nonce_of(spec), DATA, AAD, buf) == len(sealed), label
        assert bytes(memoryview(buf).cast("B")) == sealed, label
    arr = np.frombuffer(sealed, dtype=np.uint32).reshape(7, 2).copy()  # 56 bytes, 2-d
    assert obj.decrypt_into(nonce_of(spec), arr, AAD, arr) == len(DATA)
    assert arr.tobytes()[:len(DATA)] == DATA


@spec_param
def test_non_contiguous_rejected(backend, spec):
    obj = new_aead(spec, key_of(spec), backend=backend)
    strided = np.arange(96, dtype=np.uint8)[::2]
    mv_strided = memoryview(bytes(96))[::2]
    for bad in (strided, mv_strided):
        with pytest.raises((TypeError, ValueError)):
            obj.encrypt(nonce_of(spec), bad, AAD)
        with pytest.raises((TypeError, ValueError)):
            obj.encrypt(nonce_of(spec), DATA, bad)
        with pytest.raises((TypeError, ValueError)):
            obj.encrypt(np.arange(24, dtype=np.uint8)[::2], DATA, AAD)
        with pytest.raises((TypeError, ValueError)):
            obj.encrypt_into(nonce_of(spec), DATA, AAD, np.zeros(200, np.uint8)[::2])
    with pytest.raises((TypeError, ValueError)):
        aead_cls(spec)(np.arange(32, dtype=np.uint8)[::2])


@spec_param
@pytest.mark.parametrize("empty", [b"", bytearray(), memoryview(b""), np.zeros(0, np.uint8)],
                         ids=["bytes", "bytearray", "memoryview", "numpy"])
def test_length_zero(backend, spec, empty):
    obj = new_aead(spec, key_of(spec), backend=backend)
    tag_only = ref_seal(spec, key_of(spec), nonce_of(spec), b"", b"")
    assert obj.encrypt(nonce_of(spec), empty, empty) == tag_only
    assert obj.decrypt(nonce_of(spec), tag_only, empty) == b""
    buf = bytearray(b"\xee" * 20)
    assert obj.encrypt_into(nonce_of(spec), empty, None, buf) == 16
    assert buf[:16] == tag_only and buf[16:] == b"\xee" * 4
    assert obj.decrypt_into(nonce_of(spec), tag_only, None, bytearray()) == 0
    if not spec.streams:
        return
    ctx = obj.encryptor(nonce_of(spec))
    ctx.authenticate_additional_data(empty)
    assert ctx.update(empty) == b""
    assert ctx.update_into(empty, bytearray()) == 0
    assert ctx.finalize() == b""
    assert ctx.tag == tag_only


# ---------------------------------------------------------------- limits

# The AEADs with limits (GCM's 2^36-32 bytes of data, 2^61-1 of AAD): the child process
# takes the type, L = max_data and A = max_aad, and a long and a short nonce and the short
# tag from the spec.
LIMITED = [spec for spec in AEADS if spec.max_data is not None]

LIMIT_SCRIPT = textwrap.dedent(r'''
    import ctypes, json, mmap, sys
    import aeskit

    backend, cls = sys.argv[1], getattr(aeskit, sys.argv[2])
    L, A = int(sys.argv[3]), int(sys.argv[4])   # most bytes of plaintext, of AAD
    n_long, n_short, t_short, ks, n_usual = (int(a) for a in sys.argv[5:10])
    PROT_NONE, PROT_RW = 0, mmap.PROT_READ | mmap.PROT_WRITE
    NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    keep = []

    def claimed(size, real=1 << 20):
        """A writable buffer that says it holds `size` bytes: 1 MiB of real zeros, then an
        inaccessible reservation (up to 2^40 bytes), so touching the rest faults at once
        instead of eating memory."""
        reserve = min(size, 2**40) + real
        addr = libc.mmap(None, reserve, PROT_NONE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | NORESERVE, -1, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        assert libc.mprotect(addr, real, PROT_RW) == 0
        arr = (ctypes.c_ubyte * size).from_address(addr)
        keep.append(arr)
        return memoryview(arr).cast("B")

    def real_zero_map(size):
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | NORESERVE,
                      prot=mmap.PROT_READ)
        keep.append(m)
        return m

    g = cls(bytes(ks), backend=backend)
    g4 = cls(bytes(ks), tag_length=t_short, backend=backend)
    n12, n16, n1 = bytes(n_usual), bytes(n_long), b"\x01" * n_short

    # Each case builds its buffers first (a harness failure is not a pass), then returns the
    # call under test.
    def stream(ctxmaker, first, second_size, into=False, aad=False):
        second = claimed(second_size)
        out = claimed(second_size + 16) if into else None

        def run():
            ctx = ctxmaker()
            if aad:
                ctx.authenticate_additional_data(first)
                ctx.authenticate_additional_data(second)
            elif into:
                ctx.update(first)
                ctx.update_into(second, out)
            else:
                ctx.update(first)
                ctx.update(second)
        return run

    def call(fn, *args):
        return lambda: fn(*args)

    CASES = {
        "encrypt: plaintext L+1": lambda: call(g.encrypt, n12, claimed(L + 1), None),
        "encrypt: plaintext L+1, long nonce":
            lambda: call(g.encrypt, n16, claimed(L + 1), None),
        "encrypt: plaintext L+1, short nonce, short tag":
            lambda: call(g4.encrypt, n1, claimed(L + 1), None),
        "encrypt: plaintext 2^40": lambda: call(g.encrypt, n12, claimed(2**40), None),
        "decrypt: ciphertext L+1 + tag":
            lambda: call(g.decrypt, n12, claimed(L + 1 + 16), None),
        "decrypt: ciphertext L+1 + short tag":
            lambda: call(g4.decrypt, n12, claimed(L + 1 + t_short), None),
        "encrypt_into": lambda: call(g.encrypt_into, n12, claimed(L + 1), None, claimed(L + 17)),
        "decrypt_into": lambda: call(g.decrypt_into, n12, claimed(L + 17), None, claimed(L + 1)),
        "encrypt: AAD A+1": lambda: call(g.encrypt, n12, b"", claimed(A + 1)),
        "encrypt: AAD 2^62": lambda: call(g.encrypt, n12, b"", claimed(2**62)),
        "decrypt: AAD A+1": lambda: call(g.decrypt, n12, bytes(16), claimed(A + 1)),
        "encrypt_into: AAD A+1":
            lambda: call(g.encrypt_into, n12, b"", claimed(A + 1), bytearray(16)),
        "decrypt_into: AAD A+1":
            lambda: call(g.decrypt_into, n12, bytes(16), claimed(A + 1), bytearray(16)),
        "encryptor: update L+1 at once": lambda: stream(lambda: g.encryptor(n12), b"", L + 1),
        "encryptor: update_into L+1 at once":
            lambda: stream(lambda: g.encryptor(n12), b"", L + 1, into=True),
        "encryptor: cumulative 32 + (L-16)":
            lambda: stream(lambda: g.encryptor(n12), bytes(32), L - 16),
        "encryptor: cumulative via update_into":
            lambda: stream(lambda: g.encryptor(n12), bytes(32), L - 16, into=True),
        "decryptor: cumulative 32 + (L-16)":
            lambda: stream(lambda: g.decryptor(n12), bytes(32), L - 16),
        "decryptor: update_into cumulative":
            lambda: stream(lambda: g.decryptor(n16), bytes(32), L - 16, into=True),
        "encryptor: AAD A+1 at once":
            lambda: stream(lambda: g.encryptor(n12), b"", A + 1, aad=True),
        "encryptor: AAD cumulative 32 + (A-31)":
            lambda: stream(lambda: g.encryptor(n12), bytes(32), A + 1 - 32, aad=True),
        "decryptor: AAD cumulative 32 + (A-31)":
            lambda: stream(lambda: g.decryptor(n12), bytes(32), A + 1 - 32, aad=True),
        # Last: a real read-only NORESERVE mapping (no guard: an implementation that works
        # before checking is slow here rather than crashing).
        "encrypt: real read-only mapping of L+1 bytes":
            lambda: call(g.encrypt, n12, real_zero_map(L + 1), None),
    }
    # At the limits exactly: accepted, so the work starts and faults on the guard. Run one
    # per process (argv[2]); they show that the checks above are not simply too strict.
    AT_LIMIT = {
        "encrypt_into: plaintext exactly L":
            lambda: call(g.encrypt_into, n12, claimed(L), None, claimed(L + 16)),
        "decrypt_into: plaintext exactly L":
            lambda: call(g.decrypt_into, n12, claimed(L + 16), None, claimed(L)),
        "encryptor: cumulative exactly L":
            lambda: stream(lambda: g.encryptor(n12), bytes(32), L - 32, into=True),
        "encrypt_into: AAD exactly A":
            lambda: call(g.encrypt_into, n12, b"", claimed(A), bytearray(16)),
    }
    if len(sys.argv) > 10:
        CASES = {sys.argv[10]: AT_LIMIT[sys.argv[10]]}
    for name, build in CASES.items():
        try:
            fn = build()
        except BaseException as e:  # noqa: BLE001
            print("RESULT " + json.dumps([name, "HARNESS " + type(e).__name__ + ": " + str(e)]),
                  flush=True)
            continue
        print("START " + json.dumps(name), flush=True)
        try:
            fn()
            result = "returned without an error"
        except BaseException as e:  # noqa: BLE001 - report everything to the parent
            kind = type(e).__name__
            if isinstance(e, aeskit.LimitExceeded):  # the library's limit class, and both bases
                kind += "(OverflowError, ValueError)" if isinstance(e, OverflowError) and \
                    isinstance(e, ValueError) else "(wrong bases)"
            result = kind + ": " + str(e)[:300]
        print("RESULT " + json.dumps([name, result]), flush=True)
''')

LIMIT_CASES = [
    "encrypt: plaintext L+1",
    "encrypt: plaintext L+1, long nonce",
    "encrypt: plaintext L+1, short nonce, short tag",
    "encrypt: plaintext 2^40",
    "decrypt: ciphertext L+1 + tag",
    "decrypt: ciphertext L+1 + short tag",
    "encrypt_into",
    "decrypt_into",
    "encrypt: AAD A+1",
    "encrypt: AAD 2^62",
    "decrypt: AAD A+1",
    "encrypt_into: AAD A+1",
    "decrypt_into: AAD A+1",
    "encryptor: update L+1 at once",
    "encryptor: update_into L+1 at once",
    "encryptor: cumulative 32 + (L-16)",
    "encryptor: cumulative via update_into",
    "decryptor: cumulative 32 + (L-16)",
    "decryptor: update_into cumulative",
    "encryptor: AAD A+1 at once",
    "encryptor: AAD cumulative 32 + (A-31)",
    "decryptor: AAD cumulative 32 + (A-31)",
    "encrypt: real read-only mapping of L+1 bytes",
]
_limit_runs = {}


def _limit_argv(backend, spec, *case):
    """The child's command line: the backend, then what it needs of the spec."""
    assert spec.max_data < 2**40 and spec.max_aad < 2**62  # the cases past both limits
    n_long = max(n for n in spec.nonce_lengths if n <= max(16, spec.nonce_len))
    return [sys.executable, "-c", LIMIT_SCRIPT, backend, spec.cls.__name__,
            str(spec.max_data), str(spec.max_aad), str(n_long), str(min(spec.nonce_lengths)),
            str(min(spec.tag_lengths)), str(min(spec.key_sizes)), str(spec.nonce_len), *case]


def _limit_results(backend, spec):
    """Run every limit case for a backend in one child process: a case that touches the data
    before checking faults on the guard (or times out) and must not take pytest down."""
    if (backend, spec) not in _limit_runs:
        env = dict(os.environ, AESKIT_BACKEND=backend)
        try:
            p = subprocess.run(_limit_argv(backend, spec), env=env,
                               capture_output=True, text=True, timeout=120)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = "timeout after 120 s", ""
        results, started = {}, None
        for line in out.splitlines():
            if line.startswith("START "):
                started = json.loads(line[6:])
            elif line.startswith("RESULT "):
                k, v = json.loads(line[7:])
                results[k] = v
                started = None
        _limit_runs[(backend, spec)] = (results, started, rc, err[-2000:])
    return _limit_runs[(backend, spec)]


AT_LIMIT_CASES = [
    "encrypt_into: plaintext exactly L",
    "decrypt_into: plaintext exactly L",
    "encryptor: cumulative exactly L",
    "encrypt_into: AAD exactly A",
]


@pytest.mark.parametrize("case", AT_LIMIT_CASES)
@pytest.mark.parametrize("spec", spec_params(LIMITED))
def test_limits_are_exact(backend, spec, case):
    """At exactly max_data bytes of plaintext (max_aad of AAD; GCM: 2^36-32 and 2^61-1) the
    AEAD accepts the call and starts work, which in the child faults on the guard pages: the
    limit is not set too low (and the guard harness does catch work done before a check)."""
    env = dict(os.environ, AESKIT_BACKEND=backend)
    p = subprocess.run(_limit_argv(backend, spec, case), env=env,
                       capture_output=True, text=True, timeout=120)
    assert f"START {json.dumps(case)}" in p.stdout, p.stdout + p.stderr
    assert "RESULT" not in p.stdout, f"refused at the limit: {p.stdout}"
    faults = (-11, -7)  # SIGSEGV / SIGBUS
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        faults += (-6,)  # ASan reports the fault, then aborts (abort_on_error=1)
    assert p.returncode in faults, (p.returncode, p.stderr[-2000:])


@pytest.mark.parametrize("case", LIMIT_CASES)
@pytest.mark.parametrize("spec", spec_params(LIMITED))
def test_limits(backend, spec, case):
    """An AEAD refuses more than max_data bytes of plaintext or max_aad of AAD (GCM: 2^36-32
    and 2^61-1) with LimitExceeded, before touching the data, one-shot and cumulatively in
    streaming."""
    results, died_in, rc, err = _limit_results(backend, spec)
    if case not in results:
        if died_in == case:
            pytest.fail(f"the child process died in this case (rc={rc}): the data was "
                        f"touched before the limit check\n{err}")
        pytest.fail(f"not reached: the child died in {died_in!r} (rc={rc})\n{err}")
    assert results[case].startswith("LimitExceeded(OverflowError, ValueError)"), results[case]


def test_limit_cases_listed():
    """LIMIT_CASES is the parent's copy of the child's case names."""
    assert all(f'"{c}"' in LIMIT_SCRIPT for c in LIMIT_CASES + AT_LIMIT_CASES)
