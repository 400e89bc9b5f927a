/*
 * power8.c: AES and GHASH/POLYVAL with the POWER8 (ISA 2.07) vector crypto
 * instructions: vcipher, vcipherlast, vncipher, vncipherlast, vsbox and
 * vpmsumd, 64-bit POWER8 or later, big- and little-endian.
 *
 * Built as its own library with -mcpu=power8 -maltivec -mvsx (meson.build)
 * and called only after cpu.c found PPC_FEATURE2_VEC_CRYPTO in AT_HWCAP2.
 * The fused slots (gcm, ocb, ctr_cbcmac, gcmsiv_open) stay NULL: a fused
 * kernel earns its place by a benchmark on the hardware.
 *
 * Byte order. The crypto instructions number a register's bytes big-endian:
 * byte 0 (the most significant) is the AES state's byte 0, and vpmsumd's
 * operands and product are big-endian 128-bit numbers. Every vector here
 * holds its block that way, "the register in big-endian byte order", which
 * is also the block read as a big-endian 128-bit number. On big-endian a
 * load (vec_xl) gives exactly that; on little-endian it gives the bytes
 * reversed, and p8_load / p8_store reverse them (one vperm). Round keys are
 * loaded the same way, from the schedule, once per round per batch. For the 64-bit halves of such a value
 * (counters, tweaks, GHASH's shifts) P8_HI and P8_LO name the vector element
 * that holds the high and the low half on this byte order.
 *
 * AES: vcipher is ShiftRows, SubBytes, MixColumns, then the round key's XOR;
 * vncipher the inverse steps with the XOR before InvMixColumns, i.e. the
 * straightforward inverse cipher, so decryption takes the encryption keys
 * in reverse and the schedule needs no InvMixColumns: rk[0..rounds] as
 * FIPS-197 writes them, in memory byte order.
 *
 * Parallel modes (ECB, CBC and CFB decryption, CTR, XTS) run P8_W = 8
 * independent blocks per iteration (vcipher's latency is 6-7 cycles on
 * POWER8/9 with one or two pipes); a 1..7 block tail runs as 4 + 2 + 1.
 *
 * GHASH: the method of clmul128.h (see ghash_clmul.c) on vpmsumd, which
 * multiplies both 64-bit halves of its operands and XORs the two products.
 * With one operand's other half zero that is one product, and with it
 * swapped it is Karatsuba's whole middle term, so each power of H is kept
 * in three forms (high half alone, low half alone, swapped) and a block
 * costs three vpmsumd with no Karatsuba fix-up. Powers are H^i * x^-1, 8
 * blocks summed unreduced, one reduction by 0xC2 || 0^56 per 8 blocks. A
 * block read big-endian is already GHASH's register image (x86 byte-swaps
 * for it); POLYVAL's blocks are the byte-reversed loads.
 *
 * Counters and tweaks are advanced in general registers without a branch on
 * their value.
 */
#include <altivec.h>
#include <string.h>

#include "common.h"
#include "dispatch.h"
#include "modes/generic.h"

#if !defined(__powerpc64__) || !defined(__BYTE_ORDER__)
#error "power8.c is for 64-bit POWER"
#endif
#undef vector   /* altivec.h's context-sensitive keyword, where C11 wants none */
#undef pixel
#undef bool

typedef __vector unsigned long long p8v;
typedef __vector unsigned char p8b;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define P8_LE 1
#define P8_HI 1
#define P8_LO 0
#else
#define P8_LE 0
#define P8_HI 0
#define P8_LO 1
#endif

#define P8_INLINE static inline __attribute__((always_inline))
#define P8_W 8
#define P8_UNROLL _Pragma("GCC unroll 8") /* P8_W */

/* ---- loads, stores, halves ------------------------------------------- */

/* The 16 bytes reversed, in element order (vec_perm's meaning on both
 * byte orders). */
P8_INLINE p8v p8_reverse(p8v v)
{
    const p8b r = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    return (p8v)vec_perm((p8b)v, (p8b)v, r);
}

/* A block as the register holds it in big-endian byte order. */
P8_INLINE p8v p8_load(const uint8_t *p)
{
    const p8v v = (p8v)vec_xl(0, (const unsigned char *)p);
    return P8_LE ? p8_reverse(v) : v;
}

P8_INLINE void p8_store(uint8_t *p, p8v v)
{
    vec_xst((p8b)(P8_LE ? p8_reverse(v) : v), 0, (unsigned char *)p);
}

/* The block's bytes reversed: a load on little-endian, a reversed one on
 * big-endian (POLYVAL's order). */
P8_INLINE p8v p8_load_reversed(const uint8_t *p)
{
    const p8v v = (p8v)vec_xl(0, (const unsigned char *)p);
    return P8_LE ? v : p8_reverse(v);
}

/* The value of high and low 64-bit halves hi, lo. */
P8_INLINE p8v p8_make(uint64_t hi, uint64_t lo)
{
    p8v v;
    v[P8_HI] = hi;
    v[P8_LO] = lo;
    return v;
}

P8_INLINE p8v p8_swap(p8v v)
{
    return (p8v)vec_sld((p8b)v, (p8b)v, 8);   /* a rotation by half either way */
}

/* ---- key schedule ---------------------------------------------------- */

/* SubWord(w): vsbox is SubBytes alone, byte by byte. */
P8_INLINE uint32_t p8_sub_word(uint32_t w)
{
    __vector unsigned int v = {w, w, w, w};
    v = (__vector unsigned int)__builtin_crypto_vsbox((p8v)v);
    return v[0];
}

/* FIPS-197 5.2 word by word, in place. */
static void p8_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    assert(len == 16 || len == 24 || len == 32);
    const unsigned nk = (unsigned)(len / 4), rounds = nk + 6;
    const size_t used = AESKIT_BLOCK * (rounds + 1);
    uint8_t *enc = (uint8_t *)k->rk;
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
            w = p8_sub_word(w);
            memcpy(t, &w, 4);
            if (i % nk == 0) {
                t[0] ^= rcon;
                rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
            }
        }
        for (unsigned b = 0; b < 4; b++)
            enc[4 * i + b] = enc[4 * (i - nk) + b] ^ t[b];
    }
    memset((uint8_t *)k->rk + used, 0, sizeof k->rk - used);
    k->rounds = rounds;
    k->used = (unsigned)used;
    k->impl = &aeskit_power8_impl;
}

/* ---- rounds ------------------------------------------------------------ */

/* The round keys, read from the schedule where they are used (one load,
 * and on little-endian one vperm, per round per batch; no copy of them is
 * made). */
typedef struct {
    const uint8_t *rk;
    unsigned rounds;
} p8_keys;

P8_INLINE void p8_load_keys(p8_keys *ks, const aeskit_key *k)
{
    ks->rk = (const uint8_t *)k->rk;
    ks->rounds = k->rounds;
}

P8_INLINE p8v p8_key(const p8_keys *ks, unsigned r)
{
    return p8_load(ks->rk + AESKIT_BLOCK * r);
}

P8_INLINE void p8_enc_w(const p8_keys *ks, p8v *x, size_t w)
{
    const p8v first = p8_key(ks, 0);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vec_xor(x[j], first);
    for (unsigned r = 1; r < ks->rounds; r++) {
        const p8v k = p8_key(ks, r);
        P8_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = __builtin_crypto_vcipher(x[j], k);
    }
    const p8v last = p8_key(ks, ks->rounds);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = __builtin_crypto_vcipherlast(x[j], last);
}

P8_INLINE void p8_dec_w(const p8_keys *ks, p8v *x, size_t w)
{
    const p8v first = p8_key(ks, ks->rounds);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vec_xor(x[j], first);
    for (unsigned r = ks->rounds - 1; r > 0; r--) {
        const p8v k = p8_key(ks, r);
        P8_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = __builtin_crypto_vncipher(x[j], k);
    }
    const p8v last = p8_key(ks, 0);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = __builtin_crypto_vncipherlast(x[j], last);
}

P8_INLINE p8v p8_enc1(const p8_keys *ks, p8v x)
{
    p8_enc_w(ks, &x, 1);
    return x;
}

/* Runs KERNEL(w) on batches of P8_W blocks, then the tail as 4 + 2 + 1;
 * KERNEL advances src and dst. */
#define P8_BATCHES(n, KERNEL)              \
    do {                                   \
        for (; (n) >= P8_W; (n) -= P8_W)   \
            KERNEL(P8_W);                  \
        if ((n) & 4)                       \
            KERNEL(4);                     \
        if ((n) & 2)                       \
            KERNEL(2);                     \
        if ((n) & 1)                       \
            KERNEL(1);                     \
    } while (0)
#define P8_STEP(w) (src += AESKIT_BLOCK * (w), dst += AESKIT_BLOCK * (w))

/* ---- ECB --------------------------------------------------------------- */

P8_INLINE void p8_ecb_w(const p8_keys *ks, int dec, uint8_t *dst, const uint8_t *src, size_t w)
{
    p8v x[P8_W];
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = p8_load(src + AESKIT_BLOCK * j);
    if (dec)
        p8_dec_w(ks, x, w);
    else
        p8_enc_w(ks, x, w);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        p8_store(dst + AESKIT_BLOCK * j, x[j]);
}

static void p8_ecb_enc(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    p8_keys ks;
    p8_load_keys(&ks, k);
#define K(w) (p8_ecb_w(&ks, 0, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
}

static void p8_ecb_dec(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    p8_keys ks;
    p8_load_keys(&ks, k);
#define K(w) (p8_ecb_w(&ks, 1, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
}

/* ---- serial modes -------------------------------------------------------- */

static void p8_cbc_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                       size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v x = p8_load(iv);
    for (size_t i = 0; i < n; i++) {
        x = p8_enc1(&ks, vec_xor(x, p8_load(src + AESKIT_BLOCK * i)));
        p8_store(dst + AESKIT_BLOCK * i, x);
    }
    p8_store(iv, x);
}

static void p8_cfb_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                       size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v x = p8_load(iv);
    for (size_t i = 0; i < n; i++) {
        x = vec_xor(p8_enc1(&ks, x), p8_load(src + AESKIT_BLOCK * i));
        p8_store(dst + AESKIT_BLOCK * i, x);
    }
    p8_store(iv, x);
}

static void p8_ofb(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                   size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v x = p8_load(iv);
    for (size_t i = 0; i < n; i++) {
        x = p8_enc1(&ks, x);
        p8_store(dst + AESKIT_BLOCK * i, vec_xor(x, p8_load(src + AESKIT_BLOCK * i)));
    }
    p8_store(iv, x);
}

static void p8_cbc_mac(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v x = p8_load(mac);
    for (size_t i = 0; i < n; i++)
        x = p8_enc1(&ks, vec_xor(x, p8_load(src + AESKIT_BLOCK * i)));
    p8_store(mac, x);
}

/* ---- parallel chaining modes --------------------------------------------- */

/* All w input blocks are read before any is written (dst may be src). */
P8_INLINE void p8_cbc_dec_w(const p8_keys *ks, p8v *iv, uint8_t *dst, const uint8_t *src,
                            size_t w)
{
    p8v c[P8_W], x[P8_W];
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = c[j] = p8_load(src + AESKIT_BLOCK * j);
    p8_dec_w(ks, x, w);
    p8_store(dst, vec_xor(x[0], *iv));
    P8_UNROLL
    for (size_t j = 1; j < w; j++)
        p8_store(dst + AESKIT_BLOCK * j, vec_xor(x[j], c[j - 1]));
    *iv = c[w - 1];
}

static void p8_cbc_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                       size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v v = p8_load(iv);
#define K(w) (p8_cbc_dec_w(&ks, &v, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
    p8_store(iv, v);
}

P8_INLINE void p8_cfb_dec_w(const p8_keys *ks, p8v *iv, uint8_t *dst, const uint8_t *src,
                            size_t w)
{
    p8v c[P8_W], x[P8_W];
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        c[j] = p8_load(src + AESKIT_BLOCK * j);
    x[0] = *iv;
    P8_UNROLL
    for (size_t j = 1; j < w; j++)
        x[j] = c[j - 1];
    p8_enc_w(ks, x, w);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        p8_store(dst + AESKIT_BLOCK * j, vec_xor(x[j], c[j]));
    *iv = c[w - 1];
}

static void p8_cfb_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                       size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8v v = p8_load(iv);
#define K(w) (p8_cfb_dec_w(&ks, &v, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
    p8_store(iv, v);
}

/* ---- CTR ------------------------------------------------------------------ */

/* The counter block as two big-endian 64-bit words (bytes 0..7, 8..15). */
typedef struct {
    uint64_t hi, lo;
} p8_ctr;

P8_INLINE void p8_ctr_inc(p8_ctr *c, enum aeskit_ctr kind)
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

P8_INLINE void p8_ctr_w(const p8_keys *ks, enum aeskit_ctr kind, p8_ctr *c, uint8_t *dst,
                        const uint8_t *src, size_t w)
{
    p8v x[P8_W];
    P8_UNROLL
    for (size_t j = 0; j < w; j++) {
        x[j] = p8_make(c->hi, c->lo);
        p8_ctr_inc(c, kind);
    }
    p8_enc_w(ks, x, w);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        p8_store(dst + AESKIT_BLOCK * j, vec_xor(x[j], p8_load(src + AESKIT_BLOCK * j)));
}

static void p8_ctr_slot(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16], uint8_t *dst,
                        const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8_ctr c = {aeskit_load_be64(ctr), aeskit_load_be64(ctr + 8)};
#define K(w) (p8_ctr_w(&ks, kind, &c, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
    aeskit_store_be64(ctr, c.hi);
    aeskit_store_be64(ctr + 8, c.lo);
}

/* ---- XTS ------------------------------------------------------------------ */

/* The tweak as a little-endian 128-bit number (IEEE 1619 5.2). */
typedef struct {
    uint64_t lo, hi;
} p8_tweak;

/* Its bytes read big-endian: bytes 0..7 are lo's, little-endian. */
P8_INLINE p8v p8_tweak_block(const p8_tweak *t)
{
    return p8_make(__builtin_bswap64(t->lo), __builtin_bswap64(t->hi));
}

P8_INLINE void p8_xts_w(const p8_keys *ks, int enc, p8_tweak *t, uint8_t *dst, const uint8_t *src,
                        size_t w)
{
    p8v x[P8_W], tw[P8_W];
    P8_UNROLL
    for (size_t j = 0; j < w; j++) {
        tw[j] = p8_tweak_block(t);
        aeskit_gf128_double(&t->hi, &t->lo);
        x[j] = vec_xor(p8_load(src + AESKIT_BLOCK * j), tw[j]);
    }
    if (enc)
        p8_enc_w(ks, x, w);
    else
        p8_dec_w(ks, x, w);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        p8_store(dst + AESKIT_BLOCK * j, vec_xor(x[j], tw[j]));
}

static void p8_xts(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                   const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    p8_keys ks;
    p8_load_keys(&ks, k);
    p8_tweak t = {aeskit_load_le64(tweak), aeskit_load_le64(tweak + 8)};
#define K(w) (p8_xts_w(&ks, enc, &t, dst, src, w), P8_STEP(w))
    P8_BATCHES(n, K);
#undef K
    aeskit_store_le64(tweak, t.lo);
    aeskit_store_le64(tweak + 8, t.hi);
    aeskit_secure_zero(&t, sizeof t);
}

/* ---- GHASH and POLYVAL on vpmsumd -------------------------------------------- */

/* A power of H in vpmsumd's three forms: high half alone (x * hh = x.hi *
 * h.hi), low half alone (x.lo * h.lo) and swapped (x.hi * h.lo ^ x.lo *
 * h.hi, Karatsuba's middle term). */
typedef struct {
    p8v hh, ll, sw;
} p8_power;

static_assert(sizeof(((aeskit_ghash_key *)0)->w) >= P8_W * sizeof(p8_power),
              "aeskit_ghash_key holds the powers in their three forms");

typedef struct {
    p8v lo, mid, hi;
} p8_sum;

P8_INLINE p8v p8_pmsum(p8v a, p8v b)
{
#if defined(__clang__)
    return (p8v)__builtin_altivec_crypto_vpmsumd(a, b);
#else
    return __builtin_crypto_vpmsumd(a, b);
#endif
}

P8_INLINE void p8_mul_add(p8_sum *s, p8v x, const p8_power *h)
{
    s->lo = vec_xor(s->lo, p8_pmsum(x, h->ll));
    s->hi = vec_xor(s->hi, p8_pmsum(x, h->hh));
    s->mid = vec_xor(s->mid, p8_pmsum(x, h->sw));
}

/* The 256-bit hi:mid:lo reduced: mid placed, then two Montgomery steps by
 * 0xC2 || 0^56 clear the low 128 bits (clmul128.h). */
P8_INLINE p8v p8_reduce(p8_sum s)
{
    const p8v poly = p8_make(0, UINT64_C(0xC200000000000000));
    p8v lo = vec_xor(s.lo, p8_make(s.mid[P8_LO], 0));
    const p8v hi = vec_xor(s.hi, p8_make(0, s.mid[P8_HI]));
    lo = vec_xor(p8_swap(lo), p8_pmsum(lo, poly));
    lo = vec_xor(p8_swap(lo), p8_pmsum(lo, poly));
    return vec_xor(hi, lo);
}

P8_INLINE p8_power p8_forms(p8v h)
{
    const p8_power f = {p8_make(h[P8_HI], 0), p8_make(0, h[P8_LO]), p8_swap(h)};
    return f;
}

static void p8_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    /* H * x^-1 (clmul128.h: aeskit_clmul_h_xinv), without a branch on H */
    const uint64_t a1 = aeskit_load_be64(h), a0 = aeskit_load_be64(h + 8);
    const uint64_t carry = 0 - (a1 >> 63);
    const uint64_t h1 = ((a1 << 1) | (a0 >> 63)) ^ (carry & UINT64_C(0xC200000000000000));
    const uint64_t h0 = (a0 << 1) ^ (carry & 1);
    const p8v base = p8_make(h1, h0);
    const p8_power bf = p8_forms(base);
    const size_t need = max_blocks < P8_W ? max_blocks : P8_W;
    p8v pw = base;

    for (size_t i = 0; i < need; i++) {
        if (i > 0) {
            const p8v zero = {0, 0};
            p8_sum s = {zero, zero, zero};
            p8_mul_add(&s, pw, &bf);
            pw = p8_reduce(s);
        }
        const p8_power f = p8_forms(pw);
        unsigned long long *out = (unsigned long long *)((uint8_t *)hk->w + sizeof f * i);
        vec_xst(f.hh, 0, out);
        vec_xst(f.ll, 16, out);
        vec_xst(f.sw, 32, out);
    }
    hk->max_blocks = max_blocks;
    hk->from = 0;
    hk->used = P8_W * sizeof(p8_power);
}

/* The power H^(i+1) * x^-1's forms, as ghash_key stored them (vec_xst and
 * vec_xl agree on any byte order; the key never leaves this backend). */
P8_INLINE p8_power p8_power_at(const aeskit_ghash_key *hk, size_t i)
{
    const unsigned long long *p =
        (const unsigned long long *)((const uint8_t *)hk->w + sizeof(p8_power) * i);
    const p8_power f = {vec_xl(0, p), vec_xl(16, p), vec_xl(32, p)};
    return f;
}

/* acc folded with w blocks: the sum of X_j * H^(w-j), X_0 carrying acc. */
P8_INLINE p8v p8_ghash_w(const aeskit_ghash_key *hk, p8v acc, const uint8_t *p, size_t w,
                         int polyval)
{
    const p8v zero = {0, 0};
    p8_sum s = {zero, zero, zero};
    P8_UNROLL
    for (size_t j = 0; j < w; j++) {
        const uint8_t *b = p + AESKIT_BLOCK * j;
        p8v x = polyval ? p8_load_reversed(b) : p8_load(b);
        if (j == 0)
            x = vec_xor(x, acc);
        const p8_power h = p8_power_at(hk, w - 1 - j);
        p8_mul_add(&s, x, &h);
    }
    return p8_reduce(s);
}

P8_INLINE void p8_hash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n,
                       int polyval)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(n <= hk->max_blocks);
    if (n == 0)
        return;
    p8v y = p8_load(acc);
    for (; n >= P8_W; n -= P8_W, p += P8_W * AESKIT_BLOCK)
        y = p8_ghash_w(hk, y, p, P8_W, polyval);
    switch (n) {   /* the tail: w a constant in each call */
    case 7: y = p8_ghash_w(hk, y, p, 7, polyval); break;
    case 6: y = p8_ghash_w(hk, y, p, 6, polyval); break;
    case 5: y = p8_ghash_w(hk, y, p, 5, polyval); break;
    case 4: y = p8_ghash_w(hk, y, p, 4, polyval); break;
    case 3: y = p8_ghash_w(hk, y, p, 3, polyval); break;
    case 2: y = p8_ghash_w(hk, y, p, 2, polyval); break;
    case 1: y = p8_ghash_w(hk, y, p, 1, polyval); break;
    default: break;
    }
    p8_store(acc, y);
}

static void p8_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n)
{
    p8_hash(hk, acc, p, n, 0);
}

static void p8_polyval(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n)
{
    p8_hash(hk, acc, p, n, 1);
}

const struct aeskit_impl aeskit_power8_impl = {
    .name = "power8",
    .cpu_needs = AESKIT_CPU_PPC_VCRYPTO,
    .set_key = p8_set_key,
    .ecb_enc = p8_ecb_enc,
    .ecb_dec = p8_ecb_dec,
    .cbc_enc = p8_cbc_enc,
    .cbc_dec = p8_cbc_dec,
    .cfb_enc = p8_cfb_enc,
    .cfb_dec = p8_cfb_dec,
    .ofb = p8_ofb,
    .ctr = p8_ctr_slot,
    .cbc_mac = p8_cbc_mac,
    .xts = p8_xts,
    .ghash_key = p8_ghash_key,
    .ghash = p8_ghash,
    .polyval = p8_polyval,
    /* ocb, gcm, gcmsiv_open, ctr_cbcmac: NULL (see the top of this file) */
    .constants = (const aeskit_constant[]){
        {"batch_blocks", P8_W},
        {"ghash_batch_blocks", P8_W},
        {NULL, 0},
    },
};
