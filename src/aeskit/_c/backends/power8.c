/*
 * power8.c: AES and GHASH/POLYVAL with the POWER8 (ISA 2.07) vector crypto
 * instructions: vcipher, vcipherlast, vncipher, vncipherlast, vsbox and
 * vpmsumd, 64-bit POWER8 or later, big- and little-endian.
 *
 * Built as its own library with -mcpu=power8 -maltivec -mvsx (meson.build)
 * and called only after cpu.c found PPC_FEATURE2_VEC_CRYPTO in AT_HWCAP2.
 * Of the fused sub-tables only ocb is filled (simd_body.h's kernel): a
 * fused kernel earns its place by a count of executed instructions under
 * qemu (next to the table) until a benchmark on the hardware says
 * otherwise; gcm, gcmsiv and ccm stay NULL.
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
 * GHASH: the method of clmul128.h (see aesni.c) on vpmsumd, which
 * multiplies both 64-bit halves of its operands and XORs the two products.
 * With one operand's other half zero that is one product, and with it
 * swapped it is Karatsuba's whole middle term, so each power of H is kept
 * in three forms (high half alone, low half alone, swapped) and a block
 * costs three vpmsumd with no Karatsuba fix-up. Powers are H^i * x^-1, 8
 * blocks summed unreduced, one reduction by 0xC2 || 0^56 per 8 blocks. A
 * block read big-endian is already GHASH's register image (x86 byte-swaps
 * for it); POLYVAL's blocks are the byte-reversed loads.
 *
 * The modes and the GHASH/POLYVAL aggregation loops are simd_body.h's,
 * shared with armv8_ce.c; this file defines what is POWER's: the byte
 * order, the rounds (vcipher, vncipher), vsbox for the key schedule, the
 * lanes of counters, vpmsumd's multiply and reduction.
 */
#include <altivec.h>
#include <string.h>

#include "common.h"
#include "dispatch.h"

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

#define P8_INLINE AESKIT_INLINE
#define P8_W 8
#define P8_UNROLL AESKIT_UNROLL(8) /* P8_W */

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

/* ---- rounds ------------------------------------------------------------ */

/* SubWord(w): vsbox is SubBytes alone, byte by byte. */
P8_INLINE uint32_t p8_sub_word(uint32_t w)
{
    __vector unsigned int v = {w, w, w, w};
    v = (__vector unsigned int)__builtin_crypto_vsbox((p8v)v);
    return v[0];
}

/* The round keys, read from the schedule where they are used (one load,
 * and on little-endian one vperm, per round per batch; no copy of them is
 * made). Both directions use the same keys. */
typedef struct {
    const uint8_t *rk;
    unsigned rounds;
    int dec;   /* which end the fused kernels' first and last keys are at */
} p8_keys;

P8_INLINE void p8_load_keys(p8_keys *ks, const aeskit_key *k, int dec)
{
    ks->rk = (const uint8_t *)k->rk;
    ks->rounds = k->rounds;
    ks->dec = dec;
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

/* For the fused kernels (simd_body.h): round r alone, the rounds from r up
 * to the last key's step, that step with any key (vcipherlast and
 * vncipherlast end in the key's XOR), and the keys at both ends. */
P8_INLINE void p8_round_w(const p8_keys *ks, size_t r, p8v *x, size_t w)
{
    const p8v k = p8_key(ks, (unsigned)r);
    P8_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = __builtin_crypto_vcipher(x[j], k);
}

P8_INLINE void p8_rounds_from_w(const p8_keys *ks, size_t r, p8v *x, size_t w)
{
    for (; r < ks->rounds; r++)
        p8_round_w(ks, r, x, w);
}

P8_INLINE void p8_mid_w(const p8_keys *ks, p8v *x, size_t w, int enc)
{
    if (enc) {
        p8_rounds_from_w(ks, 1, x, w);
        return;
    }
    for (unsigned r = ks->rounds - 1; r > 0; r--) {
        const p8v k = p8_key(ks, r);
        P8_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = __builtin_crypto_vncipher(x[j], k);
    }
}

/* ---- GHASH and POLYVAL on vpmsumd -------------------------------------------- */

/* A power of H in vpmsumd's three forms: high half alone (x * hh = x.hi *
 * h.hi), low half alone (x.lo * h.lo) and swapped (x.hi * h.lo ^ x.lo *
 * h.hi, Karatsuba's middle term). */
typedef struct {
    p8v hh, ll, sw;
} p8_power;

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

/* Power i's forms at w + sizeof(p8_power) * i (vec_xst and vec_xl agree on
 * any byte order; the key never leaves this backend). */
P8_INLINE void p8_power_put(aeskit_ghash_key *hk, size_t i, const p8_power *f)
{
    unsigned long long *out = (unsigned long long *)((uint8_t *)hk->w + sizeof *f * i);
    vec_xst(f->hh, 0, out);
    vec_xst(f->ll, 16, out);
    vec_xst(f->sw, 32, out);
}

P8_INLINE p8_power p8_power_at(const aeskit_ghash_key *hk, size_t i)
{
    const unsigned long long *p =
        (const unsigned long long *)((const uint8_t *)hk->w + sizeof(p8_power) * i);
    const p8_power f = {vec_xl(0, p), vec_xl(16, p), vec_xl(32, p)};
    return f;
}

/* A block read big-endian is GHASH's register image; POLYVAL's is the
 * byte-reversed load. */
P8_INLINE p8v p8_gblock(const uint8_t *p, int polyval)
{
    return polyval ? p8_load_reversed(p) : p8_load(p);
}

/* ---- the modes: simd_body.h ------------------------------------------------- */

#define SIMD_NAME(x) p8_##x
#define SIMD_FN static
#define SIMD_INLINE P8_INLINE
#define SIMD_W P8_W
#define SIMD_V p8v
#define SIMD_LOAD(p) p8_load(p)
#define SIMD_STORE(p, v) p8_store((p), (v))
#define SIMD_XOR(a, b) vec_xor((a), (b))
#define SIMD_KEYS p8_keys
#define SIMD_LOAD_KEYS(ks, k, dec) p8_load_keys((ks), (k), (dec))   /* the same keys */
#define SIMD_ENC_W(ks, x, w) p8_enc_w((ks), (x), (w))
#define SIMD_DEC_W(ks, x, w) p8_dec_w((ks), (x), (w))
#define SIMD_SUB_WORD(w) p8_sub_word(w)
#define SIMD_CTR_BLOCK(hi, lo) p8_make((hi), (lo))
#define SIMD_GV p8v
#define SIMD_GZERO ((p8v){0, 0})
#define SIMD_GXOR(a, b) vec_xor((a), (b))
#define SIMD_GMAKE(hi, lo) p8_make((hi), (lo))
#define SIMD_GSUM p8_sum
#define SIMD_GPOWER p8_power
#define SIMD_GFORMS(h) p8_forms(h)
#define SIMD_GPOWER_AT(hk, i) p8_power_at((hk), (i))
#define SIMD_GPOWER_PUT(hk, i, f) p8_power_put((hk), (i), (f))
#define SIMD_GMUL_ADD(s, x, f) p8_mul_add((s), (x), (f))
#define SIMD_GREDUCE(s) p8_reduce(s)
#define SIMD_GBLOCK(p, polyval) p8_gblock((p), (polyval))
#define SIMD_GSTORE(p, v) p8_store((p), (v))
#define SIMD_ENC_MID_W(ks, x, w) p8_mid_w((ks), (x), (w), 1)
#define SIMD_DEC_MID_W(ks, x, w) p8_mid_w((ks), (x), (w), 0)
#define SIMD_ENC_LAST(x, k) __builtin_crypto_vcipherlast((x), (k))
#define SIMD_DEC_LAST(x, k) __builtin_crypto_vncipherlast((x), (k))
#define SIMD_KEY_FIRST(ks) p8_key((ks), (ks)->dec ? (ks)->rounds : 0)
#define SIMD_KEY_LAST(ks) p8_key((ks), (ks)->dec ? 0 : (ks)->rounds)
/* No GCM kernel here (SIMD_ROUND_W and the rest undefined): see the table. */
#include "simd_body.h"
#include "simd_serial.h"

/* ---- key schedule ---------------------------------------------------- */

/* The encryption keys alone (simd_body.h): vncipher takes them in reverse. */
static void p8_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    const unsigned rounds = simd_expand_key((uint8_t *)k->rk, key, len);
    const size_t used = AESKIT_BLOCK * (rounds + 1);

    memset((uint8_t *)k->rk + used, 0, sizeof k->rk - used);
    k->rounds = rounds;
    k->used = (unsigned)used;
    k->impl = &aeskit_power8_impl;
}

/* The fused kernels, by executed instructions under qemu-ppc64le -cpu
 * power9 (AES-128, 16 KiB through the mode, modes/gcm.c and modes/ocb.c,
 * fused against the split slots): OCB3 29169 against 68538 sealing, 27634
 * against 68750 opening: on. GCM 52127 against 47411 sealing, 52545
 * against 47608 opening: off (vpmsumd does a block's GHASH in three
 * instructions with no fix-up, so the split ghash slot is already lean,
 * and the stitched batch's counter stores and reloads cost more than they
 * save); gcmsiv (it would need the short kernel) and ccm are not built. */
static const struct aeskit_ocb_impl p8_ocb_impl = {.crypt = p8_ocb};

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
    .ctr = p8_ctr,
    .cbc_mac = p8_cbc_mac,
    .xts = p8_xts,
    .xts_units = p8_xts_units,
    .ghash_key = p8_ghash_key,
    .ghash = p8_ghash,
    .polyval = p8_polyval,
    .ocb = &p8_ocb_impl,
    /* gcm, gcmsiv, ccm: NULL (see the top of this file) */
    .constants = (const aeskit_constant[]){
        {"batch_blocks", P8_W},
        {"ghash_batch_blocks", P8_W},
        {NULL, 0},
    },
    .cbc_x = p8_cbc_x,
    .cbc_x_chains = P8_W,
    .ctr_many_long = AESKIT_CTR_MANY_LONG,
    .gcm_short = p8_gcm_short,
};
