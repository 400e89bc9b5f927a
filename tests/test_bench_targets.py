"""The bench's targets do the work they claim to time (nothing here asserts a timing).

Mainly the AEADs: every target, aeskit's on both layers and each installed
peer's, runs whole messages without error, which for a decryption means the
kept ciphertext authenticates under that library; aeskit's api layer writes
exactly what AESGCM/AESOCB3.encrypt would.
"""

import pytest

import aeskit
from aeskit.bench import targets
from aeskit.bench.system import native
from aeskit.bench.targets import NONCE, TAG_BYTES, ApiTarget, Operation, make_targets

AEAD_CLASSES = {"GCM": aeskit.AESGCM, "OCB": aeskit.AESOCB3}
PEERS = [p for p in targets.PEERS if targets.peer_available(p)]


def test_mode_list_has_the_aeads():
    assert set(targets.MODES) >= {"ECB", "CBC", "CFB", "CFB8", "OFB", "CTR", "GCM", "OCB"}
    assert targets.AEAD_MODES == {"GCM", "OCB"}
    assert not any(Operation(m, True, 128).whole_blocks for m in targets.AEAD_MODES)


@pytest.mark.parametrize("mode", ["GCM", "OCB"])
@pytest.mark.parametrize("backend", aeskit.backends().available)
@pytest.mark.parametrize("encrypt", [True, False])
def test_kernel_time_takes_aead_objects(mode, backend, encrypt):
    obj = AEAD_CLASSES[mode](bytes(16), backend=backend)
    for size in (0, 1, 16, 17, 100, 4096):
        ns = native().kernel_time(obj, encrypt, size, 3, 5)
        assert isinstance(ns, int) and ns >= 0


def test_kernel_time_refuses_other_objects():
    with pytest.raises(TypeError):
        native().kernel_time(object(), True, 16, 1, 0)
    with pytest.raises(TypeError):
        native().kernel_time(b"key", True, 16, 1, 0)


@pytest.mark.parametrize("mode", ["GCM", "OCB"])
@pytest.mark.parametrize("bits", [128, 256])
def test_api_encrypt_writes_ciphertext_and_tag(mode, bits):
    op = Operation(mode, True, bits)
    t = ApiTarget(op, "auto", 3)
    t.prepare(300)
    assert t.in_place
    size = 100
    plain = bytes(t._buf[:size])
    t.time(size, 1)
    want = AEAD_CLASSES[mode](op.key()).encrypt(NONCE, plain, None)
    assert bytes(t._buf[:size + TAG_BYTES]) == want
    t.release()


@pytest.mark.parametrize("mode", ["GCM", "OCB"])
@pytest.mark.parametrize("encrypt", [True, False])
def test_every_aead_target_runs(mode, encrypt):
    op = Operation(mode, encrypt, 192)
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
