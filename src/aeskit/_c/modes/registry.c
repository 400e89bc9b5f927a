/*
 * registry.c: the modes the Python types are made from, one entry each,
 * in the order the module adds them. A new mode is its file in modes/ and
 * a line here; py/ reads only these lists.
 */
#include "aead.h"
#include "block.h"

extern const struct aeskit_cipher aeskit_ecb_cipher, aeskit_cbc_cipher, aeskit_cfb_cipher,
    aeskit_cfb8_cipher, aeskit_ofb_cipher, aeskit_ctr_cipher;
extern const struct aeskit_aead aeskit_gcm_aead, aeskit_ocb3_aead;

const struct aeskit_cipher *const aeskit_ciphers[] = {
    &aeskit_ecb_cipher, &aeskit_cbc_cipher, &aeskit_cfb_cipher,
    &aeskit_cfb8_cipher, &aeskit_ofb_cipher, &aeskit_ctr_cipher,
    NULL,
};

const struct aeskit_aead *const aeskit_aeads[] = {
    &aeskit_gcm_aead,
    &aeskit_ocb3_aead,
    NULL,
};
