/*
 * ccm.c: CCM (NIST SP 800-38C; RFC 3610) written once against the backend
 * table: the MAC is the cbc_mac slot over B0, the encoded AAD and the
 * plaintext; encryption is the ctr slot with BE128 counters. Contracts:
 * aeskit.h.
 *
 * The counter block is flags (q - 1) || nonce || i in q = 15 - nonce_len
 * bytes. The glue refuses more than 2^(8q) - 1 bytes of data before any
 * work (max_data_for), so i, at most 2^(8q) / 16, never carries into the
 * nonce, and a 128-bit counter is CCM's. The counter is public (the nonce
 * and a block index), so a ctr slot may branch on it; nothing here
 * branches on key, AAD or data, only on lengths.
 *
 * The tag is T ^ E(A_0) with T the CBC-MAC; the glue keeps its first t
 * bytes. A backend's fused ctr_cbcmac slot, when it has one, takes the
 * whole blocks in one pass (the CTR rounds in the MAC chain's idle
 * cycles). Otherwise sealing MACs the plaintext before encrypting it,
 * opening after decrypting it, both chunk by chunk (CHUNK_BLOCKS, small
 * enough to stay in L1 between the two passes), so dst == src works either
 * way. Everything
 * read from the nonce and the AAD is read before dst is written (the glue
 * lets dst overlap them).
 */
#include "ccm.h"
#include "chains.h"
#include "common.h"
#include "generic.h"

#define CHUNK_BLOCKS 256   /* 4 KiB */

uint64_t aeskit_ccm_max_data(size_t nonce_len)
{
    assert(nonce_len >= AESKIT_CCM_NONCE_MIN && nonce_len <= AESKIT_CCM_NONCE_MAX);
    const unsigned q = (unsigned)(15 - nonce_len);
    return q >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * q)) - 1;
}

void aeskit_ccm_b0(uint8_t b0[16], const uint8_t *nonce, size_t nonce_len, unsigned tag_len,
                   uint64_t data_len, int has_aad)
{
    assert(nonce_len >= AESKIT_CCM_NONCE_MIN && nonce_len <= AESKIT_CCM_NONCE_MAX);
    assert(tag_len >= 4 && tag_len <= 16 && tag_len % 2 == 0);
    assert(data_len <= aeskit_ccm_max_data(nonce_len));
    const size_t q = 15 - nonce_len;
    b0[0] = (uint8_t)((has_aad ? 0x40 : 0) | ((tag_len - 2) / 2) << 3 | (q - 1));
    memcpy(b0 + 1, nonce, nonce_len);
    for (size_t i = 0; i < q; i++)
        b0[15 - i] = (uint8_t)(data_len >> (8 * i));   /* q <= 8 */
}

size_t aeskit_ccm_aad_prefix(uint8_t out[10], uint64_t aad_len)
{
    assert(aad_len > 0);
    if (aad_len < 0xff00) {
        out[0] = (uint8_t)(aad_len >> 8);
        out[1] = (uint8_t)aad_len;
        return 2;
    }
    out[0] = 0xff;
    if (aad_len <= UINT32_MAX) {
        out[1] = 0xfe;
        aeskit_store_be32(out + 2, (uint32_t)aad_len);
        return 6;
    }
    out[1] = 0xff;
    aeskit_store_be64(out + 2, aad_len);
    return 10;
}

/* B0 and the encoded AAD as the MAC's first segments (chains.h): B0,
 * which the caller wrote into head's first block (aeskit_ccm_b0 straight
 * there: no copy), with the first AAD block (the length's encoding and
 * the AAD's first bytes) after it in head, the AAD's whole blocks
 * straight from the caller, the rest zero-padded in tail. Returns the
 * count of segments (1 or 3). */
static size_t header_segs(aeskit_seg seg[3], uint8_t head[32], uint8_t tail[16],
                          const uint8_t *aad, size_t aad_len)
{
    seg[0] = (aeskit_seg){.src = head, .blocks = 1};
    if (aad_len == 0)
        return 1;
    const size_t pre = aeskit_ccm_aad_prefix(head + 16, aad_len);
    const size_t first = aad_len < 16 - pre ? aad_len : 16 - pre;
    memcpy(head + 16 + pre, aad, first);
    memset(head + 16 + pre + first, 0, 16 - pre - first);
    seg[0].blocks = 2;
    aad += first;
    aad_len -= first;
    seg[1] = (aeskit_seg){.src = aad, .blocks = aad_len / 16};
    const size_t rest = aad_len % 16;
    memset(tail, 0, 16);
    if (rest > 0)
        memcpy(tail, aad + aad_len - rest, rest);
    seg[2] = (aeskit_seg){.src = tail, .blocks = rest > 0};
    return 3;
}

/* B0 (for len bytes of data) and the encoded AAD into the MAC. */
static void mac_header(const aeskit_ccm_key *c, uint8_t mac[16], const aeskit_aead_msg *m,
                       size_t len, const uint8_t *aad, size_t aad_len)
{
    const aeskit_key *k = &c->key;
    uint8_t head[32], tail[16];
    aeskit_seg seg[3];
    aeskit_ccm_b0(head, m->nonce, m->nonce_len, c->tag_len, len, aad_len > 0);
    const size_t n = header_segs(seg, head, tail, aad, aad_len);
    for (size_t i = 0; i < n; i++)
        k->impl->cbc_mac(k, mac, seg[i].src, seg[i].blocks);
    aeskit_secure_zero(head, sizeof head);
    aeskit_secure_zero(tail, sizeof tail);
}

/* A_0, the counter block of S_0 (the tag's mask): flags q - 1, the nonce,
 * a zero count; the data's counters follow it. */
static void ccm_a0(uint8_t a0[16], const aeskit_aead_msg *m)
{
    memset(a0, 0, 16);
    a0[0] = (uint8_t)(14 - m->nonce_len);   /* q - 1 */
    memcpy(a0 + 1, m->nonce, m->nonce_len);
}

/* The last rest (1..15) bytes of the data through CTR at ctr, the MAC's
 * block of them (the plaintext, zero-padded) into pad. */
static void ctr_tail(const aeskit_key *k, int enc, uint8_t ctr[16], uint8_t *dst,
                     const uint8_t *src, size_t rest, uint8_t pad[16])
{
    uint8_t stream[16] = {0};
    k->impl->ctr(k, AESKIT_CTR_BE128, ctr, stream, stream, 1);
    memset(pad, 0, 16);
    if (enc)
        memcpy(pad, src, rest);
    aeskit_xor_bytes(dst, src, stream, rest);
    if (!enc)
        memcpy(pad, dst, rest);
    aeskit_secure_zero(stream, sizeof stream);
}

/* One message: seal (enc) or open; tag gets T ^ E(A_0), all 16 bytes. */
static void ccm_crypt(const aeskit_ccm_key *c, int enc, const aeskit_aead_msg *m, uint8_t *dst,
                      const uint8_t *src, size_t len, uint8_t tag[16])
{
    const aeskit_key *k = &c->key;
    const struct aeskit_impl *impl = k->impl;
    const uint8_t *aad = m->n_ad ? m->ad->p : NULL;
    const size_t aad_len = m->n_ad ? m->ad->len : 0;
    assert(m->n_ad <= 1);
    uint8_t mac[16] = {0}, ctr[16], s0[16] = {0}, pad[16];

    /* The nonce and the AAD are read here, before dst is written. */
    mac_header(c, mac, m, len, aad, aad_len);
    ccm_a0(ctr, m);
    impl->ctr(k, AESKIT_CTR_BE128, ctr, s0, s0, 1);   /* S_0 = E(A_0); ctr <- A_1 */

    size_t n = len / 16;
    if (n > 0 && impl->ccm != NULL) {
        /* CCM MACs the plaintext: what it reads when sealing, writes when opening */
        const size_t done = impl->ccm->ctr_cbcmac(k, k, !enc, ctr, mac, dst, src, n);
        assert(done <= n);
        src += 16 * done; dst += 16 * done; n -= done;
    }
    while (n > 0) {
        const size_t b = n < CHUNK_BLOCKS ? n : CHUNK_BLOCKS;
        if (enc)
            impl->cbc_mac(k, mac, src, b);
        impl->ctr(k, AESKIT_CTR_BE128, ctr, dst, src, b);
        if (!enc)
            impl->cbc_mac(k, mac, dst, b);
        src += 16 * b; dst += 16 * b; n -= b;
    }
    const size_t rest = len % 16;
    if (rest > 0) {
        ctr_tail(k, enc, ctr, dst, src, rest, pad);
        impl->cbc_mac(k, mac, pad, 1);
        aeskit_secure_zero(pad, sizeof pad);
    }
    aeskit_xor16(tag, mac, s0);
    aeskit_secure_zero(mac, sizeof mac);
    aeskit_secure_zero(s0, sizeof s0);
}

/* n messages at once (seal_many, open_many): each one's CBC-MAC a chain
 * of modes/chains.h, interleaved with the others' in the backend's cbc_x
 * (in lockstep when the messages are alike, aeskit_cbc_macs), its
 * segments B0 (written straight into the chain's head) and the AAD
 * (header_segs), the data's whole blocks in place and its padded tail;
 * the data's CTR of all n in one aeskit_ctr_many call (short messages'
 * keystream from one ECB pass over their counter blocks side by side),
 * which also makes the tag masks S_0 = E(A_0) in that pass (its mask
 * argument: no AES call of their own). Sealing MACs the plaintext before
 * encrypting it, opening decrypts first, so dst may be src; everything
 * read from a nonce and an AAD is read before its dst is written. tags:
 * T ^ S_0, all 16 bytes, as ccm_crypt. */
static void ccm_many(const aeskit_ccm_key *c, int enc, const aeskit_aead_item *items, size_t n,
                     uint8_t (*tags)[16])
{
    const aeskit_key *k = &c->key;
    aeskit_chain ch[AESKIT_AEAD_MANY];
    aeskit_seg seg[AESKIT_AEAD_MANY][AESKIT_CHAIN_SEGS];
    /* the data's counters, public; set before use, which gcc 12 cannot tell */
    aeskit_ctr_item ctr[AESKIT_AEAD_MANY] = {{.len = 0}};
    uint8_t head[AESKIT_AEAD_MANY][32], adtail[AESKIT_AEAD_MANY][16];
    uint8_t tail[AESKIT_AEAD_MANY][16];
    uint8_t s0[AESKIT_AEAD_MANY][16] = {{0}};   /* set before use; gcc 12 cannot tell */
    assert(n <= AESKIT_AEAD_MANY);
    for (size_t i = 0; i < n; i++) {
        const aeskit_aead_item *it = &items[i];
        const aeskit_aead_msg *m = &it->m;
        assert(m->n_ad <= 1);
        const uint8_t *aad = m->n_ad ? m->ad->p : NULL;
        const size_t aad_len = m->n_ad ? m->ad->len : 0;
        aeskit_ccm_b0(head[i], m->nonce, m->nonce_len, c->tag_len, it->len, aad_len > 0);
        size_t s = header_segs(seg[i], head[i], adtail[i], aad, aad_len);
        /* A_0, which aeskit_ctr_many encrypts in place, and A_1, each
         * built where it goes: a 16-byte copy of A_0 right after its
         * narrower stores would wait on them (no store forwarding) */
        ccm_a0(s0[i], m);
        ccm_a0(ctr[i].ctr, m);
        ctr[i].ctr[15] = 1;   /* A_1: q >= 2, so the count is the last bytes */
        ctr[i].dst = it->dst;
        ctr[i].src = it->src;
        ctr[i].len = it->len;
        seg[i][s++] = (aeskit_seg){.src = enc ? it->src : it->dst, .blocks = it->len / 16};
        seg[i][s++] = (aeskit_seg){.src = tail[i], .blocks = it->len % 16 > 0};
        memset(ch[i].v, 0, 16);
        ch[i].seg = seg[i];
        ch[i].n_seg = s;
    }
    if (!enc)
        aeskit_ctr_many(k, AESKIT_CTR_BE128, ctr, n, s0);
    for (size_t i = 0; i < n; i++) {
        /* the MAC's padded last block of the plaintext: src sealing, dst
         * (decrypted above) opening */
        const aeskit_aead_item *it = &items[i];
        const size_t body = it->len / 16, rest = it->len % 16;
        if (rest > 0) {
            memset(tail[i], 0, 16);
            memcpy(tail[i], (enc ? it->src : it->dst) + 16 * body, rest);
        }
    }
    aeskit_cbc_macs(k, ch, n);
    if (enc)
        aeskit_ctr_many(k, AESKIT_CTR_BE128, ctr, n, s0);
    for (size_t i = 0; i < n; i++)
        aeskit_xor16(tags[i], ch[i].v, s0[i]);
    aeskit_secure_zero(ch, n * sizeof ch[0]);
    aeskit_secure_zero(head, n * sizeof head[0]);
    aeskit_secure_zero(adtail, n * sizeof adtail[0]);
    aeskit_secure_zero(tail, n * sizeof tail[0]);
    aeskit_secure_zero(s0, n * sizeof s0[0]);
}

AESKIT_AEAD_MANY_SEAL_OPEN(ccm, ccm_many)

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static_assert(_Alignof(aeskit_ccm_key) <= 8, "the glue keeps the states 8-byte aligned");

static void ccm_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len, unsigned tag_len)
{
    aeskit_ccm_key *c = ks;
    impl->set_key(&c->key, key, key_len);
    c->tag_len = tag_len;
}

AESKIT_AEAD_SEAL_OPEN(ccm, ccm_crypt)

const struct aeskit_aead aeskit_ccm_aead = {
    .name = "CCM",
    .type_name = "aeskit.AESCCM",
    .doc = "AESCCM(key, tag_length=16, *, backend='auto')\n--\n\nAES-CCM (SP 800-38C, RFC 3610). "
           "Nonces of 7 to 13 bytes; tags of 4, 6, 8, 10, 12, 14 or 16 bytes; at most "
           "2**(8*(15 - len(nonce))) - 1 bytes of data. No streaming contexts: CCM needs the "
           "data's length before it starts.",
    .facts = {.floor_enc = "serial", .floor_dec = "serial"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAG(4) | AESKIT_TAG(6) | AESKIT_TAG(8) | AESKIT_TAG(10) |
                   AESKIT_TAG(12) | AESKIT_TAG(14) | AESKIT_TAG(16),
    .tag_positional = 1,
    .nonce_min = AESKIT_CCM_NONCE_MIN,
    .nonce_max = AESKIT_CCM_NONCE_MAX,
    .nonce_note = "",
    .max_ad = 1,
    .max_aad = UINT64_MAX,
    .max_data = UINT64_MAX,
    .max_data_for = aeskit_ccm_max_data,
    .key_state = sizeof(aeskit_ccm_key),
    .key_init = ccm_key_init,
    .seal = ccm_seal,
    .open = ccm_open,
    .seal_many = ccm_seal_many,
    .open_many = ccm_open_many,
    .constants = (const aeskit_constant[]){
        {"chunk_blocks", CHUNK_BLOCKS},
        {NULL, 0},
    },
};
