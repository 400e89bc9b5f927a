/*
 * cbc.c: CBC (SP 800-38A) through the backend's cbc_enc and cbc_dec
 * slots; the stream (a partial block pending, PKCS#7 optional) is the one
 * ECB and CBC share (modes/block.c). Contracts: block.h.
 */
#include <string.h>

#include "block.h"
#include "chains.h"
#include "common.h"
#include "padding.h"

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

/* Each message one chain (modes/chains.h): its whole blocks in place, then
 * with padding its last partial block padded in last[i], copied before any
 * output is written (dst may be src). */
static void cbc_encrypt_many(const aeskit_key *keys, int pkcs7, const aeskit_block_item *items,
                             size_t n)
{
    aeskit_chain c[AESKIT_CIPHER_MANY];
    aeskit_seg seg[AESKIT_CIPHER_MANY][2];
    uint8_t last[AESKIT_CIPHER_MANY][16];
    assert(n <= AESKIT_CIPHER_MANY);
    for (size_t i = 0; i < n; i++) {
        const aeskit_block_item *it = &items[i];
        const size_t body = it->len / 16, rest = it->len % 16;
        assert(pkcs7 || rest == 0);
        seg[i][0] = (aeskit_seg){.src = it->src, .dst = it->dst, .blocks = body};
        c[i].n_seg = 1;
        if (pkcs7) {
            memcpy(last[i], it->src + 16 * body, rest);
            aeskit_pkcs7_pad(last[i], (unsigned)rest);
            seg[i][1] = (aeskit_seg){.src = last[i], .dst = it->dst + 16 * body, .blocks = 1};
            c[i].n_seg = 2;
        }
        memcpy(c[i].v, it->iv, 16);
        c[i].seg = seg[i];
    }
    aeskit_cbc_chains(keys, 1, c, n);
    if (pkcs7)
        aeskit_secure_zero(last, n * sizeof last[0]);
}

const struct aeskit_cipher aeskit_cbc_cipher = {
    AESKIT_PADDED_CIPHER(CBC, "iv",
                         "AES in CBC mode (SP 800-38A): whole blocks, or PKCS#7 padding."),
    .facts = {.floor_enc = "serial", .floor_dec = "parallel"},
    .state = sizeof(struct cbc_state),
    .init = cbc_init,
    .encrypt_many = cbc_encrypt_many,
};
