/*
 * xaes.c: XAES-256-GCM (C2SP XAES-256-GCM.md v1.0.0), AES-256-GCM with a
 * 24-byte nonce, over modes/gcm.c.
 *
 * Each message derives its own AES-256 key Kx from the key K and the
 * nonce's first 12 bytes, with SP 800-108r1's counter KDF over CMAC-AES-256,
 * whose input is one whole block:
 *   L  = E(K, 0^128), K1 = L * x (CMAC's first subkey)   once per key
 *   Kx = E(K, 00 01 'X' 00 || N[0:12] ^ K1) || E(K, 00 02 'X' 00 || N[0:12] ^ K1)
 * and runs AES-256-GCM under Kx with the nonce's last 12 bytes.
 *
 * Per message that is two AES calls under K, Kx's expansion, H = E(Kx, 0),
 * E(Kx, J0) (the tag mask, made beside H and handed to GCM) and the powers
 * of H the message reads: a key made for this message alone
 * (aeskit_gcm_hash_blocks), so a short one does not pay for a wide
 * backend's 128 powers, and it then takes GCM's short path; from the
 * backend's whole_key_blocks on (struct aeskit_gcm_impl: vaes_avx2's long
 * messages) the whole key, whose fused kernel reduces less often. Kx, its
 * schedule and the powers are wiped after every call; a streaming context,
 * whose length is not known in advance, holds a key for any length, and
 * the glue wipes the context when it ends.
 */
#include "common.h"
#include "gcm.h"
#include "generic.h"
#include "xaes.h"

/* What an XAES256GCM object keeps: K expanded, and K1. */
typedef struct xaes_key {
    aeskit_key key;
    uint8_t k1[16];
} xaes_key;

/* One message's GCM key: Kx expanded and its GHASH key. */
typedef struct xaes_msg {
    aeskit_key kx;
    aeskit_ghash_key hk;
} xaes_msg;

/* A streaming message: its key and the GCM state that points at it. */
typedef struct xaes_stream {
    xaes_msg m;
    aeskit_gcm g;
} xaes_stream;

static_assert(_Alignof(xaes_key) <= 8 && _Alignof(xaes_stream) <= 8,
              "the glue keeps the states 8-byte aligned");

static void xaes_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                          size_t key_len, unsigned tag_len)
{
    xaes_key *x = ks;
    (void)tag_len;   /* always 16 */
    uint8_t l[16] = {0};
    impl->set_key(&x->key, key, key_len);
    impl->ecb_enc(&x->key, l, l, 1);
    aeskit_gf128_double_be(x->k1, l);
    aeskit_secure_zero(l, sizeof l);
}

/* What the xaes kernel (modes/xaes.h) does, through the table's slots:
 * Kx expanded into kx, h = E(Kx, 0) and ek_j0 = E(Kx, J0), in one call. */
static void key_by_slots(const xaes_key *x, const uint8_t nonce[24], aeskit_key *kx,
                         uint8_t h[16], uint8_t ek_j0[16])
{
    const struct aeskit_impl *impl = x->key.impl;
    uint8_t b[32];
    for (unsigned i = 0; i < 2; i++) {
        b[16 * i] = 0x00, b[16 * i + 1] = (uint8_t)(i + 1), b[16 * i + 2] = 'X';
        b[16 * i + 3] = 0x00;
        memcpy(b + 16 * i + 4, nonce, 12);
        aeskit_xor16(b + 16 * i, b + 16 * i, x->k1);
    }
    impl->ecb_enc(&x->key, b, b, 2);
    aeskit_set_enc_key(impl, kx, b, 32);
    /* 0^128 and J0 = nonce[12..24] || 0^31 || 1 */
    memset(b, 0, 16);
    memcpy(b + 16, nonce + 12, 12);
    memset(b + 28, 0, 3);
    b[31] = 1;
    impl->ecb_enc(kx, b, b, 2);
    memcpy(h, b, 16);
    memcpy(ek_j0, b + 16, 16);
    aeskit_secure_zero(b, sizeof b);
}

/* m's keys for nonce, the GHASH key built for max_blocks, and E(Kx, J0)
 * into ek_j0 (a secret: the caller wipes it). */
static void derive(xaes_msg *m, const xaes_key *x, const uint8_t nonce[24], size_t max_blocks,
                   uint8_t ek_j0[16])
{
    const struct aeskit_impl *impl = x->key.impl;
    uint8_t h[16];
    if (impl->xaes != NULL)
        impl->xaes->key(&x->key, x->k1, nonce, &m->kx, h, ek_j0);
    else
        key_by_slots(x, nonce, &m->kx, h, ek_j0);
    impl->ghash_key(&m->hk, h, max_blocks);
    assert(m->hk.from + m->hk.used <= sizeof m->hk.w);
    aeskit_secure_zero(h, sizeof h);
}

/* The blocks a one-shot message's GHASH key is built for: GCM's count,
 * or the whole key from the length where the backend's fused kernel gains
 * more from it than the extra powers cost (struct aeskit_gcm_impl). */
static size_t hash_blocks(const struct aeskit_impl *impl, size_t aad_len, size_t len)
{
    const struct aeskit_gcm_impl *gcm = impl->gcm;
    if (gcm != NULL && gcm->whole_key_blocks != 0 && len / 16 >= gcm->whole_key_blocks)
        return AESKIT_GHASH_ANY;
    return aeskit_gcm_hash_blocks(aad_len, len);
}

/* Wipes what derive wrote, and only that: the struct is 4 KiB, which
 * would cost more than a short message's GCM. */
static void wipe(xaes_msg *m)
{
    aeskit_secure_zero(m->kx.rk, m->kx.used);
    aeskit_secure_zero((uint8_t *)m->hk.w + m->hk.from, m->hk.used);
}

static void xaes_crypt(const xaes_key *x, int enc, const aeskit_aead_msg *m, uint8_t *dst,
                       const uint8_t *src, size_t len, uint8_t tag[16])
{
    assert(m->n_ad <= 1 && m->nonce_len == 24);
    const uint8_t *aad = m->n_ad ? m->ad->p : NULL;
    const size_t aad_len = m->n_ad ? m->ad->len : 0;
    const struct aeskit_xaes_impl *fused = x->key.impl->xaes;
    if (fused != NULL &&
        fused->short_msg(&x->key, x->k1, m->nonce, enc, aad, aad_len, dst, src, len, tag))
        return;
    xaes_msg k;
    uint8_t n12[12], ek_j0[16];   /* the nonce may overlap dst */
    memcpy(n12, m->nonce + 12, 12);
    derive(&k, x, m->nonce, hash_blocks(x->key.impl, aad_len, len), ek_j0);
    aeskit_gcm_oneshot(&k.kx, &k.hk, enc, n12, 12, aad, aad_len, dst, src, len, tag, ek_j0);
    wipe(&k);
    aeskit_secure_zero(ek_j0, sizeof ek_j0);
}

AESKIT_AEAD_SEAL_OPEN(xaes, xaes_crypt)

static void xaes_stream_init(void *st, const void *ks, int enc, const uint8_t *nonce,
                             size_t nonce_len)
{
    xaes_stream *s = st;
    (void)nonce_len;   /* 24: the glue checked it */
    assert(nonce_len == 24);
    uint8_t ek_j0[16];
    derive(&s->m, ks, nonce, AESKIT_GHASH_ANY, ek_j0);
    aeskit_gcm_init(&s->g, &s->m.kx, &s->m.hk, enc, nonce + 12, 12, ek_j0);
    aeskit_secure_zero(ek_j0, sizeof ek_j0);
}

static void xaes_stream_aad(void *st, const uint8_t *p, size_t len)
{
    aeskit_gcm_aad(&((xaes_stream *)st)->g, p, len);
}

static size_t xaes_stream_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    aeskit_gcm_update(&((xaes_stream *)st)->g, dst, src, len);
    return len;
}

static size_t xaes_stream_finish(void *st, uint8_t *dst, uint8_t tag[16])
{
    (void)dst;
    aeskit_gcm_tag(&((xaes_stream *)st)->g, tag);
    return 0;
}

const struct aeskit_aead aeskit_xaes_aead = {
    .name = "XAES-256-GCM",
    .type_name = "aeskit.XAES256GCM",
    .doc = "XAES256GCM(key, *, backend='auto')\n--\n\nXAES-256-GCM (C2SP XAES-256-GCM v1.0.0): "
           "AES-256-GCM under a key derived per message from the key and the first half of "
           "a 24-byte nonce, so random nonces are safe for about 2**80 messages under one "
           "key. 32-byte keys, 24-byte nonces, 16-byte tags; GCM's limits (data of at most "
           "2**36 - 32 bytes) per message.",
    .facts = {.floor_enc = "aes+clmul", .floor_dec = "aes+clmul"},
    .key_sizes = AESKIT_KEY256,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAG(16),
    .nonce_min = 24,
    .nonce_max = 24,
    .nonce_note = " (XAES-256-GCM's extended nonce: random ones are safe)",
    .max_ad = 1,
    .max_aad = AESKIT_GCM_MAX_AAD,
    .max_data = AESKIT_GCM_MAX_DATA,
    .key_state = sizeof(xaes_key),
    .key_init = xaes_key_init,
    .seal = xaes_seal,
    .open = xaes_open,
    .stream_state = sizeof(xaes_stream),
    .init = xaes_stream_init,
    .aad = xaes_stream_aad,
    .update = xaes_stream_update,
    .finish = xaes_stream_finish,
};
