/*
 * aead.c: AESGCM and AESOCB3 with pyca/cryptography's names, argument
 * order and semantics, plus _into methods and streaming AEADContext.
 *
 * A failed decryption releases nothing: one-shot calls drop the plaintext
 * they built, _into calls zero what they wrote, and tags are compared with
 * OR-accumulation. GCM's length limits are checked before any work.
 */
#include "buffers.h"
#include "common.h"
#include "guard.h"

enum aead_kind { AEAD_GCM, AEAD_OCB };

typedef struct {
    PyObject_HEAD
    aeskit_key key;
    union {
        aeskit_ghash_key hk;     /* GCM */
        aeskit_ocb_key ok;       /* OCB3 */
    } u;
    enum aead_kind kind;
    unsigned tag_len;
} AeadObject;

typedef struct {
    PyObject_HEAD
    AeadObject *owner;
    union {
        aeskit_gcm gcm;
        aeskit_ocb ocb;
    } s;
    aeskit_guard guard;
    int enc;
    int updated;                 /* data seen: AAD is closed */
    int have_tag;
    uint8_t tag[16];
} AeadCtx;

PyObject *aeskit_InvalidTag;
PyObject *aeskit_NotYetFinalized;
static PyTypeObject *gcm_type, *ocb_type, *actx_type;

/* ---- argument parsing: positional or keyword, like cryptography ------ */

/* Fills out[0..nnames) from FASTCALL args; the first nreq are required,
 * the rest default to NULL. */
static int parse(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames, const char *const *names, int nnames, int nreq,
                 PyObject **out)
{
    for (int i = 0; i < nnames; i++)
        out[i] = NULL;
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fname,
                     nnames, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *kw = PyTuple_GET_ITEM(kwnames, j);
        int found = 0;
        for (int i = 0; i < nnames && !found; i++) {
            if (PyUnicode_CompareWithASCIIString(kw, names[i]) == 0) {
                if (out[i] != NULL) {
                    PyErr_Format(PyExc_TypeError, "%s() got multiple values for '%s'", fname,
                                 names[i]);
                    return -1;
                }
                out[i] = args[nargs + j];
                found = 1;
            }
        }
        if (!found) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         fname, kw);
            return -1;
        }
    }
    for (int i = 0; i < nreq; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

/* ---- key objects ------------------------------------------------------ */

static PyObject *aead_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"key", "tag_length", "backend", NULL};
    PyObject *keyobj;
    int tag_len = 16;
    const char *backend = "auto";
    enum aead_kind kind = type == gcm_type ? AEAD_GCM : AEAD_OCB;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$is:AEAD", kwlist, &keyobj, &tag_len,
                                     &backend))
        return NULL;
    if (kind == AEAD_GCM && !(tag_len == 4 || tag_len == 8 || (tag_len >= 12 && tag_len <= 16))) {
        PyErr_Format(PyExc_ValueError,
                     "tag_length must be 4, 8, 12, 13, 14, 15 or 16 for GCM, got %d", tag_len);
        return NULL;
    }
    if (kind == AEAD_OCB && (tag_len < 8 || tag_len > 16)) {
        PyErr_Format(PyExc_ValueError, "tag_length must be 8 to 16 for OCB3, got %d", tag_len);
        return NULL;
    }
    Py_buffer kb;
    const struct aeskit_impl *impl = aeskit_key_argument(keyobj, backend, &kb);
    if (impl == NULL)
        return NULL;
    AeadObject *self = (AeadObject *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->kind = kind;
        self->tag_len = (unsigned)tag_len;
        impl->set_key(&self->key, kb.buf, (size_t)kb.len);
        if (kind == AEAD_GCM) {
            uint8_t h[16] = {0};
            impl->ecb_enc(&self->key, h, h, 1);
            impl->ghash_key(&self->u.hk, h);
            aeskit_secure_zero(h, sizeof h);
        } else {
            aeskit_ocb_key_init(&self->u.ok, &self->key);
        }
    }
    aeskit_release(&kb);
    return (PyObject *)self;
}

static void aead_dealloc(PyObject *op)
{
    AeadObject *self = (AeadObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(&self->key, sizeof self->key);
    aeskit_secure_zero(&self->u, sizeof self->u);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyObject *aead_get_backend(PyObject *op, void *c)
{
    (void)c;
    return PyUnicode_FromString(((AeadObject *)op)->key.impl->name);
}

static PyObject *aead_get_key_size(PyObject *op, void *c)
{
    (void)c;
    return PyLong_FromLong(aeskit_key_bits(&((AeadObject *)op)->key));
}

static PyObject *aead_get_tag_length(PyObject *op, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLong(((AeadObject *)op)->tag_len);
}

static PyObject *aead_repr(PyObject *op)
{
    AeadObject *self = (AeadObject *)op;
    return PyUnicode_FromFormat("<%s key_size=%d tag_length=%u backend=%s>",
                                Py_TYPE(op)->tp_name, (int)aeskit_key_bits(&self->key),
                                self->tag_len, self->key.impl->name);
}

static PyObject *aead_generate_key(PyObject *cls, PyObject *args, PyObject *kwds)
{
    (void)cls;
    static char *kwlist[] = {"bit_length", NULL};
    PyObject *arg;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:generate_key", kwlist, &arg))
        return NULL;
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "bit_length must be an int, not %.200s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    long bits = PyLong_AsLong(arg);
    if (bits == -1 && PyErr_Occurred())
        return NULL;
    if (bits != 128 && bits != 192 && bits != 256) {
        PyErr_Format(PyExc_ValueError, "bit_length must be 128, 192 or 256, got %ld", bits);
        return NULL;
    }
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(os, "urandom", "l", bits / 8);
    Py_DECREF(os);
    return r;
}

static int check_nonce(const AeadObject *self, const Py_buffer *nonce)
{
    if (self->kind == AEAD_GCM && nonce->len < 1) {
        PyErr_SetString(PyExc_ValueError, "nonce must be at least 1 byte for GCM (12 is best)");
        return -1;
    }
    if (self->kind == AEAD_OCB && (nonce->len < 1 || nonce->len > 15)) {
        PyErr_Format(PyExc_ValueError, "nonce must be 1 to 15 bytes for OCB3, got %zd",
                     nonce->len);
        return -1;
    }
    return 0;
}

static int check_gcm_limits(const AeadObject *self, uint64_t aad_total, uint64_t data_total)
{
    if (self->kind != AEAD_GCM)
        return 0;
    if (data_total > AESKIT_GCM_MAX_DATA) {
        PyErr_SetString(PyExc_OverflowError, "GCM data is limited to 2**36 - 32 bytes");
        return -1;
    }
    if (aad_total > AESKIT_GCM_MAX_AAD) {
        PyErr_SetString(PyExc_OverflowError,
                        "GCM associated data is limited to 2**61 - 1 bytes");
        return -1;
    }
    return 0;
}

/* The whole AEAD over one message; returns the bytes of output written
 * before the tag (len) and the full tag. */
static void seal_or_open(const AeadObject *self, int enc, const Py_buffer *nonce,
                         const uint8_t *aad, size_t aad_len, uint8_t *dst, const uint8_t *src,
                         size_t len, uint8_t tag[16])
{
    if (self->kind == AEAD_GCM) {
        aeskit_gcm_oneshot(&self->key, &self->u.hk, enc, nonce->buf, (size_t)nonce->len, aad,
                           aad_len, dst, src, len, tag);
    } else {
        aeskit_ocb o;
        aeskit_ocb_init(&o, &self->key, &self->u.ok, enc, nonce->buf, (size_t)nonce->len,
                        self->tag_len);
        aeskit_ocb_aad(&o, aad, aad_len);
        size_t done = aeskit_ocb_update(&o, dst, src, len);
        aeskit_ocb_finish(&o, dst + done, tag);
    }
}

static const char *const oneshot_names[] = {"nonce", "data", "associated_data", "buf"};

static PyObject *aead_oneshot(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, int enc, int into, const char *fname)
{
    AeadObject *self = (AeadObject *)op;
    PyObject *a[4];
    if (parse(fname, args, nargs, kwnames, oneshot_names, 3 + into, 3 + into, a) < 0)
        return NULL;
    Py_buffer nonce = {0}, data = {0}, aad = {0}, out = {0};
    PyObject *result = NULL;
    uint8_t tag[16], want[16];
    if (aeskit_get_buffer(a[0], &nonce, 0, "nonce") < 0 || check_nonce(self, &nonce) < 0 ||
        aeskit_get_buffer(a[1], &data, 0, "data") < 0 ||
        (a[2] != Py_None && aeskit_get_buffer(a[2], &aad, 0, "associated_data") < 0))
        goto done;
    size_t len = (size_t)data.len, aad_len = aad.obj ? (size_t)aad.len : 0;
    size_t t = self->tag_len;
    if (!enc && len < t) {
        PyErr_SetString(aeskit_InvalidTag, "data is shorter than the tag");
        goto done;
    }
    size_t body = enc ? len : len - t, out_len = enc ? len + t : len - t;
    if (check_gcm_limits(self, aad_len, body) < 0)
        goto done;
    uint8_t *dst;
    if (aeskit_output(into ? a[3] : NULL, &data, out_len, &out, &result, &dst) < 0)
        goto done;
    if (!enc)
        memcpy(want, (const uint8_t *)data.buf + body, t);
    const uint8_t *aadp = aad.obj ? aad.buf : (const uint8_t *)"";
    if (body + aad_len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        seal_or_open(self, enc, &nonce, aadp, aad_len, dst, data.buf, body, tag);
        Py_END_ALLOW_THREADS
    } else {
        seal_or_open(self, enc, &nonce, aadp, aad_len, dst, data.buf, body, tag);
    }
    if (enc) {
        memcpy(dst + body, tag, t);
    } else if (!aeskit_ct_memeq(tag, want, t)) {
        aeskit_secure_zero(dst, body);
        Py_CLEAR(result);
        PyErr_SetString(aeskit_InvalidTag, "authentication failed: wrong key, nonce, tag, "
                                           "data or associated data");
        goto done;
    }
    if (into)
        result = PyLong_FromSize_t(out_len);
done:
    aeskit_secure_zero(tag, sizeof tag);
    aeskit_release(&nonce);
    aeskit_release(&data);
    aeskit_release(&aad);
    aeskit_release(&out);
    return result;
}

static PyObject *aead_encrypt(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return aead_oneshot(op, a, n, kw, 1, 0, "encrypt");
}
static PyObject *aead_decrypt(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return aead_oneshot(op, a, n, kw, 0, 0, "decrypt");
}
static PyObject *aead_encrypt_into(PyObject *op, PyObject *const *a, Py_ssize_t n,
                                   PyObject *kw)
{
    return aead_oneshot(op, a, n, kw, 1, 1, "encrypt_into");
}
static PyObject *aead_decrypt_into(PyObject *op, PyObject *const *a, Py_ssize_t n,
                                   PyObject *kw)
{
    return aead_oneshot(op, a, n, kw, 0, 1, "decrypt_into");
}

static PyObject *aead_context(PyObject *op, PyObject *nonceobj, int enc)
{
    AeadObject *self = (AeadObject *)op;
    Py_buffer nonce;
    if (aeskit_get_buffer(nonceobj, &nonce, 0, "nonce") < 0)
        return NULL;
    if (check_nonce(self, &nonce) < 0) {
        aeskit_release(&nonce);
        return NULL;
    }
    AeadCtx *ctx = PyObject_New(AeadCtx, actx_type);
    if (ctx != NULL) {
        Py_INCREF(op);
        ctx->owner = self;
        ctx->enc = enc;
        ctx->updated = 0;
        ctx->have_tag = 0;
        aeskit_guard_init(&ctx->guard);
        if (self->kind == AEAD_GCM)
            aeskit_gcm_init(&ctx->s.gcm, &self->key, &self->u.hk, enc, nonce.buf,
                            (size_t)nonce.len);
        else
            aeskit_ocb_init(&ctx->s.ocb, &self->key, &self->u.ok, enc, nonce.buf,
                            (size_t)nonce.len, self->tag_len);
    }
    aeskit_release(&nonce);
    return (PyObject *)ctx;
}

static PyObject *aead_encryptor(PyObject *op, PyObject *nonce)
{
    return aead_context(op, nonce, 1);
}
static PyObject *aead_decryptor(PyObject *op, PyObject *nonce)
{
    return aead_context(op, nonce, 0);
}

static PyMethodDef aead_methods[] = {
    {"encrypt", (PyCFunction)(void (*)(void))aead_encrypt, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("encrypt(nonce, data, associated_data) -> bytes\n\nciphertext || tag.")},
    {"decrypt", (PyCFunction)(void (*)(void))aead_decrypt, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("decrypt(nonce, data, associated_data) -> bytes\n\nThe plaintext, or "
               "InvalidTag (nothing is returned on failure).")},
    {"encrypt_into", (PyCFunction)(void (*)(void))aead_encrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("encrypt_into(nonce, data, associated_data, buf) -> int\n\nWrite ciphertext "
               "|| tag into buf (data itself allowed); returns len(data) + tag_length.")},
    {"decrypt_into", (PyCFunction)(void (*)(void))aead_decrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("decrypt_into(nonce, data, associated_data, buf) -> int\n\nWrite the "
               "plaintext into buf; on InvalidTag those bytes of buf are zeroed.")},
    {"encryptor", aead_encryptor, METH_O, PyDoc_STR("encryptor(nonce) -> AEADContext")},
    {"decryptor", aead_decryptor, METH_O,
     PyDoc_STR("decryptor(nonce) -> AEADContext\n\nIts output is UNAUTHENTICATED until "
               "finalize_with_tag() succeeds: do not act on it before then.")},
    {"generate_key", (PyCFunction)(void (*)(void))aead_generate_key,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("generate_key(bit_length) -> bytes\n\nA random key of 128, 192 or 256 bits "
               "from os.urandom.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef aead_getset[] = {
    {"backend", aead_get_backend, NULL, PyDoc_STR("name of the backend this key uses"), NULL},
    {"key_size", aead_get_key_size, NULL, PyDoc_STR("key size in bits"), NULL},
    {"tag_length", aead_get_tag_length, NULL, PyDoc_STR("tag length in bytes"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- streaming --------------------------------------------------------- */

static PyObject *actx_aad(PyObject *op, PyObject *arg)
{
    AeadCtx *ctx = (AeadCtx *)op;
    if (aeskit_guard_enter(&ctx->guard) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_buffer aad = {0};
    if (ctx->updated) {
        PyErr_SetString(PyExc_ValueError,
                        "associated data must all come before the first update()");
        goto done;
    }
    if (aeskit_get_buffer(arg, &aad, 0, "data") < 0)
        goto done;
    if (ctx->owner->kind == AEAD_GCM) {
        if (check_gcm_limits(ctx->owner, ctx->s.gcm.aad_len + (uint64_t)aad.len, 0) < 0)
            goto done;
        aeskit_gcm_aad(&ctx->s.gcm, aad.buf, (size_t)aad.len);
    } else {
        aeskit_ocb_aad(&ctx->s.ocb, aad.buf, (size_t)aad.len);
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    aeskit_release(&aad);
    aeskit_guard_leave(&ctx->guard);
    return result;
}

static size_t actx_out_len(const AeadCtx *ctx, size_t len)
{
    return ctx->owner->kind == AEAD_GCM ? len : aeskit_ocb_update_len(&ctx->s.ocb, len);
}

static size_t actx_run(AeadCtx *ctx, uint8_t *dst, const uint8_t *src, size_t len)
{
    if (ctx->owner->kind == AEAD_GCM) {
        aeskit_gcm_update(&ctx->s.gcm, dst, src, len);
        return len;
    }
    return aeskit_ocb_update(&ctx->s.ocb, dst, src, len);
}

static PyObject *actx_update_impl(AeadCtx *ctx, PyObject *const *args, Py_ssize_t nargs,
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
    size_t len = (size_t)data.len, out_len = actx_out_len(ctx, len);
    if (ctx->owner->kind == AEAD_GCM &&
        check_gcm_limits(ctx->owner, 0, ctx->s.gcm.data_len + (uint64_t)len) < 0)
        goto done;
    uint8_t *dst;
    if (aeskit_output(into ? args[1] : NULL, &data, out_len, &out, &result, &dst) < 0)
        goto done;
    ctx->updated = 1;
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        actx_run(ctx, dst, data.buf, len);
        Py_END_ALLOW_THREADS
    } else {
        actx_run(ctx, dst, data.buf, len);
    }
    if (into)
        result = PyLong_FromSize_t(out_len);
done:
    aeskit_release(&data);
    aeskit_release(&out);
    aeskit_guard_leave(&ctx->guard);
    return result;
}

static PyObject *actx_update(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return actx_update_impl((AeadCtx *)op, a, n, 0);
}
static PyObject *actx_update_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return actx_update_impl((AeadCtx *)op, a, n, 1);
}

/* Ends the stream: the pending tail (OCB) into a new bytes object, the
 * full tag into tag. Marks the context finalized. */
static PyObject *actx_finish(AeadCtx *ctx, uint8_t tag[16])
{
    uint8_t tail[16];
    size_t n = 0;
    if (ctx->owner->kind == AEAD_GCM)
        aeskit_gcm_tag(&ctx->s.gcm, tag);
    else
        n = aeskit_ocb_finish(&ctx->s.ocb, tail, tag);
    ctx->guard.finalized = 1;
    aeskit_secure_zero(&ctx->s, sizeof ctx->s);
    PyObject *r = PyBytes_FromStringAndSize((const char *)tail, (Py_ssize_t)n);
    aeskit_secure_zero(tail, sizeof tail);
    return r;
}

static PyObject *actx_finalize(PyObject *op, PyObject *unused)
{
    (void)unused;
    AeadCtx *ctx = (AeadCtx *)op;
    if (aeskit_guard_enter(&ctx->guard) < 0)
        return NULL;
    PyObject *r = NULL;
    if (!ctx->enc) {
        PyErr_SetString(PyExc_ValueError,
                        "a decryptor ends with finalize_with_tag(tag), which checks the tag");
    } else {
        r = actx_finish(ctx, ctx->tag);
        ctx->have_tag = r != NULL;
    }
    aeskit_guard_leave(&ctx->guard);
    return r;
}

static PyObject *actx_finalize_with_tag(PyObject *op, PyObject *arg)
{
    AeadCtx *ctx = (AeadCtx *)op;
    if (aeskit_guard_enter(&ctx->guard) < 0)
        return NULL;
    PyObject *r = NULL;
    Py_buffer want = {0};
    uint8_t tag[16];
    unsigned t = ctx->owner->tag_len;
    if (ctx->enc) {
        PyErr_SetString(PyExc_ValueError, "finalize_with_tag() is for decryptors; an "
                                          "encryptor ends with finalize() and .tag");
        goto done;
    }
    if (aeskit_get_buffer(arg, &want, 0, "tag") < 0)
        goto done;
    if ((size_t)want.len > t) {
        PyErr_Format(PyExc_ValueError, "tag must be %u bytes, got %zd", t, want.len);
        goto done;
    }
    r = actx_finish(ctx, tag);
    if (r != NULL && ((size_t)want.len != t || !aeskit_ct_memeq(tag, want.buf, t))) {
        Py_CLEAR(r);
        PyErr_SetString(aeskit_InvalidTag, "authentication failed: the data before this "
                                           "call must not be trusted either");
    }
done:
    aeskit_secure_zero(tag, sizeof tag);
    aeskit_release(&want);
    aeskit_guard_leave(&ctx->guard);
    return r;
}

static PyObject *actx_get_tag(PyObject *op, void *c)
{
    (void)c;
    AeadCtx *ctx = (AeadCtx *)op;
    if (!ctx->have_tag) {
        PyErr_SetString(aeskit_NotYetFinalized,
                        ctx->enc ? "the tag is available after finalize()"
                                 : "a decryptor has no tag to give: it checks one");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)ctx->tag, ctx->owner->tag_len);
}

static void actx_dealloc(PyObject *op)
{
    AeadCtx *ctx = (AeadCtx *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(&ctx->s, sizeof ctx->s);
    aeskit_secure_zero(ctx->tag, sizeof ctx->tag);
    Py_XDECREF(ctx->owner);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef actx_methods[] = {
    {"authenticate_additional_data", actx_aad, METH_O,
     PyDoc_STR("authenticate_additional_data(data)\n\nAssociated data; any number of calls, "
               "all before the first update().")},
    {"update", (PyCFunction)(void (*)(void))actx_update, METH_FASTCALL,
     PyDoc_STR("update(data) -> bytes\n\nGCM: all of it; OCB3: whole blocks, the rest at "
               "the end. A decryptor's output is unauthenticated until finalize_with_tag().")},
    {"update_into", (PyCFunction)(void (*)(void))actx_update_into, METH_FASTCALL,
     PyDoc_STR("update_into(data, buf) -> int")},
    {"finalize", actx_finalize, METH_NOARGS,
     PyDoc_STR("finalize() -> bytes\n\nEnd an encryption; the tag is then in .tag.")},
    {"finalize_with_tag", actx_finalize_with_tag, METH_O,
     PyDoc_STR("finalize_with_tag(tag) -> bytes\n\nEnd a decryption: raises InvalidTag "
               "unless tag authenticates everything, in which case the output of every "
               "update() may be trusted.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef actx_getset[] = {
    {"tag", actx_get_tag, NULL, PyDoc_STR("the tag, after an encryptor's finalize()"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot actx_slots[] = {
    {Py_tp_dealloc, actx_dealloc},
    {Py_tp_methods, actx_methods},
    {Py_tp_getset, actx_getset},
    {Py_tp_doc, (void *)PyDoc_STR("A streaming AEAD encryption or decryption. A decryptor's "
                                  "output is unauthenticated until finalize_with_tag() "
                                  "succeeds. Not safe to share between threads.")},
    {0, NULL},
};

static PyType_Spec actx_spec = {
    .name = "aeskit.AEADContext",
    .basicsize = sizeof(AeadCtx),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = actx_slots,
};

static PyTypeObject *make_aead_type(PyObject *module, const char *name, const char *doc)
{
    PyType_Slot slots[] = {
        {Py_tp_new, aead_new},
        {Py_tp_dealloc, aead_dealloc},
        {Py_tp_repr, aead_repr},
        {Py_tp_methods, aead_methods},
        {Py_tp_getset, aead_getset},
        {Py_tp_doc, (void *)doc},
        {0, NULL},
    };
    PyType_Spec spec = {
        .name = name,
        .basicsize = sizeof(AeadObject),
        .flags = Py_TPFLAGS_DEFAULT,
        .slots = slots,
    };
    PyTypeObject *t = (PyTypeObject *)PyType_FromSpec(&spec);
    if (t == NULL || PyModule_AddObjectRef(module, name + 7, (PyObject *)t) < 0)
        return NULL;
    return t;
}

/* ---- for the benchmark (py/bench.c) ----------------------------------- */

int aeskit_aead_of(PyObject *obj)
{
    return (gcm_type != NULL && Py_TYPE(obj) == gcm_type) ||
           (ocb_type != NULL && Py_TYPE(obj) == ocb_type);
}

void aeskit_aead_kernel(PyObject *obj, int enc, uint8_t *buf, size_t size, size_t loops)
{
    const AeadObject *self = (const AeadObject *)obj;
    static const uint8_t nonce12[12] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5,
                                        0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb};
    Py_buffer nonce = {0};
    nonce.buf = (void *)nonce12;
    nonce.len = sizeof nonce12;
    uint8_t tag[16];
    for (size_t i = 0; i < loops; i++) {
        seal_or_open(self, enc, &nonce, (const uint8_t *)"", 0, buf, buf, size, tag);
        if (enc)
            memcpy(buf + size, tag, self->tag_len);
    }
    aeskit_secure_zero(tag, sizeof tag);
}

int aeskit_gcm_keys_of(PyObject *obj, const aeskit_key **key, const aeskit_ghash_key **hk)
{
    if (gcm_type == NULL || Py_TYPE(obj) != gcm_type) {
        PyErr_Format(PyExc_TypeError, "expected an aeskit.AESGCM object, not %.200s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    const AeadObject *self = (const AeadObject *)obj;
    *key = &self->key;
    *hk = &self->u.hk;
    return 0;
}

int aeskit_add_aead_types(PyObject *module)
{
    aeskit_InvalidTag = PyErr_NewExceptionWithDoc(
        "aeskit.InvalidTag", "Authentication failed: the tag does not match.",
        PyExc_ValueError, NULL);
    aeskit_NotYetFinalized = PyErr_NewExceptionWithDoc(
        "aeskit.NotYetFinalized", "The tag was asked for before finalize().", NULL, NULL);
    if (aeskit_InvalidTag == NULL || aeskit_NotYetFinalized == NULL ||
        PyModule_AddObjectRef(module, "InvalidTag", aeskit_InvalidTag) < 0 ||
        PyModule_AddObjectRef(module, "NotYetFinalized", aeskit_NotYetFinalized) < 0)
        return -1;
    gcm_type = make_aead_type(module, "aeskit.AESGCM",
                              "AESGCM(key, *, tag_length=16, backend='auto')\n\nAES-GCM "
                              "(SP 800-38D). Nonces of any length >= 1 byte; 12 is best.");
    ocb_type = make_aead_type(module, "aeskit.AESOCB3",
                              "AESOCB3(key, *, tag_length=16, backend='auto')\n\nAES-OCB3 "
                              "(RFC 7253). Nonces of 1 to 15 bytes; tags of 8 to 16.");
    actx_type = (PyTypeObject *)PyType_FromSpec(&actx_spec);
    if (gcm_type == NULL || ocb_type == NULL || actx_type == NULL ||
        PyModule_AddObjectRef(module, "AEADContext", (PyObject *)actx_type) < 0)
        return -1;
    return 0;
}
