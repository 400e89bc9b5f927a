/*
 * errors.c: the messages of errors.h. Each ends in aeskit_error, which puts
 * where the call was made in front; the others build what is accepted from
 * the descriptor's data (masks, ranges, limits) and say what was given.
 */
#include <stdarg.h>

#include "errors.h"

/* The message with where in front; a new reference, or NULL. */
static PyObject *with_where(aeskit_at at, PyObject *body)
{
    PyTypeObject *tp = aeskit_at_type(at);
    if (tp != NULL && at.fn != NULL)
        return PyUnicode_FromFormat("%s.%s: %U", aeskit_public_name(tp), at.fn, body);
    if (tp != NULL)
        return PyUnicode_FromFormat("%s: %U", aeskit_public_name(tp), body);
    if (at.fn != NULL)
        return PyUnicode_FromFormat("%s: %U", at.fn, body);
    return Py_NewRef(body);
}

static int raise_v(PyObject *exc, aeskit_at at, const char *fmt, va_list va)
{
    PyObject *body = PyUnicode_FromFormatV(fmt, va);
    if (body == NULL)
        return -1;
    PyObject *msg = with_where(at, body);
    Py_DECREF(body);
    if (msg != NULL) {
        PyErr_SetObject(exc, msg);
        Py_DECREF(msg);
    }
    return -1;
}

int aeskit_error(PyObject *exc, aeskit_at at, const char *fmt, ...)
{
    va_list va;
    va_start(va, fmt);
    raise_v(exc, at, fmt, va);
    va_end(va);
    return -1;
}

int aeskit_call_error(aeskit_at at, const char *fmt, ...)
{
    va_list va;
    va_start(va, fmt);
    PyObject *body = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    if (body == NULL)
        return -1;
    PyTypeObject *tp = aeskit_at_type(at);
    PyObject *msg;
    if (tp != NULL && at.fn != NULL)
        msg = PyUnicode_FromFormat("%s.%s() %U", aeskit_public_name(tp), at.fn, body);
    else
        msg = PyUnicode_FromFormat("%s() %U", tp != NULL ? aeskit_public_name(tp)
                                              : at.fn != NULL ? at.fn : "function", body);
    Py_DECREF(body);
    if (msg != NULL) {
        PyErr_SetObject(PyExc_TypeError, msg);
        Py_DECREF(msg);
    }
    return -1;
}

/* ---- buffers and types ---------------------------------------------------- */

/* What was given, as a type: "str", or "None" for None. */
static const char *given_type(PyObject *given)
{
    return given == Py_None ? "None" : Py_TYPE(given)->tp_name;
}

int aeskit_err_buffer(aeskit_at at, const char *arg, Py_ssize_t index, PyObject *given,
                      unsigned flags)
{
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
    }
    PyObject *name = index >= 0 ? PyUnicode_FromFormat("%s[%zd]", arg, index)
                                : PyUnicode_FromString(arg);
    if (name == NULL)
        return -1;
    const char *type = given_type(given);
    const int writable = (flags & AESKIT_BUF_WRITABLE) != 0;
    if (PyObject_CheckBuffer(given)) {
        /* A buffer, but not one this takes: read-only where it is written
         * to, or not in one C-contiguous piece. */
        Py_buffer view;
        if (writable && PyObject_GetBuffer(given, &view, PyBUF_SIMPLE) == 0) {
            PyBuffer_Release(&view);
            aeskit_error(PyExc_TypeError, at, "%U must be a writable bytes-like object, not "
                         "%.200s, which is read-only: pass a bytearray (or a memoryview of "
                         "one)", name, type);
        } else {
            PyErr_Clear();
            if (writable)
                aeskit_error(PyExc_TypeError, at, "%U must be a C-contiguous writable "
                             "bytes-like object, and this %.200s is not contiguous: pass a "
                             "bytearray and copy from it", name, type);
            else
                aeskit_error(PyExc_TypeError, at, "%U must be a C-contiguous bytes-like "
                             "object, and this %.200s is not contiguous: pass a copy, e.g. "
                             "bytes(%U)", name, type, name);
        }
        Py_DECREF(name);
        return -1;
    }
    const char *accepted = writable ? "a writable bytes-like object (bytearray, memoryview, "
                                      "...)"
                                    : "a bytes-like object (bytes, bytearray, memoryview, ...)";
    const char *or_none = (flags & AESKIT_BUF_OR_NONE) ? " or None" : "";
    if (PyUnicode_Check(given) && !writable) {
        if (flags & AESKIT_BUF_TEXT)
            aeskit_error(PyExc_TypeError, at, "%U must be %s%s, not str: encode text first, "
                         "e.g. %U.encode()", name, accepted, or_none, name);
        else
            aeskit_error(PyExc_TypeError, at, "%U must be %s%s, not str: for a hex string, "
                         "bytes.fromhex(%U)", name, accepted, or_none, name);
    } else {
        aeskit_error(PyExc_TypeError, at, "%U must be %s%s, not %.200s", name, accepted,
                     or_none, type);
    }
    Py_DECREF(name);
    return -1;
}

int aeskit_err_type(aeskit_at at, const char *arg, const char *accepted, PyObject *given,
                    const char *fix)
{
    return aeskit_error(PyExc_TypeError, at, "%s must be %s, not %.200s%s%s", arg, accepted,
                        given_type(given), fix != NULL ? ": " : "",
                        fix != NULL ? fix : "");
}

int aeskit_err_choice(aeskit_at at, const char *arg, const char *accepted, PyObject *given)
{
    return aeskit_error(PyExc_ValueError, at, "%s must be %s, got %.200R", arg, accepted,
                        given);
}

/* ---- what is accepted, from the descriptors --------------------------------- */

/* items[0..n) as "a", "a or b", "a, b or c". */
static void join_or(char *buf, size_t cap, const unsigned long long *items, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)PyOS_snprintf(buf + used, cap - used, "%s%llu",
                                      i == 0 ? "" : i + 1 == n ? " or " : ", ", items[i]);
}

void aeskit_key_lengths_text(unsigned sizes, unsigned n_keys, unsigned scale, char *buf,
                             size_t cap)
{
    static const unsigned aes[3] = {16, 24, 32};
    unsigned long long len[3];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (sizes & (1u << i))
            len[n++] = (unsigned long long)scale * n_keys * aes[i];
    join_or(buf, cap, len, n);
}

/* "4, 8 or 12 to 16" for the lengths (1..16) whose bits are set in mask. */
static void mask_text(uint32_t mask, char *buf, size_t cap)
{
    size_t used = 0;
    unsigned runs = 0;
    for (unsigned t = 1; t <= 16; t++)
        runs += (mask >> t & 1) && !(mask >> (t - 1) & 1);
    buf[0] = '\0';
    for (unsigned t = 1, run = 0; t <= 16 && used < cap; t++) {
        if (!(mask >> t & 1) || (mask >> (t - 1) & 1))
            continue;
        unsigned end = t;
        while (end < 16 && (mask >> (end + 1) & 1))
            end++;
        run++;
        const char *sep = run == 1 ? "" : run == runs ? " or " : ", ";
        if (end == t)
            used += (size_t)PyOS_snprintf(buf + used, cap - used, "%s%u", sep, t);
        else
            used += (size_t)PyOS_snprintf(buf + used, cap - used, "%s%u to %u", sep, t, end);
    }
}

/* A limit as the docs write it: 2**k or 2**k - d where that reads better. */
static void limit_text(uint64_t v, char *buf, size_t cap)
{
    for (unsigned k = 8; k < 64; k++) {
        const uint64_t p = UINT64_C(1) << k, d = p - v;
        if (p >= v && d < (p >> 8)) {
            if (d == 0)
                PyOS_snprintf(buf, cap, "2**%u", k);
            else
                PyOS_snprintf(buf, cap, "2**%u - %llu", k, (unsigned long long)d);
            return;
        }
    }
    PyOS_snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* ---- lengths ------------------------------------------------------------------ */

int aeskit_err_key_length(aeskit_at at, const char *arg, unsigned sizes, unsigned n_keys,
                          size_t given)
{
    char text[64];
    aeskit_key_lengths_text(sizes, n_keys, 1, text, sizeof text);
    if (n_keys == 1)
        return aeskit_error(PyExc_ValueError, at, "%s must be %s bytes, got %zu", arg, text,
                            given);
    return aeskit_error(PyExc_ValueError, at, "%s must be %s bytes (%s AES keys of one size, "
                        "one after the other), got %zu", arg, text,
                        n_keys == 2 ? "two" : "several", given);
}

int aeskit_err_length(aeskit_at at, const char *arg, size_t lo, size_t hi, const char *note,
                      size_t given)
{
    if (hi == SIZE_MAX)
        return aeskit_error(PyExc_ValueError, at, "%s must be at least %zu byte%s%s, got %zu",
                            arg, lo, lo == 1 ? "" : "s", note, given);
    if (lo == hi)
        return aeskit_error(PyExc_ValueError, at, "%s must be %zu bytes%s, got %zu", arg, lo,
                            note, given);
    return aeskit_error(PyExc_ValueError, at, "%s must be %zu to %zu bytes%s, got %zu", arg,
                        lo, hi, note, given);
}

int aeskit_err_tag_length(aeskit_at at, uint32_t mask, PyObject *given)
{
    char text[80];
    mask_text(mask, text, sizeof text);
    return aeskit_error(PyExc_ValueError, at, "tag_length must be %s, got %.200R", text, given);
}

int aeskit_err_bit_length(aeskit_at at, unsigned sizes, unsigned n_keys, long given)
{
    char text[64];
    aeskit_key_lengths_text(sizes, n_keys, 8, text, sizeof text);
    return aeskit_error(PyExc_ValueError, at, "bit_length must be %s, got %ld", text, given);
}

int aeskit_err_out_len(aeskit_at at, size_t need, Py_ssize_t given)
{
    return aeskit_error(PyExc_ValueError, at, "buf must be at least %zu bytes, got %zd", need,
                        given);
}

int aeskit_err_overlap(aeskit_at at, const char *arg)
{
    return aeskit_error(PyExc_ValueError, at, "buf partially overlaps %s: pass %s itself (in "
                        "place) or a separate buffer", arg, arg);
}

int aeskit_err_multiple(aeskit_at at, const char *arg, size_t unit, size_t given,
                        const char *fix)
{
    return aeskit_error(PyExc_ValueError, at, "%s must be a multiple of %zu bytes, got %zu%s%s",
                        arg, unit, given, fix != NULL ? ": " : "", fix != NULL ? fix : "");
}

int aeskit_err_limit(PyObject *limit, aeskit_at at, const char *what, uint64_t max,
                     const char *per, uint64_t given)
{
    char text[48];
    limit_text(max, text, sizeof text);
    if (given == 0)
        return aeskit_error(limit, at, "%s is limited to %s bytes%s", what, text, per);
    return aeskit_error(limit, at, "%s is limited to %s bytes%s, got %llu", what, text, per,
                        (unsigned long long)given);
}

/* ---- contexts ---------------------------------------------------------------- */

int aeskit_err_finalized(PyObject *exc, aeskit_at at, PyTypeObject *owner, const char *maker,
                         const char *arg)
{
    return aeskit_error(exc, at, "this context is finalized: a context is one message; for "
                        "another, make a new one with %s.%s(%s)", aeskit_public_name(owner),
                        maker, arg);
}

int aeskit_err_busy(aeskit_at at, PyTypeObject *owner, const char *maker, const char *arg)
{
    return aeskit_error(PyExc_RuntimeError, at, "this context is in use by another thread: a "
                        "context is not safe to share; make one per thread with %s.%s(%s)",
                        aeskit_public_name(owner), maker, arg);
}
