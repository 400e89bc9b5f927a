/*
 * selftest.c: the C core checked without Python, for CPUs where the Python
 * suite does not run here (cross-built, run under qemu-user by run.sh) and
 * natively on x86 (tests/test_cross_selftest.py).
 *
 * 1. Every slot of every backend compiled in and available on this CPU,
 *    against portable's (or, for the fused and POLYVAL slots that portable
 *    lacks, against a model built on portable's mandatory slots), with
 *    every block count 0..3W+2 and a few larger ones, W the widest batch
 *    any backend's constants name: every batch, half batch and tail is
 *    crossed. Keys of all three sizes; the ctr slot with each counter kind
 *    from counters whose 32-, 64- and 128-bit parts carry inside a batch;
 *    in place and at odd addresses; set_key's and ghash_key's extents (what
 *    a per-message key wipes). Then every AEAD's seal and open through the
 *    backend against portable at lengths around the batches, and the
 *    gcm_short slot (many short GCM messages at once) against portable's
 *    one-shot GCM.
 * 2. The standards' known answers, on every available backend, read from
 *    the vector files the Python tests read (the directory is argv[1]).
 *    Only the files whose format is plain "name = hex" records are read,
 *    and each through the code the glue calls:
 *      fips197.txt, sp800_38a_{ecb,cbc,cfb128,ofb,ctr}.txt   the slots
 *      xts/ieee1619.txt                  XTS's descriptor's oneshot (data
 *                                        units of any length, stealing
 *                                        included)
 *      mac/cmac.txt                      aeskit_cmac_oneshot
 *      aead/{gcm,gcmsiv,gcmsiv192,ccm,eax,ocb3,siv,xaes256gcm}.txt
 *                                        the AEAD descriptors' seal
 *                                        and open (records with valid = 00,
 *                                        or lengths the descriptor refuses,
 *                                        are skipped: the Python tests own
 *                                        the rejections)
 *    (sp800_38a_cfb8.txt needs the stream layer; keywrap/ is left to Python.)
 *
 * Options:
 *   --expect-best NAME   fail unless the dispatcher picks NAME on this CPU
 *   --mask-hwcap         (Linux aarch64 and POWER, test-only) detect
 *                        features from AT_HWCAP with its AES and PMULL bits
 *                        cleared (AT_HWCAP2 without VEC_CRYPTO on POWER):
 *                        the fallback to portable on a CPU that has them
 *   --negative-control   only the slot checks of a deliberately broken copy
 *                        of portable (one flipped bit in CTR's tenth block):
 *                        they must fail, so the program must exit 1
 *
 * Prints each failure, then "N passed, M failed"; exits 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "dispatch.h"
#include "modes/aead.h"
#include "modes/cmac.h"
#include "modes/generic.h"
#include "modes/block.h"
#include "modes/ccm.h"
#include "modes/chains.h"
#include "modes/gcm.h"
#include "modes/gcmsiv.h"
#include "modes/ocb.h"
#include "modes/xaes.h"

#if defined(__linux__) && (defined(__aarch64__) || defined(__powerpc64__))
#include <sys/auxv.h>
#define MASK_HWCAP 1
#if defined(__powerpc64__) && !defined(PPC_FEATURE2_VEC_CRYPTO)
#define PPC_FEATURE2_VEC_CRYPTO 0x02000000
#endif
#endif

static unsigned long passed, failed;

static void check(int ok, const char *what, const char *backend, const char *detail)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed <= 200)
        fprintf(stderr, "FAIL %s [%s] %s\n", what, backend, detail);
}

/* ---- deterministic pseudo-random data --------------------------------- */

static uint64_t rng = 0x243F6A8885A308D3u;

static void fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
        p[i] = (uint8_t)((rng * 0x2545F4914F6CDD1Du) >> 56);
    }
}

/* ---- 1. slots against portable ---------------------------------------- */

#define MAXN 512   /* blocks: >= 16W + 3 for W up to 31 */

static size_t counts[64], n_counts;

static void make_counts(void)
{
    size_t w = 4;
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        for (const aeskit_constant *c = aeskit_impls[i]->constants; c && c->name; c++)
            if (strstr(c->name, "batch_blocks") != NULL && c->value > w)
                w = c->value;
    if (16 * w + 3 > MAXN)
        w = (MAXN - 3) / 16;
    size_t dense = 3 * w + 2;
    if (dense > 50)   /* the vaes_avx512 batches: every count near each multiple */
        dense = 50;
    for (size_t n = 0; n <= dense; n++)
        counts[n_counts++] = n;
    const size_t more[] = {w - 1, w, w + 1, 2 * w - 1, 2 * w, 2 * w + 1, 3 * w - 1, 3 * w,
                           3 * w + 1, 3 * w + 2, 4 * w + 1, 8 * w - 1, 8 * w + 5, 16 * w + 3};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (more[i] > dense && n_counts < 64)
            counts[n_counts++] = more[i];
}

typedef struct {
    const struct aeskit_impl *impl, *ref;
    aeskit_key k, kp, k2, kp2;   /* the backend's and portable's, and a second key */
    size_t key_len;
} pair;

/* Odd offsets into the buffers: no slot may need aligned pointers. */
static uint8_t src_buf[16 * MAXN + 16], got_buf[16 * MAXN + 16], want_buf[16 * MAXN + 16];
#define src (src_buf + 1)
#define got (got_buf + 3)
#define want (want_buf + 5)

static void detail(char *buf, size_t len, const char *slot, size_t key_len, size_t n, int extra)
{
    snprintf(buf, len, "%s key %zu blocks %zu (%d)", slot, 8 * key_len, n, extra);
}

static void chain_check(pair *p, const char *name, size_t off)
{
    char d[96];
    for (size_t c = 0; c < n_counts; c++) {
        const size_t n = counts[c];
        uint8_t iv[16], iv2[16];
        fill(iv, 16);
        memcpy(iv2, iv, 16);
        aeskit_chain_fn *f = *(aeskit_chain_fn *const *)((const char *)p->impl + off);
        aeskit_chain_fn *g = *(aeskit_chain_fn *const *)((const char *)p->ref + off);
        f(&p->k, iv, got, src, n);
        g(&p->kp, iv2, want, src, n);
        detail(d, sizeof d, name, p->key_len, n, 0);
        check(memcmp(got, want, 16 * n) == 0 && memcmp(iv, iv2, 16) == 0, "slot", p->impl->name, d);
        /* in place */
        memcpy(got, src, 16 * n);
        fill(iv, 16);
        memcpy(iv2, iv, 16);
        f(&p->k, iv, got, got, n);
        g(&p->kp, iv2, want, src, n);
        detail(d, sizeof d, name, p->key_len, n, 1);
        check(memcmp(got, want, 16 * n) == 0 && memcmp(iv, iv2, 16) == 0, "slot", p->impl->name, d);
    }
}

/* Counters whose carries fall inside a batch: the low bytes near a wrap. */
static void ctr_start(enum aeskit_ctr kind, uint8_t ctr[16], unsigned variant)
{
    fill(ctr, 16);
    const unsigned short_by = 1 + variant % 19;
    switch (variant % 4) {
    case 0:
        break;   /* random */
    case 1:      /* the 32-bit counter near 2^32 */
        if (kind == AESKIT_CTR_LE32)
            aeskit_store_le32(ctr, 0u - short_by);
        else
            aeskit_store_be32(ctr + 12, 0u - short_by);
        break;
    case 2:      /* 64 low bits near a carry (BE128) */
        aeskit_store_be64(ctr + 8, 0 - (uint64_t)short_by);
        break;
    case 3:      /* all 128 bits near the wrap */
        memset(ctr, 0xff, 16);
        ctr[15] = (uint8_t)(0x100 - short_by);
        break;
    }
}

static void ctr_check(pair *p)
{
    static const enum aeskit_ctr kinds[] = {AESKIT_CTR_BE128, AESKIT_CTR_BE32, AESKIT_CTR_LE32,
                                           AESKIT_CTR_BE128_SECRET};
    static const char *const names[] = {"ctr be128", "ctr be32", "ctr le32", "ctr be128_secret"};
    char d[96];
    for (size_t kd = 0; kd < 4; kd++)
        for (size_t c = 0; c < n_counts; c++)
            for (unsigned v = 0; v < 4; v++) {
                const size_t n = counts[c];
                uint8_t a[16], b[16], a0[16];
                ctr_start(kinds[kd], a, v + 4 * (unsigned)c);
                memcpy(b, a, 16);
                memcpy(a0, a, 16);
                p->impl->ctr(&p->k, kinds[kd], a, got, src, n);
                p->ref->ctr(&p->kp, kinds[kd], b, want, src, n);
                detail(d, sizeof d, names[kd], p->key_len, n, (int)v);
                check(memcmp(got, want, 16 * n) == 0 && memcmp(a, b, 16) == 0, "slot",
                      p->impl->name, d);
                if (v == 0) {   /* in place */
                    memcpy(a, a0, 16);
                    memcpy(got, src, 16 * n);
                    p->impl->ctr(&p->k, kinds[kd], a, got, got, n);
                    detail(d, sizeof d, names[kd], p->key_len, n, -1);
                    check(memcmp(got, want, 16 * n) == 0 && memcmp(a, b, 16) == 0, "slot",
                          p->impl->name, d);
                }
            }
}

static void cbc_mac_xts_check(pair *p)
{
    char d[96];
    for (size_t c = 0; c < n_counts; c++) {
        const size_t n = counts[c];
        uint8_t a[16], b[16];
        fill(a, 16);
        memcpy(b, a, 16);
        p->impl->cbc_mac(&p->k, a, src, n);
        p->ref->cbc_mac(&p->kp, b, src, n);
        detail(d, sizeof d, "cbc_mac", p->key_len, n, 0);
        check(memcmp(a, b, 16) == 0, "slot", p->impl->name, d);
        for (int enc = 0; enc < 2; enc++) {
            fill(a, 16);
            if (c % 3 == 0)
                a[15] |= 0x80;   /* the first doubling carries out of bit 127 */
            uint8_t t0[16];
            memcpy(b, a, 16);
            memcpy(t0, a, 16);
            p->impl->xts(&p->k, enc, a, got, src, n);
            p->ref->xts(&p->kp, enc, b, want, src, n);
            detail(d, sizeof d, enc ? "xts enc" : "xts dec", p->key_len, n, 0);
            check(memcmp(got, want, 16 * n) == 0 && memcmp(a, b, 16) == 0, "slot",
                  p->impl->name, d);
            memcpy(got, src, 16 * n);   /* in place, from the same tweak */
            p->impl->xts(&p->k, enc, t0, got, got, n);
            detail(d, sizeof d, enc ? "xts enc" : "xts dec", p->key_len, n, 1);
            check(memcmp(got, want, 16 * n) == 0 && memcmp(t0, b, 16) == 0, "slot",
                  p->impl->name, d);
        }
    }
}

/* cbc_x (independent chains in lockstep) for every chain count 1..its
 * cbc_x_chains and a few block counts, chain j the j-th part of src:
 * CBC encryption (apart and in place) and CBC-MAC against portable's
 * cbc_enc and cbc_mac chain by chain; then the scheduler over it
 * (aeskit_cbc_chains) on more chains than lanes, of unequal lengths and
 * two segments each, so that lanes are refilled mid-run; then
 * aeskit_cbc_macs on such chains alike (lockstep) and not. */
static void cbc_x_check(pair *p)
{
    /* 4, 12: whole 64-byte lines only (cbc_x_lines' path), 5 and 11 with
     * blocks left over; 12 keeps every chain's dst alike modulo 64 (got is
     * odd: no line path may need alignment) */
    static const size_t blocks[] = {0, 1, 2, 4, 5, 11, 12};
    const size_t w = p->impl->cbc_x_chains;
    uint8_t iv[AESKIT_CBC_X_MAX][16], v[AESKIT_CBC_X_MAX][16], b[16];
    const uint8_t *s[AESKIT_CBC_X_MAX];
    uint8_t *o[AESKIT_CBC_X_MAX];
    char d[96];
    check(w >= 1 && w <= AESKIT_CBC_X_MAX && p->impl->cbc_x != NULL, "slot", p->impl->name,
          "cbc_x_chains");
    for (size_t chains = 1; chains <= w; chains++)
        for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
            const size_t n = blocks[k];
            fill(iv[0], 16 * chains);
            for (int mode = 0; mode < 3; mode++) {   /* apart, in place, MAC */
                memcpy(v, iv, 16 * chains);
                if (mode == 1)
                    memcpy(got, src, 16 * n * chains);
                for (size_t j = 0; j < chains; j++) {
                    s[j] = (mode == 1 ? got : src) + 16 * n * j;
                    o[j] = got + 16 * n * j;
                }
                p->impl->cbc_x(&p->k, chains, v, mode == 2 ? NULL : o, s, n);
                int ok = 1;
                for (size_t j = 0; j < chains; j++) {
                    memcpy(b, iv[j], 16);
                    if (mode == 2) {
                        p->ref->cbc_mac(&p->kp, b, src + 16 * n * j, n);
                    } else {
                        p->ref->cbc_enc(&p->kp, b, want, src + 16 * n * j, n);
                        ok &= memcmp(got + 16 * n * j, want, 16 * n) == 0;
                    }
                    ok &= memcmp(v[j], b, 16) == 0;
                }
                detail(d, sizeof d, "cbc_x", p->key_len, n, (int)(chains * 10 + mode));
                check(ok, "slot", p->impl->name, d);
            }
        }
    /* the scheduler: 2w + 3 chains, chain j of (j * 7) % 13 blocks then
     * j % 3, from src apart and into got */
    enum { MANY = 2 * AESKIT_CBC_X_MAX + 3 };
    static aeskit_chain ch[MANY];
    static aeskit_seg seg[MANY][2];
    const size_t m = 2 * w + 3;
    size_t at = 0;
    for (size_t j = 0; j < m; j++) {
        const size_t n0 = j * 7 % 13, n1 = j % 3;
        fill(ch[j].v, 16);
        seg[j][0] = (aeskit_seg){src + 16 * at, got + 16 * at, n0};
        seg[j][1] = (aeskit_seg){src + 16 * (at + n0), got + 16 * (at + n0), n1};
        ch[j].seg = seg[j];
        ch[j].n_seg = 2;
        at += n0 + n1;
    }
    assert(at <= MAXN);
    uint8_t first[MANY][16];
    for (size_t j = 0; j < m; j++)
        memcpy(first[j], ch[j].v, 16);
    aeskit_cbc_chains(&p->k, 1, ch, m);
    int ok = 1;
    at = 0;
    for (size_t j = 0; j < m; j++) {
        const size_t n = seg[j][0].blocks + seg[j][1].blocks;
        p->ref->cbc_enc(&p->kp, first[j], want, src + 16 * at, n);
        ok &= memcmp(got + 16 * at, want, 16 * n) == 0 && memcmp(first[j], ch[j].v, 16) == 0;
        at += n;
    }
    detail(d, sizeof d, "cbc_chains", p->key_len, at, (int)m);
    check(ok, "slot", p->impl->name, d);

    /* aeskit_cbc_macs on the same 2w + 3 chains, made alike (3 blocks
     * then 1: lockstep in even groups) and then not (the scheduler) */
    for (int alike = 1; alike >= 0; alike--) {
        at = 0;
        for (size_t j = 0; j < m; j++) {
            const size_t n0 = alike ? 3 : j * 7 % 13, n1 = alike ? 1 : j % 3;
            memcpy(ch[j].v, first[j], 16);
            seg[j][0] = (aeskit_seg){src + 16 * at, NULL, n0};
            seg[j][1] = (aeskit_seg){src + 16 * (at + n0), NULL, n1};
            at += n0 + n1;
        }
        aeskit_cbc_macs(&p->k, ch, m);
        ok = 1;
        at = 0;
        for (size_t j = 0; j < m; j++) {
            const size_t n = seg[j][0].blocks + seg[j][1].blocks;
            memcpy(b, first[j], 16);
            p->ref->cbc_mac(&p->kp, b, src + 16 * at, n);
            ok &= memcmp(b, ch[j].v, 16) == 0;
            at += n;
        }
        detail(d, sizeof d, "cbc_macs", p->key_len, at, (int)(m * 10 + alike));
        check(ok, "slot", p->impl->name, d);
    }
}

/* xts_units (optional) against portable's xts a unit at a time: units of
 * 1..24 blocks (whole 8-block batches and not), and of 32, 40, 64 and 96
 * (whole and half 16- and 32-block vaes batches, with tails), in runs of
 * 1..5 units, up to MAXN blocks, from tweaks whose first doubling carries. */
static void xts_units_check(pair *p)
{
    if (p->impl->xts_units == NULL)
        return;
    char d[96];
    uint8_t tweaks[5][16], t[16];
    static const size_t wide[] = {32, 40, 64, 96};
    for (size_t u = 0; u < 24 + sizeof wide / sizeof wide[0]; u++) {
        const size_t unit = u < 24 ? u + 1 : wide[u - 24];
        for (size_t units = 1; units <= 5 && unit * units <= MAXN; units++)
            for (int enc = 0; enc < 2; enc++) {
                fill(tweaks[0], sizeof tweaks);
                tweaks[0][15] |= 0x80;
                p->impl->xts_units(&p->k, enc, tweaks[0], unit, got, src, units);
                for (size_t i = 0; i < units; i++) {
                    memcpy(t, tweaks[i], 16);
                    p->ref->xts(&p->kp, enc, t, want + 16 * unit * i, src + 16 * unit * i,
                                unit);
                }
                snprintf(d, sizeof d, "xts_units %s key %zu unit %zu units %zu",
                         enc ? "enc" : "dec", 8 * p->key_len, unit, units);
                check(memcmp(got, want, 16 * unit * units) == 0, "slot", p->impl->name, d);
            }
    }
}

static void reverse16(uint8_t *dst, const uint8_t *s)
{
    uint8_t t[16];
    for (int i = 0; i < 16; i++)
        t[i] = s[15 - i];
    memcpy(dst, t, 16);
}

static aeskit_ghash_key hk_a, hk_b;

/* The keys a call of n blocks is checked with: built for n, for any
 * length, and (when n is longer) for AESKIT_GHASH_MSG blocks, which serve
 * any call (GCM-SIV's per-message key). 0 when kind does not apply. */
static const char *const key_kinds[3] = {"n", "any", "run"};

static int key_for(aeskit_ghash_key *hk, const struct aeskit_impl *impl, const uint8_t h[16],
                   size_t n, int kind)
{
    if (kind == 2 && n <= AESKIT_GHASH_MSG)
        return 0;
    impl->ghash_key(hk, h, kind == 0 ? n : kind == 1 ? AESKIT_GHASH_ANY : AESKIT_GHASH_MSG);
    return 1;
}

/* ghash and polyval: keys built for exactly n blocks, for any length and
 * for a run (key_for), against portable's ghash (POLYVAL's model: ghash of the byte-reversed
 * blocks, aeskit.h). */
static void ghash_check(const struct aeskit_impl *impl, const struct aeskit_impl *ref)
{
    char d[96];
    for (size_t c = 0; c < n_counts; c++) {
        const size_t n = counts[c];
        uint8_t h[16], a[16], b[16], acc0[16];
        fill(h, 16);
        fill(acc0, 16);
        /* ghash_key writes only w's bytes [from, from + used): what a key
         * made per message wipes */
        memset(&hk_a, 0xa5, sizeof hk_a);
        impl->ghash_key(&hk_a, h, n);
        size_t outside = 0;
        for (size_t i = 0; i < sizeof hk_a.w; i++)
            outside += (i < hk_a.from || i >= hk_a.from + hk_a.used) &&
                       ((const uint8_t *)hk_a.w)[i] != 0xa5;
        snprintf(d, sizeof d, "ghash_key max_blocks %zu: %zu bytes written outside", n, outside);
        check(outside == 0 && hk_a.from + hk_a.used <= sizeof hk_a.w && hk_a.max_blocks == n,
              "slot", impl->name, d);
        ref->ghash_key(&hk_b, h, AESKIT_GHASH_ANY);
        memcpy(b, acc0, 16);
        ref->ghash(&hk_b, b, src, n);
        for (int kind = 0; kind < 3; kind++) {
            if (!key_for(&hk_a, impl, h, n, kind))
                continue;
            memcpy(a, acc0, 16);
            impl->ghash(&hk_a, a, src, n);
            snprintf(d, sizeof d, "ghash blocks %zu max_blocks %s", n, key_kinds[kind]);
            check(memcmp(a, b, 16) == 0, "slot", impl->name, d);
        }
        if (impl->polyval == NULL)
            continue;
        for (size_t i = 0; i < n; i++)
            reverse16(want + 16 * i, src + 16 * i);
        memcpy(b, acc0, 16);
        ref->ghash(&hk_b, b, want, n);
        for (int kind = 0; kind < 3; kind++) {
            if (!key_for(&hk_a, impl, h, n, kind))
                continue;
            memcpy(a, acc0, 16);
            impl->polyval(&hk_a, a, src, n);
            snprintf(d, sizeof d, "polyval blocks %zu max_blocks %s", n, key_kinds[kind]);
            check(memcmp(a, b, 16) == 0, "slot", impl->name, d);
        }
    }
}

/* The fused slots, where a backend has them: the prefix they did against
 * the split slots of portable on that prefix. */
static void fused_check(pair *p)
{
    char d[96];
    const struct aeskit_impl *impl = p->impl, *ref = p->ref;
    for (size_t c = 0; c < n_counts; c++) {
        const size_t n = counts[c];
        uint8_t h[16], ctr[16], ctr2[16], acc[16], acc2[16];
        fill(h, 16);
        if (impl->gcm != NULL) {
            impl->ghash_key(&hk_a, h, AESKIT_GHASH_ANY);
            ref->ghash_key(&hk_b, h, AESKIT_GHASH_ANY);
            /* with and without a lengths block (hashed last when the
             * call takes all n blocks) */
            for (int e = 0; e < 4; e++) {
                const int enc = e & 1;
                uint8_t lens[16], ek[16];
                fill(lens, 16);
                fill(ctr, 12);
                aeskit_store_be32(ctr + 12, 2 + (uint32_t)c);
                memcpy(ctr2, ctr, 16);
                fill(acc, 16);
                memcpy(acc2, acc, 16);
                const size_t done = impl->gcm->crypt(&p->k, &hk_a, enc, ctr, acc, got, src, n,
                                                     e & 2 ? lens : NULL, e & 2 ? ek : NULL);
                if (!enc)
                    ref->ghash(&hk_b, acc2, src, done);
                ref->ctr(&p->kp, AESKIT_CTR_BE32, ctr2, want, src, done);
                if (enc)
                    ref->ghash(&hk_b, acc2, want, done);
                int ek_ok = 1;
                if ((e & 2) && done == n && n > 0) {
                    uint8_t prev[16], ek2[16];
                    ref->ghash(&hk_b, acc2, lens, 1);
                    memcpy(prev, ctr2, 16);   /* the first counter, from ctr's end */
                    aeskit_store_be32(prev + 12, aeskit_load_be32(ctr2 + 12) - (uint32_t)n - 1);
                    ref->ecb_enc(&p->kp, ek2, prev, 1);
                    ek_ok = memcmp(ek, ek2, 16) == 0;
                }
                detail(d, sizeof d, e & 2 ? "gcm lens" : "gcm", p->key_len, n, enc);
                check(done <= n && memcmp(got, want, 16 * done) == 0 &&
                          memcmp(ctr, ctr2, 16) == 0 && memcmp(acc, acc2, 16) == 0 && ek_ok,
                      "slot", impl->name, d);
            }
        }
        if (impl->gcmsiv != NULL && impl->gcmsiv->open != NULL && impl->polyval != NULL) {
            impl->ghash_key(&hk_a, h, AESKIT_GHASH_ANY);
            ref->ghash_key(&hk_b, h, AESKIT_GHASH_ANY);
            ctr_start(AESKIT_CTR_LE32, ctr, (unsigned)c);
            memcpy(ctr2, ctr, 16);
            memset(acc, 0, 16);
            memset(acc2, 0, 16);
            const size_t done = impl->gcmsiv->open(&p->k, &hk_a, ctr, acc, got, src, n);
            ref->ctr(&p->kp, AESKIT_CTR_LE32, ctr2, want, src, done);
            uint8_t *rev = want + 16 * MAXN / 2;   /* done <= n <= MAXN / 2 here */
            int ok = done <= n && memcmp(got, want, 16 * done) == 0 && memcmp(ctr, ctr2, 16) == 0;
            if (ok && done <= MAXN / 2) {
                for (size_t i = 0; i < done; i++)
                    reverse16(rev + 16 * i, want + 16 * i);
                ref->ghash(&hk_b, acc2, rev, done);
                ok = memcmp(acc, acc2, 16) == 0;
            }
            detail(d, sizeof d, "gcmsiv_open", p->key_len, n, 0);
            check(ok, "slot", impl->name, d);
        }
        if (impl->ccm != NULL) {
            for (int mac_dst = 0; mac_dst < 2; mac_dst++)
                for (int two = 0; two < 2; two++) {
                    const aeskit_key *kc = two ? &p->k2 : &p->k;
                    const aeskit_key *kcp = two ? &p->kp2 : &p->kp;
                    ctr_start(AESKIT_CTR_BE128, ctr, (unsigned)c);
                    memcpy(ctr2, ctr, 16);
                    fill(acc, 16);
                    memcpy(acc2, acc, 16);
                    const size_t done =
                        impl->ccm->ctr_cbcmac(&p->k, kc, mac_dst, ctr, acc, got, src, n);
                    ref->ctr(kcp, AESKIT_CTR_BE128, ctr2, want, src, done);
                    ref->cbc_mac(&p->kp, acc2, mac_dst ? want : src, done);
                    detail(d, sizeof d, two ? "ctr_cbcmac two keys" : "ctr_cbcmac", p->key_len, n,
                           mac_dst);
                    check(done <= n && memcmp(got, want, 16 * done) == 0 &&
                              memcmp(ctr, ctr2, 16) == 0 && memcmp(acc, acc2, 16) == 0,
                          "slot", impl->name, d);
                }
        }
        if (impl->ocb != NULL) {
            static aeskit_ocb_key ok;
            uint8_t zero[16] = {0};
            ref->ecb_enc(&p->kp, ok.l_star, zero, 1);
            aeskit_gf128_double_be(ok.l_dollar, ok.l_star);
            aeskit_gf128_double_be(ok.l[0], ok.l_dollar);
            for (int i = 1; i < 64; i++)
                aeskit_gf128_double_be(ok.l[i], ok.l[i - 1]);
            for (int enc = 0; enc < 2; enc++) {
                aeskit_ocb_state st, st2;
                fill(st.offset, 16);
                fill(st.checksum, 16);
                st.blocks = c % 5 == 4 ? 0xfffffff0u : c;   /* indices whose ntz grows */
                st2 = st;
                const size_t done = impl->ocb->crypt(&p->k, &ok, enc, &st, got, src, n);
                for (size_t i = 0; i < done; i++) {
                    uint8_t x[16];
                    st2.blocks++;
                    aeskit_xor16(st2.offset, st2.offset, ok.l[aeskit_ntz64(st2.blocks)]);
                    aeskit_xor16(x, src + 16 * i, st2.offset);
                    (enc ? ref->ecb_enc : ref->ecb_dec)(&p->kp, x, x, 1);
                    aeskit_xor16(want + 16 * i, x, st2.offset);
                    aeskit_xor16(st2.checksum, st2.checksum, enc ? src + 16 * i : want + 16 * i);
                }
                detail(d, sizeof d, "ocb", p->key_len, n, enc);
                check(done <= n && memcmp(got, want, 16 * done) == 0 &&
                          memcmp(&st, &st2, sizeof st) == 0,
                      "slot", impl->name, d);
            }
        }
    }
}

static void slots_check(const struct aeskit_impl *impl)
{
    static pair p;
    static const size_t sizes[] = {16, 24, 32};
    char d[96];
    fill(src, 16 * MAXN);
    for (size_t s = 0; s < 3; s++) {
        uint8_t key[32], key2[32];
        fill(key, 32);
        fill(key2, 32);
        p.impl = impl;
        p.ref = &aeskit_portable_impl;
        p.key_len = sizes[s];
        impl->set_key(&p.k, key, p.key_len);
        impl->set_key(&p.k2, key2, p.key_len);
        p.ref->set_key(&p.kp, key, p.key_len);
        p.ref->set_key(&p.kp2, key2, p.key_len);
        detail(d, sizeof d, "set_key", p.key_len, 0, 0);
        size_t dirty = 0;   /* the schedule is rk's first used bytes, the rest zero */
        for (size_t i = p.k.used; i < sizeof p.k.rk; i++)
            dirty |= ((const uint8_t *)p.k.rk)[i];
        check(p.k.impl == impl && p.k.rounds == p.kp.rounds && p.k.used <= sizeof p.k.rk &&
                  dirty == 0,
              "slot", impl->name, d);
        for (size_t c = 0; c < n_counts; c++) {
            const size_t n = counts[c];
            impl->ecb_enc(&p.k, got, src, n);
            p.ref->ecb_enc(&p.kp, want, src, n);
            detail(d, sizeof d, "ecb_enc", p.key_len, n, 0);
            check(memcmp(got, want, 16 * n) == 0, "slot", impl->name, d);
            memcpy(got, src, 16 * n);
            impl->ecb_dec(&p.k, got, got, n);
            p.ref->ecb_dec(&p.kp, want, src, n);
            detail(d, sizeof d, "ecb_dec", p.key_len, n, 1);
            check(memcmp(got, want, 16 * n) == 0, "slot", impl->name, d);
        }
#define CHAIN(slot) chain_check(&p, #slot, offsetof(struct aeskit_impl, slot))
        CHAIN(cbc_enc);
        CHAIN(cbc_dec);
        CHAIN(cfb_enc);
        CHAIN(cfb_dec);
        CHAIN(ofb);
#undef CHAIN
        ctr_check(&p);
        cbc_mac_xts_check(&p);
        xts_units_check(&p);
        cbc_x_check(&p);
        fused_check(&p);
    }
    ghash_check(impl, &aeskit_portable_impl);
    aeskit_secure_zero(&p, sizeof p);
}

/* Every AEAD through this backend against portable, seal and open, at
 * lengths around the batches (the modes' calls of the slots, with this
 * backend's fused slots where it has them and the split ones where not). */
static void aead_check(const struct aeskit_impl *impl)
{
    char d[128];
    const size_t w = counts[n_counts - 1] / 16, lens[] = {0, 1, 15, 16, 17, 63, 64, 65,
        16 * w - 1, 16 * w, 16 * w + 1, 48 * w + 5, 1000, 4099};
    static uint8_t out_a[8192], out_b[8192], back[8192];
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++) {
        const struct aeskit_aead *ad = aeskit_aeads[i];
        for (size_t ksz = 16; ksz <= 32; ksz += 8) {
            if (!(ad->key_sizes & (ksz == 16 ? AESKIT_KEY128 : ksz == 24 ? AESKIT_KEY192
                                                                          : AESKIT_KEY256)))
                continue;
            uint8_t key[64], nonce[32], aad[37];
            fill(key, sizeof key);
            fill(nonce, sizeof nonce);
            fill(aad, sizeof aad);
            const size_t nl = ad->nonce_max == 0 ? 0
                              : (ad->nonce_min <= 12 && 12 <= ad->nonce_max) ? 12 : ad->nonce_min;
            const aeskit_span span = {aad, sizeof aad};
            const aeskit_aead_msg m = {nl ? nonce : NULL, nl, &span, 1};
            void *ka = malloc(ad->key_state), *kb = malloc(ad->key_state);
            const unsigned tl = (ad->tag_lengths & AESKIT_TAG(16)) ? 16 : 8;
            ad->key_init(ka, impl, key, ksz * ad->n_keys, tl);
            ad->key_init(kb, &aeskit_portable_impl, key, ksz * ad->n_keys, tl);
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                const size_t len = lens[li] < sizeof out_a ? lens[li] : sizeof out_a - 1;
                uint8_t ta[16], tb[16], te[16];
                ad->seal(ka, &m, out_a, len ? src : NULL, len, ta);
                ad->seal(kb, &m, out_b, len ? src : NULL, len, tb);
                ad->open(ka, &m, back, len ? out_a : NULL, len, ta, te);
                snprintf(d, sizeof d, "%s key %zu bytes %zu", ad->name, 8 * ksz, len);
                check(memcmp(out_a, out_b, len) == 0 && memcmp(ta, tb, tl) == 0 &&
                          memcmp(back, src, len) == 0 && memcmp(te, ta, tl) == 0,
                      "aead", impl->name, d);
            }
            aeskit_secure_zero(ka, ad->key_state);
            aeskit_secure_zero(kb, ad->key_state);
            free(ka);
            free(kb);
        }
    }
}

/* XAES-256-GCM's long messages, which from the table's whole_key_blocks
 * (struct aeskit_gcm_impl) build the whole GHASH key per message, against
 * portable at the lengths either side (data blocks: 16 * wk - 1 bytes takes
 * the per-message key), with AAD. */
static void xaes_whole_check(const struct aeskit_impl *impl)
{
    if (impl->gcm == NULL || impl->gcm->whole_key_blocks == 0)
        return;
    const struct aeskit_aead *ad = &aeskit_xaes_aead;
    const size_t wk = impl->gcm->whole_key_blocks, max = 16 * wk + 17;
    const size_t lens[] = {16 * wk - 1, 16 * wk, max};
    uint8_t *in = malloc(max), *out_a = malloc(max), *out_b = malloc(max), *back = malloc(max);
    void *ka = malloc(ad->key_state), *kb = malloc(ad->key_state);
    uint8_t key[32], nonce[24], aad[37];
    char d[128];
    if (in == NULL || out_a == NULL || out_b == NULL || back == NULL || ka == NULL || kb == NULL) {
        check(0, "xaes whole key", impl->name, "out of memory");
        goto out;
    }
    fill(key, sizeof key);
    fill(nonce, sizeof nonce);
    fill(aad, sizeof aad);
    fill(in, max);
    const aeskit_span span = {aad, sizeof aad};
    const aeskit_aead_msg m = {nonce, sizeof nonce, &span, 1};
    ad->key_init(ka, impl, key, sizeof key, 16);
    ad->key_init(kb, &aeskit_portable_impl, key, sizeof key, 16);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        const size_t len = lens[li];
        uint8_t ta[16], tb[16], te[16];
        ad->seal(ka, &m, out_a, in, len, ta);
        ad->seal(kb, &m, out_b, in, len, tb);
        ad->open(ka, &m, back, out_a, len, ta, te);
        snprintf(d, sizeof d, "%s bytes %zu (whole key from %zu blocks)", ad->name, len, wk);
        check(memcmp(out_a, out_b, len) == 0 && memcmp(ta, tb, 16) == 0 &&
                  memcmp(back, in, len) == 0 && memcmp(te, ta, 16) == 0,
              "aead", impl->name, d);
    }
    aeskit_secure_zero(ka, ad->key_state);
    aeskit_secure_zero(kb, ad->key_state);
out:
    free(in), free(out_a), free(out_b), free(back), free(ka), free(kb);
}

/* The gcm_short slot (many short GCM messages in one call) against
 * portable's one-shot GCM, sealing and opening, every AAD and data length
 * the slot takes around the block edges, all messages of a key in one
 * call. */
static void gcm_short_check(const struct aeskit_impl *impl)
{
    static const size_t aads[] = {0, 1, 15, 16, 17, 33, 48, 95, 112};
    static const size_t lens[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 63, 64, 65, 79, 100, 112};
    enum { MAXM = sizeof aads / sizeof aads[0] * (sizeof lens / sizeof lens[0]) };
    static aeskit_aead_item ms[MAXM];
    static aeskit_span spans[MAXM];
    static uint8_t nonces[MAXM][12], pt[MAXM][112], ct[MAXM][112], sealed[MAXM][112];
    static uint8_t tags[MAXM][16], wtags[MAXM][16], aad[112];
    static aeskit_key k, kp;
    static aeskit_ghash_key hk, hkp;
    char d[128];
    for (size_t ksz = 16; ksz <= 32; ksz += 8) {
        uint8_t key[32], h[16] = {0}, hp[16] = {0};
        fill(key, sizeof key);
        fill(aad, sizeof aad);
        impl->set_key(&k, key, ksz);
        aeskit_portable_impl.set_key(&kp, key, ksz);
        impl->ecb_enc(&k, h, h, 1);
        aeskit_portable_impl.ecb_enc(&kp, hp, hp, 1);
        impl->ghash_key(&hk, h, AESKIT_GHASH_ANY);
        aeskit_portable_impl.ghash_key(&hkp, hp, AESKIT_GHASH_ANY);
        size_t n = 0;
        for (size_t a = 0; a < sizeof aads / sizeof aads[0]; a++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                if ((aads[a] + 15) / 16 + (lens[l] + 15) / 16 + 1 > AESKIT_GCM_SHORT_HASH)
                    continue;
                fill(nonces[n], 12);
                fill(pt[n], lens[l]);
                aeskit_gcm_oneshot(&kp, &hkp, 1, nonces[n], 12, aads[a] ? aad : NULL, aads[a],
                                   sealed[n], lens[l] ? pt[n] : NULL, lens[l], wtags[n], NULL);
                spans[n] = (aeskit_span){aad, aads[a]};
                /* positional: this file's src is a macro */
                ms[n] = (aeskit_aead_item){
                    {nonces[n], 12, aads[a] ? &spans[n] : NULL, aads[a] ? 1 : 0}, ct[n],
                    lens[l] ? pt[n] : NULL, lens[l], NULL};
                n++;
            }
        for (int enc = 1; enc >= 0; enc--) {
            impl->gcm_short(&k, &hk, enc, ms, n, tags);
            for (size_t i = 0; i < n; i++) {
                snprintf(d, sizeof d, "gcm_short key %zu aad %zu bytes %zu %s", 8 * ksz,
                         ms[i].m.n_ad ? ms[i].m.ad->len : 0, ms[i].len,
                         enc ? "seal" : "open");
                check(memcmp(ct[i], enc ? sealed[i] : pt[i], ms[i].len) == 0 &&
                          memcmp(tags[i], wtags[i], 16) == 0,
                      "slot", impl->name, d);
                if (enc)   /* open the ciphertext in place */
                    ms[i] = (aeskit_aead_item){ms[i].m, ct[i], ms[i].len ? ct[i] : NULL,
                                               ms[i].len, NULL};
            }
        }
    }
    aeskit_secure_zero(&k, sizeof k);
    aeskit_secure_zero(&hk, sizeof hk);
}

/* ---- 2. known answers ------------------------------------------------- */

#define MAXF 24

typedef struct {
    char name[MAXF][16];
    uint8_t *val[MAXF];
    char *raw[MAXF];   /* the value as written */
    size_t len[MAXF];
    int hex_ok[MAXF];
    size_t n;
    char section[160];
} record;

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void record_clear(record *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->val[i]);
        free(r->raw[i]);
    }
    r->n = 0;
    r->section[0] = 0;
}

static const uint8_t *field(const record *r, const char *name, size_t *len)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0 && r->hex_ok[i]) {
            if (len)
                *len = r->len[i];
            return r->val[i];
        }
    return NULL;
}

/* dst = s, cut to fit (names and sections are short; a long one is cut). */
static void copy_cut(char *dst, size_t cap, const char *s)
{
    size_t l = strlen(s);
    if (l >= cap)
        l = cap - 1;
    memcpy(dst, s, l);
    dst[l] = 0;
}

static const char *raw_field(const record *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return r->raw[i];
    return NULL;
}

/* Reads the next record ("name = value" lines up to a blank line; # lines
 * are comments). Returns 0 at the end of the file. */
static int record_read(FILE *f, record *r)
{
    static char line[1 << 17];
    record_clear(r);
    int any = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        size_t l = strlen(line);
        while (l > 0 && (line[l - 1] == '\n' || line[l - 1] == '\r' || line[l - 1] == ' '))
            line[--l] = 0;
        if (line[0] == '#')
            continue;
        if (l == 0) {
            if (any)
                return 1;
            continue;
        }
        char *eq = strstr(line, " =");
        if (eq == NULL)
            continue;
        *eq = 0;
        char *v = eq + 2;
        while (*v == ' ')
            v++;
        any = 1;
        if (strcmp(line, "section") == 0) {
            copy_cut(r->section, sizeof r->section, v);
            continue;
        }
        if (r->n == MAXF)
            continue;
        size_t i = r->n++;
        copy_cut(r->name[i], sizeof r->name[i], line);
        size_t vl = strlen(v);
        r->raw[i] = malloc(vl + 1);
        if (r->raw[i] != NULL)
            memcpy(r->raw[i], v, vl + 1);
        r->val[i] = malloc(vl / 2 + 1);
        r->len[i] = vl / 2;
        r->hex_ok[i] = vl % 2 == 0 && r->val[i] != NULL;
        for (size_t j = 0; r->hex_ok[i] && j < vl / 2; j++) {
            int hi = hexval(v[2 * j]), lo = hexval(v[2 * j + 1]);
            if (hi < 0 || lo < 0)
                r->hex_ok[i] = 0;
            else
                r->val[i][j] = (uint8_t)(hi << 4 | lo);
        }
    }
    return any;
}

static FILE *open_vec(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        failed++;
        fprintf(stderr, "FAIL cannot open %s\n", path);
    }
    return f;
}

static size_t kat_total;

/* SP 800-38A and FIPS-197: the mode comes from the file, the direction
 * from the section's name (Encrypt/Decrypt, Cipher/Inverse Cipher). */
static void kat_blocks(const char *dir, const struct aeskit_impl *impl)
{
    static const char *const files[] = {"fips197.txt", "sp800_38a_ecb.txt", "sp800_38a_cbc.txt",
                                        "sp800_38a_cfb128.txt", "sp800_38a_ofb.txt",
                                        "sp800_38a_ctr.txt"};
    record r = {0};
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        FILE *f = open_vec(dir, files[fi]);
        if (f == NULL)
            continue;
        while (record_read(f, &r)) {
            size_t kl = 0, pl = 0, cl = 0, il = 0;
            const uint8_t *key = field(&r, "key", &kl), *pt = field(&r, "plaintext", &pl),
                          *ct = field(&r, "ciphertext", &cl), *iv = field(&r, "iv", &il);
            if (key == NULL || pt == NULL || ct == NULL || pl != cl || pl % 16 != 0 ||
                (iv != NULL && il != 16)) {
                check(0, files[fi], impl->name, r.section);
                continue;
            }
            const int dec = strstr(r.section, "Decrypt") != NULL ||
                            strstr(r.section, "Inverse") != NULL;
            const uint8_t *in = dec ? ct : pt, *expect = dec ? pt : ct;
            const size_t n = pl / 16;
            uint8_t *out = malloc(pl + 1), chain[16];
            aeskit_key k;
            impl->set_key(&k, key, kl);
            if (iv != NULL)
                memcpy(chain, iv, 16);
            switch (fi) {
            case 0:
            case 1: (dec ? impl->ecb_dec : impl->ecb_enc)(&k, out, in, n); break;
            case 2: (dec ? impl->cbc_dec : impl->cbc_enc)(&k, chain, out, in, n); break;
            case 3: (dec ? impl->cfb_dec : impl->cfb_enc)(&k, chain, out, in, n); break;
            case 4: impl->ofb(&k, chain, out, in, n); break;
            case 5: impl->ctr(&k, AESKIT_CTR_BE128, chain, out, in, n); break;
            }
            check(memcmp(out, expect, pl) == 0, files[fi], impl->name, r.section);
            kat_total++;
            free(out);
        }
        fclose(f);
    }
    record_clear(&r);
}

static const struct aeskit_cipher *cipher_named(const char *name)
{
    for (size_t i = 0; aeskit_ciphers[i] != NULL; i++)
        if (strcmp(aeskit_ciphers[i]->name, name) == 0)
            return aeskit_ciphers[i];
    return NULL;
}

static void kat_xts(const char *dir, const struct aeskit_impl *impl)
{
    const struct aeskit_cipher *xts = cipher_named("XTS");
    record r = {0};
    if (xts == NULL || xts->oneshot == NULL) {
        check(0, "no XTS with a one-shot entry point", impl->name, "XTS");
        return;
    }
    FILE *f = open_vec(dir, "xts/ieee1619.txt");
    if (f == NULL)
        return;
    while (record_read(f, &r)) {
        size_t kl = 0, pl = 0, cl = 0, il = 0;
        const uint8_t *key = field(&r, "key", &kl), *pt = field(&r, "plaintext", &pl),
                      *ct = field(&r, "ciphertext", &cl), *iv = field(&r, "iv", &il);
        if (key == NULL || pt == NULL || ct == NULL || iv == NULL || pl != cl || il != 16 ||
            pl < 16 || (kl != 32 && kl != 64)) {
            check(0, "xts/ieee1619.txt", impl->name, r.section);
            continue;
        }
        aeskit_key keys[2];
        impl->set_key(&keys[0], key, kl / 2);
        impl->set_key(&keys[1], key + kl / 2, kl / 2);
        uint8_t *out = malloc(pl);
        xts->oneshot(keys, 1, iv, out, pt, pl);
        check(memcmp(out, ct, pl) == 0, "xts encrypt", impl->name, r.section);
        xts->oneshot(keys, 0, iv, out, ct, pl);
        check(memcmp(out, pt, pl) == 0, "xts decrypt", impl->name, r.section);
        kat_total += 2;
        free(out);
    }
    fclose(f);
    record_clear(&r);
}

static void kat_cmac(const char *dir, const struct aeskit_impl *impl)
{
    record r = {0};
    FILE *f = open_vec(dir, "mac/cmac.txt");
    if (f == NULL)
        return;
    while (record_read(f, &r)) {
        size_t kl = 0, ml = 0, tl = 0;
        const uint8_t *key = field(&r, "key", &kl), *msg = field(&r, "message", &ml),
                      *tag = field(&r, "tag", &tl);
        if (key == NULL || msg == NULL || tag == NULL || tl > 16) {
            check(0, "mac/cmac.txt", impl->name, r.section);
            continue;
        }
        aeskit_cmac_key ck;
        uint8_t out[16];
        aeskit_cmac_key_init(&ck, impl, key, kl);
        aeskit_cmac_oneshot(&ck, ml ? msg : NULL, ml, out);
        check(memcmp(out, tag, tl) == 0, "cmac", impl->name, r.section);
        kat_total++;
    }
    fclose(f);
    record_clear(&r);
}

static const struct aeskit_aead *aead_named(const char *name)
{
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        if (strcmp(aeskit_aeads[i]->name, name) == 0)
            return aeskit_aeads[i];
    return NULL;
}

static void kat_aead(const char *dir, const struct aeskit_impl *impl, const char *file,
                     const char *mode, size_t *skipped)
{
    const struct aeskit_aead *d = aead_named(mode);
    record r = {0};
    if (d == NULL) {
        check(0, "no such AEAD", impl->name, mode);
        return;
    }
    FILE *f = open_vec(dir, file);
    if (f == NULL)
        return;
    while (record_read(f, &r)) {
        size_t kl = 0, nl = 0, pl = 0, cl = 0, tl = 0, vl = 0;
        const uint8_t *key = field(&r, "key", &kl), *nonce = field(&r, "nonce", &nl),
                      *pt = field(&r, "plaintext", &pl), *ct = field(&r, "ciphertext", &cl),
                      *tag = field(&r, "tag", &tl), *valid = field(&r, "valid", &vl);
        aeskit_span ad[16];
        size_t n_ad = 0;
        const uint8_t *a = field(&r, "aad", &ad[0].len);
        const char *rep = raw_field(&r, "aad_repeat");
        uint8_t *long_aad = NULL;
        if (a != NULL) {
            ad[0].p = a;
            n_ad = 1;
            if (rep != NULL) {   /* "aad_repeat = 256" (decimal): the aad 256 times */
                const size_t times = (size_t)strtoul(rep, NULL, 10);
                long_aad = malloc(ad[0].len * times + 1);
                for (size_t i = 0; i < times; i++)
                    memcpy(long_aad + i * ad[0].len, a, ad[0].len);
                ad[0].p = long_aad;
                ad[0].len *= times;
            }
        } else {
            for (; n_ad < 16; n_ad++) {
                char name[8];
                snprintf(name, sizeof name, "ad%zu", n_ad);
                if ((ad[n_ad].p = field(&r, name, &ad[n_ad].len)) == NULL)
                    break;
            }
        }
        const size_t one = d->n_keys ? kl / d->n_keys : 0;
        if ((valid != NULL && (vl != 1 || valid[0] != 1)) ||
            (pt == NULL && ct == NULL)) {   /* another format (OCB3's iterated test) */
            (*skipped)++;
            free(long_aad);
            continue;
        }
        if (key == NULL || pt == NULL || ct == NULL || tag == NULL || pl != cl) {
            check(0, file, impl->name, r.section);
            free(long_aad);
            continue;
        }
        if (kl % d->n_keys || (one != 16 && one != 24 && one != 32) ||
            !(d->key_sizes & (one == 16 ? AESKIT_KEY128 : one == 24 ? AESKIT_KEY192
                                                                    : AESKIT_KEY256)) ||
            tl < 1 || tl > 16 || !(d->tag_lengths & AESKIT_TAG(tl)) ||
            (d->nonce_max == 0 ? nonce != NULL
                               : (nonce == NULL || nl < d->nonce_min || nl > d->nonce_max)) ||
            n_ad > (d->ad_list ? d->max_ad : 1)) {
            (*skipped)++;
            free(long_aad);
            continue;
        }
        for (size_t i = 0; i < n_ad; i++)
            if (ad[i].len == 0)
                ad[i].p = NULL;
        aeskit_aead_msg m = {nonce, nl, ad, n_ad};
        void *ks = malloc(d->key_state);
        uint8_t *out = malloc(pl + 1), full[16], expect[16];
        d->key_init(ks, impl, key, kl, (unsigned)tl);
        d->seal(ks, &m, out, pl ? pt : NULL, pl, full);
        check(memcmp(out, ct, pl) == 0 && memcmp(full, tag, tl) == 0, "seal", impl->name,
              r.section);
        d->open(ks, &m, out, pl ? ct : NULL, pl, tag, expect);
        check(memcmp(out, pt, pl) == 0 && memcmp(expect, tag, tl) == 0, "open", impl->name,
              r.section);
        kat_total += 2;
        aeskit_secure_zero(ks, d->key_state);
        free(ks);
        free(out);
        free(long_aad);
    }
    fclose(f);
    record_clear(&r);
}

static void kats(const char *dir, const struct aeskit_impl *impl)
{
    size_t skipped = 0, before = kat_total;
    kat_blocks(dir, impl);
    kat_xts(dir, impl);
    kat_cmac(dir, impl);
    kat_aead(dir, impl, "aead/gcm.txt", "GCM", &skipped);
    kat_aead(dir, impl, "aead/gcmsiv.txt", "GCM-SIV", &skipped);
    kat_aead(dir, impl, "aead/ccm.txt", "CCM", &skipped);
    kat_aead(dir, impl, "aead/eax.txt", "EAX", &skipped);
    kat_aead(dir, impl, "aead/ocb3.txt", "OCB3", &skipped);
    kat_aead(dir, impl, "aead/siv.txt", "SIV", &skipped);
    kat_aead(dir, impl, "aead/gcmsiv192.txt", "GCM-SIV", &skipped);
    kat_aead(dir, impl, "aead/xaes256gcm.txt", "XAES-256-GCM", &skipped);
    printf("%-12s known answers: %zu checked, %zu records skipped\n", impl->name,
           kat_total - before, skipped);
    /* a vector file read as nothing would pass vacuously */
    check(kat_total - before >= 100, "known answers read", impl->name, "too few");
}

/* --negative-control: a backend that is portable but for a CTR that
 * flips one bit in the tenth block; the slot checks must catch it (and
 * the program then fails), or they could not fail at all. */
static void broken_ctr(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                       uint8_t *dst, const uint8_t *s, size_t n)
{
    aeskit_portable_impl.ctr(k, kind, ctr, dst, s, n);
    if (n >= 10)
        dst[16 * 9 + 3] ^= 0x10;
}

static struct aeskit_impl broken;

static void negative_control(void)
{
    broken = aeskit_portable_impl;
    broken.name = "broken";
    broken.ctr = broken_ctr;
    slots_check(&broken);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *expect_best = NULL;
    int mask = 0, negative = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-best") == 0 && i + 1 < argc)
            expect_best = argv[++i];
        else if (strcmp(argv[i], "--mask-hwcap") == 0)
            mask = 1;
        else if (strcmp(argv[i], "--negative-control") == 0)
            negative = 1;
        else if (argv[i][0] != '-' && dir == NULL)
            dir = argv[i];
        else {
            fprintf(stderr, "usage: %s VECTOR_DIR [--expect-best NAME] [--mask-hwcap] [--negative-control]\n",
                    argv[0]);
            return 2;
        }
    }
    if (dir == NULL) {
        fprintf(stderr, "usage: %s VECTOR_DIR [--expect-best NAME] [--mask-hwcap] [--negative-control]\n", argv[0]);
        return 2;
    }
    if (mask) {
#if defined(MASK_HWCAP) && defined(__aarch64__)
        aeskit_cpu_detect_hwcap(getauxval(AT_HWCAP) & ~(HWCAP_AES | HWCAP_PMULL),
                                getauxval(AT_HWCAP2));
#elif defined(MASK_HWCAP)
        aeskit_cpu_detect_hwcap(getauxval(AT_HWCAP),
                                getauxval(AT_HWCAP2) & ~PPC_FEATURE2_VEC_CRYPTO);
#else
        fprintf(stderr, "--mask-hwcap: Linux aarch64 and POWER only\n");
        return 2;
#endif
    } else {
        aeskit_cpu_detect();
    }
    make_counts();
    if (negative) {
        negative_control();
        printf("%lu passed, %lu failed\n", passed, failed);
        return failed != 0;
    }

    const struct aeskit_impl *best = aeskit_impl_best();
    printf("backends compiled in:");
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        printf(" %s%s", aeskit_impls[i]->name,
               aeskit_impl_available(aeskit_impls[i]) ? "" : " (not on this CPU)");
    printf("; best: %s\n", best->name);
    if (expect_best != NULL)
        check(strcmp(best->name, expect_best) == 0, "dispatch picks", best->name, expect_best);
#if defined(AESKIT_HAVE_X86)
    /* aesni's two builds (aesni.h): by name, the VEX one wherever the OS
     * saves YMM state, else the SSE one; both are checked below. */
    if (aeskit_impl_available(&aeskit_aesni_impl)) {
        const int avx = (aeskit_cpu_features() & AESKIT_CPU_AVX) != 0;
        check(aeskit_impl_by_name("aesni") == (avx ? &aeskit_aesni_avx_impl : &aeskit_aesni_impl),
              "aesni by name", "aesni", avx ? "the VEX build" : "the SSE build");
        printf("aesni by name: the %s build\n", avx ? "VEX" : "SSE");
    }
#endif

    for (size_t i = 0; aeskit_impls[i] != NULL; i++) {
        const struct aeskit_impl *impl = aeskit_impls[i];
        if (!aeskit_impl_available(impl))
            continue;
        const unsigned long before = passed + failed;
        if (impl != &aeskit_portable_impl) {
            slots_check(impl);
            aead_check(impl);
            xaes_whole_check(impl);
            gcm_short_check(impl);
        }
        kats(dir, impl);
        printf("%-12s %lu checks\n", impl->name, passed + failed - before);
    }
    aeskit_secure_zero(&hk_a, sizeof hk_a);
    aeskit_secure_zero(&hk_b, sizeof hk_b);
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed != 0;
}
