/*
 * eax.c: EAX (Bellare, Rogaway and Wagner, FSE 2004) written once against
 * the backend table: three OMACs (CMAC with a one-block prefix [t],
 * modes/cmac.c, over the cbc_mac slot) and CTR (the ctr slot), the
 * ciphertext's OMAC and the CTR in one pass where the backend has the
 * fused ctr_cbcmac slot (which never branches on its counter).
 *   N' = OMAC^0(N), H' = OMAC^1(H), C = CTR from N' over M,
 *   C' = OMAC^2(C), tag = N' ^ H' ^ C' (truncated by the glue).
 * The data goes in chunks small enough to stay in L1 between the two
 * passes (CTR and the MAC chain); decryption MACs a chunk's ciphertext
 * before the CTR pass can overwrite it in place.
 *
 * N' is a MAC of the nonce under the key, a secret, and so is every
 * counter after it: they go to the ctr slot as AESKIT_CTR_BE128_SECRET,
 * which no backend branches on (aeskit.h), and to aeskit_ctr_add, which
 * computes the carry as a value.
 */
#include "ccm.h"
#include "chains.h"
#include "common.h"
#include "eax.h"
#include "generic.h"

#define CHUNK_BLOCKS 256   /* 4 KiB */

/* OMAC^t(M) = CMAC([t]_16 || M), [t]_16 being 15 zero bytes and then t.
 * The chain after [t] and the OMAC of an empty M are the key's (EAX's key
 * state): a message's OMAC starts after [t], and one that took no data
 * ends with the stored value. Whether it took any is its length, public. */
void aeskit_eax_key_init(aeskit_eax_key *ek, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len)
{
    aeskit_cmac_key_init(&ek->ck, impl, key, key_len);
    uint8_t blocks[6][16] = {{0}};
    for (unsigned t = 0; t < 3; t++) {
        blocks[t][15] = (uint8_t)t;
        aeskit_xor16(blocks[3 + t], blocks[t], ek->ck.k1);
    }
    impl->ecb_enc(&ek->ck.key, blocks[0], blocks[0], 6);
    memcpy(ek->after, blocks[0], sizeof ek->after);
    memcpy(ek->empty, blocks[3], sizeof ek->empty);
    aeskit_secure_zero(blocks, sizeof blocks);
}

static void omac_final(const aeskit_eax_key *ek, unsigned t, const aeskit_cmac *c,
                       uint8_t out[16])
{
    if (c->pos == 0)
        memcpy(out, ek->empty[t], 16);
    else
        aeskit_cmac_final(c, out);
}

void aeskit_eax_init(aeskit_eax *e, const aeskit_eax_key *ek, int enc, const uint8_t *nonce,
                     size_t nonce_len)
{
    memset(e, 0, sizeof *e);
    e->ek = ek;
    e->enc = (uint8_t)(enc != 0);
    aeskit_cmac *n = &e->c;   /* borrowed for N', then restarted for OMAC^2 */
    aeskit_cmac_init_after(n, &ek->ck, ek->after[0]);
    aeskit_cmac_update(n, nonce, nonce_len);
    omac_final(ek, 0, n, e->n);
    memcpy(e->ctr, e->n, 16);
    aeskit_cmac_init_after(&e->h, &ek->ck, ek->after[1]);
    aeskit_cmac_init_after(&e->c, &ek->ck, ek->after[2]);
}

void aeskit_eax_aad(aeskit_eax *e, const uint8_t *aad, size_t len)
{
    aeskit_cmac_update(&e->h, aad, len);
}

/* len bytes of the current keystream block, from e->pos. */
static void partial(aeskit_eax *e, uint8_t *dst, const uint8_t *src, size_t len)
{
    if (!e->enc)
        aeskit_cmac_update(&e->c, src, len);
    aeskit_xor_bytes(dst, src, e->stream + e->pos, len);
    if (e->enc)
        aeskit_cmac_update(&e->c, dst, len);
    e->pos = (unsigned)((e->pos + len) % 16);
}

void aeskit_eax_update(aeskit_eax *e, uint8_t *dst, const uint8_t *src, size_t len)
{
    const aeskit_key *k = &e->c.ck->key;
    if (e->pos > 0) {
        const size_t take = 16 - e->pos < len ? 16 - e->pos : len;
        partial(e, dst, src, take);
        src += take; dst += take; len -= take;
    }
    size_t n = len / 16;
    aeskit_cmac *c = &e->c;
    if (n > 1 && k->impl->ccm != NULL) {
        /* The fused slot runs CTR in the MAC chain's idle cycles (the
         * ciphertext MACed: what it writes sealing, what it reads opening)
         * on whole blocks from a chain with nothing held: the held block
         * goes into the chain first, and the last block stays for the split
         * path below, which holds it back for OMAC's final step, so that
         * pos never reads 0 (no data) after data. */
        if (c->pos == 16) {
            k->impl->cbc_mac(k, c->mac, c->buf, 1);
            c->pos = 0;
        }
        assert(c->pos == 0);   /* at a block boundary of the ciphertext */
        const size_t done = k->impl->ccm->ctr_cbcmac(k, k, e->enc, e->ctr, c->mac, dst, src, n - 1);
        src += 16 * done; dst += 16 * done; n -= done; len -= 16 * done;
    }
    while (n > 0) {
        const size_t b = n < CHUNK_BLOCKS ? n : CHUNK_BLOCKS;
        if (!e->enc)
            aeskit_cmac_update(&e->c, src, 16 * b);
        k->impl->ctr(k, AESKIT_CTR_BE128_SECRET, e->ctr, dst, src, b);
        if (e->enc)
            aeskit_cmac_update(&e->c, dst, 16 * b);
        src += 16 * b; dst += 16 * b; n -= b; len -= 16 * b;
    }
    if (len > 0) {
        k->impl->ecb_enc(k, e->stream, e->ctr, 1);
        aeskit_ctr_add(AESKIT_CTR_BE128_SECRET, e->ctr, 1);
        partial(e, dst, src, len);
    }
}

void aeskit_eax_finish(aeskit_eax *e, uint8_t tag[16])
{
    uint8_t h[16], c[16];
    omac_final(e->ek, 1, &e->h, h);
    omac_final(e->ek, 2, &e->c, c);
    aeskit_xor16(tag, e->n, h);
    aeskit_xor16(tag, tag, c);
    aeskit_secure_zero(h, sizeof h);
    aeskit_secure_zero(c, sizeof c);
    aeskit_secure_zero(e, sizeof *e);
}

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static_assert(_Alignof(aeskit_eax_key) <= 8 && _Alignof(aeskit_eax) <= 8,
              "the glue keeps the states 8-byte aligned");

static void eax_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len, unsigned tag_len)
{
    (void)tag_len;   /* EAX truncates its tag, which the glue does */
    aeskit_eax_key_init(ks, impl, key, key_len);
}

/* One message: the nonce and the associated data are read whole (init,
 * aad) before dst is written, so dst may overlap them. */
static void eax_oneshot(const void *ks, int enc, const aeskit_aead_msg *m, uint8_t *dst,
                        const uint8_t *src, size_t len, uint8_t tag[16])
{
    aeskit_eax e;
    assert(m->n_ad <= 1);
    aeskit_eax_init(&e, ks, enc, m->nonce, m->nonce_len);
    if (m->n_ad)
        aeskit_eax_aad(&e, m->ad->p, m->ad->len);
    aeskit_eax_update(&e, dst, src, len);
    aeskit_eax_finish(&e, tag);
}

AESKIT_AEAD_SEAL_OPEN(eax, eax_oneshot)

/* The OMAC^t of each of n messages as chains (aeskit_cmac_chain after
 * [t]) into c, n at a time through the chains (in lockstep when they are
 * alike, aeskit_cbc_macs): span i is msg(items[i], t). */
static void omac_chains(const aeskit_eax_key *ek, unsigned t, const aeskit_span *msg, size_t n,
                        aeskit_chain *c, aeskit_seg (*seg)[2], uint8_t (*last)[16])
{
    for (size_t i = 0; i < n; i++)
        aeskit_cmac_chain(&ek->ck, &c[i], seg[i], last[i], ek->after[t], ek->empty[t], msg[i].p,
                          msg[i].len);
    aeskit_cbc_macs(&ek->ck.key, c, n);
}

/* n messages at once (seal_many, open_many): N', H' and C' of all n as
 * chains of modes/chains.h, interleaved in the backend's cbc_x, and the
 * CTR of all n in one aeskit_ctr_many (short messages' keystream from one
 * ECB pass), its counters N', secrets (AESKIT_CTR_BE128_SECRET). Opening
 * MACs the ciphertext before the CTR pass can overwrite it in place;
 * sealing MACs what the pass wrote. The nonces and the AAD are read (the
 * first two OMACs) before any dst is written. tags: N' ^ H' ^ C', all 16
 * bytes, as eax_oneshot. */
static void eax_many(const aeskit_eax_key *ek, int enc, const aeskit_aead_item *items, size_t n,
                     uint8_t (*tags)[16])
{
    aeskit_chain c[3][AESKIT_AEAD_MANY];
    aeskit_seg seg[AESKIT_AEAD_MANY][2];
    uint8_t last[AESKIT_AEAD_MANY][16];
    aeskit_span msg[AESKIT_AEAD_MANY];
    aeskit_ctr_item ctr[AESKIT_AEAD_MANY] = {{.len = 0}};   /* set before use; gcc 12 cannot tell */
    assert(n <= AESKIT_AEAD_MANY);
    for (unsigned t = 0; t < 3; t++) {
        if (t == 2 && enc)
            aeskit_ctr_many(&ek->ck.key, AESKIT_CTR_BE128_SECRET, ctr, n, NULL);
        for (size_t i = 0; i < n; i++) {
            const aeskit_aead_item *it = &items[i];
            assert(it->m.n_ad <= 1);
            msg[i] = t == 0 ? (aeskit_span){it->m.nonce, it->m.nonce_len}
                   : t == 1 ? (it->m.n_ad ? *it->m.ad : (aeskit_span){NULL, 0})
                            : (aeskit_span){enc ? it->dst : it->src, it->len};
        }
        omac_chains(ek, t, msg, n, c[t], seg, last);
        for (size_t i = 0; t == 0 && i < n; i++)
            ctr[i] = (aeskit_ctr_item){.dst = items[i].dst, .src = items[i].src,
                                       .len = items[i].len};
        for (size_t i = 0; t == 0 && i < n; i++)
            memcpy(ctr[i].ctr, c[0][i].v, 16);
    }
    if (!enc)
        aeskit_ctr_many(&ek->ck.key, AESKIT_CTR_BE128_SECRET, ctr, n, NULL);
    for (size_t i = 0; i < n; i++) {
        aeskit_xor16(tags[i], c[0][i].v, c[1][i].v);
        aeskit_xor16(tags[i], tags[i], c[2][i].v);
    }
    aeskit_secure_zero(c, sizeof c);
    aeskit_secure_zero(last, n * sizeof last[0]);
    aeskit_secure_zero(ctr, n * sizeof ctr[0]);
}

AESKIT_AEAD_MANY_SEAL_OPEN(eax, eax_many)

static void eax_stream_init(void *st, const void *ks, int enc, const uint8_t *nonce,
                            size_t nonce_len)
{
    aeskit_eax_init(st, ks, enc, nonce, nonce_len);
}

AESKIT_AEAD_ONLINE(eax, aeskit_eax_aad, aeskit_eax_update, aeskit_eax_finish)

const struct aeskit_aead aeskit_eax_aead = {
    .name = "EAX",
    .type_name = "aeskit.AESEAX",
    .doc = "AESEAX(key, *, tag_length=16, backend='auto')\n--\n\nAES-EAX (Bellare, Rogaway and "
           "Wagner). Nonces of any length, empty included; tags of 4 to 16 bytes.",
    .facts = {.floor_enc = "serial", .floor_dec = "serial"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAGS(4, 16),
    .nonce_min = 0,
    .nonce_max = SIZE_MAX,
    .nonce_note = "",
    .max_ad = 1,
    .max_aad = UINT64_MAX,
    .max_data = UINT64_MAX,
    .key_state = sizeof(aeskit_eax_key),
    .key_init = eax_key_init,
    .seal = eax_seal,
    .open = eax_open,
    .seal_many = eax_seal_many,
    .open_many = eax_open_many,
    .stream_state = sizeof(aeskit_eax),
    .init = eax_stream_init,
    .aad = eax_stream_aad,
    .update = eax_stream_update,
    .finish = eax_stream_finish,
    .constants = (const aeskit_constant[]){
        {"chunk_blocks", CHUNK_BLOCKS},
        {NULL, 0},
    },
};
