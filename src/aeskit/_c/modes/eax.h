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

/* What an AESEAX object keeps: CMAC's key and subkeys, and for each OMAC
 * prefix [t], t = 0, 1, 2, the chain value after it, E([t]), and the OMAC
 * of no data, E([t] ^ K1): three AES calls fewer per message, a third of
 * a short one's. */
typedef struct aeskit_eax_key {
    aeskit_cmac_key ck;
    uint8_t after[3][16];
    uint8_t empty[3][16];
} aeskit_eax_key;

/*
 * Streaming: init, any number of aad calls, any number of update calls,
 * then finish. Nonce and associated data of any length (0 included);
 * every update writes all the bytes it takes. dst == src allowed in
 * update; decryption MACs each block of ciphertext before it can be
 * overwritten. The counter, N' = OMAC^0(N), is a secret: it runs through
 * the ctr slot as AESKIT_CTR_BE128_SECRET.
 */
typedef struct aeskit_eax {
    const aeskit_eax_key *ek;
    aeskit_cmac h;      /* OMAC^1 over the associated data, after [1] */
    aeskit_cmac c;      /* OMAC^2 over the ciphertext, after [2] */
    uint8_t n[16];      /* N' = OMAC^0(nonce), the first counter */
    uint8_t ctr[16];    /* the next counter block */
    uint8_t stream[16];     /* keystream of the current partial block */
    unsigned pos;       /* bytes of stream used; 0: no partial block */
    uint8_t enc;
} aeskit_eax;

void aeskit_eax_key_init(aeskit_eax_key *ek, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len);
void aeskit_eax_init(aeskit_eax *e, const aeskit_eax_key *ek, int enc, const uint8_t *nonce,
                     size_t nonce_len);
void aeskit_eax_aad(aeskit_eax *e, const uint8_t *aad, size_t len);
void aeskit_eax_update(aeskit_eax *e, uint8_t *dst, const uint8_t *src, size_t len);
/* The full 16-byte tag; ends e. */
void aeskit_eax_finish(aeskit_eax *e, uint8_t tag[16]);

#endif
