/*
 * kw.c: one Python type per key-wrap descriptor (aeskit_keywraps,
 * modes/registry.c: AESKW, AESKWP). Nothing here asks which mode it
 * serves: the descriptor gives the lengths and the entry points.
 *
 * A key object holds one expanded key, built once by the chosen backend
 * and never changed, so it is safe to share between threads. Lengths are
 * checked here, before any work: a wrong wrap length is a ValueError (or
 * LimitExceeded past KWP's 2^32 - 1 bytes), a wrong unwrap length an
 * InvalidUnwrap, as is any failed check, which returns nothing.
 *
 * pyca/cryptography's four functions (aes_key_wrap and the rest, re-exported
 * by aeskit.keywrap) are here too, over the same code, so that their errors
 * name them and their own arguments: "aes_key_wrap: wrapping_key must be
 * 16, 24 or 32 bytes, got 15".
 */
#include "api.h"
#include "buffers.h"
#include "common.h"
#include "modes/block.h"   /* AESKIT_KEY_ANY */
#include "modes/kw.h"

/* Key wrap is serial single-block AES (12 calls per 16 bytes), so a call
 * does the work of the threshold's bulk call at far fewer bytes: KW on 512
 * bytes takes 7.3x ECB on 8192 with aesni (9.9 vs 1.35 us) and 3.3x with
 * portable (209 vs 64 us), the same work at about 70 and 155 bytes. 128
 * keeps the usual 16-32-byte keys on the fast path and releases for
 * anything longer. */
#define KW_GIL_THRESHOLD (AESKIT_GIL_THRESHOLD / 64)

typedef struct {
    PyObject_HEAD
    const struct aeskit_keywrap *d;
    aeskit_key key;
} KeyObject;

static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"key", "backend", NULL};
    aeskit_state *st = aeskit_state_of(type);
    PyObject *keyobj, *backendobj = NULL;
    const char *backend;
    char fmt[48];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, aeskit_format(fmt, sizeof fmt, "O|$O", type,
                                                               NULL),
                                     kwlist, &keyobj, &backendobj) ||
        (backend = aeskit_backend_arg(type, backendobj)) == NULL)
        return NULL;
    Py_buffer kb;
    const struct aeskit_impl *impl = aeskit_key_argument(
        st, AESKIT_AT((PyObject *)type, NULL), "key", keyobj, backend, AESKIT_KEY_ANY, 1, &kb);
    if (impl == NULL)
        return NULL;
    KeyObject *self = (KeyObject *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->d = aeskit_desc_of(st, type);
        impl->set_key(&self->key, kb.buf, (size_t)kb.len);
    }
    aeskit_release(&kb);
    return (PyObject *)self;
}

static void key_dealloc(PyObject *op)
{
    KeyObject *self = (KeyObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(&self->key, sizeof self->key);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyObject *key_get_backend(PyObject *op, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((KeyObject *)op)->key.impl->name);
}

static PyObject *key_get_key_size(PyObject *op, void *closure)
{
    (void)closure;
    return PyLong_FromLong(aeskit_key_bits(&((KeyObject *)op)->key));
}

static PyObject *key_repr(PyObject *op)
{
    KeyObject *self = (KeyObject *)op;
    return PyUnicode_FromFormat("<%s key_size=%ld backend=%s>", Py_TYPE(op)->tp_name,
                                aeskit_key_bits(&self->key), self->key.impl->name);
}

/* wrap: data (named arg) wrapped under k, or NULL with an exception naming
 * at and arg. */
static PyObject *wrap_with(aeskit_at at, aeskit_state *st, const struct aeskit_keywrap *d,
                          const aeskit_key *k, const char *arg, PyObject *dataobj)
{
    Py_buffer data;
    if (aeskit_take(at, arg, dataobj, &data, 0) < 0)
        return NULL;
    PyObject *result = NULL;
    const size_t len = (size_t)data.len;
    if ((uint64_t)len > d->wrap_max) {
        aeskit_err_limit(st->LimitExceeded, at, arg, d->wrap_max, "", len);
    } else if (len < d->wrap_min || len % d->wrap_multiple != 0) {
        if (d->wrap_multiple > 1)
            aeskit_error(PyExc_ValueError, at, "%s must be a multiple of %zu bytes, at least "
                         "%zu, got %zu", arg, d->wrap_multiple, d->wrap_min, len);
        else
            aeskit_err_length(at, arg, d->wrap_min, SIZE_MAX, "", len);
    } else {
        result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)d->wrapped_len(len));
        if (result != NULL) {
            uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(result);
            if (len >= KW_GIL_THRESHOLD) {
                Py_BEGIN_ALLOW_THREADS
                d->wrap(k, dst, data.buf, len);
                Py_END_ALLOW_THREADS
            } else {
                d->wrap(k, dst, data.buf, len);
            }
        }
    }
    aeskit_release(&data);
    return result;
}

/* unwrap: the key wrapped in data (named arg) under k, or NULL with an
 * exception naming at and arg (InvalidUnwrap for any wrong length or
 * failed check). */
static PyObject *unwrap_with(aeskit_at at, aeskit_state *st, const struct aeskit_keywrap *d,
                            const aeskit_key *k, const char *arg, PyObject *dataobj)
{
    Py_buffer data;
    if (aeskit_take(at, arg, dataobj, &data, 0) < 0)
        return NULL;
    PyObject *result = NULL;
    const size_t len = (size_t)data.len;
    if (len < d->unwrap_min || len % AESKIT_SEMIBLOCK != 0) {
        aeskit_error(st->InvalidUnwrap, at, "%s must be a multiple of 8 bytes, at least %zu, "
                     "got %zu", arg, d->unwrap_min, len);
        goto done;
    }
    if ((uint64_t)len > d->unwrap_max) {
        aeskit_error(st->InvalidUnwrap, at, "%s must be at most %llu bytes (what the longest "
                     "key wraps to), got %zu", arg, (unsigned long long)d->unwrap_max, len);
        goto done;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(len - 8));
    if (out == NULL)
        goto done;
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
    size_t n;
    if (len >= KW_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        n = d->unwrap(k, dst, data.buf, len);
        Py_END_ALLOW_THREADS
    } else {
        n = d->unwrap(k, dst, data.buf, len);
    }
    if (n == 0) {
        aeskit_error(st->InvalidUnwrap, at, "%s is not authentic under this key: a wrong key, "
                     "or wrapped data that was changed", arg);
        Py_DECREF(out);   /* already zeroed by the unwrap */
    } else if (n < len - 8) {
        /* KWP: the key without its padding */
        result = PyBytes_FromStringAndSize((const char *)dst, (Py_ssize_t)n);
        aeskit_secure_zero(dst, len - 8);
        Py_DECREF(out);
    } else {
        result = out;
    }
done:
    aeskit_release(&data);
    return result;
}

static PyObject *key_wrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *self = (KeyObject *)op;
    if (nargs != 1) {
        aeskit_count_error(Py_TYPE(op), "wrap", 1, 1, nargs);
        return NULL;
    }
    return wrap_with(AESKIT_AT(op, "wrap"), aeskit_state_of(Py_TYPE(op)), self->d,
                     &self->key, "data", args[0]);
}

static PyObject *key_unwrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *self = (KeyObject *)op;
    if (nargs != 1) {
        aeskit_count_error(Py_TYPE(op), "unwrap", 1, 1, nargs);
        return NULL;
    }
    return unwrap_with(AESKIT_AT(op, "unwrap"), aeskit_state_of(Py_TYPE(op)), self->d,
                       &self->key, "data", args[0]);
}

/* ---- pyca/cryptography's functions ----------------------------------------- */

/* fname(wrapping_key, key_to_wrap | wrapped_key, backend=None): backend is
 * pyca's, accepted and ignored; the key is expanded with the default
 * backend for this one call and wiped after it. */
static PyObject *pyca_call(PyObject *module, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames, const struct aeskit_keywrap *d, int wrap,
                           const char *fname)
{
    static const char *const names[2][3] = {
        {"wrapping_key", "wrapped_key", "backend"},
        {"wrapping_key", "key_to_wrap", "backend"},
    };
    aeskit_state *st = PyModule_GetState(module);
    const aeskit_at at = AESKIT_AT(NULL, fname);
    PyObject *const *args = argv, *slots[3];
    if (kwnames != NULL || nargs != 2) {
        const aeskit_params params = {fname, names[wrap], 3, 3, 2};
        if (aeskit_parse(NULL, &params, argv, nargs, kwnames, slots) < 0)
            return NULL;
        args = slots;
    }
    Py_buffer kb;
    const struct aeskit_impl *impl = aeskit_key_argument(st, at, "wrapping_key", args[0], "auto",
                                                         AESKIT_KEY_ANY, 1, &kb);
    if (impl == NULL)
        return NULL;
    aeskit_key key;
    impl->set_key(&key, kb.buf, (size_t)kb.len);
    aeskit_release(&kb);
    PyObject *r = wrap ? wrap_with(at, st, d, &key, names[wrap][1], args[1])
                       : unwrap_with(at, st, d, &key, names[wrap][1], args[1]);
    aeskit_secure_zero(&key, sizeof key);
    return r;
}

static PyObject *pyca_wrap(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return pyca_call(m, a, n, kw, &aeskit_kw_keywrap, 1, "aes_key_wrap");
}
static PyObject *pyca_unwrap(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return pyca_call(m, a, n, kw, &aeskit_kw_keywrap, 0, "aes_key_unwrap");
}
static PyObject *pyca_wrap_pad(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return pyca_call(m, a, n, kw, &aeskit_kwp_keywrap, 1, "aes_key_wrap_with_padding");
}
static PyObject *pyca_unwrap_pad(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return pyca_call(m, a, n, kw, &aeskit_kwp_keywrap, 0, "aes_key_unwrap_with_padding");
}

#define PYCA_FUNCTION(name, fn, args, doc)                                                \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS,                \
     PyDoc_STR(name "($module, /, wrapping_key, " args ", backend=None)\n--\n\n" doc)}

static PyMethodDef pyca_functions[] = {
    PYCA_FUNCTION("aes_key_wrap", pyca_wrap, "key_to_wrap",
                  "RFC 3394 key wrap: key_to_wrap a multiple of 8 bytes, at least 16."),
    PYCA_FUNCTION("aes_key_unwrap", pyca_unwrap, "wrapped_key",
                  "RFC 3394 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a "
                  "wrong length."),
    PYCA_FUNCTION("aes_key_wrap_with_padding", pyca_wrap_pad, "key_to_wrap",
                  "RFC 5649 key wrap with padding: key_to_wrap 1 to 2**32 - 1 bytes."),
    PYCA_FUNCTION("aes_key_unwrap_with_padding", pyca_unwrap_pad, "wrapped_key",
                  "RFC 5649 key unwrap; InvalidUnwrap if wrapped_key is not authentic or of a "
                  "wrong length."),
    {NULL, NULL, 0, NULL},
};

static PyMethodDef key_methods[] = {
    {"wrap", (PyCFunction)(void (*)(void))key_wrap, METH_FASTCALL,
     PyDoc_STR("wrap($self, data, /)\n--\n\nWrap a key (bytes): the result is 8 bytes "
               "longer (KWP: than the key padded to a multiple of 8).")},
    {"unwrap", (PyCFunction)(void (*)(void))key_unwrap, METH_FASTCALL,
     PyDoc_STR("unwrap($self, data, /)\n--\n\nThe wrapped key (bytes), or InvalidUnwrap "
               "for any wrong length or failed check (nothing is returned).")},
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef key_getset[] = {
    {"backend", key_get_backend, NULL, PyDoc_STR("name of the backend this key uses"), NULL},
    {"key_size", key_get_key_size, NULL, PyDoc_STR("key size in bits"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

int aeskit_add_keywrap_types(PyObject *module, aeskit_state *st)
{
    if (PyModule_AddFunctions(module, pyca_functions) < 0)
        return -1;
    for (size_t i = 0; aeskit_keywraps[i] != NULL; i++) {
        const struct aeskit_keywrap *d = aeskit_keywraps[i];
        PyType_Slot slots[] = {
            {Py_tp_new, key_new},
            {Py_tp_dealloc, key_dealloc},
            {Py_tp_repr, key_repr},
            {Py_tp_methods, key_methods},
            {Py_tp_getset, key_getset},
            {Py_tp_doc, (void *)d->doc},
            {0, NULL},
        };
        PyType_Spec spec = {
            .name = d->type_name,
            .basicsize = (int)sizeof(KeyObject),
            .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
            .slots = slots,
        };
        if (aeskit_add_type(module, st, &spec, d) == NULL)
            return -1;
    }
    return 0;
}
