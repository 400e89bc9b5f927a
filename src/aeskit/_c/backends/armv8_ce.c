/*
 * armv8_ce.c: AES and GHASH with the ARMv8 Crypto Extensions (AArch64
 * little-endian, the AES and PMULL features).
 *
 * Built like every other file (no -march flag): each function that uses the
 * instructions carries a target attribute (CE_FN, CE_INLINE), so nothing
 * else in the build can pick them up, and the table is used only after
 * cpu.c found HWCAP_AES and HWCAP_PMULL. Of the fused sub-tables gcm and
 * ocb are filled (simd_body.h's kernels): a fused kernel earns its place
 * by a count of executed instructions under qemu (next to the table) until
 * a benchmark on the hardware says otherwise; gcmsiv and ccm stay NULL,
 * and the modes use the split slots.
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
 * 0xC2 || 0^56 the same (see aesni.c): blocks byte-reversed into
 * registers, powers stored as H^i * x^-1, Karatsuba's three products per
 * block summed unreduced over 8 blocks and reduced once (aggregated
 * reduction). POLYVAL loads its blocks as they are.
 *
 * The modes and the GHASH/POLYVAL aggregation loops are simd_body.h's,
 * shared with power8.c; this file defines what is ARM's: the rounds (AESE,
 * AESMC, AESD, AESIMC), the key schedule's inverse keys, the lane order of
 * counters, PMULL's multiply and reduction, the byte reversal.
 */
#include <arm_neon.h>
#include <string.h>

#include "common.h"
#include "dispatch.h"

#if !defined(__aarch64__) || !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "armv8_ce.c is for little-endian AArch64"
#endif

/* clang and GCC name the feature differently (compiler.h: MSVC needs none) */
#if defined(__clang__)
#define CE_TARGET AESKIT_TARGET("aes")
#else
#define CE_TARGET AESKIT_TARGET("+crypto")
#endif
#define CE_FN static CE_TARGET
#define CE_INLINE AESKIT_INLINE CE_TARGET
#define CE_W 8
#define CE_UNROLL AESKIT_UNROLL(8) /* CE_W */

/* ---- rounds ------------------------------------------------------------ */

/* SubWord(w): AESE with a zero key on w in all four columns. ShiftRows
 * moves bytes between columns only, and the columns are equal, so lane 0
 * is SubBytes of w alone. */
CE_INLINE uint32_t ce_sub_word(uint32_t w)
{
    const uint8x16_t x = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(x), 0);
}

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

/* For the fused kernels (simd_body.h), on a whitened block (x ^ the first
 * key): AESE takes a zero key first, the first key being in, so the rounds
 * cost what ce_enc_w's do. The state between them lacks the next round
 * key, which the next AESE adds; the last key's step is an EOR. */
CE_INLINE void ce_round_w(const ce_keys *ks, size_t r, uint8x16_t *x, size_t w)
{
    const uint8x16_t k = r == 1 ? vdupq_n_u8(0) : ce_key(ks, (unsigned)r - 1);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaesmcq_u8(vaeseq_u8(x[j], k));
}

/* Rounds r..rounds-1, then the last round's AESE: all up to the last key. */
CE_INLINE void ce_rounds_from_w(const ce_keys *ks, size_t r, uint8x16_t *x, size_t w)
{
    for (; r < ks->rounds; r++)
        ce_round_w(ks, r, x, w);
    const uint8x16_t k = ce_key(ks, ks->rounds - 1);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaeseq_u8(x[j], k);
}

CE_INLINE void ce_mid_w(const ce_keys *ks, uint8x16_t *x, size_t w, int enc)
{
    if (enc) {
        ce_rounds_from_w(ks, 1, x, w);
        return;
    }
    for (unsigned r = 0; r + 1 < ks->rounds; r++) {
        const uint8x16_t k = r == 0 ? vdupq_n_u8(0) : ce_key(ks, r);
        CE_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = vaesimcq_u8(vaesdq_u8(x[j], k));
    }
    const uint8x16_t k = ce_key(ks, ks->rounds - 1);
    CE_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaesdq_u8(x[j], k);
}

/* ---- counters: lanes in memory byte order ------------------------------------ */

/* The counter block of big-endian words hi (bytes 0..7) and lo (8..15). */
AESKIT_INLINE uint8x16_t ce_ctr_block(uint64_t hi, uint64_t lo)
{
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(AESKIT_BSWAP64(hi)),
                                             vcreate_u64(AESKIT_BSWAP64(lo))));
}

/* ---- GHASH and POLYVAL on PMULL --------------------------------------------- */

typedef struct {
    uint64x2_t lo, mid, hi;
} ce_sum;

/* A power of H and its Karatsuba half, as the multiply takes them. */
typedef struct {
    uint64x2_t h, half;
} ce_power;

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

CE_INLINE ce_power ce_forms(uint64x2_t h)
{
    const ce_power f = {h, ce_half(h)};
    return f;
}

CE_INLINE void ce_mul_add(ce_sum *s, uint64x2_t x, const ce_power *h)
{
    s->lo = veorq_u64(s->lo, ce_pmull_lo(x, h->h));
    s->hi = veorq_u64(s->hi, ce_pmull_hi(x, h->h));
    s->mid = veorq_u64(s->mid, ce_pmull_lo(ce_half(x), h->half));
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

/* GHASH's image byte-reversed; POLYVAL's the block as it is. */
CE_INLINE uint64x2_t ce_gblock(const uint8_t *p, int polyval)
{
    const uint8x16_t b = vld1q_u8(p);
    return polyval ? vreinterpretq_u64_u8(b) : ce_rev(b);
}

/* The powers H^i * x^-1 at w[0..CE_W), their halves at CE_KARATSUBA_OFF. */
#define CE_KARATSUBA_OFF (CE_W * AESKIT_BLOCK)

CE_INLINE ce_power ce_power_at(const aeskit_ghash_key *hk, size_t i)
{
    const uint8_t *pw = (const uint8_t *)hk->w;
    const ce_power f = {vld1q_u64((const uint64_t *)(pw + AESKIT_BLOCK * i)),
                        vld1q_u64((const uint64_t *)(pw + CE_KARATSUBA_OFF + AESKIT_BLOCK * i))};
    return f;
}

CE_INLINE void ce_power_put(aeskit_ghash_key *hk, size_t i, const ce_power *f)
{
    uint8_t *out = (uint8_t *)hk->w;
    vst1q_u64((uint64_t *)(out + AESKIT_BLOCK * i), f->h);
    vst1q_u64((uint64_t *)(out + CE_KARATSUBA_OFF + AESKIT_BLOCK * i), f->half);
}

/* ---- the modes: simd_body.h ------------------------------------------------- */

#define SIMD_NAME(x) ce_##x
#define SIMD_FN CE_FN
#define SIMD_INLINE CE_INLINE
#define SIMD_LOCAL CE_FN
#define SIMD_W CE_W
#define SIMD_V uint8x16_t
#define SIMD_LOAD(p) vld1q_u8(p)
#define SIMD_STORE(p, v) vst1q_u8((p), (v))
#define SIMD_XOR(a, b) veorq_u8((a), (b))
#define SIMD_KEYS ce_keys
#define SIMD_LOAD_KEYS(ks, k, dec) ce_load((ks), (k), (dec))
#define SIMD_ENC_W(ks, x, w) ce_enc_w((ks), (x), (w))
#define SIMD_DEC_W(ks, x, w) ce_dec_w((ks), (x), (w))
#define SIMD_SUB_WORD(w) ce_sub_word(w)
#define SIMD_CTR_BLOCK(hi, lo) ce_ctr_block((hi), (lo))
#define SIMD_GV uint64x2_t
#define SIMD_GZERO vdupq_n_u64(0)
#define SIMD_GXOR(a, b) veorq_u64((a), (b))
#define SIMD_GMAKE(hi, lo) vcombine_u64(vcreate_u64(lo), vcreate_u64(hi))
#define SIMD_GSUM ce_sum
#define SIMD_GPOWER ce_power
#define SIMD_GFORMS(h) ce_forms(h)
#define SIMD_GPOWER_AT(hk, i) ce_power_at((hk), (i))
#define SIMD_GPOWER_PUT(hk, i, f) ce_power_put((hk), (i), (f))
#define SIMD_GMUL_ADD(s, x, f) ce_mul_add((s), (x), (f))
#define SIMD_GREDUCE(s) ce_reduce(s)
#define SIMD_GBLOCK(p, polyval) ce_gblock((p), (polyval))
#define SIMD_GSTORE(p, v) vst1q_u8((p), ce_unrev(v))
#define SIMD_ENC_MID_W(ks, x, w) ce_mid_w((ks), (x), (w), 1)
#define SIMD_DEC_MID_W(ks, x, w) ce_mid_w((ks), (x), (w), 0)
#define SIMD_ENC_LAST(x, k) veorq_u8((x), (k))
#define SIMD_DEC_LAST(x, k) veorq_u8((x), (k))
#define SIMD_KEY_FIRST(ks) ce_key((ks), 0)
#define SIMD_KEY_LAST(ks) ce_key((ks), (ks)->rounds)
#define SIMD_ROUND_W(ks, r, x, w) ce_round_w((ks), (r), (x), (w))
#define SIMD_ROUNDS_FROM_W(ks, r, x, w) ce_rounds_from_w((ks), (r), (x), (w))
#define SIMD_KEY_FIRST_BYTES(ks) ((ks)->rk)
#define SIMD_LOAD_ALIGNED(p) vld1q_u8(p)
#define SIMD_STORE_ALIGNED(p, v) vst1q_u8((p), (v))
#if defined(AESKIT_GNU_ASM)
#define SIMD_PIN(v) __asm__("" : "+w"(v))
#else
#define SIMD_PIN(v) ((void)0)
#endif
#include "simd_body.h"
#include "simd_serial.h"

/* ---- key schedule ---------------------------------------------------- */

/* The encryption keys (simd_body.h), then the Equivalent Inverse Cipher's:
 * the last key, AESIMC of the middle ones in reverse, the first. */
CE_FN void ce_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    uint8_t *enc = (uint8_t *)k->rk;
    const unsigned rounds = simd_expand_key(enc, key, len);
    const size_t used = 2 * AESKIT_BLOCK * (rounds + 1);
    uint8_t *dec = enc + AESKIT_BLOCK * (rounds + 1);

    vst1q_u8(dec, vld1q_u8(enc + AESKIT_BLOCK * rounds));
    for (unsigned r = 1; r < rounds; r++)
        vst1q_u8(dec + AESKIT_BLOCK * r, vaesimcq_u8(vld1q_u8(enc + AESKIT_BLOCK * (rounds - r))));
    vst1q_u8(dec + AESKIT_BLOCK * rounds, vld1q_u8(enc));
    memset((uint8_t *)k->rk + used, 0, sizeof k->rk - used);
    k->rounds = rounds;
    k->used = (unsigned)used;
    k->impl = &aeskit_armv8_ce_impl;
}

/* The fused kernels, by executed instructions under qemu-aarch64 -cpu max
 * (AES-128, 16 KiB through the mode, modes/gcm.c and modes/ocb.c, fused
 * against the split slots; -singlestep -d exec,nochain, a 0-byte message's
 * count subtracted): GCM 47863 against 54256 sealing, 47587 against 54256
 * opening (with the kernel's pairs, order and two-batch lag of simd_body.h;
 * the kernel before them: 47194 and 47712 against 54239, -O2 -DNDEBUG
 * both); OCB3 34867 against 61481 sealing, 33498 against 61585 opening:
 * both on. gcmsiv (it would need the short kernel) and ccm are not built. */
static const struct aeskit_gcm_impl ce_gcm_impl = {.crypt = ce_gcm};
static const struct aeskit_ocb_impl ce_ocb_impl = {.crypt = ce_ocb};

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
    .ctr = ce_ctr,
    .cbc_mac = ce_cbc_mac,
    .xts = ce_xts,
    .xts_units = ce_xts_units,
    .ghash_key = ce_ghash_key,
    .ghash = ce_ghash,
    .polyval = ce_polyval,
    .gcm = &ce_gcm_impl,
    .ocb = &ce_ocb_impl,
    /* gcmsiv, ccm: NULL (see the top of this file) */
    .constants = (const aeskit_constant[]){
        {"batch_blocks", CE_W},
        {"ghash_batch_blocks", CE_W},
        {NULL, 0},
    },
    .cbc_x = ce_cbc_x,
    .cbc_x_chains = CE_W,
    .ctr_many_long = AESKIT_CTR_MANY_LONG,
    .gcm_short = ce_gcm_short,
};
