/*
 * ghash_ct64.c: constant-time GHASH on 64-bit words, for the portable backend.
 *
 * Why: the portable backend must leak nothing through timing or cache, so the
 * usual 4-bit or 8-bit tables of multiples of H are out (they are indexed by
 * data). This file multiplies with the CPU's integer multiplier instead,
 * made carry-less by spreading the bits out (the technique of BearSSL's
 * ghash_ctmul64). Needs only C11 and a 64-bit multiply that takes constant
 * time (true of every 64-bit CPU we target; some 32-bit cores, where a 64-bit
 * product is a library call or has an early exit, are not constant time).
 * Cost: 96 multiplications per block; meant as the reference and the
 * fallback, not for speed.
 *
 * Carry-less product from an integer product. Split x into four words
 * x_i = x & (0x1111... << i), i = 0..3, likewise y. In x_i * y_j every bit
 * position k below 64 collects at most 16 single-bit terms, and at most 15
 * unless k >= 60; the terms all land on positions k = i + j (mod 4), so the
 * product is a sum of 4-bit "digits" each holding its count, with no carry
 * from one digit into the next (the top digit's carry leaves the word).
 * The parity of each count, bit k of the product, is the carry-less bit.
 * Sixteen multiplications give the low 64 bits of the 127-bit product.
 * The high 64 come from the same routine on bit-reversed inputs:
 * clmul(rev x, rev y) is the 127-bit product reversed, so its low word,
 * reversed again and shifted right by one, is the high word.
 *
 * Bit order. A block read big-endian as a 128-bit integer holds the
 * coefficient of x^i at bit 127 - i (GCM's reflected order). The integer
 * product of two such values then holds the coefficient of x^j at bit
 * 254 - j: one bit short of the 256-bit reflected order. Instead of
 * shifting every product left by one, ghash_key stores H' = H * x^-1 mod P,
 * i.e. H shifted left by one bit, plus x^-1 = x^127 + x^6 + x + 1 (the
 * constant 0xC2000...01) when H's x^0 bit falls out. Then a 128x128 product
 * with H' read as 256 reflected bits is exactly a * H.
 *
 * Reduction. With bit k standing for x^(255-k), the low 128 bits are the
 * high-degree half. Reading bits as a polynomial in t (t^k for bit k), the
 * value is x^255 * V(1/x), and P becomes its reciprocal
 * P*(t) = t^128 + t^127 + t^126 + t^121 + 1. Adding S * P* for the S that
 * clears the low 128 bits and keeping the high 128 is a Montgomery step by
 * t^128, which in x is exactly reduction mod P. P* = 1 (mod t^64) makes S
 * one word at a time: the word itself, folded in with shifts by 57, 62, 63
 * and 64.
 *
 * Karatsuba on the 64-bit halves: 3 products of 64x64 bits, each needing
 * its low and high word, hence 6 calls of 16 multiplications.
 *
 * ghash_key layout (hk->w): h0, h1, h0 ^ h1 and their bit-reversals, where
 * h1:h0 is H' as a 128-bit integer. Contract: aeskit.h.
 */
#include <assert.h>

#include "common.h"
#include "ghash_ct64.h"

enum { CT64_H0, CT64_H1, CT64_H2, CT64_H0R, CT64_H1R, CT64_H2R, CT64_WORDS };
static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= CT64_WORDS * sizeof(uint64_t),
              "aeskit_ghash_key holds the ct64 GHASH key");

/* Low 64 bits of the carry-less product x * y. */
static inline uint64_t clmul_lo(uint64_t x, uint64_t y)
{
    const uint64_t m0 = UINT64_C(0x1111111111111111);
    const uint64_t m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3;
    const uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
    const uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
    const uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
    const uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
    const uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
    const uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
    return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

static inline uint64_t rev64(uint64_t x)
{
    x = ((x & UINT64_C(0x5555555555555555)) << 1) | ((x >> 1) & UINT64_C(0x5555555555555555));
    x = ((x & UINT64_C(0x3333333333333333)) << 2) | ((x >> 2) & UINT64_C(0x3333333333333333));
    x = ((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4) | ((x >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F));
    x = ((x & UINT64_C(0x00FF00FF00FF00FF)) << 8) | ((x >> 8) & UINT64_C(0x00FF00FF00FF00FF));
    x = ((x & UINT64_C(0x0000FFFF0000FFFF)) << 16) | ((x >> 16) & UINT64_C(0x0000FFFF0000FFFF));
    return (x << 32) | (x >> 32);
}

/* High word of the 127-bit product, given both operands bit-reversed. */
static inline uint64_t clmul_hi_rev(uint64_t xr, uint64_t yr)
{
    return rev64(clmul_lo(xr, yr)) >> 1;
}

/* Fold word s (the lowest uncleared one) into the two words above it. */
static inline void fold(uint64_t s, uint64_t *mid, uint64_t *high)
{
    *mid ^= (s << 63) ^ (s << 62) ^ (s << 57);
    *high ^= s ^ (s >> 1) ^ (s >> 2) ^ (s >> 7);
}

void aeskit_ct64_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);    /* all ones iff H has x^0 */
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);

    hk->w[CT64_H0] = h0;
    hk->w[CT64_H1] = h1;
    hk->w[CT64_H2] = h0 ^ h1;
    hk->w[CT64_H0R] = rev64(h0);
    hk->w[CT64_H1R] = rev64(h1);
    hk->w[CT64_H2R] = rev64(h0 ^ h1);
    hk->max_blocks = max_blocks;   /* H alone serves any length */
    hk->from = 0;
    hk->used = CT64_WORDS * sizeof(uint64_t);
}

void aeskit_ct64_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                       size_t n)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(aeskit_ghash_serves(hk, n));
    if (n == 0)
        return;
    const uint64_t h0 = hk->w[CT64_H0], h1 = hk->w[CT64_H1], h2 = hk->w[CT64_H2];
    const uint64_t h0r = hk->w[CT64_H0R], h1r = hk->w[CT64_H1R], h2r = hk->w[CT64_H2R];
    uint64_t y1 = aeskit_load_be64(acc), y0 = aeskit_load_be64(acc + 8);

    for (; n > 0; n--, p += AESKIT_BLOCK) {
        y1 ^= aeskit_load_be64(p);
        y0 ^= aeskit_load_be64(p + 8);
        const uint64_t y2 = y0 ^ y1;
        const uint64_t y0r = rev64(y0), y1r = rev64(y1), y2r = y0r ^ y1r;

        const uint64_t z0 = clmul_lo(y0, h0), z0h = clmul_hi_rev(y0r, h0r);
        const uint64_t z1 = clmul_lo(y1, h1), z1h = clmul_hi_rev(y1r, h1r);
        const uint64_t z2 = clmul_lo(y2, h2) ^ z0 ^ z1;
        const uint64_t z2h = clmul_hi_rev(y2r, h2r) ^ z0h ^ z1h;

        /* v3:v2:v1:v0, v0 the low word: the 256-bit reflected product */
        uint64_t v0 = z0, v1 = z0h ^ z2, v2 = z1 ^ z2h, v3 = z1h;
        fold(v0, &v1, &v2);
        fold(v1, &v2, &v3);
        y1 = v3;
        y0 = v2;
    }
    aeskit_store_be64(acc, y1);
    aeskit_store_be64(acc + 8, y0);
}
