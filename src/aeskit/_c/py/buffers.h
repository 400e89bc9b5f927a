/*
 * buffers.h: taking Python buffers, the same way at every entry point.
 * Every failure is a TypeError (not a buffer, not contiguous, read-only
 * output) or a ValueError (a size), with the call and the argument named
 * (py/errors.h).
 */
#ifndef AESKIT_BUFFERS_H
#define AESKIT_BUFFERS_H

#include "glue.h"

/* arg's buffer into view, as flags (AESKIT_BUF_*) asks; 0, or -1 with
 * view->obj NULL and TypeError naming at and arg. */
static inline int aeskit_take(aeskit_at at, const char *arg, PyObject *obj, Py_buffer *view,
                              unsigned flags)
{
    const int how = (flags & AESKIT_BUF_WRITABLE) ? PyBUF_WRITABLE : PyBUF_SIMPLE;
    if (PyObject_GetBuffer(obj, view, how) == 0)
        return 0;
    view->obj = NULL;
    aeskit_err_buffer(at, arg, -1, obj, flags);
    return -1;
}

/* The same for a private entry point (no class to name). */
static inline int aeskit_get_buffer(PyObject *obj, Py_buffer *view, int writable,
                                    const char *what)
{
    return aeskit_take(AESKIT_NOWHERE, what, obj, view, writable ? AESKIT_BUF_WRITABLE : 0);
}

static inline void aeskit_release(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* 1 if p[0..a) and q[0..b) share a byte. */
static inline int aeskit_meets(const void *p, size_t a, const void *q, size_t b)
{
    const uintptr_t x = (uintptr_t)p, y = (uintptr_t)q;
    return a > 0 && b > 0 && x < y + b && y < x + a;
}

/* buf may be exactly the input data (in place) or apart from it, never
 * partly over it. Only the out_len bytes that will be written count. */
static inline int aeskit_check_overlap(aeskit_at at, const Py_buffer *in, const Py_buffer *out,
                                       size_t out_len)
{
    if (in->buf != out->buf && aeskit_meets(in->buf, (size_t)in->len, out->buf, out_len)) {
        aeskit_err_overlap(at, "data");
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
static inline int aeskit_output(aeskit_at at, PyObject *bufobj, const Py_buffer *in,
                                size_t out_len, Py_buffer *out, PyObject **result,
                                uint8_t **dst)
{
    if (bufobj != NULL) {
        if (aeskit_take(at, "buf", bufobj, out, AESKIT_BUF_WRITABLE) < 0)
            return -1;
        if ((size_t)out->len < out_len) {
            aeskit_err_out_len(at, out_len, out->len);
            return -1;
        }
        if (aeskit_check_overlap(at, in, out, out_len) < 0)
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
 * sizes (AESKIT_KEY* from modes/keysize.h), ascending; returns the count. */
static inline size_t aeskit_key_lengths(unsigned sizes, unsigned n_keys, size_t out[3])
{
    static const size_t aes[3] = {16, 24, 32};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (sizes & (1u << i))
            out[n++] = n_keys * aes[i];
    return n;
}

/* A key argument arg for a shape, and a backend name, checked: the backend
 * to expand it with, and kb holding the key bytes (release it); NULL with
 * an exception naming at and arg. */
static inline const struct aeskit_impl *aeskit_key_argument(aeskit_state *st, aeskit_at at,
                                                            const char *arg, PyObject *keyobj,
                                                            const char *backend, unsigned sizes,
                                                            unsigned n_keys, Py_buffer *kb)
{
    const struct aeskit_impl *impl = aeskit_resolve_backend(st, at, backend);
    if (impl == NULL || aeskit_take(at, arg, keyobj, kb, 0) < 0)
        return NULL;
    size_t len[3], n = aeskit_key_lengths(sizes, n_keys, len);
    for (size_t i = 0; i < n; i++)
        if ((size_t)kb->len == len[i])
            return impl;
    aeskit_err_key_length(at, arg, sizes, n_keys, (size_t)kb->len);
    aeskit_release(kb);
    return NULL;
}

#endif
