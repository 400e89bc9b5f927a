/*
 * mac.h: a MAC as the Python glue sees it (py/mac.c): a key object with
 * mac(data) and verify(data, tag), and an hmac-like context from new().
 * One descriptor per mode, in that mode's file; the list is aeskit_macs[]
 * (modes/registry.c). The glue never asks which MAC it serves.
 *
 * The glue checks the tag length (tag_lengths) when the key object is
 * made, and verifies with aeskit_mac_tag_ok (below): constant time, and a
 * tag of any other length than the object's is refused. The entry points
 * trust their arguments.
 */
#ifndef AESKIT_MAC_H
#define AESKIT_MAC_H

#include "aeskit.h"
#include "keysize.h"
#include "facts.h"

struct aeskit_span;   /* modes/aead.h */

/* The most messages one mac_many call takes. */
#define AESKIT_MAC_MANY 64

struct aeskit_mac {
    const char *name;           /* "CMAC", for messages */
    const char *type_name;      /* "aeskit.AESCMAC" */
    const char *doc;            /* the type's docstring */
    aeskit_facts facts;         /* for Python and the benchmark (facts.h) */
    uint8_t key_sizes;          /* AESKIT_KEY* mask (keysize.h) */
    uint32_t tag_lengths;       /* bit t set: a t-byte tag is allowed (1..16) */
    size_t block_size;          /* the context's block_size, in bytes */

    /* Per-key state, key_state bytes (8-byte aligned), made once per key
     * object and wiped by the glue when it goes. */
    size_t key_state;
    void (*key_init)(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                     size_t key_len);

    /* A whole message at once: the full 16-byte tag (the glue truncates). */
    void (*mac)(const void *ks, const uint8_t *p, size_t len, uint8_t tag[16]);
    /* Optional: NULL, or n <= AESKIT_MAC_MANY messages at once, tags[i]
     * what mac gives for msgs[i], for a MAC whose kernels interleave
     * independent messages (the batch methods: mac_many, verify_many).
     * NULL: the glue calls mac once per message. */
    void (*mac_many)(const void *ks, const struct aeskit_span *msgs, size_t n,
                     uint8_t (*tags)[16]);

    /* The context: state bytes (8-byte aligned), which may point into the
     * key state (the glue keeps the key object alive) and may be copied
     * with memcpy (copy()). final writes the full tag of what update took
     * so far without changing st (digest() does not end the context). The
     * glue wipes the state when the context goes. */
    size_t state;
    void (*init)(void *st, const void *ks);
    void (*update)(void *st, const uint8_t *p, size_t len);
    void (*final)(const void *st, uint8_t tag[16]);
};

/* 1 if tag (len bytes) is the first tag_len bytes of the full tag, compared
 * in constant time; 0 if not, or if len is not tag_len (a length is no
 * secret: a short tag is never checked as a prefix). modes/verify.c. */
int aeskit_mac_tag_ok(const uint8_t full[16], const uint8_t *tag, size_t len, size_t tag_len);

/* Every MAC, ending NULL (modes/registry.c). */
extern const struct aeskit_mac *const aeskit_macs[];

#endif
