/*
 * vaes_ymm.h: the width layer of the vaes kernels on 256-bit registers
 * (vaes_avx2.c): every wrapper whose instruction differs between ymm and
 * zmm, and the numbers that follow from the width. vaes_body.h, included
 * after it, is written against these names only and has no width
 * conditionals. Both width headers define the same names.
 *
 * Two blocks per vector; VAES_KEY_GROUPS 4: GHASH and the fused GCM reduce
 * once per four groups of 32 blocks (128 powers in the key, 3072 bytes, as
 * on zmm): a reduction and its lane folds are some 20 vector instructions
 * that compete with the multiplies' XORs (on Intel's three vector ports, on
 * Zen 4's AES pipes). Once per 64 rather than 32: GHASH alone 4-5% faster on
 * Emerald Rapids; once per 128 rather than 64: fused GCM 1.6-1.9% faster on
 * Zen 4 (AES-128, 16 KiB; without any reduction, a timing-only build, 2.5%),
 * GHASH alone within 1% (16-64 KiB), the key's set-up 80 ns longer (AESGCM()
 * from Python 0.78 -> 0.86 us). A key made per message (GCM-SIV's,
 * XAES-256-GCM's: AESKIT_GHASH_MSG powers) is not affected.
 */
#ifndef AESKIT_VAES_YMM_H
#define AESKIT_VAES_YMM_H

#include "modes/ocb.h"   /* aeskit_ocb_key, for vaes_ocb_q */
#include "x86.h"

#define VAES_VL 32              /* vector bytes */
#define VAES_BPV (VAES_VL / AESKIT_BLOCK) /* blocks per vector */
#define VAES_KEY_GROUPS 4       /* groups of 32 GHASH powers in the key */

/* ---- loads, stores and lane moves ------------------------------------- */

typedef __m256i vaes_v;

AESKIT_INLINE vaes_v vaes_load(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

AESKIT_INLINE void vaes_store(uint8_t *p, vaes_v v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v);
}

/* nb = 1..VAES_BPV blocks; lanes past nb read as zero and are not stored. */
AESKIT_INLINE vaes_v vaes_load_part(const uint8_t *p, size_t nb)
{
    return nb == 2 ? vaes_load(p) : _mm256_zextsi128_si256(aeskit_load128(p));
}

/* Two chains' 2-block vectors regrouped by block: *lo = (a.0, b.0), *hi =
 * (a.1, b.1) (cbc_x's quads). */
AESKIT_INLINE void vaes_transpose2(vaes_v a, vaes_v b, vaes_v *lo, vaes_v *hi)
{
    *lo = _mm256_permute2x128_si256(a, b, 0x20);
    *hi = _mm256_permute2x128_si256(a, b, 0x31);
}

AESKIT_INLINE void vaes_store_part(uint8_t *p, vaes_v v, size_t nb)
{
    if (nb == 2)
        vaes_store(p, v);
    else
        aeskit_store128(p, _mm256_castsi256_si128(v));
}

/* The last VAES_BPV - k blocks of a vector, k = 1..VAES_BPV-1 lanes absent
 * at its start: p is the first present block; absent lanes read as zero
 * and are not stored (vaes_load_skip). k is 1 on ymm, where only the
 * zmm fused GCM ever passes a skip (this width's callers pass 0). */
AESKIT_INLINE vaes_v vaes_load_high(const uint8_t *p, size_t k)
{
    (void)k;
    return _mm256_inserti128_si256(_mm256_setzero_si256(), aeskit_load128(p), 1);
}

AESKIT_INLINE void vaes_store_high(uint8_t *p, vaes_v v, size_t k)
{
    (void)k;
    aeskit_store128(p, _mm256_extracti128_si256(v, 1));
}

AESKIT_INLINE vaes_v vaes_bcast(__m128i a) { return _mm256_broadcastsi128_si256(a); }
AESKIT_INLINE __m128i vaes_low128(vaes_v a) { return _mm256_castsi256_si128(a); }
AESKIT_INLINE vaes_v vaes_unpacklo64(vaes_v a, vaes_v b) { return _mm256_unpacklo_epi64(a, b); }
AESKIT_INLINE vaes_v vaes_unpackhi64(vaes_v a, vaes_v b) { return _mm256_unpackhi_epi64(a, b); }
AESKIT_INLINE vaes_v vaes_xor(vaes_v a, vaes_v b) { return _mm256_xor_si256(a, b); }
/* a ^ b ^ c: two XORs; calls with the same a and b share the first. */
AESKIT_INLINE vaes_v vaes_xor3(vaes_v a, vaes_v b, vaes_v c) { return vaes_xor(vaes_xor(a, b), c); }
/* CBC encryption by whole lines (vaes_zmm.h): not on ymm, whose 16
 * registers cannot hold 2-block vectors of enough chains and their lines
 * too; cbc_x's encryption gathers and scatters blocks, and modes/chains.c
 * staggers its chains. */
#define VAES_CBC_LINES 0
AESKIT_INLINE vaes_v vaes_enc(vaes_v x, vaes_v k) { return _mm256_aesenc_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_enclast(vaes_v x, vaes_v k) { return _mm256_aesenclast_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_dec(vaes_v x, vaes_v k) { return _mm256_aesdec_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_declast(vaes_v x, vaes_v k) { return _mm256_aesdeclast_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_add32(vaes_v a, vaes_v b) { return _mm256_add_epi32(a, b); }
AESKIT_INLINE vaes_v vaes_shuffle8(vaes_v a, vaes_v s) { return _mm256_shuffle_epi8(a, s); }

/* Lane l holds the 64-bit integer l in its low half. */
AESKIT_INLINE vaes_v vaes_lane_index(void) { return _mm256_set_epi64x(0, 1, 0, 0); }

/* Per lane, a + b modulo 2^128 (little-endian lanes; b < 2^64). */
AESKIT_INLINE vaes_v vaes_add128(vaes_v a, vaes_v b)
{
    const vaes_v bias = _mm256_set1_epi64x(INT64_MIN);
    const vaes_v s = _mm256_add_epi64(a, b);
    const vaes_v carry = _mm256_cmpgt_epi64(_mm256_xor_si256(b, bias),
                                            _mm256_xor_si256(s, bias));
    return _mm256_sub_epi64(s, _mm256_bslli_epi128(carry, 8));
}

/* Lanes [prev, c.lane 0]: each block's predecessor. */
AESKIT_INLINE vaes_v vaes_shift_in(__m128i prev, vaes_v c)
{
    return _mm256_permute2x128_si256(_mm256_castsi128_si256(prev), c, 0x20);
}

/* ---- GHASH ------------------------------------------------------------- */
/* 0: pairs by unpacks (vaes_gstep2_halves is zmm's: it needs masked loads). */
#define VAES_GHALVES 0

#define vaes_clmul(a, b, imm) _mm256_clmulepi64_epi128((a), (b), (imm))
#define vaes_shuffle32_4e(a) _mm256_shuffle_epi32((a), 0x4E)
AESKIT_INLINE __m128i vaes_fold_lanes(vaes_v v)
{
    return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
AESKIT_INLINE vaes_v vaes_zero(void) { return _mm256_setzero_si256(); }
AESKIT_INLINE vaes_v vaes_from128(__m128i a) { return _mm256_zextsi128_si256(a); }
#define vaes_bslli8(a) _mm256_bslli_epi128((a), 8)
#define vaes_bsrli8(a) _mm256_bsrli_epi128((a), 8)

/* acc in lane l of an otherwise zero vector. */
AESKIT_INLINE vaes_v vaes_acc_at(__m128i acc, size_t l)
{
    if (l == 0)
        return vaes_from128(acc);
    return _mm256_inserti128_si256(_mm256_setzero_si256(), acc, 1);
}

/* ---- OCB3 -------------------------------------------------------------- */

/* v with lane l (public) XORed with a. */
AESKIT_INLINE vaes_v vaes_xor_lane(vaes_v v, __m128i a, size_t l)
{
    const vaes_v t = _mm256_xor_si256(v, vaes_bcast(a));
    return l == 0 ? _mm256_blend_epi32(v, t, 0x0F) : _mm256_blend_epi32(v, t, 0xF0);
}

/* v with lanes nb.. cleared (nb = 1..VAES_BPV). */
AESKIT_INLINE vaes_v vaes_keep(vaes_v v, size_t nb)
{
    return nb == 2 ? v : _mm256_zextsi128_si256(_mm256_castsi256_si128(v));
}

/* delta_1 .. delta_{BPV-1}, then delta_{BPV-1} again: [L0, L0] */
AESKIT_INLINE vaes_v vaes_ocb_q(const aeskit_ocb_key *ok)
{
    return vaes_bcast(aeskit_load128(ok->l[0]));
}
#define VAES_LOG2_BPV 1

/* ---- XTS --------------------------------------------------------------- */

/* Each 128-bit lane rotated left by a constant n bytes (vpalignr). */
#define vaes_rotl_bytes(a, n) _mm256_alignr_epi8((a), (a), 16 - (n))
AESKIT_INLINE vaes_v vaes_and(vaes_v a, vaes_v b) { return _mm256_and_si256(a, b); }
/* Each 64-bit element shifted by its own count; a count of 64 or more
 * gives 0. */
AESKIT_INLINE vaes_v vaes_sllv64(vaes_v a, vaes_v s) { return _mm256_sllv_epi64(a, s); }
AESKIT_INLINE vaes_v vaes_srlv64(vaes_v a, vaes_v s) { return _mm256_srlv_epi64(a, s); }
/* Each 64-bit element shifted left by a constant n (vpsllq). */
#define vaes_slli64(a, n) _mm256_slli_epi64((a), (n))

/* 1: a batch's 8 tweak vectors, with its 8 data vectors, the window and a
 * key, outnumber the 16 registers: they wait out the rounds in a buffer,
 * and the kernel keeps to its leanest register form (vaes_body.h, XTS). */
#define VAES_XTS_STASH 1
/* 0: a step keeps its carry-less multiply; shifts measured slower on ymm
 * (vaes_body.h, XTS). */
#define VAES_XTS_SHIFTS 0
/* 1: calls up to 256 KiB take the tweaks from a stash built partly in
 * general registers (vaes_body.h, XTS with the tweaks in general
 * registers); longer ones the vector steps. */
#define VAES_XTS_GPR 1

/* Lane l, l = 1..VAES_BPV-1 (public; lane 0 is vaes_low128): 1 on ymm. */
AESKIT_INLINE __m128i vaes_lane_high(vaes_v v, size_t l)
{
    (void)l;
    return _mm256_extracti128_si256(v, 1);
}

/* ---- lanes from separate blocks (multi-buffer) --------------------------- */

/* v with lane l (1..VAES_BPV-1, public) replaced by a: l is 1 on ymm. */
AESKIT_INLINE vaes_v vaes_insert_lane(vaes_v v, __m128i a, size_t l)
{
    (void)l;
    return _mm256_inserti128_si256(v, a, 1);
}

/* v with lane l (public: 1 on ymm) replaced by the block at p: not
 * vinserti128 but a broadcast from memory (a load alone) and vpblendd
 * (any vector ALU). On Zen 3 a shuffle takes turns of a pipe the AES rounds
 * use: beside a step's 80 rounds (39.3 cycles alone), 8 lanes put in by
 * vinserti128 from memory cost 42.6-44.2 cycles, by broadcast and blend
 * 39.1-40.3 (micro-loops); vaes_avx2's CBC-encryption batches 64 x 4 KiB
 * and 256 x 1504 B, whose steps gather their blocks so, 1.5-2% less time
 * (minima, both builds in one process, alternated). */
AESKIT_INLINE vaes_v vaes_insert_lane_mem(vaes_v v, const uint8_t *p, size_t l)
{
    (void)l;
    return _mm256_blend_epi32(v, _mm256_broadcastsi128_si256(aeskit_load128(p)), 0xF0);
}

#endif
