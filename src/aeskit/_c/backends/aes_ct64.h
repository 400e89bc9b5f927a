/*
 * aes_ct64.h: the bitsliced AES core behind the portable backend.
 *
 * Four blocks at a time on eight uint64_t words, constant time by
 * construction (no table lookups, no data-dependent branches or
 * addresses). The layout of the words is private to aes_ct64.c; callers
 * see bytes in, bytes out. portable.c builds the backend table on it.
 */
#ifndef AESKIT_AES_CT64_H
#define AESKIT_AES_CT64_H

#include <stddef.h>
#include <stdint.h>

/* Words of bitsliced round keys: 8 per round key, rounds + 1 of them. */
#define AESKIT_CT64_RK_WORDS(rounds) (8 * ((size_t)(rounds) + 1))

/* Expands a 16-, 24- or 32-byte key into AESKIT_CT64_RK_WORDS(rounds)
 * words of rk and returns rounds (10, 12 or 14). Leaves no key material
 * on the stack. */
unsigned aeskit_ct64_expand_key(uint64_t *rk, const uint8_t *key, size_t len);

/* Encrypts / decrypts four consecutive blocks: 64 bytes of src into 64
 * bytes of dst. dst == src is allowed; no alignment is required. */
void aeskit_ct64_encrypt4(const uint64_t *rk, unsigned rounds, uint8_t dst[64],
                          const uint8_t src[64]);
void aeskit_ct64_decrypt4(const uint64_t *rk, unsigned rounds, uint8_t dst[64],
                          const uint8_t src[64]);

#endif
