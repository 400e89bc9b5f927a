/*
 * buffers.h: taking Python buffers, the same way at every entry point.
 * Every failure is a TypeError (not a buffer, not contiguous, read-only
 * output) or a ValueError (a size), with the argument named.
 */
#ifndef AESKIT_BUFFERS_H
#define AESKIT_BUFFERS_H

#include "glue.h"

static inline int aeskit_get_buffer(PyObject *obj, Py_buffer *view, int writable,
                             const char *what)
{
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) == 0)
        return 0;
    if (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a %sC-contiguous bytes-like object, not %.200s",
                     what, writable ? "writable " : "", Py_TYPE(obj)->tp_name);
    }
    view->obj = NULL;
    return -1;
}

static inline void aeskit_release(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* buf may be exactly the input (in place) or apart from it, never partly
 * over it. Only the out_len bytes that will be written count. */
static inline int aeskit_check_overlap(const Py_buffer *in, const Py_buffer *out, size_t out_len)
{
    uintptr_t a = (uintptr_t)in->buf, b = (uintptr_t)out->buf;
    if (a == b || in->len == 0 || out_len == 0)
        return 0;
    if (a < b + out_len && b < a + (size_t)in->len) {
        PyErr_SetString(PyExc_ValueError,
                        "buf partially overlaps the input: pass the input itself "
                        "(in place) or a separate buffer");
        return -1;
    }
    return 0;
}

static inline int aeskit_check_out_len(const Py_buffer *out, size_t need)
{
    if ((size_t)out->len < need) {
        PyErr_Format(PyExc_ValueError, "buffer must be at least %zu bytes, got %zd",
                     need, out->len);
        return -1;
    }
    return 0;
}

/*
 * Where a call's out_len bytes of output go: into the caller's buf (bufobj
 * non-NULL: writable, big enough, not partly over the input, held in out)
 * or into a new bytes object (*result). 0 with *dst set, or -1 with an
 * exception set.
 */
static inline int aeskit_output(PyObject *bufobj, const Py_buffer *in, size_t out_len,
                         Py_buffer *out, PyObject **result, uint8_t **dst)
{
    if (bufobj != NULL) {
        if (aeskit_get_buffer(bufobj, out, 1, "buf") < 0 ||
            aeskit_check_out_len(out, out_len) < 0 || aeskit_check_overlap(in, out, out_len) < 0)
            return -1;
        *dst = out->buf;
        return 0;
    }
    *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)out_len);
    if (*result == NULL)
        return -1;
    *dst = (uint8_t *)PyBytes_AS_STRING(*result);
    return 0;
}

/* The key lengths a shape allows: n_keys AES keys, each of a size in
 * sizes (AESKIT_KEY* from modes/block.h), ascending; returns the count. */
static inline size_t aeskit_key_lengths(unsigned sizes, unsigned n_keys, size_t out[3])
{
    static const size_t aes[3] = {16, 24, 32};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (sizes & (1u << i))
            out[n++] = n_keys * aes[i];
    return n;
}

/* "16, 24 or 32" for the error messages. */
static inline void aeskit_key_lengths_text(unsigned sizes, unsigned n_keys, char *buf, size_t cap)
{
    size_t len[3], n = aeskit_key_lengths(sizes, n_keys, len), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)PyOS_snprintf(buf + used, cap - used, "%s%zu",
                                      i == 0 ? "" : i + 1 == n ? " or " : ", ", len[i]);
}

/* A key argument for a shape, and a backend name, checked: the backend to
 * expand it with, and kb holding the key bytes (release it); NULL with an
 * exception. */
static inline const struct aeskit_impl *aeskit_key_argument(aeskit_state *st, PyObject *keyobj,
                                                     const char *backend, unsigned sizes,
                                                     unsigned n_keys, Py_buffer *kb)
{
    const struct aeskit_impl *impl = aeskit_resolve_backend(st, backend);
    if (impl == NULL || aeskit_get_buffer(keyobj, kb, 0, "key") < 0)
        return NULL;
    size_t len[3], n = aeskit_key_lengths(sizes, n_keys, len);
    for (size_t i = 0; i < n; i++)
        if ((size_t)kb->len == len[i])
            return impl;
    char text[64];
    aeskit_key_lengths_text(sizes, n_keys, text, sizeof text);
    PyErr_Format(PyExc_ValueError, "key must be %s bytes, got %zd", text, kb->len);
    aeskit_release(kb);
    return NULL;
}

#endif
