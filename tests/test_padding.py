"""PKCS#7 padding on ECB and CBC (padding="pkcs7"): the argument, one-shot and `_into` sizes,
streaming (the decryptor holds back its last block), pyca/cryptography's PKCS7(128) as the
reference, and every bad padding refused with one message and no output.

Whether the check is constant time is tests/test_constant_time.py's job (modes/padding.c
under valgrind); here it is only that no failure says more than "invalid padding"."""

import itertools

import aeskit
import pytest
from cryptography.hazmat.primitives import padding as pyca_padding
from hypothesis import given
from hypothesis import strategies as st

from helpers import CIPHERS, KEY_SIZES, WIDE_BATCH, chunks, ivargs, ref, spec_params

KEY = bytes(range(0x20, 0x40))
IV = bytes(range(0x60, 0x70))
BAD = "invalid padding"

# The modes that take padding=; every other must refuse the keyword.
PADS = ("ECB", "CBC")
PAD_SPECS = [s for s in CIPHERS if s.name in PADS]
pad_param = pytest.mark.parametrize("spec", [p for p in spec_params(CIPHERS)
                                             if p.values[0].name in PADS])


def bad_message(spec, method):
    """The one message of every padding failure of spec's method (CipherContext's for a
    stream's finalize): where, then BAD."""
    where = "CipherContext" if method == "finalize" else spec.cls.__name__
    return f"{where}.{method}: {BAD}"


LENGTHS = sorted(set(range(81)) | {16 * k + d for k in (6, 8, 16, 31, 32, 33, 64, 65)
                                   for d in (-1, 0, 1)})


def _msg(n, salt=0):
    return bytes((i * 73 + 11 + salt) & 0xFF for i in range(n))


def _pad(data):
    p = pyca_padding.PKCS7(128).padder()
    return p.update(bytes(data)) + p.finalize()


def _unpad(data):
    u = pyca_padding.PKCS7(128).unpadder()
    return u.update(bytes(data)) + u.finalize()


def _padded(spec, key=KEY, backend="auto"):
    return spec.cls(key, padding="pkcs7", backend=backend)


def _want(spec, data, key=KEY, iv=IV):
    """pyca's answer: PKCS7(128) padding, then the mode without padding."""
    return ref(spec, key, iv if spec.has_iv else None, _pad(data))


def _lag(total):
    """What a padding decryptor has returned after `total` bytes: all but the last block
    (1 to 16 bytes)."""
    return 0 if total == 0 else (total - 1) // 16 * 16


def _stream(ctx, pieces, decrypting, use_into=False):
    """Feeds pieces to ctx checking each update's size, then finalizes."""
    out, total = [], 0
    for p in pieces:
        before = _lag(total) if decrypting else total // 16 * 16
        total += len(p)
        need = (_lag(total) if decrypting else total // 16 * 16) - before
        if use_into:
            buf = bytearray(b"\xee" * (need + 3))
            assert ctx.update_into(p, buf) == need
            assert buf[need:] == b"\xee" * 3
            out.append(bytes(buf[:need]))
        else:
            got = ctx.update(p)
            assert len(got) == need, (len(p), total)
            out.append(got)
    out.append(ctx.finalize())
    return b"".join(out)


# ---------------------------------------------------------------- the argument

@pad_param
def test_padding_attribute(backend, spec):
    assert spec.cls(KEY, backend=backend).padding is None
    assert spec.cls(KEY, padding=None, backend=backend).padding is None
    obj = _padded(spec, backend=backend)
    assert obj.padding == "pkcs7"
    assert "padding=pkcs7" in repr(obj)
    assert "padding" not in repr(spec.cls(KEY))
    with pytest.raises(AttributeError):
        obj.padding = None


@pad_param
@pytest.mark.parametrize("name", ["pkcs7", "PKCS7", "Pkcs7", "pKcS7"])
def test_padding_name_in_any_case(backend, spec, name):
    """'PKCS7', as the standard writes it, is the same padding; .padding says 'pkcs7'."""
    obj = spec.cls(KEY, padding=name, backend=backend)
    assert obj.padding == "pkcs7"
    iv = ivargs(spec, IV)
    assert obj.encrypt(*iv, b"abc") == _padded(spec, backend=backend).encrypt(*iv, b"abc")


@pad_param
# ids by type and position: an object()'s repr differs between xdist workers
# (any case is ASCII's: the Kelvin sign, which folds to "k", is no letter of "pkcs7")
@pytest.mark.parametrize("bad", ["pkcs5", "PKCS5", "", "pkcs7 ", "pkcs", "pkcs77",
                                 "p\u212acs7", "pkcs\u0667", "pkcs\ud800", b"pkcs7", 7, True,
                                 0.0, object(), ["pkcs7"]],
                         ids=lambda v: "object()" if type(v) is object else repr(v))
def test_padding_value_refused(spec, bad):
    with pytest.raises(ValueError, match="padding must be None or 'pkcs7'"):
        spec.cls(KEY, padding=bad)


@pad_param
def test_padding_is_keyword_only(spec):
    with pytest.raises(TypeError):
        spec.cls(KEY, "pkcs7")


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_only_ecb_and_cbc_pad(spec):
    """A mode that cannot pad refuses the keyword as unexpected, even None, and has no
    padding attribute; a new mode that pads must be added to PADS."""
    if spec.name in PADS:
        assert spec.cls(KEY, padding="pkcs7").padding == "pkcs7"
        return
    for value in ("pkcs7", None):
        with pytest.raises(TypeError, match="padding"):
            spec.cls(KEY, padding=value)
    assert not hasattr(spec.cls(KEY), "padding")


# ---------------------------------------------------------------- one-shot and _into

@pad_param
def test_one_shot_every_length(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for n in LENGTHS:
        data = _msg(n)
        want = _want(spec, data)
        assert len(want) == n // 16 * 16 + 16
        assert obj.encrypt(*iv, data) == want, n
        assert obj.decrypt(*iv, want) == data, n


@pad_param
def test_into_every_length(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for n in LENGTHS:
        data = _msg(n)
        want = _want(spec, data)
        size = len(data) // 16 * 16 + 16  # the padded length, as docs/modes.md says
        buf = bytearray(b"\xee" * (size + 5))
        assert obj.encrypt_into(*iv, data, buf) == size
        assert buf == want + b"\xee" * 5
        # decryption needs room for the whole input and returns the unpadded length;
        # the rest of buf is left as it was
        buf = bytearray(b"\xee" * (len(want) + 5))
        assert obj.decrypt_into(*iv, want, buf) == n
        assert buf[:n] == data and buf[len(want):] == b"\xee" * 5
        assert buf[n:len(want)] == b"\xee" * (len(want) - n)
        # in place: encryption reads the data at the start of buf; decryption leaves the
        # ciphertext after the plaintext
        buf = bytearray(data) + bytearray(size - n)
        assert obj.encrypt_into(*iv, memoryview(buf)[:n], buf) == size
        assert buf == want
        assert obj.decrypt_into(*iv, buf, buf) == n
        assert buf[:n] == data and buf[n:] == want[n:]


@pad_param
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 47, 48])
def test_into_buffer_too_small(backend, spec, n):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    data = _msg(n)
    size = n // 16 * 16 + 16
    buf = bytearray(b"\xee" * (size - 1))
    with pytest.raises(ValueError, match=rf"\b{size}\b"):
        obj.encrypt_into(*iv, data, buf)
    assert buf == b"\xee" * (size - 1)
    ct = _want(spec, data)
    # the unpadded result would fit, but the rule is len(buf) >= len(data)
    buf = bytearray(b"\xee" * (len(ct) - 1))
    with pytest.raises(ValueError, match=rf"\b{len(ct)}\b"):
        obj.decrypt_into(*iv, ct, buf)
    assert buf == b"\xee" * (len(ct) - 1)


@pad_param
def test_output_types_and_input_unchanged(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    src = bytearray(_msg(21))
    ct = obj.encrypt(*iv, src)
    assert type(ct) is bytes and src == _msg(21)
    ctb = bytearray(ct)
    pt = obj.decrypt(*iv, memoryview(ctb))
    assert type(pt) is bytes and pt == _msg(21) and ctb == ct


@pad_param
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_large_messages(backend, spec, direction):
    """Past the GIL threshold and the widest batch, with and without a tail."""
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for n in (1 << 20, (1 << 20) + 5, 16 * (3 * WIDE_BATCH) + 15):
        data = _msg(n, salt=n)
        want = _want(spec, data)
        if direction == "encrypt":
            assert obj.encrypt(*iv, data) == want
            ctx = obj.encryptor(*iv)
            assert _stream(ctx, chunks(data, [7, n // 2, n - 3]), False) == want
        else:
            assert obj.decrypt(*iv, want) == data
            ctx = obj.decryptor(*iv)
            assert _stream(ctx, chunks(want, [16, n // 2 + 1, len(want) - 16]), True) == data


# ---------------------------------------------------------------- streaming

@pad_param
def test_every_split_short(backend, spec):
    """Every two- and three-way split of short messages, both directions, update and
    update_into, against one-shot."""
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for n in (0, 1, 15, 16, 17, 31, 32, 33):
        data = _msg(n)
        want = _want(spec, data)
        for cuts in itertools.chain(
                ([i] for i in range(n + 1)),
                itertools.combinations_with_replacement(range(n + 1), 2)):
            into = sum(cuts) % 2 == 1
            assert _stream(obj.encryptor(*iv), chunks(data, cuts), False, into) == want
        for cuts in itertools.chain(
                ([i] for i in range(len(want) + 1)),
                itertools.combinations_with_replacement(range(len(want) + 1), 2)):
            into = sum(cuts) % 2 == 0
            assert _stream(obj.decryptor(*iv), chunks(want, cuts), True, into) == data


@pad_param
def test_decryptor_holds_back_last_block(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    data = _msg(40)
    ct = _want(spec, data)  # 48 bytes
    plain = ref(spec, KEY, IV if spec.has_iv else None, ct, "decrypt")  # still padded
    ctx = obj.decryptor(*iv)
    assert ctx.update(ct[:16]) == b""
    assert ctx.update(b"") == b""
    assert ctx.update(ct[16:32]) == plain[:16]
    assert ctx.update(ct[32:33]) == plain[16:32]
    assert ctx.update(ct[33:48]) == b""
    assert ctx.finalize() == data[32:]
    with pytest.raises(aeskit.AlreadyFinalized):
        ctx.update(b"")


@pad_param
def test_encryptor_pads_at_finalize(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for n in (0, 5, 16, 21, 32):
        want = _want(spec, _msg(n))
        ctx = obj.encryptor(*iv)
        got = ctx.update(_msg(n))
        assert got == want[:n // 16 * 16]
        assert ctx.finalize() == want[n // 16 * 16:]
        assert len(want) - len(got) == 16


@pad_param
def test_decryptor_update_into_in_place_with_block_held(backend, spec):
    """In place while a whole block is held: the output lags the input by 16 bytes, which
    the engine bounces (more than one bounce chunk)."""
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    data = _msg(16 * 150 + 7)
    ct = _want(spec, data)
    ctx = obj.decryptor(*iv)
    assert ctx.update(ct[:16]) == b""
    body = bytearray(ct[16:16 + 16 * 140])
    assert ctx.update_into(body, body) == 16 * 140
    assert bytes(body) + ctx.update(ct[16 + 16 * 140:]) + ctx.finalize() == data


# ---------------------------------------------------------------- against pyca

keys = st.sampled_from(KEY_SIZES).flatmap(lambda n: st.binary(min_size=n, max_size=n))
ivs = st.binary(min_size=16, max_size=16)
datas = st.one_of(st.binary(max_size=80),
                  st.integers(0, 16 * (2 * WIDE_BATCH + 2)).map(_msg))


@pad_param
@given(key=keys, iv=ivs, data=datas, cuts=st.lists(st.integers(0, 2000), max_size=4))
def test_differential_pyca(backend, spec, key, iv, data, cuts):
    obj = _padded(spec, key, backend)
    ivarg = ivargs(spec, iv)
    want = _want(spec, data, key, iv)
    assert obj.encrypt(*ivarg, data) == want
    assert _unpad(ref(spec, key, iv if spec.has_iv else None, want, "decrypt")) == data
    assert obj.decrypt(*ivarg, want) == data
    enc_cuts = [c % (len(data) + 1) for c in cuts]
    dec_cuts = [c % (len(want) + 1) for c in cuts]
    assert _stream(obj.encryptor(*ivarg), chunks(data, enc_cuts), False) == want
    assert _stream(obj.decryptor(*ivarg), chunks(want, dec_cuts), True, True) == data


@pad_param
@given(key=keys, iv=ivs, block=st.binary(min_size=16, max_size=16),
       prefix=st.binary(max_size=48).map(lambda b: b[:len(b) // 16 * 16]))
def test_differential_pyca_any_last_block(backend, spec, key, iv, block, prefix):
    """Whatever the last decrypted block is, aeskit accepts exactly what pyca's unpadder
    accepts, with the same result; a refusal is always the one message."""
    plain = prefix + block
    ct = ref(spec, key, iv if spec.has_iv else None, plain)
    try:
        want = _unpad(plain)
    except ValueError:
        want = None
    obj = _padded(spec, key, backend)
    ivarg = ivargs(spec, iv)
    if want is None:
        with pytest.raises(ValueError) as ei:
            obj.decrypt(*ivarg, ct)
        assert str(ei.value) == bad_message(spec, "decrypt")
    else:
        assert obj.decrypt(*ivarg, ct) == want


# ---------------------------------------------------------------- bad padding

def _bad_plaintexts():
    """(name, padded plaintext) whose padding is wrong: last byte 0 or 17..255 after 0 to
    2 whole blocks, and every padding length 2..16 with each of its other bytes wrong."""
    out = []
    for lead in (0, 16, 32):
        for last in [0, *range(17, 256)]:
            out.append((f"lead {lead} last byte {last}", _msg(lead + 15, last) + bytes([last])))
    for p in range(2, 17):
        good = _msg(16 - p, p) + bytes([p]) * p
        for i in range(16 - p, 15):
            b = bytearray(good)
            b[i] ^= 1 << (i % 8)
            out.append((f"pad {p} byte {i} wrong", _msg(16) + bytes(b)))
    out.append(("1 after 1 claimed as 2", _msg(14) + b"\x01\x02"))
    return out


BAD_PLAINTEXTS = _bad_plaintexts()


@pad_param
def test_bad_padding_one_error_no_output(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    for name, plain in BAD_PLAINTEXTS:
        ct = ref(spec, KEY, IV if spec.has_iv else None, plain)
        with pytest.raises(ValueError) as ei:
            obj.decrypt(*iv, ct)
        assert str(ei.value) == bad_message(spec, "decrypt"), name
        # _into: every byte it may have written is zero, the rest of buf untouched
        buf = bytearray(b"\xee" * (len(ct) + 7))
        with pytest.raises(ValueError) as ei:
            obj.decrypt_into(*iv, ct, buf)
        assert str(ei.value) == bad_message(spec, "decrypt_into"), name
        assert buf == bytes(len(ct)) + b"\xee" * 7, name
        # in place: no plaintext left behind either
        buf = bytearray(ct)
        with pytest.raises(ValueError) as ei:
            obj.decrypt_into(*iv, buf, buf)
        assert str(ei.value) == bad_message(spec, "decrypt_into"), name
        assert buf == bytes(len(ct)), name
        # streaming: finalize refuses, and the context is finished
        ctx = obj.decryptor(*iv)
        released = ctx.update(ct)
        assert len(released) == len(ct) - 16
        with pytest.raises(ValueError) as ei:
            ctx.finalize()
        assert str(ei.value) == bad_message(spec, "finalize"), name
        with pytest.raises(aeskit.AlreadyFinalized):
            ctx.finalize()


@pad_param
@pytest.mark.parametrize("n", [0, 1, 8, 15, 17, 31, 33, 47, 49])
def test_bad_length_same_error(backend, spec, n):
    """A padded message is a positive number of blocks; any other length is the same
    error, raised before anything is written."""
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    data = _msg(n)
    with pytest.raises(ValueError) as ei:
        obj.decrypt(*iv, data)
    assert str(ei.value) == bad_message(spec, "decrypt")
    buf = bytearray(b"\xee" * (n + 16))
    with pytest.raises(ValueError) as ei:
        obj.decrypt_into(*iv, data, buf)
    assert str(ei.value) == bad_message(spec, "decrypt_into")
    assert buf == b"\xee" * (n + 16)
    ctx = obj.decryptor(*iv)
    out = ctx.update(data)
    assert len(out) == _lag(n)
    with pytest.raises(ValueError) as ei:
        ctx.finalize()
    assert str(ei.value) == bad_message(spec, "finalize")


@pad_param
def test_bad_padding_leaves_key_usable(backend, spec):
    obj = _padded(spec, backend=backend)
    iv = ivargs(spec, IV)
    with pytest.raises(ValueError):
        obj.decrypt(*iv, ref(spec, KEY, IV if spec.has_iv else None, bytes(16)))
    assert obj.decrypt(*iv, _want(spec, b"still fine")) == b"still fine"


def test_pads_names_real_modes():
    assert {s.name for s in PAD_SPECS} == set(PADS)
