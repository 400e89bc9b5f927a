/*
 * ct_harness.c: the constant-time check of a backend table, run under
 * valgrind memcheck by tests/test_constant_time.py: portable (the default),
 * aesni, or vaes_avx2 and vaes_avx512 on their emulation (--table NAME).
 *
 * Why: memcheck reports every conditional jump, memory address and syscall
 * argument that depends on undefined bytes. Marking key, iv, counter and
 * data undefined before use turns that into a check that nothing branches
 * on or indexes memory by a secret (the rule in aeskit.h). Arithmetic on
 * secrets is not reported, which is exactly what constant time allows.
 *
 * Every case marks its inputs undefined, runs, and only then marks the
 * outputs defined to check them (FIPS-197 answers, round trips, portable's
 * results) and fold them into a printed checksum, so the work cannot be
 * optimised away. Outside valgrind the client requests are no-ops and this
 * is a plain test.
 *
 * Every table runs the same cases, for each key size: every mode through
 * the streaming layer, padded ECB/CBC, the AEADs, key wrap, CMAC, EAX, XTS,
 * SIV, then every slot of the table on its own (check_slots). Lengths: each
 * case's, plus lengths past the table's batches (long_lens); the slots take
 * block counts made from the table's constants (sweep_counts), which reach
 * each batch, half batch and tail. On a table other than portable, each
 * case runs a second time on portable from the same inputs and must give
 * the same outputs (TWIN), and each slot call is compared with portable's
 * on the same inputs: a pass also says that the table's kernels did the
 * work, and right.
 *
 * Public, as the contracts say: lengths, counts, the counter kind, the
 * direction, OCB's block index, and counters that the message reveals.
 * GCM's 12-byte nonce is public, and so the counters it makes, which the
 * gcm slot may branch on (modes/gcm.c); a nonce of any other length makes
 * J0, and so every counter, a function of the hash key: secret, and the
 * split path's ctr slot takes them as BE32. On a table other than portable
 * the cases call its view (use_table): the table's slots, but the ctr slot
 * takes a BE128 or LE32 counter as public on entry, as aeskit.h allows
 * (CTR mode's IV, CCM's counters, SIV's V once sent, GCM-SIV's tag, all in
 * the message); BE32 and BE128_SECRET counters stay secret. Portable runs
 * without a view: it promises more, and is held to it.
 *
 * PKCS#7 (modes/padding.c) runs the same way: the padding check on every
 * last byte, valid and invalid (portable's run only: no table is used),
 * and padded ECB/CBC streams whose decrypted last block, good or bad,
 * stays secret until finish has returned; the status and count it returns
 * are the one thing made public, as the Python glue branches on them.
 *
 * CCM runs through its descriptor's seal and open (what the glue calls),
 * key, nonce, AAD and data secret, in place and not, with every tag
 * length, and a tampered tag whose verdict stays secret until it is read.
 *
 * Key wrap (KW, KWP) runs with key and data secret, the wrapped data too
 * when it is unwrapped: a good unwrap, and a tampered one whose verdict
 * (integrity value, KWP's length indicator and padding) must steer
 * nothing until the caller reads it, and must leave the output zeroed.
 *
 * CMAC runs with key, data and the tags secret (one-shot, and by parts
 * through the held-back last block, compared as the glue compares); EAX
 * with key, nonce, AAD and data secret, its counter OMAC^0(N) going to the
 * ctr slot as AESKIT_CTR_BE128_SECRET.
 *
 * SIV runs with both keys, every associated-data component and the data
 * secret: S2V's side-by-side chains, the fold, the xorend or pad of the
 * last component, and CTR from the SIV, whose counter is public once the
 * SIV is sent (seal's V is still undefined inside the call: the view makes
 * it public where it meets the ctr slot). Opening takes the SIV as
 * received (public), once with the ciphertext spoilt: only the glue's
 * verdict is made public.
 *
 * The wide tables (a build with AESKIT_EMULATE_WIDE) are vaes_avx2.c and
 * vaes_avx512.c built with tests/emu/vaes_emu.h forced in, as meson's
 * emulate_wide builds them: each VAES, VPCLMULQDQ and AVX-512 operation is
 * done lane by lane by AES-NI, PCLMULQDQ and AVX2 instructions, which
 * valgrind runs (it runs neither VAES nor AVX-512). That checks the
 * kernels' own C, every branch and memory address in vaes_body.h,
 * vaes_gcm.h, vaes_ocb.h and the width layers as the compiler built them
 * for the emulation; not the native build's instruction stream.
 *
 * --negative-control adds a deliberate secret-indexed table lookup that
 * memcheck must flag; it proves the check can fail.
 *
 * Build: tests/test_constant_time.py says how (SOURCES; the wide tables:
 * wide_build).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "common.h"
#include "dispatch.h"
#include "modes/block.h"
#include "modes/ccm.h"
#include "modes/cmac.h"
#include "modes/eax.h"
#include "modes/gcm.h"
#include "modes/gcmsiv.h"
#include "modes/xaes.h"
#include "modes/kw.h"
#include "modes/ocb.h"
#include "modes/padding.h"
#include "modes/siv.h"

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

/* The longest message: vaes_avx512's GHASH past two reductions of 128
 * blocks, its fused GCM past a chunk of four 32-block batches. */
#define MAXLEN (16 * 264)
#define MAXBLOCKS (MAXLEN / 16)

/* The tables --table can name. The wide ones are linked in only from the
 * emulated build (tests/emu/vaes_emu.h), the one valgrind can run. */
static const struct aeskit_impl *const tables[] = {
    &aeskit_portable_impl,
#if defined(AESKIT_HAVE_X86)
    &aeskit_aesni_impl,
#if defined(AESKIT_EMULATE_WIDE)
    &aeskit_vaes_avx2_impl,
    &aeskit_vaes_avx512_impl,
#endif
#endif
    NULL,
};

/* table: the one under test. impl: what the cases call, the modes
 * included: portable itself, or for any other table its view (below). */
static const struct aeskit_impl *table = &aeskit_portable_impl;
static const struct aeskit_impl *impl = &aeskit_portable_impl;
static struct aeskit_impl view;

static unsigned cases, slot_calls, failures;

/* The case under way, named by each check as it starts, for failures. */
static char current[128];

__attribute__((format(printf, 1, 2))) static void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(current, sizeof current, fmt, ap);
    va_end(ap);
}

static void fail(const char *what)
{
    fprintf(stderr, "FAIL: %s on %s (%s)\n", what, impl->name, current);
    failures++;
}

/* Deterministic inputs (xorshift64). */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static void fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        p[i] = (uint8_t)(rng >> 24);
    }
}

/* FNV-1a over every checked output; call only on defined bytes. */
#define FNV_BASIS 0xcbf29ce484222325u
static uint64_t checksum = FNV_BASIS;

static void absorb(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        checksum = (checksum ^ p[i]) * 0x100000001b3u;
}

/* ---- the table under test, and portable beside it ------------------------
 * The view (see the head comment): the table with a ctr slot that makes a
 * BE128 or LE32 counter defined on entry, and a set_key (and set_enc_key,
 * where the table has one) that points the keys at the view, so that the
 * modes call it too. */

static void view_set_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    table->set_key(k, key, len);
    k->impl = &view;
}

static void view_set_enc_key(aeskit_key *k, const uint8_t *key, size_t len)
{
    table->set_enc_key(k, key, len);
    k->impl = &view;
}

static void view_ctr(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16], uint8_t *dst,
                     const uint8_t *src, size_t n)
{
    if (kind == AESKIT_CTR_BE128 || kind == AESKIT_CTR_LE32)
        PUBLIC(ctr, 16);
    table->ctr(k, kind, ctr, dst, src, n);
}

/* One of the table's constants (aeskit.h), or 0. */
static size_t constant(const char *name)
{
    for (const aeskit_constant *c = table->constants; c != NULL && c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c->value;
    return 0;
}

/* The table's batch: its largest *batch_blocks (tests/cross/selftest.c
 * takes the same). */
static size_t batch(void)
{
    size_t w = 1;
    for (const aeskit_constant *c = table->constants; c != NULL && c->name != NULL; c++)
        if (strstr(c->name, "batch_blocks") != NULL && c->value > w)
            w = c->value;
    return w;
}

/* Message lengths (bytes) past the table's batches, which the modes' cases
 * add to their own: a batch, the half batch and a tail; two and a half
 * batches and a tail; and, where the table has a fused GCM kernel, lengths
 * that a 12-byte nonce (its first batch 2 blocks early) takes through 5
 * and 6 batches: a chunk of 4 batches and one of 1 or 2, both ways. */
static size_t long_lens[4], n_long;

static void use_table(const struct aeskit_impl *t)
{
    table = t;
    if (t == &aeskit_portable_impl) {
        impl = t;
    } else {
        view = *t;
        view.set_key = view_set_key;
        if (t->set_enc_key != NULL)
            view.set_enc_key = view_set_enc_key;
        view.ctr = view_ctr;
        impl = &view;
    }
    const size_t w = batch(), gm = constant("gcm_fused_min_blocks");
    n_long = 0;
    long_lens[n_long++] = 16 * (w + w / 2) + 5;
    long_lens[n_long++] = 16 * (3 * w - 1) + 11;
    if (gm != 0) {
        long_lens[n_long++] = 16 * (5 * w + 5) + 5;
        long_lens[n_long++] = 16 * (6 * w) + 3;
    }
    for (size_t i = 0; i < n_long; i++)
        assert(long_lens[i] <= MAXLEN);
}

/* base's lengths, then long_lens; returns how many. */
static size_t with_long(size_t *out, const size_t *base, size_t n)
{
    memcpy(out, base, n * sizeof *base);
    memcpy(out + n, long_lens, n_long * sizeof *long_lens);
    return n + n_long;
}

/* TWIN(call) runs a case on the table and then, unless it is portable,
 * again on portable from the same inputs (the generator rewound), and
 * fails if the two absorbed different outputs: so the table's slots did
 * the work, and right. The checksum takes the case's digest once. */
static struct {
    uint64_t rng, checksum, got;
    unsigned cases;
    int phase;
} twin;

static void twin_begin(void)
{
    twin.rng = rng;
    twin.checksum = checksum;
    twin.phase = 0;
    checksum = FNV_BASIS;
}

/* After each run of the case: 1 to run it again, on portable. */
static int twin_next(void)
{
    if (twin.phase == 0 && impl != &aeskit_portable_impl) {
        twin.got = checksum;
        twin.cases = cases;
        twin.phase = 1;
        impl = &aeskit_portable_impl;
        rng = twin.rng;
        checksum = FNV_BASIS;
        return 1;
    }
    if (twin.phase == 1) {
        impl = &view;
        cases = twin.cases;
        if (checksum != twin.got)
            fail("output differs from portable's");
    } else {
        twin.got = checksum;
    }
    checksum = twin.checksum;
    absorb((const uint8_t *)&twin.got, sizeof twin.got);
    return 0;
}

#define TWIN(call)            \
    do {                      \
        twin_begin();         \
        do {                  \
            call;             \
        } while (twin_next()); \
    } while (0)

/* ---- FIPS-197 appendix C ------------------------------------------- */

static void check_fips197(void)
{
    static const uint8_t want[3][16] = {
        { 0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
          0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a },
        { 0xdd, 0xa9, 0x7c, 0xa4, 0x86, 0x4c, 0xdf, 0xe0,
          0x6e, 0xaf, 0x70, 0xa0, 0xec, 0x0d, 0x71, 0x91 },
        { 0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
          0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89 },
    };
    for (unsigned s = 0; s < 3; s++) {
        const size_t keylen = 16 + 8 * s;
        uint8_t key[32], pt[16], ct[16], back[16];
        aeskit_key k;
        for (unsigned i = 0; i < 32; i++)
            key[i] = (uint8_t)i;
        for (unsigned i = 0; i < 16; i++)
            pt[i] = (uint8_t)(0x11 * i);
        describe("AES-%zu", 8 * keylen);
        SECRET(key, sizeof key);
        SECRET(pt, sizeof pt);
        impl->set_key(&k, key, keylen);
        impl->ecb_enc(&k, ct, pt, 1);
        impl->ecb_dec(&k, back, ct, 1);
        PUBLIC(ct, sizeof ct);
        PUBLIC(back, sizeof back);
        PUBLIC(pt, sizeof pt);
        cases++;
        if (memcmp(ct, want[s], 16) != 0)
            fail("FIPS-197 encrypt");
        if (memcmp(back, pt, 16) != 0)
            fail("FIPS-197 decrypt");
        absorb(ct, 16);
        aeskit_secure_zero(&k, sizeof k);
    }
}

/* The inputs of a block-mode check: key, 16-byte iv and message filled,
 * pt a public copy of the message, the rest marked secret. */
static void secret_inputs(uint8_t *key, size_t keylen, uint8_t iv[16], uint8_t *pt,
                          uint8_t *msg, size_t len)
{
    fill(key, keylen);
    fill(iv, 16);
    fill(pt, len);
    memcpy(msg, pt, len);
    SECRET(key, keylen);
    SECRET(iv, 16);
    SECRET(msg, len);
}

/* ---- every mode through the streaming layer -------------------------- */

/* The block-cipher mode called name (modes/registry.c). */
static const struct aeskit_cipher *cipher_named(const char *name)
{
    for (size_t i = 0; aeskit_ciphers[i] != NULL; i++)
        if (strcmp(aeskit_ciphers[i]->name, name) == 0)
            return aeskit_ciphers[i];
    fprintf(stderr, "no block-cipher mode %s\n", name);
    exit(2);
}

/* A message length and the sizes of the update calls that carry it; the
 * sizes repeat and the last call takes what is left. */
struct shape {
    const char *name;
    size_t len;
    size_t calls[6];   /* 0-terminated; {0} is one call */
};

static const struct shape shapes[] = {
    { "4 blocks", 64, { 0 } },
    /* past the generic helpers' 32-block batch (cbc_dec, cfb_dec, ctr) */
    { "37 blocks", 16 * 37, { 0 } },
    { "partial", 16 * 3 + 7, { 0 } },
    { "short", 5, { 0 } },
    { "split", 16 * 6 + 5, { 5, 30, 16, 1, 49, 0 } },
    { "bytewise", 40, { 1, 0 } },
};

/* Feeds len bytes of src to a fresh stream (with PKCS#7 if pkcs7) in the
 * calls shape names, finishes it, and returns the bytes written to out
 * and in *end how it ended. In place, each call's own buffer is both
 * source and destination, as the Python layer does it. */
static size_t run_stream(const aeskit_key *k, const struct aeskit_cipher *d, int enc,
                         int pkcs7, const uint8_t iv[16], const uint8_t *src, size_t len,
                         const size_t *calls, int in_place, uint8_t *out,
                         enum aeskit_finish *end)
{
    uint64_t st[AESKIT_CIPHER_STATE_MAX / 8];
    uint8_t chunk[MAXLEN + 16];
    size_t done = 0, written = 0, tail;
    unsigned c = 0;

    d->init(st, k, enc, d->iv_name != NULL ? iv : NULL);
    if (pkcs7)
        d->pkcs7(st);
    while (done < len) {
        size_t n = calls[c] == 0 ? len - done : calls[c];
        if (n > len - done)
            n = len - done;
        c = calls[c] == 0 || calls[c + 1] == 0 ? 0 : c + 1;
        size_t want = d->out_len(st, n), got;
        if (in_place) {
            memcpy(chunk, src + done, n);
            got = d->update(st, chunk, chunk, n);
            memcpy(out + written, chunk, got);
        } else {
            got = d->update(st, out + written, src + done, n);
        }
        if (got != want)
            fail("stream_update length");
        done += n;
        written += got;
    }
    *end = d->finish(st, out + written, &tail);
    /* what the glue branches on: the verdict and the length it gives */
    PUBLIC(end, sizeof *end);
    PUBLIC(&tail, sizeof tail);
    written += *end == AESKIT_FINISH_OK ? tail : 0;
    aeskit_secure_zero(st, sizeof st);
    aeskit_secure_zero(chunk, sizeof chunk);
    return written;
}

static void check_mode(size_t keylen, const struct aeskit_cipher *d, const struct shape *sh,
                       int in_place)
{
    uint8_t key[32], iv[16], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    aeskit_key k;
    const size_t len = sh->len;

    describe("%s AES-%zu %s%s", d->name, 8 * keylen, sh->name, in_place ? " in place" : "");
    secret_inputs(key, keylen, iv, pt, msg, len);

    impl->set_key(&k, key, keylen);
    enum aeskit_finish end;
    const size_t nct = run_stream(&k, d, 1, 0, iv, msg, len, sh->calls, in_place, ct, &end);
    /* decrypt what came out, ciphertext still undefined, in the same calls */
    const size_t nback = run_stream(&k, d, 0, 0, iv, ct, nct, sh->calls, in_place, back,
                                    &end);

    PUBLIC(ct, nct);
    PUBLIC(back, nback);
    cases++;
    const size_t expect = d->whole_blocks ? len / 16 * 16 : len;
    if (nct != expect || nback != expect || memcmp(back, pt, expect) != 0)
        fail("round trip");
    absorb(ct, nct);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- PKCS#7: the check alone, then padded ECB/CBC streams --------------- */

/* What the check must say, by the definition, on public bytes. */
static int pkcs7_valid(const uint8_t b[16])
{
    const unsigned p = b[15];
    if (p == 0 || p > 16)
        return 0;
    for (unsigned i = 16 - p; i < 16; i++)
        if (b[i] != p)
            return 0;
    return 1;
}

/* Every last byte 0..255 over a block padded for it, as is and with each
 * byte in turn made wrong, marked secret; and the secret-length copy. */
static void check_pkcs7_check(void)
{
    for (unsigned p = 0; p < 256; p++) {
        for (int wrong = -1; wrong < 15; wrong++) {
            uint8_t b[16], pub[16], dst[16], was[16];
            fill(b, sizeof b);
            for (unsigned i = 0; i < 16; i++)
                if (i + p >= 16)
                    b[i] = (uint8_t)p;
            b[15] = (uint8_t)p;
            if (wrong >= 0)
                b[wrong] ^= (uint8_t)(1 + wrong);
            memcpy(pub, b, 16);
            fill(dst, sizeof dst);
            memcpy(was, dst, 16);
            SECRET(b, sizeof b);
            unsigned pad;
            const uint32_t ok = aeskit_pkcs7_check(b, &pad);
            aeskit_ct_copy_prefix(dst, b, (16 - pad) & ok);
            PUBLIC(&ok, sizeof ok);
            PUBLIC(&pad, sizeof pad);
            PUBLIC(dst, sizeof dst);
            cases++;
            const int want = pkcs7_valid(pub);
            const unsigned n = want ? 16 - p : 0;
            if (ok != (want ? 0xffffffffu : 0) || pad != p ||
                memcmp(dst, pub, n) != 0 || memcmp(dst + n, was + n, 16 - n) != 0) {
                describe("last byte %u, wrong byte %d", p, wrong);
                fail("pkcs7 check");
            }
            absorb(dst, sizeof dst);
        }
    }
}

/* A padded round trip, then the same data with its last block's padding
 * spoilt (last byte 0, 17 + v, or a wrong padding byte) sent through the
 * unpadding decryptor, which must refuse it. Key, iv and data secret. */
static void check_padded(size_t keylen, const struct aeskit_cipher *d, const struct shape *sh,
                         int in_place, unsigned variant)
{
    uint8_t key[32], iv[16], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN + 16], back[MAXLEN + 16];
    aeskit_key k;
    const size_t len = sh->len, padded = len / 16 * 16 + 16;
    enum aeskit_finish end_ct, end_back, end_bad;
    describe("%s AES-%zu %s%s", d->name, 8 * keylen, sh->name, in_place ? " in place" : "");

    secret_inputs(key, keylen, iv, pt, msg, len);
    impl->set_key(&k, key, keylen);

    const size_t nct = run_stream(&k, d, 1, 1, iv, msg, len, sh->calls, in_place, ct,
                                  &end_ct);
    const size_t nback = run_stream(&k, d, 0, 1, iv, ct, nct, sh->calls, in_place, back,
                                    &end_back);
    PUBLIC(ct, nct);
    PUBLIC(back, nback);
    cases++;
    if (end_ct != AESKIT_FINISH_OK || end_back != AESKIT_FINISH_OK || nct != padded ||
        nback != len || memcmp(back, pt, len) != 0)
        fail("padded round trip");
    absorb(ct, nct);

    /* the whole padded plaintext, then its padding spoilt, encrypted
     * without padding and secret throughout */
    uint8_t bad[MAXLEN + 16], badct[MAXLEN + 16];
    const unsigned p = (unsigned)(padded - len);
    memcpy(bad, pt, len);
    memset(bad + len, (int)p, p);
    switch (variant % 3) {
    case 0: bad[padded - 1] = 0; break;
    case 1: bad[padded - 1] = (uint8_t)(17 + 37 * variant); break;
    default:   /* a wrong byte among the padding's others; a lone 1 claims 2 */
        if (p == 1) {
            bad[padded - 1] = 2;
            bad[padded - 2] |= 0x80;
        } else {
            bad[padded - 2 - variant % (p - 1)] ^= 0x40;
        }
        break;
    }
    SECRET(bad, padded);
    const size_t nbadct = run_stream(&k, d, 1, 0, iv, bad, padded, sh->calls, in_place,
                                     badct, &end_ct);
    const size_t nbad = run_stream(&k, d, 0, 1, iv, badct, nbadct, sh->calls, in_place,
                                   back, &end_bad);
    cases++;
    if (end_ct != AESKIT_FINISH_OK || end_bad != AESKIT_FINISH_PADDING || nbad != padded - 16)
        fail("bad padding accepted");
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- AEADs: GCM and OCB3, tags compared without a secret branch -------- */

static void check_aead(size_t keylen, int ocb, size_t nonce_len, size_t aad_len, size_t len)
{
    uint8_t key[32], nonce[16], aad[64], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    uint8_t tag[16], tag2[16];
    aeskit_key k;
    aeskit_ghash_key hk;
    aeskit_ocb_key ok;

    describe("%s AES-%zu nonce %zu aad %zu len %zu", ocb ? "OCB3" : "GCM", 8 * keylen,
             nonce_len, aad_len, len);
    fill(key, keylen);
    fill(nonce, nonce_len);
    fill(aad, aad_len);
    fill(pt, len);
    memcpy(msg, pt, len);
    SECRET(key, keylen);
    if (ocb || nonce_len != 12 || impl == &aeskit_portable_impl)
        SECRET(nonce, nonce_len);
    SECRET(aad, aad_len);
    SECRET(msg, len);

    impl->set_key(&k, key, keylen);
    size_t nct = len, nback = len;
    if (ocb) {
        aeskit_ocb o;
        aeskit_ocb_key_init(&ok, &k);
        aeskit_ocb_init(&o, &k, &ok, 1, nonce, nonce_len, 16);
        aeskit_ocb_aad(&o, aad, aad_len);
        nct = aeskit_ocb_update(&o, ct, msg, len);
        nct += aeskit_ocb_finish(&o, ct + nct, tag);
        aeskit_ocb_init(&o, &k, &ok, 0, nonce, nonce_len, 16);
        aeskit_ocb_aad(&o, aad, aad_len);
        nback = aeskit_ocb_update(&o, back, ct, len);
        nback += aeskit_ocb_finish(&o, back + nback, tag2);
    } else {
        uint8_t h[16] = {0};
        aeskit_gcm g;
        impl->ecb_enc(&k, h, h, 1);
        impl->ghash_key(&hk, h, AESKIT_GHASH_ANY);
        aeskit_gcm_init(&g, &k, &hk, 1, nonce, nonce_len, NULL);
        aeskit_gcm_aad(&g, aad, aad_len);
        aeskit_gcm_update(&g, ct, msg, len);
        aeskit_gcm_tag(&g, tag);
        aeskit_gcm_init(&g, &k, &hk, 0, nonce, nonce_len, NULL);
        aeskit_gcm_aad(&g, aad, aad_len);
        aeskit_gcm_update(&g, back, ct, len);
        aeskit_gcm_tag(&g, tag2);
    }
    int same = aeskit_ct_memeq(tag, tag2, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(ct, nct);
    PUBLIC(back, nback);
    PUBLIC(tag, sizeof tag);
    cases++;
    if (!same || nct != len || nback != len || memcmp(back, pt, len) != 0)
        fail("aead round trip");
    absorb(ct, nct);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&k, sizeof k);
}

/* A whole-message AEAD's round trip, once sealed (ct, tag) and opened (back,
 * tag2): the verdict, ciphertext and plaintext made public, as the glue
 * reads them, then checked and absorbed. */
static void round_trip(const uint8_t *pt, const uint8_t *ct, const uint8_t *back, size_t len,
                       const uint8_t tag[16], const uint8_t tag2[16])
{
    int same = aeskit_ct_memeq(tag, tag2, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    PUBLIC(pt, len);
    cases++;
    if (!same || memcmp(back, pt, len) != 0)
        fail("aead round trip");
    absorb(ct, len);
    absorb(tag, 16);
}

/* ---- GCM, many short messages (the gcm_short slot): key, nonces, AAD and
 * data secret; the lengths public; each message's expected tag compared
 * with its sealed one without a secret branch ------------------------------ */

static void check_gcm_short(size_t keylen)
{
    enum { M = 12 };
    static const size_t aads[M] = {0, 0, 0, 1, 15, 16, 17, 20, 33, 48, 0, 5};
    static const size_t lens[M] = {0, 1, 64, 15, 16, 17, 47, 48, 30, 64, 112, 79};
    uint8_t key[32], nonces[M][12], aad[M][48], pt[M][112], ct[M][112], back[M][112];
    uint8_t tags[M][16], tags2[M][16];
    aeskit_aead_item ms[M];
    aeskit_span spans[M];
    aeskit_key k;
    aeskit_ghash_key hk;
    uint8_t h[16] = {0};

    describe("gcm_short AES-%zu, %d messages", 8 * keylen, M);
    fill(key, keylen);
    SECRET(key, keylen);
    for (size_t i = 0; i < M; i++) {
        fill(nonces[i], 12);
        fill(aad[i], aads[i]);
        fill(pt[i], lens[i]);
        memcpy(back[i], pt[i], lens[i]);
        SECRET(nonces[i], 12);
        SECRET(aad[i], aads[i]);
        SECRET(back[i], lens[i]);
        spans[i] = (aeskit_span){aad[i], aads[i]};
        ms[i] = (aeskit_aead_item){
            .m = {nonces[i], 12, aads[i] ? &spans[i] : NULL, aads[i] ? 1 : 0},
            .dst = ct[i], .src = lens[i] ? back[i] : NULL, .len = lens[i],
        };
    }
    impl->set_key(&k, key, keylen);
    impl->ecb_enc(&k, h, h, 1);
    impl->ghash_key(&hk, h, AESKIT_GHASH_ANY);
    impl->gcm_short(&k, &hk, 1, ms, M, tags);
    for (size_t i = 0; i < M; i++)   /* open in place */
        ms[i].src = lens[i] ? ct[i] : NULL;
    impl->gcm_short(&k, &hk, 0, ms, M, tags2);
    int same = 1;
    for (size_t i = 0; i < M; i++)
        same &= aeskit_ct_memeq(tags[i], tags2[i], 16);
    PUBLIC(&same, sizeof same);
    cases++;
    for (size_t i = 0; i < M; i++) {
        PUBLIC(ct[i], lens[i]);
        PUBLIC(tags[i], 16);
        if (!same || memcmp(ct[i], pt[i], lens[i]) != 0)
            fail("gcm_short round trip");
        absorb(tags[i], 16);
    }
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- GCM-SIV: key, nonce and data secret; the per-message keys, POLYVAL
 * by way of GHASH and the tag's CTR never branch on them -------------------- */

static void check_gcmsiv(size_t keylen, size_t aad_len, size_t len)
{
    uint8_t key[32], nonce[12], aad[64], pt[MAXLEN], ct[MAXLEN], back[MAXLEN];
    uint8_t tag[16], tag2[16];
    aeskit_key k;

    describe("GCM-SIV AES-%zu aad %zu len %zu", 8 * keylen, aad_len, len);
    fill(key, keylen);
    fill(nonce, sizeof nonce);
    fill(aad, aad_len);
    fill(pt, len);
    SECRET(key, keylen);
    SECRET(nonce, sizeof nonce);
    SECRET(aad, aad_len);
    SECRET(pt, len);

    impl->set_key(&k, key, keylen);
    aeskit_gcmsiv_seal(&k, nonce, aad, aad_len, ct, pt, len, tag);
    PUBLIC(tag, sizeof tag);    /* sent, and the counter it starts is public */
    memcpy(back, ct, len);
    aeskit_gcmsiv_open(&k, nonce, aad, aad_len, back, back, len, tag, tag2);   /* in place */
    round_trip(pt, ct, back, len, tag, tag2);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- XAES-256-GCM through its descriptor: key, nonce, AAD and data secret;
 * Kx, its schedule, H and its powers (the short kernel's or derive's) never
 * steer a branch or an index ---------------------------------------------- */

static void check_xaes(size_t aad_len, size_t len)
{
    const struct aeskit_aead *d = &aeskit_xaes_aead;
    uint8_t key[32], nonce[24], aad[64], pt[MAXLEN], ct[MAXLEN], back[MAXLEN];
    uint8_t tag[16], tag2[16];
    uint64_t ks[(sizeof(aeskit_key) + 16) / 8 + 1];

    describe("XAES-256-GCM aad %zu len %zu", aad_len, len);
    fill(key, sizeof key);
    fill(nonce, sizeof nonce);
    fill(aad, aad_len);
    fill(pt, len);
    SECRET(key, sizeof key);
    SECRET(nonce, sizeof nonce);
    SECRET(aad, aad_len);
    SECRET(pt, len);

    assert(d->key_state <= sizeof ks);
    d->key_init(ks, impl, key, sizeof key, 16);
    const aeskit_span ad = {aad, aad_len};
    const aeskit_aead_msg m = {.nonce = nonce, .nonce_len = sizeof nonce, .ad = &ad,
                               .n_ad = aad_len > 0};
    d->seal(ks, &m, ct, pt, len, tag);
    PUBLIC(tag, sizeof tag);
    d->open(ks, &m, back, ct, len, tag, tag2);
    round_trip(pt, ct, back, len, tag, tag2);
    aeskit_secure_zero(ks, sizeof ks);
}


/* ---- CCM through its descriptor: seal, open, a tampered open ------------- */

static void check_ccm(size_t keylen, size_t nonce_len, unsigned tag_len, size_t aad_len,
                      size_t len, int in_place)
{
    const struct aeskit_aead *d = &aeskit_ccm_aead;
    uint8_t key[32], nonce[13], aad[300], pt[MAXLEN], buf[MAXLEN], back[MAXLEN];
    uint8_t tag[16], want[16], expect[16], expect2[16];
    aeskit_ccm_key ks;

    describe("CCM AES-%zu nonce %zu tag %u aad %zu len %zu%s", 8 * keylen, nonce_len, tag_len,
             aad_len, len, in_place ? " in place" : "");
    fill(key, keylen);
    fill(nonce, nonce_len);
    fill(aad, aad_len);
    fill(pt, len);
    memcpy(buf, pt, len);
    SECRET(key, keylen);
    SECRET(nonce, nonce_len);
    SECRET(aad, aad_len);
    SECRET(buf, len);

    d->key_init(&ks, impl, key, keylen, tag_len);
    const aeskit_span ad = {aad, aad_len};
    const aeskit_aead_msg m = {.nonce = nonce, .nonce_len = nonce_len, .ad = &ad,
                               .n_ad = aad_len > 0};
    uint8_t *ct = in_place ? buf : back;
    d->seal(&ks, &m, ct, buf, len, tag);
    memcpy(want, tag, 16);
    uint8_t *out = in_place ? ct : buf;
    d->open(&ks, &m, out, ct, len, want, expect);
    int good = aeskit_ct_memeq(expect, want, tag_len);
    /* the received tag with one bit changed: the verdict must steer nothing */
    want[tag_len - 1] ^= 0x01;
    uint8_t ct2[MAXLEN];
    d->seal(&ks, &m, ct2, out, len, tag);
    d->open(&ks, &m, ct2, ct2, len, want, expect2);
    int bad = aeskit_ct_memeq(expect2, want, tag_len);

    PUBLIC(&good, sizeof good);
    PUBLIC(&bad, sizeof bad);
    PUBLIC(ct2, len);
    PUBLIC(out, len);
    PUBLIC(tag, sizeof tag);
    cases++;
    if (!good || bad || memcmp(out, pt, len) != 0 || memcmp(ct2, pt, len) != 0)
        fail("CCM round trip");
    absorb(tag, tag_len);
    aeskit_secure_zero(&ks, sizeof ks);
}

/* Lengths across a block, the generic helpers' 32-block batch and aesni's
 * 8; AAD across the first AAD block (14 bytes after the 2-byte length). */
static void check_ccms(size_t keylen)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 16 * 9 + 5, 16 * 37};
    static const size_t aads[] = {0, 1, 14, 15, 30, 200, 299};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        TWIN(check_ccm(keylen, 7 + i % 7, (unsigned)(4 + 2 * (i % 7)), aads[i], lens[i],
                       (int)(i & 1)));
    TWIN(check_ccm(keylen, 13, 16, 0, 16 * 3, 0));
    TWIN(check_ccm(keylen, 12, 16, 21, 16 * 3 + 1, 1));
}

/* ---- CMAC: key, data and tags secret ------------------------------------ */

static void check_cmac(size_t keylen, size_t len)
{
    uint8_t key[32], msg[MAXLEN], tag[16], tag2[16], tag3[16];
    aeskit_cmac_key ck;
    aeskit_cmac c;

    describe("CMAC AES-%zu len %zu", 8 * keylen, len);
    fill(key, keylen);
    fill(msg, len);
    SECRET(key, keylen);
    SECRET(msg, len);
    aeskit_cmac_key_init(&ck, impl, key, keylen);
    aeskit_cmac_oneshot(&ck, msg, len, tag);
    /* by parts: a digest midway (final does not end c), then the rest in
     * two pieces that leave 1..16 bytes held back */
    aeskit_cmac_init(&c, &ck);
    aeskit_cmac_update(&c, msg, len / 3);
    aeskit_cmac_final(&c, tag3);
    aeskit_cmac_update(&c, msg + len / 3, len / 2 - len / 3);
    aeskit_cmac_update(&c, msg + len / 2, len - len / 2);
    aeskit_cmac_final(&c, tag2);
    /* the glue's verdicts: the full tag, a truncated one, and a wrong one (the
     * midway digest, a bit flipped) */
    int same = aeskit_ct_memeq(tag, tag2, 16) & aeskit_ct_memeq(tag, tag2, 4);
    tag3[0] ^= 1;
    int differs = !aeskit_ct_memeq(tag, tag3, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(&differs, sizeof differs);
    PUBLIC(tag, sizeof tag);
    cases++;
    if (!same || !differs)
        fail("cmac");
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&ck, sizeof ck);
    aeskit_secure_zero(&c, sizeof c);
}

/* ---- EAX: key, nonce, AAD and data secret; the counter a secret --------- */

static void check_eax(size_t keylen, size_t nonce_len, size_t aad_len, size_t len)
{
    uint8_t key[32], nonce[40], aad[64], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    uint8_t tag[16], tag2[16];
    aeskit_eax_key ek;
    aeskit_eax e;

    describe("EAX AES-%zu nonce %zu aad %zu len %zu", 8 * keylen, nonce_len, aad_len, len);
    fill(key, keylen);
    fill(nonce, nonce_len);
    fill(aad, aad_len);
    fill(pt, len);
    memcpy(msg, pt, len);
    SECRET(key, keylen);
    SECRET(nonce, nonce_len);
    SECRET(aad, aad_len);
    SECRET(msg, len);

    aeskit_eax_key_init(&ek, impl, key, keylen);
    aeskit_eax_init(&e, &ek, 1, nonce, nonce_len);
    aeskit_eax_aad(&e, aad, aad_len / 2);
    aeskit_eax_aad(&e, aad + aad_len / 2, aad_len - aad_len / 2);
    aeskit_eax_update(&e, ct, msg, len / 3);   /* a partial block, then the rest */
    aeskit_eax_update(&e, ct + len / 3, msg + len / 3, len - len / 3);
    aeskit_eax_finish(&e, tag);
    memcpy(back, ct, len);
    aeskit_eax_init(&e, &ek, 0, nonce, nonce_len);
    aeskit_eax_aad(&e, aad, aad_len);
    aeskit_eax_update(&e, back, back, len);   /* in place */
    aeskit_eax_finish(&e, tag2);
    int same = aeskit_ct_memeq(tag, tag2, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    PUBLIC(tag, sizeof tag);
    cases++;
    if (!same || memcmp(back, pt, len) != 0)
        fail("eax round trip");
    absorb(ct, len);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&ek, sizeof ek);
}

/* CMAC at the lengths that take K2 (0, partial) and K1 (whole blocks), and
 * EAX across the generic batch (32 blocks) and aesni's (8), with the empty
 * nonce and AAD among them. */
static void check_cmac_eax(size_t keylen)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 32, 16 * 9 + 5, 16 * 37};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        TWIN(check_cmac(keylen, lens[i]));
        TWIN(check_eax(keylen, (i * 5) % 20, (i * 7) % 40, lens[i]));
    }
    TWIN(check_eax(keylen, 0, 0, 16 * 37 + 3));
}

/* ---- many messages at once: CMAC's mac_many, every cipher's encrypt_many,
 * CCM's, EAX's and SIV's seal_many and open_many (the cbc_x slot, the
 * scheduler and the lockstep over it, aeskit_ctr_many); keys, ivs,
 * nonces, AAD and data secret, only the lengths public ------------------ */

#define MANY_N 11   /* past portable's 4 lanes and aesni's 8: lanes refill */
#define MANY_LEN 160

static void check_many(size_t keylen)
{
    static const size_t lens[MANY_N] = {0, 1, 15, 16, 17, 32, 64, 16 * 9 + 5, 3, 48, 100};
    static uint8_t msg[MANY_N][MANY_LEN], out[MANY_N][MANY_LEN + 16], back[MANY_N][MANY_LEN];
    static uint8_t plain[MANY_N][MANY_LEN];   /* msg's public copy, to compare with */
    uint8_t key[64], ivs[MANY_N][16], tags[MANY_N][16], expect[MANY_N][16], one[16], ok[MANY_N];
    aeskit_span spans[MANY_N];

    describe("many: CMAC, encrypt_many, CCM, EAX, SIV AES-%zu, %d messages", 8 * keylen, MANY_N);
    fill(key, sizeof key);   /* SIV takes two keys */
    fill(ivs[0], sizeof ivs);
    for (size_t i = 0; i < MANY_N; i++) {
        fill(plain[i], lens[i]);
        memcpy(msg[i], plain[i], lens[i]);
        spans[i] = (aeskit_span){msg[i], lens[i]};
    }
    SECRET(key, sizeof key);
    SECRET(ivs, sizeof ivs);
    SECRET(msg, sizeof msg);
    int same = 1;

    aeskit_cmac_key ck;
    aeskit_cmac_key_init(&ck, impl, key, keylen);
    aeskit_cmac_many(&ck, spans, MANY_N, tags);
    for (size_t i = 0; i < MANY_N; i++) {
        aeskit_cmac_oneshot(&ck, msg[i], lens[i], one);
        same &= aeskit_ct_memeq(one, tags[i], 16);
    }
    for (size_t i = 0; i < MANY_N; i++)   /* one length: the lockstep path */
        spans[i].len = 64;
    aeskit_cmac_many(&ck, spans, MANY_N, expect);
    for (size_t i = 0; i < MANY_N; i++) {
        aeskit_cmac_oneshot(&ck, msg[i], 64, one);
        same &= aeskit_ct_memeq(one, expect[i], 16);
    }
    PUBLIC(tags, sizeof tags);
    absorb(tags[0], sizeof tags);
    PUBLIC(expect, sizeof expect);
    absorb(expect[0], sizeof expect);
    aeskit_secure_zero(&ck, sizeof ck);

    aeskit_key k;
    impl->set_key(&k, key, keylen);
    for (size_t m = 0; aeskit_ciphers[m] != NULL; m++) {
        const struct aeskit_cipher *d = aeskit_ciphers[m];
        if (d->encrypt_many == NULL)
            continue;
        for (int pkcs7 = 0; pkcs7 <= (d->pkcs7 != NULL); pkcs7++) {
            aeskit_block_item items[MANY_N];
            for (size_t i = 0; i < MANY_N; i++)
                items[i] = (aeskit_block_item){ivs[i], out[i], msg[i],
                                               pkcs7 || !d->whole_blocks ? lens[i]
                                                                         : lens[i] / 16 * 16};
            d->encrypt_many(&k, pkcs7, items, MANY_N);
            for (size_t i = 0; i < MANY_N; i++) {
                const size_t n = pkcs7 ? lens[i] / 16 * 16 + 16 : items[i].len;
                PUBLIC(out[i], n);
                absorb(out[i], n);
            }
        }
    }
    aeskit_secure_zero(&k, sizeof k);

    int opened = 1;
    static const struct aeskit_aead *const aeads[] = {&aeskit_ccm_aead, &aeskit_eax_aead,
                                                      &aeskit_siv_aead};
    for (size_t e = 0; e < sizeof aeads / sizeof aeads[0]; e++) {
        const struct aeskit_aead *d = aeads[e];
        union {
            aeskit_ccm_key ccm;
            aeskit_eax_key eax;
            aeskit_siv_key siv;
        } ks;
        assert(d->key_state <= sizeof ks);
        d->key_init(&ks, impl, key, d->n_keys * keylen, 8);
        const aeskit_span ad = {ivs[MANY_N - 1], 16};
        aeskit_aead_item items[MANY_N];
        for (size_t i = 0; i < MANY_N; i++)
            items[i] = (aeskit_aead_item){
                .m = {.nonce = ivs[i], .nonce_len = 7 + i % 7, .ad = &ad, .n_ad = i & 1},
                .dst = out[i], .src = msg[i], .len = lens[i]};
        d->seal_many(&ks, items, MANY_N, tags);
        tags[5][0] ^= 1;   /* one forgery among them: its verdict must steer nothing */
        for (size_t i = 0; i < MANY_N; i++) {
            items[i].dst = back[i];
            items[i].src = out[i];
            items[i].tag = tags[i];
        }
        /* the mode's open_many and the comparison, as check_ccm does them: the
         * verdicts are public only once made (verify.c then zeroes on them) */
        d->open_many(&ks, items, MANY_N, expect);
        for (size_t i = 0; i < MANY_N; i++)
            ok[i] = (uint8_t)aeskit_ct_memeq(expect[i], tags[i], 8);
        PUBLIC(ok, sizeof ok);
        for (size_t i = 0; i < MANY_N; i++)
            opened &= ok[i] == (i != 5);
        PUBLIC(back, sizeof back);
        PUBLIC(out, sizeof out);
        for (size_t i = 0; i < MANY_N; i++)
            if (i != 5 && memcmp(back[i], plain[i], lens[i]) != 0)
                opened = 0;
        absorb(back[0], sizeof back);
        aeskit_secure_zero(&ks, sizeof ks);
    }
    PUBLIC(&same, sizeof same);
    PUBLIC(&opened, sizeof opened);
    cases++;
    if (!same || !opened)
        fail("many");
}

/* ---- SIV: keys, components and data secret; the received SIV public --- */

static void check_siv(size_t keylen, size_t n_ad, size_t ad_step, size_t len)
{
    uint8_t key[64], ads[AESKIT_SIV_MAX_AD * 40], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN],
        back[MAXLEN];
    uint8_t tag[16], tag2[16], tag3[16];
    aeskit_span span[AESKIT_SIV_MAX_AD];
    aeskit_siv_key sk;
    size_t used = 0;

    describe("SIV AES-%zu %zu components len %zu", 8 * keylen, n_ad, len);
    fill(key, 2 * keylen);
    for (size_t i = 0; i < n_ad; i++) {
        span[i].p = ads + used;
        span[i].len = (i * ad_step) % 40;   /* 0 (an empty component) .. 39 */
        used += span[i].len;
    }
    fill(ads, used);
    fill(pt, len);
    memcpy(msg, pt, len);
    SECRET(key, 2 * keylen);
    SECRET(ads, used);
    SECRET(msg, len);

    aeskit_siv_key_init(&sk, impl, key, 2 * keylen);
    aeskit_siv_seal(&sk, span, n_ad, ct, msg, len, tag);
    PUBLIC(tag, sizeof tag);   /* sent: the counter it starts is public */
    memcpy(back, ct, len);
    aeskit_siv_open(&sk, span, n_ad, back, back, len, tag, tag2);   /* in place */
    int same = aeskit_ct_memeq(tag, tag2, 16);
    int spoilt_ok = 1;
    if (len > 0) {
        uint8_t bad[MAXLEN];
        memcpy(bad, ct, len);
        bad[(len * 5) % len] ^= 0x08;   /* still secret */
        aeskit_siv_open(&sk, span, n_ad, bad, bad, len, tag, tag3);
        spoilt_ok = aeskit_ct_memeq(tag, tag3, 16);
        PUBLIC(&spoilt_ok, sizeof spoilt_ok);
    }

    PUBLIC(&same, sizeof same);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    cases++;
    if (!same || (len > 0 && spoilt_ok) || memcmp(back, pt, len) != 0)
        fail("siv round trip");
    absorb(ct, len);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&sk, sizeof sk);
}

/* No components, one, several of mixed lengths (empty ones among them)
 * and the most allowed, over data of every S2V case: under a block (pad),
 * one or two blocks (xorend with no shared prefix), and longer. */
static void check_sivs(size_t keylen)
{
    static const size_t base[] = {0, 1, 15, 16, 17, 31, 32, 33, 16 * 9 + 5, 16 * 37};
    size_t lens[sizeof base / sizeof base[0] + 4];
    const size_t n = with_long(lens, base, sizeof base / sizeof base[0]);
    for (size_t i = 0; i < n; i++)
        TWIN(check_siv(keylen, i % 4 == 3 ? 9 : i % 4, 7 + i, lens[i]));
    TWIN(check_siv(keylen, AESKIT_SIV_MAX_AD, 3, 16 * 5 + 1));
}

/* ---- key wrap: the unwrap's verdict constant time ------------------------ */

static int all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

static void check_keywrap(size_t keylen, int padded, size_t len)
{
    uint8_t key[32], pt[MAXLEN], msg[MAXLEN], wrapped[MAXLEN + 16], back[MAXLEN + 8];
    uint8_t bad[MAXLEN + 16];
    aeskit_key k;
    const struct aeskit_keywrap *d = padded ? &aeskit_kwp_keywrap : &aeskit_kw_keywrap;
    const size_t wlen = d->wrapped_len(len);

    describe("%s AES-%zu len %zu", d->name, 8 * keylen, len);
    fill(key, keylen);
    fill(pt, len);
    memcpy(msg, pt, len);
    SECRET(key, keylen);
    SECRET(msg, len);

    impl->set_key(&k, key, keylen);
    d->wrap(&k, wrapped, msg, len);
    /* unwrap what came out, still secret, out of place and in place */
    size_t got = d->unwrap(&k, back, wrapped, wlen);
    memcpy(bad, wrapped, wlen);
    bad[(len * 7) % wlen] ^= 0x20;   /* secret: the tampered data stays undefined */
    size_t got_bad = d->unwrap(&k, bad, bad, wlen);

    PUBLIC(&got, sizeof got);
    PUBLIC(&got_bad, sizeof got_bad);
    PUBLIC(wrapped, wlen);
    PUBLIC(back, wlen - 8);
    PUBLIC(bad, wlen - 8);
    cases++;
    if (got != len || memcmp(back, pt, len) != 0 || !all_zero(back + len, wlen - 8 - len) ||
        got_bad != 0 || !all_zero(bad, wlen - 8))
        fail("key wrap");
    absorb(wrapped, wlen);
    aeskit_secure_zero(&k, sizeof k);
}

/* KW at 2 and more semiblocks; KWP across the single-block form and every
 * pad length. */
static void check_keywraps(size_t keylen)
{
    static const size_t kw_lens[] = {16, 24, 40, 8 * 33};
    for (size_t i = 0; i < sizeof kw_lens / sizeof kw_lens[0]; i++)
        TWIN(check_keywrap(keylen, 0, kw_lens[i]));
    for (size_t len = 1; len <= 17; len++)
        TWIN(check_keywrap(keylen, 1, len));
    TWIN(check_keywrap(keylen, 1, 8 * 33 + 3));
}

/* ---- negative control ----------------------------------------------------- */

static uint8_t sbox[256];

/* A classic table-based S-box lookup indexed by a key byte, its result
 * then used in a branch: memcheck must report it. */
__attribute__((noinline)) static unsigned negative_control(const uint8_t *secret)
{
    unsigned v = sbox[secret[0]];
    if (v & 1)
        return v * 3;
    return v;
}

static void run_negative_control(void)
{
    uint8_t key[16];
    for (unsigned i = 0; i < 256; i++)
        sbox[i] = (uint8_t)(i * 167 + 13);
    fill(key, sizeof key);
    SECRET(key, sizeof key);
    unsigned r = negative_control(key);
    PUBLIC(&r, sizeof r);
    printf("negative control: %u\n", r);
}

/* The AEADs on the current table, at lengths across its kernels' batches
 * (aesni: 8 blocks, its fused GCM from 8, then a CTR tail of 4, 2 and 1
 * blocks, each with its own counter test; the table's long_lens). */
static void check_aeads(size_t keylen)
{
    static const size_t base[] = {0, 15, 16, 17, 16 * 9 + 5, 16 * 37, 16 * 15 + 3};
    size_t lens[sizeof base / sizeof base[0] + 4];
    const size_t n = with_long(lens, base, sizeof base / sizeof base[0]);
    for (size_t i = 0; i < n; i++) {
        TWIN(check_aead(keylen, 0, 12, i * 7 % 40, lens[i]));
        TWIN(check_aead(keylen, 0, 7 + i % 9, 20, lens[i]));   /* nonces of 7..15 bytes */
        TWIN(check_aead(keylen, 1, 12, i * 9 % 50, lens[i]));
        TWIN(check_aead(keylen, 1, 1 + 2 * (i % 7), 33, lens[i]));   /* 1..13 bytes */
        TWIN(check_gcmsiv(keylen, i * 11 % 60, lens[i]));
        if (keylen == 32)   /* XAES-256-GCM: its short kernel's reach, and past it */
            TWIN(check_xaes(i * 13 % 50, lens[i]));
    }
    TWIN(check_gcm_short(keylen));
}

/* ---- XTS: key halves compared, tweak and data secret; the stream engine
 * with ciphertext stealing, and sectors (whose numbers are public) ---------- */

static void check_xts(size_t keylen, size_t len)
{
    uint8_t key[64], tweak[16], pt[MAXLEN], ct[MAXLEN + 32], back[MAXLEN + 32];
    const struct aeskit_cipher *xts = cipher_named("XTS");
    aeskit_key keys[2];
    uint64_t st[AESKIT_CIPHER_STATE_MAX / 8];
    size_t tail;

    describe("XTS-AES-%zu len %zu", 8 * keylen, len);
    fill(key, 2 * keylen);
    fill(tweak, sizeof tweak);
    fill(pt, len);
    SECRET(key, 2 * keylen);
    SECRET(tweak, sizeof tweak);
    SECRET(pt, len);

    /* the glue's equal-halves check: only the verdict may be public */
    int equal = aeskit_ct_memeq(key, key + keylen, keylen);
    impl->set_key(&keys[0], key, keylen);
    impl->set_key(&keys[1], key + keylen, keylen);
    xts->init(st, keys, 1, tweak);
    size_t done = xts->update(st, ct, pt, len / 3);
    done += xts->update(st, ct + done, pt + len / 3, len - len / 3);
    xts->finish(st, ct + done, &tail);
    memcpy(back, ct, len);
    xts->init(st, keys, 0, tweak);
    done = xts->update(st, back, back, len);     /* in place */
    xts->finish(st, back + done, &tail);
    if (len % 16 == 0) {
        uint8_t sector[16] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, sec[MAXLEN];
        xts->sectors(keys, 1, sector, 16, sec, pt, len);
        PUBLIC(sec, len);
        absorb(sec, len);
    }
    if (len >= 512) {   /* sectors of whole 8-block batches: aesni's xts_units pass */
        uint8_t sector[16] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, sec[512];
        xts->sectors(keys, 1, sector, 128, sec, pt, 512);
        PUBLIC(sec, 512);
        absorb(sec, 512);
    }

    PUBLIC(&equal, sizeof equal);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    PUBLIC(pt, len);
    cases++;
    if (equal || memcmp(back, pt, len) != 0)
        fail("xts");
    absorb(ct, len);
    aeskit_secure_zero(keys, sizeof keys);
    aeskit_secure_zero(st, sizeof st);
}

static void check_xts_lengths(size_t keylen)
{
    static const size_t base[] = {16, 17, 31, 32, 47, 16 * 37, 16 * 37 + 5};
    size_t lens[sizeof base / sizeof base[0] + 4];
    const size_t n = with_long(lens, base, sizeof base / sizeof base[0]);
    for (size_t i = 0; i < n; i++)
        TWIN(check_xts(keylen, lens[i]));
}

/* ---- every slot of the table, against portable's ---------------------------
 * Key, data and every chaining value, counter, tweak, MAC, OCB offset and
 * checksum, hash key and accumulator secret; public only what a slot's
 * contract makes so: n, enc, the counter kind, OCB's block index, the gcm
 * and gcmsiv_open slots' counters, and (through the view) BE128 and LE32
 * counters. After each call its results are made public and compared with
 * portable's on the same inputs; the fused slots must do some blocks. */

/* Block counts, ascending, without repeats. */
typedef struct {
    size_t n[48];
    size_t len;
} counts;

static void counts_add(counts *c, size_t n)
{
    size_t i = 0;
    assert(n <= MAXBLOCKS);
    while (i < c->len && c->n[i] < n)
        i++;
    if (i < c->len && c->n[i] == n)
        return;
    assert(c->len < sizeof c->n / sizeof c->n[0]);
    memmove(c->n + i + 1, c->n + i, (c->len - i) * sizeof c->n[0]);
    c->n[i] = n;
    c->len++;
}

/* From the table's batch w (vaes: 8 vectors, then at most one half batch,
 * then one vector at a time, the last partial; few_blocks and fewer go to
 * aesni's code): every count to w + 1, which takes each tail with the half
 * batch and without; then a batch and the longest tail, a batch and a half
 * with and without a tail, two batches, two and a half with the longest
 * tail; and 37, past the generic helpers' 32 (portable). GHASH: every
 * count to 2 past ghash_short_blocks (its 128-bit path), a batch, the
 * key's powers (one reduction) and past, two reductions and a tail. The
 * fused GCM kernel: from 1 block short of gcm_fused_min_blocks plus the
 * head (a 12-byte nonce's counter 2 has 14), through 3, 4, 5, 6 and 7
 * batches (the chunks of up to 4 that share a reduction). */
static void sweep_counts(counts *slots, counts *ghash, counts *fused)
{
    const size_t w = batch(), gs = constant("ghash_short_blocks");
    const size_t gp = constant("ghash_key_powers") ? constant("ghash_key_powers") : w;
    const size_t gm = constant("gcm_fused_min_blocks");
    slots->len = ghash->len = fused->len = 0;
    for (size_t n = 0; n <= w + 1; n++)
        counts_add(slots, n);
    const size_t more[] = {w + w / 2 - 1, w + w / 2, w + w / 2 + 3, 2 * w + 5, 3 * w - 1, 37};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        counts_add(slots, more[i]);
    for (size_t n = 0; n <= gs + 2; n++)
        counts_add(ghash, n);
    const size_t gmore[] = {w - 1, w, w + 1, gp - 1, gp, gp + 1, gp + w + 3, 2 * gp + 5};
    for (size_t i = 0; i < sizeof gmore / sizeof gmore[0]; i++)
        counts_add(ghash, gmore[i]);
    *fused = *slots;
    if (gm != 0) {
        const size_t fmore[] = {gm + 13, gm + 14, gm + w / 2 + 17, 4 * w + 5, 5 * w + 9,
                                6 * w + 17, 8 * w - 1};
        for (size_t i = 0; i < sizeof fmore / sizeof fmore[0]; i++)
            counts_add(fused, fmore[i]);
    }
}

static const struct aeskit_impl *const ref = &aeskit_portable_impl;

typedef struct {
    size_t keylen;
    aeskit_key k, k2;     /* through impl, from secret key bytes */
    aeskit_key kp, kp2;   /* portable's, from the same bytes public */
    aeskit_ghash_key hk, hkp;   /* from E(0), for gcm and gcmsiv_open */
} sweep;

static struct {
    uint8_t in[MAXLEN], sec[MAXLEN], got[MAXLEN], want[MAXLEN];
} buf;

/* Blocks the fused slots did over the sweep: each must do some. */
static size_t done_gcm, done_siv, done_ocb, done_ccm;

static uint8_t *secret_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
    memcpy(dst, src, n);
    SECRET(dst, n);
    return dst;
}

/* One slot call's verdict, taken on what was made public; its output
 * goes into the checksum. */
static void result(int same, const uint8_t *out, size_t len)
{
    cases++;
    slot_calls++;
    if (!same)
        fail("slot differs from portable's");
    absorb(out, len);
}

static const char *ip_name(int ip)
{
    return ip ? " in place" : "";
}

static void sweep_ecb(const sweep *s, size_t n, int ip)
{
    for (int enc = 0; enc <= 1; enc++) {
        describe("ecb_%s AES-%zu n %zu%s", enc ? "enc" : "dec", 8 * s->keylen, n, ip_name(ip));
        uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
        (enc ? impl->ecb_enc : impl->ecb_dec)(&s->k, dst, src, n);
        (enc ? ref->ecb_enc : ref->ecb_dec)(&s->kp, buf.want, buf.in, n);
        PUBLIC(dst, 16 * n);
        result(memcmp(dst, buf.want, 16 * n) == 0, dst, 16 * n);
    }
}

static void sweep_chain(const sweep *s, const char *name, aeskit_chain_fn *f,
                        aeskit_chain_fn *g, size_t n, int ip)
{
    uint8_t iv0[16], iv[16], ivp[16];
    describe("%s AES-%zu n %zu%s", name, 8 * s->keylen, n, ip_name(ip));
    fill(iv0, 16);
    memcpy(ivp, iv0, 16);
    secret_copy(iv, iv0, 16);
    uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
    f(&s->k, iv, dst, src, n);
    g(&s->kp, ivp, buf.want, buf.in, n);
    PUBLIC(dst, 16 * n);
    PUBLIC(iv, 16);
    result(memcmp(dst, buf.want, 16 * n) == 0 && memcmp(iv, ivp, 16) == 0, dst, 16 * n);
}

/* A counter whose carries fall inside the call (tests/cross/selftest.c's):
 * random, its 32-bit part near 2^32, its low 64 bits near a carry, or all
 * 128 bits near the wrap. */
static void ctr_start(enum aeskit_ctr kind, uint8_t ctr[16], unsigned variant)
{
    fill(ctr, 16);
    const unsigned short_by = 1 + variant % 19;
    switch (variant % 4) {
    case 0:
        break;
    case 1:
        if (kind == AESKIT_CTR_LE32)
            aeskit_store_le32(ctr, 0u - short_by);
        else
            aeskit_store_be32(ctr + 12, 0u - short_by);
        break;
    case 2:
        aeskit_store_be64(ctr + 8, 0 - (uint64_t)short_by);
        break;
    default:
        memset(ctr, 0xff, 16);
        ctr[15] = (uint8_t)(0x100 - short_by);
        break;
    }
}

static const char *const ctr_names[] = {
    [AESKIT_CTR_BE128] = "BE128", [AESKIT_CTR_BE32] = "BE32", [AESKIT_CTR_LE32] = "LE32",
    [AESKIT_CTR_BE128_SECRET] = "BE128_SECRET",
};

static void sweep_ctr(const sweep *s, enum aeskit_ctr kind, size_t n, unsigned variant, int ip)
{
    uint8_t c0[16], c[16], cp[16];
    describe("ctr %s AES-%zu n %zu variant %u%s", ctr_names[kind], 8 * s->keylen, n, variant,
             ip_name(ip));
    ctr_start(kind, c0, variant);
    memcpy(cp, c0, 16);
    secret_copy(c, c0, 16);   /* the view makes a BE128 or LE32 one public */
    uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
    impl->ctr(&s->k, kind, c, dst, src, n);
    ref->ctr(&s->kp, kind, cp, buf.want, buf.in, n);
    PUBLIC(dst, 16 * n);
    PUBLIC(c, 16);
    result(memcmp(dst, buf.want, 16 * n) == 0 && memcmp(c, cp, 16) == 0, dst, 16 * n);
}

static void sweep_cbc_mac_xts(const sweep *s, size_t n, unsigned variant, int ip)
{
    uint8_t a0[16], a[16], b[16];
    describe("cbc_mac AES-%zu n %zu", 8 * s->keylen, n);
    fill(a0, 16);
    memcpy(b, a0, 16);
    secret_copy(a, a0, 16);
    impl->cbc_mac(&s->k, a, secret_copy(buf.sec, buf.in, 16 * n), n);
    ref->cbc_mac(&s->kp, b, buf.in, n);
    PUBLIC(a, 16);
    result(memcmp(a, b, 16) == 0, a, 16);
    for (int enc = 0; enc <= 1; enc++) {
        describe("xts %s AES-%zu n %zu variant %u%s", enc ? "enc" : "dec", 8 * s->keylen, n,
                 variant, ip_name(ip));
        fill(a0, 16);
        if (variant % 2)
            a0[15] |= 0x80;   /* the first doubling carries out of bit 127 */
        memcpy(b, a0, 16);
        secret_copy(a, a0, 16);
        uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
        impl->xts(&s->k, enc, a, dst, src, n);
        ref->xts(&s->kp, enc, b, buf.want, buf.in, n);
        PUBLIC(dst, 16 * n);
        PUBLIC(a, 16);
        result(memcmp(dst, buf.want, 16 * n) == 0 && memcmp(a, b, 16) == 0, dst, 16 * n);
    }
}

/* units data units of unit blocks, against portable's xts a unit at a
 * time. */
static void sweep_xts_units(const sweep *s, size_t unit, size_t units, int enc)
{
    uint8_t tw0[16 * 3], tw[16 * 3], t[16];
    if (impl->xts_units == NULL)
        return;
    assert(units <= 3 && unit * units <= MAXBLOCKS);
    describe("xts_units %s AES-%zu unit %zu units %zu", enc ? "enc" : "dec", 8 * s->keylen,
             unit, units);
    fill(tw0, 16 * units);
    tw0[15] |= 0x80;
    secret_copy(tw, tw0, 16 * units);
    impl->xts_units(&s->k, enc, tw, unit, buf.got, secret_copy(buf.sec, buf.in, 16 * unit * units),
                    units);
    for (size_t i = 0; i < units; i++) {
        memcpy(t, tw0 + 16 * i, 16);
        ref->xts(&s->kp, enc, t, buf.want + 16 * unit * i, buf.in + 16 * unit * i, unit);
    }
    PUBLIC(buf.got, 16 * unit * units);
    result(memcmp(buf.got, buf.want, 16 * unit * units) == 0, buf.got, 16 * unit * units);
}

/* The fused OCB3 slot from block index blocks (public): offset and
 * checksum secret, the L values from the secret key; portable's blocks one
 * at a time as RFC 7253 has them. */
static void sweep_ocb(const sweep *s, size_t n, uint64_t blocks, int ip)
{
    static aeskit_ocb_key ok, okp;
    aeskit_ocb_state st0, st, stp;
    if (impl->ocb == NULL)
        return;
    aeskit_ocb_key_init(&ok, &s->k);
    aeskit_ocb_key_init(&okp, &s->kp);
    for (int enc = 0; enc <= 1; enc++) {
        describe("ocb %s AES-%zu n %zu from block %llu%s", enc ? "enc" : "dec", 8 * s->keylen,
                 n, (unsigned long long)blocks, ip_name(ip));
        fill(st0.offset, 16);
        fill(st0.checksum, 16);
        st0.blocks = blocks;
        st = stp = st0;
        SECRET(st.offset, 16);
        SECRET(st.checksum, 16);
        uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
        const size_t done = impl->ocb->crypt(&s->k, &ok, enc, &st, dst, src, n);
        for (size_t i = 0; i < done; i++) {
            uint8_t x[16];
            stp.blocks++;
            aeskit_xor16(stp.offset, stp.offset, okp.l[aeskit_ntz64(stp.blocks)]);
            aeskit_xor16(x, buf.in + 16 * i, stp.offset);
            (enc ? ref->ecb_enc : ref->ecb_dec)(&s->kp, x, x, 1);
            aeskit_xor16(buf.want + 16 * i, x, stp.offset);
            aeskit_xor16(stp.checksum, stp.checksum, enc ? buf.in + 16 * i : buf.want + 16 * i);
        }
        PUBLIC(dst, 16 * done);
        PUBLIC(&st, sizeof st);
        done_ocb += done;
        result(done <= n && memcmp(dst, buf.want, 16 * done) == 0 &&
                   memcmp(&st, &stp, sizeof st) == 0,
               dst, 16 * done);
    }
    aeskit_secure_zero(&ok, sizeof ok);
}

/* CTR under kc (k, or the second key: SIV's opening) and CBC-MAC under k
 * in one pass, counter and MAC secret (EAX's counter is a MAC); against
 * portable's ctr and cbc_mac on the prefix done. */
static void sweep_ctr_cbcmac(const sweep *s, size_t n, int mac_dst, int two, unsigned variant,
                             int ip)
{
    uint8_t c0[16], c[16], cp[16], m0[16], m[16], mp[16];
    if (impl->ccm == NULL)
        return;
    describe("ctr_cbcmac AES-%zu n %zu mac_dst %d%s variant %u%s", 8 * s->keylen, n, mac_dst,
             two ? " two keys" : "", variant, ip_name(ip));
    ctr_start(AESKIT_CTR_BE128, c0, variant);
    fill(m0, 16);
    memcpy(cp, c0, 16);
    memcpy(mp, m0, 16);
    secret_copy(c, c0, 16);
    secret_copy(m, m0, 16);
    uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
    const size_t done =
        impl->ccm->ctr_cbcmac(&s->k, two ? &s->k2 : &s->k, mac_dst, c, m, dst, src, n);
    ref->ctr(two ? &s->kp2 : &s->kp, AESKIT_CTR_BE128, cp, buf.want, buf.in, done);
    ref->cbc_mac(&s->kp, mp, mac_dst ? buf.want : buf.in, done);
    PUBLIC(dst, 16 * done);
    PUBLIC(c, 16);
    PUBLIC(m, 16);
    done_ccm += done;
    result(done <= n && memcmp(dst, buf.want, 16 * done) == 0 && memcmp(c, cp, 16) == 0 &&
               memcmp(m, mp, 16) == 0,
           dst, 16 * done);
}

static void reverse_blocks(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < 16 * n; i++)
        dst[i] = src[i / 16 * 16 + 15 - i % 16];
}

/* The fused GCM slot: BE32 counters (public: a 12-byte nonce's, as
 * modes/gcm.c calls it) from 2 (a 12-byte nonce's first), from a multiple
 * of 16, near 2^32 and random; the accumulator secret. */
static void sweep_gcm(sweep *s, size_t n, unsigned variant, int ip)
{
    static const uint32_t starts[] = {2, 0x1230, 0xffffffffu - 37, 0};
    uint8_t c[16], cp[16], a0[16], a[16], ap[16];
    if (impl->gcm == NULL)
        return;
    for (int enc = 0; enc <= 1; enc++) {
        describe("gcm %s AES-%zu n %zu variant %u%s", enc ? "enc" : "dec", 8 * s->keylen, n,
                 variant, ip_name(ip));
        fill(c, 16);
        if (variant % 4 != 3)
            aeskit_store_be32(c + 12, starts[variant % 4]);
        memcpy(cp, c, 16);
        fill(a0, 16);
        memcpy(ap, a0, 16);
        secret_copy(a, a0, 16);
        uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
        /* odd variants with a lengths block (public), hashed last */
        uint8_t lens[16], ek[16], ek2[16] = {0}, prev[16];
        fill(lens, 16);
        const uint8_t *l = variant % 2 ? lens : NULL;
        memcpy(prev, c, 16);   /* E(K, prev) into ek with the lengths */
        aeskit_store_be32(prev + 12, aeskit_load_be32(c + 12) - 1);
        const size_t done = impl->gcm->crypt(&s->k, &s->hk, enc, c, a, dst, src, n, l,
                                             l != NULL ? ek : NULL);
        if (!enc)
            ref->ghash(&s->hkp, ap, buf.in, done);
        ref->ctr(&s->kp, AESKIT_CTR_BE32, cp, buf.want, buf.in, done);
        if (enc)
            ref->ghash(&s->hkp, ap, buf.want, done);
        int ek_ok = 1;
        if (l != NULL && done == n && n > 0) {
            ref->ghash(&s->hkp, ap, l, 1);
            ref->ecb_enc(&s->kp, ek2, prev, 1);
            PUBLIC(ek, 16);
            ek_ok = memcmp(ek, ek2, 16) == 0;
        }
        PUBLIC(dst, 16 * done);
        PUBLIC(a, 16);
        done_gcm += done;
        result(done <= n && memcmp(dst, buf.want, 16 * done) == 0 && memcmp(c, cp, 16) == 0 &&
                   memcmp(a, ap, 16) == 0 && ek_ok,
               dst, 16 * done);
    }
}

/* The fused GCM-SIV opening: LE32 counters from the tag (public), the
 * accumulator secret; against portable's ctr and its ghash of the
 * byte-reversed plaintext (POLYVAL's model, aeskit.h). */
static void sweep_gcmsiv_open(sweep *s, size_t n, unsigned variant, int ip)
{
    static uint8_t rev[MAXLEN];
    uint8_t c[16], cp[16], a0[16], a[16], ap[16];
    if (impl->gcmsiv == NULL || impl->gcmsiv->open == NULL)
        return;
    describe("gcmsiv_open AES-%zu n %zu variant %u%s", 8 * s->keylen, n, variant, ip_name(ip));
    ctr_start(AESKIT_CTR_LE32, c, variant);
    c[15] |= 0x80;   /* as a tag makes it */
    memcpy(cp, c, 16);
    fill(a0, 16);
    memcpy(ap, a0, 16);
    secret_copy(a, a0, 16);
    uint8_t *src = secret_copy(buf.sec, buf.in, 16 * n), *dst = ip ? src : buf.got;
    const size_t done = impl->gcmsiv->open(&s->k, &s->hk, c, a, dst, src, n);
    ref->ctr(&s->kp, AESKIT_CTR_LE32, cp, buf.want, buf.in, done);
    reverse_blocks(rev, buf.want, done);
    ref->ghash(&s->hkp, ap, rev, done);
    PUBLIC(dst, 16 * done);
    PUBLIC(a, 16);
    done_siv += done;
    result(done <= n && memcmp(dst, buf.want, 16 * done) == 0 && memcmp(c, cp, 16) == 0 &&
               memcmp(a, ap, 16) == 0,
           dst, 16 * done);
}

/* ghash and polyval with H, the accumulator and the data secret, on keys
 * built for exactly n blocks and for any length; against portable's ghash
 * (of the byte-reversed blocks for polyval). */
static void sweep_ghash(size_t n)
{
    static aeskit_ghash_key hk, hkp;
    static uint8_t rev[MAXLEN];
    uint8_t h[16], hs[16], a0[16], a[16], ap[16];
    fill(h, 16);
    ref->ghash_key(&hkp, h, AESKIT_GHASH_ANY);
    for (int pv = 0; pv <= 1; pv++) {
        if (pv && impl->polyval == NULL)
            break;
        for (int kind = 0; kind <= 2; kind++) {
            /* a key for n blocks, for any length, and (n longer) for
             * AESKIT_GHASH_MSG blocks, which serves any call (GCM-SIV's) */
            if (kind == 2 && n <= AESKIT_GHASH_MSG)
                continue;
            describe("%s n %zu key for %s", pv ? "polyval" : "ghash", n,
                     kind == 0 ? "n" : kind == 1 ? "any" : "run");
            fill(a0, 16);
            memcpy(ap, a0, 16);
            secret_copy(a, a0, 16);
            impl->ghash_key(&hk, secret_copy(hs, h, 16),
                            kind == 0 ? n : kind == 1 ? AESKIT_GHASH_ANY : AESKIT_GHASH_MSG);
            (pv ? impl->polyval : impl->ghash)(&hk, a, secret_copy(buf.sec, buf.in, 16 * n), n);
            if (pv)
                reverse_blocks(rev, buf.in, n);
            ref->ghash(&hkp, ap, pv ? rev : buf.in, n);
            PUBLIC(a, 16);
            result(memcmp(a, ap, 16) == 0, a, 16);
        }
    }
    aeskit_secure_zero(&hk, sizeof hk);
}

static void check_slots(size_t keylen)
{
    static sweep s;
    counts slots, ghash, fused;
    uint8_t key[32], key2[32], keys[64], h[16] = {0};
    sweep_counts(&slots, &ghash, &fused);
    s.keylen = keylen;
    fill(key, keylen);
    fill(key2, keylen);
    ref->set_key(&s.kp, key, keylen);
    ref->set_key(&s.kp2, key2, keylen);
    impl->set_key(&s.k, secret_copy(keys, key, keylen), keylen);
    impl->set_key(&s.k2, secret_copy(keys + 32, key2, keylen), keylen);
    impl->ecb_enc(&s.k, h, h, 1);
    impl->ghash_key(&s.hk, h, AESKIT_GHASH_ANY);
    ref->ecb_enc(&s.kp, h, (const uint8_t[16]){0}, 1);
    ref->ghash_key(&s.hkp, h, AESKIT_GHASH_ANY);
    fill(buf.in, MAXLEN);

    for (size_t i = 0; i < slots.len; i++) {
        const size_t n = slots.n[i];
        const int ip = (int)(i % 2);
        const unsigned v = (unsigned)i;
        sweep_ecb(&s, n, ip);
        sweep_chain(&s, "cbc_enc", impl->cbc_enc, ref->cbc_enc, n, ip);
        sweep_chain(&s, "cbc_dec", impl->cbc_dec, ref->cbc_dec, n, !ip);
        sweep_chain(&s, "cfb_enc", impl->cfb_enc, ref->cfb_enc, n, ip);
        sweep_chain(&s, "cfb_dec", impl->cfb_dec, ref->cfb_dec, n, !ip);
        sweep_chain(&s, "ofb", impl->ofb, ref->ofb, n, ip);
        for (int kind = AESKIT_CTR_BE128; kind <= AESKIT_CTR_BE128_SECRET; kind++)
            sweep_ctr(&s, (enum aeskit_ctr)kind, n, v + (unsigned)kind, (int)((i + kind) % 2));
        sweep_cbc_mac_xts(&s, n, v, ip);
        sweep_ocb(&s, n, v % 5 == 4 ? 0xfffffff0u : v * 7 % 40, ip);
        sweep_ctr_cbcmac(&s, n, (int)(i / 2 % 2), (int)(i % 3 == 0), v, ip);
    }
    for (size_t i = 0; i < fused.len; i++) {
        sweep_gcm(&s, fused.n[i], (unsigned)i, (int)(i % 2));
        sweep_gcmsiv_open(&s, fused.n[i], (unsigned)i, (int)(i / 2 % 2));
    }
    /* units of a few blocks (aesni's), of 1 past, of a half batch and a
     * tail, of a batch, of a batch and a half and a tail */
    const size_t w = batch(), few = constant("few_blocks") ? constant("few_blocks") : 4;
    const size_t units[] = {few, few + 1, w / 2 + 3, w, w + w / 2 + 3};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        for (size_t k = 1; k <= 3 && units[u] * k <= MAXBLOCKS; k++)
            sweep_xts_units(&s, units[u], k, (int)((u + k) % 2));
    if (keylen == 16)   /* GHASH keys do not depend on the AES key */
        for (size_t i = 0; i < ghash.len; i++)
            sweep_ghash(ghash.n[i]);
    aeskit_secure_zero(&s, sizeof s);
}

/* The fused slots the table has must have done blocks in the sweep: else
 * their kernels went unchecked. */
static void check_fused_did_work(void)
{
    describe("the sweep's totals");
    if ((impl->gcm != NULL && done_gcm == 0) ||
        (impl->gcmsiv != NULL && impl->gcmsiv->open != NULL && done_siv == 0) ||
        (impl->ocb != NULL && done_ocb == 0) || (impl->ccm != NULL && done_ccm == 0))
        fail("a fused slot did no block");
}

int main(int argc, char **argv)
{
    int negative = 0;
    const char *name = "portable";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--negative-control") == 0) {
            negative = 1;
        } else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--negative-control] [--table NAME]\n", argv[0]);
            return 2;
        }
    }
    const struct aeskit_impl *t = NULL;
    for (size_t i = 0; tables[i] != NULL; i++)
        if (strcmp(tables[i]->name, name) == 0)
            t = tables[i];
#if defined(AESKIT_HAVE_X86)
    /* aesni's VEX build (aesni_avx.c), which dispatch.c prefers on AVX
     * CPUs: its table is also named aesni, and it alone runs the inline-asm
     * GCM loop (aesni_gcm_asm.h), which ASan cannot see into */
    if (strcmp(name, "aesni_avx") == 0)
        t = &aeskit_aesni_avx_impl;
#endif
    if (t == NULL) {
        fprintf(stderr, "no table %s in this build; it has:", name);
        for (size_t i = 0; tables[i] != NULL; i++)
            fprintf(stderr, " %s", tables[i]->name);
        fprintf(stderr, "\n");
        return 2;
    }
    use_table(t);

    check_fips197();
    if (t == &aeskit_portable_impl)   /* the padding check alone: no table */
        check_pkcs7_check();
    static const struct shape empty = { "empty", 0, { 0 } };
    for (size_t keylen = 16; keylen <= 32; keylen += 8) {
        /* every one-key mode; XTS, with two, has its own cases */
        for (size_t m = 0; aeskit_ciphers[m] != NULL; m++) {
            const struct aeskit_cipher *d = aeskit_ciphers[m];
            if (d->n_keys != 1)
                continue;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int in_place = 0; in_place <= 1; in_place++)
                    TWIN(check_mode(keylen, d, &shapes[s], in_place));
        }
        for (size_t m = 0; aeskit_ciphers[m] != NULL; m++) {
            const struct aeskit_cipher *d = aeskit_ciphers[m];
            if (d->pkcs7 == NULL)
                continue;
            for (int in_place = 0; in_place <= 1; in_place++) {
                TWIN(check_padded(keylen, d, &empty, in_place, keylen / 8));
                for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    TWIN(check_padded(keylen, d, &shapes[s], in_place,
                                      s + 3 * (unsigned)in_place + (unsigned)keylen));
            }
        }
        check_aeads(keylen);
        check_ccms(keylen);
        check_keywraps(keylen);
        check_cmac_eax(keylen);
        TWIN(check_many(keylen));
        if (keylen != 24)
            check_xts_lengths(keylen);
        check_sivs(keylen);
        check_slots(keylen);
    }
    check_fused_did_work();
    if (negative)
        run_negative_control();

    printf("table: %s\ncases: %u, of which slot calls: %u\nchecksum: %016llx\n", name, cases,
           slot_calls, (unsigned long long)checksum);
    if (failures) {
        fprintf(stderr, "%u failure(s)\n", failures);
        return 1;
    }
    return 0;
}
