/*
 * vaes_avx512.c: vaes_body.h on 512-bit registers, four blocks per VAES
 * instruction. Contracts: aeskit.h and the mode headers; the kernels, their
 * lanes and their folds: vaes_body.h; what differs by width: vaes_zmm.h;
 * the table: vaes_table.h.
 *
 * Needs what vaes_avx2.c needs plus AVX-512F/BW/VL and BMI2, with the OS
 * saving ZMM state (these kernels use F, and BW for vpshufb on zmm; VL and
 * BMI2 complete the CPU class and cost nothing to require). Built as its
 * own library with exactly those -m flags and called only after the CPU
 * check.
 *
 * Why this width: zmm VAES sustains 1 instruction per cycle at latency 4 on
 * Zen 4 (double-pumped 256-bit units): 4 blocks per cycle, the same peak as
 * ymm with half the instructions. 4 registers in flight reach it in a bare
 * loop; in the kernels 8 (32 blocks) are a little faster, the slack
 * covering each batch's loads and folds.
 *
 * Slots: vaes_table.h's, plus the fused GCM kernel and GCM-SIV's fused
 * opening, one kernel (vaes_gcm.h).
 */
#include "vaes_zmm.h"

#define VAES_NV 8
#define VAES_FN(name) vaes_avx512_##name
#define VAES_IMPL aeskit_vaes_avx512_impl

#include "vaes_body.h"
#include "vaes_gcm.h"

/* The test-only build (meson option emulate_wide) emulates VAES, VPCLMULQDQ
 * and AVX-512 (tests/emu/vaes_emu.h) and so does not ask the CPU for them. */
#if defined(AESKIT_EMULATE_WIDE)
#define VAES_AVX512_EMULATED (AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX512F \
                              | AESKIT_CPU_AVX512BW | AESKIT_CPU_AVX512VL)
#else
#define VAES_AVX512_EMULATED 0u
#endif

#define VAES_NAME "vaes_avx512"
#define VAES_CPU_NEEDS                                                                     \
    ((AESKIT_CPU_AES | AESKIT_CPU_PCLMUL | AESKIT_CPU_SSSE3 | AESKIT_CPU_SSE41            \
      | AESKIT_CPU_AVX | AESKIT_CPU_AVX2 | AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL           \
      | AESKIT_CPU_AVX512F | AESKIT_CPU_AVX512BW | AESKIT_CPU_AVX512VL | AESKIT_CPU_BMI2) \
     & ~VAES_AVX512_EMULATED)
#include "vaes_table.h"
