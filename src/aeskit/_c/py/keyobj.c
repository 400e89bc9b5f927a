/*
 * keyobj.c: the part of a key object that every family shares (keyobj.h).
 */
#include "keyobj.h"

#include "api.h"
#include "buffers.h"
#include "common.h"

/* padding=: 1 for 'pkcs7' in any case ('PKCS7', as the standard writes
 * it, too), 0 for None, -1 with ValueError for the rest. */
static int padding_argument(aeskit_at at, PyObject *obj)
{
    static const char pkcs7[] = "pkcs7";
    if (obj == Py_None)
        return 0;
    Py_ssize_t n = 0;
    const char *s = NULL;
    if (PyUnicode_Check(obj) && (s = PyUnicode_AsUTF8AndSize(obj, &n)) == NULL)
        PyErr_Clear();   /* a str without UTF-8 (a lone surrogate) is no match */
    if (s != NULL && n == (Py_ssize_t)sizeof pkcs7 - 1) {
        int same = 1;
        for (size_t i = 0; i < sizeof pkcs7 - 1; i++) {
            const char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
            same &= c == pkcs7[i];
        }
        if (same)
            return 1;
    }
    return aeskit_err_choice(at, "padding", "None or 'pkcs7' (in any case)", obj);
}

/* 1 if the n_keys keys in kb differ, else 0 with ValueError. Only the
 * verdict is public, so the comparison runs in constant time. */
static int keys_distinct(aeskit_at at, unsigned n_keys, const Py_buffer *kb)
{
    assert(n_keys == 2);
    const size_t each = (size_t)kb->len / n_keys;
    const uint8_t *k = kb->buf;
    if (!aeskit_ct_memeq(k, k + each, each))
        return 1;
    aeskit_error(PyExc_ValueError, at, "key halves must differ (IEEE 1619, FIPS 140-3 IG "
                 "C.I): they are two independent keys, e.g. os.urandom(%zd)", kb->len);
    return 0;
}

aeskit_keyobj *aeskit_keyobj_new(PyTypeObject *type, PyObject *args, PyObject *kwds,
                                 const aeskit_keyobj_shape *shape, Py_buffer *kb)
{
    static char *tag_kwlist[] = {"key", "tag_length", "backend", NULL};
    static char *pad_kwlist[] = {"key", "padding", "backend", NULL};
    static char *kwlist[] = {"key", "backend", NULL};
    PyObject *keyobj, *option = NULL, *backendobj = NULL;
    const aeskit_at at = AESKIT_AT((PyObject *)type, NULL);
    int tag_len = 0, pkcs7 = 0;
    const char *backend;
    char fmt[48];
    if (shape->tag_lengths != 0 || shape->padding) {
        const char *f = shape->tag_positional ? "O|O$O" : "O|$OO";
        if (!PyArg_ParseTupleAndKeywords(args, kwds, aeskit_format(fmt, sizeof fmt, f, type, NULL),
                                         shape->padding ? pad_kwlist : tag_kwlist, &keyobj,
                                         &option, &backendobj))
            return NULL;
    } else if (!PyArg_ParseTupleAndKeywords(args, kwds,
                                            aeskit_format(fmt, sizeof fmt, "O|$O", type, NULL),
                                            kwlist, &keyobj, &backendobj)) {
        return NULL;
    }
    if (shape->tag_lengths != 0 &&
        aeskit_tag_length_arg(type, option, 16, shape->tag_lengths, &tag_len) < 0)
        return NULL;
    if (shape->padding && (pkcs7 = padding_argument(at, option != NULL ? option : Py_None)) < 0)
        return NULL;
    if ((backend = aeskit_backend_arg(type, backendobj)) == NULL)
        return NULL;
    aeskit_state *st = aeskit_state_of(type);
    const struct aeskit_impl *impl = aeskit_key_argument(st, at, "key", keyobj, backend,
                                                         shape->key_sizes, shape->n_keys, kb);
    if (impl == NULL)
        return NULL;
    aeskit_keyobj *self = NULL;
    if (!shape->distinct_keys || keys_distinct(at, shape->n_keys, kb))
        self = (aeskit_keyobj *)type->tp_alloc(type, 0);
    if (self == NULL) {
        aeskit_release(kb);
        return NULL;
    }
    self->d = aeskit_desc_of(st, type);
    self->impl = impl;
    self->key_bits = 8 * (unsigned)kb->len;
    self->tag_len = (unsigned)tag_len;
    self->pkcs7 = (uint8_t)pkcs7;
    return self;
}

/* The key material lies from the end of the head to the end of the
 * object: every family puts it there (keyobj.h), and nothing else. */
static void keyobj_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero((char *)op + sizeof(aeskit_keyobj),
                       (size_t)tp->tp_basicsize - sizeof(aeskit_keyobj));
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyObject *get_backend(PyObject *op, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((aeskit_keyobj *)op)->impl->name);
}

static PyObject *get_key_size(PyObject *op, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(((aeskit_keyobj *)op)->key_bits);
}

static PyObject *get_tag_length(PyObject *op, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(((aeskit_keyobj *)op)->tag_len);
}

static PyObject *get_padding(PyObject *op, void *closure)
{
    (void)closure;
    if (((aeskit_keyobj *)op)->pkcs7)
        return PyUnicode_FromString("pkcs7");
    Py_RETURN_NONE;
}

static PyObject *keyobj_repr(PyObject *op)
{
    const aeskit_keyobj *self = (const aeskit_keyobj *)op;
    char tag[32] = "";
    if (self->tag_len != 0)
        PyOS_snprintf(tag, sizeof tag, " tag_length=%u", self->tag_len);
    return PyUnicode_FromFormat("<%s key_size=%u%s backend=%s%s>", Py_TYPE(op)->tp_name,
                                self->key_bits, tag, self->impl->name,
                                self->pkcs7 ? " padding=pkcs7" : "");
}

#define GETTER(name, fn, doc) {name, fn, NULL, PyDoc_STR(doc), NULL}
#define BACKEND_GETTER                                                                    \
    GETTER("backend", get_backend,                                                        \
           "The backend this key object runs on (str), one of "                           \
           "aeskit.backends().available: the constructor's backend argument, or the "     \
           "default where that was 'auto'. It is chosen once, at construction.")
#define KEY_SIZE_GETTER                                                                   \
    GETTER("key_size", get_key_size,                                                      \
           "The key's size in bits (int): 128, 192 or 256; for the classes that take "    \
           "two AES keys (AESXTS, AESSIV), both together: 256, 384 or 512.")
#define GETTERS_END {NULL, NULL, NULL, NULL, NULL}

static PyGetSetDef plain_getset[] = {BACKEND_GETTER, KEY_SIZE_GETTER, GETTERS_END};
static PyGetSetDef tag_getset[] = {
    BACKEND_GETTER, KEY_SIZE_GETTER,
    GETTER("tag_length", get_tag_length,
           "The tag's length in bytes (int), fixed at construction: what encryption adds "
           "to the ciphertext and decryption expects (AESCMAC: the length of mac()'s "
           "tags)."),
    GETTERS_END,
};
static PyGetSetDef padding_getset[] = {
    BACKEND_GETTER, KEY_SIZE_GETTER,
    GETTER("padding", get_padding,
           "The padding (str or None), from the constructor's padding argument: 'pkcs7' "
           "(encryption takes any length and pads, decryption checks and removes the "
           "padding) or None (whole blocks only)."),
    GETTERS_END,
};

PyTypeObject *aeskit_add_key_type(PyObject *module, aeskit_state *st, const void *d,
                                  const char *type_name, const char *doc, newfunc tp_new,
                                  PyMethodDef *methods, const aeskit_keyobj_shape *shape,
                                  size_t basicsize)
{
    assert(basicsize > sizeof(aeskit_keyobj));
    PyType_Slot slots[] = {
        {Py_tp_new, tp_new},
        {Py_tp_dealloc, keyobj_dealloc},
        {Py_tp_repr, keyobj_repr},
        {Py_tp_methods, methods},
        {Py_tp_getset, shape->tag_lengths != 0 ? tag_getset
                       : shape->padding         ? padding_getset
                                                : plain_getset},
        {Py_tp_doc, (void *)doc},
        {0, NULL},
    };
    PyType_Spec spec = {
        .name = type_name,
        .basicsize = (int)basicsize,
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
        .slots = slots,
    };
    return aeskit_add_type(module, st, &spec, d);
}
