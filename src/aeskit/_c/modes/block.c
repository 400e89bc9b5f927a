/*
 * block.c: what the block-cipher modes share, written once against the
 * backend table: the blockwise update (ECB, CBC, OCB3), the stream of
 * whole blocks with optional PKCS#7 padding (ECB, CBC), and the keystream
 * stream (CFB, OFB, CTR). Whole blocks go to the mode's callbacks, which
 * call the backend's bulk slots; this file only handles what the slots
 * cannot: partial blocks carried between streaming calls, the block a
 * PKCS#7 decryptor holds back. Contracts: block.h, aeskit.h.
 */
#include "block.h"
#include "common.h"
#include "padding.h"

/* Blocks per bounce chunk when a blockwise stream runs in place with input
 * pending. */
#define BOUNCE 64

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

/* ---- ECB and CBC: whole blocks, PKCS#7 optional ------------------------- */

void aeskit_padded_init(aeskit_padded *p, aeskit_blocks_fn *blocks, const aeskit_key *key,
                        int enc)
{
    p->blocks = blocks;
    p->key = key;
    p->pos = 0;
    p->enc = (uint8_t)(enc != 0);
    p->pkcs7 = 0;
}

void aeskit_padded_pkcs7(void *st)
{
    aeskit_padded *p = st;
    assert(p->pos == 0);
    p->pkcs7 = 1;
}

/* A PKCS#7 decryptor holds back the last block, 1 to 16 bytes once any
 * data came: every whole block before it goes out. */
static int holds_last_block(const aeskit_padded *p)
{
    return p->pkcs7 && !p->enc;
}

size_t aeskit_padded_out_len(const void *st, size_t len)
{
    const aeskit_padded *p = st;
    const size_t total = p->pos + len;
    if (holds_last_block(p))
        return total == 0 ? 0 : (total - 1) / 16 * 16;
    return total / 16 * 16;
}

/* The update of a PKCS#7 decryptor: the whole blocks before the last go
 * through the blockwise update, the last 1 to 16 bytes wait in p->buf. */
static size_t update_unpad(aeskit_padded *p, uint8_t *dst, const uint8_t *src, size_t len)
{
    const size_t total = p->pos + len;
    if (total <= 16) {
        memcpy(p->buf + p->pos, src, len);
        p->pos = (unsigned)total;
        return 0;
    }
    /* The output, total - keep >= 16 bytes, covers what was pending
     * (<= 16), so the kept bytes all come from src; in place the output
     * may run over them, so they are saved first. */
    const size_t keep = (total - 1) % 16 + 1;
    uint8_t last[16];
    assert(keep <= len);
    memcpy(last, src + len - keep, keep);
    const size_t out = aeskit_blockwise_update(p->buf, &p->pos, p->blocks, p, dst, src,
                                               len - keep);
    assert(p->pos == 0 && out == total - keep);
    memcpy(p->buf, last, keep);
    p->pos = (unsigned)keep;
    aeskit_secure_zero(last, sizeof last);
    return out;
}

size_t aeskit_padded_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    aeskit_padded *p = st;
    if (holds_last_block(p))
        return update_unpad(p, dst, src, len);
    return aeskit_blockwise_update(p->buf, &p->pos, p->blocks, p, dst, src, len);
}

/* The held-back block of a PKCS#7 decryptor: decrypted in p->buf,
 * checked, and its data copied out, without a branch on any of it; even
 * the status is the verdict masked, which works as OK is 0. */
static_assert(AESKIT_FINISH_OK == 0, "finish_unpad masks its status");
static enum aeskit_finish finish_unpad(aeskit_padded *p, uint8_t *dst, size_t *out)
{
    *out = 0;
    if (p->pos != 16)       /* a length, public */
        return AESKIT_FINISH_PADDING;
    unsigned pad;
    p->blocks(p, p->buf, p->buf, 1);
    const uint32_t ok = aeskit_pkcs7_check(p->buf, &pad);
    const unsigned n = (16 - pad) & ok;
    aeskit_ct_copy_prefix(dst, p->buf, n);
    *out = n;
    return (enum aeskit_finish)(AESKIT_FINISH_PADDING & ~ok);
}

enum aeskit_finish aeskit_padded_finish(void *st, uint8_t *dst, size_t *out)
{
    aeskit_padded *p = st;
    if (holds_last_block(p))
        return finish_unpad(p, dst, out);
    if (p->pkcs7) {
        aeskit_pkcs7_pad(p->buf, p->pos);
        p->blocks(p, dst, p->buf, 1);
        *out = 16;
        return AESKIT_FINISH_OK;
    }
    *out = p->pos;
    return *out == 0 ? AESKIT_FINISH_OK : AESKIT_FINISH_PARTIAL;
}

/* ---- CFB, OFB and CTR: the data XOR a keystream ------------------------- */

void aeskit_keystream_init(aeskit_keystream *stream, aeskit_blocks_fn *blocks,
                           void (*next)(void *st), const aeskit_key *key, int enc)
{
    stream->blocks = blocks;
    stream->next = next;
    stream->key = key;
    stream->pos = 0;
    stream->enc = (uint8_t)(enc != 0);
}

/* len <= 16 - stream->pos bytes against the rest of the current keystream
 * block, each byte of it used replaced by the ciphertext byte (block.h). */
static void partial(aeskit_keystream *stream, uint8_t *dst, const uint8_t *src, size_t len)
{
    unsigned p = stream->pos;
    assert(p + len <= 16);
    for (size_t i = 0; i < len; i++, p++) {
        const uint8_t in = src[i], out = in ^ stream->buf[p];
        dst[i] = out;
        stream->buf[p] = stream->enc ? out : in;
    }
    stream->pos = p % 16;
}

size_t aeskit_keystream_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    aeskit_keystream *stream = st;
    const size_t total = len;
    if (stream->pos > 0) {
        const size_t take = 16 - stream->pos < len ? 16 - stream->pos : len;
        partial(stream, dst, src, take);
        src += take; dst += take; len -= take;
    }
    const size_t n = len / 16;
    stream->blocks(st, dst, src, n);
    src += 16 * n; dst += 16 * n; len -= 16 * n;
    if (len > 0) {
        stream->next(st);
        partial(stream, dst, src, len);
    }
    return total;
}

size_t aeskit_same_out_len(const void *st, size_t len)
{
    (void)st;
    return len;
}

enum aeskit_finish aeskit_nothing_held(void *st, uint8_t *dst, size_t *out)
{
    (void)st;
    (void)dst;
    *out = 0;
    return AESKIT_FINISH_OK;
}
