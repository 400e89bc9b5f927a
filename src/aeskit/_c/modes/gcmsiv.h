/*
 * gcmsiv.h: AES-GCM-SIV (RFC 8452), modes/gcmsiv.c. The AEAD descriptor
 * the glue serves (aeskit_gcmsiv_aead) and the one-shot entry points under
 * it. An AESGCMSIV object keeps only the key-generating key (an
 * aeskit_key): every message derives its own AES and hash keys.
 */
#ifndef AESKIT_GCMSIV_H
#define AESKIT_GCMSIV_H

#include "aead.h"

extern const struct aeskit_aead aeskit_gcmsiv_aead;

/* RFC 8452 6: P_MAX = A_MAX = 2^36 bytes (the 32-bit block counter's reach) */
#define AESKIT_GCMSIV_MAX (UINT64_C(1) << 36)

/* One message; kgk the key-generating key (128 or 256 bits), nonce 12
 * bytes, lengths checked by the caller. dst may equal src or overlap the
 * nonce and the AAD; aad and src may be NULL when their length is 0. open
 * decrypts with the received tag and writes the tag the plaintext gives to
 * expect; the caller compares. */
void aeskit_gcmsiv_seal(const aeskit_key *kgk, const uint8_t nonce[12], const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        uint8_t tag[16]);
void aeskit_gcmsiv_open(const aeskit_key *kgk, const uint8_t nonce[12], const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        const uint8_t tag[16], uint8_t expect[16]);

#endif
