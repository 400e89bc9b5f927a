/*
 * bench.c: what `aeskit bench` must time in C.
 *
 * clock_mhz: the core clock, from a chain of dependent register adds (one
 * cycle each on every x86 core since the P6) timed against the monotonic
 * clock. Turbo and frequency drift move it, so the benchmark samples it
 * before and after each operation and repeats until they agree.
 *
 * aes_probe, unit_probe: what the AES and carry-less multiply units allow,
 * in core cycles per instruction (chains timed against the add chain), from
 * which the benchmark derives each mode's floor per backend (bench/floor.py).
 *
 * kernel_time: loops over one mode's one-shot path (stream init + update,
 * exactly what encrypt_into runs, minus Python) with the GIL released: the
 * "kernel" layer, comparable with `openssl speed`. AEAD objects run their
 * whole seal/open per call (aeskit_aead_kernel, py/aead.c).
 *
 * ghash_time: the same loop around an AESGCM object's ghash slot alone, the
 * GHASH row of the kernel layer.
 */
#include "glue.h"   /* Python.h first: it sets _POSIX_C_SOURCE for clock_gettime */

#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(AESKIT_HAVE_X86)
#include <immintrin.h>

#define ADD4 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
#define ADD32 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4
#define ADDS_PER_ITER 128

/* ns for iters x 128 dependent adds. */
static uint64_t add_chain(uint64_t iters)
{
    uint64_t x = 0, t0 = now_ns();
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile(ADD32 ADD32 ADD32 ADD32 : "+r"(x));
    return now_ns() - t0;
}

/* ns for iters x 128 dependent AESENCs: the latency that bounds the
 * serial modes (CBC/CFB encryption, OFB) at rounds x latency per block. */
__attribute__((target("aes,sse2"))) static uint64_t aesenc_chain(uint64_t iters)
{
    __m128i x = _mm_set1_epi32(0x01234567), k = _mm_set1_epi32(0x7654321);
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        for (int j = 0; j < 128; j++) {
            x = _mm_aesenc_si128(x, k);
            __asm__ volatile("" : "+x"(x));   /* keep each one in the chain */
        }
    }
    uint64_t ns = now_ns() - t0;
    volatile int sink = _mm_cvtsi128_si32(x);
    (void)sink;
    return ns;
}

/*
 * fn(iters): ns for iters x 128 of OP over 8 independent chains, its second
 * operand cycling through 8 registers as round keys do in a real kernel:
 * the throughput that bounds the parallel modes (AES) and GHASH (carry-less
 * multiply). (One shared key register measured half the AESENC throughput
 * on Zen 4; 4 chains of zmm VPCLMULQDQ fell 5% short of 8.) Named
 * variables, not arrays: GCC keeps an array of eight zmm in memory, and the
 * store-to-load round trip then lengthens every chain.
 */
#define ON8(OP, k)                                                                      \
    x0 = OP(x0, k); x1 = OP(x1, k); x2 = OP(x2, k); x3 = OP(x3, k);                     \
    x4 = OP(x4, k); x5 = OP(x5, k); x6 = OP(x6, k); x7 = OP(x7, k);
#define THROUGHPUT_PROBE(fn, tgt, vec, set1, OP, low32)                                 \
    __attribute__((target(tgt))) static uint64_t fn(uint64_t iters)                     \
    {                                                                                   \
        vec x0 = set1(0), x1 = set1(1), x2 = set1(2), x3 = set1(3), x4 = set1(4),       \
            x5 = set1(5), x6 = set1(6), x7 = set1(7);                                   \
        vec k0 = set1(1), k1 = set1(78), k2 = set1(155), k3 = set1(232),                \
            k4 = set1(309), k5 = set1(386), k6 = set1(463), k7 = set1(540);             \
        __asm__ volatile("" : "+v"(k0), "+v"(k1), "+v"(k2), "+v"(k3),                   \
                         "+v"(k4), "+v"(k5), "+v"(k6), "+v"(k7));                       \
        uint64_t t0 = now_ns();                                                         \
        for (uint64_t i = 0; i < iters; i++) {                                          \
            ON8(OP, k0) ON8(OP, k1) ON8(OP, k2) ON8(OP, k3)                             \
            ON8(OP, k4) ON8(OP, k5) ON8(OP, k6) ON8(OP, k7)                             \
            ON8(OP, k0) ON8(OP, k1) ON8(OP, k2) ON8(OP, k3)                             \
            ON8(OP, k4) ON8(OP, k5) ON8(OP, k6) ON8(OP, k7)                             \
            __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3),               \
                             "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7));                   \
        }                                                                               \
        uint64_t ns = now_ns() - t0;                                                    \
        volatile int sink = low32(x0) ^ low32(x7);                                      \
        (void)sink;                                                                     \
        return ns;                                                                      \
    }

#define LOW32_X(v) _mm_cvtsi128_si32(v)
#define LOW32_Y(v) _mm_cvtsi128_si32(_mm256_castsi256_si128(v))
#define LOW32_Z(v) _mm_cvtsi128_si32(_mm512_castsi512_si128(v))
/* Karatsuba's three products per block select 0x00, 0x11 and 0x00; 0x11
 * and mixed selectors measured the same as 0x00 on Zen 4. */
#define CLMUL_X(a, b) _mm_clmulepi64_si128((a), (b), 0x00)
#define CLMUL_Y(a, b) _mm256_clmulepi64_epi128((a), (b), 0x00)
#define CLMUL_Z(a, b) _mm512_clmulepi64_epi128((a), (b), 0x00)

THROUGHPUT_PROBE(aesenc_wide, "aes,sse2", __m128i, _mm_set1_epi32, _mm_aesenc_si128, LOW32_X)
THROUGHPUT_PROBE(vaes_ymm, "vaes,avx2", __m256i, _mm256_set1_epi32, _mm256_aesenc_epi128,
                 LOW32_Y)
THROUGHPUT_PROBE(vaes_zmm, "vaes,avx512f", __m512i, _mm512_set1_epi32, _mm512_aesenc_epi128,
                 LOW32_Z)
THROUGHPUT_PROBE(clmul_xmm, "pclmul,sse2", __m128i, _mm_set1_epi32, CLMUL_X, LOW32_X)
THROUGHPUT_PROBE(clmul_ymm, "vpclmulqdq,avx", __m256i, _mm256_set1_epi32, CLMUL_Y, LOW32_Y)
THROUGHPUT_PROBE(clmul_zmm, "vpclmulqdq,avx512f", __m512i, _mm512_set1_epi32, CLMUL_Z,
                 LOW32_Z)

/*
 * fn(iters): ns for iters x one AES-128 GCM batch's mix on 8 registers: 80
 * AES rounds over 8 chains with 24 carry-less multiplies (Karatsuba's 3 per
 * register) over 4 chains, interleaved as a fused kernel interleaves them.
 * Against 80 rounds alone, this says how many AES cycles each multiply
 * takes: on a core where they run on separate units it is about 0, on Zen 4
 * (zmm) a whole cycle each. 4 multiply chains of 6 keep 14 registers live,
 * so ymm does not spill either.
 */
#define ON4(OP, k) c0 = OP(c0, k); c1 = OP(c1, k); c2 = OP(c2, k); c3 = OP(c3, k);
#define GCM_MIX_PROBE(fn, tgt, vec, set1, AES, CLMUL, low32)                             \
    __attribute__((target(tgt))) static uint64_t fn(uint64_t iters)                     \
    {                                                                                   \
        vec x0 = set1(0), x1 = set1(1), x2 = set1(2), x3 = set1(3), x4 = set1(4),       \
            x5 = set1(5), x6 = set1(6), x7 = set1(7);                                   \
        vec c0 = set1(8), c1 = set1(9), c2 = set1(10), c3 = set1(11);                   \
        vec k0 = set1(1), k1 = set1(78);                                                \
        __asm__ volatile("" : "+v"(k0), "+v"(k1));                                      \
        uint64_t t0 = now_ns();                                                         \
        for (uint64_t i = 0; i < iters; i++) {                                          \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON4(CLMUL, k1) ON8(AES, k1) ON4(CLMUL, k0)                     \
            ON8(AES, k0) ON8(AES, k1) ON8(AES, k0) ON8(AES, k1)                         \
            __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3),               \
                             "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7));                   \
            __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3));              \
        }                                                                               \
        uint64_t ns = now_ns() - t0;                                                    \
        volatile int sink = low32(x0) ^ low32(x7) ^ low32(c0) ^ low32(c3);              \
        (void)sink;                                                                     \
        return ns;                                                                      \
    }

GCM_MIX_PROBE(gcm_mix_xmm, "aes,pclmul,sse2", __m128i, _mm_set1_epi32, _mm_aesenc_si128,
              CLMUL_X, LOW32_X)
GCM_MIX_PROBE(gcm_mix_ymm, "vaes,vpclmulqdq,avx2", __m256i, _mm256_set1_epi32,
              _mm256_aesenc_epi128, CLMUL_Y, LOW32_Y)
GCM_MIX_PROBE(gcm_mix_zmm, "vaes,vpclmulqdq,avx512f", __m512i, _mm512_set1_epi32,
              _mm512_aesenc_epi128, CLMUL_Z, LOW32_Z)

#endif

#if defined(AESKIT_HAVE_X86)
#define UNIT_FN(fn) fn
#else
#define UNIT_FN(fn) NULL
#endif

/* What unit_probe measures, the CPU bits (with OS register state, cpu.c)
 * each needs (VAES on ymm needs no ZMM state), and how many instructions
 * one iteration of 4000 runs: the add chain's 128 make the ratio cycles
 * per instruction, or per GCM mix (80 AES + 24 multiplies). */
static const struct {
    const char *name;
    uint32_t needs;
    uint64_t (*fn)(uint64_t);
    double per_iter;
} unit_probes[] = {
    {"vaes_ymm", AESKIT_CPU_VAES | AESKIT_CPU_AVX2, UNIT_FN(vaes_ymm), 128},
    {"vaes_zmm", AESKIT_CPU_VAES | AESKIT_CPU_AVX512F, UNIT_FN(vaes_zmm), 128},
    {"clmul_xmm", AESKIT_CPU_PCLMUL, UNIT_FN(clmul_xmm), 128},
    {"clmul_ymm", AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX, UNIT_FN(clmul_ymm), 128},
    {"clmul_zmm", AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX512F, UNIT_FN(clmul_zmm), 128},
    {"gcm_mix_xmm", AESKIT_CPU_AES | AESKIT_CPU_PCLMUL, UNIT_FN(gcm_mix_xmm), 1},
    {"gcm_mix_ymm", AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX2,
     UNIT_FN(gcm_mix_ymm), 1},
    {"gcm_mix_zmm", AESKIT_CPU_VAES | AESKIT_CPU_VPCLMUL | AESKIT_CPU_AVX512F,
     UNIT_FN(gcm_mix_zmm), 1},
};
#define N_UNIT_PROBES (sizeof unit_probes / sizeof unit_probes[0])

static PyObject *bench_clock_mhz(PyObject *m, PyObject *arg)
{
    (void)m;
    double ms = PyFloat_AsDouble(arg);
    if (ms == -1.0 && PyErr_Occurred())
        return NULL;
    if (!(ms > 0.0 && ms <= 10000.0)) {
        PyErr_SetString(PyExc_ValueError, "duration must be in (0, 10000] ms");
        return NULL;
    }
#if defined(AESKIT_HAVE_X86)
    uint64_t iters = 1000, ns;
    double mhz = 0.0;
    Py_BEGIN_ALLOW_THREADS
    /* grow the loop until it runs for the requested time */
    while ((ns = add_chain(iters)) < (uint64_t)(ms * 1e6) && iters < (UINT64_C(1) << 40))
        iters *= 2;
    mhz = (double)iters * ADDS_PER_ITER * 1e3 / (double)ns;
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(mhz);
#else
    Py_RETURN_NONE;   /* no portable dependent-latency chain: the caller asks for --cpu-mhz */
#endif
}

static PyObject *bench_aes_probe(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
#if defined(AESKIT_HAVE_X86)
    if (aeskit_cpu_features() & AESKIT_CPU_AES) {
        /* the chains interleaved, each at its fastest (an interruption only
         * ever adds time): ratios to the add chain are in core cycles */
        uint64_t adds = UINT64_MAX, lat = UINT64_MAX, wide = UINT64_MAX;
        Py_BEGIN_ALLOW_THREADS
        for (int r = 0; r < 15; r++) {
            uint64_t a = add_chain(4000), b = aesenc_chain(4000), c = aesenc_wide(4000);
            adds = a < adds ? a : adds;
            lat = b < lat ? b : lat;
            wide = c < wide ? c : wide;
        }
        Py_END_ALLOW_THREADS
        return Py_BuildValue("(dd)", (double)lat / (double)adds,
                             (double)wide / (double)adds);
    }
#endif
    Py_RETURN_NONE;
}

static PyObject *bench_unit_probe(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    uint64_t best[N_UNIT_PROBES];
    for (size_t p = 0; p < N_UNIT_PROBES; p++)
        best[p] = UINT64_MAX;
    double adds = 1.0;
#if defined(AESKIT_HAVE_X86)
    const uint32_t have = aeskit_cpu_features();
    uint64_t add_ns = UINT64_MAX;
    Py_BEGIN_ALLOW_THREADS
    /* as in aes_probe: interleaved with the add chain, each at its fastest */
    for (int r = 0; r < 15; r++) {
        uint64_t a = add_chain(4000);
        add_ns = a < add_ns ? a : add_ns;
        for (size_t p = 0; p < N_UNIT_PROBES; p++) {
            if ((have & unit_probes[p].needs) == unit_probes[p].needs) {
                uint64_t t = unit_probes[p].fn(4000);
                best[p] = t < best[p] ? t : best[p];
            }
        }
    }
    Py_END_ALLOW_THREADS
    adds = (double)add_ns;
#endif
    PyObject *out = PyDict_New();
    for (size_t p = 0; out != NULL && p < N_UNIT_PROBES; p++) {
        PyObject *v = best[p] == UINT64_MAX ? Py_NewRef(Py_None)
                                            : PyFloat_FromDouble((double)best[p] / adds
                                                                 * ADDS_PER_ITER
                                                                 / unit_probes[p].per_iter);
        if (v == NULL || PyDict_SetItemString(out, unit_probes[p].name, v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(v);
    }
    return out;
}

static PyObject *bench_kernel_time(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    const aeskit_key *key = NULL;
    enum aeskit_mode mode = AESKIT_ECB;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "kernel_time(key_object, encrypt, size, loops, offset) takes 5 arguments");
        return NULL;
    }
    int aead = 0;
    if (aeskit_key_of(args[0], &key, &mode) < 0) {
        if (!aeskit_aead_of(args[0]))
            return NULL;
        PyErr_Clear();   /* an AESGCM/AESOCB3: whole messages (py/aead.c) */
        aead = 1;
    }
    int enc = PyObject_IsTrue(args[1]);
    Py_ssize_t size = PyLong_AsSsize_t(args[2]);
    Py_ssize_t loops = PyLong_AsSsize_t(args[3]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[4]);
    if (enc < 0 || PyErr_Occurred())
        return NULL;
    if (size < 0 || loops < 1 || offset < 0 || offset > 63) {
        PyErr_SetString(PyExc_ValueError, "need size >= 0, loops >= 1, 0 <= offset < 64");
        return NULL;
    }
    if (!aead && aeskit_mode_is_blockwise(mode) && size % 16 != 0) {
        PyErr_SetString(PyExc_ValueError, "ECB/CBC sizes must be multiples of 16");
        return NULL;
    }
    uint8_t *mem = aligned_alloc(64, ((size_t)size + offset + 64 + 63) / 64 * 64);
    if (mem == NULL)
        return PyErr_NoMemory();
    uint8_t *buf = mem + offset, iv[16] = {0};
    for (Py_ssize_t i = 0; i < size; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    uint64_t ns;
    Py_BEGIN_ALLOW_THREADS
    aeskit_stream st;
    uint64_t t0 = now_ns();
    if (aead) {   /* the buffer has room for the tag after the data */
        aeskit_aead_kernel(args[0], enc, buf, (size_t)size, (size_t)loops);
    } else {
        for (Py_ssize_t i = 0; i < loops; i++) {
            aeskit_stream_init(&st, key, mode, enc, iv);
            aeskit_stream_update(&st, buf, buf, (size_t)size);
        }
    }
    ns = now_ns() - t0;
    Py_END_ALLOW_THREADS
    free(mem);
    return PyLong_FromUnsignedLongLong(ns);
}

static PyObject *bench_ghash_time(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    const aeskit_key *key;
    const aeskit_ghash_key *hk;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "ghash_time(aesgcm_object, size, loops, offset) takes 4 arguments");
        return NULL;
    }
    if (aeskit_gcm_keys_of(args[0], &key, &hk) < 0)
        return NULL;
    Py_ssize_t size = PyLong_AsSsize_t(args[1]);
    Py_ssize_t loops = PyLong_AsSsize_t(args[2]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (size < 0 || size % 16 != 0 || loops < 1 || offset < 0 || offset > 63) {
        PyErr_SetString(PyExc_ValueError,
                        "need size >= 0 a multiple of 16, loops >= 1, 0 <= offset < 64");
        return NULL;
    }
    uint8_t *mem = aligned_alloc(64, ((size_t)size + offset + 63) / 64 * 64 + 64);
    if (mem == NULL)
        return PyErr_NoMemory();
    uint8_t *buf = mem + offset, acc[16] = {0};
    for (Py_ssize_t i = 0; i < size; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    void (*ghash)(const aeskit_ghash_key *, uint8_t *, const uint8_t *, size_t) =
        key->impl->ghash;
    uint64_t ns;
    Py_BEGIN_ALLOW_THREADS
    uint64_t t0 = now_ns();
    for (Py_ssize_t i = 0; i < loops; i++)
        ghash(hk, acc, buf, (size_t)size / 16);
    ns = now_ns() - t0;
    Py_END_ALLOW_THREADS
    free(mem);
    return PyLong_FromUnsignedLongLong(ns);
}

static PyMethodDef bench_methods[] = {
    {"clock_mhz", bench_clock_mhz, METH_O,
     PyDoc_STR("clock_mhz(duration_ms) -> float | None\n\nCore clock from a dependent add "
               "chain run for about duration_ms; None where it cannot be measured.")},
    {"aes_probe", bench_aes_probe, METH_NOARGS,
     PyDoc_STR("aes_probe() -> (latency, reciprocal_throughput) | None\n\nCore cycles per "
               "128-bit AESENC in one dependent chain (bounds the serial modes) and over 8 "
               "independent chains (bounds the parallel ones); None without AES-NI.")},
    {"unit_probe", bench_unit_probe, METH_NOARGS,
     PyDoc_STR("unit_probe() -> dict[str, float | None]\n\nCore cycles per instruction over "
               "8 independent chains (round keys varying) for VAES on ymm and zmm "
               "(vaes_ymm, vaes_zmm) and carry-less multiply on xmm, ymm and zmm "
               "(clmul_xmm, clmul_ymm, clmul_zmm); core cycles for one AES-128 GCM batch's "
               "mix on 8 registers, 80 AES rounds with 24 carry-less multiplies interleaved "
               "(gcm_mix_xmm, gcm_mix_ymm, gcm_mix_zmm); None where the CPU or OS lacks "
               "it.")},
    {"kernel_time", (PyCFunction)(void (*)(void))bench_kernel_time, METH_FASTCALL,
     PyDoc_STR("kernel_time(key_object, encrypt, size, loops, offset) -> int\n\n"
               "Nanoseconds for loops one-shot calls on size bytes in place, buffer at "
               "64-byte alignment + offset, GIL released. For an AESGCM/AESOCB3 object "
               "one call is a whole message: 12-byte nonce, no associated data, the tag "
               "written after the data (enc) or computed and not compared (dec).")},
    {"ghash_time", (PyCFunction)(void (*)(void))bench_ghash_time, METH_FASTCALL,
     PyDoc_STR("ghash_time(aesgcm_object, size, loops, offset) -> int\n\n"
               "Nanoseconds for loops calls of the object's backend's ghash slot on size "
               "bytes (whole blocks), buffer at 64-byte alignment + offset, one accumulator "
               "carried through, GIL released.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_bench(PyObject *module)
{
    return PyModule_AddFunctions(module, bench_methods);
}
