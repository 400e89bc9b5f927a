/*
 * bench.c: what `aeskit bench` must time in C.
 *
 * clock_mhz: the core clock, from a chain of dependent register adds (one
 * cycle each on every x86 core since the P6) timed against the monotonic
 * clock. Turbo and frequency drift move it, so the benchmark samples it
 * before and after each operation and repeats until they agree.
 *
 * kernel_time: loops over one mode's one-shot path (stream init + update,
 * exactly what encrypt_into runs, minus Python) with the GIL released: the
 * "kernel" layer, comparable with `openssl speed`. AEAD objects run their
 * whole seal/open per call (aeskit_aead_kernel, py/aead.c).
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

/* ns for iters x 128 AESENCs over 8 independent chains, round keys
 * varying as in a real kernel: the throughput that bounds the parallel
 * modes. (One shared key register measured half the throughput on Zen 4.) */
__attribute__((target("aes,sse2"))) static uint64_t aesenc_wide(uint64_t iters)
{
    __m128i x[8], ks[8];
    for (int j = 0; j < 8; j++) {
        x[j] = _mm_set1_epi32(j);
        ks[j] = _mm_set1_epi32(j * 77 + 1);
    }
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        for (int r = 0; r < 16; r++) {
            __m128i k = ks[r & 7];
            for (int j = 0; j < 8; j++)
                x[j] = _mm_aesenc_si128(x[j], k);
        }
        __asm__ volatile("" : "+x"(x[0]), "+x"(x[1]), "+x"(x[2]), "+x"(x[3]),
                         "+x"(x[4]), "+x"(x[5]), "+x"(x[6]), "+x"(x[7]));
    }
    uint64_t ns = now_ns() - t0;
    volatile int sink = _mm_cvtsi128_si32(x[0]) ^ _mm_cvtsi128_si32(x[7]);
    (void)sink;
    return ns;
}
#endif

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

static PyMethodDef bench_methods[] = {
    {"clock_mhz", bench_clock_mhz, METH_O,
     PyDoc_STR("clock_mhz(duration_ms) -> float | None\n\nCore clock from a dependent add "
               "chain run for about duration_ms; None where it cannot be measured.")},
    {"aes_probe", bench_aes_probe, METH_NOARGS,
     PyDoc_STR("aes_probe() -> (latency, reciprocal_throughput) | None\n\nCore cycles per "
               "128-bit AESENC in one dependent chain (bounds the serial modes) and over 8 "
               "independent chains (bounds the parallel ones); None without AES-NI.")},
    {"kernel_time", (PyCFunction)(void (*)(void))bench_kernel_time, METH_FASTCALL,
     PyDoc_STR("kernel_time(key_object, encrypt, size, loops, offset) -> int\n\n"
               "Nanoseconds for loops one-shot calls on size bytes in place, buffer at "
               "64-byte alignment + offset, GIL released. For an AESGCM/AESOCB3 object "
               "one call is a whole message: 12-byte nonce, no associated data, the tag "
               "written after the data (enc) or computed and not compared (dec).")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_bench(PyObject *module)
{
    return PyModule_AddFunctions(module, bench_methods);
}
