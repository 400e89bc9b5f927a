/*
 * ocb.h: OCB3 (RFC 7253), modes/ocb.c. The AEAD descriptor the glue serves
 * (aeskit_ocb3_aead), the per-key state it keeps, and the streaming entry
 * points under it.
 */
#ifndef AESKIT_OCB_H
#define AESKIT_OCB_H

#include "aead.h"

extern const struct aeskit_aead aeskit_ocb3_aead;

/*
 * OCB3 (RFC 7253) per-key values, computed once at key setup by the mode
 * layer (modes/ocb.c): L_* = E(0), L_$ = double(L_*), L[i] = double^i(L_$).
 * L[i] serves every block index whose ntz is i; 64 cover any 64-bit index.
 */
typedef struct aeskit_ocb_key {
    uint8_t l_star[16];
    uint8_t l_dollar[16];
    uint8_t l[64][16];
} aeskit_ocb_key;

/* Where an OCB3 pass stands: the offset of the last block done, the
 * checksum of the plaintext so far, and how many blocks were done. */
typedef struct aeskit_ocb_state {
    uint8_t offset[16];
    uint8_t checksum[16];
    uint64_t blocks;
} aeskit_ocb_state;

/*
 * A backend's fused OCB3 kernel (aeskit.h: optional fused paths).
 *   crypt: enc=1 encrypts (checksum over the plaintext), enc=0 decrypts
 *          (checksum over the plaintext it produces), blocks numbered from
 *          st->blocks + 1.
 */
typedef size_t aeskit_ocb_fn(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                             aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src,
                             size_t n);
struct aeskit_ocb_impl {
    aeskit_ocb_fn *crypt;       /* never NULL */
};

/* What an AESOCB3 object keeps: the expanded key, the L table and the
 * tag length (part of the nonce's formatting). */
typedef struct aeskit_ocb3_key {
    aeskit_key key;
    aeskit_ocb_key ok;
    unsigned taglen;
} aeskit_ocb3_key;

/*
 * Streaming. Full data blocks are output as they complete; a final
 * partial block (1..15 bytes) can only be handled at finish, so update
 * outputs 16 * floor((pending + len) / 16) bytes and finish outputs the
 * pending 0..15. Nonce 1..15 bytes, tag 8..16 bytes (taglen is part of the
 * nonce formatting). AAD calls come before data. dst == src is allowed in
 * update (with pending bytes too).
 */
typedef struct aeskit_ocb {
    const aeskit_key *key;
    const aeskit_ocb_key *ok;
    aeskit_ocb_state st;        /* data: offset, checksum, blocks */
    aeskit_ocb_state ad;        /* AAD: offset, running Sum in checksum, blocks */
    uint8_t part[16];           /* pending data bytes */
    uint8_t apart[16];          /* pending AAD bytes */
    unsigned pos, apos;
    unsigned taglen;
    uint8_t enc;
} aeskit_ocb;

void aeskit_ocb_key_init(aeskit_ocb_key *ok, const aeskit_key *k);
void aeskit_ocb_init(aeskit_ocb *o, const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                     const uint8_t *nonce, size_t nonce_len, unsigned taglen);
void aeskit_ocb_aad(aeskit_ocb *o, const uint8_t *aad, size_t len);
size_t aeskit_ocb_update_len(const aeskit_ocb *o, size_t len);
size_t aeskit_ocb_update(aeskit_ocb *o, uint8_t *dst, const uint8_t *src, size_t len);
/* Writes the pending 0..15 bytes to dst (returns the count) and the full
 * 16-byte tag (the caller truncates to taglen); ends o. */
size_t aeskit_ocb_finish(aeskit_ocb *o, uint8_t *dst, uint8_t tag[16]);

#endif
