/*
 * xts.c: XTS-AES (IEEE 1619-2018, SP 800-38E) over the backend's xts
 * slot, which does the whole blocks; this file adds what the slot leaves
 * to the mode: the tweak key's encryption of the tweak (once per data
 * unit), ciphertext stealing for a last partial block, the bytes a stream
 * holds back for it, and data units laid end to end as sectors.
 *
 * keys[0] is the data key, keys[1] the tweak key (IEEE 1619's Key1 and
 * Key2, concatenated in that order in the key argument).
 *
 * Ciphertext stealing (IEEE 1619 5.3.2, 5.4.2), with m-1 whole blocks
 * done, P_(m-1) a whole block and P_m b < 16 bytes:
 *   encrypt  CC = XTS(P_(m-1), T_(m-1)); C_m = CC[0..b);
 *            C_(m-1) = XTS(P_m || CC[b..16), T_m)
 *   decrypt  PP = XTS^-1(C_(m-1), T_m); P_m = PP[0..b);
 *            P_(m-1) = XTS^-1(C_m || PP[b..16), T_(m-1))
 * so decryption uses the last two tweaks in swapped order. A stream
 * therefore never lets out a block until 16 more bytes have come: it
 * might be P_(m-1). It holds 16..31 bytes once any have come.
 */
#include "block.h"
#include "common.h"

/* Blocks per bounce chunk when a stream runs in place with bytes held. */
#define BOUNCE 64

static_assert(AESKIT_FINISH_MAX >= 31, "finish must take what XTS holds back");

/* A data unit as a stream. */
struct xts_state {
    const aeskit_key *key;  /* the data key */
    uint8_t tweak[16];      /* the current tweak (encrypted) */
    uint8_t held[32];       /* the pos bytes held back, 16 to 31 once any came */
    unsigned pos;
    uint8_t enc;            /* 1 encrypt, 0 decrypt */
};

AESKIT_CIPHER_STATE(struct xts_state);

/* keys: the data key and the tweak key; tweak: 16 bytes, not encrypted. */
static void xts_init(void *st, const aeskit_key *keys, int enc, const uint8_t *tweak)
{
    struct xts_state *s = st;
    assert(tweak != NULL);
    s->key = &keys[0];
    s->pos = 0;
    s->enc = (uint8_t)(enc != 0);
    keys[1].impl->ecb_enc(&keys[1], s->tweak, tweak, 1);
}

/* Blocks an update may let out when it brings the held bytes to total. */
static size_t blocks_out(size_t total)
{
    return total >= 16 ? total / 16 - 1 : 0;
}

static size_t xts_out_len(const void *st, size_t len)
{
    const struct xts_state *s = st;
    return 16 * blocks_out(s->pos + len);
}

static void run(struct xts_state *s, uint8_t *dst, const uint8_t *src, size_t n)
{
    const aeskit_key *k = s->key;
    k->impl->xts(k, s->enc, s->tweak, dst, src, n);
}

/* Lets out every whole block but the last 16 to 31 bytes (see above). */
static size_t xts_update(void *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    struct xts_state *s = st;
    const size_t p = s->pos, nblocks = blocks_out(p + len), out = 16 * nblocks;
    if (nblocks == 0) {
        memcpy(s->held + p, src, len);
        s->pos += (unsigned)len;
        return 0;
    }
    if (p == 0) {
        run(s, dst, src, nblocks);
        memcpy(s->held, src + out, len - out);
        s->pos = (unsigned)(len - out);
        return out;
    }
    /* The held bytes lead the output, which so lags the input by p bytes
     * (up to 31, more than a block): the blocks go through a bounce
     * buffer, and each chunk is written only once tmp has also read the p
     * input bytes after it, so that no write reaches unread input
     * (dst == src is allowed). tmp keeps what it read ahead. */
    uint8_t tmp[BOUNCE * 16 + 32];
    const uint8_t *in = src, *end = src + len;
    size_t left = nblocks, have = p;
    memcpy(tmp, s->held, p);
    while (left > 0) {
        const size_t b = left < BOUNCE ? left : BOUNCE;
        size_t fill = 16 * b + p - have;
        if (fill > (size_t)(end - in))
            fill = (size_t)(end - in);
        memcpy(tmp + have, in, fill);
        in += fill;
        have += fill;
        assert(have >= 16 * b);
        run(s, dst, tmp, b);
        have -= 16 * b;
        memmove(tmp, tmp + 16 * b, have);
        dst += 16 * b;
        left -= b;
    }
    memcpy(s->held, tmp, have);
    aeskit_secure_zero(tmp, sizeof tmp);
    memcpy(s->held + have, in, (size_t)(end - in));
    s->pos = (unsigned)(have + (size_t)(end - in));
    assert(s->pos >= 16 && s->pos < 32);
    return out;
}

/* Ciphertext stealing over the last 16 + b bytes (0 < b < 16) of a data
 * unit at src, whose first whole block is under tweak T_(m-1); tweak ends
 * wherever the slot leaves it. src is read before dst is written, so they
 * may be the same. */
static void steal(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                  const uint8_t *src, size_t b)
{
    uint8_t x[16], last[16];
    if (enc) {
        k->impl->xts(k, 1, tweak, x, src, 1);       /* CC, under T_(m-1); tweak is T_m */
        memcpy(last, src + 16, b);
        memcpy(last + b, x + b, 16 - b);
        memcpy(dst + 16, x, b);                     /* C_m */
        k->impl->xts(k, 1, tweak, dst, last, 1);    /* C_(m-1) */
    } else {
        uint8_t t_prev[16];
        memcpy(t_prev, tweak, 16);
        aeskit_gf128_double_le(tweak, tweak);       /* T_m first */
        k->impl->xts(k, 0, tweak, x, src, 1);       /* PP */
        memcpy(last, src + 16, b);
        memcpy(last + b, x + b, 16 - b);
        memcpy(dst + 16, x, b);                     /* P_m */
        k->impl->xts(k, 0, t_prev, dst, last, 1);   /* P_(m-1), under T_(m-1) */
        aeskit_secure_zero(t_prev, sizeof t_prev);
    }
    aeskit_secure_zero(x, sizeof x);
    aeskit_secure_zero(last, sizeof last);
}

/* The last 16 to 31 bytes of the data unit; the glue refuses a data unit
 * under a block before it gets here. */
static enum aeskit_finish xts_finish(void *st, uint8_t *dst, size_t *out)
{
    struct xts_state *s = st;
    const size_t h = s->pos, b = h - 16;
    assert(h >= 16 && h < 32);
    *out = h;
    if (b == 0)
        run(s, dst, s->held, 1);
    else
        steal(s->key, s->enc, s->tweak, dst, s->held, b);
    return AESKIT_FINISH_OK;
}

/* One data unit of len >= 16 bytes: the whole blocks but the last in one
 * slot call, then the last one with them or the last two by ciphertext
 * stealing; no bytes held back, unlike a stream. */
static void xts_oneshot(const aeskit_key *keys, int enc, const uint8_t *tweak, uint8_t *dst,
                        const uint8_t *src, size_t len)
{
    assert(len >= 16);
    const aeskit_key *k = &keys[0];
    const size_t b = len % 16, n = len / 16 - (b != 0);
    uint8_t t[16];
    keys[1].impl->ecb_enc(&keys[1], t, tweak, 1);
    k->impl->xts(k, enc, t, dst, src, n);
    if (b != 0)
        steal(k, enc, t, dst + 16 * n, src + 16 * n, b);
    aeskit_secure_zero(t, sizeof t);
}

/* Sector tweaks encrypted per ECB call: one call keeps this many blocks in
 * flight where one sector at a time would wait out a whole AES latency
 * each (a 4096-byte sector's data takes about 50 latencies); with the
 * xts_units slot, also the sectors done in one pass. */
#define SECTOR_BATCH 32

static void xts_sectors(const aeskit_key *keys, int enc, const uint8_t first[16],
                        size_t unit_len, uint8_t *dst, const uint8_t *src, size_t len)
{
    assert(unit_len % 16 == 0 && unit_len > 0 && len % unit_len == 0);
    const aeskit_key *k = &keys[0], *k2 = &keys[1];
    uint8_t sector[16], t[SECTOR_BATCH][16];
    memcpy(sector, first, 16);
    for (size_t off = 0; off < len;) {
        size_t m = (len - off) / unit_len;
        if (m > SECTOR_BATCH)
            m = SECTOR_BATCH;
        for (size_t j = 0; j < m; j++) {
            memcpy(t[j], sector, 16);
            /* the sector number is public: a carry loop is fine */
            for (size_t i = 0; i < 16 && ++sector[i] == 0; i++)
                ;
        }
        k2->impl->ecb_enc(k2, t[0], t[0], m);
        if (k->impl->xts_units != NULL) {
            k->impl->xts_units(k, enc, t[0], unit_len / 16, dst + off, src + off, m);
            off += m * unit_len;
            continue;
        }
        for (size_t j = 0; j < m; j++, off += unit_len)
            k->impl->xts(k, enc, t[j], dst + off, src + off, unit_len / 16);
    }
    aeskit_secure_zero(t, sizeof t);
}

const struct aeskit_cipher aeskit_xts_cipher = {
    .name = "XTS",
    .type_name = "aeskit.AESXTS",
    .doc = "AESXTS(key, *, backend='auto')\n--\n\nAES in XTS mode (IEEE 1619-2018, SP 800-38E): "
           "one data unit per call, its 16-byte tweak first; data of at least 16 bytes "
           "and at most 2**20 blocks, a last partial block by ciphertext stealing.\n\n"
           "key: 32 or 64 bytes, the data key then the tweak key, which must differ. "
           "The object is immutable and safe to share between threads. backend: 'auto' "
           "or a name from aeskit.backends().available.",
    .key_sizes = AESKIT_KEY128 | AESKIT_KEY256,
    .n_keys = 2,
    .distinct_keys = 1,
    .iv_name = "tweak",
    .whole_blocks = 0,
    .min_len = 16,
    .max_len = (uint64_t)16 << 20,
    .facts = {.floor_enc = "parallel", .floor_dec = "parallel"},
    .state = sizeof(struct xts_state),
    .init = xts_init,
    .out_len = xts_out_len,
    .update = xts_update,
    .finish = xts_finish,
    .oneshot = xts_oneshot,
    .sectors = xts_sectors,
};
