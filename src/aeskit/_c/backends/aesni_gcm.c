/*
 * aesni_gcm.c: a short GCM-SIV message whole, for the aesni table's
 * gcmsiv_short slot (the vaes tables' too). Contract: modes/gcmsiv.h.
 *
 * Needs what aesni.c needs; built in the same library with -maes -mpclmul
 * -mssse3 -msse4.1 and called only after the CPU check. The key-generating
 * key is aesni.c's layout; the message's keys are made here from registers.
 */
#include <string.h>

#include "aesni.h"
#include "clmul128.h"

#define GCM_UNROLL AESKIT_UNROLL(8)

/* ---- GCM-SIV, a short message whole (the gcmsiv_short slot) -----------
 * For a message whose POLYVAL input (AAD and data, each zero-padded, and
 * the lengths block) is at most SIV_SHORT blocks, RFC 8452's per-message
 * work in one function: the key-generating key encrypts LE32(i) || nonce
 * for i = 0..3 (0..5), the message's AES key is expanded from registers
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
 * GHASH's register image of its byte reversal (aesni.c's polyval
 * identity), and the hash key the mode builds for the ghash slot,
 * mulX_GHASH(rev(H)), stored as h_xinv does it (times x^-1), is then H
 * itself loaded as it is: the two x's cancel. So H^1 is the raw key, the
 * powers come from aeskit_clmul_mul as ghash_key's do, and S is the sum's
 * register stored as it is.
 *
 * Up to SIV_SHORT - 1 data blocks, the keystream is made for a constant 4
 * or 7 blocks (no AES is waited for longer: 7 blocks of rounds issue within
 * one block's latency chain). Everything is read into a stack buffer before
 * anything is written, so dst may be src, the AAD or the tag; the buffer,
 * the round keys and the derived blocks are wiped. Lengths are public and
 * are the only thing branched on. */
#define SIV_SHORT AESKIT_AESNI_SIV_SHORT

/* w blocks through the cipher under rk (w a constant at each call). */
AESKIT_INLINE void siv_encrypt(__m128i *x, size_t w, const uint8_t *rk, unsigned rounds)
{
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    aeskit_aesni_rounds(x, w, rk, rounds, 1);
}

/* p[0..w) ^= the keystream from counter block c (LE32 in bytes 0..3). */
AESKIT_INLINE void siv_ctr(uint8_t *p, size_t w, __m128i c, const uint8_t *rk, unsigned rounds)
{
    __m128i stream[SIV_SHORT];
    GCM_UNROLL
    for (size_t j = 0; j < w; j++)
        stream[j] = _mm_add_epi32(c, _mm_cvtsi32_si128((int)j));
    siv_encrypt(stream, w, rk, rounds);
    GCM_UNROLL
    for (size_t j = 0; j < w; j++)
        aeskit_store128(p + AESKIT_BLOCK * j,
                        _mm_xor_si128(aeskit_load128(p + AESKIT_BLOCK * j), stream[j]));
}

int aeskit_aesni_gcmsiv_short(const aeskit_key *kgk, int enc, const uint8_t nonce[12],
                              const uint8_t *aad, size_t aad_len, uint8_t *dst,
                              const uint8_t *src, size_t len, const uint8_t *tag,
                              uint8_t out[16])
{
    const size_t na = (aad_len + 15) / 16, nd = (len + 15) / 16;
    if (aad_len > 16 * SIV_SHORT || len > 16 * SIV_SHORT || na + nd + 1 > SIV_SHORT)
        return 0;
    const size_t n = na + nd + 1;
    const unsigned rounds = kgk->rounds;
    assert(rounds == 10 || rounds == 14);
    /* x: POLYVAL's blocks (AAD, data, lengths), and the data's CTR in
     * place; 7 blocks of room past the data for the fixed-width keystream */
    uint8_t x[(2 * SIV_SHORT) * AESKIT_BLOCK];
    uint8_t rk[(AESKIT_MAX_ROUNDS + 1) * AESKIT_BLOCK];
    uint8_t nb[AESKIT_BLOCK], ns[AESKIT_BLOCK];
    __m128i b[6], pw[SIV_SHORT];

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
    const __m128i top = _mm_set_epi32((int)0x80000000, 0, 0, 0);
    const __m128i c_in = enc ? _mm_setzero_si128() : _mm_or_si128(aeskit_load128(tag), top);

    /* the message's keys: H from blocks 0 and 1, the AES key from 2..3 (5) */
    const __m128i nv = aeskit_load128(nb);
    for (int i = 0; i < 6; i++)
        b[i] = _mm_or_si128(nv, _mm_cvtsi32_si128(i));
    if (rounds == 10)
        siv_encrypt(b, 4, aeskit_aesni_enc_keys(kgk), 10);
    else
        siv_encrypt(b, 6, aeskit_aesni_enc_keys(kgk), 14);
    aeskit_aesni_expand_enc(rk, _mm_unpacklo_epi64(b[2], b[3]), _mm_unpacklo_epi64(b[4], b[5]),
                            rounds);
    pw[0] = _mm_unpacklo_epi64(b[0], b[1]);
    for (size_t i = 1; i < n; i++)
        pw[i] = aeskit_clmul_mul(pw[i - 1], pw[0]);

    /* opening: the plaintext first (CTR from the received tag), the last
     * block's padding zeroed again for POLYVAL; the keystream ran on past
     * the data, so the lengths block goes in after it */
    if (!enc && nd > 0) {
        if (nd <= 4)
            siv_ctr(xd, 4, c_in, rk, rounds);
        else
            siv_ctr(xd, SIV_SHORT - 1, c_in, rk, rounds);
        memset(xd + len, 0, AESKIT_BLOCK * nd - len);
    }
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1), (uint64_t)aad_len * 8);
    aeskit_store_le64(x + AESKIT_BLOCK * (n - 1) + 8, (uint64_t)len * 8);

    aeskit_clmul_sum s = aeskit_clmul_zero();
    for (size_t j = 0; j < n; j++) {
        const __m128i p = pw[n - 1 - j];
        aeskit_clmul_mul_add(&s, aeskit_load128(x + AESKIT_BLOCK * j), p, aeskit_clmul_half(p));
    }
    __m128i t = _mm_xor_si128(aeskit_clmul_reduce(s), aeskit_load128(ns));
    t = _mm_andnot_si128(top, t);
    siv_encrypt(&t, 1, rk, rounds);

    if (enc && nd > 0) {
        const __m128i c = _mm_or_si128(t, top);
        if (nd <= 4)
            siv_ctr(xd, 4, c, rk, rounds);
        else
            siv_ctr(xd, SIV_SHORT - 1, c, rk, rounds);
    }
    if (len > 0)
        memcpy(dst, xd, len);
    aeskit_store128(out, t);

    aeskit_secure_zero(x, sizeof x);
    aeskit_secure_zero(rk, sizeof rk);
    aeskit_secure_zero(b, sizeof b);
    aeskit_secure_zero(pw, sizeof pw);
    return 1;
}
