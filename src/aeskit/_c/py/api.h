/*
 * api.h: what every Python-facing type shares about how it presents itself:
 * argument parsing whose errors name the public class and method
 * ("AESCTR.encrypt() missing required argument 'data'"), the backend= and
 * tag_length= arguments, and the pickle and copy rules (a key object is immutable, so a
 * copy is itself, and it never pickles: it holds a key; a context is one
 * stream and neither pickles nor copies unless it has a copy() method).
 */
#ifndef AESKIT_API_H
#define AESKIT_API_H

#include <limits.h>
#include <string.h>

#include "compiler.h"   /* AESKIT_COLD */
#include "glue.h"

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
 * optional arguments NULL); 0, or -1 with a TypeError naming the class tp
 * and the method (tp NULL: the module function p->fname). Out of line: a
 * caller takes the all-positional call, nearly every call, itself, and
 * uses args as they came:
 *
 *     PyObject *const *args = argv, *slots[N];
 *     if (kwnames != NULL || nargs != N) {
 *         if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, slots) < 0)
 *             return NULL;
 *         args = slots;
 *     }
 */
AESKIT_COLD AESKIT_UNUSED static int aeskit_parse(PyTypeObject *tp, const aeskit_params *p,
                                                  PyObject *const *args, Py_ssize_t nargs,
                                                  PyObject *kwnames, PyObject **out)
{
    const aeskit_at at = AESKIT_AT((PyObject *)tp, p->fname);
    for (int i = 0; i < p->n; i++)
        out[i] = i < nargs ? args[i] : NULL;
    if (nargs > p->npos)
        return aeskit_call_error(at, "takes at most %d %sargument%s (%zd given)", p->npos,
                                 p->npos == p->n ? "" : "positional ", p->npos == 1 ? "" : "s",
                                 nargs);
    const Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *kw = PyTuple_GET_ITEM(kwnames, j);
        int i = 0;
        while (i < p->n && !aeskit_name_is(kw, p->names[i]))
            i++;
        if (i == p->n)
            return aeskit_call_error(at, "got an unexpected keyword argument %R", kw);
        if (out[i] != NULL)
            return aeskit_call_error(at, "got multiple values for argument '%s'",
                                     p->names[i]);
        out[i] = args[nargs + j];
    }
    for (int i = 0; i < p->nreq; i++)
        if (out[i] == NULL)
            return aeskit_call_error(at, "missing required argument '%s'", p->names[i]);
    return 0;
}

/* The TypeError for a positional-only method given the wrong count. */
AESKIT_COLD AESKIT_UNUSED static int aeskit_count_error(PyTypeObject *tp, const char *fname,
                                                        Py_ssize_t lo, Py_ssize_t hi,
                                                        Py_ssize_t nargs)
{
    const aeskit_at at = AESKIT_AT((PyObject *)tp, fname);
    if (lo == 0 && hi == 0)
        return aeskit_call_error(at, "takes no arguments (%zd given)", nargs);
    if (lo == 0)
        return aeskit_call_error(at, "takes at most %zd argument%s (%zd given)", hi,
                                 hi == 1 ? "" : "s", nargs);
    if (lo == hi)
        return aeskit_call_error(at, "takes exactly %zd argument%s (%zd given)", lo,
                                 lo == 1 ? "" : "s", nargs);
    return aeskit_call_error(at, "takes %zd to %zd arguments (%zd given)", lo, hi, nargs);
}

/* A constructor's backend= (NULL: not given): "auto" or a name; NULL with
 * TypeError naming the class for anything but a str. */
static inline const char *aeskit_backend_arg(PyTypeObject *tp, PyObject *obj)
{
    if (obj == NULL)
        return "auto";
    if (!PyUnicode_Check(obj)) {
        aeskit_err_type(AESKIT_AT((PyObject *)tp, NULL), "backend", "a str ('auto' or a name from "
                        "aeskit.backends().available)", obj, NULL);
        return NULL;
    }
    return PyUnicode_AsUTF8(obj);
}

/* A constructor's tag_length= (NULL: not given, dflt): 0 with *out one of
 * the lengths in mask (bit t: t bytes); -1 with TypeError naming the class
 * for anything but an integer, or ValueError for any other length. */
static inline int aeskit_tag_length_arg(PyTypeObject *tp, PyObject *obj, int dflt,
                                        uint32_t mask, int *out)
{
    if (obj == NULL) {
        *out = dflt;
        return 0;
    }
    if (!PyIndex_Check(obj)) {
        aeskit_err_type(AESKIT_AT((PyObject *)tp, NULL), "tag_length", "an int", obj, NULL);
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
    if (overflow != 0 || v < 1 || v > 16 || !(mask >> v & 1)) {
        aeskit_err_tag_length(AESKIT_AT((PyObject *)tp, NULL), mask, obj);
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

/* The four methods of a key type that run one call in each direction, to
 * bytes and into a buffer: PREFIX_encrypt SUFFIX, PREFIX_decrypt SUFFIX and
 * their _into forms (encrypt, encrypt_sectors, ...), each
 * impl(op, args, nargs, kwnames, enc, into, its Python name). */
#define AESKIT_CALL_METHOD_(fn, impl, enc, into, name)                                     \
    static PyObject *fn(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)      \
    {                                                                                      \
        return impl(op, a, n, kw, enc, into, name);                                        \
    }
#define AESKIT_CALL_METHODS(prefix, suffix, impl)                                          \
    AESKIT_CALL_METHOD_(prefix##_encrypt##suffix, impl, 1, 0, "encrypt" #suffix)           \
    AESKIT_CALL_METHOD_(prefix##_decrypt##suffix, impl, 0, 0, "decrypt" #suffix)           \
    AESKIT_CALL_METHOD_(prefix##_encrypt##suffix##_into, impl, 1, 1, "encrypt" #suffix "_into") \
    AESKIT_CALL_METHOD_(prefix##_decrypt##suffix##_into, impl, 0, 1, "decrypt" #suffix "_into")

/* ---- pickle and copy ------------------------------------------------------ */

static inline PyObject *aeskit_refuse_pickle_(PyObject *self, const char *what)
{
    /* Python's own words for an object that does not pickle, then why and
     * the fix */
    aeskit_error(PyExc_TypeError, AESKIT_NOWHERE,
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
    aeskit_error(PyExc_TypeError, AESKIT_NOWHERE,
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
