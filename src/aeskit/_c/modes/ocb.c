/*
 * ocb.c: OCB3 (RFC 7253) written once against the backend table.
 * Contracts: aeskit.h.
 *
 * Whole data blocks go first to the backend's fused ocb slot when it has
 * one; the blocks it leaves, AAD, the final partial block and the tag are
 * done here on ecb_enc / ecb_dec. The generic block path works in batches
 * of BATCH: one pass builds the offsets (Offset_i = Offset_{i-1} ^
 * L[ntz(i)]) and the whitened cipher input in a stack buffer, one ecb call
 * ciphers the batch, and a second pass walks the offsets again to unwhiten
 * into dst. The checksum is folded in whichever of the two passes sees the
 * plaintext (the first when encrypting, the second when decrypting), never
 * in a pass of its own.
 *
 * Block indices are public, so L is indexed by ntz(i); the nonce is public
 * too, but the shift by its bottom 6 bits that selects Offset_0 from
 * Stretch is still done branch-free on whole words.
 */
#include "block.h"   /* aeskit_blockwise_update */
#include "common.h"
#include "ocb.h"

#define BATCH 32

static_assert(sizeof(((aeskit_ocb_key *)0)->l) / 16 == 64,
              "one L per possible ntz of a 64-bit block index");

/* Two 64-bit halves of a block in memory order: xor-only arithmetic does
 * not care about endianness, and memcpy keeps unaligned access defined. */
typedef struct { uint64_t w[2]; } blk;

static inline blk blk_load(const uint8_t *p)
{
    blk b;
    memcpy(b.w, p, 16);
    return b;
}

static inline void blk_store(uint8_t *p, blk b) { memcpy(p, b.w, 16); }

static inline blk blk_xor(blk a, blk b)
{
    a.w[0] ^= b.w[0];
    a.w[1] ^= b.w[1];
    return a;
}

void aeskit_ocb_key_init(aeskit_ocb_key *ok, const aeskit_key *k)
{
    memset(ok->l_star, 0, 16);
    k->impl->ecb_enc(k, ok->l_star, ok->l_star, 1);
    aeskit_gf128_double_be(ok->l_dollar, ok->l_star);
    aeskit_gf128_double_be(ok->l[0], ok->l_dollar);
    for (unsigned i = 1; i < 64; i++)
        aeskit_gf128_double_be(ok->l[i], ok->l[i - 1]);
}

void aeskit_ocb_init(aeskit_ocb *o, const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                     const uint8_t *nonce, size_t nonce_len, unsigned taglen)
{
    assert(nonce_len >= 1 && nonce_len <= 15);
    assert(taglen >= 8 && taglen <= 16);
    memset(o, 0, sizeof *o);
    o->key = k;
    o->ok = ok;
    o->enc = (uint8_t)(enc != 0);
    o->taglen = taglen;

    /* Nonce = num2str(TAGLEN mod 128, 7) || zeros || 1 || N */
    uint8_t nb[16] = { 0 };
    memcpy(nb + 16 - nonce_len, nonce, nonce_len);
    nb[15 - nonce_len] |= 1;
    nb[0] |= (uint8_t)((taglen * 8 % 128) << 1);
    const unsigned bottom = nb[15] & 63;
    nb[15] &= 0xc0;

    /* Ktop = E(Nonce with bottom zeroed), built in st.offset, which it
     * becomes: Stretch = Ktop || (Ktop[1..64] ^ Ktop[9..72]), 192 bits in
     * s0 s1 s2; Offset_0 = Stretch[1+bottom..128+bottom]. */
    k->impl->ecb_enc(k, o->st.offset, nb, 1);
    const uint64_t s0 = aeskit_load_be64(o->st.offset);
    const uint64_t s1 = aeskit_load_be64(o->st.offset + 8);
    const uint64_t s2 = s0 ^ (s0 << 8 | s1 >> 56);
    /* x >> (64 - bottom) as two shifts, so bottom == 0 needs no branch */
    const unsigned rs = 63 - bottom;
    aeskit_store_be64(o->st.offset, s0 << bottom | (s1 >> 1) >> rs);
    aeskit_store_be64(o->st.offset + 8, s1 << bottom | (s2 >> 1) >> rs);
}

/* ---- whole blocks ---------------------------------------------------- */

/* n whole blocks of AAD into o->ad (Sum_i ^= E(A_i ^ Offset_i)). */
static void hash_blocks(aeskit_ocb *o, const uint8_t *a, size_t n)
{
    if (n == 0)   /* most messages: no AAD, or less than a block */
        return;
    const aeskit_key *k = o->key;
    const aeskit_ocb_key *ok = o->ok;
    uint8_t buf[BATCH * 16];
    blk off = blk_load(o->ad.offset), sum = blk_load(o->ad.checksum);
    uint64_t i = o->ad.blocks;
    const size_t used = 16 * (n < BATCH ? n : BATCH);

    while (n > 0) {
        size_t b = n < BATCH ? n : BATCH;
        for (size_t j = 0; j < b; j++) {
            off = blk_xor(off, blk_load(ok->l[aeskit_ntz64(++i)]));
            blk_store(buf + 16 * j, blk_xor(off, blk_load(a + 16 * j)));
        }
        k->impl->ecb_enc(k, buf, buf, b);
        for (size_t j = 0; j < b; j++)
            sum = blk_xor(sum, blk_load(buf + 16 * j));
        a += 16 * b; n -= b;
    }
    blk_store(o->ad.offset, off);
    blk_store(o->ad.checksum, sum);
    o->ad.blocks = i;
    aeskit_secure_zero(buf, used);
}

/* n whole data blocks on ecb_enc / ecb_dec, dst == src allowed: a batch is
 * read whole (first pass) before any of it is written (second pass). The
 * second pass walks the offsets again from the batch's first one rather
 * than keeping them in a second buffer that would need wiping too. */
static void generic_blocks(aeskit_ocb *o, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 0)   /* the fused slot took every block */
        return;
    const aeskit_key *k = o->key;
    const aeskit_ocb_key *ok = o->ok;
    aeskit_ecb_fn *ecb = o->enc ? k->impl->ecb_enc : k->impl->ecb_dec;
    uint8_t buf[BATCH * 16];
    blk off = blk_load(o->st.offset), sum = blk_load(o->st.checksum);
    uint64_t i = o->st.blocks;
    const size_t used = 16 * (n < BATCH ? n : BATCH);

    while (n > 0) {
        const size_t b = n < BATCH ? n : BATCH;
        const blk off0 = off;
        const uint64_t i0 = i;
        for (size_t j = 0; j < b; j++) {
            const blk in = blk_load(src + 16 * j);
            off = blk_xor(off, blk_load(ok->l[aeskit_ntz64(++i)]));
            blk_store(buf + 16 * j, blk_xor(in, off));
            if (o->enc)
                sum = blk_xor(sum, in);
        }
        ecb(k, buf, buf, b);
        off = off0;
        i = i0;
        for (size_t j = 0; j < b; j++) {
            off = blk_xor(off, blk_load(ok->l[aeskit_ntz64(++i)]));
            const blk out = blk_xor(blk_load(buf + 16 * j), off);
            blk_store(dst + 16 * j, out);
            if (!o->enc)
                sum = blk_xor(sum, out);
        }
        src += 16 * b; dst += 16 * b; n -= b;
    }
    blk_store(o->st.offset, off);
    blk_store(o->st.checksum, sum);
    o->st.blocks = i;
    aeskit_secure_zero(buf, used);
}

/* n whole data blocks: the fused slot does what it does, the rest here. */
static void data_blocks(void *ctx, uint8_t *dst, const uint8_t *src, size_t n)
{
    aeskit_ocb *o = ctx;
    const aeskit_key *k = o->key;
    size_t done = 0;
    if (k->impl->ocb != NULL && n > 0) {
        done = k->impl->ocb->crypt(k, o->ok, o->enc, &o->st, dst, src, n);
        assert(done <= n);
    }
    generic_blocks(o, dst + 16 * done, src + 16 * done, n - done);
}

/* ---- streaming -------------------------------------------------------- */

void aeskit_ocb_aad(aeskit_ocb *o, const uint8_t *aad, size_t len)
{
    if (o->apos > 0) {
        size_t take = 16 - o->apos;
        if (take > len)
            take = len;
        memcpy(o->apart + o->apos, aad, take);
        o->apos += (unsigned)take;
        aad += take; len -= take;
        if (o->apos < 16)
            return;
        hash_blocks(o, o->apart, 1);
        o->apos = 0;
    }
    /* A final whole block may be the last one of the AAD: that is fine,
     * HASH treats a last whole block like any other. */
    size_t n = len / 16;
    hash_blocks(o, aad, n);
    memcpy(o->apart, aad + 16 * n, len % 16);
    o->apos = (unsigned)(len % 16);
}

size_t aeskit_ocb_update_len(const aeskit_ocb *o, size_t len)
{
    return (o->pos + len) / 16 * 16;
}

size_t aeskit_ocb_update(aeskit_ocb *o, uint8_t *dst, const uint8_t *src, size_t len)
{
    return aeskit_blockwise_update(o->part, &o->pos, data_blocks, o, dst, src, len);
}

/* Scratch blocks live in o (apart once the AAD is closed, part once the
 * data is), so that the one wipe of o at the end covers them. */
size_t aeskit_ocb_finish(aeskit_ocb *o, uint8_t *dst, uint8_t tag[16])
{
    const aeskit_key *k = o->key;
    const aeskit_ocb_key *ok = o->ok;
    const size_t pos = o->pos;

    /* HASH: a final partial AAD block is (A_* || 1 || 0*) ^ Offset_*. */
    if (o->apos > 0) {
        memset(o->apart + o->apos, 0, 16 - o->apos);
        o->apart[o->apos] = 0x80;
        aeskit_xor16(o->ad.offset, o->ad.offset, ok->l_star);
        aeskit_xor16(o->apart, o->apart, o->ad.offset);
        k->impl->ecb_enc(k, o->apart, o->apart, 1);
        aeskit_xor16(o->ad.checksum, o->ad.checksum, o->apart);
    }

    /* P_* / C_*: xor with Pad = E(Offset_*); the checksum takes the
     * plaintext as P_* || 1 || 0*. */
    if (pos > 0) {
        uint8_t *pad = o->apart;
        aeskit_xor16(o->st.offset, o->st.offset, ok->l_star);
        k->impl->ecb_enc(k, pad, o->st.offset, 1);
        aeskit_xor_bytes(dst, o->part, pad, pos);
        if (!o->enc)
            memcpy(o->part, dst, pos);
        memset(o->part + pos, 0, 16 - pos);
        o->part[pos] = 0x80;
        aeskit_xor16(o->st.checksum, o->st.checksum, o->part);
    }

    /* Tag = E(Checksum ^ Offset ^ L_$) ^ HASH(A) */
    aeskit_xor16(o->st.checksum, o->st.checksum, o->st.offset);
    aeskit_xor16(o->st.checksum, o->st.checksum, ok->l_dollar);
    k->impl->ecb_enc(k, tag, o->st.checksum, 1);
    aeskit_xor16(tag, tag, o->ad.checksum);
    aeskit_secure_zero(o, sizeof *o);
    return pos;
}

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static_assert(_Alignof(aeskit_ocb3_key) <= 8 && _Alignof(aeskit_ocb) <= 8,
              "the glue keeps the states 8-byte aligned");

static void ocb3_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                          size_t key_len, unsigned tag_len)
{
    aeskit_ocb3_key *o = ks;
    impl->set_key(&o->key, key, key_len);
    aeskit_ocb_key_init(&o->ok, &o->key);
    o->taglen = tag_len;
}

static void ocb3_stream_init(void *st, const void *ks, int enc, const uint8_t *nonce,
                             size_t nonce_len)
{
    const aeskit_ocb3_key *o = ks;
    aeskit_ocb_init(st, &o->key, &o->ok, enc, nonce, nonce_len, o->taglen);
}

static void ocb3_stream_aad(void *st, const uint8_t *aad, size_t len)
{
    aeskit_ocb_aad(st, aad, len);
}

static size_t ocb3_stream_update_len(const void *st, size_t len)
{
    return aeskit_ocb_update_len(st, len);
}

static size_t ocb3_stream_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    return aeskit_ocb_update(st, dst, src, len);
}

static size_t ocb3_stream_finish(void *st, uint8_t *dst, uint8_t tag[16])
{
    return aeskit_ocb_finish(st, dst, tag);
}

/* One message: a stream on the stack, which finish wipes. */
static void ocb3_oneshot(const void *ks, int enc, const aeskit_aead_msg *m, uint8_t *dst,
                         const uint8_t *src, size_t len, uint8_t tag[16])
{
    aeskit_ocb o;
    assert(m->n_ad <= 1);
    ocb3_stream_init(&o, ks, enc, m->nonce, m->nonce_len);
    if (m->n_ad)
        aeskit_ocb_aad(&o, m->ad->p, m->ad->len);
    const size_t done = aeskit_ocb_update(&o, dst, src, len);
    aeskit_ocb_finish(&o, dst + done, tag);
}

AESKIT_AEAD_SEAL_OPEN(ocb3, ocb3_oneshot)

const struct aeskit_aead aeskit_ocb3_aead = {
    .name = "OCB3",
    .type_name = "aeskit.AESOCB3",
    .doc = "AESOCB3(key, *, tag_length=16, backend='auto')\n--\n\nAES-OCB3 (RFC 7253). Nonces of "
           "1 to 15 bytes; tags of 8 to 16.",
    .facts = {.aliases = "OCB", .floor_enc = "parallel", .floor_dec = "parallel"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 1,
    .tag_lengths = AESKIT_TAGS(8, 16),
    .nonce_min = 1,
    .nonce_max = 15,
    .nonce_note = "",
    .max_ad = 1,
    .max_aad = UINT64_MAX,
    .max_data = UINT64_MAX,
    .key_state = sizeof(aeskit_ocb3_key),
    .key_init = ocb3_key_init,
    .seal = ocb3_seal,
    .open = ocb3_open,
    .stream_state = sizeof(aeskit_ocb),
    .init = ocb3_stream_init,
    .aad = ocb3_stream_aad,
    .update_len = ocb3_stream_update_len,
    .update = ocb3_stream_update,
    .finish = ocb3_stream_finish,
    .constants = (const aeskit_constant[]){
        {"batch_blocks", BATCH},
        {NULL, 0},
    },
};
