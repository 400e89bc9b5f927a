/*
 * cpu.h: what this CPU and OS can run (cpu.c): the feature bits a backend
 * table's cpu_needs names, and their detection, done once at module init.
 */
#ifndef AESKIT_CPU_H
#define AESKIT_CPU_H

#include <stdint.h>

/* A bit is set only when the instructions are present AND the OS saves the
 * register state they need. */
enum {
    AESKIT_CPU_SSSE3      = 1u << 0,
    AESKIT_CPU_SSE41      = 1u << 1,
    AESKIT_CPU_AES        = 1u << 2,
    AESKIT_CPU_PCLMUL     = 1u << 3,
    AESKIT_CPU_AVX        = 1u << 4,   /* + OS YMM state */
    AESKIT_CPU_AVX2       = 1u << 5,
    AESKIT_CPU_BMI2       = 1u << 6,
    AESKIT_CPU_VAES       = 1u << 7,   /* + OS YMM state */
    AESKIT_CPU_VPCLMUL    = 1u << 8,   /* + OS YMM state */
    AESKIT_CPU_AVX512F    = 1u << 9,   /* + OS ZMM state */
    AESKIT_CPU_AVX512BW   = 1u << 10,
    AESKIT_CPU_AVX512VL   = 1u << 11,
    /* AArch64: the AES and PMULL instructions (Crypto Extensions) */
    AESKIT_CPU_ARM_AES    = 1u << 16,
    AESKIT_CPU_ARM_PMULL  = 1u << 17,
    /* POWER8 and later: vcipher, vncipher, vpmsumd (ISA 2.07 crypto) */
    AESKIT_CPU_PPC_VCRYPTO = 1u << 18,
};

uint32_t aeskit_cpu_detect(void);          /* CPUID + XGETBV, or HWCAP; call once */
uint32_t aeskit_cpu_features(void);        /* what detect found */
const char *aeskit_cpu_feature_name(uint32_t bit);
#if defined(__linux__) && (defined(__aarch64__) || defined(__powerpc64__))
/* What detect does, from the given AT_HWCAP and AT_HWCAP2 words instead of
 * the kernel's: for the self-test (tests/cross), which masks bits to check
 * the fallback to portable. */
uint32_t aeskit_cpu_detect_hwcap(unsigned long hwcap, unsigned long hwcap2);
#endif

#endif
