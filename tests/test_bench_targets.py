"""The bench's targets do the work they claim to time (nothing here asserts a timing).

Mainly the AEADs: every target, aeskit's on both layers and each installed
peer's, runs whole messages without error, which for a decryption means the
kept ciphertext authenticates under that library; aeskit's api layer writes
exactly what AESGCM/AESOCB3/AESCCM.encrypt would (CCM with its 11-byte
nonce). GHASH: the kernel runs the ghash slot of an AESGCM object only, on
whole blocks; the api layer and the peers compute the GMAC of the buffer. CMAC: one
direction under every key size, each target computing the tag of the whole buffer.
SIV: the nonce is its one associated-data component on every target, and its sealed
message is tag || ciphertext.
"""

import argparse
import dataclasses

import pytest

import aeskit
from aeskit._modes import MODES
from aeskit.bench import command, targets
from aeskit.bench.system import native
from aeskit.bench.targets import (
    NONCE,
    TAG_BYTES,
    ApiTarget,
    KernelTarget,
    Operation,
    make_targets,
)

AEADS = [m.name for m in MODES if m.aead]
AEAD_CLASSES = {m.name: getattr(aeskit, m.class_name) for m in MODES if m.aead}
#: The key of each AEAD's test objects: its shortest (SIV's holds two AES keys).
AEAD_KEY = {m.name: bytes(m.key_sizes[0]) for m in MODES if m.aead}


def _seal(mode, key, nonce, data):
    """What the bench's messages seal to: the nonce as the nonce, or as SIV's one component."""
    if mode in targets.NONCE_AS_AD_MODES:
        return AEAD_CLASSES[mode](key).encrypt(data, [nonce])
    return AEAD_CLASSES[mode](key).encrypt(nonce, data, None)
PEERS = [p for p in targets.PEERS if targets.peer_available(p)]


def test_mode_list_has_the_aeads():
    assert set(targets.MODES) >= {"ECB", "CBC", "CFB", "CFB8", "OFB", "CTR", "GHASH", "GCM",
                                  "OCB3", "GCM-SIV", "CCM", "CMAC", "EAX", "SIV"}
    assert targets.AEAD_MODES >= {"GCM", "OCB3", "GCM-SIV", "CCM", "EAX", "SIV"}
    assert targets.AEAD_MODES == set(AEADS)
    assert targets.NONCE_AS_AD_MODES == {"SIV"} and "SIV" in targets.TWO_KEY_MODES
    assert len(Operation("SIV", True, 192).key()) == 48
    assert not any(Operation(m, True, 128).whole_blocks for m in targets.AEAD_MODES)


@pytest.mark.parametrize("mode", AEADS)
@pytest.mark.parametrize("backend", aeskit.backends().available)
@pytest.mark.parametrize("encrypt", [True, False])
def test_kernel_time_takes_aead_objects(mode, backend, encrypt):
    obj = AEAD_CLASSES[mode](AEAD_KEY[mode], backend=backend)
    for size in (0, 1, 16, 17, 100, 4096):
        nonce_len = len(Operation(mode, True, 128).nonce)
        ns = native().kernel_time(obj, encrypt, size, 3, 5, nonce_len)
        assert isinstance(ns, int) and ns >= 0


def test_aead_nonces():
    """12 bytes (NONCE), CCM's 11 (its limit with 12, 2^24 - 1 bytes, is below 16 MiB); the
    kernel takes the length and refuses one the mode does not, or a size past its limit."""
    assert Operation("GCM", True, 128).nonce == NONCE and len(NONCE) == 12
    assert Operation("CCM", True, 128).nonce == NONCE[:11]
    ccm = aeskit.AESCCM(bytes(16))
    assert native().kernel_time(ccm, True, 64, 1, 0, 11) >= 0
    with pytest.raises(ValueError, match="14-byte nonce"):
        native().kernel_time(ccm, True, 64, 1, 0, 14)
    with pytest.raises(ValueError, match="at most 65535 bytes with a 13-byte nonce"):
        native().kernel_time(ccm, True, 2**16, 1, 0, 13)


def test_aead_nonce_lengths_follow_the_facts():
    """Each AEAD row's nonce length comes from its facts: 12 bytes where the mode takes them
    (SIV's, as its associated data), CCM's 11 by the bench's choice, else the mode's
    shortest, which the kernel takes up to 32 bytes (EAX takes any: 24 and 32 here)."""
    assert set(targets.AEAD_NONCE_LEN) == targets.AEAD_MODES
    for name, n in {"GCM": 12, "OCB3": 12, "GCM-SIV": 12, "CCM": 11, "EAX": 12, "SIV": 12}.items():
        assert targets.AEAD_NONCE_LEN[name] == n, name
    gcm = next(m for m in MODES if m.name == "GCM")
    long_nonces = dataclasses.replace(gcm, name="XGCM", nonce_min=24, nonce_max=24)
    assert targets._nonce_len(long_nonces) == 24
    assert targets.NONCES[:16] == targets.IV and len(targets.NONCES) == 32
    eax = aeskit.AESEAX(bytes(16))
    for n in (24, 32):
        assert native().kernel_time(eax, True, 64, 1, 0, n) >= 0
    with pytest.raises(ValueError, match="33-byte nonce"):
        native().kernel_time(eax, True, 64, 1, 0, 33)


def test_kernel_time_refuses_other_objects():
    with pytest.raises(TypeError):
        native().kernel_time(object(), True, 16, 1, 0)
    with pytest.raises(TypeError):
        native().kernel_time(b"key", True, 16, 1, 0)


@pytest.mark.parametrize("mode, bits", [(m, b) for m in AEADS for b in (128, 256)
                                         if b in targets.MODE_KEY_BITS.get(m, (b,))])
def test_api_encrypt_writes_ciphertext_and_tag(mode, bits):
    op = Operation(mode, True, bits)
    t = ApiTarget(op, "auto", 3)
    t.prepare(300)
    assert t.in_place
    size = 100
    t._buf[:] = bytes(len(t._buf))  # the same plaintext wherever the call lands
    t.time(size, 1)
    want = _seal(mode, op.key(), op.nonce, bytes(size))
    at = t._place.offset  # the page offset moves with each timing
    assert at % 64 == 0 and bytes(t._buf[at:at + size + TAG_BYTES]) == want
    t.release()


@pytest.mark.parametrize("mode", AEADS)
@pytest.mark.parametrize("encrypt", [True, False])
def test_every_aead_target_runs(mode, encrypt):
    bits = 192 if 192 in targets.MODE_KEY_BITS.get(mode, (192,)) else 256
    op = Operation(mode, encrypt, bits)
    got = make_targets(op, list(aeskit.backends().available), ["kernel", "api"], PEERS, 7)
    assert {t.impl for t in got} <= {"aeskit", *PEERS}  # OCB3 may be missing in an OpenSSL
    for t in got:
        t.prepare(5000)
        try:
            for size in (16, 33, 4096, 5000):
                assert t.time(size, 2) >= 0  # a peer's decryption raises on a bad tag
        finally:
            t.release()
        if t.impl == "aeskit":  # decryption keeps its ciphertext apart
            assert t.in_place == (encrypt or t.layer == "kernel")


def test_ghash_is_one_way_on_whole_blocks():
    op = Operation("GHASH", True, 128)
    assert op.one_way and op.whole_blocks and not op.aead
    assert op.direction is None and op.label == "GHASH"
    assert targets.ONE_WAY_MODES == {"GHASH", "CMAC"} == {"GHASH", *targets.MAC_MODES}
    assert targets.ONE_KEY_SIZE_MODES == {"GHASH"}
    assert Operation("CTR", False, 128).label == "CTR dec"
    assert not Operation("GCM", True, 128).one_way


def _ops(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return command._operations(command.resolve(parser.parse_args(list(argv)), parser))


def test_ghash_runs_once_under_the_first_key_size():
    ops = _ops("--modes", "CTR,GHASH", "--key-bits", "256,128")
    assert [op for op in ops if op.mode == "GHASH"] == [Operation("GHASH", True, 256)]
    assert len([op for op in ops if op.mode == "CTR"]) == 4
    assert Operation("GHASH", True, 128) in _ops()  # in the default mode list
    quick = _ops("--quick")
    assert [op.mode for op in quick].count("GHASH") == 1


@pytest.mark.parametrize("backend", aeskit.backends().available)
def test_ghash_time_takes_aesgcm_objects(backend):
    obj = aeskit.AESGCM(bytes(32), backend=backend)
    for size in (0, 16, 512, 4096, 4112):
        ns = native().ghash_time(obj, size, 3, 5)
        assert isinstance(ns, int) and ns >= 0
    t = KernelTarget(Operation("GHASH", True, 128), backend, 9)
    assert t.backend == backend and t.in_place
    assert t.time(1024, 2) >= 0


def test_ghash_time_refuses_what_is_not_ghash():
    gcm = aeskit.AESGCM(bytes(16))
    with pytest.raises(TypeError):
        native().ghash_time(aeskit.AESOCB3(bytes(16)), 16, 1, 0)
    with pytest.raises(TypeError):
        native().ghash_time(aeskit.AESCTR(bytes(16)), 16, 1, 0)
    with pytest.raises(TypeError):
        native().ghash_time(gcm, 16, 1)
    for size, loops, offset in ((17, 1, 0), (-16, 1, 0), (16, 0, 0), (16, 1, 8192)):
        with pytest.raises(ValueError):
            native().ghash_time(gcm, size, loops, offset)


def test_placement_moves_in_the_page_and_reaches_every_line_and_object():
    place = targets.Placement()
    seen = {(place.next(), place.index) for _ in range(4000)}
    assert {at for at, _ in seen} == set(range(0, targets.PAGE, 64))
    assert {i for _, i in seen} == set(range(targets.KEY_OBJECTS))
    one, two = targets.Placement(), targets.Placement()  # a fixed seed: runs repeat it
    assert [(one.next(), one.index) for _ in range(50)] == [(two.next(), two.index)
                                                            for _ in range(50)]


@pytest.mark.parametrize("backend", aeskit.backends().available)
def test_ghash_api_target_computes_the_gmac(backend):
    t = ApiTarget(Operation("GHASH", True, 128), backend, 3)
    t.prepare(4096)
    assert t.in_place
    for size in (16, 4096):
        t.time(size, 1)
        at = t._place.offset
        want = aeskit.AESGCM(bytes(range(16))).encrypt(NONCE, b"", bytes(t._buf[at:at + size]))
        assert bytes(t._tag) == want
    t.release()


def test_every_ghash_target_runs():
    op = Operation("GHASH", True, 128)
    got = make_targets(op, list(aeskit.backends().available), ["kernel", "api"], PEERS, 7)
    assert {t.impl for t in got} == {"aeskit", *PEERS}
    for t in got:
        t.prepare(4096)
        try:
            for size in (16, 48, 4096):
                assert t.time(size, 2) >= 0
            if t.impl == "cryptography" and t.style == "into":  # the tag is where we can see it
                aad = bytes(t._buf[t._place.offset:][:4096])
                assert bytes(t._tag) == aeskit.AESGCM(op.key()).encrypt(NONCE, b"", aad)
        finally:
            t.release()


@pytest.mark.parametrize("encrypt", [True, False])
@pytest.mark.parametrize("bits", [128, 256])
def test_every_xts_target_runs(encrypt, bits):
    """XTS: two AES keys per row, both layers and pyca's XTS as its peer (pycryptodome has
    none), whole data units from 16 bytes."""
    op = Operation("XTS", encrypt, bits)
    assert len(op.key()) == bits // 4 and op.whole_blocks
    got = make_targets(op, list(aeskit.backends().available), ["kernel", "api"], PEERS, 7)
    assert "pycryptodome" not in {t.impl for t in got}
    assert ("cryptography" in {t.impl for t in got}) == ("cryptography" in PEERS)
    for t in got:
        t.prepare(5000)
        try:
            for size in (16, 4096, 4992):
                assert t.time(size, 2) >= 0
        finally:
            t.release()


def test_xts_kernel_time_runs_the_stolen_tail_and_refuses_short_units():
    x = aeskit.AESXTS(bytes(range(32)))
    assert native().kernel_time(x, True, 17, 3, 0) >= 0
    with pytest.raises(ValueError, match="XTS sizes"):
        native().kernel_time(x, True, 15, 1, 0)


def test_kernel_time_runs_sectors_and_refuses_what_has_none():
    x = aeskit.AESXTS(bytes(range(32)))
    assert native().kernel_time(x, True, 3 * 512, 2, 0, 512) >= 0
    assert native().kernel_time(x, False, 4096, 2, 0, 4096) >= 0
    for size, unit in [(1000, 512), (1024, 24), (1024, -16), (0, 16)]:
        with pytest.raises(ValueError, match="sector_size"):
            native().kernel_time(x, True, size, 1, 0, unit)
    with pytest.raises(ValueError, match="sector_size"):
        native().kernel_time(aeskit.AESCTR(bytes(16)), True, 1024, 1, 0, 512)


def test_xts_has_no_192_bit_rows():
    ops = _ops("--modes", "XTS,CTR", "--key-bits", "128,192,256")
    assert {op.key_bits for op in ops if op.mode == "XTS"} == {128, 256}
    assert {op.key_bits for op in ops if op.mode == "CTR"} == {128, 192, 256}


# ---------------------------------------------------------------- CMAC

def test_cmac_is_one_way_under_every_key_size():
    op = Operation("CMAC", True, 256)
    assert op.one_way and op.mac and not op.aead and not op.whole_blocks
    assert op.label == "CMAC" and op.direction is None
    ops = _ops("--modes", "CMAC,EAX", "--key-bits", "128,256")
    assert [op for op in ops if op.mode == "CMAC"] == [Operation("CMAC", True, 128),
                                                       Operation("CMAC", True, 256)]
    assert len([op for op in ops if op.mode == "EAX"]) == 4
    assert targets.MODE_ALIASES["AESCMAC"] == "CMAC" and targets.MODE_ALIASES["AESEAX"] == "EAX"


@pytest.mark.parametrize("backend", aeskit.backends().available)
def test_kernel_time_takes_cmac_objects(backend):
    obj = aeskit.AESCMAC(bytes(16), backend=backend)
    for size in (0, 1, 16, 17, 100, 4096):
        ns = native().kernel_time(obj, True, size, 3, 5)
        assert isinstance(ns, int) and ns >= 0


def test_every_cmac_target_computes_the_tag(monkeypatch):
    """Every target's timed call is a tag of the buffer: the api layer calls AESCMAC.mac and
    the peers their CMAC, each on exactly the data (recorded through a spy on aeskit, and
    checked against the peers' own answers)."""
    op = Operation("CMAC", True, 128)
    got = make_targets(op, list(aeskit.backends().available), ["kernel", "api"], PEERS, 3)
    assert {t.impl for t in got} == {"aeskit", *PEERS}
    assert all(t.in_place for t in got)
    for t in got:
        t.prepare(5000)
        try:
            for size in (0, 16, 33, 5000):
                assert t.time(size, 2) >= 0
        finally:
            t.release()
    api = ApiTarget(op, "auto", 3)
    seen = []
    api._fns = [lambda data: seen.append(bytes(data))] * targets.KEY_OBJECTS
    api.prepare(100)
    api._buf[:] = bytes(range(256)) * (len(api._buf) // 256) + bytes(len(api._buf) % 256)
    api.time(40, 2)
    at = api._place.offset
    assert seen == [bytes(api._buf[at:at + 40])] * 2
