/*
 * cmac.c: CMAC (NIST SP 800-38B; RFC 4493) written once against the
 * backend table: the cbc_mac slot takes every block but the last, which
 * is held back until final, where it is whitened with K1 (a whole block)
 * or padded with 10* and whitened with K2. Contract: aeskit.h.
 *
 * The subkeys come from the shared doubling (aeskit_gf128_double_be,
 * common.h), masked, not branched on the secret's top bit. The last
 * block's padding and the choice between K1 and K2 depend only on the
 * length, which is public; they are still done as masks over all 16
 * bytes, so that the code takes the same path for every length of the
 * last block.
 */
#include "aead.h"    /* AESKIT_TAGS, aeskit_span */
#include "chains.h"
#include "cmac.h"
#include "common.h"

void aeskit_cmac_key_init(aeskit_cmac_key *ck, const struct aeskit_impl *impl,
                          const uint8_t *key, size_t key_len)
{
    uint8_t l[16] = {0};
    impl->set_key(&ck->key, key, key_len);
    impl->ecb_enc(&ck->key, l, l, 1);
    aeskit_gf128_double_be(ck->k1, l);
    aeskit_gf128_double_be(ck->k2, ck->k1);
    aeskit_secure_zero(l, sizeof l);
}

void aeskit_cmac_init(aeskit_cmac *c, const aeskit_cmac_key *ck)
{
    memset(c, 0, sizeof *c);
    c->ck = ck;
}

void aeskit_cmac_init_after(aeskit_cmac *c, const aeskit_cmac_key *ck, const uint8_t mac[16])
{
    aeskit_cmac_init(c, ck);
    memcpy(c->mac, mac, 16);
}

void aeskit_cmac_update(aeskit_cmac *c, const uint8_t *p, size_t len)
{
    const aeskit_key *k = &c->ck->key;
    if (len == 0)
        return;
    /* fill buf; a full buf is flushed only when more data follows it */
    if (c->pos < 16) {
        const size_t take = 16 - c->pos < len ? 16 - c->pos : len;
        memcpy(c->buf + c->pos, p, take);
        c->pos += (unsigned)take;
        p += take;
        len -= take;
        if (len == 0)
            return;
    }
    k->impl->cbc_mac(k, c->mac, c->buf, 1);
    /* every whole block but the one that may be last */
    const size_t n = (len - 1) / 16;
    k->impl->cbc_mac(k, c->mac, p, n);
    p += 16 * n;
    len -= 16 * n;
    memcpy(c->buf, p, len);
    c->pos = (unsigned)len;
}

/* The last block as the chain takes it: the first pos (0..16) bytes of
 * buf (the rest, whatever they hold, masked off) whitened with K1 when
 * they are a whole block, else padded with 10* and whitened with K2, ^ mac
 * (the chain so far). The masks come from windows into two constant rows
 * at the public length pos, 64 bits at a time. */
static void cmac_last(const aeskit_cmac_key *ck, const uint8_t buf[16], unsigned pos,
                      const uint8_t mac[16], uint8_t last[16])
{
    static const uint8_t ones[32] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    static const uint8_t bit[32] = {[16] = 0x80};   /* 10*: the 0x80 at byte pos */
    assert(pos <= 16);
    /* whole = all ones when buf holds a whole block (K1, no padding) */
    const uint64_t whole = 0 - (uint64_t)(pos == 16);
    for (unsigned h = 0; h < 16; h += 8) {
        uint64_t b, in, pad, k1, k2, m;
        memcpy(&b, buf + h, 8);
        memcpy(&in, ones + 16 - pos + h, 8);
        memcpy(&pad, bit + 16 - pos + h, 8);
        memcpy(&k1, ck->k1 + h, 8);
        memcpy(&k2, ck->k2 + h, 8);
        memcpy(&m, mac + h, 8);
        const uint64_t out = ((b & in) | pad) ^ ((k1 & whole) | (k2 & ~whole)) ^ m;
        memcpy(last + h, &out, 8);
    }
}

void aeskit_cmac_final(const aeskit_cmac *c, uint8_t tag[16])
{
    const aeskit_cmac_key *ck = c->ck;
    uint8_t last[16];
    cmac_last(ck, c->buf, c->pos, c->mac, last);
    ck->key.impl->ecb_enc(&ck->key, tag, last, 1);
    aeskit_secure_zero(last, sizeof last);
}

/* The last block of a message of len bytes at p as a chain from zero
 * takes it (cmac_last), into last; returns the count of whole blocks
 * before it. */
static size_t cmac_split(const aeskit_cmac_key *ck, const uint8_t *p, size_t len,
                         uint8_t last[16])
{
    static const uint8_t zero[16];
    uint8_t buf[16] = {0};   /* past pos: masked off */
    const size_t body = len == 0 ? 0 : (len - 1) / 16, pos = len - 16 * body;
    const uint8_t *tail = p + 16 * body;
    if (pos < 16 && pos > 0)
        memcpy(buf, tail, pos);
    cmac_last(ck, pos == 16 ? tail : buf, (unsigned)pos, zero, last);
    aeskit_secure_zero(buf, sizeof buf);
    return body;
}

size_t aeskit_cmac_chain(const aeskit_cmac_key *ck, aeskit_chain *c, aeskit_seg *seg,
                         uint8_t last[16], const uint8_t start[16], const uint8_t *empty,
                         const uint8_t *p, size_t len)
{
    c->seg = seg;
    if (len == 0 && empty != NULL) {
        memcpy(c->v, empty, 16);
        c->n_seg = 0;
        return 0;
    }
    const size_t body = cmac_split(ck, p, len, last);
    memcpy(c->v, start, 16);
    seg[0] = (aeskit_seg){.src = p, .blocks = body};
    seg[1] = (aeskit_seg){.src = last, .blocks = 1};
    c->n_seg = 2;
    return body;
}

/* n messages as independent chains (aeskit_cmac_chain), each read in
 * place but for its last block. Messages of one length (a column of
 * fixed-size values, the common batch) run in lockstep with their values
 * in tags, side by side, as cbc_x takes them, and no chain records; when
 * that length ends on a whole block, the block is read in place too and
 * K1 goes into the values before it (E(v ^ K1 ^ M_n), as cmac_last
 * makes it). Others go through the scheduler. */
void aeskit_cmac_many(const aeskit_cmac_key *ck, const aeskit_span *msgs, size_t n,
                      uint8_t (*tags)[16])
{
    static const uint8_t zero[16];
    uint8_t last[AESKIT_MAC_MANY][16];
    const uint8_t *src[AESKIT_MAC_MANY] = {NULL};   /* set before use; gcc 12 cannot tell */
    assert(n <= AESKIT_MAC_MANY);
    size_t alike = 1;
    for (size_t i = 0; i < n; i++) {   /* one pass: the lockstep's pointers, if alike */
        alike &= msgs[i].len == msgs[0].len;
        src[i] = msgs[i].p;
    }
    if (alike && n > 0) {
        const size_t len = msgs[0].len, body = len == 0 ? 0 : (len - 1) / 16;
        const int whole = len > 0 && len % 16 == 0;
        memset(tags, 0, n * sizeof tags[0]);
        aeskit_cbc_macs_even(&ck->key, tags, src, n, body);
        for (size_t i = 0; i < n; i++) {
            if (whole) {
                aeskit_xor16(tags[i], tags[i], ck->k1);
                src[i] = msgs[i].p + 16 * body;
            } else {
                cmac_split(ck, msgs[i].p, len, last[i]);
                src[i] = last[i];
            }
        }
        aeskit_cbc_macs_even(&ck->key, tags, src, n, 1);
    } else {
        aeskit_chain c[AESKIT_MAC_MANY];
        aeskit_seg seg[AESKIT_MAC_MANY][2];
        for (size_t i = 0; i < n; i++)
            aeskit_cmac_chain(ck, &c[i], seg[i], last[i], zero, NULL, msgs[i].p, msgs[i].len);
        aeskit_cbc_chains(&ck->key, 0, c, n);
        for (size_t i = 0; i < n; i++)
            memcpy(tags[i], c[i].v, 16);
        aeskit_secure_zero(c, n * sizeof c[0]);
    }
    aeskit_secure_zero(last, n * sizeof last[0]);
}

void aeskit_cmac_oneshot(const aeskit_cmac_key *ck, const uint8_t *p, size_t len,
                         uint8_t tag[16])
{
    aeskit_cmac c;
    aeskit_cmac_init(&c, ck);
    aeskit_cmac_update(&c, p, len);
    aeskit_cmac_final(&c, tag);
    aeskit_secure_zero(&c, sizeof c);
}

/* ---- the MAC descriptor (modes/mac.h) --------------------------------- */

static_assert(_Alignof(aeskit_cmac_key) <= 8 && _Alignof(aeskit_cmac) <= 8,
              "the glue keeps the states 8-byte aligned");

static void cmac_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                          size_t key_len)
{
    aeskit_cmac_key_init(ks, impl, key, key_len);
}

static void cmac_mac(const void *ks, const uint8_t *p, size_t len, uint8_t tag[16])
{
    aeskit_cmac_oneshot(ks, p, len, tag);
}

static void cmac_mac_many(const void *ks, const struct aeskit_span *msgs, size_t n,
                          uint8_t (*tags)[16])
{
    aeskit_cmac_many(ks, msgs, n, tags);
}

static void cmac_init(void *st, const void *ks)
{
    aeskit_cmac_init(st, ks);
}

static void cmac_update(void *st, const uint8_t *p, size_t len)
{
    aeskit_cmac_update(st, p, len);
}

static void cmac_final(const void *st, uint8_t tag[16])
{
    aeskit_cmac_final(st, tag);
}

const struct aeskit_mac aeskit_cmac_mac = {
    .name = "CMAC",
    .type_name = "aeskit.AESCMAC",
    .doc = "AESCMAC(key, *, tag_length=16, backend='auto')\n--\n\nAES-CMAC (NIST SP 800-38B, "
           "RFC 4493). Tags of 4 to 16 bytes; 8 or more is advised (SP 800-38B, appendix "
           "A).",
    .key_sizes = AESKIT_KEY_ANY,
    .tag_lengths = AESKIT_TAGS(4, 16),
    .block_size = AESKIT_BLOCK,
    .key_state = sizeof(aeskit_cmac_key),
    .key_init = cmac_key_init,
    .mac = cmac_mac,
    .mac_many = cmac_mac_many,
    .facts = {.floor_enc = "serial"},
    .state = sizeof(aeskit_cmac),
    .init = cmac_init,
    .update = cmac_update,
    .final = cmac_final,
};
