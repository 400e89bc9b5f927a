/*
 * test_emu.c: the self-test of tests/emu/vaes_emu.h (test-only). Every
 * emulated operation against a scalar model written from Intel's
 * intrinsics guide pseudo-code, on random inputs and, where there is an
 * immediate, on every value of it. The AES round model is itself checked
 * against the CPU's AES-NI first.
 *
 * Build (tests/test_emu.py does, at -O0 and -O2):
 *   cc -O2 -maes -mpclmul -mssse3 -msse4.1 -mavx -mavx2 -include vaes_emu.h test_emu.c
 * Prints "N passed, 0 failed" and exits 0, or names each failing operation.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaes_emu.h"

#define TRIALS 2000

typedef union v512 {
    uint8_t b[64];
    uint32_t d[16];
    uint64_t q[8];
} v512;

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd64(void)
{
    /* xorshift64* */
    uint64_t x = rng_state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Du;
}

/* Random vector; now and then elements that are edge cases for compares and
 * carries (0, all ones, 2^63 - 1, 2^63). */
static v512 rndv(void)
{
    static const uint64_t edge[] = {0, UINT64_MAX, INT64_MAX, (uint64_t)INT64_MAX + 1, 1};
    v512 v;
    for (int i = 0; i < 8; i++)
        v.q[i] = rnd64() % 8 == 0 ? edge[rnd64() % 5] : rnd64();
    return v;
}

/* Representation-level conversions (memcpy), independent of the
 * operations under test. */
static __m512i e512(v512 v) { __m512i r; memcpy(&r, v.b, 64); return r; }
static v512 u512(__m512i a) { v512 v; memcpy(v.b, &a, 64); return v; }
static __m256i e256(v512 v) { __m256i r; memcpy(&r, v.b, 32); return r; }
static v512 u256(__m256i a) { v512 v; memset(&v, 0, sizeof v); memcpy(v.b, &a, 32); return v; }
static __m128i e128(v512 v) { __m128i r; memcpy(&r, v.b, 16); return r; }
static v512 u128(__m128i a) { v512 v; memset(&v, 0, sizeof v); memcpy(v.b, &a, 16); return v; }

static int passed, failed;

static void check(const char *op, int imm, const void *got, const void *want, size_t len)
{
    if (memcmp(got, want, len) == 0) {
        passed++;
        return;
    }
    failed++;
    if (failed <= 20) {
        printf("FAIL %s imm=%d\n  got  ", op, imm);
        for (size_t i = 0; i < len; i++)
            printf("%02x", ((const uint8_t *)got)[i]);
        printf("\n  want ");
        for (size_t i = 0; i < len; i++)
            printf("%02x", ((const uint8_t *)want)[i]);
        printf("\n");
    }
}

/* ---- scalar AES round (FIPS 197; state byte i is row i % 4, column i / 4) */

static uint8_t sbox[256], isbox[256];

static uint8_t gmul(uint8_t a, uint8_t b)
{
    uint8_t p = 0;
    for (int i = 0; i < 8; i++) {
        if (b & 1)
            p ^= a;
        const uint8_t hi = a & 0x80;
        a = (uint8_t)(a << 1);
        if (hi)
            a ^= 0x1B;
        b >>= 1;
    }
    return p;
}

static void make_sbox(void)
{
    for (int a = 0; a < 256; a++) {
        uint8_t inv = 0;
        for (int b = 1; a != 0 && b < 256; b++)
            if (gmul((uint8_t)a, (uint8_t)b) == 1)
                inv = (uint8_t)b;
        uint8_t s = 0x63;
        for (int r = 0; r < 5; r++)
            s ^= (uint8_t)((inv << r) | (inv >> (8 - r)));
        sbox[a] = s;
        isbox[s] = (uint8_t)a;
    }
}

enum { ENC, ENCLAST, DEC, DECLAST };

static void aes_round(int kind, uint8_t out[16], const uint8_t x[16], const uint8_t k[16])
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            const int from = kind <= ENCLAST ? (c + r) % 4 : (c - r + 4) % 4;
            const uint8_t v = x[r + 4 * from];
            t[r + 4 * c] = kind <= ENCLAST ? sbox[v] : isbox[v];
        }
    if (kind == ENC || kind == DEC) {
        static const uint8_t fwd[4] = {2, 3, 1, 1}, inv[4] = {14, 11, 13, 9};
        const uint8_t *m = kind == ENC ? fwd : inv;
        uint8_t u[16];
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++) {
                uint8_t s = 0;
                for (int i = 0; i < 4; i++)
                    s ^= gmul(m[(i - r + 4) % 4], t[i + 4 * c]);
                u[r + 4 * c] = s;
            }
        memcpy(t, u, 16);
    }
    for (int i = 0; i < 16; i++)
        out[i] = t[i] ^ k[i];
}

static void test_aes_model(void)
{
    for (int n = 0; n < TRIALS; n++) {
        v512 x = rndv(), k = rndv(), want;
        const __m128i a = e128(x), b = e128(k);
        const __m128i got[4] = {_mm_aesenc_si128(a, b), _mm_aesenclast_si128(a, b),
                                _mm_aesdec_si128(a, b), _mm_aesdeclast_si128(a, b)};
        for (int kind = 0; kind < 4; kind++) {
            aes_round(kind, want.b, x.b, k.b);
            check("scalar AES model vs AES-NI", kind, &got[kind], want.b, 16);
        }
    }
}

/* ---- scalar carry-less multiply ---------------------------------------- */

static void clmul64(uint64_t out[2], uint64_t a, uint64_t b)
{
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 64; i++)
        if ((b >> i) & 1) {
            lo ^= a << i;
            hi ^= i == 0 ? 0 : a >> (64 - i);
        }
    out[0] = lo, out[1] = hi;
}

/* Lane l of the result: a's element imm[0], b's element imm[4]. */
static void clmul_lanes(v512 *w, const v512 *a, const v512 *b, int imm, int lanes)
{
    for (int l = 0; l < lanes; l++)
        clmul64(&w->q[2 * l], a->q[2 * l + (imm & 1)], b->q[2 * l + ((imm >> 4) & 1)]);
}

/* ---- the ymm operations -------------------------------------------------- */

static void test_ymm(void)
{
    for (int n = 0; n < TRIALS; n++) {
        v512 a = rndv(), b = rndv(), w;
        memset(&w, 0, sizeof w);
        const __m256i x = e256(a), y = e256(b);
        const __m256i got[4] = {_mm256_aesenc_epi128(x, y), _mm256_aesenclast_epi128(x, y),
                                _mm256_aesdec_epi128(x, y), _mm256_aesdeclast_epi128(x, y)};
        static const char *name[4] = {"_mm256_aesenc_epi128", "_mm256_aesenclast_epi128",
                                      "_mm256_aesdec_epi128", "_mm256_aesdeclast_epi128"};
        for (int kind = 0; kind < 4; kind++) {
            for (int l = 0; l < 2; l++)
                aes_round(kind, w.b + 16 * l, a.b + 16 * l, b.b + 16 * l);
            check(name[kind], -1, &got[kind], w.b, 32);
        }
        const int imm = (int)(rnd64() & 0xFF);
        const __m256i c = _mm256_clmulepi64_epi128(x, y, imm);
        clmul_lanes(&w, &a, &b, imm, 2);
        check("_mm256_clmulepi64_epi128", imm, &c, w.b, 32);
    }
    /* and every immediate with its ignored bits */
    for (int imm = 0; imm < 256; imm++) {
        v512 a = rndv(), b = rndv(), w;
        const __m256i c = _mm256_clmulepi64_epi128(e256(a), e256(b), imm);
        clmul_lanes(&w, &a, &b, imm, 2);
        check("_mm256_clmulepi64_epi128", imm, &c, w.b, 32);
    }
}

/* ---- the zmm operations -------------------------------------------------- */

#define CHECK512(op, imm, got, want)                                                     \
    do {                                                                                 \
        const v512 g_ = u512(got);                                                       \
        check(op, imm, g_.b, (want).b, 64);                                              \
    } while (0)

static void test_zmm_aes_clmul(void)
{
    for (int n = 0; n < TRIALS; n++) {
        v512 a = rndv(), b = rndv(), w;
        const __m512i x = e512(a), y = e512(b);
        const __m512i got[4] = {_mm512_aesenc_epi128(x, y), _mm512_aesenclast_epi128(x, y),
                                _mm512_aesdec_epi128(x, y), _mm512_aesdeclast_epi128(x, y)};
        static const char *name[4] = {"_mm512_aesenc_epi128", "_mm512_aesenclast_epi128",
                                      "_mm512_aesdec_epi128", "_mm512_aesdeclast_epi128"};
        for (int kind = 0; kind < 4; kind++) {
            for (int l = 0; l < 4; l++)
                aes_round(kind, w.b + 16 * l, a.b + 16 * l, b.b + 16 * l);
            CHECK512(name[kind], -1, got[kind], w);
        }
    }
    for (int imm = 0; imm < 256; imm++)
        for (int n = 0; n < 8; n++) {
            v512 a = rndv(), b = rndv(), w;
            clmul_lanes(&w, &a, &b, imm, 4);
            CHECK512("_mm512_clmulepi64_epi128", imm, _mm512_clmulepi64_epi128(e512(a), e512(b), imm), w);
        }
}

static void test_zmm_elementwise(void)
{
    for (int n = 0; n < TRIALS; n++) {
        v512 a = rndv(), b = rndv(), s = rndv(), w;
        const __m512i x = e512(a), y = e512(b), src = e512(s);

        for (int i = 0; i < 16; i++)
            w.d[i] = a.d[i] + b.d[i];
        CHECK512("_mm512_add_epi32", -1, _mm512_add_epi32(x, y), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = a.q[i] + b.q[i];
        CHECK512("_mm512_add_epi64", -1, _mm512_add_epi64(x, y), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = a.q[i] ^ b.q[i];
        CHECK512("_mm512_xor_si512", -1, _mm512_xor_si512(x, y), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = a.q[i] & b.q[i];
        CHECK512("_mm512_and_si512", -1, _mm512_and_si512(x, y), w);

        /* vpshufb: per 128-bit lane, bit 7 of the index zeroes */
        for (int i = 0; i < 64; i++)
            w.b[i] = (b.b[i] & 0x80) ? 0 : a.b[(i & ~15) + (b.b[i] & 15)];
        CHECK512("_mm512_shuffle_epi8", -1, _mm512_shuffle_epi8(x, y), w);

        for (int l = 0; l < 4; l++)
            w.q[2 * l] = a.q[2 * l], w.q[2 * l + 1] = b.q[2 * l];
        CHECK512("_mm512_unpacklo_epi64", -1, _mm512_unpacklo_epi64(x, y), w);
        for (int l = 0; l < 4; l++)
            w.q[2 * l] = a.q[2 * l + 1], w.q[2 * l + 1] = b.q[2 * l + 1];
        CHECK512("_mm512_unpackhi_epi64", -1, _mm512_unpackhi_epi64(x, y), w);

        /* variable shifts: counts 0..127, half of them 0..63; 64 and more give 0 */
        v512 cnt;
        for (int i = 0; i < 8; i++)
            cnt.q[i] = rnd64() % (rnd64() & 1 ? 64 : 128);
        for (int i = 0; i < 8; i++)
            w.q[i] = cnt.q[i] > 63 ? 0 : a.q[i] << cnt.q[i];
        CHECK512("_mm512_sllv_epi64", -1, _mm512_sllv_epi64(x, e512(cnt)), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = cnt.q[i] > 63 ? 0 : a.q[i] >> cnt.q[i];
        CHECK512("_mm512_srlv_epi64", -1, _mm512_srlv_epi64(x, e512(cnt)), w);

        /* unsigned a < b per element; equal elements half of the time */
        v512 c = b;
        for (int i = 0; i < 8; i++)
            if (rnd64() & 1)
                c.q[i] = a.q[i];
        unsigned m = 0;
        for (int i = 0; i < 8; i++)
            m |= (unsigned)(a.q[i] < c.q[i]) << i;
        const __mmask8 lt = _mm512_cmplt_epu64_mask(x, e512(c));
        const uint8_t mw = (uint8_t)m, mg = (uint8_t)lt;
        check("_mm512_cmplt_epu64_mask", -1, &mg, &mw, 1);
        const __mmask8 lt2 = _mm512_cmplt_epu64_mask(e512(c), x);
        m = 0;
        for (int i = 0; i < 8; i++)
            m |= (unsigned)(c.q[i] < a.q[i]) << i;
        const uint8_t mw2 = (uint8_t)m, mg2 = (uint8_t)lt2;
        check("_mm512_cmplt_epu64_mask", -1, &mg2, &mw2, 1);

        const __mmask8 k8 = (__mmask8)rnd64();
        for (int i = 0; i < 8; i++)
            w.q[i] = (k8 >> i) & 1 ? a.q[i] - b.q[i] : s.q[i];
        CHECK512("_mm512_mask_sub_epi64", k8, _mm512_mask_sub_epi64(src, k8, x, y), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = (k8 >> i) & 1 ? a.q[i] ^ b.q[i] : s.q[i];
        CHECK512("_mm512_mask_xor_epi64", k8, _mm512_mask_xor_epi64(src, k8, x, y), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = (k8 >> i) & 1 ? a.q[i] : s.q[i];
        CHECK512("_mm512_mask_loadu_epi64", k8, _mm512_mask_loadu_epi64(src, k8, a.b), w);
        for (int i = 0; i < 8; i++)
            w.q[i] = (k8 >> i) & 1 ? a.q[i] : 0;
        CHECK512("_mm512_maskz_mov_epi64", k8, _mm512_maskz_mov_epi64(k8, x), w);

        for (int i = 0; i < 16; i++)
            w.d[i] = a.d[i % 4];
        CHECK512("_mm512_broadcast_i32x4", -1, _mm512_broadcast_i32x4(e128(a)), w);
        const __mmask16 k16 = (__mmask16)rnd64();
        for (int i = 0; i < 16; i++)
            w.d[i] = (k16 >> i) & 1 ? a.d[i % 4] : 0;
        CHECK512("_mm512_maskz_broadcast_i32x4", k16, _mm512_maskz_broadcast_i32x4(k16, e128(a)), w);

        /* set: arguments from element 7 down to 0 */
        for (int i = 0; i < 8; i++)
            w.q[i] = a.q[i];
        CHECK512("_mm512_set_epi64", -1,
                 _mm512_set_epi64((long long)a.q[7], (long long)a.q[6], (long long)a.q[5],
                                  (long long)a.q[4], (long long)a.q[3], (long long)a.q[2],
                                  (long long)a.q[1], (long long)a.q[0]),
                 w);
        for (int i = 0; i < 8; i++)
            w.q[i] = a.q[0];
        CHECK512("_mm512_set1_epi64", -1, _mm512_set1_epi64((long long)a.q[0]), w);
        memset(&w, 0, sizeof w);
        CHECK512("_mm512_setzero_si512", -1, _mm512_setzero_si512(), w);

        /* unaligned memory */
        uint8_t mem[64 + 64 + 1];
        const size_t off = (size_t)(rnd64() % 64);
        memcpy(mem + off, a.b, 64);
        CHECK512("_mm512_loadu_si512", (int)off, _mm512_loadu_si512(mem + off), a);
        memset(mem, 0x5A, sizeof mem);
        _mm512_storeu_si512(mem + off, x);
        check("_mm512_storeu_si512", (int)off, mem + off, a.b, 64);
        for (size_t i = 0; i < sizeof mem; i++)
            if ((i < off || i >= off + 64) && mem[i] != 0x5A)
                check("_mm512_storeu_si512 (outside)", (int)i, &mem[i], "\x5A", 1);

        /* casts and zero extensions */
        const __m128i lo128 = _mm512_castsi512_si128(x);
        check("_mm512_castsi512_si128", -1, &lo128, a.b, 16);
        const __m256i lo256 = _mm512_castsi512_si256(x);
        check("_mm512_castsi512_si256", -1, &lo256, a.b, 32);
        const v512 c256 = u512(_mm512_castsi256_si512(e256(a)));
        check("_mm512_castsi256_si512 (low; high is undefined)", -1, c256.b, a.b, 32);
        w = u128(e128(a));
        CHECK512("_mm512_zextsi128_si512", -1, _mm512_zextsi128_si512(e128(a)), w);
        w = u256(e256(a));
        CHECK512("_mm512_zextsi256_si512", -1, _mm512_zextsi256_si512(e256(a)), w);
    }
}

static void test_zmm_immediates(void)
{
    for (int imm = 0; imm < 256; imm++)
        for (int n = 0; n < 16; n++) {
            v512 a = rndv(), b = rndv(), c = rndv(), w;
            const __m512i x = e512(a), y = e512(b), z = e512(c);

            for (int i = 0; i < 16; i++)
                w.d[i] = a.d[(i & ~3) + ((imm >> (2 * (i & 3))) & 3)];
            CHECK512("_mm512_shuffle_epi32", imm, _mm512_shuffle_epi32(x, (_MM_PERM_ENUM)imm), w);

            /* vpternlogq: bit j = imm[(a_j << 2) | (b_j << 1) | c_j] */
            for (int i = 0; i < 8; i++) {
                uint64_t r = 0;
                for (int j = 0; j < 64; j++) {
                    const unsigned idx = (unsigned)(((a.q[i] >> j) & 1) << 2 | ((b.q[i] >> j) & 1) << 1
                                                    | ((c.q[i] >> j) & 1));
                    r |= (uint64_t)((imm >> idx) & 1) << j;
                }
                w.q[i] = r;
            }
            CHECK512("_mm512_ternarylogic_epi64", imm, _mm512_ternarylogic_epi64(x, y, z, imm), w);

            /* valignq: (a:b) >> 64 * imm[2:0], low 8 elements */
            for (int i = 0; i < 8; i++) {
                const int t = i + (imm & 7);
                w.q[i] = t < 8 ? b.q[t] : a.q[t - 8];
            }
            CHECK512("_mm512_alignr_epi64", imm, _mm512_alignr_epi64(x, y, imm), w);

            /* vpalignr: per 128-bit lane, (a:b) >> 8 * imm, 16 bytes */
            for (int i = 0; i < 64; i++) {
                const int k = (i & 15) + imm;
                w.b[i] = k < 16 ? b.b[(i & ~15) + k] : k < 32 ? a.b[(i & ~15) + k - 16] : 0;
            }
            CHECK512("_mm512_alignr_epi8", imm, _mm512_alignr_epi8(x, y, imm), w);

            /* byte shifts per 128-bit lane, imm > 15 shifting everything out */
            const int s = imm > 15 ? 16 : imm;
            for (int i = 0; i < 64; i++)
                w.b[i] = (i & 15) >= s ? a.b[i - s] : 0;
            CHECK512("_mm512_bslli_epi128", imm, _mm512_bslli_epi128(x, imm), w);
            for (int i = 0; i < 64; i++)
                w.b[i] = (i & 15) + s < 16 ? a.b[i + s] : 0;
            CHECK512("_mm512_bsrli_epi128", imm, _mm512_bsrli_epi128(x, imm), w);

            /* vpsllq by an immediate: every element by imm, above 63 zero */
            for (int i = 0; i < 8; i++)
                w.q[i] = imm > 63 ? 0 : a.q[i] << imm;
            CHECK512("_mm512_slli_epi64", imm, _mm512_slli_epi64(x, imm), w);

            /* lanes and halves in and out: imm[1:0] and imm[0] */
            w = a;
            memcpy(w.b + 16 * (imm & 3), b.b, 16);
            CHECK512("_mm512_inserti32x4", imm, _mm512_inserti32x4(x, e128(b), imm), w);
            const __m128i e4 = _mm512_extracti32x4_epi32(x, imm);
            check("_mm512_extracti32x4_epi32", imm, &e4, a.b + 16 * (imm & 3), 16);
            w = a;
            memcpy(w.b + 32 * (imm & 1), b.b, 32);
            CHECK512("_mm512_inserti64x4", imm, _mm512_inserti64x4(x, e256(b), imm), w);
            const __m256i e8 = _mm512_extracti64x4_epi64(x, imm);
            check("_mm512_extracti64x4_epi64", imm, &e8, a.b + 32 * (imm & 1), 32);
            for (int l = 0; l < 4; l++)
                memcpy(w.b + 16 * l, (l < 2 ? a.b : b.b) + 16 * ((imm >> (2 * l)) & 3), 16);
            CHECK512("_mm512_shuffle_i64x2", imm, _mm512_shuffle_i64x2(x, y, imm), w);
        }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rng_state = strtoull(argv[1], NULL, 0) | 1;
    make_sbox();
    if (sbox[0] != 0x63 || sbox[1] != 0x7C || sbox[0x53] != 0xED || isbox[0x63] != 0) {
        printf("FAIL scalar S-box\n");
        return 1;
    }
    test_aes_model();
    test_ymm();
    test_zmm_aes_clmul();
    test_zmm_elementwise();
    test_zmm_immediates();
    printf("vaes_emu self-test: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
