/*
 * block.h: the block-cipher modes as the Python glue (py/cipher.c) sees
 * them, and what their files share (modes/block.c).
 *
 * Each mode is one file with its own stream state and its descriptor, a
 * struct aeskit_cipher: ecb.c, cbc.c, cfb.c (128-bit segments), cfb8.c,
 * ofb.c, ctr.c and xts.c; the list is aeskit_ciphers[] (modes/registry.c).
 * The glue serves every entry with one generic type: it checks what the
 * descriptor says (key sizes, the iv, whole blocks, lengths) before it
 * calls an entry point, keeps a stream in state bytes of the size the
 * descriptor gives, and never asks which mode it serves.
 *
 * Modes that work alike share a head struct, which begins their state, and
 * the entry points over it: ECB and CBC a blockwise stream with optional
 * PKCS#7 padding (aeskit_padded), CFB, OFB and CTR a keystream
 * (aeskit_keystream). A mode fills the head with its own callbacks; no
 * shared code knows which mode it runs.
 */
#ifndef AESKIT_BLOCK_H
#define AESKIT_BLOCK_H

#include "aeskit.h"
#include "keysize.h"
#include "facts.h"

/* How a stream ends (a descriptor's finish). */
enum aeskit_finish {
    AESKIT_FINISH_OK,
    AESKIT_FINISH_PARTIAL,      /* an incomplete block is left (ECB, CBC) */
    AESKIT_FINISH_PADDING,      /* PKCS#7 decryption: the padding is wrong, or
                                   the data was not a positive number of
                                   blocks; one status for all, on purpose */
};

/* The most bytes finish writes. */
#define AESKIT_FINISH_MAX 32

/* The largest state a mode may ask for: the glue keeps a one-shot call's
 * stream on its stack (the registration refuses a larger one). */
#define AESKIT_CIPHER_STATE_MAX 256

/* One message of encrypt_many (below): iv (16 bytes), the len bytes at
 * src, the output at dst (which may be src and overlaps nothing else). */
typedef struct aeskit_block_item {
    const uint8_t *iv;
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
} aeskit_block_item;

/* The most messages one encrypt_many call takes. */
#define AESKIT_CIPHER_MANY 64

/*
 * A block-cipher mode as a Python type (aeskit.AES<name>): its call shape
 * and its entry points. The glue validates what the shape says before it
 * calls them, so they trust their arguments (and assert them).
 */
struct aeskit_cipher {
    const char *name;           /* "CBC", for messages */
    const char *type_name;      /* "aeskit.AESCBC" */
    const char *doc;            /* the type's docstring */
    uint8_t key_sizes;          /* AESKIT_KEY* mask, for each of n_keys keys */
    uint8_t n_keys;             /* AES keys, of one size, concatenated in the
                                   key argument; expanded into keys[0..n) */
    const char *iv_name;        /* the 16-byte argument before the data ("iv");
                                   NULL: there is none (ECB) */
    uint8_t whole_blocks;       /* one-shot data is whole blocks */
    aeskit_facts facts;         /* for Python and the benchmark (facts.h) */

    /* The stream, in state bytes (8-byte aligned, which the modes assert;
     * at most AESKIT_CIPHER_STATE_MAX). A one-shot call is a fresh state,
     * one update and a finish, unless the mode has oneshot (below).
     * init: a stream in direction enc (1 encrypt, 0 decrypt) under the
     *   n_keys keys, which outlive it; iv is 16 bytes, NULL when iv_name
     *   is NULL.
     * out_len: the bytes the next update of len bytes writes.
     * update: processes len bytes; writes exactly out_len(st, len) bytes
     *   to dst and returns that count. dst == src is allowed.
     * finish: the end of a stream: writes what st held back to dst (at
     *   most AESKIT_FINISH_MAX bytes) and sets *out to the count; or, when
     *   the stream cannot end as it stands, returns why, with *out the
     *   bytes left pending (0 for AESKIT_FINISH_PADDING). With PKCS#7 the
     *   encryptor writes the padded last block (16 bytes); the decryptor
     *   writes the last block's data (0 to 15 bytes) without a branch on
     *   it: it reads and rewrites 16 bytes at dst, changing only the first
     *   *out (none on failure), and computes the status it returns; the
     *   caller's branch on that status is the one place the verdict
     *   becomes public.
     * The glue wipes the state after finish and when the context goes. */
    size_t state;
    void (*init)(void *st, const aeskit_key *keys, int enc, const uint8_t *iv);
    size_t (*out_len)(const void *st, size_t len);
    size_t (*update)(void *st, uint8_t *dst, const uint8_t *src, size_t len);
    enum aeskit_finish (*finish)(void *st, uint8_t *dst, size_t *out);
    /* Turns PKCS#7 padding on in a fresh stream: the encryptor pads at
     * finish; the decryptor's updates hold back the last block (1 to 16
     * bytes, so its output lags the input by up to 16 bytes), which finish
     * checks and strips (modes/padding.h). NULL: the mode cannot pad (its
     * type takes no padding= argument). */
    void (*pkcs7)(void *st);
    /* One message at once, for a mode with a faster way than a stream (XTS:
     * a data unit without the stream's hold-back); NULL: one-shot calls
     * stream (init, update, finish). Called with len checked as above and
     * without padding; iv as for init; dst == src is allowed. */
    void (*oneshot)(const aeskit_key *keys, int enc, const uint8_t *iv, uint8_t *dst,
                    const uint8_t *src, size_t len);
    /* Optional: NULL, or n <= AESKIT_CIPHER_MANY one-shot encryptions at
     * once, each what init, update and finish do on item i: with PKCS#7
     * padding when pkcs7 (dst takes 16 * (len / 16 + 1) bytes), else len
     * bytes (whole blocks where whole_blocks says so). For a mode whose
     * kernels interleave independent messages (CBC: the backend's cbc_x)
     * or share one pass among them (CTR: aeskit_ctr_many's ECB pass over
     * short messages' counters); the glue's batch methods call it, and run
     * one message at a time where it is NULL. */
    void (*encrypt_many)(const aeskit_key *keys, int pkcs7, const aeskit_block_item *items,
                         size_t n);
    /* Decryption is encryption (CTR): encrypt_many serves decrypt_many
     * too. */
    uint8_t decrypt_is_encrypt;
    /* XTS's additions; zero/NULL for a mode without them. */
    uint8_t distinct_keys;      /* the n_keys keys must differ (checked in
                                   constant time) */
    uint32_t min_len;           /* data (one-shot or a whole stream) of at least
                                   this many bytes */
    uint64_t max_len;           /* ... and at most this many (0: no limit);
                                   more is aeskit.LimitExceeded */
    /* Data units of unit bytes laid end to end (the *_sectors methods): unit
     * is a multiple of 16 from 16 to max_len, len a multiple of unit, the
     * first unit numbered first (16 bytes, little-endian), the next ones
     * counting up without wrapping (the glue checks). */
    void (*sectors)(const aeskit_key *keys, int enc, const uint8_t first[16], size_t unit,
                    uint8_t *dst, const uint8_t *src, size_t len);
};

/* A mode's state type as the glue keeps it: 8-byte aligned, at most
 * AESKIT_CIPHER_STATE_MAX bytes; with a head (below), the head first, as
 * the shared entry points take the state for it. */
#define AESKIT_CIPHER_STATE(type)                                                          \
    static_assert(_Alignof(type) <= 8 && sizeof(type) <= AESKIT_CIPHER_STATE_MAX,          \
                  #type " must fit the glue's state")
#define AESKIT_HEADED_STATE(type)                                                          \
    AESKIT_CIPHER_STATE(type);                                                             \
    static_assert(offsetof(type, head) == 0, #type " must begin with its head")

/* Every block-cipher mode, ending NULL (modes/registry.c). */
extern const struct aeskit_cipher *const aeskit_ciphers[];

/* The common descriptor fields of a mode with one AES key of any size: ID
 * is its name (CTR: the type aeskit.AESCTR), IV the name of its 16-byte
 * argument or NULL, SUMMARY the docstring's first paragraph; ARG (a
 * keyword argument, "name=default, ") and DOC (its paragraph) are "" for
 * a mode with no argument of its own. */
#define AESKIT_ONE_KEY_CIPHER(ID, IV, ARG, SUMMARY, DOC)                                   \
    .name = #ID,                                                                           \
    .type_name = "aeskit.AES" #ID,                                                         \
    .doc = "AES" #ID "(key, *, " ARG "backend='auto')\n--\n\n" SUMMARY                     \
           "\n\nkey: 16, 24 or 32 bytes, expanded once; the object is immutable "          \
           "and safe to share between threads. backend: 'auto' or a name from "            \
           "aeskit.backends().available." DOC,                                             \
    .key_sizes = AESKIT_KEY_ANY,                                                           \
    .n_keys = 1,                                                                           \
    .iv_name = IV

/*
 * Whole blocks out, a partial block kept: the streaming update shared by
 * ECB, CBC and OCB3. part/pos hold the pending bytes (pos <= 16: 16 is a
 * block held back, which goes out first; pos < 16 after); each run
 * of whole blocks goes to fn(ctx, dst, src, n). Writes and returns
 * 16 * floor((pos + len) / 16) bytes; dst == src works (the output then
 * lags the input by pos bytes, so the blocks go through a bounce buffer).
 */
typedef void aeskit_blocks_fn(void *ctx, uint8_t *dst, const uint8_t *src, size_t n);
size_t aeskit_blockwise_update(uint8_t part[16], unsigned *pos, aeskit_blocks_fn *fn,
                               void *ctx, uint8_t *dst, const uint8_t *src, size_t len);

/* ---- ECB and CBC: whole blocks, PKCS#7 padding optional ------------------ */

/* The head of the state: blocks(st, dst, src, n) runs n whole blocks
 * through the mode (its slot in its direction, its chaining value), st
 * being the whole state. */
typedef struct aeskit_padded {
    aeskit_blocks_fn *blocks;
    const aeskit_key *key;
    uint8_t buf[16];    /* pending input bytes */
    unsigned pos;       /* bytes pending: < 16, except that a PKCS#7
                           decryptor holds its last block: 1 to 16 */
    uint8_t enc;        /* 1 encrypt, 0 decrypt */
    uint8_t pkcs7;      /* PKCS#7 padding: aeskit_padded_pkcs7 */
} aeskit_padded;

void aeskit_padded_init(aeskit_padded *p, aeskit_blocks_fn *blocks, const aeskit_key *key,
                        int enc);
/* The descriptor's entry points, on a state that begins with the head:
 * a stream ends only on a block boundary (else AESKIT_FINISH_PARTIAL),
 * and finish writes nothing, unless PKCS#7 padding is on. */
size_t aeskit_padded_out_len(const void *st, size_t len);
size_t aeskit_padded_update(void *st, uint8_t *dst, const uint8_t *src, size_t len);
enum aeskit_finish aeskit_padded_finish(void *st, uint8_t *dst, size_t *out);
void aeskit_padded_pkcs7(void *st);

/* The descriptor fields of such a mode with one key, beyond its state and
 * init: PKCS#7 as the padding= argument, with its docs. */
#define AESKIT_PADDED_CIPHER(ID, IV, SUMMARY)                                              \
    AESKIT_ONE_KEY_CIPHER(                                                                 \
        ID, IV, "padding=None, ", SUMMARY,                                                 \
        " padding: None (whole blocks only) or 'pkcs7', in any case (any length to "       \
        "encrypt; removed "                                                                \
        "and checked on decryption, where a wrong padding raises ValueError: "             \
        "unauthenticated, that is a padding oracle wherever the failure shows; prefer "    \
        "AESGCM or AESOCB3)."),                                                            \
    .whole_blocks = 1,                                                                     \
    .out_len = aeskit_padded_out_len,                                                      \
    .update = aeskit_padded_update,                                                        \
    .finish = aeskit_padded_finish,                                                        \
    .pkcs7 = aeskit_padded_pkcs7

/* ---- CFB, OFB and CTR: the data XOR a keystream --------------------------- */

/* The head of the state: blocks(st, dst, src, n) runs n whole blocks
 * through the mode's slot from where the mode stands; next(st) puts the
 * keystream block after them in buf and moves the mode past it. A partial
 * block's bytes take buf's from pos on, and each byte of buf used is
 * replaced by the ciphertext byte it made: once a block is whole, buf
 * holds its ciphertext, which is CFB's next chaining value (OFB and CTR
 * keep theirs elsewhere and never read it). */
typedef struct aeskit_keystream {
    aeskit_blocks_fn *blocks;
    void (*next)(void *st);
    const aeskit_key *key;
    uint8_t buf[16];
    unsigned pos;       /* bytes of buf used; 0: none left */
    uint8_t enc;        /* 1 encrypt, 0 decrypt: which byte is ciphertext */
} aeskit_keystream;

void aeskit_keystream_init(aeskit_keystream *stream, aeskit_blocks_fn *blocks,
                           void (*next)(void *st), const aeskit_key *key, int enc);
/* The descriptor's update, on a state that begins with the head. */
size_t aeskit_keystream_update(void *st, uint8_t *dst, const uint8_t *src, size_t len);

/* out_len and finish of a stream that holds nothing back (CFB, CFB8,
 * OFB, CTR): an update writes what it takes, finish writes nothing. */
size_t aeskit_same_out_len(const void *st, size_t len);
enum aeskit_finish aeskit_nothing_held(void *st, uint8_t *dst, size_t *out);

/* The descriptor fields of a keystream mode with one key and an iv,
 * beyond its state and init. */
#define AESKIT_KEYSTREAM_CIPHER(ID, SUMMARY)                                               \
    AESKIT_ONE_KEY_CIPHER(ID, "iv", "", SUMMARY, ""),                                      \
    .out_len = aeskit_same_out_len,                                                        \
    .update = aeskit_keystream_update,                                                     \
    .finish = aeskit_nothing_held

#endif
