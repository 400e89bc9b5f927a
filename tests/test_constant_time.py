"""Constant time: the backend tables under valgrind memcheck with secrets undefined.

tests/ct/ct_harness.c marks key, iv, counter, tweak and data (key wrap: the wrapped data, so
the unwrap's verdict too) undefined before every call, so memcheck reports any branch,
memory address or syscall that depends on them. That includes PKCS#7's unpadding
(modes/padding.c): the decrypted last block, valid or not, stays undefined until the
status finish returns, the one thing the glue branches on. CMAC (tags secret too, compared
as the glue compares) and EAX (nonce secret, so its counter OMAC^0(N) is) run the same way,
and so do SIV (keys, every associated-data component and the data secret; the SIV public
once sent, as the counter it starts is) and CCM (through its descriptor's seal and open, a
tampered tag's verdict kept secret). The harness is a plain C program (through the
interpreter memcheck is noisy). A negative control, a secret-indexed table lookup, must be
flagged, or the check proves nothing.

Each table runs the same cases: every mode, the AEADs, key wrap, CMAC, XTS, and every slot
of the table at block counts made from its constants, which reach each batch, half batch
and tail. Public are only what the contracts make so (aeskit.h): GCM's 12-byte nonce and
the counters it makes; a BE128 or LE32 counter where it meets the ctr slot (CTR's IV, CCM's
counters, SIV's V, GCM-SIV's tag: all in the message); never a BE32 or BE128_SECRET one
(GCM's from another nonce length, EAX's). Every table but portable is checked against
portable as it runs: each case again on portable from the same inputs, each slot call
against portable's, so a pass also says that its kernels did the work.

Portable runs in a build of its own; on x86-64 with AES-NI, aesni in a build with the
aesni sources. valgrind has no VAES or AVX-512, so the vaes backends cannot be checked
here.

Without valgrind or a C compiler the module skips, unless AESKIT_REQUIRE_VALGRIND=1. The
aesni build skips only where the CPU cannot run it.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "src" / "aeskit" / "_c"
HARNESS = ROOT / "tests" / "ct" / "ct_harness.c"
SOURCES = [
    HARNESS,
    CSRC / "backends" / "aes_ct64.c",
    CSRC / "backends" / "portable.c",
    CSRC / "backends" / "ghash_ct64.c",
    CSRC / "common.c",
    CSRC / "modes" / "generic.c",
    CSRC / "modes" / "block.c",
    CSRC / "modes" / "padding.c",
    CSRC / "modes" / "gcm.c",
    CSRC / "modes" / "ocb.c",
    CSRC / "modes" / "kw.c",
    CSRC / "modes" / "xts.c",
    CSRC / "modes" / "gcmsiv.c",
    CSRC / "modes" / "ccm.c",
    CSRC / "modes" / "cmac.c",
    CSRC / "modes" / "eax.c",
    CSRC / "modes" / "siv.c",
]
VALGRIND_ARGS = ["--error-exitcode=42", "--track-origins=yes", "-q"]
FLAGGED = ("Conditional jump or move depends on uninitialised value",
           "Use of uninitialised value")
TIMEOUT = 120


def _unavailable(reason):
    if os.environ.get("AESKIT_REQUIRE_VALGRIND") == "1":
        pytest.fail(f"AESKIT_REQUIRE_VALGRIND=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def valgrind():
    path = shutil.which("valgrind")
    if path is None:
        _unavailable("valgrind not found")
    return path


@pytest.fixture(scope="module")
def harness(tmp_path_factory, valgrind):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        _unavailable("no C compiler (cc/gcc) found")
    exe = tmp_path_factory.mktemp("ct") / "ct_harness"
    # No -DAESKIT_HAVE_X86: the portable backend alone, no dispatch or CPU code.
    cmd = [cc, "-O2", "-g", "-std=c11", f"-I{CSRC}", "-o", str(exe),
           *map(str, SOURCES)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if res.returncode != 0:
        if "valgrind/memcheck.h" in res.stderr:
            _unavailable("valgrind/memcheck.h not found (install valgrind's headers)")
        pytest.fail(f"harness build failed: {' '.join(cmd)}\n{res.stderr}", pytrace=False)
    return exe


def _run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def native_stdout(harness):
    """Outside valgrind the harness is a plain test: FIPS-197 answers and round trips."""
    res = _run([str(harness)])
    assert res.returncode == 0, f"harness failed natively:\n{res.stdout}\n{res.stderr}"
    assert "checksum:" in res.stdout
    return res.stdout


def test_portable_backend_is_constant_time(valgrind, harness, native_stdout):
    cmd = [valgrind, *VALGRIND_ARGS, str(harness)]
    res = _run(cmd)
    assert res.returncode == 0 and not any(f in res.stderr for f in FLAGGED), (
        f"memcheck flagged secret-dependent branches or addresses "
        f"(exit {res.returncode}): {' '.join(cmd)}\n{res.stderr}")
    assert res.stderr.strip() == "", res.stderr
    # same work as natively: nothing skipped or altered under valgrind
    assert res.stdout == native_stdout


def test_negative_control_is_flagged(valgrind, harness):
    cmd = [valgrind, *VALGRIND_ARGS, str(harness), "--negative-control"]
    res = _run(cmd)
    assert res.returncode == 42, (
        f"memcheck did not flag the secret-indexed lookup (exit {res.returncode}); "
        f"the constant-time check is blind:\n{res.stderr}")
    assert any(f in res.stderr for f in FLAGGED), res.stderr
    assert "negative_control" in res.stderr, res.stderr


X86_SOURCES = [CSRC / "backends" / name
               for name in ("aesni.c", "aesni_gcm.c", "aesni_ocb.c", "ghash_clmul.c")]
X86_FLAGS = ["-DAESKIT_HAVE_X86", "-maes", "-mpclmul", "-mssse3", "-msse4.1"]


@pytest.fixture(scope="module")
def aesni_harness(tmp_path_factory, valgrind):
    import platform

    import aeskit

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the aesni backend is x86-64 only")
    if "aesni" not in aeskit.backends().available:
        pytest.skip("the aesni backend is not available on this CPU")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        _unavailable("no C compiler (cc/gcc) found")
    exe = tmp_path_factory.mktemp("ct") / "ct_harness_aesni"
    cmd = [cc, "-O2", "-g", "-std=c11", *X86_FLAGS, f"-I{CSRC}", "-o", str(exe),
           *map(str, SOURCES + X86_SOURCES)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if res.returncode != 0:
        pytest.fail(f"harness build failed: {' '.join(cmd)}\n{res.stderr}", pytrace=False)
    return exe


def _check_table(valgrind, exe, table):
    """The table's cases natively (each against portable), then under memcheck: clean,
    and the same output."""
    native = _run([str(exe), "--table", table])
    assert native.returncode == 0, f"harness failed natively:\n{native.stdout}\n{native.stderr}"
    assert f"table: {table}\n" in native.stdout
    cmd = [valgrind, *VALGRIND_ARGS, str(exe), "--table", table]
    res = _run(cmd)
    assert res.returncode == 0 and not any(f in res.stderr for f in FLAGGED), (
        f"memcheck flagged secret-dependent branches or addresses "
        f"(exit {res.returncode}): {' '.join(cmd)}\n{res.stderr}")
    assert res.stdout == native.stdout


def test_aesni_is_constant_time(valgrind, aesni_harness):
    _check_table(valgrind, aesni_harness, "aesni")


def test_aesni_negative_control_is_flagged(valgrind, aesni_harness):
    res = _run([valgrind, *VALGRIND_ARGS, str(aesni_harness), "--table", "aesni",
                "--negative-control"])
    assert res.returncode == 42 and "negative_control" in res.stderr, res.stderr
