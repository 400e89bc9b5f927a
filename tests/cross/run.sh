#!/usr/bin/env bash
# Build the C core's self-test (tests/cross/selftest.c) for ARCH and run it:
#
#   bash tests/cross/run.sh aarch64   cross-built, under qemu-aarch64
#   bash tests/cross/run.sh ppc64le   cross-built, under qemu-ppc64le
#   bash tests/cross/run.sh ppc64     cross-built, under qemu-ppc64 (big-endian)
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
# Under emulation this checks the logic (every slot, every length, every
# known answer, both byte orders, dispatch); speed needs the real CPU
# (`aeskit bench` there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
csrc="$root/src/aeskit/_c"
arch=${1:?usage: run.sh aarch64|ppc64le|ppc64|native}

case "$arch" in
aarch64) triple=aarch64-linux-gnu;     qemu=qemu-aarch64; def=-DAESKIT_HAVE_ARMV8
         cpu_on=max;    best_on=armv8_ce ;;
ppc64le) triple=powerpc64le-linux-gnu; qemu=qemu-ppc64le; def=-DAESKIT_HAVE_POWER8
         cpu_on=power9; best_on=power8 ;;
ppc64)   triple=powerpc64-linux-gnu;   qemu=qemu-ppc64;   def=-DAESKIT_HAVE_POWER8
         cpu_on=power9; best_on=power8 ;;
native)  triple=""; qemu="" ;;
*) echo "run.sh: unknown ARCH '$arch' (aarch64, ppc64le, ppc64, native)" >&2; exit 2 ;;
esac

if [ -n "$triple" ]; then
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
if [ -n "$triple" ]; then
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
