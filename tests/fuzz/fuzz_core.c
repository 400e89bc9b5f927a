/*
 * fuzz_core.c: a coverage-guided differential fuzzer over the C core
 * (libFuzzer, clang -fsanitize=fuzzer,address,undefined; tests/fuzz/run.sh
 * builds and runs it).
 *
 * What one input does. Its first H_SIZE bytes (the header, below) choose a
 * mode from the registry (aeskit_ciphers, aeskit_aeads, aeskit_keywraps,
 * aeskit_macs: a mode added there is fuzzed with no change here), the key
 * size, the tag length, the data, AAD and nonce lengths, the split points
 * of a streaming call sequence (data and AAD), the offsets of the input and
 * output within a page, in place or not, and what to tamper with; the rest
 * (the payload, repeated as needed) fills the keys, IV or nonce, AAD, data
 * and tags. Every constraint of the descriptor (key sizes, nonce range, tag
 * lengths, whole blocks, min/max lengths, distinct XTS keys, wrap lengths,
 * sector sizes) is met by mapping the bytes into range, as the Python glue
 * would have refused the rest.
 *
 * The call sequence then runs through the same entry points the glue calls
 * (one-shot, or init/update.../finish cut at the split points, XTS sectors,
 * aeskit_aead_open_verified and aeskit_aead_finish_verified, KW wrap/unwrap,
 * CMAC mac/context/aeskit_mac_tag_ok) on every backend this CPU has, and:
 *   - every output byte, tag, count and status is compared with portable's
 *     (a transcript per backend);
 *   - decryption inverts encryption (unwrap inverts wrap);
 *   - a streaming call sequence gives what the one-shot call gives;
 *   - one flipped bit in the tag, data, associated data or nonce makes the
 *     open (unwrap, verify) fail, and a failed open leaves its output zeroed;
 *   - XTS sectors equal one data unit at a time;
 *   - where the descriptor has a many entry (a MAC's mac_many, a cipher's
 *     encrypt_many, an AEAD's seal_many and open_many: the multi-buffer
 *     kernels of the batch methods), the data cut at the split points into
 *     messages of unequal lengths, repeated 1..5 times each a byte shorter
 *     (more messages than a backend has lanes), gives in one call what one
 *     call per message gives, and one forged tag among them fails alone
 *     and zeroes only its own output.
 * A failed check prints what was run and what differed, then abort()s:
 * libFuzzer saves the input. Input and output sit in page-aligned regions
 * of which ASan sees only the bytes the call may touch (the rest poisoned),
 * and nonce, AAD and tags are exact-size allocations, so a read or write a
 * byte past any of them is reported too.
 *
 * Environment (read once): FUZZ_EXPECT_BACKENDS="aesni vaes_avx2 ..." fails
 * unless each is available (so that a run cannot pass without the kernels
 * it should have exercised); FUZZ_NEGATIVE_CONTROL=1 adds a backend that
 * is portable with one bit flipped in the ctr slot's tenth block, which
 * the seed corpus must catch (run.sh checks that it does); FUZZ_WRITE_SEEDS=DIR
 * writes the seed corpus (tests/fuzz/corpus) and exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

#include "common.h"
#include "dispatch.h"
#include "modes/aead.h"
#include "modes/block.h"
#include "modes/kw.h"
#include "modes/mac.h"

/* ---- the header ---------------------------------------------------------- */

enum {
    H_MODE = 0,        /* index into the registry, all families in turn */
    H_KEY = 1,         /* key size, among the mode's */
    H_TAG = 2,         /* tag length, among the mode's */
    H_FLAGS = 3,       /* F_* */
    H_TAMPER = 4,      /* what to flip: tag, data, AAD, nonce (& 3) */
    H_TAMPER_BIT = 5,  /* u16: which bit of it */
    H_LEN = 7,         /* u16: data length, modulo max_len + 1 */
    H_AAD_LEN = 9,     /* u16: AAD length, likewise */
    H_NONCE = 11,      /* nonce length, within the mode's range */
    H_SPLITS = 12,     /* low nibble: data split points (<= 8); high: AAD's */
    H_SOFF = 13,       /* u16: input offset within a page */
    H_DOFF = 15,       /* u16: output offset within a page */
    H_UNIT = 17,       /* XTS sector size: 16 * (1 + this % 64) */
    H_CUTS = 18,       /* 8 x u16: data split points */
    H_AAD_CUTS = 34,   /* 8 x u16: AAD split points (or item boundaries) */
    H_SIZE = 50,
};

enum {
    F_INPLACE = 1,     /* dst == src */
    F_STREAM = 2,      /* the streaming entry points, cut at the split points */
    F_DECRYPT = 4,     /* block ciphers: decrypt the data first */
    F_PKCS7 = 8,       /* ECB, CBC: PKCS#7 padding */
    F_SECTORS = 16,    /* XTS: data units end to end */
    F_NO_AD = 32,      /* AEAD: associated data None */
    F_ALIAS = 64,      /* AEAD one-shot: nonce and AAD inside the output */
};

#define MAX_CUTS 8
#define NONCE_CAP 64     /* nonce lengths tried, for a mode without a bound */
#define PAGE 4096

typedef struct {
    const uint8_t *h;            /* the header, H_SIZE bytes */
    const uint8_t *pay;          /* the payload */
    size_t pay_len, pay_pos;
} input;

static unsigned h8(const input *in, size_t at) { return in->h[at]; }
static unsigned h16(const input *in, size_t at) { return in->h[at] | in->h[at + 1] << 8; }

/* The next len bytes of the payload, repeated as needed (zeros if none). */
static void take(input *in, uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        out[i] = in->pay_len == 0 ? 0 : in->pay[in->pay_pos % in->pay_len];
        in->pay_pos++;
    }
}

/* ---- limits, buffers ------------------------------------------------------ */

static size_t max_len;           /* data bytes: past every batch and chunk */
static uint8_t *region[2];       /* input, output: page-aligned */
static size_t region_size;

static void widen_to(const aeskit_constant *c)
{
    for (; c != NULL && c->name != NULL; c++) {
        const size_t n = strlen(c->name);
        if (n > 7 && strcmp(c->name + n - 7, "_blocks") == 0 && c->value < 1024 &&
            16 * (c->value + 3) + 15 > max_len)
            max_len = 16 * (c->value + 3) + 15;
    }
}

/* ASan sees only [p, p + n) of the regions until unshield. */
static void shield(void)
{
    ASAN_POISON_MEMORY_REGION(region[0], region_size);
    ASAN_POISON_MEMORY_REGION(region[1], region_size);
}

static void expose(const uint8_t *p, size_t n)
{
    ASAN_UNPOISON_MEMORY_REGION(p, n);
}

static void unshield(void)
{
    ASAN_UNPOISON_MEMORY_REGION(region[0], region_size);
    ASAN_UNPOISON_MEMORY_REGION(region[1], region_size);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n == 0 ? 1 : n);
    if (p == NULL)
        abort();
    return p;
}

/* A copy in an allocation of exactly n bytes (ASan's bounds: exact). */
static uint8_t *exact(const uint8_t *p, size_t n)
{
    uint8_t *q = xmalloc(n);
    if (n > 0)
        memcpy(q, p, n);
    return q;
}

/* ---- what is being run, for the report ----------------------------------- */

static struct {
    const input *in;
    const char *mode, *backend, *step;
    unsigned key_bits, tag_len, flags, data_splits;
    int aead;
    size_t len, aad_len, nonce_len, soff, doff, unit;
    size_t cuts[MAX_CUTS + 1], n_cuts, aad_cuts[MAX_CUTS + 1], n_aad_cuts;
} now;

static void print_cuts(const char *what, const size_t *c, size_t n)
{
    fprintf(stderr, "  %s split into %zu call%s:", what, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %zu", c[i]);
    fprintf(stderr, "\n");
}

static void report_context(void)
{
    fprintf(stderr, "  mode %s, backend %s, step: %s\n", now.mode, now.backend, now.step);
    fprintf(stderr, "  key %u bits, data %zu bytes", now.key_bits, now.len);
    if (now.aead)
        fprintf(stderr, ", AAD %zu, nonce %zu", now.aad_len, now.nonce_len);
    if (now.tag_len)
        fprintf(stderr, ", tag %u", now.tag_len);
    if (now.unit)
        fprintf(stderr, ", sectors of %zu", now.unit);
    fprintf(stderr, "\n  input at page offset %zu, output at %zu%s%s%s%s%s%s\n", now.soff,
            now.doff, now.flags & F_INPLACE ? ", in place" : "",
            now.flags & F_STREAM ? ", streaming" : ", one-shot",
            now.flags & F_DECRYPT ? ", decrypt first" : "",
            now.flags & F_PKCS7 ? ", pkcs7" : "", now.flags & F_NO_AD ? ", AD None" : "",
            now.flags & F_ALIAS ? ", nonce/AAD inside the output" : "");
    if (now.flags & F_STREAM) {
        print_cuts("data", now.cuts, now.n_cuts);
        if (now.aead)
            print_cuts("AAD", now.aad_cuts, now.n_aad_cuts);
    }
}

static void hex(const char *what, const uint8_t *p, size_t n)
{
    fprintf(stderr, "    %s:", what);
    for (size_t i = 0; i < n && i < 32; i++)
        fprintf(stderr, " %02x", p[i]);
    fprintf(stderr, "%s\n", n > 32 ? " ..." : "");
}

#if defined(__GNUC__)
#define NORETURN __attribute__((noreturn))
#else
#define NORETURN
#endif

NORETURN static void fail(const char *what)
{
    fprintf(stderr, "\nfuzz_core: PROPERTY FAILED: %s\n", what);
    report_context();
    abort();
}

static void expect(int ok, const char *what)
{
    if (!ok)
        fail(what);
}

static int all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

/* ---- transcripts: everything a backend gave, compared with portable's ---- */

#define MAX_RECS 48

typedef struct {
    uint8_t *bytes;
    size_t used, cap, n;
    struct {
        const char *label;
        size_t at, len;
    } rec[MAX_RECS];
} transcript;

static transcript ref_t, cur_t, *tr;   /* tr: the one being written */

static void note(const char *label, const void *p, size_t len)
{
    if (tr->n == MAX_RECS || tr->used + len > tr->cap)
        fail("transcript overflow (a harness limit)");
    tr->rec[tr->n].label = label;
    tr->rec[tr->n].at = tr->used;
    tr->rec[tr->n].len = len;
    if (len > 0)
        memcpy(tr->bytes + tr->used, p, len);
    tr->used += len;
    tr->n++;
}

static void note_n(const char *label, uint64_t v)
{
    uint8_t b[8];
    aeskit_store_le64(b, v);
    note(label, b, 8);
}

static void compare_transcripts(void)
{
    for (size_t i = 0; i < ref_t.n || i < cur_t.n; i++) {
        const char *why = NULL;
        size_t at = 0;
        if (i >= ref_t.n || i >= cur_t.n || strcmp(ref_t.rec[i].label, cur_t.rec[i].label))
            why = "a different sequence of results";
        else if (ref_t.rec[i].len != cur_t.rec[i].len)
            why = "a different length";
        else
            for (; at < ref_t.rec[i].len; at++)
                if (ref_t.bytes[ref_t.rec[i].at + at] != cur_t.bytes[cur_t.rec[i].at + at]) {
                    why = "different bytes";
                    break;
                }
        if (why == NULL)
            continue;
        fprintf(stderr, "\nfuzz_core: MISMATCH with portable: %s\n", why);
        now.step = i < cur_t.n ? cur_t.rec[i].label : "(missing)";
        report_context();
        if (i < ref_t.n && i < cur_t.n) {
            fprintf(stderr, "  result '%s', %zu bytes, first difference at byte %zu\n",
                    ref_t.rec[i].label, ref_t.rec[i].len, at);
            const size_t from = at & ~(size_t)15;
            hex("portable", ref_t.bytes + ref_t.rec[i].at + from, ref_t.rec[i].len - from);
            hex(now.backend, cur_t.bytes + cur_t.rec[i].at + from, cur_t.rec[i].len - from);
        }
        abort();
    }
}

/* ---- split points ---------------------------------------------------------- */

/* The chunk lengths of total cut at the k points given by the header's
 * u16 values from offset at (each modulo total + 1, sorted): k + 1 chunks,
 * empty ones included. */
static size_t cut(const input *in, size_t at, unsigned k, size_t total, size_t *chunks)
{
    size_t pts[MAX_CUTS];
    for (unsigned i = 0; i < k; i++) {
        size_t v = h16(in, at + 2 * i) % (total + 1), j = i;
        for (; j > 0 && pts[j - 1] > v; j--)
            pts[j] = pts[j - 1];
        pts[j] = v;
    }
    size_t prev = 0;
    for (unsigned i = 0; i < k; i++) {
        chunks[i] = pts[i] - prev;
        prev = pts[i];
    }
    chunks[k] = total - prev;
    return k + 1;
}

/* ---- a call on the regions: input laid at its offset, output at its own ---- */

typedef struct {
    uint8_t *src, *dst;
} io;

/* Lays in (len bytes) at the input offset and marks out_len bytes of output
 * (in place: the same bytes, max(len, out_len) of them); only those stay
 * visible to ASan until release(). */
static io lay(const uint8_t *in, size_t len, size_t out_len)
{
    io r;
    r.src = region[0] + now.soff;
    r.dst = now.flags & F_INPLACE ? r.src : region[1] + now.doff;
    unshield();
    if (len > 0)
        memcpy(r.src, in, len);
    if (r.dst != r.src)
        memset(r.dst, 0xA5, out_len);
    shield();
    expose(r.src, len > out_len || r.dst != r.src ? len : out_len);
    expose(r.dst, out_len);
    return r;
}

static void release(void)
{
    unshield();
}

/* ---- many messages at once (the descriptors' *_many entries) ---------------- */

#define MANY_MAX 64   /* messages of one *_many call: past every backend's lanes */

typedef struct {
    size_t n;
    uint8_t *p[MANY_MAX];   /* each an exact allocation: ASan sees past it */
    size_t len[MANY_MAX];
} many_set;

/* The data as messages: the pieces at the data split points, repeated
 * 1 + h8(H_UNIT) % 5 times, the r-th repetition r bytes shorter, each
 * length rounded down to a multiple of unit; at most cap messages. */
static void many_messages(many_set *s, const uint8_t *data, size_t len, size_t unit, size_t cap)
{
    size_t cuts[MAX_CUTS + 1];
    const size_t pieces = cut(now.in, H_CUTS, now.data_splits, len, cuts);
    const unsigned reps = 1 + h8(now.in, H_UNIT) % 5;
    s->n = 0;
    for (unsigned r = 0; r < reps; r++) {
        size_t at = 0;
        for (size_t c = 0; c < pieces && s->n < cap && s->n < MANY_MAX; c++) {
            size_t k = cuts[c] > r ? cuts[c] - r : 0;
            k -= k % unit;
            s->p[s->n] = exact(data + at, k);
            s->len[s->n++] = k;
            at += cuts[c];
        }
    }
}

static void many_free(many_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    s->n = 0;
}

/* ---- streaming with cuts (block ciphers and AEADs alike) ------------------- */

typedef struct streamer {
    size_t (*out_len)(struct streamer *s, size_t len);
    size_t (*update)(struct streamer *s, uint8_t *dst, const uint8_t *src, size_t len);
    const struct aeskit_cipher *cd;
    void *cst;
    const struct aeskit_aead *ad;
    void *ast;
} streamer;

static size_t cipher_out_len(streamer *s, size_t len) { return s->cd->out_len(s->cst, len); }
static size_t cipher_update(streamer *s, uint8_t *dst, const uint8_t *src, size_t len)
{
    return s->cd->update(s->cst, dst, src, len);
}
static size_t aead_out_len(streamer *s, size_t len)
{
    return s->ad->update_len != NULL ? s->ad->update_len(s->ast, len) : len;
}
static size_t aead_update(streamer *s, uint8_t *dst, const uint8_t *src, size_t len)
{
    return s->ad->update(s->ast, dst, src, len);
}

/* The updates of in (len bytes) cut at the data split points, as
 * update_into calls make them: in place, each call's output over its own
 * input; else input and output each contiguous at their offsets. out gets
 * the output; returns its length. */
static size_t drive(streamer *s, const uint8_t *in, size_t len, uint8_t *out)
{
    size_t pos = 0, made = 0, cuts[MAX_CUTS + 1];
    const size_t n_cuts = cut(now.in, H_CUTS, now.data_splits, len, cuts);
    for (size_t c = 0; c < n_cuts; c++) {
        const size_t n = cuts[c], want = s->out_len(s, n);
        uint8_t *src, *dst;
        unshield();
        if (now.flags & F_INPLACE) {
            src = dst = region[0] + now.soff;
            if (n > 0)
                memcpy(src, in + pos, n);
        } else {
            src = region[0] + now.soff + pos;
            dst = region[1] + now.doff + made;
            if (n > 0)
                memcpy(src, in + pos, n);
            memset(dst, 0xA5, want);
        }
        shield();
        expose(src, n);
        expose(dst, want);
        const size_t got = s->update(s, dst, src, n);
        release();
        expect(got == want, "update wrote another count than its out_len said");
        memcpy(out + made, dst, want);
        pos += n;
        made += want;
    }
    assert(pos == len);
    return made;
}

/* ---- block ciphers --------------------------------------------------------- */

typedef struct {
    const struct aeskit_cipher *d;
    aeskit_key keys[2];
    const uint8_t *iv;
    int pkcs7;
} cipher_run;

/* One message in the direction enc, as the glue runs it (one-shot or a
 * stream cut at the split points); out gets the output (room: len + 32), *n its
 * length; returns how it finished. */
static enum aeskit_finish cipher_pass(cipher_run *c, int enc, const uint8_t *in, size_t len,
                                      uint8_t *out, size_t *n)
{
    const struct aeskit_cipher *d = c->d;
    enum aeskit_finish end;
    size_t tail = 0;
    if (!(now.flags & F_STREAM)) {
        const size_t cap = c->pkcs7 && enc ? len / 16 * 16 + 16 : len;
        io b = lay(in, len, cap);
        if (d->oneshot != NULL && !c->pkcs7) {
            d->oneshot(c->keys, enc, c->iv, b.dst, b.src, len);
            end = AESKIT_FINISH_OK;
            *n = len;
        } else {
            void *st = xmalloc(d->state);   /* its size exactly: ASan sees past it */
            d->init(st, c->keys, enc, c->iv);
            if (c->pkcs7)
                d->pkcs7(st);
            const size_t done = d->update(st, b.dst, b.src, len);
            end = d->finish(st, b.dst + done, &tail);
            *n = done + tail;
            free(st);
        }
        release();
        memcpy(out, b.dst, cap);
        return end;
    }
    streamer s = {.out_len = cipher_out_len, .update = cipher_update, .cd = d};
    s.cst = xmalloc(d->state);
    d->init(s.cst, c->keys, enc, c->iv);
    if (c->pkcs7)
        d->pkcs7(s.cst);
    const size_t made = drive(&s, in, len, out);
    uint8_t *fin = xmalloc(AESKIT_FINISH_MAX);   /* the glue's tail buffer */
    memset(fin, 0, AESKIT_FINISH_MAX);
    end = d->finish(s.cst, fin, &tail);
    free(s.cst);
    if (end == AESKIT_FINISH_OK)
        memcpy(out + made, fin, tail);
    free(fin);
    *n = made + (end == AESKIT_FINISH_OK ? tail : 0);
    return end;
}

/* XTS-style data units end to end: the whole call, then one unit at a time
 * through the one-shot path (the unit numbers as the tweaks). */
static void cipher_sectors(cipher_run *c, int enc, const uint8_t first[16], const uint8_t *in,
                           size_t len, uint8_t *out)
{
    const struct aeskit_cipher *d = c->d;
    now.step = enc ? "sectors, encrypt" : "sectors, decrypt";
    io b = lay(in, len, len);
    d->sectors(c->keys, enc, first, now.unit, b.dst, b.src, len);
    release();
    memcpy(out, b.dst, len);
    uint8_t tweak[16], *one = xmalloc(now.unit);
    memcpy(tweak, first, 16);
    const unsigned flags = now.flags;
    now.flags &= ~(unsigned)F_STREAM;
    for (size_t at = 0; at < len; at += now.unit) {
        size_t n;
        const uint8_t *save = c->iv;
        c->iv = tweak;
        cipher_pass(c, enc, in + at, now.unit, one, &n);
        c->iv = save;
        expect(memcmp(one, out + at, now.unit) == 0,
               "sectors differ from one data unit at a time");
        for (unsigned i = 0; i < 16 && ++tweak[i] == 0; i++)
            ;
    }
    now.flags = flags;
    free(one);
}

static void fuzz_cipher(const struct aeskit_cipher *d, const struct aeskit_impl *impl,
                        const uint8_t *key, size_t each, const uint8_t *iv, const uint8_t *data,
                        size_t len, const uint8_t *first)
{
    cipher_run c = {.d = d, .iv = iv, .pkcs7 = d->pkcs7 != NULL && (now.flags & F_PKCS7)};
    for (unsigned k = 0; k < d->n_keys; k++)
        impl->set_key(&c.keys[k], key + each * k, each);
    uint8_t *out = xmalloc(len + 32), *back = xmalloc(len + 64);
    if (now.unit != 0) {
        const int enc = !(now.flags & F_DECRYPT);
        cipher_sectors(&c, enc, first, data, len, out);
        note(now.step, out, len);
        cipher_sectors(&c, !enc, first, out, len, back);
        expect(memcmp(back, data, len) == 0, "sectors: decryption does not invert encryption");
    } else {
        const int enc = !(now.flags & F_DECRYPT);
        size_t n, m;
        now.step = enc ? "encrypt" : "decrypt";
        const enum aeskit_finish end = cipher_pass(&c, enc, data, len, out, &n);
        note_n("finish status", (uint64_t)end);
        note_n("output length", n);
        note(now.step, out, n);
        if (end == AESKIT_FINISH_OK) {
            now.step = enc ? "decrypt what was encrypted" : "encrypt what was decrypted";
            const enum aeskit_finish back_end = cipher_pass(&c, !enc, out, n, back, &m);
            expect(back_end == AESKIT_FINISH_OK && m == len && memcmp(back, data, len) == 0,
                   "decryption does not invert encryption");
        } else {
            expect(c.pkcs7 && !enc && end == AESKIT_FINISH_PADDING,
                   "a stream of valid length did not finish");
        }
    }
    if (d->encrypt_many != NULL && now.unit == 0) {
        /* one call over many messages against one-shot encryptions; in
         * place (dst = src) with F_INPLACE */
        now.step = "encrypt_many (against one message at a time)";
        many_set s;
        many_messages(&s, data, len, c.pkcs7 || !d->whole_blocks ? 1 : 16, AESKIT_CIPHER_MANY);
        aeskit_block_item items[MANY_MAX];
        uint8_t *dst[MANY_MAX];
        for (size_t i = 0; i < s.n; i++) {
            dst[i] = xmalloc(c.pkcs7 ? s.len[i] / 16 * 16 + 16 : s.len[i]);
            if (now.flags & F_INPLACE)
                memcpy(dst[i], s.p[i], s.len[i]);
            const uint8_t *src = now.flags & F_INPLACE ? dst[i] : s.p[i];
            items[i] = (aeskit_block_item){c.iv, dst[i], src, s.len[i]};
        }
        d->encrypt_many(c.keys, c.pkcs7, items, s.n);
        for (size_t i = 0; i < s.n; i++) {
            size_t tail;
            void *st = xmalloc(d->state);
            d->init(st, c.keys, 1, c.iv);
            if (c.pkcs7)
                d->pkcs7(st);
            const size_t done = d->update(st, out, s.p[i], s.len[i]);
            expect(d->finish(st, out + done, &tail) == AESKIT_FINISH_OK,
                   "a one-shot encryption did not finish");
            free(st);
            expect(memcmp(out, dst[i], done + tail) == 0,
                   "encrypt_many differs from one message at a time");
            free(dst[i]);
        }
        many_free(&s);
    }
    aeskit_secure_zero(c.keys, sizeof c.keys);
    free(out);
    free(back);
}

/* ---- AEADs ----------------------------------------------------------------- */

typedef struct {
    const struct aeskit_aead *d;
    void *ks;
    aeskit_aead_msg m;
    unsigned tag_len;
    const uint8_t *data;   /* the message, for aead_many */
    size_t len;
} aead_run;

/* A streaming pass: init, the AAD cut at now.aad_cuts, the data at
 * the data split points; enc: *ok unused and tag gets the full tag; else want
 * (tag_len bytes) is checked by aeskit_aead_finish_verified, whose verdict
 * is *ok and whose held-back bytes are checked zeroed on failure. out gets
 * everything written; returns its length. */
static size_t aead_stream(aead_run *a, int enc, const uint8_t *aad, size_t aad_len,
                          const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[16],
                          const uint8_t *want, int *ok)
{
    const struct aeskit_aead *d = a->d;
    streamer s = {.out_len = aead_out_len, .update = aead_update, .ad = d};
    s.ast = xmalloc(d->stream_state);
    d->init(s.ast, a->ks, enc, a->m.nonce, a->m.nonce_len);
    size_t at = 0;
    for (size_t i = 0; i < now.n_aad_cuts; i++) {
        uint8_t *piece = exact(aad + at, now.aad_cuts[i]);
        d->aad(s.ast, piece, now.aad_cuts[i]);
        free(piece);
        at += now.aad_cuts[i];
    }
    assert(at == aad_len);
    size_t made = drive(&s, in, len, out), n;
    uint8_t *fin = xmalloc(16);   /* the glue's tail buffer */
    if (enc) {
        n = d->finish(s.ast, fin, tag);
    } else {
        uint8_t *w = exact(want, a->tag_len);
        *ok = aeskit_aead_finish_verified(d, s.ast, fin, w, a->tag_len, &n);
        free(w);
        if (!*ok)
            expect(all_zero(fin, n), "a failed streaming open left its last bytes");
    }
    expect(n < 16, "finish held back 16 bytes or more");
    memcpy(out + made, fin, n);
    free(fin);
    aeskit_secure_zero(s.ast, d->stream_state);
    free(s.ast);
    return made + n;
}

/* The nonce and the AAD items copied inside dst's len bytes where they fit
 * (F_ALIAS: the glue lets a caller's buf hold them); a message whose
 * pointers point there, in m (items in spans). */
static void alias_into(const aead_run *a, uint8_t *dst, size_t len, aeskit_aead_msg *m,
                       aeskit_span *spans)
{
    size_t at = 0;
    *m = a->m;
    if (a->m.nonce_len > 0 && a->m.nonce_len <= len) {
        memcpy(dst, a->m.nonce, a->m.nonce_len);
        m->nonce = dst;
        at = a->m.nonce_len;
    }
    for (size_t i = 0; i < a->m.n_ad; i++) {
        spans[i] = a->m.ad[i];
        if (spans[i].len > 0 && spans[i].len <= len - at) {
            memcpy(dst + at, spans[i].p, spans[i].len);
            spans[i].p = dst + at;
            at += spans[i].len;
        }
    }
    m->ad = spans;
}

/* A one-shot message's buffers: the data laid out as the input says, and
 * with alias the nonce and associated data moved into dst's bytes (a mode
 * reads them all before it writes dst). */
static io lay_message(aead_run *a, const uint8_t *data, size_t len, aeskit_aead_msg *m,
                      aeskit_span *spans, int alias)
{
    io b = lay(data, len, len);
    if (alias) {
        unshield();
        alias_into(a, b.dst, len, m, spans);
        shield();
        expose(b.src, len);
        expose(b.dst, len);
    }
    return b;
}

/* One-shot seal of data: ct (len bytes) and the full tag. */
static void aead_seal(aead_run *a, const uint8_t *data, size_t len, uint8_t *ct,
                      uint8_t tag[16], int alias)
{
    const struct aeskit_aead *d = a->d;
    uint8_t *t = xmalloc(16);
    aeskit_span spans[MAX_CUTS + 1];
    aeskit_aead_msg m = a->m;
    io b = lay_message(a, data, len, &m, spans, alias);
    d->seal(a->ks, &m, b.dst, b.src, len, t);
    release();
    memcpy(ct, b.dst, len);
    memcpy(tag, t, 16);
    free(t);
}

/* One-shot verified open of ct with want (tag_len bytes): the verdict;
 * out gets what dst held after it. */
static int aead_open(aead_run *a, const uint8_t *ct, size_t len, const uint8_t *want,
                     uint8_t *out, int alias)
{
    uint8_t *w = exact(want, a->tag_len);
    aeskit_span spans[MAX_CUTS + 1];
    aeskit_aead_msg m = a->m;
    io b = lay_message(a, ct, len, &m, spans, alias);
    const int ok = aeskit_aead_open_verified(a->d, a->ks, &m, b.dst, b.src, len, w, a->tag_len);
    release();
    memcpy(out, b.dst, len);
    free(w);
    return ok;
}

/* Many messages through aeskit_aead_seal_many and
 * aeskit_aead_open_many_verified (seal_many and open_many, or one call per
 * message where a descriptor has only one of them) against one seal per
 * message; then one tag flipped (the payload's first tag bit picks which
 * message and bit) fails that message alone and zeroes its output. */
static void aead_many(aead_run *a, const uint8_t *some_tag)
{
    const struct aeskit_aead *d = a->d;
    const unsigned t = a->tag_len;
    many_set s;
    now.step = "seal_many (against one seal per message)";
    many_messages(&s, a->data, a->len, 1, AESKIT_AEAD_MANY);
    aeskit_aead_item items[AESKIT_AEAD_MANY];
    uint8_t tags[AESKIT_AEAD_MANY][16], one[16], ok[AESKIT_AEAD_MANY];
    uint8_t *ct[AESKIT_AEAD_MANY], *pt[AESKIT_AEAD_MANY], *tg[AESKIT_AEAD_MANY];
    for (size_t i = 0; i < s.n; i++) {
        ct[i] = xmalloc(s.len[i] + 1);
        pt[i] = xmalloc(s.len[i] + 1);
        items[i] = (aeskit_aead_item){.m = a->m, .dst = ct[i], .src = s.p[i], .len = s.len[i]};
    }
    aeskit_aead_seal_many(d, a->ks, items, s.n, tags);
    for (size_t i = 0; i < s.n; i++) {
        uint8_t *want = xmalloc(s.len[i] + 1);
        d->seal(a->ks, &a->m, want, s.p[i], s.len[i], one);
        expect(memcmp(want, ct[i], s.len[i]) == 0 && memcmp(one, tags[i], 16) == 0,
               "seal_many differs from one seal per message");
        free(want);
        tg[i] = exact(tags[i], t);
    }
    now.step = "open_many what seal_many sealed";
    for (size_t i = 0; i < s.n; i++)
        items[i] = (aeskit_aead_item){
            .m = a->m, .dst = pt[i], .src = ct[i], .len = s.len[i], .tag = tg[i]};
    size_t failed = aeskit_aead_open_many_verified(d, a->ks, items, s.n, t, ok);
    expect(failed == 0, "open_many refused what seal_many sealed");
    for (size_t i = 0; i < s.n; i++)
        expect(ok[i] == 1 && memcmp(pt[i], s.p[i], s.len[i]) == 0,
               "open_many does not invert seal_many");
    if (s.n > 0) {
        now.step = "open_many with one tag flipped";
        const size_t bad = some_tag[0] % s.n;
        tg[bad][some_tag[1] % t] ^= (uint8_t)(1u << some_tag[2] % 8);
        failed = aeskit_aead_open_many_verified(d, a->ks, items, s.n, t, ok);
        expect(failed == 1, "open_many: not exactly the forged message failed");
        for (size_t i = 0; i < s.n; i++) {
            expect(ok[i] == (i != bad), "open_many: a wrong verdict");
            expect(i == bad ? all_zero(pt[i], s.len[i])
                            : memcmp(pt[i], s.p[i], s.len[i]) == 0,
                   "open_many: a failed message unzeroed, or a good one lost");
        }
    }
    for (size_t i = 0; i < s.n; i++) {
        free(ct[i]);
        free(pt[i]);
        free(tg[i]);
    }
    many_free(&s);
}

static void fuzz_aead(const struct aeskit_aead *d, const input *in,
                      const struct aeskit_impl *impl, const uint8_t *key, size_t key_len,
                      const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                      const aeskit_span *ad, size_t n_ad, const uint8_t *data, size_t len,
                      const uint8_t *rtag)
{
    aead_run a = {.d = d, .tag_len = now.tag_len, .data = data, .len = len};
    a.ks = xmalloc(d->key_state);
    d->key_init(a.ks, impl, key, key_len, a.tag_len);
    a.m.nonce = d->nonce_max > 0 ? nonce : NULL;
    a.m.nonce_len = now.nonce_len;
    a.m.ad = ad;
    a.m.n_ad = n_ad;
    const int streams = d->init != NULL && (now.flags & F_STREAM);
    const int alias = (now.flags & F_ALIAS) != 0;
    const unsigned t = a.tag_len;
    uint8_t *ct = xmalloc(len + 16), *pt = xmalloc(len + 16), *tmp = xmalloc(len + 16);
    uint8_t tag[16], tag2[16];
    int ok;

    now.step = "seal";
    aead_seal(&a, data, len, ct, tag, alias);
    note("ciphertext", ct, len);
    note("tag (all 16 bytes)", tag, 16);
    if (alias) {
        now.step = "seal, nonce and AAD apart (against the aliased one)";
        aead_seal(&a, data, len, tmp, tag2, 0);
        expect(memcmp(tmp, ct, len) == 0 && memcmp(tag2, tag, 16) == 0,
               "a seal with nonce/AAD inside the output differs");
    }
    if (streams) {
        now.step = "streaming seal (against the one-shot seal)";
        const size_t n = aead_stream(&a, 1, aad, aad_len, data, len, tmp, tag2, NULL, &ok);
        expect(n == len && memcmp(tmp, ct, len) == 0 && memcmp(tag2, tag, 16) == 0,
               "a streaming seal differs from the one-shot seal");
    }

    now.step = "open what was sealed";
    ok = aead_open(&a, ct, len, tag, pt, alias);
    expect(ok == 1 && memcmp(pt, data, len) == 0, "open does not invert seal");
    if (streams) {
        now.step = "streaming open what was sealed";
        const size_t n = aead_stream(&a, 0, aad, aad_len, ct, len, pt, NULL, tag, &ok);
        expect(ok == 1 && n == len && memcmp(pt, data, len) == 0,
               "a streaming open does not invert seal");
    }

    /* one bit flipped: in the tag, or (a tag of at least 8 bytes, so that a
     * forgery by chance is beyond any run) the data, AAD or nonce */
    const unsigned bit = h16(in, H_TAMPER_BIT);
    unsigned target = t >= 8 ? h8(in, H_TAMPER) & 3 : 0;
    if ((target == 1 && len == 0) || (target == 2 && aad_len == 0) ||
        (target == 3 && a.m.nonce_len == 0))
        target = 0;
    static const char *const flipped[] = {"open with a flipped tag bit",
                                          "open with a flipped data bit",
                                          "open with a flipped AAD bit",
                                          "open with a flipped nonce bit"};
    now.step = flipped[target];
    uint8_t bad_tag[16], *bad_aad = exact(aad, aad_len), *bad_nonce = NULL;
    aeskit_span bad_ad[MAX_CUTS + 1];
    aead_run b = a;
    memcpy(bad_tag, tag, 16);
    memcpy(tmp, ct, len);
    if (target == 0) {
        bad_tag[bit / 8 % t] ^= (uint8_t)(1u << bit % 8);
    } else if (target == 1) {
        tmp[bit / 8 % len] ^= (uint8_t)(1u << bit % 8);
    } else if (target == 2) {
        bad_aad[bit / 8 % aad_len] ^= (uint8_t)(1u << bit % 8);
        size_t at = 0;
        for (size_t i = 0; i < n_ad; i++) {
            bad_ad[i].p = bad_aad + at;
            bad_ad[i].len = ad[i].len;
            at += ad[i].len;
        }
        b.m.ad = bad_ad;
    } else {
        bad_nonce = exact(nonce, a.m.nonce_len);
        bad_nonce[bit / 8 % a.m.nonce_len] ^= (uint8_t)(1u << bit % 8);
        b.m.nonce = bad_nonce;
    }
    ok = aead_open(&b, tmp, len, bad_tag, pt, 0);
    expect(ok == 0, "a tampered message opened");
    expect(all_zero(pt, len), "a failed open left its output unzeroed");
    note_n("verdict on the tampered message", (uint64_t)ok);
    if (streams) {
        size_t n = aead_stream(&b, 0, bad_aad, aad_len, tmp, len, pt, NULL, bad_tag, &ok);
        (void)n;
        expect(ok == 0, "a tampered message opened (streaming)");
    }
    free(bad_aad);
    free(bad_nonce);

    if (d->seal_many != NULL || d->open_many != NULL)
        aead_many(&a, tag);

    /* the data opened under the payload's tag: the kernels under a
     * caller-chosen tag (GCM-SIV's and SIV's counters come from it) */
    now.step = "raw open of the data under the payload's tag";
    uint8_t expect_tag[16];
    uint8_t *w = exact(rtag, t);
    io r = lay(data, len, len);
    d->open(a.ks, &a.m, r.dst, r.src, len, w, expect_tag);
    release();
    note("raw open: plaintext", r.dst, len);
    note("raw open: expected tag", expect_tag, 16);
    free(w);

    aeskit_secure_zero(a.ks, d->key_state);
    free(a.ks);
    free(ct);
    free(pt);
    free(tmp);
}

/* ---- key wrap -------------------------------------------------------------- */

static void fuzz_keywrap(const struct aeskit_keywrap *d, const input *in,
                         const struct aeskit_impl *impl, const uint8_t *key, size_t key_len,
                         const uint8_t *data, size_t len)
{
    aeskit_key k;
    impl->set_key(&k, key, key_len);
    const size_t wl = d->wrapped_len(len);
    uint8_t *w = xmalloc(wl), *back = xmalloc(wl);
    now.step = "wrap";
    io b = lay(data, len, wl);
    d->wrap(&k, b.dst, b.src, len);
    release();
    memcpy(w, b.dst, wl);
    note("wrapped", w, wl);

    now.step = "unwrap what was wrapped";
    b = lay(w, wl, wl - 8);
    size_t n = d->unwrap(&k, b.dst, b.src, wl);
    release();
    expect(n == len && memcmp(b.dst, data, len) == 0, "unwrap does not invert wrap");

    now.step = "unwrap with a flipped bit";
    const unsigned bit = h16(in, H_TAMPER_BIT) % (8 * wl);
    w[bit / 8] ^= (uint8_t)(1u << bit % 8);
    b = lay(w, wl, wl - 8);
    n = d->unwrap(&k, b.dst, b.src, wl);
    release();
    memcpy(back, b.dst, wl - 8);
    expect(n == 0, "a tampered wrapped key unwrapped");
    expect(all_zero(back, wl - 8), "a failed unwrap left its output unzeroed");
    note_n("unwrap of the tampered key", n);
    aeskit_secure_zero(&k, sizeof k);
    free(w);
    free(back);
}

/* ---- MACs ------------------------------------------------------------------ */

static void fuzz_mac(const struct aeskit_mac *d, const input *in,
                     const struct aeskit_impl *impl, const uint8_t *key, size_t key_len,
                     const uint8_t *data, size_t len)
{
    void *ks = xmalloc(d->key_state);
    d->key_init(ks, impl, key, key_len);
    const unsigned t = now.tag_len;
    uint8_t full[16], other[16];
    now.step = "mac";
    io b = lay(data, len, 0);
    d->mac(ks, b.src, len, full);
    release();
    note("tag (all 16 bytes)", full, 16);

    if (now.flags & F_STREAM) {
        /* the context, cut at the split points, a digest after the first
         * piece (which must not end it) */
        now.step = "context (against the one-shot mac)";
        void *st = xmalloc(d->state);
        d->init(st, ks);
        size_t at = 0;
        for (size_t c = 0; c < now.n_cuts; c++) {
            uint8_t *piece = exact(data + at, now.cuts[c]);
            d->update(st, piece, now.cuts[c]);
            free(piece);
            at += now.cuts[c];
            if (c == 0) {
                d->final(st, other);
                uint8_t prefix[16];
                d->mac(ks, data, at, prefix);
                expect(memcmp(other, prefix, 16) == 0, "a digest of the first piece differs "
                                                       "from the one-shot mac of it");
            }
        }
        d->final(st, other);
        expect(memcmp(other, full, 16) == 0, "the context differs from the one-shot mac");
        aeskit_secure_zero(st, d->state);
        free(st);
    }

    now.step = "verify";
    uint8_t *tag = exact(full, t);
    expect(aeskit_mac_tag_ok(full, tag, t, t), "verify refused the right tag");
    const unsigned bit = h16(in, H_TAMPER_BIT);
    if (t < 16)
        expect(!aeskit_mac_tag_ok(full, full, t + 1, t), "verify took a longer tag");
    expect(!aeskit_mac_tag_ok(full, tag, t - 1, t), "verify took a truncated tag");
    if (t >= 8 && len > 0 && (h8(in, H_TAMPER) & 1)) {
        now.step = "verify with a flipped data bit";
        uint8_t *bad = exact(data, len);
        bad[bit / 8 % len] ^= (uint8_t)(1u << bit % 8);
        d->mac(ks, bad, len, other);
        free(bad);
        expect(!aeskit_mac_tag_ok(other, tag, t, t), "a tampered message verified");
    } else {
        now.step = "verify with a flipped tag bit";
        tag[bit / 8 % t] ^= (uint8_t)(1u << bit % 8);
        expect(!aeskit_mac_tag_ok(full, tag, t, t), "a tampered tag verified");
    }
    free(tag);
    if (d->mac_many != NULL) {
        now.step = "mac_many (against one mac per message)";
        many_set s;
        many_messages(&s, data, len, 1, AESKIT_MAC_MANY);
        aeskit_span msgs[MANY_MAX];
        uint8_t tags[MANY_MAX][16];
        for (size_t i = 0; i < s.n; i++)
            msgs[i] = (aeskit_span){s.p[i], s.len[i]};
        d->mac_many(ks, msgs, s.n, tags);
        for (size_t i = 0; i < s.n; i++) {
            d->mac(ks, s.p[i], s.len[i], other);
            expect(memcmp(other, tags[i], 16) == 0, "mac_many differs from one mac per message");
        }
        many_free(&s);
    }
    aeskit_secure_zero(ks, d->key_state);
    free(ks);
}

/* ---- choosing within a descriptor's ranges --------------------------------- */

/* The sel-th (modulo their count) key size of mask, in bytes. */
static size_t key_size(unsigned mask, unsigned sel)
{
    size_t sizes[3], n = 0;
    for (unsigned i = 0; i < 3; i++)
        if (mask >> i & 1)
            sizes[n++] = 16 + 8 * i;
    return sizes[sel % n];
}

/* The sel-th (modulo their count) tag length of mask. */
static unsigned tag_length(uint32_t mask, unsigned sel)
{
    unsigned lens[16], n = 0;
    for (unsigned t = 1; t <= 16; t++)
        if (mask >> t & 1)
            lens[n++] = t;
    return lens[sel % n];
}

static size_t n_modes(void)
{
    size_t n = 0;
    for (size_t i = 0; aeskit_ciphers[i] != NULL; i++)
        n++;
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        n++;
    for (size_t i = 0; aeskit_keywraps[i] != NULL; i++)
        n++;
    for (size_t i = 0; aeskit_macs[i] != NULL; i++)
        n++;
    return n;
}

/* Mode number sel (modulo their count), one family after another: exactly
 * one of the four is set. */
static void pick_mode(size_t sel, const struct aeskit_cipher **c, const struct aeskit_aead **a,
                      const struct aeskit_keywrap **k, const struct aeskit_mac **m)
{
    sel %= n_modes();
    *c = NULL, *a = NULL, *k = NULL, *m = NULL;
    for (size_t i = 0; aeskit_ciphers[i] != NULL; i++)
        if (sel-- == 0) {
            *c = aeskit_ciphers[i];
            return;
        }
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        if (sel-- == 0) {
            *a = aeskit_aeads[i];
            return;
        }
    for (size_t i = 0; aeskit_keywraps[i] != NULL; i++)
        if (sel-- == 0) {
            *k = aeskit_keywraps[i];
            return;
        }
    for (size_t i = 0; aeskit_macs[i] != NULL; i++)
        if (sel-- == 0) {
            *m = aeskit_macs[i];
            return;
        }
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* ---- the negative control ---------------------------------------------------- */

static int negative_control;
static struct aeskit_impl broken;

static void broken_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    aeskit_portable_impl.set_key(k, key, len);
    k->impl = &broken;
}

static void broken_ctr(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                       uint8_t *dst, const uint8_t *src, size_t n)
{
    aeskit_portable_impl.ctr(k, kind, ctr, dst, src, n);
    if (n >= 10)
        dst[9 * 16 + 5] ^= 0x10;
}

/* ---- one input -------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    uint8_t hdr[H_SIZE] = {0};
    memcpy(hdr, bytes, min_size(size, H_SIZE));
    input in = {.h = hdr, .pay = bytes + min_size(size, H_SIZE),
                .pay_len = size - min_size(size, H_SIZE)};
    const struct aeskit_cipher *cd;
    const struct aeskit_aead *ad;
    const struct aeskit_keywrap *kd;
    const struct aeskit_mac *md;
    pick_mode(h8(&in, H_MODE), &cd, &ad, &kd, &md);

    memset(&now, 0, sizeof now);
    now.flags = h8(&in, H_FLAGS);
    now.soff = h16(&in, H_SOFF) % PAGE;
    now.doff = h16(&in, H_DOFF) % PAGE;
    size_t len = h16(&in, H_LEN) % (max_len + 1);
    size_t aad_len = h16(&in, H_AAD_LEN) % (max_len + 1);
    size_t n_keys = 1, each;

    /* the mode's constraints, met by mapping into range */
    if (cd != NULL) {
        now.mode = cd->name;
        now.flags &= F_INPLACE | F_STREAM | F_DECRYPT | F_PKCS7 | F_SECTORS;
        n_keys = cd->n_keys;
        each = key_size(cd->key_sizes, h8(&in, H_KEY));
        if (cd->pkcs7 == NULL)
            now.flags &= ~(unsigned)F_PKCS7;
        if (cd->sectors == NULL)
            now.flags &= ~(unsigned)F_SECTORS;
        if (now.flags & F_SECTORS) {
            now.flags &= ~(unsigned)(F_PKCS7 | F_STREAM);
            size_t unit = 16 * (1 + h8(&in, H_UNIT) % 64);
            unit = max_size(unit, (cd->min_len + 15) / 16 * 16);
            if (cd->max_len != 0)
                unit = min_size(unit, (size_t)cd->max_len);
            now.unit = unit;
            len = max_size(1, min_size(len, max_len) / unit) * unit;
        } else if (now.flags & F_PKCS7) {
            if (now.flags & F_DECRYPT)
                len = max_size(16, len / 16 * 16);
        } else if (cd->whole_blocks) {
            len = len / 16 * 16;
        }
        len = max_size(len, cd->min_len);
        if (cd->max_len != 0)
            len = min_size(len, (size_t)cd->max_len);
        aad_len = 0;
    } else if (ad != NULL) {
        now.mode = ad->name;
        now.aead = 1;
        now.flags &= F_INPLACE | F_STREAM | F_NO_AD | F_ALIAS;
        if (now.flags & F_INPLACE)   /* the nonce and AAD then lie in the data */
            now.flags &= ~(unsigned)F_ALIAS;
        n_keys = ad->n_keys;
        each = key_size(ad->key_sizes, h8(&in, H_KEY));
        now.tag_len = tag_length(ad->tag_lengths, h8(&in, H_TAG));
        if (ad->nonce_max > 0) {
            const size_t hi = min_size(ad->nonce_max, max_size(ad->nonce_min, NONCE_CAP));
            now.nonce_len = ad->nonce_min + h8(&in, H_NONCE) % (hi - ad->nonce_min + 1);
        }
        if (aeskit_aead_max_data(ad, now.nonce_len) < len)
            len = (size_t)aeskit_aead_max_data(ad, now.nonce_len);
        if (ad->max_aad < aad_len)
            aad_len = (size_t)ad->max_aad;
        if (ad->init == NULL)
            now.flags &= ~(unsigned)F_STREAM;
        if (now.flags & F_NO_AD)
            aad_len = 0;
    } else if (kd != NULL) {
        now.mode = kd->name;
        now.flags &= F_INPLACE;
        each = key_size(AESKIT_KEY_ANY, h8(&in, H_KEY));
        len = max_size(kd->wrap_min, len - len % kd->wrap_multiple);
        if (len > kd->wrap_max)
            len = (size_t)kd->wrap_max / kd->wrap_multiple * kd->wrap_multiple;
        aad_len = 0;
    } else {
        now.mode = md->name;
        now.flags &= F_STREAM;
        each = key_size(md->key_sizes, h8(&in, H_KEY));
        now.tag_len = tag_length(md->tag_lengths, h8(&in, H_TAG));
        aad_len = 0;
    }
    now.key_bits = (unsigned)(8 * each * n_keys);
    now.len = len;
    now.aad_len = aad_len;
    const unsigned splits = h8(&in, H_SPLITS);
    now.in = &in;
    now.data_splits = (unsigned)min_size(splits & 15, MAX_CUTS);
    now.n_cuts = cut(&in, H_CUTS, now.data_splits, len, now.cuts);
    now.n_aad_cuts = cut(&in, H_AAD_CUTS, min_size(splits >> 4, MAX_CUTS), aad_len,
                         now.aad_cuts);

    /* the payload: keys, IV or nonce, AAD, data, a received tag, a sector */
    uint8_t key[64], iv[16], rtag[16], first[16];
    take(&in, key, each * n_keys);
    if (cd != NULL && cd->distinct_keys && memcmp(key, key + each, each) == 0)
        key[each] ^= 1;
    take(&in, iv, 16);
    uint8_t *nonce = xmalloc(now.nonce_len), *aad = xmalloc(aad_len), *data = xmalloc(len);
    take(&in, nonce, now.nonce_len);
    take(&in, aad, aad_len);
    take(&in, data, len);
    take(&in, rtag, 16);
    take(&in, first, 16);
    /* sector numbers must not wrap past 2**128 - 1 (the glue refuses) */
    if (now.unit != 0 && first[15] == 0xff)
        first[15] = 0x7f;

    /* the associated data as the glue passes it: None, one item, or a list
     * whose items the AAD split points delimit */
    aeskit_span spans[MAX_CUTS + 1];
    uint8_t *aad_exact[MAX_CUTS + 1] = {NULL};
    size_t n_ad = 0;
    if (ad != NULL) {
        if (now.flags & F_NO_AD) {
            n_ad = 0;
        } else if (ad->ad_list) {
            n_ad = min_size(now.n_aad_cuts, ad->max_ad);
            if (n_ad < now.n_aad_cuts) {
                aad_len = 0;
                for (size_t i = 0; i < n_ad; i++)
                    aad_len += now.aad_cuts[i];
                now.aad_len = aad_len;
            }
        } else {
            n_ad = 1;
        }
        size_t at = 0;
        for (size_t i = 0; i < n_ad; i++) {
            const size_t l = ad->ad_list ? now.aad_cuts[i] : aad_len;
            aad_exact[i] = exact(aad + at, l);
            spans[i].p = aad_exact[i];
            spans[i].len = l;
            at += l;
        }
    }

    /* portable, then every other backend this CPU has */
    const struct aeskit_impl *order[16];
    size_t n_impls = 0;
    order[n_impls++] = &aeskit_portable_impl;
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        if (aeskit_impls[i] != &aeskit_portable_impl && aeskit_impl_available(aeskit_impls[i]))
            order[n_impls++] = aeskit_impls[i];
    if (negative_control)
        order[n_impls++] = &broken;
    for (size_t i = 0; i < n_impls; i++) {
        tr = i == 0 ? &ref_t : &cur_t;
        tr->used = tr->n = 0;
        now.backend = order[i]->name;
        if (cd != NULL)
            fuzz_cipher(cd, order[i], key, each, iv, data, len, first);
        else if (ad != NULL)
            fuzz_aead(ad, &in, order[i], key, each * n_keys, nonce, aad, aad_len, spans, n_ad,
                      data, len, rtag);
        else if (kd != NULL)
            fuzz_keywrap(kd, &in, order[i], key, each, data, len);
        else
            fuzz_mac(md, &in, order[i], key, each, data, len);
        if (i > 0)
            compare_transcripts();
    }
    for (size_t i = 0; i < n_ad; i++)
        free(aad_exact[i]);
    free(nonce);
    free(aad);
    free(data);
    return 0;
}

/* ---- set-up, and the seed corpus --------------------------------------------- */

static void put16(uint8_t *h, size_t at, unsigned v)
{
    h[at] = (uint8_t)v;
    h[at + 1] = (uint8_t)(v >> 8);
}

/* Four inputs per mode: short one-shot; streaming in place with splits;
 * decrypt-first with padding, sectors, AD None and a data flip; a long
 * aliased one crossing every batch at odd offsets. */
static void write_seeds(const char *dir)
{
    static const unsigned flags[4] = {0, F_STREAM | F_INPLACE,
                                      F_DECRYPT | F_PKCS7 | F_SECTORS | F_NO_AD,
                                      F_STREAM | F_ALIAS};
    static const unsigned lens[4] = {37, 300, 600, 4150};
    const size_t n = n_modes();
    for (size_t m = 0; m < n; m++)
        for (unsigned v = 0; v < 4; v++) {
            uint8_t seed[H_SIZE + 96] = {0};
            seed[H_MODE] = (uint8_t)m;
            seed[H_KEY] = (uint8_t)v;
            seed[H_TAG] = (uint8_t)(7 * v);
            seed[H_FLAGS] = (uint8_t)flags[v];
            seed[H_TAMPER] = (uint8_t)v;
            put16(seed, H_TAMPER_BIT, 77 * v + 5);
            put16(seed, H_LEN, lens[v]);
            put16(seed, H_AAD_LEN, (unsigned)(20 + 100 * v));
            seed[H_NONCE] = (uint8_t)(11 * v);
            seed[H_SPLITS] = (uint8_t)(v == 1 ? 0x23 : v == 3 ? 0x47 : 0);
            put16(seed, H_SOFF, v == 3 ? 4093 : 8 * v);
            put16(seed, H_DOFF, v == 3 ? 1 : 16 * v);
            seed[H_UNIT] = 31;
            for (unsigned i = 0; i < 8; i++) {
                put16(seed, H_CUTS + 2 * i, 97 * i + 13 * v);
                put16(seed, H_AAD_CUTS + 2 * i, 41 * i + 3);
            }
            for (size_t i = H_SIZE; i < sizeof seed; i++)
                seed[i] = (uint8_t)(i * 151 + m * 29 + v);
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%02zu-%u", dir, m, v);
            FILE *f = fopen(path, "wb");
            if (f == NULL || fwrite(seed, 1, sizeof seed, f) != sizeof seed || fclose(f) != 0) {
                fprintf(stderr, "fuzz_core: cannot write %s: %s\n", path, strerror(errno));
                exit(1);
            }
        }
    fprintf(stderr, "fuzz_core: wrote %zu seeds to %s\n", 4 * n, dir);
    exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    aeskit_cpu_detect();
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        widen_to(aeskit_impls[i]->constants);
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        widen_to(aeskit_aeads[i]->constants);
    region_size = (PAGE + max_len + 64 + PAGE - 1) / PAGE * PAGE;
    for (int r = 0; r < 2; r++)
        if ((region[r] = aligned_alloc(PAGE, region_size)) == NULL)
            abort();
    const size_t cap = 12 * (max_len + 64);
    ref_t.bytes = xmalloc(cap), ref_t.cap = cap;
    cur_t.bytes = xmalloc(cap), cur_t.cap = cap;

    fprintf(stderr, "fuzz_core: %zu modes, data up to %zu bytes; backends:", n_modes(),
            max_len);
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        fprintf(stderr, " %s%s", aeskit_impls[i]->name,
                aeskit_impl_available(aeskit_impls[i]) ? "" : " (not on this CPU)");
    fprintf(stderr, "\n");
    const char *want = getenv("FUZZ_EXPECT_BACKENDS");
    if (want != NULL) {
        char names[256];
        snprintf(names, sizeof names, "%s", want);
        for (char *s = strtok(names, " ,"); s != NULL; s = strtok(NULL, " ,")) {
            const struct aeskit_impl *impl = aeskit_impl_by_name(s);
            if (impl == NULL || !aeskit_impl_available(impl)) {
                fprintf(stderr, "fuzz_core: backend %s expected but %s\n", s,
                        impl == NULL ? "not built" : "not available on this CPU");
                exit(1);
            }
        }
    }
    const char *control = getenv("FUZZ_NEGATIVE_CONTROL");
    if (control != NULL && strcmp(control, "1") == 0) {
        negative_control = 1;
        broken = aeskit_portable_impl;
        broken.name = "negative_control";
        broken.set_key = broken_set_key;
        broken.ctr = broken_ctr;
        fprintf(stderr, "fuzz_core: NEGATIVE CONTROL: a broken copy of portable is added\n");
    }
    const char *seeds = getenv("FUZZ_WRITE_SEEDS");
    if (seeds != NULL)
        write_seeds(seeds);
    return 0;
}
