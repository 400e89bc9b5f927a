"""aeskit.compat.cryptography refuses an output buffer over its input as pyca 51 does.

pyca/cryptography 51 raises ``ValueError("data and buf must not overlap")`` when the
``buf`` of ``update_into`` (Cipher contexts) or of an AEAD's ``encrypt_into`` /
``decrypt_into`` shares a byte with ``data``: exactly (in place), partly from either
side, or one inside the other. Adjacent buffers are fine, so are empty ones, and so is
a nonce or associated data under the output. Every entry point that takes an output
buffer is called in both libraries with ``data`` and ``buf`` as memoryview slices of one
bytearray (each library gets its own copy of the same bytes), ``buf`` slid across every
position around ``data``; the outcomes (result or exception type and message) must be
equal, and so must the whole bytearray afterwards and what the context does next.
"""

import cryptography.exceptions
import numpy as np
import pytest
from compat_helpers import outcome
from cryptography.hazmat.decrepit.ciphers import modes as pyca_decrepit
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher
from cryptography.hazmat.primitives.ciphers import aead as pyca_aead
from cryptography.hazmat.primitives.ciphers import algorithms as pyca_algs
from cryptography.hazmat.primitives.ciphers import modes as pyca_modes

from aeskit.compat import cryptography as compat

OVERLAP = (ValueError, "data and buf must not overlap")
ARENA = 176
AT = 64  # where data starts in the arena; buf slides from 0 to the end

KEY16 = bytes(range(1, 17))
NONCES = {"AESGCM": 12, "AESOCB3": 12, "AESGCMSIV": 12, "AESCCM": 13}


def arena_bytes():
    return bytes((37 * i + 11) & 255 for i in range(ARENA))


def placements(dn, bn):
    """Every start of a bn-byte buf in the arena around data at [AT, AT + dn), each
    with how it lies against data."""
    for b0 in range(0, ARENA - bn + 1):
        if dn == 0 or bn == 0 or b0 + bn <= AT or b0 >= AT + dn:
            how = "apart" if b0 + bn not in (AT,) and b0 != AT + dn else "adjacent"
        elif b0 == AT and bn == dn:
            how = "exact"
        else:
            how = "partial"
        yield b0, how


def _kind(result):
    return "overlap" if result == OVERLAP else result[0]


def run_both(call, dn, bn, fill=None, kind=_kind):
    """call(lib, data, buf) in each library over its own arena (fill(arena) first, if
    given) for every placement; the outcomes and arenas must be equal. Returns the
    kinds of outcome (kind(outcome)) seen for each kind of placement, for the test to
    check the rule and that it saw each placement."""
    seen = {}
    for b0, how in placements(dn, bn):
        results = []
        for lib in ("pyca", "compat"):
            arena = bytearray(arena_bytes())
            if fill is not None:
                fill(arena)
            m = memoryview(arena)
            got = outcome(call, lib, m[AT:AT + dn], m[b0:b0 + bn])
            results.append((got, bytes(arena)))
        (a, arena_a), (b, arena_b) = results
        assert a == b, (dn, bn, b0, how)
        assert arena_a == arena_b, (dn, bn, b0, how)
        seen.setdefault(how, set()).add(kind(a))
    return seen


def assert_pyca_51_rule(seen):
    """Exact and partial overlaps refused; adjacent and apart buffers not for overlap."""
    for how in ("exact", "partial"):
        if how in seen:
            assert seen[how] == {"overlap"}, seen
    for how in ("adjacent", "apart"):
        assert "overlap" not in seen.get(how, set()), seen
    assert "partial" in seen and "adjacent" in seen and "apart" in seen, seen


# ---------------------------------------------------------------- the AEADs


def aead(lib, name, key=KEY16):
    return getattr(pyca_aead if lib == "pyca" else compat, name)(key)


@pytest.mark.parametrize("name", list(NONCES))
@pytest.mark.parametrize("dn", [0, 1, 16, 37])
def test_aead_encrypt_into(name, dn):
    nonce = bytes(range(NONCES[name]))

    def call(lib, data, buf):
        return aead(lib, name).encrypt_into(nonce, data, b"ad", buf)

    seen = run_both(call, dn, dn + 16)
    if dn:
        assert_pyca_51_rule(seen)
        assert seen["apart"] == {"ok"}
    else:
        assert set().union(*seen.values()) == {"ok"}


@pytest.mark.parametrize("name", list(NONCES))
@pytest.mark.parametrize("dn", [0, 1, 16, 37])
def test_aead_decrypt_into(name, dn):
    """data is a real ciphertext, so a buffer apart from it decrypts."""
    nonce = bytes(range(NONCES[name]))
    sealed = aead("pyca", name).encrypt(nonce, bytes(range(dn)), b"ad")

    def fill(arena):
        arena[AT:AT + dn + 16] = sealed

    def call(lib, data, buf):
        return aead(lib, name).decrypt_into(nonce, data, b"ad", buf)

    seen = run_both(call, dn + 16, dn, fill)
    if dn:
        assert_pyca_51_rule(seen)
        assert seen["apart"] == {"ok"}


@pytest.mark.parametrize("dn", [0, 1, 16, 37])
def test_siv_encrypt_into(dn):
    def call(lib, data, buf):
        return aead(lib, "AESSIV", bytes(32)).encrypt_into(data, [b"a", b"b"], buf)

    seen = run_both(call, dn, dn + 16)
    if dn:
        assert_pyca_51_rule(seen)


@pytest.mark.parametrize("dn", [0, 1, 16, 37])
def test_siv_decrypt_into(dn):
    sealed = aead("pyca", "AESSIV", bytes(32)).encrypt(bytes(range(dn)), [b"a"])

    def fill(arena):
        arena[AT:AT + dn + 16] = sealed

    def call(lib, data, buf):
        return aead(lib, "AESSIV", bytes(32)).decrypt_into(data, [b"a"], buf)

    seen = run_both(call, dn + 16, dn, fill)
    if dn:
        assert_pyca_51_rule(seen)
        assert seen["apart"] == {"ok"}


@pytest.mark.parametrize("name", list(NONCES) + ["AESSIV"])
def test_nonce_and_associated_data_under_the_output_are_fine(name):
    """Only data counts: a nonce or associated data inside buf is read before the call
    writes, in both libraries."""
    results = []
    for lib in ("pyca", "compat"):
        arena = bytearray(arena_bytes())
        m = memoryview(arena)
        data, buf = m[0:20], m[40:76]
        if name == "AESSIV":
            got = outcome(aead(lib, name, bytes(32)).encrypt_into, data, [m[44:60]], buf)
        else:
            nonce = m[40:40 + NONCES[name]]
            got = outcome(aead(lib, name).encrypt_into, nonce, data, m[50:70], buf)
        results.append((got, bytes(arena)))
    assert results[0] == results[1]
    assert results[0][0][0] == "ok"


def test_one_buffer_seen_through_two_objects():
    """The check is by address, not by object: a numpy array and a memoryview over the
    same bytearray, and the same bytearray as data and buf."""
    for lib in ("pyca", "compat"):
        arena = bytearray(ARENA)
        data = np.frombuffer(arena, np.uint8)[0:32]
        buf = memoryview(arena)[16:64]
        assert outcome(aead(lib, "AESGCM").encrypt_into, bytes(12), data, None, buf) == OVERLAP
        ctx = _cipher(lib, "CTR").encryptor()
        assert outcome(ctx.update_into, arena, arena) == OVERLAP
        ctx = _cipher(lib, "CTR").encryptor()
        assert outcome(ctx.update_into, bytes(16), bytearray(16))[0] == "ok"


# ---------------------------------------------------------------- the Cipher contexts

MODES = ["ECB", "CBC", "CTR", "CFB", "CFB8", "OFB", "XTS", "GCM"]


def _cipher(lib, name, tag=None):
    if lib == "pyca":
        mod = pyca_decrepit if name in ("CFB", "CFB8", "OFB") else pyca_modes
        alg = pyca_algs.AES
    else:
        mod, alg = compat.modes, compat.algorithms.AES
    key = bytes(range(32)) if name == "XTS" else KEY16
    args = {"ECB": (), "GCM": (bytes(12),) + ((tag,) if tag else ())}.get(name, (bytes(16),))
    cipher = PycaCipher if lib == "pyca" else compat.Cipher
    return cipher(alg(key), getattr(mod, name)(*args))


@pytest.mark.parametrize("enc", [True, False], ids=["enc", "dec"])
@pytest.mark.parametrize("name", MODES)
@pytest.mark.parametrize("dn", [0, 16, 33])
@pytest.mark.parametrize("room", [0, 15, 40])
def test_update_into(name, enc, dn, room):
    """room: bytes of buf beyond len(data) (ECB and CBC need 15); the whole buf counts
    in pyca 51, not only the bytes the call writes. After each call the context goes on
    (update, then finalize or tag) and must still agree."""
    tag = None if enc else bytes(16)

    def call(lib, data, buf):
        c = _cipher(lib, name, tag)
        ctx = c.encryptor() if enc else c.decryptor()
        first = outcome(ctx.update_into, data, buf)
        after = outcome(ctx.update, bytes(32))
        if name == "GCM" and enc:
            end = outcome(ctx.finalize), outcome(lambda: ctx.tag)
        elif name == "GCM":
            end = None  # a decryptor's finalize compares a tag: not this test's matter
        else:
            end = outcome(ctx.finalize)
        return first, after, end

    seen = run_both(call, dn, dn + room, kind=lambda r: _kind(r[1][0]))
    if dn and (room >= 15 or name not in ("ECB", "CBC")):
        assert_pyca_51_rule(seen)
        assert seen["apart"] == {"ok"}


def test_update_into_after_finalize_is_already_finalized():
    """The context's own state comes first, as in pyca."""
    for name in ("CTR", "GCM"):
        results = []
        for lib in ("pyca", "compat"):
            ctx = _cipher(lib, name).encryptor()
            ctx.finalize()
            m = memoryview(bytearray(32))
            results.append(outcome(ctx.update_into, m[0:16], m[0:16]))
        assert results[0] == results[1]
        assert results[0][0] is cryptography.exceptions.AlreadyFinalized
