/*
 * xaes.h: XAES-256-GCM (C2SP XAES-256-GCM.md), modes/xaes.c. The AEAD
 * descriptor the glue serves (aeskit_xaes_aead) and the backend sub-table
 * of its per-message work.
 */
#ifndef AESKIT_XAES_H
#define AESKIT_XAES_H

#include "aead.h"

extern const struct aeskit_aead aeskit_xaes_aead;

/*
 * A backend's fused XAES-256-GCM kernel (aeskit.h: optional fused paths).
 *   key:  a message's GCM key but for the powers of H: from the AES-256
 *         key k, CMAC's subkey k1 and the message's 24-byte nonce,
 *         Kx = E(k, 00 01 'X' 00 || nonce[0..12] ^ k1) ||
 *              E(k, 00 02 'X' 00 || nonce[0..12] ^ k1),
 *         expanded into kx as the table's set_enc_key would (kx->impl =
 *         k->impl), h = E(Kx, 0^128) and ek_j0 = E(Kx, J0), J0 =
 *         nonce[12..24] || 0^31 || 1 (GCM's tag mask, which
 *         aeskit_gcm_oneshot then does not compute in an AES call of its
 *         own). The blocks, k's rounds, Kx's schedule and H's and J0's
 *         rounds (as each round key is made) run in registers: per message
 *         this is one dependency chain, which slot calls lengthen by their
 *         stores, loads and calls, and blocks built byte by byte in memory
 *         by loads that cannot forward. Kx leaves the kernel only in kx,
 *         which the caller wipes, as it wipes h and ek_j0.
 */
typedef void aeskit_xaes_key_fn(const aeskit_key *k, const uint8_t k1[16],
                                const uint8_t nonce[24], aeskit_key *kx, uint8_t h[16],
                                uint8_t ek_j0[16]);
/*
 *   short_msg: a whole XAES-256-GCM message under k and k1 as above, when
 *         its GHASH input (AAD and data, each zero-padded, and the lengths
 *         block) is short enough for the kernel: Kx, H and its powers, the
 *         counter blocks from nonce[12..24] || 0^31 || 1, GHASH and the tag
 *         in one function, Kx and the keystream never leaving it (the
 *         counter blocks ride Kx's round keys as they are made). enc=1: dst
 *         = the ciphertext, out = the tag; enc=0: dst = the plaintext, out
 *         = the tag the ciphertext gives (the mode compares). Reads nonce,
 *         aad and src before writing dst (any of them may overlap dst).
 *         Returns 0, having written nothing, when the message is too long
 *         for it; the mode then takes the general path. Branches on
 *         lengths only.
 */
typedef int aeskit_xaes_short_fn(const aeskit_key *k, const uint8_t k1[16],
                                 const uint8_t nonce[24], int enc, const uint8_t *aad,
                                 size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                                 uint8_t out[16]);
struct aeskit_xaes_impl {
    aeskit_xaes_key_fn *key;            /* never NULL */
    aeskit_xaes_short_fn *short_msg;    /* never NULL */
};

#endif
