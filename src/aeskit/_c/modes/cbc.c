/*
 * cbc.c: CBC (SP 800-38A) through the backend's cbc_enc and cbc_dec
 * slots; the stream (a partial block pending, PKCS#7 optional) is the one
 * ECB and CBC share (modes/block.c). Contracts: block.h.
 */
#include <string.h>

#include "block.h"

struct cbc_state {
    aeskit_padded head;
    aeskit_chain_fn *run;   /* the key's cbc_enc or cbc_dec */
    uint8_t iv[16];         /* the chaining value */
};

AESKIT_HEADED_STATE(struct cbc_state);

static void cbc_blocks(void *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    struct cbc_state *s = st;
    s->run(s->head.key, s->iv, dst, src, n);
}

static void cbc_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct cbc_state *s = st;
    aeskit_padded_init(&s->head, cbc_blocks, keys, enc);
    s->run = enc ? keys->impl->cbc_enc : keys->impl->cbc_dec;
    memcpy(s->iv, iv, 16);
}

const struct aeskit_cipher aeskit_cbc_cipher = {
    AESKIT_PADDED_CIPHER(CBC, "iv",
                         "AES in CBC mode (SP 800-38A): whole blocks, or PKCS#7 padding."),
    .facts = {.floor_enc = "serial", .floor_dec = "parallel"},
    .state = sizeof(struct cbc_state),
    .init = cbc_init,
};
