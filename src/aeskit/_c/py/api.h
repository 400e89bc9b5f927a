/*
 * api.h: what every Python-facing type shares about how it presents itself:
 * argument parsing whose errors name the public class and method
 * ("AESCTR.encrypt() missing required argument 'data'"), the backend=
 * argument, and the pickle and copy rules (a key object is immutable, so a
 * copy is itself, and it never pickles: it holds a key; a context is one
 * stream and neither pickles nor copies unless it has a copy() method).
 */
#ifndef AESKIT_API_H
#define AESKIT_API_H

#include <limits.h>
#include <string.h>

#include "glue.h"

#if defined(__GNUC__)
#define AESKIT_COLD __attribute__((cold, noinline, unused))
#else
#define AESKIT_COLD
#endif

/* "AESCTR" for aeskit.AESCTR: the name a user writes. */
static inline const char *aeskit_public_name(PyTypeObject *tp)
{
    const char *dot = strrchr(tp->tp_name, '.');
    return dot != NULL ? dot + 1 : tp->tp_name;
}

/*
 * A method's parameters: names[0..n), of which the first npos may come by
 * position (the rest are keyword-only) and the first nreq are required.
 */
typedef struct {
    const char *fname;
    const char *const *names;
    int n, npos, nreq;
} aeskit_params;

/* Is the keyword kw the ASCII name? Keywords are nearly always compact
 * ASCII strings, compared here without a call; the lengths first, so that
 * a keyword with a NUL in it ("iv\0xx") is never read as name's prefix. */
static inline int aeskit_name_is(PyObject *kw, const char *name)
{
    if (PyUnicode_IS_COMPACT_ASCII(kw)) {
        const size_t len = (size_t)PyUnicode_GET_LENGTH(kw);
        return strlen(name) == len && memcmp(PyUnicode_DATA(kw), name, len) == 0;
    }
    return PyUnicode_CompareWithASCIIString(kw, name) == 0;
}

/*
 * Fills out[0..p->n) from a METH_FASTCALL | METH_KEYWORDS call (absent
 * optional arguments NULL); 0, or -1 with a TypeError naming the class and
 * method. Out of line: a caller takes the all-positional call, nearly every
 * call, itself, and uses args as they came:
 *
 *     PyObject *const *args = argv, *slots[N];
 *     if (kwnames != NULL || nargs != N) {
 *         if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, slots) < 0)
 *             return NULL;
 *         args = slots;
 *     }
 */
AESKIT_COLD static int aeskit_parse(PyTypeObject *tp, const aeskit_params *p,
                                    PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames, PyObject **out)
{
    const char *cls = aeskit_public_name(tp);
    for (int i = 0; i < p->n; i++)
        out[i] = i < nargs ? args[i] : NULL;
    if (nargs > p->npos) {
        if (p->npos == p->n)
            PyErr_Format(PyExc_TypeError, "%s.%s() takes at most %d argument%s (%zd given)",
                         cls, p->fname, p->npos, p->npos == 1 ? "" : "s", nargs);
        else
            PyErr_Format(PyExc_TypeError,
                         "%s.%s() takes at most %d positional argument%s (%zd given)", cls,
                         p->fname, p->npos, p->npos == 1 ? "" : "s", nargs);
        return -1;
    }
    const Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *kw = PyTuple_GET_ITEM(kwnames, j);
        int i = 0;
        while (i < p->n && !aeskit_name_is(kw, p->names[i]))
            i++;
        if (i == p->n) {
            PyErr_Format(PyExc_TypeError, "%s.%s() got an unexpected keyword argument %R",
                         cls, p->fname, kw);
            return -1;
        }
        if (out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s.%s() got multiple values for argument '%s'", cls,
                         p->fname, p->names[i]);
            return -1;
        }
        out[i] = args[nargs + j];
    }
    for (int i = 0; i < p->nreq; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s.%s() missing required argument '%s'",
                         cls, p->fname, p->names[i]);
            return -1;
        }
    }
    return 0;
}

/* The TypeError for a positional-only method given the wrong count. */
AESKIT_COLD static int aeskit_count_error(PyTypeObject *tp, const char *fname, Py_ssize_t lo,
                                          Py_ssize_t hi, Py_ssize_t nargs)
{
    const char *cls = aeskit_public_name(tp);
    if (lo == 0 && hi == 0)
        PyErr_Format(PyExc_TypeError, "%s.%s() takes no arguments (%zd given)", cls, fname,
                     nargs);
    else if (lo == 0)
        PyErr_Format(PyExc_TypeError, "%s.%s() takes at most %zd argument%s (%zd given)", cls,
                     fname, hi, hi == 1 ? "" : "s", nargs);
    else if (lo == hi)
        PyErr_Format(PyExc_TypeError, "%s.%s() takes exactly %zd argument%s (%zd given)", cls,
                     fname, lo, lo == 1 ? "" : "s", nargs);
    else
        PyErr_Format(PyExc_TypeError, "%s.%s() takes %zd to %zd arguments (%zd given)", cls,
                     fname, lo, hi, nargs);
    return -1;
}

/* A constructor's backend= (NULL: not given): "auto" or a name; NULL with
 * TypeError naming the class for anything but a str. */
static inline const char *aeskit_backend_arg(PyTypeObject *tp, PyObject *obj)
{
    if (obj == NULL)
        return "auto";
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument 'backend' must be str, not %.200s",
                     aeskit_public_name(tp), Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8(obj);
}

/* A constructor's tag_length= (NULL: not given, dflt): 0 with *out set, for
 * the caller to check; -1 with TypeError naming the class for anything but
 * an integer, or ValueError for one outside int's range. */
static inline int aeskit_tag_length_arg(PyTypeObject *tp, PyObject *obj, int dflt, int *out)
{
    if (obj == NULL) {
        *out = dflt;
        return 0;
    }
    if (!PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() argument 'tag_length' must be int, not %.200s",
                     aeskit_public_name(tp), Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *n = PyNumber_Index(obj);   /* an int, or what __index__ makes one */
    if (n == NULL)
        return -1;
    int overflow;
    const long v = PyLong_AsLongAndOverflow(n, &overflow);
    Py_DECREF(n);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < INT_MIN || v > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s() argument 'tag_length' is out of range, got %S",
                     aeskit_public_name(tp), obj);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* fmt + ":" + the class name (and "." + method, if any) into buf, for
 * PyArg_ParseTupleAndKeywords: its messages then name the public class. */
static inline const char *aeskit_format(char *buf, size_t cap, const char *fmt,
                                        PyTypeObject *tp, const char *method)
{
    PyOS_snprintf(buf, cap, "%s:%s%s%s", fmt, aeskit_public_name(tp), method ? "." : "",
                  method ? method : "");
    return buf;
}

/* ---- pickle and copy ------------------------------------------------------ */

static inline PyObject *aeskit_refuse_pickle_(PyObject *self, const char *what)
{
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle '%s' object: it holds %s; keep the key bytes where keys "
                 "belong and make a new object from them",
                 aeskit_public_name(Py_TYPE(self)), what);
    return NULL;
}

#define AESKIT_HOLDS_KEY "a secret key"
#define AESKIT_HOLDS_STATE "a stream's secret state"

static inline PyObject *aeskit_key_no_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return aeskit_refuse_pickle_(self, AESKIT_HOLDS_KEY);
}

static inline PyObject *aeskit_key_no_reduce_ex(PyObject *self, PyObject *protocol)
{
    (void)protocol;
    return aeskit_refuse_pickle_(self, AESKIT_HOLDS_KEY);
}

static inline PyObject *aeskit_ctx_no_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return aeskit_refuse_pickle_(self, AESKIT_HOLDS_STATE);
}

static inline PyObject *aeskit_ctx_no_reduce_ex(PyObject *self, PyObject *protocol)
{
    (void)protocol;
    return aeskit_refuse_pickle_(self, AESKIT_HOLDS_STATE);
}

/* An immutable key object: a copy, shallow or deep, is the object itself. */
static inline PyObject *aeskit_copy_self(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static inline PyObject *aeskit_deepcopy_self(PyObject *self, PyObject *memo)
{
    (void)memo;
    return Py_NewRef(self);
}

static inline PyObject *aeskit_refuse_copy_(PyObject *self)
{
    PyErr_Format(PyExc_TypeError,
                 "cannot copy '%s' object: two copies of one stream would go on with the same "
                 "key and iv or nonce; start another from encryptor() or decryptor()",
                 aeskit_public_name(Py_TYPE(self)));
    return NULL;
}

static inline PyObject *aeskit_no_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    return aeskit_refuse_copy_(self);
}

static inline PyObject *aeskit_no_deepcopy(PyObject *self, PyObject *memo)
{
    (void)memo;
    return aeskit_refuse_copy_(self);
}

/* No pickle: KIND is key (a key object) or ctx (a context). */
#define AESKIT_NO_PICKLE_METHODS(KIND)                                                     \
    {"__reduce__", aeskit_##KIND##_no_reduce, METH_NOARGS,                                 \
     PyDoc_STR("__reduce__($self, /)\n--\n\nRefused: TypeError (the object holds a "       \
               "secret).")},                                                               \
    {"__reduce_ex__", aeskit_##KIND##_no_reduce_ex, METH_O,                                \
     PyDoc_STR("__reduce_ex__($self, protocol, /)\n--\n\nRefused: TypeError (the object "  \
               "holds a secret).")}

/* A key object's: no pickle; copy.copy and copy.deepcopy give the object. */
#define AESKIT_KEY_OBJECT_METHODS                                                          \
    AESKIT_NO_PICKLE_METHODS(key),                                                         \
    {"__copy__", aeskit_copy_self, METH_NOARGS,                                            \
     PyDoc_STR("__copy__($self, /)\n--\n\nThe object itself: it is immutable.")},          \
    {"__deepcopy__", aeskit_deepcopy_self, METH_O,                                         \
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nThe object itself: it is immutable.")}

/* A stream context's: no pickle, no copy. */
#define AESKIT_STREAM_METHODS                                                              \
    AESKIT_NO_PICKLE_METHODS(ctx),                                                         \
    {"__copy__", aeskit_no_copy, METH_NOARGS,                                              \
     PyDoc_STR("__copy__($self, /)\n--\n\nRefused: TypeError (a copied stream would "      \
               "repeat its keystream).")},                                                 \
    {"__deepcopy__", aeskit_no_deepcopy, METH_O,                                           \
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nRefused: TypeError (a copied stream "  \
               "would repeat its keystream).")}

#endif
