"""The backend matrix and the hypothesis profiles.

Every crypto test takes the `backend` fixture and so runs once per backend this CPU has.
A backend this CPU should have (per /proc/cpuinfo) that aeskit does not offer, or on x86-64
a backend table the build lacks, is a failure of every test, never a skip.
"""

import os
import platform

import aeskit
import pytest
from aeskit._modes import MODES
from hypothesis import HealthCheck, settings


def _profile(name, examples):
    settings.register_profile(
        name,
        max_examples=examples,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


_profile("default", 75)
# ci: the README's run in CI. The hypothesis tests sample lengths and splits between the
# boundaries that the sweeps (test_wide_boundaries, test_wide_aead, the *_every_length
# tests) cover exhaustively, once per backend x key size x mode: at 400 examples they were
# four fifths of the suite's time (about 6 of its 8 minutes on 2 cores); at 150 the suite
# took 372 s of CI's 25 minutes on a Zen 3 (2 cores), whose whole run came to 28.
_profile("ci", 100)
# asan: the sanitizer run, where every call is several times slower; memory errors come
# from lengths and offsets, which the sweeps enumerate, more than from sampled data.
_profile("asan", 30)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# CPU flags (as /proc/cpuinfo spells them) each backend needs. /proc/cpuinfo only lists
# AVX-class flags when the OS saves the register state, so it also covers XGETBV.
BACKEND_NEEDS = {
    "aesni": {"aes", "pclmulqdq", "ssse3", "sse4_1"},
    "vaes_avx2": {"aes", "pclmulqdq", "ssse3", "sse4_1", "avx", "avx2", "vaes", "vpclmulqdq"},
    "vaes_avx512": {
        "aes", "pclmulqdq", "ssse3", "sse4_1", "avx", "avx2", "vaes", "vpclmulqdq",
        "avx512f", "avx512bw", "avx512vl", "bmi2",
    },
    # AArch64 Linux lists its HWCAP names on the "Features" line
    "armv8_ce": {"aes", "pmull"},
}
# Backends that every x86-64 build compiles in, whether or not this CPU can run them: a
# build that lost one of these tables fails every test, never skips.
X86_BUILT_IN = ("vaes_avx512", "vaes_avx2", "aesni")


def cpuinfo_flags():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):   # x86, AArch64
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def is_x86_64():
    return platform.machine().lower() in ("x86_64", "amd64")


def missing_backends():
    """Backends aeskit should have and does not, with the reason: on x86-64 any of
    X86_BUILT_IN not compiled in (in aeskit.backends().all), and anywhere a backend this CPU
    can run that aeskit does not offer as available."""
    info = aeskit.backends()
    missing = []
    if is_x86_64():
        missing += [f"{name} (not compiled in: an x86-64 build has {', '.join(X86_BUILT_IN)}; "
                    f"aeskit.backends() = {info!r})"
                    for name in X86_BUILT_IN if name not in info.all]
    flags = cpuinfo_flags() or set()
    for name, needs in BACKEND_NEEDS.items():
        if name in info.all and name not in info.available and needs <= flags:
            missing.append(f"{name} (CPU has {', '.join(sorted(needs))}; "
                           f"aeskit.backends() = {info!r})")
    if "portable" not in info.available:
        missing.append("portable (must always be available)")
    return missing


def emulated_backends():
    """Backends offered although this CPU lacks what they need.

    Only a test-only build with meson's emulate_wide option (tests/emu/vaes_emu.h) does
    that: its vaes_avx2 and vaes_avx512 run on emulated VAES, VPCLMULQDQ and AVX-512.
    """
    flags = cpuinfo_flags()
    if flags is None:
        return []
    return [name for name in aeskit.backends().available
            if name in BACKEND_NEEDS and not BACKEND_NEEDS[name] <= flags]


BACKENDS = tuple(aeskit.backends().available)
EMULATED = tuple(emulated_backends())
_backends_run = set()


def pytest_report_header(config):
    info = aeskit.backends()
    feats = aeskit.cpu_features()
    on = sorted(k for k, v in feats.items() if v)
    return [
        f"aeskit backends: all={info.all} available={info.available} default={info.default!r}",
        f"aeskit cpu_features: {' '.join(on)}",
        f"hypothesis profile: {os.environ.get('HYPOTHESIS_PROFILE', 'default')}",
    ] + ([f"aeskit EMULATED backends (test-only emulate_wide build, the CPU lacks their "
          f"instructions): {', '.join(EMULATED)}"] if EMULATED else [])


class _XdistBackends:
    """Under pytest-xdist the backend fixture runs in the workers: each sends the backends
    it exercised back to the controller, which reports their union."""

    @pytest.hookimpl
    def pytest_testnodedown(self, node, error):
        _backends_run.update(getattr(node, "workeroutput", {}).get("aeskit_backends", ()))


def registry_mismatches(modes, namespace):
    """What is wrong between the C registry's modes and the classes in namespace (aeskit's
    names): a mode whose class is missing or named otherwise, or a key class (a type with a
    key_size) that no mode describes. Empty when each is the other's."""
    problems = []
    for m in modes:
        cls = namespace.get(m.class_name)
        if not isinstance(cls, type) or cls.__name__ != m.class_name:
            problems.append(f"the mode {m.name} has no class aeskit.{m.class_name}")
    described = {m.class_name for m in modes}
    for name, obj in namespace.items():
        if isinstance(obj, type) and hasattr(obj, "key_size") and name not in described:
            problems.append(f"aeskit.{name} is a key class without a mode descriptor")
    return problems


def pytest_configure(config):
    """The suite refuses to run when the registry and aeskit's classes disagree: every test
    that is parametrized by the modes would otherwise leave some out."""
    problems = registry_mismatches(MODES, vars(aeskit))
    if problems:
        raise pytest.UsageError("aeskit's modes and classes disagree: " + "; ".join(problems))
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistBackends(), "aeskit-xdist-backends")


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workeroutput"):   # an xdist worker
        session.config.workeroutput["aeskit_backends"] = sorted(_backends_run)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    ran = sorted(f"{b} (emulated)" if b in EMULATED else b for b in _backends_run)
    terminalreporter.write_line(f"aeskit backends exercised: {', '.join(ran) or 'none'}")
    not_run = sorted(set(BACKENDS) - _backends_run)
    if not_run and _backends_run:
        terminalreporter.write_line(f"aeskit backends available but NOT exercised: {not_run}")


@pytest.fixture(scope="session", autouse=True)
def _required_backends_present():
    missing = missing_backends()
    if missing:
        pytest.fail("backend(s) missing: " + "; ".join(missing),
                    pytrace=False)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request):
    _backends_run.add(request.param)
    return request.param


@pytest.fixture(scope="session")
def backends_info():
    return aeskit.backends()
