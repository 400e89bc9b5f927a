/*
 * ofb.c: OFB (SP 800-38A) through the backend's ofb slot, over the
 * keystream stream CFB, OFB and CTR share (modes/block.c). Contracts:
 * block.h.
 */
#include <string.h>

#include "block.h"

struct ofb_state {
    aeskit_keystream head;
    uint8_t iv[16];         /* the last keystream block */
};

AESKIT_HEADED_STATE(struct ofb_state);

static void ofb_blocks(void *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    struct ofb_state *s = st;
    s->head.key->impl->ofb(s->head.key, s->iv, dst, src, n);
}

static void ofb_next(void *st)
{
    struct ofb_state *s = st;
    const aeskit_key *k = s->head.key;
    k->impl->ecb_enc(k, s->head.buf, s->iv, 1);
    memcpy(s->iv, s->head.buf, 16);
}

static void ofb_init(void *st, const aeskit_key *keys, int enc, const uint8_t *iv)
{
    struct ofb_state *s = st;
    aeskit_keystream_init(&s->head, ofb_blocks, ofb_next, keys, enc);
    memcpy(s->iv, iv, 16);
}

const struct aeskit_cipher aeskit_ofb_cipher = {
    AESKIT_KEYSTREAM_CIPHER(OFB, "AES in OFB mode (SP 800-38A)."),
    .facts = {.floor_enc = "serial", .floor_dec = "serial"},
    .state = sizeof(struct ofb_state),
    .init = ofb_init,
};
