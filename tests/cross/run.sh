#!/usr/bin/env bash
# Build the C core's self-test (tests/cross/selftest.c) for ARCH and run it:
#
#   bash tests/cross/run.sh aarch64   cross-built, under qemu-aarch64
#   bash tests/cross/run.sh ppc64le   cross-built, under qemu-ppc64le
#   bash tests/cross/run.sh ppc64     cross-built, under qemu-ppc64 (big-endian)
#   bash tests/cross/run.sh win64     x86-64 Windows: cross-built by mingw-w64, under
#                                     wine64 (see below)
#   bash tests/cross/run.sh native [ARGS]  this machine's cc (x86-64: aesni and the
#                                     vaes backends it has, and portable); ARGS go
#                                     to the self-test (--negative-control)
#   EMULATE_WIDE=1 bash tests/cross/run.sh native   x86-64 only: the vaes backends
#                                     on emulated VAES, VPCLMULQDQ and AVX-512
#                                     (tests/emu/vaes_emu.h, as meson's emulate_wide
#                                     option): their logic where the CPU lacks them
#
# A cross run installs what it lacks from Debian (one apt-get update, one
# apt-get install: the cross gcc and qemu-user), links statically (no target
# libc needed at run time) and runs the program twice:
#   - on a CPU model with the features: the new backend must be picked and
#     every slot match portable (-cpu max on aarch64, -cpu power9 on POWER);
#   - without them: portable must be picked. Big-endian POWER: -cpu power7
#     (no vcipher). aarch64 and ppc64le: every CPU model that can run the
#     program has the instructions (ppc64le's ABI starts at POWER8), so the
#     self-test's --mask-hwcap clears the bits (AT_HWCAP's AES and PMULL,
#     AT_HWCAP2's VEC_CRYPTO) before detection; ppc64 runs that too.
# win64 builds the x86 backends and portable as meson.build does (and probe.c,
# linked for its Windows clocks), links a static PE executable and runs it
# under Debian's wine64 in a fresh prefix: wine runs the instructions on this
# CPU, so the program's own CPUID and XGETBV detection picks the backends,
# and every x86 backend this CPU has (from /proc/cpuinfo's flags, which the
# kernel lists only with their register state enabled) must be available,
# the best of them picked, and each checked against portable. Then the
# negative control, which must fail.
# Under emulation this checks the logic (every slot, every length, every
# known answer, both byte orders, dispatch); speed needs the real CPU
# (`aeskit bench` there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
csrc="$root/src/aeskit/_c"
arch=${1:?usage: run.sh aarch64|ppc64le|ppc64|win64|native}

case "$arch" in
aarch64) triple=aarch64-linux-gnu;     qemu=qemu-aarch64; def=-DAESKIT_HAVE_ARMV8
         cpu_on=max;    best_on=armv8_ce ;;
ppc64le) triple=powerpc64le-linux-gnu; qemu=qemu-ppc64le; def=-DAESKIT_HAVE_POWER8
         cpu_on=power9; best_on=power8 ;;
ppc64)   triple=powerpc64-linux-gnu;   qemu=qemu-ppc64;   def=-DAESKIT_HAVE_POWER8
         cpu_on=power9; best_on=power8 ;;
win64)   triple=x86_64-w64-mingw32;    qemu="" ;;
native)  triple=""; qemu="" ;;
*) echo "run.sh: unknown ARCH '$arch' (aarch64, ppc64le, ppc64, win64, native)" >&2; exit 2 ;;
esac

# Debian's wine64 puts its loader and server under /usr/lib/wine; the wine
# package adds /usr/bin wrappers
wine_bin() {   # wine_bin NAME: the path of wine's NAME program, or nothing
    local p
    for p in "/usr/lib/wine/$1" "$(command -v "$1" 2>/dev/null)"; do
        if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return; fi
    done
}
if [ "$arch" = win64 ]; then
    cc=$triple-gcc
    if ! command -v "$cc" >/dev/null || [ -z "$(wine_bin wine64)" ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq gcc-mingw-w64-x86-64 wine64 >/dev/null
    fi
elif [ -n "$triple" ]; then
    cc=$triple-gcc
    if ! command -v "$cc" >/dev/null || ! command -v "$qemu" >/dev/null; then
        # the package is gcc-TRIPLE; qemu-user holds every qemu-ARCH
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "gcc-$triple" qemu-user >/dev/null
    fi
else
    cc=${CC:-gcc}
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-O2 -std=c11 -Wall -Wextra -Werror -I"$csrc")
# shellcheck source=tests/cross/sources.sh
. "$here/sources.sh"
core=("${aeskit_core[@]}" "$here"/selftest.c)
objs=() pids=()
compile() {   # compile FILE EXTRA_FLAGS...: in the background, waited for below
    local src=$1 obj
    shift
    obj="$out/$(basename "$src" .c).o"
    "$cc" "${flags[@]}" "$@" -c "$src" -o "$obj" &
    pids+=("$!")
    objs+=("$obj")
}

case "$arch" in
aarch64)
    for f in "${core[@]}"; do compile "$f" $def; done
    compile "$csrc"/backends/armv8_ce.c $def ;;
ppc64le|ppc64)
    for f in "${core[@]}"; do compile "$f" $def; done
    compile "$csrc"/backends/power8.c $def -mcpu=power8 -maltivec -mvsx ;;
win64)
    for f in "${core[@]}" "$csrc"/probe.c; do compile "$f" -DAESKIT_HAVE_X86; done
    aeskit_x86_backends compile 0 ;;
native)
    case "$(uname -m)" in
    x86_64|amd64)
        for f in "${core[@]}"; do compile "$f" -DAESKIT_HAVE_X86; done
        aeskit_x86_backends compile "${EMULATE_WIDE:-0}" ;;
    aarch64|arm64)
        for f in "${core[@]}"; do compile "$f" -DAESKIT_HAVE_ARMV8; done
        compile "$csrc"/backends/armv8_ce.c -DAESKIT_HAVE_ARMV8 ;;
    ppc64|ppc64le)
        for f in "${core[@]}"; do compile "$f" -DAESKIT_HAVE_POWER8; done
        compile "$csrc"/backends/power8.c -DAESKIT_HAVE_POWER8 -mcpu=power8 -maltivec -mvsx ;;
    *)
        for f in "${core[@]}"; do compile "$f"; done ;;
    esac ;;
esac

failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if [ "$failed" = 1 ]; then echo "run.sh: a compile failed (above)" >&2; exit 1; fi
exe="$out/selftest"
if [ "$arch" = win64 ]; then
    exe="$exe.exe"
    "$cc" -static -o "$exe" "${objs[@]}"
    wine=$(wine_bin wine64)
    export WINEPREFIX="$out/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
    # the backends this CPU has: each one's cpu_needs, as /proc/cpuinfo names them
    cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    has_all() { local f; for f in "$@"; do
        case "$cpu_flags" in *" $f "*) ;; *) return 1 ;; esac; done; }
    expect=() best=portable
    ni=(aes pclmulqdq ssse3 sse4_1)
    if has_all "${ni[@]}"; then expect+=(aesni); best=aesni; fi
    if has_all "${ni[@]}" avx avx2 vaes vpclmulqdq; then expect+=(vaes_avx2); best=vaes_avx2; fi
    if has_all "${ni[@]}" avx avx2 vaes vpclmulqdq avx512f avx512bw avx512vl bmi2; then
        expect+=(vaes_avx512); best=vaes_avx512
    fi
    echo "== win64 under $wine: $best expected; checked against portable: ${expect[*]:-none}"
    # the prefix made first, so that its messages stay out of the log
    "$wine" wineboot.exe -i >/dev/null 2>&1 || true
    # wine reads a Unix path as one on its Z: drive
    status=0
    "$wine" "$exe" "Z:$root/tests/vectors" --expect-best "$best" >"$out/log" 2>&1 || status=$?
    tr -d '\r' <"$out/log" >"$out/log.txt"
    missing=""
    for b in "${expect[@]}"; do
        grep -Eq "^$b +[0-9]+ checks\$" "$out/log.txt" || missing="$missing $b"
    done
    "$wine" "$exe" "Z:$root/tests/vectors" --negative-control >"$out/neg" 2>&1 && neg=0 || neg=$?
    "$(wine_bin wineserver)" -k 2>/dev/null || true
    grep -v '^[0-9]* passed, [0-9]* failed$' "$out/log.txt" || true
    if [ -n "$missing" ]; then
        echo "FAIL: backends this CPU has, not checked under Windows:$missing" >&2; status=1
    fi
    if [ "$neg" != 1 ] || ! grep -q 'FAIL slot \[broken\] ctr' "$out/neg"; then
        echo "FAIL: the negative control did not fail (exit $neg)" >&2; status=1
    else
        echo "negative control: failed as it must"
    fi
    # the last line: the self-test's count, the missing backends and a negative
    # control that passed counted as failures
    read -r p f < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$out/log.txt" | tail -1)
    p=${p:-0} f=${f:-0}
    [ "$status" = 0 ] || [ "$f" != 0 ] || f=1
    echo "$p passed, $f failed"
    exit "$status"
elif [ -n "$triple" ]; then
    "$cc" -static -o "$exe" "${objs[@]}"
    echo "== $arch, qemu -cpu $cpu_on: $best_on expected"
    "$qemu" -cpu "$cpu_on" "$exe" "$root/tests/vectors" --expect-best "$best_on"
    echo "== $arch, qemu -cpu $cpu_on, the features masked out of the HWCAP words: portable expected"
    "$qemu" -cpu "$cpu_on" "$exe" "$root/tests/vectors" --mask-hwcap --expect-best portable
    if [ "$arch" = ppc64 ]; then
        echo "== $arch, qemu -cpu power7 (no vcipher): portable expected"
        "$qemu" -cpu power7 "$exe" "$root/tests/vectors" --expect-best portable
    fi
else
    "$cc" -o "$exe" "${objs[@]}"
    if [ -n "${SELFTEST_EXE:-}" ]; then cp "$exe" "$SELFTEST_EXE"; fi   # kept, for reruns
    "$exe" "$root/tests/vectors" "${@:2}"
fi
