/*
 * siv.h: AES-SIV (RFC 5297), modes/siv.c, over CMAC (modes/cmac.h) and the
 * ecb, cbc_mac and ctr slots. The AEAD descriptor the glue serves
 * (aeskit_siv_aead) and the one-shot entry points under it.
 */
#ifndef AESKIT_SIV_H
#define AESKIT_SIV_H

#include "aead.h"
#include "cmac.h"

extern const struct aeskit_aead aeskit_siv_aead;

/* At most 126 items of associated data: S2V takes at most 127 vectors
 * (RFC 5297 2.6, 7), and the plaintext is the last. */
#define AESKIT_SIV_MAX_AD 126

/* What an AESSIV object keeps: K1 (S2V's CMAC, with its subkeys), K2 (CTR)
 * and S2V's first D = CMAC(K1, <zero>), which depends on K1 alone. */
typedef struct aeskit_siv_key {
    aeskit_cmac_key mac;
    aeskit_key ctr;
    uint8_t d0[16];
} aeskit_siv_key;

/* key is K1 || K2, key_len 32, 48 or 64. */
void aeskit_siv_key_init(aeskit_siv_key *sk, const struct aeskit_impl *impl,
                         const uint8_t *key, size_t key_len);

/* V = S2V(K1, AD_1, ..., AD_n, P) into v, and C = CTR(K2, V with bits 63 and
 * 31 cleared, P) into dst. n_ad <= AESKIT_SIV_MAX_AD. dst may equal src and
 * may overlap the associated data: all of it is read before dst is
 * written. */
void aeskit_siv_seal(const aeskit_siv_key *sk, const aeskit_span *ad, size_t n_ad,
                     uint8_t *dst, const uint8_t *src, size_t len, uint8_t v[16]);

/* P = CTR(K2, v cleared as above, C) into dst and the V it should have had,
 * S2V over the associated data and P, into expect: the caller compares
 * (in constant time) and wipes dst when they differ. Same overlap rules:
 * the associated data is read whole before dst is written. */
void aeskit_siv_open(const aeskit_siv_key *sk, const aeskit_span *ad, size_t n_ad,
                     uint8_t *dst, const uint8_t *src, size_t len, const uint8_t v[16],
                     uint8_t expect[16]);

#endif
