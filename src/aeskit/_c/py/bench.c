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
 * "kernel" layer, comparable with `openssl speed`.
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

static PyObject *bench_kernel_time(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    const aeskit_key *key;
    enum aeskit_mode mode;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "kernel_time(key_object, encrypt, size, loops, offset) takes 5 arguments");
        return NULL;
    }
    if (aeskit_key_of(args[0], &key, &mode) < 0)
        return NULL;
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
    if (aeskit_mode_is_blockwise(mode) && size % 16 != 0) {
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
    for (Py_ssize_t i = 0; i < loops; i++) {
        aeskit_stream_init(&st, key, mode, enc, iv);
        aeskit_stream_update(&st, buf, buf, (size_t)size);
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
    {"kernel_time", (PyCFunction)(void (*)(void))bench_kernel_time, METH_FASTCALL,
     PyDoc_STR("kernel_time(key_object, encrypt, size, loops, offset) -> int\n\n"
               "Nanoseconds for loops one-shot calls on size bytes in place, buffer at "
               "64-byte alignment + offset, GIL released.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_bench(PyObject *module)
{
    return PyModule_AddFunctions(module, bench_methods);
}
