# The C core's sources without Python, and how meson.build compiles the x86
# backends: sourced by tests/cross/run.sh (the self-test) and tests/fuzz/run.sh
# (the libFuzzer harness), so that the two build what the extension builds.
# Needs $csrc (src/aeskit/_c) and $root (the checkout) set by the script.

# Every architecture's files: the dispatcher, portable, every mode.
aeskit_core=("$csrc"/common.c "$csrc"/cpu.c "$csrc"/dispatch.c
             "$csrc"/backends/aes_ct64.c "$csrc"/backends/portable.c
             "$csrc"/backends/ghash_ct64.c "$csrc"/modes/*.c)

# aeskit_x86_backends FN EMULATE: calls FN FILE FLAGS... for each x86-64
# backend file with the flags meson.build gives it (-DAESKIT_HAVE_X86, which
# the core's files need too, included). EMULATE=1 builds the two vaes files on
# tests/emu/vaes_emu.h (meson's emulate_wide): their logic on a CPU without
# VAES, VPCLMULQDQ or AVX-512. EMULATE=2 emulates vaes_avx512 alone, for a CPU
# with VAES and VPCLMULQDQ but no AVX-512 (Zen 3, Alder Lake): vaes_avx2 then
# runs natively, and a harness spends no time emulating what the CPU does.
# The files come slowest first (the emulated vaes_avx512.c takes as long as
# the rest of a sanitized build on one core), so that a caller that compiles
# two at a time starts it at once.
aeskit_x86_backends() {
    local fn=$1 emulate=$2 f
    local ni=(-DAESKIT_HAVE_X86 -maes -mpclmul -mssse3 -msse4.1)
    local emu=(-DAESKIT_EMULATE_WIDE -Wno-psabi -include "$root/tests/emu/vaes_emu.h")
    if [ "$emulate" = 1 ] || [ "$emulate" = 2 ]; then
        "$fn" "$csrc"/backends/vaes_avx512.c "${ni[@]}" -mavx -mavx2 -mbmi2 "${emu[@]}"
    else
        "$fn" "$csrc"/backends/vaes_avx512.c "${ni[@]}" -mavx -mavx2 -mvaes -mvpclmulqdq \
            -mavx512f -mavx512bw -mavx512vl -mbmi2
    fi
    if [ "$emulate" = 1 ]; then
        "$fn" "$csrc"/backends/vaes_avx2.c "${ni[@]}" -mavx -mavx2 "${emu[@]}"
    else
        "$fn" "$csrc"/backends/vaes_avx2.c "${ni[@]}" -mavx -mavx2 -mvaes -mvpclmulqdq
    fi
    "$fn" "$csrc"/backends/aesni_avx.c "${ni[@]}" -mavx
    "$fn" "$csrc"/backends/aesni.c "${ni[@]}"
}

# aeskit_wide_emulation: what EMULATE the x86 backends need on this CPU (from
# /proc/cpuinfo): 0 it has all of VAES, VPCLMULQDQ, AVX-512 (F, BW, VL) and
# BMI2; 2 it has VAES and VPCLMULQDQ only (vaes_avx2 native); 1 neither.
aeskit_wide_emulation() {
    local flags f level=0
    flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
    for f in avx512f avx512bw avx512vl bmi2; do
        case "$flags" in *" $f "*) ;; *) level=2 ;; esac
    done
    for f in vaes vpclmulqdq; do
        case "$flags" in *" $f "*) ;; *) level=1 ;; esac
    done
    echo "$level"
}
