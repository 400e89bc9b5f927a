/*
 * bench.c: what `aeskit bench` must time in C, and the CPU probes
 * (probe.c) as Python functions.
 *
 * kernel_time: loops over one mode's one-shot entry points with the GIL
 * released: the "kernel" layer, comparable with `openssl speed`. A block
 * mode runs its descriptor's stream init and update (what encrypt_into runs,
 * minus Python); an AEAD its descriptor's seal or open on a whole message;
 * a MAC (CMAC) its descriptor's one-shot mac on a whole message.
 *
 * ghash_time: the same loop around an AESGCM object's ghash slot alone, the
 * GHASH row of the kernel layer.
 */
#include "glue.h"   /* Python.h first: it sets _POSIX_C_SOURCE */

#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "modes/block.h"
#include "modes/gcm.h"
#include "modes/mac.h"
#include "probe.h"

/* A probe's duration argument: milliseconds in (0, 10000]. */
static int bench_duration_ms(PyObject *arg, double *ms)
{
    *ms = PyFloat_AsDouble(arg);
    if (*ms == -1.0 && PyErr_Occurred())
        return -1;
    if (!(*ms > 0.0 && *ms <= 10000.0)) {
        PyErr_SetString(PyExc_ValueError, "duration must be in (0, 10000] ms");
        return -1;
    }
    return 0;
}

static PyObject *bench_clock_mhz(PyObject *m, PyObject *arg)
{
    (void)m;
    double ms;
    if (bench_duration_ms(arg, &ms) < 0)
        return NULL;
    double mhz;
    Py_BEGIN_ALLOW_THREADS
    mhz = aeskit_probe_clock_mhz(ms);
    Py_END_ALLOW_THREADS
    if (mhz == 0.0)
        Py_RETURN_NONE;   /* the caller asks for --cpu-mhz */
    return PyFloat_FromDouble(mhz);
}

static PyObject *bench_clock_check(PyObject *m, PyObject *arg)
{
    (void)m;
    double ms;
    if (bench_duration_ms(arg, &ms) < 0)
        return NULL;
    double add = 0.0, mul = 0.0, tsc = 0.0;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = aeskit_probe_clock_check(ms, &add, &mul, &tsc);
    Py_END_ALLOW_THREADS
    if (!ok)
        Py_RETURN_NONE;
    PyObject *t = tsc > 0.0 ? PyFloat_FromDouble(tsc) : Py_NewRef(Py_None);
    if (t == NULL)
        return NULL;
    return Py_BuildValue("{s:d,s:d,s:N}", "add_mhz", add, "mul_mhz", mul, "tsc_mhz", t);
}

static PyObject *bench_aes_probe(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    double latency = 0.0, xmm = 0.0;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = aeskit_probe_aes(&latency, &xmm);
    Py_END_ALLOW_THREADS
    if (!ok)
        Py_RETURN_NONE;
    return Py_BuildValue("(dd)", latency, xmm);
}

static PyObject *bench_aes_share(PyObject *m, PyObject *arg)
{
    (void)m;
    long rounds = PyLong_AsLong(arg);
    if (rounds == -1 && PyErr_Occurred())
        return NULL;
    if (rounds < 1 || rounds > 1000) {
        PyErr_SetString(PyExc_ValueError, "rounds must be in 1..1000");
        return NULL;
    }
    double ns;
    Py_BEGIN_ALLOW_THREADS
    ns = aeskit_probe_aes_share((int)rounds);
    Py_END_ALLOW_THREADS
    if (ns == 0.0)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(ns);
}

static PyObject *bench_unit_probe(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    const size_t n = aeskit_probe_unit_count();
    double *cycles = PyMem_Malloc(n * sizeof *cycles);
    if (cycles == NULL)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    aeskit_probe_units(cycles);
    Py_END_ALLOW_THREADS
    PyObject *out = PyDict_New();
    for (size_t p = 0; out != NULL && p < n; p++) {
        PyObject *v = cycles[p] < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(cycles[p]);
        if (v == NULL || PyDict_SetItemString(out, aeskit_probe_unit_name(p), v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(v);
    }
    PyMem_Free(cycles);
    return out;
}

/* A buffer of size bytes and 64 more (an AEAD's tag goes there) at a
 * page boundary + offset, all filled with a fixed pattern; free *mem. The
 * caller moves the offset between timings, so that where the data sits
 * against the key schedule (4K aliasing) varies instead of being fixed for
 * a whole run by where malloc put things. */
#define BENCH_MAX_OFFSET 8192
static uint8_t *bench_buffer(size_t size, size_t offset, void **mem)
{
    *mem = aligned_alloc(4096, (size + offset + 64 + 4095) / 4096 * 4096);
    if (*mem == NULL)
        return NULL;
    uint8_t *buf = (uint8_t *)*mem + offset;
    for (size_t i = 0; i < size + 64; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    return buf;
}

/* Makes the next call wait for this one: XOR the end of its output into
 * the next call's IV or nonce. Calls with a fixed IV are independent, and
 * the core overlaps them: a loop of short CBC-encryption or OFB calls then
 * runs several latency chains at once and reads faster than one chain can
 * go, below the serial floor. Chained, one call's time is that call's own,
 * as when a stream continues; a parallel mode loses nothing within a call.
 * The XOR is one load and store per byte of at most 16, after the call. */
static void bench_chain(uint8_t *next, size_t next_len, const uint8_t *out, size_t out_len)
{
    for (size_t i = 0; i < out_len; i++)
        next[i % next_len] ^= out[i];
}

/* The first nonce of the timed AEAD messages: its first nonce_len bytes
 * (12 unless the caller asks for another length; up to 32, for a mode
 * whose nonces are longer than a block). */
static const uint8_t bench_nonce[32] = {
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

static PyObject *bench_kernel_time(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 5 && nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "kernel_time(key_object, encrypt, size, loops, "
                                         "offset[, unit]) takes 5 or 6 arguments");
        return NULL;
    }
    const aeskit_key *keys = NULL;
    const void *ks = NULL;
    unsigned tag_len = 0;
    const struct aeskit_cipher *cd = aeskit_cipher_of(args[0], &keys);
    const struct aeskit_aead *ad = cd == NULL ? aeskit_aead_of(args[0], &ks, &tag_len) : NULL;
    const struct aeskit_mac *md = cd == NULL && ad == NULL ? aeskit_mac_of(args[0], &ks) : NULL;
    if (cd == NULL && ad == NULL && md == NULL) {
        PyErr_Format(PyExc_TypeError, "expected an aeskit key object, not %.200s",
                     Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    int enc = PyObject_IsTrue(args[1]);
    Py_ssize_t size = PyLong_AsSsize_t(args[2]);
    Py_ssize_t loops = PyLong_AsSsize_t(args[3]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[4]);
    /* the optional unit: a cipher's sector size (XTS), an AEAD's nonce length */
    const Py_ssize_t unit_arg = nargs == 6 ? PyLong_AsSsize_t(args[5]) : 0;
    const Py_ssize_t unit = ad == NULL ? unit_arg : 0;
    const Py_ssize_t nonce_len = ad != NULL && nargs == 6 ? unit_arg : 12;
    if (enc < 0 || PyErr_Occurred())
        return NULL;
    if (unit != 0 && (cd == NULL || cd->sectors == NULL || unit < 0 || unit % 16 != 0 ||
                      (uint64_t)unit > cd->max_len || size == 0 || size % unit != 0)) {
        PyErr_SetString(PyExc_ValueError, "sector_size needs a mode with sectors (XTS), a "
                                          "multiple of 16 it takes, and size a multiple of it");
        return NULL;
    }
    if (size < 0 || loops < 1 || offset < 0 || offset >= BENCH_MAX_OFFSET) {
        PyErr_SetString(PyExc_ValueError, "need size >= 0, loops >= 1, 0 <= offset < 8192");
        return NULL;
    }
    if (cd != NULL && cd->whole_blocks && size % 16 != 0) {
        PyErr_Format(PyExc_ValueError, "%s sizes must be multiples of 16", cd->name);
        return NULL;
    }
    if (cd != NULL && unit == 0 && ((size_t)size < cd->min_len ||
                       (cd->max_len != 0 && (uint64_t)size > cd->max_len))) {
        PyErr_Format(PyExc_ValueError, "%s sizes must be %u to %llu bytes", cd->name,
                     (unsigned)cd->min_len, (unsigned long long)cd->max_len);
        return NULL;
    }
    /* a mode with no nonce argument and a list of associated data (SIV)
     * takes the nonce as its one item, as RFC 5297 3 does */
    const int nonce_as_ad = ad != NULL && ad->nonce_max == 0 && ad->ad_list;
    if (ad != NULL && (nonce_len < 1 || (size_t)nonce_len > sizeof bench_nonce ||
                       (!nonce_as_ad && ((size_t)nonce_len < ad->nonce_min ||
                                         (size_t)nonce_len > ad->nonce_max)))) {
        PyErr_Format(PyExc_ValueError, "%s takes no %zd-byte nonce to time", ad->name,
                     nonce_len);
        return NULL;
    }
    if (ad != NULL && (uint64_t)size > aeskit_aead_max_data(ad, (size_t)nonce_len)) {
        PyErr_Format(PyExc_ValueError, "%s takes at most %llu bytes with a %zd-byte nonce",
                     ad->name, (unsigned long long)aeskit_aead_max_data(ad, (size_t)nonce_len),
                     nonce_len);
        return NULL;
    }
    void *mem;
    uint8_t *buf = bench_buffer((size_t)size, (size_t)offset, &mem), iv[16] = {0};
    if (buf == NULL)
        return PyErr_NoMemory();
    const size_t n = (size_t)size;
    uint64_t ns;
    Py_BEGIN_ALLOW_THREADS
    uint64_t t0 = aeskit_now_ns();
    if (md != NULL) {
        /* whole messages, each with the last one's tag XORed into its
         * first bytes (bench_chain), so that calls cannot overlap */
        uint8_t tag[16] = {0};
        for (Py_ssize_t i = 0; i < loops; i++) {
            md->mac(ks, buf, n, tag);
            if (n > 0)
                bench_chain(buf, n < 16 ? n : 16, tag, 16);
        }
        aeskit_secure_zero(tag, sizeof tag);
    } else if (ad != NULL) {
        /* whole messages in place; the buffer has room for the tag after the
         * data: sealing writes it, opening computes one and compares none.
         * Each message's nonce is the last one XOR its tag (bench_chain). */
        uint8_t nonce[sizeof bench_nonce], tag[16] = {0};
        memcpy(nonce, bench_nonce, sizeof nonce);
        const aeskit_span as_ad = {.p = nonce, .len = (size_t)nonce_len};
        const aeskit_aead_msg msg = nonce_as_ad
            ? (aeskit_aead_msg){.ad = &as_ad, .n_ad = 1}
            : (aeskit_aead_msg){.nonce = nonce, .nonce_len = (size_t)nonce_len};
        for (Py_ssize_t i = 0; i < loops; i++) {
            if (enc) {
                ad->seal(ks, &msg, buf, buf, n, tag);
                memcpy(buf + n, tag, tag_len);
            } else {
                ad->open(ks, &msg, buf, buf, n, buf + n, tag);
            }
            bench_chain(nonce, (size_t)nonce_len, tag, tag_len);
        }
        aeskit_secure_zero(tag, sizeof tag);
    } else {
        /* what a one-shot call runs: the mode's own (XTS), or a stream; or
         * with sector_size, what a sectors call runs (the first sector's
         * number chained as an IV is) */
        uint64_t st[AESKIT_CIPHER_STATE_MAX / 8];
        for (Py_ssize_t i = 0; i < loops; i++) {
            if (unit != 0) {
                cd->sectors(keys, enc, iv, (size_t)unit, buf, buf, n);
            } else if (cd->oneshot != NULL) {
                cd->oneshot(keys, enc, iv, buf, buf, n);
            } else {
                cd->init(st, keys, enc, iv);
                const size_t done = cd->update(st, buf, buf, n);
                size_t tail;
                cd->finish(st, buf + done, &tail);
            }
            bench_chain(iv, sizeof iv, n >= 16 ? buf + n - 16 : buf, n >= 16 ? 16 : n);
        }
        aeskit_secure_zero(st, sizeof st);
    }
    ns = aeskit_now_ns() - t0;
    Py_END_ALLOW_THREADS
    free(mem);
    return PyLong_FromUnsignedLongLong(ns);
}

static PyObject *bench_ghash_time(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "ghash_time(aesgcm_object, size, loops, offset) takes 4 arguments");
        return NULL;
    }
    const void *ks;
    unsigned tag_len;
    if (aeskit_aead_of(args[0], &ks, &tag_len) != &aeskit_gcm_aead) {
        PyErr_Format(PyExc_TypeError, "expected an aeskit.AESGCM object, not %.200s",
                     Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    const aeskit_gcm_key *gk = ks;
    Py_ssize_t size = PyLong_AsSsize_t(args[1]);
    Py_ssize_t loops = PyLong_AsSsize_t(args[2]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (size < 0 || size % 16 != 0 || loops < 1 || offset < 0 || offset >= BENCH_MAX_OFFSET) {
        PyErr_SetString(PyExc_ValueError,
                        "need size >= 0 a multiple of 16, loops >= 1, 0 <= offset < 8192");
        return NULL;
    }
    void *mem;
    uint8_t *buf = bench_buffer((size_t)size, (size_t)offset, &mem), acc[16] = {0};
    if (buf == NULL)
        return PyErr_NoMemory();
    aeskit_ghash_fn *ghash = gk->key.impl->ghash;
    uint64_t ns;
    Py_BEGIN_ALLOW_THREADS
    uint64_t t0 = aeskit_now_ns();
    for (Py_ssize_t i = 0; i < loops; i++)
        ghash(&gk->hk, acc, buf, (size_t)size / 16);
    ns = aeskit_now_ns() - t0;
    Py_END_ALLOW_THREADS
    free(mem);
    return PyLong_FromUnsignedLongLong(ns);
}

static PyMethodDef bench_methods[] = {
    {"clock_mhz", bench_clock_mhz, METH_O,
     PyDoc_STR("clock_mhz(duration_ms) -> float | None\n\nCore clock from a dependent add "
               "chain run for about duration_ms; None where it cannot be measured.")},
    {"clock_check", bench_clock_check, METH_O,
     PyDoc_STR("clock_check(duration_ms) -> dict[str, float | None] | None\n\nThe core clock "
               "in MHz two ways over about duration_ms, a dependent add chain (add_mhz) and "
               "a dependent 64-bit multiply chain at 3 cycles each (mul_mhz), interleaved, "
               "each at its fastest run; and the TSC's rate over the same interval "
               "(tsc_mhz: a fixed nominal rate, not the core's; information only). None "
               "where it cannot be measured.")},
    {"aes_probe", bench_aes_probe, METH_NOARGS,
     PyDoc_STR("aes_probe() -> (latency, reciprocal_throughput) | None\n\nCore cycles per "
               "128-bit AESENC in one dependent chain (bounds the serial modes) and over 8 "
               "independent chains (bounds the parallel ones); None without AES-NI.")},
    {"aes_share", bench_aes_share, METH_O,
     PyDoc_STR("aes_share(rounds) -> float | None\n\nNanoseconds per 128-bit AESENC over 8 "
               "independent chains, the fastest of rounds runs of about 0.1 ms: higher on a "
               "CPU whose AES units another thread shares; None without AES-NI.")},
    {"unit_probe", bench_unit_probe, METH_NOARGS,
     PyDoc_STR("unit_probe() -> dict[str, float | None]\n\nCore cycles per instruction over "
               "8 independent chains (round keys varying) for VAES on ymm and zmm "
               "(vaes_ymm, vaes_zmm) and carry-less multiply on xmm, ymm and zmm "
               "(clmul_xmm, clmul_ymm, clmul_zmm); core cycles for one AES-128 GCM batch's "
               "mix on 8 registers, 80 AES rounds with 24 carry-less multiplies interleaved "
               "(gcm_mix_xmm, gcm_mix_ymm, gcm_mix_zmm); None where the CPU or OS lacks "
               "it.")},
    {"kernel_time", (PyCFunction)(void (*)(void))bench_kernel_time, METH_FASTCALL,
     PyDoc_STR("kernel_time(key_object, encrypt, size, loops, offset[, unit]) -> int\n\n"
               "Nanoseconds for loops one-shot calls on size bytes in place, buffer at "
               "a page boundary + offset (< 8192), GIL released, each call waiting for the last "
               "(its IV or nonce XORs in the last one's final output block or tag). For an "
               "AEAD object one call is a whole message: a nonce of unit bytes (12 unless "
               "given), no associated data, the tag written after the data (enc) or computed "
               "and not compared (dec). For XTS, unit is a sector size: the calls are "
               "encrypt/decrypt_sectors' over sectors of that size, the first numbered by the "
               "chained IV. "
               "For a MAC object (AESCMAC) one call is the tag of a whole message; encrypt "
               "is ignored.")},
    {"ghash_time", (PyCFunction)(void (*)(void))bench_ghash_time, METH_FASTCALL,
     PyDoc_STR("ghash_time(aesgcm_object, size, loops, offset) -> int\n\n"
               "Nanoseconds for loops calls of the object's backend's ghash slot on size "
               "bytes (whole blocks), buffer at a page boundary + offset (< 8192), one accumulator "
               "carried through, GIL released.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_bench(PyObject *module)
{
    return PyModule_AddFunctions(module, bench_methods);
}
