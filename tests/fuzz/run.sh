#!/usr/bin/env bash
# Build the libFuzzer harness (tests/fuzz/fuzz_core.c) over the C core with
# clang -fsanitize=fuzzer,address,undefined, replay the regression inputs
# (tests/fuzz/regress/), then fuzz from the seed corpus (tests/fuzz/corpus/)
# for a fixed number of executions or of seconds, whichever ends first:
#
#   bash tests/fuzz/run.sh            build, replay, fuzz (CI's step)
#   bash tests/fuzz/run.sh ARGS...    build, replay, then fuzz with ARGS passed
#                                     to libFuzzer as well (e.g. -max_len=1024)
#
# Environment:
#   EMULATE_WIDE=1|2|0  the vaes backends on emulated VAES, VPCLMULQDQ and
#                     AVX-512 (tests/emu/vaes_emu.h), vaes_avx512 alone on it
#                     (2: tests/cross/sources.sh), or native; unset: native
#                     where the CPU has them, else emulated, vaes_avx2 natively
#                     where the CPU has VAES and VPCLMULQDQ (so the wide kernels
#                     are fuzzed on any x86-64 with AES-NI and AVX2)
#   FUZZ_RUNS=N       executions at most (default 100000, 50000 with both vaes
#                     backends emulated: see below)
#   FUZZ_SECONDS=N    seconds at most for them (default 100), shared as the
#                     executions are
#   FUZZ_JOBS=N       fuzzing processes side by side, each with 1/N of the
#                     executions and seconds (default 2: CI's machines have 2
#                     cores; 1: one process, as before)
#   FUZZ_SEED=N       libFuzzer's -seed of the first process, +1 for the next
#                     (default: random, printed)
#   FUZZ_OUT=DIR      binary, objects, corpus and artifacts (default build/fuzz)
#   CC                the clang to use (default clang)
#
# A crash, a sanitizer report or a mismatch (the harness aborts with what
# differed) fails the script; the input is saved under FUZZ_OUT/artifacts/
# and printed in base64 (CI's machine is gone afterwards): to replay it,
# `base64 -d > crash; build/fuzz/fuzz_core crash`. The log's end gives the
# executions per second and the coverage (cov: edges).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
csrc="$root/src/aeskit/_c"
cc=${CC:-clang}
out=${FUZZ_OUT:-$root/build/fuzz}
start=$(date +%s)

# The wide backends natively where the CPU has them, else on the emulation.
x86=0
case "$(uname -m)" in x86_64|amd64) x86=1 ;; esac
# shellcheck source=tests/cross/sources.sh
. "$root/tests/cross/sources.sh"
emulate=${EMULATE_WIDE:-}
if [ "$x86" = 1 ] && [ -z "$emulate" ]; then emulate=$(aeskit_wide_emulation); fi

# Executions: 830 to 970 a second on a Zen 4 (2 shared cores), native or
# emulated alike, so 100000 take about 2 minutes. A Zen 2 has no VAES, so it
# builds the emulated kernels (about 70 s here against 30) and runs slower per
# execution: 50000 keep it within about 3 minutes with the build.
if [ "$emulate" = 1 ]; then runs=${FUZZ_RUNS:-50000}; else runs=${FUZZ_RUNS:-100000}; fi
# ... or FUZZ_SECONDS of them, whichever ends first: on a Zen 3 (vaes_avx512
# emulated) the harness ran 183-194 executions a second, where 100000 would
# take 9 minutes; CI keeps the step within its 4.
seconds=${FUZZ_SECONDS:-100}

rm -rf "$out/obj" "$out/corpus"
mkdir -p "$out/obj" "$out/corpus" "$out/artifacts"
san=(-fsanitize=address,undefined -fno-sanitize-recover=all)
# -g1 (line tables): reports still name file and line, and the emulated
# vaes_avx512.c compiles in 97 s instead of 171 (Zen 3, clang 14)
flags=(-O2 -g1 -std=c11 -Wall -Wextra -Werror -fno-omit-frame-pointer "${san[@]}"
       -fsanitize=fuzzer-no-link -I"$csrc")
objs=() pids=()
compile() {   # compile FILE EXTRA_FLAGS...: in the background, waited for below
    local src=$1 obj extra=()
    shift
    obj="$out/obj/$(basename "$src" .c).o"
    # UBSan's pointer-overflow check on the vaes kernels' unrolled code takes
    # clang a minute a file (4-5 s without it); ASan bounds those pointers anyway
    case "$src" in */vaes_*) extra=(-fno-sanitize=pointer-overflow) ;; esac
    "$cc" "${flags[@]}" "${extra[@]}" "$@" -c "$src" -o "$obj" &
    pids+=("$!")
    objs+=("$obj")
    # two at a time: the machine has two cores
    if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || failed=1; pids=("${pids[@]:1}"); fi
}
failed=0
if [ "$x86" = 1 ]; then
    # the backends first, the slowest of them first (sources.sh)
    aeskit_x86_backends compile "$emulate"
    for f in "${aeskit_core[@]}"; do compile "$f" -DAESKIT_HAVE_X86; done
    # the harness asks for every backend the build has: none may be missing
    expect="aesni vaes_avx2 vaes_avx512"
    case "$emulate" in
    1) what="vaes backends EMULATED" ;;
    2) what="vaes_avx2 native, vaes_avx512 EMULATED" ;;
    *) what="vaes backends native" ;;
    esac
else
    for f in "${aeskit_core[@]}"; do compile "$f"; done
    expect="" what="portable only (no x86-64)"
fi
compile "$here/fuzz_core.c"
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if [ "$failed" = 1 ]; then echo "fuzz/run.sh: a compile failed (above)" >&2; exit 1; fi
exe="$out/fuzz_core"
"$cc" "${san[@]}" -fsanitize=fuzzer -o "$exe" "${objs[@]}"
echo "fuzz: built $exe ($what) in $(( $(date +%s) - start )) s"

export FUZZ_EXPECT_BACKENDS="$expect"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The inputs that once failed, each run once.
regress=()
for f in "$here"/regress/*; do [ -f "$f" ] && regress+=("$f"); done
if [ "${#regress[@]}" -gt 0 ]; then
    if ! "$exe" "${regress[@]}" > "$out/regress.log" 2>&1; then
        tail -n 60 "$out/regress.log"
        echo "fuzz: a regression input fails again (above)" >&2
        exit 1
    fi
    echo "fuzz: ${#regress[@]} regression inputs replayed, all pass"
fi

# The negative control: a copy of portable with one flipped bit in the ctr
# slot's tenth block, which the seeds must catch (a mismatch or a property).
rm -rf "$out/control" && mkdir -p "$out/control"
if FUZZ_NEGATIVE_CONTROL=1 "$exe" -runs=0 -artifact_prefix="$out/control/" "$here/corpus" \
        > "$out/control.log" 2>&1 \
        || ! grep -q "backend negative_control" "$out/control.log"; then
    tail -n 30 "$out/control.log"
    echo "fuzz: the negative control was not caught: the harness is blind" >&2
    exit 1
fi
echo "fuzz: negative control caught ($(grep -m1 -o 'mode [A-Z0-9-]*, backend negative_control' \
    "$out/control.log"))"

# The run: new inputs go to FUZZ_OUT/corpus, the committed seeds are only read.
# FUZZ_JOBS processes side by side (one a core), each with its share of the
# executions and of the seconds, and its own seed (FUZZ_SEED+j when given):
# the same executions as one process in 1/FUZZ_JOBS of the time.
jobs=${FUZZ_JOBS:-2}
job_runs=$(( (runs + jobs - 1) / jobs )) job_secs=$(( (seconds + jobs - 1) / jobs ))
echo "fuzz: $runs executions or $seconds s from $(find "$here/corpus" -type f | wc -l) seeds," \
    "in $jobs processes of $job_runs or $job_secs s"
t0=$(date +%s)
fuzz_pids=()
for ((j = 0; j < jobs; j++)); do
    seed=()
    [ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$((FUZZ_SEED + j))")
    "$exe" -runs="$job_runs" -max_total_time="$job_secs" -max_len=256 -timeout=30 \
        -print_final_stats=1 "${seed[@]}" -artifact_prefix="$out/artifacts/" "$@" \
        "$out/corpus" "$here/corpus" > "$out/fuzz.$j.log" 2>&1 &
    fuzz_pids+=("$!")
done
status=0 failed_logs=()
for ((j = 0; j < jobs; j++)); do
    st=0
    wait "${fuzz_pids[$j]}" || st=$?
    if [ "$st" != 0 ]; then status=$st failed_logs+=("$out/fuzz.$j.log"); fi
done
secs=$(( $(date +%s) - t0 ))
if [ "$status" != 0 ]; then
    for log in "${failed_logs[@]}"; do tail -n 80 "$log"; done
    for f in "$out"/artifacts/*; do
        [ -f "$f" ] || continue
        echo "fuzz: the failing input, $f, in base64:"
        base64 -w 0 "$f"
        echo
    done
    echo "fuzz: FAILED after $secs s (exit $status); the log(s): ${failed_logs[*]}" >&2
    exit 1
fi
done_runs=0
for ((j = 0; j < jobs; j++)); do
    log="$out/fuzz.$j.log"
    grep -E '^(INFO: Seed|fuzz_core:)|INITED|DONE|^stat::' "$log"
    n=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    done_runs=$((done_runs + ${n:-0}))
done
echo "fuzz: $done_runs executions in $secs s ($jobs processes), no failure"
