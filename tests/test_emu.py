"""The test-only emulation of VAES, VPCLMULQDQ and AVX-512 (tests/emu/vaes_emu.h).

The meson option emulate_wide builds vaes_avx2 and vaes_avx512 on it (=true; =avx512:
vaes_avx512 alone, vaes_avx2 native, where the CPU has VAES and VPCLMULQDQ), so that the rest
of the suite can run their kernels on a CPU without those instructions. Here: the
emulation itself against scalar models of Intel's pseudo-code (tests/emu/test_emu.c),
that it covers every such intrinsic the vaes sources use, and that one it does not cover
is a compile error rather than a silent fallback. Plain C programs, built with the
flags the emulated build uses; they need x86-64 with AES-NI, PCLMULQDQ and AVX2, and a C
compiler (otherwise skipped).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import cpuinfo_flags, is_x86_64

ROOT = Path(__file__).resolve().parent.parent
EMU = ROOT / "tests" / "emu"
SHIM = EMU / "vaes_emu.h"
SELFTEST = EMU / "test_emu.c"
BACKENDS = ROOT / "src" / "aeskit" / "_c" / "backends"
# What meson.build's emulate_wide passes (vaes_avx512 adds -mbmi2, unused by the shim).
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-psabi", "-maes", "-mpclmul",
         "-mssse3", "-msse4.1", "-mavx", "-mavx2"]
# Intrinsics the CPU lacks where the shim is used: VAES/VPCLMULQDQ on ymm, all of zmm.
NEEDS_ISA = r"target specific option mismatch|needs isa option"
EMULATED = re.compile(r"\b(_mm512_\w+|_mm256_(?:aes\w+|clmul\w+)|__m512i|__mmask\d+)\b")


def _cc():
    if not is_x86_64():
        pytest.skip("the emulation is x86-64 only")
    flags = cpuinfo_flags()
    if flags is not None and not {"aes", "pclmulqdq", "avx2"} <= flags:
        pytest.skip("the emulation runs on AES-NI, PCLMULQDQ and AVX2")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def _mapped():
    """Names the shim #defines to an emulation."""
    return set(re.findall(r"^#define (_mm\w+|__m\w+)\b", SHIM.read_text(), re.M))


def _used():
    srcs = sorted(BACKENDS.glob("vaes_*")) + [BACKENDS / "clmul128.h"]
    return {m for p in srcs for m in EMULATED.findall(p.read_text())}


def test_shim_maps_every_wide_intrinsic_the_sources_use():
    used = _used()
    assert "_mm512_aesenc_epi128" in used and "__m512i" in used  # the regex finds them
    assert used - _mapped() == set()


def test_selftest_covers_every_mapped_name():
    text = SELFTEST.read_text()
    missing = {n for n in _mapped() if n not in text}
    assert missing == set()


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_emulation_matches_scalar_model(tmp_path, opt):
    exe = tmp_path / "test_emu"
    build = subprocess.run([_cc(), opt, *FLAGS, "-include", str(SHIM), str(SELFTEST), "-o",
                            str(exe)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    for seed in ("1", "0xC0FFEE"):
        run = subprocess.run([str(exe), seed], capture_output=True, text=True, timeout=120,
                             check=False)
        assert run.returncode == 0, run.stdout + run.stderr
        assert re.search(r"\b\d{5,} passed, 0 failed$", run.stdout.strip()), run.stdout


def _compile(tmp_path, opt, code):
    src = tmp_path / "snippet.c"
    src.write_text(code + "\n")
    return subprocess.run([_cc(), opt, *FLAGS, "-include", str(SHIM), "-c", str(src), "-o",
                           str(tmp_path / "snippet.o")], capture_output=True, text=True,
                          check=False)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("code, error", [
    # a zmm operation the shim lacks, on emulated vectors: wrong argument type
    ("__m512i f(__m512i a, __m512i b) { return _mm512_or_si512(a, b); }", "incompatible type"),
    # no emulated argument: GCC's intrinsic needs -mavx512f, which the build lacks (an
    # inline function's target mismatch, or at -O0 a macro's builtin that needs the isa)
    ("void f(void) { (void)_mm512_set1_epi32(1); }", NEEDS_ISA),
    ("unsigned f(unsigned a) { return _kand_mask16(a, 3); }", NEEDS_ISA),
    # AVX-512VL on ymm: not emulated either
    ("__m256i f(__m256i a) { return _mm256_ternarylogic_epi64(a, a, a, 0x96); }", NEEDS_ISA),
])
def test_unemulated_intrinsic_is_a_compile_error(tmp_path, opt, code, error):
    build = _compile(tmp_path, opt, code)
    assert build.returncode != 0, f"compiled: {code}"
    assert re.search(error, build.stderr), build.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_emulated_intrinsics_compile(tmp_path, opt):
    """The control for the test above: the same build takes what the shim emulates."""
    build = _compile(tmp_path, opt, """
        __m512i f(__m512i a, __m512i b, __m128i c) {
            __m512i x = _mm512_aesenc_epi128(a, _mm512_broadcast_i32x4(c));
            x = _mm512_ternarylogic_epi64(x, b, _mm512_shuffle_epi32(a, (_MM_PERM_ENUM)0x4E), 0x96);
            return _mm512_mask_sub_epi64(x, _mm512_cmplt_epu64_mask(x, b), x, b);
        }
        __m256i g(__m256i a) { return _mm256_clmulepi64_epi128(_mm256_aesdec_epi128(a, a), a, 0x11); }""")
    assert build.returncode == 0, build.stderr
