"""aeskit.compat.cryptography's Cipher, algorithms and modes against pyca/cryptography.

The algorithm and mode objects are built from the same arguments in both libraries; the
Cipher and its contexts are driven by the same sequences of calls (update, update_into,
authenticate_additional_data, finalize, finalize_with_tag, tag, reset_nonce), and every
call's outcome must be equal: its output and what it wrote, or its exception's type and
message. The layer's Cipher runs with its own algorithm and mode objects and with
pyca's.
"""

import itertools
import warnings

import cryptography.exceptions
import pytest
from aead_helpers import zero_map
from compat_helpers import bad_buffers, byte_buffers, outcome
from cryptography.hazmat.decrepit.ciphers import algorithms as pyca_decrepit_algs
from cryptography.hazmat.decrepit.ciphers import modes as pyca_decrepit
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher
from cryptography.hazmat.primitives.ciphers import algorithms as pyca_algs
from cryptography.hazmat.primitives.ciphers import modes as pyca_modes
from hypothesis import given
from hypothesis import strategies as st

from aeskit.compat import cryptography as compat

MODE_NAMES = ["ECB", "CBC", "CTR", "CFB", "CFB8", "OFB", "XTS", "GCM"]


def pyca_mode(name):
    return getattr(pyca_decrepit if name in ("CFB", "CFB8", "OFB") else pyca_modes, name)


class PycaLib:
    """pyca's algorithms and modes, under the names the layer has them."""

    algorithms = pyca_algs
    modes = type("modes", (), {n: staticmethod(pyca_mode(n)) for n in MODE_NAMES})


class CompatLib:
    algorithms = compat.algorithms
    modes = compat.modes


def both_objects(make):
    """make(lib) with each library's algorithms and modes."""
    return outcome(make, PycaLib), outcome(make, CompatLib)


def same_failure(a, b, what):
    if a[0] == "ok":
        assert b[0] == "ok", what
    else:
        assert a == b, what


# ---------------------------------------------------------------- the objects


@pytest.mark.parametrize("alg", ["AES", "AES128", "AES256"])
def test_algorithm_objects(alg):
    keys = [bytes(n) for n in range(70)] + list(bad_buffers().values())
    keys += list(byte_buffers(bytes(32)).values())
    for key in keys:
        a, b = both_objects(lambda lib, key=key: getattr(lib.algorithms, alg)(key))
        same_failure(a, b, key)
        if a[0] == "ok":
            for attr in ("name", "block_size", "key_sizes", "key_size"):
                assert getattr(a[1], attr) == getattr(b[1], attr)
            assert a[1].key is key and b[1].key is key


@pytest.mark.parametrize("name", MODE_NAMES)
def test_mode_objects(name):
    values = [bytes(n) for n in (0, 1, 7, 8, 12, 15, 16, 17, 128, 129)]
    values += list(bad_buffers().values()) + list(byte_buffers(bytes(16)).values())
    for v in values:
        args = () if name == "ECB" else (v,)
        a, b = both_objects(lambda lib, args=args: getattr(lib.modes, name)(*args))
        same_failure(a, b, v)
        if a[0] == "ok":
            assert a[1].name == b[1].name == name
    if name == "GCM":
        for tag, least in itertools.product(
                [None, b"", bytes(3), bytes(4), bytes(12), bytes(16), bytes(17), bytearray(16),
                 "t" * 16], [16, 12, 4, 3, 0, -1]):
            a, b = both_objects(lambda lib, tag=tag, least=least: lib.modes.GCM(bytes(12), tag, least))
            same_failure(a, b, (tag, least))
            if a[0] == "ok":
                assert a[1].tag == b[1].tag
                assert a[1]._min_tag_length == b[1]._min_tag_length


def test_cipher_construction_and_contexts():
    """Every algorithm with every mode, with good and bad keys and IVs: Cipher(),
    encryptor() and decryptor() fail alike or succeed alike, whichever library's
    objects the layer's Cipher is given."""
    keys = [bytes(range(n)) for n in (16, 24, 32, 64)] + [bytes(32), bytes(64)]
    ivs = [bytes(range(16)), bytes(8), bytes(12)]
    for alg, key, name, iv in itertools.product(["AES", "AES128", "AES256"], keys,
                                                 MODE_NAMES + [None], ivs):
        def build(lib, cipher, alg=alg, key=key, name=name, iv=iv):
            algorithm = getattr(lib.algorithms, alg)(key)
            mode = None if name is None else (
                getattr(lib.modes, name)() if name == "ECB" else getattr(lib.modes, name)(iv))
            return cipher(algorithm, mode)

        a, b = both_objects(lambda lib: build(lib, PycaCipher if lib is PycaLib
                                              else compat.Cipher))
        pyca_objects = outcome(build, PycaLib, compat.Cipher)
        same_failure(a, b, (alg, key, name, iv))
        same_failure(a, pyca_objects, (alg, key, name, iv))
        if a[0] != "ok":
            continue
        for ours in (b[1], pyca_objects[1]):
            for make in ("encryptor", "decryptor"):
                x, y = outcome(getattr(a[1], make)), outcome(getattr(ours, make))
                same_failure(x, y, (alg, key, name, iv, make))


def test_cipher_argument_checks():
    key = bytes(16)
    for algorithm, mode in [(None, pyca_modes.CBC(bytes(16))), (key, None),
                            (pyca_algs.AES(key), object()), (pyca_algs.AES(key), "CBC")]:
        a = outcome(PycaCipher, algorithm, mode)
        b = outcome(compat.Cipher, algorithm, mode)
        assert a == b
    # a tag with an encryptor
    for lib_cipher, gcm in ((PycaCipher, pyca_modes.GCM), (compat.Cipher, compat.modes.GCM)):
        assert outcome(lib_cipher(pyca_algs.AES(key) if lib_cipher is PycaCipher
                                  else compat.algorithms.AES(key),
                                  gcm(bytes(12), bytes(16))).encryptor) == (
            ValueError, "Authentication tag must be None when encrypting.")


def test_other_algorithms_are_refused_clearly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        camellia = pyca_decrepit_algs.Camellia(bytes(16))
    cipher = compat.Cipher(camellia, pyca_modes.CBC(bytes(16)))
    with pytest.raises(cryptography.exceptions.UnsupportedAlgorithm,
                       match="cipher camellia in CBC mode is not supported by aeskit.compat"):
        cipher.encryptor()


# ---------------------------------------------------------------- the contexts


def _iv_for(name, iv16):
    return {"ECB": (), "GCM": (iv16[:12],)}.get(name, (iv16,))


def _ciphers(name, key, iv, tag=None, least=16):
    """pyca's Cipher, the layer's with its own objects, the layer's with pyca's."""
    extra = (tag, least) if name == "GCM" else ()
    args = _iv_for(name, iv) + extra
    return [
        PycaCipher(pyca_algs.AES(key), pyca_mode(name)(*args)),
        compat.Cipher(compat.algorithms.AES(key), getattr(compat.modes, name)(*args)),
        compat.Cipher(pyca_algs.AES(key), pyca_mode(name)(*args)),
    ]


OPS = st.one_of(
    st.tuples(st.just("update"), st.integers(0, 70)),
    st.tuples(st.just("update"), st.sampled_from([15, 16, 17, 255, 256, 257, 4097])),
    st.tuples(st.just("update_into"), st.integers(0, 70), st.sampled_from([-1, 0, 14, 15, 16])),
    st.tuples(st.just("update_str"),),
    st.tuples(st.just("aad"), st.integers(0, 40)),
    st.tuples(st.just("finalize"),),
    st.tuples(st.just("finalize_with_tag"), st.sampled_from([3, 4, 5, 8, 12, 15, 16, 17, -16])),
    st.tuples(st.just("tag"),),
    st.tuples(st.just("reset_nonce"), st.sampled_from([12, 16])),
)


def _run(ctx, op, data):
    kind = op[0]
    if kind == "update":
        return outcome(ctx.update, data[: op[1]])
    if kind == "update_str":
        return outcome(ctx.update, "text")
    if kind == "update_into":
        n = op[1]
        buf = bytearray(max(n + op[2], 0))
        r = outcome(ctx.update_into, data[:n], buf)
        return r + (bytes(buf),) if r[0] == "ok" else r
    if kind == "aad":
        return outcome(lambda: ctx.authenticate_additional_data(data[: op[1]]))
    if kind == "finalize":
        return outcome(ctx.finalize)
    if kind == "finalize_with_tag":
        tag = bytearray(16) if op[1] < 0 else data[: op[1]]
        return outcome(lambda: ctx.finalize_with_tag(tag))
    if kind == "tag":
        return outcome(lambda: ctx.tag)
    return outcome(lambda: ctx.reset_nonce(data[: op[1]]))


def _comparable(r):
    # AttributeError's wording names pyca's Rust module; the type is what code meets
    return (AttributeError,) if r[0] is AttributeError else r


@given(name=st.sampled_from(MODE_NAMES), enc=st.booleans(),
       key_size=st.sampled_from([16, 24, 32]), least=st.sampled_from([16, 12, 4]),
       ops=st.lists(OPS, max_size=12), seed=st.binary(min_size=16, max_size=16))
def test_contexts_follow_the_same_calls_alike(name, enc, key_size, least, ops, seed):
    key = bytes((seed[i % 16] + 7 * i) & 255 for i in range(key_size * (2 if name == "XTS" else 1)))
    if name == "XTS" and key_size == 24:
        key = key[:32]
    data = bytes((seed[i % 16] * 31 + i) & 255 for i in range(4097))
    ciphers = _ciphers(name, key, seed, least=least)
    contexts = [getattr(c, "encryptor" if enc else "decryptor")() for c in ciphers]
    for op in ops:
        results = [_comparable(_run(ctx, op, data)) for ctx in contexts]
        assert results[1] == results[0] and results[2] == results[0], (op, results)
        if results[0][0] is cryptography.exceptions.InvalidTag:
            break   # pyca keeps a context open after a failed tag; the layer ends it


#: Call sequences that meet every rule of a context at least once in every mode: the
#: room update_into wants, partial blocks at finalize, calls after finalize, associated
#: data after data, tags of every kind, nonce resets.
SCRIPTS = [
    [("update", 5)] + [("update_into", 20, room) for room in (-1, 0, 14, 15, 16)]
    + [("update", 17), ("finalize",), ("update", 1), ("update_into", 1, 16), ("aad", 1),
       ("finalize",), ("tag",), ("reset_nonce", 16)],
    [("update", 15), ("finalize",), ("update", 1), ("finalize",), ("finalize",)],
    [("update", 16), ("update_into", 0, -1), ("update_into", 0, 0), ("update", 0),
     ("finalize",)],
    [("aad", 3), ("aad", 0), ("update", 33), ("aad", 1), ("tag",), ("finalize_with_tag", 16)],
    [("aad", 3), ("finalize_with_tag", 3), ("finalize_with_tag", 17),
     ("finalize_with_tag", -16), ("finalize_with_tag", 12), ("tag",)],
    [("reset_nonce", 16), ("update", 5), ("reset_nonce", 12), ("reset_nonce", 16),
     ("update", 40), ("finalize",), ("reset_nonce", 16)],
    [("update_str",), ("update", 32), ("update_into", 48, 15), ("finalize",), ("tag",)],
]


@pytest.mark.parametrize("name", MODE_NAMES)
@pytest.mark.parametrize("enc", [True, False])
@pytest.mark.parametrize("script", range(len(SCRIPTS)))
def test_contexts_follow_each_script_alike(name, enc, script):
    data = bytes(i * 7 & 255 for i in range(4097))
    for key_size, least in ((16, 16), (32, 12)):
        key = bytes(range(1, key_size * (2 if name == "XTS" else 1) + 1))
        contexts = [getattr(c, "encryptor" if enc else "decryptor")()
                    for c in _ciphers(name, key, bytes(range(16)), least=least)]
        for op in SCRIPTS[script]:
            results = [_comparable(_run(ctx, op, data)) for ctx in contexts]
            assert results[1] == results[0] and results[2] == results[0], (op, results)
            if results[0][0] is cryptography.exceptions.InvalidTag:
                break


@pytest.mark.parametrize("t", range(4, 17))
@pytest.mark.parametrize("given_in", ["mode", "finalize_with_tag"])
def test_gcm_tags_of_every_length(t, given_in):
    """pyca checks a truncated GCM tag of any length from min_tag_length to 16 bytes;
    so does the layer, natively where aeskit's GCM has the length and otherwise against
    the full tag."""
    key, iv = bytes(range(32)), bytes(range(12))
    enc = PycaCipher(pyca_algs.AES(key), pyca_modes.GCM(iv)).encryptor()
    enc.authenticate_additional_data(b"header")
    ct = enc.update(b"some plaintext, longer than one block") + enc.finalize()
    for tag, good in ((enc.tag[:t], True), (bytes([enc.tag[0] ^ 1]) + enc.tag[1:t], False)):
        for least in sorted({4, t}):
            mode_tag = tag if given_in == "mode" else None
            results = []
            for cipher in _ciphers("GCM", key, iv + bytes(4), tag=mode_tag, least=least):
                dec = cipher.decryptor()
                dec.authenticate_additional_data(b"head")
                out = [dec.update(ct[:5]), outcome(dec.update_into, ct[5:], bytearray(64))]
                out.append(outcome(dec.finalize) if given_in == "mode"
                           else outcome(dec.finalize_with_tag, tag))
                results.append(out)
            assert results[1] == results[0] == results[2]
            dec = _ciphers("GCM", key, iv + bytes(4), tag=mode_tag, least=least)[1].decryptor()
            dec.authenticate_additional_data(b"header")
            pt = dec.update(ct)
            r = outcome(dec.finalize) if given_in == "mode" else outcome(dec.finalize_with_tag, tag)
            assert pt == b"some plaintext, longer than one block"
            assert r == ("ok", b"") if good else r == (cryptography.exceptions.InvalidTag, "")


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 31, 32, 33, 4096, 16 << 20, (16 << 20) + 1])
def test_xts_data_units(n):
    """OpenSSL's XTS, as pyca runs it: every update is a data unit of its own under the
    mode's tweak, empty or of 16 bytes to 2**20 blocks."""
    key = bytes(range(64))
    data = bytes(i & 255 for i in range(n))
    for enc in (True, False):
        ctxs = [getattr(c, "encryptor" if enc else "decryptor")()
                for c in _ciphers("XTS", key, bytes(range(16)))]
        first = [outcome(ctx.update, data) for ctx in ctxs]
        second = [outcome(ctx.update_into, data, bytearray(n)) for ctx in ctxs]
        assert first[1] == first[0] == first[2]
        assert second[1] == second[0] == second[2]
        assert [outcome(ctx.finalize) for ctx in ctxs] == [("ok", b"")] * 3


def test_xts_duplicated_keys():
    """OpenSSL refuses a key whose halves are equal for encryption only; the layer too
    (its decryptor for such a key is pyca's own: aeskit's XTS refuses the key)."""
    data = bytes(range(40))
    for key in (bytes(32), bytes(64)):
        ciphers = _ciphers("XTS", key, bytes(16))
        for cipher in ciphers:
            assert outcome(cipher.encryptor) == (
                ValueError, "In XTS mode duplicated keys are not allowed")
        assert len({c.decryptor().update(data) for c in ciphers}) == 1


def test_gcm_data_limit():
    """pyca counts a GCM context's data against 2**36 - 32 bytes before it looks at
    anything else, and marks the context updated even when the count fails (pyca's
    messages, from its source: pyca itself is not given 64 GiB, which a version that
    copies its input would read)."""
    try:
        big = memoryview(zero_map(2**36))
    except (OSError, OverflowError, ValueError):
        pytest.skip("no room for a 64 GiB reservation-free mapping here")
    for cipher in _ciphers("GCM", bytes(16), bytes(16))[1:]:
        for make in (cipher.encryptor, cipher.decryptor):
            ctx = make()
            assert outcome(ctx.update, big) == (
                ValueError, "Exceeded maximum encrypted byte limit")
            assert outcome(ctx.authenticate_additional_data, b"") == (
                cryptography.exceptions.AlreadyUpdated,
                "Update has been called on this context.")
            assert outcome(ctx.update_into, big, bytearray(1)) == (
                ValueError, "Exceeded maximum encrypted byte limit")


def test_context_class_names_are_pycas():
    for name, want in (("CBC", "CipherContext"), ("GCM", "AEADEncryptionContext")):
        assert type(_ciphers(name, bytes(16), bytes(16))[1].encryptor()).__name__ == want
    assert type(_ciphers("GCM", bytes(16), bytes(16))[1].decryptor()).__name__ == \
        "AEADDecryptionContext"
