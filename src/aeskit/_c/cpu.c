/*
 * cpu.c: what this CPU and OS can run, found once at module init.
 *
 * A feature bit is set only when CPUID reports the instructions AND
 * XGETBV shows the OS saves the registers they use: YMM state for AVX,
 * AVX2 and the 256-bit VAES/VPCLMULQDQ forms, ZMM state (opmask, upper
 * halves, hi16) for AVX-512. VAES on YMM never demands ZMM state.
 */
#include <stddef.h>

#include "compiler.h"
#include "cpu.h"

#if defined(AESKIT_HAVE_X86)
/* CPUID leaf (subleaf sub) into r = {eax, ebx, ecx, edx}, and XCR0: GCC's
 * and clang's <cpuid.h> and an asm XGETBV (no -mxsave needed), or MSVC's
 * intrinsics (compiler.h's AESKIT_GNU_ASM tells the dialects apart). */
#if defined(AESKIT_GNU_ASM)
#include <cpuid.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}
#else
#include <intrin.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, (int)sub);
    for (int i = 0; i < 4; i++)
        r[i] = (unsigned)v[i];
}

static uint64_t xgetbv0(void)
{
    return (uint64_t)_xgetbv(0);
}
#endif

/* The bits read below (Intel SDM vol. 2, CPUID): leaf 1's ECX, leaf 7's
 * EBX and ECX. */
enum {
    L1C_SSSE3 = 1u << 9, L1C_SSE41 = 1u << 19, L1C_OSXSAVE = 1u << 27, L1C_AVX = 1u << 28,
    L1C_AES = 1u << 25, L1C_PCLMUL = 1u << 1,
    L7B_AVX2 = 1u << 5, L7B_BMI2 = 1u << 8, L7B_AVX512F = 1u << 16,
    L7B_AVX512BW = 1u << 30, L7B_AVX512VL = 1u << 31,
    L7C_VAES = 1u << 9, L7C_VPCLMUL = 1u << 10,
};
#endif

/* AArch64 and POWER: the kernel's HWCAP words on Linux (the instructions are
 * usable from user space whenever the bit is set). macOS arm64: sysctl's
 * hw.optional.arm.FEAT_* (macOS 12 on); macOS 11 has no such name, and
 * every Apple arm64 CPU has AES and PMULL, so a missing name counts as
 * present (as Go's runtime assumes). */
#if defined(__linux__) && (defined(__aarch64__) || defined(__powerpc64__))
#include <sys/auxv.h>
#define AESKIT_CPU_HWCAP 1
#elif defined(__APPLE__) && defined(__aarch64__)
#include <sys/sysctl.h>

static int apple_has(const char *name)
{
    int v = 0;
    size_t len = sizeof v;
    if (sysctlbyname(name, &v, &len, NULL, 0) != 0)
        return 1;   /* macOS 11: no such name, and every Apple CPU has it */
    return v != 0;
}
#endif

static uint32_t features;

#if defined(AESKIT_CPU_HWCAP)
uint32_t aeskit_cpu_detect_hwcap(unsigned long hwcap, unsigned long hwcap2)
{
    uint32_t f = 0;
#if defined(__aarch64__)
    (void)hwcap2;
    if (hwcap & (1ul << 3))   /* HWCAP_AES */
        f |= AESKIT_CPU_ARM_AES;
    if (hwcap & (1ul << 4))   /* HWCAP_PMULL */
        f |= AESKIT_CPU_ARM_PMULL;
#else
    (void)hwcap;
    if (hwcap2 & 0x02000000ul)   /* PPC_FEATURE2_VEC_CRYPTO (implies AltiVec, VSX) */
        f |= AESKIT_CPU_PPC_VCRYPTO;
#endif
    return features = f;
}
#endif

uint32_t aeskit_cpu_detect(void)
{
    uint32_t f = 0;
#if defined(AESKIT_HAVE_X86)
    unsigned r[4];
    cpuid(0, 0, r);
    const unsigned max = r[0];
    if (max < 1)
        return features = 0;
    cpuid(1, 0, r);
    const unsigned c1 = r[2];
    if (c1 & L1C_SSSE3)  f |= AESKIT_CPU_SSSE3;
    if (c1 & L1C_SSE41)  f |= AESKIT_CPU_SSE41;
    if (c1 & L1C_AES)    f |= AESKIT_CPU_AES;
    if (c1 & L1C_PCLMUL) f |= AESKIT_CPU_PCLMUL;

    int ymm = 0, zmm = 0;
    if ((c1 & L1C_OSXSAVE) && (c1 & L1C_AVX)) {
        uint64_t xcr0 = xgetbv0();
        ymm = (xcr0 & 0x6) == 0x6;              /* XMM | YMM */
        zmm = ymm && (xcr0 & 0xe0) == 0xe0;     /* opmask | ZMM_Hi256 | Hi16_ZMM */
    }
    if (ymm)
        f |= AESKIT_CPU_AVX;
    if (max >= 7) {
        cpuid(7, 0, r);
        const unsigned b = r[1], c = r[2];
        if (b & L7B_BMI2) f |= AESKIT_CPU_BMI2;
        if (ymm) {
            if (b & L7B_AVX2)    f |= AESKIT_CPU_AVX2;
            if (c & L7C_VAES)    f |= AESKIT_CPU_VAES;
            if (c & L7C_VPCLMUL) f |= AESKIT_CPU_VPCLMUL;
        }
        if (zmm) {
            if (b & L7B_AVX512F)  f |= AESKIT_CPU_AVX512F;
            if (b & L7B_AVX512BW) f |= AESKIT_CPU_AVX512BW;
            if (b & L7B_AVX512VL) f |= AESKIT_CPU_AVX512VL;
        }
    }
#elif defined(AESKIT_CPU_HWCAP)
    return aeskit_cpu_detect_hwcap(getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
#elif defined(__APPLE__) && defined(__aarch64__)
    if (apple_has("hw.optional.arm.FEAT_AES"))
        f |= AESKIT_CPU_ARM_AES;
    if (apple_has("hw.optional.arm.FEAT_PMULL"))
        f |= AESKIT_CPU_ARM_PMULL;
#endif
    return features = f;
}

uint32_t aeskit_cpu_features(void)
{
    return features;
}

static const struct {
    uint32_t bit;
    const char *name;
} names[] = {
    /* one architecture's names: "aes" is a different bit on each */
#if defined(__aarch64__)
    {AESKIT_CPU_ARM_AES, "aes"},       {AESKIT_CPU_ARM_PMULL, "pmull"},
#elif defined(__powerpc64__)
    {AESKIT_CPU_PPC_VCRYPTO, "vcrypto"},
#else
    {AESKIT_CPU_SSSE3, "ssse3"},       {AESKIT_CPU_SSE41, "sse4.1"},
    {AESKIT_CPU_AES, "aes"},           {AESKIT_CPU_PCLMUL, "pclmulqdq"},
    {AESKIT_CPU_AVX, "avx"},           {AESKIT_CPU_AVX2, "avx2"},
    {AESKIT_CPU_BMI2, "bmi2"},         {AESKIT_CPU_VAES, "vaes"},
    {AESKIT_CPU_VPCLMUL, "vpclmulqdq"}, {AESKIT_CPU_AVX512F, "avx512f"},
    {AESKIT_CPU_AVX512BW, "avx512bw"}, {AESKIT_CPU_AVX512VL, "avx512vl"},
#endif
};

const char *aeskit_cpu_feature_name(uint32_t bit)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].bit == bit)
            return names[i].name;
    return NULL;
}
