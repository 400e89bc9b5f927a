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
 */
#include "api.h"
#include "buffers.h"
#include "common.h"
#include "modes/block.h"   /* AESKIT_KEY_ANY */
#include "modes/kw.h"

/* Key wrap is serial single-block AES (12 calls per 16 bytes), so a call
 * does the work of the threshold's bulk call at far fewer bytes: measured
 * (this file's first version), KW on 512 bytes took 7.3x ECB on 8192 with
 * aesni (9.9 vs 1.35 us) and 3.3x with portable (209 vs 64 us), the same
 * work at about 70 and 155 bytes. 128 keeps the usual 16-32-byte keys on
 * the fast path and releases for anything longer. */
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
    const struct aeskit_impl *impl = aeskit_key_argument(st, keyobj, backend, AESKIT_KEY_ANY,
                                                         1, &kb);
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

static int one_buffer(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                      const char *fname, Py_buffer *data)
{
    if (nargs != 1)
        return aeskit_count_error(Py_TYPE(op), fname, 1, 1, nargs);
    return aeskit_get_buffer(args[0], data, 0, "data");
}

static PyObject *key_wrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *self = (KeyObject *)op;
    const struct aeskit_keywrap *d = self->d;
    Py_buffer data;
    if (one_buffer(op, args, nargs, "wrap", &data) < 0)
        return NULL;
    PyObject *result = NULL;
    const size_t len = (size_t)data.len;
    if ((uint64_t)len > d->wrap_max) {
        PyErr_Format(aeskit_state_of(Py_TYPE(op))->LimitExceeded,
                     "%s wraps at most %llu bytes, got %zu", d->name,
                     (unsigned long long)d->wrap_max, len);
    } else if (len < d->wrap_min || len % d->wrap_multiple != 0) {
        if (d->wrap_multiple > 1)
            PyErr_Format(PyExc_ValueError,
                         "%s wraps a multiple of %zu bytes, at least %zu, got %zu", d->name,
                         d->wrap_multiple, d->wrap_min, len);
        else
            PyErr_Format(PyExc_ValueError, "%s wraps at least %zu bytes, got %zu", d->name,
                         d->wrap_min, len);
    } else {
        result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)d->wrapped_len(len));
        if (result != NULL) {
            uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(result);
            if (len >= KW_GIL_THRESHOLD) {
                Py_BEGIN_ALLOW_THREADS
                d->wrap(&self->key, dst, data.buf, len);
                Py_END_ALLOW_THREADS
            } else {
                d->wrap(&self->key, dst, data.buf, len);
            }
        }
    }
    aeskit_release(&data);
    return result;
}

static PyObject *key_unwrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *self = (KeyObject *)op;
    const struct aeskit_keywrap *d = self->d;
    aeskit_state *st = aeskit_state_of(Py_TYPE(op));
    Py_buffer data;
    if (one_buffer(op, args, nargs, "unwrap", &data) < 0)
        return NULL;
    PyObject *result = NULL;
    const size_t len = (size_t)data.len;
    if (len < d->unwrap_min || len % AESKIT_SEMIBLOCK != 0) {
        PyErr_Format(st->InvalidUnwrap,
                     "%s wrapped data is a multiple of 8 bytes, at least %zu, got %zu",
                     d->name, d->unwrap_min, len);
        goto done;
    }
    if ((uint64_t)len > d->unwrap_max) {
        PyErr_Format(st->InvalidUnwrap, "%s wrapped data is at most %llu bytes, got %zu",
                     d->name, (unsigned long long)d->unwrap_max, len);
        goto done;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(len - 8));
    if (out == NULL)
        goto done;
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
    size_t n;
    if (len >= KW_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        n = d->unwrap(&self->key, dst, data.buf, len);
        Py_END_ALLOW_THREADS
    } else {
        n = d->unwrap(&self->key, dst, data.buf, len);
    }
    if (n == 0) {
        PyErr_Format(st->InvalidUnwrap, "%s unwrap failed: the wrapped key is not "
                     "authentic under this key", d->name);
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
