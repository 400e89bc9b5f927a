/*
 * simd_body.h: the AES modes and the GHASH/POLYVAL aggregation on a
 * 128-bit vector unit with AES round instructions, written once and
 * instantiated by aesni.c (SSE + AES-NI + PCLMULQDQ), armv8_ce.c (NEON +
 * Crypto Extensions) and power8.c (VSX + vector crypto). Contracts:
 * aeskit.h. Nothing below depends on the architecture but through the
 * names the including file defines first:
 *
 *   SIMD_NAME(x)        the name of this backend's function x (aeskit_aesni_x, ce_x, p8_x)
 *   SIMD_FN             a slot function's storage class and attributes
 *   SIMD_INLINE         a forced-inline helper's storage class and attributes
 *   SIMD_LOCAL          a file-local (not inlined) helper's: static and, where
 *                       the backend's file has no target flags, its target
 *                       attribute (optional: static)
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
 * and for CTR either SIMD_CTR_BLOCK(hi, lo), the vector of the block whose
 * bytes 0..7 are the big-endian hi and 8..15 the big-endian lo, or the
 * backend's own counter (SIMD_CTR_T and the three below it, see CTR);
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
 *   SIMD_GMUL_ADD2(s, a, b, fa, fb)  s += a * fa + b * fb, unreduced (optional:
 *                       a backend that makes two products cheaper than one
 *                       and one defines it; else it is two SIMD_GMUL_ADDs)
 *   SIMD_GREDUCE(s)     the sum reduced
 *   SIMD_GBLOCK(p, polyval)  a block's register image: GHASH's (polyval 0)
 *                       or POLYVAL's (polyval 1) reading of its bytes
 *   SIMD_GSTORE(p, v)   an image back to bytes, GHASH's reading
 *
 * Parallel modes (ECB, CBC and CFB decryption, CTR, XTS) run SIMD_W
 * independent blocks per loop iteration: on aesni AESENC has latency 3-4
 * and 2 units on current cores (4 on Zen 4), so 8 blocks in flight keep
 * them busy, and AESE and vcipher want as many. A 1..7 block tail runs as
 * 4 + 2 + 1. Round keys are loaded once per round per batch (15 keys and 8
 * blocks do not fit in 16 registers, and one L1 load per 8 rounds costs
 * nothing). In place: every batch loads all its input (and the chaining
 * block the next batch needs) before its first store.
 *
 * Counters and tweaks are advanced without a branch on a secret value
 * (adds with the carry as a comparison result, masked reductions).
 *
 * The serial-chain modes are simd_serial.h's (aesni has its own).
 */
#include <string.h>

#include "common.h"
#include "dispatch.h"
#include "modes/ccm.h"
#include "modes/gcm.h"
#include "modes/gcmsiv.h"
#include "modes/generic.h"
#include "modes/ocb.h"

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

/* w blocks through the cipher (enc) or its inverse, enc a constant at each
 * call. */
SIMD_INLINE void simd_cipher_w(const SIMD_KEYS *ks, int enc, SIMD_V *x, size_t w)
{
    if (enc)
        SIMD_ENC_W(ks, x, w);
    else
        SIMD_DEC_W(ks, x, w);
}

SIMD_INLINE SIMD_V simd_enc1(const SIMD_KEYS *ks, SIMD_V x)
{
    SIMD_ENC_W(ks, &x, 1);
    return x;
}

/* Runs KERNEL(w) on the 0..7 blocks of a tail as 4 + 2 + 1. */
#define SIMD_TAIL(n, KERNEL)                   \
    do {                                       \
        if ((n) & 4)                           \
            KERNEL(4);                         \
        if ((n) & 2)                           \
            KERNEL(2);                         \
        if ((n) & 1)                           \
            KERNEL(1);                         \
    } while (0)
/* Runs KERNEL(w) on batches of SIMD_W blocks, then the tail; KERNEL
 * advances src and dst (SIMD_STEP). */
#define SIMD_BATCHES(n, KERNEL)                \
    do {                                       \
        for (; (n) >= SIMD_W; (n) -= SIMD_W)   \
            KERNEL(SIMD_W);                    \
        SIMD_TAIL(n, KERNEL);                  \
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
    simd_cipher_w(ks, !dec, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, x[j]);
}

/* dec a constant at each call */
SIMD_INLINE void simd_ecb(const aeskit_key *k, int dec, uint8_t *dst, const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, dec);
#define K(w) (simd_ecb_w(&ks, dec, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
}

SIMD_FN void SIMD_NAME(ecb_enc)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    simd_ecb(k, 0, dst, src, n);
}

SIMD_FN void SIMD_NAME(ecb_dec)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    simd_ecb(k, 1, dst, src, n);
}

/* ---- parallel chaining modes --------------------------------------------- */

/* CBC decryption (cfb 0): block j is D(C[j]) ^ C[j-1]; CFB decryption
 * (cfb 1): E(C[j-1]) ^ C[j]; C[-1] is the IV, carried in *iv. The
 * ciphertext is reloaded from src for the XOR, and every load of a batch
 * (the next chaining block included) comes before its first store, so dst
 * may be src. */
SIMD_INLINE void simd_chain_dec_w(const SIMD_KEYS *ks, int cfb, SIMD_V *iv, uint8_t *dst,
                                  const uint8_t *src, size_t w)
{
    SIMD_V x[SIMD_W];
    if (cfb) {
        x[0] = *iv;
        SIMD_UNROLL
        for (size_t j = 1; j < w; j++)
            x[j] = SIMD_LOAD(src + AESKIT_BLOCK * (j - 1));
        SIMD_ENC_W(ks, x, w);
        SIMD_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = SIMD_XOR(x[j], SIMD_LOAD(src + AESKIT_BLOCK * j));
    } else {
        SIMD_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = SIMD_LOAD(src + AESKIT_BLOCK * j);
        SIMD_DEC_W(ks, x, w);
        x[0] = SIMD_XOR(x[0], *iv);
        SIMD_UNROLL
        for (size_t j = 1; j < w; j++)
            x[j] = SIMD_XOR(x[j], SIMD_LOAD(src + AESKIT_BLOCK * (j - 1)));
    }
    *iv = SIMD_LOAD(src + AESKIT_BLOCK * (w - 1));
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, x[j]);
}

/* cfb a constant at each call; CFB runs the cipher forwards, CBC backwards */
SIMD_INLINE void simd_chain_dec(const aeskit_key *k, int cfb, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, !cfb);
    SIMD_V v = SIMD_LOAD(iv);
#define K(w) (simd_chain_dec_w(&ks, cfb, &v, dst, src, w), SIMD_STEP(w))
    SIMD_BATCHES(n, K);
#undef K
    SIMD_STORE(iv, v);
}

SIMD_FN void SIMD_NAME(cbc_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    simd_chain_dec(k, 0, iv, dst, src, n);
}

SIMD_FN void SIMD_NAME(cfb_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    simd_chain_dec(k, 1, iv, dst, src, n);
}

/* ---- CTR ------------------------------------------------------------------
 * The counter blocks of a batch are built one batch ahead, so that a batch
 * starts from values that are ready, as ECB starts from loads (built in the
 * same iteration, they keep the AES units waiting at the start of each
 * batch). They are whitened only at use: next[] may be spilled to the stack,
 * and counter blocks are public where counter ^ rk[0] is not.
 *
 * How the blocks are made is the backend's (SIMD_CTR_T, SIMD_CTR_GET,
 * SIMD_CTR_PUT, SIMD_CTR_FILL(kind, c, x, w): x[j] = the block of counter
 * c + j, j < w, then c += w); without them, the counter is two big-endian
 * 64-bit words in general registers, advanced without a branch on its value
 * (the carry a comparison result), and each block made by SIMD_CTR_BLOCK. */
#if !defined(SIMD_CTR_T)
typedef struct {
    uint64_t hi, lo;   /* bytes 0..7 and 8..15, big-endian */
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

SIMD_INLINE void simd_ctr_fill(enum aeskit_ctr kind, simd_ctr *c, SIMD_V *x, size_t w)
{
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        x[j] = SIMD_CTR_BLOCK(c->hi, c->lo);
        simd_ctr_inc(c, kind);
    }
}

SIMD_INLINE simd_ctr simd_ctr_get(const uint8_t ctr[16])
{
    const simd_ctr c = {aeskit_load_be64(ctr), aeskit_load_be64(ctr + 8)};
    return c;
}

SIMD_INLINE void simd_ctr_put(uint8_t ctr[16], simd_ctr c)
{
    aeskit_store_be64(ctr, c.hi);
    aeskit_store_be64(ctr + 8, c.lo);
}

#define SIMD_CTR_T simd_ctr
#define SIMD_CTR_GET(kind, ctr) simd_ctr_get(ctr)
#define SIMD_CTR_PUT(kind, ctr, c) simd_ctr_put((ctr), (c))
#define SIMD_CTR_FILL(kind, c, x, w) simd_ctr_fill((kind), (c), (x), (w))
#endif

/* Encrypts the w counter blocks x[] and XORs them with src into dst. */
SIMD_INLINE void simd_ctr_xor(const SIMD_KEYS *ks, SIMD_V *x, uint8_t *dst, const uint8_t *src,
                              size_t w)
{
    SIMD_ENC_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], SIMD_LOAD(src + AESKIT_BLOCK * j)));
}

SIMD_FN void SIMD_NAME(ctr)(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                            uint8_t *dst, const uint8_t *src, size_t n)
{
    assert(kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_LE32 ||
           kind == AESKIT_CTR_BE128_SECRET);
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_CTR_T c = SIMD_CTR_GET(kind, ctr);
    SIMD_V x[SIMD_W];

    if (n >= SIMD_W) {
        SIMD_V next[SIMD_W];
        SIMD_CTR_FILL(kind, &c, next, SIMD_W);
        for (; n >= SIMD_W; n -= SIMD_W) {
            SIMD_UNROLL
            for (size_t j = 0; j < SIMD_W; j++)
                x[j] = next[j];
            if (n >= 2 * SIMD_W)
                SIMD_CTR_FILL(kind, &c, next, SIMD_W);
            simd_ctr_xor(&ks, x, dst, src, SIMD_W);
            SIMD_STEP(SIMD_W);
        }
    }
#define K(w) (SIMD_CTR_FILL(kind, &c, x, w), simd_ctr_xor(&ks, x, dst, src, w), SIMD_STEP(w))
    SIMD_TAIL(n, K);
#undef K
    SIMD_CTR_PUT(kind, ctr, c);
}

/* ---- XTS --------------------------------------------------------------
 * Block j is E(P[j] ^ T[j]) ^ T[j], with T[j+1] = T[j] * alpha in IEEE
 * 1619's little-endian GF(2^128). The doubling runs on the two 64-bit
 * halves in general registers, whose units the AES rounds leave idle, and
 * the tweaks go to a stack buffer in memory byte order, from which the
 * XORs load them. A batch's tweaks are written one batch ahead, so that its
 * loads never wait on a store to forward (a 16-byte load of two 8-byte
 * stores cannot). The tweak is a secret (the encrypted sector number):
 * nothing branches on it, and the buffer is wiped.
 *
 * Measured with aesni on Zen 2 against ECB's kernel (rdtsc, 16 KiB): with
 * the tweaks free (a fixed buffer: only the two loads and XORs a block)
 * XTS takes 1.20x ECB's time for AES-128, 1.13x for AES-256; this code
 * 1.36x and 1.16x. Why not another layout (each slower, as a multiple of
 * ECB's time or of this code's): the tweaks in vector registers advanced
 * by x^8 with PCLMULQDQ (1.71x ECB), odd tweaks doubled from even ones in
 * vector registers (1.55x), k0 and the last round key folded into the
 * tweaks on the scalar side (1.83x: twice the stores), k0 folded on the
 * vector side with AESENCLAST taking rk[last] ^ T (1.48x), the tweaks
 * computed in the middle of the rounds (1.46x), the tweaks kept whitened
 * in the general registers (W = T ^ k0, so a block takes two vector XORs
 * instead of three, but two more scalar XORs: 1.05-1.09x this code's
 * time). */

/* w tweaks from (lo, hi) into tw, which moves on past them. On x86-64 a
 * doubling is five instructions: ADD/ADC shift the 128 bits left, SBB turns
 * the bit shifted out of the top into a mask, and 0x87 folds it back in.
 * Compilers make 7-9 of the C below (or of _addcarry_u64), and with 16
 * stores and 8 AES batches' worth of rounds to share the core with, the
 * count showed: 1.44x ECB's time for AES-128, against 1.36x with these. */
SIMD_INLINE void simd_xts_tweaks(uint64_t *plo, uint64_t *phi, uint8_t *tw, size_t w)
{
    uint64_t lo = *plo, hi = *phi;
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        aeskit_store_le64(tw + AESKIT_BLOCK * j, lo);
        aeskit_store_le64(tw + AESKIT_BLOCK * j + 8, hi);
#if defined(__x86_64__) && defined(AESKIT_GNU_ASM)
        uint64_t fold;
        __asm__("add %0, %0\n\tadc %1, %1\n\tsbb %2, %2\n\tand $0x87, %2\n\txor %2, %0"
                : "+r"(lo), "+r"(hi), "=&r"(fold)
                :
                : "cc");
#else
        aeskit_gf128_double(&hi, &lo);
#endif
    }
    *plo = lo;
    *phi = hi;
}

/* w blocks with the tweaks in tw. */
SIMD_INLINE void simd_xts_w(const SIMD_KEYS *ks, int enc, const uint8_t *tw, uint8_t *dst,
                            const uint8_t *src, size_t w)
{
    SIMD_V x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = SIMD_XOR(SIMD_LOAD(src + AESKIT_BLOCK * j), SIMD_LOAD(tw + AESKIT_BLOCK * j));
    simd_cipher_w(ks, enc, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j, SIMD_XOR(x[j], SIMD_LOAD(tw + AESKIT_BLOCK * j)));
}

SIMD_INLINE void simd_xts(const SIMD_KEYS *ks, int enc, uint8_t tweak[16], uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    uint8_t tw[2][SIMD_W * AESKIT_BLOCK];
    uint64_t lo = aeskit_load_le64(tweak), hi = aeskit_load_le64(tweak + 8);
    size_t cur = 0;
    if (n >= SIMD_W) {
        simd_xts_tweaks(&lo, &hi, tw[0], SIMD_W);
        for (; n >= SIMD_W; n -= SIMD_W) {
            if (n >= 2 * SIMD_W)
                simd_xts_tweaks(&lo, &hi, tw[cur ^ 1], SIMD_W);
            simd_xts_w(ks, enc, tw[cur], dst, src, SIMD_W);
            SIMD_STEP(SIMD_W);
            cur ^= 1;
        }
    }
#define K(w) (simd_xts_tweaks(&lo, &hi, tw[cur], w), simd_xts_w(ks, enc, tw[cur], dst, src, w), \
              SIMD_STEP(w))
    SIMD_TAIL(n, K);
#undef K
    aeskit_store_le64(tweak, lo);
    aeskit_store_le64(tweak + 8, hi);
    aeskit_secure_zero(tw, sizeof tw);
    lo = hi = 0;
}

SIMD_FN void SIMD_NAME(xts)(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    if (enc) {
        SIMD_LOAD_KEYS(&ks, k, 0);
        simd_xts(&ks, 1, tweak, dst, src, n);
    } else {
        SIMD_LOAD_KEYS(&ks, k, 1);
        simd_xts(&ks, 0, tweak, dst, src, n);
    }
}

/* Data units of whole batches (unit a multiple of SIMD_W blocks) as one
 * run of batches, each batch's tweaks written one batch ahead as in
 * simd_xts: the batch that starts a unit takes its tweak from tweaks
 * rather than doubling on, so no unit waits for the one before to drain. */
SIMD_INLINE void simd_xts_units(const SIMD_KEYS *ks, int enc, const uint8_t *tweaks, size_t unit,
                                uint8_t *dst, const uint8_t *src, size_t units)
{
    uint8_t tw[2][SIMD_W * AESKIT_BLOCK];
    const size_t per = unit / SIMD_W, batches = per * units;
    uint64_t lo = aeskit_load_le64(tweaks), hi = aeskit_load_le64(tweaks + 8);
    simd_xts_tweaks(&lo, &hi, tw[0], SIMD_W);
    size_t cur = 0, left = per;   /* batches to the end of this unit */
    for (size_t b = 1; b <= batches; b++) {
        if (b < batches) {
            if (--left == 0) {    /* the next batch starts a unit (no division) */
                tweaks += AESKIT_BLOCK;
                lo = aeskit_load_le64(tweaks);
                hi = aeskit_load_le64(tweaks + 8);
                left = per;
            }
            simd_xts_tweaks(&lo, &hi, tw[cur ^ 1], SIMD_W);
        }
        simd_xts_w(ks, enc, tw[cur], dst, src, SIMD_W);
        SIMD_STEP(SIMD_W);
        cur ^= 1;
    }
    aeskit_secure_zero(tw, sizeof tw);
    lo = hi = 0;
}

SIMD_FN void SIMD_NAME(xts_units)(const aeskit_key *k, int enc, const uint8_t *tweaks,
                                  size_t unit, uint8_t *dst, const uint8_t *src, size_t units)
{
    SIMD_KEYS ks;
    if (unit % SIMD_W != 0) {   /* short or ragged units: one call each */
        uint8_t t[16];
        for (size_t i = 0; i < units; i++) {
            memcpy(t, tweaks + AESKIT_BLOCK * i, 16);
            SIMD_NAME(xts)(k, enc, t, dst + AESKIT_BLOCK * unit * i,
                           src + AESKIT_BLOCK * unit * i, unit);
        }
        aeskit_secure_zero(t, sizeof t);
    } else if (enc) {
        SIMD_LOAD_KEYS(&ks, k, 0);
        simd_xts_units(&ks, 1, tweaks, unit, dst, src, units);
    } else {
        SIMD_LOAD_KEYS(&ks, k, 1);
        simd_xts_units(&ks, 0, tweaks, unit, dst, src, units);
    }
}

/* ---- OCB3 (the ocb sub-table) --------------------------------------------
 * Built where the backend splits the cipher for it (the names below); a
 * backend without them leaves its ocb sub-table to the mode's split path.
 *   SIMD_ENC_MID_W(ks, x, w), SIMD_DEC_MID_W(ks, x, w)
 *                       the rounds between the whitening and the last
 *                       key's step, on w blocks in place
 *   SIMD_ENC_LAST(x, k), SIMD_DEC_LAST(x, k)
 *                       that last step with key k
 *   SIMD_KEY_FIRST(ks), SIMD_KEY_LAST(ks)
 *                       the whitening key and the last key
 *
 * Does all n blocks: batches of SIMD_W from a block index that is a multiple
 * of SIMD_W, a 4 + 2 + 1 head up to that index and the same for the tail
 * (see simd_ocb_run). On aesni: within a few percent of ECB, twice as fast
 * as modes/ocb.c's split path on the same ECB.
 *
 * The checksum is folded inline, never in a pass of its own (libgcrypt saw
 * a separate pass fall off a cliff above 32 KiB on Intel): when decrypting,
 * over each plaintext block as it is produced; when encrypting, over each
 * plaintext block reloaded just before its ciphertext is stored, which keeps
 * those XORs off the start of a batch, where they would delay the first
 * AES round. In place is safe: a batch loads all its input before the first
 * round, and the reload of block j comes before the store of block j.
 *
 * The offset is folded into both ends of the cipher: the running offset
 * carries the first key (whitening is one XOR), and the last step uses the
 * last key ^ Offset_j, since that step ends in the key's XOR (aesenclast,
 * aesdeclast, vcipherlast, AESE's trailing EOR alike).
 */
#if defined(SIMD_ENC_MID_W)

/*
 * The cipher on w whitened blocks x[j] = in_j ^ o[j], o[j] = Offset ^ the
 * first key for each: the middle rounds, then the last step with the last
 * key ^ Offset = fold ^ o[j], then the checksum, then the store. Encrypting,
 * the checksum reloads the plaintext: in place, src block j is intact until
 * dst block j is stored. Advances *dst and *src past the w blocks.
 */
SIMD_INLINE void simd_ocb_cipher_w(const SIMD_KEYS *ks, int enc, SIMD_V fold, SIMD_V *x,
                                   const SIMD_V *o, SIMD_V *sum, uint8_t **dst,
                                   const uint8_t **src, size_t w)
{
    if (enc)
        SIMD_ENC_MID_W(ks, x, w);
    else
        SIMD_DEC_MID_W(ks, x, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        const SIMD_V key = SIMD_XOR(fold, o[j]);
        x[j] = enc ? SIMD_ENC_LAST(x[j], key) : SIMD_DEC_LAST(x[j], key);
        *sum = SIMD_XOR(*sum, enc ? SIMD_LOAD(*src + AESKIT_BLOCK * j) : x[j]);
        SIMD_STORE(*dst + AESKIT_BLOCK * j, x[j]);
    }
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
}

/* w blocks from any index: each offset from the one before and L[ntz]. */
SIMD_INLINE void simd_ocb_any_w(const SIMD_KEYS *ks, const aeskit_ocb_key *ok, int enc, SIMD_V fold, uint64_t *i, SIMD_V *off, SIMD_V *sum,
                          uint8_t **dst, const uint8_t **src, size_t w)
{
    SIMD_V x[SIMD_W], o[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++) {
        *off = SIMD_XOR(*off, SIMD_LOAD(ok->l[aeskit_ntz64(++*i)]));
        o[j] = *off;
        x[j] = SIMD_XOR(SIMD_LOAD(*src + AESKIT_BLOCK * j), o[j]);
    }
    simd_ocb_cipher_w(ks, enc, fold, x, o, sum, dst, src, w);
}

/* 0..7 blocks as 4 + 2 + 1 */
SIMD_INLINE void simd_ocb_few(const SIMD_KEYS *ks, const aeskit_ocb_key *ok, int enc,
                        SIMD_V fold, uint64_t *i, SIMD_V *off, SIMD_V *sum, uint8_t **dst,
                        const uint8_t **src, size_t n)
{
    if (n & 4)
        simd_ocb_any_w(ks, ok, enc, fold, i, off, sum, dst, src, 4);
    if (n & 2)
        simd_ocb_any_w(ks, ok, enc, fold, i, off, sum, dst, src, 2);
    if (n & 1)
        simd_ocb_any_w(ks, ok, enc, fold, i, off, sum, dst, src, 1);
}

/*
 * All n blocks. The first up to 7 run as 4 + 2 + 1 until the block index
 * is a multiple of 8; from there each batch of 8 (indices 8m+1 .. 8m+8) has
 * offsets Offset_8m ^ L0, ^ L0^L1, ^ L1, ^ L1^L2, ^ L0^L1^L2, ^ L0^L2, ^ L2,
 * then ^ L2 ^ L[ntz(8m+8)]: all from one register in parallel, with one
 * ntz per batch, where a chain through eight ntz and loads would hold each
 * batch back. The last 0..7 run as 4 + 2 + 1.
 */
SIMD_INLINE void simd_ocb_run(const SIMD_KEYS *ks, const aeskit_ocb_key *ok, int enc,
                        aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const SIMD_V k0 = SIMD_KEY_FIRST(ks);
    const SIMD_V fold = SIMD_XOR(SIMD_KEY_LAST(ks), k0);
    const SIMD_V l0 = SIMD_LOAD(ok->l[0]), l1 = SIMD_LOAD(ok->l[1]), l2 = SIMD_LOAD(ok->l[2]);
    const SIMD_V delta[SIMD_W - 1] = {
        l0, SIMD_XOR(l0, l1), l1, SIMD_XOR(l1, l2),
        SIMD_XOR(SIMD_XOR(l0, l1), l2), SIMD_XOR(l0, l2), l2,
    };
    /* the running offset carries the first key, the whitening, folded in */
    SIMD_V off = SIMD_XOR(SIMD_LOAD(st->offset), k0), sum = SIMD_LOAD(st->checksum);
    uint64_t i = st->blocks;

    size_t head = (SIMD_W - i % SIMD_W) % SIMD_W;
    if (head > n)
        head = n;
    simd_ocb_few(ks, ok, enc, fold, &i, &off, &sum, &dst, &src, head);
    n -= head;
    for (; n >= SIMD_W; n -= SIMD_W) {
        SIMD_V x[SIMD_W], o[SIMD_W];
        i += SIMD_W;
        SIMD_UNROLL
        for (size_t j = 0; j < SIMD_W - 1; j++)
            o[j] = SIMD_XOR(off, delta[j]);
        o[SIMD_W - 1] = off = SIMD_XOR(o[SIMD_W - 2], SIMD_LOAD(ok->l[aeskit_ntz64(i)]));
        SIMD_UNROLL
        for (size_t j = 0; j < SIMD_W; j++)
            x[j] = SIMD_XOR(SIMD_LOAD(src + AESKIT_BLOCK * j), o[j]);
        simd_ocb_cipher_w(ks, enc, fold, x, o, &sum, &dst, &src, SIMD_W);
    }
    simd_ocb_few(ks, ok, enc, fold, &i, &off, &sum, &dst, &src, n);
    SIMD_STORE(st->offset, SIMD_XOR(off, k0));
    SIMD_STORE(st->checksum, sum);
    st->blocks = i;
}

/* Does all n blocks. */
SIMD_FN size_t SIMD_NAME(ocb)(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                              aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    SIMD_KEYS ks;
    if (enc) {
        SIMD_LOAD_KEYS(&ks, k, 0);
        simd_ocb_run(&ks, ok, 1, st, dst, src, n);
    } else {
        SIMD_LOAD_KEYS(&ks, k, 1);
        simd_ocb_run(&ks, ok, 0, st, dst, src, n);
    }
    return n;
}
#endif

/* ---- CTR and CBC-MAC in one pass (the ccm sub-table: CCM, EAX) ---------
 * Built where the backend gives two blocks' rounds interleaved and a
 * 128-bit big-endian counter in a register:
 *   SIMD_ENC2(ks, ksy, x, y, two)  whitened x under ks and, when two,
 *                       whitened y under ksy, round by round, through the
 *                       last round
 *   SIMD_BE128_T, SIMD_BE128_GET(p), SIMD_BE128_PUT(p, c),
 *   SIMD_BE128_BLOCK(c), SIMD_BE128_INC(c)   the counter, its block, c + 1
 *                       modulo 2^128 without a branch on its value (EAX's
 *                       counter is a secret)
 *
 * The MAC chain waits a whole AES latency per block; a CTR block beside it
 * needs the same rounds but depends on nothing, so each MAC round is paired
 * with one CTR round and the CTR work issues in the chain's idle cycles.
 * mac_dst 0 (CCM sealing, EAX opening) MACs block i while encrypting block
 * i. mac_dst 1 (CCM opening, EAX sealing) MACs what the CTR writes, so the
 * keystream runs one block ahead: block 0's alone first, then block i + 1's
 * beside block i's MAC, and the last MAC block alone. The data's XOR with
 * the first key is off the chain: the chain's XOR takes data ^ key.
 */
#if defined(SIMD_ENC2)
SIMD_FN size_t SIMD_NAME(ctr_cbcmac)(const aeskit_key *k, const aeskit_key *kc, int mac_dst,
                                     uint8_t ctr[16], uint8_t mac[16], uint8_t *dst,
                                     const uint8_t *src, size_t n)
{
    if (n == 0)
        return 0;
    assert(kc->rounds == k->rounds);
    SIMD_KEYS ks, ksc;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_LOAD_KEYS(&ksc, kc, 0);
    const SIMD_V k0 = SIMD_KEY_FIRST(&ks), kc0 = SIMD_KEY_FIRST(&ksc);
    SIMD_BE128_T c = SIMD_BE128_GET(ctr);
    SIMD_V m = SIMD_LOAD(mac);

    if (!mac_dst) {
        for (size_t i = 0; i < n; i++, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
            const SIMD_V p = SIMD_LOAD(src);
            SIMD_V x = SIMD_XOR(m, SIMD_XOR(p, k0));
            SIMD_V y = SIMD_XOR(SIMD_BE128_BLOCK(c), kc0);
            c = SIMD_BE128_INC(c);
            SIMD_ENC2(&ks, &ksc, &x, &y, 1);
            m = x;
            SIMD_STORE(dst, SIMD_XOR(y, p));
        }
    } else {
        SIMD_V stream = SIMD_XOR(SIMD_BE128_BLOCK(c), kc0);
        c = SIMD_BE128_INC(c);
        SIMD_ENC2(&ksc, &ksc, &stream, &stream, 0);
        for (size_t i = 1; i < n; i++, src += AESKIT_BLOCK, dst += AESKIT_BLOCK) {
            const SIMD_V p = SIMD_XOR(SIMD_LOAD(src), stream);
            SIMD_STORE(dst, p);
            SIMD_V x = SIMD_XOR(m, SIMD_XOR(p, k0));
            SIMD_V y = SIMD_XOR(SIMD_BE128_BLOCK(c), kc0);
            c = SIMD_BE128_INC(c);
            SIMD_ENC2(&ks, &ksc, &x, &y, 1);
            m = x;
            stream = y;
        }
        const SIMD_V p = SIMD_XOR(SIMD_LOAD(src), stream);
        SIMD_STORE(dst, p);
        m = SIMD_XOR(m, SIMD_XOR(p, k0));
        SIMD_ENC2(&ks, &ks, &m, &m, 0);
    }
    SIMD_STORE(mac, m);
    SIMD_BE128_PUT(ctr, c);
    return n;
}
#endif

/* ---- GHASH and POLYVAL ------------------------------------------------------ */

/* Powers of H the key holds: SIMD_W, one reduction a batch, or (a backend
 * that defines SIMD_GPOWERS as 2 * SIMD_W) twice that, one reduction for
 * two batches where the key has them (simd_gagg). */
#if !defined(SIMD_GPOWERS)
#define SIMD_GPOWERS SIMD_W
#endif
static_assert(SIMD_GPOWERS == SIMD_W || SIMD_GPOWERS == 2 * SIMD_W, "one batch or two a reduction");
static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= SIMD_GPOWERS * sizeof(SIMD_GPOWER),
              "aeskit_ghash_key holds the powers in the backend's form");
static_assert(SIMD_W <= AESKIT_GHASH_MSG,
              "a key for AESKIT_GHASH_MSG blocks has all SIMD_W powers: it serves any call");

SIMD_FN void SIMD_NAME(ghash_key)(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    /* H * x^-1 (clmul128.h: aeskit_clmul_h_xinv), without a branch on H */
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);
    /* a key made once for any call (GCM's) gets all SIMD_GPOWERS; one made
     * per message (GCM-SIV's, XAES's) SIMD_W at most, as it pays for them
     * in each message */
    const size_t most = max_blocks == AESKIT_GHASH_ANY ? SIMD_GPOWERS : SIMD_W;
    const size_t need = max_blocks < most ? max_blocks : most;
    SIMD_GV pw[SIMD_GPOWERS];
    SIMD_GPOWER f[SIMD_GPOWERS];

    pw[0] = SIMD_GMAKE(h1, h0);
    f[0] = SIMD_GFORMS(pw[0]);
    for (size_t i = 2; i <= need; i++) {   /* H^i, a tree (aeskit_power_split) */
        const size_t a = aeskit_power_split(i);
        const SIMD_GV zero = SIMD_GZERO;
        SIMD_GSUM s = {zero, zero, zero};
        SIMD_GMUL_ADD(&s, pw[i - a - 1], &f[a - 1]);
        pw[i - 1] = SIMD_GREDUCE(s);
        f[i - 1] = SIMD_GFORMS(pw[i - 1]);
    }
    for (size_t i = 0; i < need; i++)
        SIMD_GPOWER_PUT(hk, i, &f[i]);
    aeskit_secure_zero(pw, sizeof pw);
    aeskit_secure_zero(f, sizeof f);
    hk->max_blocks = max_blocks;
    hk->from = 0;
    hk->used = most * sizeof(SIMD_GPOWER);
}

/* Whether hk holds 2 * SIMD_W powers: two batches a reduction. */
SIMD_INLINE int simd_gagg(const aeskit_ghash_key *hk)
{
    return SIMD_GPOWERS > SIMD_W && hk->max_blocks == AESKIT_GHASH_ANY;
}

#if !defined(SIMD_GMUL_ADD2)
#define SIMD_GMUL_ADD2(s, a, b, fa, fb) (SIMD_GMUL_ADD((s), (a), (fa)), SIMD_GMUL_ADD((s), (b), (fb)))
#endif
#if !defined(SIMD_PIN)
#define SIMD_PIN(v) ((void)0)
#endif

/* The sums pinned after each step (SIMD_PIN): left free, GCC computes a
 * batch's products first and spills them before the XORs. */
#define SIMD_GSUM_PIN(s)   \
    do {                   \
        SIMD_PIN((s).lo);  \
        SIMD_PIN((s).mid); \
        SIMD_PIN((s).hi);  \
    } while (0)

/* acc folded with w blocks: the sum of X_j * H^(w-j), X_0 carrying acc.
 * The products go two by two (SIMD_GMUL_ADD2), from the last blocks to the
 * first, so that the one acc enters is summed last: the chain from one
 * batch's acc to the next is then one multiply, a XOR and the reduction,
 * not a multiply and all the batch's XORs. */
SIMD_INLINE SIMD_GV simd_ghash_w(const aeskit_ghash_key *hk, SIMD_GV acc, const uint8_t *p,
                                 size_t w, int polyval)
{
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    if (w & 1) {   /* the odd one out: block w - 1, with acc when it is the only one */
        SIMD_GV x = SIMD_GBLOCK(p + AESKIT_BLOCK * (w - 1), polyval);
        if (w == 1)
            x = SIMD_GXOR(x, acc);
        const SIMD_GPOWER h = SIMD_GPOWER_AT(hk, 0);
        SIMD_GMUL_ADD(&s, x, &h);
        SIMD_GSUM_PIN(s);
    }
    SIMD_UNROLL
    for (size_t k = w / 2; k > 0; k--) {
        const size_t j = 2 * (k - 1);
        SIMD_GV a = SIMD_GBLOCK(p + AESKIT_BLOCK * j, polyval);
        const SIMD_GV b = SIMD_GBLOCK(p + AESKIT_BLOCK * (j + 1), polyval);
        if (j == 0)
            a = SIMD_GXOR(a, acc);
        const SIMD_GPOWER ha = SIMD_GPOWER_AT(hk, w - 1 - j), hb = SIMD_GPOWER_AT(hk, w - 2 - j);
        SIMD_GMUL_ADD2(&s, a, b, &ha, &hb);
        SIMD_GSUM_PIN(s);
    }
    return SIMD_GREDUCE(s);
}

#ifndef SIMD_LOCAL
#define SIMD_LOCAL static
#endif

/* y folded with runs of 16 blocks, a function of its own: inlined, its
 * 16 powers' loads and spills cost a short call (1-4 blocks) 6 ns more on
 * Zen 3 (ab.py: GHASH of 16 B 1.6x, 64 B 1.5x the time). */
AESKIT_NOINLINE SIMD_LOCAL SIMD_GV simd_hash16(const aeskit_ghash_key *hk, SIMD_GV y,
                                           const uint8_t *p, size_t runs)
{
    for (; runs > 0; runs--, p += 2 * SIMD_W * AESKIT_BLOCK)
        y = simd_ghash_w(hk, y, p, 2 * SIMD_W, 0);
    return y;
}

AESKIT_NOINLINE SIMD_LOCAL SIMD_GV simd_hash16_pv(const aeskit_ghash_key *hk, SIMD_GV y,
                                              const uint8_t *p, size_t runs)
{
    for (; runs > 0; runs--, p += 2 * SIMD_W * AESKIT_BLOCK)
        y = simd_ghash_w(hk, y, p, 2 * SIMD_W, 1);
    return y;
}

SIMD_INLINE void simd_hash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n,
                           int polyval)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(aeskit_ghash_serves(hk, n));
    if (n == 0)
        return;
    SIMD_GV y = SIMD_GBLOCK(acc, 0);
    if (n >= 2 * SIMD_W && simd_gagg(hk)) {
        y = polyval ? simd_hash16_pv(hk, y, p, n / (2 * SIMD_W))
                    : simd_hash16(hk, y, p, n / (2 * SIMD_W));
        p += n / (2 * SIMD_W) * 2 * SIMD_W * AESKIT_BLOCK;
        n %= 2 * SIMD_W;
    }
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

/* ---- GCM and GCM-SIV opening (the gcm and gcmsiv sub-tables' fused kernel)
 * CTR with 32-bit counters stitched with the GHASH/POLYVAL aggregation.
 * Built where the backend gives the rounds one at a time (the names below,
 * with OCB's SIMD_ENC_LAST, SIMD_KEY_FIRST and SIMD_KEY_LAST):
 *   SIMD_ROUND_W(ks, r, x, w)      round r (1..rounds-1) on w blocks
 *   SIMD_ROUNDS_FROM_W(ks, r, x, w)  rounds r..rounds-1 on w blocks
 *   SIMD_KEY_FIRST_BYTES(ks)       the whitening key's bytes in memory
 *   SIMD_LOAD_ALIGNED(p), SIMD_STORE_ALIGNED(p, v)  16-byte aligned ones
 *   SIMD_PIN(v)                    v computed here, not moved across
 *
 * Each batch runs the AES rounds of SIMD_W counter blocks with the GHASH of
 * SIMD_W other blocks threaded through them, two blocks' products
 * (SIMD_GMUL_ADD2) before each of rounds 1, 3, 5 and 7, from the last pair
 * to the first, so the accumulator, folded into the first block, is summed
 * last: the serial chain from one batch's accumulator to the next is one
 * multiply, a XOR and the reduction, well inside a batch's AES time.
 * Decrypting, the hashed blocks are the batch's own input (ciphertext), all
 * loaded before the batch stores anything, so dst == src is safe.
 * Encrypting, they are the output of the batch two before, reread from dst
 * (hot in L1): the first two batches hash nothing and the last two
 * batches' ciphertext is hashed alone after the loop. One batch back, each
 * batch's multiplies waited for the previous batch's last round and stores,
 * and sealing ran 6% slower than opening; two back, the two run level. Does
 * whole batches and returns how many blocks that is; the mode finishes the
 * 0..7 left with the split slots.
 *
 * What it is fast for: long messages, where on aesni it beats the split
 * path (the ctr and ghash slots one after the other) by 15-20% on Zen 4.
 *
 * aesni's build (SIMD_GPAIR, SIMD_GPOWERS; armv8 and power8 keep the above)
 * differs in two ways. A pair's six multiplies are spread over two rounds,
 * three a round over rounds 1..8 (b's three with round r, a's with r + 1,
 * the pair's Karatsuba halves made once): on Zen 3 six before every other
 * round ran GCM 4-5% slower (ab.py, 16 KiB, AES-128 and AES-256). And a key
 * made for any call (GCM's) holds 16 powers, so two batches share a
 * reduction (the first hashes with H^16..H^9, its sum carried unreduced
 * into the second): 1-2.5% on GCM, 4% on GHASH (Zen 3). Tried there and
 * dropped: the Karatsuba halves made with general registers (two 8-byte
 * loads, a XOR and a bswap a block, read two batches later as the
 * multiplies' memory operand) to take 6 shuffles and 3 XORs a batch off
 * the vector pipes: 6-28% slower (GCC regrouped the multiplies, and
 * sealing's loads of the ciphertext just stored); for AES-256, the pairs
 * spread over rounds 1..12 (a round without multiplies after each pair):
 * 0.986-0.997, not worth a second copy of the kernel; each round's products
 * added to the sums a round later (the vaes_gcm.h lesson from Zen 4): 0.999-
 * 1.035, with 16 xmm registers GCC spills the three extra.
 * A backend may run the whole pairs itself (SIMD_GCM_PAIRS: aesni's VEX
 * build, AES-128, in asm: aesni_gcm_asm.h, which says what it changes and
 * what it measured); the odd batch and the prologue and epilogue stay here.
 *
 * The floor (bench/floor.py) is not max(ctr, ghash) but what the 80 AESENC
 * and 24 PCLMULQDQ of an AES-128 batch take interleaved, which the bench
 * probes on the CPU it runs on: 54 cycles on Zen 4 (AES and carry-less
 * multiplies share pipes there; 40 for the AES alone), 42 on Intel's
 * Emerald Rapids (AESENC on ports 0 and 1, PCLMULQDQ on port 5). Every
 * other vector instruction competes with them for those units: on Intel
 * ports 0, 1 and 5 take all of them, and the 58 a batch adds to the 106
 * multiplies and rounds (8 byte swaps, 12 for the Karatsuba halves, 21 XORs
 * summing the products, 8 for the reduction, 1 for the accumulator, 8 for
 * the data) are what holds it at about 1.45x the floor there. Hence:
 *   - counter blocks are built with scalar code (bswap, xor with rk[0]'s
 *     last word, a 4-byte store into a whitened block in a stack buffer)
 *     and loaded, not with vector adds and shuffles per block; they are
 *     written two batches ahead, so no load meets a store still in flight;
 *   - the Karatsuba halves of two blocks come from one XOR of two unpacks
 *     (aesni's SIMD_GMUL_ADD2), and the reduction folds the low half into
 *     the middle term and that into the high half without splitting it
 *     (clmul128.h);
 *   - the GHASH sums are pinned after each step (SIMD_PIN): left free, GCC
 *     sinks a batch's XORs to its end and spills the products.
 *
 * The same kernel opens GCM-SIV (the gcmsiv_open slot, siv set): LE32
 * counters in bytes 0..3 (the whitened block's first word changes, with no
 * byte swap), and POLYVAL of the plaintext it writes, which is GCM
 * encryption's order (hash the output of two batches back) with the blocks
 * read as POLYVAL reads them (SIMD_GBLOCK).
 */
#if defined(SIMD_ROUND_W)

/* AES-128 has rounds 1..9 before the last: room for 8 GHASH blocks. */
static_assert(SIMD_W < 10, "one GHASH block per middle AES round");

/* compiles to bswap */
SIMD_INLINE uint32_t simd_gcm_bswap32(uint32_t v)
{
    return v >> 24 | (v >> 8 & 0xff00) | (v & 0xff00) << 8 | v << 24;
}

/* Counter value v as the 4 bytes of its block, read as a native word:
 * BE32 for GCM, LE32 for GCM-SIV (siv). */
SIMD_INLINE uint32_t simd_gcm_word(uint32_t v, int siv)
{
#if defined(AESKIT_LITTLE_ENDIAN)
    return siv ? v : simd_gcm_bswap32(v);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return siv ? simd_gcm_bswap32(v) : v;
#else
#error "the GCM kernel needs the target's byte order (compiler.h)"
#endif
}

/* Blocks j and j + 1 of the 8 at p (j even) into s, as SIMD_GBLOCK reads
 * them (siv: as POLYVAL does), y folded into the first: block j is
 * multiplied by H^(8-j). Pinned, see the top. */
SIMD_INLINE void simd_gcm_hash_step(SIMD_GSUM *s, const aeskit_ghash_key *hk, SIMD_GV y,
                                   const uint8_t *p, size_t j, int siv)
{
    SIMD_GV a = SIMD_GBLOCK(p + AESKIT_BLOCK * j, siv);
    const SIMD_GV b = SIMD_GBLOCK(p + AESKIT_BLOCK * (j + 1), siv);
    if (j == 0)
        a = SIMD_GXOR(a, y);
    const SIMD_GPOWER ha = SIMD_GPOWER_AT(hk, SIMD_W - 1 - j);
    const SIMD_GPOWER hb = SIMD_GPOWER_AT(hk, SIMD_W - 2 - j);
    SIMD_GMUL_ADD2(s, a, b, &ha, &hb);
    SIMD_GSUM_PIN(*s);
}

/* y folded with the 8 blocks at p, alone: the last batch when encrypting. */
SIMD_INLINE SIMD_GV simd_gcm_hash8(const aeskit_ghash_key *hk, SIMD_GV y, const uint8_t *p,
                                   int siv)
{
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    SIMD_UNROLL
    for (size_t j = SIMD_W; j > 0; j -= 2)
        simd_gcm_hash_step(&s, hk, y, p, j - 2, siv);
    return SIMD_GREDUCE(s);
}

/* ---- one batch ----------------------------------------------------------- */

/* Whitened counter blocks, two batches' worth: each is ctr ^ rk[0], whose
 * last word alone changes from block to block: BE32(c + j) ^ kw, kw being
 * rk[0]'s last word as loaded (siv: the first word, LE32(c + j) ^ kw, rk[0]'s
 * first word). Key material: wiped after use. */
typedef struct {
    _Alignas(16) uint8_t b[2][SIMD_W][AESKIT_BLOCK];
#if defined(SIMD_GCM_PAIRS)
    /* the Karatsuba halves of the backend's two-batch step (aesni_gcm_asm.h) */
    uint8_t p[2][SIMD_W][8];
#endif
} simd_gcm_ctrs;
#if defined(SIMD_GCM_PAIRS)
static_assert(offsetof(simd_gcm_ctrs, p) == 2 * SIMD_W * AESKIT_BLOCK && SIMD_W == 8,
              "the asm step (SIMD_GCM_PAIRS) reads the halves 256 bytes into the counter blocks");
#endif

SIMD_INLINE void simd_gcm_ctrs_fill(uint8_t (*b)[AESKIT_BLOCK], uint32_t kw, uint32_t c, int siv)
{
    SIMD_UNROLL
    for (size_t j = 0; j < SIMD_W; j++) {
        const uint32_t w = simd_gcm_word(c + (uint32_t)j, siv) ^ kw;
        memcpy(b[j] + (siv ? 0 : 12), &w, 4);
    }
}

/*
 * CTR on 8 blocks from the whitened counter blocks cb, whose first counter
 * is c (cb is then refilled for c + 16, two batches on), src to dst, with
 * the 8 blocks at hin folded into *y when hash is set (a constant at each
 * call). Every load of hin and src comes before the first store to dst.
 */
SIMD_INLINE void simd_gcm_batch(const SIMD_KEYS *ks, const aeskit_ghash_key *hk, int hash,
                                uint8_t (*cb)[AESKIT_BLOCK], uint32_t k0w3, uint32_t c,
                                SIMD_GV *y, const uint8_t *hin, uint8_t *dst, const uint8_t *src,
                                int siv, int agg, SIMD_GSUM *sp)
{
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    SIMD_V x[SIMD_W];
#if defined(SIMD_GPAIR)
    /* agg (a constant): 0, the batch's sum reduced into *y; 1, the first of
     * two batches (powers H^16..H^9, y folded in), its sum left in *sp; 2,
     * the second (H^8..H^1), *sp's sum and its own reduced into *y */
    const size_t poff = agg == 1 ? SIMD_W : 0;
    if (agg == 2)
        s = *sp;
#else
    static_assert(SIMD_GPOWERS == SIMD_W, "two batches a reduction: the SIMD_GPAIR path");
    (void)agg, (void)sp;
#endif

    SIMD_UNROLL
    for (size_t j = 0; j < SIMD_W; j++)
        x[j] = SIMD_LOAD_ALIGNED(cb[j]);
    simd_gcm_ctrs_fill(cb, k0w3, c + 2 * SIMD_W, siv);

#if defined(SIMD_GPAIR)
    /* a pair's six multiplies spread over two rounds: b's with round r
     * (odd), a's (with y, for the first pair) with round r + 1 */
    SIMD_GV a = zero;
    SIMD_GPAIR_T t = zero;
    SIMD_UNROLL
    for (size_t r = 1; r <= SIMD_W; r++) {
        if (hash) {
            const size_t j = r % 2 ? SIMD_W - 1 - r : SIMD_W - r;
            if (r % 2) {
                a = SIMD_GBLOCK(hin + AESKIT_BLOCK * j, siv);
                const SIMD_GV b = SIMD_GBLOCK(hin + AESKIT_BLOCK * (j + 1), siv);
                if (j == 0 && agg != 2)
                    a = SIMD_GXOR(a, *y);
                t = SIMD_GPAIR(a, b);
                const SIMD_GPOWER hb = SIMD_GPOWER_AT(hk, poff + SIMD_W - 2 - j);
                SIMD_GMUL_ADD_PAIR_B(&s, b, t, &hb);
            } else {
                const SIMD_GPOWER ha = SIMD_GPOWER_AT(hk, poff + SIMD_W - 1 - j);
                SIMD_GMUL_ADD_PAIR_A(&s, a, t, &ha);
            }
            SIMD_GSUM_PIN(s);
        }
        SIMD_ROUND_W(ks, r, x, SIMD_W);
    }
#else
    SIMD_UNROLL
    for (size_t r = 1; r <= SIMD_W; r++) {
        if (hash && r % 2 == 1)
            simd_gcm_hash_step(&s, hk, *y, hin, SIMD_W - 1 - r, siv);
        SIMD_ROUND_W(ks, r, x, SIMD_W);
    }
#endif
    if (hash && agg == 1)
        *sp = s;
    else if (hash)
        *y = SIMD_GREDUCE(s);
    SIMD_ROUNDS_FROM_W(ks, SIMD_W + 1, x, SIMD_W);
    /* src read again here, not kept in registers from the GHASH loads */
    AESKIT_BARRIER();
    const SIMD_V key = SIMD_KEY_LAST(ks);
    SIMD_UNROLL
    for (size_t j = 0; j < SIMD_W; j++)
        SIMD_STORE(dst + AESKIT_BLOCK * j,
                   SIMD_XOR(SIMD_ENC_LAST(x[j], key), SIMD_LOAD(src + AESKIT_BLOCK * j)));
}

/* Two batches that share one reduction (simd_gagg's keys): the first's
 * products, with H^16..H^9, carried unreduced into the second's. hin: what
 * the first hashes, the second hashing the blocks after it. */
SIMD_INLINE void simd_gcm_two(const SIMD_KEYS *ks, const aeskit_ghash_key *hk, simd_gcm_ctrs *cs,
                              uint32_t kw, uint32_t c, SIMD_GV *y, const uint8_t *hin,
                              uint8_t *dst, const uint8_t *src, int siv, SIMD_GSUM *sum)
{
    simd_gcm_batch(ks, hk, 1, cs->b[0], kw, c, y, hin, dst, src, siv, 1, sum);
    simd_gcm_batch(ks, hk, 1, cs->b[1], kw, c + SIMD_W, y, hin + SIMD_W * AESKIT_BLOCK,
                   dst + SIMD_W * AESKIT_BLOCK, src + SIMD_W * AESKIT_BLOCK, siv, 2, sum);
}

#if defined(SIMD_GCM_PAIRS)
/* The whole pairs of batches b..batches through the backend's step
 * (SIMD_GCM_PAIRS_RUN), advancing b, the counter and the pointers past
 * them; hash_out as simd_gcm_run's. */
SIMD_INLINE void simd_gcm_pairs(const SIMD_KEYS *ks, const aeskit_ghash_key *hk,
                                simd_gcm_ctrs *cs, uint32_t kw, uint32_t *c, SIMD_GV *y,
                                uint8_t **dst, const uint8_t **src, size_t *b, size_t batches,
                                int hash_out)
{
    const size_t pairs = (batches - *b) / 2;
    if (pairs == 0)
        return;
    SIMD_GCM_PAIRS_RUN(ks, hk, (uint8_t *)cs, kw, *c, y, *dst, *src, pairs, hash_out);
    *b += 2 * pairs;
    *c += (uint32_t)(2 * SIMD_W * pairs);
    *src += 2 * SIMD_W * AESKIT_BLOCK * pairs;
    *dst += 2 * SIMD_W * AESKIT_BLOCK * pairs;
}
#endif

/* Does floor(n / 8) batches: returns 8 * floor(n / 8), 0 for n < 8. hash_out
 * (a constant): hash what it writes, the output of the batch two before in
 * each batch (GCM sealing, GCM-SIV opening), else what it reads (GCM
 * opening). */
SIMD_INLINE size_t simd_gcm_run(const aeskit_key *k, const aeskit_ghash_key *hk, int hash_out,
                                int siv, uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    assert(n == 0 || (k != NULL && hk != NULL && dst != NULL && src != NULL));
    const size_t batches = n / SIMD_W;
    if (batches == 0)
        return 0;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_GV y = SIMD_GBLOCK(acc, 0);
    uint32_t c = siv ? aeskit_load_le32(ctr) : aeskit_load_be32(ctr + 12);
    const SIMD_V white = SIMD_XOR(SIMD_LOAD(ctr), SIMD_KEY_FIRST(&ks));
    uint32_t kw;
    simd_gcm_ctrs cs;
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM sum = {zero, zero, zero};   /* the first of two batches' products */
    const int agg = simd_gagg(hk);

    memcpy(&kw, SIMD_KEY_FIRST_BYTES(&ks) + (siv ? 0 : 12), 4);
    for (size_t j = 0; j < 2 * SIMD_W; j++)
        SIMD_STORE_ALIGNED(cs.b[j / SIMD_W][j % SIMD_W], white);
    simd_gcm_ctrs_fill(cs.b[0], kw, c, siv);
    simd_gcm_ctrs_fill(cs.b[1], kw, c + SIMD_W, siv);

    if (hash_out) {
        const size_t lag = 2 * SIMD_W * AESKIT_BLOCK;   /* batch b hashes batch b - 2's output */
        size_t b = 0;
        for (; b < batches && b < 2; b++) {
            simd_gcm_batch(&ks, hk, 0, cs.b[b & 1], kw, c, &y, NULL, dst, src, siv, 0, &sum);
            c += SIMD_W;
            src += SIMD_W * AESKIT_BLOCK;
            dst += SIMD_W * AESKIT_BLOCK;
        }
#if defined(SIMD_GCM_PAIRS)
        if (agg && SIMD_GCM_PAIRS_OK(&ks, siv))
            simd_gcm_pairs(&ks, hk, &cs, kw, &c, &y, &dst, &src, &b, batches, 1);
#endif
        if (agg)   /* two batches a reduction: b even here */
            for (; b + 2 <= batches; b += 2) {
                simd_gcm_two(&ks, hk, &cs, kw, c, &y, dst - lag, dst, src, siv, &sum);
                c += 2 * SIMD_W;
                src += 2 * SIMD_W * AESKIT_BLOCK;
                dst += 2 * SIMD_W * AESKIT_BLOCK;
            }
        for (; b < batches; b++) {
            simd_gcm_batch(&ks, hk, 1, cs.b[b & 1], kw, c, &y, dst - lag, dst, src, siv, 0,
                           &sum);
            c += SIMD_W;
            src += SIMD_W * AESKIT_BLOCK;
            dst += SIMD_W * AESKIT_BLOCK;
        }
        if (batches >= 2)
            y = simd_gcm_hash8(hk, y, dst - lag, siv);
        y = simd_gcm_hash8(hk, y, dst - lag / 2, siv);
    } else {
        size_t b = 0;
#if defined(SIMD_GCM_PAIRS)
        if (agg && SIMD_GCM_PAIRS_OK(&ks, siv))
            simd_gcm_pairs(&ks, hk, &cs, kw, &c, &y, &dst, &src, &b, batches, 0);
#endif
        if (agg)
            for (; b + 2 <= batches; b += 2) {
                simd_gcm_two(&ks, hk, &cs, kw, c, &y, src, dst, src, siv, &sum);
                c += 2 * SIMD_W;
                src += 2 * SIMD_W * AESKIT_BLOCK;
                dst += 2 * SIMD_W * AESKIT_BLOCK;
            }
        for (; b < batches; b++) {
            simd_gcm_batch(&ks, hk, 1, cs.b[b & 1], kw, c, &y, src, dst, src, siv, 0, &sum);
            c += SIMD_W;
            src += SIMD_W * AESKIT_BLOCK;
            dst += SIMD_W * AESKIT_BLOCK;
        }
    }
    if (siv)
        aeskit_store_le32(ctr, c);
    else
        aeskit_store_be32(ctr + 12, c);
    SIMD_GSTORE(acc, y);
    aeskit_secure_zero(&cs, sizeof cs);
    return SIMD_W * batches;
}

/* lens and ek0 (modes/gcm.h) through this table's own ghash and ecb_enc:
 * the split path's calls, made here. */
SIMD_FN size_t SIMD_NAME(gcm)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                              uint8_t ctr[16], uint8_t acc[16], uint8_t *dst, const uint8_t *src,
                              size_t n, const uint8_t *lens, uint8_t *ek0)
{
    uint8_t prev[16];   /* ctr - 1: public */
    memcpy(prev, ctr, 16);
    aeskit_store_be32(prev + 12, aeskit_load_be32(ctr + 12) - 1);
    const size_t done = enc ? simd_gcm_run(k, hk, 1, 0, ctr, acc, dst, src, n)
                            : simd_gcm_run(k, hk, 0, 0, ctr, acc, dst, src, n);
    if (lens != NULL && done == n && n > 0)
        SIMD_NAME(ghash)(hk, acc, lens, 1);
    if (ek0 != NULL && done == n && n > 0)
        SIMD_NAME(ecb_enc)(k, ek0, prev, 1);
    return done;
}

/* The gcmsiv sub-table needs its short kernel too: open is built with it. */
#if defined(SIMD_EXPAND_ENC)
SIMD_FN size_t SIMD_NAME(gcmsiv_open)(const aeskit_key *k, const aeskit_ghash_key *hk,
                                      uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                                      const uint8_t *src, size_t n)
{
    assert(n < SIMD_W || hk->max_blocks >= SIMD_W);   /* read only by a whole batch */
    return simd_gcm_run(k, hk, 1, 1, ctr, acc, dst, src, n);
}
#endif
#endif

/* ---- GCM-SIV, a short message whole (the gcmsiv_short slot) -----------
 * Built where the backend expands an encryption schedule from registers
 * and gives the lane operations below (with the GCM kernel's):
 *   SIMD_KEYS_AT(ks, rk, rounds)   the handle for an encryption schedule
 *                       rk[0..rounds] in memory
 *   SIMD_EXPAND_ENC(rk, lo, hi, rounds)  that schedule of the AES-128 key
 *                       lo (rounds 10), the AES-192 key lo || bytes 0..7
 *                       of hi (12) or the AES-256 key lo || hi (14)
 *   SIMD_LE32_ADD(v, i)  v with i added to its bytes 0..3, a LE32 counter
 *   SIMD_HALVES(a, b)   bytes 0..7 of a, then bytes 0..7 of b
 *   SIMD_TOP_SET(v), SIMD_TOP_CLEAR(v)   v with the top bit of byte 15
 *                       set or cleared
 *   SIMD_GFROMV(v), SIMD_VFROMG(g)  a block as POLYVAL's register image
 *                       (SIMD_GBLOCK(p, 1) of its bytes) and back
 *
 * For a message whose POLYVAL input (AAD and data, each zero-padded, and
 * the lengths block) is at most SIV_SHORT blocks, RFC 8452's per-message
 * work in one function: the key-generating key encrypts LE32(i) || nonce
 * for i = 0..3 (0..4, 0..5: 2 + its length / 8), the message's AES key
 * (as long as the key-generating key) is expanded from registers
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
 * GHASH's register image of its byte reversal (the polyval slot's
 * identity), and the hash key the mode builds for the ghash slot,
 * mulX_GHASH(rev(H)), stored as h_xinv does it (times x^-1), is then H
 * itself loaded as it is: the two x's cancel. So H^1 is the raw key, the
 * powers come from the multiply as ghash_key's do, and S is the sum's
 * register stored as it is.
 *
 * Up to SIV_SHORT - 1 data blocks, the keystream is made for a constant 4
 * or 7 blocks (no AES is waited for longer: 7 blocks of rounds issue within
 * one block's latency chain). Everything is read into a stack buffer before
 * anything is written, so dst may be src, the AAD or the tag; the buffer,
 * the round keys and the derived blocks are wiped. Lengths are public and
 * are the only thing branched on. */
#if defined(SIMD_EXPAND_ENC)
#if !defined(SIMD_SIV_SHORT)
#define SIMD_SIV_SHORT 8 /* POLYVAL blocks of a short message */
#endif

/* p[0..w) ^= the keystream from counter block c (LE32 in bytes 0..3),
 * w a constant at each call. */
SIMD_INLINE void simd_siv_ctr(const SIMD_KEYS *ks, uint8_t *p, size_t w, SIMD_V c)
{
    SIMD_V stream[SIMD_SIV_SHORT];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        stream[j] = SIMD_LE32_ADD(c, (int)j);
    SIMD_ENC_W(ks, stream, w);
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(p + AESKIT_BLOCK * j, SIMD_XOR(SIMD_LOAD(p + AESKIT_BLOCK * j), stream[j]));
}

SIMD_FN int SIMD_NAME(gcmsiv_short)(const aeskit_key *kgk, int enc, const uint8_t nonce[12],
                                    const uint8_t *aad, size_t aad_len, uint8_t *dst,
                                    const uint8_t *src, size_t len, const uint8_t *tag,
                                    uint8_t out[16])
{
    const size_t na = (aad_len + 15) / 16, nd = (len + 15) / 16;
    if (aad_len > 16 * SIMD_SIV_SHORT || len > 16 * SIMD_SIV_SHORT || na + nd + 1 > SIMD_SIV_SHORT)
        return 0;
    const size_t n = na + nd + 1;
    const unsigned rounds = kgk->rounds;
    assert(rounds == 10 || rounds == 12 || rounds == 14);
    /* x: POLYVAL's blocks (AAD, data, lengths), and the data's CTR in
     * place; 7 blocks of room past the data for the fixed-width keystream */
    uint8_t x[(2 * SIMD_SIV_SHORT) * AESKIT_BLOCK];
    uint8_t rk[(AESKIT_MAX_ROUNDS + 1) * AESKIT_BLOCK];
    uint8_t nb[AESKIT_BLOCK], ns[AESKIT_BLOCK];
    SIMD_V b[6];
    SIMD_GV pw[SIMD_SIV_SHORT];
    SIMD_KEYS kk, km;

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

    /* the message's keys: H from blocks 0 and 1, the AES key from 2..3 (4,
     * 5); b[5] unencrypted for a 192-bit key, whose hi is b[4]'s half */
    const SIMD_V nv = SIMD_LOAD(nb);
    for (int i = 0; i < 6; i++)
        b[i] = SIMD_LE32_ADD(nv, i);
    if (rounds == 10) {
        SIMD_KEYS_AT(&kk, (const uint8_t *)kgk->rk, 10);
        SIMD_ENC_W(&kk, b, 4);
    } else if (rounds == 12) {
        SIMD_KEYS_AT(&kk, (const uint8_t *)kgk->rk, 12);
        SIMD_ENC_W(&kk, b, 5);
    } else {
        SIMD_KEYS_AT(&kk, (const uint8_t *)kgk->rk, 14);
        SIMD_ENC_W(&kk, b, 6);
    }
    SIMD_EXPAND_ENC(rk, SIMD_HALVES(b[2], b[3]), SIMD_HALVES(b[4], b[5]), rounds);
    SIMD_KEYS_AT(&km, rk, rounds);
    pw[0] = SIMD_GFROMV(SIMD_HALVES(b[0], b[1]));
    const SIMD_GPOWER h1 = SIMD_GFORMS(pw[0]);
    for (size_t i = 1; i < n; i++) {
        const SIMD_GV zero = SIMD_GZERO;
        SIMD_GSUM s = {zero, zero, zero};
        SIMD_GMUL_ADD(&s, pw[i - 1], &h1);
        pw[i] = SIMD_GREDUCE(s);
    }

    /* opening: the plaintext first (CTR from the received tag), the last
     * block's padding zeroed again for POLYVAL; the keystream ran on past
     * the data, so the lengths block goes in after it */
    if (!enc && nd > 0) {
        const SIMD_V c_in = SIMD_TOP_SET(SIMD_LOAD(tag));
        if (nd <= 4)
            simd_siv_ctr(&km, xd, 4, c_in);
        else
            simd_siv_ctr(&km, xd, SIMD_SIV_SHORT - 1, c_in);
        memset(xd + len, 0, AESKIT_BLOCK * nd - len);
    }
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1), (uint64_t)aad_len * 8);
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1) + 8, (uint64_t)len * 8);

    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    for (size_t j = 0; j < n; j++) {
        const SIMD_GPOWER p = SIMD_GFORMS(pw[n - 1 - j]);
        SIMD_GMUL_ADD(&s, SIMD_GBLOCK(x + AESKIT_BLOCK * j, 1), &p);
    }
    SIMD_V t = SIMD_XOR(SIMD_VFROMG(SIMD_GREDUCE(s)), SIMD_LOAD(ns));
    t = SIMD_TOP_CLEAR(t);
    SIMD_ENC_W(&km, &t, 1);

    if (enc && nd > 0) {
        const SIMD_V c = SIMD_TOP_SET(t);
        if (nd <= 4)
            simd_siv_ctr(&km, xd, 4, c);
        else
            simd_siv_ctr(&km, xd, SIMD_SIV_SHORT - 1, c);
    }
    if (len > 0)
        memcpy(dst, xd, len);
    SIMD_STORE(out, t);

    aeskit_secure_zero(x, sizeof x);
    aeskit_secure_zero(rk, sizeof rk);
    aeskit_secure_zero(b, sizeof b);
    aeskit_secure_zero(pw, sizeof pw);
    return 1;
}
#endif

/* ---- independent CBC chains in lockstep (the cbc_x slot) ---------------
 * One chain waits a whole AES latency per block; SIMD_W chains (8, the
 * blocks the parallel modes keep in flight) fill the unit: each round key
 * is loaded once per round for all of them (SIMD_ENC_W), as ECB does.
 * w, the chains, is a constant in each instance (the switch below), so
 * the chains stay in registers; out is 0 for CBC-MAC. Block i of chain j
 * is loaded before its result is stored, so dst[j] may be src[j]. */
SIMD_INLINE void simd_cbc_x_w(const SIMD_KEYS *ks, int out, size_t w, uint8_t (*iv)[16],
                              uint8_t *const *dst, const uint8_t *const *src, size_t n)
{
    SIMD_V x[SIMD_W];
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = SIMD_LOAD(iv[j]);
    for (size_t i = 0; i < n; i++) {
        SIMD_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = SIMD_XOR(x[j], SIMD_LOAD(src[j] + AESKIT_BLOCK * i));
        SIMD_ENC_W(ks, x, w);
        if (out) {
            SIMD_UNROLL
            for (size_t j = 0; j < w; j++)
                SIMD_STORE(dst[j] + AESKIT_BLOCK * i, x[j]);
        }
    }
    SIMD_UNROLL
    for (size_t j = 0; j < w; j++)
        SIMD_STORE(iv[j], x[j]);
}

SIMD_FN void SIMD_NAME(cbc_x)(const aeskit_key *k, size_t chains, uint8_t (*iv)[16],
                              uint8_t *const *dst, const uint8_t *const *src, size_t n)
{
    assert(chains >= 1 && chains <= SIMD_W);
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
#define K(w)                                                       \
    case w:                                                        \
        if (dst != NULL)                                           \
            simd_cbc_x_w(&ks, 1, w, iv, dst, src, n);              \
        else                                                       \
            simd_cbc_x_w(&ks, 0, w, iv, NULL, src, n);             \
        break
    switch (chains) {
        K(1); K(2); K(3); K(4); K(5); K(6); K(7); K(8);
    default:
        break;
    }
#undef K
}

/* ---- GCM, many short messages (the gcm_short slot, modes/gcm.h) ---------
 * A batch of short GCM messages (the batch methods), each whole in
 * registers: its counter blocks J0..J0+db in one SIMD_ENC_W of db + 1
 * blocks, the keystream XORed with the data, and its GHASH as one
 * aggregated sum over the AAD, the ciphertext and the lengths block with
 * the powers H^nh..H^1 (nh <= AESKIT_GCM_SHORT_HASH = SIMD_W, the powers
 * ghash_key stores), reduced once; the tag is that XOR E(K, J0). The round
 * keys are loaded once for the call and nothing goes through the table,
 * so the loop from one message to the next is a few dozen instructions
 * and the core overlaps the next message's AES with this one's multiplies.
 * Through the mode's one-shot path the same message is two slot calls, a
 * CTR batch of its own, and the copies in and out of the hashed buffer.
 *
 * Only the lengths (public) are branched on; the counters are public (a
 * 12-byte nonce's). The blocks are hashed where they lie (the AAD in
 * place, the ciphertext as it is written), partial ones and the lengths
 * block as register images made in general registers (modes/gcm.h:
 * aeskit_gcm_bytes_in says why); the keystream's and the hash's stack
 * images are wiped. */
static_assert(AESKIT_GCM_SHORT_HASH <= SIMD_W, "ghash_key stores the powers a message takes");

/* J0 of a 12-byte nonce (nonce || 1) as the CTR slot's counter, built in
 * general registers (pieced together on the stack, a wide load of it
 * would wait: modes/gcm.h, aeskit_gcm_bytes_in). A backend with its own
 * SIMD_CTR_T gives its own SIMD_GCM_J0. */
#if !defined(SIMD_GCM_J0)
SIMD_INLINE simd_ctr simd_gcm_j0(const uint8_t nonce[12])
{
    const simd_ctr c = {aeskit_load_be64(nonce), (uint64_t)aeskit_load_be32(nonce + 8) << 32 | 1};
    return c;
}
#define SIMD_GCM_J0(nonce) simd_gcm_j0(nonce)
#endif

/* The db + 1 counter blocks from J0 in c, encrypted (part SIMD_GCM_ALL),
 * or in two parts: filled, whitened and through the first rounds
 * (SIMD_GCM_HEAD), then through the rest (SIMD_GCM_TAIL), where the
 * backend gives SIMD_ENC_W_HEAD(ks, x, w) and SIMD_ENC_W_TAIL(ks, x, w);
 * w and part constants at each call. */
enum { SIMD_GCM_ALL, SIMD_GCM_HEAD, SIMD_GCM_TAIL };
#if defined(SIMD_ENC_W_HEAD)
#define SIMD_GCM_SPLIT 1
#else
#define SIMD_GCM_SPLIT 0
#define SIMD_ENC_W_HEAD(ks, x, w) SIMD_ENC_W((ks), (x), (w))
#define SIMD_ENC_W_TAIL(ks, x, w) ((void)0)
#endif
SIMD_INLINE void simd_gcm_short_stream(const SIMD_KEYS *ks, SIMD_CTR_T *ctr, SIMD_V *c, size_t w,
                                       int part)
{
    if (part != SIMD_GCM_TAIL)
        SIMD_CTR_FILL(AESKIT_CTR_BE32, ctr, c, w);
    if (part == SIMD_GCM_ALL)
        SIMD_ENC_W(ks, c, w);
    else if (part == SIMD_GCM_HEAD)
        SIMD_ENC_W_HEAD(ks, c, w);
    else
        SIMD_ENC_W_TAIL(ks, c, w);
}

/* Item m's counter blocks J0..J0+db (db its data blocks), encrypted into
 * c (or that part of it). */
SIMD_INLINE void simd_gcm_short_blocks(const SIMD_KEYS *ks, const aeskit_aead_item *m, SIMD_V *c,
                                       int part)
{
    SIMD_CTR_T ctr = SIMD_GCM_J0(m->m.nonce);
    switch ((m->len + 15) / 16) {   /* at most 7 data blocks (nh <= 8) */
    case 0: simd_gcm_short_stream(ks, &ctr, c, 1, part); break;
    case 1: simd_gcm_short_stream(ks, &ctr, c, 2, part); break;
    case 2: simd_gcm_short_stream(ks, &ctr, c, 3, part); break;
    case 3: simd_gcm_short_stream(ks, &ctr, c, 4, part); break;
    case 4: simd_gcm_short_stream(ks, &ctr, c, 5, part); break;
    case 5: simd_gcm_short_stream(ks, &ctr, c, 6, part); break;
    case 6: simd_gcm_short_stream(ks, &ctr, c, 7, part); break;
    default: simd_gcm_short_stream(ks, &ctr, c, 8, part); break;
    }
}

/* Item m's data through its encrypted counter blocks c into dst, its
 * GHASH, and its tag into tag; kb and acc the caller's scratch blocks
 * (which it wipes). */
SIMD_INLINE void simd_gcm_short_finish(const aeskit_ghash_key *hk, int enc,
                                       const aeskit_aead_item *m, const SIMD_V *c,
                                       uint8_t tag[16], uint8_t *kb, uint8_t *acc)
{
    const aeskit_gcm_short_shape sh = aeskit_gcm_short_shape_of(m);
    /* GHASH: block j of the nh (AAD, ciphertext, lengths) times H^(nh-j) */
    const SIMD_GV zero = SIMD_GZERO;
    SIMD_GSUM s = {zero, zero, zero};
    size_t pw = sh.nh;
    SIMD_GPOWER h;
#define SIMD_GCM_ADD(img) (pw--, h = SIMD_GPOWER_AT(hk, pw), SIMD_GMUL_ADD(&s, (img), &h))
    uint64_t hi, lo;
    for (size_t j = 0; j < sh.awhole; j++)
        SIMD_GCM_ADD(SIMD_GBLOCK(sh.aad + AESKIT_BLOCK * j, 0));
    if (sh.ab > sh.awhole) {
        aeskit_gcm_bytes_in(sh.aad + AESKIT_BLOCK * sh.awhole, sh.aad_len % 16, &hi, &lo);
        SIMD_GCM_ADD(SIMD_GMAKE(hi, lo));
    }
    for (size_t j = 0; j < sh.whole; j++) {
        const uint8_t *in = m->src + AESKIT_BLOCK * j;
        uint8_t *out = m->dst + AESKIT_BLOCK * j;
        /* opening hashes the ciphertext before dst (maybe src) is written */
        const SIMD_GV img = enc ? zero : SIMD_GBLOCK(in, 0);
        SIMD_STORE(out, SIMD_XOR(SIMD_LOAD(in), c[j + 1]));
        SIMD_GCM_ADD(enc ? SIMD_GBLOCK(out, 0) : img);
    }
    if (sh.rest > 0) {
        uint64_t kh, kl;
        SIMD_STORE(kb, c[sh.db]);
        kh = aeskit_load_be64(kb);
        kl = aeskit_load_be64(kb + 8);
        aeskit_gcm_bytes_in(m->src + AESKIT_BLOCK * sh.whole, sh.rest, &hi, &lo);
        uint64_t oh = hi ^ kh, ol = lo ^ kl;
        aeskit_gcm_bytes_cut(sh.rest, &oh, &ol);
        aeskit_gcm_bytes_out(m->dst + AESKIT_BLOCK * sh.whole, sh.rest, oh, ol);
        SIMD_GCM_ADD(enc ? SIMD_GMAKE(oh, ol) : SIMD_GMAKE(hi, lo));
    }
    SIMD_GCM_ADD(SIMD_GMAKE((uint64_t)sh.aad_len * 8, (uint64_t)m->len * 8));
#undef SIMD_GCM_ADD
    assert(pw == 0);
    SIMD_GSTORE(acc, SIMD_GREDUCE(s));
    SIMD_STORE(tag, SIMD_XOR(SIMD_LOAD(acc), c[0]));
}

/* Message after message, the next one's counter blocks are encrypted
 * before this one's data, GHASH and tag: a message's AES is a chain of
 * rounds (40 cycles at 10 rounds on Zen 4) and its GHASH waits for it,
 * so with each message's work in order the core, whose window holds
 * about one message's instructions, ran them one after the other; issued
 * a message ahead, the chains of two messages are in flight together.
 * Where the backend splits the rounds (SIMD_GCM_SPLIT), the next message's
 * rounds go half before and half after this one's GHASH, so that its
 * waiting rounds never fill the scheduler ahead of the GHASH. */
SIMD_FN void SIMD_NAME(gcm_short)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                                  const aeskit_aead_item *m, size_t n, uint8_t (*tags)[16])
{
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    assert(hk->max_blocks >= AESKIT_GCM_SHORT_HASH);
    SIMD_V c[2][SIMD_W];
    uint8_t kb[AESKIT_BLOCK], acc[AESKIT_BLOCK];
    if (n > 0)
        simd_gcm_short_blocks(&ks, &m[0], c[0], SIMD_GCM_ALL);
    for (size_t i = 0; i < n; i++) {
        const int next = i + 1 < n;
        if (next)
            simd_gcm_short_blocks(&ks, &m[i + 1], c[(i + 1) & 1],
                                  SIMD_GCM_SPLIT ? SIMD_GCM_HEAD : SIMD_GCM_ALL);
        simd_gcm_short_finish(hk, enc, &m[i], c[i & 1], tags[i], kb, acc);
        if (SIMD_GCM_SPLIT && next)
            simd_gcm_short_blocks(&ks, &m[i + 1], c[(i + 1) & 1], SIMD_GCM_TAIL);
    }
    aeskit_secure_zero(c, sizeof c);
    aeskit_secure_zero(kb, sizeof kb);
    aeskit_secure_zero(acc, sizeof acc);
}
