"""Key wrap: AESKW (SP 800-38F KW, RFC 3394) and AESKWP (KWP, RFC 5649) on every backend.

Known answers (RFC 3394 §4, RFC 5649 §6), every length against pyca/cryptography,
hypothesis differentials against pyca and pycryptodome, every tampered byte, wrapped data
crafted to break exactly one of KWP's three checks (integrity value, length indicator
range, zero padding), wrong lengths, the limit, and pyca's four functions by name."""

import inspect
import mmap
import threading

import aeskit
import pytest
from cryptography.hazmat.primitives import keywrap as pyca
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from kw_helpers import KEYWRAP, KEYWRAPS, keywrap_vectors
from test_guard_pages import GuardedBuffer

try:
    from Crypto.Cipher import AES as PYCRYPTODOME_AES
except ImportError:  # pragma: no cover
    PYCRYPTODOME_AES = None

VECTORS = keywrap_vectors()
KEY_SIZES = (16, 24, 32)
KEYS = {ks: bytes(range(0x20, 0x20 + ks)) for ks in KEY_SIZES}
DATA = bytes((i * 37 + 11) & 0xFF for i in range(1024))
KW_IV = bytes.fromhex("a6a6a6a6a6a6a6a6")
KWP_AIV = bytes.fromhex("a65959a6")

spec_param = pytest.mark.parametrize("spec", KEYWRAPS, ids=lambda s: s.name)


def pyca_wrap(name, key, data):
    return (pyca.aes_key_wrap if name == "KW" else pyca.aes_key_wrap_with_padding)(key, data)


def pyca_unwrap(name, key, data):
    return (pyca.aes_key_unwrap if name == "KW" else pyca.aes_key_unwrap_with_padding)(
        key, data)


def raw_wrap(key, iv, plain):
    """RFC 3394 §2.2.1 W with any 8-byte iv over any whole semiblocks (at least 2): the
    tests' way to make wrapped data whose checks fail on purpose."""
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    a, r, n = iv, [plain[i:i + 8] for i in range(0, len(plain), 8)], len(plain) // 8
    assert n >= 2 and len(plain) % 8 == 0
    for j in range(6):
        for i in range(n):
            b = enc.update(a + r[i])
            a = (int.from_bytes(b[:8], "big") ^ (n * j + i + 1)).to_bytes(8, "big")
            r[i] = b[8:]
    return a + b"".join(r)


def raw_block(key, iv, plain):
    """KWP's single-block form: one AES encryption of iv || plain (8 bytes)."""
    return Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(iv + plain)


# ---------------------------------------------------------------- known answers

@pytest.mark.known_answer("KW", "KWP")
@pytest.mark.parametrize("v", VECTORS, ids=lambda v: v["section"])
def test_known_answers(backend, v):
    key, pt, wrapped = (bytes.fromhex(v[f]) for f in ("key", "plaintext", "wrapped"))
    obj = KEYWRAP[v["mode"]].cls(key, backend=backend)
    assert obj.wrap(pt) == wrapped
    assert obj.unwrap(wrapped) == pt
    assert obj.unwrap(bytearray(wrapped)) == pt
    assert obj.unwrap(memoryview(wrapped)) == pt


@pytest.mark.known_answer("KW", "KWP")
def test_vectors_cover_both_rfcs():
    sections = [v["section"] for v in VECTORS]
    assert sum(s.startswith("RFC 3394 4.") for s in sections) == 6
    assert sum(s.startswith("RFC 5649 6") for s in sections) == 2


@pytest.mark.known_answer("KW", "KWP")
@pytest.mark.parametrize("v", VECTORS, ids=lambda v: v["section"])
def test_pyca_functions_known_answers(v):
    key, pt, wrapped = (bytes.fromhex(v[f]) for f in ("key", "plaintext", "wrapped"))
    if v["mode"] == "KW":
        assert aeskit.aes_key_wrap(key, pt) == wrapped
        assert aeskit.aes_key_unwrap(key, wrapped) == pt
    else:
        assert aeskit.aes_key_wrap_with_padding(key, pt) == wrapped
        assert aeskit.aes_key_unwrap_with_padding(key, wrapped) == pt


# ---------------------------------------------------------------- construction

@spec_param
@pytest.mark.parametrize("ks", KEY_SIZES)
def test_attributes(backend, backends_info, spec, ks):
    obj = spec.cls(bytes(ks), backend=backend)
    assert obj.backend == backend
    assert obj.key_size == 8 * ks
    assert spec.cls(bytes(ks)).backend == backends_info.default
    assert f"key_size={8 * ks}" in repr(obj) and backend in repr(obj)


@spec_param
@pytest.mark.parametrize("n", [0, 1, 8, 15, 17, 23, 25, 31, 33, 48, 64])
def test_key_bad_length(spec, n):
    with pytest.raises(ValueError, match=r"16, 24 or 32"):
        spec.cls(bytes(n))


@spec_param
def test_key_and_backend_arguments(spec, backends_info):
    with pytest.raises(TypeError):
        spec.cls(KEYS[16], "portable")   # backend is keyword-only
    with pytest.raises(TypeError):
        spec.cls("0123456789abcdef")
    with pytest.raises(ValueError) as ei:
        spec.cls(KEYS[16], backend="nope")
    for name in backends_info.all:
        assert name in str(ei.value)


@spec_param
def test_immutable_and_final(spec):
    obj = spec.cls(KEYS[16])
    with pytest.raises((AttributeError, TypeError)):
        obj.backend = "portable"
    with pytest.raises(TypeError):
        spec.cls.wrap = None
    with pytest.raises(TypeError):
        type("Sub", (spec.cls,), {})


@spec_param
def test_argument_count_and_types(spec):
    obj = spec.cls(KEYS[16])
    for method in (obj.wrap, obj.unwrap):
        with pytest.raises(TypeError):
            method()
        with pytest.raises(TypeError):
            method(bytes(24), bytes(24))
        for bad in ("0123456789abcdef01234567", 24, None, [0] * 24):
            with pytest.raises(TypeError):
                method(bad)


# ---------------------------------------------------------------- every length

@pytest.mark.parametrize("ks", KEY_SIZES)
def test_kw_every_length_matches_pyca(backend, ks):
    obj = aeskit.AESKW(KEYS[ks], backend=backend)
    for n in range(16, 513, 8):
        wrapped = obj.wrap(DATA[:n])
        assert wrapped == pyca.aes_key_wrap(KEYS[ks], DATA[:n]), n
        assert obj.unwrap(wrapped) == DATA[:n], n


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_kwp_every_length_matches_pyca(backend, ks):
    obj = aeskit.AESKWP(KEYS[ks], backend=backend)
    for n in range(1, 601):
        wrapped = obj.wrap(DATA[:n])
        assert len(wrapped) == (n + 7) // 8 * 8 + 8, n
        assert wrapped == pyca.aes_key_wrap_with_padding(KEYS[ks], DATA[:n]), n
        assert obj.unwrap(wrapped) == DATA[:n], n


# ---------------------------------------------------------------- differential

def _kw_lengths():
    # boundary-weighted: the single-block/W switch (8, 16), then any length
    return st.one_of(st.sampled_from([16, 24, 32, 40, 64, 512]),
                     st.integers(2, 300).map(lambda k: 8 * k))


def _kwp_lengths():
    return st.one_of(st.sampled_from([1, 7, 8, 9, 15, 16, 17, 24, 25, 600]),
                     st.integers(1, 2000))


@given(ks=st.sampled_from(KEY_SIZES), data=st.data())
def test_kw_differential(ks, data):
    n = data.draw(_kw_lengths())
    key = data.draw(st.binary(min_size=ks, max_size=ks))
    plain = data.draw(st.binary(min_size=n, max_size=n))
    want = pyca.aes_key_wrap(key, plain)
    if PYCRYPTODOME_AES is not None and hasattr(PYCRYPTODOME_AES, "MODE_KW"):
        assert PYCRYPTODOME_AES.new(key, PYCRYPTODOME_AES.MODE_KW).seal(plain) == want
    for backend in aeskit.backends().available:
        obj = aeskit.AESKW(key, backend=backend)
        assert obj.wrap(plain) == want, backend
        assert obj.unwrap(want) == plain, backend


@given(ks=st.sampled_from(KEY_SIZES), data=st.data())
def test_kwp_differential(ks, data):
    n = data.draw(_kwp_lengths())
    key = data.draw(st.binary(min_size=ks, max_size=ks))
    plain = data.draw(st.binary(min_size=n, max_size=n))
    want = pyca.aes_key_wrap_with_padding(key, plain)
    if PYCRYPTODOME_AES is not None and hasattr(PYCRYPTODOME_AES, "MODE_KWP"):
        assert PYCRYPTODOME_AES.new(key, PYCRYPTODOME_AES.MODE_KWP).seal(plain) == want
    for backend in aeskit.backends().available:
        obj = aeskit.AESKWP(key, backend=backend)
        assert obj.wrap(plain) == want, backend
        assert obj.unwrap(want) == plain, backend


def test_pycryptodome_has_key_wrap():
    """The differentials above compare with pycryptodome only where it has KW and KWP
    (3.23 and later): fail loudly rather than silently compare with pyca alone."""
    assert PYCRYPTODOME_AES is not None
    assert hasattr(PYCRYPTODOME_AES, "MODE_KW") and hasattr(PYCRYPTODOME_AES, "MODE_KWP")


@given(ks=st.sampled_from(KEY_SIZES), data=st.data())
def test_pyca_functions_differential(ks, data):
    key = data.draw(st.binary(min_size=ks, max_size=ks))
    kw = data.draw(_kw_lengths())
    plain = data.draw(st.binary(min_size=kw, max_size=kw))
    assert aeskit.aes_key_wrap(key, plain) == pyca.aes_key_wrap(key, plain)
    assert aeskit.aes_key_unwrap(key, pyca.aes_key_wrap(key, plain)) == plain
    kwp = data.draw(_kwp_lengths())
    plain = data.draw(st.binary(min_size=kwp, max_size=kwp))
    want = pyca.aes_key_wrap_with_padding(key, plain)
    assert aeskit.aes_key_wrap_with_padding(key, plain) == want
    assert aeskit.aes_key_unwrap_with_padding(key, want) == plain


# ---------------------------------------------------------------- tampering

def _tampered(wrapped):
    for i in range(len(wrapped)):
        for bit in (0x01, 0x80):
            bad = bytearray(wrapped)
            bad[i] ^= bit
            yield i, bytes(bad)


@pytest.mark.parametrize("v", VECTORS, ids=lambda v: v["section"])
def test_every_tampered_byte_fails(backend, v):
    key, wrapped = bytes.fromhex(v["key"]), bytes.fromhex(v["wrapped"])
    spec = KEYWRAP[v["mode"]]
    obj = spec.cls(key, backend=backend)
    for i, bad in _tampered(wrapped):
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(bad)
        with pytest.raises(pyca.InvalidUnwrap):   # the reference agrees it is bad
            pyca_unwrap(spec.name, key, bad)
    # under another key of every size
    for ks in KEY_SIZES:
        with pytest.raises(aeskit.InvalidUnwrap):
            spec.cls(KEYS[ks], backend=backend).unwrap(wrapped)


@pytest.mark.parametrize("n", [16, 24, 40, 512])
def test_kw_tampered_long(backend, n):
    obj = aeskit.AESKW(KEYS[32], backend=backend)
    wrapped = obj.wrap(DATA[:n])
    for i in range(0, len(wrapped), 7):
        bad = bytearray(wrapped)
        bad[i] ^= 0x10
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(bad)


def test_kw_and_kwp_do_not_unwrap_each_other(backend):
    kw, kwp = aeskit.AESKW(KEYS[16], backend=backend), aeskit.AESKWP(KEYS[16], backend=backend)
    for n in (16, 24, 32, 64):
        with pytest.raises(aeskit.InvalidUnwrap):
            kwp.unwrap(kw.wrap(DATA[:n]))
        with pytest.raises(aeskit.InvalidUnwrap):
            kw.unwrap(kwp.wrap(DATA[:n]))


def test_kw_other_iv_fails(backend):
    obj = aeskit.AESKW(KEYS[24], backend=backend)
    plain = DATA[:32]
    assert obj.unwrap(raw_wrap(KEYS[24], KW_IV, plain)) == plain   # the model is W
    for iv in (bytes(8), KWP_AIV + (32).to_bytes(4, "big"), b"\xa6" * 7 + b"\xa7"):
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(raw_wrap(KEYS[24], iv, plain))


# ------------------------------------------- KWP: each of its checks broken alone

def _kwp_crafted(key, mli, plain):
    """Wrapped data with length indicator mli over plain (whole semiblocks), authentic
    otherwise: the single-block form for 8 bytes, W for more."""
    aiv = KWP_AIV + mli.to_bytes(4, "big")
    return raw_block(key, aiv, plain) if len(plain) == 8 else raw_wrap(key, aiv, plain)


@pytest.mark.parametrize("semiblocks", [1, 2, 3, 9])
def test_kwp_length_indicator_range(backend, semiblocks):
    key = KEYS[32]
    obj = aeskit.AESKWP(key, backend=backend)
    top = 8 * semiblocks
    plain = DATA[:top]
    # every indicator in (8(n-1), 8n] with zero padding is accepted
    for mli in range(top - 7, top + 1):
        padded = plain[:mli] + bytes(top - mli)
        assert obj.unwrap(_kwp_crafted(key, mli, padded)) == plain[:mli], mli
    # just outside, far outside and at the ends of the 32-bit range, all refused
    for mli in {0, top - 8, top + 1, top + 8, 2**31, 2**32 - 1}:
        if top - 8 < mli <= top:
            continue
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(_kwp_crafted(key, mli, plain))
        with pytest.raises(pyca.InvalidUnwrap):
            pyca.aes_key_unwrap_with_padding(key, _kwp_crafted(key, mli, plain))


@pytest.mark.parametrize("semiblocks", [1, 2, 5])
def test_kwp_nonzero_padding(backend, semiblocks):
    """Every pad length 1..7 with a non-zero byte at every padding position: refused;
    the same bytes in the key itself (no padding there): accepted."""
    key = KEYS[16]
    obj = aeskit.AESKWP(key, backend=backend)
    top = 8 * semiblocks
    for pad in range(1, 8):
        mli = top - pad
        base = DATA[:mli] + bytes(pad)
        assert obj.unwrap(_kwp_crafted(key, mli, base)) == DATA[:mli]
        for pos in range(mli, top):
            for value in (0x01, 0x80, 0xFF):
                bad = bytearray(base)
                bad[pos] = value
                with pytest.raises(aeskit.InvalidUnwrap):
                    obj.unwrap(_kwp_crafted(key, mli, bytes(bad)))
        # a non-zero last key byte just before the padding is key data, not padding
        good = bytearray(base)
        good[mli - 1] = 0xFF
        assert obj.unwrap(_kwp_crafted(key, mli, bytes(good))) == bytes(good[:mli])


def test_kwp_wrong_aiv(backend):
    key = KEYS[24]
    obj = aeskit.AESKWP(key, backend=backend)
    for aiv in (KW_IV[:4], bytes(4), bytes.fromhex("a65959a7")):
        for plain in (DATA[:8], DATA[:24]):
            iv = aiv + len(plain).to_bytes(4, "big")
            crafted = (raw_block(key, iv, plain) if len(plain) == 8
                       else raw_wrap(key, iv, plain))
            with pytest.raises(aeskit.InvalidUnwrap):
                obj.unwrap(crafted)


def test_kwp_short_key_only_as_one_block(backend):
    """A key of at most 8 bytes wrapped with W (24 bytes) is refused: its indicator is
    out of range for two semiblocks (RFC 5649 §4.2)."""
    key = KEYS[16]
    obj = aeskit.AESKWP(key, backend=backend)
    for mli in range(1, 9):
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(raw_wrap(key, KWP_AIV + mli.to_bytes(4, "big"),
                                DATA[:mli] + bytes(16 - mli)))


# ---------------------------------------------------------------- wrong lengths

@spec_param
def test_wrap_wrong_length_is_value_error(backend, spec):
    obj = spec.cls(KEYS[16], backend=backend)
    bad = [n for n in range(70) if n < spec.wrap_min or n % spec.wrap_multiple]
    assert bad
    for n in bad:
        with pytest.raises(ValueError) as ei:
            obj.wrap(bytes(n))
        assert type(ei.value) is ValueError, n   # neither InvalidUnwrap nor LimitExceeded
        assert str(spec.wrap_min) in str(ei.value)


@spec_param
def test_unwrap_wrong_length_is_invalid_unwrap(backend, spec):
    """aeskit refuses every wrong length with InvalidUnwrap; pyca refuses it too, with
    InvalidUnwrap or (pyca 48 for some lengths) ValueError: the outcome is compared, not
    pyca's class."""
    obj = spec.cls(KEYS[16], backend=backend)
    for n in range(70):
        if n >= spec.unwrap_min and n % 8 == 0:
            continue
        with pytest.raises(aeskit.InvalidUnwrap, match=str(spec.unwrap_min)):
            obj.unwrap(bytes(n))
        with pytest.raises((pyca.InvalidUnwrap, ValueError)):
            pyca_unwrap(spec.name, KEYS[16], bytes(n))


def test_kwp_wrap_limit():
    """KWP's length indicator is 32 bits: 2**32 bytes is LimitExceeded, raised before
    any work (a read-only reservation, no memory used)."""
    try:
        big = mmap.mmap(-1, 2**32, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                        | getattr(mmap, "MAP_NORESERVE", 0), prot=mmap.PROT_READ)
    except (OSError, OverflowError, ValueError) as e:
        pytest.skip(f"cannot map 4 GiB here: {e}")
    with big:
        with pytest.raises(aeskit.LimitExceeded, match=r"limited to 2\*\*32 - 1 bytes") as ei:
            aeskit.AESKWP(KEYS[16]).wrap(big)
        assert isinstance(ei.value, OverflowError) and isinstance(ei.value, ValueError)
        with pytest.raises(aeskit.LimitExceeded):
            aeskit.aes_key_wrap_with_padding(KEYS[16], big)


def test_kwp_unwrap_longer_than_any_wrap():
    """Past 2**32 + 8 bytes no length indicator fits: InvalidUnwrap before any work or
    allocation (a read-only reservation, no memory used)."""
    try:
        big = mmap.mmap(-1, 2**32 + 16, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                        | getattr(mmap, "MAP_NORESERVE", 0), prot=mmap.PROT_READ)
    except (OSError, OverflowError, ValueError) as e:
        pytest.skip(f"cannot map 4 GiB here: {e}")
    with big:
        with pytest.raises(aeskit.InvalidUnwrap, match="4294967304"):
            aeskit.AESKWP(KEYS[16]).unwrap(big)


def test_invalid_unwrap_is_invalid_tag():
    assert issubclass(aeskit.InvalidUnwrap, aeskit.InvalidTag)
    assert issubclass(aeskit.InvalidUnwrap, ValueError)


# ---------------------------------------------------------------- pyca's functions

@pytest.mark.parametrize("name", ["aes_key_wrap", "aes_key_unwrap",
                                  "aes_key_wrap_with_padding", "aes_key_unwrap_with_padding"])
def test_pyca_function_signatures(name):
    ours, theirs = getattr(aeskit, name), getattr(pyca, name)
    assert list(inspect.signature(ours).parameters) == list(
        inspect.signature(theirs).parameters)
    assert inspect.signature(ours).parameters["backend"].default is None
    assert name in aeskit.__all__


def test_pyca_functions_errors():
    for fn in (aeskit.aes_key_wrap, aeskit.aes_key_unwrap,
               aeskit.aes_key_wrap_with_padding, aeskit.aes_key_unwrap_with_padding):
        with pytest.raises(ValueError):
            fn(bytes(15), bytes(24))
        assert fn(KEYS[16], DATA[:16] if "unwrap" not in fn.__name__ else
                  (aeskit.aes_key_wrap if fn is aeskit.aes_key_unwrap
                   else aeskit.aes_key_wrap_with_padding)(KEYS[16], DATA[:16]),
                  backend=object()) == (DATA[:16] if "unwrap" in fn.__name__ else
                                        pyca_wrap("KW" if "padding" not in fn.__name__
                                                  else "KWP", KEYS[16], DATA[:16]))
    with pytest.raises(ValueError):
        aeskit.aes_key_wrap(KEYS[16], bytes(8))
    with pytest.raises(ValueError):
        aeskit.aes_key_wrap_with_padding(KEYS[16], b"")
    with pytest.raises(aeskit.InvalidUnwrap):
        aeskit.aes_key_unwrap(KEYS[16], bytes(16))
    with pytest.raises(aeskit.InvalidUnwrap):
        aeskit.aes_key_unwrap_with_padding(KEYS[16], bytes(8))


# ---------------------------------------------------------------- guard pages

@spec_param
@pytest.mark.parametrize("before", [False, True], ids=["guard-after", "guard-before"])
def test_no_access_outside_the_input(backend, spec, before):
    """The data to wrap and the wrapped data end right before (or start right after) an
    inaccessible page: no read strays outside them, on success or failure."""
    obj = spec.cls(KEYS[24], backend=backend)
    lengths = (16, 24, 32, 520) if spec.name == "KW" else (1, 7, 8, 9, 16, 17, 515)
    for n in lengths:
        src = GuardedBuffer(n, before)
        src.view[:] = DATA[:n]
        wrapped = obj.wrap(src.view)
        assert wrapped == pyca_wrap(spec.name, KEYS[24], DATA[:n]), n
        box = GuardedBuffer(len(wrapped), before)
        box.view[:] = wrapped
        assert obj.unwrap(box.view) == DATA[:n], n
        box.view[-1] ^= 1
        with pytest.raises(aeskit.InvalidUnwrap):
            obj.unwrap(box.view)


# ---------------------------------------------------------------- threads

@spec_param
def test_shared_between_threads(backend, spec):
    obj = spec.cls(KEYS[32], backend=backend)
    sizes = [16, 24, 512, 1000] if spec.name == "KWP" else [16, 24, 512, 1000 // 8 * 8]
    want = {n: pyca_wrap(spec.name, KEYS[32], DATA[:n]) for n in sizes}
    errors = []

    def work():
        try:
            for _ in range(20):
                for n in sizes:
                    assert obj.wrap(DATA[:n]) == want[n]
                    assert obj.unwrap(want[n]) == DATA[:n]
        except AssertionError as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
