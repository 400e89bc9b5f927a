"""GCM's many-message path (modes/gcm.c: gcm_many, the descriptor's seal_many and open_many):
a batch's short messages share one ecb_enc call over all their counter blocks, the rest
take the one-shot path. On every backend, each group size the glue hands over (1 to 33
crosses AESKIT_AEAD_MANY = 32) and each mix of lengths gives what one call per message
gives: lengths either side of the short path's limit and of the many path's buffer, with
and without associated data, shared or per message, nonces of 12 bytes and others, every
tag length; a failure in the middle of a group zeroes its own output only."""

import os
import random

import aeskit
import pytest
from aeskit import _aeskit

CONSTANTS = _aeskit.mode_constants("GCM")
SHORT = CONSTANTS["short_blocks"]    # AAD and data blocks together on the short path
MANY = CONSTANTS["many_blocks"]      # counter blocks the generic path encrypts in one call
FAST = CONSTANTS["short_hash_blocks"]  # hashed blocks of a message the gcm_short slot takes
BACKENDS = aeskit.backends().available
GROUP = 32                           # AESKIT_AEAD_MANY: the glue's group

# Lengths around every boundary: the empty message, partial blocks, the short path's
# limit (SHORT blocks of data with no AAD; one less with a block of AAD), and messages
# whose counter blocks (data blocks + 1) fill the many buffer exactly or overflow it.
LENGTHS = sorted({0, 1, 15, 16, 17, 63, 64, 65, 255, 1500, 4096,
                  16 * SHORT - 1, 16 * SHORT, 16 * SHORT + 1,
                  16 * (SHORT - 1), 16 * (SHORT - 1) + 1,
                  16 * (MANY // 4 - 1), 16 * (MANY // 2 - 1),
                  16 * (FAST - 1) - 1, 16 * (FAST - 1), 16 * (FAST - 1) + 1})


def _gcm(backend, tag_length=16):
    return aeskit.AESGCM(bytes(range(16)), tag_length=tag_length, backend=backend)


def _one_by_one(g, nonces, data, ads):
    return [g.encrypt(n, d, a) for n, d, a in zip(nonces, data, ads)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_sizes(backend):
    """Batches of 1 to 33 messages of mixed lengths, sealed and opened."""
    rng = random.Random(30)
    g = _gcm(backend)
    for n in range(1, GROUP + 2):
        data = [os.urandom(rng.choice(LENGTHS)) for _ in range(n)]
        nonces = [os.urandom(12) for _ in range(n)]
        ads = [os.urandom(rng.choice((0, 1, 16, 20, 33))) for _ in range(n)]
        sealed = g.encrypt_many(nonces, data, ads)
        assert sealed == _one_by_one(g, nonces, data, ads), n
        assert g.decrypt_many(nonces, sealed, ads) == data, n


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("length", LENGTHS)
def test_each_length(backend, length):
    """A group of one length: how many share a buffer depends on it alone."""
    g = _gcm(backend)
    n = GROUP + 1
    data = [os.urandom(length) for _ in range(n)]
    nonces = [os.urandom(12) for _ in range(n)]
    for ad in (None, b"shared header"):
        sealed = g.encrypt_many(nonces, data, ad)
        assert sealed == _one_by_one(g, nonces, data, [ad] * n), (length, ad)
        assert g.decrypt_many(nonces, sealed, ad) == data


@pytest.mark.parametrize("backend", BACKENDS)
def test_aad_at_the_limits(backend):
    """AAD and data blocks together either side of the short path's limit and the
    gcm_short slot's, partial AAD blocks beside partial data blocks."""
    g = _gcm(backend)
    cases = [(16 * a, 16 * (limit - a) + d) for limit in (SHORT, FAST - 1)
             for a in (0, 1, 2, 5, limit) for d in (-1, 0, 1)]
    cases += [(a, d) for a in (1, 15, 17) for d in (0, 1, 15, 16 * (FAST - 3) + 1)]
    cases = [(a, max(d, 0)) for a, d in cases]
    nonces = [os.urandom(12) for _ in cases]
    data = [os.urandom(d) for _, d in cases]
    ads = [os.urandom(a) for a, _ in cases]
    sealed = g.encrypt_many(nonces, data, ads)
    assert sealed == _one_by_one(g, nonces, data, ads)
    assert g.decrypt_many(nonces, sealed, ads) == data


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_nonce_lengths_in_a_group(backend):
    """Nonces that are not 12 bytes (a secret J0) take the one-shot path amid the others."""
    rng = random.Random(7)
    g = _gcm(backend)
    n = 2 * GROUP + 3
    nonces = [os.urandom(rng.choice((1, 8, 12, 12, 16, 60))) for _ in range(n)]
    data = [os.urandom(rng.choice(LENGTHS)) for _ in range(n)]
    sealed = g.encrypt_many(nonces, data)
    assert sealed == _one_by_one(g, nonces, data, [None] * n)
    assert g.decrypt_many(nonces, sealed) == data


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tag_length", (4, 8, 12, 16))
def test_packed_tag_lengths(backend, tag_length):
    import array
    g = _gcm(backend, tag_length)
    n = 100
    data = [os.urandom(64 if i % 3 else 1500) for i in range(n)]
    nonces = os.urandom(12 * n)
    src = b"".join(data)
    offsets = array.array("q", [0])
    for d in data:
        offsets.append(offsets[-1] + len(d))
    dst = bytearray(len(src) + tag_length * n)
    out = g.encrypt_many_into(nonces, src, offsets, dst)
    want = _one_by_one(g, [nonces[12 * i:12 * i + 12] for i in range(n)], data, [None] * n)
    assert bytes(dst) == b"".join(want)
    back = bytearray(len(src))
    assert list(g.decrypt_many_into(nonces, dst, out, back)) == list(offsets)
    assert bytes(back) == src


@pytest.mark.parametrize("backend", BACKENDS)
def test_failures_in_a_group_zero_their_own_output(backend):
    """Forged messages amid good ones in one group: on_failure="zero" clears exactly theirs."""
    import array
    g = _gcm(backend)
    n = GROUP + 5
    data = [os.urandom((17 * i) % 300) for i in range(n)]
    nonces = [os.urandom(12) for _ in range(n)]
    sealed = g.encrypt_many(nonces, data)
    bad = {1, 7, 8, 20, GROUP - 1, GROUP + 2}
    for i in bad:
        s = bytearray(sealed[i])
        s[len(s) // 2] ^= 1
        sealed[i] = bytes(s)
    src = b"".join(sealed)
    offsets = array.array("q", [0])
    for s in sealed:
        offsets.append(offsets[-1] + len(s))
    dst = bytearray(b"\xaa" * len(src))
    ok = g.decrypt_many_into(b"".join(nonces), src, offsets, dst, on_failure="zero")
    assert list(ok) == [0 if i in bad else 1 for i in range(n)]
    at = 0
    for i, d in enumerate(data):
        assert bytes(dst[at:at + len(d)]) == (bytes(len(d)) if i in bad else d), i
        at += len(d)
    with pytest.raises(aeskit.InvalidTag) as e:
        g.decrypt_many(nonces, sealed)
    assert sorted(e.value.failed) == sorted(bad)
