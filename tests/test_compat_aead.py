"""aeskit.compat.cryptography's AEADs against pyca/cryptography itself.

Each class and method is called with the same arguments in both libraries, and the
outcomes must be equal: the output (and what an ``_into`` call wrote), or the exception's
type and message. The arguments break every rule pyca states, one at a time and in
combination, so that the order of pyca's checks is compared too: argument types, key
sizes, tag lengths, nonce lengths, the 2**31 - 1 byte limit on data and associated data,
CCM's limit set by the nonce, the exact size of ``_into`` buffers, messages shorter
than their tag.
"""

import inspect
import itertools
import os
import subprocess
import sys

import cryptography.exceptions
import numpy as np
import pytest
from compat_helpers import bad_buffers, byte_buffers, huge, outcome
from cryptography.hazmat.primitives.ciphers import aead as pyca
from hypothesis import given
from hypothesis import strategies as st

import aeskit
from aeskit.compat import cryptography as compat

#: name -> (key sizes in bytes, nonce lengths pyca takes, tag length); SIV has no nonce.
SPECS = {
    "AESGCM": ((16, 24, 32), (8, 128), 16),
    "AESOCB3": ((16, 24, 32), (12, 15), 16),
    "AESGCMSIV": ((16, 24, 32), (12, 12), 16),
    "AESCCM": ((16, 24, 32), (7, 13), 16),
    "AESSIV": ((32, 48, 64), None, 16),
}
NONCE_CLASSES = [n for n, s in SPECS.items() if s[1] is not None]


def both(name, *args):
    """The class in each library, built from the same arguments."""
    return getattr(pyca, name)(*args), getattr(compat, name)(*args)


def same(f_pyca, f_compat, args, out_index=None):
    """Call both with args; for an _into call (out_index: where buf is) give each its
    own copy of buf, and compare what was written as well."""
    if out_index is None:
        a, b = outcome(f_pyca, *args), outcome(f_compat, *args)
        assert a == b, args
        return a
    buf = args[out_index]
    copies = []
    for f in (f_pyca, f_compat):
        own = list(args)
        if isinstance(buf, bytearray):
            own[out_index] = bytearray(buf)
        copies.append((outcome(f, *own), own[out_index]))
    (a, buf_a), (b, buf_b) = copies
    assert a == b, args
    if a[0] == "ok":
        assert bytes(buf_a) == bytes(buf_b)
    return a


def test_the_exceptions_are_pycas():
    assert compat.InvalidTag is cryptography.exceptions.InvalidTag
    assert compat.AlreadyFinalized is cryptography.exceptions.AlreadyFinalized
    assert compat.AlreadyUpdated is cryptography.exceptions.AlreadyUpdated
    assert compat.NotYetFinalized is cryptography.exceptions.NotYetFinalized
    assert compat.UnsupportedAlgorithm is cryptography.exceptions.UnsupportedAlgorithm


@pytest.mark.parametrize("name", SPECS)
def test_signatures_are_pycas(name):
    ours, theirs = getattr(compat, name), getattr(pyca, name)
    for method in ("encrypt", "decrypt", "encrypt_into", "decrypt_into"):
        want = list(inspect.signature(getattr(theirs, method)).parameters)
        got = list(inspect.signature(getattr(ours, method)).parameters)
        assert got == want
    assert list(inspect.signature(ours.generate_key).parameters) == ["bit_length"]


# ---------------------------------------------------------------- keys


@pytest.mark.parametrize("name", SPECS)
def test_keys_of_every_length_and_type(name):
    P, C = getattr(pyca, name), getattr(compat, name)
    keys = [bytes(range(n)) for n in range(66)]
    keys += list(bad_buffers().values())
    keys += list(byte_buffers(bytes(SPECS[name][0][0])).values())
    for key in keys:
        a, b = outcome(P, key), outcome(C, key)
        assert a[0] == b[0] if a[0] == "ok" else a == b, key


def test_ccm_tag_lengths_and_their_order_against_the_key():
    tags = [None, 0, 1, 3, 4, 5, 6, 7, 8, 10, 12, 14, 15, 16, 17, 32, -1, 2**64, 2**70,
            "16", 16.0, True, np.int64(8)]
    for key, tag in itertools.product([bytes(16), bytes(24), bytes(3), "k"], tags):
        a, b = outcome(pyca.AESCCM, key, tag), outcome(compat.AESCCM, key, tag)
        assert a[0] == b[0] if a[0] == "ok" else a == b, (key, tag)
    a = outcome(pyca.AESCCM, bytes(16), tag_length=4)
    b = outcome(compat.AESCCM, bytes(16), tag_length=4)
    assert a[0] == b[0] == "ok"


@pytest.mark.parametrize("name", SPECS)
def test_generate_key(name):
    P, C = getattr(pyca, name), getattr(compat, name)
    for bits in [-1, 0, 64, 128, 192, 256, 384, 512, 1024, 2**64, 2**70, "128", 128.0,
                 True, None, np.int64(256)]:
        a, b = outcome(P.generate_key, bits), outcome(C.generate_key, bits)
        if a[0] == "ok":
            assert b[0] == "ok" and len(a[1]) == len(b[1]) == bits // 8
            assert a[1] != b[1] or bits == 0
        else:
            assert a == b, bits


# ---------------------------------------------------------------- every argument rule


def _nonce_variants(name):
    lo, hi = SPECS[name][1]
    good = {f"nonce{n}": bytes(range(n)) for n in sorted({lo, hi, 12 if lo <= 12 <= hi else lo})}
    bad = {f"nonce{n}": bytes(n) for n in sorted({0, lo - 1, hi + 1})}
    return good | bad | {"nonce-str": "n" * 12, "nonce-None": None,
                         "nonce-array-b": bad_buffers()["array-b"]}


def _aad_variants():
    return {"ad-None": None, "ad-empty": b"", "ad": b"header", "ad-str": "header",
            "ad-array-b": bad_buffers()["array-b"], "ad-huge": huge()}


def _buf_variants(n):
    """Buffers for an output of n bytes (n None: the data's length is unknown)."""
    n = 16 if n is None else n
    return {"buf": bytearray(n), "buf-1": bytearray(max(n - 1, 0)), "buf+1": bytearray(n + 1),
            "buf-readonly": bytes(n), "buf-str": "b" * n,
            "buf-strided": memoryview(bytearray(2 * n + 2))[::2],
            "buf-numpy": np.zeros(n, np.uint8)}


def _length(x):
    """x's length, or None when it has none or is too large to size buffers by."""
    try:
        n = memoryview(x).nbytes
    except TypeError:
        return None
    return n if n < 2**20 else None


@pytest.mark.parametrize("name", NONCE_CLASSES)
def test_encrypt_every_argument_rule(name):
    key = bytes(range(16))
    p, c = both(name, key)
    datas = {"data": b"plaintext" * 5, "data-empty": b"", "data-bytearray": bytearray(40),
             "data-str": "text", "data-None": None, "data-huge": huge()}
    for nonce, data, ad in itertools.product(_nonce_variants(name).values(), datas.values(),
                                             _aad_variants().values()):
        same(p.encrypt, c.encrypt, (nonce, data, ad))
        n = _length(data)
        for buf in _buf_variants(None if n is None else n + 16).values():
            same(p.encrypt_into, c.encrypt_into, (nonce, data, ad, buf), out_index=3)


@pytest.mark.parametrize("name", NONCE_CLASSES)
def test_decrypt_every_argument_rule(name):
    key = bytes(range(16))
    p, c = both(name, key)
    nonces = _nonce_variants(name)
    n0 = next(v for k, v in nonces.items() if k.startswith("nonce") and isinstance(v, bytes)
              and outcome(p.encrypt, v, b"", None)[0] == "ok")
    sealed = p.encrypt(n0, b"plaintext" * 5, b"header")
    tampered = bytearray(sealed)
    tampered[-1] ^= 1
    datas = {"sealed": sealed, "tampered": bytes(tampered), "tag-only": sealed[-16:],
             "short": sealed[:15], "empty": b"", "data-str": "text", "data-None": None}
    for nonce, data, ad in itertools.product(nonces.values(), datas.values(),
                                             _aad_variants().values()):
        same(p.decrypt, c.decrypt, (nonce, data, ad))
        n = _length(data)
        for buf in _buf_variants(None if n is None else max(n - 16, 0)).values():
            same(p.decrypt_into, c.decrypt_into, (nonce, data, ad, buf), out_index=3)


def test_siv_every_argument_rule():
    p, c = both("AESSIV", bytes(range(32)))
    items = bad_buffers()
    ads = {"None": None, "[]": [], "[b'']": [b""], "two": [b"a", b"bc"],
           "tuple": (b"a",), "bytes": b"a", "str": "a", "[str]": ["a"],
           "[bytes, int]": [b"a", 1], "[array-b]": [items["array-b"]],
           "[strided]": [items["strided"]], "[huge]": [huge()], "[huge, str]": [huge(), "x"],
           "[str, huge]": ["x", huge()], "list subclass": type("L", (list,), {})([b"a"]),
           "[numpy]": [np.zeros(3, np.uint8)]}
    sealed = p.encrypt(b"plaintext", [b"a", b"bc"])
    enc_datas = {"data": b"plaintext", "empty": b"", "bytearray": bytearray(9), "str": "x",
                 "None": None, "huge": huge()}
    dec_datas = {"sealed": sealed, "tampered": bytes([sealed[0] ^ 1]) + sealed[1:],
                 "siv-only": sealed[:16], "short": sealed[:15], "empty": b"", "str": "x",
                 "None": None}
    for data, ad in itertools.product(enc_datas.values(), ads.values()):
        same(p.encrypt, c.encrypt, (data, ad))
        n = _length(data)
        for buf in _buf_variants(None if n is None else n + 16).values():
            same(p.encrypt_into, c.encrypt_into, (data, ad, buf), out_index=2)
    for data, ad in itertools.product(dec_datas.values(), ads.values()):
        same(p.decrypt, c.decrypt, (data, ad))
        n = _length(data)
        for buf in _buf_variants(None if n is None else max(n - 16, 0)).values():
            same(p.decrypt_into, c.decrypt_into, (data, ad, buf), out_index=2)


@pytest.mark.parametrize("name", SPECS)
def test_keyword_calls_and_wrong_arity(name):
    p, c = both(name, bytes(SPECS[name][0][0]))
    if name == "AESSIV":
        kw = {"data": b"x", "associated_data": None}
    else:
        kw = {"nonce": bytes(12 if name != "AESCCM" else 13), "data": b"x",
              "associated_data": None}
    assert p.encrypt(**kw) == c.encrypt(**kw)
    # the arity errors are TypeErrors in both; their wording is Python's own here
    for args in ((), tuple(kw.values()) + (None, None)):
        assert outcome(p.encrypt, *args)[0] is outcome(c.encrypt, *args)[0] is TypeError


# ---------------------------------------------------------------- outputs


@given(data=st.data())
def test_outputs_and_round_trips(data):
    name = data.draw(st.sampled_from(list(SPECS)))
    sizes, nonces, _ = SPECS[name]
    key = data.draw(st.binary(min_size=1, max_size=1).flatmap(
        lambda _: st.sampled_from(sizes)).map(os.urandom))
    args = [key]
    if name == "AESCCM":
        args.append(data.draw(st.sampled_from([4, 6, 8, 10, 12, 14, 16])))
    p, c = both(name, *args)
    msg = data.draw(st.binary(max_size=600))
    if nonces is None:
        ad = data.draw(st.lists(st.binary(max_size=40), max_size=4) | st.none())
        head = ()
    else:
        ad = data.draw(st.binary(max_size=80) | st.none())
        head = (data.draw(st.binary(min_size=nonces[0], max_size=min(nonces[1], 20))),)
    sealed = p.encrypt(*head, msg, ad)
    assert c.encrypt(*head, msg, ad) == sealed
    buf = bytearray(len(sealed))
    assert c.encrypt_into(*head, msg, ad, buf) == len(sealed) and buf == sealed
    assert c.decrypt(*head, sealed, ad) == msg
    out = bytearray(len(msg))
    assert c.decrypt_into(*head, sealed, ad, out) == len(msg) and out == msg
    flip = data.draw(st.integers(0, 8 * len(sealed) - 1))
    bad = bytearray(sealed)
    bad[flip // 8] ^= 1 << flip % 8
    for f in (p.decrypt, c.decrypt):
        with pytest.raises(cryptography.exceptions.InvalidTag):
            f(*head, bytes(bad), ad)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "mv-c", "array-B",
                                  "numpy-u8"])
def test_every_kind_of_buffer_gives_the_same_output(kind):
    for name in NONCE_CLASSES:
        p, c = both(name, bytes(16))
        nonce = byte_buffers(bytes(12))[kind]
        data, ad = byte_buffers(b"plaintext")[kind], byte_buffers(b"ad")[kind]
        assert c.encrypt(nonce, data, ad) == p.encrypt(nonce, data, ad)


def test_2d_buffers_are_taken_as_their_bytes():
    p, c = both("AESGCM", bytes(16))
    grid = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert c.encrypt(bytes(12), grid, None) == p.encrypt(bytes(12), grid, None)


# ---------------------------------------------------------------- limits


def test_ccm_data_limit_set_by_the_nonce():
    """With a 13-byte nonce CCM's length field holds at most 2**16 - 1 bytes. pyca refuses
    more than 2**16 with ValueError; exactly 2**16 fails inside OpenSSL (InternalError on
    encryption, InvalidTag on decryption), which the layer refuses with pyca's ValueError
    on encryption and matches on decryption."""
    for tag in (4, 16):
        p, c = both("AESCCM", bytes(16), tag)
        nonce = bytes(13)
        for n in (2**16 - 1, 2**16, 2**16 + 1):
            data = bytes(n)
            if n == 2**16:
                assert outcome(p.encrypt, nonce, data, None)[0] is cryptography.exceptions.InternalError
                assert outcome(c.encrypt, nonce, data, None) == (ValueError, "Data too long for nonce")
                assert outcome(c.encrypt_into, nonce, data, None, bytearray(n + tag)) == (
                    ValueError, "Data too long for nonce")
            else:
                same(p.encrypt, c.encrypt, (nonce, data, None))
                same(p.encrypt_into, c.encrypt_into, (nonce, data, None, bytearray(n + tag)),
                     out_index=3)
            sealed = data + bytes(tag)
            same(p.decrypt, c.decrypt, (nonce, sealed, None))
            same(p.decrypt_into, c.decrypt_into, (nonce, sealed, None, bytearray(n)), out_index=3)
        good = p.encrypt(nonce, bytes(2**16 - 1), b"ad")
        assert c.decrypt(nonce, good, b"ad") == bytes(2**16 - 1)


def test_gcm_decrypt_past_the_modes_limit_fails_authentication_without_work():
    """pyca has no limit on the data to decrypt; GCM's (2**36 - 32 bytes) fails in OpenSSL
    as a tag that does not authenticate. The native class refuses it before any work: the
    layer reports InvalidTag."""
    from aead_helpers import zero_map

    try:
        data = zero_map(2**36 + 16)
    except (OSError, OverflowError, ValueError):
        pytest.skip("no room for a 64 GiB reservation-free mapping here")
    c = compat.AESGCM(bytes(16))
    with pytest.raises(cryptography.exceptions.InvalidTag):
        c.decrypt(bytes(12), data, None)


def test_a_failed_decrypt_into_leaves_zeros():
    """pyca leaves the unauthenticated plaintext in buf; the layer keeps aeskit's rule
    that a failed decryption releases nothing."""
    for name in NONCE_CLASSES:
        c = compat.__dict__[name](bytes(16))
        sealed = bytearray(c.encrypt(bytes(12), b"secret data", None))
        sealed[0] ^= 1
        buf = bytearray(b"\xff" * 11)
        with pytest.raises(cryptography.exceptions.InvalidTag):
            c.decrypt_into(bytes(12), sealed, None, buf)
        assert buf == bytes(11)


def test_gcmsiv_192_bit_keys():
    p, c = both("AESGCMSIV", bytes(range(24)))
    sealed = p.encrypt(bytes(12), b"data", b"ad")
    assert c.encrypt(bytes(12), b"data", b"ad") == sealed
    assert c.decrypt(bytes(12), sealed, b"ad") == b"data"
    same(p.encrypt, c.encrypt, (bytes(11), b"data", None))


def test_siv_more_than_126_components_is_refused():
    """RFC 5297 allows 126 components of associated data; pyca (OpenSSL) takes more,
    the native AESSIV does not, and the layer says so (docs/migrating.md)."""
    p, c = both("AESSIV", bytes(32))
    assert c.encrypt(b"x", [b"a"] * 126) == p.encrypt(b"x", [b"a"] * 126)
    with pytest.raises(ValueError, match="at most 126 items, got 127"):
        c.encrypt(b"x", [b"a"] * 127)


# ---------------------------------------------------------------- without pyca


def test_without_pyca_the_exceptions_are_aeskits():
    code = r"""
import sys
sys.modules["cryptography"] = None          # import cryptography fails
import aeskit
from aeskit.compat import cryptography as c
from aeskit.compat.cryptography import algorithms, modes
assert c.InvalidTag is aeskit.InvalidTag and c.AlreadyFinalized is aeskit.AlreadyFinalized
assert c.NotYetFinalized is aeskit.NotYetFinalized
g = c.AESGCM(bytes(16))
sealed = bytearray(g.encrypt(bytes(12), b"data", None))
sealed[0] ^= 1
try:
    g.decrypt(bytes(12), bytes(sealed), None)
except aeskit.InvalidTag as e:
    assert str(e) == ""
else:
    raise AssertionError("no InvalidTag")
s = c.AESGCMSIV(bytes(24))            # AES-192-GCM-SIV runs natively, pyca or not
assert s.decrypt(bytes(12), s.encrypt(bytes(12), b"data", None), None) == b"data"
enc = c.Cipher(algorithms.AES(bytes(16)), modes.GCM(bytes(12))).encryptor()
enc.update(b"x")
try:
    enc.authenticate_additional_data(b"late")
except c.AlreadyUpdated as e:
    assert str(e) == "Update has been called on this context."
try:
    c.Cipher(algorithms.AES(bytes(16)), None).encryptor()
except c.UnsupportedAlgorithm as e:
    assert str(e) == "cipher AES in None mode is not supported "
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr


def test_the_native_classes_stay_as_they_are():
    """The layer is a layer: aeskit's own classes keep the standards' wider ranges."""
    assert len(aeskit.AESGCM(bytes(16)).encrypt(bytes(1), b"", None)) == 16
    with pytest.raises(ValueError):
        compat.AESGCM(bytes(16)).encrypt(bytes(1), b"", None)
