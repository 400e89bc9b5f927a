"""Known answers: FIPS-197 Appendix C and NIST SP 800-38A Appendix F, on every backend."""

import re

import pytest

from helpers import (
    CIPHER,
    all_vectors,
    decrypt,
    decrypt_into,
    encrypt,
    encrypt_into,
    new,
    op,
    ref,
)

VECTORS = all_vectors()
# every test here is a known-answer test, of the modes the vector files hold
pytestmark = pytest.mark.known_answer(*sorted({v["mode"] for v in VECTORS}))


def _id(v):
    return f"{v['file'][:-4]}:{v['section'].split()[0]}"


def _unhex(v):
    key = bytes.fromhex(v["key"])
    iv = bytes.fromhex(v["iv"]) if "iv" in v else None
    return key, iv, bytes.fromhex(v["plaintext"]), bytes.fromhex(v["ciphertext"])


def test_vector_files_are_complete():
    """Every section named in the brief is on file; a lost file must not pass silently."""
    sections = {(v["file"], v["section"].split()[0]) for v in VECTORS}
    want = {("fips197.txt", f"C.{i}") for i in (1, 2, 3)}
    for f, sec, first in (("ecb", "F.1", 1), ("cbc", "F.2", 1), ("cfb8", "F.3", 7),
                          ("cfb128", "F.3", 13), ("ofb", "F.4", 1), ("ctr", "F.5", 1)):
        want |= {(f"sp800_38a_{f}.txt", f"{sec}.{i}") for i in range(first, first + 6)}
    assert want <= sections
    assert len(VECTORS) == 42
    # known answers for every mode; XTS's are in vectors/xts/ (tests/test_xts.py)
    assert {v["mode"] for v in VECTORS} == set(CIPHER) - {"XTS"}
    for v in VECTORS:
        assert v["direction"] in ("encrypt", "decrypt")
        bits = re.search(r"AES-?(128|192|256)", v["section"]).group(1)
        assert len(bytes.fromhex(v["key"])) * 8 == int(bits), v["section"]
    # Both directions of each key size for each mode.
    per = {(v["file"], v["direction"], len(v["key"])) for v in VECTORS}
    assert len(per) == 7 * 2 * 3


@pytest.mark.parametrize("v", VECTORS, ids=_id)
def test_vectors_agree_with_reference(v):
    """The stored hex is what pyca/cryptography (OpenSSL) computes."""
    key, iv, pt, ct = _unhex(v)
    spec = CIPHER[v["mode"]]
    assert ref(spec, key, iv, pt, "encrypt") == ct
    assert ref(spec, key, iv, ct, "decrypt") == pt


@pytest.mark.parametrize("v", VECTORS, ids=_id)
def test_kat_one_shot(v, backend):
    key, iv, pt, ct = _unhex(v)
    spec = CIPHER[v["mode"]]
    obj = new(spec, key, backend=backend)
    assert obj.backend == backend
    assert obj.key_size == len(key) * 8
    if v["direction"] == "encrypt":
        assert encrypt(obj, spec, iv, pt) == ct
    else:
        assert decrypt(obj, spec, iv, ct) == pt


@pytest.mark.parametrize("v", VECTORS, ids=_id)
def test_kat_into_and_in_place(v, backend):
    key, iv, pt, ct = _unhex(v)
    spec = CIPHER[v["mode"]]
    obj = new(spec, key, backend=backend)
    src, want = (pt, ct) if v["direction"] == "encrypt" else (ct, pt)
    into = encrypt_into if v["direction"] == "encrypt" else decrypt_into
    out = bytearray(len(src))
    assert into(obj, spec, iv, src, out) == len(src)
    assert out == want
    buf = bytearray(src)
    assert into(obj, spec, iv, buf, buf) == len(src)
    assert buf == want


@pytest.mark.parametrize("step", [1, 7, 16, 17])
@pytest.mark.parametrize("v", VECTORS, ids=_id)
def test_kat_streaming(v, backend, step):
    key, iv, pt, ct = _unhex(v)
    spec = CIPHER[v["mode"]]
    obj = new(spec, key, backend=backend)
    src, want = (pt, ct) if v["direction"] == "encrypt" else (ct, pt)
    ctx = op(obj, spec, iv, v["direction"])
    out = b"".join(ctx.update(src[i:i + step]) for i in range(0, len(src), step))
    out += ctx.finalize()
    assert out == want
