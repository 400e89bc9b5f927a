"""AES-CCM (SP 800-38C, RFC 3610): known answers (SP 800-38C Appendix C Examples 1-4,
RFC 3610 packet vectors #1-#24) on every backend through every entry point; a Python model
of the formatting (B0, the AAD length's encoding) checked against them and against
pyca/cryptography, then against the C formatting at lengths no buffer can have; the AAD
length's encodings around 2^16 - 2^8 with real AAD; the data limit 2^(8q) - 1 (q = 15 -
nonce length) for nonces of 10 to 13 bytes, refused before any work and accepted at the
limit exactly; messages around the mode's chunks. The shared AEAD suites (aead_helpers.AEADS)
cover the rest: API, tamper on every bit, differential, boundaries."""

import json
import os
import subprocess
import sys
import textwrap

import aeskit
import pytest
from aeskit import _aeskit
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from aead_helpers import (
    AEAD,
    KEY_SIZES,
    aead_vectors,
    check_every_path,
    new_aead,
    rand,
    ref_libs,
    ref_open,
    ref_seal,
    vector_id,
)

CCM = AEAD["CCM"]
VECTORS = aead_vectors("ccm.txt")
CHUNK = _aeskit.mode_constants("CCM")["chunk_blocks"]


@pytest.mark.known_answer("CCM")
def test_vector_file_is_complete():
    sections = [v["section"] for v in VECTORS]
    assert len(sections) == len(set(sections)) == 28
    assert [s for s in sections if s.startswith("SP 800-38C")] == [
        f"SP 800-38C Example {i} (C.{i})" for i in range(1, 5)]
    assert [s for s in sections if s.startswith("RFC 3610")] == [
        f"RFC 3610 Packet Vector #{i}" for i in range(1, 25)]
    # What they cover: nonces of 7, 8, 12 and 13 bytes, tags of 4 to 14, and Example 4's
    # 2^16 bytes of AAD (past 2^16 - 2^8: the 6-byte length encoding).
    assert {len(v["nonce"]) for v in VECTORS} == {7, 8, 12, 13}
    assert {len(v["tag"]) for v in VECTORS} == {4, 6, 8, 10, 14}
    assert len(VECTORS[3]["aad"]) == 2**16 and VECTORS[3]["aad_repeat"] == 256
    for v in VECTORS:
        assert len(v["ciphertext"]) == len(v["plaintext"])


# ---------------------------------------------------------------- a model of the formatting

def b0_model(nonce, tag_length, data_len, has_aad):
    """SP 800-38C A.2.1: flags (Adata, (t-2)/2, q-1) || N || Q in q = 15 - len(N) bytes."""
    q = 15 - len(nonce)
    flags = (0x40 if has_aad else 0) | (tag_length - 2) // 2 << 3 | (q - 1)
    return bytes([flags]) + bytes(nonce) + data_len.to_bytes(q, "big")


def aad_prefix_model(a):
    """SP 800-38C A.2.2: the encoding of the AAD's length a that precedes it."""
    if a == 0:
        return b""
    if a < 2**16 - 2**8:
        return a.to_bytes(2, "big")
    if a < 2**32:
        return b"\xff\xfe" + a.to_bytes(4, "big")
    return b"\xff\xff" + a.to_bytes(8, "big")


def _ecb(key, data):
    enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()
    return enc.update(bytes(data)) + enc.finalize()


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def ccm_model(key, nonce, aad, pt, t):
    """CCM from the formatting model and single AES blocks (SP 800-38C 6.1)."""
    def pad(b):
        return b + bytes(-len(b) % 16)
    blocks = b0_model(nonce, t, len(pt), len(aad) > 0) + pad(aad_prefix_model(len(aad)) + aad)
    blocks += pad(pt)
    mac = bytes(16)
    for i in range(0, len(blocks), 16):
        mac = _ecb(key, _xor(mac, blocks[i:i + 16]))
    q = 15 - len(nonce)
    ctr = [bytes([q - 1]) + bytes(nonce) + i.to_bytes(q, "big")
           for i in range((len(pt) + 15) // 16 + 1)]
    ks = _ecb(key, b"".join(ctr))
    return _xor(pt, ks[16:]) + _xor(mac, ks[:16])[:t]


@pytest.mark.known_answer("CCM")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_vectors_agree_with_references_and_model(v):
    """The stored hex is what pyca/cryptography, pycryptodome and the model compute."""
    t = len(v["tag"])
    sealed = v["ciphertext"] + v["tag"]
    libs = ref_libs(CCM, len(v["nonce"]), t)
    assert libs == ["cryptography", "pycryptodome"]
    for lib in libs:
        assert ref_seal(CCM, v["key"], v["nonce"], v["plaintext"], v["aad"], t,
                        lib=lib) == sealed, lib
        assert ref_open(CCM, v["key"], v["nonce"], sealed, v["aad"], t, lib=lib) == v["plaintext"]
    assert ccm_model(v["key"], v["nonce"], v["aad"], v["plaintext"], t) == sealed


@pytest.mark.known_answer("CCM")
@pytest.mark.parametrize("v", VECTORS, ids=vector_id)
def test_kat(v, backend):
    t = len(v["tag"])
    obj = new_aead(CCM, v["key"], tag_length=t, backend=backend)
    assert obj.backend == backend and obj.tag_length == t
    assert aeskit.AESCCM(v["key"], t, backend=backend).tag_length == t  # pyca's positional form
    check_every_path(obj, CCM, v["nonce"], v["aad"], v["plaintext"], v["ciphertext"] + v["tag"])


# ---------------------------------------------------------------- formatting at any length

def test_max_data_by_nonce_length():
    """max_data_for: 2^(8q) - 1 bytes for q = 15 - nonce length, 2^64 - 1 for 7 bytes."""
    for n in range(7, 14):
        assert _aeskit._aead_max_data("CCM", n) == 2**(8 * (15 - n)) - 1, n
    for n in (6, 14):
        with pytest.raises(ValueError):
            _aeskit._aead_max_data("CCM", n)


def _lengths_for(q):
    """Data lengths that fill each of the q bytes of the length field, up to its top."""
    top = 2**(8 * q) - 1
    return sorted(x for x in {0, 1, 0xFF, 0x100, 0xFFFF, 0x10000, top, top - 1, top >> 1,
                              top >> 8} | {2**k + d for k in (16, 24, 32, 40, 48, 56)
                                          for d in (-1, 0)} if x <= top)


AAD_LENGTHS = (1, 0xFEFF, 0xFF00, 0xFF01, 2**32 - 1, 2**32, 2**32 + 1, 2**63, 2**64 - 1)


@pytest.mark.parametrize("n", range(7, 14))
def test_header_formatting(n):
    """B0 and the AAD length's encoding from the C core equal the model at every length its
    length field holds (shorter nonces' limits, up to 2^64 - 1, are beyond any buffer), and
    the tag length and Adata are in the flags; past the field a length is refused."""
    nonce = rand(n, n)
    q = 15 - n
    for t in CCM.tag_lengths:
        for data_len in _lengths_for(q):
            got = _aeskit._ccm_header(nonce, t, data_len, 0)
            assert got == b0_model(nonce, t, data_len, False), (t, data_len)
            for a in AAD_LENGTHS:
                got = _aeskit._ccm_header(nonce, t, data_len, a)
                assert got == b0_model(nonce, t, data_len, True) + aad_prefix_model(a), a
    if q < 8:
        with pytest.raises(ValueError):
            _aeskit._ccm_header(nonce, 16, 2**(8 * q), 0)


def test_aad_prefix_model_boundaries():
    """The model's encodings switch where SP 800-38C A.2.2 says (0xff00 = 2^16 - 2^8)."""
    assert aad_prefix_model(0xFEFF) == b"\xfe\xff"
    assert aad_prefix_model(0xFF00) == b"\xff\xfe\x00\x00\xff\x00"
    assert aad_prefix_model(2**32 - 1) == b"\xff\xfe\xff\xff\xff\xff"
    assert aad_prefix_model(2**32) == b"\xff\xff" + bytes(3) + b"\x01" + bytes(4)


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_aad_length_encoding_switch(backend, ks):
    """Real AAD at 2^16 - 2^8 - 1 (the last 2-byte encoding) and 2^16 - 2^8 (the first 6-byte
    one) and either side, against pyca/cryptography and the model: the first AAD block takes
    14 bytes of AAD after a 2-byte encoding and 10 after a 6-byte one."""
    key, nonce = rand(ks, ks), rand(ks + 1, 11)
    pt = rand(3, 37)
    aad_all = rand(4, 0xFF02)
    obj = new_aead(CCM, key, tag_length=10, backend=backend)
    for na in (0xFEFE, 0xFEFF, 0xFF00, 0xFF01):
        aad = aad_all[:na]
        sealed = ref_seal(CCM, key, nonce, pt, aad, 10)
        if backend == "portable" and ks == 16:
            assert sealed == ccm_model(key, nonce, aad, pt, 10)
        assert obj.encrypt(nonce, pt, aad) == sealed, na
        assert obj.decrypt(nonce, sealed, aad) == pt, na


# ---------------------------------------------------------------- the mode's own boundaries

@pytest.mark.parametrize("ks", KEY_SIZES)
def test_around_chunks(backend, ks):
    """Messages around 1 and 2 of modes/ccm.c's chunks (the MAC and CTR passes alternate per
    chunk), sealed and opened in place, against pyca/cryptography; a bad tag zeroes the whole
    buffer."""
    key, nonce, aad = rand(ks, ks), rand(ks + 2, 13), rand(5, 19)
    obj = new_aead(CCM, key, backend=backend)
    data = rand(6, 16 * 2 * CHUNK + 17)
    for c in (CHUNK, 2 * CHUNK):
        for d in (-17, -16, -1, 0, 1, 15, 16, 17):
            n = 16 * c + d
            pt = data[:n]
            sealed = ref_seal(CCM, key, nonce, pt, aad)
            buf = bytearray(pt) + bytearray(16)
            assert obj.encrypt_into(nonce, memoryview(buf)[:n], aad, buf) == n + 16
            assert buf == sealed, n
            assert obj.decrypt_into(nonce, buf, aad, buf) == n
            assert buf[:n] == pt, n
    bad = bytearray(sealed)
    bad[5] ^= 1
    with pytest.raises(aeskit.InvalidTag):
        obj.decrypt_into(nonce, bad, aad, bad)
    assert not any(bad[:len(pt)])


@pytest.mark.parametrize("ks", KEY_SIZES)
def test_at_the_limit_with_a_13_byte_nonce(backend, ks):
    """A 13-byte nonce (q = 2) takes 2^16 - 1 bytes and no more: the whole message, the last
    counter block 0xffff's keystream cut to 15 bytes, against pyca/cryptography."""
    key, nonce = rand(ks, ks), rand(ks + 3, 13)
    obj = new_aead(CCM, key, tag_length=8, backend=backend)
    pt = rand(7, 2**16 - 1)
    sealed = ref_seal(CCM, key, nonce, pt, b"at the limit", 8)
    assert obj.encrypt(nonce, pt, b"at the limit") == sealed
    assert obj.decrypt(nonce, sealed, b"at the limit") == pt
    with pytest.raises(aeskit.LimitExceeded, match=r"2\*\*16 - 1"):
        obj.encrypt(nonce, pt + b"\0", b"")
    with pytest.raises(aeskit.LimitExceeded):
        obj.decrypt(nonce, sealed[:-8] + b"\0" + sealed[-8:], b"at the limit")
    buf = bytearray(2**16 + 8)
    with pytest.raises(aeskit.LimitExceeded):
        obj.encrypt_into(nonce, pt + b"\0", None, buf)
    assert not any(buf)


# ---------------------------------------------------------------- the limit, past any memory

# A child process per backend: for nonces of 10 to 13 bytes, L = 2^(8(15 - n)) - 1 bytes,
# every entry point refuses L + 1 with LimitExceeded before it touches the data, whose
# buffers are 1 MiB of real zeros and then an inaccessible reservation (touching it kills
# the child), up to 2^40 bytes. With an argument, one at-limit case: accepted, so the work
# starts and faults on the reservation.
LIMIT_SCRIPT = textwrap.dedent(r'''
    import ctypes, json, mmap, sys
    import aeskit

    backend = sys.argv[1]
    PROT_NONE, PROT_RW = 0, mmap.PROT_READ | mmap.PROT_WRITE
    NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    maps = []

    def claimed(size, real=1 << 20):
        reserve = size + real
        addr = libc.mmap(None, reserve, PROT_NONE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | NORESERVE, -1, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        assert libc.mprotect(addr, real, PROT_RW) == 0
        maps.append((addr, reserve))
        return memoryview((ctypes.c_ubyte * size).from_address(addr)).cast("B")

    def release():
        while maps:
            libc.munmap(*maps.pop())

    c16 = aeskit.AESCCM(bytes(16), backend=backend)
    c4 = aeskit.AESCCM(bytes(16), 4, backend=backend)

    def cases(n):
        L, nonce = 2**(8 * (15 - n)) - 1, bytes(n)
        return {
            f"n{n} encrypt L+1": lambda: (c16.encrypt, nonce, claimed(L + 1), None),
            f"n{n} encrypt L+1 with AAD": lambda: (c16.encrypt, nonce, claimed(L + 1), b"x"),
            f"n{n} decrypt L+1 + tag": lambda: (c16.decrypt, nonce, claimed(L + 17), None),
            f"n{n} decrypt L+1 + 4-byte tag":
                lambda: (c4.decrypt, nonce, claimed(L + 5), None),
            f"n{n} encrypt_into L+1":
                lambda: (c16.encrypt_into, nonce, claimed(L + 1), None, claimed(L + 17)),
            f"n{n} decrypt_into L+1":
                lambda: (c16.decrypt_into, nonce, claimed(L + 17), None, claimed(L + 1)),
            f"n{n} encrypt: read-only mapping of L+1":
                lambda: (c16.encrypt, nonce, mmap.mmap(
                    -1, L + 1, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | NORESERVE,
                    prot=mmap.PROT_READ), None),
        }

    def at_limit(n, direction):
        L, nonce = 2**(8 * (15 - n)) - 1, bytes(n)
        if direction == "encrypt":
            return (c16.encrypt_into, nonce, claimed(L), None, claimed(L + 16))
        return (c16.decrypt_into, nonce, claimed(L + 16), None, claimed(L))

    if len(sys.argv) > 2:
        n, direction = int(sys.argv[2]), sys.argv[3]
        fn, *args = at_limit(n, direction)
        print("START", flush=True)
        fn(*args)
        print("RETURNED", flush=True)
        sys.exit(0)
    for n in (10, 11, 12, 13):
        for name, build in cases(n).items():
            try:
                fn, *args = build()
            except BaseException as e:  # noqa: BLE001
                print("RESULT " + json.dumps([name, "HARNESS " + repr(e)]), flush=True)
                continue
            print("START " + json.dumps(name), flush=True)
            try:
                fn(*args)
                result = "returned without an error"
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                result = type(e).__name__ + ("(OverflowError, ValueError)" if isinstance(
                    e, OverflowError) and isinstance(e, ValueError) else "") + ": " + str(e)
            print("RESULT " + json.dumps([name, result]), flush=True)
            args.clear()
            release()
''')
LIMIT_NONCES = (10, 11, 12, 13)
LIMIT_CASES = [f"n{n} {c}" for n in LIMIT_NONCES for c in (
    "encrypt L+1", "encrypt L+1 with AAD", "decrypt L+1 + tag", "decrypt L+1 + 4-byte tag",
    "encrypt_into L+1", "decrypt_into L+1", "encrypt: read-only mapping of L+1")]
_limit_runs = {}


def _limit_results(backend):
    if backend not in _limit_runs:
        env = dict(os.environ, AESKIT_BACKEND=backend)
        p = subprocess.run([sys.executable, "-c", LIMIT_SCRIPT, backend], env=env,
                           capture_output=True, text=True, timeout=120, check=False)
        results, started = {}, None
        for line in p.stdout.splitlines():
            if line.startswith("START "):
                started = json.loads(line[6:])
            elif line.startswith("RESULT "):
                k, v = json.loads(line[7:])
                results[k] = v
                started = None
        _limit_runs[backend] = (results, started, p.returncode, p.stderr[-2000:])
    return _limit_runs[backend]


def test_limit_cases_listed():
    assert len(LIMIT_CASES) == 28


@pytest.mark.parametrize("case", LIMIT_CASES)
def test_limits(backend, case):
    """L + 1 bytes (L = 2^(8(15 - n)) - 1: 2^40 - 1 for a 10-byte nonce, 2^32 - 1, 2^24 - 1,
    2^16 - 1 for 13) are refused with LimitExceeded before the data is touched, through every
    entry point, for any tag length, with or without AAD."""
    results, died_in, rc, err = _limit_results(backend)
    if case not in results:
        if died_in == case:
            pytest.fail(f"the child died in this case (rc={rc}): the data was touched before "
                        f"the limit check\n{err}")
        pytest.fail(f"not reached: the child died in {died_in!r} (rc={rc})\n{err}")
    n, method = int(case[1:3]), case.split()[1].rstrip(":")
    assert results[case].startswith(f"LimitExceeded(OverflowError, ValueError): AESCCM.{method}: "
                                    f"data is limited to 2**{8 * (15 - n)} - 1 bytes"), \
        results[case]


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("n", [10, 11, 12])
def test_limits_are_exact(backend, n, direction):
    """At exactly L bytes the call is accepted and the work starts, which in the child
    faults on the reservation past the first MiB: the limit is not set too low. (13 bytes'
    limit is met with real data above.)"""
    env = dict(os.environ, AESKIT_BACKEND=backend)
    p = subprocess.run([sys.executable, "-c", LIMIT_SCRIPT, backend, str(n), direction],
                       env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "START" in p.stdout and "RETURNED" not in p.stdout, p.stdout + p.stderr
    faults = (-11, -7)  # SIGSEGV / SIGBUS
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        faults += (-6,)  # ASan reports the fault, then aborts
    assert p.returncode in faults, (p.returncode, p.stderr[-2000:])
