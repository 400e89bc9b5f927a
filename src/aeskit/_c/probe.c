/*
 * probe.c: what the benchmark needs to know about this CPU, measured in C
 * with no Python around it (py/bench.c wraps it).
 *
 * clock: the core clock, from a chain of dependent register-to-register adds
 * (one cycle each on every x86 core since the P6) timed against the
 * monotonic clock.
 * Turbo and frequency drift move it, so the benchmark samples it before and
 * after each operation and repeats until they agree. clock_check cross-checks
 * it with a chain of 64-bit multiplies (three cycles each) and reads the TSC
 * alongside, for information: the TSC ticks at a fixed nominal rate.
 *
 * aes, units: what the AES and carry-less multiply units allow, in core
 * cycles per instruction (chains timed against the add chain), from which
 * the benchmark derives each mode's floor per backend (bench/floor.py).
 *
 * aes_share: the AES throughput part of aes, quickly (a few ms), for the
 * benchmark to tell which of its CPUs shares its AES units with another
 * thread (an SMT sibling running a neighbour's AES code): a parallel mode
 * runs up to 1.9x slower there while a serial one does not notice.
 */
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>   /* QueryPerformanceCounter, GetThreadTimes */
#else
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include <time.h>
#endif

#include "compiler.h"
#include "dispatch.h"
#include "probe.h"

/* The chains are GNU inline asm (the compiler must not fold a chain of adds
 * or reorder one of AESENCs): x86 with GCC or clang. Elsewhere the probes
 * report nothing and the benchmark asks for --cpu-mhz. */
#if defined(AESKIT_HAVE_X86) && defined(AESKIT_GNU_ASM)
#define PROBE_CHAINS 1
#endif

#define ADDS_PER_ITER 128   /* adds per iteration of add_chain */
#define MULS_PER_ITER 128   /* multiplies per iteration of imul_chain */
/* Cycles per dependent IMUL r64, r64 on Intel since Nehalem and AMD Zen 1-5. */
#define IMUL_LATENCY 3

/* The monotonic clock: CLOCK_MONOTONIC, or on Windows the performance
 * counter (seconds and remainder are scaled apart, so that ticks x 10^9
 * cannot overflow). */
uint64_t aeskit_now_ns(void)
{
#if defined(_WIN32)
    LARGE_INTEGER t, f;
    QueryPerformanceFrequency(&f);   /* fixed at boot; a read of shared memory */
    QueryPerformanceCounter(&t);
    const uint64_t ticks = (uint64_t)t.QuadPart, rate = (uint64_t)f.QuadPart;
    return ticks / rate * 1000000000u + ticks % rate * 1000000000u / rate;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

#if defined(PROBE_CHAINS)
#include <immintrin.h>
#include <x86intrin.h>   /* __rdtsc */

/* CPU time of the calling thread: what it ran, without the time it waited.
 * Windows counts it in 100 ns units but advances it at the scheduler's tick
 * (about 15.6 ms), so there a short run's agreement test below fails more
 * often and the probe just runs more of its tries. */
static uint64_t thread_ns(void)
{
#if defined(_WIN32)
    FILETIME created, exited, kernel, user;
    GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user);
    const uint64_t k = (uint64_t)kernel.dwHighDateTime << 32 | kernel.dwLowDateTime;
    const uint64_t u = (uint64_t)user.dwHighDateTime << 32 | user.dwLowDateTime;
    return (k + u) * 100;
#else
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* The addend is a register, not an immediate: Golden Cove and later Intel
 * cores fold chains of add-immediate at rename, several per cycle (an
 * Emerald Rapids read 16 GHz from them), and no core folds a register one. */
#define ADD4 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
#define ADD32 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4

/* ns for iters x 128 dependent adds. */
static uint64_t add_chain(uint64_t iters)
{
    uint64_t x = 0, one = 1, t0 = aeskit_now_ns();
    __asm__ volatile("" : "+r"(one));   /* opaque: no constant to fold */
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile(ADD32 ADD32 ADD32 ADD32 : "+r"(x) : "r"(one));
    return aeskit_now_ns() - t0;
}

#define IMUL4 "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
#define IMUL32 IMUL4 IMUL4 IMUL4 IMUL4 IMUL4 IMUL4 IMUL4 IMUL4

/* ns for iters x 128 dependent multiplies: a second clock, on another unit
 * than the adds. The multiplier is odd and opaque to the compiler, so the
 * product never settles at 0 and nothing folds (the latency does not depend
 * on the values anyway). */
static uint64_t imul_chain(uint64_t iters)
{
    uint64_t x = 1, k = UINT64_C(0x9e3779b97f4a7c15), t0 = aeskit_now_ns();
    __asm__ volatile("" : "+r"(k));
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile(IMUL32 IMUL32 IMUL32 IMUL32 : "+r"(x) : "r"(k));
    return aeskit_now_ns() - t0;
}

/* ns for iters x 128 dependent AESENCs: the latency that bounds the
 * serial modes (CBC/CFB encryption, OFB) at rounds x latency per block. */
AESKIT_TARGET("aes,sse2") static uint64_t aesenc_chain(uint64_t iters)
{
    __m128i x = _mm_set1_epi32(0x01234567), k = _mm_set1_epi32(0x7654321);
    uint64_t t0 = aeskit_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 128; j++) {
            x = _mm_aesenc_si128(x, k);
            __asm__ volatile("" : "+x"(x));   /* keep each one in the chain */
        }
    }
    uint64_t ns = aeskit_now_ns() - t0;
    volatile int sink = _mm_cvtsi128_si32(x);
    (void)sink;
    return ns;
}

/*
 * fn(iters): ns for iters x 128 of OP over 8 independent chains, its second
 * operand cycling through 8 registers as round keys do in a real kernel:
 * the throughput that bounds the parallel modes (AES) and GHASH (carry-less
 * multiply). (One shared key register gets half the AESENC throughput on
 * Zen 4, and 4 chains of zmm VPCLMULQDQ fall short of 8.) Named
 * variables, not arrays: GCC keeps an array of eight zmm in memory, and the
 * store-to-load round trip then lengthens every chain.
 */
#define ON8(OP, k)                                                                      \
    x0 = OP(x0, k); x1 = OP(x1, k); x2 = OP(x2, k); x3 = OP(x3, k);                     \
    x4 = OP(x4, k); x5 = OP(x5, k); x6 = OP(x6, k); x7 = OP(x7, k);
#define THROUGHPUT_OPS_PER_ITER 128   /* 16 x ON8 in THROUGHPUT_PROBE's loop */
#define THROUGHPUT_PROBE(fn, tgt, vec, set1, OP, low32)                                 \
    AESKIT_TARGET(tgt) static uint64_t fn(uint64_t iters)                               \
    {                                                                                   \
        vec x0 = set1(0), x1 = set1(1), x2 = set1(2), x3 = set1(3), x4 = set1(4),       \
            x5 = set1(5), x6 = set1(6), x7 = set1(7);                                   \
        vec k0 = set1(1), k1 = set1(78), k2 = set1(155), k3 = set1(232),                \
            k4 = set1(309), k5 = set1(386), k6 = set1(463), k7 = set1(540);             \
        __asm__ volatile("" : "+v"(k0), "+v"(k1), "+v"(k2), "+v"(k3),                   \
                         "+v"(k4), "+v"(k5), "+v"(k6), "+v"(k7));                       \
        uint64_t t0 = aeskit_now_ns();                                                         \
        for (uint64_t i = 0; i < iters; i++) {                                          \
            ON8(OP, k0) ON8(OP, k1) ON8(OP, k2) ON8(OP, k3)                             \
            ON8(OP, k4) ON8(OP, k5) ON8(OP, k6) ON8(OP, k7)                             \
            ON8(OP, k0) ON8(OP, k1) ON8(OP, k2) ON8(OP, k3)                             \
            ON8(OP, k4) ON8(OP, k5) ON8(OP, k6) ON8(OP, k7)                             \
            __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3),               \
                             "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7));                   \
        }                                                                               \
        uint64_t ns = aeskit_now_ns() - t0;                                                    \
        volatile int sink = low32(x0) ^ low32(x7);                                      \
        (void)sink;                                                                     \
        return ns;                                                                      \
    }

#define LOW32_X(v) _mm_cvtsi128_si32(v)
#define LOW32_Y(v) _mm_cvtsi128_si32(_mm256_castsi256_si128(v))
#define LOW32_Z(v) _mm_cvtsi128_si32(_mm512_castsi512_si128(v))
/* Karatsuba's three products per block select 0x00, 0x11 and 0x00; 0x11
 * and mixed selectors run as fast as 0x00 on Zen 4. */
#define CLMUL_X(a, b) _mm_clmulepi64_si128((a), (b), 0x00)
#define CLMUL_Y(a, b) _mm256_clmulepi64_epi128((a), (b), 0x00)
#define CLMUL_Z(a, b) _mm512_clmulepi64_epi128((a), (b), 0x00)

THROUGHPUT_PROBE(aesenc_wide, "aes,sse2", __m128i, _mm_set1_epi32, _mm_aesenc_si128, LOW32_X)
THROUGHPUT_PROBE(vaes_ymm, "vaes,avx2", __m256i, _mm256_set1_epi32, _mm256_aesenc_epi128,
                 LOW32_Y)
THROUGHPUT_PROBE(vaes_zmm, "vaes,avx512f", __m512i, _mm512_set1_epi32, _mm512_aesenc_epi128,
                 LOW32_Z)
THROUGHPUT_PROBE(clmul_xmm, "pclmul,sse2", __m128i, _mm_set1_epi32, CLMUL_X, LOW32_X)
THROUGHPUT_PROBE(clmul_ymm, "vpclmulqdq,avx", __m256i, _mm256_set1_epi32, CLMUL_Y, LOW32_Y)
THROUGHPUT_PROBE(clmul_zmm, "vpclmulqdq,avx512f", __m512i, _mm512_set1_epi32, CLMUL_Z,
                 LOW32_Z)

/*
 * fn(iters): ns for iters x one AES-128 GCM batch's mix on 8 registers: 80
 * AES rounds over 8 chains with 24 carry-less multiplies (Karatsuba's 3 per
 * register) over 4 chains, interleaved as a fused kernel interleaves them.
 * Against 80 rounds alone, this says how many AES cycles each multiply
 * takes: on a core where they run on separate units it is about 0, on Zen 4
 * (zmm) a whole cycle each. 4 multiply chains of 6 keep 14 registers live,
 * so ymm does not spill either.
 */
#define ON4(OP, k) c0 = OP(c0, k); c1 = OP(c1, k); c2 = OP(c2, k); c3 = OP(c3, k);
#define GCM_MIX_PROBE(fn, tgt, vec, set1, AES, CLMUL, low32)                             \
    AESKIT_TARGET(tgt) static uint64_t fn(uint64_t iters)                               \
    {                                                                                   \
        vec x0 = set1(0), x1 = set1(1), x2 = set1(2), x3 = set1(3), x4 = set1(4),       \
            x5 = set1(5), x6 = set1(6), x7 = set1(7);                                   \
        vec c0 = set1(8), c1 = set1(9), c2 = set1(10), c3 = set1(11);                   \
        vec k0 = set1(1), k1 = set1(78);                                                \
        __asm__ volatile("" : "+v"(k0), "+v"(k1));                                      \
        uint64_t t0 = aeskit_now_ns();                                                         \
        for (uint64_t i = 0; i < iters; i++) {                                          \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON8(AES, k1) ON8(AES, k0) ON8(AES, k1)                         \
            __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3),               \
                             "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7));                   \
            __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3));              \
        }                                                                               \
        uint64_t ns = aeskit_now_ns() - t0;                                                    \
        volatile int sink = low32(x0) ^ low32(x7) ^ low32(c0) ^ low32(c3);              \
        (void)sink;                                                                     \
        return ns;                                                                      \
    }

GCM_MIX_PROBE(gcm_mix_xmm, "aes,pclmul,sse2", __m128i, _mm_set1_epi32, _mm_aesenc_si128,
              CLMUL_X, LOW32_X)
GCM_MIX_PROBE(gcm_mix_ymm, "vaes,vpclmulqdq,avx2", __m256i, _mm256_set1_epi32,
              _mm256_aesenc_epi128, CLMUL_Y, LOW32_Y)
GCM_MIX_PROBE(gcm_mix_zmm, "vaes,vpclmulqdq,avx512f", __m512i, _mm512_set1_epi32,
              _mm512_aesenc_epi128, CLMUL_Z, LOW32_Z)

#endif

/* Many short chains, not a few long ones: on a shared VM a neighbour on the
 * same core (another vCPU, an SMT sibling) can slow a whole 0.6 ms AESENC
 * chain, and 15 chains of 4000 iterations read an AESENC latency of 4.6-4.9
 * cycles on a Zen 3 (4 in truth) whenever the other vCPU was busy, which put
 * CBC encryption's floor above its measured speed. 120 chains of 500
 * iterations (about 0.1 ms each, 15 ms in all) find quiet windows: 3.94-3.96
 * in every one of 16 probes under the same load. */
#define PROBE_ROUNDS 120
#define PROBE_ITERS 500

#if defined(PROBE_CHAINS)
#define UNIT_FN(fn) fn
#else
#define UNIT_FN(fn) NULL
#endif

/* What unit_probe measures, the CPU bits (with OS register state, cpu.c)
 * each needs (VAES on ymm needs no ZMM state), and how many instructions
 * one iteration of PROBE_ITERS runs: the add chain's 128 make the ratio cycles
 * per instruction, or per GCM mix (80 AES + 24 multiplies). */
static const struct {
    const char *name;
    uint32_t needs;
    uint64_t (*fn)(uint64_t);
    double per_iter;
} unit_probes[] = {
    {"vaes_ymm", AESKIT_CPU_VAES | AESKIT_CPU_AVX2, UNIT_FN(vaes_ymm), 128},
    {"vaes_zmm", AESKIT_CPU_VAES | AESKIT_CPU_AVX512F, UNIT_FN(vaes_zmm), 128},
    {"clmul_xmm", AESKIT_CPU_PCLMUL, UNIT_FN(clmul_xmm), 128},
    {"clmul_ymm", AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX, UNIT_FN(clmul_ymm), 128},
    {"clmul_zmm", AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX512F, UNIT_FN(clmul_zmm), 128},
    {"gcm_mix_xmm", AESKIT_CPU_AES | AESKIT_CPU_PCLMUL, UNIT_FN(gcm_mix_xmm), 1},
    {"gcm_mix_ymm", AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX2,
     UNIT_FN(gcm_mix_ymm), 1},
    {"gcm_mix_zmm", AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX512F,
     UNIT_FN(gcm_mix_zmm), 1},
};
#define N_UNIT_PROBES (sizeof unit_probes / sizeof unit_probes[0])

size_t aeskit_probe_unit_count(void)
{
    return N_UNIT_PROBES;
}

const char *aeskit_probe_unit_name(size_t i)
{
    return i < N_UNIT_PROBES ? unit_probes[i].name : NULL;
}

double aeskit_probe_clock_mhz(double ms)
{
#if defined(PROBE_CHAINS)
    uint64_t iters = 1000, ns;
    /* grow the loop until it runs for the requested time */
    while ((ns = add_chain(iters)) < (uint64_t)(ms * 1e6) && iters < (UINT64_C(1) << 40))
        iters *= 2;
    double best = (double)iters * ADDS_PER_ITER * 1e3 / (double)ns;
    /* A run the thread spent partly off its core reads a slower clock: on a
     * shared VM the hypervisor runs another vCPU for milliseconds at a time,
     * and every sample of a whole group can be hit. The thread's CPU clock
     * leaves that time out, so run again until the two clocks agree within
     * 0.5% (at most 8 times), keeping the fastest reading. */
    for (int tries = 0; tries < 8; tries++) {
        const uint64_t c0 = thread_ns();
        ns = add_chain(iters);
        const uint64_t cpu = thread_ns() - c0;
        const double mhz = (double)iters * ADDS_PER_ITER * 1e3 / (double)ns;
        best = mhz > best ? mhz : best;
        if (cpu + ns / 200 >= ns)
            break;
    }
    return best;
#else
    (void)ms;
    return 0.0;   /* no portable dependent-latency chain: the caller asks for --cpu-mhz */
#endif
}

int aeskit_probe_clock_check(double ms, double *add_mhz, double *mul_mhz, double *tsc_mhz)
{
#if defined(PROBE_CHAINS)
    /* 8 rounds of one add run and one multiply run, all in about ms: the
     * add chain's length scaled from a short run found by doubling (as in
     * clock_mhz), the multiplies a third as many so both runs last as long */
    enum { ROUNDS = 8 };
    const double total = ms * 1e6;
    uint64_t t0 = aeskit_now_ns(), c0 = __rdtsc();
    uint64_t iters = 64, ns;
    while ((ns = add_chain(iters)) < (uint64_t)(total / (8 * ROUNDS)) &&
           iters < (UINT64_C(1) << 40))
        iters *= 2;
    const double left = total - (double)(aeskit_now_ns() - t0);
    if (left > 0 && ns > 0) {
        const double scaled = (double)iters * left / (2 * ROUNDS) / (double)ns;
        iters = scaled >= 1.0 ? (uint64_t)scaled : 1;
    }
    const uint64_t mul_iters = iters >= IMUL_LATENCY ? iters / IMUL_LATENCY : 1;
    /* interleaved, so a change of clock reaches both; each at its fastest
     * (an interruption only ever adds time) */
    uint64_t adds = UINT64_MAX, muls = UINT64_MAX;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t a = add_chain(iters), b = imul_chain(mul_iters);
        adds = a < adds ? a : adds;
        muls = b < muls ? b : muls;
    }
    uint64_t c1 = __rdtsc(), t1 = aeskit_now_ns();
    if (adds == 0 || muls == 0 || t1 == t0)
        return 0;
    *add_mhz = (double)iters * ADDS_PER_ITER * 1e3 / (double)adds;
    *mul_mhz = (double)mul_iters * MULS_PER_ITER * IMUL_LATENCY * 1e3 / (double)muls;
    *tsc_mhz = (double)(c1 - c0) * 1e3 / (double)(t1 - t0);
    return 1;
#else
    (void)ms; (void)add_mhz; (void)mul_mhz; (void)tsc_mhz;
    return 0;   /* no portable dependent-latency chain, as in clock_mhz */
#endif
}

double aeskit_probe_aes_share(int rounds)
{
#if defined(PROBE_CHAINS)
    if (aeskit_cpu_features() & AESKIT_CPU_AES) {
        /* wall time, not cycles: a CPU whose core runs slower is as much
         * worse for the benchmark as one whose AES units are shared */
        uint64_t wide = UINT64_MAX;
        for (int r = 0; r < rounds; r++) {
            const uint64_t c = aesenc_wide(2000);
            wide = c < wide ? c : wide;
        }
        return (double)wide / (2000.0 * THROUGHPUT_OPS_PER_ITER);
    }
#endif
    (void)rounds;
    return 0.0;
}

int aeskit_probe_aes(double *latency, double *xmm)
{
#if defined(PROBE_CHAINS)
    if (aeskit_cpu_features() & AESKIT_CPU_AES) {
        /* the chains interleaved, each at its fastest (an interruption only
         * ever adds time): ratios to the add chain are in core cycles */
        uint64_t adds = UINT64_MAX, lat = UINT64_MAX, wide = UINT64_MAX;
        for (int r = 0; r < PROBE_ROUNDS; r++) {
            uint64_t a = add_chain(PROBE_ITERS), b = aesenc_chain(PROBE_ITERS),
                     c = aesenc_wide(PROBE_ITERS);
            adds = a < adds ? a : adds;
            lat = b < lat ? b : lat;
            wide = c < wide ? c : wide;
        }
        *latency = (double)lat / (double)adds;
        *xmm = (double)wide / (double)adds;
        return 1;
    }
#endif
    (void)latency; (void)xmm;
    return 0;
}

void aeskit_probe_units(double *cycles)
{
    uint64_t best[N_UNIT_PROBES];
    for (size_t p = 0; p < N_UNIT_PROBES; p++)
        best[p] = UINT64_MAX;
    double adds = 1.0;
#if defined(PROBE_CHAINS)
    const uint32_t have = aeskit_cpu_features();
    uint64_t add_ns = UINT64_MAX;
    /* as in aeskit_probe_aes: interleaved with the add chain, each at its
     * fastest */
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        uint64_t a = add_chain(PROBE_ITERS);
        add_ns = a < add_ns ? a : add_ns;
        for (size_t p = 0; p < N_UNIT_PROBES; p++) {
            if ((have & unit_probes[p].needs) == unit_probes[p].needs) {
                uint64_t t = unit_probes[p].fn(PROBE_ITERS);
                best[p] = t < best[p] ? t : best[p];
            }
        }
    }
    adds = (double)add_ns;
#endif
    for (size_t p = 0; p < N_UNIT_PROBES; p++)
        cycles[p] = best[p] == UINT64_MAX
                        ? -1.0
                        : (double)best[p] / adds * ADDS_PER_ITER / unit_probes[p].per_iter;
}
