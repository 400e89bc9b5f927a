/*
 * vaes_body.h: the parallel AES modes on VAES, written once for any vector
 * width and instantiated by vaes_avx2.c (ymm) and vaes_avx512.c (zmm).
 * Contracts: aeskit.h. The including file first includes its width layer
 * (vaes_ymm.h or vaes_zmm.h: VAES_VL, the vector type and every wrapper
 * whose instruction differs by width), then defines
 *   VAES_NV       vectors per main-loop iteration
 *   VAES_FN(x)    the name of this width's static function x
 *   VAES_IMPL     this width's table (declared in dispatch.h, defined by
 *                 vaes_table.h)
 * and is built with the instruction sets that width needs, in its own
 * library, called only after the CPU check. Nothing below depends on the
 * width but through those names.
 *
 * Why: VAES runs the AES round on every 128-bit lane of a ymm or zmm
 * register. On Zen 4, measured with independent chains (cycles per block
 * for 10 rounds): xmm 5.0 (2 blocks per cycle), ymm 2.5 with 8 registers in
 * flight (5.0 with 4: latency 4, two units), zmm 2.5 with 4 or 8 registers
 * in flight: 4 blocks per cycle either way, so the floor for AES-128 is
 * 0.156 c/B and AES-256 0.219. Every other vector op competes for the same
 * pipes: 1 XOR per register per 10 rounds cost 2%, 3 XORs cost 20%. So the
 * kernels spend as few non-AES ops as the algebra allows (below).
 *
 * Keys: aesni's layout (aesni.h), untouched: this table's set_key is
 * aesni's expansion. Each round key is broadcast to every lane straight from
 * there once per round per batch (vbroadcasti128 / vbroadcasti32x4, a load):
 * no copy of the key schedule is made, and one load per VAES_NV VAES
 * instructions costs nothing.
 *
 * Lanes: lane l of vector j of a batch holds block VAES_BPV * j + l, in
 * memory byte order. Batches of VAES_NV vectors (VAES_W blocks), then at
 * most one of VAES_NV / 2; what is left runs one vector at a time, the
 * last one partial (plain 256- and 128-bit moves), so nothing outside the
 * n blocks is read or written. Those vectors are independent of each other
 * in every mode here, so out-of-order execution overlaps them as it would
 * a batch; the half batch keeps a 256-byte call in one batch when W = 32.
 *
 * In place: every batch loads all its input (and the chaining block the
 * next batch needs) before its first store.
 *
 * XORs folded where the algebra allows: aesenclast(x, k) ^ d =
 * aesenclast(x, k ^ d) (likewise aesdeclast), so the data XOR of CTR and
 * CFB and the chaining XOR of CBC ride on the last round key; whitening
 * with rk[0] is the one XOR left per vector, and CTR folds even its counter
 * increment into that XOR (see the CTR section).
 */
/* The vaes tables run only where the OS saves YMM state: they call aesni's
 * VEX build (aesni.h). */
#define AESKIT_AESNI_VEX 1
#include "aesni.h"
#include "clmul128.h"
#include "dispatch.h"
#include "modes/generic.h"
#include "modes/chains.h"   /* aeskit_cbc_lines_alike, for cbc_x */

#if !defined(VAES_VL)
#error "include the width layer (vaes_ymm.h or vaes_zmm.h) first"
#endif

#define VAES_W (VAES_NV * VAES_BPV)       /* blocks per main-loop batch */
#define VAES_UNROLL AESKIT_UNROLL(8) /* >= VAES_NV */
#if defined(AESKIT_GNU_ASM)
/* Keeps sums where the code puts them: without it GCC held each product of
 * a fused GCM batch apart to add them up at the end, spilling ~24 zmm. */
#ifndef VAES_PIN   /* tests/emu/vaes_emu.h has its own: its __m512i is no register */
#define VAES_PIN(a, b, c) __asm__("" : "+v"(a), "+v"(b), "+v"(c))
#endif
/* p's value made unknown to the compiler, so loads through it stay in the
 * loop that has it: GCC hoisted cbc_x's round keys out of its steps into
 * ymm registers and spilled 7 of 8 chains to the stack each step instead. */
#define VAES_HIDE(p) __asm__("" : "+r"(p))
#else
#define VAES_PIN(a, b, c) ((void)0)
#define VAES_HIDE(p) ((void)0)
#endif

static_assert(VAES_NV <= 8, "VAES_UNROLL unrolls 8");
static_assert(VAES_NV % 2 == 0 && (VAES_NV * VAES_BPV) % 16 == 0,
              "a batch is whole groups of 16 counters, and halves");

/* ---- width-generic from here on ------------------------------------- */

/* Round key i of schedule rk in every lane. */
AESKIT_INLINE vaes_v vaes_key(const uint8_t *rk, unsigned i)
{
    return vaes_bcast(aeskit_load128(rk + AESKIT_BLOCK * i));
}

/* Blocks in vector j of a w-vector batch whose last vector has `last`. */
AESKIT_INLINE size_t vaes_nb(size_t j, size_t w, size_t last)
{
    return j == w - 1 ? last : VAES_BPV;
}

AESKIT_INLINE void vaes_round_with(vaes_v *x, size_t w, vaes_v key, int enc)
{
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = enc ? vaes_enc(x[j], key) : vaes_dec(x[j], key);
}

AESKIT_INLINE void vaes_round(vaes_v *x, size_t w, const uint8_t *rk, unsigned i, int enc)
{
    vaes_round_with(x, w, vaes_key(rk, i), enc);
}

/* Rounds 1..rounds-1 (enc: the cipher, else the Equivalent Inverse
 * Cipher) on w vectors already whitened with rk[0]; the caller does the
 * last round with its own folded key. Straight-line code: as a loop over
 * rounds, the compiler copies every register at each iteration (8 moves
 * per 8 VAES in the ymm CTR loop), which keeps ECB off its floor. */
AESKIT_INLINE void vaes_middle_from(vaes_v *x, size_t w, const uint8_t *rk, unsigned rounds,
                                  int enc, unsigned first)
{
    assert(rounds == 10 || rounds == 12 || rounds == 14);
    assert(first >= 1 && first <= 10);
    AESKIT_UNROLL(9)
    for (unsigned i = first; i < 10; i++)
        vaes_round(x, w, rk, i, enc);
    if (rounds > 10) {
        vaes_round(x, w, rk, 10, enc);
        vaes_round(x, w, rk, 11, enc);
    }
    if (rounds > 12) {
        vaes_round(x, w, rk, 12, enc);
        vaes_round(x, w, rk, 13, enc);
    }
}

/* The same from round `first` (a constant, 1..10): the caller ran the
 * rounds before it, with work of its own between them. */
AESKIT_INLINE void vaes_middle(vaes_v *x, size_t w, const uint8_t *rk, unsigned rounds,
                             int enc)
{
    vaes_middle_from(x, w, rk, rounds, enc, 1);
}

AESKIT_INLINE vaes_v vaes_last(vaes_v x, vaes_v key, int enc)
{
    return enc ? vaes_enclast(x, key) : vaes_declast(x, key);
}

/* ---- ECB ------------------------------------------------------------- */

AESKIT_INLINE void vaes_ecb_batch(const uint8_t *rk, unsigned rounds, int enc, uint8_t *dst,
                                const uint8_t *src, size_t w, size_t last)
{
    const vaes_v k0 = vaes_key(rk, 0), kl = vaes_key(rk, rounds);
    vaes_v x[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_xor(vaes_load_part(src + VAES_VL * j, vaes_nb(j, w, last)), k0);
    vaes_middle(x, w, rk, rounds, enc);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        vaes_store_part(dst + VAES_VL * j, vaes_last(x[j], kl, enc), vaes_nb(j, w, last));
}

AESKIT_INLINE void vaes_ecb(const uint8_t *rk, unsigned rounds, int enc, uint8_t *dst,
                          const uint8_t *src, size_t n)
{
    for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W)
        vaes_ecb_batch(rk, rounds, enc, dst, src, VAES_NV, VAES_BPV);
    if (n >= VAES_W / 2) {
        vaes_ecb_batch(rk, rounds, enc, dst, src, VAES_NV / 2, VAES_BPV);
        n -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W;
    }
    while (n > 0) {
        const size_t nb = n < VAES_BPV ? n : VAES_BPV;
        vaes_ecb_batch(rk, rounds, enc, dst, src, 1, nb);
        n -= nb, src += 16 * nb, dst += 16 * nb;
    }
}

/* Calls of at most VAES_FEW blocks (a GCM message's E(J0), a short
 * message's counters) go to aesni's 128-bit code, valid on this key (see
 * set_key below): one vector would do them in as many rounds, but building
 * its lanes costs a short GCM message more than the rounds. */
#define VAES_FEW 4

static void VAES_FN(ecb_enc)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n <= VAES_FEW)
        aeskit_aesni_ecb_enc(k, dst, src, n);
    else
        vaes_ecb(aeskit_aesni_enc_keys(k), k->rounds, 1, dst, src, n);
}

static void VAES_FN(ecb_dec)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n <= VAES_FEW)
        aeskit_aesni_ecb_dec(k, dst, src, n);
    else
        vaes_ecb(aeskit_aesni_dec_keys(k), k->rounds, 0, dst, src, n);
}

/* ---- CBC and CFB decryption -------------------------------------------
 * Both need, for each ciphertext block C[i], its predecessor C[i-1]: for
 * vector j >= 1 of a batch that is one unaligned load 16 bytes back
 * (inside the batch); vector 0 shifts the carried block prev into lane 0.
 *   CBC: P[i] = D(C[i]) ^ C[i-1]: last round key rk'[last] ^ C[i-1].
 *   CFB: P[i] = E(C[i-1]) ^ C[i]: last round key rk[last] ^ C[i].
 * Returns the batch's last ciphertext block, loaded before any store. */

AESKIT_INLINE vaes_v vaes_prev_blocks(__m128i prev, vaes_v c0, const uint8_t *src, size_t j,
                                    size_t nb)
{
    return j == 0 ? vaes_shift_in(prev, c0)
                  : vaes_load_part(src + VAES_VL * j - AESKIT_BLOCK, nb);
}

AESKIT_INLINE __m128i vaes_chain_batch(const uint8_t *rk, unsigned rounds, int cbc,
                                     __m128i prev, uint8_t *dst, const uint8_t *src,
                                     size_t w, size_t last)
{
    const vaes_v k0 = vaes_key(rk, 0), kl = vaes_key(rk, rounds);
    const vaes_v c0 = vaes_load_part(src, vaes_nb(0, w, last));
    const __m128i next = aeskit_load128(src + VAES_VL * (w - 1) + AESKIT_BLOCK * (last - 1));
    vaes_v x[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        const vaes_v in = !cbc ? vaes_prev_blocks(prev, c0, src, j, nb)
                          : j == 0 ? c0 : vaes_load_part(src + VAES_VL * j, nb);
        x[j] = vaes_xor(in, k0);
    }
    vaes_middle(x, w, rk, rounds, !cbc);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        const vaes_v d = cbc ? vaes_prev_blocks(prev, c0, src, j, nb)
                         : j == 0 ? c0 : vaes_load_part(src + VAES_VL * j, nb);
        x[j] = vaes_last(x[j], vaes_xor(kl, d), !cbc);
    }
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        vaes_store_part(dst + VAES_VL * j, x[j], vaes_nb(j, w, last));
    return next;
}

AESKIT_INLINE void vaes_chain_dec(const uint8_t *rk, unsigned rounds, int cbc, uint8_t iv[16],
                                uint8_t *dst, const uint8_t *src, size_t n)
{
    __m128i prev = aeskit_load128(iv);
    for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W)
        prev = vaes_chain_batch(rk, rounds, cbc, prev, dst, src, VAES_NV, VAES_BPV);
    if (n >= VAES_W / 2) {
        prev = vaes_chain_batch(rk, rounds, cbc, prev, dst, src, VAES_NV / 2, VAES_BPV);
        n -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W;
    }
    while (n > 0) {
        const size_t nb = n < VAES_BPV ? n : VAES_BPV;
        prev = vaes_chain_batch(rk, rounds, cbc, prev, dst, src, 1, nb);
        n -= nb, src += 16 * nb, dst += 16 * nb;
    }
    aeskit_store128(iv, prev);
}

static void VAES_FN(cbc_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                             const uint8_t *src, size_t n)
{
    vaes_chain_dec(aeskit_aesni_dec_keys(k), k->rounds, 1, iv, dst, src, n);
}

static void VAES_FN(cfb_dec)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                             const uint8_t *src, size_t n)
{
    vaes_chain_dec(aeskit_aesni_enc_keys(k), k->rounds, 0, iv, dst, src, n);
}

/* ---- CTR --------------------------------------------------------------
 * The counter c lives in an __m128i as an integer in lanes: BE128 and BE32
 * byte-reversed (the counter part is then the low 128 or 32 bits), LE32 as
 * it is in memory; swap turns it into the block and back.
 *
 * Batches: when c's lowest byte is a multiple of 16, the 16 counters
 * c .. c + 15 differ from c only in that byte, and there c + i = c ^ i. So
 * with B = block(c) ^ rk[0], whitened counter block i is B ^ J[i], J[i]
 * holding i at the counter's lowest byte (byte 15 for BE, byte 0 for LE32):
 * one XOR per vector builds and whitens its counters, where an add and an
 * XOR would compete twice with the AES rounds. Each group of 16 blocks of
 * a batch takes its own B, from c advanced with every carry once per group;
 * a head of 0..15 blocks brings c to that alignment.
 *
 * Head and tail: one vector at a time, each lane's counter c + l built with
 * a lane-wise add (128-bit with carry for BE128, 32-bit otherwise).
 * Branches depend on the kind and, for BE128 (CTR mode's IV) and LE32
 * (GCM-SIV's tag), on the counter's value, both public; BE32 is GCM's,
 * secret for a nonce of other than 12 bytes, so the ctr slot takes it
 * without a head or any branch on its value: an add and a shuffle per
 * vector, hidden behind the rounds (vaes_avx2's GCM runs its bulk here).
 * BE128_SECRET (EAX's counter, a MAC of the nonce) goes the same way with
 * a lane-wise 128-bit add (vaes_add128, its carry a compare mask) and c
 * advanced with the carry computed as a value (vaes_ctr_add).
 * The whitened blocks are never stored. */

#define VAES_G (16 / VAES_BPV) /* vectors per group of 16 counters */

/* c + j: modulo 2^128 for BE128 and BE128_SECRET, 2^32 in lane 0
 * otherwise. BE128's carry into the high half is a branch, taken once in
 * 2^64 / j calls: computed as a value it would move data between the
 * integer and vector units in every batch. BE128_SECRET pays that move:
 * its carry is a value. */
AESKIT_INLINE __m128i vaes_ctr_add(enum aeskit_ctr kind, __m128i c, size_t j)
{
    if (kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_LE32)
        return _mm_add_epi32(c, _mm_cvtsi32_si128((int)j));
    if (kind == AESKIT_CTR_BE128_SECRET) {
        const uint64_t lo = (uint64_t)_mm_cvtsi128_si64(c);
        const uint64_t carry = lo + j < lo;
        return _mm_add_epi64(c, _mm_set_epi64x((long long)carry, (long long)j));
    }
    const __m128i s = _mm_add_epi64(c, _mm_cvtsi64_si128((long long)j));
    if ((uint64_t)_mm_cvtsi128_si64(c) <= UINT64_MAX - j)
        return s;
    return _mm_add_epi64(s, _mm_set_epi64x(1, 0));
}

/* Encrypts the counter blocks x[] (whitened) and XORs them with src into
 * dst; the data rides on the last round key. */
AESKIT_INLINE void vaes_ctr_crypt(const uint8_t *rk, unsigned rounds, vaes_v *x, uint8_t *dst,
                                const uint8_t *src, size_t w, size_t last)
{
    const vaes_v kl = vaes_key(rk, rounds);
    vaes_middle(x, w, rk, rounds, 1);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        const vaes_v d = vaes_load_part(src + VAES_VL * j, nb);
        vaes_store_part(dst + VAES_VL * j, vaes_enclast(x[j], vaes_xor(kl, d)), nb);
    }
}

/* x[0..w-1] = the whitened counter blocks (k0 = rk[0]) of w full vectors
 * from c, whose lowest byte is a multiple of 16; returns c + w * VAES_BPV. */
AESKIT_INLINE __m128i vaes_ctr_whiten_k0(__m128i k0, enum aeskit_ctr kind, __m128i c,
                                       __m128i swap, const vaes_v *J, vaes_v *x, size_t w)
{
    VAES_UNROLL
    for (size_t g = 0; g < w; g += VAES_G) {
        const size_t gw = w - g < VAES_G ? w - g : VAES_G;
        const vaes_v base = vaes_bcast(_mm_xor_si128(_mm_shuffle_epi8(c, swap), k0));
        VAES_UNROLL
        for (size_t j = 0; j < gw; j++)
            x[g + j] = vaes_xor(base, J[j]);
        c = vaes_ctr_add(kind, c, VAES_BPV * gw);
    }
    return c;
}

/* BE32 counter blocks without the alignment above: lane l of vector j is
 * c + VAES_BPV * j + l, a 32-bit add on the lane integers (modulo 2^32, as
 * inc32), swapped to memory order and whitened with k0: no branch and no
 * alignment depend on c. L[j] holds VAES_BPV * j + l in lane l's low 32
 * bits (vaes_ctr32_offsets). Returns c + VAES_BPV * w. */
AESKIT_INLINE __m128i vaes_ctr32_whiten(vaes_v k0, __m128i c, vaes_v vswap, const vaes_v *L,
                                      vaes_v *x, size_t w)
{
    const vaes_v cv = vaes_bcast(c);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_xor(vaes_shuffle8(vaes_add32(cv, L[j]), vswap), k0);
    return _mm_add_epi32(c, _mm_cvtsi32_si128((int)(VAES_BPV * w)));
}

/* The same for BE128_SECRET: a lane-wise 128-bit add (L[j] < 2^64). */
AESKIT_INLINE __m128i vaes_ctr128_whiten(vaes_v k0, __m128i c, vaes_v vswap, const vaes_v *L,
                                       vaes_v *x, size_t w)
{
    const vaes_v cv = vaes_bcast(c);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_xor(vaes_shuffle8(vaes_add128(cv, L[j]), vswap), k0);
    return vaes_ctr_add(AESKIT_CTR_BE128_SECRET, c, VAES_BPV * w);
}

/* L[j]: lane l holds VAES_BPV * j + l in its low 32 bits, the rest zero
 * (so also as a 64-bit or 128-bit integer). */
AESKIT_INLINE void vaes_ctr32_offsets(vaes_v *L)
{
    const vaes_v index = vaes_lane_index();
    VAES_UNROLL
    for (size_t j = 0; j < VAES_NV; j++)
        L[j] = vaes_add32(index, vaes_bcast(_mm_cvtsi32_si128((int)(VAES_BPV * j))));
}

/* w full vectors from c, whose lowest byte is a multiple of 16; returns
 * c + w * VAES_BPV. */
AESKIT_INLINE __m128i vaes_ctr_batch(const uint8_t *rk, unsigned rounds, enum aeskit_ctr kind,
                                   __m128i c, __m128i swap, const vaes_v *J, uint8_t *dst,
                                   const uint8_t *src, size_t w)
{
    vaes_v x[VAES_NV];
    c = vaes_ctr_whiten_k0(aeskit_load128(rk), kind, c, swap, J, x, w);
    vaes_ctr_crypt(rk, rounds, x, dst, src, w, VAES_BPV);
    return c;
}

/* The swap that turns kind's counter block into lane integers and back. */
AESKIT_INLINE __m128i vaes_ctr_swap(enum aeskit_ctr kind)
{
    return kind == AESKIT_CTR_LE32
        ? _mm_set_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
        : _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* J[j]: lane l holds VAES_BPV * j + l at the counter's lowest byte (see
 * above), for the VAES_G vectors of a group of 16. */
AESKIT_INLINE void vaes_ctr_offsets(__m128i swap, vaes_v *J)
{
    const vaes_v vswap = vaes_bcast(swap), index = vaes_lane_index();
    VAES_UNROLL
    for (size_t j = 0; j < VAES_G; j++)
        J[j] = vaes_shuffle8(
            vaes_add32(index, vaes_bcast(_mm_cvtsi32_si128((int)(VAES_BPV * j)))), vswap);
}

/* Blocks before c's lowest byte is a multiple of 16. */
AESKIT_INLINE size_t vaes_ctr_head(__m128i c)
{
    return (0u - (uint32_t)_mm_cvtsi128_si32(c)) & 15;
}

/* n blocks, one vector at a time, from any counter; returns c + n. */
AESKIT_INLINE __m128i vaes_ctr_single(const uint8_t *rk, unsigned rounds, enum aeskit_ctr kind,
                                    __m128i c, __m128i swap, uint8_t *dst,
                                    const uint8_t *src, size_t n)
{
    const vaes_v k0 = vaes_key(rk, 0), vswap = vaes_bcast(swap);
    const vaes_v index = vaes_lane_index();
    while (n > 0) {
        const size_t nb = n < VAES_BPV ? n : VAES_BPV;
        const vaes_v cv = vaes_bcast(c);
        const vaes_v lanes = kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_BE128_SECRET
                                 ? vaes_add128(cv, index)
                                 : vaes_add32(cv, index);
        vaes_v x[1] = {vaes_xor(vaes_shuffle8(lanes, vswap), k0)};
        vaes_ctr_crypt(rk, rounds, x, dst, src, 1, nb);
        c = vaes_ctr_add(kind, c, nb);
        n -= nb, src += 16 * nb, dst += 16 * nb;
    }
    return c;
}

static void VAES_FN(ctr)(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                         uint8_t *dst, const uint8_t *src, size_t n)
{
    assert(kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_LE32 ||
           kind == AESKIT_CTR_BE128_SECRET);
    if (n == 0)
        return;
    if (n <= VAES_FEW) {
        aeskit_aesni_ctr(k, kind, ctr, dst, src, n);
        return;
    }
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    const __m128i swap = vaes_ctr_swap(kind);
    __m128i c = _mm_shuffle_epi8(aeskit_load128(ctr), swap);

    if (kind == AESKIT_CTR_BE32 || kind == AESKIT_CTR_BE128_SECRET) {
        /* GCM's counter, a secret for a nonce of other than 12 bytes
         * (modes/gcm.c), and EAX's: no head and no branch on c, each
         * batch's counters made by a lane-wise add (vaes_ctr32_whiten,
         * vaes_ctr128_whiten). */
        vaes_v L[VAES_NV], x[VAES_NV];
        const vaes_v k0 = vaes_key(rk, 0), vswap = vaes_bcast(swap);
        vaes_ctr32_offsets(L);
        for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W) {
            if (kind == AESKIT_CTR_BE32)
                c = vaes_ctr32_whiten(k0, c, vswap, L, x, VAES_NV);
            else
                c = vaes_ctr128_whiten(k0, c, vswap, L, x, VAES_NV);
            vaes_ctr_crypt(rk, rounds, x, dst, src, VAES_NV, VAES_BPV);
        }
        c = vaes_ctr_single(rk, rounds, kind, c, swap, dst, src, n);
        aeskit_store128(ctr, _mm_shuffle_epi8(c, swap));
        return;
    }
    const size_t head = vaes_ctr_head(c);
    if (n >= head + VAES_W / 2) {
        c = vaes_ctr_single(rk, rounds, kind, c, swap, dst, src, head);
        n -= head, src += 16 * head, dst += 16 * head;

        vaes_v J[VAES_G];
        vaes_ctr_offsets(swap, J);
        for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W)
            c = vaes_ctr_batch(rk, rounds, kind, c, swap, J, dst, src, VAES_NV);
        if (n >= VAES_W / 2) {
            c = vaes_ctr_batch(rk, rounds, kind, c, swap, J, dst, src, VAES_NV / 2);
            n -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W;
        }
    }
    c = vaes_ctr_single(rk, rounds, kind, c, swap, dst, src, n);
    aeskit_store128(ctr, _mm_shuffle_epi8(c, swap));
}

/* ---- XTS --------------------------------------------------------------
 * Block i is E(P_i ^ T_i) ^ T_i (D for decryption), T_i = T * x^i in
 * GF(2^128) modulo x^128 + x^7 + x^2 + x + 1, a tweak read as a
 * little-endian 128-bit number (IEEE 1619 5.2): in a lane as loaded, bit b
 * is the coefficient of x^b, the low 64-bit half bits 0..63.
 *
 * Lanes: vector m of a call holds T_(VAES_BPV * m + l) in lane l, so
 * vector m + 4 is vector m times x^k, k = 4 * VAES_BPV bits (8 on ymm, 16
 * on zmm), a whole number of bytes. Writing a lane t = h * x^(128 - k) + r,
 * h its top k bits, t * x^k = (t << k mod 2^128) ^ h * 0x87, as x^128 =
 * x^7 + x^2 + x + 1. The lane rotated left by k bits (a byte rotation,
 * vpalignr), rot = (t << k) ^ h, already holds h in its low k bits, so
 *     t * x^k = rot ^ h ^ h * 0x87 = rot ^ (rot & (2^k - 1)) * 0x86,
 * the product of degree below k + 8 <= 64 in the lanes' low halves, with
 * no reduction. On ymm it is one carry-less multiply, and a step
 * (vaes_xts_step) one shuffle, an AND, the multiply and an XOR. On zmm
 * (VAES_XTS_SHIFTS) it is h * 0x86 = (h << 1) ^ (h << 2) ^ (h << 7), h
 * below 2^16: three vpsllq of 64-bit elements, no bit crossing into the
 * high half, their XORs with rot in two vpternlogq. On Zen 4 a zmm
 * VPCLMULQDQ takes a cycle of the AES units, which a batch keeps busy;
 * the shifts and XORs run beside them: 16 KiB, kernel_time's minimum, old
 * and new builds alternated, time over ECB's at the same key size, AES-128
 * 1.19 -> 1.12 (decryption 1.18-1.19 -> 1.11), AES-256 1.14-1.15 ->
 * 1.08 (1.12-1.13 -> 1.09); `aeskit bench` 1.17x -> 1.08x floor (AES-128).
 * On ymm the shifts measured slower (AES-128 1.33-1.34x ECB's time ->
 * 1.37-1.38x; AES-256 1.24-1.26x -> 1.27-1.28x: there the XORs are not
 * folded, and the step is not what bounds the loop: below), so ymm keeps
 * the multiply. Shifting the whole lane instead (h
 * brought down by vpsrldq, the rest moved up by vpslldq) takes two
 * shuffles, and on Zen 4 a shuffle may take a pipe the AES rounds need,
 * where the AND runs on any vector ALU. aesni's doubling of one block
 * after another in general registers would serialize the batch; each step
 * here depends on one 4 vectors back.
 *
 * Where the registers allow it (VAES_XTS_SPARE: zmm, 32 of them), three
 * things more:
 * - The last round key rides in the tweaks: the window holds w = t ^ kl
 *   (kl the last round key in every lane), so a vector's last round is
 *   aesenclast(x, w) = aesenclast(x, kl) ^ t (likewise aesdeclast) with no
 *   XOR, and its whitening data ^ w ^ (k0 ^ kl) one vpternlogq. A step is
 *   linear, so the next entry, t * x^k ^ kl, is w * x^k ^ c with c = kl *
 *   x^k ^ kl: c goes into the step's first vpternlogq. 8 ops a vector
 *   besides its 10..14 AES rounds (the step's shuffle, AND, three shifts
 *   and two vpternlogq, the whitening's vpternlogq); with the multiply it
 *   was 5, but its cycle on the AES units cost more than three ops more
 *   (above).
 * - A step is needed only 4 vectors later: the steps that vectors of the
 *   same batch take come with the whitening, the last 4 (the next batch's
 *   window) one after each of rounds 1 to 4, so the rounds start as soon as
 *   the data is whitened and the steps fill gaps between them (against all
 *   steps first: 1-2% less time on an Emerald Rapids).
 * - xts_units builds the next unit's window one unit ahead (below).
 * On ymm (16 registers) each of these cost more than it saved: the
 * constants and the entries held through the rounds made GCC spill inside
 * the main loop (34 stack accesses per batch instead of 24; 2-5% slower on
 * the Emerald Rapids), so ymm keeps every step with the whitening, the
 * last round's XOR, and 7 ops a vector. On Zen 4 too (16 KiB, time over
 * ECB's, alternated): all three with the stash, AES-128 1.33x -> 1.34-
 * 1.38x, AES-256 1.25x -> 1.23-1.25x; only the steps between rounds 1 to
 * 4, 1.31-1.72x (noisy: the old build also had a 1.76x run) and 1.24x.
 * Folding kl or k0 into the entries moves an XOR into the step without a
 * vpternlogq, so ymm stays at 7.
 *
 * A window of 4 vectors, u[], holds the tweaks of the next 4 vectors; a
 * vector takes u[0] and leaves in its place its step, and the window turns
 * by one. Batches of VAES_NV vectors (8: 16 blocks on ymm, 32 on zmm, as
 * ECB and CTR, which keep the AES units busy at that width: vaes_avx2.c,
 * vaes_avx512.c), then at most one of VAES_NV / 2, are whole turns; what
 * is left goes one vector at a time, the last one partial.
 *
 * The first window: lane l of vector m (m < 4) is T * x^s, s = VAES_BPV *
 * m + l <= 15, from T in every lane: each 64-bit half shifted left by s
 * (vpsllvq), the bits that leave it (the half shifted right by 64 - s:
 * none for s = 0, a count of 64 giving zero) go from the low half into the
 * high (vpslldq by 8) and from the high half, c of degree below s, round
 * to the bottom as c * 0x87 (a carry-less multiply, degree below 23). 5
 * ops a vector (6 with kl folded in), independent of each other, once per
 * data unit.
 *
 * Registers: on zmm a batch's 8 data vectors, their 8 tweak vectors and
 * the window stay in registers through the main loop. On ymm they cannot:
 * the tweaks wait out the rounds in a stash on the stack and come back as
 * memory operands of the last round's XORs (VAES_XTS_STASH, the width
 * layer's); a compiler barrier keeps GCC from holding them in registers,
 * which made it spill tweaks and a data vector to stack slots of its own
 * choosing. Stores and loads, no vector ALU op. The stash and the
 * window's home on the stack (where both widths keep it between the
 * loops) are wiped at the end, as aesni's tweak buffer is.
 *
 * The tweak is a secret (the encrypted sector number): nothing branches on
 * it or indexes with it; branches depend on n only. The tweak handed back,
 * T * x^n, is lane 0 of u[0], or, after a partial vector of nb blocks,
 * lane nb of that vector's tweaks (kl taken out again where folded). */

/* Blocks in the window, 4 vectors: also k, the power of x from a window
 * vector to its step (a tweak advances by x per block). */
#define VAES_XTS_K (4 * VAES_BPV)
static_assert(VAES_XTS_K % 8 == 0 && VAES_XTS_K + 8 <= 64,
              "a step is a byte rotation and a product within the low half");
static_assert(VAES_NV % 4 == 0, "batches and half batches turn the window whole");

#define VAES_XTS_SPARE (!VAES_XTS_STASH)   /* registers to spare: see above */

/* Left and right shift counts, in both halves of each lane, for the
 * first window: s = VAES_BPV * m + l and 64 - s in lane l of vector m,
 * the vectors one after the other (zmm's 16 lanes; ymm reads the first 8). */
static const uint64_t vaes_xts_shl[32] = {
    0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
    8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15,
};
static const uint64_t vaes_xts_shr[32] = {
    64, 64, 63, 63, 62, 62, 61, 61, 60, 60, 59, 59, 58, 58, 57, 57,
    56, 56, 55, 55, 54, 54, 53, 53, 52, 52, 51, 51, 50, 50, 49, 49,
};
static_assert(sizeof vaes_xts_shl == 4 * 64, "the first window's counts for zmm");
static_assert(sizeof vaes_xts_shl >= VAES_NV * VAES_VL || VAES_VL == 64,
              "the first whole chunk's counts for ymm's general-register tweaks");

/* What a call derives once from its key, in every lane. */
typedef struct {
    vaes_v poly;   /* 0x86 in the low half: h * 0x87 ^ h */
    vaes_v mask;   /* 2^k - 1: h's bits in a rotated lane */
    vaes_v c;      /* folded: kl * x^k ^ kl, a step's correction */
    vaes_v k0;     /* the whitening key: k0, or k0 ^ kl where kl is folded */
    vaes_v kl;     /* the last round key */
} vaes_xts_consts;

/* rot ^ c ^ (rot & (2^k - 1)) * 0x86, with or without c (has_c): the
 * product one multiply, or with VAES_XTS_SHIFTS h * 0x86 = (h << 1) ^
 * (h << 2) ^ (h << 7), h below 2^k, k + 7 < 64: no bit leaves the low
 * half, and the five terms go into two vpternlogq. */
AESKIT_INLINE vaes_v vaes_xts_next(vaes_v rot, vaes_v c, int has_c, const vaes_xts_consts *q)
{
    const vaes_v h = vaes_and(rot, q->mask);
    if (VAES_XTS_SHIFTS) {
        const vaes_v h1 = vaes_slli64(h, 1);
        const vaes_v r = has_c ? vaes_xor3(rot, c, h1) : vaes_xor(rot, h1);
        return vaes_xor3(r, vaes_slli64(h, 2), vaes_slli64(h, 7));
    }
    const vaes_v prod = vaes_clmul(h, q->poly, 0x00);
    return has_c ? vaes_xor3(rot, c, prod) : vaes_xor(rot, prod);
}

/* t * x^k, and w * x^k ^ c where kl is folded (w = t ^ kl). */
AESKIT_INLINE vaes_v vaes_xts_step(vaes_v t, const vaes_xts_consts *q)
{
    return vaes_xts_next(vaes_rotl_bytes(t, VAES_XTS_K / 8), q->c, VAES_XTS_SPARE, q);
}

AESKIT_INLINE void vaes_xts_setup(const uint8_t *rk, unsigned rounds, vaes_xts_consts *q)
{
    q->poly = vaes_bcast(_mm_cvtsi32_si128(0x86));
    q->mask = vaes_bcast(_mm_cvtsi32_si128((1 << VAES_XTS_K) - 1));
    q->kl = vaes_key(rk, rounds);
    q->k0 = vaes_key(rk, 0);
    q->c = vaes_zero();
    if (VAES_XTS_SPARE) {
        q->c = vaes_xts_next(vaes_rotl_bytes(q->kl, VAES_XTS_K / 8), q->kl, 1, q);
        q->k0 = vaes_xor(q->k0, q->kl);
    }
}

/* u[m], lane l = T * x^(VAES_BPV * m + l) (^ kl where folded), m = 0..3. */
AESKIT_INLINE void vaes_xts_first(__m128i tweak, const vaes_xts_consts *q, vaes_v *u)
{
    const vaes_v poly = vaes_bcast(_mm_cvtsi32_si128(0x87)), t = vaes_bcast(tweak);
    for (size_t m = 0; m < 4; m++) {
        const vaes_v shl = vaes_load((const uint8_t *)vaes_xts_shl + VAES_VL * m);
        const vaes_v shr = vaes_load((const uint8_t *)vaes_xts_shr + VAES_VL * m);
        const vaes_v out = vaes_srlv64(t, shr);
        u[m] = vaes_xor3(vaes_sllv64(t, shl), vaes_bslli8(out), vaes_clmul(out, poly, 0x01));
        if (VAES_XTS_SPARE)
            u[m] = vaes_xor(u[m], q->kl);
    }
}

/* w vectors, the last with `last` blocks, vector j with the window entry
 * u[j % 4], each replaced by its step as it is taken; then u turned so that
 * u[0] holds the next vector's. With VAES_XTS_STASH the entries go through
 * stash (VAES_NV vectors) during the rounds. Returns the last vector's
 * entry. All the input is loaded before the first store (in place). */
AESKIT_INLINE vaes_v vaes_xts_batch(const uint8_t *rk, unsigned rounds, int enc, vaes_v *u,
                                  const vaes_xts_consts *q, uint8_t *stash, uint8_t *dst,
                                  const uint8_t *src, size_t w, size_t last)
{
    /* steps of vectors from `later` on wait for rounds 1..4 */
    const size_t later = !VAES_XTS_SPARE ? w : w < 4 ? 0 : w - 4;
    vaes_v x[VAES_NV], t[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        t[j] = u[j % 4];
        if (j < later)
            u[j % 4] = vaes_xts_step(t[j], q);
        x[j] = vaes_xor3(vaes_load_part(src + VAES_VL * j, vaes_nb(j, w, last)), t[j], q->k0);
        if (VAES_XTS_STASH)
            vaes_store(stash + VAES_VL * j, t[j]);
    }
    if (VAES_XTS_STASH)
        AESKIT_BARRIER();
    AESKIT_UNROLL(4)
    for (unsigned i = 1; i <= 4; i++) {
        vaes_round(x, w, rk, i, enc);
        if (later + i - 1 < w)
            u[(later + i - 1) % 4] = vaes_xts_step(t[later + i - 1], q);
    }
    vaes_middle_from(x, w, rk, rounds, enc, 5);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const vaes_v tj = VAES_XTS_STASH ? vaes_load(stash + VAES_VL * j) : t[j];
        vaes_store_part(dst + VAES_VL * j,
                        vaes_last(x[j], VAES_XTS_SPARE ? tj : vaes_xor(q->kl, tj), enc),
                        vaes_nb(j, w, last));
    }
    for (size_t r = 0; r < w % 4; r++) {
        const vaes_v first = u[0];
        u[0] = u[1], u[1] = u[2], u[2] = u[3], u[3] = first;
    }
    return t[w - 1];
}

/* n > 0 blocks of one data unit from the window u (vaes_xts_first's);
 * returns the tweak that would follow them. */
AESKIT_INLINE __m128i vaes_xts_run(const uint8_t *rk, unsigned rounds, int enc, vaes_v *u,
                                   const vaes_xts_consts *q, uint8_t *stash, uint8_t *dst,
                                   const uint8_t *src, size_t n)
{
    for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W)
        vaes_xts_batch(rk, rounds, enc, u, q, stash, dst, src, VAES_NV, VAES_BPV);
    if (n >= VAES_W / 2) {
        vaes_xts_batch(rk, rounds, enc, u, q, stash, dst, src, VAES_NV / 2, VAES_BPV);
        n -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W;
    }
    vaes_v t = u[0];
    size_t nb = VAES_BPV;
    while (n > 0) {
        nb = n < VAES_BPV ? n : VAES_BPV;
        t = vaes_xts_batch(rk, rounds, enc, u, q, stash, dst, src, 1, nb);
        n -= nb, src += 16 * nb, dst += 16 * nb;
    }
    const __m128i next = nb < VAES_BPV ? vaes_lane_high(t, nb) : vaes_low128(u[0]);
    return VAES_XTS_SPARE ? _mm_xor_si128(next, vaes_low128(q->kl)) : next;
}

AESKIT_INLINE void vaes_xts(const uint8_t *rk, unsigned rounds, int enc, uint8_t tweak[16],
                          uint8_t *dst, const uint8_t *src, size_t n)
{
    vaes_xts_consts q;
    uint8_t stash[VAES_XTS_STASH ? VAES_NV * VAES_VL : 1];
    vaes_v u[4];
    vaes_xts_setup(rk, rounds, &q);
    vaes_xts_first(aeskit_load128(tweak), &q, u);
    aeskit_store128(tweak, vaes_xts_run(rk, rounds, enc, u, &q, stash, dst, src, n));
    if (VAES_XTS_STASH)
        aeskit_secure_zero(stash, sizeof stash);
    aeskit_secure_zero(u, sizeof u);
}

/* The xts_units slot's pass: each unit's window built from its own tweak
 * and its blocks run as vaes_xts runs them, with no call, wipe or tweak
 * store between units. A call per 4 KiB sector cost aesni 4-7% over one
 * long unit; these kernels, twice as fast per block, would pay that
 * restart twice over. The next unit's window depends on nothing in flight,
 * yet built where its unit starts it comes after a whole batch of rounds
 * in the instruction stream, which the core, its schedulers full of those
 * rounds, reaches late: the unit's first rounds wait out the window's
 * latency (shifts, a multiply, XORs). With VAES_XTS_SPARE it is built one
 * unit ahead, before the current unit's run, and waits in next[] on the
 * stack (wiped at the end) until its turn: on an Emerald Rapids, sectors
 * of 4 KiB went from 3.6-4.4% over one unit of the same length to 1.0-1.5%
 * (AES-128). */
AESKIT_INLINE void vaes_xts_units(const uint8_t *rk, unsigned rounds, int enc,
                                  const uint8_t *tweaks, size_t unit, uint8_t *dst,
                                  const uint8_t *src, size_t units)
{
    vaes_xts_consts q;
    uint8_t stash[VAES_XTS_STASH ? VAES_NV * VAES_VL : 1];
    uint8_t next[VAES_XTS_SPARE ? 4 * VAES_VL : 1];
    vaes_v u[4];
    vaes_xts_setup(rk, rounds, &q);
    for (size_t i = 0; i < units; i++) {
        if (!VAES_XTS_SPARE || i == 0)
            vaes_xts_first(aeskit_load128(tweaks + AESKIT_BLOCK * i), &q, u);
        else
            for (size_t m = 0; m < 4; m++)
                u[m] = vaes_load(next + VAES_VL * m);
        if (VAES_XTS_SPARE && i + 1 < units) {
            vaes_v v[4];
            vaes_xts_first(aeskit_load128(tweaks + AESKIT_BLOCK * (i + 1)), &q, v);
            for (size_t m = 0; m < 4; m++)
                vaes_store(next + VAES_VL * m, v[m]);
        }
        (void)vaes_xts_run(rk, rounds, enc, u, &q, stash, dst, src, unit);
        dst += AESKIT_BLOCK * unit, src += AESKIT_BLOCK * unit;
    }
    if (VAES_XTS_STASH)
        aeskit_secure_zero(stash, sizeof stash);
    if (VAES_XTS_SPARE)
        aeskit_secure_zero(next, sizeof next);
    aeskit_secure_zero(u, sizeof u);
}

#if VAES_XTS_GPR
/* ---- XTS with the tweaks in general registers (ymm) ---------------------
 * VAES_XTS_GPR (vaes_ymm.h): the vector steps above cost 7 non-AES vector
 * ops a ymm vector, and on Zen 3 the carry-less multiply takes a turn of
 * the AES units. Here the tweaks wait in a stash of two halves, one whole
 * chunk (VAES_W blocks) each, written one chunk ahead; a vector's whitening
 * is data ^ k0 ^ its stashed pair (a memory operand) and its last round
 * key kl ^ that pair: 3 vector XORs a vector, and on Zen 3 that part alone
 * ran within 3% of ECB. The stash is filled in two ways:
 * - general registers: T * x as add, adc and a mask from the top bit (sar,
 *   and: no branch, the tweak is secret), two 64-bit stores a tweak, for
 *   the first VAES_XTSG_GV vectors of a chunk; the next chunk's T * x^16
 *   by a jump, so no chain of doublings runs from chunk to chunk;
 * - vector steps: vector m >= VAES_XTSG_GV of the next chunk is the same
 *   vector of this one times x^16 (a 2-byte rotation, an AND, a multiply,
 *   an XOR in every lane), one after each of this chunk's first rounds.
 *   They read vector stores (the previous step's), never the 64-bit ones:
 *   a 256-bit load of two or four 64-bit stores cannot be forwarded, and
 *   steps reading the general registers' stores (x^8 from the same chunk)
 *   ran 10-20% slower than the old kernel.
 * A unit's first whole chunk is built in vector registers from T, as
 * vaes_xts_first's window but 8 vectors (the zmm table's counts 0..15); a
 * chunk of fewer blocks (a unit's end) all in general registers, one chain.
 * Measured on Zen 3 (ab.py, 16 KiB, against the vector steps): all 16
 * tweaks in general registers 1.02-1.04x the time (32 stores and ~100
 * integer ops a chunk, beside the vector side's ~130 ops: the core's 6 a
 * cycle and its store queue run out), VAES_XTSG_GV = 4 0.94-0.96x,
 * VAES_XTSG_GV = 2 about 2% faster again, 0 (every vector by a step) about
 * 4% slower than 2. */
/* Calls of more blocks (in all) keep the vector steps: on Zen 3, in place
 * (ab.py, AES-128, time against them), 128-256 KiB took 0.94-0.96x, 512
 * KiB 1.04x, 1 MiB 1.14-1.20x (AES-256 1.02x): past the 512 KiB L2, with
 * ~100 more ops in flight a chunk, fewer loads from L3 overlap (a guess:
 * no counters here; a prefetch 1 KiB ahead did not clearly help). */
#define VAES_XTSG_MAX (256 * 1024 / AESKIT_BLOCK)
#ifndef VAES_XTSG_GV
#define VAES_XTSG_GV 2   /* vectors of a whole chunk from general registers */
#endif
static_assert(VAES_XTSG_GV <= VAES_NV && VAES_NV - VAES_XTSG_GV <= 9,
              "a step after each of rounds 1 to VAES_NV - VAES_XTSG_GV, before the last");
typedef struct {
    const uint8_t *tweaks;   /* the units' first tweaks, one per unit */
    size_t units, unit;      /* units left after this one, blocks a unit */
    size_t left;             /* blocks of this unit not yet given a tweak */
    uint64_t lo, hi;         /* the next tweak */
} vaes_xtsg_state;

/* T * x: the low half doubled with its carry going into the high half's
 * doubling (add, adc), and the top bit that leaves, as a mask (sar, and),
 * brought back as x^128 = x^7 + x^2 + x + 1: 6 integer ops. */
AESKIT_INLINE void vaes_xtsg_x(uint64_t *lo, uint64_t *hi)
{
    const uint64_t m = (uint64_t)((int64_t)*hi >> 63) & 0x87;
#if defined(AESKIT_GNU_ASM)
    /* _addcarry_u64 made GCC keep the halves in stack slots */
    __asm__("add %0, %0\n\tadc %1, %1\n\txor %2, %0" : "+&r"(*lo), "+r"(*hi) : "r"(m) : "cc");
#else
    unsigned long long l, h;
    const unsigned char c = _addcarry_u64(0, *lo, *lo, &l);
    (void)_addcarry_u64(c, *hi, *hi, &h);
    *lo = l ^ m, *hi = h;
#endif
}

/* T * x^k, k < 57: the top k bits h come back as h * 0x87, carry-less,
 * h ^ h << 1 ^ h << 2 ^ h << 7, below 2^64. */
AESKIT_INLINE void vaes_xtsg_jump(uint64_t *lo, uint64_t *hi, unsigned k)
{
    const uint64_t h = *hi >> (64 - k);
    *hi = (*hi << k) | (*lo >> (64 - k));
    *lo = (*lo << k) ^ h ^ (h << 1) ^ (h << 2) ^ (h << 7);
}

/* Two 64-bit stores from general registers. As memcpy, GCC joins the
 * halves in a vector register (vmovq, vpinsrq: vector ops again). */
AESKIT_INLINE void vaes_xtsg_put(uint8_t *out, uint64_t lo, uint64_t hi)
{
#if defined(AESKIT_GNU_ASM)
    __asm__("movq %2, %0\n\tmovq %3, %1"
            : "=m"(*(uint64_t *)(void *)out), "=m"(*(uint64_t *)(void *)(out + 8))
            : "r"(lo), "r"(hi));
#else
    memcpy(out, &lo, 8);
    memcpy(out + 8, &hi, 8);
#endif
}

/* cnt tweaks from *lo, *hi into out, each the last times x; the next left
 * in *lo, *hi. With lower (a whole chunk), only the first VAES_XTSG_GV
 * vectors' and *lo, *hi advance by x^VAES_W in one jump. */
AESKIT_INLINE void vaes_xtsg_double(uint64_t *plo, uint64_t *phi, uint8_t *out, size_t cnt,
                                    int lower)
{
    uint64_t lo = *plo, hi = *phi;
    if (lower) {
        vaes_xtsg_jump(plo, phi, VAES_W);
        AESKIT_UNROLL(8)
        for (size_t b = 0; b < VAES_XTSG_GV * VAES_BPV; b++) {
            vaes_xtsg_put(out + AESKIT_BLOCK * b, lo, hi);
            if (b + 1 < VAES_XTSG_GV * VAES_BPV)
                vaes_xtsg_x(&lo, &hi);
        }
        return;
    }
    AESKIT_UNROLL(16)
    for (size_t b = 0; b < cnt; b++) {
        vaes_xtsg_put(out + AESKIT_BLOCK * b, lo, hi);
        vaes_xtsg_x(&lo, &hi);
    }
    *plo = lo, *phi = hi;
}

/* Vector m of the next whole chunk, nxt, from the same vector of this one,
 * tw: a step of x^16 in every lane (vaes_xts_next, q's mask 2^16 - 1). */
AESKIT_INLINE void vaes_xtsg_upper(const uint8_t *tw, uint8_t *nxt, size_t m,
                                   const vaes_xts_consts *q)
{
    vaes_store(nxt + VAES_VL * m,
               vaes_xts_next(vaes_rotl_bytes(vaes_load(tw + VAES_VL * m), 2), q->c, 0, q));
}

/* The next chunk's tweaks into out: up to VAES_W of the current unit, or
 * the next unit's first ones; returns how many (0: none left). *lower: 1
 * when only the first VAES_XTSG_GV vectors went out, the chunk whole and
 * not its unit's first (the rest then come from vaes_xtsg_upper). */
AESKIT_INLINE size_t vaes_xtsg_gen(vaes_xtsg_state *g, uint8_t *out, int *lower)
{
    *lower = 1;
    if (g->left == 0) {
        if (g->units == 0)
            return 0;
        g->units--, g->left = g->unit;
        memcpy(&g->lo, g->tweaks, 8);
        memcpy(&g->hi, g->tweaks + 8, 8);
        g->tweaks += AESKIT_BLOCK;
        *lower = 0;
        if (g->left >= VAES_W) {
            /* a unit's first whole chunk: all its vectors from T in
             * vector registers, no chain, nothing read back from 64-bit
             * stores; the next chunk's T * x^16 by a jump */
            const vaes_v t = vaes_bcast(aeskit_load128(g->tweaks - AESKIT_BLOCK));
            const vaes_v poly = vaes_bcast(_mm_cvtsi32_si128(0x87));
            for (size_t m = 0; m < VAES_NV; m++) {
                const vaes_v shl = vaes_load((const uint8_t *)vaes_xts_shl + VAES_VL * m);
                const vaes_v shr = vaes_load((const uint8_t *)vaes_xts_shr + VAES_VL * m);
                const vaes_v o = vaes_srlv64(t, shr);
                vaes_store(out + VAES_VL * m,
                           vaes_xor3(vaes_sllv64(t, shl), vaes_bslli8(o), vaes_clmul(o, poly, 0x01)));
            }
            vaes_xtsg_jump(&g->lo, &g->hi, VAES_W);
            g->left -= VAES_W;
            return VAES_W;
        }
    }
    const size_t cnt = g->left < VAES_W ? g->left : VAES_W;
    if (cnt < VAES_W)
        *lower = 0;
    if (*lower)
        vaes_xtsg_double(&g->lo, &g->hi, out, VAES_W, 1);
    else
        vaes_xtsg_double(&g->lo, &g->hi, out, cnt, 0);
    g->left -= cnt;
    return cnt;
}

/* w vectors, the last with `last` blocks, their tweaks at tw; with nxt,
 * the next whole chunk's vectors VAES_XTSG_GV.. by steps between rounds. */
AESKIT_INLINE void vaes_xtsg_batch(const uint8_t *rk, unsigned rounds, int enc,
                                   const vaes_xts_consts *q, const uint8_t *tw, uint8_t *nxt,
                                   uint8_t *dst, const uint8_t *src, size_t w, size_t last)
{
    vaes_v x[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        x[j] = vaes_xor(vaes_xor(vaes_load_part(src + VAES_VL * j, nb), q->k0),
                        vaes_load_part(tw + VAES_VL * j, nb));
    }
    AESKIT_UNROLL(8)
    for (unsigned i = 1; i <= VAES_NV - VAES_XTSG_GV; i++) {
        vaes_round(x, w, rk, i, enc);
        if (nxt != NULL)
            vaes_xtsg_upper(tw, nxt, VAES_XTSG_GV + i - 1, q);
    }
    vaes_middle_from(x, w, rk, rounds, enc, VAES_NV - VAES_XTSG_GV + 1);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        vaes_store_part(dst + VAES_VL * j,
                        vaes_last(x[j], vaes_xor(q->kl, vaes_load_part(tw + VAES_VL * j, nb)), enc),
                        nb);
    }
}

/* n blocks (0 < n <= VAES_W) with their tweaks at tw; nxt: as
 * vaes_xtsg_batch's (n is then VAES_W), else NULL. */
AESKIT_INLINE void vaes_xtsg_chunk(const uint8_t *rk, unsigned rounds, int enc,
                                   const vaes_xts_consts *q, const uint8_t *tw, uint8_t *nxt,
                                   uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == VAES_W) {
        if (nxt != NULL)
            vaes_xtsg_batch(rk, rounds, enc, q, tw, nxt, dst, src, VAES_NV, VAES_BPV);
        else
            vaes_xtsg_batch(rk, rounds, enc, q, tw, NULL, dst, src, VAES_NV, VAES_BPV);
        return;
    }
    if (n >= VAES_W / 2) {
        vaes_xtsg_batch(rk, rounds, enc, q, tw, NULL, dst, src, VAES_NV / 2, VAES_BPV);
        n -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W, tw += 8 * VAES_W;
    }
    while (n > 0) {
        const size_t nb = n < VAES_BPV ? n : VAES_BPV;
        vaes_xtsg_batch(rk, rounds, enc, q, tw, NULL, dst, src, 1, nb);
        n -= nb, src += 16 * nb, dst += 16 * nb, tw += 16 * nb;
    }
}

/* units units of unit blocks each, unit i under tweaks[i]; the tweak
 * after the last block into *next (the xts slot's). */
AESKIT_INLINE void vaes_xtsg(const uint8_t *rk, unsigned rounds, int enc, const uint8_t *tweaks,
                             size_t unit, uint8_t *dst, const uint8_t *src, size_t units,
                             uint8_t *next)
{
    uint8_t stash[2 * AESKIT_BLOCK * VAES_W];
    vaes_xtsg_state g = { tweaks, units, unit, 0, 0, 0 };
    /* the keys unfolded, and a step's constants for k = 16 (vaes_xtsg_upper) */
    const vaes_xts_consts q = {
        .poly = vaes_bcast(_mm_cvtsi32_si128(0x86)),
        .mask = vaes_bcast(_mm_cvtsi32_si128(0xffff)),
        .c = vaes_zero(),
        .k0 = vaes_key(rk, 0),
        .kl = vaes_key(rk, rounds),
    };
    int lower, lower_after;
    size_t half = 0, n = vaes_xtsg_gen(&g, stash, &lower);
    while (n > 0) {
        uint8_t *const cur = stash + AESKIT_BLOCK * VAES_W * half;
        half ^= 1;
        uint8_t *const nxt = stash + AESKIT_BLOCK * VAES_W * half;
        const size_t after = vaes_xtsg_gen(&g, nxt, &lower_after);
        vaes_xtsg_chunk(rk, rounds, enc, &q, cur, lower_after ? nxt : NULL, dst, src, n);
        dst += AESKIT_BLOCK * n, src += AESKIT_BLOCK * n, n = after;
    }
    if (next != NULL) {
        memcpy(next, &g.lo, 8);
        memcpy(next + 8, &g.hi, 8);
    }
    aeskit_secure_zero(stash, sizeof stash);
    g.lo = g.hi = 0;
    AESKIT_BARRIER();
}
#endif

/* At most VAES_FEW blocks (ciphertext stealing's last block, a short data
 * unit) go to aesni's, valid on this key (set_key below): one vector would
 * take as many rounds after building a window of four. */
static void VAES_FN(xts)(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                         const uint8_t *src, size_t n)
{
    if (n <= VAES_FEW)
        aeskit_aesni_xts(k, enc, tweak, dst, src, n);
#if VAES_XTS_GPR
    else if (n <= VAES_XTSG_MAX && enc)
        vaes_xtsg(aeskit_aesni_enc_keys(k), k->rounds, 1, tweak, n, dst, src, 1, tweak);
    else if (n <= VAES_XTSG_MAX)
        vaes_xtsg(aeskit_aesni_dec_keys(k), k->rounds, 0, tweak, n, dst, src, 1, tweak);
#endif
    else if (enc)
        vaes_xts(aeskit_aesni_enc_keys(k), k->rounds, 1, tweak, dst, src, n);
    else
        vaes_xts(aeskit_aesni_dec_keys(k), k->rounds, 0, tweak, dst, src, n);
}

/* Units of at most VAES_FEW blocks go to aesni's slot, as xts above. */
static void VAES_FN(xts_units)(const aeskit_key *k, int enc, const uint8_t *tweaks,
                               size_t unit, uint8_t *dst, const uint8_t *src, size_t units)
{
    if (unit <= VAES_FEW)
        aeskit_aesni_xts_units(k, enc, tweaks, unit, dst, src, units);
#if VAES_XTS_GPR
    else if (units <= VAES_XTSG_MAX / unit && enc)
        vaes_xtsg(aeskit_aesni_enc_keys(k), k->rounds, 1, tweaks, unit, dst, src, units, NULL);
    else if (units <= VAES_XTSG_MAX / unit)
        vaes_xtsg(aeskit_aesni_dec_keys(k), k->rounds, 0, tweaks, unit, dst, src, units, NULL);
#endif
    else if (enc)
        vaes_xts_units(aeskit_aesni_enc_keys(k), k->rounds, 1, tweaks, unit, dst, src, units);
    else
        vaes_xts_units(aeskit_aesni_dec_keys(k), k->rounds, 0, tweaks, unit, dst, src, units);
}

/* ---- the key: aesni's ------------------------------------------------
 * A key here has aesni's exact layout, so every aesni function is valid on
 * it: the table points its serial slots (CBC and CFB encryption, OFB,
 * CBC-MAC) straight at aesni's, which gain nothing from width (one block's
 * rounds are one dependency chain). */

static void VAES_FN(set_key)(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_aesni_expand_key(k, key, len);
    k->impl = &VAES_IMPL;
}

static void VAES_FN(set_enc_key)(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_aesni_expand_enc_key(k, key, len);
    k->impl = &VAES_IMPL;
}

/* ---- GHASH on VPCLMULQDQ ------------------------------------------------
 * clmul128.h's arithmetic (reflected lanes, powers stored as H^i * x^-1,
 * Karatsuba, Montgomery-style reduction by 0xC2...), run on every 128-bit
 * lane of a vector: VAES_GW blocks per reduction, block j of a group
 * multiplied by H^(VAES_GW - j), the accumulator folded into block 0 (lane 0
 * of the first vector). The three Karatsuba sums stay vectors until the
 * group ends; then their lanes are XORed together and one 128-bit reduction
 * follows. A tail of r < VAES_GW blocks uses H^r..H^1 the same way, its last
 * vector partial (zero lanes multiply to zero; no byte outside the n blocks
 * is read).
 *
 * The bulk takes VAES_GP blocks per reduction (128 on both widths), as
 * groups of 32 with the accumulator in the first (ghash_wide); vaes_gcm.h
 * does the same with its batches.
 *
 * Speed (Zen 4, core cycles): VPCLMULQDQ issues once per 2 cycles at
 * every width, so 3 multiplies per block bound zmm at 0.094 c/B and ymm at
 * 0.19; the byte swap, the Karatsuba halves and the sums come on top. So:
 * many blocks per reduction (fewer folds and reductions, more independent
 * work around each); the vector carrying acc goes last, so that the
 * others' products do not wait on the previous reduction; full groups go
 * two vectors at a time, each sum taking both products in one three-way
 * XOR on zmm, their powers and halves read from the key as memory
 * operands; on zmm a GHASH or POLYVAL call's groups take each pair as two
 * vectors of halves put together by masked loads, which saves the pair
 * its unpacks (vaes_gstep2_halves). A call of at most VAES_GSHORT blocks
 * runs on xmm (vaes_gblocks128).
 *
 * ghash_key layout (hk->w as bytes), private to this table (aesni's
 * differs):
 *  - powers: 16 * i holds H^(VAES_GP - i) * x^-1 for i = 0..VAES_GP-1
 *    (descending, so block j of an r-block group finds its power at
 *    16 * (VAES_GP - r + j) and a vector load picks up consecutive blocks'
 *    powers);
 *  - then halves: for each batch b of VAES_W powers (VAES_NV vectors, b =
 *    0 the highest) and each pair q of its power vectors, (2q + 1, 2q + 2
 *    mod VAES_NV), one vector of both vectors' Karatsuba halves
 *    (vaes_gkara2): the pairs vaes_gbatch takes, vector 0 (the one with
 *    acc) last. A batch is what the fused GCM hashes beside one batch of
 *    counters (vaes_gcm.h); on zmm it is a whole group, on ymm half of one.
 *    The batches' halves are stored last batch (the lowest powers) first
 *    (vaes_ghalves), so that a key built for fewer powers (one message's)
 *    holds the batches it built right after its powers, and a wipe of what
 *    it built stops there (a 32-power key on zmm: 768 bytes, not 1536).
 * 3072 bytes on both widths (128 powers). */

#define VAES_GW 32   /* blocks per reduction */
/* Powers in the key: VAES_KEY_GROUPS groups of VAES_GW (the width layer
 * says how many), and as many blocks per reduction in the bulk. */
#define VAES_GP (VAES_KEY_GROUPS * VAES_GW)
#define VAES_GBATCHES (VAES_GP / VAES_W)       /* batches of powers in the key */
/* At most this many blocks go on 128-bit registers, where a few blocks
 * cost less than building and folding vectors: a 64-byte GCM message
 * hashes its 4 blocks and the lengths in one call (aeskit_gcm_oneshot), 6
 * with a block of AAD. */
#ifndef VAES_GSHORT
#define VAES_GSHORT 6
#endif
static_assert(sizeof(((aeskit_ghash_key *)0)->w)
                  >= VAES_GP * AESKIT_BLOCK + VAES_GBATCHES * (VAES_NV / 2) * VAES_VL,
              "aeskit_ghash_key holds the vaes powers and their pairs' halves");
static_assert(VAES_GW % VAES_W == 0, "a group is whole batches");


AESKIT_INLINE __m128i vaes_gbswap(void) { return aeskit_clmul_bswap(); }

/* Vector j of a run whose first `skip` blocks are absent, base pointing at
 * its first present block: the absent lanes read as zero and are not
 * stored, and no byte before base is touched. The fused GCM's first batch
 * starts at the aligned counter up to 15 blocks before the data
 * (vaes_gcm.h); with skip 0 these are plain vector moves. */
AESKIT_INLINE vaes_v vaes_load_skip(const uint8_t *base, size_t j, size_t skip)
{
    const size_t first = VAES_BPV * j;
    if (first >= skip)
        return vaes_load(base + AESKIT_BLOCK * (first - skip));
    if (first + VAES_BPV <= skip)
        return vaes_zero();
    return vaes_load_high(base, skip - first);
}

AESKIT_INLINE void vaes_store_skip(uint8_t *base, size_t j, size_t skip, vaes_v v)
{
    const size_t first = VAES_BPV * j;
    if (first >= skip)
        vaes_store(base + AESKIT_BLOCK * (first - skip), v);
    else if (first + VAES_BPV > skip)
        vaes_store_high(base, v, skip - first);
}

/* The three Karatsuba sums, lane-wise, from a reduction to the next (one
 * group, or up to VAES_GP / VAES_GW of them). */
typedef struct vaes_gsum {
    vaes_v lo, mid, hi;
} vaes_gsum;

AESKIT_INLINE vaes_gsum vaes_gsum_zero(void)
{
    const vaes_gsum s = {vaes_zero(), vaes_zero(), vaes_zero()};
    return s;
}

/* Adds vector j (nb blocks) of the data at p times its powers from pw into
 * s; vector 0 carries acc in its first lane. */
AESKIT_INLINE void vaes_gstep_with(vaes_gsum *s, vaes_v h, vaes_v hkk, const uint8_t *p,
                                 size_t j, size_t nb, __m128i acc, int pv)
{
    vaes_v x = vaes_load_part(p + (size_t)VAES_VL * j, nb);
    if (!pv)   /* POLYVAL's blocks are already in the register order (polyval) */
        x = vaes_shuffle8(x, vaes_bcast(vaes_gbswap()));
    if (j == 0)
        x = vaes_xor(x, vaes_from128(acc));
    const vaes_v xk = vaes_xor(x, vaes_shuffle32_4e(x));
    s->lo = vaes_xor(s->lo, vaes_clmul(x, h, 0x00));
    s->hi = vaes_xor(s->hi, vaes_clmul(x, h, 0x11));
    s->mid = vaes_xor(s->mid, vaes_clmul(xk, hkk, 0x00));
    VAES_PIN(s->lo, s->mid, s->hi);
}

/* Two vectors, a and b, at once: each sum takes both products in one
 * three-way XOR where the ISA has one, and one XOR of two unpacks makes
 * both vectors' Karatsuba halves (lane l: a's in the low 64 bits, b's in
 * the high), multiplied by the powers' halves laid out the same way (hv,
 * vaes_gkara2). 2.5 XORs per vector where one at a time took 3: on Zen 4
 * XORs compete with the multiplier. Vector j's powers are at pw + VL * j;
 * the data's first `skip` blocks are absent (vaes_load_skip: zero blocks,
 * which add nothing), p pointing at the first present one; acc, when not
 * NULL, rides in that block. Powers and halves are read from memory (the
 * key): as operands of VPCLMULQDQ they cost no instruction. */
AESKIT_INLINE void vaes_gstep2_pv(vaes_gsum *s, const uint8_t *pw, const uint8_t *hv,
                                const uint8_t *p, size_t a, size_t b, const __m128i *acc,
                                size_t skip, int pv)
{
    const vaes_v bswap = vaes_bcast(vaes_gbswap());
    const vaes_v ha = vaes_load(pw + (size_t)VAES_VL * a), hb = vaes_load(pw + (size_t)VAES_VL * b);
    const vaes_v hk = vaes_load(hv);
    vaes_v xa = vaes_load_skip(p, a, skip), xb = vaes_load_skip(p, b, skip);
    if (!pv) {
        xa = vaes_shuffle8(xa, bswap);
        xb = vaes_shuffle8(xb, bswap);
    }
    if (acc != NULL && a == skip / VAES_BPV)
        xa = vaes_xor(xa, vaes_acc_at(*acc, skip % VAES_BPV));
    if (acc != NULL && b == skip / VAES_BPV)
        xb = vaes_xor(xb, vaes_acc_at(*acc, skip % VAES_BPV));
    const vaes_v k = vaes_xor(vaes_unpacklo64(xa, xb), vaes_unpackhi64(xa, xb));
    s->lo = vaes_xor3(s->lo, vaes_clmul(xa, ha, 0x00), vaes_clmul(xb, hb, 0x00));
    s->hi = vaes_xor3(s->hi, vaes_clmul(xa, ha, 0x11), vaes_clmul(xb, hb, 0x11));
    s->mid = vaes_xor3(s->mid, vaes_clmul(k, hk, 0x00), vaes_clmul(k, hk, 0x11));
    VAES_PIN(s->lo, s->mid, s->hi);
}

/* GHASH's (blocks byte-swapped at load), which fused GCM calls. */
AESKIT_INLINE void vaes_gstep2(vaes_gsum *s, const uint8_t *pw, const uint8_t *hv,
                             const uint8_t *p, size_t a, size_t b, const __m128i *acc,
                             size_t skip)
{
    vaes_gstep2_pv(s, pw, hv, p, a, b, acc, skip, 0);
}

#if VAES_GHALVES
/* vaes_gstep2_pv's pair (skip 0), its unpacks done by loads. Of the lower
 * vector L (at p + VL * lo) and the higher H, lane by lane:
 *   u = [L's first 8 bytes, H's last 8]   (L, H's high halves by a masked load)
 *   w = [L's last 8 bytes, H's first 8]   (L + 8, H - 8's high halves),
 * every byte read lying within L..H. GHASH's byte swap of a block reverses
 * each half's bytes and exchanges the halves; reversing each 64 bits in
 * place, without the exchange, leaves P = [L.lo, H.hi] (w) and Q = [L.hi,
 * H.lo] (u) in the register order (POLYVAL's blocks are in it already:
 * P = u). The four products pick their halves by their immediates, and
 * P ^ Q holds both vectors' Karatsuba middle inputs, L's low. Two shuffles and an XOR a pair where vaes_gstep2_pv takes four
 * (two swaps, two unpacks) and an XOR. llvm-mca-19, GHASH's loop of 128
 * blocks: znver4 237.7 -> 234.2 cycles, sapphirerapids 169.2 -> 142.2
 * (Intel runs every shuffle on the multiplies' port); POLYVAL 210.1 ->
 * 203.1 and 137.1 -> 107.2. Not timed on either CPU. */
AESKIT_INLINE void vaes_gstep2_halves(vaes_gsum *s, const uint8_t *pw, const uint8_t *hv,
                                      const uint8_t *p, size_t a, size_t b,
                                      const __m128i *acc, int pv)
{
    const vaes_v ha = vaes_load(pw + (size_t)VAES_VL * a), hb = vaes_load(pw + (size_t)VAES_VL * b);
    const vaes_v hk = vaes_load(hv);
    const size_t lo = a < b ? a : b;
    const uint8_t *pl = p + (size_t)VAES_VL * lo, *ph = p + (size_t)VAES_VL * (a + b - lo);
    const vaes_v hl = a == lo ? ha : hb, hh = a == lo ? hb : ha;
    vaes_v u = vaes_load_hi64(vaes_load(pl), ph), w = vaes_load_hi64(vaes_load(pl + 8), ph - 8);
    if (!pv) {
        /* each 64 bits byte-reversed, in place: GHASH's byte swap of a
         * block is that and an exchange of its halves */
        const vaes_v bswap64 = vaes_bcast(_mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15,
                                                       0, 1, 2, 3, 4, 5, 6, 7));
        u = vaes_shuffle8(u, bswap64);
        w = vaes_shuffle8(w, bswap64);
    }
    /* P: [L.lo, H.hi]; Q: [L.hi, H.lo] (POLYVAL's blocks are in the register
     * order already: u is P) */
    vaes_v P = pv ? u : w, Q = pv ? w : u;
    if (acc != NULL && lo == 0) {   /* acc rides in vector 0's first block */
        P = vaes_xor_q0(P, *acc);
        Q = vaes_xor_q0(Q, _mm_unpackhi_epi64(*acc, *acc));
    }
    const vaes_v k = vaes_xor(P, Q);   /* [L's middle input, H's] */
    s->lo = vaes_xor3(s->lo, vaes_clmul(P, hl, 0x00), vaes_clmul(Q, hh, 0x01));
    s->hi = vaes_xor3(s->hi, vaes_clmul(Q, hl, 0x10), vaes_clmul(P, hh, 0x11));
    /* hk: a's power halves low, b's high */
    if (a == lo)
        s->mid = vaes_xor3(s->mid, vaes_clmul(k, hk, 0x00), vaes_clmul(k, hk, 0x11));
    else
        s->mid = vaes_xor3(s->mid, vaes_clmul(k, hk, 0x01), vaes_clmul(k, hk, 0x10));
    VAES_PIN(s->lo, s->mid, s->hi);
}
#endif

/* Karatsuba's (hi ^ lo) of each lane's power, in its low half. */
AESKIT_INLINE vaes_v vaes_gkara(vaes_v h)
{
    return vaes_xor(h, vaes_shuffle32_4e(h));
}

/* The halves of two vectors of powers, a's in each lane's low 64 bits and
 * b's in its high (vaes_gstep2). */
AESKIT_INLINE vaes_v vaes_gkara2(vaes_v ha, vaes_v hb)
{
    return vaes_unpacklo64(vaes_gkara(ha), vaes_gkara(hb));
}

AESKIT_INLINE void vaes_gstep(vaes_gsum *s, const uint8_t *pw, const uint8_t *p, size_t j,
                            size_t nb, __m128i acc, int pv)
{
    const vaes_v h = vaes_load_part(pw + (size_t)VAES_VL * j, nb);
    vaes_gstep_with(s, h, vaes_gkara(h), p, j, nb, acc, pv);
}


/* The group's sum, reduced. Karatsuba's middle term is placed in every lane
 * first, so two sums are folded to 128 bits instead of three (1-3% on the
 * bulk of GHASH and fused GCM). */
AESKIT_INLINE __m128i vaes_gfinish(vaes_gsum s)
{
    const vaes_v mid = vaes_xor3(s.mid, s.lo, s.hi);
    const vaes_v lo = vaes_xor(s.lo, vaes_bslli8(mid));
    const vaes_v hi = vaes_xor(s.hi, vaes_bsrli8(mid));
    return aeskit_clmul_reduce256(vaes_fold_lanes(lo), vaes_fold_lanes(hi));
}

/* Where block j of an r-block group finds its power, H^(r - j). */
AESKIT_INLINE const uint8_t *vaes_gpowers(const aeskit_ghash_key *hk, size_t r)
{
    return (const uint8_t *)hk->w + AESKIT_BLOCK * (VAES_GP - r);
}

/* The halves of batch b's pairs of power vectors (b = 0..VAES_GBATCHES-1
 * from the highest powers; the last holds H^VAES_W..H^1's), stored last
 * batch first (see the layout). */
AESKIT_INLINE const uint8_t *vaes_ghalves(const aeskit_ghash_key *hk, size_t b)
{
    return (const uint8_t *)hk->w + AESKIT_BLOCK * VAES_GP
           + VAES_VL * (VAES_NV / 2) * (VAES_GBATCHES - 1 - b);
}

/* Adds the VAES_W blocks at p, times the powers at pw (halves at hv), to
 * s, in pairs of vectors (1, 2), (3, 4) .. (last, 0); acc, if not NULL,
 * rides in vector 0, the last pair, so the others' products do not wait
 * on the previous reduction. */
AESKIT_INLINE void vaes_gbatch(vaes_gsum *s, const uint8_t *pw, const uint8_t *hv,
                             const uint8_t *p, const __m128i *acc, int pv, int halves)
{
    VAES_UNROLL
    for (size_t q = 0; q < VAES_NV / 2; q++) {
#if VAES_GHALVES
        if (halves) {
            vaes_gstep2_halves(s, pw, hv + VAES_VL * q, p, 2 * q + 1, (2 * q + 2) % VAES_NV,
                               acc, pv);
            continue;
        }
#endif
        (void)halves;
        vaes_gstep2_pv(s, pw, hv + VAES_VL * q, p, 2 * q + 1, (2 * q + 2) % VAES_NV, acc, 0, pv);
    }
}

/* Adds the VAES_GW blocks at p, times the powers of key group g, to s, a
 * batch at a time, the first (with acc, if not NULL) last. */
AESKIT_INLINE void vaes_ggroup(vaes_gsum *s, const aeskit_ghash_key *hk, size_t g,
                             const uint8_t *p, const __m128i *acc, int pv, int halves)
{
    enum { nb = VAES_GW / VAES_W };
    AESKIT_UNROLL(4)
    for (size_t bb = 1; bb <= nb; bb++) {
        const size_t b = bb % nb, kb = nb * g + b;   /* batch in the group, in the key */
        vaes_gbatch(s, vaes_gpowers(hk, VAES_GP - VAES_W * kb), vaes_ghalves(hk, kb),
                    p + AESKIT_BLOCK * VAES_W * b, b == 0 ? acc : NULL, pv, halves);
    }
}

/* acc folded with r = 1..VAES_GP blocks under one reduction. The last
 * VAES_GW * floor(r / VAES_GW) blocks are whole groups and take the key's
 * last groups, their pairs' halves from the key (vaes_ggroup); the lead of
 * r mod VAES_GW blocks before them takes the powers from H^r down, its
 * halves made as it goes (vaes_gstep). acc rides in the first block; the
 * vector carrying it goes last, so the others' products do not wait on the
 * previous reduction. r is a constant at the bulk calls. */
AESKIT_INLINE __m128i vaes_gblocks_k(const aeskit_ghash_key *hk, __m128i acc,
                                   const uint8_t *p, size_t r, int pv, int halves)
{
    const size_t groups = r / VAES_GW, lead = r % VAES_GW;
    const size_t nv = (lead + VAES_BPV - 1) / VAES_BPV;
    const uint8_t *pw = vaes_gpowers(hk, r);
    vaes_gsum s = vaes_gsum_zero();

    AESKIT_UNROLL(4)
    for (size_t i = 0; i < groups; i++)
        vaes_ggroup(&s, hk, VAES_GP / VAES_GW - groups + i, p + AESKIT_BLOCK * (lead + VAES_GW * i),
                    lead == 0 && i == 0 ? &acc : NULL, pv, halves);
    AESKIT_UNROLL(16)
    for (size_t jj = 1; jj <= nv; jj++) {
        const size_t j = jj == nv ? 0 : jj;
        vaes_gstep(&s, pw, p, j, j == nv - 1 ? lead - VAES_BPV * j : VAES_BPV, acc, pv);
    }
    return vaes_gfinish(s);
}

/* The fused GCM's (vaes_gcm.h): the unpacks, not VAES_GHALVES's loads 8
 * bytes off and masked loads, as it hashes blocks it has just stored
 * (such loads would wait for the stores to retire: no forwarding). */
AESKIT_INLINE __m128i vaes_gblocks_pv(const aeskit_ghash_key *hk, __m128i acc,
                                    const uint8_t *p, size_t r, int pv)
{
    return vaes_gblocks_k(hk, acc, p, r, pv, 0);
}

/* GHASH's, which fused GCM calls. */
AESKIT_INLINE __m128i vaes_gblocks(const aeskit_ghash_key *hk, __m128i acc, const uint8_t *p,
                                 size_t r)
{
    return vaes_gblocks_pv(hk, acc, p, r, 0);
}

/* The same for a few blocks (r = 1..VAES_GSHORT) on 128-bit registers:
 * no lanes to fold at the end, whose cross-lane extracts made a short
 * message's GHASH slower than aesni's (see VAES_GSHORT). */
AESKIT_INLINE __m128i vaes_gblocks128(const aeskit_ghash_key *hk, __m128i acc, const uint8_t *p,
                                    size_t r, int pv)
{
    const uint8_t *pw = vaes_gpowers(hk, r);
    aeskit_clmul_sum s = aeskit_clmul_zero();
    for (size_t j = 0; j < r; j++) {
        __m128i x = aeskit_load128(p + AESKIT_BLOCK * j);
        if (!pv)
            x = _mm_shuffle_epi8(x, vaes_gbswap());
        if (j == 0)
            x = _mm_xor_si128(x, acc);
        const __m128i h = aeskit_load128(pw + AESKIT_BLOCK * j);
        aeskit_clmul_mul_add(&s, x, h, aeskit_clmul_half(h));
    }
    return aeskit_clmul_reduce(s);
}

/* aeskit_clmul_mul on every lane (schoolbook: key setup only). */
AESKIT_INLINE vaes_v vaes_gmul(vaes_v a, vaes_v b)
{
    const vaes_v poly = vaes_bcast(_mm_set_epi64x(0, (long long)UINT64_C(0xC200000000000000)));
    const vaes_v mid = vaes_xor(vaes_clmul(a, b, 0x01), vaes_clmul(a, b, 0x10));
    vaes_v lo = vaes_xor(vaes_clmul(a, b, 0x00), vaes_bslli8(mid));
    const vaes_v hi = vaes_xor(vaes_clmul(a, b, 0x11), vaes_bsrli8(mid));
    lo = vaes_xor(vaes_shuffle32_4e(lo), vaes_clmul(lo, poly, 0x00));
    lo = vaes_xor(vaes_shuffle32_4e(lo), vaes_clmul(lo, poly, 0x00));
    return vaes_xor(hi, lo);
}

/* pw[i - 1] = H^i * x^-1 for i = 1..n, as a tree (aeskit_power_split). */
AESKIT_INLINE void vaes_gtree(__m128i *pw, const uint8_t h[16], size_t n)
{
    pw[0] = aeskit_clmul_h_xinv(h);
    AESKIT_UNROLL(8)
    for (size_t i = 2; i <= n; i++) {
        const size_t a = aeskit_power_split(i);
        pw[i - 1] = aeskit_clmul_mul(pw[i - a - 1], pw[a - 1]);
    }
}

/* Builds what calls of at most max_blocks blocks read: a call of n <
 * VAES_GP blocks reads H^n..H^1 and at most the halves of the key's last
 * floor(n / VAES_W) batches (vaes_gblocks, vaes_gcm.h), a longer one
 * everything. So a
 * key made per message (GCM-SIV) costs that message's powers, not the
 * whole table; what is not built is not read (ghash asserts n <=
 * max_blocks). */
static void VAES_FN(ghash_key)(aeskit_ghash_key *hk, const uint8_t h[16], size_t max_blocks)
{
    uint8_t *out = (uint8_t *)hk->w;
    const size_t need = max_blocks < VAES_GP ? max_blocks : VAES_GP;
#define VAES_POWER(i) (out + AESKIT_BLOCK * (VAES_GP - (i)))   /* H^i x^-1 */

    /* The first vector's powers (or all a short call reads: vaes_gblocks128
     * takes them one by one) as a tree in registers (aeskit_power_split).
     * A short key stores them one by one; otherwise the lanes are put
     * together in a register and stored whole, and that register is the
     * doubling's first operand in every round: loaded back from 128-bit
     * stores, it waited for them (no store forwarding), on the message's
     * one dependency chain. Then doubling: the vectors of H^1..H^m times H^m
     * make H^(m+1)..H^2m, independent multiplies on every lane (faster than
     * a tree of 128-bit multiplies). pw is wiped once, at the end: a call
     * in between would spill the live vectors (secrets) to the stack. */
    const size_t first = need <= VAES_GSHORT ? (need > 0 ? need : 1) : VAES_BPV;
    __m128i pw[VAES_GSHORT > VAES_BPV ? VAES_GSHORT : VAES_BPV];
    if (need <= VAES_GSHORT)
        vaes_gtree(pw, h, first);
    else
        vaes_gtree(pw, h, VAES_BPV);   /* a constant: unrolled, in registers */
    if (need <= VAES_GSHORT) {
        for (size_t i = 1; i <= first; i++)
            aeskit_store128(VAES_POWER(i), pw[i - 1]);
        aeskit_secure_zero(pw, sizeof pw);
        hk->max_blocks = max_blocks;
        hk->from = AESKIT_BLOCK * (VAES_GP - first);
        hk->used = AESKIT_BLOCK * first;
        return;
    }
    vaes_v low = vaes_from128(pw[VAES_BPV - 1]);   /* lane l: H^(VAES_BPV - l) */
    for (size_t l = 1; l < VAES_BPV; l++)
        low = vaes_insert_lane(low, pw[VAES_BPV - 1 - l], l);
    vaes_store(VAES_POWER(VAES_BPV), low);
    /* hi: the vector holding H^built (lane 0), kept in a register too */
    vaes_v hi = low;
    static_assert(VAES_GP % VAES_BPV == 0 && (VAES_GP / VAES_BPV & (VAES_GP / VAES_BPV - 1)) == 0,
                  "doubling from one vector reaches VAES_GP");
    size_t built = VAES_BPV;
    for (; built < need; built *= 2) {
        /* the vector holding H^2m first, its lane 0 the next round's
         * multiplier and itself the next round's first operand, from
         * registers: the next round waits on that one product, not on this
         * whole round and a reload */
        const vaes_v hm = vaes_bcast(vaes_low128(hi));
        for (size_t i = built - VAES_BPV + 1;; i -= VAES_BPV) {   /* lane l: H^(i + VAES_BPV - 1 - l) */
            const vaes_v x = i == 1 ? low
                             : i == built - VAES_BPV + 1 ? hi
                                                         : vaes_load(VAES_POWER(i + VAES_BPV - 1));
            const vaes_v v = vaes_gmul(x, hm);
            vaes_store(VAES_POWER(i + built + VAES_BPV - 1), v);
            if (i == built - VAES_BPV + 1)
                hi = v;
            if (i == 1)
                break;
        }
    }
#undef VAES_POWER
    /* batch b holds H^(VAES_GP - VAES_W * b) and the VAES_W - 1 below:
     * those built, the last first, as they are laid out */
    const size_t batches = built / VAES_W;
    for (size_t bt = VAES_GBATCHES; bt-- > VAES_GBATCHES - batches;) {
        const uint8_t *bp = out + AESKIT_BLOCK * VAES_W * bt;
        for (size_t q = 0; q < VAES_NV / 2; q++) {
            const size_t a = 2 * q + 1, b = (2 * q + 2) % VAES_NV;
            const vaes_v ha = vaes_load(bp + VAES_VL * a), hb = vaes_load(bp + VAES_VL * b);
            vaes_store((uint8_t *)vaes_ghalves(hk, bt) + VAES_VL * q, vaes_gkara2(ha, hb));
        }
    }
    hk->max_blocks = max_blocks;
    /* the powers are stored from the top down, H^built lowest; the halves
     * of the batches built right after them */
    hk->from = AESKIT_BLOCK * (VAES_GP - built);
    hk->used = AESKIT_BLOCK * built + batches * (VAES_NV / 2) * VAES_VL;
    aeskit_secure_zero(pw, sizeof pw);
}

/* More than VAES_GSHORT blocks, on vectors; out of line (below), so that
 * the short path does not set up this one's frame (32-byte aligned, room
 * for spilled powers), which a short GCM message would pay for. pv (a
 * constant in each copy): the polyval slot's blocks, loaded as they are. */
AESKIT_INLINE void vaes_ghash_wide(const aeskit_ghash_key *hk, uint8_t acc[16],
                                   const uint8_t *p, size_t n, int pv)
{
    const __m128i bswap = vaes_gbswap();
    __m128i y = _mm_shuffle_epi8(aeskit_load128(acc), bswap);

    /* VAES_GP blocks per reduction, then the rest under one more. A key
     * built for fewer (GCM-SIV's per message, AESKIT_GHASH_MSG blocks and
     * more: from > 0) holds at least VAES_GW powers and the last group's
     * halves: VAES_GW per reduction, the accumulator staying in a register
     * where runs of calls stored and reloaded it: GCM-SIV's POLYVAL of
     * 16 KiB 1.17-1.31x faster on Zen 4 than in calls of 32 blocks (a
     * C loop over the slot, against one call with a full key: 1.15-1.19x
     * its time, was 1.39-1.55x). */
    static_assert(AESKIT_GHASH_MSG >= VAES_GW, "a run key holds a whole group");
    if (hk->from == 0) {
        for (; n >= VAES_GP; n -= VAES_GP, p += VAES_GP * AESKIT_BLOCK)
            y = vaes_gblocks_k(hk, y, p, VAES_GP, pv, VAES_GHALVES);
    } else {
        for (; n >= VAES_GW; n -= VAES_GW, p += VAES_GW * AESKIT_BLOCK)
            y = vaes_gblocks_k(hk, y, p, VAES_GW, pv, VAES_GHALVES);
    }
    if (n > VAES_GSHORT)
        y = vaes_gblocks_k(hk, y, p, n, pv, VAES_GHALVES);
    else if (n > 0)
        y = vaes_gblocks128(hk, y, p, n, pv);
    aeskit_store128(acc, _mm_shuffle_epi8(y, bswap));
}

AESKIT_NOINLINE static void VAES_FN(ghash_wide)(const aeskit_ghash_key *hk,
                                                         uint8_t acc[16], const uint8_t *p,
                                                         size_t n)
{
    vaes_ghash_wide(hk, acc, p, n, 0);
}

AESKIT_NOINLINE static void VAES_FN(polyval_wide)(const aeskit_ghash_key *hk,
                                                           uint8_t acc[16], const uint8_t *p,
                                                           size_t n)
{
    vaes_ghash_wide(hk, acc, p, n, 1);
}

AESKIT_INLINE void vaes_ghash_any(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                                  size_t n, int pv)
{
    assert(n == 0 || (p != NULL && acc != NULL));
    assert(aeskit_ghash_serves(hk, n));
    if (n > VAES_GSHORT) {
        (pv ? VAES_FN(polyval_wide) : VAES_FN(ghash_wide))(hk, acc, p, n);
    } else if (n > 0) {
        const __m128i bswap = vaes_gbswap();
        const __m128i y = _mm_shuffle_epi8(aeskit_load128(acc), bswap);
        aeskit_store128(acc, _mm_shuffle_epi8(vaes_gblocks128(hk, y, p, n, pv), bswap));
    }
}

static void VAES_FN(ghash)(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                           size_t n)
{
    vaes_ghash_any(hk, acc, p, n, 0);
}

/* The polyval slot (GCM-SIV): ghash with the blocks as they are. */
static void VAES_FN(polyval)(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                             size_t n)
{
    vaes_ghash_any(hk, acc, p, n, 1);
}

/* ---- independent CBC chains in lockstep (the cbc_x slot) ---------------
 * Lane l of vector j carries chain VAES_BPV * j + l: each step gathers the
 * chains' next blocks into lanes (a load and VAES_BPV - 1 lanes put in from
 * memory per vector, vaes_insert_lane_mem: on ymm no shuffle), and every
 * vector takes each round key from one broadcast, as ECB does. One chain's
 * block waits rounds x latency (~40 cycles); VAES_NV vectors in flight keep
 * the unit busy through it (ymm: 8 vectors at 2 per cycle; zmm: 8 at 1 per
 * cycle), so VAES_W chains cost about what one does. The last vector may be
 * partial: its idle lanes start from zero, read chain 0's blocks and are
 * never stored. Block i of
 * a chain is loaded before its result is stored, so dst[c] may be src[c]. */

AESKIT_INLINE vaes_v vaes_gather(const uint8_t *const *p, size_t off)
{
    vaes_v v = vaes_from128(aeskit_load128(p[0] + off));
    for (size_t l = 1; l < VAES_BPV; l++)
        v = vaes_insert_lane_mem(v, p[l] + off, l);
    return v;
}

/* Lanes 0..nb-1 of v to p[0..nb-1] + off. */
AESKIT_INLINE void vaes_scatter(uint8_t *const *p, size_t off, vaes_v v, size_t nb)
{
    aeskit_store128(p[0] + off, vaes_low128(v));
    for (size_t l = 1; l < nb; l++)
        aeskit_store128(p[l] + off, vaes_lane_high(v, l));
}

/* One step of the chains: x[j] ^= its whitened blocks wk[j] (one XOR on
 * each chain), the rounds, the outputs stored. */
AESKIT_INLINE void vaes_cbc_step(const uint8_t *rk, unsigned rounds, int out, size_t w,
                                 size_t last, vaes_v *x, const vaes_v *wk, uint8_t *const *dst,
                                 size_t off)
{
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_xor(x[j], wk[j]);
    vaes_middle(x, w, rk, rounds, 1);
    const vaes_v kl = vaes_key(rk, rounds);
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_enclast(x[j], kl);
    if (out) {
        VAES_UNROLL
        for (size_t j = 0; j < w; j++)
            vaes_scatter(dst + VAES_BPV * j, off, x[j], vaes_nb(j, w, last));
    }
}

#if VAES_VL == 32
/* ymm: the chains' blocks come 4 at a time (a quad, 64 bytes of each
 * chain, read as two vectors and regrouped by block into q[b][j]), a quad
 * ahead of the steps that take them, so the loads wait on nothing and no
 * chain waits on them. Gathered a block at a time, each step's 16 loads
 * from 16 places sat on the chains (16 x 4 KiB messages lay 16 lines in one
 * L1 set: CMAC ran at 2.6x its parallel floor on Zen 3). */
AESKIT_INLINE void vaes_cbc_quad(vaes_v (*q)[VAES_NV], const vaes_v k0,
                                 const uint8_t *const *src, size_t off, size_t w)
{
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const uint8_t *a = src[2 * j] + off, *b = src[2 * j + 1] + off;
        vaes_v lo, hi;
        vaes_transpose2(vaes_load(a), vaes_load(b), &lo, &hi);
        q[0][j] = vaes_xor(lo, k0);
        q[1][j] = vaes_xor(hi, k0);
        vaes_transpose2(vaes_load(a + VAES_VL), vaes_load(b + VAES_VL), &lo, &hi);
        q[2][j] = vaes_xor(lo, k0);
        q[3][j] = vaes_xor(hi, k0);
    }
}

#endif

/* ymm: the round keys loaded in each step (VAES_HIDE), not held across
 * steps: 4096 CMACs of 64 B 0.89 of the time on Zen 3 (the 16 registers
 * then hold the chains). zmm's 32 hold both. */
#if VAES_VL == 32
#define VAES_CBC_KEYS(p) VAES_HIDE(p)
#else
#define VAES_CBC_KEYS(p) ((void)0)
#endif

AESKIT_INLINE void vaes_cbc_x_w(const uint8_t *rk, unsigned rounds, int out, size_t w,
                                size_t last, uint8_t (*iv)[16], uint8_t *const *dst,
                                const uint8_t *const *src, size_t n)
{
    vaes_v x[VAES_NV], wk[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_load_part(iv[VAES_BPV * j], vaes_nb(j, w, last));
    size_t i = 0;
#if VAES_VL == 32
    if (!out && n >= 8) {
        vaes_v q[2][4][VAES_NV];
        vaes_cbc_quad(q[0], vaes_key(rk, 0), src, 0, w);
        for (; i + 4 <= n; i += 4) {
            const uint8_t *rs = rk;
            VAES_CBC_KEYS(rs);
            vaes_v (*cur)[VAES_NV] = q[(i / 4) & 1];
            if (i + 8 <= n)
                vaes_cbc_quad(q[(i / 4 + 1) & 1], vaes_key(rs, 0), src,
                              AESKIT_BLOCK * (i + 4), w);
            for (size_t b = 0; b < 4; b++) {
                const uint8_t *rb = rk;
                VAES_CBC_KEYS(rb);
                vaes_cbc_step(rb, rounds, 0, w, last, x, cur[b], NULL, 0);
            }
        }
        aeskit_secure_zero(q, sizeof q);
    }
#endif
    for (; i < n; i++) {
        const uint8_t *rs = rk;
        VAES_CBC_KEYS(rs);
        const vaes_v k0 = vaes_key(rs, 0);
        VAES_UNROLL
        for (size_t j = 0; j < w; j++)
            wk[j] = vaes_xor(k0, vaes_gather(src + VAES_BPV * j, AESKIT_BLOCK * i));
        vaes_cbc_step(rs, rounds, out, w, last, x, wk, dst, AESKIT_BLOCK * i);
    }
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        vaes_store_part(iv[VAES_BPV * j], x[j], vaes_nb(j, w, last));
}

#if VAES_CBC_LINES
/* Encryption by whole lines (the width header's VAES_CBC_LINES): chain
 * VAES_BPV * j + c is lane c of vector j, as above, but each step reads
 * a line (VAES_BPV blocks) of every chain, transposes each vector's
 * VAES_BPV lines into VAES_BPV block-by-block vectors, runs them through
 * the chains one after the other, transposes the results back and
 * writes each chain's line whole. lines: lines of each chain. A line is
 * read before it is written, so dst[c] may be src[c]. */
AESKIT_INLINE void vaes_cbc_lines_w(const uint8_t *rk, unsigned rounds, size_t w, size_t last,
                                    uint8_t (*iv)[16], uint8_t *const *dst,
                                    const uint8_t *const *src, size_t lines)
{
    const vaes_v k0 = vaes_key(rk, 0), kl = vaes_key(rk, rounds);
    vaes_v x[VAES_CBC_LINES / VAES_BPV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        x[j] = vaes_load_part(iv[VAES_BPV * j], vaes_nb(j, w, last));
    for (size_t i = 0; i < lines; i++) {
        vaes_v p[VAES_CBC_LINES / VAES_BPV][VAES_BPV];
        VAES_UNROLL
        for (size_t j = 0; j < w; j++) {
            VAES_UNROLL
            for (size_t c = 0; c < VAES_BPV; c++)
                p[j][c] = vaes_load(src[VAES_BPV * j + c] + VAES_VL * i);
            vaes_transpose(p[j]);
        }
        VAES_UNROLL
        for (size_t b = 0; b < VAES_BPV; b++) {
            VAES_UNROLL
            for (size_t j = 0; j < w; j++)
                x[j] = vaes_xor3(x[j], k0, p[j][b]);
            vaes_middle(x, w, rk, rounds, 1);
            VAES_UNROLL
            for (size_t j = 0; j < w; j++)
                p[j][b] = x[j] = vaes_enclast(x[j], kl);
        }
        VAES_UNROLL
        for (size_t j = 0; j < w; j++) {
            vaes_transpose(p[j]);
            VAES_UNROLL
            for (size_t c = 0; c < vaes_nb(j, w, last); c++)
                vaes_store(dst[VAES_BPV * j + c] + VAES_VL * i, p[j][c]);
        }
    }
    VAES_UNROLL
    for (size_t j = 0; j < w; j++)
        vaes_store_part(iv[VAES_BPV * j], x[j], vaes_nb(j, w, last));
}

/* Encryption on w (1..VAES_CBC_LINES / VAES_BPV, run time) vectors: n
 * whole lines of each chain (lines), else n blocks one at a time. */
static void vaes_cbc_enc_run(const uint8_t *rk, unsigned rounds, size_t w, size_t last,
                             uint8_t (*iv)[16], uint8_t *const *dst, const uint8_t *const *src,
                             size_t n, int lines)
{
#define K(v)                                                                    \
    case v:                                                                     \
        if (lines)                                                              \
            vaes_cbc_lines_w(rk, rounds, v, last, iv, dst, src, n);             \
        else                                                                    \
            vaes_cbc_x_w(rk, rounds, 1, v, last, iv, dst, src, n);              \
        break
    switch (w) {
        K(1); K(2); K(3); K(4);
    default:
        break;
    }
#undef K
}
static_assert(VAES_CBC_LINES == 4 * VAES_BPV, "vaes_cbc_enc_run takes 1..4 vectors");

/* The chains' pointers moved on by `blocks` blocks: s in place, d[c] from
 * dst[c] (dst may be d); the idle lanes read chain 0's, as cbc_x's do. */
AESKIT_INLINE void vaes_cbc_skip(const uint8_t **s, uint8_t **d, uint8_t *const *dst,
                                 size_t chains, size_t blocks)
{
    for (size_t l = 0; l < chains; l++) {
        s[l] += AESKIT_BLOCK * blocks;
        d[l] = dst[l] + AESKIT_BLOCK * blocks;
    }
    for (size_t l = chains; l < VAES_W; l++)
        s[l] = s[0];
}
#endif

static void VAES_FN(cbc_x)(const aeskit_key *k, size_t chains, uint8_t (*iv)[16],
                           uint8_t *const *dst, const uint8_t *const *src, size_t n)
{
    assert(chains >= 1 && chains <= VAES_W);
    if (n == 0)
        return;
    const size_t w = (chains + VAES_BPV - 1) / VAES_BPV, last = chains - VAES_BPV * (w - 1);
    /* The lanes' pointers, the idle lanes' too: src itself when there are
     * none and nothing moves them on (a MAC's whole vectors); copying all
     * VAES_W with a test in each was an eighth of a 64-byte CMAC batch's
     * kernel time on vaes_avx512 (4 calls of 32 chains per 64 messages). */
    const uint8_t *s[VAES_W];
    const uint8_t *const *sp = src;
    if (dst != NULL || last != VAES_BPV) {
        for (size_t l = 0; l < VAES_W; l++)
            s[l] = l < chains ? src[l] : src[0];
        sp = s;
    }
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
#if VAES_CBC_LINES
    /* Encryption: the blocks up to dst[0]'s next line boundary first (when
     * every chain's src and dst sit alike: lines 4 KiB apart, but buffers
     * that are not 64-byte aligned), so that the lines read and written
     * are whole cache lines (a line split over two costs as much as the
     * blocks' stores); then the whole lines; then the blocks left. Only
     * where each chain's src and dst sit alike within a line: else one of
     * them splits every line (64 x 4 KiB: 3.6-4.2x ECB), and the blocks
     * run one at a time as on the other backends (chains.c staggers them
     * then, on the same test). Addresses are public: nothing here
     * depends on a secret. */
    uint8_t *d[VAES_W];
    if (dst != NULL && chains <= VAES_CBC_LINES && n >= VAES_BPV &&
        aeskit_cbc_lines_alike(s, dst, chains, VAES_VL)) {
        const size_t mis = (size_t)((uintptr_t)dst[0] % VAES_VL);
        size_t head = mis % AESKIT_BLOCK == 0 ? (VAES_VL - mis) % VAES_VL / AESKIT_BLOCK : 0;
        for (size_t l = 1; l < chains && head != 0; l++)
            if ((size_t)((uintptr_t)dst[l] % VAES_VL) != mis)
                head = 0;
        head = head < n - VAES_BPV ? head : 0;
        if (head != 0) {
            vaes_cbc_enc_run(rk, k->rounds, w, last, iv, dst, s, head, 0);
            vaes_cbc_skip(s, d, dst, chains, head);
            dst = d;
            n -= head;
        }
        const size_t lines = n / VAES_BPV;
        vaes_cbc_enc_run(rk, k->rounds, w, last, iv, dst, s, lines, 1);
        n -= VAES_BPV * lines;
        if (n == 0)
            return;
        vaes_cbc_skip(s, d, dst, chains, VAES_BPV * lines);
        dst = d;
    }
#endif
#define K(v)                                                                    \
    case v:                                                                     \
        if (dst != NULL)                                                        \
            vaes_cbc_x_w(rk, k->rounds, 1, v, last, iv, dst, s, n);             \
        else                                                                    \
            vaes_cbc_x_w(rk, k->rounds, 0, v, last, iv, NULL, sp, n);           \
        break
    switch (w) {
        K(1); K(2); K(3); K(4); K(5); K(6); K(7); K(8);
    default:
        break;
    }
#undef K
}
static_assert(VAES_NV == 8 && VAES_W <= AESKIT_CBC_X_MAX, "cbc_x's switch takes 1..8 vectors");

/* ---- OCB3: the fused ocb kernel (its own file, same helpers) ---- */
#include "vaes_ocb.h"

/* ---- many messages at once: the batch methods' kernels (their own file) ---- */
#include "vaes_many.h"
