/*
 * ctr.c: CTR (SP 800-38A), the counter one 128-bit big-endian integer,
 * through the backend's ctr slot, over the keystream stream CFB, OFB and
 * CTR share (modes/block.c). Contracts: block.h.
 */
#include <string.h>

#include "block.h"
#include "generic.h"

struct ctr_state {
    aeskit_keystream head;
    uint8_t ctr[16];        /* the next counter block */
};

AESKIT_HEADED_STATE(struct ctr_state);

static void ctr_blocks(void *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    struct ctr_state *s = st;
    s->head.key->impl->ctr(s->head.key, AESKIT_CTR_BE128, s->ctr, dst, src, n);
}

static void ctr_next(void *st)
{
    struct ctr_state *s = st;
    const aeskit_key *k = s->head.key;
    k->impl->ecb_enc(k, s->head.buf, s->ctr, 1);
    aeskit_ctr_add(AESKIT_CTR_BE128, s->ctr, 1);
}

static void ctr_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct ctr_state *s = st;
    aeskit_keystream_init(&s->head, ctr_blocks, ctr_next, keys, enc);
    memcpy(s->ctr, iv, 16);
}

const struct aeskit_cipher aeskit_ctr_cipher = {
    AESKIT_KEYSTREAM_CIPHER(CTR, "AES in CTR mode (SP 800-38A): the iv is the first counter "
                                 "block, counted as one 128-bit big-endian integer."),
    .facts = {.floor_enc = "parallel", .floor_dec = "parallel"},
    .state = sizeof(struct ctr_state),
    .init = ctr_init,
};
