"""Streaming contexts: every split of a message into update() calls equals one-shot;
ECB/CBC carry a partial block between calls, the other modes continue mid-block."""

import itertools

import pytest

from helpers import BLOCK_MODES, MODES, STREAM_MODES, chunks, new, op, ref, stream_len

KEY = bytes(range(100, 132))
IV = bytes(range(200, 216))

mode_param = pytest.mark.parametrize("mode", MODES)
dir_param = pytest.mark.parametrize("direction", ["encrypt", "decrypt"])


def _msg(mode, n):
    n = n - n % 16 if mode in BLOCK_MODES else n
    return bytes((i * 29 + 7) & 0xFF for i in range(n))


def _run(ctx, mode, pieces, use_into=False):
    out, pending = [], 0
    for p in pieces:
        need = stream_len(mode, pending, len(p))
        if use_into:
            buf = bytearray(need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending = (pending + len(p)) % 16
    out.append(ctx.finalize())
    return b"".join(out)


@mode_param
@dir_param
def test_every_two_way_split(backend, mode, direction):
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 16 * 17 + 5)  # past two 8-block batches, and a tail
    want = ref(mode, KEY, IV, data, direction)
    for i in range(len(data) + 1):
        ctx = op(obj, mode, IV, direction)
        assert _run(ctx, mode, [data[:i], data[i:]], use_into=bool(i & 1)) == want, i


@mode_param
@dir_param
def test_every_three_way_split(backend, mode, direction):
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 50)
    want = ref(mode, KEY, IV, data, direction)
    for i, j in itertools.combinations_with_replacement(range(len(data) + 1), 2):
        ctx = op(obj, mode, IV, direction)
        assert _run(ctx, mode, chunks(data, [i, j])) == want, (i, j)


@mode_param
@dir_param
@pytest.mark.parametrize("step", [1, 3, 15, 16, 17, 31, 33, 127, 128, 129, 255])
def test_fixed_steps(backend, mode, direction, step):
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 16 * 64 + 9)
    want = ref(mode, KEY, IV, data, direction)
    pieces = [data[i:i + step] for i in range(0, len(data), step)]
    assert _run(op(obj, mode, IV, direction), mode, pieces) == want
    assert _run(op(obj, mode, IV, direction), mode, pieces, use_into=True) == want


@pytest.mark.parametrize("mode", BLOCK_MODES)
def test_block_modes_hold_back_partial_blocks(backend, mode):
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 64)
    want = ref(mode, KEY, IV, data)
    ctx = op(obj, mode, IV, "encrypt")
    assert ctx.update(data[:15]) == b""
    assert ctx.update(data[15:16]) == want[:16]
    assert ctx.update(data[16:17]) == b""
    assert ctx.update(data[17:50]) == want[16:48]
    assert ctx.update(b"") == b""
    assert ctx.update(data[50:64]) == want[48:64]
    assert ctx.finalize() == b""


@pytest.mark.parametrize("mode", STREAM_MODES)
def test_stream_modes_continue_mid_block(backend, mode):
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 300)
    want = ref(mode, KEY, IV, data)
    ctx = op(obj, mode, IV, "encrypt")
    out = [ctx.update(data[i:i + 1]) for i in range(len(data))]
    assert all(len(o) == 1 for o in out)
    assert b"".join(out) + ctx.finalize() == want


@mode_param
def test_contexts_are_independent(backend, mode):
    """Contexts of one key object share no state: interleaving them changes nothing."""
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 16 * 20)
    iv2 = bytes(reversed(IV))
    e1, e2 = op(obj, mode, IV, "encrypt"), op(obj, mode, iv2, "encrypt")
    d1 = op(obj, mode, IV, "decrypt")
    ct1 = ref(mode, KEY, IV, data)
    o1, o2, o3 = [], [], []
    for i in range(0, len(data), 24):
        o1.append(e1.update(data[i:i + 24]))
        o2.append(e2.update(data[i:i + 24]))
        o3.append(d1.update(ct1[i:i + 24]))
    for ctx, out in ((e1, o1), (e2, o2), (d1, o3)):
        out.append(ctx.finalize())
    assert b"".join(o1) == ct1
    assert b"".join(o2) == ref(mode, KEY, iv2 if mode != "ECB" else IV, data)
    assert b"".join(o3) == data
    # The key object's one-shot calls are unaffected by live contexts.
    live = op(obj, mode, IV, "encrypt")
    live.update(data[:7])
    assert obj.encrypt(*((IV,) if mode != "ECB" else ()), data) == ct1


@pytest.mark.parametrize("mode", [m for m in MODES if m != "ECB"])
def test_iv_is_copied_at_context_creation(backend, mode):
    obj = new(mode, KEY, backend=backend)
    iv = bytearray(IV)
    ctx = obj.encryptor(iv)
    iv[:] = bytes(16)
    data = _msg(mode, 64)
    assert ctx.update(data) + ctx.finalize() == ref(mode, KEY, IV, data)


@mode_param
def test_key_is_copied_at_construction(backend, mode):
    key = bytearray(KEY)
    obj = new(mode, key, backend=backend)
    key[:] = bytes(len(key))
    data = _msg(mode, 64)
    ctx = op(obj, mode, IV, "encrypt")
    assert ctx.update(data) + ctx.finalize() == ref(mode, KEY, IV, data)


@mode_param
def test_failed_update_into_consumes_nothing(backend, mode):
    """A buf too small is rejected before any state changes: a retry gives the right bytes."""
    obj = new(mode, KEY, backend=backend)
    data = _msg(mode, 64)
    want = ref(mode, KEY, IV, data)
    ctx = op(obj, mode, IV, "encrypt")
    first = ctx.update(data[:5])
    with pytest.raises(ValueError):
        ctx.update_into(data[5:40], bytearray(3))
    rest = ctx.update(data[5:]) + ctx.finalize()
    assert first + rest == want


@mode_param
@dir_param
def test_large_updates(backend, mode, direction):
    """Updates large enough to release the GIL, mixed with odd small ones."""
    obj = new(mode, KEY, backend=backend)
    size = 1 << 20 if mode != "CFB8" else 1 << 17  # CFB8: one AES call per byte
    data = _msg(mode, size + 16 * 3 + 5)
    want = ref(mode, KEY, IV, data, direction)
    cuts = [3, 3 + size // 2 + 1, size + 1]
    assert _run(op(obj, mode, IV, direction), mode, chunks(data, cuts)) == want
