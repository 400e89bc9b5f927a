/*
 * gcm.h: GCM (SP 800-38D), modes/gcm.c. The AEAD descriptor the glue
 * serves (aeskit_gcm_aead), the per-key state it keeps, and the streaming
 * and one-shot entry points under it.
 */
#ifndef AESKIT_GCM_H
#define AESKIT_GCM_H

#include "aead.h"
#include "common.h"   /* aeskit_load_be64, aeskit_store_be64 */

extern const struct aeskit_aead aeskit_gcm_aead;

/*
 * A backend's fused GCM kernel (aeskit.h: optional fused paths).
 *   crypt: CTR with BE32 counters from ctr, and GHASH of the ciphertext
 *          into acc (enc=1: of dst after encrypting; enc=0: of src before
 *          decrypting, so dst == src works), with hk from this backend's
 *          ghash_key built for at least n + AESKIT_GCM_FUSED_SLACK blocks
 *          (a key for any length, or one made for this message) or for
 *          AESKIT_GHASH_MSG (one made for a long message, which then shares
 *          fewer batches per reduction): a kernel reads no power of H above
 *          the blocks it hashes plus the up to 15 it may start early, at an
 *          aligned counter, nor above what the key holds. ctr and acc end as
 *          the split slots would leave them. Called only with a public
 *          counter (a 12-byte nonce's), so it may branch on the counter's
 *          value; the ctr slot may not.
 *   lens:  NULL, or a message's lengths block: a call that takes all n > 0
 *          blocks (returns n) hashes it into acc after them, where the
 *          kernel's last reduction is (one slot call less for a one-shot
 *          message whose data ends on a whole block); a call that returns
 *          less does not read it. hk then serves n + 1 blocks, as above.
 *   ek0:   NULL, or where a call that takes all n > 0 blocks writes
 *          E(K, ctr - 1), the block before its first counter: a one-shot
 *          message's E(K, J0), which the fused kernel's first batch makes
 *          anyway (it starts at the aligned counter before the data), so
 *          the mode spares its one-block ecb_enc call. Secret: the caller
 *          wipes it.
 */
#define AESKIT_GCM_FUSED_SLACK 16
typedef size_t aeskit_gcm_fn(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                             uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                             const uint8_t *src, size_t n, const uint8_t *lens,
                             uint8_t *ek0);
struct aeskit_gcm_impl {
    aeskit_gcm_fn *crypt;       /* never NULL */
    /* 0, or the data blocks from which a GHASH key made for one message
     * (XAES-256-GCM's) is better built whole (AESKIT_GHASH_ANY) than for
     * AESKIT_GHASH_MSG blocks: crypt then shares each reduction among as
     * many batches as it does with a GCM object's key, which on a long
     * enough message saves more than the extra powers cost. */
    size_t whole_key_blocks;
};

/*
 * Many short messages at once (the gcm_short slot, aeskit.h): each item
 * (modes/aead.h, the records seal_many and open_many take, read in place)
 * a whole message with a 12-byte nonce, at most one span of AAD, and AAD
 * blocks, data blocks and the lengths block numbering at most
 * AESKIT_GCM_SHORT_HASH; sealed (enc 1: the ciphertext into dst) or opened
 * (enc 0: the plaintext; the item's tag is not read, nor compared here),
 * and its full 16-byte tag (opening: the expected one) into tags[i], as
 * aeskit_gcm_oneshot would. hk is built for at least
 * AESKIT_GCM_SHORT_HASH blocks. The items are independent: a kernel may
 * run their blocks side by side. dst may equal src; dst overlaps nothing
 * else (not the AAD, not another item), and tags overlap nothing. src and
 * the AAD are not read past their lengths (either may be NULL when 0).
 */
#define AESKIT_GCM_SHORT_HASH 8
typedef void aeskit_gcm_short_fn(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                                 const aeskit_aead_item *m, size_t n, uint8_t (*tags)[16]);

/* An item's AAD (NULL when it has none) and its length into *len. */
static inline const uint8_t *aeskit_gcm_item_aad(const aeskit_aead_item *it, size_t *len)
{
    assert(it->m.n_ad <= 1);
    *len = it->m.n_ad ? it->m.ad->len : 0;
    return it->m.n_ad ? it->m.ad->p : NULL;
}

/* A gcm_short kernel's view of an item: its AAD, and the counts of blocks
 * it hashes (ab of AAD, db of data, nh with the lengths block), of whole
 * blocks (awhole of AAD, whole of data) and the data's partial block's
 * bytes (rest). */
typedef struct {
    const uint8_t *aad;
    size_t aad_len, ab, db, nh, awhole, whole, rest;
} aeskit_gcm_short_shape;
static inline aeskit_gcm_short_shape aeskit_gcm_short_shape_of(const aeskit_aead_item *m)
{
    aeskit_gcm_short_shape s;
    s.aad = aeskit_gcm_item_aad(m, &s.aad_len);
    s.ab = (s.aad_len + 15) / 16;
    s.db = (m->len + 15) / 16;
    s.nh = s.ab + s.db + 1;
    s.awhole = s.aad_len / 16;
    s.whole = m->len / 16;
    s.rest = m->len % 16;
    assert(s.nh <= AESKIT_GCM_SHORT_HASH && m->m.nonce_len == 12);
    return s;
}
/* A gcm_short kernel's partial block (the AAD's or the data's last r <
 * 16 bytes), in general registers as the block's big-endian halves,
 * zero-padded, in at most four loads: a 16-byte load of a block pieced together
 * on the stack waits for those stores to commit, and so for everything
 * before them, the previous message's work included, which would
 * serialise the messages. The halves are GHASH's register image
 * (SIMD_GMAKE(hi, lo)). r is public. */
static inline void aeskit_gcm_bytes_in(const uint8_t *p, size_t r, uint64_t *hi, uint64_t *lo)
{
    /* pieces of 8, 4, 2 and 1 bytes as r's bits say: none straddles the
     * halves */
    uint64_t h = 0, l = 0;
    size_t i = 0;
    if (r & 8) {
        h = aeskit_load_be64(p);
        i = 8;
    }
    for (size_t c = 4; c > 0; c /= 2) {
        if (!(r & c))
            continue;
        uint64_t v = c == 4 ? aeskit_load_be32(p + i) : p[i];
        if (c == 2)
            v = v << 8 | p[i + 1];
        if (i < 8)
            h |= v << (64 - 8 * (i + c));
        else
            l |= v << (128 - 8 * (i + c));
        i += c;
    }
    *hi = h;
    *lo = l;
}

/* The first r bytes of the block whose big-endian halves are hi, lo. */
static inline void aeskit_gcm_bytes_out(uint8_t *p, size_t r, uint64_t hi, uint64_t lo)
{
    size_t i = 0;
    if (r & 8) {
        aeskit_store_be64(p, hi);
        i = 8;
    }
    for (size_t c = 4; c > 0; c /= 2) {
        if (!(r & c))
            continue;
        const uint64_t v = i < 8 ? hi >> (64 - 8 * (i + c)) : lo >> (128 - 8 * (i + c));
        if (c == 4) {
            aeskit_store_be32(p + i, (uint32_t)v);
        } else if (c == 2) {
            p[i] = (uint8_t)(v >> 8);
            p[i + 1] = (uint8_t)v;
        } else {
            p[i] = (uint8_t)v;
        }
        i += c;
    }
}

/* hi, lo cut to their first r bytes (0 < r < 16): a partial block's
 * keystream XOR data, zero-padded for GHASH. */
static inline void aeskit_gcm_bytes_cut(size_t r, uint64_t *hi, uint64_t *lo)
{
    if (r < 8) {
        *hi &= ~UINT64_C(0) << (64 - 8 * r);
        *lo = 0;
    } else if (r > 8) {
        *lo &= ~UINT64_C(0) << (128 - 8 * r);
    } else {
        *lo = 0;
    }
}

/* The slot through the table's own ecb_enc and ghash (portable's),
 * modes/gcm.c. It takes any message of the short one-shot
 * path (AAD and data blocks at most GCM_SHORT_BLOCKS together), more than
 * the slot's contract asks. */
aeskit_gcm_short_fn aeskit_gcm_short_generic;

/* What an AESGCM object keeps: the expanded key and its GHASH key. */
typedef struct aeskit_gcm_key {
    aeskit_key key;
    aeskit_ghash_key hk;
} aeskit_gcm_key;

#define AESKIT_GCM_MAX_DATA ((UINT64_C(1) << 36) - 32)
#define AESKIT_GCM_MAX_AAD ((UINT64_C(1) << 61) - 1)

/*
 * Streaming: init, any number of aad calls, any number of update calls,
 * then tag. Lengths are validated by the caller: data at most 2^36 - 32
 * bytes, AAD at most 2^61 - 1, cumulative. dst == src allowed in update;
 * decryption hashes each block of ciphertext before it can be overwritten.
 */
typedef struct aeskit_gcm {
    const aeskit_key *key;
    const aeskit_ghash_key *hk;
    uint8_t ek_j0[16];  /* E(K, J0), masks the tag */
    uint8_t ctr[16];    /* next counter block (inc32) */
    uint8_t acc[16];    /* GHASH accumulator */
    uint8_t stream[16]; /* keystream of the current partial data block */
    uint8_t part[16];   /* bytes of the current partial block to hash
                           (AAD before data, then ciphertext) */
    uint64_t aad_len, data_len;   /* bytes so far */
    unsigned pos;       /* bytes in part (and used of stream); < 16 */
    uint8_t enc;
    uint8_t in_data;    /* set by the first update: AAD is then closed */
    uint8_t secret_ctr; /* J0 came from GHASH (nonce not 12 bytes): the
                           counters depend on the hash key (modes/gcm.c) */
} aeskit_gcm;

/* nonce_len >= 1. ek_j0: E(K, J0) when the caller made it already
 * (XAES-256-GCM's key kernel, beside H; a 12-byte nonce), or NULL: then
 * init computes it. */
void aeskit_gcm_init(aeskit_gcm *g, const aeskit_key *k, const aeskit_ghash_key *hk,
                     int enc, const uint8_t *nonce, size_t nonce_len, const uint8_t *ek_j0);
void aeskit_gcm_aad(aeskit_gcm *g, const uint8_t *aad, size_t len);     /* before update */
void aeskit_gcm_update(aeskit_gcm *g, uint8_t *dst, const uint8_t *src, size_t len);
void aeskit_gcm_tag(aeskit_gcm *g, uint8_t tag[16]);   /* full 16 bytes; ends g */
/* init, aad, update and tag over one whole message, with a shorter path for
 * short messages; dst may equal src or overlap the AAD; aad and src may be
 * NULL when their length is 0. hk may be a key made for this message alone,
 * built for aeskit_gcm_hash_blocks(aad_len, len) blocks (XAES-256-GCM's,
 * whose every message has its own key): no ghash call on either path, nor
 * the fused kernel, reads more powers than that (a key of AESKIT_GHASH_MSG
 * powers serves a ghash call of any length: aeskit_ghash_serves). ek_j0 as
 * for aeskit_gcm_init (NULL: computed here). */
void aeskit_gcm_oneshot(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                        const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        uint8_t tag[16], const uint8_t *ek_j0);

/* The max_blocks a GHASH key made for one message of aad_len and len bytes
 * (a 12-byte nonce) is built with, for aeskit_gcm_oneshot: on the short
 * path the AAD's blocks, the data's and the lengths block, hashed in one
 * call (at most AESKIT_GHASH_MSG); on the long path AESKIT_GHASH_MSG. */
size_t aeskit_gcm_hash_blocks(size_t aad_len, size_t len);

#endif
