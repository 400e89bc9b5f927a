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

/*
 * A backend's fused GCM-SIV kernels (aeskit.h: optional fused paths).
 *   open:  NULL, or CTR with LE32 counters from ctr and POLYVAL (as the polyval
 *          slot) of the blocks it writes into acc, in one pass (GCM-SIV
 *          opening hashes the plaintext it makes), with hk from this
 *          backend's ghash_key for at least the kernel's batch (the mode's
 *          per-message key is). ctr (from the tag) is public. Used only
 *          with the table's polyval slot.
 *   short_msg: a whole GCM-SIV message (RFC 8452) under the
 *          key-generating key kgk, when its POLYVAL input (AAD and data,
 *          each zero-padded, and the lengths block) is short enough for
 *          the kernel: the per-message keys, POLYVAL, the tag and CTR in
 *          one function, the keys never leaving it. enc=1: dst = the
 *          ciphertext, out = the tag (tag unused); enc=0: dst = the
 *          plaintext under the received tag, out = the tag it gives (the
 *          mode compares). Reads nonce, aad and src before writing dst
 *          (any of them may overlap dst). Returns 0, having written
 *          nothing, when the message is too long for it; the mode then
 *          takes the general path. Branches on lengths only. kgk is
 *          of any AES key size.
 */
typedef size_t aeskit_gcmsiv_open_fn(const aeskit_key *k, const aeskit_ghash_key *hk,
                                     uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                                     const uint8_t *src, size_t n);
typedef int aeskit_gcmsiv_short_fn(const aeskit_key *kgk, int enc, const uint8_t nonce[12],
                                   const uint8_t *aad, size_t aad_len, uint8_t *dst,
                                   const uint8_t *src, size_t len, const uint8_t *tag,
                                   uint8_t out[16]);
struct aeskit_gcmsiv_impl {
    aeskit_gcmsiv_open_fn *open;
    aeskit_gcmsiv_short_fn *short_msg;   /* never NULL */
};

/* RFC 8452 6: P_MAX = A_MAX = 2^36 bytes (the 32-bit block counter's reach) */
#define AESKIT_GCMSIV_MAX (UINT64_C(1) << 36)

/* One message; kgk the key-generating key (128, 192 or 256 bits), nonce 12
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
