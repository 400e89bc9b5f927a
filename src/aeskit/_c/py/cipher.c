/*
 * cipher.c: AESECB, AESCBC, AESCFB, AESCFB8, AESOFB, AESCTR and their
 * streaming CipherContext.
 *
 * A key object holds one expanded key, built once by the chosen backend
 * and never changed, so it is safe to share between threads; the GIL is
 * released around large calls. A context holds one stream state and is
 * not safe to share: a second thread entering it while the first works
 * gets RuntimeError instead of a repeated keystream.
 */
#include "buffers.h"
#include "guard.h"

typedef struct {
    PyObject_HEAD
    aeskit_key key;
    enum aeskit_mode mode;
} KeyObject;

typedef struct {
    PyObject_HEAD
    KeyObject *owner;
    aeskit_stream st;
    aeskit_guard guard;
} CtxObject;

static const struct {
    const char *name;     /* type name and the spec's tp_name */
    enum aeskit_mode mode;
} mode_names[] = {
    {"aeskit.AESECB", AESKIT_ECB},   {"aeskit.AESCBC", AESKIT_CBC},
    {"aeskit.AESCFB", AESKIT_CFB},   {"aeskit.AESCFB8", AESKIT_CFB8},
    {"aeskit.AESOFB", AESKIT_OFB},   {"aeskit.AESCTR", AESKIT_CTR},
};
#define NMODES (sizeof mode_names / sizeof mode_names[0])

static PyTypeObject *mode_types[NMODES];
static PyTypeObject *ctx_type;

/* ---- key objects ------------------------------------------------------ */

static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"key", "backend", NULL};
    PyObject *keyobj;
    const char *backend = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$s:AES", kwlist, &keyobj, &backend))
        return NULL;
    Py_buffer kb;
    const struct aeskit_impl *impl = aeskit_key_argument(keyobj, backend, &kb);
    if (impl == NULL)
        return NULL;
    KeyObject *self = (KeyObject *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->mode = AESKIT_ECB;
        for (size_t i = 0; i < NMODES; i++)
            if (type == mode_types[i])
                self->mode = mode_names[i].mode;
        impl->set_key(&self->key, kb.buf, (size_t)kb.len);
        assert(self->key.impl == impl);
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
    return PyUnicode_FromFormat("<%s key_size=%d backend=%s>", Py_TYPE(op)->tp_name,
                                (int)aeskit_key_bits(&self->key), self->key.impl->name);
}

static int check_iv(PyObject *obj, Py_buffer *iv)
{
    if (aeskit_get_buffer(obj, iv, 0, "iv") < 0)
        return -1;
    if (iv->len != 16) {
        PyErr_Format(PyExc_ValueError, "iv must be 16 bytes, got %zd", iv->len);
        aeskit_release(iv);
        return -1;
    }
    return 0;
}

static void run(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len)
{
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        aeskit_stream_update(st, dst, src, len);
        Py_END_ALLOW_THREADS
    } else {
        aeskit_stream_update(st, dst, src, len);
    }
}

/* encrypt/decrypt(,_into): [iv,] data[, buf] */
static PyObject *oneshot(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int enc,
                         int into, const char *fname)
{
    KeyObject *self = (KeyObject *)op;
    int has_iv = self->mode != AESKIT_ECB;
    Py_ssize_t want = has_iv + 1 + into;
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly %zd arguments (%zd given)", fname,
                     want, nargs);
        return NULL;
    }
    Py_buffer iv = {0}, data = {0}, out = {0};
    PyObject *result = NULL;
    if (has_iv && check_iv(args[0], &iv) < 0)
        return NULL;
    if (aeskit_get_buffer(args[has_iv], &data, 0, "data") < 0)
        goto done;
    size_t len = (size_t)data.len;
    if (aeskit_mode_is_blockwise(self->mode) && len % 16 != 0) {
        PyErr_Format(PyExc_ValueError,
                     "data length must be a multiple of 16 bytes in %s mode, got %zu",
                     self->mode == AESKIT_ECB ? "ECB" : "CBC", len);
        goto done;
    }
    uint8_t *dst;
    if (aeskit_output(into ? args[has_iv + 1] : NULL, &data, len, &out, &result, &dst) < 0)
        goto done;
    aeskit_stream st;
    aeskit_stream_init(&st, &self->key, self->mode, enc, has_iv ? iv.buf : NULL);
    run(&st, dst, data.buf, len);
    aeskit_secure_zero(&st, sizeof st);
    if (into)
        result = PyLong_FromSize_t(len);
done:
    aeskit_release(&iv);
    aeskit_release(&data);
    aeskit_release(&out);
    return result;
}

static PyObject *key_encrypt(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return oneshot(op, a, n, 1, 0, "encrypt");
}
static PyObject *key_decrypt(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return oneshot(op, a, n, 0, 0, "decrypt");
}
static PyObject *key_encrypt_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return oneshot(op, a, n, 1, 1, "encrypt_into");
}
static PyObject *key_decrypt_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return oneshot(op, a, n, 0, 1, "decrypt_into");
}

static PyObject *make_context(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int enc,
                              const char *fname)
{
    KeyObject *self = (KeyObject *)op;
    int has_iv = self->mode != AESKIT_ECB;
    if (nargs != has_iv) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly %d arguments (%zd given)", fname,
                     has_iv, nargs);
        return NULL;
    }
    Py_buffer iv = {0};
    if (has_iv && check_iv(args[0], &iv) < 0)
        return NULL;
    CtxObject *ctx = PyObject_New(CtxObject, ctx_type);
    if (ctx != NULL) {
        Py_INCREF(op);
        ctx->owner = self;
        aeskit_stream_init(&ctx->st, &self->key, self->mode, enc, has_iv ? iv.buf : NULL);
        aeskit_guard_init(&ctx->guard);
    }
    aeskit_release(&iv);
    return (PyObject *)ctx;
}

static PyObject *key_encryptor(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return make_context(op, a, n, 1, "encryptor");
}
static PyObject *key_decryptor(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return make_context(op, a, n, 0, "decryptor");
}

#define KEY_METHOD(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, PyDoc_STR(doc)}

static PyMethodDef ecb_methods[] = {
    KEY_METHOD("encrypt", key_encrypt,
               "encrypt(data, /) -> bytes\n\nECB-encrypt data (a multiple of 16 bytes)."),
    KEY_METHOD("decrypt", key_decrypt,
               "decrypt(data, /) -> bytes\n\nECB-decrypt data (a multiple of 16 bytes)."),
    KEY_METHOD("encrypt_into", key_encrypt_into,
               "encrypt_into(data, buf, /) -> int\n\nEncrypt into buf (data itself allowed)."),
    KEY_METHOD("decrypt_into", key_decrypt_into,
               "decrypt_into(data, buf, /) -> int\n\nDecrypt into buf (data itself allowed)."),
    KEY_METHOD("encryptor", key_encryptor, "encryptor() -> CipherContext"),
    KEY_METHOD("decryptor", key_decryptor, "decryptor() -> CipherContext"),
    {NULL, NULL, 0, NULL},
};

static PyMethodDef iv_methods[] = {
    KEY_METHOD("encrypt", key_encrypt, "encrypt(iv, data, /) -> bytes"),
    KEY_METHOD("decrypt", key_decrypt, "decrypt(iv, data, /) -> bytes"),
    KEY_METHOD("encrypt_into", key_encrypt_into,
               "encrypt_into(iv, data, buf, /) -> int\n\nEncrypt into buf (data itself allowed)."),
    KEY_METHOD("decrypt_into", key_decrypt_into,
               "decrypt_into(iv, data, buf, /) -> int\n\nDecrypt into buf (data itself allowed)."),
    KEY_METHOD("encryptor", key_encryptor, "encryptor(iv, /) -> CipherContext"),
    KEY_METHOD("decryptor", key_decryptor, "decryptor(iv, /) -> CipherContext"),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef key_getset[] = {
    {"backend", key_get_backend, NULL, PyDoc_STR("name of the backend this key uses"), NULL},
    {"key_size", key_get_key_size, NULL, PyDoc_STR("key size in bits"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

int aeskit_key_of(PyObject *obj, const aeskit_key **key, enum aeskit_mode *mode)
{
    for (size_t i = 0; i < NMODES; i++) {
        if (Py_TYPE(obj) == mode_types[i]) {
            *key = &((KeyObject *)obj)->key;
            *mode = ((KeyObject *)obj)->mode;
            return 0;
        }
    }
    PyErr_Format(PyExc_TypeError, "expected an aeskit key object, not %.200s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

/* ---- streaming contexts ------------------------------------------------ */

static PyObject *ctx_update_impl(CtxObject *ctx, PyObject *const *args, Py_ssize_t nargs,
                                 int into)
{
    if (nargs != 1 + into) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly %d arguments (%zd given)",
                     into ? "update_into" : "update", 1 + into, nargs);
        return NULL;
    }
    if (aeskit_guard_enter(&ctx->guard) < 0)
        return NULL;
    Py_buffer data = {0}, out = {0};
    PyObject *result = NULL;
    if (aeskit_get_buffer(args[0], &data, 0, "data") < 0)
        goto done;
    size_t len = (size_t)data.len;
    size_t out_len = aeskit_stream_out_len(&ctx->st, len);
    uint8_t *dst;
    if (aeskit_output(into ? args[1] : NULL, &data, out_len, &out, &result, &dst) < 0)
        goto done;
    run(&ctx->st, dst, data.buf, len);
    if (into)
        result = PyLong_FromSize_t(out_len);
done:
    aeskit_release(&data);
    aeskit_release(&out);
    aeskit_guard_leave(&ctx->guard);
    return result;
}

static PyObject *ctx_update(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return ctx_update_impl((CtxObject *)op, a, n, 0);
}

static PyObject *ctx_update_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return ctx_update_impl((CtxObject *)op, a, n, 1);
}

static PyObject *ctx_finalize(PyObject *op, PyObject *unused)
{
    (void)unused;
    CtxObject *ctx = (CtxObject *)op;
    if (aeskit_guard_enter(&ctx->guard) < 0)
        return NULL;
    unsigned pending = aeskit_stream_pending(&ctx->st);
    int mode = ctx->st.mode;
    ctx->guard.finalized = 1;
    aeskit_secure_zero(&ctx->st, sizeof ctx->st);
    aeskit_guard_leave(&ctx->guard);
    if (pending != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%u bytes of an incomplete block are left at finalize: %s data must "
                     "be a multiple of 16 bytes",
                     pending, mode == AESKIT_ECB ? "ECB" : "CBC");
        return NULL;
    }
    return PyBytes_FromStringAndSize(NULL, 0);
}

static void ctx_dealloc(PyObject *op)
{
    CtxObject *ctx = (CtxObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(&ctx->st, sizeof ctx->st);
    Py_XDECREF(ctx->owner);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef ctx_methods[] = {
    {"update", (PyCFunction)(void (*)(void))ctx_update, METH_FASTCALL,
     PyDoc_STR("update(data, /) -> bytes\n\nProcess data; returns what is ready "
               "(ECB/CBC: whole blocks only, the rest waits for the next call).")},
    {"update_into", (PyCFunction)(void (*)(void))ctx_update_into, METH_FASTCALL,
     PyDoc_STR("update_into(data, buf, /) -> int\n\nLike update, writing into buf (at least "
               "the bytes this call produces; data itself allowed). Returns the count.")},
    {"finalize", ctx_finalize, METH_NOARGS,
     PyDoc_STR("finalize() -> bytes\n\nEnd the stream. ECB/CBC: raises ValueError if an "
               "incomplete block is left. Any later call raises AlreadyFinalized.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot ctx_slots[] = {
    {Py_tp_dealloc, ctx_dealloc},
    {Py_tp_methods, ctx_methods},
    {Py_tp_doc, (void *)PyDoc_STR("A streaming encryption or decryption of one message. "
                                  "Made by encryptor()/decryptor(); not safe to share "
                                  "between threads.")},
    {0, NULL},
};

static PyType_Spec ctx_spec = {
    .name = "aeskit.CipherContext",
    .basicsize = sizeof(CtxObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = ctx_slots,
};

static const char key_doc[] =
    "AES(key, *, backend='auto')\n\n"
    "An AES key (16, 24 or 32 bytes) expanded once for one mode. Immutable and\n"
    "safe to share between threads. backend: 'auto' or a name from\n"
    "aeskit.backends().available.";

int aeskit_add_cipher_types(PyObject *module)
{
    for (size_t i = 0; i < NMODES; i++) {
        PyType_Slot slots[] = {
            {Py_tp_new, key_new},
            {Py_tp_dealloc, key_dealloc},
            {Py_tp_repr, key_repr},
            {Py_tp_methods, mode_names[i].mode == AESKIT_ECB ? ecb_methods : iv_methods},
            {Py_tp_getset, key_getset},
            {Py_tp_doc, (void *)key_doc},
            {0, NULL},
        };
        PyType_Spec spec = {
            .name = mode_names[i].name,
            .basicsize = sizeof(KeyObject),
            .flags = Py_TPFLAGS_DEFAULT,
            .slots = slots,
        };
        mode_types[i] = (PyTypeObject *)PyType_FromSpec(&spec);
        if (mode_types[i] == NULL ||
            PyModule_AddObjectRef(module, mode_names[i].name + 7, (PyObject *)mode_types[i]) < 0)
            return -1;
    }
    ctx_type = (PyTypeObject *)PyType_FromSpec(&ctx_spec);
    if (ctx_type == NULL || PyModule_AddObjectRef(module, "CipherContext", (PyObject *)ctx_type) < 0)
        return -1;
    return 0;
}
