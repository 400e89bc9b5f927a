/*
 * block.c: ECB, CBC, CFB (128-bit segments), CFB8, OFB and CTR, written
 * once against the backend table. Whole blocks go to the backend's bulk
 * slots; this file only handles what the slots cannot: partial blocks
 * carried between streaming calls, and CFB8. Contracts: aeskit.h.
 */
#include "block.h"
#include "common.h"
#include "generic.h"
#include "padding.h"

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

void aeskit_stream_pkcs7(aeskit_stream *st)
{
    assert(is_blockwise(st->mode) && st->pos == 0);
    st->pkcs7 = 1;
}

/* A PKCS#7 decryptor holds back the last block, 1 to 16 bytes once any
 * data came: every whole block before it goes out. */
static int holds_last_block(const aeskit_stream *st)
{
    return st->pkcs7 && !st->enc;
}

size_t aeskit_stream_out_len(const aeskit_stream *st, size_t len)
{
    if (!is_blockwise(st->mode))
        return len;
    const size_t total = st->pos + len;
    if (holds_last_block(st))
        return total == 0 ? 0 : (total - 1) / 16 * 16;
    return total / 16 * 16;
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

/* The update of a PKCS#7 decryptor: the whole blocks before the last go
 * through the blockwise update, the last 1 to 16 bytes wait in st->buf. */
static size_t update_unpad(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    const size_t total = st->pos + len;
    if (total <= 16) {
        memcpy(st->buf + st->pos, src, len);
        st->pos = (unsigned)total;
        return 0;
    }
    /* The output, total - keep >= 16 bytes, covers what was pending
     * (<= 16), so the kept bytes all come from src; in place the output
     * may run over them, so they are saved first. */
    const size_t keep = (total - 1) % 16 + 1;
    uint8_t last[16];
    assert(keep <= len);
    memcpy(last, src + len - keep, keep);
    const size_t out = aeskit_blockwise_update(st->buf, &st->pos, blocks, st, dst, src,
                                               len - keep);
    assert(st->pos == 0 && out == total - keep);
    memcpy(st->buf, last, keep);
    st->pos = (unsigned)keep;
    aeskit_secure_zero(last, sizeof last);
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
        if (holds_last_block(st))
            return update_unpad(st, dst, src, len);
        return aeskit_blockwise_update(st->buf, &st->pos, blocks, st, dst, src, len);
    case AESKIT_CFB8:
        update_cfb8(st, dst, src, len);
        return len;
    default:
        return update_stream(st, dst, src, len);
    }
}

/* The held-back block of a PKCS#7 decryptor: decrypted in st->buf,
 * checked, and its data copied out, without a branch on any of it; even
 * the status is the verdict masked, which works as OK is 0. */
static_assert(AESKIT_FINISH_OK == 0, "finish_unpad masks its status");
static enum aeskit_finish finish_unpad(aeskit_stream *st, uint8_t *dst, size_t *out)
{
    *out = 0;
    if (st->pos != 16)      /* a length, public */
        return AESKIT_FINISH_PADDING;
    unsigned pad;
    blocks(st, st->buf, st->buf, 1);
    const uint32_t ok = aeskit_pkcs7_check(st->buf, &pad);
    const unsigned n = (16 - pad) & ok;
    aeskit_ct_copy_prefix(dst, st->buf, n);
    *out = n;
    return (enum aeskit_finish)(AESKIT_FINISH_PADDING & ~ok);
}

enum aeskit_finish aeskit_stream_finish(aeskit_stream *st, uint8_t *dst, size_t *out)
{
    if (holds_last_block(st))
        return finish_unpad(st, dst, out);
    if (st->pkcs7) {
        aeskit_pkcs7_pad(st->buf, st->pos);
        blocks(st, dst, st->buf, 1);
        *out = 16;
        return AESKIT_FINISH_OK;
    }
    *out = aeskit_stream_pending(st);
    return *out == 0 ? AESKIT_FINISH_OK : AESKIT_FINISH_PARTIAL;
}

/* ---- the six modes as Python types (py/cipher.c) ---------------------- */

/* PKCS#7 on ECB and CBC: the padding= argument, its docs, the engine. */
#define PKCS7_ARG "padding=None, "
#define PKCS7_DOC                                                                          \
    " padding: None (whole blocks only) or 'pkcs7' (any length to encrypt; removed and "   \
    "checked on decryption, where a wrong padding raises ValueError: unauthenticated, "    \
    "that is a padding oracle wherever the failure shows; prefer AESGCM or AESOCB3)."
#define PKCS7_ENGINE aeskit_stream_pkcs7
#define NO_ARG ""
#define NO_DOC ""
#define NO_ENGINE NULL

#define BLOCK_CIPHER(id, ID, iv, whole, pad, summary)                                      \
    const struct aeskit_cipher aeskit_##id##_cipher = {                                    \
        .name = #ID,                                                                       \
        .type_name = "aeskit.AES" #ID,                                                     \
        .doc = "AES" #ID "(key, *, " pad##_ARG "backend='auto')\n--\n\n" summary           \
               "\n\nkey: 16, 24 or 32 bytes, expanded once; the object is immutable "      \
               "and safe to share between threads. backend: 'auto' or a name from "        \
               "aeskit.backends().available." pad##_DOC,                                   \
        .key_sizes = AESKIT_KEY_ANY,                                                       \
        .n_keys = 1,                                                                       \
        .iv_name = iv,                                                                     \
        .whole_blocks = whole,                                                             \
        .mode = AESKIT_##ID,                                                               \
        .init = aeskit_stream_init,                                                        \
        .out_len = aeskit_stream_out_len,                                                  \
        .update = aeskit_stream_update,                                                    \
        .finish = aeskit_stream_finish,                                                    \
        .pkcs7 = pad##_ENGINE,                                                             \
    }

BLOCK_CIPHER(ecb, ECB, NULL, 1, PKCS7,
             "AES in ECB mode: whole blocks, each on its own, or PKCS#7 padding.");
BLOCK_CIPHER(cbc, CBC, "iv", 1, PKCS7,
             "AES in CBC mode (SP 800-38A): whole blocks, or PKCS#7 padding.");
BLOCK_CIPHER(cfb, CFB, "iv", 0, NO, "AES in CFB mode with 128-bit segments (SP 800-38A).");
BLOCK_CIPHER(cfb8, CFB8, "iv", 0, NO, "AES in CFB mode with 8-bit segments (SP 800-38A).");
BLOCK_CIPHER(ofb, OFB, "iv", 0, NO, "AES in OFB mode (SP 800-38A).");
BLOCK_CIPHER(ctr, CTR, "iv", 0, NO,
             "AES in CTR mode (SP 800-38A): the iv is the first counter block, counted "
             "as one 128-bit big-endian integer.");
