/*
 * cmac.h: CMAC (NIST SP 800-38B, RFC 4493; OMAC1), modes/cmac.c, over the
 * cbc_mac slot. The core (init, update, final) serves the AESCMAC type
 * (aeskit_cmac_mac), EAX's three OMACs (modes/eax.c) and SIV's S2V.
 */
#ifndef AESKIT_CMAC_H
#define AESKIT_CMAC_H

#include "mac.h"

extern const struct aeskit_mac aeskit_cmac_mac;

/* The expanded key and the subkeys K1 = dbl(E(0)), K2 = dbl(K1). */
typedef struct aeskit_cmac_key {
    aeskit_key key;
    uint8_t k1[16], k2[16];
} aeskit_cmac_key;

/* A CMAC in progress. The last block so far (1..16 bytes, or none before
 * any data) is held back in buf: only at final is it known to be the last,
 * and so whether it takes K1 (whole) or K2 (padded). Plain data: a copy
 * is an independent context. */
typedef struct aeskit_cmac {
    const aeskit_cmac_key *ck;
    uint8_t mac[16];    /* the CBC-MAC chain over the blocks before buf */
    uint8_t buf[16];
    unsigned pos;       /* bytes in buf, 0..16 */
} aeskit_cmac;

void aeskit_cmac_key_init(aeskit_cmac_key *ck, const struct aeskit_impl *impl,
                          const uint8_t *key, size_t key_len);
void aeskit_cmac_init(aeskit_cmac *c, const aeskit_cmac_key *ck);
/* init, then skip a first whole block whose chain value E(block) the
 * caller knows (EAX's [t] prefixes, computed once per key): only for a
 * message that goes on past that block (the block alone would be the last
 * one, which takes K1). */
void aeskit_cmac_init_after(aeskit_cmac *c, const aeskit_cmac_key *ck, const uint8_t mac[16]);
void aeskit_cmac_update(aeskit_cmac *c, const uint8_t *p, size_t len);   /* p: NULL if len 0 */
/* The full 16-byte tag of the data so far; c is unchanged and may go on. */
void aeskit_cmac_final(const aeskit_cmac *c, uint8_t tag[16]);
/* init, update and final over one message. */
void aeskit_cmac_oneshot(const aeskit_cmac_key *ck, const uint8_t *p, size_t len,
                         uint8_t tag[16]);
/* One message's CMAC as a chain of modes/chains.h, for the modes'
 * batches (aeskit_cmac_many, EAX's OMACs): from the value start (zero
 * for a plain CMAC; EAX: the value after its prefix [t]) over the len
 * bytes at p, their whole blocks but the last read in place (seg[0]), the
 * last as the chain takes it written to last (seg[1] of seg[2]); the chain's value
 * at the end is the tag. With empty non-NULL (a prefixed OMAC) a message
 * of no bytes has no blocks, and the value is empty (the OMAC of nothing,
 * kept with the key). Returns the count of whole blocks before the last. */
struct aeskit_chain;
struct aeskit_seg;
size_t aeskit_cmac_chain(const aeskit_cmac_key *ck, struct aeskit_chain *c,
                         struct aeskit_seg *seg, uint8_t last[16], const uint8_t start[16],
                         const uint8_t *empty, const uint8_t *p, size_t len);
/* oneshot over n <= AESKIT_MAC_MANY messages at once, their chains
 * interleaved (the backend's cbc_x, modes/chains.h). */
struct aeskit_span;
void aeskit_cmac_many(const aeskit_cmac_key *ck, const struct aeskit_span *msgs, size_t n,
                      uint8_t (*tags)[16]);

#endif
