"""Authentication: every single-bit flip of tag, ciphertext, AAD and nonce fails, a tag cut
below tag_length fails (pyca/cryptography CVE-2018-10903 took a 1-byte tag), and a failed
decryption releases nothing: one-shot raises, decrypt_into leaves the caller's buffer all
zeros (RustCrypto CVE-2023-42811), in place too."""

import aeskit
import pytest

from aead_helpers import AEADS, new_aead, rand, ref_seal, spec_params

N_PT, N_AAD = 20, 5  # short, so that every bit can be flipped quickly
SENTINEL = 0xEE


def _tag_lengths(spec):
    ts = spec.tag_lengths
    return sorted({max(ts), min(ts), 12} & set(ts))


def _cases():
    for spec in AEADS:
        for ks in spec.key_sizes:
            for t in _tag_lengths(spec):
                # 12 bytes, and the longest nonce up to a block (for GCM one of other
                # than 12 bytes: J0 through GHASH); the one length of a mode that takes
                # only one (XAES-256-GCM's 24)
                for nl in sorted({n for n in (12, min(16, spec.nonce_max or 16))
                                  if n in spec.nonce_lengths} or {spec.nonce_len}):
                    yield pytest.param(spec, ks, t, nl, id=f"{spec.name}-{ks * 8}-t{t}-n{nl}")


case_param = pytest.mark.parametrize("spec,ks,t,nl", list(_cases()))


def _setup(spec, ks, t, nl, backend):
    key, nonce = rand(ks, ks), rand(nl, nl)
    pt, aad = rand(100, N_PT), rand(200, N_AAD)
    obj = new_aead(spec, key, tag_length=t, backend=backend)
    sealed = obj.encrypt(nonce, pt, aad)
    assert sealed == ref_seal(spec, key, nonce, pt, aad, t)
    return obj, nonce, pt, aad, sealed


def _flips(b):
    for i in range(8 * len(b)):
        out = bytearray(b)
        out[i // 8] ^= 1 << (i % 8)
        yield bytes(out)


def assert_rejected(obj, nonce, data, aad, streaming=True):
    """data (ciphertext || tag) must fail through every entry point, leaving nothing (a
    decryptor's too, where the type has one: test_aead_api checks which do)."""
    n = max(len(data) - obj.tag_length, 0)
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt(nonce, data, aad)
    buf = bytearray([SENTINEL] * (n + 9))
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(nonce, data, aad, buf)
    assert buf[:n] == bytes(n), "decrypt_into left plaintext behind after a failure"
    inplace = bytearray(data)
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(nonce, inplace, aad, inplace)
    assert inplace[:n] == bytes(n), "in-place decrypt_into left plaintext behind"
    if streaming and hasattr(obj, "decryptor") and len(data) >= obj.tag_length:
        ctx = obj.decryptor(nonce)
        ctx.authenticate_additional_data(aad or b"")
        ctx.update(data[:n])
        with pytest.raises(aeskit.InvalidTag):
            ctx.finalize_with_tag(data[n:])


@case_param
def test_every_tag_bit(backend, spec, ks, t, nl):
    obj, nonce, pt, aad, sealed = _setup(spec, ks, t, nl, backend)
    for bad in _flips(sealed[N_PT:]):
        assert_rejected(obj, nonce, sealed[:N_PT] + bad, aad)
    assert obj.decrypt(nonce, sealed, aad) == pt  # the object is unharmed


@case_param
def test_every_ciphertext_bit(backend, spec, ks, t, nl):
    obj, nonce, pt, aad, sealed = _setup(spec, ks, t, nl, backend)
    for bad in _flips(sealed[:N_PT]):
        assert_rejected(obj, nonce, bad + sealed[N_PT:], aad)


@case_param
def test_every_aad_bit(backend, spec, ks, t, nl):
    obj, nonce, pt, aad, sealed = _setup(spec, ks, t, nl, backend)
    for bad in _flips(aad):
        assert_rejected(obj, nonce, sealed, bad)
    # AAD one byte longer or shorter, empty, None.
    for bad in (aad + b"\0", aad[:-1], b"", None):
        assert_rejected(obj, nonce, sealed, bad)


@case_param
def test_every_nonce_bit(backend, spec, ks, t, nl):
    obj, nonce, pt, aad, sealed = _setup(spec, ks, t, nl, backend)
    for bad in _flips(nonce):
        assert_rejected(obj, bad, sealed, aad)
    for bad in (nonce + b"\0", nonce[:-1]):
        if len(bad) not in spec.nonce_lengths:
            continue  # not a nonce at all: test_aead_api covers the ValueError
        assert_rejected(obj, bad, sealed, aad)


@case_param
def test_truncated_tag(backend, spec, ks, t, nl):
    obj, nonce, pt, aad, sealed = _setup(spec, ks, t, nl, backend)
    ct, tag = sealed[:N_PT], sealed[N_PT:]
    for k in range(t):
        # One-shot: the last t bytes are taken as the tag, so a short tag shifts them.
        assert_rejected(obj, nonce, ct + tag[:k], aad, streaming=False)
        if not spec.streams:
            continue
        ctx = obj.decryptor(nonce)
        ctx.authenticate_additional_data(aad)
        ctx.update(ct)
        # A short tag is a wrong argument, as a long one is: ValueError, not InvalidTag.
        with pytest.raises(ValueError, match=f"tag must be {t} bytes, got {k}") as info:
            ctx.finalize_with_tag(tag[:k])
        assert not isinstance(info.value, aeskit.InvalidTag)
    # A ciphertext shorter than a tag cannot be anything.
    for k in range(t):
        with pytest.raises(aeskit.InvalidTag):
            obj.decrypt(nonce, sealed[:k], aad)
        buf = bytearray(16)
        with pytest.raises(aeskit.InvalidTag):
            obj.decrypt_into(nonce, sealed[:k], aad, buf)


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_wrong_key_and_swapped_fields(backend, spec):
    key, nonce, pt, aad = rand(1, 32), rand(2, spec.nonce_len), rand(3, 48), rand(4, 7)
    obj = new_aead(spec, key, backend=backend)
    sealed = obj.encrypt(nonce, pt, aad)
    other = new_aead(spec, rand(5, 32), backend=backend)
    assert_rejected(other, nonce, sealed, aad)
    for ks in spec.key_sizes:   # the key's prefixes, where the mode takes them
        if ks < 32:
            assert_rejected(new_aead(spec, key[:ks], backend=backend), nonce, sealed, aad)
    # The plaintext given as AAD.
    assert_rejected(obj, nonce, sealed, pt)
    # A tag from another tag length (prefix of a longer one) is not accepted as data.
    for t in spec.tag_lengths:
        if t == 16:
            continue
        short = new_aead(spec, key, tag_length=t, backend=backend)
        assert_rejected(short, nonce, sealed, aad)


@pytest.mark.parametrize("spec", spec_params(AEADS))
def test_zeroed_buffer_larger_than_needed(backend, spec):
    """The zeroing covers the plaintext span of a larger caller buffer, at an offset."""
    key, nonce, pt = rand(1, spec.key_size), rand(2, spec.nonce_len), rand(3, 300)
    obj = new_aead(spec, key, backend=backend)
    sealed = bytearray(obj.encrypt(nonce, pt, b""))
    sealed[-1] ^= 0x80
    store = bytearray([SENTINEL] * 400)
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(nonce, sealed, b"", memoryview(store)[3:])
    assert store[3:303] == bytes(300)
    assert store[:3] == bytes([SENTINEL] * 3)


def test_invalid_tag_is_a_value_error():
    assert issubclass(aeskit.InvalidTag, ValueError)
