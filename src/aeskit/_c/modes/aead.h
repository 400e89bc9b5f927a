/*
 * aead.h: an AEAD as the Python glue sees it. One descriptor per mode, in
 * that mode's file; the list is aeskit_aeads[] (modes/registry.c). py/aead.c
 * serves every entry with one generic type and never asks which mode it
 * is: what differs between AEADs is written here as data (the call shape,
 * the limits) and as entry points (per-key state, one-shot, streaming).
 * Nettle's struct nettle_aead is the model, with what pyca/cryptography's
 * API needs on top.
 *
 * The glue checks every length the descriptor states before any work, so
 * the entry points trust their arguments (and assert them). It opens
 * through aeskit_aead_open_verified and aeskit_aead_finish_verified
 * (below, modes/verify.c), which compare the tags in constant time and
 * zero the output of a failed open.
 */
#ifndef AESKIT_AEAD_H
#define AESKIT_AEAD_H

#include "aeskit.h"
#include "keysize.h"
#include "facts.h"

/* A run of bytes: one item of associated data. p may be NULL if len is 0. */
typedef struct aeskit_span {
    const uint8_t *p;
    size_t len;
} aeskit_span;

/* What a one-shot message brings besides its data. */
typedef struct aeskit_aead_msg {
    const uint8_t *nonce;       /* NULL when the mode takes no nonce */
    size_t nonce_len;
    const aeskit_span *ad;      /* associated data, n_ad items: at most one */
    size_t n_ad;                /* unless the mode takes a list (ad_list) */
} aeskit_aead_msg;

/* One message of many (seal_many, open_many below): what seal or open
 * takes, as one record. tag: open's received tag (tag_len bytes); NULL
 * for seal. */
typedef struct aeskit_aead_item {
    aeskit_aead_msg m;
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
    const uint8_t *tag;
} aeskit_aead_item;

/* The most messages one seal_many or open_many call takes: the glue
 * hands a batch over in groups of this many, with their tags on its
 * stack. */
#define AESKIT_AEAD_MANY 32

struct aeskit_aead {
    const char *name;           /* "GCM", for messages */
    const char *type_name;      /* "aeskit.AESGCM" */
    const char *doc;            /* the type's docstring */
    aeskit_facts facts;         /* for Python and the benchmark (facts.h) */

    /* the key argument: n_keys AES keys of one size, concatenated */
    uint8_t key_sizes;          /* AESKIT_KEY* mask, for each key */
    uint8_t n_keys;             /* 2 for SIV (S2V's key, then CTR's) */

    /* tags */
    uint32_t tag_lengths;       /* bit t set: a t-byte tag is allowed (1..16) */
    uint8_t tag_positional;     /* tag_length may come second, positionally
                                   (pyca's AESCCM(key, tag_length)); else it
                                   is keyword-only (AESGCM) */
    uint8_t tag_first;          /* sealed output is tag || ciphertext (SIV),
                                   not ciphertext || tag */

    /* the nonce: nonce_min..nonce_max bytes (SIZE_MAX: no upper bound);
     * nonce_max 0: the methods take no nonce argument (SIV, whose nonce,
     * if any, is the last item of associated data) */
    size_t nonce_min, nonce_max;
    const char *nonce_note;     /* added to a bad nonce's error: "" or " (...)" */

    /* associated data: one buffer or None, or with ad_list a list (or
     * None) of at most max_ad buffers */
    uint8_t ad_list;
    size_t max_ad;

    /* limits in bytes, checked before any work, and across the calls of a
     * stream: associated data (in all) and data */
    uint64_t max_aad, max_data;
    /* NULL, or the data limit for a given nonce length when it depends on
     * it (CCM's length field); never above max_data */
    uint64_t (*max_data_for)(size_t nonce_len);

    /* Per-key state, key_state bytes (8-byte aligned: the struct may need
     * no more, which the modes assert), made once per key
     * object and wiped by the glue when the object goes: key_init expands
     * the AES key(s) with impl and precomputes what the mode keeps per key
     * (GHASH powers, OCB's L table, CMAC subkeys). key is n_keys keys of
     * one allowed size, tag_len an allowed tag length. */
    size_t key_state;
    void (*key_init)(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                     size_t key_len, unsigned tag_len);

    /* One message at once; every mode has these. seal writes len bytes of
     * ciphertext to dst and the full 16-byte tag (the glue keeps tag_len
     * of it). open takes the tag_len bytes of the received tag (SIV and
     * GCM-SIV decrypt with it) and writes len bytes of plaintext to dst
     * and the full expected tag; aeskit_aead_open_verified compares. dst may equal src,
     * and may overlap the nonce and the associated data: a mode reads all
     * of them before it writes dst (or copies them first).
     * A mode whose keys depend on the nonce (GCM-SIV) derives them here,
     * on its own stack, and wipes them before it returns. */
    void (*seal)(const void *ks, const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                 size_t len, uint8_t tag[16]);
    void (*open)(const void *ks, const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                 size_t len, const uint8_t *tag, uint8_t expect[16]);

    /* Optional: NULL, or n <= AESKIT_AEAD_MANY independent messages at
     * once, for a mode whose kernels interleave messages (multi-buffer:
     * the batch methods, py/batch.h). Each does what seal (open) does on
     * item i, writing tags[i] (expect[i]); items never overlap one
     * another, and an item's dst may equal its src but overlaps nothing
     * else. aeskit_aead_open_many_verified compares. NULL: the glue calls
     * seal or open once per message. */
    void (*seal_many)(const void *ks, const aeskit_aead_item *items, size_t n,
                      uint8_t (*tags)[16]);
    void (*open_many)(const void *ks, const aeskit_aead_item *items, size_t n,
                      uint8_t (*expect)[16]);

    /* Streaming, for a mode that is online; all NULL (and stream_state 0)
     * for one that is not (CCM needs the lengths first, SIV and GCM-SIV two
     * passes): its type then has no encryptor() or decryptor(). init
     * starts a message (the nonce checked as above); aad calls come
     * before update calls; update writes update_len(st, len) bytes (NULL:
     * len) and returns that count; finish writes the 0..15 bytes held
     * back, returns their count, writes the full tag and ends st. The
     * glue wipes the state after finish and when the context goes. */
    size_t stream_state;
    void (*init)(void *st, const void *ks, int enc, const uint8_t *nonce, size_t nonce_len);
    void (*aad)(void *st, const uint8_t *aad, size_t len);
    size_t (*update_len)(const void *st, size_t len);
    size_t (*update)(void *st, uint8_t *dst, const uint8_t *src, size_t len);
    size_t (*finish)(void *st, uint8_t *dst, uint8_t tag[16]);

    /* Where the mode's own code hands over (short paths, batches), for the
     * tests that must cross it; ends with a NULL name. */
    const aeskit_constant *constants;
};

/*
 * Entry points that modes share in shape, each defined by one line in the
 * mode's file, as static functions named from prefix:
 *
 * AESKIT_AEAD_SEAL_OPEN(prefix, crypt): prefix_seal and prefix_open over
 *   crypt(ks, enc, m, dst, src, len, tag), the mode's one message in either
 *   direction, enc 1 to seal. open hands crypt expect as the tag to make:
 *   for a mode that opens without the received tag (all but SIV and
 *   GCM-SIV, which decrypt with it).
 *
 * AESKIT_AEAD_ONLINE(prefix, aad, update, tag): prefix_stream_aad,
 *   prefix_stream_update and prefix_stream_finish over a mode's typed
 *   streaming functions aad(st, p, len), update(st, dst, src, len) and
 *   tag(st, tag), for a mode whose update writes all it takes and whose
 *   finish writes the tag only (GCM, EAX). The mode writes its own
 *   prefix_stream_init, which unpacks its key state.
 */
#define AESKIT_AEAD_SEAL_OPEN(prefix, crypt)                                               \
    static void prefix##_seal(const void *ks, const aeskit_aead_msg *m, uint8_t *dst,        \
                              const uint8_t *src, size_t len, uint8_t tag[16])               \
    {                                                                                        \
        crypt(ks, 1, m, dst, src, len, tag);                                                 \
    }                                                                                        \
    static void prefix##_open(const void *ks, const aeskit_aead_msg *m, uint8_t *dst,        \
                              const uint8_t *src, size_t len, const uint8_t *tag,            \
                              uint8_t expect[16])                                            \
    {                                                                                        \
        (void)tag;                                                                           \
        crypt(ks, 0, m, dst, src, len, expect);                                              \
    }

/* AESKIT_AEAD_MANY_SEAL_OPEN(prefix, many): prefix_seal_many and
 * prefix_open_many over many(ks, enc, items, n, tags), the mode's group of
 * messages in either direction, enc 1 to seal. */
#define AESKIT_AEAD_MANY_SEAL_OPEN(prefix, many)                                           \
    static void prefix##_seal_many(const void *ks, const aeskit_aead_item *items, size_t n,  \
                                   uint8_t (*tags)[16])                                      \
    {                                                                                        \
        many(ks, 1, items, n, tags);                                                         \
    }                                                                                        \
    static void prefix##_open_many(const void *ks, const aeskit_aead_item *items, size_t n,  \
                                   uint8_t (*expect)[16])                                    \
    {                                                                                        \
        many(ks, 0, items, n, expect);                                                       \
    }

#define AESKIT_AEAD_ONLINE(prefix, aad, update, tag)                                       \
    static void prefix##_stream_aad(void *st, const uint8_t *p, size_t len)                  \
    {                                                                                        \
        aad(st, p, len);                                                                     \
    }                                                                                        \
    static size_t prefix##_stream_update(void *st, uint8_t *dst, const uint8_t *src,         \
                                         size_t len)                                         \
    {                                                                                        \
        update(st, dst, src, len);                                                           \
        return len;                                                                          \
    }                                                                                        \
    static size_t prefix##_stream_finish(void *st, uint8_t *dst, uint8_t out[16])            \
    {                                                                                        \
        (void)dst;                                                                           \
        tag(st, out);                                                                        \
        return 0;                                                                            \
    }

/* tag_lengths of one length t, and of every length lo..hi. */
#define AESKIT_TAG(t) (UINT32_C(1) << (t))
#define AESKIT_TAGS(lo, hi) ((UINT32_C(2) << (hi)) - (UINT32_C(1) << (lo)))

/* Every AEAD, ending NULL (modes/registry.c). */
extern const struct aeskit_aead *const aeskit_aeads[];

/*
 * An open with its verdict, as the glue makes every one (modes/verify.c):
 * d->open, then the first tag_len bytes of the expected tag compared with
 * the received tag's tag_len bytes in constant time. Returns 1 when they
 * match; else 0, with the len bytes of dst zeroed, so that a failed open
 * releases nothing. tag must not overlap dst (the glue copies a tag that
 * would); the rest as for open.
 */
int aeskit_aead_open_verified(const struct aeskit_aead *d, const void *ks,
                              const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                              size_t len, const uint8_t *tag, size_t tag_len);
/* open_many (or, where the mode has none, open once per item) with each
 * verdict: ok[i] 1 when item i's tag matched, else 0 with its dst zeroed,
 * as aeskit_aead_open_verified says for one. Returns the count that
 * failed. n <= AESKIT_AEAD_MANY. */
size_t aeskit_aead_open_many_verified(const struct aeskit_aead *d, const void *ks,
                                      const aeskit_aead_item *items, size_t n, size_t tag_len,
                                      uint8_t *ok);
/* seal_many, or seal once per item, into tags. n <= AESKIT_AEAD_MANY. */
void aeskit_aead_seal_many(const struct aeskit_aead *d, const void *ks,
                           const aeskit_aead_item *items, size_t n, uint8_t (*tags)[16]);
/* The end of a streaming decryption: d->finish into dst (the 0..15 bytes
 * held back, their count in *out), then the same comparison; 0 zeroes
 * those *out bytes (what the updates wrote is the caller's to discard).
 * st is ended either way. */
int aeskit_aead_finish_verified(const struct aeskit_aead *d, void *st, uint8_t *dst,
                                const uint8_t *tag, size_t tag_len, size_t *out);

/* The data limit of d for a nonce of nonce_len bytes. */
static inline uint64_t aeskit_aead_max_data(const struct aeskit_aead *d, size_t nonce_len)
{
    return d->max_data_for != NULL ? d->max_data_for(nonce_len) : d->max_data;
}

#endif
