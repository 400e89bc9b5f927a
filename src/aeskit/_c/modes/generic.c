/*
 * generic.c: the chained and counter slots built on a backend's own
 * ecb_enc/ecb_dec. A backend without a faster kernel for a slot points
 * the slot here (the portable backend points all of them here).
 *
 * Parallel helpers (cbc_dec, cfb_dec, ctr, xts) work in batches of BATCH
 * blocks through a stack buffer so that the backend sees many blocks per
 * call; serial ones go one block at a time. Contracts: aeskit.h.
 */
#include "common.h"
#include "generic.h"

#define BATCH 32

static void wipe(void *p, size_t len) { aeskit_secure_zero(p, len); }

void aeskit_generic_cbc_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    uint8_t x[16];
    for (size_t i = 0; i < n; i++) {
        aeskit_xor16(x, iv, src + 16 * i);
        k->impl->ecb_enc(k, iv, x, 1);
        memcpy(dst + 16 * i, iv, 16);
    }
    wipe(x, sizeof x);
}

void aeskit_generic_cbc_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    uint8_t buf[BATCH * 16], next_iv[16];
    while (n > 0) {
        size_t b = n < BATCH ? n : BATCH;
        /* The chaining values are the ciphertext blocks; save the last
         * before an in-place call overwrites it. */
        memcpy(next_iv, src + 16 * (b - 1), 16);
        k->impl->ecb_dec(k, buf, src, b);
        /* xor from the back: in place, block i still needs src[i-1] */
        for (size_t i = b - 1; i > 0; i--)
            aeskit_xor16(dst + 16 * i, buf + 16 * i, src + 16 * (i - 1));
        aeskit_xor16(dst, buf, iv);
        memcpy(iv, next_iv, 16);
        src += 16 * b; dst += 16 * b; n -= b;
    }
    wipe(buf, sizeof buf);
}

void aeskit_generic_cfb_enc(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    uint8_t stream[16];
    for (size_t i = 0; i < n; i++) {
        k->impl->ecb_enc(k, stream, iv, 1);
        aeskit_xor16(iv, stream, src + 16 * i);
        memcpy(dst + 16 * i, iv, 16);
    }
    wipe(stream, sizeof stream);
}

void aeskit_generic_cfb_dec(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                            const uint8_t *src, size_t n)
{
    uint8_t buf[BATCH * 16];
    while (n > 0) {
        size_t b = n < BATCH ? n : BATCH;
        /* keystream block i is E(C[i-1]), C[-1] = iv */
        memcpy(buf, iv, 16);
        memcpy(buf + 16, src, 16 * (b - 1));
        memcpy(iv, src + 16 * (b - 1), 16);
        k->impl->ecb_enc(k, buf, buf, b);
        aeskit_xor_bytes(dst, src, buf, 16 * b);
        src += 16 * b; dst += 16 * b; n -= b;
    }
    wipe(buf, sizeof buf);
}

void aeskit_generic_ofb(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                        const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        k->impl->ecb_enc(k, iv, iv, 1);
        aeskit_xor16(dst + 16 * i, src + 16 * i, iv);
    }
}

/* out = ctr + add as kind counts, without a branch on the counter (it may
 * be a secret: GCM's with a nonce of other than 12 bytes, modes/gcm.c, and
 * EAX's; the 128-bit carry is a value, lo < add, never a jump);
 * out may be ctr. Generic CTR writes block i as ctr + i from the unchanged
 * ctr, so the blocks of a batch do not wait on each other's stores (a
 * 16-byte load right after a 4-byte store that advanced ctr cannot be
 * forwarded, which costs several times the AES work on a wide backend).
 * Inlined into both callers: a call per block would cost a third of the
 * speed. */
AESKIT_INLINE void ctr_plus(enum aeskit_ctr kind, const uint8_t ctr[16], uint64_t add,
                              uint8_t out[16])
{
    switch (kind) {
    case AESKIT_CTR_BE128:
    case AESKIT_CTR_BE128_SECRET: {
        const uint64_t lo = aeskit_load_be64(ctr + 8) + add;
        aeskit_store_be64(out, aeskit_load_be64(ctr) + (uint64_t)(lo < add));
        aeskit_store_be64(out + 8, lo);
        break;
    }
    case AESKIT_CTR_BE32:
        if (out != ctr)
            memcpy(out, ctr, 12);
        aeskit_store_be32(out + 12, aeskit_load_be32(ctr + 12) + (uint32_t)add);
        break;
    case AESKIT_CTR_LE32:
        aeskit_store_le32(out, aeskit_load_le32(ctr) + (uint32_t)add);
        if (out != ctr)
            memcpy(out + 4, ctr + 4, 12);
        break;
    }
}

void aeskit_ctr_add(enum aeskit_ctr kind, uint8_t ctr[16], uint64_t add)
{
    ctr_plus(kind, ctr, add, ctr);
}

void aeskit_generic_ctr(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                        uint8_t *dst, const uint8_t *src, size_t n)
{
    uint8_t buf[BATCH * 16];
    while (n > 0) {
        size_t b = n < BATCH ? n : BATCH;
        for (size_t i = 0; i < b; i++)
            ctr_plus(kind, ctr, i, buf + 16 * i);
        aeskit_ctr_add(kind, ctr, b);
        k->impl->ecb_enc(k, buf, buf, b);
        aeskit_xor_bytes(dst, src, buf, 16 * b);
        src += 16 * b; dst += 16 * b; n -= b;
    }
    wipe(buf, sizeof buf);
}

/* The whole blocks of item m that the ctr slot takes (aeskit_ctr_many),
 * at least long of them or none; the rest goes through the gathered
 * buffer. */
static size_t ctr_many_direct(const aeskit_ctr_item *m, size_t long_)
{
    return m->len / 16 >= long_ ? m->len / 16 : 0;
}

/* The keystream of items m[0..n) past their direct blocks, gathered in
 * buf (each item's mask block first, with masks), XORed into their data;
 * the mask blocks copied out to mask[0..n). */
AESKIT_INLINE void ctr_many_xor(const aeskit_ctr_item *m, size_t n, size_t long_,
                                const uint8_t *buf, uint8_t (*mask)[16])
{
    for (size_t i = 0; i < n; i++) {
        if (mask != NULL) {
            memcpy(mask[i], buf, 16);
            buf += 16;
        }
        const size_t skip = 16 * ctr_many_direct(&m[i], long_), len = m[i].len - skip;
        aeskit_xor_bytes(m[i].dst + skip, m[i].src + skip, buf, len);
        buf += (len + 15) / 16 * 16;
    }
}

/* One ECB pass over buf's fill blocks, then ctr_many_xor. */
AESKIT_INLINE void ctr_many_flush(const aeskit_key *k, const aeskit_ctr_item *m, size_t n,
                                  size_t long_, uint8_t *buf, size_t fill, uint8_t (*mask)[16])
{
    k->impl->ecb_enc(k, buf, buf, fill);
    ctr_many_xor(m, n, long_, buf, mask);
}

/* count counter blocks ctr + add, ctr + add + 1, ... into out, as kind
 * counts (ctr_plus). The BE128 counter is read into registers once: out,
 * bytes, may alias ctr for the compiler, which would reload it after every
 * store. */
static void ctr_run(enum aeskit_ctr kind, const uint8_t ctr[16], uint64_t add, size_t count,
                    uint8_t *out)
{
    if (kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_BE128_SECRET) {
        const uint64_t hi = aeskit_load_be64(ctr), lo = aeskit_load_be64(ctr + 8);
        for (size_t b = 0; b < count; b++) {
            const uint64_t a = add + b, l = lo + a;
            aeskit_store_be64(out + 16 * b, hi + (uint64_t)(l < a));
            aeskit_store_be64(out + 16 * b + 8, l);
        }
        return;
    }
    for (size_t b = 0; b < count; b++)
        ctr_plus(kind, ctr, add + b, out + 16 * b);
}

/* aeskit_ctr_many's body, written out once with masks and once without
 * (below), so that the callers with none (CTR, EAX, SIV) test for them
 * nowhere per message. */
AESKIT_INLINE void ctr_many_body(const aeskit_key *k, enum aeskit_ctr kind,
                                 const aeskit_ctr_item *m, size_t n, uint8_t (*mask)[16])
{
    enum { CAP = 4 * BATCH };   /* 2 KiB: the buffer stays in L1 */
    static_assert(CAP > AESKIT_CTR_MANY_LONG_MAX, "a short message and its mask fit the buffer");
    const size_t long_ = k->impl->ctr_many_long;
    assert(long_ >= 1 && long_ <= AESKIT_CTR_MANY_LONG_MAX);
    uint8_t buf[CAP * 16];
    size_t first = 0, fill = 0, used = 0;   /* items first.. have their blocks in buf[0..fill) */
    const size_t lead = mask != NULL;   /* each item's mask block, before its own */
    for (size_t i = 0; i < n; i++) {
        const size_t direct = ctr_many_direct(&m[i], long_);
        const size_t blocks = (m[i].len - 16 * direct + 15) / 16;
        if (direct > 0) {
            uint8_t ctr[16];
            memcpy(ctr, m[i].ctr, 16);
            k->impl->ctr(k, kind, ctr, m[i].dst, m[i].src, direct);
            wipe(ctr, sizeof ctr);
        }
        if (fill + lead + blocks > CAP) {
            ctr_many_flush(k, m + first, i - first, long_, buf, fill, lead ? mask + first : NULL);
            first = i;
            fill = 0;
        }
        if (lead)
            memcpy(buf + 16 * fill, mask[i], 16);
        ctr_run(kind, m[i].ctr, direct, blocks, buf + 16 * (fill + lead));
        fill += lead + blocks;
        used = fill > used ? fill : used;
    }
    if (fill > 0) {
        ctr_many_flush(k, m + first, n - first, long_, buf, fill, lead ? mask + first : NULL);
    }
    wipe(buf, 16 * used);
}

void aeskit_ctr_many(const aeskit_key *k, enum aeskit_ctr kind, const aeskit_ctr_item *m,
                     size_t n, uint8_t (*mask)[16])
{
    if (mask != NULL)
        ctr_many_body(k, kind, m, n, mask);
    else
        ctr_many_body(k, kind, m, n, NULL);
}

void aeskit_generic_cbc_mac(const aeskit_key *k, uint8_t mac[16], const uint8_t *src,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        aeskit_xor16(mac, mac, src + 16 * i);
        k->impl->ecb_enc(k, mac, mac, 1);
    }
}

void aeskit_generic_cbc_x(const aeskit_key *k, size_t chains, uint8_t (*iv)[16],
                          uint8_t *const *dst, const uint8_t *const *src, size_t n)
{
    assert(chains >= 1 && chains <= AESKIT_CBC_X_MAX);
    uint8_t buf[AESKIT_CBC_X_MAX * 16];
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < chains; c++)
            aeskit_xor16(buf + 16 * c, iv[c], src[c] + 16 * i);
        k->impl->ecb_enc(k, buf, buf, chains);
        for (size_t c = 0; c < chains; c++) {
            memcpy(iv[c], buf + 16 * c, 16);
            if (dst != NULL)
                memcpy(dst[c] + 16 * i, buf + 16 * c, 16);
        }
    }
    wipe(buf, 16 * chains);
}

/* Each batch: the tweaks into buf, then buf = tweak ^ src, one ECB call,
 * and dst = buf ^ tweak again. The tweaks are walked twice rather than
 * kept in a second buffer: the walk is a shift and a masked xor. */
void aeskit_generic_xts(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                        const uint8_t *src, size_t n)
{
    aeskit_ecb_fn *ecb = enc ? k->impl->ecb_enc : k->impl->ecb_dec;
    uint8_t buf[BATCH * 16], t[16];
    while (n > 0) {
        const size_t b = n < BATCH ? n : BATCH;
        memcpy(t, tweak, 16);
        for (size_t i = 0; i < b; i++) {
            aeskit_xor16(buf + 16 * i, src + 16 * i, t);
            aeskit_gf128_double_le(t, t);
        }
        ecb(k, buf, buf, b);
        for (size_t i = 0; i < b; i++) {
            aeskit_xor16(dst + 16 * i, buf + 16 * i, tweak);
            aeskit_gf128_double_le(tweak, tweak);
        }
        src += 16 * b; dst += 16 * b; n -= b;
    }
    wipe(buf, sizeof buf);
    wipe(t, sizeof t);
}
