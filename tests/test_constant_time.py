"""Constant time: every backend table valgrind can run, under memcheck with secrets undefined.

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

Portable runs in a build of its own; on x86-64, aesni in a build with the aesni sources;
and the wide tables, vaes_avx2 and vaes_avx512, in a build on their emulation
(tests/emu/vaes_emu.h, as meson's emulate_wide): valgrind runs neither VAES nor AVX-512,
so their vector operations are done lane by lane by AES-NI, PCLMULQDQ and AVX2, which it
runs. That build needs x86-64 with AES-NI, PCLMULQDQ, AVX2 and BMI2, whatever its VAES
and AVX-512. It checks the kernels' own C (every branch and address in vaes_body.h, vaes_gcm.h, vaes_ocb.h
and the width layers, as compiled for the emulation), not the native build's instruction
stream. Its objdump must show no instruction valgrind cannot run, and its negative control
is a branch on a data byte planted in a copy of the kernels' CTR tail, which memcheck must
flag at its line.

Without valgrind or a C compiler the module skips, unless AESKIT_REQUIRE_VALGRIND=1. The
aesni and wide builds skip only where the CPU cannot run them.
"""

import fcntl
import os
import re
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
    # every mode, as tests/cross/sources.sh takes them: the harness finds the
    # block-cipher modes in their registry
    *sorted((CSRC / "modes").glob("*.c")),
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


# aesni_avx.c is aesni.c under other names (aesni.h), built here without -mavx (one
# command for every file): the same C, but for GCM's inline-asm loop of AES-128
# (aesni_gcm_asm.h, VEX encodings), which only that build has: both tables are checked
X86_SOURCES = [CSRC / "backends" / name
               for name in ("aesni.c", "aesni_avx.c")]
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


@pytest.mark.parametrize("table", ["aesni", "aesni_avx"])
def test_aesni_is_constant_time(valgrind, aesni_harness, table):
    import aeskit

    if table == "aesni_avx" and not aeskit.cpu_features().get("avx"):
        pytest.skip("aesni's VEX build needs AVX (with the OS's YMM state)")
    _check_table(valgrind, aesni_harness, table)


def test_aesni_negative_control_is_flagged(valgrind, aesni_harness):
    res = _run([valgrind, *VALGRIND_ARGS, str(aesni_harness), "--table", "aesni",
                "--negative-control"])
    assert res.returncode == 42 and "negative_control" in res.stderr, res.stderr


# ---- the wide tables on the emulation ----------------------------------------------
#
# vaes_avx2.c and vaes_avx512.c built as meson's emulate_wide builds them (meson.build,
# tests/cross/run.sh): tests/emu/vaes_emu.h forced in, no -mvaes, -mvpclmulqdq or
# -mavx512*, so that every VAES, VPCLMULQDQ and AVX-512 operation is done by AES-NI,
# PCLMULQDQ and AVX2 instructions, which valgrind runs. -g1 (lines, not variables): a
# third of -g's compile time, and memcheck still names file and line.
WIDE = ("vaes_avx2", "vaes_avx512")
BACKENDS = CSRC / "backends"
EMU_FLAGS = ["-mavx", "-mavx2", "-DAESKIT_EMULATE_WIDE", "-Wno-psabi",
             "-include", str(ROOT / "tests" / "emu" / "vaes_emu.h")]
# XAES-256-GCM builds the whole GHASH key per message from VAES_GCM_WHOLE_KEY data blocks
# (thousands); the harness's messages (MAXLEN, 264 blocks) cross it at 64.
EMU_FLAGS += ["-DVAES_GCM_WHOLE_KEY=64"]
WIDE_FLAGS = {"vaes_avx2": EMU_FLAGS, "vaes_avx512": [*EMU_FLAGS, "-mbmi2"]}
# What the emulated build runs on (aeskit.cpu_features() names; the OS's YMM state
# included): whatever the CPU's VAES and AVX-512.
EMU_NEEDS = ("aes", "pclmulqdq", "ssse3", "sse4.1", "avx", "avx2", "bmi2")
# Instructions valgrind 3.19 cannot run: VAES or VPCLMULQDQ on ymm, anything on zmm or
# a mask register.
UNRUNNABLE = re.compile(r"\b(vaes\w+|vpclmul\w+)\s[^#]*%ymm|%zmm|%k[0-7]\b")
WIDE_TIMEOUT = 600   # compiling the emulated zmm kernels takes 15-40 s on 2 busy cores


def _compile(cmd, cwd=None):
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait(procs):
    for cmd, proc in procs:
        _, err = proc.communicate(timeout=WIDE_TIMEOUT)
        if proc.returncode != 0:
            pytest.fail(f"wide harness build failed: {' '.join(cmd)}\n{err}", pytrace=False)


def _wide_object(cc, src, table, out):
    return [cc, "-O2", "-g1", "-std=c11", *X86_FLAGS, *WIDE_FLAGS[table], f"-I{CSRC}",
            f"-I{BACKENDS}", "-c", str(src), "-o", str(out)]


@pytest.fixture(scope="module")
def wide_build(tmp_path_factory, valgrind):
    """The harness with aesni and both wide tables on the emulation; returns the
    executable and its directory (the objects, for the planted build below). Built once
    per session: pytest-xdist's workers share it, the first building it under a lock."""
    import platform

    import aeskit

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the vaes backends are x86-64 only")
    features = aeskit.cpu_features()
    lacking = [f for f in EMU_NEEDS if not features.get(f)]
    if lacking:
        pytest.skip(f"the emulated vaes build needs {', '.join(lacking)}")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        _unavailable("no C compiler (cc/gcc) found")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # a worker's base temp is the session's, one level down
        out = tmp_path_factory.getbasetemp().parent / "ct_wide"
        out.mkdir(exist_ok=True)
    else:
        out = tmp_path_factory.mktemp("ct_wide")
    exe = out / "ct_harness_wide"
    with open(out / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            core = [cc, "-O2", "-g", "-std=c11", *X86_FLAGS, "-DAESKIT_EMULATE_WIDE",
                    f"-I{CSRC}", "-c", *map(str, SOURCES + X86_SOURCES)]
            cmds = [core] + [_wide_object(cc, BACKENDS / f"{t}.c", t, out / f"{t}.o")
                             for t in WIDE]
            _wait([(cmd, _compile(cmd, cwd=out)) for cmd in cmds])
            _link(cc, out, exe, [out / f"{t}.o" for t in WIDE])
    return exe, out


def _link(cc, out, exe, wide_objects):
    objs = [out / f"{src.stem}.o" for src in SOURCES + X86_SOURCES] + wide_objects
    cmd = [cc, "-o", str(exe), *map(str, objs)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if res.returncode != 0:
        pytest.fail(f"wide harness link failed: {' '.join(cmd)}\n{res.stderr}", pytrace=False)


def _unrunnable(exe):
    """Lines of exe's disassembly that valgrind cannot run."""
    objdump = shutil.which("objdump")
    if objdump is None:
        _unavailable("objdump not found (binutils)")
    res = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(exe)], capture_output=True,
                         text=True, timeout=TIMEOUT, check=True)
    return [line for line in res.stdout.splitlines() if UNRUNNABLE.search(line)]


def test_wide_build_has_no_vaes_or_avx512(wide_build, tmp_path):
    """The emulated build holds no instruction valgrind cannot run (which would stop it
    with SIGILL); the pattern finds them where they are (a control)."""
    assert _unrunnable(wide_build[0]) == []
    control = tmp_path / "control.o"
    cc = shutil.which("cc") or shutil.which("gcc")
    res = subprocess.run(
        [cc, "-c", "-x", "assembler", "-", "-o", str(control)],
        input="vaesenc %ymm0, %ymm1, %ymm2\nvpclmulqdq $0, %ymm0, %ymm1, %ymm2\n"
              "vpxord %zmm0, %zmm1, %zmm2\nkmovw %k1, %eax\n",
        capture_output=True, text=True, timeout=TIMEOUT)
    assert res.returncode == 0, f"the control does not assemble: {res.stderr}"
    assert len(_unrunnable(control)) == 4


@pytest.mark.parametrize("table", WIDE)
def test_wide_table_is_constant_time(valgrind, wide_build, table):
    _check_table(valgrind, wide_build[0], table)


# The planted leak: a branch on a data byte in the wide kernels' CTR tail (one vector at
# a time, vaes_ctr_single), which every CTR-based mode's last blocks take.
PLANT_ANCHOR = ("    while (n > 0) {\n"
                "        const size_t nb = n < VAES_BPV ? n : VAES_BPV;\n"
                "        const vaes_v cv = vaes_bcast(c);\n")
PLANT = "        if (src[0] & 1)   /* planted by test_constant_time.py */\n" \
        "            AESKIT_BARRIER();\n"


def test_wide_negative_control_is_flagged(valgrind, wide_build, tmp_path):
    """vaes_body.h with the planted branch, built into vaes_avx2 (the rest as above): memcheck
    must flag it at its line. The anchor is checked, so that the plant cannot go stale."""
    out = wide_build[1]
    body = (BACKENDS / "vaes_body.h").read_text()
    assert body.count(PLANT_ANCHOR) == 1, (
        "the anchor of the planted branch is no longer in vaes_body.h (vaes_ctr_single's "
        "loop): update PLANT_ANCHOR")
    at = body.index(PLANT_ANCHOR) + len(PLANT_ANCHOR)
    line = body.count("\n", 0, at) + 1
    (tmp_path / "vaes_body.h").write_text(body[:at] + PLANT + body[at:])
    src = tmp_path / "vaes_avx2.c"   # its "vaes_body.h" is then the copy beside it
    shutil.copy(BACKENDS / "vaes_avx2.c", src)
    cc = shutil.which("cc") or shutil.which("gcc")
    obj = tmp_path / "vaes_avx2.o"
    cmd = _wide_object(cc, src, "vaes_avx2", obj)
    _wait([(cmd, _compile(cmd))])
    planted = tmp_path / "ct_harness_planted"
    _link(cc, out, planted, [obj, out / "vaes_avx512.o"])
    res = _run([valgrind, *VALGRIND_ARGS, "--exit-on-first-error=yes", str(planted),
                "--table", "vaes_avx2"])
    assert res.returncode == 42 and any(f in res.stderr for f in FLAGGED), (
        f"memcheck did not flag the planted branch (exit {res.returncode}); the wide check "
        f"is blind:\n{res.stderr}")
    assert f"vaes_body.h:{line})" in res.stderr, (
        f"memcheck's first report is not the planted branch (vaes_body.h:{line}):\n{res.stderr}")
