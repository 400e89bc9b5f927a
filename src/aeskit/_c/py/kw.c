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
#include "batch.h"
#include "buffers.h"
#include "common.h"
#include "keyobj.h"
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
    aeskit_keyobj head;             /* head.keywrap: the descriptor */
    aeskit_key key;
} KeyObject;
AESKIT_KEYOBJ_LAYOUT(KeyObject, key);

/* A key wrap's key: one AES key of any size. */
static const aeskit_keyobj_shape shape = {.key_sizes = AESKIT_KEY_ANY, .n_keys = 1};

static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Py_buffer kb;
    KeyObject *self = (KeyObject *)aeskit_keyobj_new(type, args, kwds, &shape, &kb);
    if (self == NULL)
        return NULL;
    self->head.impl->set_key(&self->key, kb.buf, (size_t)kb.len);
    aeskit_release(&kb);
    return (PyObject *)self;
}

/* 1 if len bytes are what d wraps (wrap) or unwraps, else 0 with the
 * exception naming at and arg: ValueError or LimitExceeded for a wrap,
 * InvalidUnwrap for any wrong unwrap length. */
static int length_ok(aeskit_at at, aeskit_state *st, const struct aeskit_keywrap *d, int wrap,
                     const char *arg, size_t len)
{
    if (wrap && (uint64_t)len > d->wrap_max)
        aeskit_err_limit(st->LimitExceeded, at, arg, d->wrap_max, "", len);
    else if (wrap && (len < d->wrap_min || len % d->wrap_multiple != 0) &&
             d->wrap_multiple > 1)
        aeskit_error(PyExc_ValueError, at, "%s must be a multiple of %zu bytes, at least "
                     "%zu, got %zu", arg, d->wrap_multiple, d->wrap_min, len);
    else if (wrap && len < d->wrap_min)
        aeskit_err_length(at, arg, d->wrap_min, SIZE_MAX, "", len);
    else if (!wrap && (len < d->unwrap_min || len % AESKIT_SEMIBLOCK != 0))
        aeskit_error(st->InvalidUnwrap, at, "%s must be a multiple of 8 bytes, at least %zu, "
                     "got %zu", arg, d->unwrap_min, len);
    else if (!wrap && (uint64_t)len > d->unwrap_max)
        aeskit_error(st->InvalidUnwrap, at, "%s must be at most %llu bytes (what the longest "
                     "key wraps to), got %zu", arg, (unsigned long long)d->unwrap_max, len);
    else
        return 1;
    return 0;
}

/* d->wrap or d->unwrap of len bytes of src into a new bytes object, the
 * GIL released for long data: the wrapped key, or the unwrapped one
 * (without KWP's padding), or NULL with an exception naming at and arg
 * (InvalidUnwrap when the data fails its check: nothing is returned). */
static PyObject *run(aeskit_at at, aeskit_state *st, const struct aeskit_keywrap *d, int wrap,
                     const aeskit_key *k, const char *arg, const uint8_t *src, size_t len)
{
    const size_t out_len = wrap ? d->wrapped_len(len) : len - AESKIT_SEMIBLOCK;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)out_len);
    if (out == NULL)
        return NULL;
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
    size_t n = out_len;
    PyThreadState *released = len >= KW_GIL_THRESHOLD ? PyEval_SaveThread() : NULL;
    if (wrap)
        d->wrap(k, dst, src, len);
    else
        n = d->unwrap(k, dst, src, len);
    if (released != NULL)
        PyEval_RestoreThread(released);
    if (n == out_len)
        return out;
    PyObject *result = NULL;
    if (n == 0)   /* the unwrap zeroed dst */
        aeskit_error(st->InvalidUnwrap, at, "%s is not authentic under this key: a wrong key, "
                     "or wrapped data that was changed", arg);
    else          /* KWP: the key without its padding */
        result = PyBytes_FromStringAndSize((const char *)dst, (Py_ssize_t)n);
    aeskit_secure_zero(dst, out_len);
    Py_DECREF(out);
    return result;
}

/* wrap (1) or unwrap (0) the data (named arg) under k: the result, or NULL
 * with an exception naming at and arg. */
static PyObject *wrap_or_unwrap(aeskit_at at, aeskit_state *st, const struct aeskit_keywrap *d,
                                int wrap, const aeskit_key *k, const char *arg,
                                PyObject *dataobj)
{
    Py_buffer data;
    if (aeskit_take(at, arg, dataobj, &data, 0) < 0)
        return NULL;
    const size_t len = (size_t)data.len;
    PyObject *result = length_ok(at, st, d, wrap, arg, len)
                           ? run(at, st, d, wrap, k, arg, data.buf, len) : NULL;
    aeskit_release(&data);
    return result;
}

/* wrap (1) or unwrap (0) of the one argument, under the object's key. */
static PyObject *key_call(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int wrap)
{
    const KeyObject *self = (const KeyObject *)op;
    const char *name = wrap ? "wrap" : "unwrap";
    if (nargs != 1) {
        aeskit_count_error(Py_TYPE(op), name, 1, 1, nargs);
        return NULL;
    }
    return wrap_or_unwrap(AESKIT_AT(op, name), aeskit_state_of(Py_TYPE(op)), self->head.keywrap,
                          wrap, &self->key, "data", args[0]);
}

static PyObject *key_wrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    return key_call(op, args, nargs, 1);
}

static PyObject *key_unwrap(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    return key_call(op, args, nargs, 0);
}

/* ---- batches (py/batch.h) ----------------------------------------------- */

/* One key wrapped (enc 1) or unwrapped (enc 0): an unwrap of a wrong
 * length, or one that fails its check, fails (the unwrap zeroed dst). */
static int batch_job(const void *key, int enc, aeskit_batch_msg *m)
{
    const KeyObject *self = key;
    const struct aeskit_keywrap *d = self->head.keywrap;
    if (enc) {
        d->wrap(&self->key, m->dst, m->src, m->len);
        return 1;
    }
    if (m->len < d->unwrap_min || m->len % AESKIT_SEMIBLOCK != 0 ||
        (uint64_t)m->len > d->unwrap_max)
        return 0;
    m->out_len = d->unwrap(&self->key, m->dst, m->src, m->len);
    return m->out_len != 0;
}

/* A key to wrap is checked as wrap() checks it; a wrapped key of a wrong
 * length fails in its job, as one that fails its check does. */
static int batch_check(aeskit_batch *b, const void *key, int enc, size_t i)
{
    const struct aeskit_keywrap *d = ((const KeyObject *)key)->head.keywrap;
    aeskit_batch_msg *m = &b->msgs[i];
    char name[64];
    if (!enc) {
        m->out_len = m->len >= AESKIT_SEMIBLOCK ? m->len - AESKIT_SEMIBLOCK : 0;
        return 0;
    }
    if (!length_ok(b->at, aeskit_state_of(aeskit_at_type(b->at)), d, 1,
                   aeskit_batch_name(name, sizeof name, "keys_to_wrap", i), m->len))
        return -1;
    m->out_len = d->wrapped_len(m->len);
    return 0;
}

static const aeskit_batch_ops batch_ops = {.job = batch_job, .check = batch_check};

static PyObject *key_batch(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames, int wrap, int into, const char *fname)
{
    const aeskit_batch_shape shape = {.data = wrap ? "keys_to_wrap" : "wrapped_keys"};
    return aeskit_batch_call(op, argv, nargs, kwnames, fname, into, &shape, &batch_ops, wrap, 0,
                             aeskit_state_of(Py_TYPE(op))->InvalidUnwrap, "unwrapping");
}

#define KEY_BATCH(fn, wrap, into, name)                                                    \
    static PyObject *fn(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)      \
    {                                                                                      \
        return key_batch(op, a, n, kw, wrap, into, name);                                  \
    }
KEY_BATCH(key_wrap_many, 1, 0, "wrap_many")
KEY_BATCH(key_unwrap_many, 0, 0, "unwrap_many")
KEY_BATCH(key_wrap_many_into, 1, 1, "wrap_many_into")
KEY_BATCH(key_unwrap_many_into, 0, 1, "unwrap_many_into")

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
                                                         shape.key_sizes, shape.n_keys, &kb);
    if (impl == NULL)
        return NULL;
    aeskit_key key;
    impl->set_key(&key, kb.buf, (size_t)kb.len);
    aeskit_release(&kb);
    PyObject *r = wrap_or_unwrap(at, st, d, wrap, &key, names[wrap][1], args[1]);
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

#define BATCH_METHOD(name, fn, sig, doc)                                                   \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS,                 \
     PyDoc_STR(name "($self, " sig ", *, threads=1)\n--\n\n" doc)}

static PyMethodDef key_methods[] = {
    {"wrap", (PyCFunction)(void (*)(void))key_wrap, METH_FASTCALL,
     PyDoc_STR("wrap($self, data, /)\n--\n\nWrap a key (bytes): the result is 8 bytes "
               "longer (KWP: than the key padded to a multiple of 8).")},
    {"unwrap", (PyCFunction)(void (*)(void))key_unwrap, METH_FASTCALL,
     PyDoc_STR("unwrap($self, data, /)\n--\n\nThe wrapped key (bytes), or InvalidUnwrap "
               "for any wrong length or failed check (nothing is returned).")},
    BATCH_METHOD("wrap_many", key_wrap_many, "keys_to_wrap",
                 "Wrap each key (a list of bytes): one call, the GIL released for the batch."),
    BATCH_METHOD("unwrap_many", key_unwrap_many, "wrapped_keys",
                 "Unwrap each key (a list of bytes); if any fails, InvalidUnwrap with its "
                 "indices in .failed, and nothing is returned."),
    BATCH_METHOD("wrap_many_into", key_wrap_many_into, "src, offsets, dst",
                 "Wrap the keys packed in src (offsets: n + 1 int32 or int64) into dst, back "
                 "to back; returns their offsets."),
    BATCH_METHOD("unwrap_many_into", key_unwrap_many_into, "src, offsets, dst",
                 "Unwrap the keys packed in src into dst, back to back; returns their "
                 "offsets; InvalidUnwrap with .failed (dst zeroed) if any fails."),
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

int aeskit_add_keywrap_types(PyObject *module, aeskit_state *st)
{
    if (PyModule_AddFunctions(module, pyca_functions) < 0)
        return -1;
    for (size_t i = 0; aeskit_keywraps[i] != NULL; i++) {
        const struct aeskit_keywrap *d = aeskit_keywraps[i];
        if (aeskit_add_key_type(module, st, d, d->type_name, d->doc, key_new, key_methods,
                                &shape, sizeof(KeyObject)) == NULL)
            return -1;
    }
    return 0;
}
