/*
 * aesni.h: what the aesni library (aesni.c with simd_body.h) exports to the other x86 backends: its key layout, which
 * the vaes tables share (their set_key is aesni's), and the functions they
 * point their serial slots at or call for a few blocks. Contracts:
 * aeskit.h; notes at the definitions.
 */
#ifndef AESKIT_AESNI_H
#define AESKIT_AESNI_H

#include "modes/ccm.h"
#include "modes/gcm.h"
#include "modes/gcmsiv.h"
#include "modes/ocb.h"
#include "modes/xaes.h"
#include "x86.h"

/* Two builds of one library (meson.build, tests/cross/sources.sh): aesni.c
 * with the SSE encodings, for AES-NI CPUs without AVX, and aesni_avx.c,
 * the same file with -mavx and AESKIT_AESNI_VEX, whose table dispatch.c
 * puts first under the same name where the OS saves the YMM state. The
 * VEX forms are three-operand: no register copies for SSE's destructive
 * forms, which the GHASH half of a GCM batch needs most (on Zen 4, kernel
 * layer, 16 KiB: GCM 5-6%, GHASH 5%, GCM-SIV opening 8% faster; CTR and
 * CBC decryption within 1.5%, ECB unchanged). Each build's symbols carry
 * its own name; the vaes tables (AVX CPUs only) define AESKIT_AESNI_VEX
 * too, so their short inputs and serial slots run the VEX build. */
#if defined(AESKIT_AESNI_VEX)
#define aeskit_aesni_expand_key     aeskit_aesni_avx_expand_key
#define aeskit_aesni_expand_enc_key aeskit_aesni_avx_expand_enc_key
#define aeskit_aesni_expand_enc     aeskit_aesni_avx_expand_enc
#define aeskit_aesni_ecb_enc        aeskit_aesni_avx_ecb_enc
#define aeskit_aesni_ecb_dec        aeskit_aesni_avx_ecb_dec
#define aeskit_aesni_cbc_dec        aeskit_aesni_avx_cbc_dec
#define aeskit_aesni_cfb_dec        aeskit_aesni_avx_cfb_dec
#define aeskit_aesni_ctr            aeskit_aesni_avx_ctr
#define aeskit_aesni_xts            aeskit_aesni_avx_xts
#define aeskit_aesni_xts_units      aeskit_aesni_avx_xts_units
#define aeskit_aesni_ghash_key      aeskit_aesni_avx_ghash_key
#define aeskit_aesni_ghash          aeskit_aesni_avx_ghash
#define aeskit_aesni_polyval        aeskit_aesni_avx_polyval
#define aeskit_aesni_ocb            aeskit_aesni_avx_ocb
#define aeskit_aesni_gcm            aeskit_aesni_avx_gcm
#define aeskit_aesni_gcm_short      aeskit_aesni_avx_gcm_short
#define aeskit_aesni_gcmsiv_open    aeskit_aesni_avx_gcmsiv_open
#define aeskit_aesni_ctr_cbcmac     aeskit_aesni_avx_ctr_cbcmac
#define aeskit_aesni_gcmsiv_short   aeskit_aesni_avx_gcmsiv_short
#define aeskit_aesni_cbc_x          aeskit_aesni_avx_cbc_x
#define aeskit_aesni_cbc_enc        aeskit_aesni_avx_cbc_enc
#define aeskit_aesni_cfb_enc        aeskit_aesni_avx_cfb_enc
#define aeskit_aesni_ofb            aeskit_aesni_avx_ofb
#define aeskit_aesni_cbc_mac        aeskit_aesni_avx_cbc_mac
#define aeskit_aesni_ccm            aeskit_aesni_avx_ccm
#define aeskit_aesni_xaes           aeskit_aesni_avx_xaes
#define aeskit_aesni_impl           aeskit_aesni_avx_impl
#endif

/* The key layout: the round keys as FIPS-197 writes them, rk[0..rounds]
 * for aesenc, then the Equivalent Inverse Cipher's (aesimc of the middle
 * ones, reversed) for aesdec. */
static_assert(sizeof(((aeskit_key *)0)->rk) >= 2 * (AESKIT_MAX_ROUNDS + 1) * AESKIT_BLOCK,
              "aeskit_key.rk holds both aesni schedules");

AESKIT_INLINE const uint8_t *aeskit_aesni_enc_keys(const aeskit_key *k)
{
    return (const uint8_t *)k->rk;
}

AESKIT_INLINE const uint8_t *aeskit_aesni_dec_keys(const aeskit_key *k)
{
    return (const uint8_t *)k->rk + AESKIT_BLOCK * (k->rounds + 1);
}

/* Blocks per batch of the library's kernels, exported to the tests by the
 * table (aeskit_impl.constants). */
#define AESKIT_AESNI_W 8         /* simd_body.h: the parallel modes and GHASH's reduction */
#define AESKIT_AESNI_GCM_W AESKIT_AESNI_W /* simd_body.h: the fused GCM */
#define AESKIT_AESNI_OCB_W AESKIT_AESNI_W /* simd_body.h: the fused OCB3 */
#define AESKIT_AESNI_SIV_SHORT 8 /* simd_body.h: POLYVAL blocks of a short GCM-SIV message */
#define AESKIT_AESNI_XAES_SHORT 8 /* aesni.c: GHASH blocks of a short XAES-256-GCM message */

/* w blocks (a constant at every call, so the loops unroll and the blocks
 * stay in registers) XORed with the whitening key, then rounds 1..rounds
 * of the cipher (enc) or of the Equivalent Inverse Cipher; the files of
 * this library share them. */
AESKIT_INLINE void aeskit_aesni_whiten(__m128i *x, size_t w, __m128i key)
{
    AESKIT_UNROLL(8)
    for (size_t j = 0; j < w; j++)
        x[j] = _mm_xor_si128(x[j], key);
}

AESKIT_INLINE void aeskit_aesni_rounds(__m128i *x, size_t w, const uint8_t *rk, unsigned rounds,
                                       int enc)
{
    const uint8_t *last = rk + AESKIT_BLOCK * rounds;
    for (const uint8_t *p = rk + AESKIT_BLOCK; p < last; p += AESKIT_BLOCK) {
        const __m128i key = aeskit_load128(p);
        AESKIT_UNROLL(8)
        for (size_t j = 0; j < w; j++)
            x[j] = enc ? _mm_aesenc_si128(x[j], key) : _mm_aesdec_si128(x[j], key);
    }
    const __m128i key = aeskit_load128(last);
    AESKIT_UNROLL(8)
    for (size_t j = 0; j < w; j++)
        x[j] = enc ? _mm_aesenclast_si128(x[j], key) : _mm_aesdeclast_si128(x[j], key);
}

/* Encryption on w blocks (a constant at each call) in two parts, the
 * whitening and rounds 1..r-1 (head), then rounds r..rounds-1 and the last
 * (tail), r <= 10; the rounds written out, with a branch on the (public)
 * key size for those AES-192 and AES-256 add, where aeskit_aesni_rounds
 * loops over the schedule. For the many-message kernels (gcm_short): a
 * message's few blocks make the loop's bookkeeping most of a round's work
 * beside its aesencs, and the next message's rounds are split around this
 * one's GHASH. */
AESKIT_INLINE void aeskit_aesni_encrypt_head(__m128i *x, size_t w, const uint8_t *rk, unsigned r)
{
    assert(r <= 10);
    aeskit_aesni_whiten(x, w, aeskit_load128(rk));
    AESKIT_UNROLL(10)
    for (unsigned i = 1; i < r; i++) {
        const __m128i key = aeskit_load128(rk + AESKIT_BLOCK * i);
        AESKIT_UNROLL(8)
        for (size_t j = 0; j < w; j++)
            x[j] = _mm_aesenc_si128(x[j], key);
    }
}

AESKIT_INLINE void aeskit_aesni_encrypt_tail(__m128i *x, size_t w, const uint8_t *rk,
                                             unsigned rounds, unsigned r)
{
    assert(r <= 10);
    AESKIT_UNROLL(14)
    for (unsigned i = r; i < 14; i++) {
        if (i >= 10 && i >= rounds)
            break;
        const __m128i key = aeskit_load128(rk + AESKIT_BLOCK * i);
        AESKIT_UNROLL(8)
        for (size_t j = 0; j < w; j++)
            x[j] = _mm_aesenc_si128(x[j], key);
    }
    const __m128i key = aeskit_load128(rk + AESKIT_BLOCK * rounds);
    AESKIT_UNROLL(8)
    for (size_t j = 0; j < w; j++)
        x[j] = _mm_aesenclast_si128(x[j], key);
}

/* Expands key into k in the layout above; leaves k->impl to the caller. */
void aeskit_aesni_expand_key(aeskit_key *k, const uint8_t *key, size_t len);
/* The encryption keys alone (the set_enc_key slot): rk[0..rounds] in the
 * layout above, used set to their bytes, the rest of k->rk untouched;
 * leaves k->impl to the caller. */
void aeskit_aesni_expand_enc_key(aeskit_key *k, const uint8_t *key, size_t len);
/* The encryption schedule alone, rk[0..rounds] into enc, of the AES-128 key
 * lo (rounds 10), the AES-192 key lo || hi's low 8 bytes (rounds 12) or the
 * AES-256 key lo || hi (rounds 14), from registers:
 * for keys made per message and used only to encrypt (GCM-SIV's). */
void aeskit_aesni_expand_enc(uint8_t *enc, __m128i lo, __m128i hi, unsigned rounds);

/* simd_body.h's, on this key layout */
aeskit_ecb_fn aeskit_aesni_ecb_enc;
aeskit_ecb_fn aeskit_aesni_ecb_dec;
aeskit_chain_fn aeskit_aesni_cbc_dec;
aeskit_chain_fn aeskit_aesni_cfb_dec;
aeskit_ctr_fn aeskit_aesni_ctr;
aeskit_xts_fn aeskit_aesni_xts;
aeskit_xts_units_fn aeskit_aesni_xts_units;
aeskit_ghash_key_fn aeskit_aesni_ghash_key;
aeskit_ghash_fn aeskit_aesni_ghash;
aeskit_ghash_fn aeskit_aesni_polyval;
aeskit_ocb_fn aeskit_aesni_ocb;
aeskit_gcm_fn aeskit_aesni_gcm;
aeskit_gcm_short_fn aeskit_aesni_gcm_short;
aeskit_gcmsiv_open_fn aeskit_aesni_gcmsiv_open;
aeskit_ctr_cbcmac_fn aeskit_aesni_ctr_cbcmac;
aeskit_gcmsiv_short_fn aeskit_aesni_gcmsiv_short;
aeskit_cbc_x_fn aeskit_aesni_cbc_x;
/* aesni.c's own */
aeskit_chain_fn aeskit_aesni_cbc_enc;
aeskit_chain_fn aeskit_aesni_cfb_enc;
aeskit_chain_fn aeskit_aesni_ofb;
aeskit_cbc_mac_fn aeskit_aesni_cbc_mac;
extern const struct aeskit_ccm_impl aeskit_aesni_ccm;   /* the vaes tables' too */
extern const struct aeskit_xaes_impl aeskit_aesni_xaes; /* likewise */

#endif
