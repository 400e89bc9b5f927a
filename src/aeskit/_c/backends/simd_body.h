/*
 * simd_body.h: the AES modes and the GHASH/POLYVAL aggregation on a
 * 128-bit vector unit with AES round instructions, written once and
 * instantiated by armv8_ce.c (NEON + Crypto Extensions) and power8.c
 * (VSX + vector crypto). Contracts: aeskit.h. Nothing below depends on the
 * architecture but through the names the including file defines first:
 *
 *   SIMD_NAME(x)        the name of this backend's function x (ce_x, p8_x)
 *   SIMD_FN             a slot function's storage class and attributes
 *   SIMD_INLINE         a forced-inline helper's storage class and attributes
 *   SIMD_W              blocks per main-loop batch (at most 8: SIMD_UNROLL)
 *   SIMD_V              the vector type holding one block
 *   SIMD_LOAD(p), SIMD_STORE(p, v), SIMD_XOR(a, b)
 *                       a block in and out of a vector (in the backend's
 *                       lane order, the same for data, keys and chaining
 *                       values), and their XOR
 *   SIMD_KEYS           the key handle the rounds take
 *   SIMD_LOAD_KEYS(ks, k, dec)  the handle for encryption (dec = 0) or
 *                       decryption (dec = 1) with key k
 *   SIMD_ENC_W(ks, x, w), SIMD_DEC_W(ks, x, w)
 *                       w blocks x[0..w-1] through the cipher, in place
 *   SIMD_SUB_WORD(w)    SubWord of a 32-bit word as the bytes lie in memory
 *   SIMD_CTR_BLOCK(hi, lo)   the vector of the block whose bytes 0..7 are
 *                       the big-endian hi and 8..15 the big-endian lo
 *   SIMD_TWEAK_BLOCK(lo, hi) the vector of the block whose bytes 0..7 are
 *                       the little-endian lo and 8..15 the little-endian hi
 * and for GHASH/POLYVAL (clmul128.h's method: powers H^i * x^-1, products
 * summed unreduced over a batch and reduced once):
 *   SIMD_GV             the vector type of the 128-bit register images
 *   SIMD_GZERO, SIMD_GXOR(a, b), SIMD_GMAKE(hi, lo)
 *   SIMD_GSUM           a struct { SIMD_GV lo, mid, hi; } of unreduced sums
 *   SIMD_GPOWER         a power of H in the form the multiply takes
 *   SIMD_GFORMS(h)      that form of the image h
 *   SIMD_GPOWER_AT(hk, i), SIMD_GPOWER_PUT(hk, i, f)
 *                       power i (H^(i+1) * x^-1) read from / written to hk
 *   SIMD_GMUL_ADD(s, x, f)   s += x * f, unreduced
 *   SIMD_GREDUCE(s)     the sum reduced
 *   SIMD_GBLOCK(p, polyval)  a block's register image: GHASH's (polyval 0)
 *                       or POLYVAL's (polyval 1) reading of its bytes
 *   SIMD_GSTORE(p, v)   an image back to bytes, GHASH's reading
 *
 * Parallel modes (ECB, CBC and CFB decryption, CTR, XTS) run SIMD_W
 * independent blocks per loop iteration; a 1..7 block tail runs as
 * 4 + 2 + 1. In place: every batch loads all its input (and the chaining
 * block the next batch needs) before its first store.
 *
 * Counters and tweaks are advanced in general registers without a branch
 * on their value (adds with the carry as a comparison result, masked
 * reductions), so every counter kind, secret ones included, takes the same
 * path.
 */
#include <string.h>

#include "common.h"
#include "dispatch.h"
#include "modes/generic.h"

#if !defined(SIMD_V) || !defined(SIMD_W) || !defined(SIMD_NAME) || !defined(SIMD_GV)
#error "define the backend's primitives (see the top of simd_body.h) first"
#endif

#define SIMD_UNROLL AESKIT_UNROLL(8) /* >= SIMD_W */
static_assert(SIMD_W == 8, "the tails run as 4 + 2 + 1 and GHASH's as 7..1");

/* ---- key expansion ------------------------------------------------------ */

/* FIPS-197 5.2 word by word, in place (no copy of the key elsewhere): the
 * encryption keys rk[0..rounds] as FIPS-197 writes them; returns rounds. */
SIMD_INLINE unsigned simd_expand_key(uint8_t *enc, const uint8_t *key, size_t len)
{
    assert(len == 16 || len == 24 || len == 32);
    const unsigned nk = (unsigned)(len / 4), rounds = nk + 6;
    uint8_t rcon = 1;

    memcpy(enc, key, len);
    for (unsigned i = nk; i < 4 * (rounds + 1); i++) {
        uint8_t t[4];
        memcpy(t, enc + 4 * (i - 1), 4);
        if (i % nk == 0 || (nk > 6 && i % nk == 4)) {
            uint32_t w;
            if (i % nk == 0) {   /* RotWord */
                const uint8_t t0 = t[0];
                t[0] = t[1], t[1] = t[2], t[2] = t[3], t[3] = t0;
            }
            memcpy(&w, t, 4);
            w = SIMD_SUB_WORD(w);
            memcpy(t, &w, 4);
            if (i % nk == 0) {
                t[0] ^= rcon;
                rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
            }
        }
        for (unsigned b = 0; b < 4; b++)
            enc[4 * i + b] = enc[4 * (i - nk) + b] ^ t[b];
    }
    return rounds;
}

/* ---- rounds ------------------------------------------------------------ */

SIMD_INLINE SIMD_V simd_enc1(const SIMD_KEYS *ks, SIMD_V x)
{
    SIMD_ENC_W(ks, &x, 1);
    return x;
}

/* Runs KERNEL(w) on batches of SIMD_W blocks, then the tail as 4 + 2 + 1;
 * KERNEL advances src and dst (SIMD_STEP). */
#define SIMD_BATCHES(n, KERNEL)                \
    do {                                       \
        for (; (n) >= SIMD_W; (n) -= SIMD_W)   \
            KERNEL(SIMD_W);                    \
        if ((n) & 4)                           \
            KERNEL(4);                         \
        if ((n) & 2)                           \
            KERNEL(2);                         \
        if ((n) & 1)                           \
            KERNEL(1);                         \
    } while (0)
#define SIMD_STEP(w) (src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))

/* ---- ECB --------------------------------------------------------------- */

SIMD_INLINE void simd_ecb_w(const SIMD_KEYS *ks, int dec, uint8_t *dst, const uint8_t *src,
                            size_t w)
{
    SIMD_V x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = SIMD_LOAD(src + AESKIT_BLOCK * j);
    if (dec)
        SIMD_DEC_W(ks, x, w);
    else
        SIMD_ENC_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, x[j]);
}

SIMD_FN void SIMD_NAME(ecb_enc)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
#define K(w) (simd_ecb_w(&ks, 0, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
}

SIMD_FN void SIMD_NAME(ecb_dec)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 1);
#define K(w) (simd_ecb_w(&ks, 1, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
}

/* ---- serial modes -------------------------------------------------------- */

SIMD_FN void SIMD_NAME(cbc_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = simd_enc1(&ks, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
        SIMD_STORE(dst + AESKIT_BLOCK * i, x);
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(cfb_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = SIMD_XOR(simd_enc1(&ks, x), SIMD_LOAD(src + AESKIT_BLOCK * i));
        SIMD_STORE(dst + AESKIT_BLOCK * i, x);
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(ofb)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                            size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = simd_enc1(&ks, x);
        SIMD_STORE(dst + AESKIT_BLOCK * i, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(cbc_mac)(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(mac);
    for (size_t i = 0; i < n; i++)
        x = simd_enc1(&ks, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
    SIMD_STORE(mac, x);
}

/* ---- parallel chaining modes --------------------------------------------- */

/* CBC decryption: all w ciphertext blocks are read before any is written
 * (dst may be src). */
SIMD_INLINE void simd_cbc_dec_w(const SIMD_KEYS *ks, SIMD_V *iv, uint8_t *dst, const uint8_t *src,
                                size_t w)
{
    SIMD_V c[SIMD_W], x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = c[j] = SIMD_LOAD(src + AESKIT_BLOCK * j);
    SIMD_DEC_W(ks, x, w);
    SIMD_STORE(dst, SIMD_XOR(x[0], *iv));
    SIMD_UNROLL
    for (size_t j = 1; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], c[j - 1]));
    *iv = c[w - 1];
}

SIMD_FN void SIMD_NAME(cbc_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 1);
    SIMD_V v = SIMD_LOAD(iv);
#define K(w) (simd_cbc_dec_w(&ks, &v, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
    SIMD_STORE(iv, v);
}

SIMD_INLINE void simd_cfb_dec_w(const SIMD_KEYS *ks, SIMD_V *iv, uint8_t *dst, const uint8_t *src,
                                size_t w)
{
    SIMD_V c[SIMD_W], x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        c[j] = SIMD_LOAD(src + AESKIT_BLOCK * j);
    x[0] = *iv;
    SIMD_UNROLL
    for (size_t j = 1; j < w; j++)
        x[j] = c[j - 1];
    SIMD_ENC_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], c[j]));
    *iv = c[w - 1];
}

SIMD_FN void SIMD_NAME(cfb_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V v = SIMD_LOAD(iv);
#define K(w) (simd_cfb_dec_w(&ks, &v, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
    SIMD_STORE(iv, v);
}

/* ---- CTR ------------------------------------------------------------------ */

/* The counter block as two big-endian 64-bit words (bytes 0..7, 8..15). */
typedef struct {
    uint64_t hi, lo;
} simd_ctr;

SIMD_INLINE void simd_ctr_inc(simd_ctr *c, enum aeskit_ctr kind)
{
    switch (kind) {
    case AESKIT_CTR_BE32:
        c->lo = (c->lo & UINT64_C(0xffffffff00000000)) | (uint32_t)(c->lo + 1);
        break;
    case AESKIT_CTR_LE32: {   /* bytes 0..3, little-endian: hi's top word, swapped */
        const uint32_t v = AESKIT_BSWAP32((uint32_t)(c->hi >> 32)) + 1;
        c->hi = (c->hi & UINT64_C(0xffffffff)) | (uint64_t)AESKIT_BSWAP32(v) << 32;
        break;
    }
    default:   /* BE128, BE128_SECRET: the carry is a comparison, not a branch */
        c->lo += 1;
        c->hi += (uint64_t)(c->lo == 0);
        break;
    }
}

SIMD_INLINE void simd_ctr_w(const SIMD_KEYS *ks, enum aeskit_ctr kind, simd_ctr *c, uint8_t *dst,
                            const uint8_t *src, size_t w)
{
    SIMD_V x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        x[j] = SIMD_CTR_BLOCK(c->hi, c->lo);
        simd_ctr_inc(c, kind);
    }
    SIMD_ENC_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], SIMD_LOAD(src + AESKIT_BLOCK * j)));
}

SIMD_FN void SIMD_NAME(ctr_slot)(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                                 uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    simd_ctr c = {aeskit_load_be64(ctr), aeskit_load_be64(ctr + 8)};
#define K(w) (simd_ctr_w(&ks, kind, &c, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
    aeskit_store_be64(ctr, c.hi);
    aeskit_store_be64(ctr + 8, c.lo);
}

/* ---- XTS ------------------------------------------------------------------ */

/* The tweak as a little-endian 128-bit number (IEEE 1619 5.2). */
typedef struct {
    uint64_t lo, hi;
} simd_tweak;

SIMD_INLINE void simd_xts_w(const SIMD_KEYS *ks, int enc, simd_tweak *t, uint8_t *dst,
                            const uint8_t *src, size_t w)
{
    SIMD_V x[SIMD_W], tw[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        tw[j] = SIMD_TWEAK_BLOCK(t->lo, t->hi);
        aeskit_gf128_double(&t->hi, &t->lo);
        x[j] = SIMD_XOR(SIMD_LOAD(src + AESKIT_BLOCK * j), tw[j]);
    }
    if (enc)
        SIMD_ENC_W(ks, x, w);
    else
        SIMD_DEC_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], tw[j]));
}

SIMD_FN void SIMD_NAME(xts)(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, !enc);
    simd_tweak t = {aeskit_load_le64(tweak), aeskit_load_le64(tweak + 8)};
#define K(w) (simd_xts_w(&ks, enc, &t, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
    aeskit_store_le64(tweak, t.lo);
    aeskit_store_le64(tweak + 8, t.hi);
    aeskit_secure_zero(&t, sizeof t);
}

/* ---- GHASH and POLYVAL ------------------------------------------------------ */

static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= SIMD_W * sizeof(SIMD_GPOWER),
              "aeskit_ghash_key holds the powers in the backend's form");

SIMD_FN void SIMD_NAME(ghash_key)(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    /* H * x^-1 (clmul128.h: aeskit_clmul_h_xinv), without a branch on H */
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);
    const SIMD_GV base = SIMD_GMAKE(h1, h0);
    const SIMD_GPOWER bf = SIMD_GFORMS(base);
    const size_t need = max_blocks < SIMD_W ? max_blocks : SIMD_W;
    SIMD_GV pw = base;

    for (size_t i = 0; i < need; i++) {
        if (i > 0) {
            const SIMD_GV zero = SIMD_GZERO;
            SIMD_GSUM s = {zero, zero, zero};
            SIMD_GMUL_ADD(&s, pw, &bf);
            pw = SIMD_GREDUCE(s);
        }
        const SIMD_GPOWER f = SIMD_GFORMS(pw);
        SIMD_GPOWER_PUT(hk, i, &f);
    }
    hk->max_blocks = max_blocks;
    hk->from = 0;
    hk->used = SIMD_W * sizeof(SIMD_GPOWER);
}

/* acc folded with w blocks: the sum of X_j * H^(w-j), X_0 carrying acc. */
SIMD_INLINE SIMD_GV simd_ghash_w(const aeskit_ghash_key *hk, SIMD_GV acc, const uint8_t *p,
                                 size_t w, int polyval)
{
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        SIMD_GV x = SIMD_GBLOCK(p + AESKIT_BLOCK * j, polyval);
        if (j == 0)
            x = SIMD_GXOR(x, acc);
        const SIMD_GPOWER h = SIMD_GPOWER_AT(hk, w - 1 - j);
        SIMD_GMUL_ADD(&s, x, &h);
    }
    return SIMD_GREDUCE(s);
}

SIMD_INLINE void simd_hash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n,
                           int polyval)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(n <= hk->max_blocks);
    if (n == 0)
        return;
    SIMD_GV y = SIMD_GBLOCK(acc, 0);
    for (; n >= SIMD_W; n -= SIMD_W, p += SIMD_W * AESKIT_BLOCK)
        y = simd_ghash_w(hk, y, p, SIMD_W, polyval);
    switch (n) {   /* the tail: w a constant in each call */
    case 7: y = simd_ghash_w(hk, y, p, 7, polyval); break;
    case 6: y = simd_ghash_w(hk, y, p, 6, polyval); break;
    case 5: y = simd_ghash_w(hk, y, p, 5, polyval); break;
    case 4: y = simd_ghash_w(hk, y, p, 4, polyval); break;
    case 3: y = simd_ghash_w(hk, y, p, 3, polyval); break;
    case 2: y = simd_ghash_w(hk, y, p, 2, polyval); break;
    case 1: y = simd_ghash_w(hk, y, p, 1, polyval); break;
    default: break;
    }
    SIMD_GSTORE(acc, y);
}

SIMD_FN void SIMD_NAME(ghash)(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                              size_t n)
{
    simd_hash(hk, acc, p, n, 0);
}

SIMD_FN void SIMD_NAME(polyval)(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                                size_t n)
{
    simd_hash(hk, acc, p, n, 1);
}
