"""AES-EAX known answers (the ten vectors of the EAX paper) on every backend through every
entry point, and what the shared AEAD suites cannot check against a reference: the empty
nonce (pycryptodome refuses it), against a model of EAX built from pyca/cryptography's CMAC
and CTR. The shared suites (tests/aead_helpers.py's EAX spec) cover the API, streaming,
tampering and pycryptodome as a reference."""

import aeskit
import pytest
from cryptography.hazmat.primitives import cmac as _pyca_cmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from aead_helpers import (
    AEAD,
    aead_vectors,
    check_every_path,
    new_aead,
    rand,
    ref_libs,
    ref_open,
    ref_seal,
    stream_open,
    stream_seal,
    vector_id,
)
from helpers import KEY_SIZES, WIDE_BATCH

EAX = AEAD["EAX"]
VECTORS = aead_vectors("eax.txt")


def omac(key, t, data):
    """OMAC^t_K(data) = CMAC_K([t]_16 || data), by pyca/cryptography's CMAC."""
    c = _pyca_cmac.CMAC(algorithms.AES(key))
    c.update(bytes(15) + bytes([t]) + bytes(data))
    return c.finalize()


def model_seal(key, nonce, data, aad, t=16):
    """EAX as the paper defines it, from pyca's CMAC and its CTR (a 128-bit big-endian
    counter, as EAX's): ciphertext || tag."""
    n = omac(key, 0, nonce)
    enc = Cipher(algorithms.AES(key), modes.CTR(n)).encryptor()
    ct = enc.update(bytes(data)) + enc.finalize()
    tag = bytes(a ^ b ^ c for a, b, c in zip(n, omac(key, 1, aad), omac(key, 2, ct)))
    return ct + tag[:t]


@pytest.mark.known_answer("EAX")
def test_vector_file_is_complete():
    assert len(VECTORS) == len({v["section"] for v in VECTORS}) == 10
    assert [len(v["plaintext"]) for v in VECTORS] == [0, 2, 5, 5, 6, 12, 17, 18, 18, 21]
    for v in VECTORS:
        assert len(v["key"]) == len(v["nonce"]) == len(v["tag"]) == 16
        assert len(v["aad"]) == 8
        assert len(v["ciphertext"]) == len(v["plaintext"])


@pytest.mark.known_answer("EAX")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_vector_agrees_with_references(v):
    sealed = v["ciphertext"] + v["tag"]
    assert model_seal(v["key"], v["nonce"], v["plaintext"], v["aad"]) == sealed
    assert ref_libs(EAX, 16) == ["pycryptodome"]
    assert ref_seal(EAX, v["key"], v["nonce"], v["plaintext"], v["aad"]) == sealed
    assert ref_open(EAX, v["key"], v["nonce"], sealed, v["aad"]) == v["plaintext"]


@pytest.mark.known_answer("EAX")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_vector(v, backend):
    obj = new_aead(EAX, v["key"], backend=backend)
    assert obj.backend == backend and obj.key_size == 128 and obj.tag_length == 16
    check_every_path(obj, EAX, v["nonce"], v["aad"], v["plaintext"],
                     v["ciphertext"] + v["tag"])
    # truncated tags are the leading bytes of the full one
    for t in (4, 8, 12, 15):
        short = new_aead(EAX, v["key"], tag_length=t, backend=backend)
        assert short.encrypt(v["nonce"], v["plaintext"], v["aad"]) == (
            v["ciphertext"] + v["tag"][:t])


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_empty_nonce(backend, ks):
    """The EAX paper allows the empty nonce (N' = OMAC^0 of nothing); pycryptodome does
    not, so the model is the reference: every entry point, data across the batches."""
    key = rand(ks, ks)
    obj = new_aead(EAX, key, backend=backend)
    port = new_aead(EAX, key, backend="portable")
    msg, aad = rand(ks + 1, 16 * (2 * WIDE_BATCH + 1) + 7), rand(ks + 2, 37)
    for n in (0, 1, 15, 16, 17, 16 * WIDE_BATCH - 1, 16 * WIDE_BATCH + 1, len(msg)):
        pt = msg[:n]
        for a in (b"", aad):
            sealed = model_seal(key, b"", pt, a)
            assert obj.encrypt(b"", pt, a) == sealed, (n, len(a))
            assert port.encrypt(b"", pt, a) == sealed, (n, len(a))
            assert obj.decrypt(bytearray(), sealed, a) == pt
    pt = msg[:45]
    sealed = model_seal(key, b"", pt, aad)
    check_every_path(obj, EAX, b"", aad, pt, sealed)
    ct, tag = sealed[:45], sealed[45:]
    cuts = [pt[:3], pt[3:20], pt[20:], b""]
    assert stream_seal(obj, EAX, memoryview(b""), pt, [aad[:5], aad[5:]], cuts) == (ct, tag)
    assert stream_open(obj, EAX, b"", tag, [aad], [ct[:16], ct[16:]]) == pt
    # the empty nonce is a nonce of its own: not the 1-byte zero nonce, not a 16-byte one
    assert obj.encrypt(b"", pt, aad) != obj.encrypt(b"\0", pt, aad)
    assert obj.encrypt(b"", pt, aad) != obj.encrypt(bytes(16), pt, aad)


def test_empty_nonce_failure_zeroes_buf(backend):
    key = rand(40, 16)
    obj = new_aead(EAX, key, tag_length=8, backend=backend)
    pt, aad = rand(41, 50), rand(42, 10)
    sealed = bytearray(obj.encrypt(b"", pt, aad))
    sealed[-1] ^= 1
    buf = bytearray(b"\xaa" * 60)
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(b"", sealed, aad, buf)
    assert buf[:50] == bytes(50) and buf[50:] == b"\xaa" * 10
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(b"", sealed, aad, sealed)
    assert sealed[:50] == bytes(50)


@pytest.mark.parametrize("nl", (1, 13, 16, 17, 64))
def test_model_agrees_with_pycryptodome(nl):
    """The model above is EAX as pycryptodome computes it wherever both take the nonce."""
    key, nonce = rand(nl, 16), rand(nl + 1, nl)
    for n in (0, 5, 16, 33):
        pt, aad = rand(n, n), rand(n + 2, n // 2)
        assert model_seal(key, nonce, pt, aad) == ref_seal(EAX, key, nonce, pt, aad)
