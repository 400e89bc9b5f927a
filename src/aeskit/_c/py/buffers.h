/*
 * buffers.h: taking Python buffers, the same way at every entry point.
 * Every failure is a TypeError (not a buffer, not contiguous, read-only
 * output) or a ValueError (a size), with the argument named.
 */
#ifndef AESKIT_BUFFERS_H
#define AESKIT_BUFFERS_H

#include "glue.h"

static int aeskit_get_buffer(PyObject *obj, Py_buffer *view, int writable,
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
static int aeskit_check_overlap(const Py_buffer *in, const Py_buffer *out, size_t out_len)
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

static int aeskit_check_out_len(const Py_buffer *out, size_t need)
{
    if ((size_t)out->len < need) {
        PyErr_Format(PyExc_ValueError, "buf must be at least %zu bytes, got %zd",
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
static int aeskit_output(PyObject *bufobj, const Py_buffer *in, size_t out_len,
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

/* A key argument and a backend name, checked: the backend to expand it
 * with, and kb holding the key bytes (release it); NULL with an exception. */
static const struct aeskit_impl *aeskit_key_argument(PyObject *keyobj, const char *backend,
                                                     Py_buffer *kb)
{
    const struct aeskit_impl *impl = aeskit_resolve_backend(backend);
    if (impl == NULL || aeskit_get_buffer(keyobj, kb, 0, "key") < 0)
        return NULL;
    if (kb->len != 16 && kb->len != 24 && kb->len != 32) {
        PyErr_Format(PyExc_ValueError, "key must be 16, 24 or 32 bytes, got %zd", kb->len);
        aeskit_release(kb);
        return NULL;
    }
    return impl;
}

#endif
