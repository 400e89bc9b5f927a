/*
 * aesni_gcm.c: the fused GCM kernel for the aesni table's gcm slot: CTR with
 * BE32 counters stitched with PCLMULQDQ GHASH. Contract: aeskit.h (struct
 * aeskit_impl, gcm).
 *
 * Needs what aesni.c and ghash_clmul.c need; built in the same library with
 * -maes -mpclmul -mssse3 -msse4.1 and called only after the CPU check. Keys
 * are theirs: rk[0..rounds] for encryption (aesni.c), and hk as
 * aeskit_clmul_ghash_key lays it out (ghash_clmul.c: H^i * x^-1 at
 * 16 * (i - 1), its Karatsuba half at 128 + 16 * (i - 1), i = 1..8).
 *
 * Lanes: AES blocks in memory byte order, 8 in flight as in aesni.c; GHASH
 * blocks byte-reversed, with ghash_clmul.c's 8-block aggregation and the
 * arithmetic both take from clmul128.h.
 *
 * Each batch runs the AES rounds of 8 counter blocks with the GHASH of 8
 * other blocks threaded through them, one block's three PCLMULQDQ before
 * each of rounds 1..8. Decrypting, the hashed blocks are the batch's own
 * input (ciphertext), all loaded before the batch stores anything, so
 * dst == src is safe. Encrypting, they are the previous batch's output,
 * reread from dst (hot in L1): the first batch hashes nothing and the last
 * batch's ciphertext is hashed alone after the loop. The serial chain
 * through the accumulator is one multiply and one reduction per batch,
 * well inside a batch's AES time. Does whole batches and returns how many
 * blocks that is; the mode finishes the 0..7 left with the split slots.
 *
 * What it is fast for, and why it is worth a file: long messages, where it
 * beats the split path (this slot NULL: the ctr and ghash slots one after
 * the other) by 15-20% on Zen 4. Encryption trails decryption because the
 * blocks it hashes come out of the previous batch's last round, where
 * decryption's are ready at once.
 *
 * The floor is not max(ctr, ghash): the 80 AESENC and 26 PCLMULQDQ of an
 * AES-128 batch take about 62 cycles together against 40 and 52 apart, and
 * every other vector instruction next to AESENC slows it. Hence:
 *   - counter blocks are built with scalar code (bswap, xor with rk[0]'s
 *     last word, a 4-byte store into a whitened block in a stack buffer)
 *     and loaded, not with paddd + pshufb + pxor per block; they are
 *     written two batches ahead, so no load meets a store still in flight;
 *   - the GHASH sums are pinned after each step (GCM_PIN): left free, GCC
 *     sinks a batch's 24 XORs to its end and spills the products.
 *
 * The same kernel opens GCM-SIV (the gcmsiv_open slot, siv set): LE32
 * counters in bytes 0..3 (the whitened block's first word changes, with no
 * byte swap), and POLYVAL of the plaintext it writes, which is GCM
 * encryption's order (hash the previous batch's output) with the blocks
 * loaded as they are (the polyval slot's identity, ghash_clmul.c).
 */
#include <string.h>

#include "aesni.h"
#include "clmul128.h"

#define GCM_W AESKIT_AESNI_GCM_W
#define GCM_UNROLL _Pragma("GCC unroll 8") /* GCM_W */
#if defined(__GNUC__)
/* An empty asm that takes v in a register and gives it back: the compiler
 * must have computed v here and cannot reassociate across it. */
#define GCM_PIN(v) __asm__("" : "+x"(v))
#else
#define GCM_PIN(v) ((void)0)
#endif

/* AES-128 has rounds 1..9 before the last: room for 8 GHASH blocks. */
static_assert(GCM_W < 10, "one GHASH block per middle AES round");
static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= 2 * GCM_W * AESKIT_BLOCK,
              "aeskit_ghash_key holds the clmul powers and their Karatsuba halves");

/* compiles to bswap */
AESKIT_INLINE uint32_t gcm_bswap32(uint32_t v)
{
    return v >> 24 | (v >> 8 & 0xff00) | (v & 0xff00) << 8 | v << 24;
}

/* ---- GHASH: clmul128.h on ghash_clmul.c's key layout ------------------- */

/* s += x * H^(i+1), unreduced; pinned, see the top. */
AESKIT_INLINE void gcm_mul_add(aeskit_clmul_sum *s, const aeskit_ghash_key *hk, __m128i x,
                            size_t i)
{
    const uint8_t *w = (const uint8_t *)hk->w;
    aeskit_clmul_mul_add(s, x, aeskit_load128(w + AESKIT_BLOCK * i),
                         aeskit_load128(w + AESKIT_BLOCK * (GCM_W + i)));
    GCM_PIN(s->lo);
    GCM_PIN(s->mid);
    GCM_PIN(s->hi);
}

/* Block j of the 8 at p, byte-reversed (as they are for POLYVAL, siv),
 * y folded into the first: it is multiplied by H^(8-j). */
AESKIT_INLINE void gcm_hash_step(aeskit_clmul_sum *s, const aeskit_ghash_key *hk, __m128i y,
                              const uint8_t *p, size_t j, int siv)
{
    __m128i x = aeskit_load128(p + AESKIT_BLOCK * j);
    if (!siv)
        x = _mm_shuffle_epi8(x, aeskit_clmul_bswap());
    if (j == 0)
        x = _mm_xor_si128(x, y);
    gcm_mul_add(s, hk, x, GCM_W - 1 - j);
}

/* y folded with the 8 blocks at p, alone: the last batch when encrypting. */
AESKIT_INLINE __m128i gcm_hash8(const aeskit_ghash_key *hk, __m128i y, const uint8_t *p,
                                int siv)
{
    aeskit_clmul_sum s = aeskit_clmul_zero();
    GCM_UNROLL
    for (size_t j = 0; j < GCM_W; j++)
        gcm_hash_step(&s, hk, y, p, j, siv);
    return aeskit_clmul_reduce(s);
}

/* ---- one batch ----------------------------------------------------------- */

/* Whitened counter blocks, two batches' worth: each is ctr ^ rk[0], whose
 * last word alone changes from block to block: BE32(c + j) ^ kw, kw being
 * rk[0]'s last word as loaded (siv: the first word, LE32(c + j) ^ kw, rk[0]'s
 * first word). Key material: wiped after use. */
typedef struct {
    _Alignas(16) uint8_t b[2][GCM_W][AESKIT_BLOCK];
} gcm_ctrs;

AESKIT_INLINE void gcm_ctrs_fill(uint8_t (*b)[AESKIT_BLOCK], uint32_t kw, uint32_t c, int siv)
{
    GCM_UNROLL
    for (size_t j = 0; j < GCM_W; j++) {
        const uint32_t w = (siv ? c + (uint32_t)j : gcm_bswap32(c + (uint32_t)j)) ^ kw;
        memcpy(b[j] + (siv ? 0 : 12), &w, 4);
    }
}

/*
 * CTR on 8 blocks from the whitened counter blocks cb, whose first counter
 * is c (cb is then refilled for c + 16, two batches on), src to dst, with
 * the 8 blocks at hin folded into *y when hash is set (a constant at each
 * call). Every load of hin and src comes before the first store to dst.
 */
AESKIT_INLINE void gcm_batch(const uint8_t *rk, unsigned rounds, const aeskit_ghash_key *hk,
                          int hash, uint8_t (*cb)[AESKIT_BLOCK], uint32_t k0w3, uint32_t c,
                          __m128i *y, const uint8_t *hin, uint8_t *dst, const uint8_t *src,
                          int siv)
{
    aeskit_clmul_sum s = aeskit_clmul_zero();
    __m128i x[GCM_W];

    GCM_UNROLL
    for (size_t j = 0; j < GCM_W; j++)
        x[j] = _mm_load_si128((const __m128i *)(const void *)cb[j]);
    gcm_ctrs_fill(cb, k0w3, c + 2 * GCM_W, siv);

    GCM_UNROLL
    for (size_t r = 1; r <= GCM_W; r++) {
        if (hash)
            gcm_hash_step(&s, hk, *y, hin, r - 1, siv);
        const __m128i key = aeskit_load128(rk + AESKIT_BLOCK * r);
        GCM_UNROLL
        for (size_t j = 0; j < GCM_W; j++)
            x[j] = _mm_aesenc_si128(x[j], key);
    }
    if (hash)
        *y = aeskit_clmul_reduce(s);
    const uint8_t *last = rk + AESKIT_BLOCK * rounds;
    for (const uint8_t *p = rk + AESKIT_BLOCK * (GCM_W + 1); p < last; p += AESKIT_BLOCK) {
        const __m128i key = aeskit_load128(p);
        GCM_UNROLL
        for (size_t j = 0; j < GCM_W; j++)
            x[j] = _mm_aesenc_si128(x[j], key);
    }
    const __m128i key = aeskit_load128(last);
    GCM_UNROLL
    for (size_t j = 0; j < GCM_W; j++)
        aeskit_store128(dst + AESKIT_BLOCK * j,
                  _mm_xor_si128(_mm_aesenclast_si128(x[j], key),
                                aeskit_load128(src + AESKIT_BLOCK * j)));
}

/* Does floor(n / 8) batches: returns 8 * floor(n / 8), 0 for n < 8. hash_out
 * (a constant): hash what it writes, the previous batch's output in each
 * batch (GCM sealing, GCM-SIV opening), else what it reads (GCM opening). */
AESKIT_INLINE size_t gcm_run(const aeskit_key *k, const aeskit_ghash_key *hk, int hash_out,
                             int siv, uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                             const uint8_t *src, size_t n)
{
    assert(n == 0 || (k != NULL && hk != NULL && dst != NULL && src != NULL));
    const size_t batches = n / GCM_W;
    if (batches == 0)
        return 0;
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const __m128i bswap = aeskit_clmul_bswap();
    __m128i y = _mm_shuffle_epi8(aeskit_load128(acc), bswap);
    uint32_t c = siv ? aeskit_load_le32(ctr) : aeskit_load_be32(ctr + 12);
    const __m128i white = _mm_xor_si128(aeskit_load128(ctr), aeskit_load128(rk));
    uint32_t kw;
    gcm_ctrs cs;

    memcpy(&kw, rk + (siv ? 0 : 12), 4);
    for (size_t j = 0; j < 2 * GCM_W; j++)
        _mm_store_si128((__m128i *)(void *)cs.b[j / GCM_W][j % GCM_W], white);
    gcm_ctrs_fill(cs.b[0], kw, c, siv);
    gcm_ctrs_fill(cs.b[1], kw, c + GCM_W, siv);

    if (hash_out) {
        gcm_batch(rk, rounds, hk, 0, cs.b[0], kw, c, &y, NULL, dst, src, siv);
        for (size_t b = 1; b < batches; b++) {
            c += GCM_W;
            src += GCM_W * AESKIT_BLOCK;
            dst += GCM_W * AESKIT_BLOCK;
            gcm_batch(rk, rounds, hk, 1, cs.b[b & 1], kw, c, &y, dst - GCM_W * AESKIT_BLOCK,
                      dst, src, siv);
        }
        c += GCM_W;
        y = gcm_hash8(hk, y, dst, siv);
    } else {
        for (size_t b = 0; b < batches; b++) {
            gcm_batch(rk, rounds, hk, 1, cs.b[b & 1], kw, c, &y, src, dst, src, siv);
            c += GCM_W;
            src += GCM_W * AESKIT_BLOCK;
            dst += GCM_W * AESKIT_BLOCK;
        }
    }
    if (siv)
        aeskit_store_le32(ctr, c);
    else
        aeskit_store_be32(ctr + 12, c);
    aeskit_store128(acc, _mm_shuffle_epi8(y, bswap));
    aeskit_secure_zero(&cs, sizeof cs);
    return GCM_W * batches;
}

size_t aeskit_aesni_gcm(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                        uint8_t ctr[16], uint8_t acc[16], uint8_t *dst, const uint8_t *src,
                        size_t n)
{
    if (enc)
        return gcm_run(k, hk, 1, 0, ctr, acc, dst, src, n);
    return gcm_run(k, hk, 0, 0, ctr, acc, dst, src, n);
}

size_t aeskit_aesni_gcmsiv_open(const aeskit_key *k, const aeskit_ghash_key *hk,
                                uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    assert(n < GCM_W || hk->max_blocks >= GCM_W);   /* read only by a whole batch */
    return gcm_run(k, hk, 1, 1, ctr, acc, dst, src, n);
}
