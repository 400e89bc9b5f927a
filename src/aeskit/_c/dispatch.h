/*
 * dispatch.h: what this CPU can run (cpu.c) and the backends compiled into
 * this build, best first (dispatch.c).
 */
#ifndef AESKIT_DISPATCH_H
#define AESKIT_DISPATCH_H

#include "aeskit.h"

uint32_t aeskit_cpu_detect(void);          /* CPUID + XGETBV, or HWCAP; call once */
uint32_t aeskit_cpu_features(void);        /* what detect found */
const char *aeskit_cpu_feature_name(uint32_t bit);
#if defined(__linux__) && (defined(__aarch64__) || defined(__powerpc64__))
/* What detect does, from the given AT_HWCAP and AT_HWCAP2 words instead of
 * the kernel's: for the self-test (tests/cross), which masks bits to check
 * the fallback to portable. */
uint32_t aeskit_cpu_detect_hwcap(unsigned long hwcap, unsigned long hwcap2);
#endif

/* The backend tables (one file each under backends/). */
extern const struct aeskit_impl aeskit_portable_impl;
#if defined(AESKIT_HAVE_X86)
extern const struct aeskit_impl aeskit_aesni_impl;
extern const struct aeskit_impl aeskit_vaes_avx2_impl;
extern const struct aeskit_impl aeskit_vaes_avx512_impl;
#endif
#if defined(AESKIT_HAVE_ARMV8)
extern const struct aeskit_impl aeskit_armv8_ce_impl;
#endif
#if defined(AESKIT_HAVE_POWER8)
extern const struct aeskit_impl aeskit_power8_impl;
#endif

/* All backends compiled in, in preference order (best first), ending NULL. */
extern const struct aeskit_impl *const aeskit_impls[];
int aeskit_impl_available(const struct aeskit_impl *impl);
const struct aeskit_impl *aeskit_impl_by_name(const char *name);   /* NULL if unknown */
const struct aeskit_impl *aeskit_impl_best(void);                  /* never NULL */

#endif
