/*
 * vaes_avx2.c: vaes_body.h on 256-bit registers, two blocks per VAES
 * instruction. Contracts: aeskit.h and the mode headers; the kernels,
 * their lanes and their folds: vaes_body.h; what differs by width:
 * vaes_ymm.h; the table: vaes_table.h.
 *
 * Needs AES-NI, PCLMULQDQ, SSSE3, SSE4.1 (aesni's slots, reused), AVX,
 * AVX2, VAES and VPCLMULQDQ with the OS saving YMM state, never ZMM state:
 * the Zen 3 / Alder Lake class has no AVX-512. Built as its own library
 * with exactly those -m flags and called only after the CPU check.
 *
 * Why this width: ymm VAES sustains 2 instructions per cycle at latency 4
 * on Zen 4, so 8 registers (16 blocks) must be in flight to reach 4 blocks
 * per cycle; 8 data registers still leave room for the keys in 16.
 *
 * Slots: vaes_table.h's, with the fused GCM kernel and GCM-SIV's fused
 * opening (vaes_gcm.h) on this width too.
 */
#include "vaes_ymm.h"

#define VAES_NV 8
#define VAES_FN(name) vaes_avx2_##name
#define VAES_IMPL aeskit_vaes_avx2_impl

#include "vaes_body.h"
#include "vaes_gcm.h"

/* The test-only build (meson option emulate_wide) emulates VAES and
 * VPCLMULQDQ (tests/emu/vaes_emu.h) and so does not ask the CPU for them. */
#if defined(AESKIT_EMULATE_WIDE)
#define VAES_AVX2_EMULATED (AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL)
#else
#define VAES_AVX2_EMULATED 0u
#endif

#define VAES_NAME "vaes_avx2"
#define VAES_CPU_NEEDS                                                                     \
    ((AESKIT_CPU_AES | AESKIT_CPU_PCLMUL | AESKIT_CPU_SSSE3 | AESKIT_CPU_SSE41            \
      | AESKIT_CPU_AVX | AESKIT_CPU_AVX2 | AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL)          \
     & ~VAES_AVX2_EMULATED)
#include "vaes_table.h"
