/*
 * clmul128.h: GHASH's arithmetic on 128-bit registers, written once for the
 * files that multiply with PCLMULQDQ (aesni.c, through simd_body.h, and the
 * vaes tables' short path and key setup in vaes_body.h). Include only from
 * code built with PCLMULQDQ and SSSE3.
 *
 * Blocks are byte-reversed into registers, so the bit-reflected field
 * element of SP 800-38D lies in the register as a polynomial with its bits
 * reversed. Powers of H are stored as H^i * x^-1: a product of two reflected
 * operands comes out one bit short, and the x^-1 makes up for it without a
 * shift per block. Products are Karatsuba's three (lo, mid, hi), summed
 * unreduced over many blocks, then reduced once, Montgomery-style, by
 * 0xC2 || 0^56 (x^128 + x^127 + x^126 + x^121 + 1, reflected).
 */
#ifndef AESKIT_CLMUL128_H
#define AESKIT_CLMUL128_H

#include "x86.h"

/* An unreduced 256-bit sum of products, as Karatsuba's three parts. */
typedef struct aeskit_clmul_sum {
    __m128i lo, mid, hi;
} aeskit_clmul_sum;

AESKIT_INLINE aeskit_clmul_sum aeskit_clmul_zero(void)
{
    const aeskit_clmul_sum s = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    return s;
}

/* The shuffle that byte-reverses a block into a register and back. */
AESKIT_INLINE __m128i aeskit_clmul_bswap(void)
{
    return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Karatsuba's half of h: hi ^ lo in the low 64 bits. */
AESKIT_INLINE __m128i aeskit_clmul_half(__m128i h)
{
    return _mm_xor_si128(h, _mm_shuffle_epi32(h, 0x4E));
}

/* s += x * h, h a stored power and hk its half (aeskit_clmul_half). */
AESKIT_INLINE void aeskit_clmul_mul_add(aeskit_clmul_sum *s, __m128i x, __m128i h,
                                          __m128i hk)
{
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(x, h, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(x, h, 0x11));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(aeskit_clmul_half(x), hk, 0x00));
}

/* s += a * ha + b * hb, ha and hb stored powers and ka and kb their halves:
 * the Karatsuba halves of a and b are made together, a's in the low qword
 * and b's in the high one (two unpacks and a XOR, where a block alone takes
 * a shuffle and a XOR); only the low qwords of ka and kb are read. */
AESKIT_INLINE void aeskit_clmul_mul_add2(aeskit_clmul_sum *s, __m128i a, __m128i b, __m128i ha,
                                         __m128i ka, __m128i hb, __m128i kb)
{
    const __m128i t = _mm_xor_si128(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(ha, a, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(ha, a, 0x11));
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(hb, b, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(hb, b, 0x11));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(ka, t, 0x00));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(kb, t, 0x10));
}

/* aeskit_clmul_mul_add2 in two halves, for a kernel that spreads a pair's
 * multiplies over two AES rounds: t the pair's Karatsuba halves (a's in
 * the low qword, b's in the high one), then b's three products, then a's. */
AESKIT_INLINE __m128i aeskit_clmul_pair_halves(__m128i a, __m128i b)
{
    return _mm_xor_si128(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
}

AESKIT_INLINE void aeskit_clmul_mul_add_pair_b(aeskit_clmul_sum *s, __m128i b, __m128i t,
                                               __m128i hb, __m128i kb)
{
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(hb, b, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(hb, b, 0x11));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(kb, t, 0x10));
}

AESKIT_INLINE void aeskit_clmul_mul_add_pair_a(aeskit_clmul_sum *s, __m128i a, __m128i t,
                                               __m128i ha, __m128i ka)
{
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(ha, a, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(ha, a, 0x11));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(ka, t, 0x00));
}

/* The 256-bit product hi:lo, reduced. */
AESKIT_INLINE __m128i aeskit_clmul_reduce256(__m128i lo, __m128i hi)
{
    const __m128i poly = _mm_set_epi64x(0, (long long)UINT64_C(0xC200000000000000));
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), _mm_clmulepi64_si128(lo, poly, 0x00));
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), _mm_clmulepi64_si128(lo, poly, 0x00));
    return _mm_xor_si128(hi, lo);
}

/* The sum, reduced: hi * x^128 + m * x^64 + lo, m Karatsuba's middle term
 * (s.mid ^ s.lo ^ s.hi), divided by x^128 in two folds of 64 bits, each
 * one multiply by 0xC2 and a swap of halves (reduce256's two steps): lo's
 * fold lands in the middle term and the middle term's in hi, so the middle
 * term is never split into halves and shifted into lo and hi. */
AESKIT_INLINE __m128i aeskit_clmul_reduce(aeskit_clmul_sum s)
{
    const __m128i poly = _mm_set_epi64x(0, (long long)UINT64_C(0xC200000000000000));
    __m128i m = _mm_xor_si128(s.mid, _mm_xor_si128(s.lo, s.hi));
    m = _mm_xor_si128(m, _mm_xor_si128(_mm_shuffle_epi32(s.lo, 0x4E),
                                       _mm_clmulepi64_si128(s.lo, poly, 0x00)));
    return _mm_xor_si128(s.hi, _mm_xor_si128(_mm_shuffle_epi32(m, 0x4E),
                                             _mm_clmulepi64_si128(m, poly, 0x00)));
}

/* a * b * x on register images: with b = H^i x^-1 this is a * H^i (how the
 * key setups raise H to its powers). */
AESKIT_INLINE __m128i aeskit_clmul_mul(__m128i a, __m128i b)
{
    aeskit_clmul_sum s = aeskit_clmul_zero();
    aeskit_clmul_mul_add(&s, a, b, aeskit_clmul_half(b));
    return aeskit_clmul_reduce(s);
}

/* H * x^-1 as a register image, from H in SP 800-38D's byte order: shift
 * left one bit; the x^0 bit that leaves comes back as x^-1 = x^127 + x^6 +
 * x + 1 (reflected: 0xC2... in the high word, 1 in the low), without a
 * branch on H. */
AESKIT_INLINE __m128i aeskit_clmul_h_xinv(const uint8_t h[16])
{
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);
    return _mm_set_epi64x((long long)h1, (long long)h0);
}

#endif
