/*
 * siv.c: AES-SIV (RFC 5297) written once against the backend table: S2V
 * over CMAC (modes/cmac.c) with K1, then CTR with K2 from the synthetic IV.
 *
 *   S2V(K1, S_1, ..., S_n):  D = CMAC(<zero>)
 *                            D = dbl(D) ^ CMAC(S_i)        for i < n
 *                            T = S_n xorend D              if |S_n| >= 16
 *                                dbl(D) ^ pad(S_n)         otherwise
 *                            V = CMAC(T)
 *   seal: V = S2V(AD_1, ..., AD_k, P), C = CTR(K2, Q, P), output V || C
 *   open: P = CTR(K2, Q, C), V' = S2V(AD_1, ..., AD_k, P), P only if V' = V
 * with Q = V with bits 63 and 31 cleared (the top bits of bytes 8 and 12),
 * counted as a 128-bit big-endian integer.
 *
 * The CMACs of separate components are independent chains, and D enters
 * only at the end: a CMAC(S_i) does not wait for the one before it, and
 * the plaintext's chain does not wait for D until its last 16 to 31 bytes
 * (the xorend reaches back 16 bytes from the end). So S2V runs every chain
 * side by side: step s takes block s of each chain that has one and puts
 * all of them through one ecb_enc call, which is a parallel slot (a batch
 * of independent blocks costs about what one block's latency does, and on
 * the bitsliced portable backend 4 blocks cost what 1 does). Chains are
 * sorted longest first, so those still running are a prefix of the batch
 * and the finished ones keep their values in place. When fewer than
 * LOCKSTEP_MIN chains are left, each goes on alone through the cbc_mac
 * slot, whose serial kernel keeps the chain in registers; one long
 * component (the plaintext, typically) is then plain serial CMAC.
 *
 * Opening must read all the associated data before it writes the
 * plaintext (it may overlap dst), so it folds the associated data's chains
 * first and then decrypts in chunks that stay in L1 while the plaintext's
 * chain reads them back.
 *
 * V is sent in the clear (it is the tag) and the received one is public,
 * so the counter goes to the ctr slot as AESKIT_CTR_BE128, which a backend
 * may branch on (aeskit.h). Lengths are public; keys, data, D and the
 * chains' values are not, and nothing branches on or indexes by them.
 */
#include "ccm.h"
#include "chains.h"
#include "common.h"
#include "generic.h"
#include "siv.h"

#define MAX_CHAINS (AESKIT_SIV_MAX_AD + 1)
#define LOCKSTEP_MIN 2     /* fewer chains than this run alone (cbc_mac) */
#define CHUNK_BLOCKS 256   /* 4 KiB: opening's CTR-then-CMAC chunk */

static_assert(_Alignof(aeskit_siv_key) <= 8, "the glue keeps the key state 8-byte aligned");

void aeskit_siv_key_init(aeskit_siv_key *sk, const struct aeskit_impl *impl,
                         const uint8_t *key, size_t key_len)
{
    static const uint8_t zero[16];
    const size_t half = key_len / 2;
    assert(key_len == 32 || key_len == 48 || key_len == 64);
    aeskit_cmac_key_init(&sk->mac, impl, key, half);
    impl->set_key(&sk->ctr, key + half, half);
    aeskit_cmac_oneshot(&sk->mac, zero, 16, sk->d0);
}

/* One CMAC chain of S2V: `whole` blocks from p, then (has_last) the block
 * last, already padded and whitened with K1 or K2 as CMAC's final block. */
struct chain {
    const uint8_t *p;
    size_t whole;
    uint8_t has_last;
    uint8_t last[16];
};

static size_t steps(const struct chain *c)
{
    return c->whole + c->has_last;
}

/* The chain of CMAC(s): every block but the last from s, and the last one
 * padded (10*) and whitened. Masks as in aeskit_cmac_final: the length is
 * public, but the path is then the same for every length. */
static void chain_of(struct chain *c, const aeskit_cmac_key *ck, const aeskit_span *s)
{
    const size_t whole = s->len > 0 ? (s->len - 1) / 16 : 0;
    const size_t r = s->len - 16 * whole;   /* 0 (empty) to 16 */
    const uint8_t full = (uint8_t)(0u - (unsigned)(r == 16));
    uint8_t in[16] = {0};
    if (r > 0)
        memcpy(in, s->p + 16 * whole, r);
    c->p = s->p;
    c->whole = whole;
    c->has_last = 1;
    for (unsigned i = 0; i < 16; i++) {
        const uint8_t pad = (uint8_t)(0x80 & (0u - (unsigned)(i == r)));
        const uint8_t sub = (uint8_t)((ck->k1[i] & full) | (ck->k2[i] & (uint8_t)~full));
        c->last[i] = (uint8_t)((in[i] | pad) ^ sub);
    }
    aeskit_secure_zero(in, sizeof in);
}

/* The CBC-MAC of each of the n chains, from a zero chaining value, into
 * out[16 * i] (chain i's): side by side while LOCKSTEP_MIN or more run. */
static void run_chains(const aeskit_key *k, const struct chain *c, size_t n, uint8_t *out)
{
    uint8_t buf[MAX_CHAINS * 16];
    uint8_t order[MAX_CHAINS];
    assert(n <= MAX_CHAINS);
    /* longest first (insertion sort on public lengths) */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && steps(&c[order[j - 1]]) < steps(&c[i]); j--)
            order[j] = order[j - 1];
        order[j] = (uint8_t)i;
    }
    memset(buf, 0, 16 * n);
    size_t active = n, s = 0;
    while (active > 0 && steps(&c[order[active - 1]]) <= s)
        active--;
    while (active >= LOCKSTEP_MIN) {
        for (size_t j = 0; j < active; j++) {
            const struct chain *ch = &c[order[j]];
            aeskit_xor16(buf + 16 * j, buf + 16 * j, s < ch->whole ? ch->p + 16 * s : ch->last);
        }
        k->impl->ecb_enc(k, buf, buf, active);
        s++;
        while (active > 0 && steps(&c[order[active - 1]]) <= s)
            active--;
    }
    for (size_t j = 0; j < active; j++) {
        const struct chain *ch = &c[order[j]];
        k->impl->cbc_mac(k, buf + 16 * j, ch->p + 16 * s, ch->whole - s);
        if (ch->has_last)
            k->impl->cbc_mac(k, buf + 16 * j, ch->last, 1);
    }
    for (size_t j = 0; j < n; j++)
        memcpy(out + 16 * order[j], buf + 16 * j, 16);
    aeskit_secure_zero(buf, 16 * n);
}

/* D after the associated data: d0 doubled and xored with each CMAC. */
static void fold(const aeskit_siv_key *sk, const uint8_t *macs, size_t n_ad, uint8_t d[16])
{
    memcpy(d, sk->d0, 16);
    for (size_t i = 0; i < n_ad; i++) {
        aeskit_gf128_double_be(d, d);
        aeskit_xor16(d, d, macs + 16 * i);
    }
}

/* The whole blocks of p (len >= 16 bytes) that T = p xorend D shares with p:
 * the prefix before the last 16 to 31 bytes. */
static size_t shared_blocks(size_t len)
{
    return (len - 16) / 16;
}

/* T's part past the chain for the last component p of len bytes, with
 * D, into t; returns its length. For len >= 16, T = p xorend D: its last
 * 16 to 31 bytes (the chain over the shared_blocks(len) before them runs
 * apart, from zero); else T = dbl(D) ^ pad(p), one block, its CMAC from
 * zero. Written once for s2v_last and s2v_many. */
static size_t s2v_t(const uint8_t d[16], const uint8_t *p, size_t len, uint8_t t[32])
{
    if (len >= 16) {
        const size_t q = shared_blocks(len), rest = len - 16 * q;   /* 16..31 */
        memcpy(t, p + 16 * q, rest);
        aeskit_xor16(t + rest - 16, t + rest - 16, d);
        return rest;
    }
    memset(t, 0, 16);
    memcpy(t, p, len);
    t[len] = 0x80;
    aeskit_gf128_double_be(t + 16, d);
    aeskit_xor16(t, t, t + 16);
    return 16;
}

/* V = CMAC(T) for the last component p of len bytes, with D. For len >= 16
 * the chain over its first shared_blocks(len) blocks is already in mac. */
static void s2v_last(const aeskit_siv_key *sk, const uint8_t d[16], const uint8_t mac[16],
                     const uint8_t *p, size_t len, uint8_t v[16])
{
    uint8_t t[32];
    const size_t tl = s2v_t(d, p, len, t);
    if (len >= 16) {
        aeskit_cmac c;
        aeskit_cmac_init_after(&c, &sk->mac, mac);   /* tl >= 16 bytes follow */
        aeskit_cmac_update(&c, t, tl);
        aeskit_cmac_final(&c, v);
        aeskit_secure_zero(&c, sizeof c);
    } else {
        aeskit_cmac_oneshot(&sk->mac, t, tl, v);
    }
    aeskit_secure_zero(t, sizeof t);
}

/* CTR(K2, Q) over len bytes, Q from v; ctr slot on the whole blocks. */
static void siv_ctr(const aeskit_key *k, const uint8_t v[16], uint8_t *dst, const uint8_t *src,
                    size_t len)
{
    uint8_t q[16], stream[16];
    memcpy(q, v, 16);
    q[8] &= 0x7f;
    q[12] &= 0x7f;
    const size_t n = len / 16;
    k->impl->ctr(k, AESKIT_CTR_BE128, q, dst, src, n);
    if (len % 16) {
        k->impl->ecb_enc(k, stream, q, 1);
        aeskit_xor_bytes(dst + 16 * n, src + 16 * n, stream, len % 16);
        aeskit_secure_zero(stream, sizeof stream);
    }
}

void aeskit_siv_seal(const aeskit_siv_key *sk, const aeskit_span *ad, size_t n_ad,
                     uint8_t *dst, const uint8_t *src, size_t len, uint8_t v[16])
{
    struct chain c[MAX_CHAINS];
    uint8_t macs[MAX_CHAINS * 16], d[16];
    assert(n_ad <= AESKIT_SIV_MAX_AD);
    for (size_t i = 0; i < n_ad; i++)
        chain_of(&c[i], &sk->mac, &ad[i]);
    /* the plaintext's shared prefix rides along as one more chain */
    c[n_ad].p = src;
    c[n_ad].whole = len >= 16 ? shared_blocks(len) : 0;
    c[n_ad].has_last = 0;
    run_chains(&sk->mac.key, c, n_ad + 1, macs);
    fold(sk, macs, n_ad, d);
    s2v_last(sk, d, macs + 16 * n_ad, src, len, v);
    siv_ctr(&sk->ctr, v, dst, src, len);
    aeskit_secure_zero(c, sizeof(struct chain) * (n_ad + 1));
    aeskit_secure_zero(macs, 16 * (n_ad + 1));
    aeskit_secure_zero(d, sizeof d);
}

void aeskit_siv_open(const aeskit_siv_key *sk, const aeskit_span *ad, size_t n_ad,
                     uint8_t *dst, const uint8_t *src, size_t len, const uint8_t v[16],
                     uint8_t expect[16])
{
    struct chain c[MAX_CHAINS];
    uint8_t macs[MAX_CHAINS * 16], d[16], q[16], chain[16] = {0};
    const aeskit_key *k = &sk->ctr;
    assert(n_ad <= AESKIT_SIV_MAX_AD);
    for (size_t i = 0; i < n_ad; i++)
        chain_of(&c[i], &sk->mac, &ad[i]);
    if (n_ad > 0)
        run_chains(&sk->mac.key, c, n_ad, macs);
    fold(sk, macs, n_ad, d);

    /* CTR a chunk, then the plaintext chain over it while it is in L1, up to
     * the shared prefix; the rest goes through s2v_last. Where the backend
     * has the fused ctr_cbcmac slot, the shared prefix's CTR (under K2) rides
     * in its chain's (under K1) idle cycles instead. */
    const size_t shared = len >= 16 ? 16 * shared_blocks(len) : 0, n = len / 16;
    size_t done = 0, macd = 0;
    memcpy(q, v, 16);
    q[8] &= 0x7f;
    q[12] &= 0x7f;
    if (shared > 0 && k->impl->ccm != NULL) {
        done = k->impl->ccm->ctr_cbcmac(&sk->mac.key, k, 1, q, chain, dst, src, shared / 16);
        macd = 16 * done;
    }
    while (done < n) {
        const size_t b = n - done < CHUNK_BLOCKS ? n - done : CHUNK_BLOCKS;
        k->impl->ctr(k, AESKIT_CTR_BE128, q, dst + 16 * done, src + 16 * done, b);
        done += b;
        const size_t upto = 16 * done < shared ? 16 * done : shared;
        sk->mac.key.impl->cbc_mac(&sk->mac.key, chain, dst + macd, (upto - macd) / 16);
        macd = upto;
    }
    if (len % 16) {
        uint8_t stream[16];
        k->impl->ecb_enc(k, stream, q, 1);
        aeskit_xor_bytes(dst + 16 * n, src + 16 * n, stream, len % 16);
        aeskit_secure_zero(stream, sizeof stream);
    }
    s2v_last(sk, d, chain, dst, len, expect);
    aeskit_secure_zero(chain, sizeof chain);
    aeskit_secure_zero(c, sizeof(struct chain) * n_ad);
    aeskit_secure_zero(macs, 16 * n_ad);
    aeskit_secure_zero(d, sizeof d);
}

/* ---- many messages at once (seal_many, open_many) ---------------------- */

/* The chains S2V runs at once in a batch: a group's CMACs of associated
 * data items and plaintext prefixes, across messages. */
#define MANY_CHAINS 96

/* A group of g chains of s2v_many_chains run, their values folded in
 * order: an item's CMAC into its message's D, a prefix's chain (the one
 * chain of one segment) into its prefix. */
static void s2v_fold_group(const aeskit_siv_key *sk, aeskit_chain *c, const size_t *owner,
                           size_t g, uint8_t (*d)[16], uint8_t (*prefix)[16])
{
    aeskit_cbc_macs(&sk->mac.key, c, g);
    for (size_t j = 0; j < g; j++) {
        uint8_t *di = d[owner[j]];
        if (c[j].n_seg == 1) {
            memcpy(prefix[owner[j]], c[j].v, 16);
        } else {
            aeskit_gf128_double_be(di, di);
            aeskit_xor16(di, di, c[j].v);
        }
    }
}

/* A batch's first S2V pass, over chains of modes/chains.h in groups of
 * MANY_CHAINS: the CMAC of every item of associated data and the chain
 * over every plaintext's shared prefix (plain[i], items[i].len), message
 * by message in order, so that the groups fold into d[i] (from d0, as
 * fold does) in the order S2V takes them; prefix[i] gets the prefix's
 * chain value. */
static void s2v_many_chains(const aeskit_siv_key *sk, const aeskit_aead_item *items, size_t n,
                            const uint8_t *const *plain, uint8_t (*d)[16], uint8_t (*prefix)[16])
{
    static const uint8_t zero[16];
    aeskit_chain c[MANY_CHAINS];
    aeskit_seg seg[MANY_CHAINS][2];
    uint8_t last[MANY_CHAINS][16];
    size_t owner[MANY_CHAINS], g = 0;   /* chain j is message owner[j]'s */
    for (size_t i = 0; i < n; i++) {
        const aeskit_aead_msg *m = &items[i].m;
        memcpy(d[i], sk->d0, 16);
        for (size_t j = 0; j <= m->n_ad; j++) {
            owner[g] = i;
            if (j < m->n_ad) {   /* the CMAC of an item */
                aeskit_cmac_chain(&sk->mac, &c[g], seg[g], last[g], zero, NULL, m->ad[j].p,
                                  m->ad[j].len);
            } else {             /* the plaintext's shared prefix: no last block */
                const size_t len = items[i].len;
                memset(c[g].v, 0, 16);
                seg[g][0] = (aeskit_seg){.src = plain[i],
                                         .blocks = len >= 16 ? shared_blocks(len) : 0};
                c[g].seg = seg[g];
                c[g].n_seg = 1;
            }
            if (++g == MANY_CHAINS) {
                s2v_fold_group(sk, c, owner, g, d, prefix);
                g = 0;
            }
        }
    }
    if (g > 0)
        s2v_fold_group(sk, c, owner, g, d, prefix);
    aeskit_secure_zero(c, sizeof c);
    aeskit_secure_zero(last, sizeof last);
}

/* S2V of n messages, their plaintexts at plain[i], into v[i]: the first
 * pass (s2v_many_chains), then each one's last CMAC, CMAC(T) over
 * s2v_t's part of T as s2v_last makes it, as chains too: from the
 * prefix's value over T's last 16 to 31 bytes (|P| >= 16), or from zero
 * over the one block dbl(D) ^ pad(P). */
static void s2v_many(const aeskit_siv_key *sk, const aeskit_aead_item *items, size_t n,
                     const uint8_t *const *plain, uint8_t (*v)[16])
{
    static const uint8_t zero[16];
    aeskit_chain c[AESKIT_AEAD_MANY];
    aeskit_seg seg[AESKIT_AEAD_MANY][2];
    uint8_t d[AESKIT_AEAD_MANY][16], prefix[AESKIT_AEAD_MANY][16], last[AESKIT_AEAD_MANY][16];
    uint8_t t[AESKIT_AEAD_MANY][32];
    assert(n <= AESKIT_AEAD_MANY);
    s2v_many_chains(sk, items, n, plain, d, prefix);
    for (size_t i = 0; i < n; i++) {
        const size_t len = items[i].len, tl = s2v_t(d[i], plain[i], len, t[i]);
        aeskit_cmac_chain(&sk->mac, &c[i], seg[i], last[i], len >= 16 ? prefix[i] : zero, NULL,
                          t[i], tl);
    }
    aeskit_cbc_macs(&sk->mac.key, c, n);
    for (size_t i = 0; i < n; i++)
        memcpy(v[i], c[i].v, 16);
    aeskit_secure_zero(c, n * sizeof c[0]);
    aeskit_secure_zero(d, n * sizeof d[0]);
    aeskit_secure_zero(prefix, n * sizeof prefix[0]);
    aeskit_secure_zero(last, n * sizeof last[0]);
    aeskit_secure_zero(t, n * sizeof t[0]);
}

/* n messages at once: S2V of all n as chains (s2v_many) and their CTR
 * in one aeskit_ctr_many. Sealing runs S2V over the plaintexts and then
 * CTR from the V it made; opening runs CTR from the received tag first
 * (dst overlaps no associated data in a batch) and S2V over what it
 * wrote. tags: V, or the expected V. */
static void siv_many(const aeskit_siv_key *sk, int enc, const aeskit_aead_item *items, size_t n,
                     uint8_t (*tags)[16])
{
    aeskit_ctr_item ctr[AESKIT_AEAD_MANY] = {{.len = 0}};   /* set before use; gcc 12 cannot tell */
    const uint8_t *plain[AESKIT_AEAD_MANY] = {NULL};
    assert(n <= AESKIT_AEAD_MANY);
    for (size_t i = 0; i < n; i++)
        plain[i] = enc ? items[i].src : items[i].dst;
    if (enc)
        s2v_many(sk, items, n, plain, tags);
    for (size_t i = 0; i < n; i++) {
        memcpy(ctr[i].ctr, enc ? tags[i] : items[i].tag, 16);
        ctr[i].ctr[8] &= 0x7f;   /* Q: bits 63 and 31 cleared */
        ctr[i].ctr[12] &= 0x7f;
        ctr[i].dst = items[i].dst;
        ctr[i].src = items[i].src;
        ctr[i].len = items[i].len;
    }
    aeskit_ctr_many(&sk->ctr, AESKIT_CTR_BE128, ctr, n, NULL);
    if (!enc)
        s2v_many(sk, items, n, plain, tags);
}

AESKIT_AEAD_MANY_SEAL_OPEN(siv, siv_many)

/* ---- the AEAD descriptor (modes/aead.h) ------------------------------- */

static void siv_key_init(void *ks, const struct aeskit_impl *impl, const uint8_t *key,
                         size_t key_len, unsigned tag_len)
{
    (void)tag_len;   /* always 16: the tag is the IV */
    aeskit_siv_key_init(ks, impl, key, key_len);
}

static void siv_seal(const void *ks, const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                     size_t len, uint8_t tag[16])
{
    aeskit_siv_seal(ks, m->ad, m->n_ad, dst, src, len, tag);
}

static void siv_open(const void *ks, const aeskit_aead_msg *m, uint8_t *dst, const uint8_t *src,
                     size_t len, const uint8_t *tag, uint8_t expect[16])
{
    aeskit_siv_open(ks, m->ad, m->n_ad, dst, src, len, tag, expect);
}

const struct aeskit_aead aeskit_siv_aead = {
    .name = "SIV",
    .type_name = "aeskit.AESSIV",
    .doc = "AESSIV(key, *, backend='auto')\n--\n\nAES-SIV (RFC 5297), deterministic and nonce-"
           "misuse resistant: a 32-, 48- or 64-byte key (K1 for S2V, then K2 for CTR); "
           "associated_data is a list of at most 126 buffers, or None; the sealed message is "
           "the 16-byte SIV followed by the ciphertext. Used with a nonce, the nonce is the "
           "last item of associated_data (RFC 5297 3). Two passes over the data: no "
           "streaming.",
    .facts = {.floor_enc = "serial+parallel", .floor_dec = "serial"},
    .key_sizes = AESKIT_KEY_ANY,
    .n_keys = 2,
    .tag_lengths = AESKIT_TAG(16),
    .tag_first = 1,
    .nonce_min = 0,
    .nonce_max = 0,
    .nonce_note = "",
    .ad_list = 1,
    .max_ad = AESKIT_SIV_MAX_AD,
    .max_aad = UINT64_MAX,
    .max_data = UINT64_MAX,
    .key_state = sizeof(aeskit_siv_key),
    .key_init = siv_key_init,
    .seal = siv_seal,
    .open = siv_open,
    .seal_many = siv_seal_many,
    .open_many = siv_open_many,
    .constants = (const aeskit_constant[]){
        {"chunk_blocks", CHUNK_BLOCKS},
        {"lockstep_min", LOCKSTEP_MIN},
        {"max_ad", AESKIT_SIV_MAX_AD},
        {"many_chains", MANY_CHAINS},
        {NULL, 0},
    },
};
