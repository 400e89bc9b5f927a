/*
 * ghash_clmul.c: GHASH with PCLMULQDQ on 128-bit registers, for the aesni
 * backend.
 *
 * Needs PCLMULQDQ, SSSE3 (pshufb) and SSE2; built in the aesni library with
 * -maes -mpclmul -mssse3 -msse4.1 and called only after the CPU check.
 *
 * Lanes: one __m128i holds one block byte-reversed at load (pshufb), i.e. the
 * block as a big-endian 128-bit integer, where the coefficient of x^i sits
 * at bit 127 - i (GCM's reflected order).
 *
 * Bit order without shifts. The carry-less product of two such values has
 * the coefficient of x^j at bit 254 - j, one short of the 256-bit reflected
 * order. ghash_key therefore stores every power as H^i * x^-1 mod P: the
 * product read as 256 reflected bits is then exactly the wanted one. The
 * powers are built with the same multiply: (H^i x^-1)(H x^-1) x =
 * H^(i+1) x^-1.
 *
 * Reduction (derivation in ghash_ct64.c): with bit k standing for x^(255-k),
 * the low 128 bits are the high-degree half; clearing them one 64-bit word
 * at a time is a Montgomery step with the reciprocal polynomial, whose low
 * word is 1 and whose next word is t^57 + t^62 + t^63 = 0xC200000000000000.
 * Each step is one PCLMULQDQ by that constant, a qword swap and an XOR.
 * The arithmetic itself is clmul128.h's, shared with aesni_gcm.c and the
 * vaes tables.
 *
 * Aggregation: 8 blocks per reduction, sum of X_i * H^(9-i) with the
 * accumulator folded into X_1, so the serial chain is one multiply and one
 * reduction per 128 bytes and the other products overlap it. Products are
 * Karatsuba (3 PCLMULQDQ per block; the hi^lo half of each power is
 * precomputed) and left unreduced until the sum. A 1..7 block tail uses
 * H^r..H^1 the same way.
 *
 * Speed: bulk is bound by PCLMULQDQ throughput. Zen 4 issues one every
 * ~2 cycles, so 26 per 128 bytes floor at ~0.4 c/B. A shift-based
 * reduction (24 PCLMULQDQ) is no better in bulk and slower for short
 * inputs, and aggregating 16 blocks gains little over 8. Beating this
 * takes VPCLMULQDQ on wider vectors.
 *
 * ghash_key layout (hk->w as bytes): 16 * i holds H^(i+1) * x^-1 for
 * i = 0..7 as a register image; 128 + 16 * i holds its hi ^ lo in the low
 * qword. Contract: aeskit.h.
 */
#include "aesni.h"
#include "clmul128.h"

#define CLMUL_W AESKIT_CLMUL_W
#define CLMUL_UNROLL AESKIT_UNROLL(8) /* CLMUL_W */

#define CLMUL_KARATSUBA_OFF (CLMUL_W * AESKIT_BLOCK)
static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= 2 * CLMUL_W * AESKIT_BLOCK,
              "aeskit_ghash_key holds the clmul powers and their Karatsuba halves");

/* H^(i+1) * x^-1 and its Karatsuba half, i = 0..CLMUL_W-1. */
AESKIT_INLINE const uint8_t *clmul_power(const aeskit_ghash_key *hk, size_t i)
{
    return (const uint8_t *)hk->w + AESKIT_BLOCK * i;
}

AESKIT_INLINE const uint8_t *clmul_karatsuba(const aeskit_ghash_key *hk, size_t i)
{
    return (const uint8_t *)hk->w + CLMUL_KARATSUBA_OFF + AESKIT_BLOCK * i;
}

/* acc folded with w blocks: sum of X_j * H^(w-j), X_0 carrying acc. w is a
 * constant at the bulk call, so the loop unrolls; the tail passes 1..7.
 * polyval (a constant): the blocks are in POLYVAL's byte order, which is
 * the register image GHASH's byte swap makes, so they load as they are. */
AESKIT_INLINE __m128i clmul_blocks(const aeskit_ghash_key *hk, __m128i acc, const uint8_t *p,
                                  size_t w, int polyval)
{
    const __m128i bswap = aeskit_clmul_bswap();
    aeskit_clmul_sum s = aeskit_clmul_zero();
    CLMUL_UNROLL
    for (size_t j = 0; j < w; j++) {
        __m128i x = aeskit_load128(p + AESKIT_BLOCK * j);
        if (!polyval)
            x = _mm_shuffle_epi8(x, bswap);
        if (j == 0)
            x = _mm_xor_si128(x, acc);
        const size_t i = w - 1 - j;
        aeskit_clmul_mul_add(&s, x, aeskit_load128(clmul_power(hk, i)),
                             aeskit_load128(clmul_karatsuba(hk, i)));
    }
    return aeskit_clmul_reduce(s);
}

/* The powers a call of at most max_blocks reads, up to 8: a key made for a
 * short message (GCM-SIV's) builds only those, each a multiply in a chain. */
void aeskit_clmul_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    const __m128i base = aeskit_clmul_h_xinv(h);
    uint8_t *out = (uint8_t *)hk->w;
    const size_t need = max_blocks < CLMUL_W ? max_blocks : CLMUL_W;
    __m128i pw = base;

    for (size_t i = 0; i < need; i++) {
        if (i > 0)
            pw = aeskit_clmul_mul(pw, base);
        aeskit_store128(out + AESKIT_BLOCK * i, pw);
        aeskit_store128(out + CLMUL_KARATSUBA_OFF + AESKIT_BLOCK * i, aeskit_clmul_half(pw));
    }
    hk->max_blocks = max_blocks;
    hk->from = 0;
    hk->used = 2 * CLMUL_W * AESKIT_BLOCK;
}

AESKIT_INLINE void clmul_hash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                               size_t n, int polyval)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(n <= hk->max_blocks);
    if (n == 0)
        return;
    const __m128i bswap = aeskit_clmul_bswap();
    __m128i y = _mm_shuffle_epi8(aeskit_load128(acc), bswap);

    for (; n >= CLMUL_W; n -= CLMUL_W, p += CLMUL_W * AESKIT_BLOCK)
        y = clmul_blocks(hk, y, p, CLMUL_W, polyval);
    if (n > 0)
        y = clmul_blocks(hk, y, p, n, polyval);
    aeskit_store128(acc, _mm_shuffle_epi8(y, bswap));
}

void aeskit_clmul_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                        size_t n)
{
    clmul_hash(hk, acc, p, n, 0);
}

void aeskit_clmul_polyval(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                          size_t n)
{
    clmul_hash(hk, acc, p, n, 1);
}
