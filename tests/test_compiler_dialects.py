"""The C core reads the same for GCC, clang, MSVC and clang-cl: compiler.h holds what differs.

1. A lint over src/aeskit/_c. Outside compiler.h:
   - no file tests ``__GNUC__`` or ``_MSC_VER``;
   - none spells ``__attribute__``, ``_Pragma`` or ``#pragma GCC``;
   - ``__builtin_`` appears only in power8.c, whose crypto builtins are POWER's
     intrinsics and which only GCC and clang target;
   - inline asm stands only inside an ``#if`` that names AESKIT_GNU_ASM (or PROBE_CHAINS,
     which is defined only with it).
2. MSVC's dialect, checked by clang posing as MSVC. It targets x86_64-pc-windows-msvc with
   -fms-compatibility and with ``__clang__`` and ``__GNUC__`` undefined, so compiler.h
   takes its ``_MSC_VER`` branch. It checks every core file with -fsyntax-only -Werror;
   the C library's few declarations come from tests/msvc/include, as there is no Windows
   SDK here.
   - Left out: the Python glue (no Windows Python headers here). probe.c's Windows
     clocks are declared by a stub windows.h here; mingw-w64 builds them against the real
     headers and links them (tests/cross/run.sh win64).
   - -Wvla: MSVC has no variable-length arrays, which clang would accept here.
   - A control shows that the branch taken is MSVC's.
   - This checks what the code says to an MSVC front end, not MSVC itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "src" / "aeskit" / "_c"
STUBS = ROOT / "tests" / "msvc" / "include"

FORBIDDEN = re.compile(r"__GNUC__|_MSC_VER|__attribute__|_Pragma|#\s*pragma\s+GCC")
ASM = re.compile(r"\b__asm__\b|\basm\s*\(")
GUARDS = ("AESKIT_GNU_ASM", "PROBE_CHAINS")


def _sources():
    return sorted(p for p in CSRC.rglob("*") if p.suffix in (".c", ".h")
                  and p.name != "compiler.h")


def _strip_comments(text: str) -> str:
    """The text with comments blanked (newlines kept, so line numbers hold)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text,
                  flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def _lint(path: Path, base: Path = ROOT) -> list[str]:
    found = []
    stack: list[str] = []   # the conditions of the enclosing #if/#ifdef blocks
    for n, line in enumerate(_strip_comments(path.read_text()).splitlines(), 1):
        where = f"{path.relative_to(base)}:{n}"
        d = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if d:
            kind, cond = d.groups()
            if kind in ("if", "ifdef", "ifndef"):
                stack.append(f"{kind} {cond}")
            elif kind == "endif":
                stack.pop()
            elif stack:
                # the #else or #elif of a guard is not guarded by it
                stack[-1] = f"{kind} {cond}"
        if FORBIDDEN.search(line):
            found.append(f"{where}: {line.strip()}")
        if "__builtin_" in line and path.name != "power8.c":
            found.append(f"{where}: {line.strip()}")
        if ASM.search(line) and not any(
                g in c for c in stack if c.startswith(("if ", "ifdef ", "elif "))
                for g in GUARDS):
            found.append(f"{where}: inline asm outside #if AESKIT_GNU_ASM: {line.strip()}")
    return found


def test_compiler_specifics_live_in_compiler_h():
    found = [f for p in _sources() for f in _lint(p)]
    assert not found, "compiler-specific code outside compiler.h:\n" + "\n".join(found)


def test_the_lint_sees_what_it_forbids(tmp_path):
    """A control: each forbidden spelling, and an unguarded asm, is reported."""
    bad = tmp_path / "bad.c"
    bad.write_text("#if defined(__GNUC__)\n#endif\n"
                   "static __attribute__((unused)) int a;\n"
                   "_Pragma(\"GCC unroll 4\")\n"
                   "int b(void) { return __builtin_popcount(3); }\n"
                   "void c(void) { __asm__ volatile(\"\"); }\n"
                   "#if defined(AESKIT_GNU_ASM)\nvoid d(void) { __asm__(\"\"); }\n"
                   "#else\nvoid e(void) { __asm__(\"\"); }\n#endif\n")
    found = _lint(bad, tmp_path)
    assert [f.split(":")[1] for f in found] == ["1", "3", "4", "5", "6", "10"], found


# ---- MSVC's dialect ---------------------------------------------------------------------

X86 = ["-maes", "-mpclmul", "-mssse3", "-msse4.1"]
WIDE = [*X86, "-mavx", "-mavx2", "-mvaes", "-mvpclmulqdq"]
FLAGS = {
    "aesni.c": X86,
    "aesni_avx.c": [*X86, "-mavx"],
    "vaes_avx2.c": WIDE,
    "vaes_avx512.c": [*WIDE, "-mavx512f", "-mavx512bw", "-mavx512vl", "-mbmi2"],
}
# the other families' backends
SKIP = {"armv8_ce.c", "power8.c"}


@pytest.fixture(scope="module")
def msvc_clang():
    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("clang not found (Debian's clang)")

    def check(src: Path, extra=()) -> subprocess.CompletedProcess[str]:
        cmd = [clang, "--target=x86_64-pc-windows-msvc", "-fms-compatibility",
               "-fms-extensions", "-ffreestanding", "-fsyntax-only", "-std=c11",
               "-Wall", "-Wextra", "-Wvla", "-Werror", "-U__clang__", "-U__GNUC__",
               "-idirafter", str(STUBS), f"-I{CSRC}", "-DAESKIT_HAVE_X86", *extra,
               str(src)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    return check


def test_msvc_branch_is_the_one_checked(msvc_clang, tmp_path):
    src = tmp_path / "probe.c"
    src.write_text('#include "compiler.h"\n'
                   "#if defined(AESKIT_GNU_ASM) || !defined(_MSC_VER)\n#error GNU\n#endif\n"
                   "AESKIT_NOINLINE static int f(void) { return 1; }\n"
                   "int g(void) { return f(); }\n")
    res = msvc_clang(src)
    assert res.returncode == 0, res.stderr
    src.write_text('#include "compiler.h"\n#if !defined(AESKIT_GNU_ASM)\n#error MSVC\n#endif\n')
    res = msvc_clang(src)
    assert res.returncode != 0 and "#error MSVC" in res.stderr


@pytest.mark.parametrize("src", [p for p in sorted(CSRC.glob("*.c")) + sorted(
    (CSRC / "modes").glob("*.c")) + sorted((CSRC / "backends").glob("*.c"))
    if p.name not in SKIP], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_core_reads_as_msvc(msvc_clang, src):
    res = msvc_clang(src, FLAGS.get(src.name, ()))
    assert res.returncode == 0, res.stderr
