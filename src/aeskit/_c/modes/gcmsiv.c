/*
 * gcmsiv.c: AES-GCM-SIV (RFC 8452) written once against the backend table:
 * the per-nonce keys from ecb_enc, POLYVAL by way of the ghash slot, CTR
 * with the LE32 counter format of the ctr slot.
 *
 * Per message (RFC 8452 4): the key-generating key encrypts LE32(i) ||
 * nonce for i = 0..3 (0..4 for a 192-bit key, 0..5 for a 256-bit one),
 * whose first halves make the message's POLYVAL key (i = 0, 1) and AES key
 * (the rest: as long as the key-generating key). RFC 8452 defines 128 and
 * 256 bits; 192 is the same construction, as OpenSSL 3.2+ and pyca's
 * AESGCMSIV have it (pyca's aes-192-gcm-siv.txt vectors). Then
 *   S   = POLYVAL(H, AAD padded, plaintext padded, LE64(aad bits) ||
 *         LE64(data bits)), its first 12 bytes XOR the nonce, bit 127 cleared
 *   tag = E(K_enc, S)
 *   C   = CTR from tag with bit 127 set, a 32-bit little-endian counter in
 *         bytes 0..3 that wraps (the ctr slot's AESKIT_CTR_LE32)
 * Sealing hashes the plaintext before the CTR pass, by definition; opening
 * runs CTR first and hashes the plaintext it made, chunk by chunk while
 * the chunk is in L1 (dst == src works: each chunk's plaintext is in dst
 * when it is hashed).
 *
 * POLYVAL from GHASH (RFC 8452 Appendix A): POLYVAL(H, X_1..X_n) =
 * rev(GHASH(mulX_GHASH(rev(H)), rev(X_1), ..., rev(X_n))) with rev the
 * byte reversal of a block. The blocks are reversed into a small stack
 * buffer on their way to the slot, and the accumulator is kept in GHASH's
 * order until the end, so every backend's GHASH kernel serves POLYVAL.
 *
 * The per-message hash key is built for what the message needs
 * (ghash_key's max_blocks): a short message does not pay for a wide
 * backend's 128 powers; a long one gets POLY_BLOCKS' worth, which serves a
 * polyval call of any length (the backend reduces every POLY_BLOCKS
 * blocks or more within it); without a polyval slot, ghash takes runs of
 * that many reversed blocks.
 */
#include "gcmsiv.h"
#include "common.h"
#include "generic.h"   /* aeskit_ctr_add */

/* The most the per-message key is built for, which then serves calls of
 * any length (AESKIT_GHASH_MSG): the polyval slot hashes a long message in
 * one call. Blocks per ghash call where there is no polyval slot: the
 * reversal buffer's size (512 bytes of stack). */
#define POLY_BLOCKS AESKIT_GHASH_MSG
/* Blocks per CTR-then-POLYVAL round when opening: 4 KiB, in L1 between. */
#define CHUNK_BLOCKS 256

static_assert(CHUNK_BLOCKS % POLY_BLOCKS == 0, "an opening chunk is whole POLYVAL runs");

/* A message's keys and POLYVAL state. */
typedef struct siv_msg {
    aeskit_key ek;          /* the message's AES key */
    aeskit_ghash_key hk;    /* mulX_GHASH(rev(H)) for the ghash slot */
    uint8_t acc[16];        /* GHASH order: rev of POLYVAL's */
    size_t rev_used;        /* bytes of rev written so far */
    uint8_t rev[16 * POLY_BLOCKS];
} siv_msg;

/* Wipes what m holds, and only that: the whole struct is 4.7 KiB, which
 * took longer to clear than a short message takes to seal. */
static void wipe(siv_msg *m)
{
    aeskit_secure_zero(m->ek.rk, m->ek.used);
    aeskit_secure_zero((uint8_t *)m->hk.w + m->hk.from, m->hk.used);
    aeskit_secure_zero(m->acc, sizeof m->acc);
    aeskit_secure_zero(m->rev, m->rev_used);
}

/* dst = src with its bytes in reverse order; dst may be src. */
static void rev16(uint8_t dst[16], const uint8_t src[16])
{
    const uint64_t lo = aeskit_load_le64(src), hi = aeskit_load_le64(src + 8);
    aeskit_store_be64(dst, hi);
    aeskit_store_be64(dst + 8, lo);
}

/* x * y's GHASH doubling: the block as GCM's reflected polynomial times x,
 * i.e. a right shift of the big-endian 128-bit value, folding 0xE1 into
 * the top byte when a bit falls off. No branch: H is a secret. */
static void mulx_ghash(uint8_t b[16])
{
    uint64_t hi = aeskit_load_be64(b), lo = aeskit_load_be64(b + 8);
    const uint64_t fold = (uint64_t)0 - (lo & 1);
    lo = (lo >> 1) | (hi << 63);
    hi = (hi >> 1) ^ (fold & UINT64_C(0xE100000000000000));
    aeskit_store_be64(b, hi);
    aeskit_store_be64(b + 8, lo);
}

/* Keys for nonce (RFC 8452 4): the AES key expanded into m->ek (with the
 * key-generating key's backend) and the hash key built for blocks. */
static void derive(siv_msg *m, const aeskit_key *kgk, const uint8_t nonce[12], size_t blocks)
{
    const unsigned n = kgk->rounds == 14 ? 6 : kgk->rounds == 12 ? 5 : 4;   /* 2 + key / 8 */
    uint8_t b[6][16], key[32], h[16];
    for (unsigned i = 0; i < n; i++) {
        aeskit_store_le32(b[i], i);
        memcpy(b[i] + 4, nonce, 12);
    }
    kgk->impl->ecb_enc(kgk, b[0], b[0], n);
    memcpy(h, b[0], 8);
    memcpy(h + 8, b[1], 8);
    for (unsigned i = 2; i < n; i++)
        memcpy(key + 8 * (i - 2), b[i], 8);
    aeskit_set_enc_key(kgk->impl, &m->ek, key, 8 * (n - 2));
    rev16(h, h);
    mulx_ghash(h);
    kgk->impl->ghash_key(&m->hk, h, blocks < POLY_BLOCKS ? (blocks > 0 ? blocks : 1)
                                                         : POLY_BLOCKS);
    assert(m->hk.from + m->hk.used <= sizeof m->hk.w);
    memset(m->acc, 0, 16);
    m->rev_used = 0;
    aeskit_secure_zero(b, sizeof b);
    aeskit_secure_zero(key, sizeof key);
    aeskit_secure_zero(h, sizeof h);
}

/* POLYVAL over len bytes, the last block zero-padded: by the backend's
 * polyval slot where it has one, else by ghash on reversed blocks. */
static void polyval(siv_msg *m, const uint8_t *p, size_t len)
{
    const struct aeskit_impl *impl = m->ek.impl;
    if (impl->polyval != NULL) {   /* one call: the key serves any length (POLY_BLOCKS) */
        impl->polyval(&m->hk, m->acc, p, len / 16);
        if (len % 16) {
            uint8_t last[16] = {0};
            memcpy(last, p + len / 16 * 16, len % 16);
            impl->polyval(&m->hk, m->acc, last, 1);
            aeskit_secure_zero(last, sizeof last);
        }
        return;
    }
    while (len > 0) {
        const size_t take = len < sizeof m->rev ? len : sizeof m->rev;
        const size_t whole = take / 16, rest = take % 16;
        for (size_t i = 0; i < whole; i++)
            rev16(m->rev + 16 * i, p + 16 * i);
        if (rest) {
            uint8_t last[16] = {0};
            memcpy(last, p + 16 * whole, rest);
            rev16(m->rev + 16 * whole, last);
            aeskit_secure_zero(last, sizeof last);
        }
        const size_t blocks = whole + (rest != 0);
        if (16 * blocks > m->rev_used)
            m->rev_used = 16 * blocks;
        impl->ghash(&m->hk, m->acc, m->rev, blocks);
        p += take;
        len -= take;
    }
}

/* The tag from the hash of everything (the lengths block last), the nonce
 * and the message's key. */
static void make_tag(siv_msg *m, const uint8_t nonce[12], uint64_t aad_len, uint64_t len,
                     uint8_t tag[16])
{
    uint8_t lens[16], s[16];
    aeskit_store_le64(lens, aad_len * 8);
    aeskit_store_le64(lens + 8, len * 8);
    polyval(m, lens, 16);
    rev16(s, m->acc);   /* POLYVAL's S */
    for (unsigned i = 0; i < 12; i++)
        s[i] ^= nonce[i];
    s[15] &= 0x7f;
    m->ek.impl->ecb_enc(&m->ek, tag, s, 1);
    aeskit_secure_zero(s, sizeof s);
}

/* CTR from the tag over len bytes (a partial last block included). */
static void ctr(siv_msg *m, uint8_t c[16], uint8_t *dst, const uint8_t *src, size_t len)
{
    const aeskit_key *k = &m->ek;
    const size_t n = len / 16, rest = len % 16;
    k->impl->ctr(k, AESKIT_CTR_LE32, c, dst, src, n);
    if (rest) {
        uint8_t stream[16];
        k->impl->ecb_enc(k, stream, c, 1);
        aeskit_xor_bytes(dst + 16 * n, src + 16 * n, stream, rest);
        aeskit_ctr_add(AESKIT_CTR_LE32, c, 1);
        aeskit_secure_zero(stream, sizeof stream);
    }
}

static void counter_of(uint8_t c[16], const uint8_t tag[16])
{
    memcpy(c, tag, 16);
    c[15] |= 0x80;
}

static size_t blocks_of(size_t aad_len, size_t len)
{
    return (aad_len + 15) / 16 + (len + 15) / 16 + 1;
}

void aeskit_gcmsiv_seal(const aeskit_key *kgk, const uint8_t nonce[12], const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        uint8_t tag[16])
{
    const struct aeskit_gcmsiv_impl *fused = kgk->impl->gcmsiv;
    if (fused != NULL && fused->short_msg(kgk, 1, nonce, aad, aad_len, dst, src, len, NULL, tag))
        return;
    siv_msg m;
    uint8_t c[16];
    derive(&m, kgk, nonce, blocks_of(aad_len, len));
    polyval(&m, aad, aad_len);
    polyval(&m, src, len);
    make_tag(&m, nonce, aad_len, len, tag);
    counter_of(c, tag);
    ctr(&m, c, dst, src, len);
    wipe(&m);
}

void aeskit_gcmsiv_open(const aeskit_key *kgk, const uint8_t nonce[12], const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        const uint8_t tag[16], uint8_t expect[16])
{
    const struct aeskit_gcmsiv_impl *fused = kgk->impl->gcmsiv;
    if (fused != NULL && fused->short_msg(kgk, 0, nonce, aad, aad_len, dst, src, len, tag, expect))
        return;
    siv_msg m;
    uint8_t c[16];
    derive(&m, kgk, nonce, blocks_of(aad_len, len));
    /* the nonce and AAD are read before dst is written (they may overlap) */
    uint8_t n12[12];
    memcpy(n12, nonce, 12);
    polyval(&m, aad, aad_len);
    counter_of(c, tag);
    const struct aeskit_impl *impl = m.ek.impl;
    size_t off = 0;
    if (fused != NULL && fused->open != NULL && impl->polyval != NULL)   /* whole batches */
        off = 16 * fused->open(&m.ek, &m.hk, c, m.acc, dst, src, len / 16);
    for (; off < len; off += 16 * CHUNK_BLOCKS) {   /* the rest, or all, split */
        const size_t b = len - off < 16 * CHUNK_BLOCKS ? len - off : 16 * CHUNK_BLOCKS;
        ctr(&m, c, dst + off, src + off, b);
        polyval(&m, dst + off, b);
    }
    make_tag(&m, n12, aad_len, len, expect);
    wipe(&m);
}

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static_assert(_Alignof(aeskit_key) <= 8, "the glue keeps the key state 8-byte aligned");

static void gcmsiv_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                            size_t key_len, unsigned tag_len)
{
    (void)tag_len;   /* always 16 */
    impl->set_key(ks, key, key_len);
}

static const uint8_t *ad_of(const aeskit_aead_msg *m, size_t *len)
{
    assert(m->n_ad <= 1 && m->nonce_len == 12);
    *len = m->n_ad ? m->ad->len : 0;
    return m->n_ad ? m->ad->p : NULL;
}

static void gcmsiv_seal(const void *ks, const aeskit_aead_msg *m, uint8_t *dst,
                        const uint8_t *src, size_t len, uint8_t tag[16])
{
    size_t aad_len;
    const uint8_t *aad = ad_of(m, &aad_len);
    aeskit_gcmsiv_seal(ks, m->nonce, aad, aad_len, dst, src, len, tag);
}

static void gcmsiv_open(const void *ks, const aeskit_aead_msg *m, uint8_t *dst,
                        const uint8_t *src, size_t len, const uint8_t *tag, uint8_t expect[16])
{
    size_t aad_len;
    const uint8_t *aad = ad_of(m, &aad_len);
    aeskit_gcmsiv_open(ks, m->nonce, aad, aad_len, dst, src, len, tag, expect);
}

const struct aeskit_aead aeskit_gcmsiv_aead = {
    .name = "GCM-SIV",
    .type_name = "aeskit.AESGCMSIV",
    .doc = "AESGCMSIV(key, *, backend='auto')\n--\n\nAES-GCM-SIV (RFC 8452), nonce-misuse "
           "resistant: a repeated nonce shows only that two messages were equal. 16-, 24- or "
           "32-byte keys, 12-byte nonces, 16-byte tags; data and associated data of at most "
           "2**36 bytes each. Two passes over the data, so no streaming contexts.",
    .facts = {.floor_enc = "clmul then aes", .floor_dec = "aes+clmul"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAG(16),
    .nonce_min = 12,
    .nonce_max = 12,
    .nonce_note = "",
    .max_ad = 1,
    .max_aad = AESKIT_GCMSIV_MAX,
    .max_data = AESKIT_GCMSIV_MAX,
    .key_state = sizeof(aeskit_key),
    .key_init = gcmsiv_key_init,
    .seal = gcmsiv_seal,
    .open = gcmsiv_open,
    .constants = (const aeskit_constant[]){
        {"poly_blocks", POLY_BLOCKS},
        {"chunk_blocks", CHUNK_BLOCKS},
        {NULL, 0},
    },
};
