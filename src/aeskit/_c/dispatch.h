/*
 * dispatch.h: the backends compiled into this build, best first
 * (dispatch.c), and which of them this CPU can run (cpu.h).
 */
#ifndef AESKIT_DISPATCH_H
#define AESKIT_DISPATCH_H

#include "aeskit.h"
#include "cpu.h"

/* The backend tables (one file each under backends/). */
extern const struct aeskit_impl aeskit_portable_impl;
#if defined(AESKIT_HAVE_X86)
extern const struct aeskit_impl aeskit_aesni_avx_impl;   /* aesni.h: the same, VEX-encoded */
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

/* All backends compiled in, in preference order (best first), ending NULL.
 * A name may appear twice (aesni: its VEX build first, needing AVX too):
 * lookups by name take the first entry this CPU can run, lists show it once. */
extern const struct aeskit_impl *const aeskit_impls[];
int aeskit_impl_available(const struct aeskit_impl *impl);
const struct aeskit_impl *aeskit_impl_by_name(const char *name);   /* NULL if unknown */
int aeskit_impl_named_before(size_t i, int runnable);   /* dispatch.c */
const struct aeskit_impl *aeskit_impl_best(void);                  /* never NULL */

#endif
