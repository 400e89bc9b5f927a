/*
 * vaes_emu.h: TEST-ONLY emulation of the VAES, VPCLMULQDQ and AVX-512
 * intrinsics that the vaes backends use, so that vaes_avx2.c and
 * vaes_avx512.c can be built and tested on a CPU without those instructions
 * (a Zen 2, or CI's machine when it lacks them). Never ship a build that
 * uses it: the emulated kernels are several times slower than aesni's.
 *
 * What it is for: the meson option emulate_wide (meson.options) builds the
 * two vaes libraries with this header force-included (-include) and without
 * -mvaes -mvpclmulqdq -mavx512*, with AESKIT_EMULATE_WIDE defined so that
 * the two tables do not ask the CPU for what is emulated here. The test
 * suite then runs on backends named vaes_avx2 and vaes_avx512 as usual.
 *
 * What a pass means: the instructions' semantics are emulated (per Intel's
 * intrinsics guide: lane order, masks, immediates), from AES-NI, PCLMULQDQ
 * and AVX2, which the CPU has. A pass says that the kernels' logic is right
 * (lanes, batches, tails, folds, carries), not anything about their speed,
 * register pressure or instruction choice. tests/emu/test_emu.c checks every
 * operation here against a scalar model of Intel's pseudo-code.
 *
 * How: <immintrin.h> first (GCC declares the real intrinsics there with
 * target attributes), then every used name is #defined to an emulation
 * below, so the real ones are never called. The emulated __m512i is a
 * struct of two __m256i: h[0] holds 64-bit elements 0..3 (128-bit lanes 0
 * and 1), h[1] elements 4..7 (lanes 2 and 3). Immediates may be run-time
 * values here (the self-test loops over them); the kernels pass constants,
 * which the optimizer folds.
 *
 * Not emulated means not compiled: a real VAES/VPCLMULQDQ/AVX-512 intrinsic
 * called from code built without its -m flag fails to inline ("target
 * specific option mismatch") or takes a struct where it wants a vector, a
 * compile error either way (tests/test_emu.py checks that it is).
 */
#ifndef AESKIT_VAES_EMU_H
#define AESKIT_VAES_EMU_H

#if defined(__VAES__) || defined(__VPCLMULQDQ__) || defined(__AVX512F__)
#error "vaes_emu.h replaces VAES, VPCLMULQDQ and AVX-512: build without -mvaes, -mvpclmulqdq and -mavx512*"
#endif
#if !defined(__AES__) || !defined(__PCLMUL__) || !defined(__AVX2__)
#error "vaes_emu.h emulates on AES-NI, PCLMULQDQ and AVX2: build with -maes -mpclmul -mavx2"
#endif

#include <stdint.h>
#include <string.h>

#include <immintrin.h>

#define AESKIT_EMU_FN static inline __attribute__((always_inline, unused))

/* ---- types ------------------------------------------------------------- */

typedef struct aeskit_emu_m512i {
    __m256i h[2];
} __attribute__((aligned(64))) aeskit_emu_m512i;
typedef unsigned char aeskit_emu_mmask8;
typedef unsigned short aeskit_emu_mmask16;

/* The emulated __m512i is no register: vaes_body.h's VAES_PIN ("+v" asm
 * operands) cannot take it. VAES_PIN only steers register allocation. */
#define VAES_PIN(a, b, c) ((void)0)

/* ---- helpers ------------------------------------------------------------ */

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_make(__m256i lo, __m256i hi)
{
    aeskit_emu_m512i r;
    r.h[0] = lo;
    r.h[1] = hi;
    return r;
}

AESKIT_EMU_FN void aeskit_emu_to_bytes(uint8_t out[64], aeskit_emu_m512i a)
{
    _mm256_storeu_si256((__m256i *)(void *)out, a.h[0]);
    _mm256_storeu_si256((__m256i *)(void *)(out + 32), a.h[1]);
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_from_bytes(const uint8_t in[64])
{
    return aeskit_emu_make(_mm256_loadu_si256((const __m256i *)(const void *)in),
                           _mm256_loadu_si256((const __m256i *)(const void *)(in + 32)));
}

/* The 128-bit lanes of a ymm: 0 low, 1 high. */
AESKIT_EMU_FN __m128i aeskit_emu_lo128(__m256i a) { return _mm256_castsi256_si128(a); }
AESKIT_EMU_FN __m128i aeskit_emu_hi128(__m256i a) { return _mm256_extracti128_si256(a, 1); }
AESKIT_EMU_FN __m256i aeskit_emu_join128(__m128i lo, __m128i hi) { return _mm256_set_m128i(hi, lo); }

/* Four bits of an 8-bit mask as 64-bit element masks of a ymm. */
AESKIT_EMU_FN __m256i aeskit_emu_qmask(unsigned k4)
{
    const __m256i bit = _mm256_setr_epi64x(1, 2, 4, 8);
    return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x((long long)(k4 & 0xF)), bit), bit);
}

/* Eight bits of a 16-bit mask as 32-bit element masks of a ymm. */
AESKIT_EMU_FN __m256i aeskit_emu_dmask(unsigned k8)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)(k8 & 0xFF)), bit), bit);
}

/* PCLMULQDQ with a run-time immediate: only bits 0 and 4 count. */
AESKIT_EMU_FN __m128i aeskit_emu_clmul128(__m128i a, __m128i b, int imm)
{
    switch (imm & 0x11) {
    case 0x00: return _mm_clmulepi64_si128(a, b, 0x00);
    case 0x01: return _mm_clmulepi64_si128(a, b, 0x01);
    case 0x10: return _mm_clmulepi64_si128(a, b, 0x10);
    default:   return _mm_clmulepi64_si128(a, b, 0x11);
    }
}

/* Per 128-bit lane of a ymm: the lane operations below, on ymm. */
#define AESKIT_EMU_LANES2(name, op)                                                      \
    AESKIT_EMU_FN __m256i name(__m256i a, __m256i b)                                     \
    {                                                                                    \
        return aeskit_emu_join128(op(aeskit_emu_lo128(a), aeskit_emu_lo128(b)),         \
                                  op(aeskit_emu_hi128(a), aeskit_emu_hi128(b)));        \
    }

/* ---- ymm: VAES and VPCLMULQDQ ------------------------------------------- */

AESKIT_EMU_LANES2(aeskit_emu_mm256_aesenc_epi128, _mm_aesenc_si128)
AESKIT_EMU_LANES2(aeskit_emu_mm256_aesenclast_epi128, _mm_aesenclast_si128)
AESKIT_EMU_LANES2(aeskit_emu_mm256_aesdec_epi128, _mm_aesdec_si128)
AESKIT_EMU_LANES2(aeskit_emu_mm256_aesdeclast_epi128, _mm_aesdeclast_si128)

AESKIT_EMU_FN __m256i aeskit_emu_mm256_clmulepi64_epi128(__m256i a, __m256i b, int imm)
{
    return aeskit_emu_join128(aeskit_emu_clmul128(aeskit_emu_lo128(a), aeskit_emu_lo128(b), imm),
                              aeskit_emu_clmul128(aeskit_emu_hi128(a), aeskit_emu_hi128(b), imm));
}

/* ---- ymm helpers for the zmm operations (per 128-bit lane) -------------- */

/* VPSHUFD: each lane's dwords by imm's 2-bit fields (vpermilps, variable). */
AESKIT_EMU_FN __m256i aeskit_emu_pshufd256(__m256i a, int imm)
{
    const __m256i idx = _mm256_setr_epi32(imm & 3, (imm >> 2) & 3, (imm >> 4) & 3, (imm >> 6) & 3,
                                          imm & 3, (imm >> 2) & 3, (imm >> 4) & 3, (imm >> 6) & 3);
    return _mm256_castps_si256(_mm256_permutevar_ps(_mm256_castsi256_ps(a), idx));
}

/* VPSLLDQ: byte i of a lane takes byte i - n, zero below; n > 15 is 16. */
AESKIT_EMU_FN __m256i aeskit_emu_bslli256(__m256i a, int imm)
{
    const unsigned n = (unsigned)imm & 0xFF;
    const __m256i i = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                       0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* i - n < 0 has bit 7 set: vpshufb writes zero */
    return _mm256_shuffle_epi8(a, _mm256_sub_epi8(i, _mm256_set1_epi8((char)(n > 16 ? 16 : n))));
}

/* VPSRLDQ: byte i of a lane takes byte i + n, zero from 16; n > 15 is 16. */
AESKIT_EMU_FN __m256i aeskit_emu_bsrli256(__m256i a, int imm)
{
    const unsigned n = (unsigned)imm & 0xFF;
    const __m256i i = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                       0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* 0x70 + i + n: bit 7 set exactly when i + n >= 16, low 4 bits i + n otherwise */
    return _mm256_shuffle_epi8(a, _mm256_add_epi8(i, _mm256_set1_epi8((char)(0x70 + (n > 16 ? 16 : n)))));
}

/* VPTERNLOG: bit j of the result is imm[(a_j << 2) | (b_j << 1) | c_j], as
 * the OR of the minterms imm selects. */
AESKIT_EMU_FN __m256i aeskit_emu_ternlog256(__m256i a, __m256i b, __m256i c, int imm)
{
    if ((imm & 0xFF) == 0x96)   /* a ^ b ^ c, what the kernels use: the test checks it too */
        return _mm256_xor_si256(_mm256_xor_si256(a, b), c);
    const __m256i ones = _mm256_set1_epi32(-1);
    const __m256i na = _mm256_xor_si256(a, ones), nb = _mm256_xor_si256(b, ones),
                  nc = _mm256_xor_si256(c, ones);
    __m256i r = _mm256_setzero_si256();
#define AESKIT_EMU_TERM(bit, x, y, z)                                                    \
    if (imm & (bit))                                                                     \
        r = _mm256_or_si256(r, _mm256_and_si256(_mm256_and_si256(x, y), z));
    AESKIT_EMU_TERM(0x01, na, nb, nc)
    AESKIT_EMU_TERM(0x02, na, nb, c)
    AESKIT_EMU_TERM(0x04, na, b, nc)
    AESKIT_EMU_TERM(0x08, na, b, c)
    AESKIT_EMU_TERM(0x10, a, nb, nc)
    AESKIT_EMU_TERM(0x20, a, nb, c)
    AESKIT_EMU_TERM(0x40, a, b, nc)
    AESKIT_EMU_TERM(0x80, a, b, c)
#undef AESKIT_EMU_TERM
    return r;
}

/* ---- zmm ---------------------------------------------------------------- */

/* Element-wise on both halves with a ymm operation. */
#define AESKIT_EMU_HALVES2(name, op)                                                     \
    AESKIT_EMU_FN aeskit_emu_m512i name(aeskit_emu_m512i a, aeskit_emu_m512i b)          \
    {                                                                                    \
        return aeskit_emu_make(op(a.h[0], b.h[0]), op(a.h[1], b.h[1]));                  \
    }

AESKIT_EMU_HALVES2(aeskit_emu_mm512_aesenc_epi128, aeskit_emu_mm256_aesenc_epi128)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_aesenclast_epi128, aeskit_emu_mm256_aesenclast_epi128)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_aesdec_epi128, aeskit_emu_mm256_aesdec_epi128)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_aesdeclast_epi128, aeskit_emu_mm256_aesdeclast_epi128)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_add_epi32, _mm256_add_epi32)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_add_epi64, _mm256_add_epi64)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_xor_si512, _mm256_xor_si256)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_and_si512, _mm256_and_si256)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_shuffle_epi8, _mm256_shuffle_epi8)     /* per lane */
AESKIT_EMU_HALVES2(aeskit_emu_mm512_unpacklo_epi64, _mm256_unpacklo_epi64) /* per lane */
AESKIT_EMU_HALVES2(aeskit_emu_mm512_unpackhi_epi64, _mm256_unpackhi_epi64) /* per lane */
/* VPSLLVQ / VPSRLVQ: element i by element i of b; counts above 63 give 0,
 * as AVX2's do */
AESKIT_EMU_HALVES2(aeskit_emu_mm512_sllv_epi64, _mm256_sllv_epi64)
AESKIT_EMU_HALVES2(aeskit_emu_mm512_srlv_epi64, _mm256_srlv_epi64)

/* VPSLLQ by an immediate: every element by imm[7:0]; above 63 gives 0, as
 * AVX2's count in a register does (the immediate may be a run-time value
 * here). */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_slli_epi64(aeskit_emu_m512i a, unsigned imm)
{
    const __m128i n = _mm_cvtsi32_si128((int)(imm & 0xFF));
    return aeskit_emu_make(_mm256_sll_epi64(a.h[0], n), _mm256_sll_epi64(a.h[1], n));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_clmulepi64_epi128(aeskit_emu_m512i a,
                                                                   aeskit_emu_m512i b, int imm)
{
    return aeskit_emu_make(aeskit_emu_mm256_clmulepi64_epi128(a.h[0], b.h[0], imm),
                           aeskit_emu_mm256_clmulepi64_epi128(a.h[1], b.h[1], imm));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_ternarylogic_epi64(aeskit_emu_m512i a,
                                                                    aeskit_emu_m512i b,
                                                                    aeskit_emu_m512i c, int imm)
{
    return aeskit_emu_make(aeskit_emu_ternlog256(a.h[0], b.h[0], c.h[0], imm),
                           aeskit_emu_ternlog256(a.h[1], b.h[1], c.h[1], imm));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_shuffle_epi32(aeskit_emu_m512i a, int imm)
{
    return aeskit_emu_make(aeskit_emu_pshufd256(a.h[0], imm), aeskit_emu_pshufd256(a.h[1], imm));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_bslli_epi128(aeskit_emu_m512i a, int imm)
{
    return aeskit_emu_make(aeskit_emu_bslli256(a.h[0], imm), aeskit_emu_bslli256(a.h[1], imm));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_bsrli_epi128(aeskit_emu_m512i a, int imm)
{
    return aeskit_emu_make(aeskit_emu_bsrli256(a.h[0], imm), aeskit_emu_bsrli256(a.h[1], imm));
}

/* VALIGNQ: 64-bit elements imm[2:0] .. imm[2:0] + 7 of b (0..7) : a (8..15). */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_alignr_epi64(aeskit_emu_m512i a,
                                                              aeskit_emu_m512i b, int imm)
{
    uint8_t t[128];
    aeskit_emu_to_bytes(t, b);
    aeskit_emu_to_bytes(t + 64, a);
    return aeskit_emu_from_bytes(t + 8 * ((unsigned)imm & 7));
}

/* VPALIGNR: per 128-bit lane, bytes imm .. imm + 15 of b (0..15) : a
 * (16..31), zero from 32; imm > 31 gives zero. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_alignr_epi8(aeskit_emu_m512i a,
                                                             aeskit_emu_m512i b, int imm)
{
    const unsigned n = (unsigned)imm & 0xFF;
    uint8_t x[64], y[64], r[64];
    aeskit_emu_to_bytes(x, a);
    aeskit_emu_to_bytes(y, b);
    for (unsigned l = 0; l < 64; l += 16)
        for (unsigned i = 0; i < 16; i++) {
            const unsigned k = i + n;
            r[l + i] = k < 16 ? y[l + k] : k < 32 ? x[l + k - 16] : 0;
        }
    return aeskit_emu_from_bytes(r);
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_setzero_si512(void)
{
    return aeskit_emu_make(_mm256_setzero_si256(), _mm256_setzero_si256());
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_set1_epi64(long long a)
{
    return aeskit_emu_make(_mm256_set1_epi64x(a), _mm256_set1_epi64x(a));
}

/* Arguments from element 7 down to element 0, as Intel's _set_. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_set_epi64(long long e7, long long e6, long long e5,
                                                           long long e4, long long e3, long long e2,
                                                           long long e1, long long e0)
{
    return aeskit_emu_make(_mm256_set_epi64x(e3, e2, e1, e0), _mm256_set_epi64x(e7, e6, e5, e4));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_loadu_si512(const void *p)
{
    return aeskit_emu_from_bytes((const uint8_t *)p);
}

AESKIT_EMU_FN void aeskit_emu_mm512_storeu_si512(void *p, aeskit_emu_m512i a)
{
    aeskit_emu_to_bytes((uint8_t *)p, a);
}

/* VBROADCASTI32X4: a in every lane. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_broadcast_i32x4(__m128i a)
{
    const __m256i b = _mm256_broadcastsi128_si256(a);
    return aeskit_emu_make(b, b);
}

/* The same, 32-bit element i zeroed where bit i of k is clear. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_maskz_broadcast_i32x4(aeskit_emu_mmask16 k,
                                                                       __m128i a)
{
    const __m256i b = _mm256_broadcastsi128_si256(a);
    return aeskit_emu_make(_mm256_and_si256(b, aeskit_emu_dmask(k & 0xFFu)),
                           _mm256_and_si256(b, aeskit_emu_dmask((unsigned)k >> 8)));
}

/* Bit i: unsigned 64-bit element i of a < that of b. */
AESKIT_EMU_FN aeskit_emu_mmask8 aeskit_emu_mm512_cmplt_epu64_mask(aeskit_emu_m512i a,
                                                                  aeskit_emu_m512i b)
{
    const __m256i bias = _mm256_set1_epi64x(INT64_MIN);
    unsigned m = 0;
    for (int i = 0; i < 2; i++) {
        const __m256i lt = _mm256_cmpgt_epi64(_mm256_xor_si256(b.h[i], bias),
                                              _mm256_xor_si256(a.h[i], bias));
        m |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(lt)) << (4 * i);
    }
    return (aeskit_emu_mmask8)m;
}

/* 64-bit element i: op(a, b) where bit i of k is set, else src's. */
#define AESKIT_EMU_MASK_OP(name, op)                                                     \
    AESKIT_EMU_FN aeskit_emu_m512i name(aeskit_emu_m512i src, aeskit_emu_mmask8 k,       \
                                        aeskit_emu_m512i a, aeskit_emu_m512i b)          \
    {                                                                                    \
        aeskit_emu_m512i r;                                                              \
        for (int i = 0; i < 2; i++)                                                      \
            r.h[i] = _mm256_blendv_epi8(src.h[i], op(a.h[i], b.h[i]),                    \
                                        aeskit_emu_qmask((unsigned)k >> (4 * i)));       \
        return r;                                                                        \
    }
AESKIT_EMU_MASK_OP(aeskit_emu_mm512_mask_sub_epi64, _mm256_sub_epi64)
AESKIT_EMU_MASK_OP(aeskit_emu_mm512_mask_xor_epi64, _mm256_xor_si256)

/* 64-bit element i: the one at p where bit i of k is set, else src's (the
 * whole 64 bytes at p are read: the kernels only ask for in-bounds ones). */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_mask_loadu_epi64(aeskit_emu_m512i src,
                                                                  aeskit_emu_mmask8 k,
                                                                  const void *p)
{
    const aeskit_emu_m512i a = aeskit_emu_mm512_loadu_si512(p);
    return aeskit_emu_make(_mm256_blendv_epi8(src.h[0], a.h[0], aeskit_emu_qmask(k)),
                           _mm256_blendv_epi8(src.h[1], a.h[1], aeskit_emu_qmask((unsigned)k >> 4)));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_maskz_mov_epi64(aeskit_emu_mmask8 k,
                                                                 aeskit_emu_m512i a)
{
    return aeskit_emu_make(_mm256_and_si256(a.h[0], aeskit_emu_qmask(k)),
                           _mm256_and_si256(a.h[1], aeskit_emu_qmask((unsigned)k >> 4)));
}

/* Lane imm[1:0] replaced by b / returned. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_inserti32x4(aeskit_emu_m512i a, __m128i b, int imm)
{
    uint8_t t[64];
    aeskit_emu_to_bytes(t, a);
    _mm_storeu_si128((__m128i *)(void *)(t + 16 * ((unsigned)imm & 3)), b);
    return aeskit_emu_from_bytes(t);
}

AESKIT_EMU_FN __m128i aeskit_emu_mm512_extracti32x4_epi32(aeskit_emu_m512i a, int imm)
{
    uint8_t t[64];
    aeskit_emu_to_bytes(t, a);
    return _mm_loadu_si128((const __m128i *)(const void *)(t + 16 * ((unsigned)imm & 3)));
}

/* Lanes 0 and 1 from a's lanes imm[1:0] and imm[3:2], lanes 2 and 3 from
 * b's lanes imm[5:4] and imm[7:6]. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_shuffle_i64x2(aeskit_emu_m512i a, aeskit_emu_m512i b,
                                                               int imm)
{
    uint8_t ta[64], tb[64], t[64];
    aeskit_emu_to_bytes(ta, a);
    aeskit_emu_to_bytes(tb, b);
    for (unsigned l = 0; l < 4; l++)
        memcpy(t + 16 * l, (l < 2 ? ta : tb) + 16 * (((unsigned)imm >> (2 * l)) & 3), 16);
    return aeskit_emu_from_bytes(t);
}

/* Half imm[0] replaced by b / returned. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_inserti64x4(aeskit_emu_m512i a, __m256i b, int imm)
{
    a.h[imm & 1] = b;
    return a;
}

AESKIT_EMU_FN __m256i aeskit_emu_mm512_extracti64x4_epi64(aeskit_emu_m512i a, int imm)
{
    return a.h[imm & 1];
}

AESKIT_EMU_FN __m128i aeskit_emu_mm512_castsi512_si128(aeskit_emu_m512i a)
{
    return _mm256_castsi256_si128(a.h[0]);
}

AESKIT_EMU_FN __m256i aeskit_emu_mm512_castsi512_si256(aeskit_emu_m512i a) { return a.h[0]; }

/* The upper 256 bits are undefined: filled with a pattern, not zero, so
 * that code relying on them would show. */
AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_castsi256_si512(__m256i a)
{
    return aeskit_emu_make(a, _mm256_set1_epi32((int)0xDEADBEEF));
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_zextsi128_si512(__m128i a)
{
    return aeskit_emu_make(_mm256_zextsi128_si256(a), _mm256_setzero_si256());
}

AESKIT_EMU_FN aeskit_emu_m512i aeskit_emu_mm512_zextsi256_si512(__m256i a)
{
    return aeskit_emu_make(a, _mm256_setzero_si256());
}

#undef AESKIT_EMU_LANES2
#undef AESKIT_EMU_HALVES2
#undef AESKIT_EMU_MASK_OP

/* ---- the names the sources use, mapped. GCC defines some as macros (at
 * -O0 those that take an immediate): each is #undef'd first. ------------ */

#define __m512i aeskit_emu_m512i
#define __mmask8 aeskit_emu_mmask8
#define __mmask16 aeskit_emu_mmask16

#undef _mm256_aesenc_epi128
#define _mm256_aesenc_epi128 aeskit_emu_mm256_aesenc_epi128
#undef _mm256_aesenclast_epi128
#define _mm256_aesenclast_epi128 aeskit_emu_mm256_aesenclast_epi128
#undef _mm256_aesdec_epi128
#define _mm256_aesdec_epi128 aeskit_emu_mm256_aesdec_epi128
#undef _mm256_aesdeclast_epi128
#define _mm256_aesdeclast_epi128 aeskit_emu_mm256_aesdeclast_epi128
#undef _mm256_clmulepi64_epi128
#define _mm256_clmulepi64_epi128(a, b, imm) aeskit_emu_mm256_clmulepi64_epi128((a), (b), (int)(imm))

#undef _mm512_add_epi32
#define _mm512_add_epi32 aeskit_emu_mm512_add_epi32
#undef _mm512_add_epi64
#define _mm512_add_epi64 aeskit_emu_mm512_add_epi64
#undef _mm512_aesdec_epi128
#define _mm512_aesdec_epi128 aeskit_emu_mm512_aesdec_epi128
#undef _mm512_aesdeclast_epi128
#define _mm512_aesdeclast_epi128 aeskit_emu_mm512_aesdeclast_epi128
#undef _mm512_aesenc_epi128
#define _mm512_aesenc_epi128 aeskit_emu_mm512_aesenc_epi128
#undef _mm512_aesenclast_epi128
#define _mm512_aesenclast_epi128 aeskit_emu_mm512_aesenclast_epi128
#undef _mm512_alignr_epi8
#define _mm512_alignr_epi8(a, b, imm) aeskit_emu_mm512_alignr_epi8((a), (b), (int)(imm))
#undef _mm512_alignr_epi64
#define _mm512_alignr_epi64(a, b, imm) aeskit_emu_mm512_alignr_epi64((a), (b), (int)(imm))
#undef _mm512_broadcast_i32x4
#define _mm512_broadcast_i32x4 aeskit_emu_mm512_broadcast_i32x4
#undef _mm512_bslli_epi128
#define _mm512_bslli_epi128(a, imm) aeskit_emu_mm512_bslli_epi128((a), (int)(imm))
#undef _mm512_bsrli_epi128
#define _mm512_bsrli_epi128(a, imm) aeskit_emu_mm512_bsrli_epi128((a), (int)(imm))
#undef _mm512_castsi256_si512
#define _mm512_castsi256_si512 aeskit_emu_mm512_castsi256_si512
#undef _mm512_castsi512_si128
#define _mm512_castsi512_si128 aeskit_emu_mm512_castsi512_si128
#undef _mm512_castsi512_si256
#define _mm512_castsi512_si256 aeskit_emu_mm512_castsi512_si256
#undef _mm512_clmulepi64_epi128
#define _mm512_clmulepi64_epi128(a, b, imm) aeskit_emu_mm512_clmulepi64_epi128((a), (b), (int)(imm))
#undef _mm512_cmplt_epu64_mask
#define _mm512_cmplt_epu64_mask aeskit_emu_mm512_cmplt_epu64_mask
#undef _mm512_extracti32x4_epi32
#define _mm512_extracti32x4_epi32(a, imm) aeskit_emu_mm512_extracti32x4_epi32((a), (int)(imm))
#undef _mm512_extracti64x4_epi64
#define _mm512_extracti64x4_epi64(a, imm) aeskit_emu_mm512_extracti64x4_epi64((a), (int)(imm))
#undef _mm512_inserti32x4
#define _mm512_inserti32x4(a, b, imm) aeskit_emu_mm512_inserti32x4((a), (b), (int)(imm))
#undef _mm512_inserti64x4
#define _mm512_inserti64x4(a, b, imm) aeskit_emu_mm512_inserti64x4((a), (b), (int)(imm))
#undef _mm512_loadu_si512
#define _mm512_loadu_si512 aeskit_emu_mm512_loadu_si512
#undef _mm512_mask_sub_epi64
#define _mm512_mask_sub_epi64 aeskit_emu_mm512_mask_sub_epi64
#undef _mm512_mask_xor_epi64
#define _mm512_mask_xor_epi64 aeskit_emu_mm512_mask_xor_epi64
#undef _mm512_maskz_broadcast_i32x4
#define _mm512_maskz_broadcast_i32x4 aeskit_emu_mm512_maskz_broadcast_i32x4
#undef _mm512_mask_loadu_epi64
#define _mm512_mask_loadu_epi64 aeskit_emu_mm512_mask_loadu_epi64
#undef _mm512_maskz_mov_epi64
#define _mm512_maskz_mov_epi64 aeskit_emu_mm512_maskz_mov_epi64
#undef _mm512_set1_epi64
#define _mm512_set1_epi64 aeskit_emu_mm512_set1_epi64
#undef _mm512_set_epi64
#define _mm512_set_epi64 aeskit_emu_mm512_set_epi64
#undef _mm512_setzero_si512
#define _mm512_setzero_si512 aeskit_emu_mm512_setzero_si512
#undef _mm512_shuffle_epi32
#define _mm512_shuffle_epi32(a, imm) aeskit_emu_mm512_shuffle_epi32((a), (int)(imm))
#undef _mm512_shuffle_i64x2
#define _mm512_shuffle_i64x2(a, b, imm) aeskit_emu_mm512_shuffle_i64x2((a), (b), (int)(imm))
#undef _mm512_shuffle_epi8
#define _mm512_shuffle_epi8 aeskit_emu_mm512_shuffle_epi8
#undef _mm512_slli_epi64
#define _mm512_slli_epi64(a, imm) aeskit_emu_mm512_slli_epi64((a), (unsigned)(imm))
#undef _mm512_sllv_epi64
#define _mm512_sllv_epi64 aeskit_emu_mm512_sllv_epi64
#undef _mm512_srlv_epi64
#define _mm512_srlv_epi64 aeskit_emu_mm512_srlv_epi64
#undef _mm512_storeu_si512
#define _mm512_storeu_si512 aeskit_emu_mm512_storeu_si512
#undef _mm512_ternarylogic_epi64
#define _mm512_ternarylogic_epi64(a, b, c, imm)                                          \
    aeskit_emu_mm512_ternarylogic_epi64((a), (b), (c), (int)(imm))
#undef _mm512_unpackhi_epi64
#define _mm512_unpackhi_epi64 aeskit_emu_mm512_unpackhi_epi64
#undef _mm512_unpacklo_epi64
#define _mm512_unpacklo_epi64 aeskit_emu_mm512_unpacklo_epi64
#undef _mm512_and_si512
#define _mm512_and_si512 aeskit_emu_mm512_and_si512
#undef _mm512_xor_si512
#define _mm512_xor_si512 aeskit_emu_mm512_xor_si512
#undef _mm512_zextsi128_si512
#define _mm512_zextsi128_si512 aeskit_emu_mm512_zextsi128_si512
#undef _mm512_zextsi256_si512
#define _mm512_zextsi256_si512 aeskit_emu_mm512_zextsi256_si512

#endif
