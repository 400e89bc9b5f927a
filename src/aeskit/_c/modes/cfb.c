/*
 * cfb.c: CFB with 128-bit segments (SP 800-38A) through the backend's
 * cfb_enc and cfb_dec slots, over the keystream stream CFB, OFB and CTR
 * share (modes/block.c). The chaining value is the head's buf between
 * blocks: the slots chain on it in place, a partial block's keystream is
 * its encryption, and the ciphertext bytes the partial block makes
 * replace that keystream there, so that a finished block leaves its
 * ciphertext, the next chaining value. Contracts: block.h.
 */
#include <string.h>

#include "block.h"

struct cfb_state {
    aeskit_keystream head;
    aeskit_chain_fn *run;   /* the key's cfb_enc or cfb_dec */
};

AESKIT_HEADED_STATE(struct cfb_state);

static void cfb_blocks(void *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    struct cfb_state *s = st;
    s->run(s->head.key, s->head.buf, dst, src, n);
}

static void cfb_next(void *st)
{
    struct cfb_state *s = st;
    const aeskit_key *k = s->head.key;
    k->impl->ecb_enc(k, s->head.buf, s->head.buf, 1);
}

static void cfb_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct cfb_state *s = st;
    aeskit_keystream_init(&s->head, cfb_blocks, cfb_next, keys, enc);
    s->run = enc ? keys->impl->cfb_enc : keys->impl->cfb_dec;
    memcpy(s->head.buf, iv, 16);
}

const struct aeskit_cipher aeskit_cfb_cipher = {
    AESKIT_KEYSTREAM_CIPHER(CFB, "AES in CFB mode with 128-bit segments (SP 800-38A)."),
    .facts = {.floor_enc = "serial", .floor_dec = "parallel"},
    .state = sizeof(struct cfb_state),
    .init = cfb_init,
};
