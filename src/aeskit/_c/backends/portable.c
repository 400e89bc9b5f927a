/*
 * portable.c: the backend every build has, on the bitsliced core of
 * aes_ct64.c.
 *
 * Why: it runs on any C11 compiler and CPU, in constant time, and is the
 * reference the other backends are tested against. Needs: nothing.
 * Lanes: four blocks per core call (see aes_ct64.c); ECB feeds it four at
 * a time and pads a tail of one to three blocks with zeros in a stack
 * buffer, so a short call costs one full batch and nothing outside the n
 * blocks is read or written. Chained and counter modes are the generic
 * helpers over these two ECB functions, and so are CBC-MAC and XTS.
 * Contracts: aeskit.h.
 */
#include <assert.h>
#include <string.h>

#include "aes_ct64.h"
#include "dispatch.h"
#include "ghash_ct64.h"
#include "modes/gcm.h"
#include "modes/generic.h"

static_assert(AESKIT_CT64_RK_WORDS(AESKIT_MAX_ROUNDS)
                  <= sizeof(((aeskit_key *)0)->rk) / sizeof(uint64_t),
              "bitsliced round keys must fit in aeskit_key.rk");

static void portable_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    const size_t cap = sizeof k->rk / sizeof k->rk[0];

    assert(len == 16 || len == 24 || len == 32);
    k->rounds = aeskit_ct64_expand_key(k->rk, key, len);
    /* unused words stay defined and carry nothing of an earlier key */
    for (size_t i = AESKIT_CT64_RK_WORDS(k->rounds); i < cap; i++)
        k->rk[i] = 0;
    k->used = (unsigned)(AESKIT_CT64_RK_WORDS(k->rounds) * sizeof k->rk[0]);
    k->impl = &aeskit_portable_impl;
}

typedef void ct64_batch_fn(const uint64_t *rk, unsigned rounds, uint8_t dst[64],
                           const uint8_t src[64]);

static inline void ecb_batches(ct64_batch_fn *batch, const aeskit_key *k,
                               uint8_t *dst, const uint8_t *src, size_t n)
{
    for (; n >= 4; n -= 4, src += 64, dst += 64)
        batch(k->rk, k->rounds, dst, src);
    if (n > 0) {
        uint8_t buf[64] = { 0 };

        memcpy(buf, src, 16 * n);
        batch(k->rk, k->rounds, buf, buf);
        memcpy(dst, buf, 16 * n);
        aeskit_secure_zero(buf, sizeof buf);
    }
}

static void portable_ecb_enc(const aeskit_key *k, uint8_t *dst, const uint8_t *src,
                             size_t n)
{
    ecb_batches(aeskit_ct64_encrypt4, k, dst, src, n);
}

static void portable_ecb_dec(const aeskit_key *k, uint8_t *dst, const uint8_t *src,
                             size_t n)
{
    ecb_batches(aeskit_ct64_decrypt4, k, dst, src, n);
}

const struct aeskit_impl aeskit_portable_impl = {
    .name = "portable",
    .cpu_needs = 0,
    .set_key = portable_set_key,
    .ecb_enc = portable_ecb_enc,
    .ecb_dec = portable_ecb_dec,
    .cbc_enc = aeskit_generic_cbc_enc,
    .cbc_dec = aeskit_generic_cbc_dec,
    .cfb_enc = aeskit_generic_cfb_enc,
    .cfb_dec = aeskit_generic_cfb_dec,
    .ofb = aeskit_generic_ofb,
    .ctr = aeskit_generic_ctr,
    .cbc_mac = aeskit_generic_cbc_mac,
    .xts = aeskit_generic_xts,
    .ghash_key = aeskit_ct64_ghash_key,
    .ghash = aeskit_ct64_ghash,
    .constants = (const aeskit_constant[]){
        {"batch_blocks", 4},
        {NULL, 0},
    },
    .cbc_x = aeskit_generic_cbc_x,
    .cbc_x_chains = 4,   /* one bitsliced batch */
    .ctr_many_long = AESKIT_CTR_MANY_LONG,
    .gcm_short = aeskit_gcm_short_generic,
};
