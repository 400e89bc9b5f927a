/*
 * aesni_ocb.c: the fused OCB3 kernel for the aesni table's ocb slot.
 * Contract: aeskit.h (struct aeskit_impl, ocb).
 *
 * Needs what aesni.c needs; built in the same library with -maes -mpclmul
 * -mssse3 -msse4.1 and called only after the CPU check. Round keys are
 * aesni.c's layout: rk[0..rounds] for encryption, then the decryption keys.
 *
 * Lanes: one __m128i per block in memory byte order; 8 blocks in flight,
 * as in aesni.c's parallel modes (AESENC latency 3-4, two units). Does all
 * n blocks: batches of 8 from a block index that is a multiple of 8, a
 * 4 + 2 + 1 head up to that index and the same for the tail (see ocb_run).
 * Fast for long messages: within a few percent of ECB, twice as fast as
 * modes/ocb.c's generic path on the same ECB.
 *
 * The checksum is folded inline, never in a pass of its own (libgcrypt saw
 * a separate pass fall off a cliff above 32 KiB on Intel): when decrypting,
 * over each plaintext block as it is produced; when encrypting, over each
 * plaintext block reloaded just before its ciphertext is stored, which keeps
 * those XORs off the start of a batch, where they would delay the first
 * AES round. In place is safe: a batch loads all its
 * input before the first round, and the reload of block j comes before the
 * store of block j.
 *
 * The offset is folded into both ends of the cipher: the running offset
 * carries rk[0] (whitening is one XOR), and the last round uses
 * rk[last] ^ Offset_j, since aesenclast(x, k) ^ d = aesenclast(x, k ^ d)
 * (likewise aesdeclast).
 */
#include "aesni.h"

#define OCB_W AESKIT_AESNI_OCB_W
#define OCB_UNROLL AESKIT_UNROLL(8) /* OCB_W */

/*
 * The cipher on w whitened blocks x[j] = in_j ^ o[j], o[j] = Offset ^ rk[0]
 * for each: rounds 1..rounds, the last with rk[last] ^ Offset =
 * fold ^ o[j], then the checksum, then the store. Encrypting, the checksum
 * reloads the plaintext: in place, src block j is intact until dst block j
 * is stored. Advances *dst and *src past the w blocks.
 */
AESKIT_INLINE void ocb_cipher_w(const uint8_t *rk, unsigned rounds, int enc, __m128i fold,
                             __m128i *x, const __m128i *o, __m128i *sum, uint8_t **dst,
                             const uint8_t **src, size_t w)
{
    const uint8_t *kend = rk + AESKIT_BLOCK * rounds;
    for (const uint8_t *p = rk + AESKIT_BLOCK; p < kend; p += AESKIT_BLOCK) {
        const __m128i key = aeskit_load128(p);
        OCB_UNROLL
        for (size_t j = 0; j < w; j++)
            x[j] = enc ? _mm_aesenc_si128(x[j], key) : _mm_aesdec_si128(x[j], key);
    }
    OCB_UNROLL
    for (size_t j = 0; j < w; j++) {
        const __m128i key = _mm_xor_si128(fold, o[j]);
        x[j] = enc ? _mm_aesenclast_si128(x[j], key) : _mm_aesdeclast_si128(x[j], key);
        *sum = _mm_xor_si128(*sum, enc ? aeskit_load128(*src + AESKIT_BLOCK * j) : x[j]);
        aeskit_store128(*dst + AESKIT_BLOCK * j, x[j]);
    }
    *src += AESKIT_BLOCK * w;
    *dst += AESKIT_BLOCK * w;
}

/* w blocks from any index: each offset from the one before and L[ntz]. */
AESKIT_INLINE void ocb_any_w(const uint8_t *rk, unsigned rounds, const aeskit_ocb_key *ok,
                          int enc, __m128i fold, uint64_t *i, __m128i *off, __m128i *sum,
                          uint8_t **dst, const uint8_t **src, size_t w)
{
    __m128i x[OCB_W], o[OCB_W];
    OCB_UNROLL
    for (size_t j = 0; j < w; j++) {
        *off = _mm_xor_si128(*off, aeskit_load128(ok->l[aeskit_ntz64(++*i)]));
        o[j] = *off;
        x[j] = _mm_xor_si128(aeskit_load128(*src + AESKIT_BLOCK * j), o[j]);
    }
    ocb_cipher_w(rk, rounds, enc, fold, x, o, sum, dst, src, w);
}

/* 0..7 blocks as 4 + 2 + 1 */
AESKIT_INLINE void ocb_few(const uint8_t *rk, unsigned rounds, const aeskit_ocb_key *ok, int enc,
                        __m128i fold, uint64_t *i, __m128i *off, __m128i *sum, uint8_t **dst,
                        const uint8_t **src, size_t n)
{
    if (n & 4)
        ocb_any_w(rk, rounds, ok, enc, fold, i, off, sum, dst, src, 4);
    if (n & 2)
        ocb_any_w(rk, rounds, ok, enc, fold, i, off, sum, dst, src, 2);
    if (n & 1)
        ocb_any_w(rk, rounds, ok, enc, fold, i, off, sum, dst, src, 1);
}

/*
 * All n blocks. The first up to 7 run as 4 + 2 + 1 until the block index
 * is a multiple of 8; from there each batch of 8 (indices 8m+1 .. 8m+8) has
 * offsets Offset_8m ^ L0, ^ L0^L1, ^ L1, ^ L1^L2, ^ L0^L1^L2, ^ L0^L2, ^ L2,
 * then ^ L2 ^ L[ntz(8m+8)]: all from one register in parallel, with one
 * ntz per batch, where a chain through eight ntz and loads would hold each
 * batch back. The last 0..7 run as 4 + 2 + 1.
 */
AESKIT_INLINE void ocb_run(const uint8_t *rk, unsigned rounds, const aeskit_ocb_key *ok, int enc,
                        aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const __m128i k0 = aeskit_load128(rk);
    const __m128i fold = _mm_xor_si128(aeskit_load128(rk + AESKIT_BLOCK * rounds), k0);
    const __m128i l0 = aeskit_load128(ok->l[0]), l1 = aeskit_load128(ok->l[1]), l2 = aeskit_load128(ok->l[2]);
    const __m128i delta[OCB_W - 1] = {
        l0, _mm_xor_si128(l0, l1), l1, _mm_xor_si128(l1, l2),
        _mm_xor_si128(_mm_xor_si128(l0, l1), l2), _mm_xor_si128(l0, l2), l2,
    };
    /* the running offset carries rk[0], the whitening, folded in */
    __m128i off = _mm_xor_si128(aeskit_load128(st->offset), k0), sum = aeskit_load128(st->checksum);
    uint64_t i = st->blocks;

    size_t head = (OCB_W - i % OCB_W) % OCB_W;
    if (head > n)
        head = n;
    ocb_few(rk, rounds, ok, enc, fold, &i, &off, &sum, &dst, &src, head);
    n -= head;
    for (; n >= OCB_W; n -= OCB_W) {
        __m128i x[OCB_W], o[OCB_W];
        i += OCB_W;
        OCB_UNROLL
        for (size_t j = 0; j < OCB_W - 1; j++)
            o[j] = _mm_xor_si128(off, delta[j]);
        o[OCB_W - 1] = off = _mm_xor_si128(o[OCB_W - 2], aeskit_load128(ok->l[aeskit_ntz64(i)]));
        OCB_UNROLL
        for (size_t j = 0; j < OCB_W; j++)
            x[j] = _mm_xor_si128(aeskit_load128(src + AESKIT_BLOCK * j), o[j]);
        ocb_cipher_w(rk, rounds, enc, fold, x, o, &sum, &dst, &src, OCB_W);
    }
    ocb_few(rk, rounds, ok, enc, fold, &i, &off, &sum, &dst, &src, n);
    aeskit_store128(st->offset, _mm_xor_si128(off, k0));
    aeskit_store128(st->checksum, sum);
    st->blocks = i;
}

/* Does all n blocks. */
size_t aeskit_aesni_ocb(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                        aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;

    if (enc)
        ocb_run(rk, rounds, ok, 1, st, dst, src, n);
    else
        ocb_run(rk + AESKIT_BLOCK * (rounds + 1), rounds, ok, 0, st, dst, src, n);
    return n;
}
