/*
 * segments.c: many segments of Tink's AES-GCM-HKDF streaming format in one
 * call, for aeskit.streaming (the format itself is described in
 * aeskit/streaming/format.py).
 *
 * A segment is one AEAD message with no associated data under the nonce
 * prefix (7 bytes) || BE32(segment number) || last-segment flag (1 byte).
 * Sealed one Python call at a time, a 4 KiB segment (Tink's *_4KB key
 * templates) spent most of its time in the interpreter, and below the GIL
 * threshold it held the GIL, so threads did not help; here a run of
 * segments costs one call and releases the GIL once (from AESKIT_GIL_THRESHOLD bytes on).
 *
 *   _stream_seal(aead, prefix, index, last, src, dst, size) -> int
 *   _stream_open(aead, prefix, index, last, src, dst, size) -> (int, int)
 *
 * src holds consecutive segments numbered index, index + 1, ..., each of
 * size bytes (plaintext to seal, ciphertext with its tag to open); only
 * the final one may be shorter, and only when last is true, which also
 * sets the flag of that final one. Sealing an empty src with last makes
 * one empty segment (an empty stream's). dst gets the results back to
 * back: ciphertext || tag per segment (seal returns the bytes written);
 * plaintext per segment (open returns the bytes written and -1, or, at
 * the first segment that fails to authenticate, the bytes written before
 * it and its position in the run, that segment's output zeroed and
 * nothing after it opened). src and dst must not overlap, except that a
 * run of one segment may be done in place (dst == src).
 *
 * aead is any aeskit AEAD object with 16-byte tags whose descriptor allows
 * 12-byte nonces (nonce_min..nonce_max) and a segment's data under them
 * (aeskit_aead_max_data): Tink's format is AES-GCM (aeskit.AESGCM), and the
 * same segmentation runs on any AEAD that fits it. Everything is checked
 * once a call; the loop calls the descriptor's seal or open, as the AEAD's
 * one-shot methods do.
 */
#include "glue.h"   /* Python.h first: it sets _POSIX_C_SOURCE */

#include <string.h>

#include "buffers.h"
#include "common.h"
#include "modes/aead.h"

#define PREFIX_LEN 7
#define NONCE_LEN 12
#define TAG_LEN 16
static_assert(PREFIX_LEN + 4 + 1 == NONCE_LEN, "prefix || BE32(segment) || flag");

typedef struct {
    const struct aeskit_aead *d;
    const void *ks;
    Py_buffer prefix, src, dst;
    uint32_t index;
    int last;
    size_t size;
    size_t n, final;    /* the segments src holds, and the last one's length */
    size_t out;         /* what dst gets when every segment seals or opens */
} seg_args;

static void seg_release(seg_args *a)
{
    aeskit_release(&a->prefix);
    aeskit_release(&a->src);
    aeskit_release(&a->dst);
}

/* The segments src holds: n, the final one's length in *final. */
static size_t seg_count(size_t len, size_t size, int last, size_t *final)
{
    if (len == 0) {
        *final = 0;
        return last ? 1 : 0;
    }
    const size_t n = (len + size - 1) / size;
    *final = len - (n - 1) * size;
    return n;
}

/* The arguments of _stream_seal (enc) or _stream_open, checked; 0, or -1
 * with an exception set and nothing held. */
static int seg_parse(PyObject *const *args, Py_ssize_t nargs, const char *name, int enc,
                     seg_args *a)
{
    memset(a, 0, sizeof *a);
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "%s(aead, prefix, index, last, src, dst, size) takes 7 "
                     "arguments", name);
        return -1;
    }
    unsigned tag_len;
    a->d = aeskit_aead_of(args[0], &a->ks, &tag_len);
    if (a->d == NULL) {
        PyErr_Format(PyExc_TypeError, "%s: expected an aeskit AEAD object (such as "
                     "aeskit.AESGCM), not %.200s", name, Py_TYPE(args[0])->tp_name);
        return -1;
    }
    if (tag_len != TAG_LEN) {
        PyErr_Format(PyExc_ValueError, "%s: the %s object must have 16-byte tags "
                     "(tag_length=16), not %u", name, a->d->type_name, tag_len);
        return -1;
    }
    if (NONCE_LEN < a->d->nonce_min || NONCE_LEN > a->d->nonce_max) {
        PyErr_Format(PyExc_ValueError, "%s: the segments' nonces are 12 bytes, which %s "
                     "does not take", name, a->d->type_name);
        return -1;
    }
    const unsigned long long index = PyLong_AsUnsignedLongLong(args[2]);
    const Py_ssize_t size = PyLong_AsSsize_t(args[6]);
    const int last = PyObject_IsTrue(args[3]);
    if (PyErr_Occurred() || last < 0)
        return -1;
    if (index > UINT32_MAX || size <= 0) {
        PyErr_Format(PyExc_ValueError, "%s: index must be below 2**32 and size positive", name);
        return -1;
    }
    if (!enc && size < TAG_LEN) {
        PyErr_Format(PyExc_ValueError, "%s: size must be at least 16 bytes", name);
        return -1;
    }
    const uint64_t max_data = aeskit_aead_max_data(a->d, NONCE_LEN);
    if ((uint64_t)size - (enc ? 0 : TAG_LEN) > max_data) {
        PyErr_Format(PyExc_ValueError, "%s: %s takes at most %llu bytes of data with a "
                     "12-byte nonce: segments of %zd bytes are too long", name,
                     a->d->type_name, (unsigned long long)max_data, size);
        return -1;
    }
    a->index = (uint32_t)index;
    a->last = last;
    a->size = (size_t)size;
    if (aeskit_get_buffer(args[1], &a->prefix, 0, "prefix") < 0 ||
        aeskit_get_buffer(args[4], &a->src, 0, "src") < 0 ||
        aeskit_get_buffer(args[5], &a->dst, 1, "dst") < 0) {
        seg_release(a);
        return -1;
    }
    if (a->prefix.len != PREFIX_LEN) {
        PyErr_Format(PyExc_ValueError, "%s: prefix must be %d bytes", name, PREFIX_LEN);
        goto bad;
    }
    size_t final;
    const size_t len = (size_t)a->src.len, n = seg_count(len, a->size, last, &final);
    if (!last && final != a->size && n > 0) {
        PyErr_Format(PyExc_ValueError, "%s: only the last segment of a stream may be short",
                     name);
        goto bad;
    }
    if (n > 0 && (uint64_t)a->index + (n - 1) > UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s: segment numbers past 2**32 - 1", name);
        goto bad;
    }
    /* one segment may be sealed or opened in place (the AEAD's own rule);
     * several cannot: their strides differ */
    const uintptr_t s = (uintptr_t)a->src.buf, d = (uintptr_t)a->dst.buf;
    if (a->src.len > 0 && a->dst.len > 0 && s < d + (size_t)a->dst.len &&
        d < s + (size_t)a->src.len && !(s == d && n == 1)) {
        PyErr_Format(PyExc_ValueError, "%s: src and dst overlap (in place: one segment only)",
                     name);
        goto bad;
    }
    /* sealing adds a tag a segment; opening takes them off (a final
     * segment shorter than a tag fails and opens to nothing) */
    a->n = n, a->final = final;
    a->out = enc ? len + TAG_LEN * n
           : n == 0 ? 0
                    : (n - 1) * (a->size - TAG_LEN) + (final > TAG_LEN ? final - TAG_LEN : 0);
    if ((size_t)a->dst.len < a->out) {
        PyErr_Format(PyExc_ValueError, "%s: dst must hold %zu bytes, got %zd", name, a->out,
                     a->dst.len);
        goto bad;
    }
    return 0;
bad:
    seg_release(a);
    return -1;
}

/* The nonce of segment j of n. */
static void seg_nonce(const seg_args *a, size_t j, size_t n, uint8_t nonce[NONCE_LEN])
{
    memcpy(nonce, a->prefix.buf, PREFIX_LEN);
    aeskit_store_be32(nonce + PREFIX_LEN, a->index + (uint32_t)j);
    nonce[NONCE_LEN - 1] = (uint8_t)(a->last && j + 1 == n);
}

/* _stream_seal (enc) or _stream_open: see the top. */
static PyObject *seg_run(PyObject *const *args, Py_ssize_t nargs, int enc)
{
    seg_args a;
    if (seg_parse(args, nargs, enc ? "_stream_seal" : "_stream_open", enc, &a) < 0)
        return NULL;
    const size_t n = a.n;
    const uint8_t *src = a.src.buf;
    uint8_t *dst = a.dst.buf, nonce[NONCE_LEN];
    size_t written = 0;
    Py_ssize_t bad = -1;
    const aeskit_aead_msg msg = {.nonce = nonce, .nonce_len = sizeof nonce};
    PyThreadState *ts = (size_t)a.src.len >= AESKIT_GIL_THRESHOLD ? PyEval_SaveThread() : NULL;
    for (size_t j = 0; j < n; j++) {
        const size_t k = j + 1 == n ? a.final : a.size;
        if (!enc && k < TAG_LEN) {      /* no room for a tag: cannot authenticate */
            bad = (Py_ssize_t)j;
            break;
        }
        const size_t body = enc ? k : k - TAG_LEN, made = enc ? k + TAG_LEN : body;
        seg_nonce(&a, j, n, nonce);
        if (enc) {
            a.d->seal(a.ks, &msg, dst, src, k, dst + k);
        } else {
            if (!aeskit_aead_open_verified(a.d, a.ks, &msg, dst, src, body, src + body,
                                           TAG_LEN)) {
                bad = (Py_ssize_t)j;   /* its body in dst is zeroed */
                break;
            }
        }
        src += k;
        dst += made;
        written += made;
    }
    if (ts != NULL)
        PyEval_RestoreThread(ts);
    seg_release(&a);
    if (enc)
        return PyLong_FromSize_t(written);
    return Py_BuildValue("(nn)", (Py_ssize_t)written, bad);
}

static PyObject *seg_seal(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    return seg_run(args, nargs, 1);
}

static PyObject *seg_open(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    return seg_run(args, nargs, 0);
}

static PyMethodDef seg_methods[] = {
    {"_stream_seal", (PyCFunction)(void (*)(void))seg_seal, METH_FASTCALL,
     PyDoc_STR("_stream_seal(aead, prefix, index, last, src, dst, size) -> int\n\n"
               "For aeskit.streaming: seal the segments in src (size bytes each, the last "
               "one shorter only if last) into dst, back to back. See py/segments.c.")},
    {"_stream_open", (PyCFunction)(void (*)(void))seg_open, METH_FASTCALL,
     PyDoc_STR("_stream_open(aead, prefix, index, last, src, dst, size) -> (written, bad)\n\n"
               "For aeskit.streaming: open the segments in src into dst, back to back, up to "
               "the first that fails (bad: its position, else -1). See py/segments.c.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_segments(PyObject *module)
{
    return PyModule_AddFunctions(module, seg_methods);
}
