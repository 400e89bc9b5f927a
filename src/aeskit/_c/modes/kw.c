/*
 * kw.c: AES key wrap, SP 800-38F §6: KW (RFC 3394) and KWP (RFC 5649).
 *
 * Both are the wrapping function W of RFC 3394 §2.2.1 over n semiblocks
 * R[1..n] and an integrity register A, in its indexed form: six passes,
 * each step one AES call on A || R[i], with A then the high half of the
 * result XOR the step counter t = n*j + i (big-endian) and R[i] its low
 * half. Every step needs the one before it, so the work is 6n serial
 * single-block calls to the backend's ecb slot; there is nothing to batch.
 * KWP wraps a key of at most 8 bytes as one AES block, AIV || key padded
 * (RFC 5649 §4.1), and anything longer with W.
 *
 * Unwrap runs W backwards, then judges the data in constant time: the
 * integrity value is compared by XOR into a mask, never by memcmp or an
 * early exit; KWP's length indicator stays secret until the verdict, so
 * its range (8(n-1), 8n] and its zero padding are masks too, the padding
 * tested against every one of the 8 pad lengths a semiblock can hold
 * rather than indexed by the one it claims (unwrappers that indexed, or
 * skipped the padding check, are why it matters). One AND of the three
 * masks is the verdict; it zeroes the output by mask as well, so nothing
 * branches on the data before the caller reads the result.
 */
#include "kw.h"

#include "common.h"

static const uint64_t KW_IV = 0xa6a6a6a6a6a6a6a6u;   /* RFC 3394 §2.2.3.1 */
static const uint32_t KWP_AIV = 0xa65959a6u;          /* RFC 5649 §3 */

/* All ones if x == y, else 0. */
static inline uint64_t ct_eq64(uint64_t x, uint64_t y)
{
    const uint64_t d = x ^ y;
    return ((d | (0 - d)) >> 63) - 1;
}

/* All ones if x < y, else 0; x and y below 2^63. */
static inline uint64_t ct_lt63(uint64_t x, uint64_t y)
{
    return 0 - ((x - y) >> 63);
}

/* W (RFC 3394 §2.2.1) in place on n semiblocks at r; returns the final A. */
static uint64_t w_wrap(const aeskit_key *k, uint64_t a, uint8_t *r, size_t n)
{
    uint8_t b[16];
    uint64_t t = 0;
    for (unsigned j = 0; j < 6; j++) {
        for (size_t i = 0; i < n; i++) {
            aeskit_store_be64(b, a);
            memcpy(b + 8, r + 8 * i, 8);
            k->impl->ecb_enc(k, b, b, 1);
            a = aeskit_load_be64(b) ^ ++t;
            memcpy(r + 8 * i, b + 8, 8);
        }
    }
    aeskit_secure_zero(b, sizeof b);
    return a;
}

/* W^-1 (RFC 3394 §2.2.2) in place on n semiblocks at r; returns A. */
static uint64_t w_unwrap(const aeskit_key *k, uint64_t a, uint8_t *r, size_t n)
{
    uint8_t b[16];
    uint64_t t = 6 * (uint64_t)n;
    for (unsigned j = 0; j < 6; j++) {
        for (size_t i = n; i-- > 0;) {
            aeskit_store_be64(b, a ^ t--);
            memcpy(b + 8, r + 8 * i, 8);
            k->impl->ecb_dec(k, b, b, 1);
            a = aeskit_load_be64(b);
            memcpy(r + 8 * i, b + 8, 8);
        }
    }
    aeskit_secure_zero(b, sizeof b);
    return a;
}

/* dst &= mask over len bytes: the output kept or zeroed without a branch. */
static void mask_bytes(uint8_t *dst, size_t len, uint64_t mask)
{
    const uint8_t m = (uint8_t)mask;
    for (size_t i = 0; i < len; i++)
        dst[i] &= m;
}

size_t aeskit_kw_wrapped_len(size_t len)
{
    return len + AESKIT_SEMIBLOCK;
}

void aeskit_kw_wrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len)
{
    assert(len >= 16 && len % 8 == 0);
    memmove(dst + 8, src, len);
    aeskit_store_be64(dst, w_wrap(k, KW_IV, dst + 8, len / 8));
}

size_t aeskit_kw_unwrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len)
{
    assert(len >= 24 && len % 8 == 0);
    const uint64_t a0 = aeskit_load_be64(src);   /* before dst == src is overwritten */
    memmove(dst, src + 8, len - 8);
    const uint64_t ok = ct_eq64(w_unwrap(k, a0, dst, len / 8 - 1), KW_IV);
    mask_bytes(dst, len - 8, ok);
    return (len - 8) & ok;
}

size_t aeskit_kwp_wrapped_len(size_t len)
{
    return (len + 7) / 8 * 8 + AESKIT_SEMIBLOCK;
}

void aeskit_kwp_wrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len)
{
    assert(len >= 1 && (uint64_t)len <= AESKIT_KWP_MAX);
    const uint64_t aiv = (uint64_t)KWP_AIV << 32 | (uint32_t)len;
    const size_t padded = (len + 7) / 8 * 8;
    if (padded == 8) {
        uint8_t b[16] = {0};
        aeskit_store_be64(b, aiv);
        memcpy(b + 8, src, len);
        k->impl->ecb_enc(k, dst, b, 1);
        aeskit_secure_zero(b, sizeof b);
        return;
    }
    memmove(dst + 8, src, len);
    memset(dst + 8 + len, 0, padded - len);
    aeskit_store_be64(dst, w_wrap(k, aiv, dst + 8, padded / 8));
}

size_t aeskit_kwp_unwrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len)
{
    assert(len >= 16 && len % 8 == 0 && (uint64_t)len <= AESKIT_KWP_WRAPPED_MAX);
    const size_t n = len / 8 - 1;
    uint64_t a;
    if (n == 1) {
        uint8_t b[16];
        k->impl->ecb_dec(k, b, src, 1);
        a = aeskit_load_be64(b);
        memcpy(dst, b + 8, 8);
        aeskit_secure_zero(b, sizeof b);
    } else {
        const uint64_t a0 = aeskit_load_be64(src);
        memmove(dst, src + 8, len - 8);
        a = w_unwrap(k, a0, dst, n);
    }
    const uint64_t mli = a & 0xffffffffu;
    uint64_t ok = ct_eq64(a >> 32, KWP_AIV);
    /* 8n <= 2^32 + 8 (the length assert), so ct_lt63's operands fit */
    ok &= ct_lt63(8 * (uint64_t)(n - 1), mli) & ~ct_lt63(8 * (uint64_t)n, mli);
    /* In range the pad length is 0..7; out of range ok is already 0. */
    const uint64_t pad = (8 * (uint64_t)n - mli) & 7;
    const uint8_t *last = dst + 8 * (n - 1);
    uint64_t nonzero = 0;
    for (unsigned q = 0; q < 8; q++)   /* byte 7 - q is padding if q < pad */
        nonzero |= last[7 - q] & ct_lt63(q, pad);
    ok &= ct_eq64(nonzero, 0);
    mask_bytes(dst, len - 8, ok);
    return (size_t)(mli & ok);
}

const struct aeskit_keywrap aeskit_kw_keywrap = {
    .name = "KW",
    .type_name = "aeskit.AESKW",
    .doc = "AESKW(key, *, backend='auto')\n--\n\nAES key wrap (SP 800-38F KW, RFC 3394): wrap() "
           "takes a multiple of 8 bytes, at least 16; unwrap() a multiple of 8, at least 24, "
           "and raises InvalidUnwrap on any failure.",
    .facts = {.floor_enc = "serial", .floor_dec = "serial", .chained_aes = 12},
    .wrap_min = 16,
    .wrap_multiple = 8,
    .wrap_max = UINT64_MAX,
    .unwrap_min = 24,
    .unwrap_max = UINT64_MAX,
    .wrapped_len = aeskit_kw_wrapped_len,
    .wrap = aeskit_kw_wrap,
    .unwrap = aeskit_kw_unwrap,
};

const struct aeskit_keywrap aeskit_kwp_keywrap = {
    .name = "KWP",
    .type_name = "aeskit.AESKWP",
    .doc = "AESKWP(key, *, backend='auto')\n--\n\nAES key wrap with padding (SP 800-38F KWP, "
           "RFC 5649): wrap() takes 1 to 2**32 - 1 bytes; unwrap() a multiple of 8, at "
           "least 16, and raises InvalidUnwrap on any failure.",
    .facts = {.floor_enc = "serial", .floor_dec = "serial", .chained_aes = 12},
    .wrap_min = 1,
    .wrap_multiple = 1,
    .wrap_max = AESKIT_KWP_MAX,
    .unwrap_min = 16,
    .unwrap_max = AESKIT_KWP_WRAPPED_MAX,
    .wrapped_len = aeskit_kwp_wrapped_len,
    .wrap = aeskit_kwp_wrap,
    .unwrap = aeskit_kwp_unwrap,
};
