/*
 * aesni.c: AES with the AES-NI instructions on 128-bit registers.
 *
 * Needs AES-NI, SSSE3 (pshufb, for big-endian counters) and SSE4.1, and
 * PCLMULQDQ for this table's GHASH (ghash_clmul.c). Built as its own library
 * with -maes -mpclmul -mssse3 -msse4.1, and called only after the CPU check.
 * The vaes tables share this key layout and these serial slots (aesni.h).
 *
 * Lanes: one __m128i holds one block in memory byte order. The round keys are
 * bytes too, as FIPS-197 writes them: rk[0..rounds] for encryption, then the
 * Equivalent Inverse Cipher's keys (aesimc of the middle ones, reversed) for
 * aesdec.
 *
 * Parallel modes (ECB, CBC and CFB decryption, CTR, XTS) run AESNI_W = 8 independent
 * blocks per loop iteration: AESENC has latency 3-4 and 2 units on current
 * cores (4 on Zen 4), so 8 blocks in flight keep both units busy. A 1..7
 * block tail runs as 4 + 2 + 1.
 * Round keys are loaded once per round per batch: 15 keys and 8 blocks do not
 * fit in 16 registers, and one L1 load per 8 AESENCs costs nothing.
 *
 * Serial modes (CBC and CFB encryption, OFB, CBC-MAC) are bound by rounds x
 * AESENC latency per block (2.5 c/B for AES-128 on Zen 4). They fold the data XOR
 * into the last round key, so the dependency chain is AES rounds and nothing
 * else: aesenclast(x, rk[last] ^ a) = aesenclast(x, rk[last]) ^ a, and
 * choosing a = rk[0] ^ (next data) makes the output the next block's
 * whitened input.
 */
#include <string.h>

#include "aesni.h"
#include "dispatch.h"
#include "modes/generic.h"

#define AESNI_W AESKIT_AESNI_W
#define AESNI_UNROLL AESKIT_UNROLL(8) /* AESNI_W */
/* The w-block kernels are AESKIT_INLINE: they must inline into their
 * callers for x[] to live in registers and for constant arguments (w,
 * kind) to fold. */

/* ---- key schedule ---------------------------------------------------- */

/* SubWord(w): aeskeygenassist puts SubWord(dword 1) in dword 0. */
static uint32_t aesni_sub_word(uint32_t w)
{
    __m128i v = _mm_aeskeygenassist_si128(_mm_set1_epi32((int)w), 0);
    return (uint32_t)_mm_cvtsi128_si32(v);
}

/* AES-128 and AES-256 (the sizes keys are made per message for, as
 * GCM-SIV does) expand in registers: one AESKEYGENASSIST per round key and
 * three shifted XORs fold the previous key's words in (the prefix sums of
 * FIPS-197 5.2's w[i] = w[i-nk] ^ t, a whole round key at a time); word by
 * word, through memory, a per-message key took longer than the message. */
AESKIT_INLINE __m128i aesni_fold(__m128i k, __m128i t)
{
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    return _mm_xor_si128(k, t);
}

/* AESKEYGENASSIST takes its round constant as an immediate. */
#define AESNI_K128(k, rc) aesni_fold(k, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(k, rc), 0xff))

static void aesni_expand128(uint8_t *enc, __m128i k)
{
    aeskit_store128(enc, k);
#define AESNI_R128(i, rc) (k = AESNI_K128(k, rc), aeskit_store128(enc + AESKIT_BLOCK * (i), k))
    AESNI_R128(1, 0x01); AESNI_R128(2, 0x02); AESNI_R128(3, 0x04); AESNI_R128(4, 0x08);
    AESNI_R128(5, 0x10); AESNI_R128(6, 0x20); AESNI_R128(7, 0x40); AESNI_R128(8, 0x80);
    AESNI_R128(9, 0x1b); AESNI_R128(10, 0x36);
#undef AESNI_R128
    k = _mm_setzero_si128();
}

/* Even round keys take SubWord(RotWord) of the odd key before them and the
 * round constant (dword 3 of AESKEYGENASSIST); odd ones SubWord alone of
 * the even key before them (dword 2). */
static void aesni_expand256(uint8_t *enc, __m128i a, __m128i b)
{
    aeskit_store128(enc, a);
    aeskit_store128(enc + AESKIT_BLOCK, b);
#define AESNI_R256(i, rc)                                                                    \
    (a = aesni_fold(a, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(b, rc), 0xff)),           \
     aeskit_store128(enc + AESKIT_BLOCK * (i), a),                                           \
     (i) < 14 ? (b = aesni_fold(b, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(a, 0), 0xaa)), \
                 aeskit_store128(enc + AESKIT_BLOCK * ((i) + 1), b))                         \
              : (void)0)
    AESNI_R256(2, 0x01); AESNI_R256(4, 0x02); AESNI_R256(6, 0x04); AESNI_R256(8, 0x08);
    AESNI_R256(10, 0x10); AESNI_R256(12, 0x20); AESNI_R256(14, 0x40);
#undef AESNI_R256
    a = b = _mm_setzero_si128();
}

/* FIPS-197 5.2 word by word (AES-192, whose round keys straddle its key
 * words), built in place so that no copy of the key is left elsewhere in
 * memory. Words are loaded little-endian (x86): byte 0 is the low byte, so
 * RotWord is a right rotation by 8 and Rcon sits in the low byte. */
static void aesni_expand_words(uint8_t *enc, const uint8_t *key, size_t len)
{
    const unsigned nk = (unsigned)(len / 4), rounds = nk + 6;
    uint32_t rcon = 1;

    memcpy(enc, key, len);
    for (unsigned i = nk; i < 4 * (rounds + 1); i++) {
        uint32_t t, w;
        memcpy(&t, enc + 4 * (i - 1), 4);
        if (i % nk == 0) {
            t = aesni_sub_word((t >> 8) | (t << 24)) ^ rcon;
            rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11b);
        } else if (nk > 6 && i % nk == 4) {
            t = aesni_sub_word(t);
        }
        memcpy(&w, enc + 4 * (i - nk), 4);
        w ^= t;
        memcpy(enc + 4 * i, &w, 4);
    }
}

void aeskit_aesni_expand_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    assert(len == 16 || len == 24 || len == 32);
    const unsigned rounds = (unsigned)(len / 4) + 6;
    const size_t used = 2 * AESKIT_BLOCK * (rounds + 1);
    uint8_t *enc = (uint8_t *)k->rk;
    uint8_t *dec = enc + AESKIT_BLOCK * (rounds + 1);

    if (len == 16)
        aesni_expand128(enc, aeskit_load128(key));
    else if (len == 32)
        aesni_expand256(enc, aeskit_load128(key), aeskit_load128(key + 16));
    else
        aesni_expand_words(enc, key, len);

    aeskit_store128(dec, aeskit_load128(enc + AESKIT_BLOCK * rounds));
    for (unsigned r = 1; r < rounds; r++)
        aeskit_store128(dec + AESKIT_BLOCK * r,
                    _mm_aesimc_si128(aeskit_load128(enc + AESKIT_BLOCK * (rounds - r))));
    aeskit_store128(dec + AESKIT_BLOCK * rounds, aeskit_load128(enc));
    /* the rest stays defined and carries nothing of an earlier key */
    memset((uint8_t *)k->rk + used, 0, sizeof k->rk - used);
    k->rounds = rounds;
    k->used = (unsigned)used;
}

void aeskit_aesni_expand_enc(uint8_t *enc, __m128i lo, __m128i hi, unsigned rounds)
{
    assert(rounds == 10 || rounds == 14);
    if (rounds == 10)
        aesni_expand128(enc, lo);
    else
        aesni_expand256(enc, lo, hi);
}

static void aesni_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_aesni_expand_key(k, key, len);
    k->impl = &aeskit_aesni_impl;
}

/* ---- w blocks at a time ------------------------------------------------
 * Every w below is a constant at its call (AESNI_W, 4, 2 or 1), so the loops
 * unroll and x[] lives in registers. The *_w kernels advance *dst and *src
 * past the w blocks they did. */

/* Rounds 1..rounds-1 of one block: the serial modes do the last one. */
AESKIT_INLINE __m128i aesni_enc_middle1(__m128i x, const uint8_t *rk, unsigned rounds)
{
    const uint8_t *last = rk + AESKIT_BLOCK * rounds;
    for (const uint8_t *p = rk + AESKIT_BLOCK; p < last; p += AESKIT_BLOCK)
        x = _mm_aesenc_si128(x, aeskit_load128(p));
    return x;
}

/* ---- ECB ------------------------------------------------------------- */

AESKIT_INLINE void aesni_ecb_w(const uint8_t *rk, unsigned rounds, int enc, uint8_t **dst,
                              const uint8_t **src, size_t w)
{
    __m128i x[AESNI_W];
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = aeskit_load128(*src + AESKIT_BLOCK * j);
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, enc);
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(*dst + AESKIT_BLOCK * j, x[j]);
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
}

void aeskit_aesni_ecb_enc(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    for (; n >= AESNI_W; n -= AESNI_W)
        aesni_ecb_w(rk, rounds, 1, &dst, &src, AESNI_W);
    if (n & 4)
        aesni_ecb_w(rk, rounds, 1, &dst, &src, 4);
    if (n & 2)
        aesni_ecb_w(rk, rounds, 1, &dst, &src, 2);
    if (n & 1)
        aesni_ecb_w(rk, rounds, 1, &dst, &src, 1);
}

void aeskit_aesni_ecb_dec(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    const uint8_t *rk = aeskit_aesni_dec_keys(k);
    const unsigned rounds = k->rounds;
    for (; n >= AESNI_W; n -= AESNI_W)
        aesni_ecb_w(rk, rounds, 0, &dst, &src, AESNI_W);
    if (n & 4)
        aesni_ecb_w(rk, rounds, 0, &dst, &src, 4);
    if (n & 2)
        aesni_ecb_w(rk, rounds, 0, &dst, &src, 2);
    if (n & 1)
        aesni_ecb_w(rk, rounds, 0, &dst, &src, 1);
}

/* ---- CBC ------------------------------------------------------------- */

/* x carries P[i] ^ C[i-1] ^ rk[0]; the last round with rk[last] ^ rk[0] ^ P[i+1]
 * yields that for the next block, and C[i] is recovered off the chain.
 * CBC encryption stores every C[i] (out is a constant 1 at its call),
 * CBC-MAC only the last. */
AESKIT_INLINE void aesni_cbc_chain(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                   const uint8_t *src, size_t n, int out)
{
    if (n == 0)
        return;
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const __m128i k0 = aeskit_load128(rk);
    const __m128i klast = aeskit_load128(rk + AESKIT_BLOCK * rounds);
    const __m128i fold = _mm_xor_si128(klast, k0);
    __m128i x = _mm_xor_si128(_mm_xor_si128(aeskit_load128(src), aeskit_load128(iv)), k0);

    for (; n > 1; n--, src += AESKIT_BLOCK) {
        const __m128i p = aeskit_load128(src + AESKIT_BLOCK);
        x = _mm_aesenclast_si128(aesni_enc_middle1(x, rk, rounds), _mm_xor_si128(fold, p));
        if (out) {
            aeskit_store128(dst, _mm_xor_si128(_mm_xor_si128(x, p), k0));
            dst += AESKIT_BLOCK;
        }
    }
    x = _mm_aesenclast_si128(aesni_enc_middle1(x, rk, rounds), klast);
    if (out)
        aeskit_store128(dst, x);
    aeskit_store128(iv, x);
}

void aeskit_aesni_cbc_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    aesni_cbc_chain(k, iv, dst, src, n, 1);
}

void aeskit_aesni_cbc_mac(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    aesni_cbc_chain(k, mac, NULL, src, n, 0);
}

/* Ciphertext is reloaded from src for the XOR: every load of a batch happens
 * before its first store, so dst == src is safe. */
AESKIT_INLINE __m128i aesni_cbc_dec_w(const uint8_t *rk, unsigned rounds, __m128i prev,
                                     uint8_t **dst, const uint8_t **src, size_t w)
{
    const uint8_t *in = *src;
    __m128i x[AESNI_W];
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = aeskit_load128(in + AESKIT_BLOCK * j);
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, 0);
    x[0] = _mm_xor_si128(x[0], prev);
    AESNI_UNROLL
    for (size_t j = 1; j < w; j++)
        x[j] = _mm_xor_si128(x[j], aeskit_load128(in + AESKIT_BLOCK * (j - 1)));
    prev = aeskit_load128(in + AESKIT_BLOCK * (w - 1));
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(*dst + AESKIT_BLOCK * j, x[j]);
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
    return prev;
}

/* The batch loop shared by CBC and CFB decryption: full batches of AESNI_W,
 * then a 4 + 2 + 1 tail, the chaining block carried in a register. */
typedef __m128i aesni_chain_w_fn(const uint8_t *rk, unsigned rounds, __m128i prev,
                                 uint8_t **dst, const uint8_t **src, size_t w);

AESKIT_INLINE void aesni_chain_dec(aesni_chain_w_fn *batch, const uint8_t *rk,
                                  unsigned rounds, uint8_t iv[16], uint8_t *dst,
                                  const uint8_t *src, size_t n)
{
    __m128i prev = aeskit_load128(iv);
    for (; n >= AESNI_W; n -= AESNI_W)
        prev = batch(rk, rounds, prev, &dst, &src, AESNI_W);
    if (n & 4)
        prev = batch(rk, rounds, prev, &dst, &src, 4);
    if (n & 2)
        prev = batch(rk, rounds, prev, &dst, &src, 2);
    if (n & 1)
        prev = batch(rk, rounds, prev, &dst, &src, 1);
    aeskit_store128(iv, prev);
}

static void aesni_cbc_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    aesni_chain_dec(aesni_cbc_dec_w, aeskit_aesni_dec_keys(k), k->rounds, iv, dst, src, n);
}

/* ---- CFB128 ---------------------------------------------------------- */

/* x carries C[i-1] ^ rk[0]; the last round with rk[last] ^ rk[0] ^ P[i] yields
 * C[i] ^ rk[0], the next block's whitened input. */
void aeskit_aesni_cfb_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const __m128i k0 = aeskit_load128(rk);
    const __m128i fold = _mm_xor_si128(aeskit_load128(rk + AESKIT_BLOCK * rounds), k0);
    __m128i x = _mm_xor_si128(aeskit_load128(iv), k0);

    for (; n > 0; n--, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
        const __m128i p = aeskit_load128(src);
        x = _mm_aesenclast_si128(aesni_enc_middle1(x, rk, rounds), _mm_xor_si128(fold, p));
        aeskit_store128(dst, _mm_xor_si128(x, k0));
    }
    aeskit_store128(iv, _mm_xor_si128(x, k0));
}

AESKIT_INLINE __m128i aesni_cfb_dec_w(const uint8_t *rk, unsigned rounds, __m128i prev,
                                     uint8_t **dst, const uint8_t **src, size_t w)
{
    const uint8_t *in = *src;
    __m128i x[AESNI_W];
    x[0] = prev;
    AESNI_UNROLL
    for (size_t j = 1; j < w; j++)
        x[j] = aeskit_load128(in + AESKIT_BLOCK * (j - 1));
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, 1);
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = _mm_xor_si128(x[j], aeskit_load128(in + AESKIT_BLOCK * j));
    prev = aeskit_load128(in + AESKIT_BLOCK * (w - 1));
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(*dst + AESKIT_BLOCK * j, x[j]);
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
    return prev;
}

static void aesni_cfb_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    aesni_chain_dec(aesni_cfb_dec_w, aeskit_aesni_enc_keys(k), k->rounds, iv, dst, src, n);
}

/* ---- OFB ------------------------------------------------------------- */

/* x carries O[i-1] ^ rk[0]; the last round with rk[last] ^ rk[0] yields
 * O[i] ^ rk[0]. */
void aeskit_aesni_ofb(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                      const uint8_t *src, size_t n)
{
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const __m128i k0 = aeskit_load128(rk);
    const __m128i fold = _mm_xor_si128(aeskit_load128(rk + AESKIT_BLOCK * rounds), k0);
    __m128i x = _mm_xor_si128(aeskit_load128(iv), k0);

    for (; n > 0; n--, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
        x = _mm_aesenclast_si128(aesni_enc_middle1(x, rk, rounds), fold);
        aeskit_store128(dst, _mm_xor_si128(_mm_xor_si128(x, k0), aeskit_load128(src)));
    }
    aeskit_store128(iv, _mm_xor_si128(x, k0));
}

/* ---- CTR --------------------------------------------------------------
 * The counter c is kept as an integer in lanes: BE128 and BE32 byte-reversed,
 * so the counter part is the low 128 or 32 bits; LE32 as it is in memory.
 * A batch is built in memory order from one shuffle: block j = block 0 + j
 * at the counter's lowest byte (step), valid while that byte does not wrap
 * inside the batch (LE32 adds to the whole 32-bit lane, so it never fails).
 * A big-endian counter wraps its last byte in at most 1 batch in 32; that
 * batch counts in lanes. BE32 (GCM's counter, a secret for a nonce of other
 * than 12 bytes: modes/gcm.c) and BE128_SECRET (EAX's, a MAC of the nonce:
 * modes/eax.c) always count in lanes, the 128-bit carry of each block
 * computed as a value (aesni_ctr_add), so nothing branches on their
 * value; the other branches depend on the kind and on a BE128 counter
 * (CTR mode's IV), both public.
 *
 * The main loop builds the counter blocks one batch ahead, so that a batch
 * starts from values that are ready, as ECB starts from loads; built in the
 * same iteration, they keep the AES units waiting at the start of each
 * batch. They
 * are whitened only at use: next[] may be spilled to the stack, and counter
 * blocks are public where counter ^ rk[0] is not. */

AESKIT_INLINE uint64_t aesni_low64(__m128i v)
{
    uint64_t r;
    _mm_storel_epi64((__m128i *)(void *)&r, v);
    return r;
}

/* c + j in lanes: modulo 2^128 for BE128 and BE128_SECRET (the carry a
 * value, not a branch), 2^32 in lane 0 otherwise. */
AESKIT_INLINE __m128i aesni_ctr_add(enum aeskit_ctr kind, __m128i c, size_t j)
{
    if (kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_LE32)
        return _mm_add_epi32(c, _mm_cvtsi32_si128((int)j));
    const uint64_t lo = aesni_low64(c);
    const uint64_t carry = lo + j < lo;
    return _mm_add_epi64(c, _mm_set_epi64x((long long)carry, (long long)j));
}

/* x[j] = counter block c + j in memory order, j < w; returns c + w. */
AESKIT_INLINE __m128i aesni_ctr_fill(enum aeskit_ctr kind, __m128i swap, __m128i step,
                                    __m128i c, __m128i *x, size_t w)
{
    if (kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_BE128_SECRET ||
        (kind == AESKIT_CTR_BE128 && (aesni_low64(c) & 0xff) > 0x100 - w)) {
        AESNI_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = _mm_shuffle_epi8(aesni_ctr_add(kind, c, j), swap);
    } else {
        x[0] = _mm_shuffle_epi8(c, swap);
        AESNI_UNROLL
        for (size_t j = 1; j < w; j++)
            x[j] = _mm_add_epi32(x[j - 1], step);
    }
    return aesni_ctr_add(kind, c, w);
}

/* Encrypts the w counter blocks x[] and xors them with src into dst. */
AESKIT_INLINE void aesni_ctr_xor(const uint8_t *rk, unsigned rounds, __m128i *x,
                                uint8_t **dst, const uint8_t **src, size_t w)
{
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, 1);
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(*dst + AESKIT_BLOCK * j,
                    _mm_xor_si128(x[j], aeskit_load128(*src + AESKIT_BLOCK * j)));
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
}

void aeskit_aesni_ctr(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                      uint8_t *dst, const uint8_t *src, size_t n)
{
    assert(kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_LE32 ||
           kind == AESKIT_CTR_BE128_SECRET);
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const int le = kind == AESKIT_CTR_LE32;
    const __m128i swap = le ? _mm_set_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
                            : _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m128i step = le ? _mm_set_epi32(0, 0, 0, 1) : _mm_set_epi32(1 << 24, 0, 0, 0);
    __m128i c = _mm_shuffle_epi8(aeskit_load128(ctr), swap);
    __m128i x[AESNI_W];

    if (n >= AESNI_W) {
        __m128i next[AESNI_W];
        c = aesni_ctr_fill(kind, swap, step, c, next, AESNI_W);
        for (; n >= AESNI_W; n -= AESNI_W) {
            AESNI_UNROLL
            for (size_t j = 0; j < AESNI_W; j++)
                x[j] = next[j];
            if (n >= 2 * AESNI_W)
                c = aesni_ctr_fill(kind, swap, step, c, next, AESNI_W);
            aesni_ctr_xor(rk, rounds, x, &dst, &src, AESNI_W);
        }
    }
    if (n & 4) {
        c = aesni_ctr_fill(kind, swap, step, c, x, 4);
        aesni_ctr_xor(rk, rounds, x, &dst, &src, 4);
    }
    if (n & 2) {
        c = aesni_ctr_fill(kind, swap, step, c, x, 2);
        aesni_ctr_xor(rk, rounds, x, &dst, &src, 2);
    }
    if (n & 1) {
        c = aesni_ctr_fill(kind, swap, step, c, x, 1);
        aesni_ctr_xor(rk, rounds, x, &dst, &src, 1);
    }
    aeskit_store128(ctr, _mm_shuffle_epi8(c, swap));
}

/* ---- CTR and CBC-MAC in one pass (CCM, EAX) ---------------------------
 * The MAC chain waits a whole AES latency per block; a CTR block beside it
 * needs the same rounds but depends on nothing, so each MAC round is paired
 * with one CTR round and the CTR work issues in the chain's idle cycles.
 * mac_dst 0 (CCM sealing, EAX opening) MACs block i while encrypting block
 * i. mac_dst 1 (CCM opening, EAX sealing) MACs what the CTR writes, so the
 * keystream runs one block ahead: block 0's alone first, then block i + 1's
 * beside block i's MAC, and the last MAC block alone.
 * The counter is a 128-bit integer in lanes, byte-reversed; it is advanced
 * with a carry taken from a lane compare, never a branch: EAX's counter is
 * a secret (aeskit.h). */

/* c + 1 modulo 2^128, c a byte-reversed BE128 counter. */
AESKIT_INLINE __m128i aesni_be128_inc(__m128i c)
{
    c = _mm_add_epi64(c, _mm_set_epi64x(0, 1));
    /* the low lane wrapped to 0: carry into the high one (subtract -1) */
    const __m128i wrapped = _mm_cmpeq_epi64(c, _mm_setzero_si128());
    return _mm_sub_epi64(c, _mm_slli_si128(wrapped, 8));
}

/* One block x under rk (a MAC block, already xored with its data and rk[0])
 * and, when two, one counter block y under rkc (already whitened with
 * rkc[0]), round by round. */
AESKIT_INLINE void aesni_mac_ctr_rounds(__m128i *x, __m128i *y, const uint8_t *rk,
                                        const uint8_t *rkc, unsigned rounds, int two)
{
    for (unsigned r = 1; r < rounds; r++) {
        *x = _mm_aesenc_si128(*x, aeskit_load128(rk + AESKIT_BLOCK * r));
        if (two)
            *y = _mm_aesenc_si128(*y, aeskit_load128(rkc + AESKIT_BLOCK * r));
    }
    *x = _mm_aesenclast_si128(*x, aeskit_load128(rk + AESKIT_BLOCK * rounds));
    if (two)
        *y = _mm_aesenclast_si128(*y, aeskit_load128(rkc + AESKIT_BLOCK * rounds));
}

size_t aeskit_aesni_ctr_cbcmac(const aeskit_key *k, const aeskit_key *kc, int mac_dst,
                               uint8_t ctr[16], uint8_t mac[16], uint8_t *dst,
                               const uint8_t *src, size_t n)
{
    if (n == 0)
        return 0;
    assert(kc->rounds == k->rounds);
    const uint8_t *rk = aeskit_aesni_enc_keys(k), *rkc = aeskit_aesni_enc_keys(kc);
    const unsigned rounds = k->rounds;
    const __m128i swap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m128i k0 = aeskit_load128(rk), kc0 = aeskit_load128(rkc);
    __m128i c = _mm_shuffle_epi8(aeskit_load128(ctr), swap);
    __m128i m = aeskit_load128(mac);

    if (!mac_dst) {
        for (size_t i = 0; i < n; i++, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
            const __m128i p = aeskit_load128(src);
            __m128i x = _mm_xor_si128(m, _mm_xor_si128(p, k0));
            __m128i y = _mm_xor_si128(_mm_shuffle_epi8(c, swap), kc0);
            c = aesni_be128_inc(c);
            aesni_mac_ctr_rounds(&x, &y, rk, rkc, rounds, 1);
            m = x;
            aeskit_store128(dst, _mm_xor_si128(y, p));
        }
    } else {
        __m128i stream = _mm_xor_si128(_mm_shuffle_epi8(c, swap), kc0);
        c = aesni_be128_inc(c);
        aesni_mac_ctr_rounds(&stream, &stream, rkc, rkc, rounds, 0);
        for (size_t i = 1; i < n; i++, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
            const __m128i p = _mm_xor_si128(aeskit_load128(src), stream);
            aeskit_store128(dst, p);
            __m128i x = _mm_xor_si128(m, _mm_xor_si128(p, k0));
            __m128i y = _mm_xor_si128(_mm_shuffle_epi8(c, swap), kc0);
            c = aesni_be128_inc(c);
            aesni_mac_ctr_rounds(&x, &y, rk, rkc, rounds, 1);
            m = x;
            stream = y;
        }
        const __m128i p = _mm_xor_si128(aeskit_load128(src), stream);
        aeskit_store128(dst, p);
        m = _mm_xor_si128(m, _mm_xor_si128(p, k0));
        aesni_mac_ctr_rounds(&m, &m, rk, rk, rounds, 0);
    }
    aeskit_store128(mac, m);
    aeskit_store128(ctr, _mm_shuffle_epi8(c, swap));
    return n;
}

/* ---- XTS --------------------------------------------------------------
 * Block j is E(P[j] ^ T[j]) ^ T[j], with T[j+1] = T[j] * alpha in IEEE
 * 1619's little-endian GF(2^128). The doubling runs on the two 64-bit
 * halves in general registers, whose units the AES rounds leave idle, and
 * the tweaks go to a stack buffer from which the XORs load them. Done with
 * vector shifts and shuffles, 8 tweaks a batch took the AES rounds' vector
 * pipes: 0.59 c/B for AES-128, against 0.38 without them. A batch's tweaks
 * are written one batch ahead, so that its loads never wait on a store to
 * forward (a 16-byte load of two 8-byte stores cannot). The tweak is a
 * secret (the encrypted sector number): nothing branches on it, and the
 * buffer is wiped.
 *
 * What is left to gain, measured on Zen 2 against ECB's kernel (rdtsc,
 * 16 KiB): with the tweaks free (a fixed buffer: only the two loads and
 * XORs a block) XTS takes 1.20x ECB's time for AES-128, 1.13x for AES-256;
 * this code 1.36x and 1.16x. Why not another layout (each slower, as a
 * multiple of ECB's time or of this code's): the tweaks in vector
 * registers advanced by x^8 with PCLMULQDQ (1.71x ECB), odd tweaks doubled
 * from even ones in vector registers (1.55x), k0 and the last round key
 * folded into the tweaks on the scalar side (1.83x: twice the stores), k0
 * folded on the vector side with AESENCLAST taking rk[last] ^ T (1.48x),
 * the tweaks computed in the middle of the rounds (1.46x), the tweaks kept
 * whitened in the general registers (W = T ^ k0, so a block takes two
 * vector XORs instead of three, but two more scalar XORs: 1.05-1.09x this
 * code's time). */

/* w tweaks from (lo, hi) into tw, which moves on past them. On x86-64 a
 * doubling is five instructions: ADD/ADC shift the 128 bits left, SBB turns
 * the bit shifted out of the top into a mask, and 0x87 folds it back in.
 * Compilers make 7-9 of the C below (or of _addcarry_u64), and with 16
 * stores and 8 AES batches' worth of rounds to share the core with, the
 * count showed: 1.44x ECB's time for AES-128, against 1.36x with these. */
AESKIT_INLINE void aesni_xts_tweaks(uint64_t *plo, uint64_t *phi, uint8_t *tw, size_t w)
{
    uint64_t lo = *plo, hi = *phi;
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++) {
        memcpy(tw + AESKIT_BLOCK * j, &lo, 8);
        memcpy(tw + AESKIT_BLOCK * j + 8, &hi, 8);
#if defined(__x86_64__) && defined(AESKIT_GNU_ASM)
        uint64_t fold;
        __asm__("add %0, %0\n\tadc %1, %1\n\tsbb %2, %2\n\tand $0x87, %2\n\txor %2, %0"
                : "+r"(lo), "+r"(hi), "=&r"(fold)
                :
                : "cc");
#else
        const uint64_t fold = (uint64_t)((int64_t)hi >> 63) & 0x87;
        hi = (hi << 1) | (lo >> 63);
        lo = (lo << 1) ^ fold;
#endif
    }
    *plo = lo;
    *phi = hi;
}

/* w blocks with the tweaks in tw. */
AESKIT_INLINE void aesni_xts_w(const uint8_t *rk, unsigned rounds, int enc, const uint8_t *tw,
                              uint8_t **dst, const uint8_t **src, size_t w)
{
    __m128i x[AESNI_W];
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = _mm_xor_si128(aeskit_load128(*src + AESKIT_BLOCK * j),
                             aeskit_load128(tw + AESKIT_BLOCK * j));
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, enc);
    AESNI_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(*dst + AESKIT_BLOCK * j,
                        _mm_xor_si128(x[j], aeskit_load128(tw + AESKIT_BLOCK * j)));
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
}

AESKIT_INLINE void aesni_xts(const uint8_t *rk, unsigned rounds, int enc, uint8_t tweak[16],
                            uint8_t *dst, const uint8_t *src, size_t n)
{
    uint8_t tw[2][AESNI_W * AESKIT_BLOCK];
    uint64_t lo, hi;
    memcpy(&lo, tweak, 8);
    memcpy(&hi, tweak + 8, 8);
    size_t cur = 0;
    if (n >= AESNI_W) {
        aesni_xts_tweaks(&lo, &hi, tw[0], AESNI_W);
        for (; n >= AESNI_W; n -= AESNI_W) {
            if (n >= 2 * AESNI_W)
                aesni_xts_tweaks(&lo, &hi, tw[cur ^ 1], AESNI_W);
            aesni_xts_w(rk, rounds, enc, tw[cur], &dst, &src, AESNI_W);
            cur ^= 1;
        }
    }
    if (n & 4) {
        aesni_xts_tweaks(&lo, &hi, tw[cur], 4);
        aesni_xts_w(rk, rounds, enc, tw[cur], &dst, &src, 4);
    }
    if (n & 2) {
        aesni_xts_tweaks(&lo, &hi, tw[cur], 2);
        aesni_xts_w(rk, rounds, enc, tw[cur], &dst, &src, 2);
    }
    if (n & 1) {
        aesni_xts_tweaks(&lo, &hi, tw[cur], 1);
        aesni_xts_w(rk, rounds, enc, tw[cur], &dst, &src, 1);
    }
    memcpy(tweak, &lo, 8);
    memcpy(tweak + 8, &hi, 8);
    aeskit_secure_zero(tw, sizeof tw);
    lo = hi = 0;
}

void aeskit_aesni_xts(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                      const uint8_t *src, size_t n)
{
    if (enc)
        aesni_xts(aeskit_aesni_enc_keys(k), k->rounds, 1, tweak, dst, src, n);
    else
        aesni_xts(aeskit_aesni_dec_keys(k), k->rounds, 0, tweak, dst, src, n);
}

/* Data units of whole batches (unit a multiple of AESNI_W blocks) as one
 * run of batches, each batch's tweaks written one batch ahead as in
 * aesni_xts: the batch that starts a unit takes its tweak from tweaks
 * rather than doubling on, so no unit waits for the one before to drain. */
AESKIT_INLINE void aesni_xts_units(const uint8_t *rk, unsigned rounds, int enc,
                                   const uint8_t *tweaks, size_t unit, uint8_t *dst,
                                   const uint8_t *src, size_t units)
{
    uint8_t tw[2][AESNI_W * AESKIT_BLOCK];
    const size_t per = unit / AESNI_W, batches = per * units;
    uint64_t lo, hi;
    memcpy(&lo, tweaks, 8);
    memcpy(&hi, tweaks + 8, 8);
    aesni_xts_tweaks(&lo, &hi, tw[0], AESNI_W);
    size_t cur = 0, left = per;   /* batches to the end of this unit */
    for (size_t b = 1; b <= batches; b++) {
        if (b < batches) {
            if (--left == 0) {    /* the next batch starts a unit (no division) */
                tweaks += AESKIT_BLOCK;
                memcpy(&lo, tweaks, 8);
                memcpy(&hi, tweaks + 8, 8);
                left = per;
            }
            aesni_xts_tweaks(&lo, &hi, tw[cur ^ 1], AESNI_W);
        }
        aesni_xts_w(rk, rounds, enc, tw[cur], &dst, &src, AESNI_W);
        cur ^= 1;
    }
    aeskit_secure_zero(tw, sizeof tw);
    lo = hi = 0;
}

void aeskit_aesni_xts_units(const aeskit_key *k, int enc, const uint8_t *tweaks, size_t unit,
                            uint8_t *dst, const uint8_t *src, size_t units)
{
    if (unit % AESNI_W != 0) {   /* short or ragged units: one call each */
        uint8_t t[16];
        for (size_t i = 0; i < units; i++) {
            memcpy(t, tweaks + AESKIT_BLOCK * i, 16);
            aeskit_aesni_xts(k, enc, t, dst + AESKIT_BLOCK * unit * i,
                             src + AESKIT_BLOCK * unit * i, unit);
        }
        aeskit_secure_zero(t, sizeof t);
    } else if (enc) {
        aesni_xts_units(aeskit_aesni_enc_keys(k), k->rounds, 1, tweaks, unit, dst, src, units);
    } else {
        aesni_xts_units(aeskit_aesni_dec_keys(k), k->rounds, 0, tweaks, unit, dst, src, units);
    }
}

static const struct aeskit_gcm_impl aesni_gcm = {.crypt = aeskit_aesni_gcm};
static const struct aeskit_gcmsiv_impl aesni_gcmsiv = {
    .open = aeskit_aesni_gcmsiv_open,
    .short_msg = aeskit_aesni_gcmsiv_short,
};
static const struct aeskit_ocb_impl aesni_ocb = {.crypt = aeskit_aesni_ocb};
const struct aeskit_ccm_impl aeskit_aesni_ccm = {.ctr_cbcmac = aeskit_aesni_ctr_cbcmac};

const struct aeskit_impl aeskit_aesni_impl = {
    .name = "aesni",
    .cpu_needs = AESKIT_CPU_AES | AESKIT_CPU_PCLMUL | AESKIT_CPU_SSSE3 | AESKIT_CPU_SSE41,
    .set_key = aesni_set_key,
    .ecb_enc = aeskit_aesni_ecb_enc,
    .ecb_dec = aeskit_aesni_ecb_dec,
    .cbc_enc = aeskit_aesni_cbc_enc,
    .cbc_dec = aesni_cbc_dec,
    .cfb_enc = aeskit_aesni_cfb_enc,
    .cfb_dec = aesni_cfb_dec,
    .ofb = aeskit_aesni_ofb,
    .ctr = aeskit_aesni_ctr,
    .cbc_mac = aeskit_aesni_cbc_mac,
    .xts = aeskit_aesni_xts,
    .xts_units = aeskit_aesni_xts_units,
    .ghash_key = aeskit_clmul_ghash_key,
    .ghash = aeskit_clmul_ghash,
    .polyval = aeskit_clmul_polyval,
    .gcm = &aesni_gcm,
    .gcmsiv = &aesni_gcmsiv,
    .ocb = &aesni_ocb,
    .ccm = &aeskit_aesni_ccm,
    .constants = (const aeskit_constant[]){
        {"batch_blocks", AESNI_W},
        {"gcmsiv_short_blocks", AESKIT_AESNI_SIV_SHORT},
        {"gcm_batch_blocks", AESKIT_AESNI_GCM_W},
        {"ocb_batch_blocks", AESKIT_AESNI_OCB_W},
        {"ghash_batch_blocks", AESKIT_CLMUL_W},
        {NULL, 0},
    },
};
