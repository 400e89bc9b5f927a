/*
 * block.c: ECB, CBC, CFB (128-bit segments), CFB8, OFB and CTR, written
 * once against the backend table. Whole blocks go to the backend's bulk
 * slots; this file only handles what the slots cannot: partial blocks
 * carried between streaming calls, and CFB8. Contracts: aeskit.h.
 */
#include "block.h"
#include "common.h"
#include "generic.h"

/* Blocks per bounce chunk when a blockwise stream runs in place with input
 * pending. */
#define BOUNCE 64

void aeskit_stream_init(aeskit_stream *st, const aeskit_key *k, enum aeskit_mode mode,
                        int enc, const uint8_t *iv)
{
    memset(st, 0, sizeof *st);
    st->key = k;
    st->mode = (uint8_t)mode;
    st->enc = (uint8_t)(enc != 0);
    if (mode != AESKIT_ECB) {
        assert(iv != NULL);
        memcpy(st->iv, iv, 16);
    }
}

static int is_blockwise(enum aeskit_mode mode)
{
    return mode == AESKIT_ECB || mode == AESKIT_CBC;
}

unsigned aeskit_stream_pending(const aeskit_stream *st)
{
    return is_blockwise(st->mode) ? st->pos : 0;
}

size_t aeskit_stream_out_len(const aeskit_stream *st, size_t len)
{
    if (!is_blockwise(st->mode))
        return len;
    return (st->pos + len) / 16 * 16;
}

/* n whole blocks of an ECB/CBC stream. */
static void blocks(void *ctx, uint8_t *dst, const uint8_t *src, size_t n)
{
    aeskit_stream *st = ctx;
    const aeskit_key *k = st->key;
    const struct aeskit_impl *im = k->impl;
    if (st->mode == AESKIT_ECB)
        (st->enc ? im->ecb_enc : im->ecb_dec)(k, dst, src, n);
    else
        (st->enc ? im->cbc_enc : im->cbc_dec)(k, st->iv, dst, src, n);
}

size_t aeskit_blockwise_update(uint8_t part[16], unsigned *pos, aeskit_blocks_fn *fn,
                               void *ctx, uint8_t *dst, const uint8_t *src, size_t len)
{
    size_t out = 0;
    if (*pos > 0) {
        size_t take = 16 - *pos;
        if (len < take) {
            memcpy(part + *pos, src, len);
            *pos += (unsigned)len;
            return 0;
        }
        if (dst == src) {
            /* In place, output lags input by pos bytes: feed the blocks
             * from a bounce buffer, and save the pos input bytes that
             * each chunk's output overwrites before writing it. The
             * pending bytes lead each chunk. */
            uint8_t tmp[BOUNCE * 16];
            const unsigned p = *pos;
            const uint8_t *in = src, *end = src + len;
            size_t nblocks = (p + len) / 16, c = p;
            memcpy(tmp, part, p);
            while (nblocks > 0) {
                size_t b = nblocks < BOUNCE ? nblocks : BOUNCE;
                size_t fill = 16 * b - c;
                memcpy(tmp + c, in, fill);
                in += fill;
                c = (size_t)(end - in) < p ? (size_t)(end - in) : p;
                memcpy(part, in, c);
                in += c;
                fn(ctx, dst, tmp, b);
                memcpy(tmp, part, c);
                dst += 16 * b; out += 16 * b; nblocks -= b;
            }
            aeskit_secure_zero(tmp, sizeof tmp);
            memcpy(part + c, in, (size_t)(end - in));
            *pos = (unsigned)(c + (size_t)(end - in));
            assert(*pos < 16);
            return out;
        }
        memcpy(part + *pos, src, take);
        fn(ctx, dst, part, 1);
        src += take; len -= take; dst += 16; out = 16;
        *pos = 0;
    }
    size_t n = len / 16;
    fn(ctx, dst, src, n);
    out += 16 * n;
    memcpy(part, src + 16 * n, len % 16);
    *pos = (unsigned)(len % 16);
    return out;
}

/* Next keystream block into st->buf for CFB, OFB and CTR. */
static void next_keystream(aeskit_stream *st)
{
    const aeskit_key *k = st->key;
    k->impl->ecb_enc(k, st->buf, st->iv, 1);
    if (st->mode == AESKIT_OFB)
        memcpy(st->iv, st->buf, 16);
    else if (st->mode == AESKIT_CTR)
        aeskit_ctr_add(AESKIT_CTR_BE128, st->iv, 1);
}

/*
 * len < 16 - st->pos bytes (or up to the end of the current keystream
 * block) against st->buf. For CFB, iv collects the ciphertext bytes of
 * the current block: once full it is the next chaining value.
 */
static void partial(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    unsigned p = st->pos;
    assert(p + len <= 16);
    for (size_t i = 0; i < len; i++, p++) {
        uint8_t in = src[i], out = in ^ st->buf[p];
        dst[i] = out;
        if (st->mode == AESKIT_CFB)
            st->iv[p] = st->enc ? out : in;
    }
    st->pos = p % 16;
}

static void update_cfb8(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    const aeskit_key *k = st->key;
    uint8_t ks[16];
    for (size_t i = 0; i < len; i++) {
        k->impl->ecb_enc(k, ks, st->iv, 1);
        uint8_t in = src[i], out = in ^ ks[0];
        dst[i] = out;
        memmove(st->iv, st->iv + 1, 15);
        st->iv[15] = st->enc ? out : in;
    }
    aeskit_secure_zero(ks, sizeof ks);
}

static size_t update_stream(aeskit_stream *st, uint8_t *dst, const uint8_t *src,
                            size_t len)
{
    const aeskit_key *k = st->key;
    const struct aeskit_impl *im = k->impl;
    size_t total = len;
    if (st->pos > 0) {
        size_t take = 16 - st->pos;
        if (take > len)
            take = len;
        partial(st, dst, src, take);
        src += take; dst += take; len -= take;
    }
    size_t n = len / 16;
    switch (st->mode) {
    case AESKIT_CFB:
        (st->enc ? im->cfb_enc : im->cfb_dec)(k, st->iv, dst, src, n);
        break;
    case AESKIT_OFB:
        im->ofb(k, st->iv, dst, src, n);
        break;
    default:
        im->ctr(k, AESKIT_CTR_BE128, st->iv, dst, src, n);
        break;
    }
    src += 16 * n; dst += 16 * n; len -= 16 * n;
    if (len > 0) {
        next_keystream(st);
        partial(st, dst, src, len);
    }
    return total;
}

size_t aeskit_stream_update(aeskit_stream *st, uint8_t *dst, const uint8_t *src,
                            size_t len)
{
    switch (st->mode) {
    case AESKIT_ECB:
    case AESKIT_CBC:
        return aeskit_blockwise_update(st->buf, &st->pos, blocks, st, dst, src, len);
    case AESKIT_CFB8:
        update_cfb8(st, dst, src, len);
        return len;
    default:
        return update_stream(st, dst, src, len);
    }
}

enum aeskit_finish aeskit_stream_finish(aeskit_stream *st, uint8_t *dst, size_t *out)
{
    (void)dst;
    *out = aeskit_stream_pending(st);
    return *out == 0 ? AESKIT_FINISH_OK : AESKIT_FINISH_PARTIAL;
}

/* ---- the six modes as Python types (py/cipher.c) ---------------------- */

#define BLOCK_CIPHER(id, ID, iv, whole, summary)                                           \
    const struct aeskit_cipher aeskit_##id##_cipher = {                                    \
        .name = #ID,                                                                       \
        .type_name = "aeskit.AES" #ID,                                                     \
        .doc = "AES" #ID "(key, *, backend='auto')\n\n" summary                            \
               "\n\nkey: 16, 24 or 32 bytes, expanded once; the object is immutable "      \
               "and safe to share between threads. backend: 'auto' or a name from "        \
               "aeskit.backends().available.",                                             \
        .key_sizes = AESKIT_KEY_ANY,                                                       \
        .n_keys = 1,                                                                       \
        .iv_name = iv,                                                                     \
        .whole_blocks = whole,                                                             \
        .mode = AESKIT_##ID,                                                               \
        .init = aeskit_stream_init,                                                        \
        .out_len = aeskit_stream_out_len,                                                  \
        .update = aeskit_stream_update,                                                    \
        .finish = aeskit_stream_finish,                                                    \
    }

BLOCK_CIPHER(ecb, ECB, NULL, 1, "AES in ECB mode: whole blocks, each on its own.");
BLOCK_CIPHER(cbc, CBC, "iv", 1, "AES in CBC mode (SP 800-38A): whole blocks, no padding.");
BLOCK_CIPHER(cfb, CFB, "iv", 0, "AES in CFB mode with 128-bit segments (SP 800-38A).");
BLOCK_CIPHER(cfb8, CFB8, "iv", 0, "AES in CFB mode with 8-bit segments (SP 800-38A).");
BLOCK_CIPHER(ofb, OFB, "iv", 0, "AES in OFB mode (SP 800-38A).");
BLOCK_CIPHER(ctr, CTR, "iv", 0,
             "AES in CTR mode (SP 800-38A): the iv is the first counter block, counted "
             "as one 128-bit big-endian integer.");
