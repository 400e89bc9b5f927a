/*
 * gcm.c: GCM (NIST SP 800-38D) written once against the backend table:
 * CTR with a 32-bit big-endian counter (the ctr slot, AESKIT_CTR_BE32) and
 * GHASH (the ghash slot). Contract: aeskit.h.
 *
 * A backend's fused gcm slot, when it has one, takes the bulk; the split
 * path goes in chunks small enough to stay in L1 between the two passes
 * (CTR and GHASH), so a long message never pays for a second trip through
 * memory. Decryption hashes a chunk's ciphertext before the CTR pass can
 * overwrite it in place.
 *
 * With a 12-byte nonce the counters are public (nonce || 2, 3, ...). With
 * any other length J0 is a GHASH under the hash key, so the counters are
 * secrets. The fused gcm slots branch on the counter's low bits (to align
 * batches), which would leak bits of a linear function of H with every
 * message, so those messages take the split path, whose ctr slots treat a
 * BE32 counter without a branch on its value (aeskit.h; tests/ct checks
 * aesni and portable under valgrind).
 */
#include "common.h"
#include "gcm.h"
#include "generic.h"

#define CHUNK_BLOCKS 256   /* 4 KiB */

/* n blocks into acc in one ghash call: a key made for one long message
 * holds AESKIT_GHASH_MSG blocks' powers and serves any call, reducing as
 * often as they require (aeskit_ghash_serves); a short message's key is
 * built for what its one call hashes. */
static void ghash_all(const aeskit_key *k, const aeskit_ghash_key *hk, uint8_t acc[16],
                      const uint8_t *p, size_t n)
{
    assert(aeskit_ghash_serves(hk, n));
    k->impl->ghash(hk, acc, p, n);
}

static void hash_blocks(aeskit_gcm *g, const uint8_t *p, size_t n)
{
    ghash_all(g->key, g->hk, g->acc, p, n);
}

/* J0 for a 12-byte nonce: nonce || 0^31 || 1. */
static void j0_of_12(uint8_t j0[16], const uint8_t nonce[12])
{
    memcpy(j0, nonce, 12);
    memset(j0 + 12, 0, 3);
    j0[15] = 1;
}

/* The last block GHASH takes: the AAD's and the data's lengths in bits. */
static void lengths_block(uint8_t lens[16], uint64_t aad_len, uint64_t data_len)
{
    aeskit_store_be64(lens, aad_len * 8);
    aeskit_store_be64(lens + 8, data_len * 8);
}

/* aeskit_gcm_init; defer: E(K, J0) is left to the one-shot path (12-byte
 * nonce, ek_j0 NULL), from the fused kernel's first batch. */
static void init(aeskit_gcm *g, const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                 const uint8_t *nonce, size_t nonce_len, const uint8_t *ek_j0, int defer)
{
    assert(nonce_len >= 1 && (ek_j0 == NULL || nonce_len == 12));
    memset(g, 0, sizeof *g);
    g->key = k;
    g->hk = hk;
    g->enc = (uint8_t)(enc != 0);
    g->secret_ctr = (uint8_t)(nonce_len != 12);
    uint8_t j0[16] = {0};
    if (nonce_len == 12) {
        j0_of_12(j0, nonce);
    } else {
        /* J0 = GHASH(nonce || 0-pad || [0]64 || [len(nonce) in bits]64) */
        size_t whole = nonce_len / 16, rest = nonce_len % 16;
        ghash_all(k, hk, j0, nonce, whole);
        uint8_t last[16] = {0};
        if (rest) {
            memcpy(last, nonce + 16 * whole, rest);
            k->impl->ghash(hk, j0, last, 1);
        }
        memset(last, 0, 16);
        aeskit_store_be64(last + 8, (uint64_t)nonce_len * 8);
        k->impl->ghash(hk, j0, last, 1);
    }
    assert(!defer || (nonce_len == 12 && ek_j0 == NULL));
    if (ek_j0 != NULL)
        memcpy(g->ek_j0, ek_j0, 16);
    else if (!defer)
        k->impl->ecb_enc(k, g->ek_j0, j0, 1);
    memcpy(g->ctr, j0, 16);
    aeskit_ctr_add(AESKIT_CTR_BE32, g->ctr, 1);
}

void aeskit_gcm_init(aeskit_gcm *g, const aeskit_key *k, const aeskit_ghash_key *hk,
                     int enc, const uint8_t *nonce, size_t nonce_len, const uint8_t *ek_j0)
{
    init(g, k, hk, enc, nonce, nonce_len, ek_j0, 0);
}

void aeskit_gcm_aad(aeskit_gcm *g, const uint8_t *aad, size_t len)
{
    assert(!g->in_data);
    if (len == 0)
        return;
    g->aad_len += len;
    if (g->pos > 0) {
        size_t take = 16 - g->pos < len ? 16 - g->pos : len;
        memcpy(g->part + g->pos, aad, take);
        g->pos += (unsigned)take;
        aad += take; len -= take;
        if (g->pos < 16)
            return;
        hash_blocks(g, g->part, 1);
        g->pos = 0;
    }
    hash_blocks(g, aad, len / 16);
    memcpy(g->part, aad + len / 16 * 16, len % 16);
    g->pos = (unsigned)(len % 16);
}

/* Close the AAD: its last partial block is hashed zero-padded. */
static void start_data(aeskit_gcm *g)
{
    if (g->pos > 0) {
        memset(g->part + g->pos, 0, 16 - g->pos);
        hash_blocks(g, g->part, 1);
        g->pos = 0;
    }
    g->in_data = 1;
}

/* Bytes of the current keystream block, continuing a partial block. */
static void partial(aeskit_gcm *g, uint8_t *dst, const uint8_t *src, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t in = src[i], out = in ^ g->stream[g->pos + i];
        dst[i] = out;
        g->part[g->pos + i] = g->enc ? out : in;
    }
    g->pos += (unsigned)len;
    if (g->pos == 16) {
        hash_blocks(g, g->part, 1);
        g->pos = 0;
    }
}

/* update's work; lens: NULL, or the lengths block of a one-shot message
 * whose data this is, all of it, for the fused kernel to hash after the
 * data (returns whether it did: if not, tag hashes them), and ek: NULL, or
 * where E(K, J0) goes (only on the message's first update), from the
 * kernel's first batch (modes/gcm.h: ek0) or, when the kernel does not
 * take the message, one ecb_enc call before the split path's work (made
 * after it, 1 KiB openings ran 7% slower). */
static int crypt_data(aeskit_gcm *g, uint8_t *dst, const uint8_t *src, size_t len,
                      const uint8_t *lens, uint8_t *ek)
{
    const aeskit_key *k = g->key;
    int hashed = 0;
    uint8_t j0[16];   /* public: a 12-byte nonce's */
    if (ek != NULL) {
        assert(!g->secret_ctr && g->data_len == 0);
        memcpy(j0, g->ctr, 16);
        aeskit_store_be32(j0 + 12, aeskit_load_be32(j0 + 12) - 1);
    }
    if (!g->in_data)
        start_data(g);
    g->data_len += len;
    if (g->pos > 0) {
        size_t take = 16 - g->pos < len ? 16 - g->pos : len;
        partial(g, dst, src, take);
        src += take; dst += take; len -= take;
    }
    size_t n = len / 16;
    if (n > 0 && k->impl->gcm != NULL && !g->secret_ctr) {
        assert(g->hk->max_blocks >= n + AESKIT_GCM_FUSED_SLACK ||
               g->hk->max_blocks >= AESKIT_GHASH_MSG);   /* what the kernel reads */
        /* lens only when the data ends on a whole block: a partial last
         * block is hashed (below) before it */
        const uint8_t *l = len % 16 == 0 && g->pos == 0 ? lens : NULL;
        size_t done = k->impl->gcm->crypt(k, g->hk, g->enc, g->ctr, g->acc, dst, src, n, l,
                                          ek);
        assert(done <= n);
        hashed = l != NULL && done == n;   /* n > 0 here */
        if (done == n)
            ek = NULL;   /* written */
        src += 16 * done; dst += 16 * done; n -= done; len -= 16 * done;
    }
    if (ek != NULL)
        k->impl->ecb_enc(k, ek, j0, 1);
    while (n > 0) {
        size_t b = n < CHUNK_BLOCKS ? n : CHUNK_BLOCKS;
        if (!g->enc)
            hash_blocks(g, src, b);
        k->impl->ctr(k, AESKIT_CTR_BE32, g->ctr, dst, src, b);
        if (g->enc)
            hash_blocks(g, dst, b);
        src += 16 * b; dst += 16 * b; n -= b; len -= 16 * b;
    }
    if (len > 0) {
        k->impl->ecb_enc(k, g->stream, g->ctr, 1);
        aeskit_ctr_add(AESKIT_CTR_BE32, g->ctr, 1);
        partial(g, dst, src, len);
    }
    return hashed;
}

void aeskit_gcm_update(aeskit_gcm *g, uint8_t *dst, const uint8_t *src, size_t len)
{
    (void)crypt_data(g, dst, src, len, NULL, NULL);
}

/* tag's work; lens_done: the lengths block is hashed already (crypt_data). */
static void finish(aeskit_gcm *g, uint8_t tag[16], int lens_done)
{
    if (!g->in_data)
        start_data(g);
    if (g->pos > 0) {
        memset(g->part + g->pos, 0, 16 - g->pos);
        hash_blocks(g, g->part, 1);
    }
    if (!lens_done) {
        uint8_t lens[16];
        lengths_block(lens, g->aad_len, g->data_len);
        hash_blocks(g, lens, 1);
    }
    aeskit_xor16(tag, g->acc, g->ek_j0);
    aeskit_secure_zero(g, sizeof *g);
}

void aeskit_gcm_tag(aeskit_gcm *g, uint8_t tag[16])
{
    finish(g, tag, 0);
}

/*
 * A whole message at once. Short ones (a 12-byte nonce, AAD and data of at
 * most GCM_SHORT_BLOCKS blocks together) take two slot calls instead of
 * six: one CTR pass from J0 over zeros makes E(K, J0) and the keystream
 * together, and one GHASH call takes the AAD, the ciphertext and the
 * lengths block, zero-padded into one buffer. Past a few blocks the copies
 * into that buffer would cost more than the calls they save, except that
 * up to 31 blocks the keystream (with E(K, J0)) and the hashed blocks
 * (with the lengths) still fit one 32-block batch and one GHASH group of
 * the widest backend; at 32, 512 bytes without AAD ran slower than the
 * long path. The two buffers are 1 KiB of stack.
 */
#define GCM_SHORT_BLOCKS 31

/* A short message's (a 12-byte nonce, AAD and data of at most
 * GCM_SHORT_BLOCKS blocks together) own counter blocks into p: J0 =
 * nonce || 1, then nonce || 2 ... for its db data blocks; db + 1 blocks. */
static void short_counters(uint8_t *p, const uint8_t nonce[12], size_t db)
{
    for (size_t j = 0; j <= db; j++, p += 16) {
        memcpy(p, nonce, 12);
        aeskit_store_be32(p + 12, (uint32_t)j + 1);
    }
}

/* The rest of a short message once its counter blocks are encrypted:
 * stream holds E(K, J0), then the keystream. The AAD and, opening, the
 * ciphertext are copied into hb before dst is written: dst may be src, or
 * overlap the AAD. */
static void short_finish(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                         const uint8_t *aad, size_t aad_len, uint8_t *dst, const uint8_t *src,
                         size_t len, const uint8_t *stream, uint8_t tag[16])
{
    const size_t ab = (aad_len + 15) / 16, db = (len + 15) / 16;
    uint8_t hb[16 * (GCM_SHORT_BLOCKS + 1)];   /* AAD | ciphertext | lengths: public */
    uint8_t *ct = hb + 16 * ab, *lens = ct + 16 * db;
    /* the last AAD and data blocks zeroed whole, then written over: the
     * padding without a call of variable length */
    if (ab > 0) {
        memset(ct - 16, 0, 16);
        memcpy(hb, aad, aad_len);
    }
    if (db > 0) {
        memset(lens - 16, 0, 16);
        if (!enc)
            memcpy(ct, src, len);
        aeskit_xor_bytes(dst, src, stream + 16, len);
        if (enc)
            memcpy(ct, dst, len);
    }
    lengths_block(lens, aad_len, len);
    memset(tag, 0, 16);
    k->impl->ghash(hk, tag, hb, ab + db + 1);
    aeskit_xor16(tag, tag, stream);
}

static int is_short(size_t nonce_len, size_t aad_len, size_t len)
{
    return nonce_len == 12 && (aad_len + 15) / 16 + (len + 15) / 16 <= GCM_SHORT_BLOCKS;
}

void aeskit_gcm_oneshot(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                        const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        uint8_t tag[16], const uint8_t *ek_j0)
{
    if (!is_short(nonce_len, aad_len, len)) {
        /* the lengths are known up front: the fused kernel hashes their
         * block with its last reduction, not a ghash call of its own */
        aeskit_gcm g;
        uint8_t lens[16];
        lengths_block(lens, aad_len, len);
        /* with a 12-byte nonce E(K, J0) too comes from the kernel's first
         * batch (it starts at J0's aligned counter), or else is made after */
        const int defer = nonce_len == 12 && ek_j0 == NULL;
        init(&g, k, hk, enc, nonce, nonce_len, ek_j0, defer);
        aeskit_gcm_aad(&g, aad, aad_len);
        const int fused = crypt_data(&g, dst, src, len, lens, defer ? g.ek_j0 : NULL);
        finish(&g, tag, fused);
        return;
    }
    const size_t db = (len + 15) / 16;
    uint8_t stream[16 * (GCM_SHORT_BLOCKS + 1)];   /* E(K, J0), then the keystream */
    uint8_t ctr[16];
    j0_of_12(ctr, nonce);
    memset(stream, 0, 16 * (db + 1));
    if (ek_j0 == NULL) {
        k->impl->ctr(k, AESKIT_CTR_BE32, ctr, stream, stream, db + 1);
    } else {   /* the keystream only, from J0 + 1 */
        memcpy(stream, ek_j0, 16);
        aeskit_ctr_add(AESKIT_CTR_BE32, ctr, 1);
        if (db > 0)
            k->impl->ctr(k, AESKIT_CTR_BE32, ctr, stream + 16, stream + 16, db);
    }
    short_finish(k, hk, enc, aad, aad_len, dst, src, len, stream, tag);
    aeskit_secure_zero(stream, 16 * (db + 1));
}

size_t aeskit_gcm_hash_blocks(size_t aad_len, size_t len)
{
    static_assert(GCM_SHORT_BLOCKS + 1 <= AESKIT_GHASH_MSG, "a short message's one call");
    const size_t blocks = (aad_len + 15) / 16 + (len + 15) / 16;
    return blocks <= GCM_SHORT_BLOCKS ? blocks + 1 : AESKIT_GHASH_MSG;
}

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static_assert(_Alignof(aeskit_gcm_key) <= 8 && _Alignof(aeskit_gcm) <= 8,
              "the glue keeps the states 8-byte aligned");

static void gcm_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len, unsigned tag_len)
{
    aeskit_gcm_key *g = ks;
    (void)tag_len;   /* GCM truncates its tag, which the glue does */
    uint8_t h[16] = {0};
    impl->set_key(&g->key, key, key_len);
    impl->ecb_enc(&g->key, h, h, 1);
    impl->ghash_key(&g->hk, h, AESKIT_GHASH_ANY);
    aeskit_secure_zero(h, sizeof h);
}

static void gcm_crypt(const aeskit_gcm_key *g, int enc, const aeskit_aead_msg *m,
                      uint8_t *dst, const uint8_t *src, size_t len, uint8_t tag[16])
{
    assert(m->n_ad <= 1);
    aeskit_gcm_oneshot(&g->key, &g->hk, enc, m->nonce, m->nonce_len,
                       m->n_ad ? m->ad->p : NULL, m->n_ad ? m->ad->len : 0, dst, src, len, tag,
                       NULL);
}

AESKIT_AEAD_SEAL_OPEN(gcm, gcm_crypt)

/*
 * Many messages at once (seal_many, open_many). Runs of those the
 * gcm_short slot takes (a 12-byte nonce, at most AESKIT_GCM_SHORT_HASH
 * blocks to hash) go to it in one call each, the items and tags read and
 * written where the glue laid them: the 128-bit bodies' kernel runs each
 * message's counters, GHASH and tag in registers with the round keys
 * loaded once for the call, and out-of-order execution overlaps message
 * after message. Runs of the other short ones go to
 * aeskit_gcm_short_generic, the longer ones to the one-shot path. (A batch
 * is usually of one kind; a copy of each item into a slot's own record
 * was a tenth of a 64-byte seal's instructions.)
 *
 * aeskit_gcm_short_generic: the short messages' counter blocks, J0 and
 * the data's of message after message, go into one buffer and through
 * one ecb_enc call, so that they fill the backend's lanes across message
 * boundaries (8 per batch on aesni, 16 or 32 on the VAES bodies) and the
 * key is loaded once for all of them, where one ctr call per message
 * would run a 64-byte message's 5 blocks in a batch of their own. Each
 * message's GHASH is then short_finish's one call. The counters are public
 * (12-byte nonces); the keystream is wiped.
 */
#define MANY_BLOCKS 128   /* 2 KiB of counter blocks, at least one short message's 32 */

void aeskit_gcm_short_generic(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                              const aeskit_aead_item *m, size_t n, uint8_t (*tags)[16])
{
    uint8_t stream[16 * MANY_BLOCKS];
    static_assert(MANY_BLOCKS >= GCM_SHORT_BLOCKS + 1, "a short message fits");
    size_t i = 0;
    while (i < n) {
        const size_t first = i;
        size_t used = 0;
        for (; i < n; i++) {
            const size_t db = (m[i].len + 15) / 16;
            if (used + db + 1 > MANY_BLOCKS)
                break;
            short_counters(stream + 16 * used, m[i].m.nonce, db);
            used += db + 1;
        }
        k->impl->ecb_enc(k, stream, stream, used);
        for (size_t j = first, at = 0; j < i; at += (m[j].len + 15) / 16 + 1, j++) {
            size_t aad_len;
            const uint8_t *aad = aeskit_gcm_item_aad(&m[j], &aad_len);
            assert(is_short(m[j].m.nonce_len, aad_len, m[j].len));
            short_finish(k, hk, enc, aad, aad_len, m[j].dst, m[j].len ? m[j].src : NULL,
                         m[j].len, stream + 16 * at, tags[j]);
        }
        aeskit_secure_zero(stream, 16 * used);
    }
}

/* Which way an item goes: the slot, the generic short path, or one-shot. */
enum { GCM_FAST, GCM_MID, GCM_LONG };
static int gcm_way(const aeskit_aead_item *it)
{
    size_t aad_len;
    aeskit_gcm_item_aad(it, &aad_len);
    /* is_short's test, with the slot's below it (the lengths block makes
     * the slot's count one more) */
    static_assert(AESKIT_GCM_SHORT_HASH - 1 <= GCM_SHORT_BLOCKS, "the slot's are short");
    const size_t blocks = (aad_len + 15) / 16 + (it->len + 15) / 16;
    if (it->m.nonce_len != 12 || blocks > GCM_SHORT_BLOCKS)
        return GCM_LONG;
    return blocks + 1 <= AESKIT_GCM_SHORT_HASH ? GCM_FAST : GCM_MID;
}

static void gcm_many(const void *ks, int enc, const aeskit_aead_item *items, size_t n,
                     uint8_t (*tags)[16])
{
    const aeskit_gcm_key *g = ks;
    const aeskit_key *k = &g->key;
    assert(n <= AESKIT_AEAD_MANY);
    for (size_t i = 0; i < n;) {
        const int way = gcm_way(&items[i]);
        size_t end = i + 1;
        if (way == GCM_LONG) {
            gcm_crypt(g, enc, &items[i].m, items[i].dst, items[i].src, items[i].len, tags[i]);
            i = end;
            continue;
        }
        while (end < n && gcm_way(&items[end]) == way)
            end++;
        if (way == GCM_FAST)
            k->impl->gcm_short(k, &g->hk, enc, items + i, end - i, tags + i);
        else
            aeskit_gcm_short_generic(k, &g->hk, enc, items + i, end - i, tags + i);
        i = end;
    }
}

AESKIT_AEAD_MANY_SEAL_OPEN(gcm, gcm_many)

static void gcm_stream_init(void *st, const void *ks, int enc, const uint8_t *nonce,
                            size_t nonce_len)
{
    const aeskit_gcm_key *g = ks;
    aeskit_gcm_init(st, &g->key, &g->hk, enc, nonce, nonce_len, NULL);
}

AESKIT_AEAD_ONLINE(gcm, aeskit_gcm_aad, aeskit_gcm_update, aeskit_gcm_tag)

const struct aeskit_aead aeskit_gcm_aead = {
    .name = "GCM",
    .type_name = "aeskit.AESGCM",
    .doc = "AESGCM(key, *, tag_length=16, backend='auto')\n--\n\nAES-GCM (SP 800-38D). Nonces of "
           "any length >= 1 byte; 12 is best.",
    .facts = {.floor_enc = "aes+clmul", .floor_dec = "aes+clmul"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAG(4) | AESKIT_TAG(8) | AESKIT_TAGS(12, 16),
    .nonce_min = 1,
    .nonce_max = SIZE_MAX,
    .nonce_note = " (12 is best)",
    .max_ad = 1,
    .max_aad = AESKIT_GCM_MAX_AAD,
    .max_data = AESKIT_GCM_MAX_DATA,
    .key_state = sizeof(aeskit_gcm_key),
    .key_init = gcm_key_init,
    .seal = gcm_seal,
    .open = gcm_open,
    .seal_many = gcm_seal_many,
    .open_many = gcm_open_many,
    .stream_state = sizeof(aeskit_gcm),
    .init = gcm_stream_init,
    .aad = gcm_stream_aad,
    .update = gcm_stream_update,
    .finish = gcm_stream_finish,
    .constants = (const aeskit_constant[]){
        {"short_blocks", GCM_SHORT_BLOCKS},
        {"chunk_blocks", CHUNK_BLOCKS},
        {"many_blocks", MANY_BLOCKS},
        {"short_hash_blocks", AESKIT_GCM_SHORT_HASH},
        {NULL, 0},
    },
};
