/*
 * cfb8.c: CFB with 8-bit segments (SP 800-38A): one block encryption per
 * byte, each needing the byte before it, so there is nothing for a bulk
 * slot to do; the backend's ecb_enc serves it a block at a time.
 * Contracts: block.h.
 */
#include <string.h>

#include "block.h"
#include "common.h"

struct cfb8_state {
    const aeskit_key *key;
    uint8_t iv[16];         /* the last 16 ciphertext bytes (at first the iv) */
    uint8_t enc;            /* 1 encrypt, 0 decrypt */
};

AESKIT_CIPHER_STATE(struct cfb8_state);

static void cfb8_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct cfb8_state *s = st;
    s->key = keys;
    s->enc = (uint8_t)(enc != 0);
    memcpy(s->iv, iv, 16);
}

static size_t cfb8_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    struct cfb8_state *s = st;
    const aeskit_key *k = s->key;
    uint8_t ks[16];
    for (size_t i = 0; i < len; i++) {
        k->impl->ecb_enc(k, ks, s->iv, 1);
        const uint8_t in = src[i], out = in ^ ks[0];
        dst[i] = out;
        memmove(s->iv, s->iv + 1, 15);
        s->iv[15] = s->enc ? out : in;
    }
    aeskit_secure_zero(ks, sizeof ks);
    return len;
}

const struct aeskit_cipher aeskit_cfb8_cipher = {
    AESKIT_ONE_KEY_CIPHER(CFB8, "iv", "", "AES in CFB mode with 8-bit segments (SP 800-38A).",
                          ""),
    .facts = {.floor_enc = "serial", .floor_dec = "serial", .chained_aes = 16},
    .state = sizeof(struct cfb8_state),
    .init = cfb8_init,
    .out_len = aeskit_same_out_len,
    .update = cfb8_update,
    .finish = aeskit_nothing_held,
};
