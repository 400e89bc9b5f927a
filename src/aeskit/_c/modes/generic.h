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

#endif
