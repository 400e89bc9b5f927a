"""aeskit.streaming: Tink's AES-GCM-HKDF streaming AEAD (format, random access,
tampering, limits, aborted writes, whole files on several threads, keysets).

Interoperability with the tink package itself is in test_stream_interop.py."""

from __future__ import annotations

import base64
import errno
import io
import json
import os
import stat
import threading

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as RefGCM
from stream_helpers import derive, nonce, ref_decrypt, ref_encrypt, segments

import aeskit
from aeskit.streaming import StreamingAEAD, files
from aeskit.streaming import format as fmt

# Small segments so that a few hundred bytes cross many boundaries.
SEG, DKS = 64, 16           # header 24: segment 0 holds 24 bytes of plaintext, the others 48
HL, FIRST, PLAIN = 24, 24, 48
KEY = bytes(range(32))


def rand(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def small(**kw):
    return StreamingAEAD(KEY, segment_size=SEG, derived_key_size=DKS, **kw)


def seal(sa, pt, aad=b""):
    bio = io.BytesIO()
    with sa.open_encrypting(bio, aad) as w:
        w.write(pt)
    return bio.getvalue()


def open_all(sa, ct, aad=b""):
    return sa.open_decrypting(io.BytesIO(ct), aad).read()


# Lengths at and around every segment boundary for the first few segments.
BOUNDARY_LENGTHS = sorted({0, 1} | {FIRST + k * PLAIN + d for k in range(4) for d in (-1, 0, 1)})


@pytest.mark.parametrize("hash_name", ["sha1", "sha256", "sha512"])
@pytest.mark.parametrize("dks", [16, 32])
def test_matches_independent_reference(backend, hash_name, dks):
    seg = 1 + dks + 7 + 16 + 40
    sa = StreamingAEAD(KEY, segment_size=seg, derived_key_size=dks, hkdf_hash=hash_name,
                       backend=backend)
    hl = 1 + dks + 7
    first, plain = seg - hl - 16, seg - 16
    lengths = sorted({0, 1} | {first + k * plain + d for k in range(3) for d in (-1, 0, 1)})
    for n in lengths:
        pt = rand(n, n)
        ct = seal(sa, pt, b"ad")
        assert len(ct) == sa.ciphertext_size(n)
        assert ref_decrypt(KEY, ct, b"ad", seg=seg, dks=dks, hash_name=hash_name) == pt
        ref = ref_encrypt(KEY, pt, b"ad", seg=seg, dks=dks, hash_name=hash_name,
                          salt=rand(dks, 1), prefix=rand(7, 2))
        assert open_all(sa, ref, b"ad") == pt
        for threads in (1, 2):
            out = io.BytesIO()
            assert sa.decrypt_file(io.BytesIO(ref), out, b"ad", threads=threads) == n
            assert out.getvalue() == pt


def test_hkdf_rfc5869_case1():
    ikm = bytes([0x0B] * 22)
    salt = bytes(range(13))
    info = bytes(range(0xF0, 0xFA))
    okm = ("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
           "34007208d5b887185865")
    assert fmt._hkdf("sha256", ikm, salt, info, 42).hex() == okm


def test_nonce_layout():
    assert fmt._nonce(b"\xaa" * 7, 0x01020304, True) == b"\xaa" * 7 + b"\x01\x02\x03\x04\x01"
    assert fmt._nonce(b"\xaa" * 7, 2**32 - 1, False)[-5:] == b"\xff\xff\xff\xff\x00"
    with pytest.raises(aeskit.LimitExceeded):
        fmt._nonce(b"\xaa" * 7, 2**32, False)


def test_header_layout():
    sa = small()
    ct = seal(sa, b"x")
    assert ct[0] == HL == sa.header_length
    assert len(ct) == HL + 1 + 16


@pytest.mark.parametrize("per", [1, 2, 3, 1 << 20])
def test_write_splits_do_not_matter(monkeypatch, per):
    """Any split of the plaintext into write() calls gives the same stream, with the
    writer's runs (whole segments sealed straight from a long write) of any length."""
    monkeypatch.setattr(fmt, "_RUN_BYTES", per * SEG)
    seq = iter(range(10**6))
    monkeypatch.setattr(fmt.os, "urandom", lambda n: bytes([next(seq) % 256]) * n)
    for tail in (0, 5):
        pt = rand(FIRST + 7 * PLAIN + tail)
        splits = [[step] * -(-len(pt) // step) for step in
                  (1, 7, FIRST, PLAIN, PLAIN + 1, 2 * PLAIN, 3 * PLAIN + 1, len(pt))]
        # writes that end on segment boundaries, the stream's end among them
        splits += [[FIRST, 7 * PLAIN, tail], [FIRST, 2 * PLAIN, 5 * PLAIN, tail],
                   [FIRST + 7 * PLAIN, tail], [FIRST + PLAIN, 6 * PLAIN + tail]]
        outs = set()
        for sizes in splits:
            seq = iter(range(10**6))
            bio = io.BytesIO()
            with small().open_encrypting(bio) as w:
                w.write(b"")
                i = 0
                for k in sizes:
                    w.write(memoryview(pt)[i:i + k])
                    i += k
            outs.add(bio.getvalue())
        assert len(outs) == 1
        assert open_all(small(), outs.pop()) == pt


def test_parallel_output_identical(monkeypatch):
    """encrypt_file on 1, 2 and 4 threads and the writer give the same bytes (same salt)."""
    monkeypatch.setattr(fmt.os, "urandom", lambda n: b"\x5a" * n)
    sa = small()
    for n in (0, FIRST, FIRST + 1, FIRST + 40 * PLAIN, FIRST + 41 * PLAIN - 3):
        pt = rand(n, n)
        ref = seal(sa, pt)
        for threads in (1, 2, 4):
            out = io.BytesIO()
            assert sa.encrypt_file(io.BytesIO(pt), out, threads=threads) == n
            assert out.getvalue() == ref
            # a file object that is not in memory: segments read, not viewed
            out = io.BytesIO()
            assert sa.encrypt_file(io.BufferedReader(io.BytesIO(pt)), out,
                                   threads=threads) == n
            assert out.getvalue() == ref
            back = io.BytesIO()
            sa.decrypt_file(io.BytesIO(ref), back, threads=threads)
            assert back.getvalue() == pt


@pytest.mark.parametrize("per", [1, 2, 3, 5])
def test_runs_of_segments(monkeypatch, per):
    """encrypt_file and decrypt_file hand the threads runs of `per` segments (one C call
    each, _RUN_BYTES): every length around the runs' and the segments' boundaries gives
    the writer's bytes and back, on 1 to 3 threads, from memory and from a file object;
    a flipped byte in any segment of any run is the segment named, and nothing of it
    or after it comes out."""
    monkeypatch.setattr(fmt, "_RUN_BYTES", per * SEG)
    monkeypatch.setattr(fmt.os, "urandom", lambda n: b"\x5a" * n)
    sa = small()
    lengths = sorted({0, 1} | {FIRST + k * PLAIN + d for k in range(3 * per + 2)
                               for d in (-1, 0, 1)})
    for n in lengths:
        pt = rand(n, n)
        ref = seal(sa, pt)
        for threads in (1, 2, 3):
            for src in (io.BytesIO(pt), io.BufferedReader(io.BytesIO(pt))):
                out = io.BytesIO()
                assert sa.encrypt_file(src, out, threads=threads) == n
                assert out.getvalue() == ref, (n, threads)
            back = io.BytesIO()
            assert sa.decrypt_file(io.BytesIO(ref), back, threads=threads) == n
            assert back.getvalue() == pt
    pt = rand(FIRST + (3 * per + 1) * PLAIN + 7)
    ct = seal(sa, pt)
    segments = 3 * per + 3
    assert len(ct) == HL + FIRST + 16 + (segments - 1) * SEG - (PLAIN - 7)
    for i in range(1, segments):
        bad = bytearray(ct)
        bad[i * SEG + 3] ^= 1
        for threads in (1, 2):
            out = io.BytesIO()
            with pytest.raises(aeskit.InvalidTag, match=f"segment {i} "):
                sa.decrypt_file(io.BytesIO(bytes(bad)), out, threads=threads)
            assert pt.startswith(out.getvalue())
            assert len(out.getvalue()) <= FIRST + (i - 1) * PLAIN


def test_run_calls_check_their_arguments():
    """_stream_seal/_stream_open (py/segments.c) refuse what the module never passes."""
    gcm = aeskit.AESGCM(bytes(16))
    pre = bytes(7)
    buf = bytearray(200)
    with pytest.raises(TypeError, match="AEAD object"):
        fmt._stream_seal(aeskit.AESCTR(bytes(16)), pre, 0, True, b"x", buf, 48)
    with pytest.raises(ValueError, match="16-byte"):
        fmt._stream_seal(aeskit.AESGCM(bytes(16), tag_length=12), pre, 0, True, b"x", buf, 48)
    with pytest.raises(ValueError, match="12 bytes, which aeskit.AESSIV"):
        fmt._stream_seal(aeskit.AESSIV(bytes(32)), pre, 0, True, b"x", buf, 48)
    # CCM with a 12-byte nonce has a 3-byte length field: 2**24 - 1 bytes a segment
    ccm = aeskit.AESCCM(bytes(16))
    assert fmt._stream_seal(ccm, pre, 0, True, b"x", buf, 2**24 - 1) == 17
    assert fmt._stream_open(ccm, pre, 0, True, bytes(buf[:17]), bytearray(1), 2**24 + 15) \
        == (1, -1)
    with pytest.raises(ValueError, match="at most 16777215 bytes"):
        fmt._stream_seal(ccm, pre, 0, True, b"x", buf, 2**24)
    with pytest.raises(ValueError, match="at most 16777215 bytes"):
        fmt._stream_open(ccm, pre, 0, True, bytes(buf[:17]), bytearray(1), 2**24 + 16)
    with pytest.raises(ValueError, match="prefix must be 7"):
        fmt._stream_seal(gcm, bytes(8), 0, True, b"x", buf, 48)
    with pytest.raises(ValueError, match="only the last segment"):
        fmt._stream_seal(gcm, pre, 0, False, bytes(50), buf, 48)
    with pytest.raises(ValueError, match="dst must hold 82"):
        fmt._stream_seal(gcm, pre, 0, True, bytes(50), bytearray(81), 48)
    with pytest.raises(OverflowError, match="past 2\\*\\*32"):
        fmt._stream_seal(gcm, pre, 2**32 - 1, True, bytes(50), buf, 48)
    with pytest.raises(ValueError, match="below 2\\*\\*32"):
        fmt._stream_seal(gcm, pre, 2**32, True, b"", buf, 48)
    mv = memoryview(buf)
    with pytest.raises(ValueError, match="overlap"):
        fmt._stream_seal(gcm, pre, 0, True, mv[:60], mv[:100], 48)   # two segments in place
    with pytest.raises(ValueError, match="overlap"):
        fmt._stream_seal(gcm, pre, 0, True, mv[8:20], mv[:40], 48)
    assert fmt._stream_seal(gcm, pre, 0, True, mv[:20], mv[:36], 48) == 36   # one in place
    # a final segment too short to hold a tag is a bad segment, not an error
    ct = bytearray(64 + 10)
    assert fmt._stream_seal(gcm, pre, 0, False, bytes(48), ct, 48) == 64
    out = bytearray(48)
    assert fmt._stream_open(gcm, pre, 0, True, bytes(ct), out, 64) == (48, 1)
    assert fmt._stream_open(gcm, pre, 0, False, bytes(ct[:64]), out, 64) == (48, -1)
    assert out == bytes(48)
    out[:] = b"\xff" * 48
    assert fmt._stream_open(gcm, pre, 0, True, bytes(ct[:64]), out, 64) == (0, 0)  # the flag
    assert out == bytes(48)                     # what failed is zeroed
    with pytest.raises(ValueError, match="at least 16"):
        fmt._stream_open(gcm, pre, 0, True, bytes(10), out, 15)


@pytest.mark.parametrize("name", ["AESGCM", "AESOCB3", "AESEAX", "AESGCMSIV", "AESCCM"])
def test_runs_on_any_aead_with_12_byte_nonces(backend, name):
    """_stream_seal/_stream_open take any AEAD whose nonces may be 12 bytes: each segment
    is that AEAD's one-shot message under the segment's nonce; a flipped byte stops the
    run at its segment, whose output is zeroed."""
    aead = getattr(aeskit, name)(bytes(range(16)), backend=backend)
    pre, size = b"\x07" * 7, 48
    pt = rand(3 * size + 5, len(name))
    ct = bytearray(len(pt) + 4 * fmt.TAG)
    assert fmt._stream_seal(aead, pre, 9, True, pt, ct, size) == len(ct)
    want = b"".join(aead.encrypt(fmt._nonce(pre, 9 + j, j == 3), pt[j * size:(j + 1) * size],
                                 None) for j in range(4))
    assert bytes(ct) == want
    out = bytearray(len(pt))
    assert fmt._stream_open(aead, pre, 9, True, bytes(ct), out, size + fmt.TAG) == (len(pt), -1)
    assert bytes(out) == pt
    ct[2 * (size + fmt.TAG) + 1] ^= 1
    out[:] = b"\xff" * len(out)
    assert fmt._stream_open(aead, pre, 9, True, bytes(ct), out, size + fmt.TAG) == (2 * size, 2)
    assert bytes(out[:2 * size]) == pt[:2 * size] and out[2 * size:3 * size] == bytes(size)
    assert out[3 * size:] == b"\xff" * 5      # nothing after it opened


@pytest.mark.parametrize("kw, msg", [
    ({"derived_key_size": 24}, "derived_key_size must be 16 or 32"),
    ({"hkdf_hash": "md5"}, "hkdf_hash must be one of"),
    ({"segment_size": 1 + 32 + 7 + 16}, "segment_size must be more than 56"),
    ({"segment_size": 1 << 31}, "less than 2"),
])
def test_parameter_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        StreamingAEAD(KEY, **kw)


def test_key_size_rules():
    with pytest.raises(ValueError, match="at least 32 bytes"):
        StreamingAEAD(bytes(31))
    with pytest.raises(ValueError, match="at least 16 bytes"):
        StreamingAEAD(bytes(15), derived_key_size=16)
    StreamingAEAD(bytes(16), derived_key_size=16)
    StreamingAEAD(bytes(64))  # longer keys are fine, as in Tink
    StreamingAEAD(bytes(32), segment_size=1 + 32 + 7 + 16 + 1)  # smallest valid
    with pytest.raises(TypeError):
        StreamingAEAD("not bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        StreamingAEAD(KEY, backend="no-such-backend")


# -- tampering ------------------------------------------------------------------
N_SEGS = 6
PT = rand(FIRST + (N_SEGS - 1) * PLAIN - 10)


def _tampered():
    sa = small()
    ct = seal(sa, PT, b"ad")
    segs = segments(ct, SEG)
    assert len(segs) == N_SEGS
    cases = {}
    for where, i in (("first", 0), ("middle", 2), ("last", N_SEGS - 1)):
        pos = (HL if i == 0 else 0) + 3
        s = bytearray(segs[i])
        s[pos] ^= 1
        cases[f"flip-data-{where}"] = (segs[:i] + [bytes(s)] + segs[i + 1:], i)
        s = bytearray(segs[i])
        s[-1] ^= 0x80
        cases[f"flip-tag-{where}"] = (segs[:i] + [bytes(s)] + segs[i + 1:], i)
    cases["truncate-at-boundary"] = (segs[:-1], N_SEGS - 2)
    cases["truncate-mid-last"] = (segs[:-1] + [segs[-1][:-1]], N_SEGS - 1)
    cases["truncate-mid-middle"] = (segs[:3] + [segs[3][:20]], 3)
    cases["truncate-to-header"] = ([segs[0][:HL]], 0)
    cases["drop-middle"] = (segs[:2] + segs[3:], 2)
    cases["swap-middle"] = (segs[:2] + [segs[3], segs[2]] + segs[4:], 2)
    cases["swap-last-two"] = (segs[:-2] + [segs[-1], segs[-2]], N_SEGS - 2)
    cases["extend-after-first"] = (segs[:1] + [segs[1]] + segs[1:], 2)
    cases["extend-copy-of-segment"] = (segs[:-1] + [segs[1], segs[-1]], N_SEGS - 1)
    cases["extend-bytes"] = (segs + [b"\x00" * 20], N_SEGS - 1)
    hdr = bytearray(segs[0])
    hdr[0] ^= 1
    cases["header-length-byte"] = ([bytes(hdr)] + segs[1:], 0)
    for name, off in (("header-salt", 1), ("header-prefix", 1 + DKS)):
        h = bytearray(segs[0])
        h[off] ^= 1
        cases[name] = ([bytes(h)] + segs[1:], 0)
    return sa, ct, {k: (b"".join(v), i) for k, (v, i) in cases.items()}


SA_T, CT_T, TAMPERED = _tampered()


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_tampered_stream_fails_at_first_bad_segment(name):
    bad, first_bad = TAMPERED[name]
    r = SA_T.open_decrypting(io.BytesIO(bad), b"ad")
    got = bytearray()
    with pytest.raises(aeskit.InvalidTag):
        while True:
            c = r.read(7)
            if not c:
                break
            got += c
    # only plaintext of segments before the first bad one came out, and all of it
    good = 0 if first_bad == 0 else FIRST + (first_bad - 1) * PLAIN
    assert bytes(got) == PT[:good]
    with pytest.raises(aeskit.InvalidTag):
        r.read(1)   # a failed reader stays failed
    for threads in (1, 2, 3):
        out = io.BytesIO()
        with pytest.raises(aeskit.InvalidTag) as e:
            SA_T.decrypt_file(io.BytesIO(bad), out, b"ad", threads=threads)
        assert PT.startswith(out.getvalue()) and len(out.getvalue()) <= good
        if first_bad > 0:   # the first bad segment is named, whichever thread opened it
            assert f"segment {first_bad} " in str(e.value), str(e.value)


@pytest.mark.parametrize("per", [1, 2, 3, 1 << 20])
def test_reader_runs(monkeypatch, per):
    """Long reads open whole segments in runs straight into the caller's buffer: any
    chunk size reads the plaintext, and a tampered stream gives only a prefix of the
    good segments' plaintext, then InvalidTag, and stays failed."""
    monkeypatch.setattr(fmt, "_RUN_BYTES", per * SEG)
    for size in (1, PLAIN - 1, 2 * PLAIN, 2 * PLAIN + 1, 3 * PLAIN + 5, 1 << 20):
        r = SA_T.open_decrypting(io.BytesIO(CT_T), b"ad")
        got = bytearray()
        buf = bytearray(size)
        while n := r.readinto(buf):
            got += buf[:n]
        assert bytes(got) == PT, size
    for name, (bad, first_bad) in sorted(TAMPERED.items()):
        good = 0 if first_bad == 0 else FIRST + (first_bad - 1) * PLAIN
        for size in (2 * PLAIN, 3 * PLAIN + 5, 1 << 20):
            r = SA_T.open_decrypting(io.BytesIO(bad), b"ad")
            got = bytearray()
            buf = bytearray(size)
            with pytest.raises(aeskit.InvalidTag):
                while n := r.readinto(buf):
                    got += buf[:n]
            assert PT.startswith(bytes(got)) and len(got) <= good, (name, size)
            with pytest.raises(aeskit.InvalidTag):
                r.readinto(buf)


def test_worker_threads_end_with_the_call():
    """The sealing threads are joined on success and on failure: none is left behind
    still holding (and then wiping) a buffer, and none outlives the call."""
    def workers():
        return [t for t in threading.enumerate() if t.name.startswith("aeskit-stream")]
    bad, first_bad = TAMPERED["flip-data-middle"]
    for threads in (2, 3, 4):
        with pytest.raises(aeskit.InvalidTag, match=f"segment {first_bad} "):
            SA_T.decrypt_file(io.BytesIO(bad), io.BytesIO(), b"ad", threads=threads)
        assert workers() == []
        out = io.BytesIO()
        SA_T.encrypt_file(io.BytesIO(PT), out, b"ad", threads=threads)
        assert workers() == []
        assert SA_T.open_decrypting(io.BytesIO(out.getvalue()), b"ad").read() == PT


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_tampered_stream_fails_on_random_access(name):
    bad, _first_bad = TAMPERED[name]
    r = SA_T.open_decrypting(io.BytesIO(bad), b"ad")
    with pytest.raises(aeskit.InvalidTag):
        r.seek(0)            # authenticates the last segment first
        data = r.read()      # and then every segment it touches
        assert data != PT


def test_truncation_caught_reading_from_the_middle():
    bad, _ = TAMPERED["truncate-at-boundary"]
    r = SA_T.open_decrypting(io.BytesIO(bad), b"ad")
    with pytest.raises(aeskit.InvalidTag):
        r.seek(FIRST + PLAIN)


def test_untampered_control():
    assert open_all(SA_T, CT_T, b"ad") == PT


@pytest.mark.parametrize("how", ["key", "aad"])
def test_wrong_key_or_aad(how):
    other = StreamingAEAD(bytes(32), segment_size=SEG, derived_key_size=DKS) if how == "key" \
        else SA_T
    aad = b"ad" if how == "key" else b"aD"
    with pytest.raises(aeskit.InvalidTag):
        other.open_decrypting(io.BytesIO(CT_T), aad).read()
    with pytest.raises(aeskit.InvalidTag):
        other.open_decrypting(io.BytesIO(CT_T), aad).size()
    with pytest.raises(aeskit.InvalidTag):
        other.decrypt_file(io.BytesIO(CT_T), io.BytesIO(), aad)


def test_failed_read_clears_plaintext_buffer():
    bad, _ = TAMPERED["flip-data-middle"]
    r = SA_T.open_decrypting(io.BytesIO(bad), b"ad")
    with pytest.raises(aeskit.InvalidTag):
        r.read()
    assert not any(r._buf)


# -- random access ------------------------------------------------------------------
def test_random_access_every_boundary():
    sa = small()
    n = FIRST + 7 * PLAIN + 11
    pt = rand(n, 3)
    ct = seal(sa, pt)
    r = sa.open_decrypting(io.BytesIO(ct))
    assert r.seekable() and r.size() == n
    starts = [0] + [FIRST + k * PLAIN for k in range(8)] + [n]
    for b in starts:
        for pos in (b - 1, b, b + 1):
            if pos < 0:
                continue
            for length in (1, 2, PLAIN, PLAIN + 2, 3 * PLAIN):
                assert r.seek(pos) == pos
                assert r.read(length) == pt[pos:pos + length]
                assert r.tell() == min(pos + length, max(pos, n))
    assert r.seek(-5, io.SEEK_END) == n - 5 and r.read() == pt[-5:]
    r.seek(10)
    assert r.seek(3, io.SEEK_CUR) == 13 and r.read(4) == pt[13:17]
    assert r.seek(n + 100) == n + 100 and r.read(5) == b""
    with pytest.raises(ValueError):
        r.seek(-1)


def test_seek_after_sequential_read_and_offset_base():
    """A stream that starts inside a file, read in order, then at random."""
    sa = small()
    pt = rand(300, 4)
    f = io.BytesIO(b"prefix-bytes" + seal(sa, pt))
    f.seek(12)
    r = sa.open_decrypting(f)
    assert r.read(100) == pt[:100]
    assert r.tell() == 100
    r.seek(50)
    assert r.read(60) == pt[50:110]
    assert r.read() == pt[110:]


def test_not_seekable_source():
    class Pipe(io.RawIOBase):
        def __init__(self, data):
            self.b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, buf):
            return self.b.readinto(memoryview(buf)[:5])   # short reads

    sa = small()
    pt = rand(200, 5)
    r = sa.open_decrypting(Pipe(seal(sa, pt)))
    assert not r.seekable()
    assert r.read() == pt
    with pytest.raises(io.UnsupportedOperation):
        sa.open_decrypting(Pipe(seal(sa, pt))).seek(3)
    out = io.BytesIO()
    sa.decrypt_file(Pipe(seal(sa, pt)), out, threads=2)
    assert out.getvalue() == pt


class VirtualStream(io.RawIOBase):
    """A seekable ciphertext of more than 4 GiB made on demand, segment by segment.

    Plaintext byte p is ((p * 0x9E3779B1) >> 13) & 0xFF; segments are sealed with
    pyca/cryptography here, independently of aeskit's writer. Nothing is stored.
    """

    def __init__(self, ikm, size, seg, dks):
        self.size_pt, self.seg, self.hl = size, seg, 1 + dks + 7
        self.salt, self.prefix = b"\x11" * dks, b"\x22" * 7
        self.gcm = RefGCM(derive(ikm, self.salt, b"", dks, "sha256"))
        self.first, self.plain = seg - self.hl - 16, seg - 16
        self.nseg = 1 if size <= self.first else 1 + -(-(size - self.first) // self.plain)
        self.total = self.hl + size + 16 * self.nseg
        self.pos = 0
        self.cache = {}

    @staticmethod
    def plaintext(start, end):
        x = np.arange(start, end, dtype=np.uint64)
        return (((x * np.uint64(0x9E3779B1)) >> np.uint64(13)) & np.uint64(0xFF)) \
            .astype(np.uint8).tobytes()

    def segment(self, i):
        if i not in self.cache:
            start = 0 if i == 0 else self.first + (i - 1) * self.plain
            end = min(self.size_pt, self.first if i == 0 else start + self.plain)
            last = i == self.nseg - 1
            self.cache[i] = self.gcm.encrypt(nonce(self.prefix, i, last),
                                             self.plaintext(start, end), None)
        return self.cache[i]

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else (self.pos + off if whence == 1 else self.total + off)
        return self.pos

    def tell(self):
        return self.pos

    def readinto(self, buf):
        mv = memoryview(buf)
        done = 0
        while done < len(mv) and self.pos < self.total:
            if self.pos < self.hl:
                chunk = (bytes([self.hl]) + self.salt + self.prefix)[self.pos:]
            else:
                i = self.pos // self.seg
                off = self.pos - i * self.seg - (self.hl if i == 0 else 0)
                chunk = self.segment(i)[off:]
            k = min(len(chunk), len(mv) - done)
            mv[done:done + k] = chunk[:k]
            done += k
            self.pos += k
        return done


def test_random_access_past_4gib():
    """Plaintext and ciphertext offsets past 2**32 (a 5 GiB stream that is never stored)."""
    seg = 1 << 16
    size = 5 * (1 << 30) + 12345
    src = VirtualStream(KEY, size, seg, 32)
    sa = StreamingAEAD(KEY, segment_size=seg)
    r = sa.open_decrypting(src)
    assert r.size() == size
    first, plain = src.first, src.plain
    # the segment that holds plaintext byte 2**32, the one whose ciphertext crosses 2**32,
    # a boundary past 2**32, and the end
    k = (2**32 - first) // plain + 1
    ct_cross = 2**32 // seg
    for pos in (2**32 - 3, 2**32, 2**32 + 1, first + (k - 1) * plain - 2,
                first + (ct_cross - 1) * plain - 1, first + ct_cross * plain - 5,
                size - 70000, size - 3):
        r.seek(pos)
        assert r.read(100) == VirtualStream.plaintext(pos, min(pos + 100, size)), pos
    r.seek(size)
    assert r.read(1) == b""


# -- the 2**32 segment limit (the counter starts near it through the test hook) ------
def test_segment_limit_writer():
    sa = small()
    sa._first_segment = 2**32 - 2           # two segments left: 2**32-2 and 2**32-1
    bio = io.BytesIO()
    w = sa.open_encrypting(bio)
    w.write(bytes(FIRST + PLAIN))              # fills both; nothing sealed past the limit
    written = len(bio.getvalue())
    with pytest.raises(aeskit.LimitExceeded):
        w.write(b"x")
    assert len(bio.getvalue()) == written      # the segment before the limit is not written
    w.close()                                  # and a failed writer never seals
    assert len(bio.getvalue()) == written
    # up to the limit it works, and decrypts with the same hook
    bio = io.BytesIO()
    with sa.open_encrypting(bio) as w:
        w.write(rand(FIRST + PLAIN))
    assert sa.open_decrypting(io.BytesIO(bio.getvalue())).read() == rand(FIRST + PLAIN)
    r = sa.open_decrypting(io.BytesIO(bio.getvalue()))
    r.seek(FIRST + 3)
    assert r.read(5) == rand(FIRST + PLAIN)[FIRST + 3:FIRST + 8]


@pytest.mark.parametrize("step", [1, PLAIN, 10**6])
def test_segment_limit_writer_runs(monkeypatch, step):
    """Near the limit, a long write (the writer's runs) seals exactly what writes of
    any size seal, then refuses the segment past the limit."""
    monkeypatch.setattr(fmt.os, "urandom", lambda n: b"\x33" * n)
    sa = small()
    sa._first_segment = 2**32 - 5           # five segments: 0 .. 4 numbered up to 2**32-1
    pt = rand(FIRST + 5 * PLAIN)
    bio = io.BytesIO()
    w = sa.open_encrypting(bio)
    with pytest.raises(aeskit.LimitExceeded):
        for i in range(0, len(pt), step):
            w.write(pt[i:i + step])
    w.close()
    # segments 0..3 sealed as not the last, the 5th (2**32 - 1) held back: it would need
    # a 6th after it
    assert len(bio.getvalue()) == HL + FIRST + 16 + 3 * SEG
    ok = io.BytesIO()
    with sa.open_encrypting(ok) as w2:
        w2.write(pt[:FIRST + 4 * PLAIN])
    assert ok.getvalue().startswith(bio.getvalue())


def test_segment_limit_encrypt_file(tmp_path):
    sa = small()
    sa._first_segment = 2**32 - 2
    dst = tmp_path / "out"
    with pytest.raises(aeskit.LimitExceeded):
        sa.encrypt_file(io.BytesIO(bytes(FIRST + PLAIN + 1)), dst, threads=2)
    assert list(tmp_path.iterdir()) == []
    out = io.BytesIO()
    sa.encrypt_file(io.BytesIO(bytes(FIRST + PLAIN)), out)
    assert sa.open_decrypting(io.BytesIO(out.getvalue())).read() == bytes(FIRST + PLAIN)


# -- aborted writes -------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, FIRST, FIRST + PLAIN, FIRST + PLAIN + 5])
def test_exception_in_with_leaves_no_valid_stream(n):
    sa = small()
    bio = io.BytesIO()
    with pytest.raises(RuntimeError), sa.open_encrypting(bio) as w:
        w.write(rand(n))
        raise RuntimeError("boom")
    with pytest.raises(aeskit.InvalidTag):
        open_all(sa, bio.getvalue())


def test_dropped_writer_does_not_seal():
    sa = small()
    bio = io.BytesIO()
    w = sa.open_encrypting(bio)
    w.write(rand(FIRST + PLAIN))
    del w
    with pytest.raises(aeskit.InvalidTag):
        open_all(sa, bio.getvalue())


def test_writer_misuse():
    sa = small()
    w = sa.open_encrypting(io.BytesIO())
    w.close()
    with pytest.raises(ValueError):
        w.write(b"x")
    w.close()   # closing twice is fine


# -- whole files: no partial output -----------------------------------------------------
class FailingSource(io.RawIOBase):
    def __init__(self, data, fail_at, exc):
        self.b, self.fail_at, self.exc = io.BytesIO(data), fail_at, exc

    def readable(self):
        return True

    def readinto(self, buf):
        if self.b.tell() >= self.fail_at:
            raise self.exc
        return self.b.readinto(buf)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("exc", [OSError(errno.EIO, "I/O error"), KeyboardInterrupt()])
def test_encrypt_file_failure_leaves_nothing(tmp_path, threads, exc):
    sa = small()
    dst = tmp_path / "out.enc"
    with pytest.raises(type(exc)):
        sa.encrypt_file(FailingSource(rand(2000), 500, exc), dst, threads=threads)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("run_bytes", [1, fmt._RUN_BYTES])
def test_encrypt_file_disk_full_leaves_nothing(tmp_path, monkeypatch, run_bytes):
    """The disk fills after the header and, with one segment a run, two segments; with
    the default runs (all of it in one), at the first run."""
    monkeypatch.setattr(fmt, "_RUN_BYTES", run_bytes)
    sa = small()
    calls = []

    def full(f, mv):
        calls.append(len(mv))
        if len(calls) > (3 if run_bytes == 1 else 1):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(f, mv)

    real = files._write_all
    monkeypatch.setattr(files, "_write_all", full)
    (tmp_path / "out.enc").write_bytes(b"old")
    with pytest.raises(OSError, match="No space"):
        sa.encrypt_file(io.BytesIO(rand(2000)), tmp_path / "out.enc", threads=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.enc"]
    assert (tmp_path / "out.enc").read_bytes() == b"old"


@pytest.mark.parametrize("threads", [1, 2])
def test_decrypt_file_bad_segment_leaves_nothing(tmp_path, threads):
    bad, _ = TAMPERED["flip-data-last"]
    src = tmp_path / "in.enc"
    src.write_bytes(bad)
    with pytest.raises(aeskit.InvalidTag):
        SA_T.decrypt_file(src, tmp_path / "out", b"ad", threads=threads)
    assert [p.name for p in tmp_path.iterdir()] == ["in.enc"]


def test_file_paths_round_trip_and_mode(tmp_path):
    sa = small()
    pt = rand(5000, 9)
    (tmp_path / "a").write_bytes(pt)
    assert sa.encrypt_file(tmp_path / "a", tmp_path / "b", b"x") == len(pt)
    assert stat.S_IMODE(os.stat(tmp_path / "b").st_mode) == 0o600
    assert sa.decrypt_file(str(tmp_path / "b"), os.fsencode(tmp_path / "c"), b"x") == len(pt)
    assert (tmp_path / "c").read_bytes() == pt
    with pytest.raises(ValueError, match="threads"):
        sa.encrypt_file(tmp_path / "a", tmp_path / "d", threads=0)


def test_progress_counts_bytes():
    sa = small()
    pt = rand(1000)
    seen = []
    out = io.BytesIO()
    sa.encrypt_file(io.BytesIO(pt), out, progress=seen.append, threads=2)
    assert sum(seen) == len(out.getvalue()) - HL
    seen.clear()
    sa.decrypt_file(io.BytesIO(out.getvalue()), io.BytesIO(), progress=seen.append)
    assert sum(seen) == len(pt)


# -- keysets ---------------------------------------------------------------------------
def _entry(sa, **over):
    e = json.loads(sa.to_keyset())["key"][0]
    e.update(over)
    return e


def test_keyset_round_trip_and_layout():
    sa = StreamingAEAD(KEY, segment_size=4096, derived_key_size=16, hkdf_hash="sha512")
    ks = json.loads(sa.to_keyset())
    (e,) = ks["key"]
    assert ks["primaryKeyId"] == e["keyId"] and 0 < e["keyId"] < 2**31
    assert e["status"] == "ENABLED" and e["outputPrefixType"] == "RAW"
    assert e["keyData"]["typeUrl"].endswith("google.crypto.tink.AesGcmHkdfStreamingKey")
    raw = base64.b64decode(e["keyData"]["value"])
    # params {1: 4096, 2: 16, 3: SHA512 = 4}, key_value = KEY
    assert raw == bytes.fromhex("1207088020101018041a20") + KEY
    back = StreamingAEAD.from_keyset(sa.to_keyset())
    assert (back.segment_size, back.derived_key_size, back.hkdf_hash) == (4096, 16, "sha512")
    assert open_all(back, seal(sa, b"hello")) == b"hello"


def test_keyset_several_keys_decrypt_with_any_enabled():
    a, b = small(), StreamingAEAD(bytes(32), segment_size=100, derived_key_size=32)
    disabled = _entry(StreamingAEAD(bytes([7]) * 32), status="DISABLED")
    ks = {"primaryKeyId": _entry(a)["keyId"], "key": [_entry(a), _entry(b), disabled]}
    both = StreamingAEAD.from_keyset(json.dumps(ks))
    pt = rand(777)
    for sa in (a, b):
        ct = seal(sa, pt)
        assert open_all(both, ct) == pt
        r = both.open_decrypting(io.BytesIO(ct))
        r.seek(300)
        assert r.read(10) == pt[300:310]
        out = io.BytesIO()
        both.decrypt_file(io.BytesIO(ct), out, threads=2)
        assert out.getvalue() == pt
    assert both.segment_size == SEG   # the primary encrypts
    assert open_all(a, seal(both, pt)) == pt
    # the disabled key is kept, never used
    only_disabled = StreamingAEAD(bytes([7]) * 32)
    with pytest.raises(aeskit.InvalidTag):
        open_all(both, seal(only_disabled, pt))
    assert any(e["status"] == "DISABLED" for e in json.loads(both.to_keyset())["key"])


@pytest.mark.parametrize("change, msg", [
    ({"status": "DISABLED"}, "primary key .* is DISABLED"),
    ({"status": "DESTROYED"}, "primary key .* is DESTROYED"),
    ({"outputPrefixType": "TINK"}, "output prefix TINK"),
    ({"keyData": {"typeUrl": "type.googleapis.com/google.crypto.tink.AesGcmKey",
                   "value": "", "keyMaterialType": "SYMMETRIC"}}, "not an AesGcmHkdfStreamingKey"),
])
def test_keyset_errors(change, msg):
    e = _entry(small(), **change)
    with pytest.raises(ValueError, match=msg):
        StreamingAEAD.from_keyset(json.dumps({"primaryKeyId": e["keyId"], "key": [e]}))


def test_keyset_malformed():
    with pytest.raises(ValueError, match="not a Tink JSON keyset"):
        StreamingAEAD.from_keyset("{}")
    e = _entry(small())
    with pytest.raises(ValueError, match="no enabled key has the primary id"):
        StreamingAEAD.from_keyset(json.dumps({"primaryKeyId": 1, "key": [e]}))
    e["keyData"]["value"] = base64.b64encode(b"\x12\x05\x08").decode()
    with pytest.raises(ValueError, match="bad key data"):
        StreamingAEAD.from_keyset(json.dumps({"primaryKeyId": e["keyId"], "key": [e]}))
