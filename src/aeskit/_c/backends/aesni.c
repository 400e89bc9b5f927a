/*
 * aesni.c: AES with the AES-NI instructions on 128-bit registers.
 *
 * Needs AES-NI, SSSE3 (pshufb, for big-endian counters) and SSE4.1, and
 * PCLMULQDQ for GHASH and POLYVAL. Built as its own library with -maes
 * -mpclmul -mssse3 -msse4.1, and called only after the CPU check. The vaes
 * tables share this key layout and these serial slots (aesni.h).
 *
 * Lanes: one __m128i holds one block in memory byte order. The round keys are
 * bytes too, as FIPS-197 writes them: rk[0..rounds] for encryption, then the
 * Equivalent Inverse Cipher's keys (aesimc of the middle ones, reversed) for
 * aesdec.
 *
 * The parallel modes (ECB, CBC and CFB decryption, CTR, XTS and its data
 * units), the fused OCB3, GCM, CTR-with-CBC-MAC and short GCM-SIV kernels
 * and the GHASH/POLYVAL aggregation are simd_body.h's, shared with
 * armv8_ce.c and power8.c; this file defines what is x86's: the rounds
 * (AESENC, AESDEC), the counter blocks in lanes (pshufb), PCLMULQDQ's
 * multiply and reduction (clmul128.h), and the key schedule.
 *
 * Serial modes (CBC and CFB encryption, OFB, CBC-MAC) are this file's own:
 * bound by rounds x AESENC latency per block (2.5 c/B for AES-128 on Zen 4),
 * they fold the data XOR into the last round key, so the dependency chain
 * is AES rounds and nothing else: aesenclast(x, rk[last] ^ a) =
 * aesenclast(x, rk[last]) ^ a, and choosing a = rk[0] ^ (next data) makes
 * the output the next block's whitened input.
 *
 * GHASH and POLYVAL (clmul128.h): blocks byte-reversed into registers (a
 * POLYVAL block loaded as it is, GHASH's image of its byte reversal),
 * powers stored as H^i * x^-1, 8 or 16 blocks per reduction with the
 * accumulator folded into the first, Karatsuba's three PCLMULQDQ per block
 * (the hi ^ lo half of each power precomputed). Bulk is bound by PCLMULQDQ
 * throughput: Zen 4 issues one every ~2 cycles, so 26 per 128 bytes floor
 * at ~0.4 c/B. A shift-based reduction (24 PCLMULQDQ) is no better in bulk
 * and slower for short inputs. A key made for any call (GCM's) holds 16
 * powers and reduces once per 16 blocks (GHASH 4% faster than with 8 on
 * Zen 3); one made per message (GCM-SIV's, XAES's) at most 8, as it pays
 * for each power in every message. ghash_key layout (hk->w as bytes, read
 * by the GCM kernel too): 32 * i holds H^(i+1) * x^-1 as a register image,
 * 32 * i + 16 its hi ^ lo in the low qword, i = 0..15 (or 0..7), so a short
 * key is one short run of bytes.
 */
#include <string.h>

#include "aesni.h"
#include "clmul128.h"
#include "dispatch.h"
#include "modes/generic.h"
#include "modes/xaes.h"

#define AESNI_W AESKIT_AESNI_W
/* Powers of H in a ghash key: two batches' worth, one reduction for 16
 * blocks in GHASH and the GCM kernel (simd_body.h: simd_gagg). */
#define AESNI_GPOWERS (2 * AESNI_W)

/* aesni_avx.c's build of this file runs its VEX encodings: only where the
 * OS saves YMM state (aesni.h). */
#if defined(AESKIT_AESNI_VEX)
#define AESNI_NEEDS_AVX AESKIT_CPU_AVX
#else
#define AESNI_NEEDS_AVX 0
#endif

/* ---- SubWord, for simd_body.h's word-by-word key schedule --------------- */

/* SubWord(w): aeskeygenassist puts SubWord(dword 1) in dword 0. */
static uint32_t aesni_sub_word(uint32_t w)
{
    __m128i v = _mm_aeskeygenassist_si128(_mm_set1_epi32((int)w), 0);
    return (uint32_t)_mm_cvtsi128_si32(v);
}

/* ---- the primitives of simd_body.h ------------------------------------ */

/* The encryption or the decryption keys, read from the schedule where they
 * are used (one load per round per batch; no copy of them is made). */
typedef struct {
    const uint8_t *rk;
    unsigned rounds;
} aesni_keys;

AESKIT_INLINE void aesni_load_keys(aesni_keys *ks, const aeskit_key *k, int dec)
{
    ks->rk = dec ? aeskit_aesni_dec_keys(k) : aeskit_aesni_enc_keys(k);
    ks->rounds = k->rounds;
}

AESKIT_INLINE void aesni_cipher_w(const aesni_keys *ks, __m128i *x, size_t w, int enc)
{
    aeskit_aesni_whiten(x, w, aeskit_load128(ks->rk));
    aeskit_aesni_rounds(x, w, ks->rk, ks->rounds, enc);
}

/* For OCB: rounds 1..rounds-1 (the middle), and the last round's step
 * taking any key. */
AESKIT_INLINE void aesni_mid_w(const aesni_keys *ks, __m128i *x, size_t w, int enc)
{
    const uint8_t *kend = ks->rk + AESKIT_BLOCK * ks->rounds;
    for (const uint8_t *p = ks->rk + AESKIT_BLOCK; p < kend; p += AESKIT_BLOCK) {
        const __m128i key = aeskit_load128(p);
        AESKIT_UNROLL(8)
        for (size_t j = 0; j < w; j++)
            x[j] = enc ? _mm_aesenc_si128(x[j], key) : _mm_aesdec_si128(x[j], key);
    }
}

/* For the GCM kernel: round r alone, and rounds r..rounds-1. */
AESKIT_INLINE void aesni_round_w(const aesni_keys *ks, size_t r, __m128i *x, size_t w)
{
    const __m128i key = aeskit_load128(ks->rk + AESKIT_BLOCK * r);
    AESKIT_UNROLL(8)
    for (size_t j = 0; j < w; j++)
        x[j] = _mm_aesenc_si128(x[j], key);
}

/* Rounds r..rounds-1, r <= 10: written out, with a branch on the (public)
 * key size for the rounds AES-192 and AES-256 add, not a loop over the
 * schedule: the GCM kernel calls it from round 9, and AES-128's one round
 * left then costs no loop bookkeeping in each batch. */
AESKIT_INLINE void aesni_rounds_from_w(const aesni_keys *ks, size_t r, __m128i *x, size_t w)
{
    assert(r <= 10);
    for (size_t i = r; i < 10; i++)
        aesni_round_w(ks, i, x, w);
    if (ks->rounds > 10) {
        aesni_round_w(ks, 10, x, w);
        aesni_round_w(ks, 11, x, w);
    }
    if (ks->rounds > 12) {
        aesni_round_w(ks, 12, x, w);
        aesni_round_w(ks, 13, x, w);
    }
}

/* For CTR with CBC-MAC: a BE128 counter byte-reversed into a register,
 * advanced with a carry taken from a lane compare, never a branch (EAX's
 * counter is a secret); c + 1 modulo 2^128. */
AESKIT_INLINE __m128i aesni_be128_inc(__m128i c)
{
    c = _mm_add_epi64(c, _mm_set_epi64x(0, 1));
    /* the low lane wrapped to 0: carry into the high one (subtract -1) */
    const __m128i wrapped = _mm_cmpeq_epi64(c, _mm_setzero_si128());
    return _mm_sub_epi64(c, _mm_slli_si128(wrapped, 8));
}

/* For CTR with CBC-MAC: one whitened block x under ks and, when two, one
 * whitened block y under ksy (as many rounds), round by round. */
AESKIT_INLINE void aesni_enc2(const aesni_keys *ks, const aesni_keys *ksy, __m128i *x,
                              __m128i *y, int two)
{
    const uint8_t *rk = ks->rk, *rkc = ksy->rk;
    const unsigned rounds = ks->rounds;
    for (unsigned r = 1; r < rounds; r++) {
        *x = _mm_aesenc_si128(*x, aeskit_load128(rk + AESKIT_BLOCK * r));
        if (two)
            *y = _mm_aesenc_si128(*y, aeskit_load128(rkc + AESKIT_BLOCK * r));
    }
    *x = _mm_aesenclast_si128(*x, aeskit_load128(rk + AESKIT_BLOCK * rounds));
    if (two)
        *y = _mm_aesenclast_si128(*y, aeskit_load128(rkc + AESKIT_BLOCK * rounds));
}


AESKIT_INLINE __m128i aesni_bswap128(void)
{
    return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* CTR: the counter c is kept as an integer in lanes: BE128 and BE32
 * byte-reversed, so the counter part is the low 128 or 32 bits; LE32 as it
 * is in memory. A batch is built in memory order from one shuffle: block
 * j = block 0 + j at the counter's lowest byte (step), valid while that
 * byte does not wrap inside the batch (LE32 adds to the whole 32-bit lane,
 * so it never fails). A big-endian counter wraps its last byte in at most
 * 1 batch in 32; that batch counts in lanes. BE32 (GCM's counter, a secret
 * for a nonce of other than 12 bytes: modes/gcm.c) and BE128_SECRET (EAX's,
 * a MAC of the nonce: modes/eax.c) always count in lanes, the 128-bit carry
 * of each block computed as a value (aesni_ctr_add), so nothing branches
 * on their value; the other branches depend on the kind and on a BE128
 * counter (CTR mode's IV), both public. */
typedef struct {
    __m128i c, swap, step;
} aesni_ctr;

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

/* x[j] = counter block c + j in memory order, j < w; then c += w. */
AESKIT_INLINE void aesni_ctr_fill(enum aeskit_ctr kind, aesni_ctr *ctr, __m128i *x, size_t w)
{
    const __m128i c = ctr->c, swap = ctr->swap, step = ctr->step;
    if (kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_BE128_SECRET ||
        (kind == AESKIT_CTR_BE128 && (aesni_low64(c) & 0xff) > 0x100 - w)) {
        AESKIT_UNROLL(8)
        for (size_t j = 0; j < w; j++)
            x[j] = _mm_shuffle_epi8(aesni_ctr_add(kind, c, j), swap);
    } else {
        x[0] = _mm_shuffle_epi8(c, swap);
        AESKIT_UNROLL(8)
        for (size_t j = 1; j < w; j++)
            x[j] = _mm_add_epi32(x[j - 1], step);
    }
    ctr->c = aesni_ctr_add(kind, c, w);
}

AESKIT_INLINE aesni_ctr aesni_ctr_get(enum aeskit_ctr kind, const uint8_t ctr[16])
{
    const int le = kind == AESKIT_CTR_LE32;
    aesni_ctr c;
    c.swap = le ? _mm_set_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
                : _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    c.step = le ? _mm_set_epi32(0, 0, 0, 1) : _mm_set_epi32(1 << 24, 0, 0, 0);
    c.c = _mm_shuffle_epi8(aeskit_load128(ctr), c.swap);
    return c;
}

/* J0 of a 12-byte nonce (nonce || 1) as a BE32 counter, from general
 * registers (simd_body.h: the gcm_short kernel): c is the block reversed,
 * its big-endian halves as the vector's 64-bit lanes. */
AESKIT_INLINE aesni_ctr aesni_gcm_j0(const uint8_t nonce[12])
{
    aesni_ctr c;
    c.swap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    c.step = _mm_set_epi32(1 << 24, 0, 0, 0);
    c.c = _mm_set_epi64x((long long)aeskit_load_be64(nonce),
                         (long long)((uint64_t)aeskit_load_be32(nonce + 8) << 32 | 1));
    return c;
}

/* GHASH and POLYVAL: a power of H and its Karatsuba half. */
typedef struct {
    __m128i h, half;
} aesni_power;

AESKIT_INLINE aesni_power aesni_forms(__m128i h)
{
    const aesni_power f = {h, aeskit_clmul_half(h)};
    return f;
}

AESKIT_INLINE aesni_power aesni_power_at(const aeskit_ghash_key *hk, size_t i)
{
    const uint8_t *w = (const uint8_t *)hk->w;
    const aesni_power f = {aeskit_load128(w + 2 * AESKIT_BLOCK * i),
                           aeskit_load128(w + 2 * AESKIT_BLOCK * i + AESKIT_BLOCK)};
    return f;
}

AESKIT_INLINE void aesni_power_put(aeskit_ghash_key *hk, size_t i, const aesni_power *f)
{
    uint8_t *w = (uint8_t *)hk->w;
    aeskit_store128(w + 2 * AESKIT_BLOCK * i, f->h);
    aeskit_store128(w + 2 * AESKIT_BLOCK * i + AESKIT_BLOCK, f->half);
}

/* GHASH's image byte-reversed; POLYVAL's the block as it is. */
AESKIT_INLINE __m128i aesni_gblock(const uint8_t *p, int polyval)
{
    const __m128i x = aeskit_load128(p);
    return polyval ? x : _mm_shuffle_epi8(x, aeskit_clmul_bswap());
}

#define SIMD_NAME(x) aeskit_aesni_##x
#define SIMD_FN
#define SIMD_INLINE AESKIT_INLINE
#define SIMD_W AESNI_W
#define SIMD_V __m128i
#define SIMD_LOAD(p) aeskit_load128(p)
#define SIMD_STORE(p, v) aeskit_store128((p), (v))
#define SIMD_XOR(a, b) _mm_xor_si128((a), (b))
#define SIMD_KEYS aesni_keys
#define SIMD_LOAD_KEYS(ks, k, dec) aesni_load_keys((ks), (k), (dec))
#define SIMD_ENC_W(ks, x, w) aesni_cipher_w((ks), (x), (w), 1)
#define SIMD_ENC_W_HEAD(ks, x, w) aeskit_aesni_encrypt_head((x), (w), (ks)->rk, 6)
#define SIMD_ENC_W_TAIL(ks, x, w) aeskit_aesni_encrypt_tail((x), (w), (ks)->rk, (ks)->rounds, 6)
#define SIMD_DEC_W(ks, x, w) aesni_cipher_w((ks), (x), (w), 0)
#define SIMD_SUB_WORD(w) aesni_sub_word(w)
#define SIMD_ENC_MID_W(ks, x, w) aesni_mid_w((ks), (x), (w), 1)
#define SIMD_DEC_MID_W(ks, x, w) aesni_mid_w((ks), (x), (w), 0)
#define SIMD_ENC_LAST(x, k) _mm_aesenclast_si128((x), (k))
#define SIMD_DEC_LAST(x, k) _mm_aesdeclast_si128((x), (k))
#define SIMD_KEY_FIRST(ks) aeskit_load128((ks)->rk)
#define SIMD_KEY_LAST(ks) aeskit_load128((ks)->rk + AESKIT_BLOCK * (ks)->rounds)
#define SIMD_ENC2(ks, ksy, x, y, two) aesni_enc2((ks), (ksy), (x), (y), (two))
#define SIMD_BE128_T __m128i
#define SIMD_BE128_GET(p) _mm_shuffle_epi8(aeskit_load128(p), aesni_bswap128())
#define SIMD_BE128_PUT(p, c) aeskit_store128((p), _mm_shuffle_epi8((c), aesni_bswap128()))
#define SIMD_BE128_BLOCK(c) _mm_shuffle_epi8((c), aesni_bswap128())
#define SIMD_BE128_INC(c) aesni_be128_inc(c)
#define SIMD_KEYS_AT(ks, k, r) ((ks)->rk = (k), (ks)->rounds = (r))
#define SIMD_EXPAND_ENC(rk, lo, hi, rounds) aeskit_aesni_expand_enc((rk), (lo), (hi), (rounds))
#define SIMD_LE32_ADD(v, i) _mm_add_epi32((v), _mm_cvtsi32_si128((int)(i)))
#define SIMD_HALVES(a, b) _mm_unpacklo_epi64((a), (b))
#define SIMD_TOP_SET(v) _mm_or_si128((v), _mm_set_epi32((int)0x80000000, 0, 0, 0))
#define SIMD_TOP_CLEAR(v) _mm_andnot_si128(_mm_set_epi32((int)0x80000000, 0, 0, 0), (v))
#define SIMD_GFROMV(v) (v)
#define SIMD_VFROMG(g) (g)
#define SIMD_SIV_SHORT AESKIT_AESNI_SIV_SHORT
#define SIMD_ROUND_W(ks, r, x, w) aesni_round_w((ks), (r), (x), (w))
#define SIMD_ROUNDS_FROM_W(ks, r, x, w) aesni_rounds_from_w((ks), (r), (x), (w))
#define SIMD_KEY_FIRST_BYTES(ks) ((ks)->rk)
#define SIMD_LOAD_ALIGNED(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define SIMD_STORE_ALIGNED(p, v) _mm_store_si128((__m128i *)(void *)(p), (v))
#if defined(AESKIT_GNU_ASM)
/* An empty asm that takes v in a register and gives it back: the compiler
 * must have computed v here and cannot reassociate across it. */
#define SIMD_PIN(v) __asm__("" : "+x"(v))
#else
#define SIMD_PIN(v) ((void)0)
#endif
#define SIMD_CTR_T aesni_ctr
#define SIMD_CTR_GET(kind, ctr) aesni_ctr_get((kind), (ctr))
#define SIMD_CTR_PUT(kind, ctr, c) aeskit_store128((ctr), _mm_shuffle_epi8((c).c, (c).swap))
#define SIMD_CTR_FILL(kind, c, x, w) aesni_ctr_fill((kind), (c), (x), (w))
#define SIMD_GCM_J0(nonce) aesni_gcm_j0(nonce)
#define SIMD_GV __m128i
#define SIMD_GZERO _mm_setzero_si128()
#define SIMD_GXOR(a, b) _mm_xor_si128((a), (b))
#define SIMD_GMAKE(hi, lo) _mm_set_epi64x((long long)(hi), (long long)(lo))
#define SIMD_GSUM aeskit_clmul_sum
#define SIMD_GPOWER aesni_power
#define SIMD_GFORMS(h) aesni_forms(h)
#define SIMD_GPOWER_AT(hk, i) aesni_power_at((hk), (i))
#define SIMD_GPOWER_PUT(hk, i, f) aesni_power_put((hk), (i), (f))
#define SIMD_GMUL_ADD(s, x, f) aeskit_clmul_mul_add((s), (x), (f)->h, (f)->half)
#define SIMD_GMUL_ADD2(s, a, b, fa, fb) \
    aeskit_clmul_mul_add2((s), (a), (b), (fa)->h, (fa)->half, (fb)->h, (fb)->half)
#define SIMD_GREDUCE(s) aeskit_clmul_reduce(s)
#define SIMD_GPOWERS AESNI_GPOWERS
#define SIMD_GPAIR_T __m128i
#define SIMD_GPAIR(a, b) aeskit_clmul_pair_halves((a), (b))
#define SIMD_GMUL_ADD_PAIR_B(s, b, t, fb) aeskit_clmul_mul_add_pair_b((s), (b), (t), (fb)->h, (fb)->half)
#define SIMD_GMUL_ADD_PAIR_A(s, a, t, fa) aeskit_clmul_mul_add_pair_a((s), (a), (t), (fa)->h, (fa)->half)
#define SIMD_GBLOCK(p, polyval) aesni_gblock((p), (polyval))
#define SIMD_GSTORE(p, v) aeskit_store128((p), _mm_shuffle_epi8((v), aeskit_clmul_bswap()))
#include "aesni_gcm_asm.h"
#include "simd_body.h"

/* ---- the key schedule, in registers ------------------------------------ */

/* Keys expand in registers (keys made per message, GCM-SIV's and
 * XAES-256-GCM's, wait on it), a whole round key at a time: three
 * shifted XORs fold the previous key's words in (the prefix sums of
 * FIPS-197 5.2's w[i] = w[i-nk] ^ t) while t is made, off that chain.
 *
 * t is SubWord of one word (RotWord'd, with the round constant, every nk
 * words) broadcast to all four: a byte shuffle puts the word, rotated or
 * not, in every column, and AESENCLAST with the round constant in every
 * column as its key does SubBytes (ShiftRows moves nothing when the
 * columns are equal) and adds it. AESKEYGENASSIST would do the same in one
 * instruction, but it is slow where it matters: the schedule is one
 * dependency chain through it, and on Intel cores it takes about 12 cycles
 * against AESENCLAST's 3-4 (a per-message AES-256 key took longer than
 * XAES-256-GCM's 64-byte message). The method is OpenSSL's and BoringSSL's
 * (aes_hw_set_encrypt_key_alt). */
AESKIT_INLINE __m128i aesni_fold(__m128i k, __m128i t)
{
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    SIMD_PIN(k);   /* folded first: t, which comes last, takes one XOR */
    return _mm_xor_si128(k, t);
}

/* SubWord(RotWord(word 3 of k)) ^ rc, in every column. */
AESKIT_INLINE __m128i aesni_rot_sub(__m128i k, int rc)
{
    const __m128i rot = _mm_set1_epi32(0x0c0f0e0d);   /* bytes 13, 14, 15, 12 */
    return _mm_aesenclast_si128(_mm_shuffle_epi8(k, rot), _mm_set1_epi32(rc));
}

/* SubWord(word 3 of k), in every column. */
AESKIT_INLINE __m128i aesni_sub(__m128i k)
{
    return _mm_aesenclast_si128(_mm_shuffle_epi32(k, 0xff), _mm_setzero_si128());
}

static void aesni_expand128(uint8_t *enc, __m128i k)
{
    aeskit_store128(enc, k);
#define AESNI_R128(i, rc) (k = aesni_fold(k, aesni_rot_sub(k, rc)), \
                           aeskit_store128(enc + AESKIT_BLOCK * (i), k))
    AESNI_R128(1, 0x01); AESNI_R128(2, 0x02); AESNI_R128(3, 0x04); AESNI_R128(4, 0x08);
    AESNI_R128(5, 0x10); AESNI_R128(6, 0x20); AESNI_R128(7, 0x40); AESNI_R128(8, 0x80);
    AESNI_R128(9, 0x1b); AESNI_R128(10, 0x36);
#undef AESNI_R128
    k = _mm_setzero_si128();
}

/* AES-192: six words per step, carried as a (words 0..3) and b (4..5, in
 * its low half; its high half is not a key's): SubWord(RotWord(word 5)) and
 * the round constant fold into a, whose word 3 then folds into b. Round
 * keys straddle the steps, so each step's words are stored as the halves
 * they make (Intel's AES-NI white paper's layout): b0's two words and a's
 * first two, then a's last two and b's. */
AESKIT_INLINE __m128i aesni_rot_sub1(__m128i k, int rc)   /* of word 1 */
{
    const __m128i rot = _mm_set1_epi32(0x04070605);   /* bytes 5, 6, 7, 4 */
    return _mm_aesenclast_si128(_mm_shuffle_epi8(k, rot), _mm_set1_epi32(rc));
}


static void aesni_expand192(uint8_t *enc, __m128i a, __m128i b)
{
#define AESNI_S192(rc)                                                          \
    (a = aesni_fold(a, aesni_rot_sub1(b, rc)),                                  \
     b = _mm_xor_si128(_mm_xor_si128(b, _mm_slli_si128(b, 4)), _mm_shuffle_epi32(a, 0xff)))
#define AESNI_K192(i, v) aeskit_store128(enc + AESKIT_BLOCK * (i), (v))
/* round keys i, i + 1, i + 2 (12 words) from two steps, b0 the two words
 * before them */
#define AESNI_G192(i, rc1, rc2)                                                           \
    (b0 = b, AESNI_S192(rc1), AESNI_K192((i), _mm_unpacklo_epi64(b0, a)),                 \
     AESNI_K192((i) + 1, _mm_alignr_epi8(b, a, 8)), AESNI_S192(rc2), AESNI_K192((i) + 2, a))
    __m128i b0;
    AESNI_K192(0, a);
    AESNI_G192(1, 0x01, 0x02);
    AESNI_G192(4, 0x04, 0x08);
    AESNI_G192(7, 0x10, 0x20);
    AESNI_G192(10, 0x40, 0x80);
#undef AESNI_G192
#undef AESNI_S192
#undef AESNI_K192
    a = b = b0 = _mm_setzero_si128();
}

/* Round r of the cipher with key on x[0..w), as the schedule makes it. */
AESKIT_INLINE void aesni_ride(__m128i *x, size_t w, __m128i key, unsigned r)
{
    AESKIT_UNROLL(16)
    for (size_t j = 0; j < w; j++)
        x[j] = r < 14 ? _mm_aesenc_si128(x[j], key) : _mm_aesenclast_si128(x[j], key);
}

/* Even round keys take SubWord(RotWord) of the odd key before them and the
 * round constant; odd ones SubWord alone of the even key before them.
 * The blocks x[0..w) (w a constant at each call), already whitened with a,
 * go through the rounds as their keys are made; enc NULL (a constant):
 * the keys are not stored. */
AESKIT_INLINE void aesni_expand256(uint8_t *enc, __m128i a, __m128i b, __m128i *x, size_t w)
{
#define AESNI_K256(i, k) (enc != NULL ? aeskit_store128(enc + AESKIT_BLOCK * (i), (k)) : (void)0)
    AESNI_K256(0, a);
    AESNI_K256(1, b);
    aesni_ride(x, w, b, 1);
#define AESNI_R256(i, rc)                                                                  \
    (a = aesni_fold(a, aesni_rot_sub(b, rc)), AESNI_K256((i), a), aesni_ride(x, w, a, (i)), \
     (i) < 14 ? (b = aesni_fold(b, aesni_sub(a)), AESNI_K256((i) + 1, b),                  \
                 aesni_ride(x, w, b, (i) + 1))                                             \
              : (void)0)
    AESNI_R256(2, 0x01); AESNI_R256(4, 0x02); AESNI_R256(6, 0x04); AESNI_R256(8, 0x08);
    AESNI_R256(10, 0x10); AESNI_R256(12, 0x20); AESNI_R256(14, 0x40);
#undef AESNI_R256
#undef AESNI_K256
    a = b = _mm_setzero_si128();
}

/* rk[0..rounds] of key into enc; returns rounds. */
AESKIT_INLINE unsigned aesni_expand(uint8_t *enc, const uint8_t *key, size_t len)
{
    assert(len == 16 || len == 24 || len == 32);
    if (len == 16)
        aesni_expand128(enc, aeskit_load128(key));
    else if (len == 32)
        aesni_expand256(enc, aeskit_load128(key), aeskit_load128(key + 16), NULL, 0);
    else
        aesni_expand192(enc, aeskit_load128(key), _mm_loadl_epi64((const __m128i *)(const void *)(key + 16)));
    return (unsigned)(len / 4) + 6;
}

void aeskit_aesni_expand_enc_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    k->rounds = aesni_expand((uint8_t *)k->rk, key, len);
    k->used = AESKIT_BLOCK * (k->rounds + 1);
}

void aeskit_aesni_expand_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    uint8_t *enc = (uint8_t *)k->rk;
    const unsigned rounds = aesni_expand(enc, key, len);
    const size_t used = 2 * AESKIT_BLOCK * (rounds + 1);
    uint8_t *dec = enc + AESKIT_BLOCK * (rounds + 1);

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
    assert(rounds == 10 || rounds == 12 || rounds == 14);
    if (rounds == 10)
        aesni_expand128(enc, lo);
    else if (rounds == 12)
        aesni_expand192(enc, lo, hi);
    else
        aesni_expand256(enc, lo, hi, NULL, 0);
}

static void aesni_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_aesni_expand_key(k, key, len);
    k->impl = &aeskit_aesni_impl;
}

static void aesni_set_enc_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_aesni_expand_enc_key(k, key, len);
    k->impl = &aeskit_aesni_impl;
}

/* ---- XAES-256-GCM's per-message key (the xaes sub-table) ------------- */

/* modes/xaes.h: Kx's two blocks under k, side by side; Kx expanded with
 * H = E(Kx, 0) (its whitening is Kx's first half itself) and E(Kx, J0)
 * riding on its round keys, two blocks in the pass that made one. The vaes
 * tables share it: their keys are aesni's. */

/* Kx's two halves into x[0], x[1]: the blocks 00 0i 'X' 00 || nonce[0..12]
 * ^ k1 under k. */
AESKIT_INLINE void aesni_xaes_kx(__m128i x[2], const aeskit_key *k, const uint8_t k1[16],
                                 const uint8_t nonce[24])
{
    assert(k->rounds == 14);
    /* nonce[0..12] moved up to bytes 4..15 (the load stays inside the 24
     * bytes), then the counter and label in bytes 0..3 */
    const __m128i n = _mm_xor_si128(_mm_slli_si128(aeskit_load128(nonce), 4), aeskit_load128(k1));
    x[0] = _mm_xor_si128(n, _mm_set_epi32(0, 0, 0, 0x00580100));
    x[1] = _mm_xor_si128(n, _mm_set_epi32(0, 0, 0, 0x00580200));
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    aeskit_aesni_whiten(x, 2, aeskit_load128(rk));
    aeskit_aesni_rounds(x, 2, rk, 14, 1);
}

static void aesni_xaes_key(const aeskit_key *k, const uint8_t k1[16], const uint8_t nonce[24],
                           aeskit_key *kx, uint8_t h[16], uint8_t ek_j0[16])
{
    /* J0 = nonce[12..24] || 0^31 || 1, read before anything is written */
    const __m128i j0 = _mm_or_si128(_mm_srli_si128(aeskit_load128(nonce + 8), 4),
                                    _mm_set_epi32(0x01000000, 0, 0, 0));
    __m128i x[2];
    aesni_xaes_kx(x, k, k1, nonce);
    __m128i s[2] = {x[0], _mm_xor_si128(j0, x[0])};   /* whitened by rk[0] = Kx's first half */
    aesni_expand256((uint8_t *)kx->rk, x[0], x[1], s, 2);
    aeskit_store128(h, s[0]);
    aeskit_store128(ek_j0, s[1]);
    kx->rounds = 14;
    kx->used = AESKIT_BLOCK * 15;
    kx->impl = k->impl;
    x[0] = x[1] = s[0] = s[1] = _mm_setzero_si128();
}

#define AESNI_XAES_SHORT AESKIT_AESNI_XAES_SHORT
#define AESNI_XAES_DATA (AESNI_XAES_SHORT - 1)   /* the most data blocks */

/* s[0] = H and s[1..w) = E(Kx, J0 + j - 1), riding on Kx's schedule (not
 * stored). w a constant at each call. */
AESKIT_INLINE void aesni_xaes_stream(__m128i *s, size_t w, const __m128i kx[2], __m128i j0)
{
    s[0] = kx[0];   /* 0 ^ rk[0] */
    AESKIT_UNROLL(16)
    for (size_t j = 1; j < w; j++)   /* the counter's low byte starts at 1: no carry */
        s[j] = _mm_xor_si128(_mm_add_epi32(j0, _mm_set_epi32((int)((j - 1) << 24), 0, 0, 0)),
                             kx[0]);
    aesni_expand256(NULL, kx[0], kx[1], s, w);
}

/* modes/xaes.h: the GHASH powers H^1..H^n as a tree (aeskit_power_split),
 * the message's blocks summed under one reduction. */
static int aesni_xaes_short(const aeskit_key *k, const uint8_t k1[16], const uint8_t nonce[24],
                            int enc, const uint8_t *aad, size_t aad_len, uint8_t *dst,
                            const uint8_t *src, size_t len, uint8_t out[16])
{
    if (aad_len > 16 * AESNI_XAES_SHORT || len > 16 * AESNI_XAES_DATA)
        return 0;
    const size_t na = (aad_len + 15) / 16, nd = (len + 15) / 16, n = na + nd + 1;
    if (n > AESNI_XAES_SHORT)
        return 0;
    struct {   /* wiped in one call */
        uint8_t x[AESNI_XAES_SHORT * AESKIT_BLOCK];   /* AAD | data | lengths */
        uint8_t hb[AESKIT_BLOCK];
        __m128i kx[2], s[1 + 1 + AESNI_XAES_DATA], pw[AESNI_XAES_SHORT];
    } t;
    uint8_t *const x = t.x, *const hb = t.hb;
    __m128i *const kx = t.kx, *const s = t.s, *const pw = t.pw;

    /* everything read before anything is written */
    const __m128i j0 = _mm_or_si128(_mm_srli_si128(aeskit_load128(nonce + 8), 4),
                                    _mm_set_epi32(0x01000000, 0, 0, 0));
    aesni_xaes_kx(kx, k, k1, nonce);
    memset(x, 0, AESKIT_BLOCK * n);
    if (aad_len > 0)
        memcpy(x, aad, aad_len);
    uint8_t *xd = x + AESKIT_BLOCK * na;
    if (len > 0)
        memcpy(xd, src, len);
    aeskit_store_be64(x + AESKIT_BLOCK * (n - 1), (uint64_t)aad_len * 8);
    aeskit_store_be64(x + AESKIT_BLOCK * (n - 1) + 8, (uint64_t)len * 8);

    /* H, E(Kx, J0) and the keystream for 3 or 7 blocks */
    if (nd <= 3)
        aesni_xaes_stream(s, 5, kx, j0);
    else
        aesni_xaes_stream(s, 2 + AESNI_XAES_DATA, kx, j0);
    aeskit_store128(hb, s[0]);
    pw[0] = aeskit_clmul_h_xinv(hb);
    for (size_t i = 2; i <= n; i++) {
        const size_t a = aeskit_power_split(i);
        pw[i - 1] = aeskit_clmul_mul(pw[i - a - 1], pw[a - 1]);
    }

    /* encrypting, the ciphertext is hashed; its last block's padding
     * zeroed again */
    if (enc) {
        for (size_t j = 0; j < nd; j++)
            aeskit_store128(xd + AESKIT_BLOCK * j,
                            _mm_xor_si128(aeskit_load128(xd + AESKIT_BLOCK * j), s[2 + j]));
        memset(xd + len, 0, AESKIT_BLOCK * nd - len);
    }
    aeskit_clmul_sum sum = aeskit_clmul_zero();
    for (size_t j = 0; j < n; j++) {
        const __m128i h = pw[n - 1 - j];
        aeskit_clmul_mul_add(&sum, _mm_shuffle_epi8(aeskit_load128(x + AESKIT_BLOCK * j),
                                                    aeskit_clmul_bswap()),
                             h, aeskit_clmul_half(h));
    }
    const __m128i y = _mm_shuffle_epi8(aeskit_clmul_reduce(sum), aeskit_clmul_bswap());
    if (!enc) {
        for (size_t j = 0; j < nd; j++)
            aeskit_store128(xd + AESKIT_BLOCK * j,
                            _mm_xor_si128(aeskit_load128(xd + AESKIT_BLOCK * j), s[2 + j]));
    }
    if (len > 0)
        memcpy(dst, xd, len);
    aeskit_store128(out, _mm_xor_si128(y, s[1]));

    aeskit_secure_zero(&t, sizeof t);
    return 1;
}

const struct aeskit_xaes_impl aeskit_aesni_xaes = {
    .key = aesni_xaes_key,
    .short_msg = aesni_xaes_short,
};

/* ---- serial modes ------------------------------------------------------ */

/* Rounds 1..rounds-1 of one block: the serial modes do the last one. */
AESKIT_INLINE __m128i aesni_enc_middle1(__m128i x, const uint8_t *rk, unsigned rounds)
{
    const uint8_t *last = rk + AESKIT_BLOCK * rounds;
    for (const uint8_t *p = rk + AESKIT_BLOCK; p < last; p += AESKIT_BLOCK)
        x = _mm_aesenc_si128(x, aeskit_load128(p));
    return x;
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

static const struct aeskit_gcm_impl aesni_gcm = {.crypt = aeskit_aesni_gcm};
static const struct aeskit_gcmsiv_impl aesni_gcmsiv = {
    .open = aeskit_aesni_gcmsiv_open,
    .short_msg = aeskit_aesni_gcmsiv_short,
};
static const struct aeskit_ocb_impl aesni_ocb = {.crypt = aeskit_aesni_ocb};
const struct aeskit_ccm_impl aeskit_aesni_ccm = {.ctr_cbcmac = aeskit_aesni_ctr_cbcmac};

const struct aeskit_impl aeskit_aesni_impl = {
    .name = "aesni",
    .cpu_needs = AESKIT_CPU_AES | AESKIT_CPU_PCLMUL | AESKIT_CPU_SSSE3 | AESKIT_CPU_SSE41
                 | AESNI_NEEDS_AVX,
    .set_key = aesni_set_key,
    .ecb_enc = aeskit_aesni_ecb_enc,
    .ecb_dec = aeskit_aesni_ecb_dec,
    .cbc_enc = aeskit_aesni_cbc_enc,
    .cbc_dec = aeskit_aesni_cbc_dec,
    .cfb_enc = aeskit_aesni_cfb_enc,
    .cfb_dec = aeskit_aesni_cfb_dec,
    .ofb = aeskit_aesni_ofb,
    .ctr = aeskit_aesni_ctr,
    .cbc_mac = aeskit_aesni_cbc_mac,
    .xts = aeskit_aesni_xts,
    .xts_units = aeskit_aesni_xts_units,
    .ghash_key = aeskit_aesni_ghash_key,
    .ghash = aeskit_aesni_ghash,
    .polyval = aeskit_aesni_polyval,
    .set_enc_key = aesni_set_enc_key,
    .gcm = &aesni_gcm,
    .gcmsiv = &aesni_gcmsiv,
    .ocb = &aesni_ocb,
    .ccm = &aeskit_aesni_ccm,
    .xaes = &aeskit_aesni_xaes,
    .constants = (const aeskit_constant[]){
        {"batch_blocks", AESNI_W},
        {"gcmsiv_short_blocks", AESKIT_AESNI_SIV_SHORT},
        {"xaes_short_blocks", AESKIT_AESNI_XAES_SHORT},
        {"gcm_batch_blocks", AESKIT_AESNI_GCM_W},
        {"ocb_batch_blocks", AESKIT_AESNI_OCB_W},
        {"ghash_batch_blocks", AESNI_W},
        {NULL, 0},
    },
    .cbc_x = aeskit_aesni_cbc_x,
    .cbc_x_chains = AESNI_W,
    /* 4-block messages (64 bytes) into the gathered ECB pass, not a ctr
     * slot call each: aesni 64-byte CCM x 4096 packed 64.0 -> 61.7 ns a
     * message (Zen 3; 128-byte ones unchanged, 9 made them slower) */
    .ctr_many_long = AESKIT_CTR_MANY_LONG + 1,
    .gcm_short = aeskit_aesni_gcm_short,
};
