/*
 * armv8_ce.c: AES and GHASH with the ARMv8 Crypto Extensions (AArch64
 * little-endian, the AES and PMULL features).
 *
 * Built like every other file (no -march flag): each function that uses the
 * instructions carries a target attribute (CE_FN, CE_INLINE), so nothing
 * else in the build can pick them up, and the table is used only after
 * cpu.c found HWCAP_AES and HWCAP_PMULL. The fused slots (gcm, ocb,
 * ctr_cbcmac, gcmsiv_open) stay NULL: a fused kernel earns its place by a
 * benchmark on the hardware, and the modes then use the split slots.
 *
 * Lanes: one uint8x16_t holds one block in memory byte order (vld1q_u8).
 * Round keys are bytes as FIPS-197 writes them: rk[0..rounds] for
 * encryption, then the Equivalent Inverse Cipher's keys (AESIMC of the
 * middle ones, in reverse) for AESD, the layout aesni uses.
 *
 * AESE is AddRoundKey + ShiftRows + SubBytes, AESMC MixColumns: a round is
 * AESMC(AESE(x, k)), the two written next to each other in every loop so
 * that the cores that fuse the pair (Cortex-A57 on, Neoverse, Apple) see
 * them adjacent; the last round is AESE then an XOR with the last key.
 *
 * Parallel modes (ECB, CBC and CFB decryption, CTR, XTS) run CE_W = 8
 * independent blocks per loop iteration (AESE latency 2-3 cycles and two
 * or more pipes on current cores need that many in flight); a 1..7 block
 * tail runs as 4 + 2 + 1. A round key is loaded from the schedule once per
 * round per batch, as aesni does (no copy of the keys is left on the stack).
 *
 * GHASH and POLYVAL: clmul128.h's method on PMULL (low halves) and PMULL2
 * (high halves), the register images and the Montgomery reduction by
 * 0xC2 || 0^56 the same (see ghash_clmul.c): blocks byte-reversed into
 * registers, powers stored as H^i * x^-1, Karatsuba's three products per
 * block summed unreduced over 8 blocks and reduced once (aggregated
 * reduction). POLYVAL loads its blocks as they are.
 *
 * Counters and tweaks are advanced in general registers without a branch on
 * their value (adds with the carry as a comparison result, masked
 * reductions), so every counter kind, secret ones included, takes the same
 * path.
 */
#include <arm_neon.h>
#include <string.h>

#include "common.h"
#include "dispatch.h"
#include "modes/generic.h"

#if !defined(__aarch64__) || !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "armv8_ce.c is for little-endian AArch64"
#endif

#if defined(__clang__)
#define CE_TARGET __attribute__((target("aes")))
#else
#define CE_TARGET __attribute__((target("+crypto")))
#endif
#define CE_FN static CE_TARGET
#define CE_INLINE static inline __attribute__((always_inline)) CE_TARGET
#define CE_W 8
#define CE_UNROLL _Pragma("GCC unroll 8") /* CE_W */

/* ---- key schedule ---------------------------------------------------- */

/* SubWord(w): AESE with a zero key on w in all four columns. ShiftRows
 * moves bytes between columns only, and the columns are equal, so lane 0
 * is SubBytes of w alone. */
CE_INLINE uint32_t ce_sub_word(uint32_t w)
{
    const uint8x16_t x = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(x), 0);
}

/* FIPS-197 5.2 word by word, in place (no copy of the key elsewhere). */
CE_FN void ce_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    assert(len == 16 || len == 24 || len == 32);
    const unsigned nk = (unsigned)(len / 4), rounds = nk + 6;
    const size_t used = 2 * AESKIT_BLOCK * (rounds + 1);
    uint8_t *enc = (uint8_t *)k->rk, *dec = enc + AESKIT_BLOCK * (rounds + 1);
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
            w = ce_sub_word(w);
            memcpy(t, &w, 4);
            if (i % nk == 0) {
                t[0] ^= rcon;
                rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
            }
        }
        for (unsigned b = 0; b < 4; b++)
            enc[4 * i + b] = enc[4 * (i - nk) + b] ^ t[b];
    }
    vst1q_u8(dec, vld1q_u8(enc + AESKIT_BLOCK * rounds));
    for (unsigned r = 1; r < rounds; r++)
        vst1q_u8(dec + AESKIT_BLOCK * r, vaesimcq_u8(vld1q_u8(enc + AESKIT_BLOCK * (rounds - r))));
    vst1q_u8(dec + AESKIT_BLOCK * rounds, vld1q_u8(enc));
    memset((uint8_t *)k->rk + used, 0, sizeof k->rk - used);
    k->rounds = rounds;
    k->used = (unsigned)used;
    k->impl = &aeskit_armv8_ce_impl;
}

/* ---- rounds ------------------------------------------------------------ */

/* The encryption or the decryption keys, read from the schedule where they
 * are used (one load per round per batch; no copy of them is made). */
typedef struct {
    const uint8_t *rk;
    unsigned rounds;
} ce_keys;

CE_INLINE void ce_load(ce_keys *ks, const aeskit_key *k, int dec)
{
    ks->rk = (const uint8_t *)k->rk + (dec ? AESKIT_BLOCK * (k->rounds + 1) : 0);
    ks->rounds = k->rounds;
}

CE_INLINE uint8x16_t ce_key(const ce_keys *ks, unsigned r)
{
    return vld1q_u8(ks->rk + AESKIT_BLOCK * r);
}

/* w blocks through the cipher, round by round across the blocks. */
CE_INLINE void ce_enc_w(const ce_keys *ks, uint8x16_t *x, size_t w)
{
    for (unsigned r = 0; r + 1 < ks->rounds; r++) {
        const uint8x16_t k = ce_key(ks, r);
        CE_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = vaesmcq_u8(vaeseq_u8(x[j], k));
    }
    const uint8x16_t k = ce_key(ks, ks->rounds - 1), last = ce_key(ks, ks->rounds);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = veorq_u8(vaeseq_u8(x[j], k), last);
}

CE_INLINE void ce_dec_w(const ce_keys *ks, uint8x16_t *x, size_t w)
{
    for (unsigned r = 0; r + 1 < ks->rounds; r++) {
        const uint8x16_t k = ce_key(ks, r);
        CE_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = vaesimcq_u8(vaesdq_u8(x[j], k));
    }
    const uint8x16_t k = ce_key(ks, ks->rounds - 1), last = ce_key(ks, ks->rounds);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = veorq_u8(vaesdq_u8(x[j], k), last);
}

CE_INLINE uint8x16_t ce_enc1(const ce_keys *ks, uint8x16_t x)
{
    ce_enc_w(ks, &x, 1);
    return x;
}

/* Runs KERNEL(w) on batches of CE_W blocks, then the tail as 4 + 2 + 1;
 * KERNEL advances src and dst. */
#define CE_BATCHES(n, KERNEL)     \
    do {                          \
        for (; (n) >= CE_W; (n) -= CE_W) \
            KERNEL(CE_W);         \
        if ((n) & 4)              \
            KERNEL(4);            \
        if ((n) & 2)              \
            KERNEL(2);            \
        if ((n) & 1)              \
            KERNEL(1);            \
    } while (0)

/* ---- ECB --------------------------------------------------------------- */

CE_INLINE void ce_ecb_w(const ce_keys *ks, int dec, uint8_t *dst, const uint8_t *src, size_t w)
{
    uint8x16_t x[CE_W];
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vld1q_u8(src + AESKIT_BLOCK * j);
    if (dec)
        ce_dec_w(ks, x, w);
    else
        ce_enc_w(ks, x, w);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        vst1q_u8(dst + AESKIT_BLOCK * j, x[j]);
}

CE_FN void ce_ecb_enc(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    ce_keys ks;
    ce_load(&ks, k, 0);
#define K(w) (ce_ecb_w(&ks, 0, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
}

CE_FN void ce_ecb_dec(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    ce_keys ks;
    ce_load(&ks, k, 1);
#define K(w) (ce_ecb_w(&ks, 1, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
}

/* ---- serial modes -------------------------------------------------------- */

CE_FN void ce_cbc_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                      size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    uint8x16_t x = vld1q_u8(iv);
    for (size_t i = 0; i < n; i++) {
        x = ce_enc1(&ks, veorq_u8(x, vld1q_u8(src + AESKIT_BLOCK * i)));
        vst1q_u8(dst + AESKIT_BLOCK * i, x);
    }
    vst1q_u8(iv, x);
}

CE_FN void ce_cfb_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                      size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    uint8x16_t x = vld1q_u8(iv);
    for (size_t i = 0; i < n; i++) {
        x = veorq_u8(ce_enc1(&ks, x), vld1q_u8(src + AESKIT_BLOCK * i));
        vst1q_u8(dst + AESKIT_BLOCK * i, x);
    }
    vst1q_u8(iv, x);
}

CE_FN void ce_ofb(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                  size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    uint8x16_t x = vld1q_u8(iv);
    for (size_t i = 0; i < n; i++) {
        x = ce_enc1(&ks, x);
        vst1q_u8(dst + AESKIT_BLOCK * i, veorq_u8(x, vld1q_u8(src + AESKIT_BLOCK * i)));
    }
    vst1q_u8(iv, x);
}

CE_FN void ce_cbc_mac(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    uint8x16_t x = vld1q_u8(mac);
    for (size_t i = 0; i < n; i++)
        x = ce_enc1(&ks, veorq_u8(x, vld1q_u8(src + AESKIT_BLOCK * i)));
    vst1q_u8(mac, x);
}

/* ---- parallel chaining modes --------------------------------------------- */

/* CBC decryption: all w ciphertext blocks are read before any is written
 * (dst may be src). */
CE_INLINE void ce_cbc_dec_w(const ce_keys *ks, uint8x16_t *iv, uint8_t *dst, const uint8_t *src,
                            size_t w)
{
    uint8x16_t c[CE_W], x[CE_W];
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = c[j] = vld1q_u8(src + AESKIT_BLOCK * j);
    ce_dec_w(ks, x, w);
    vst1q_u8(dst, veorq_u8(x[0], *iv));
    CE_UNROLL
    for (size_t j = 1; j < w; j++)
        vst1q_u8(dst + AESKIT_BLOCK * j, veorq_u8(x[j], c[j - 1]));
    *iv = c[w - 1];
}

CE_FN void ce_cbc_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                      size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 1);
    uint8x16_t v = vld1q_u8(iv);
#define K(w) (ce_cbc_dec_w(&ks, &v, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
    vst1q_u8(iv, v);
}

CE_INLINE void ce_cfb_dec_w(const ce_keys *ks, uint8x16_t *iv, uint8_t *dst, const uint8_t *src,
                            size_t w)
{
    uint8x16_t c[CE_W], x[CE_W];
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        c[j] = vld1q_u8(src + AESKIT_BLOCK * j);
    x[0] = *iv;
    CE_UNROLL
    for (size_t j = 1; j < w; j++)
        x[j] = c[j - 1];
    ce_enc_w(ks, x, w);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        vst1q_u8(dst + AESKIT_BLOCK * j, veorq_u8(x[j], c[j]));
    *iv = c[w - 1];
}

CE_FN void ce_cfb_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                      size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    uint8x16_t v = vld1q_u8(iv);
#define K(w) (ce_cfb_dec_w(&ks, &v, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
    vst1q_u8(iv, v);
}

/* ---- CTR ------------------------------------------------------------------ */

/* The counter block as two big-endian 64-bit words (bytes 0..7, 8..15). */
typedef struct {
    uint64_t hi, lo;
} ce_ctr;

AESKIT_INLINE void ce_ctr_inc(ce_ctr *c, enum aeskit_ctr kind)
{
    switch (kind) {
    case AESKIT_CTR_BE32:
        c->lo = (c->lo & UINT64_C(0xffffffff00000000)) | (uint32_t)(c->lo + 1);
        break;
    case AESKIT_CTR_LE32: {   /* bytes 0..3, little-endian: hi's top word, swapped */
        const uint32_t v = __builtin_bswap32((uint32_t)(c->hi >> 32)) + 1;
        c->hi = (c->hi & UINT64_C(0xffffffff)) | (uint64_t)__builtin_bswap32(v) << 32;
        break;
    }
    default:   /* BE128, BE128_SECRET: the carry is a comparison, not a branch */
        c->lo += 1;
        c->hi += (uint64_t)(c->lo == 0);
        break;
    }
}

AESKIT_INLINE uint8x16_t ce_ctr_block(const ce_ctr *c)
{
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(__builtin_bswap64(c->hi)),
                                             vcreate_u64(__builtin_bswap64(c->lo))));
}

CE_INLINE void ce_ctr_w(const ce_keys *ks, enum aeskit_ctr kind, ce_ctr *c, uint8_t *dst,
                        const uint8_t *src, size_t w)
{
    uint8x16_t x[CE_W];
    CE_UNROLL
    for (size_t j = 0; j < w; j++) {
        x[j] = ce_ctr_block(c);
        ce_ctr_inc(c, kind);
    }
    ce_enc_w(ks, x, w);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        vst1q_u8(dst + AESKIT_BLOCK * j, veorq_u8(x[j], vld1q_u8(src + AESKIT_BLOCK * j)));
}

CE_FN void ce_ctr_slot(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16], uint8_t *dst,
                       const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, 0);
    ce_ctr c = {aeskit_load_be64(ctr), aeskit_load_be64(ctr + 8)};
#define K(w) (ce_ctr_w(&ks, kind, &c, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
    aeskit_store_be64(ctr, c.hi);
    aeskit_store_be64(ctr + 8, c.lo);
}

/* ---- XTS ------------------------------------------------------------------ */

/* The tweak as a little-endian 128-bit number (IEEE 1619 5.2). */
typedef struct {
    uint64_t lo, hi;
} ce_tweak;

AESKIT_INLINE uint8x16_t ce_tweak_block(const ce_tweak *t)
{
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(t->lo), vcreate_u64(t->hi)));
}

CE_INLINE void ce_xts_w(const ce_keys *ks, int enc, ce_tweak *t, uint8_t *dst, const uint8_t *src,
                        size_t w)
{
    uint8x16_t x[CE_W], tw[CE_W];
    CE_UNROLL
    for (size_t j = 0; j < w; j++) {
        tw[j] = ce_tweak_block(t);
        aeskit_gf128_double(&t->hi, &t->lo);
        x[j] = veorq_u8(vld1q_u8(src + AESKIT_BLOCK * j), tw[j]);
    }
    if (enc)
        ce_enc_w(ks, x, w);
    else
        ce_dec_w(ks, x, w);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        vst1q_u8(dst + AESKIT_BLOCK * j, veorq_u8(x[j], tw[j]));
}

CE_FN void ce_xts(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                  const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    ce_keys ks;
    ce_load(&ks, k, !enc);
    ce_tweak t = {aeskit_load_le64(tweak), aeskit_load_le64(tweak + 8)};
#define K(w) (ce_xts_w(&ks, enc, &t, dst, src, w), src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))
    CE_BATCHES(n, K);
#undef K
    aeskit_store_le64(tweak, t.lo);
    aeskit_store_le64(tweak + 8, t.hi);
    aeskit_secure_zero(&t, sizeof t);
}

/* ---- GHASH and POLYVAL on PMULL --------------------------------------------- */

typedef struct {
    uint64x2_t lo, mid, hi;
} ce_sum;

CE_INLINE uint64x2_t ce_pmull_lo(uint64x2_t a, uint64x2_t b)
{
    return vreinterpretq_u64_p128(
        vmull_p64((poly64_t)vgetq_lane_u64(a, 0), (poly64_t)vgetq_lane_u64(b, 0)));
}

CE_INLINE uint64x2_t ce_pmull_hi(uint64x2_t a, uint64x2_t b)
{
    return vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(a), vreinterpretq_p64_u64(b)));
}

/* Karatsuba's half: hi ^ lo in lane 0. */
CE_INLINE uint64x2_t ce_half(uint64x2_t h)
{
    return veorq_u64(h, vextq_u64(h, h, 1));
}

CE_INLINE void ce_mul_add(ce_sum *s, uint64x2_t x, uint64x2_t h, uint64x2_t hk)
{
    s->lo = veorq_u64(s->lo, ce_pmull_lo(x, h));
    s->hi = veorq_u64(s->hi, ce_pmull_hi(x, h));
    s->mid = veorq_u64(s->mid, ce_pmull_lo(ce_half(x), hk));
}

/* Two Montgomery steps by 0xC2 || 0^56 clear the low 128 bits. */
CE_INLINE uint64x2_t ce_reduce(ce_sum s)
{
    const uint64x2_t zero = vdupq_n_u64(0), poly = vcombine_u64(
        vcreate_u64(UINT64_C(0xC200000000000000)), vcreate_u64(0));
    const uint64x2_t mid = veorq_u64(s.mid, veorq_u64(s.lo, s.hi));
    uint64x2_t lo = veorq_u64(s.lo, vextq_u64(zero, mid, 1));
    const uint64x2_t hi = veorq_u64(s.hi, vextq_u64(mid, zero, 1));
    lo = veorq_u64(vextq_u64(lo, lo, 1), ce_pmull_lo(lo, poly));
    lo = veorq_u64(vextq_u64(lo, lo, 1), ce_pmull_lo(lo, poly));
    return veorq_u64(hi, lo);
}

/* A block byte-reversed: the big-endian 128-bit integer's image. */
CE_INLINE uint64x2_t ce_rev(uint8x16_t b)
{
    const uint8x16_t r = vrev64q_u8(b);
    return vreinterpretq_u64_u8(vextq_u8(r, r, 8));
}

CE_INLINE uint8x16_t ce_unrev(uint64x2_t v)
{
    const uint8x16_t r = vrev64q_u8(vreinterpretq_u8_u64(v));
    return vextq_u8(r, r, 8);
}

#define CE_KARATSUBA_OFF (CE_W * AESKIT_BLOCK)
static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= 2 * CE_W * AESKIT_BLOCK,
              "aeskit_ghash_key holds the powers and their Karatsuba halves");

CE_FN void ce_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    /* H * x^-1 (clmul128.h: aeskit_clmul_h_xinv), without a branch on H */
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);
    const uint64x2_t base = vcombine_u64(vcreate_u64(h0), vcreate_u64(h1));
    uint8_t *out = (uint8_t *)hk->w;
    const size_t need = max_blocks < CE_W ? max_blocks : CE_W;
    uint64x2_t pw = base;

    for (size_t i = 0; i < need; i++) {
        if (i > 0) {
            ce_sum s = {vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0)};
            ce_mul_add(&s, pw, base, ce_half(base));
            pw = ce_reduce(s);
        }
        vst1q_u64((uint64_t *)(out + AESKIT_BLOCK * i), pw);
        vst1q_u64((uint64_t *)(out + CE_KARATSUBA_OFF + AESKIT_BLOCK * i), ce_half(pw));
    }
    hk->max_blocks = max_blocks;
    hk->from = 0;
    hk->used = 2 * CE_W * AESKIT_BLOCK;
}

/* acc folded with w blocks: the sum of X_j * H^(w-j), X_0 carrying acc. */
CE_INLINE uint64x2_t ce_ghash_w(const aeskit_ghash_key *hk, uint64x2_t acc, const uint8_t *p,
                                size_t w, int polyval)
{
    const uint8_t *pw = (const uint8_t *)hk->w;
    ce_sum s = {vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0)};
    CE_UNROLL
    for (size_t j = 0; j < w; j++) {
        const uint8x16_t b = vld1q_u8(p + AESKIT_BLOCK * j);
        uint64x2_t x = polyval ? vreinterpretq_u64_u8(b) : ce_rev(b);
        if (j == 0)
            x = veorq_u64(x, acc);
        const size_t i = w - 1 - j;
        ce_mul_add(&s, x, vld1q_u64((const uint64_t *)(pw + AESKIT_BLOCK * i)),
                   vld1q_u64((const uint64_t *)(pw + CE_KARATSUBA_OFF + AESKIT_BLOCK * i)));
    }
    return ce_reduce(s);
}

CE_INLINE void ce_hash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n,
                       int polyval)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(n <= hk->max_blocks);
    if (n == 0)
        return;
    uint64x2_t y = ce_rev(vld1q_u8(acc));
    for (; n >= CE_W; n -= CE_W, p += CE_W * AESKIT_BLOCK)
        y = ce_ghash_w(hk, y, p, CE_W, polyval);
    switch (n) {   /* the tail: w a constant in each call */
    case 7: y = ce_ghash_w(hk, y, p, 7, polyval); break;
    case 6: y = ce_ghash_w(hk, y, p, 6, polyval); break;
    case 5: y = ce_ghash_w(hk, y, p, 5, polyval); break;
    case 4: y = ce_ghash_w(hk, y, p, 4, polyval); break;
    case 3: y = ce_ghash_w(hk, y, p, 3, polyval); break;
    case 2: y = ce_ghash_w(hk, y, p, 2, polyval); break;
    case 1: y = ce_ghash_w(hk, y, p, 1, polyval); break;
    default: break;
    }
    vst1q_u8(acc, ce_unrev(y));
}

CE_FN void ce_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n)
{
    ce_hash(hk, acc, p, n, 0);
}

CE_FN void ce_polyval(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n)
{
    ce_hash(hk, acc, p, n, 1);
}

const struct aeskit_impl aeskit_armv8_ce_impl = {
    .name = "armv8_ce",
    .cpu_needs = AESKIT_CPU_ARM_AES | AESKIT_CPU_ARM_PMULL,
    .set_key = ce_set_key,
    .ecb_enc = ce_ecb_enc,
    .ecb_dec = ce_ecb_dec,
    .cbc_enc = ce_cbc_enc,
    .cbc_dec = ce_cbc_dec,
    .cfb_enc = ce_cfb_enc,
    .cfb_dec = ce_cfb_dec,
    .ofb = ce_ofb,
    .ctr = ce_ctr_slot,
    .cbc_mac = ce_cbc_mac,
    .xts = ce_xts,
    .ghash_key = ce_ghash_key,
    .ghash = ce_ghash,
    .polyval = ce_polyval,
    /* ocb, gcm, gcmsiv_open, ctr_cbcmac: NULL (see the top of this file) */
    .constants = (const aeskit_constant[]){
        {"batch_blocks", CE_W},
        {"ghash_batch_blocks", CE_W},
        {NULL, 0},
    },
};
