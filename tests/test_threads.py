"""Threads: a key object is shared safely; a streaming context used from two threads at
once raises RuntimeError and never hands out the same keystream twice."""

import hashlib
import threading

import pytest

from helpers import CIPHER, CIPHERS, ivargs, new, op, ref, spec_params

KEY = bytes(range(32))
IV = bytes(range(16, 32))
BIG = 8 << 20  # well above any GIL-release threshold


def _run_threads(n, target):
    barrier = threading.Barrier(n)
    errors = []

    def wrap(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_shared_key_object(backend, spec):
    """4 threads share one key object: results equal serial use."""
    obj = new(spec, KEY, backend=backend)
    # CFB8 runs one AES call per byte: keep it to sizes a serial kernel does quickly.
    big = (1 << 20) + 32 if spec.segment == 16 else (1 << 16) + 32
    sizes = [n for n in (0, 16, 160, 4096, 1 << 14, big) if spec.takes(n)]
    jobs = []
    for t in range(4):
        for k, n in enumerate(sizes):
            iv = bytes([t, k]) + IV[2:]
            data = bytes([(t * 31 + k) & 0xFF]) * n
            jobs.append((t, iv, data))
    serial = {}
    for t, iv, data in jobs:
        args = ivargs(spec, iv)
        serial[(t, iv)] = (obj.encrypt(*args, data), obj.decrypt(*args, data))
    results = {}

    def work(t):
        for _ in range(2):
            for jt, iv, data in jobs:
                if jt != t:
                    continue
                args = ivargs(spec, iv)
                e = obj.encrypt(*args, data)
                d = obj.decrypt(*args, data)
                ctx = obj.encryptor(*args)
                s = ctx.update(data[:len(data) // 2]) + ctx.update(data[len(data) // 2:])
                s += ctx.finalize()
                buf = bytearray(data)
                obj.encrypt_into(*args, buf, buf)
                assert e == s == buf
                results[(t, iv)] = (e, d)

    errors = _run_threads(4, work)
    assert not errors, errors
    assert results == serial
    # Spot-check serial against the reference so the comparison is not vacuous.
    t, iv, data = jobs[3]
    assert serial[(t, iv)][0] == ref(spec, KEY, iv, data)


def _keystream_digests(spec, count):
    """sha256 of each BIG-byte chunk of the serial keystream (encryption of zeros)."""
    out = ref(spec, KEY, IV, bytes(BIG * count))
    return [hashlib.sha256(out[i * BIG:(i + 1) * BIG]).hexdigest() for i in range(count)]


@pytest.mark.parametrize("spec", spec_params(CIPHERS, keystream=True))
def test_shared_context_never_repeats_keystream(backend, spec):
    """Two threads hammer one encryptor with BIG updates of zeros. Each update either
    raises RuntimeError or returns the next unused chunk of the serial keystream."""
    rounds, per_thread = 3, 2
    zeros = bytes(BIG)
    busy = 0
    for _ in range(rounds):
        ctx = op(new(spec, KEY, backend=backend), spec, IV, "encrypt")
        got, raised = [], []
        lock = threading.Lock()

        def work(i, ctx=ctx, got=got, raised=raised, lock=lock):
            for _ in range(per_thread):
                try:
                    out = ctx.update(zeros)
                except RuntimeError as e:
                    with lock:
                        raised.append(e)
                    continue
                assert len(out) == BIG
                with lock:
                    got.append(hashlib.sha256(out).hexdigest())

        errors = _run_threads(2, work)
        assert not errors, errors
        assert len(got) + len(raised) == 2 * per_thread
        assert got, "every update raised: the context never worked"
        busy += len(raised)
        # Successful updates consumed consecutive chunks, each exactly once.
        assert len(set(got)) == len(got), "the same keystream was handed out twice"
        assert sorted(got) == sorted(_keystream_digests(spec, len(got)))
        # The context is still consistent after the contention.
        tail = ctx.update(bytes(16)) + ctx.finalize()
        assert tail == ref(spec, KEY, IV, bytes(BIG * len(got) + 16))[-16:]
    print(f"{backend}/{spec.name}: RuntimeError on {busy} of {rounds * 2 * per_thread} updates")


def test_shared_context_update_into_from_two_threads(backend):
    """Same property through update_into, each thread with its own output buffer."""
    spec = CIPHER["CTR"]
    ctx = op(new(spec, KEY, backend=backend), spec, IV, "encrypt")
    zeros = bytes(BIG)
    got = []
    lock = threading.Lock()

    def work(i):
        buf = bytearray(BIG)
        for _ in range(2):
            try:
                n = ctx.update_into(zeros, buf)
            except RuntimeError:
                continue
            assert n == BIG
            with lock:
                got.append(hashlib.sha256(buf).hexdigest())

    errors = _run_threads(2, work)
    assert not errors, errors
    assert got
    assert sorted(got) == sorted(_keystream_digests(spec, len(got)))
