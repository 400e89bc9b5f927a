"""AES-OCB3 known answers: RFC 7253 Appendix A, every sample and the iterated test (key
lengths 128/192/256 x tag lengths 128/96/64), on every backend through every entry point."""

import pytest

from aead_helpers import (
    AEAD,
    aead_vectors,
    check_every_path,
    new_aead,
    ref_libs,
    ref_open,
    ref_seal,
    stream_seal,
    vector_id,
)

OCB3 = AEAD["OCB3"]
VECTORS = aead_vectors("ocb3.txt")
# every test here is a known-answer test (or checks the vectors they use)
pytestmark = pytest.mark.known_answer("OCB3")
SAMPLES = [v for v in VECTORS if "nonce" in v]
ITERATED = [v for v in VECTORS if "output" in v]


def test_vector_file_is_complete():
    sections = [v["section"] for v in VECTORS]
    assert len(sections) == len(set(sections)) == 26
    assert len(SAMPLES) == 17 and len(ITERATED) == 9
    assert [v["nonce"].hex() for v in SAMPLES[:16]] == [
        f"bbaa998877665544332211{i:02x}" for i in range(16)]
    assert {len(v["tag"]) for v in SAMPLES} == {12, 16}
    assert {(len(v["key"]) * 8, v["tag_bits"]) for v in ITERATED} == {
        (k, t) for k in (128, 192, 256) for t in (128, 96, 64)}
    for v in ITERATED:
        assert v["key"] == bytes(len(v["key"]) - 1) + bytes([v["tag_bits"]])
        assert len(v["output"]) * 8 == v["tag_bits"]


@pytest.mark.parametrize("v", SAMPLES, ids=vector_id)
def test_samples_agree_with_references(v):
    t = len(v["tag"])
    libs = ref_libs(OCB3, len(v["nonce"]), t)
    assert libs
    for lib in libs:
        assert ref_seal(OCB3, v["key"], v["nonce"], v["plaintext"], v["aad"], t,
                        lib=lib) == v["ciphertext"] + v["tag"], lib
        assert ref_open(OCB3, v["key"], v["nonce"], v["ciphertext"] + v["tag"], v["aad"], t,
                        lib=lib) == v["plaintext"], lib


@pytest.mark.parametrize("v", SAMPLES, ids=vector_id)
def test_sample(v, backend):
    obj = new_aead(OCB3, v["key"], tag_length=len(v["tag"]), backend=backend)
    assert obj.backend == backend
    assert obj.key_size == 128
    assert obj.tag_length == len(v["tag"])
    check_every_path(obj, OCB3, v["nonce"], v["aad"], v["plaintext"],
                     v["ciphertext"] + v["tag"])


def _iterated(seal, key, tag_bits):
    """RFC 7253 Appendix A: OCB-ENCRYPT(K, N, A, P) is seal(N, P, A)."""
    c = []
    for i in range(128):
        s = bytes(i)
        c.append(seal((3 * i + 1).to_bytes(12, "big"), s, s))
        c.append(seal((3 * i + 2).to_bytes(12, "big"), s, b""))
        c.append(seal((3 * i + 3).to_bytes(12, "big"), b"", s))
    return seal((385).to_bytes(12, "big"), b"", b"".join(c))


@pytest.mark.parametrize("v", ITERATED, ids=vector_id)
def test_iterated_agrees_with_references(v):
    t = v["tag_bits"] // 8
    for lib in ref_libs(OCB3, 12, t):
        got = _iterated(lambda n, p, a, lib=lib: ref_seal(OCB3, v["key"], n, p, a, t, lib=lib),
                        v["key"], v["tag_bits"])
        assert got == v["output"], lib


@pytest.mark.parametrize("v", ITERATED, ids=vector_id)
def test_iterated(v, backend):
    obj = new_aead(OCB3, v["key"], tag_length=v["tag_bits"] // 8, backend=backend)
    assert obj.key_size == len(v["key"]) * 8
    assert _iterated(obj.encrypt, v["key"], v["tag_bits"]) == v["output"]

    def into(n, p, a):
        buf = bytearray(len(p) + obj.tag_length)
        assert obj.encrypt_into(n, p, a, buf) == len(buf)
        return bytes(buf)

    assert _iterated(into, v["key"], v["tag_bits"]) == v["output"]

    def streamed(n, p, a):
        half = len(p) // 2
        ct, tag = stream_seal(obj, OCB3, n, p, [a[:3], a[3:]], [p[:half], p[half:]])
        return ct + tag

    assert _iterated(streamed, v["key"], v["tag_bits"]) == v["output"]
