"""Streaming contexts: every split of a message into update() calls equals one-shot;
ECB/CBC carry a partial block between calls, the other modes continue mid-block."""

import itertools

import pytest

from helpers import CIPHERS, WIDE_BATCH, chunks, fit, ivargs, new, op, ref, spec_params, stream_len

KEY = bytes(range(100, 132))
IV = bytes(range(200, 216))

spec_param = pytest.mark.parametrize("spec", spec_params(CIPHERS))
dir_param = pytest.mark.parametrize("direction", ["encrypt", "decrypt"])


def _msg(spec, n):
    n = fit(spec, n)
    return bytes((i * 29 + 7) & 0xFF for i in range(n))


def _run(ctx, spec, pieces, use_into=False):
    out, pending = [], 0
    for p in pieces:
        need = stream_len(spec, pending, len(p))
        if use_into:
            buf = bytearray(need)
            assert ctx.update_into(p, buf) == need
            out.append(bytes(buf))
        else:
            got = ctx.update(p)
            assert len(got) == need, (len(p), pending)
            out.append(got)
        pending += len(p) - need
    out.append(ctx.finalize())
    return b"".join(out)


@spec_param
@dir_param
def test_every_two_way_split(backend, spec, direction):
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 16 * (2 * WIDE_BATCH + 1) + 5)  # past two of the widest batches, a tail
    want = ref(spec, KEY, IV, data, direction)
    for i in range(len(data) + 1):
        ctx = op(obj, spec, IV, direction)
        assert _run(ctx, spec, [data[:i], data[i:]], use_into=bool(i & 1)) == want, i


@spec_param
@dir_param
def test_every_three_way_split(backend, spec, direction):
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 50)
    want = ref(spec, KEY, IV, data, direction)
    for i, j in itertools.combinations_with_replacement(range(len(data) + 1), 2):
        ctx = op(obj, spec, IV, direction)
        assert _run(ctx, spec, chunks(data, [i, j])) == want, (i, j)


@spec_param
@dir_param
@pytest.mark.parametrize("step", [1, 3, 15, 16, 17, 31, 33, 127, 128, 129, 255])
def test_fixed_steps(backend, spec, direction, step):
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 16 * 64 + 9)
    want = ref(spec, KEY, IV, data, direction)
    pieces = [data[i:i + step] for i in range(0, len(data), step)]
    assert _run(op(obj, spec, IV, direction), spec, pieces) == want
    assert _run(op(obj, spec, IV, direction), spec, pieces, use_into=True) == want


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=True))
def test_block_modes_hold_back_partial_blocks(backend, spec):
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 64)
    want = ref(spec, KEY, IV, data)
    ctx = op(obj, spec, IV, "encrypt")
    assert ctx.update(data[:15]) == b""
    assert ctx.update(data[15:16]) == want[:16]
    assert ctx.update(data[16:17]) == b""
    assert ctx.update(data[17:50]) == want[16:48]
    assert ctx.update(b"") == b""
    assert ctx.update(data[50:64]) == want[48:64]
    assert ctx.finalize() == b""


@pytest.mark.parametrize("spec", spec_params(CIPHERS, whole_blocks=False, steals=False))
def test_stream_modes_continue_mid_block(backend, spec):
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 300)
    want = ref(spec, KEY, IV, data)
    ctx = op(obj, spec, IV, "encrypt")
    out = [ctx.update(data[i:i + 1]) for i in range(len(data))]
    assert all(len(o) == 1 for o in out)
    assert b"".join(out) + ctx.finalize() == want


@spec_param
def test_contexts_are_independent(backend, spec):
    """Contexts of one key object share no state: interleaving them changes nothing."""
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 16 * 20)
    iv2 = bytes(reversed(IV))
    e1, e2 = op(obj, spec, IV, "encrypt"), op(obj, spec, iv2, "encrypt")
    d1 = op(obj, spec, IV, "decrypt")
    ct1 = ref(spec, KEY, IV, data)
    o1, o2, o3 = [], [], []
    for i in range(0, len(data), 24):
        o1.append(e1.update(data[i:i + 24]))
        o2.append(e2.update(data[i:i + 24]))
        o3.append(d1.update(ct1[i:i + 24]))
    for ctx, out in ((e1, o1), (e2, o2), (d1, o3)):
        out.append(ctx.finalize())
    assert b"".join(o1) == ct1
    assert b"".join(o2) == ref(spec, KEY, iv2 if spec.has_iv else IV, data)
    assert b"".join(o3) == data
    # The key object's one-shot calls are unaffected by live contexts.
    live = op(obj, spec, IV, "encrypt")
    live.update(data[:7])
    assert obj.encrypt(*ivargs(spec, IV), data) == ct1


@pytest.mark.parametrize("spec", spec_params(CIPHERS, has_iv=True))
def test_iv_is_copied_at_context_creation(backend, spec):
    obj = new(spec, KEY, backend=backend)
    iv = bytearray(IV)
    ctx = obj.encryptor(iv)
    iv[:] = bytes(16)
    data = _msg(spec, 64)
    assert ctx.update(data) + ctx.finalize() == ref(spec, KEY, IV, data)


@spec_param
def test_key_is_copied_at_construction(backend, spec):
    key = bytearray(KEY)
    obj = new(spec, key, backend=backend)
    key[:] = bytes(len(key))
    data = _msg(spec, 64)
    ctx = op(obj, spec, IV, "encrypt")
    assert ctx.update(data) + ctx.finalize() == ref(spec, KEY, IV, data)


@spec_param
def test_failed_update_into_consumes_nothing(backend, spec):
    """A buf too small is rejected before any state changes: a retry gives the right bytes."""
    obj = new(spec, KEY, backend=backend)
    data = _msg(spec, 64)
    want = ref(spec, KEY, IV, data)
    ctx = op(obj, spec, IV, "encrypt")
    first = ctx.update(data[:5])
    with pytest.raises(ValueError):
        ctx.update_into(data[5:40], bytearray(3))
    rest = ctx.update(data[5:]) + ctx.finalize()
    assert first + rest == want


@spec_param
@dir_param
def test_large_updates(backend, spec, direction):
    """Updates large enough to release the GIL, mixed with odd small ones."""
    obj = new(spec, KEY, backend=backend)
    size = 1 << 20 if spec.segment == 16 else 1 << 17  # CFB8: one AES call per byte
    data = _msg(spec, size + 16 * 3 + 5)
    want = ref(spec, KEY, IV, data, direction)
    cuts = [3, 3 + size // 2 + 1, size + 1]
    assert _run(op(obj, spec, IV, direction), spec, chunks(data, cuts)) == want
