/*
 * eax.h: EAX (Bellare, Rogaway and Wagner, "The EAX Mode of Operation",
 * FSE 2004), modes/eax.c, over CMAC (modes/cmac.h) and the ctr slot. The
 * AEAD descriptor the glue serves (aeskit_eax_aead) and the streaming
 * entry points under it.
 */
#ifndef AESKIT_EAX_H
#define AESKIT_EAX_H

#include "aead.h"
#include "cmac.h"

extern const struct aeskit_aead aeskit_eax_aead;

/*
 * Streaming: init, any number of aad calls, any number of update calls,
 * then finish. Nonce and associated data of any length (0 included);
 * every update writes all the bytes it takes. dst == src allowed in
 * update; decryption MACs each block of ciphertext before it can be
 * overwritten. The counter, N' = OMAC^0(N), is a secret: it runs through
 * the ctr slot as AESKIT_CTR_BE128_SECRET.
 */
typedef struct aeskit_eax {
    aeskit_cmac h;      /* OMAC^1 over the associated data */
    aeskit_cmac c;      /* OMAC^2 over the ciphertext */
    uint8_t n[16];      /* N' = OMAC^0(nonce), the first counter */
    uint8_t ctr[16];    /* the next counter block */
    uint8_t ks[16];     /* keystream of the current partial block */
    unsigned pos;       /* bytes of ks used; 0: no partial block */
    uint8_t enc;
} aeskit_eax;

void aeskit_eax_init(aeskit_eax *e, const aeskit_cmac_key *ck, int enc, const uint8_t *nonce,
                     size_t nonce_len);
void aeskit_eax_aad(aeskit_eax *e, const uint8_t *aad, size_t len);
void aeskit_eax_update(aeskit_eax *e, uint8_t *dst, const uint8_t *src, size_t len);
/* The full 16-byte tag; ends e. */
void aeskit_eax_finish(aeskit_eax *e, uint8_t tag[16]);

#endif
