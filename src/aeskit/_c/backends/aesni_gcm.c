/*
 * aesni_gcm.c: the fused GCM kernel for the aesni table's gcm slot: CTR with
 * BE32 counters stitched with PCLMULQDQ GHASH. Contract: aeskit.h (struct
 * aeskit_impl, gcm).
 *
 * Needs what aesni.c needs; built in the same library with
 * -maes -mpclmul -mssse3 -msse4.1 and called only after the CPU check. Keys
 * are theirs: rk[0..rounds] for encryption (aesni.c), and hk as
 * aeskit_aesni_ghash_key lays it out (aesni.c: H^i * x^-1 at
 * 16 * (i - 1), its Karatsuba half at 128 + 16 * (i - 1), i = 1..8).
 *
 * Lanes: AES blocks in memory byte order, 8 in flight as in aesni.c; GHASH
 * blocks byte-reversed, with the ghash slot's 8-block aggregation and the
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
 * loaded as they are (the polyval slot's identity, aesni.c).
 */
#include <string.h>

#include "aesni.h"
#include "clmul128.h"

#define GCM_W AESKIT_AESNI_GCM_W
#define GCM_UNROLL AESKIT_UNROLL(8) /* GCM_W */
#if defined(AESKIT_GNU_ASM)
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

/* ---- GHASH: clmul128.h on the ghash slot's key layout (aesni.c) -------- */

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

/* ---- GCM-SIV, a short message whole (the gcmsiv_short slot) -----------
 * For a message whose POLYVAL input (AAD and data, each zero-padded, and
 * the lengths block) is at most SIV_SHORT blocks, RFC 8452's per-message
 * work in one function: the key-generating key encrypts LE32(i) || nonce
 * for i = 0..3 (0..5), the message's AES key is expanded from registers
 * (encryption keys only), the hash key's powers H^1..H^n and POLYVAL
 * (one aggregated sum, one reduction), the tag, and CTR. Through the mode's
 * general path the same message is some twenty calls through the table,
 * both schedules of a key it only encrypts with, and 16-byte loads of
 * blocks built 8 bytes at a time (a store the load cannot forward from).
 * On Zen 2, AES-128, 64 bytes: 681 against 440 TSC ticks for the mode's
 * seal alone (a one-shot GCM seal: 179), and through the AEAD's whole call
 * (the bench's kernel layer) 2.5-2.8x against 1.7x the time of GCM's.
 *
 * POLYVAL on clmul128.h's arithmetic: a POLYVAL block loaded as it is, is
 * GHASH's register image of its byte reversal (aesni.c's polyval
 * identity), and the hash key the mode builds for the ghash slot,
 * mulX_GHASH(rev(H)), stored as h_xinv does it (times x^-1), is then H
 * itself loaded as it is: the two x's cancel. So H^1 is the raw key, the
 * powers come from aeskit_clmul_mul as ghash_key's do, and S is the sum's
 * register stored as it is.
 *
 * Up to SIV_SHORT - 1 data blocks, the keystream is made for a constant 4
 * or 7 blocks (no AES is waited for longer: 7 blocks of rounds issue within
 * one block's latency chain). Everything is read into a stack buffer before
 * anything is written, so dst may be src, the AAD or the tag; the buffer,
 * the round keys and the derived blocks are wiped. Lengths are public and
 * are the only thing branched on. */
#define SIV_SHORT AESKIT_AESNI_SIV_SHORT

/* w blocks through the cipher under rk (w a constant at each call). */
AESKIT_INLINE void siv_encrypt(__m128i *x, size_t w, const uint8_t *rk, unsigned rounds)
{
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, 1);
}

/* p[0..w) ^= the keystream from counter block c (LE32 in bytes 0..3). */
AESKIT_INLINE void siv_ctr(uint8_t *p, size_t w, __m128i c, const uint8_t *rk, unsigned rounds)
{
    __m128i stream[SIV_SHORT];
    GCM_UNROLL
    for (size_t j = 0; j < w; j++)
        stream[j] = _mm_add_epi32(c, _mm_cvtsi32_si128((int)j));
    siv_encrypt(stream, w, rk, rounds);
    GCM_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(p + AESKIT_BLOCK * j,
                        _mm_xor_si128(aeskit_load128(p + AESKIT_BLOCK * j), stream[j]));
}

int aeskit_aesni_gcmsiv_short(const aeskit_key *kgk, int enc, const uint8_t nonce[12],
                              const uint8_t *aad, size_t aad_len, uint8_t *dst,
                              const uint8_t *src, size_t len, const uint8_t *tag,
                              uint8_t out[16])
{
    const size_t na = (aad_len + 15) / 16, nd = (len + 15) / 16;
    if (aad_len > 16 * SIV_SHORT || len > 16 * SIV_SHORT || na + nd + 1 > SIV_SHORT)
        return 0;
    const size_t n = na + nd + 1;
    const unsigned rounds = kgk->rounds;
    assert(rounds == 10 || rounds == 14);
    /* x: POLYVAL's blocks (AAD, data, lengths), and the data's CTR in
     * place; 7 blocks of room past the data for the fixed-width keystream */
    uint8_t x[(2 * SIV_SHORT) * AESKIT_BLOCK];
    uint8_t rk[(AESKIT_MAX_ROUNDS + 1) * AESKIT_BLOCK];
    uint8_t nb[AESKIT_BLOCK], ns[AESKIT_BLOCK];
    __m128i b[6], pw[SIV_SHORT];

    memset(x, 0, sizeof x);
    if (aad_len > 0)
        memcpy(x, aad, aad_len);
    uint8_t *xd = x + AESKIT_BLOCK * na;
    if (len > 0)
        memcpy(xd, src, len);
    memset(nb, 0, 4);
    memcpy(nb + 4, nonce, 12);      /* LE32(i) || nonce */
    memcpy(ns, nonce, 12);
    memset(ns + 12, 0, 4);          /* S's mask: nonce || 0^32 */
    const __m128i top = _mm_set_epi32((int)0x80000000, 0, 0, 0);
    const __m128i c_in = enc ? _mm_setzero_si128() : _mm_or_si128(aeskit_load128(tag), top);

    /* the message's keys: H from blocks 0 and 1, the AES key from 2..3 (5) */
    const __m128i nv = aeskit_load128(nb);
    for (int i = 0; i < 6; i++)
        b[i] = _mm_or_si128(nv, _mm_cvtsi32_si128(i));
    if (rounds == 10)
        siv_encrypt(b, 4, aeskit_aesni_enc_keys(kgk), 10);
    else
        siv_encrypt(b, 6, aeskit_aesni_enc_keys(kgk), 14);
    aeskit_aesni_expand_enc(rk, _mm_unpacklo_epi64(b[2], b[3]), _mm_unpacklo_epi64(b[4], b[5]),
                            rounds);
    pw[0] = _mm_unpacklo_epi64(b[0], b[1]);
    for (size_t i = 1; i < n; i++)
        pw[i] = aeskit_clmul_mul(pw[i - 1], pw[0]);

    /* opening: the plaintext first (CTR from the received tag), the last
     * block's padding zeroed again for POLYVAL; the keystream ran on past
     * the data, so the lengths block goes in after it */
    if (!enc && nd > 0) {
        if (nd <= 4)
            siv_ctr(xd, 4, c_in, rk, rounds);
        else
            siv_ctr(xd, SIV_SHORT - 1, c_in, rk, rounds);
        memset(xd + len, 0, AESKIT_BLOCK * nd - len);
    }
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1), (uint64_t)aad_len * 8);
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1) + 8, (uint64_t)len * 8);

    aeskit_clmul_sum s = aeskit_clmul_zero();
    for (size_t j = 0; j < n; j++) {
        const __m128i p = pw[n - 1 - j];
        aeskit_clmul_mul_add(&s, aeskit_load128(x + AESKIT_BLOCK * j), p, aeskit_clmul_half(p));
    }
    __m128i t = _mm_xor_si128(aeskit_clmul_reduce(s), aeskit_load128(ns));
    t = _mm_andnot_si128(top, t);
    siv_encrypt(&t, 1, rk, rounds);

    if (enc && nd > 0) {
        const __m128i c = _mm_or_si128(t, top);
        if (nd <= 4)
            siv_ctr(xd, 4, c, rk, rounds);
        else
            siv_ctr(xd, SIV_SHORT - 1, c, rk, rounds);
    }
    if (len > 0)
        memcpy(dst, xd, len);
    aeskit_store128(out, t);

    aeskit_secure_zero(x, sizeof x);
    aeskit_secure_zero(rk, sizeof rk);
    aeskit_secure_zero(b, sizeof b);
    aeskit_secure_zero(pw, sizeof pw);
    return 1;
}
