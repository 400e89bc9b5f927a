/*
 * ccm.h: CCM (SP 800-38C, RFC 3610), modes/ccm.c. The AEAD descriptor the
 * glue serves (aeskit_ccm_aead), the per-key state it keeps, and the
 * formatting of the first blocks, which the tests reach directly (a
 * length beyond any buffer cannot be passed in one).
 *
 * CCM is not online: B0 holds the message's length, so a message is MACed
 * only once its length is known, and there is no streaming interface.
 */
#ifndef AESKIT_CCM_H
#define AESKIT_CCM_H

#include "aead.h"

extern const struct aeskit_aead aeskit_ccm_aead;

/*
 * A backend's fused CTR and CBC-MAC kernel (aeskit.h: optional fused
 * paths): CCM's by name, EAX's and SIV's opening too.
 *   ctr_cbcmac: CTR under kc with BE128 counters from ctr and CBC-MAC
 *          under k into mac in one pass (the CTR blocks ride in the MAC
 *          chain's idle cycles). kc is k for CCM and EAX; SIV's CTR key
 *          differs from its MAC key (both of this backend and one size).
 *          mac_dst=1 MACs the blocks written (after the CTR), mac_dst=0 the
 *          blocks read (before it, so dst == src works): CCM MACs the
 *          plaintext, EAX the ciphertext, SIV's opening the plaintext it
 *          makes. Never branches on ctr: EAX's is a secret.
 */
typedef size_t aeskit_ctr_cbcmac_fn(const aeskit_key *k, const aeskit_key *kc, int mac_dst,
                                    uint8_t ctr[16], uint8_t mac[16], uint8_t *dst,
                                    const uint8_t *src, size_t n);
struct aeskit_ccm_impl {
    aeskit_ctr_cbcmac_fn *ctr_cbcmac;   /* never NULL */
};

/* What an AESCCM object keeps: the expanded key and the tag length, which
 * B0's flags carry. */
typedef struct aeskit_ccm_key {
    aeskit_key key;
    unsigned tag_len;   /* 4, 6, ..., 16 */
} aeskit_ccm_key;

#define AESKIT_CCM_NONCE_MIN 7
#define AESKIT_CCM_NONCE_MAX 13

/* Most bytes of data with a nonce of nonce_len bytes (7..13): the length
 * field holds q = 15 - nonce_len bytes, so 2^(8q) - 1 (2^64 - 1 for q 8). */
uint64_t aeskit_ccm_max_data(size_t nonce_len);

/* B0 (SP 800-38C A.2.1): flags (Adata, (t-2)/2, q-1) || nonce || the data
 * length in q bytes. data_len at most aeskit_ccm_max_data(nonce_len). */
void aeskit_ccm_b0(uint8_t b0[16], const uint8_t *nonce, size_t nonce_len, unsigned tag_len,
                   uint64_t data_len, int has_aad);

/* The encoding of a nonzero AAD length that precedes the AAD (A.2.2):
 * 2 bytes below 2^16 - 2^8, 0xff 0xfe and 4 bytes below 2^32, else 0xff
 * 0xff and 8 bytes. Returns its size (2, 6 or 10). */
size_t aeskit_ccm_aad_prefix(uint8_t out[10], uint64_t aad_len);

#endif
