/*
 * verify.c: where a received tag meets the expected one, for every AEAD and
 * MAC descriptor. The Python glue (py/aead.c, py/segments.c, py/mac.c)
 * makes no tag comparison of its own: it calls these, so the fuzzer
 * (tests/fuzz) checks the very code that decides what a caller gets back.
 *
 * The comparison OR-accumulates every byte (aeskit_ct_memeq); the verdict
 * is the one public bit, and only the zeroing of a failed open branches on
 * it. Contracts: modes/aead.h and modes/mac.h.
 */
#include "aead.h"
#include "common.h"
#include "mac.h"

int aeskit_aead_open_verified(const struct aeskit_aead *d, const void *ks,
                              const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                              size_t len, const uint8_t *tag, size_t tag_len)
{
    uint8_t expect[16];
    assert(tag_len >= 1 && tag_len <= 16 && (d->tag_lengths >> tag_len & 1));
    d->open(ks, m, dst, src, len, tag, expect);
    const int ok = aeskit_ct_memeq(expect, tag, tag_len);
    if (!ok)
        aeskit_secure_zero(dst, len);
    aeskit_secure_zero(expect, sizeof expect);
    return ok;
}

size_t aeskit_aead_open_many_verified(const struct aeskit_aead *d, const void *ks,
                                      const aeskit_aead_item *items, size_t n, size_t tag_len,
                                      uint8_t *ok)
{
    uint8_t expect[AESKIT_AEAD_MANY][16];
    assert(n <= AESKIT_AEAD_MANY);
    assert(tag_len >= 1 && tag_len <= 16 && (d->tag_lengths >> tag_len & 1));
    if (d->open_many != NULL)
        d->open_many(ks, items, n, expect);
    else
        for (size_t i = 0; i < n; i++)
            d->open(ks, &items[i].m, items[i].dst, items[i].src, items[i].len, items[i].tag,
                    expect[i]);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        ok[i] = (uint8_t)aeskit_ct_memeq(expect[i], items[i].tag, tag_len);
        if (!ok[i])
            aeskit_secure_zero(items[i].dst, items[i].len);
        failed += !ok[i];
    }
    aeskit_secure_zero(expect, n * sizeof expect[0]);
    return failed;
}

void aeskit_aead_seal_many(const struct aeskit_aead *d, const void *ks,
                           const aeskit_aead_item *items, size_t n, uint8_t (*tags)[16])
{
    assert(n <= AESKIT_AEAD_MANY);
    if (d->seal_many != NULL) {
        d->seal_many(ks, items, n, tags);
        return;
    }
    for (size_t i = 0; i < n; i++)
        d->seal(ks, &items[i].m, items[i].dst, items[i].src, items[i].len, tags[i]);
}

int aeskit_aead_finish_verified(const struct aeskit_aead *d, void *st, uint8_t *dst,
                                const uint8_t *tag, size_t tag_len, size_t *out)
{
    uint8_t expect[16];
    assert(tag_len >= 1 && tag_len <= 16 && (d->tag_lengths >> tag_len & 1));
    const size_t n = d->finish(st, dst, expect);
    assert(n < 16);
    const int ok = aeskit_ct_memeq(expect, tag, tag_len);
    if (!ok)
        aeskit_secure_zero(dst, n);
    aeskit_secure_zero(expect, sizeof expect);
    *out = n;
    return ok;
}

int aeskit_mac_tag_ok(const uint8_t full[16], const uint8_t *tag, size_t len, size_t tag_len)
{
    assert(tag_len >= 1 && tag_len <= 16);
    return len == tag_len && aeskit_ct_memeq(full, tag, tag_len);
}
