/*
 * ecb.c: ECB, each block on its own through the backend's ecb slots; the
 * stream (a partial block pending, PKCS#7 optional) is the one ECB and
 * CBC share (modes/block.c). Contracts: block.h.
 */
#include "block.h"

struct ecb_state {
    aeskit_padded head;
    aeskit_ecb_fn *run;     /* the key's ecb_enc or ecb_dec */
};

AESKIT_HEADED_STATE(struct ecb_state);

static void ecb_blocks(void *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const struct ecb_state *s = st;
    s->run(s->head.key, dst, src, n);
}

static void ecb_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct ecb_state *s = st;
    (void)iv;               /* ECB has none */
    aeskit_padded_init(&s->head, ecb_blocks, keys, enc);
    s->run = enc ? keys->impl->ecb_enc : keys->impl->ecb_dec;
}

const struct aeskit_cipher aeskit_ecb_cipher = {
    AESKIT_PADDED_CIPHER(ECB, NULL,
                         "AES in ECB mode: whole blocks, each on its own, or PKCS#7 padding."),
    .facts = {.floor_enc = "parallel", .floor_dec = "parallel"},
    .state = sizeof(struct ecb_state),
    .init = ecb_init,
};
