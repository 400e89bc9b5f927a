"""The Python surface: argument types and lengths, `_into` buffers and overlap, errors,
accepted input types, and length-0 inputs everywhere."""

import array
import mmap
import re

import aeskit
import numpy as np
import pytest

from helpers import (
    CIPHERS,
    cls,
    decrypt,
    decrypt_into,
    decryptor,
    encrypt,
    encrypt_into,
    encryptor,
    new,
    op,
    ref,
    spec_params,
)

KEY = bytes(range(0x10, 0x30))[:16]
IV = bytes(range(0x40, 0x50))
DATA = bytes(range(48))  # 3 blocks: valid for every mode
NON_BUFFERS = ["0123456789abcdef", 16, None, list(range(16)), 1.5, object()]

spec_param = pytest.mark.parametrize("spec", spec_params(CIPHERS))


def _ids(x):
    return type(x).__name__


def _calls(spec):
    """(name, callable(obj, iv, data, buf)) for the four one-shot entry points."""
    return [
        ("encrypt", lambda o, iv, d, b: encrypt(o, spec, iv, d)),
        ("decrypt", lambda o, iv, d, b: decrypt(o, spec, iv, d)),
        ("encrypt_into", lambda o, iv, d, b: encrypt_into(o, spec, iv, d, b)),
        ("decrypt_into", lambda o, iv, d, b: decrypt_into(o, spec, iv, d, b)),
    ]


# ---------------------------------------------------------------- construction

@spec_param
def test_attributes(backend, backends_info, spec):
    for ks in spec.key_sizes:
        key = bytes(range(ks))  # halves differ, as XTS needs
        obj = cls(spec)(key, backend=backend)
        assert obj.backend == backend
        assert obj.key_size == ks * 8
        auto = cls(spec)(key)
        assert auto.backend == backends_info.default
        assert cls(spec)(key, backend="auto").backend == backends_info.default


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_key_not_a_buffer(spec, bad):
    with pytest.raises(TypeError):
        cls(spec)(bad)


@spec_param
@pytest.mark.parametrize("n", [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64])
def test_key_bad_length(spec, n):
    if n in spec.key_sizes:
        return
    with pytest.raises(ValueError) as ei:
        cls(spec)(bytes(n))
    msg = str(ei.value)
    for size in map(str, spec.key_sizes):
        assert re.search(rf"\b{size}\b", msg), msg


@spec_param
def test_backend_is_keyword_only(spec):
    with pytest.raises(TypeError):
        cls(spec)(KEY, "portable")


@spec_param
def test_unknown_backend(spec, backends_info):
    with pytest.raises(ValueError) as ei:
        cls(spec)(KEY, backend="nope")
    for name in backends_info.all:
        assert name in str(ei.value)


@spec_param
@pytest.mark.parametrize("bad", [None, 1, b"portable"], ids=_ids)
def test_backend_wrong_type(spec, bad):
    with pytest.raises((TypeError, ValueError)):
        cls(spec)(KEY, backend=bad)


def test_known_backend_unavailable(backends_info):
    missing = [b for b in backends_info.all if b not in backends_info.available]
    if not missing:
        pytest.skip("every backend aeskit knows is available on this CPU")
    for spec in CIPHERS:
        for name in missing:
            with pytest.raises(ValueError, match=name):
                cls(spec)(KEY, backend=name)


# ---------------------------------------------------------------- iv and data

@pytest.mark.parametrize("spec", spec_params(CIPHERS, has_iv=True))
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_iv_not_a_buffer(backend, spec, bad):
    obj = new(spec, KEY, backend=backend)
    for name, call in _calls(spec):
        with pytest.raises(TypeError):
            call(obj, bad, DATA, bytearray(48))
    with pytest.raises(TypeError):
        obj.encryptor(bad)
    with pytest.raises(TypeError):
        obj.decryptor(bad)


@pytest.mark.parametrize("spec", spec_params(CIPHERS, has_iv=True))
@pytest.mark.parametrize("n", [0, 1, 8, 12, 15, 17, 24, 32])
def test_iv_bad_length(backend, spec, n):
    obj = new(spec, KEY, backend=backend)
    for name, call in _calls(spec):
        with pytest.raises(ValueError, match=r"\b16\b"):
            call(obj, bytes(n), DATA, bytearray(48))
    with pytest.raises(ValueError, match=r"\b16\b"):
        obj.encryptor(bytes(n))
    with pytest.raises(ValueError, match=r"\b16\b"):
        obj.decryptor(bytes(n))


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_data_not_a_buffer(backend, spec, bad):
    obj = new(spec, KEY, backend=backend)
    for name, call in _calls(spec):
        with pytest.raises(TypeError):
            call(obj, IV, bad, bytearray(48))
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, spec, IV, direction)
        with pytest.raises(TypeError):
            ctx.update(bad)
        with pytest.raises(TypeError):
            ctx.update_into(bad, bytearray(48))
        # The failed calls consumed nothing: the context still works from the start.
        assert ctx.update(DATA) + ctx.finalize() == ref(spec, KEY, IV, DATA, direction)


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=True))
@pytest.mark.parametrize("n", [1, 8, 15, 17, 31, 33, 47, 49, 255])
def test_block_modes_need_whole_blocks(backend, spec, n):
    obj = new(spec, KEY, backend=backend)
    for name, call in _calls(spec):
        buf = bytearray(n + 16)
        with pytest.raises(ValueError, match="multiple of 16"):
            call(obj, IV, bytes(n), buf)
        assert buf == bytearray(n + 16), f"{name} wrote into buf before failing"


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=True))
@pytest.mark.parametrize("n", [1, 15, 17, 31])
def test_block_modes_finalize_with_leftover(backend, spec, n):
    obj = new(spec, KEY, backend=backend)
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, spec, IV, direction)
        out = ctx.update(bytes(n))
        assert len(out) == 16 * (n // 16)
        with pytest.raises(ValueError):
            ctx.finalize()


# ---------------------------------------------------------------- _into buffers

@spec_param
def test_into_larger_buffer_returns_count(backend, spec):
    obj = new(spec, KEY, backend=backend)
    for direction, fn in (("encrypt", encrypt_into), ("decrypt", decrypt_into)):
        buf = bytearray(b"\xee" * 100)
        assert fn(obj, spec, IV, DATA, buf) == 48
        assert buf[:48] == ref(spec, KEY, IV, DATA, direction)
        assert buf[48:] == b"\xee" * 52


@spec_param
@pytest.mark.parametrize("short", [0, 1, 16, 47])
def test_into_buffer_too_small(backend, spec, short):
    obj = new(spec, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        buf = bytearray(b"\xee" * short)
        with pytest.raises(ValueError, match=r"\b48\b"):
            fn(obj, spec, IV, DATA, buf)
        assert buf == b"\xee" * short


@spec_param
@pytest.mark.parametrize("make", [bytes, lambda n: memoryview(bytes(n))],
                         ids=["bytes", "readonly-memoryview"])
def test_into_readonly_buffer(backend, spec, make):
    obj = new(spec, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(TypeError):
            fn(obj, spec, IV, DATA, make(48))
    for direction in ("encrypt", "decrypt"):
        with pytest.raises(TypeError):
            op(obj, spec, IV, direction).update_into(DATA, make(48))


@spec_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_into_buffer_not_a_buffer(backend, spec, bad):
    obj = new(spec, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(TypeError):
            fn(obj, spec, IV, DATA, bad)
    with pytest.raises(TypeError):
        op(obj, spec, IV, "encrypt").update_into(DATA, bad)


def _overlaps(n, shift):
    """(data, buf) views of one bytearray, `shift` bytes apart, both n bytes long."""
    store = bytearray(range(256)) * ((n + abs(shift)) // 256 + 1)
    mv = memoryview(store)
    lo, hi = mv[:n], mv[abs(shift):abs(shift) + n]
    return (lo, hi) if shift > 0 else (hi, lo)


@spec_param
@pytest.mark.parametrize("shift", [1, -1, 15, -15, 16, -16, 17, 47, -47])
def test_into_partial_overlap(backend, spec, shift):
    obj = new(spec, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        data, buf = _overlaps(48, shift)
        before = bytes(data.obj)
        with pytest.raises(ValueError):
            fn(obj, spec, IV, data, buf)
        assert bytes(data.obj) == before
    for direction in ("encrypt", "decrypt"):
        data, buf = _overlaps(48, shift)
        ctx = op(obj, spec, IV, direction)
        if spec.steals:  # held bytes first, so that this update writes all 48
            ctx.update(DATA[:16])
        with pytest.raises(ValueError):
            ctx.update_into(data, buf)


@spec_param
def test_into_partial_overlap_first_vs_last(backend, spec):
    """The example from the spec: memoryview(b)[1:] vs memoryview(b)[:-1]."""
    obj = new(spec, KEY, backend=backend)
    b = bytearray(49)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(ValueError):
            fn(obj, spec, IV, memoryview(b)[1:], memoryview(b)[:-1])
        with pytest.raises(ValueError):
            fn(obj, spec, IV, memoryview(b)[:-1], memoryview(b)[1:])


@spec_param
def test_into_adjacent_is_not_overlap(backend, spec):
    obj = new(spec, KEY, backend=backend)
    store = bytearray(DATA) + bytearray(48)
    mv = memoryview(store)
    assert encrypt_into(obj, spec, IV, mv[:48], mv[48:]) == 48
    assert store[48:] == ref(spec, KEY, IV, DATA)
    assert store[:48] == DATA


@spec_param
def test_into_exact_overlap(backend, spec):
    obj = new(spec, KEY, backend=backend)
    buf = bytearray(DATA)
    assert encrypt_into(obj, spec, IV, buf, buf) == 48
    assert buf == ref(spec, KEY, IV, DATA)
    store = bytearray(b"\x01" * 5) + DATA
    assert encrypt_into(obj, spec, IV, memoryview(store)[5:], memoryview(store)[5:]) == 48
    assert store[5:] == ref(spec, KEY, IV, DATA)


# ---------------------------------------------------------------- streaming contexts

@spec_param
def test_context_type(backend, spec):
    obj = new(spec, KEY, backend=backend)
    assert type(encryptor(obj, spec, IV)) is aeskit.CipherContext
    assert type(decryptor(obj, spec, IV)) is aeskit.CipherContext


@spec_param
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_already_finalized(backend, spec, direction):
    assert issubclass(aeskit.AlreadyFinalized, Exception)
    obj = new(spec, KEY, backend=backend)
    ctx = op(obj, spec, IV, direction)
    assert ctx.update(DATA) + ctx.finalize() == ref(spec, KEY, IV, DATA, direction)
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.update(DATA)
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.update(b"")
    buf = bytearray(b"\xee" * 48)
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.update_into(DATA, buf)
    assert buf == b"\xee" * 48
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.finalize()
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.finalize()


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=True))
def test_update_into_exact_size_with_pending(backend, spec):
    """update_into needs room for that update's output: whole blocks incl. pending bytes."""
    obj = new(spec, KEY, backend=backend)
    ctx = encryptor(obj, spec, IV)
    assert ctx.update(DATA[:10]) == b""
    with pytest.raises(ValueError, match=r"\b16\b"):
        ctx.update_into(DATA[10:20], bytearray(15))
    buf = bytearray(16)
    assert ctx.update_into(DATA[10:20], buf) == 16
    buf2 = bytearray(b"\xee" * 40)
    assert ctx.update_into(DATA[20:48], buf2) == 32
    assert buf2[32:] == b"\xee" * 8
    assert ctx.finalize() == b""
    assert bytes(buf) + bytes(buf2[:32]) == ref(spec, KEY, IV, DATA)


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=False, steals=False))
def test_update_into_too_small_stream(backend, spec):
    obj = new(spec, KEY, backend=backend)
    ctx = encryptor(obj, spec, IV)
    ctx.update(DATA[:5])
    with pytest.raises(ValueError, match=r"\b7\b"):
        ctx.update_into(DATA[5:12], bytearray(6))
    buf = bytearray(7)
    assert ctx.update_into(DATA[5:12], buf) == 7
    assert bytes(buf) == ref(spec, KEY, IV, DATA[:12])[5:12]


# ---------------------------------------------------------------- input types

def _variants(data):
    """Same bytes in every buffer type the spec promises to accept."""
    n = len(data)
    mm = mmap.mmap(-1, max(n, 1))
    mm.write(data)
    out = [
        ("bytes", data),
        ("bytearray", bytearray(data)),
        ("memoryview", memoryview(data)),
        ("memoryview-slice", memoryview(b"xyz" + data)[3:]),
        ("array-B", array.array("B", data)),
        ("array-I", _array_of(data, "I")),
        ("array-d", _array_of(data, "d")),
        ("mmap", mm if n == len(mm) else memoryview(mm)[:n]),
        ("numpy-u8", np.frombuffer(data, dtype=np.uint8).copy()),
        ("numpy-u32-2d", np.frombuffer(data, dtype=np.uint32).reshape(-1, 4).copy()),
        ("numpy-f64", np.frombuffer(data, dtype=np.float64).copy()),
    ]
    return out


def _array_of(data, code):
    a = array.array(code)
    a.frombytes(data)
    return a


@spec_param
def test_accepted_input_types(backend, spec):
    obj = new(spec, KEY, backend=backend)
    want_e = ref(spec, KEY, IV, DATA, "encrypt")
    want_d = ref(spec, KEY, IV, DATA, "decrypt")
    for name, data in _variants(DATA):
        assert encrypt(obj, spec, IV, data) == want_e, name
        assert decrypt(obj, spec, IV, data) == want_d, name
        ctx = encryptor(obj, spec, IV)
        assert ctx.update(data) + ctx.finalize() == want_e, name
    for name, key in _variants(KEY):
        assert encrypt(new(spec, key, backend=backend), spec, IV, DATA) == want_e, name
    if spec.has_iv:
        for name, iv in _variants(IV):
            assert encrypt(obj, spec, iv, DATA) == want_e, name
            assert encrypt(obj, spec, IV, DATA) == want_e


@spec_param
def test_accepted_output_buffer_types(backend, spec):
    obj = new(spec, KEY, backend=backend)
    want = ref(spec, KEY, IV, DATA)
    for name, buf in _variants(bytes(48)):
        if memoryview(buf).readonly:
            continue
        assert encrypt_into(obj, spec, IV, DATA, buf) == 48, name
        assert bytes(memoryview(buf).cast("B")) == want, name
    # numpy in place, multi-dimensional
    arr = np.frombuffer(DATA, dtype=np.uint32).reshape(3, 4).copy()
    assert encrypt_into(obj, spec, IV, arr, arr) == 48
    assert arr.tobytes() == want


@spec_param
def test_non_contiguous_rejected(backend, spec):
    obj = new(spec, KEY, backend=backend)
    arr = np.arange(96, dtype=np.uint8)
    strided = arr[::2]  # 48 bytes, stride 2
    assert not strided.flags.c_contiguous
    fortran = np.asfortranarray(np.arange(48, dtype=np.uint8).reshape(6, 8))
    mv_strided = memoryview(bytes(96))[::2]
    for bad in (strided, fortran, mv_strided):
        with pytest.raises((TypeError, ValueError)):
            encrypt(obj, spec, IV, bad)
        with pytest.raises((TypeError, ValueError)):
            encrypt_into(obj, spec, IV, DATA, bad if not isinstance(bad, memoryview)
                         else memoryview(bytearray(96))[::2])
        with pytest.raises((TypeError, ValueError)):
            encryptor(obj, spec, IV).update(bad)
    with pytest.raises((TypeError, ValueError)):
        cls(spec)(np.arange(64, dtype=np.uint8)[::2], backend=backend)
    if spec.has_iv:
        with pytest.raises((TypeError, ValueError)):
            encrypt(obj, spec, np.arange(32, dtype=np.uint8)[::2], DATA)


# ---------------------------------------------------------------- length 0

@pytest.mark.parametrize("spec", spec_params(CIPHERS, min_len=0))
@pytest.mark.parametrize("empty", [b"", bytearray(), memoryview(b""), np.zeros(0, np.uint8)],
                         ids=["bytes", "bytearray", "memoryview", "numpy"])
def test_length_zero(backend, spec, empty):
    obj = new(spec, KEY, backend=backend)
    assert encrypt(obj, spec, IV, empty) == b""
    assert decrypt(obj, spec, IV, empty) == b""
    assert encrypt_into(obj, spec, IV, empty, bytearray()) == 0
    assert decrypt_into(obj, spec, IV, empty, bytearray()) == 0
    buf = bytearray(b"\xee" * 16)
    assert encrypt_into(obj, spec, IV, empty, buf) == 0
    assert buf == b"\xee" * 16
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, spec, IV, direction)
        assert ctx.update(empty) == b""
        assert ctx.update_into(empty, bytearray()) == 0
        assert ctx.finalize() == b""
        # Empty updates between real ones change nothing.
        ctx = op(obj, spec, IV, direction)
        out = ctx.update(empty) + ctx.update(DATA[:20]) + ctx.update(empty)
        out += ctx.update(DATA[20:]) + ctx.update(empty) + ctx.finalize()
        assert out == ref(spec, KEY, IV, DATA, direction)


@spec_param
def test_length_zero_still_validates(backend, spec):
    """An empty message does not skip the argument checks."""
    obj = new(spec, KEY, backend=backend)
    if spec.has_iv:
        with pytest.raises(ValueError):
            obj.encrypt(bytes(15), b"")
        with pytest.raises(TypeError):
            obj.encrypt("x" * 16, b"")
    with pytest.raises(TypeError):
        encrypt_into(obj, spec, IV, DATA[:spec.min_len], b"")
    with pytest.raises(TypeError):
        encrypt(obj, spec, IV, "")


@spec_param
def test_output_is_fresh_bytes(backend, spec):
    obj = new(spec, KEY, backend=backend)
    src = bytearray(DATA)
    out = encrypt(obj, spec, IV, src)
    assert type(out) is bytes
    assert src == DATA  # the input is never modified by the bytes-returning call


def test_library_wide_error_classes():
    """LimitExceeded is caught as OverflowError and as ValueError (pyca raises ValueError
    at its limits); InvalidUnwrap is an InvalidTag, as pyca's InvalidUnwrap is."""
    assert issubclass(aeskit.LimitExceeded, OverflowError)
    assert issubclass(aeskit.LimitExceeded, ValueError)
    assert issubclass(aeskit.InvalidUnwrap, aeskit.InvalidTag)
    assert {"LimitExceeded", "InvalidUnwrap"} <= set(aeskit.__all__)
