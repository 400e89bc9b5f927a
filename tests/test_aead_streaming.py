"""AEAD streaming contexts: every split of AAD and data into calls equals one-shot (OpenSSL
#2273 and CVE-2025-69418: OCB lost or left unencrypted a buffered tail); GCM returns every
byte at once, OCB3 whole blocks only with the 0..15-byte tail at finalize; the context's
state machine (AAD before data, tag after finalize, nothing after finalize). Which AEAD
returns what is its spec's whole_blocks (aead_helpers.AEADS)."""

import hashlib
import itertools
import threading

import aeskit
import pytest

from aead_helpers import (
    AEADS,
    WIDE_BATCH,
    chunks,
    new_aead,
    rand,
    ref_seal,
    stream_len,
    stream_open,
    stream_seal,
    spec_params,
)

KEY = rand(1, 32)
# Past two of the widest batches, and a tail.
PAST_TWO_BATCHES = 16 * (2 * WIDE_BATCH + 1) + 5


def nonce_of(spec, seed=2):
    """The suite's nonce for spec: its usual length (aead_helpers.AeadSpec.nonce_len)."""
    return rand(seed, spec.nonce_len)

# Only the AEADs that stream (CCM does not: test_aead_api checks it has no contexts).
spec_param = pytest.mark.parametrize("spec", spec_params(AEADS, streams=True))
dir_param = pytest.mark.parametrize("direction", ["encrypt", "decrypt"])


def _sealed(spec, pt, aad, t=16):
    s = ref_seal(spec, KEY, nonce_of(spec), pt, aad, t)
    return s[:len(pt)], s[len(pt):]


def _run(obj, spec, direction, aad_pieces, data_pieces, pt, ct, tag, use_into=()):
    if direction == "encrypt":
        assert stream_seal(obj, spec, nonce_of(spec), pt, aad_pieces, data_pieces, use_into) == (ct, tag)
    else:
        assert stream_open(obj, spec, nonce_of(spec), tag, aad_pieces, data_pieces, use_into) == pt


@spec_param
@dir_param
def test_every_two_way_split_of_data(backend, spec, direction):
    obj = new_aead(spec, KEY, backend=backend)
    pt, aad = rand(3, PAST_TWO_BATCHES), rand(4, 21)
    ct, tag = _sealed(spec, pt, aad)
    src = pt if direction == "encrypt" else ct
    for i in range(len(src) + 1):
        _run(obj, spec, direction, [aad], [src[:i], src[i:]], pt, ct, tag,
             use_into=(bool(i & 1), bool(i & 2)))


@spec_param
@dir_param
def test_every_two_way_split_of_aad(backend, spec, direction):
    obj = new_aead(spec, KEY, backend=backend)
    pt, aad = rand(5, 37), rand(6, PAST_TWO_BATCHES)
    ct, tag = _sealed(spec, pt, aad)
    src = pt if direction == "encrypt" else ct
    for i in range(len(aad) + 1):
        _run(obj, spec, direction, [aad[:i], aad[i:]], [src], pt, ct, tag)


@spec_param
@dir_param
def test_every_three_way_split(backend, spec, direction):
    obj = new_aead(spec, KEY, backend=backend)
    pt, aad = rand(7, 50), rand(8, 35)
    ct, tag = _sealed(spec, pt, aad)
    src = pt if direction == "encrypt" else ct
    for i, j in itertools.combinations_with_replacement(range(len(src) + 1), 2):
        _run(obj, spec, direction, [aad], chunks(src, [i, j]), pt, ct, tag)
    for i, j in itertools.combinations_with_replacement(range(len(aad) + 1), 2):
        _run(obj, spec, direction, chunks(aad, [i, j]), [src], pt, ct, tag)


@spec_param
@dir_param
@pytest.mark.parametrize("step", [1, 3, 15, 16, 17, 31, 33, 127, 128, 129, 255])
def test_fixed_steps(backend, spec, direction, step):
    obj = new_aead(spec, KEY, backend=backend)
    pt, aad = rand(9, 16 * 64 + 9), rand(10, 16 * 9 + 3)
    ct, tag = _sealed(spec, pt, aad)
    src = pt if direction == "encrypt" else ct
    pieces = [src[i:i + step] for i in range(0, len(src), step)]
    apieces = [aad[i:i + step] for i in range(0, len(aad), step)]
    _run(obj, spec, direction, apieces, pieces, pt, ct, tag)
    _run(obj, spec, direction, apieces, pieces, pt, ct, tag, use_into=[True] * len(pieces))


@spec_param
@dir_param
def test_empty_calls_change_nothing(backend, spec, direction):
    obj = new_aead(spec, KEY, backend=backend)
    pt, aad = rand(11, 40), rand(12, 20)
    ct, tag = _sealed(spec, pt, aad)
    src = pt if direction == "encrypt" else ct
    _run(obj, spec, direction, [b"", b"", aad[:3], b"", aad[3:], b""],
         [b"", src[:16], b"", b"", src[16:], b""], pt, ct, tag)
    # No AAD call at all, one empty call, several: all the same as AAD b"".
    ct0, tag0 = _sealed(spec, pt, b"")
    for apieces in ([], [b""], [b"", b"", b""]):
        _run(obj, spec, direction, apieces, [src if direction == "encrypt" else ct0],
             pt, ct0, tag0)


@spec_param
def test_empty_message(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    for aad in (b"", rand(13, 17)):
        ct, tag = _sealed(spec, b"", aad)
        assert ct == b""
        assert stream_seal(obj, spec, nonce_of(spec), b"", [aad], []) == (b"", tag)
        assert stream_open(obj, spec, nonce_of(spec), tag, [aad], []) == b""


@pytest.mark.parametrize("spec", spec_params(AEADS, whole_blocks=True, streams=True))
def test_whole_block_aeads_hold_back_partial_blocks(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(14, 70)
    ct, tag = _sealed(spec, pt, b"")
    ctx = obj.encryptor(nonce_of(spec))
    assert ctx.update(pt[:15]) == b""
    assert ctx.update(pt[15:16]) == ct[:16]
    assert ctx.update(pt[16:17]) == b""
    assert ctx.update(pt[17:50]) == ct[16:48]
    assert ctx.update(b"") == b""
    assert ctx.update(pt[50:64]) == ct[48:64]
    assert ctx.update(pt[64:]) == b""
    assert ctx.finalize() == ct[64:]
    assert ctx.tag == tag
    dec = obj.decryptor(nonce_of(spec))
    assert dec.update(ct[:31]) == pt[:16]
    assert dec.update(ct[31:33]) == pt[16:32]
    assert dec.update(ct[33:]) == pt[32:64]
    assert dec.finalize_with_tag(tag) == pt[64:]


@pytest.mark.parametrize("spec", spec_params(AEADS, whole_blocks=True, streams=True))
def test_whole_block_at_the_end_is_not_held(backend, spec):
    """A message of whole blocks comes out entirely from update; finalize gives b""."""
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(15, 64)
    ct, tag = _sealed(spec, pt, b"")
    ctx = obj.encryptor(nonce_of(spec))
    assert ctx.update(pt) == ct
    assert ctx.finalize() == b""
    assert ctx.tag == tag


@pytest.mark.parametrize("spec", spec_params(AEADS, whole_blocks=False, streams=True))
def test_returns_every_byte_at_once(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(16, 300)
    ct, tag = _sealed(spec, pt, b"ad")
    for direction, src, want in (("encrypt", pt, ct), ("decrypt", ct, pt)):
        ctx = obj.encryptor(nonce_of(spec)) if direction == "encrypt" else obj.decryptor(nonce_of(spec))
        ctx.authenticate_additional_data(b"ad")
        out = [ctx.update(src[i:i + 1]) for i in range(len(src))]
        assert all(len(o) == 1 for o in out)
        end = ctx.finalize() if direction == "encrypt" else ctx.finalize_with_tag(tag)
        assert end == b""
        assert b"".join(out) == want


@spec_param
def test_update_into_sizes(backend, spec):
    """update_into needs room for that call's output (OCB: whole blocks incl. pending bytes)
    and returns the count; a larger buffer is fine, the rest untouched."""
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(17, 48)
    ct, tag = _sealed(spec, pt, b"")
    ctx = obj.encryptor(nonce_of(spec))
    first = ctx.update(pt[:10])
    assert len(first) == stream_len(spec, 0, 10)
    need = stream_len(spec, 10, 30)
    if need:
        small = bytearray(b"\xee" * (need - 1))
        with pytest.raises(ValueError, match=rf"\b{need}\b"):
            ctx.update_into(pt[10:40], small)
        assert small == b"\xee" * (need - 1)
    big = bytearray(b"\xee" * (need + 5))
    assert ctx.update_into(pt[10:40], big) == need
    assert big[need:] == b"\xee" * 5
    rest = ctx.update(pt[40:]) + ctx.finalize()
    assert first + bytes(big[:need]) + rest == ct
    assert ctx.tag == tag


@spec_param
def test_streaming_in_place(backend, spec):
    """update_into with the input itself as buf: any cut for GCM, block-aligned for OCB3
    (whose output lags its input otherwise)."""
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(18, 16 * 20 + (0 if spec.whole_blocks else 7))
    ct, tag = _sealed(spec, pt, b"")
    cuts = [16, 16, 48, 208] if spec.whole_blocks else [5, 5, 37, 200]
    for direction in ("encrypt", "decrypt"):
        buf = bytearray(pt if direction == "encrypt" else ct)
        mv = memoryview(buf)
        ctx = obj.encryptor(nonce_of(spec)) if direction == "encrypt" else obj.decryptor(nonce_of(spec))
        pos = 0
        for piece in chunks(range(len(buf)), cuts):
            m = len(piece)
            assert ctx.update_into(mv[pos:pos + m], mv[pos:pos + m]) == m
            pos += m
        end = ctx.finalize() if direction == "encrypt" else ctx.finalize_with_tag(tag)
        assert end == b""
        assert buf == (ct if direction == "encrypt" else pt)
        if direction == "encrypt":
            assert ctx.tag == tag


@spec_param
def test_contexts_are_independent(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(19, 16 * 20 + 3)
    nonce2 = nonce_of(spec, 20)
    ct, tag = _sealed(spec, pt, b"x")
    e1, e2, d1 = obj.encryptor(nonce_of(spec)), obj.encryptor(nonce2), obj.decryptor(nonce_of(spec))
    for c in (e1, e2, d1):
        c.authenticate_additional_data(b"x")
    o1, o2, o3 = [], [], []
    for i in range(0, len(pt), 24):
        o1.append(e1.update(pt[i:i + 24]))
        o2.append(e2.update(pt[i:i + 24]))
        o3.append(d1.update(ct[i:i + 24]))
        assert obj.encrypt(nonce_of(spec), pt, b"x") == ct + tag  # one-shot calls in between
    o1.append(e1.finalize())
    o2.append(e2.finalize())
    o3.append(d1.finalize_with_tag(tag))
    assert b"".join(o1) == ct and e1.tag == tag
    assert b"".join(o2) + e2.tag == ref_seal(spec, KEY, nonce2, pt, b"x")
    assert b"".join(o3) == pt


# ---------------------------------------------------------------- the state machine

@spec_param
def test_context_type(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    assert type(obj.encryptor(nonce_of(spec))) is aeskit.AEADContext
    assert type(obj.decryptor(nonce_of(spec))) is aeskit.AEADContext


@spec_param
def test_decryptor_docstring_warns(spec):
    cls = spec.cls
    doc = (cls.decryptor.__doc__ or "").lower()
    assert "unauthenticated" in doc or "not authenticated" in doc, cls.decryptor.__doc__


@spec_param
def test_aad_after_update_is_refused(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    for make in (obj.encryptor, obj.decryptor):
        ctx = make(nonce_of(spec))
        ctx.authenticate_additional_data(b"a")
        ctx.authenticate_additional_data(b"b")
        ctx.update(b"data")
        with pytest.raises(ValueError):
            ctx.authenticate_additional_data(b"c")
        with pytest.raises(ValueError):
            ctx.authenticate_additional_data(b"")


@spec_param
def test_tag_before_finalize(backend, spec):
    assert issubclass(aeskit.NotYetFinalized, Exception)
    obj = new_aead(spec, KEY, backend=backend)
    ctx = obj.encryptor(nonce_of(spec))
    with pytest.raises(aeskit.NotYetFinalized):
        _ = ctx.tag
    ctx.update(b"x" * 20)
    with pytest.raises(aeskit.NotYetFinalized):
        _ = ctx.tag
    ctx.finalize()
    assert ctx.tag == ctx.tag and len(ctx.tag) == 16


@spec_param
def test_decryptor_finalize_needs_the_tag(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(21, 20)
    ct, tag = _sealed(spec, pt, b"")
    ctx = obj.decryptor(nonce_of(spec))
    out = ctx.update(ct)
    with pytest.raises(ValueError):
        ctx.finalize()
    # finalize() refused, the context still finishes with the tag.
    assert out + ctx.finalize_with_tag(tag) == pt


@spec_param
def test_encryptor_has_no_finalize_with_tag(backend, spec):
    obj = new_aead(spec, KEY, backend=backend)
    ctx = obj.encryptor(nonce_of(spec))
    ctx.update(b"abc")
    with pytest.raises((ValueError, AttributeError, TypeError)):
        ctx.finalize_with_tag(bytes(16))


def _after_finalize_calls(ctx):
    buf = bytearray(b"\xee" * 64)
    return [
        ("update", lambda: ctx.update(b"x" * 20)),
        ("update-empty", lambda: ctx.update(b"")),
        ("update_into", lambda: ctx.update_into(b"x" * 20, buf)),
        ("aad", lambda: ctx.authenticate_additional_data(b"x")),
        ("finalize", ctx.finalize),
        ("finalize_with_tag", lambda: ctx.finalize_with_tag(bytes(16))),
    ], buf


@spec_param
@pytest.mark.parametrize("how", ["encrypt", "decrypt-ok", "decrypt-bad-tag"])
def test_already_finalized(backend, spec, how):
    obj = new_aead(spec, KEY, backend=backend)
    pt = rand(22, 20)
    ct, tag = _sealed(spec, pt, b"")
    if how == "encrypt":
        ctx = obj.encryptor(nonce_of(spec))
        ctx.update(pt)
        ctx.finalize()
        tag_before = ctx.tag
    else:
        ctx = obj.decryptor(nonce_of(spec))
        ctx.update(ct)
        if how == "decrypt-ok":
            ctx.finalize_with_tag(tag)
        else:
            with pytest.raises(aeskit.InvalidTag):
                ctx.finalize_with_tag(bytes(16))
    calls, buf = _after_finalize_calls(ctx)
    for label, call in calls:
        if how == "encrypt" and label == "finalize_with_tag":
            expected = (aeskit.AlreadyFinalized, ValueError, AttributeError, TypeError)
        else:
            expected = aeskit.AlreadyFinalized
        with pytest.raises(expected):
            call()
    assert buf == b"\xee" * 64
    if how == "encrypt":
        assert ctx.tag == tag_before == tag


BIG = 4 << 20  # well above any GIL-release threshold


@spec_param
def test_shared_context_from_two_threads(backend, spec):
    """Two threads hammer one encryptor with BIG updates of zeros: each update raises
    RuntimeError or returns the next unused chunk of the serial output, never one twice,
    and the tag covers exactly the chunks handed out."""
    per_thread = 2
    zeros = bytes(BIG)
    ctx = new_aead(spec, KEY, backend=backend).encryptor(nonce_of(spec))
    got, raised, errors = [], [], []
    lock = threading.Lock()
    barrier = threading.Barrier(2)

    def work():
        try:
            barrier.wait()
            for _ in range(per_thread):
                try:
                    out = ctx.update(zeros)
                except RuntimeError as e:
                    with lock:
                        raised.append(e)
                    continue
                assert len(out) == BIG  # BIG is whole blocks: OCB3 holds nothing back
                with lock:
                    got.append(hashlib.sha256(out).hexdigest())
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert got, "every update raised: the context never worked"
    assert len(got) + len(raised) == 2 * per_thread
    assert len(set(got)) == len(got), "the same output was handed out twice"
    k = len(got)
    serial = ref_seal(spec, KEY, nonce_of(spec), bytes(BIG * k), b"")
    assert sorted(got) == sorted(hashlib.sha256(serial[i * BIG:(i + 1) * BIG]).hexdigest()
                                 for i in range(k))
    assert ctx.finalize() == b""
    assert ctx.tag == serial[BIG * k:]


@pytest.mark.parametrize("spec,t", [pytest.param(spec, t, id=f"{spec.name}-{t}")
                                    for spec in AEADS if spec.streams
                                    for t in (16, 12) if t in spec.tag_lengths])
def test_finalize_with_tag_arguments(backend, spec, t):
    """A tag longer than tag_length is refused (ValueError, never accepted on a prefix),
    as is one shorter (test_aead_tamper); a non-buffer is a TypeError."""
    obj = new_aead(spec, KEY, tag_length=t, backend=backend)
    pt = rand(23, 21)
    ct, tag = _sealed(spec, pt, b"", t)
    for bad in (tag + b"\0", tag + bytes(16 - t + 1)):
        ctx = obj.decryptor(nonce_of(spec))
        ctx.update(ct)
        with pytest.raises(ValueError, match=f"tag must be {t} bytes, got {len(bad)}") as info:
            ctx.finalize_with_tag(bad)
        assert not isinstance(info.value, aeskit.InvalidTag)
    for bad in ("0" * t, None, t):
        ctx = obj.decryptor(nonce_of(spec))
        ctx.update(ct)
        with pytest.raises(TypeError):
            ctx.finalize_with_tag(bad)
    ctx = obj.decryptor(nonce_of(spec))
    out = ctx.update(ct)
    assert out + ctx.finalize_with_tag(bytearray(tag)) == pt
