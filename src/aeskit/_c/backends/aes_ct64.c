/*
 * aes_ct64.c: bitsliced AES on 64-bit words, four blocks per call.
 *
 * Why: the portable backend must run on any C11 compiler and leak nothing
 * through timing or cache. A table-free AES is either slow (one byte at a
 * time through an arithmetic S-box) or bitsliced: every operation below is
 * AND/XOR/NOT/shift on whole words, so cost and addresses never depend on
 * key or data. Fast for: bulk data on CPUs without AES instructions
 * (batches of four blocks); a single block costs as much as four.
 *
 * Lane layout. Four blocks are 64 bytes; bit b (0 = least significant) of
 * all 64 bytes lives in word q[b]. Inside each word, byte r + 4c of block k
 * (state row r, column c) sits at bit
 *
 *     16 * r + 4 * c + k
 *
 * so a row is a 16-bit field, and the four blocks are the low two bits of
 * the position. Then
 *   - ShiftRows rotates each 16-bit row field by 4r bits (masks + shifts);
 *   - the next row of the same column is a rotation of the whole word by
 *     16 bits, which is all MixColumns needs;
 *   - SubBytes is the S-box as a Boolean circuit on the eight words: 64
 *     S-boxes at once.
 *
 * Getting there: each block is split into two words holding bytes
 * {0..3, 8..11} and {4..7, 12..15}, byte-interleaved (zip_bytes); block k
 * gives q[k] and q[4 + k]. A 3-stage transpose then exchanges the word
 * index with the bit-in-byte index, which lands every byte bit at the
 * position above. The transpose is its own inverse.
 *
 * S-box: the depth-16, 128-gate circuit of Boyar and Peralta ("A depth-16
 * circuit for the AES S-box", 2012; 34 AND, 94 XOR/XNOR). The inverse
 * S-box reuses it: with S(x) = Aff(inv(x)) and A = Aff^-1, that is
 * A(y) = rotl(y,1) ^ rotl(y,3) ^ rotl(y,6) ^ 0x05, we have
 * A(S(A(y))) = inv(A(y)) = InvS(y). Two linear layers of 24 XORs beat a
 * second circuit.
 *
 * InvMixColumns = MixColumns after a ^= 4 * (a ^ rot2rows(a)), the usual
 * factorisation of the inverse matrix.
 *
 * Round keys: the standard byte schedule (SubWord through the same
 * circuit), then each 16-byte round key is bitsliced as four copies of
 * itself, so AddRoundKey is eight XORs. Contracts: aes_ct64.h.
 */
#include "aes_ct64.h"

#include <assert.h>
#include <string.h>

#include "aeskit.h"
#include "common.h"

/* The round is only fast with its pieces inlined into one straight-line
 * body kept in registers (AESKIT_INLINE); -O2 alone declines for the
 * S-box. */

/* ---- layout: bytes <-> bit planes ------------------------------------- */

/* Exchange the bits of x selected by mask with those s positions above. */
static inline uint64_t delta_swap(uint64_t x, uint64_t mask, unsigned s)
{
    uint64_t t = ((x >> s) ^ x) & mask;
    return x ^ t ^ (t << s);
}

/* [a0 a1 a2 a3 b0 b1 b2 b3] (byte 0 first) -> [a0 b0 a1 b1 a2 b2 a3 b3] */
static inline uint64_t zip_bytes(uint64_t x)
{
    x = delta_swap(x, 0x00000000FFFF0000u, 16);
    return delta_swap(x, 0x0000FF000000FF00u, 8);
}

static inline uint64_t unzip_bytes(uint64_t x)
{
    x = delta_swap(x, 0x0000FF000000FF00u, 8);
    return delta_swap(x, 0x00000000FFFF0000u, 16);
}

/* Exchange the bits of *a selected by (mask << s) with the bits of *b
 * selected by mask. */
static inline void swap_move(uint64_t *a, uint64_t *b, uint64_t mask, unsigned s)
{
    uint64_t t = ((*a >> s) ^ *b) & mask;
    *b ^= t;
    *a ^= t << s;
}

/* Swap word-index bit j with bit j of the bit-in-byte index, j = 0, 1, 2:
 * afterwards q[b] bit (8 * y + w) is bit b of byte y of the old q[w]. */
AESKIT_INLINE void transpose(uint64_t q[8])
{
    swap_move(&q[0], &q[1], 0x5555555555555555u, 1);
    swap_move(&q[2], &q[3], 0x5555555555555555u, 1);
    swap_move(&q[4], &q[5], 0x5555555555555555u, 1);
    swap_move(&q[6], &q[7], 0x5555555555555555u, 1);
    swap_move(&q[0], &q[2], 0x3333333333333333u, 2);
    swap_move(&q[1], &q[3], 0x3333333333333333u, 2);
    swap_move(&q[4], &q[6], 0x3333333333333333u, 2);
    swap_move(&q[5], &q[7], 0x3333333333333333u, 2);
    swap_move(&q[0], &q[4], 0x0F0F0F0F0F0F0F0Fu, 4);
    swap_move(&q[1], &q[5], 0x0F0F0F0F0F0F0F0Fu, 4);
    swap_move(&q[2], &q[6], 0x0F0F0F0F0F0F0F0Fu, 4);
    swap_move(&q[3], &q[7], 0x0F0F0F0F0F0F0F0Fu, 4);
}

/* One block into its pre-transpose words (q[k], q[4 + k] for block k). */
static inline void split_block(uint64_t *even, uint64_t *odd, const uint8_t *p)
{
    uint64_t lo = aeskit_load_le64(p), hi = aeskit_load_le64(p + 8);
    *even = zip_bytes((lo & 0xFFFFFFFFu) | (hi << 32));
    *odd = zip_bytes((lo >> 32) | (hi & 0xFFFFFFFF00000000u));
}

static inline void join_block(uint8_t *p, uint64_t even, uint64_t odd)
{
    uint64_t a = unzip_bytes(even), b = unzip_bytes(odd);
    aeskit_store_le64(p, (a & 0xFFFFFFFFu) | (b << 32));
    aeskit_store_le64(p + 8, (a >> 32) | (b & 0xFFFFFFFF00000000u));
}

AESKIT_INLINE void load4(uint64_t q[8], const uint8_t *src)
{
    for (unsigned k = 0; k < 4; k++)
        split_block(&q[k], &q[4 + k], src + 16 * k);
    transpose(q);
}

AESKIT_INLINE void store4(uint8_t *dst, uint64_t q[8])
{
    transpose(q);
    for (unsigned k = 0; k < 4; k++)
        join_block(dst + 16 * k, q[k], q[4 + k]);
}

/* ---- SubBytes --------------------------------------------------------- */

/* The Boyar-Peralta depth-16 circuit. u0 is the most significant bit of
 * each byte (q[7]), s0 likewise; the gate names follow the paper. */
AESKIT_INLINE void sub_bytes(uint64_t q[8])
{
    const uint64_t u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
    const uint64_t u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];

    /* top linear layer */
    const uint64_t t1 = u0 ^ u3, t2 = u0 ^ u5, t3 = u0 ^ u6, t4 = u3 ^ u5;
    const uint64_t t5 = u4 ^ u6, t6 = t1 ^ t5, t7 = u1 ^ u2, t8 = u7 ^ t6;
    const uint64_t t9 = u7 ^ t7, t10 = t6 ^ t7, t11 = u1 ^ u5, t12 = u2 ^ u5;
    const uint64_t t13 = t3 ^ t4, t14 = t6 ^ t11, t15 = t5 ^ t11, t16 = t5 ^ t12;
    const uint64_t t17 = t9 ^ t16, t18 = u3 ^ u7, t19 = t7 ^ t18, t20 = t1 ^ t19;
    const uint64_t t21 = u6 ^ u7, t22 = t7 ^ t21, t23 = t2 ^ t22, t24 = t2 ^ t10;
    const uint64_t t25 = t20 ^ t17, t26 = t3 ^ t16, t27 = t1 ^ t12;

    /* middle non-linear layer: inversion in GF(2^4)^2 */
    const uint64_t m1 = t13 & t6, m2 = t23 & t8, m3 = t14 ^ m1, m4 = t19 & u7;
    const uint64_t m5 = m4 ^ m1, m6 = t3 & t16, m7 = t22 & t9, m8 = t26 ^ m6;
    const uint64_t m9 = t20 & t17, m10 = m9 ^ m6, m11 = t1 & t15, m12 = t4 & t27;
    const uint64_t m13 = m12 ^ m11, m14 = t2 & t10, m15 = m14 ^ m11, m16 = m3 ^ m2;
    const uint64_t m17 = m5 ^ t24, m18 = m8 ^ m7, m19 = m10 ^ m15, m20 = m16 ^ m13;
    const uint64_t m21 = m17 ^ m15, m22 = m18 ^ m13, m23 = m19 ^ t25, m24 = m22 ^ m23;
    const uint64_t m25 = m22 & m20, m26 = m21 ^ m25, m27 = m20 ^ m21, m28 = m23 ^ m25;
    const uint64_t m29 = m28 & m27, m30 = m26 & m24, m31 = m20 & m23, m32 = m27 & m31;
    const uint64_t m33 = m27 ^ m25, m34 = m21 & m22, m35 = m24 & m34, m36 = m24 ^ m25;
    const uint64_t m37 = m21 ^ m29, m38 = m32 ^ m33, m39 = m23 ^ m30, m40 = m35 ^ m36;
    const uint64_t m41 = m38 ^ m40, m42 = m37 ^ m39, m43 = m37 ^ m38, m44 = m39 ^ m40;
    const uint64_t m45 = m42 ^ m41;
    const uint64_t m46 = m44 & t6, m47 = m40 & t8, m48 = m39 & u7, m49 = m43 & t16;
    const uint64_t m50 = m38 & t9, m51 = m37 & t17, m52 = m42 & t15, m53 = m45 & t27;
    const uint64_t m54 = m41 & t10, m55 = m44 & t13, m56 = m40 & t23, m57 = m39 & t19;
    const uint64_t m58 = m43 & t3, m59 = m38 & t22, m60 = m37 & t20, m61 = m42 & t1;
    const uint64_t m62 = m45 & t4, m63 = m41 & t2;

    /* bottom linear layer, with the affine constant 0x63 as the NOTs */
    const uint64_t l0 = m61 ^ m62, l1 = m50 ^ m56, l2 = m46 ^ m48, l3 = m47 ^ m55;
    const uint64_t l4 = m54 ^ m58, l5 = m49 ^ m61, l6 = m62 ^ l5, l7 = m46 ^ l3;
    const uint64_t l8 = m51 ^ m59, l9 = m52 ^ m53, l10 = m53 ^ l4, l11 = m60 ^ l2;
    const uint64_t l12 = m48 ^ m51, l13 = m50 ^ l0, l14 = m52 ^ m61, l15 = m55 ^ l1;
    const uint64_t l16 = m56 ^ l0, l17 = m57 ^ l1, l18 = m58 ^ l8, l19 = m63 ^ l4;
    const uint64_t l20 = l0 ^ l1, l21 = l1 ^ l7, l22 = l3 ^ l12, l23 = l18 ^ l2;
    const uint64_t l24 = l15 ^ l9, l25 = l6 ^ l10, l26 = l7 ^ l9, l27 = l8 ^ l10;
    const uint64_t l28 = l11 ^ l14, l29 = l11 ^ l17;

    q[7] = l6 ^ l24;
    q[6] = ~(l16 ^ l26);
    q[5] = ~(l19 ^ l28);
    q[4] = l6 ^ l21;
    q[3] = l20 ^ l22;
    q[2] = l25 ^ l29;
    q[1] = ~(l13 ^ l27);
    q[0] = ~(l6 ^ l23);
}

/* y -> rotl(y,1) ^ rotl(y,3) ^ rotl(y,6) ^ 0x05 on every byte: bit i of
 * the result is bits i-1, i-3 and i-6 of y, plus the constant. Written out
 * because compilers turn the obvious indexed loop into slow gathers. */
AESKIT_INLINE void inv_affine(uint64_t q[8])
{
    const uint64_t y0 = q[0], y1 = q[1], y2 = q[2], y3 = q[3];
    const uint64_t y4 = q[4], y5 = q[5], y6 = q[6], y7 = q[7];

    q[0] = ~(y7 ^ y5 ^ y2);
    q[1] = y0 ^ y6 ^ y3;
    q[2] = ~(y1 ^ y7 ^ y4);
    q[3] = y2 ^ y0 ^ y5;
    q[4] = y3 ^ y1 ^ y6;
    q[5] = y4 ^ y2 ^ y7;
    q[6] = y5 ^ y3 ^ y0;
    q[7] = y6 ^ y4 ^ y1;
}

AESKIT_INLINE void add_round_key(uint64_t q[8], const uint64_t rk[8])
{
    q[0] ^= rk[0]; q[1] ^= rk[1]; q[2] ^= rk[2]; q[3] ^= rk[3];
    q[4] ^= rk[4]; q[5] ^= rk[5]; q[6] ^= rk[6]; q[7] ^= rk[7];
}

/* ---- ShiftRows, MixColumns, rounds ------------------------------------ */

/* Row r (bits 16r..16r+15) rotated right by 4r: column c takes column c+r. */
static inline uint64_t shift_rows1(uint64_t x)
{
    return (x & 0x000000000000FFFFu)
         | ((x & 0x00000000FFF00000u) >> 4) | ((x & 0x00000000000F0000u) << 12)
         | ((x & 0x0000FF0000000000u) >> 8) | ((x & 0x000000FF00000000u) << 8)
         | ((x & 0xF000000000000000u) >> 12) | ((x & 0x0FFF000000000000u) << 4);
}

/* Row r rotated left by 4r. */
static inline uint64_t inv_shift_rows1(uint64_t x)
{
    return (x & 0x000000000000FFFFu)
         | ((x & 0x000000000FFF0000u) << 4) | ((x & 0x00000000F0000000u) >> 12)
         | ((x & 0x0000FF0000000000u) >> 8) | ((x & 0x000000FF00000000u) << 8)
         | ((x & 0xFFF0000000000000u) >> 4) | ((x & 0x000F000000000000u) << 12);
}

/* Rotating right by 16 * j brings row r + j of each column to row r. */
static inline uint64_t rotr(uint64_t x, unsigned s)
{
    return (x >> s) | (x << (64 - s));
}

/* out_r = 2 a_r + 3 a_{r+1} + a_{r+2} + a_{r+3}
 *       = 2 (a_r + a_{r+1}) + a_{r+1} + (a_{r+2} + a_{r+3}),
 * with 2 s (xtime) as a shift of the bit planes and x^8 = x^4 + x^3 + x + 1
 * folding s7 into planes 0, 1, 3 and 4. */
AESKIT_INLINE void mix_columns(uint64_t q[8])
{
    const uint64_t n0 = rotr(q[0], 16), n1 = rotr(q[1], 16), n2 = rotr(q[2], 16);
    const uint64_t n3 = rotr(q[3], 16), n4 = rotr(q[4], 16), n5 = rotr(q[5], 16);
    const uint64_t n6 = rotr(q[6], 16), n7 = rotr(q[7], 16);
    const uint64_t s0 = q[0] ^ n0, s1 = q[1] ^ n1, s2 = q[2] ^ n2, s3 = q[3] ^ n3;
    const uint64_t s4 = q[4] ^ n4, s5 = q[5] ^ n5, s6 = q[6] ^ n6, s7 = q[7] ^ n7;

    q[0] = s7 ^ n0 ^ rotr(s0, 32);
    q[1] = s0 ^ s7 ^ n1 ^ rotr(s1, 32);
    q[2] = s1 ^ n2 ^ rotr(s2, 32);
    q[3] = s2 ^ s7 ^ n3 ^ rotr(s3, 32);
    q[4] = s3 ^ s7 ^ n4 ^ rotr(s4, 32);
    q[5] = s4 ^ n5 ^ rotr(s5, 32);
    q[6] = s5 ^ n6 ^ rotr(s6, 32);
    q[7] = s6 ^ n7 ^ rotr(s7, 32);
}

/* InvMixColumns = MixColumns after a_r += 4 (a_r + a_{r+2}). Times 4
 * shifts the planes by two and folds t6 and t7 back in. */
AESKIT_INLINE void inv_mix_columns(uint64_t q[8])
{
    const uint64_t t0 = q[0] ^ rotr(q[0], 32), t1 = q[1] ^ rotr(q[1], 32);
    const uint64_t t2 = q[2] ^ rotr(q[2], 32), t3 = q[3] ^ rotr(q[3], 32);
    const uint64_t t4 = q[4] ^ rotr(q[4], 32), t5 = q[5] ^ rotr(q[5], 32);
    const uint64_t t6 = q[6] ^ rotr(q[6], 32), t7 = q[7] ^ rotr(q[7], 32);

    q[0] ^= t6;
    q[1] ^= t6 ^ t7;
    q[2] ^= t0 ^ t7;
    q[3] ^= t1 ^ t6;
    q[4] ^= t2 ^ t6 ^ t7;
    q[5] ^= t3 ^ t7;
    q[6] ^= t4;
    q[7] ^= t5;
    mix_columns(q);
}

/* One encryption round; the last one (no MixColumns) when last is set. */
AESKIT_INLINE void enc_round(uint64_t q[8], const uint64_t *rk, int last)
{
    sub_bytes(q);
    q[0] = shift_rows1(q[0]); q[1] = shift_rows1(q[1]);
    q[2] = shift_rows1(q[2]); q[3] = shift_rows1(q[3]);
    q[4] = shift_rows1(q[4]); q[5] = shift_rows1(q[5]);
    q[6] = shift_rows1(q[6]); q[7] = shift_rows1(q[7]);
    if (!last)
        mix_columns(q);
    add_round_key(q, rk);
}

/* One decryption round; the last one (no InvMixColumns) when last is set. */
AESKIT_INLINE void dec_round(uint64_t q[8], const uint64_t *rk, int last)
{
    q[0] = inv_shift_rows1(q[0]); q[1] = inv_shift_rows1(q[1]);
    q[2] = inv_shift_rows1(q[2]); q[3] = inv_shift_rows1(q[3]);
    q[4] = inv_shift_rows1(q[4]); q[5] = inv_shift_rows1(q[5]);
    q[6] = inv_shift_rows1(q[6]); q[7] = inv_shift_rows1(q[7]);
    inv_affine(q);
    sub_bytes(q);
    inv_affine(q);
    add_round_key(q, rk);
    if (!last)
        inv_mix_columns(q);
}

/* ---- block functions -------------------------------------------------- */

/* Branches in both depend only on the (public) round number. */
void aeskit_ct64_encrypt4(const uint64_t *rk, unsigned rounds, uint8_t dst[64],
                          const uint8_t src[64])
{
    uint64_t q[8];

    assert(rounds == 10 || rounds == 12 || rounds == 14);
    load4(q, src);
    add_round_key(q, rk);
    for (unsigned r = 1; r <= rounds; r++)
        enc_round(q, rk + 8 * r, r == rounds);
    store4(dst, q);
}

void aeskit_ct64_decrypt4(const uint64_t *rk, unsigned rounds, uint8_t dst[64],
                          const uint8_t src[64])
{
    uint64_t q[8];

    assert(rounds == 10 || rounds == 12 || rounds == 14);
    load4(q, src);
    add_round_key(q, rk + 8 * rounds);
    for (unsigned r = rounds; r-- > 0;)
        dec_round(q, rk + 8 * r, r == 0);
    store4(dst, q);
}

/* ---- key schedule ----------------------------------------------------- */

/* S-box on the four bytes of w, through the same circuit (byte i of w in
 * lane i; the other lanes carry zeros and are dropped). */
static void sub_word(uint8_t w[4])
{
    uint64_t q[8] = { aeskit_load_le32(w) };

    transpose(q);
    sub_bytes(q);
    transpose(q);
    aeskit_store_le32(w, (uint32_t)q[0]);
    aeskit_secure_zero(q, sizeof q);
}

/* One 16-byte round key as four copies of itself in the lane layout. */
static void bitslice_round_key(uint64_t rk[8], const uint8_t key[16])
{
    uint64_t q[8];

    split_block(&q[0], &q[4], key);
    for (unsigned k = 1; k < 4; k++) {
        q[k] = q[0];
        q[4 + k] = q[4];
    }
    transpose(q);
    memcpy(rk, q, sizeof q);
    aeskit_secure_zero(q, sizeof q);
}

unsigned aeskit_ct64_expand_key(uint64_t *rk, const uint8_t *key, size_t len)
{
    uint8_t w[16 * (AESKIT_MAX_ROUNDS + 1)], t[4];
    const unsigned nk = (unsigned)(len / 4), rounds = nk + 6;
    const unsigned total = 4 * (rounds + 1);   /* 32-bit schedule words */
    unsigned rcon = 1;

    assert(len == 16 || len == 24 || len == 32);
    memcpy(w, key, len);
    /* Branches and rcon depend only on the (public) word index. */
    for (unsigned i = nk; i < total; i++) {
        memcpy(t, w + 4 * (i - 1), 4);
        if (i % nk == 0) {
            const uint8_t t0 = t[0];
            t[0] = t[1]; t[1] = t[2]; t[2] = t[3]; t[3] = t0;
            sub_word(t);
            t[0] ^= (uint8_t)rcon;
            rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11Bu);
        } else if (nk > 6 && i % nk == 4) {
            sub_word(t);
        }
        for (unsigned j = 0; j < 4; j++)
            w[4 * i + j] = w[4 * (i - nk) + j] ^ t[j];
    }
    for (unsigned r = 0; r <= rounds; r++)
        bitslice_round_key(rk + 8 * r, w + 16 * r);
    aeskit_secure_zero(w, sizeof w);
    aeskit_secure_zero(t, sizeof t);
    return rounds;
}
