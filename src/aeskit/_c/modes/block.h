/*
 * block.h: the block-cipher modes (modes/block.c): ECB, CBC, CFB (128-bit
 * segments), CFB8, OFB and CTR, one streaming state for all of them, and
 * the descriptor through which the Python glue (py/cipher.c) serves each
 * as a type without knowing which mode it is.
 */
#ifndef AESKIT_BLOCK_H
#define AESKIT_BLOCK_H

#include "aeskit.h"

enum aeskit_mode {
    AESKIT_ECB, AESKIT_CBC, AESKIT_CFB, AESKIT_CFB8, AESKIT_OFB, AESKIT_CTR,
    AESKIT_XTS,     /* its own engine: modes/xts.h */
};

/* One streaming state serves every block-cipher mode; one-shot calls are
 * a fresh state, one update and a finish. */
typedef struct aeskit_stream {
    const aeskit_key *key;
    uint8_t iv[16];     /* chaining value (CBC, CFB, CFB8), last keystream
                           block (OFB), next counter (CTR) */
    uint8_t buf[16];    /* ECB/CBC: pending input bytes; CFB/OFB/CTR: the
                           current keystream block */
    unsigned pos;       /* ECB/CBC: bytes pending; CFB/OFB/CTR: bytes of buf
                           used (0 = none left); always < 16, except that a
                           PKCS#7 decryptor holds its last block: 1 to 16 */
    uint8_t mode;       /* enum aeskit_mode */
    uint8_t enc;        /* 1 encrypt, 0 decrypt */
    uint8_t pkcs7;      /* PKCS#7 padding (ECB, CBC): aeskit_stream_pkcs7 */
    uint8_t held[32];   /* XTS: the pos (< 32) bytes held back for ciphertext
                           stealing; iv is the current tweak */
} aeskit_stream;

/* iv is ignored (may be NULL) for ECB, otherwise 16 bytes. */
void aeskit_stream_init(aeskit_stream *st, const aeskit_key *k, enum aeskit_mode mode,
                        int enc, const uint8_t *iv);
/* Bytes the next update of len bytes will write. */
size_t aeskit_stream_out_len(const aeskit_stream *st, size_t len);
/* Processes len bytes; writes exactly aeskit_stream_out_len(st, len) bytes
 * to dst and returns that count. dst == src is allowed. */
size_t aeskit_stream_update(aeskit_stream *st, uint8_t *dst, const uint8_t *src,
                            size_t len);
/* Bytes left pending (ECB/CBC: input that is not a whole block). */
unsigned aeskit_stream_pending(const aeskit_stream *st);
/* Turns PKCS#7 padding on in a fresh ECB or CBC stream: the encryptor pads
 * at finish; the decryptor's updates hold back the last block (1 to 16
 * bytes, so its output lags the input by up to 16 bytes), which finish
 * checks and strips (modes/padding.h). */
void aeskit_stream_pkcs7(aeskit_stream *st);

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

/* AES key sizes, as a mask: which sizes a type takes for each of its keys. */
enum {
    AESKIT_KEY128 = 1u << 0,
    AESKIT_KEY192 = 1u << 1,
    AESKIT_KEY256 = 1u << 2,
    AESKIT_KEY_ANY = AESKIT_KEY128 | AESKIT_KEY192 | AESKIT_KEY256,
};

/* How a stream ends (aeskit_stream_finish). */
enum aeskit_finish {
    AESKIT_FINISH_OK,
    AESKIT_FINISH_PARTIAL,      /* an incomplete block is left (ECB, CBC) */
    AESKIT_FINISH_PADDING,      /* PKCS#7 decryption: the padding is wrong, or
                                   the data was not a positive number of
                                   blocks; one status for all, on purpose */
};

/* The end of a stream: writes what st held back to dst (at most
 * AESKIT_FINISH_MAX bytes; none for these modes without padding) and sets
 * *out to the count; or, when the stream cannot end as it stands, returns
 * why, with *out the bytes left pending (0 for AESKIT_FINISH_PADDING). The
 * caller wipes st after.
 * With PKCS#7 the encryptor writes the padded last block (16 bytes). The
 * decryptor writes the last block's data (0 to 15 bytes) without a branch
 * on it: it reads and rewrites 16 bytes at dst, changing only the first
 * *out (none on failure), and computes the status it returns; the caller's
 * branch on that status is the one place the verdict becomes public. */
#define AESKIT_FINISH_MAX 32
enum aeskit_finish aeskit_stream_finish(aeskit_stream *st, uint8_t *dst, size_t *out);

/*
 * A block-cipher mode as a Python type (aeskit.AES<name>): its call shape
 * and its streaming engine. One per mode; the list is aeskit_ciphers[]
 * (modes/registry.c). The glue validates what the shape says (key sizes,
 * the iv, whole blocks) before it calls the engine, and never asks which
 * mode it serves. A mode with its own state adds its fields to
 * aeskit_stream and its own engine functions here.
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
    uint8_t mode;               /* passed to init: enum aeskit_mode here */
    void (*init)(aeskit_stream *st, const aeskit_key *keys, enum aeskit_mode mode, int enc,
                 const uint8_t *iv);
    size_t (*out_len)(const aeskit_stream *st, size_t len);
    size_t (*update)(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len);
    enum aeskit_finish (*finish)(aeskit_stream *st, uint8_t *dst, size_t *out);
    /* Turns PKCS#7 padding on in a fresh stream; NULL: the mode cannot pad
     * (its type takes no padding= argument). */
    void (*pkcs7)(aeskit_stream *st);
    /* One message at once, for a mode with a faster way than a stream (XTS:
     * a data unit without the stream's hold-back); NULL: one-shot calls
     * stream (init, update, finish). Called with len checked as above and
     * without padding; iv as for init; dst == src is allowed. */
    void (*oneshot)(const aeskit_key *keys, int enc, const uint8_t *iv, uint8_t *dst,
                    const uint8_t *src, size_t len);
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

/* Every block-cipher mode, ending NULL (modes/registry.c). */
extern const struct aeskit_cipher *const aeskit_ciphers[];

#endif
