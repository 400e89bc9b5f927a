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

/* n messages at once: aeskit_ctr_many, whose keystream for the short
 * ones (a few blocks each, where a ctr slot call per message costs several
 * times the AES work) comes from one ECB pass over their counter blocks
 * side by side. The IVs, counter blocks, are public as in ctr_blocks. */
static void ctr_encrypt_many(const aeskit_key *keys, int pkcs7, const aeskit_block_item *items,
                             size_t n)
{
    aeskit_ctr_item m[AESKIT_CIPHER_MANY] = {{.len = 0}};   /* set before use; gcc 12 cannot tell */
    assert(!pkcs7 && n <= AESKIT_CIPHER_MANY);
    (void)pkcs7;
    for (size_t i = 0; i < n; i++) {
        memcpy(m[i].ctr, items[i].iv, 16);
        m[i].dst = items[i].dst;
        m[i].src = items[i].src;
        m[i].len = items[i].len;
    }
    aeskit_ctr_many(keys, AESKIT_CTR_BE128, m, n, NULL);
}

const struct aeskit_cipher aeskit_ctr_cipher = {
    AESKIT_KEYSTREAM_CIPHER(CTR, "AES in CTR mode (SP 800-38A): the iv is the first counter "
                                 "block, counted as one 128-bit big-endian integer."),
    .facts = {.floor_enc = "parallel", .floor_dec = "parallel"},
    .state = sizeof(struct ctr_state),
    .init = ctr_init,
    .encrypt_many = ctr_encrypt_many,
    .decrypt_is_encrypt = 1,
};
