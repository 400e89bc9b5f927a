"""aeskit.streaming against Tink itself (the `tink` package from PyPI, the `interop` extra).

Streams written by Tink decrypt with aeskit and the reverse, for each derived key size and
HKDF hash, segment sizes from the smallest valid to several MiB, empty input, exactly k
segments, k segments plus one byte; keysets made by each side are read by the other.

Tink is the `interop` extra, whose wheels exist for Linux and macOS on x86-64 and ARM64
only (building it needs Bazel): without it these tests are skipped, with the reason.
CI installs the extra, so there they run.
"""

from __future__ import annotations

import io

import pytest

import aeskit
from aeskit.streaming import StreamingAEAD

tink = pytest.importorskip(
    "tink", reason="Tink is not installed (pip install 'aeskit[interop]': wheels for Linux "
    "and macOS on x86-64 and ARM64)")

from tink import secret_key_access, streaming_aead
from tink.proto import aes_gcm_hkdf_streaming_pb2, common_pb2, tink_pb2

streaming_aead.register()

HASHES = {"sha1": common_pb2.SHA1, "sha256": common_pb2.SHA256, "sha512": common_pb2.SHA512}


class Sink(io.BytesIO):
    """Tink closes the stream it writes to; keep the bytes readable."""

    def close(self):
        pass


def template(dks, hash_name, seg, key_size=None):
    fmt = aes_gcm_hkdf_streaming_pb2.AesGcmHkdfStreamingKeyFormat()
    fmt.key_size = key_size or dks
    fmt.params.hkdf_hash_type = HASHES[hash_name]
    fmt.params.derived_key_size = dks
    fmt.params.ciphertext_segment_size = seg
    return tink_pb2.KeyTemplate(
        type_url="type.googleapis.com/google.crypto.tink.AesGcmHkdfStreamingKey",
        value=fmt.SerializeToString(), output_prefix_type=tink_pb2.RAW)


def tink_pair(dks, hash_name, seg):
    handle = tink.new_keyset_handle(template(dks, hash_name, seg))
    js = tink.json_proto_keyset_format.serialize(handle, secret_key_access.TOKEN)
    return handle.primitive(streaming_aead.StreamingAead), js


def tink_encrypt(prim, pt, aad):
    out = Sink()
    with prim.new_encrypting_stream(out, aad) as w:
        w.write(pt)
    return out.getvalue()


def tink_decrypt(prim, ct, aad):
    with prim.new_decrypting_stream(io.BytesIO(ct), aad) as r:
        return r.read()


def pattern(n):
    return bytes((i * 131 + (i >> 8)) & 0xFF for i in range(n)) if n < 4096 else \
        (bytes(range(256)) * (n // 256 + 1))[:n]


def lengths(dks, seg):
    hl = 1 + dks + 7
    first, plain = seg - hl - 16, seg - 16
    out = {0, 1, first - 1, first, first + 1}
    for k in (2, 3):
        full = first + (k - 1) * plain          # exactly k segments
        out |= {full, full + 1}
    return sorted(n for n in out if n >= 0)


PARAMS = [(dks, h, seg) for dks in (16, 32) for h in ("sha1", "sha256", "sha512")
          for seg in (dks + 25, 4096)]
PARAMS += [(32, "sha256", 1 << 20), (16, "sha256", 3 * (1 << 20) + 5)]


@pytest.mark.parametrize("dks, hash_name, seg", PARAMS)
def test_both_directions(dks, hash_name, seg):
    prim, js = tink_pair(dks, hash_name, seg)
    sa = StreamingAEAD.from_keyset(js)
    assert (sa.derived_key_size, sa.hkdf_hash, sa.segment_size) == (dks, hash_name, seg)
    ns = lengths(dks, seg)
    if seg > 1 << 20:   # several MiB: the boundary sizes only, they are the costly ones
        ns = [0, ns[-2], ns[-1]]
    for n in ns:
        pt = pattern(n)
        aad = b"interop %d" % n
        ct = tink_encrypt(prim, pt, aad)
        assert len(ct) == sa.ciphertext_size(n)
        assert sa.open_decrypting(io.BytesIO(ct), aad).read() == pt
        out = io.BytesIO()
        sa.decrypt_file(io.BytesIO(ct), out, aad, threads=2)
        assert out.getvalue() == pt
        r = sa.open_decrypting(io.BytesIO(ct), aad)
        assert r.size() == n
        r.seek(n // 2)
        assert r.read() == pt[n // 2:]
        ours = io.BytesIO()
        with sa.open_encrypting(ours, aad) as w:
            w.write(pt)
        assert tink_decrypt(prim, ours.getvalue(), aad) == pt
        ours = io.BytesIO()
        sa.encrypt_file(io.BytesIO(pt), ours, aad, threads=2)
        assert tink_decrypt(prim, ours.getvalue(), aad) == pt


@pytest.mark.parametrize("dks, hash_name", [(16, "sha1"), (32, "sha256"), (32, "sha512")])
def test_aeskit_keyset_read_by_tink(dks, hash_name):
    sa = StreamingAEAD(bytes(range(7, 7 + dks)), segment_size=dks + 25 + 100,
                       derived_key_size=dks, hkdf_hash=hash_name)
    handle = tink.json_proto_keyset_format.parse(sa.to_keyset(), secret_key_access.TOKEN)
    prim = handle.primitive(streaming_aead.StreamingAead)
    pt = pattern(1000)
    ours = io.BytesIO()
    with sa.open_encrypting(ours, b"ad") as w:
        w.write(pt)
    assert tink_decrypt(prim, ours.getvalue(), b"ad") == pt
    assert sa.open_decrypting(io.BytesIO(tink_encrypt(prim, pt, b"ad")), b"ad").read() == pt


def test_tink_keyset_with_longer_key_and_several_keys():
    """A 32-byte key deriving 16-byte keys, and a keyset of two keys built by Tink."""
    manager = tink.new_keyset_handle(template(16, "sha256", 512, key_size=32))
    prim_a = manager.primitive(streaming_aead.StreamingAead)
    second = tink.new_keyset_handle(template(32, "sha512", 200))
    prim_b = second.primitive(streaming_aead.StreamingAead)
    import json
    ka = json.loads(tink.json_proto_keyset_format.serialize(manager, secret_key_access.TOKEN))
    kb = json.loads(tink.json_proto_keyset_format.serialize(second, secret_key_access.TOKEN))
    ka["key"] += kb["key"]
    both = StreamingAEAD.from_keyset(json.dumps(ka))
    pt = pattern(3000)
    for prim in (prim_a, prim_b):
        assert both.open_decrypting(io.BytesIO(tink_encrypt(prim, pt, b"")), b"").read() == pt
    # and Tink reads the two-key keyset aeskit writes back
    handle = tink.json_proto_keyset_format.parse(both.to_keyset(), secret_key_access.TOKEN)
    prim = handle.primitive(streaming_aead.StreamingAead)
    assert tink_decrypt(prim, tink_encrypt(prim_b, pt, b""), b"") == pt
    ours = io.BytesIO()
    with both.open_encrypting(ours) as w:
        w.write(pt)
    assert tink_decrypt(prim_a, ours.getvalue(), b"") == pt


def test_tink_rejects_our_tampering_too():
    """A sanity check that the two agree on failure: a flipped bit fails on both sides."""
    prim, js = tink_pair(32, "sha256", 4096)
    sa = StreamingAEAD.from_keyset(js)
    ct = bytearray(tink_encrypt(prim, pattern(10000), b""))
    ct[5000] ^= 1
    with pytest.raises(aeskit.InvalidTag):
        sa.open_decrypting(io.BytesIO(bytes(ct)), b"").read()
    with pytest.raises(tink.TinkError):
        tink_decrypt(prim, bytes(ct), b"")
