"""The Python surface: argument types and lengths, `_into` buffers and overlap, errors,
accepted input types, and length-0 inputs everywhere."""

import array
import mmap
import re

import aeskit
import numpy as np
import pytest

from helpers import (
    BLOCK_MODES,
    MODES,
    STREAM_MODES,
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
)

KEY = bytes(range(0x10, 0x30))[:16]
IV = bytes(range(0x40, 0x50))
DATA = bytes(range(48))  # 3 blocks: valid for every mode
NON_BUFFERS = ["0123456789abcdef", 16, None, list(range(16)), 1.5, object()]

mode_param = pytest.mark.parametrize("mode", MODES)


def _ids(x):
    return type(x).__name__


def _calls(mode):
    """(name, callable(obj, iv, data, buf)) for the four one-shot entry points."""
    return [
        ("encrypt", lambda o, iv, d, b: encrypt(o, mode, iv, d)),
        ("decrypt", lambda o, iv, d, b: decrypt(o, mode, iv, d)),
        ("encrypt_into", lambda o, iv, d, b: encrypt_into(o, mode, iv, d, b)),
        ("decrypt_into", lambda o, iv, d, b: decrypt_into(o, mode, iv, d, b)),
    ]


# ---------------------------------------------------------------- construction

@mode_param
@pytest.mark.parametrize("ks", (16, 24, 32))
def test_attributes(backend, backends_info, mode, ks):
    obj = new(mode, bytes(ks), backend=backend)
    assert obj.backend == backend
    assert obj.key_size == ks * 8
    auto = cls(mode)(bytes(ks))
    assert auto.backend == backends_info.default
    assert cls(mode)(bytes(ks), backend="auto").backend == backends_info.default


@mode_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_key_not_a_buffer(mode, bad):
    with pytest.raises(TypeError):
        cls(mode)(bad)


@mode_param
@pytest.mark.parametrize("n", [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64])
def test_key_bad_length(mode, n):
    with pytest.raises(ValueError) as ei:
        cls(mode)(bytes(n))
    msg = str(ei.value)
    for size in ("16", "24", "32"):
        assert re.search(rf"\b{size}\b", msg), msg


@mode_param
def test_backend_is_keyword_only(mode):
    with pytest.raises(TypeError):
        cls(mode)(KEY, "portable")


@mode_param
def test_unknown_backend(mode, backends_info):
    with pytest.raises(ValueError) as ei:
        cls(mode)(KEY, backend="nope")
    for name in backends_info.all:
        assert name in str(ei.value)


@mode_param
@pytest.mark.parametrize("bad", [None, 1, b"portable"], ids=_ids)
def test_backend_wrong_type(mode, bad):
    with pytest.raises((TypeError, ValueError)):
        cls(mode)(KEY, backend=bad)


def test_known_backend_unavailable(backends_info):
    missing = [b for b in backends_info.all if b not in backends_info.available]
    if not missing:
        pytest.skip("every backend aeskit knows is available on this CPU")
    for mode in MODES:
        for name in missing:
            with pytest.raises(ValueError, match=name):
                cls(mode)(KEY, backend=name)


# ---------------------------------------------------------------- iv and data

@pytest.mark.parametrize("mode", [m for m in MODES if m != "ECB"])
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_iv_not_a_buffer(backend, mode, bad):
    obj = new(mode, KEY, backend=backend)
    for name, call in _calls(mode):
        with pytest.raises(TypeError):
            call(obj, bad, DATA, bytearray(48))
    with pytest.raises(TypeError):
        obj.encryptor(bad)
    with pytest.raises(TypeError):
        obj.decryptor(bad)


@pytest.mark.parametrize("mode", [m for m in MODES if m != "ECB"])
@pytest.mark.parametrize("n", [0, 1, 8, 12, 15, 17, 24, 32])
def test_iv_bad_length(backend, mode, n):
    obj = new(mode, KEY, backend=backend)
    for name, call in _calls(mode):
        with pytest.raises(ValueError, match=r"\b16\b"):
            call(obj, bytes(n), DATA, bytearray(48))
    with pytest.raises(ValueError, match=r"\b16\b"):
        obj.encryptor(bytes(n))
    with pytest.raises(ValueError, match=r"\b16\b"):
        obj.decryptor(bytes(n))


@mode_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_data_not_a_buffer(backend, mode, bad):
    obj = new(mode, KEY, backend=backend)
    for name, call in _calls(mode):
        with pytest.raises(TypeError):
            call(obj, IV, bad, bytearray(48))
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, mode, IV, direction)
        with pytest.raises(TypeError):
            ctx.update(bad)
        with pytest.raises(TypeError):
            ctx.update_into(bad, bytearray(48))
        # The failed calls consumed nothing: the context still works from the start.
        assert ctx.update(DATA) + ctx.finalize() == ref(mode, KEY, IV, DATA, direction)


@pytest.mark.parametrize("mode", BLOCK_MODES)
@pytest.mark.parametrize("n", [1, 8, 15, 17, 31, 33, 47, 49, 255])
def test_block_modes_need_whole_blocks(backend, mode, n):
    obj = new(mode, KEY, backend=backend)
    for name, call in _calls(mode):
        buf = bytearray(n + 16)
        with pytest.raises(ValueError, match="multiple of 16"):
            call(obj, IV, bytes(n), buf)
        assert buf == bytearray(n + 16), f"{name} wrote into buf before failing"


@pytest.mark.parametrize("mode", BLOCK_MODES)
@pytest.mark.parametrize("n", [1, 15, 17, 31])
def test_block_modes_finalize_with_leftover(backend, mode, n):
    obj = new(mode, KEY, backend=backend)
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, mode, IV, direction)
        out = ctx.update(bytes(n))
        assert len(out) == 16 * (n // 16)
        with pytest.raises(ValueError):
            ctx.finalize()


# ---------------------------------------------------------------- _into buffers

@mode_param
def test_into_larger_buffer_returns_count(backend, mode):
    obj = new(mode, KEY, backend=backend)
    for direction, fn in (("encrypt", encrypt_into), ("decrypt", decrypt_into)):
        buf = bytearray(b"\xee" * 100)
        assert fn(obj, mode, IV, DATA, buf) == 48
        assert buf[:48] == ref(mode, KEY, IV, DATA, direction)
        assert buf[48:] == b"\xee" * 52


@mode_param
@pytest.mark.parametrize("short", [0, 1, 16, 47])
def test_into_buffer_too_small(backend, mode, short):
    obj = new(mode, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        buf = bytearray(b"\xee" * short)
        with pytest.raises(ValueError, match=r"\b48\b"):
            fn(obj, mode, IV, DATA, buf)
        assert buf == b"\xee" * short


@mode_param
@pytest.mark.parametrize("make", [bytes, lambda n: memoryview(bytes(n))],
                         ids=["bytes", "readonly-memoryview"])
def test_into_readonly_buffer(backend, mode, make):
    obj = new(mode, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(TypeError):
            fn(obj, mode, IV, DATA, make(48))
    for direction in ("encrypt", "decrypt"):
        with pytest.raises(TypeError):
            op(obj, mode, IV, direction).update_into(DATA, make(48))


@mode_param
@pytest.mark.parametrize("bad", NON_BUFFERS, ids=_ids)
def test_into_buffer_not_a_buffer(backend, mode, bad):
    obj = new(mode, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(TypeError):
            fn(obj, mode, IV, DATA, bad)
    with pytest.raises(TypeError):
        op(obj, mode, IV, "encrypt").update_into(DATA, bad)


def _overlaps(n, shift):
    """(data, buf) views of one bytearray, `shift` bytes apart, both n bytes long."""
    store = bytearray(range(256)) * ((n + abs(shift)) // 256 + 1)
    mv = memoryview(store)
    lo, hi = mv[:n], mv[abs(shift):abs(shift) + n]
    return (lo, hi) if shift > 0 else (hi, lo)


@mode_param
@pytest.mark.parametrize("shift", [1, -1, 15, -15, 16, -16, 17, 47, -47])
def test_into_partial_overlap(backend, mode, shift):
    obj = new(mode, KEY, backend=backend)
    for fn in (encrypt_into, decrypt_into):
        data, buf = _overlaps(48, shift)
        before = bytes(data.obj)
        with pytest.raises(ValueError):
            fn(obj, mode, IV, data, buf)
        assert bytes(data.obj) == before
    for direction in ("encrypt", "decrypt"):
        data, buf = _overlaps(48, shift)
        with pytest.raises(ValueError):
            op(obj, mode, IV, direction).update_into(data, buf)


@mode_param
def test_into_partial_overlap_first_vs_last(backend, mode):
    """The example from the spec: memoryview(b)[1:] vs memoryview(b)[:-1]."""
    obj = new(mode, KEY, backend=backend)
    b = bytearray(49)
    for fn in (encrypt_into, decrypt_into):
        with pytest.raises(ValueError):
            fn(obj, mode, IV, memoryview(b)[1:], memoryview(b)[:-1])
        with pytest.raises(ValueError):
            fn(obj, mode, IV, memoryview(b)[:-1], memoryview(b)[1:])


@mode_param
def test_into_adjacent_is_not_overlap(backend, mode):
    obj = new(mode, KEY, backend=backend)
    store = bytearray(DATA) + bytearray(48)
    mv = memoryview(store)
    assert encrypt_into(obj, mode, IV, mv[:48], mv[48:]) == 48
    assert store[48:] == ref(mode, KEY, IV, DATA)
    assert store[:48] == DATA


@mode_param
def test_into_exact_overlap(backend, mode):
    obj = new(mode, KEY, backend=backend)
    buf = bytearray(DATA)
    assert encrypt_into(obj, mode, IV, buf, buf) == 48
    assert buf == ref(mode, KEY, IV, DATA)
    store = bytearray(b"\x01" * 5) + DATA
    assert encrypt_into(obj, mode, IV, memoryview(store)[5:], memoryview(store)[5:]) == 48
    assert store[5:] == ref(mode, KEY, IV, DATA)


# ---------------------------------------------------------------- streaming contexts

@mode_param
def test_context_type(backend, mode):
    obj = new(mode, KEY, backend=backend)
    assert type(encryptor(obj, mode, IV)) is aeskit.CipherContext
    assert type(decryptor(obj, mode, IV)) is aeskit.CipherContext


@mode_param
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_already_finalized(backend, mode, direction):
    assert issubclass(aeskit.AlreadyFinalized, Exception)
    obj = new(mode, KEY, backend=backend)
    ctx = op(obj, mode, IV, direction)
    ctx.update(DATA)
    assert ctx.finalize() == b""
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


@pytest.mark.parametrize("mode", BLOCK_MODES)
def test_update_into_exact_size_with_pending(backend, mode):
    """update_into needs room for that update's output: whole blocks incl. pending bytes."""
    obj = new(mode, KEY, backend=backend)
    ctx = encryptor(obj, mode, IV)
    assert ctx.update(DATA[:10]) == b""
    with pytest.raises(ValueError, match=r"\b16\b"):
        ctx.update_into(DATA[10:20], bytearray(15))
    buf = bytearray(16)
    assert ctx.update_into(DATA[10:20], buf) == 16
    buf2 = bytearray(b"\xee" * 40)
    assert ctx.update_into(DATA[20:48], buf2) == 32
    assert buf2[32:] == b"\xee" * 8
    assert ctx.finalize() == b""
    assert bytes(buf) + bytes(buf2[:32]) == ref(mode, KEY, IV, DATA)


@pytest.mark.parametrize("mode", STREAM_MODES)
def test_update_into_too_small_stream(backend, mode):
    obj = new(mode, KEY, backend=backend)
    ctx = encryptor(obj, mode, IV)
    ctx.update(DATA[:5])
    with pytest.raises(ValueError, match=r"\b7\b"):
        ctx.update_into(DATA[5:12], bytearray(6))
    buf = bytearray(7)
    assert ctx.update_into(DATA[5:12], buf) == 7
    assert bytes(buf) == ref(mode, KEY, IV, DATA[:12])[5:12]


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


@mode_param
def test_accepted_input_types(backend, mode):
    obj = new(mode, KEY, backend=backend)
    want_e = ref(mode, KEY, IV, DATA, "encrypt")
    want_d = ref(mode, KEY, IV, DATA, "decrypt")
    for name, data in _variants(DATA):
        assert encrypt(obj, mode, IV, data) == want_e, name
        assert decrypt(obj, mode, IV, data) == want_d, name
        ctx = encryptor(obj, mode, IV)
        assert ctx.update(data) + ctx.finalize() == want_e, name
    for name, key in _variants(KEY):
        assert encrypt(new(mode, key, backend=backend), mode, IV, DATA) == want_e, name
    if mode != "ECB":
        for name, iv in _variants(IV):
            assert encrypt(obj, mode, iv, DATA) == want_e, name
            assert encrypt(obj, mode, IV, DATA) == want_e


@mode_param
def test_accepted_output_buffer_types(backend, mode):
    obj = new(mode, KEY, backend=backend)
    want = ref(mode, KEY, IV, DATA)
    for name, buf in _variants(bytes(48)):
        if memoryview(buf).readonly:
            continue
        assert encrypt_into(obj, mode, IV, DATA, buf) == 48, name
        assert bytes(memoryview(buf).cast("B")) == want, name
    # numpy in place, multi-dimensional
    arr = np.frombuffer(DATA, dtype=np.uint32).reshape(3, 4).copy()
    assert encrypt_into(obj, mode, IV, arr, arr) == 48
    assert arr.tobytes() == want


@mode_param
def test_non_contiguous_rejected(backend, mode):
    obj = new(mode, KEY, backend=backend)
    arr = np.arange(96, dtype=np.uint8)
    strided = arr[::2]  # 48 bytes, stride 2
    assert not strided.flags.c_contiguous
    fortran = np.asfortranarray(np.arange(48, dtype=np.uint8).reshape(6, 8))
    mv_strided = memoryview(bytes(96))[::2]
    for bad in (strided, fortran, mv_strided):
        with pytest.raises((TypeError, ValueError)):
            encrypt(obj, mode, IV, bad)
        with pytest.raises((TypeError, ValueError)):
            encrypt_into(obj, mode, IV, DATA, bad if not isinstance(bad, memoryview)
                         else memoryview(bytearray(96))[::2])
        with pytest.raises((TypeError, ValueError)):
            encryptor(obj, mode, IV).update(bad)
    with pytest.raises((TypeError, ValueError)):
        cls(mode)(np.arange(64, dtype=np.uint8)[::2], backend=backend)
    if mode != "ECB":
        with pytest.raises((TypeError, ValueError)):
            encrypt(obj, mode, np.arange(32, dtype=np.uint8)[::2], DATA)


# ---------------------------------------------------------------- length 0

@mode_param
@pytest.mark.parametrize("empty", [b"", bytearray(), memoryview(b""), np.zeros(0, np.uint8)],
                         ids=["bytes", "bytearray", "memoryview", "numpy"])
def test_length_zero(backend, mode, empty):
    obj = new(mode, KEY, backend=backend)
    assert encrypt(obj, mode, IV, empty) == b""
    assert decrypt(obj, mode, IV, empty) == b""
    assert encrypt_into(obj, mode, IV, empty, bytearray()) == 0
    assert decrypt_into(obj, mode, IV, empty, bytearray()) == 0
    buf = bytearray(b"\xee" * 16)
    assert encrypt_into(obj, mode, IV, empty, buf) == 0
    assert buf == b"\xee" * 16
    for direction in ("encrypt", "decrypt"):
        ctx = op(obj, mode, IV, direction)
        assert ctx.update(empty) == b""
        assert ctx.update_into(empty, bytearray()) == 0
        assert ctx.finalize() == b""
        # Empty updates between real ones change nothing.
        ctx = op(obj, mode, IV, direction)
        out = ctx.update(empty) + ctx.update(DATA[:20]) + ctx.update(empty)
        out += ctx.update(DATA[20:]) + ctx.update(empty) + ctx.finalize()
        assert out == ref(mode, KEY, IV, DATA, direction)


@mode_param
def test_length_zero_still_validates(backend, mode):
    """An empty message does not skip the argument checks."""
    obj = new(mode, KEY, backend=backend)
    if mode != "ECB":
        with pytest.raises(ValueError):
            obj.encrypt(bytes(15), b"")
        with pytest.raises(TypeError):
            obj.encrypt("x" * 16, b"")
    with pytest.raises(TypeError):
        encrypt_into(obj, mode, IV, b"", b"")
    with pytest.raises(TypeError):
        encrypt(obj, mode, IV, "")


@mode_param
def test_output_is_fresh_bytes(backend, mode):
    obj = new(mode, KEY, backend=backend)
    src = bytearray(DATA)
    out = encrypt(obj, mode, IV, src)
    assert type(out) is bytes
    assert src == DATA  # the input is never modified by the bytes-returning call
