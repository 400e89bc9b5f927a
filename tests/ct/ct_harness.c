/*
 * ct_harness.c: the constant-time check of the portable backend, run under
 * valgrind memcheck by tests/test_constant_time.py.
 *
 * Why: memcheck reports every conditional jump, memory address and syscall
 * argument that depends on undefined bytes. Marking key, iv, counter and
 * data undefined before use turns that into a check that nothing branches
 * on or indexes memory by a secret (the rule in aeskit.h). Arithmetic on
 * secrets is not reported, which is exactly what constant time allows.
 *
 * Every case marks its inputs undefined, runs, and only then marks the
 * outputs defined to check them (FIPS-197 answers, round trips) and fold
 * them into a printed checksum, so the work cannot be optimised away.
 * Outside valgrind the client requests are no-ops and this is a plain test.
 *
 * PKCS#7 (modes/padding.c) runs the same way: the padding check on every
 * last byte, valid and invalid, and padded ECB/CBC streams whose decrypted
 * last block, good or bad, stays secret until finish has returned; the
 * status and count it returns are the one thing made public, as the Python
 * glue branches on them.
 *
 * --negative-control adds a deliberate secret-indexed table lookup that
 * memcheck must flag; it proves the check can fail.
 *
 * CCM runs through its descriptor's seal and open (what the glue calls),
 * key, nonce, AAD and data secret (the nonce public on aesni, whose CTR
 * may branch on its BE128 counter, which CCM's nonce makes public), in
 * place and not, with every tag length, and a tampered tag whose verdict
 * stays secret until it is read.
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
 * SIV runs on portable with both keys, every associated-data component
 * and the data secret: S2V's side-by-side chains, the fold, the xorend or
 * pad of the last component, and CTR from the SIV, whose counter is
 * public only once the SIV is sent (seal's V is still secret inside the
 * call, so the aesni build, whose CTR may branch on a BE128 counter, does
 * not run it). Opening takes the SIV as received (public), once with the
 * ciphertext spoilt: only the glue's verdict is made public.
 *
 * --aesni (a build with -DAESKIT_HAVE_X86 and the aesni sources) runs the
 * AEADs, key wrap, CMAC and the cbc_mac, xts and fused ctr_cbcmac slots
 * (its counter secret too) on the aesni table instead: key, AAD and data
 * secret, and the nonce too except GCM's 12-byte one, whose counters are
 * public by design (modes/gcm.c); a nonce of any other length makes J0, and
 * so every counter, a function of the hash key. The bare ctr slot runs there
 * with the kinds it may not branch on (BE32, BE128_SECRET); BE128 and LE32
 * and the block modes stay portable-only: aesni's CTR branches on those
 * counters, which are public.
 *
 * Build: tests/test_constant_time.py says how (SOURCES).
 */
#include <stdio.h>
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
#include "modes/kw.h"
#include "modes/ocb.h"
#include "modes/padding.h"
#include "modes/siv.h"
#include "modes/xts.h"

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

#define MAXLEN (16 * 40)

static const struct aeskit_impl *impl = &aeskit_portable_impl;

static unsigned cases, failures;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "FAIL: %s (%s)\n", what, detail);
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
static uint64_t checksum = 0xcbf29ce484222325u;

static void absorb(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        checksum = (checksum ^ p[i]) * 0x100000001b3u;
}

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
            fail("FIPS-197 encrypt", keylen == 16 ? "128" : keylen == 24 ? "192" : "256");
        if (memcmp(back, pt, 16) != 0)
            fail("FIPS-197 decrypt", keylen == 16 ? "128" : keylen == 24 ? "192" : "256");
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

static const char *const mode_names[] = {
    [AESKIT_ECB] = "ECB", [AESKIT_CBC] = "CBC", [AESKIT_CFB] = "CFB",
    [AESKIT_CFB8] = "CFB8", [AESKIT_OFB] = "OFB", [AESKIT_CTR] = "CTR",
};

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
static size_t run_stream(const aeskit_key *k, enum aeskit_mode mode, int enc, int pkcs7,
                         const uint8_t iv[16], const uint8_t *src, size_t len,
                         const size_t *calls, int in_place, uint8_t *out,
                         enum aeskit_finish *end)
{
    aeskit_stream st;
    uint8_t chunk[MAXLEN + 16];
    size_t done = 0, written = 0, tail;
    unsigned c = 0;

    aeskit_stream_init(&st, k, mode, enc, mode == AESKIT_ECB ? NULL : iv);
    if (pkcs7)
        aeskit_stream_pkcs7(&st);
    while (done < len) {
        size_t n = calls[c] == 0 ? len - done : calls[c];
        if (n > len - done)
            n = len - done;
        c = calls[c] == 0 || calls[c + 1] == 0 ? 0 : c + 1;
        size_t want = aeskit_stream_out_len(&st, n), got;
        if (in_place) {
            memcpy(chunk, src + done, n);
            got = aeskit_stream_update(&st, chunk, chunk, n);
            memcpy(out + written, chunk, got);
        } else {
            got = aeskit_stream_update(&st, out + written, src + done, n);
        }
        if (got != want)
            fail("stream_update length", mode_names[mode]);
        done += n;
        written += got;
    }
    *end = aeskit_stream_finish(&st, out + written, &tail);
    /* what the glue branches on: the verdict and the length it gives */
    PUBLIC(end, sizeof *end);
    PUBLIC(&tail, sizeof tail);
    written += *end == AESKIT_FINISH_OK ? tail : 0;
    aeskit_secure_zero(&st, sizeof st);
    aeskit_secure_zero(chunk, sizeof chunk);
    return written;
}

static void check_mode(size_t keylen, enum aeskit_mode mode, const struct shape *sh,
                       int in_place)
{
    uint8_t key[32], iv[16], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    aeskit_key k;
    const size_t len = sh->len;

    secret_inputs(key, keylen, iv, pt, msg, len);

    impl->set_key(&k, key, keylen);
    enum aeskit_finish end;
    const size_t nct = run_stream(&k, mode, 1, 0, iv, msg, len, sh->calls, in_place, ct, &end);
    /* decrypt what came out, ciphertext still undefined, in the same calls */
    const size_t nback = run_stream(&k, mode, 0, 0, iv, ct, nct, sh->calls, in_place, back,
                                    &end);

    PUBLIC(ct, nct);
    PUBLIC(back, nback);
    cases++;
    const size_t expect = mode == AESKIT_ECB || mode == AESKIT_CBC ? len / 16 * 16 : len;
    if (nct != expect || nback != expect || memcmp(back, pt, expect) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "%s AES-%zu %s%s", mode_names[mode], 8 * keylen,
                 sh->name, in_place ? " in place" : "");
        fail("round trip", detail);
    }
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
                char detail[48];
                snprintf(detail, sizeof detail, "last byte %u, wrong byte %d", p, wrong);
                fail("pkcs7 check", detail);
            }
            absorb(dst, sizeof dst);
        }
    }
}

/* A padded round trip, then the same data with its last block's padding
 * spoilt (last byte 0, 17 + v, or a wrong padding byte) sent through the
 * unpadding decryptor, which must refuse it. Key, iv and data secret. */
static void check_padded(size_t keylen, enum aeskit_mode mode, const struct shape *sh,
                         int in_place, unsigned variant)
{
    uint8_t key[32], iv[16], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN + 16], back[MAXLEN + 16];
    aeskit_key k;
    const size_t len = sh->len, padded = len / 16 * 16 + 16;
    enum aeskit_finish end_ct, end_back, end_bad;
    char detail[96];
    snprintf(detail, sizeof detail, "%s AES-%zu %s%s", mode_names[mode], 8 * keylen, sh->name,
             in_place ? " in place" : "");

    secret_inputs(key, keylen, iv, pt, msg, len);
    impl->set_key(&k, key, keylen);

    const size_t nct = run_stream(&k, mode, 1, 1, iv, msg, len, sh->calls, in_place, ct,
                                  &end_ct);
    const size_t nback = run_stream(&k, mode, 0, 1, iv, ct, nct, sh->calls, in_place, back,
                                    &end_back);
    PUBLIC(ct, nct);
    PUBLIC(back, nback);
    cases++;
    if (end_ct != AESKIT_FINISH_OK || end_back != AESKIT_FINISH_OK || nct != padded ||
        nback != len || memcmp(back, pt, len) != 0)
        fail("padded round trip", detail);
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
    const size_t nbadct = run_stream(&k, mode, 1, 0, iv, bad, padded, sh->calls, in_place,
                                     badct, &end_ct);
    const size_t nbad = run_stream(&k, mode, 0, 1, iv, badct, nbadct, sh->calls, in_place,
                                   back, &end_bad);
    cases++;
    if (end_ct != AESKIT_FINISH_OK || end_bad != AESKIT_FINISH_PADDING || nbad != padded - 16)
        fail("bad padding accepted", detail);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- the raw ctr slot, every counter kind ------------------------------ */

static void check_ctr_slot(size_t keylen, enum aeskit_ctr kind, size_t n)
{
    uint8_t key[32], ctr0[16], ctr[16], pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    aeskit_key k;

    fill(key, keylen);
    fill(ctr0, sizeof ctr0);
    /* a counter part one block from wrapping, so every carry path runs */
    switch (kind) {
    case AESKIT_CTR_BE128: memset(ctr0 + 8, 0xff, 7); ctr0[15] = 0xfe; break;
    case AESKIT_CTR_BE32:  memset(ctr0 + 12, 0xff, 3); ctr0[15] = 0xfe; break;
    case AESKIT_CTR_LE32:  memset(ctr0 + 1, 0xff, 3); ctr0[0] = 0xfe; break;
    }
    fill(pt, 16 * n);
    memcpy(msg, pt, 16 * n);
    SECRET(key, keylen);
    SECRET(ctr0, sizeof ctr0);
    SECRET(msg, 16 * n);

    impl->set_key(&k, key, keylen);
    memcpy(ctr, ctr0, 16);
    impl->ctr(&k, kind, ctr, ct, msg, n);
    uint8_t ctr_after[16];
    memcpy(ctr_after, ctr, 16);
    memcpy(ctr, ctr0, 16);
    memcpy(back, ct, 16 * n);
    impl->ctr(&k, kind, ctr, back, back, n);   /* in place */

    PUBLIC(ct, 16 * n);
    PUBLIC(back, 16 * n);
    PUBLIC(ctr, sizeof ctr);
    PUBLIC(ctr_after, sizeof ctr_after);
    cases++;
    if (memcmp(back, pt, 16 * n) != 0 || memcmp(ctr, ctr_after, 16) != 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "kind %d AES-%zu n=%zu", (int)kind, 8 * keylen, n);
        fail("ctr slot", detail);
    }
    absorb(ct, 16 * n);
    absorb(ctr_after, 16);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- the cbc_mac and xts slots: key, data, chaining value and tweak
 * secret ------------------------------------------------------------------ */

static void check_mac_xts_slots(size_t keylen, size_t n)
{
    uint8_t key[32], mac[16], mac2[16], tweak0[16], tweak[16], tweak2[16];
    uint8_t pt[MAXLEN], msg[MAXLEN], ct[MAXLEN], back[MAXLEN];
    aeskit_key k;

    fill(key, keylen);
    fill(mac, sizeof mac);
    fill(tweak0, sizeof tweak0);
    fill(pt, 16 * n);
    memcpy(msg, pt, 16 * n);
    memcpy(mac2, mac, 16);
    SECRET(key, keylen);
    SECRET(mac, sizeof mac);
    SECRET(mac2, sizeof mac2);
    SECRET(tweak0, sizeof tweak0);
    SECRET(msg, 16 * n);

    impl->set_key(&k, key, keylen);
    impl->cbc_mac(&k, mac, msg, n);
    /* the same chain by halves */
    impl->cbc_mac(&k, mac2, msg, n / 2);
    impl->cbc_mac(&k, mac2, msg + 16 * (n / 2), n - n / 2);
    memcpy(tweak, tweak0, 16);
    impl->xts(&k, 1, tweak, ct, msg, n);
    memcpy(tweak2, tweak0, 16);
    memcpy(back, ct, 16 * n);
    impl->xts(&k, 0, tweak2, back, back, n);   /* in place */
    int same = aeskit_ct_memeq(mac, mac2, 16) & aeskit_ct_memeq(tweak, tweak2, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(mac, sizeof mac);
    PUBLIC(ct, 16 * n);
    PUBLIC(back, 16 * n);
    cases++;
    if (!same || memcmp(back, pt, 16 * n) != 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "AES-%zu n=%zu", 8 * keylen, n);
        fail("cbc_mac / xts slots", detail);
    }
    absorb(mac, sizeof mac);
    absorb(ct, 16 * n);
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
        aeskit_gcm_init(&g, &k, &hk, 1, nonce, nonce_len);
        aeskit_gcm_aad(&g, aad, aad_len);
        aeskit_gcm_update(&g, ct, msg, len);
        aeskit_gcm_tag(&g, tag);
        aeskit_gcm_init(&g, &k, &hk, 0, nonce, nonce_len);
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
    if (!same || nct != len || nback != len || memcmp(back, pt, len) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "%s AES-%zu nonce %zu aad %zu len %zu",
                 ocb ? "OCB3" : "GCM", 8 * keylen, nonce_len, aad_len, len);
        fail("aead round trip", detail);
    }
    absorb(ct, nct);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- GCM-SIV: key, nonce and data secret; the per-message keys, POLYVAL
 * by way of GHASH and the tag's CTR never branch on them -------------------- */

static void check_gcmsiv(size_t keylen, size_t aad_len, size_t len)
{
    uint8_t key[32], nonce[12], aad[64], pt[MAXLEN], ct[MAXLEN], back[MAXLEN];
    uint8_t tag[16], tag2[16];
    aeskit_key k;

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
    int same = aeskit_ct_memeq(tag, tag2, 16);

    PUBLIC(&same, sizeof same);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    PUBLIC(pt, len);
    cases++;
    if (!same || memcmp(back, pt, len) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "GCM-SIV AES-%zu aad %zu len %zu", 8 * keylen,
                 aad_len, len);
        fail("aead round trip", detail);
    }
    absorb(ct, len);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&k, sizeof k);
}


/* ---- the fused ctr_cbcmac slot: key, data, MAC and counter secret (EAX's
 * counter is a MAC), checked afterwards against the split slots on the
 * values made public (the ctr slot may branch on a BE128 counter) ---------- */

static void check_ctr_cbcmac_slot(size_t keylen, size_t n, int mac_dst)
{
    if (impl->ctr_cbcmac == NULL)
        return;
    uint8_t key[32], ctr[16], ctr0[16], mac[16], mac0[16], msg[MAXLEN], out[MAXLEN];
    aeskit_key k;

    fill(key, keylen);
    fill(ctr0, sizeof ctr0);
    memset(ctr0 + 8, 0xff, 7);   /* the low half wraps inside the call */
    fill(mac0, sizeof mac0);
    fill(msg, 16 * n);
    memcpy(ctr, ctr0, 16);
    memcpy(mac, mac0, 16);
    SECRET(key, keylen);
    SECRET(ctr, sizeof ctr);
    SECRET(mac, sizeof mac);
    SECRET(msg, 16 * n);

    impl->set_key(&k, key, keylen);
    const size_t done = impl->ctr_cbcmac(&k, &k, mac_dst, ctr, mac, out, msg, n);

    PUBLIC(key, keylen);
    PUBLIC(msg, 16 * n);
    PUBLIC(ctr, sizeof ctr);
    PUBLIC(mac, sizeof mac);
    PUBLIC(out, 16 * n);
    PUBLIC(&k, sizeof k);
    uint8_t want[MAXLEN], ctr2[16], mac2[16];
    memcpy(ctr2, ctr0, 16);
    memcpy(mac2, mac0, 16);
    impl->ctr(&k, AESKIT_CTR_BE128, ctr2, want, msg, done);
    impl->cbc_mac(&k, mac2, mac_dst ? want : msg, done);
    cases++;
    if (done != n || memcmp(out, want, 16 * done) != 0 || memcmp(ctr, ctr2, 16) != 0 ||
        memcmp(mac, mac2, 16) != 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "AES-%zu n=%zu mac_dst=%d", 8 * keylen, n, mac_dst);
        fail("ctr_cbcmac slot", detail);
    }
    absorb(out, 16 * n);
    absorb(mac, sizeof mac);
    aeskit_secure_zero(&k, sizeof k);
}

/* ---- CCM through its descriptor: seal, open, a tampered open ------------- */

static void check_ccm(size_t keylen, size_t nonce_len, unsigned tag_len, size_t aad_len,
                      size_t len, int in_place)
{
    const struct aeskit_aead *d = &aeskit_ccm_aead;
    uint8_t key[32], nonce[13], aad[300], pt[MAXLEN], buf[MAXLEN], back[MAXLEN];
    uint8_t tag[16], want[16], expect[16], expect2[16];
    aeskit_ccm_key ks;

    fill(key, keylen);
    fill(nonce, nonce_len);
    fill(aad, aad_len);
    fill(pt, len);
    memcpy(buf, pt, len);
    SECRET(key, keylen);
    if (impl == &aeskit_portable_impl)
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
    if (!good || bad || memcmp(out, pt, len) != 0 || memcmp(ct2, pt, len) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "AES-%zu nonce %zu tag %u aad %zu len %zu%s",
                 8 * keylen, nonce_len, tag_len, aad_len, len, in_place ? " in place" : "");
        fail("CCM round trip", detail);
    }
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
        check_ccm(keylen, 7 + i % 7, (unsigned)(4 + 2 * (i % 7)), aads[i], lens[i], (int)(i & 1));
    check_ccm(keylen, 13, 16, 0, 16 * 3, 0);
    check_ccm(keylen, 12, 16, 21, 16 * 3 + 1, 1);
}

/* ---- CMAC: key, data and tags secret ------------------------------------ */

static void check_cmac(size_t keylen, size_t len)
{
    uint8_t key[32], msg[MAXLEN], tag[16], tag2[16], tag3[16];
    aeskit_cmac_key ck;
    aeskit_cmac c;

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
    if (!same || !differs) {
        char detail[64];
        snprintf(detail, sizeof detail, "AES-%zu len %zu", 8 * keylen, len);
        fail("cmac", detail);
    }
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
    if (!same || memcmp(back, pt, len) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "EAX AES-%zu nonce %zu aad %zu len %zu", 8 * keylen,
                 nonce_len, aad_len, len);
        fail("eax round trip", detail);
    }
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
        check_cmac(keylen, lens[i]);
        check_eax(keylen, (i * 5) % 20, (i * 7) % 40, lens[i]);
    }
    check_eax(keylen, 0, 0, 16 * 37 + 3);
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
    if (!same || (len > 0 && spoilt_ok) || memcmp(back, pt, len) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "SIV AES-%zu %zu components len %zu", 8 * keylen,
                 n_ad, len);
        fail("siv round trip", detail);
    }
    absorb(ct, len);
    absorb(tag, sizeof tag);
    aeskit_secure_zero(&sk, sizeof sk);
}

/* No components, one, several of mixed lengths (empty ones among them)
 * and the most allowed, over data of every S2V case: under a block (pad),
 * one or two blocks (xorend with no shared prefix), and longer. */
static void check_sivs(size_t keylen)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 31, 32, 33, 16 * 9 + 5, 16 * 37};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        check_siv(keylen, i % 4 == 3 ? 9 : i % 4, 7 + i, lens[i]);
    check_siv(keylen, AESKIT_SIV_MAX_AD, 3, 16 * 5 + 1);
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
        got_bad != 0 || !all_zero(bad, wlen - 8)) {
        char detail[64];
        snprintf(detail, sizeof detail, "%s AES-%zu len %zu", d->name, 8 * keylen, len);
        fail("key wrap", detail);
    }
    absorb(wrapped, wlen);
    aeskit_secure_zero(&k, sizeof k);
}

/* KW at 2 and more semiblocks; KWP across the single-block form and every
 * pad length. */
static void check_keywraps(size_t keylen)
{
    static const size_t kw_lens[] = {16, 24, 40, 8 * 33};
    for (size_t i = 0; i < sizeof kw_lens / sizeof kw_lens[0]; i++)
        check_keywrap(keylen, 0, kw_lens[i]);
    for (size_t len = 1; len <= 17; len++)
        check_keywrap(keylen, 1, len);
    check_keywrap(keylen, 1, 8 * 33 + 3);
}

/* ---- negative control ----------------------------------------------------- */

static uint8_t table[256];

/* A classic table-based S-box lookup indexed by a key byte, its result
 * then used in a branch: memcheck must report it. */
__attribute__((noinline)) static unsigned negative_control(const uint8_t *secret)
{
    unsigned v = table[secret[0]];
    if (v & 1)
        return v * 3;
    return v;
}

static void run_negative_control(void)
{
    uint8_t key[16];
    for (unsigned i = 0; i < 256; i++)
        table[i] = (uint8_t)(i * 167 + 13);
    fill(key, sizeof key);
    SECRET(key, sizeof key);
    unsigned r = negative_control(key);
    PUBLIC(&r, sizeof r);
    printf("negative control: %u\n", r);
}

/* The AEADs on the current table, at lengths across its kernels' batches
 * (aesni: 8 blocks, its fused GCM from 8, then a CTR tail of 4, 2 and 1
 * blocks, each with its own counter test). */
static void check_aeads(size_t keylen)
{
    static const size_t lens[] = {0, 15, 16, 17, 16 * 9 + 5, 16 * 37, 16 * 15 + 3};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        check_aead(keylen, 0, 12, i * 7 % 40, lens[i]);
        check_aead(keylen, 0, 7 + i, 20, lens[i]);
        check_aead(keylen, 1, 12, i * 9 % 50, lens[i]);
        check_aead(keylen, 1, 1 + 2 * i, 33, lens[i]);
        if (keylen != 24)   /* GCM-SIV takes 128- and 256-bit keys */
            check_gcmsiv(keylen, i * 11 % 60, lens[i]);
    }
}

/* ---- XTS: key halves compared, tweak and data secret; the stream engine
 * with ciphertext stealing, and sectors (whose numbers are public) ---------- */

static void check_xts(size_t keylen, size_t len)
{
    uint8_t key[64], tweak[16], pt[MAXLEN], ct[MAXLEN + 32], back[MAXLEN + 32];
    aeskit_key keys[2];
    aeskit_stream st;
    size_t tail;

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
    aeskit_xts_init(&st, keys, AESKIT_XTS, 1, tweak);
    size_t done = aeskit_xts_update(&st, ct, pt, len / 3);
    done += aeskit_xts_update(&st, ct + done, pt + len / 3, len - len / 3);
    aeskit_xts_finish(&st, ct + done, &tail);
    memcpy(back, ct, len);
    aeskit_xts_init(&st, keys, AESKIT_XTS, 0, tweak);
    done = aeskit_xts_update(&st, back, back, len);     /* in place */
    aeskit_xts_finish(&st, back + done, &tail);
    if (len % 16 == 0) {
        uint8_t sector[16] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, sec[MAXLEN];
        aeskit_xts_sectors(keys, 1, sector, 16, sec, pt, len);
        PUBLIC(sec, len);
        absorb(sec, len);
    }
    if (len >= 512) {   /* sectors of whole 8-block batches: aesni's xts_units pass */
        uint8_t sector[16] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, sec[512];
        aeskit_xts_sectors(keys, 1, sector, 128, sec, pt, 512);
        PUBLIC(sec, 512);
        absorb(sec, 512);
    }

    PUBLIC(&equal, sizeof equal);
    PUBLIC(ct, len);
    PUBLIC(back, len);
    PUBLIC(pt, len);
    cases++;
    if (equal || memcmp(back, pt, len) != 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "XTS-AES-%zu len=%zu", 8 * keylen, len);
        fail("xts", detail);
    }
    absorb(ct, len);
    aeskit_secure_zero(keys, sizeof keys);
    aeskit_secure_zero(&st, sizeof st);
}

static void check_xts_lengths(size_t keylen)
{
    static const size_t lens[] = {16, 17, 31, 32, 47, 16 * 37, 16 * 37 + 5};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        check_xts(keylen, lens[i]);
}

int main(int argc, char **argv)
{
    int negative = 0, aesni = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--negative-control") == 0) {
            negative = 1;
        } else if (strcmp(argv[i], "--aesni") == 0) {
            aesni = 1;
        } else {
            fprintf(stderr, "usage: %s [--negative-control] [--aesni]\n", argv[0]);
            return 2;
        }
    }
    if (aesni) {
#if defined(AESKIT_HAVE_X86)
        impl = &aeskit_aesni_impl;
        for (size_t keylen = 16; keylen <= 32; keylen += 8) {
            check_aeads(keylen);
            check_ccms(keylen);
            check_keywraps(keylen);
            check_mac_xts_slots(keylen, 3);
            check_mac_xts_slots(keylen, 37);
            for (int mac_dst = 0; mac_dst <= 1; mac_dst++) {
                check_ctr_cbcmac_slot(keylen, 1, mac_dst);
                check_ctr_cbcmac_slot(keylen, 37, mac_dst);
            }
            check_cmac_eax(keylen);
            for (size_t n = 1; n <= 19; n += 2) {   /* aesni's batch of 8, its 4-2-1 tail */
                check_ctr_slot(keylen, AESKIT_CTR_BE32, n);
                check_ctr_slot(keylen, AESKIT_CTR_BE128_SECRET, n);
            }
            if (keylen != 24)
                check_xts_lengths(keylen);
        }
        if (negative)
            run_negative_control();
        printf("cases: %u\nchecksum: %016llx\n", cases, (unsigned long long)checksum);
        return failures ? 1 : 0;
#else
        fprintf(stderr, "--aesni needs a build with -DAESKIT_HAVE_X86 and the aesni sources\n");
        return 2;
#endif
    }

    check_fips197();
    check_pkcs7_check();
    static const struct shape empty = { "empty", 0, { 0 } };
    for (size_t keylen = 16; keylen <= 32; keylen += 8) {
        for (int mode = AESKIT_ECB; mode <= AESKIT_CTR; mode++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int in_place = 0; in_place <= 1; in_place++)
                    check_mode(keylen, (enum aeskit_mode)mode, &shapes[s], in_place);
        for (int mode = AESKIT_ECB; mode <= AESKIT_CBC; mode++) {
            for (int in_place = 0; in_place <= 1; in_place++) {
                check_padded(keylen, (enum aeskit_mode)mode, &empty, in_place, keylen / 8);
                for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    check_padded(keylen, (enum aeskit_mode)mode, &shapes[s], in_place,
                                 s + 3 * (unsigned)in_place + (unsigned)keylen);
            }
        }
        check_aeads(keylen);
        check_ccms(keylen);
        check_keywraps(keylen);
        check_cmac_eax(keylen);
        for (int kind = AESKIT_CTR_BE128; kind <= AESKIT_CTR_BE128_SECRET; kind++) {
            check_ctr_slot(keylen, (enum aeskit_ctr)kind, 3);
            check_ctr_slot(keylen, (enum aeskit_ctr)kind, 37);
        }
        check_mac_xts_slots(keylen, 3);
        check_mac_xts_slots(keylen, 37);
        if (keylen != 24)
            check_xts_lengths(keylen);
        check_sivs(keylen);
    }
    if (negative)
        run_negative_control();

    printf("cases: %u\nchecksum: %016llx\n", cases, (unsigned long long)checksum);
    if (failures) {
        fprintf(stderr, "%u failure(s)\n", failures);
        return 1;
    }
    return 0;
}
