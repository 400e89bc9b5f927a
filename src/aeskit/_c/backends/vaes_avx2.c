/*
 * vaes_avx2.c: vaes_body.h on 256-bit registers, two blocks per VAES
 * instruction. Contracts: aeskit.h; the kernels, their lanes and their
 * folds: vaes_body.h; what differs by width: vaes_ymm.h.
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
 * Slots: the parallel modes, GHASH (its own key layout) and the fused OCB
 * slot (vaes_ocb.h) are this width's, XTS and its sectors pass (xts_units)
 * too (tweaks made in ymm lanes, vaes_body.h); the serial ones and CBC-MAC are aesni's, valid on
 * this key because set_key is aesni's expansion. The fused GCM slot is
 * empty: modes/gcm.c runs this table's CTR and GHASH, which are faster on
 * ymm than the fused kernel (see vaes_gcm.h).
 */
#include "vaes_ymm.h"

#define VAES_NV 8
#define VAES_FN(name) vaes_avx2_##name
#define VAES_IMPL aeskit_vaes_avx2_impl

#include "vaes_body.h"

/* The test-only build (meson option emulate_wide) emulates VAES and
 * VPCLMULQDQ (tests/emu/vaes_emu.h) and so does not ask the CPU for them. */
#if defined(AESKIT_EMULATE_WIDE)
#define VAES_AVX2_EMULATED (AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL)
#else
#define VAES_AVX2_EMULATED 0u
#endif

const struct aeskit_impl aeskit_vaes_avx2_impl = {
    .name = "vaes_avx2",
    .cpu_needs = (AESKIT_CPU_AES | AESKIT_CPU_PCLMUL | AESKIT_CPU_SSSE3 | AESKIT_CPU_SSE41
                  | AESKIT_CPU_AVX | AESKIT_CPU_AVX2 | AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL)
                 & ~VAES_AVX2_EMULATED,
    .set_key = vaes_avx2_set_key,
    .ecb_enc = vaes_avx2_ecb_enc,
    .ecb_dec = vaes_avx2_ecb_dec,
    .cbc_enc = aeskit_aesni_cbc_enc,
    .cbc_dec = vaes_avx2_cbc_dec,
    .cfb_enc = aeskit_aesni_cfb_enc,
    .cfb_dec = vaes_avx2_cfb_dec,
    .ofb = aeskit_aesni_ofb,
    .ctr = vaes_avx2_ctr,
    .cbc_mac = aeskit_aesni_cbc_mac,
    .ctr_cbcmac = aeskit_aesni_ctr_cbcmac,   /* xmm: the chain is one block wide */
    .gcmsiv_short = aeskit_aesni_gcmsiv_short,   /* xmm: 8 blocks at most, latency-bound */
    .xts = vaes_avx2_xts,
    .xts_units = vaes_avx2_xts_units,
    .ghash_key = vaes_avx2_ghash_key,
    .ghash = vaes_avx2_ghash,
    .polyval = vaes_avx2_polyval,
    .ocb = vaes_avx2_ocb,
    .constants = (const aeskit_constant[]){
        {"gcmsiv_short_blocks", AESKIT_AESNI_SIV_SHORT},
        VAES_CONSTANT_ROWS,
        {NULL, 0},
    },
};
