/*
 * generic.h: slots built only on a backend's own ecb_enc / ecb_dec
 * (modes/generic.c). A backend with nothing faster for a slot points the
 * slot here; the portable backend points all of them here. Contracts:
 * aeskit.h.
 */
#ifndef AESKIT_GENERIC_H
#define AESKIT_GENERIC_H

#include "aeskit.h"

aeskit_chain_fn aeskit_generic_cbc_enc;
aeskit_chain_fn aeskit_generic_cbc_dec;
aeskit_chain_fn aeskit_generic_cfb_enc;
aeskit_chain_fn aeskit_generic_cfb_dec;
aeskit_chain_fn aeskit_generic_ofb;
aeskit_ctr_fn aeskit_generic_ctr;
aeskit_cbc_mac_fn aeskit_generic_cbc_mac;
aeskit_xts_fn aeskit_generic_xts;
/* Each step gathers the chains' next blocks (iv ^ block) into one buffer
 * for one ecb_enc call: as many chains as the backend's ECB takes at once
 * (portable's bitsliced core: 4) cost what one does. */
aeskit_cbc_x_fn aeskit_generic_cbc_x;

/* Expands key into k for encryption only: the backend's set_enc_key
 * (aeskit.h), or its set_key when it has none. For keys made per message. */
static inline void aeskit_set_enc_key(const struct aeskit_impl *impl, aeskit_key *k,
                                      const uint8_t *key, size_t len)
{
    (impl->set_enc_key != NULL ? impl->set_enc_key : impl->set_key)(k, key, len);
}

/* Add `add` to the counter part of ctr that kind names, modulo its width,
 * without a branch on the counter. */
void aeskit_ctr_add(enum aeskit_ctr kind, uint8_t ctr[16], uint64_t add);

/* One message of aeskit_ctr_many: len bytes from src to dst (which may
 * equal src) under the keystream from the counter block ctr on, counted
 * as the call's kind says. */
typedef struct aeskit_ctr_item {
    uint8_t ctr[16];
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
} aeskit_ctr_item;

/* CTR over n independent messages (the batch methods: CCM, AESCTR). The
 * counter blocks of the short ones, of the long ones' last partial block
 * and of the masks, go side by side into one buffer for one ecb_enc call, however
 * few blocks each message has: a call of the ctr slot per short message
 * costs several times its AES work. A long one's whole blocks (at least
 * the backend's ctr_many_long, aeskit.h) take the ctr slot, which runs at
 * ECB's speed on them. Items never overlap one another but for dst == src. */
#define AESKIT_CTR_MANY_LONG 4   /* ctr_many_long where the ctr slot is fast from 4 blocks */
#define AESKIT_CTR_MANY_LONG_MAX 16   /* the most a backend may set: one ECB pass holds it */
/* mask: NULL, or n blocks, mask[i] encrypted in place in the same ECB
 * pass as the short messages' keystream (CCM: A_0 in, its tag mask S_0 =
 * E(A_0) out; no AES call of its own per message). A block apart from
 * m[i].ctr, not a count from it: the ctr slot's 16-byte load of a counter
 * just advanced by 8-byte stores would wait on them (no store
 * forwarding), which cost more than the separate ECB call it saved; and
 * an argument of the call, not a field of each item, so that the callers
 * with no masks (CTR, EAX, SIV) pay for them neither in the items' size
 * nor in a test per message (a field cost their 16-byte messages 6%). */
void aeskit_ctr_many(const aeskit_key *k, enum aeskit_ctr kind, const aeskit_ctr_item *m,
                     size_t n, uint8_t (*mask)[16]);

#endif
