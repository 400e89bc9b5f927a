/*
 * vaes_zmm.h: the width layer of the vaes kernels on 512-bit registers
 * (vaes_avx512.c): every wrapper whose instruction differs between ymm and
 * zmm, and the numbers that follow from the width. vaes_body.h, included
 * after it, is written against these names only and has no width
 * conditionals. Both width headers define the same names.
 *
 * Four blocks per vector; VAES_KEY_GROUPS 4: GHASH and the fused GCM reduce
 * once per four groups of 32 blocks (vaes_gcm.h).
 */
#ifndef AESKIT_VAES_ZMM_H
#define AESKIT_VAES_ZMM_H

#include "modes/ocb.h"   /* aeskit_ocb_key, for vaes_ocb_q */
#include "x86.h"

#define VAES_VL 64              /* vector bytes */
#define VAES_BPV (VAES_VL / AESKIT_BLOCK) /* blocks per vector */
#define VAES_KEY_GROUPS 4       /* groups of 32 GHASH powers in the key */

/* ---- loads, stores and lane moves ------------------------------------- */

typedef __m512i vaes_v;

AESKIT_INLINE vaes_v vaes_load(const uint8_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}

AESKIT_INLINE void vaes_store(uint8_t *p, vaes_v v)
{
    _mm512_storeu_si512((void *)p, v);
}

/* nb = 1..VAES_BPV blocks; lanes past nb read as zero and are not stored.
 * Plain 256- and 128-bit moves, not opmask ones: a masked store does not
 * forward to a later load of the same bytes, which an in-place call pays
 * for on Zen 4. */
AESKIT_INLINE vaes_v vaes_load_part(const uint8_t *p, size_t nb)
{
    switch (nb) {
    case 1:
        return _mm512_zextsi128_si512(aeskit_load128(p));
    case 2:
        return _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)p));
    case 3:
        return _mm512_inserti32x4(
            _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)p)),
            aeskit_load128(p + 32), 2);
    default:
        return vaes_load(p);
    }
}

AESKIT_INLINE void vaes_store_part(uint8_t *p, vaes_v v, size_t nb)
{
    switch (nb) {
    case 1:
        aeskit_store128(p, _mm512_castsi512_si128(v));
        break;
    case 3:
        aeskit_store128(p + 32, _mm512_extracti32x4_epi32(v, 2));
        /* fall through */
    case 2:
        _mm256_storeu_si256((__m256i *)(void *)p, _mm512_castsi512_si256(v));
        break;
    default:
        vaes_store(p, v);
    }
}

/* As vaes_load_part at the other end: the last VAES_BPV - k blocks of a
 * vector, k = 1..3 lanes absent at its start, p the first present block.
 * Plain moves for the reason above: the fused GCM rereads what it stored
 * (vaes_load_skip). */
AESKIT_INLINE vaes_v vaes_load_high(const uint8_t *p, size_t k)
{
    const __m512i z = _mm512_setzero_si512();
    switch (k) {
    case 1:
        return _mm512_inserti64x4(
            _mm512_inserti32x4(z, aeskit_load128(p), 1),
            _mm256_loadu_si256((const __m256i *)(const void *)(p + 16)), 1);
    case 2:
        return _mm512_inserti64x4(z, _mm256_loadu_si256((const __m256i *)(const void *)p), 1);
    default:
        return _mm512_inserti32x4(z, aeskit_load128(p), 3);
    }
}

AESKIT_INLINE void vaes_store_high(uint8_t *p, vaes_v v, size_t k)
{
    switch (k) {
    case 1:
        aeskit_store128(p, _mm512_extracti32x4_epi32(v, 1));
        _mm256_storeu_si256((__m256i *)(void *)(p + 16), _mm512_extracti64x4_epi64(v, 1));
        break;
    case 2:
        _mm256_storeu_si256((__m256i *)(void *)p, _mm512_extracti64x4_epi64(v, 1));
        break;
    default:
        aeskit_store128(p, _mm512_extracti32x4_epi32(v, 3));
    }
}

AESKIT_INLINE vaes_v vaes_bcast(__m128i a) { return _mm512_broadcast_i32x4(a); }
AESKIT_INLINE __m128i vaes_low128(vaes_v a) { return _mm512_castsi512_si128(a); }
AESKIT_INLINE vaes_v vaes_unpacklo64(vaes_v a, vaes_v b) { return _mm512_unpacklo_epi64(a, b); }
AESKIT_INLINE vaes_v vaes_unpackhi64(vaes_v a, vaes_v b) { return _mm512_unpackhi_epi64(a, b); }
AESKIT_INLINE vaes_v vaes_xor(vaes_v a, vaes_v b) { return _mm512_xor_si512(a, b); }
/* a ^ b ^ c in one vpternlogq. */
AESKIT_INLINE vaes_v vaes_xor3(vaes_v a, vaes_v b, vaes_v c)
{
    return _mm512_ternarylogic_epi64(a, b, c, 0x96);
}
AESKIT_INLINE vaes_v vaes_enc(vaes_v x, vaes_v k) { return _mm512_aesenc_epi128(x, k); }

/* CBC encryption by whole lines (vaes_body.h's cbc_x): on up to
 * VAES_CBC_LINES chains, cbc_x reads and writes a 64-byte line of each
 * chain at a time, turned into block-by-block vectors and back by a 4x4
 * transpose of blocks. Records 4 KiB apart (a packed batch of 4 KiB
 * messages) put every chain's block at one place in Zen 4's 8-way L1
 * sets: block-sized stores to 16 chains' lines miss there and stall,
 * whole-line ones do not (64 x 4 KiB: 2.2-2.5x ECB's time with 32 chains
 * staggered, about 1.5x this way). 16 chains: 4 vectors in flight, with 4
 * lines per vector held in registers besides. */
#define VAES_CBC_LINES 16

/* v[c]'s block b to v[b]'s lane c, for c, b < 4. */
AESKIT_INLINE void vaes_transpose(vaes_v *v)
{
    const vaes_v t0 = _mm512_shuffle_i64x2(v[0], v[1], 0x44);   /* a0 a1 b0 b1 */
    const vaes_v t1 = _mm512_shuffle_i64x2(v[0], v[1], 0xee);   /* a2 a3 b2 b3 */
    const vaes_v t2 = _mm512_shuffle_i64x2(v[2], v[3], 0x44);   /* c0 c1 d0 d1 */
    const vaes_v t3 = _mm512_shuffle_i64x2(v[2], v[3], 0xee);   /* c2 c3 d2 d3 */
    v[0] = _mm512_shuffle_i64x2(t0, t2, 0x88);                  /* a0 b0 c0 d0 */
    v[1] = _mm512_shuffle_i64x2(t0, t2, 0xdd);                  /* a1 b1 c1 d1 */
    v[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
    v[3] = _mm512_shuffle_i64x2(t1, t3, 0xdd);
}

AESKIT_INLINE vaes_v vaes_enclast(vaes_v x, vaes_v k) { return _mm512_aesenclast_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_dec(vaes_v x, vaes_v k) { return _mm512_aesdec_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_declast(vaes_v x, vaes_v k) { return _mm512_aesdeclast_epi128(x, k); }
AESKIT_INLINE vaes_v vaes_add32(vaes_v a, vaes_v b) { return _mm512_add_epi32(a, b); }
AESKIT_INLINE vaes_v vaes_shuffle8(vaes_v a, vaes_v s) { return _mm512_shuffle_epi8(a, s); }

AESKIT_INLINE vaes_v vaes_lane_index(void) { return _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0); }

AESKIT_INLINE vaes_v vaes_add128(vaes_v a, vaes_v b)
{
    const vaes_v s = _mm512_add_epi64(a, b);
    const __mmask8 carry = _mm512_cmplt_epu64_mask(s, b);   /* low halves only: b's high are 0 */
    return _mm512_mask_sub_epi64(s, (__mmask8)(carry << 1), s, _mm512_set1_epi64(-1));
}

/* Lanes [prev, c.lane 0, c.lane 1, c.lane 2]. */
AESKIT_INLINE vaes_v vaes_shift_in(__m128i prev, vaes_v c)
{
    return _mm512_alignr_epi64(c, vaes_bcast(prev), 6);
}

/* ---- GHASH ------------------------------------------------------------- */

#define vaes_clmul(a, b, imm) _mm512_clmulepi64_epi128((a), (b), (imm))
#define vaes_shuffle32_4e(a) _mm512_shuffle_epi32((a), (_MM_PERM_ENUM)0x4E)
AESKIT_INLINE __m128i vaes_fold_lanes(vaes_v v)
{
    const __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(v),
                                       _mm512_extracti64x4_epi64(v, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}
AESKIT_INLINE vaes_v vaes_zero(void) { return _mm512_setzero_si512(); }
AESKIT_INLINE vaes_v vaes_from128(__m128i a) { return _mm512_zextsi128_si512(a); }
/* v with each lane's high 64 bits from the vector at p (a merge-masked
 * load: no shuffle, no ALU op on Zen 4 by llvm-mca's model). */
AESKIT_INLINE vaes_v vaes_load_hi64(vaes_v v, const uint8_t *p)
{
    return _mm512_mask_loadu_epi64(v, (__mmask8)0xAA, (const void *)p);
}
/* v with its first 64 bits XORed with a's (a masked XOR: valgrind, which
 * the constant-time test runs the emulation under, lacks vmovq xmm, xmm). */
AESKIT_INLINE vaes_v vaes_xor_q0(vaes_v v, __m128i a)
{
    return _mm512_mask_xor_epi64(v, (__mmask8)1, v, vaes_from128(a));
}
/* 1: GHASH's bulk takes each pair of vectors as two vectors of halves put
 * together by loads (vaes_gstep2_halves): two byte swaps and an XOR a pair
 * where vaes_gstep2_pv has two swaps, two unpacks and an XOR. */
#define VAES_GHALVES 1
#define vaes_bslli8(a) _mm512_bslli_epi128((a), 8)
#define vaes_bsrli8(a) _mm512_bsrli_epi128((a), 8)

/* acc in lane l of an otherwise zero vector. */
AESKIT_INLINE vaes_v vaes_acc_at(__m128i acc, size_t l)
{
    if (l == 0)
        return vaes_from128(acc);
    return _mm512_maskz_broadcast_i32x4((__mmask16)(0xFu << (4 * l)), acc);
}

/* ---- OCB3 -------------------------------------------------------------- */

AESKIT_INLINE vaes_v vaes_xor_lane(vaes_v v, __m128i a, size_t l)
{
    return _mm512_mask_xor_epi64(v, (__mmask8)(3u << (2 * l)), v, vaes_bcast(a));
}

AESKIT_INLINE vaes_v vaes_keep(vaes_v v, size_t nb)
{
    return _mm512_maskz_mov_epi64((__mmask8)((1u << (2 * nb)) - 1), v);
}

/* [L0, L0 ^ L1, L1, L1] */
AESKIT_INLINE vaes_v vaes_ocb_q(const aeskit_ocb_key *ok)
{
    const __m128i l0 = aeskit_load128(ok->l[0]), l1 = aeskit_load128(ok->l[1]);
    const __m256i lo = _mm256_setr_m128i(l0, _mm_xor_si128(l0, l1));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), _mm256_broadcastsi128_si256(l1), 1);
}
#define VAES_LOG2_BPV 2

/* ---- XTS --------------------------------------------------------------- */

/* Each 128-bit lane rotated left by a constant n bytes (vpalignr). */
#define vaes_rotl_bytes(a, n) _mm512_alignr_epi8((a), (a), 16 - (n))
AESKIT_INLINE vaes_v vaes_and(vaes_v a, vaes_v b) { return _mm512_and_si512(a, b); }
AESKIT_INLINE vaes_v vaes_sllv64(vaes_v a, vaes_v s) { return _mm512_sllv_epi64(a, s); }
AESKIT_INLINE vaes_v vaes_srlv64(vaes_v a, vaes_v s) { return _mm512_srlv_epi64(a, s); }
/* Each 64-bit element shifted left by a constant n (vpsllq). */
#define vaes_slli64(a, n) _mm512_slli_epi64((a), (n))

#define VAES_XTS_STASH 0   /* 32 registers hold a batch's tweaks, and more */
/* 1: a step's product by 0x86 as three shifts, not a zmm carry-less
 * multiply, which takes a cycle of Zen 4's AES units (vaes_body.h, XTS). */
#define VAES_XTS_SHIFTS 1
#define VAES_XTS_GPR 0   /* the vector steps: vaes_body.h, XTS */

AESKIT_INLINE __m128i vaes_lane_high(vaes_v v, size_t l)
{
    switch (l) {
    case 1:
        return _mm512_extracti32x4_epi32(v, 1);
    case 2:
        return _mm512_extracti32x4_epi32(v, 2);
    default:
        return _mm512_extracti32x4_epi32(v, 3);
    }
}

/* ---- lanes from separate blocks (multi-buffer) --------------------------- */

/* v with lane l (1..VAES_BPV-1, public) replaced by a. */
AESKIT_INLINE vaes_v vaes_insert_lane(vaes_v v, __m128i a, size_t l)
{
    switch (l) {
    case 1:
        return _mm512_inserti32x4(v, a, 1);
    case 2:
        return _mm512_inserti32x4(v, a, 2);
    default:
        return _mm512_inserti32x4(v, a, 3);
    }
}

/* v with lane l (1..VAES_BPV-1, public) replaced by the block at p. */
AESKIT_INLINE vaes_v vaes_insert_lane_mem(vaes_v v, const uint8_t *p, size_t l)
{
    return vaes_insert_lane(v, aeskit_load128(p), l);
}

#endif
