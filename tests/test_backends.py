"""Backend discovery and selection: backends(), cpu_features(), backend=, AESKIT_BACKEND."""

import os
import platform
import subprocess
import sys

import aeskit
import pytest

import conftest
from conftest import BACKEND_NEEDS, cpuinfo_flags, missing_backends
from helpers import CIPHERS, WIDE_BATCH, cls, ivargs, new, ref, spec_params

KNOWN = ("vaes_avx512", "vaes_avx2", "aesni", "portable")  # preference order
KEY = bytes(range(16))
IV = bytes(range(16, 32))


def test_backends_shape(backends_info):
    info = backends_info
    assert type(info).__name__ == "BackendInfo"
    assert isinstance(info, tuple) and info._fields == ("all", "available", "default")
    assert info == aeskit.backends()
    assert isinstance(info.all, tuple) and isinstance(info.available, tuple)
    assert all(isinstance(n, str) for n in info.all + info.available)
    assert len(set(info.all)) == len(info.all)
    assert set(info.all) <= set(KNOWN), info.all
    assert set(info.available) <= set(info.all)
    assert "portable" in info.available
    assert info.all[-1] == "portable"
    # Both lists keep the preference order.
    order = [KNOWN.index(n) for n in info.all]
    assert order == sorted(order), info.all
    assert [n for n in info.all if n in info.available] == list(info.available)
    assert info.default in info.available


def test_default_is_first_available(backends_info):
    forced = os.environ.get("AESKIT_BACKEND")
    if forced:
        assert backends_info.default == forced
    else:
        assert backends_info.default == backends_info.available[0]


def test_every_backend_this_cpu_has_is_available():
    assert missing_backends() == []


def test_x86_build_has_every_x86_backend(backends_info):
    """An x86-64 build compiles in every x86 table, whether or not this CPU runs them."""
    if not conftest.is_x86_64():
        pytest.skip("not x86-64")
    for name in conftest.X86_BUILT_IN:
        assert name in backends_info.all, name


@pytest.mark.parametrize("lost", conftest.X86_BUILT_IN)
def test_a_lost_x86_table_is_reported(monkeypatch, backends_info, lost):
    """missing_backends() (which fails the whole session) names an x86 table that a build
    lost, even one this CPU could not run."""
    info = type(backends_info)(tuple(b for b in backends_info.all if b != lost),
                               tuple(b for b in backends_info.available if b != lost),
                               backends_info.default)
    monkeypatch.setattr(conftest, "is_x86_64", lambda: True)
    monkeypatch.setattr(conftest.aeskit, "backends", lambda: info)
    assert [m for m in missing_backends() if m.startswith(lost + " ")], missing_backends()


def test_cpu_features_shape():
    feats = aeskit.cpu_features()
    assert isinstance(feats, dict) and feats
    assert all(isinstance(k, str) and isinstance(v, bool) for k, v in feats.items())
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        names = ("aes", "pmull")
    elif machine.startswith("ppc64"):
        names = ("vcrypto",)
    else:
        names = ("aes", "pclmulqdq", "ssse3", "sse4.1", "avx2", "vaes", "vpclmulqdq",
                 "avx512f")
    for name in names:
        assert name in feats, name


def test_cpu_features_agree_with_proc_cpuinfo():
    flags = cpuinfo_flags()
    if flags is None:
        pytest.skip("no /proc/cpuinfo")
    feats = aeskit.cpu_features()
    checked = 0
    for name, value in feats.items():
        flag = name.replace(".", "_")
        if flag in {f for needs in BACKEND_NEEDS.values() for f in needs}:
            assert value == (flag in flags), (name, value)
            checked += 1
    assert checked >= (2 if platform.machine().lower() in ("aarch64", "arm64") else 8)


def test_available_follows_cpu_features(backends_info):
    """aesni is offered iff its features are present (no false positives either)."""
    feats = aeskit.cpu_features()
    need = ("aes", "pclmulqdq", "ssse3", "sse4.1")
    if "aesni" in backends_info.all:
        assert ("aesni" in backends_info.available) == all(feats[n] for n in need)


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_each_backend_selectable(backends_info, spec):
    for name in backends_info.available:
        obj = new(spec, KEY, backend=name)
        assert obj.backend == name
        args = ivargs(spec, IV)
        assert obj.encrypt(*args, bytes(64)) == ref(spec, KEY, IV, bytes(64))


def _python(code, backend_env):
    env = dict(os.environ)
    env.pop("AESKIT_BACKEND", None)
    if backend_env is not None:
        env["AESKIT_BACKEND"] = backend_env
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=False, timeout=120, cwd=os.path.dirname(__file__))


_REPORT = ("import aeskit; i = aeskit.backends(); "
           "print(i.default, aeskit.AESCTR(bytes(16)).backend, "
           "aeskit.AESECB(bytes(16)).backend, ','.join(i.available))")


@pytest.mark.parametrize("name", aeskit.backends().available)
def test_env_forces_default(name):
    r = _python(_REPORT, name)
    assert r.returncode == 0, r.stderr
    default, ctr, ecb, available = r.stdout.split()
    assert default == ctr == ecb == name
    # Forcing the default does not hide the other backends.
    assert available.split(",") == list(aeskit.backends().available)


def test_env_explicit_backend_still_wins():
    r = _python("import aeskit; print(aeskit.AESCBC(bytes(16), backend='portable').backend)",
                aeskit.backends().available[0])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "portable"


@pytest.mark.parametrize("bad", ["nope", "PORTABLE", "aesni2"])
def test_env_unknown_backend_fails_import(bad):
    r = _python("import aeskit", bad)
    assert r.returncode != 0
    assert "ImportError" in r.stderr, r.stderr
    assert bad in r.stderr


def test_env_unavailable_backend_fails_import(backends_info):
    missing = [b for b in backends_info.all if b not in backends_info.available]
    if not missing:
        pytest.skip("every backend aeskit knows is available on this CPU")
    for name in missing:
        r = _python("import aeskit", name)
        assert r.returncode != 0
        assert "ImportError" in r.stderr, r.stderr


def test_env_empty_means_auto():
    r = _python(_REPORT, "")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == aeskit.backends().available[0]


@pytest.mark.parametrize("spec", spec_params(CIPHERS))
def test_backends_agree_with_portable(backends_info, spec):
    """Every backend byte-identical to portable on a message past two of the widest batches,
    all key sizes."""
    data = bytes((i * 131 + 17) & 0xFF for i in range(16 * (2 * WIDE_BATCH + 3)))
    for ks in (16, 24, 32):
        key = bytes(range(ks))
        args = ivargs(spec, IV)
        want_e = new(spec, key, backend="portable").encrypt(*args, data)
        want_d = new(spec, key, backend="portable").decrypt(*args, data)
        for name in backends_info.available:
            obj = new(spec, key, backend=name)
            assert obj.encrypt(*args, data) == want_e, (name, ks)
            assert obj.decrypt(*args, data) == want_d, (name, ks)
