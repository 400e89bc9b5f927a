/*
 * mac.c: one Python type per MAC descriptor (aeskit_macs, modes/registry.c:
 * AESCMAC) and the MACContext its new() makes, in the manner of Python's
 * hmac: update, copy, digest (which does not end the context), hexdigest,
 * and verify. Nothing here asks which MAC it serves: the descriptor
 * (modes/mac.h) gives the tag lengths and the entry points.
 *
 * A key object holds the per-key state, built once by the chosen backend
 * and never changed, so it is safe to share between threads; a context is
 * for one thread (py/guard.h). Tags are compared with OR-accumulation
 * (aeskit_mac_tag_ok, modes/verify.c), and a tag of any other length than
 * tag_length fails as a wrong one does (InvalidTag), so a short tag can
 * never be checked as a prefix.
 */
#include <stddef.h>

#include "api.h"
#include "batch.h"
#include "buffers.h"
#include "common.h"
#include "guard.h"
#include "keyobj.h"
#include "modes/mac.h"

/* CMAC is one serial chain of single-block AES: aeskit bench measured 2.50
 * c/B against ECB's 0.34 on aesni (AES-128), and 88 against 21 on
 * portable. So a call does the threshold's bulk work in about an eighth
 * of its length on the hardware backends (and sooner on portable). */
#define MAC_GIL_THRESHOLD (AESKIT_GIL_THRESHOLD / 8)

typedef struct {
    aeskit_keyobj head;             /* head.mac: the descriptor */
    uint64_t ks[];                  /* d->key_state bytes (8-byte aligned) */
} MacObject;
AESKIT_KEYOBJ_LAYOUT(MacObject, ks);

typedef struct {
    PyObject_VAR_HEAD               /* ob_size: bytes of st */
    MacObject *owner;
    aeskit_guard guard;
    uint64_t st[];                  /* owner->head.mac->state bytes */
} MacCtx;

/* ---- key objects ------------------------------------------------------ */

static PyObject *mac_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    const struct aeskit_mac *d = aeskit_desc_of(aeskit_state_of(type), type);
    const aeskit_keyobj_shape shape = {
        .key_sizes = d->key_sizes, .n_keys = 1, .tag_lengths = d->tag_lengths,
    };
    Py_buffer kb;
    MacObject *self = (MacObject *)aeskit_keyobj_new(type, args, kwds, &shape, &kb);
    if (self == NULL)
        return NULL;
    d->key_init(self->ks, self->head.impl, kb.buf, (size_t)kb.len);
    aeskit_release(&kb);
    return (PyObject *)self;
}

/* The full tag of data under self, the GIL released for long data. */
static void mac_of(const MacObject *self, const Py_buffer *data, uint8_t tag[16])
{
    const size_t len = (size_t)data->len;
    if (len >= MAC_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        self->head.mac->mac(self->ks, data->buf, len, tag);
        Py_END_ALLOW_THREADS
    } else {
        self->head.mac->mac(self->ks, data->buf, len, tag);
    }
}

/* 0 if tag (a buffer) is the first t bytes of full, else -1 with
 * InvalidTag; a tag of another length is refused without a comparison. */
static int check_tag(aeskit_at at, const Py_buffer *tag, const uint8_t full[16], unsigned t)
{
    if (!aeskit_mac_tag_ok(full, tag->buf, (size_t)tag->len, t))
        return aeskit_error(aeskit_state_of(aeskit_at_type(at))->InvalidTag, at, "the tag does "
                            "not match: wrong key, data or tag");
    return 0;
}

static PyObject *mac_mac(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    MacObject *self = (MacObject *)op;
    if (nargs != 1) {
        aeskit_count_error(Py_TYPE(op), "mac", 1, 1, nargs);
        return NULL;
    }
    Py_buffer data;
    if (aeskit_take(AESKIT_AT(op, "mac"), "data", args[0], &data, AESKIT_BUF_TEXT) < 0)
        return NULL;
    uint8_t tag[16];
    mac_of(self, &data, tag);
    aeskit_release(&data);
    PyObject *r = PyBytes_FromStringAndSize((const char *)tag, self->head.tag_len);
    aeskit_secure_zero(tag, sizeof tag);
    return r;
}

static PyObject *mac_verify(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    MacObject *self = (MacObject *)op;
    if (nargs != 2) {
        aeskit_count_error(Py_TYPE(op), "verify", 2, 2, nargs);
        return NULL;
    }
    const aeskit_at at = AESKIT_AT(op, "verify");
    Py_buffer data = {0}, tag = {0};
    PyObject *r = NULL;
    uint8_t full[16];
    if (aeskit_take(at, "data", args[0], &data, AESKIT_BUF_TEXT) < 0 ||
        aeskit_take(at, "tag", args[1], &tag, 0) < 0)
        goto done;
    mac_of(self, &data, full);
    if (check_tag(at, &tag, full, self->head.tag_len) == 0)
        r = Py_NewRef(Py_None);
    aeskit_secure_zero(full, sizeof full);
done:
    aeskit_release(&data);
    aeskit_release(&tag);
    return r;
}

/* ---- batches (py/batch.h) ----------------------------------------------- */

/* A chunk of messages, in groups the MAC takes at once (mac_many; mac
 * once per message where it has none): each one's tag (enc 1: mac_many)
 * or its check against the message's item of tags (enc 0: verify_many,
 * writing nothing). */
static size_t batch_many(const void *key, int enc, aeskit_batch_msg *ms, uint8_t *ok, size_t n)
{
    const MacObject *self = key;
    const struct aeskit_mac *d = self->head.mac;
    const size_t t = self->head.tag_len;
    aeskit_span msgs[AESKIT_MAC_MANY];
    uint8_t full[AESKIT_MAC_MANY][16];
    size_t failed = 0;
    for (size_t i = 0; i < n;) {
        const size_t k = n - i < AESKIT_MAC_MANY ? n - i : AESKIT_MAC_MANY;
        aeskit_batch_msg *m = &ms[i];
        if (d->mac_many != NULL) {
            /* full tags laid back to back (the packed form's) are written
             * where they go, with nothing to copy or wipe */
            int direct = enc && t == 16;
            for (size_t j = 0; j < k; j++) {
                msgs[j] = (aeskit_span){m[j].src, m[j].len};
                direct &= m[j].dst == m[0].dst + 16 * j;
            }
            if (direct) {
                d->mac_many(self->ks, msgs, k, (uint8_t (*)[16])m[0].dst);
                memset(ok + i, 1, k);
                i += k;
                continue;
            }
            d->mac_many(self->ks, msgs, k, full);
        } else {
            for (size_t j = 0; j < k; j++)
                d->mac(self->ks, m[j].src, m[j].len, full[j]);
        }
        for (size_t j = 0; j < k; j++) {
            if (enc)
                memcpy(m[j].dst, full[j], t);
            ok[i + j] = (uint8_t)(enc ? 1 : aeskit_mac_tag_ok(full[j], m[j].iv, m[j].iv_len, t));
            failed += !ok[i + j];
        }
        aeskit_secure_zero(full, k * sizeof full[0]);
        i += k;
    }
    return failed;
}

/* A message has no limit; a tag of another length fails in its job, as a
 * wrong one does. Each record's out_len (the tag length, or 0 for
 * verify_many) came with it from the collectors (mac_batch's shape): a
 * pass here to set it cost 5% of a packed batch of 64-byte CMACs. */
static int batch_check_all(aeskit_batch *b, const void *key, int enc)
{
    (void)b;
    (void)key;
    (void)enc;
    return 0;
}

static const aeskit_batch_ops batch_ops = {
    .many = batch_many, .check_all = batch_check_all, .exact = 1, .lazy_ok = 1,
};

static PyObject *mac_batch(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames, int enc, int into, const char *fname)
{
    const aeskit_batch_shape shape = {
        .data = "messages", .side = enc ? NULL : "tags", .data_flags = AESKIT_BUF_TEXT,
        .side_after = 1, .out_len = enc ? ((const MacObject *)op)->head.tag_len : 0,
    };
    PyObject *r = aeskit_batch_call(op, argv, nargs, kwnames, fname, into, &shape, &batch_ops,
                                    enc, 0, aeskit_state_of(Py_TYPE(op))->InvalidTag,
                                    "verification");
    if (r != NULL && !enc)
        Py_SETREF(r, Py_NewRef(Py_None));
    return r;
}

static PyObject *mac_mac_many(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return mac_batch(op, a, n, kw, 1, 0, "mac_many");
}
static PyObject *mac_mac_many_into(PyObject *op, PyObject *const *a, Py_ssize_t n,
                                   PyObject *kw)
{
    return mac_batch(op, a, n, kw, 1, 1, "mac_many_into");
}
static PyObject *mac_verify_many(PyObject *op, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return mac_batch(op, a, n, kw, 0, 0, "verify_many");
}

static PyObject *ctx_update_buffer(aeskit_at at, MacCtx *ctx, PyObject *arg, unsigned flags);

static PyObject *mac_context(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    MacObject *self = (MacObject *)op;
    if (nargs > 1) {
        aeskit_count_error(Py_TYPE(op), "new", 0, 1, nargs);
        return NULL;
    }
    MacCtx *ctx = PyObject_NewVar(MacCtx, aeskit_state_of(Py_TYPE(op))->mac_ctx_type,
                                  (Py_ssize_t)self->head.mac->state);
    if (ctx == NULL)
        return NULL;
    ctx->owner = (MacObject *)Py_NewRef(op);
    aeskit_guard_init(&ctx->guard, Py_TYPE(op), "new", "");
    self->head.mac->init(ctx->st, self->ks);
    if (nargs == 1 && args[0] != Py_None) {
        PyObject *r = ctx_update_buffer(AESKIT_AT(op, "new"), ctx, args[0],
                                        AESKIT_BUF_OR_NONE | AESKIT_BUF_TEXT);
        if (r == NULL) {
            Py_DECREF(ctx);
            return NULL;
        }
        Py_DECREF(r);
    }
    return (PyObject *)ctx;
}

static PyMethodDef mac_methods[] = {
    {"mac", (PyCFunction)(void (*)(void))mac_mac, METH_FASTCALL,
     PyDoc_STR("mac($self, data, /)\n--\n\nThe tag of data (bytes): tag_length bytes.")},
    {"verify", (PyCFunction)(void (*)(void))mac_verify, METH_FASTCALL,
     PyDoc_STR("verify($self, data, tag, /)\n--\n\nCheck tag against data in constant time; "
               "InvalidTag if it does not match, or is not tag_length bytes.")},
    {"mac_many", (PyCFunction)(void (*)(void))mac_mac_many, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("mac_many($self, messages, *, threads=1)\n--\n\nThe tag of each message (a "
               "list of bytes): one call, the GIL released for the batch.")},
    {"mac_many_into", (PyCFunction)(void (*)(void))mac_mac_many_into,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("mac_many_into($self, src, offsets, dst, *, threads=1)\n--\n\nThe tags of "
               "the messages packed in src (offsets: n + 1 int32 or int64) into dst, back to "
               "back (n x tag_length bytes); returns their offsets.")},
    {"verify_many", (PyCFunction)(void (*)(void))mac_verify_many,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("verify_many($self, messages, tags, *, threads=1)\n--\n\nCheck each tag "
               "against its message in constant time; InvalidTag with the indices that do "
               "not match in .failed.")},
    {"new", (PyCFunction)(void (*)(void))mac_context, METH_FASTCALL,
     PyDoc_STR("new($self, data=None, /)\n--\n\nA MACContext in the manner of hmac: "
               "update(), copy(), digest(), hexdigest(), verify().")},
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

/* ---- contexts ------------------------------------------------------------ */

/* update's work, the guard already held; at and flags: for the errors. */
static PyObject *ctx_update_buffer(aeskit_at at, MacCtx *ctx, PyObject *arg, unsigned flags)
{
    Py_buffer data;
    if (aeskit_take(at, "data", arg, &data, flags) < 0)
        return NULL;
    const struct aeskit_mac *d = ctx->owner->head.mac;
    const size_t len = (size_t)data.len;
    if (len >= MAC_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        d->update(ctx->st, data.buf, len);
        Py_END_ALLOW_THREADS
    } else {
        d->update(ctx->st, data.buf, len);
    }
    aeskit_release(&data);
    return Py_NewRef(Py_None);
}

static PyObject *ctx_update(PyObject *op, PyObject *arg)
{
    MacCtx *ctx = (MacCtx *)op;
    if (aeskit_guard_enter(&ctx->guard, op, "update") < 0)
        return NULL;
    PyObject *r = ctx_update_buffer(AESKIT_AT(op, "update"), ctx, arg, AESKIT_BUF_TEXT);
    aeskit_guard_leave(&ctx->guard);
    return r;
}

static PyObject *ctx_copy(PyObject *op, PyObject *unused)
{
    (void)unused;
    MacCtx *ctx = (MacCtx *)op;
    if (aeskit_guard_enter(&ctx->guard, op, "copy") < 0)
        return NULL;
    MacCtx *c = PyObject_NewVar(MacCtx, Py_TYPE(op), Py_SIZE(ctx));
    if (c != NULL) {
        c->owner = (MacObject *)Py_NewRef((PyObject *)ctx->owner);
        aeskit_guard_init(&c->guard, ctx->guard.owner, ctx->guard.maker, ctx->guard.arg);
        memcpy(c->st, ctx->st, (size_t)Py_SIZE(ctx));
    }
    aeskit_guard_leave(&ctx->guard);
    return (PyObject *)c;
}

/* The full tag of the data so far, for method; -1 with an exception. */
static int ctx_tag(MacCtx *ctx, uint8_t tag[16], const char *method)
{
    if (aeskit_guard_enter(&ctx->guard, (PyObject *)ctx, method) < 0)
        return -1;
    ctx->owner->head.mac->final(ctx->st, tag);
    aeskit_guard_leave(&ctx->guard);
    return 0;
}

static PyObject *ctx_digest(PyObject *op, PyObject *unused)
{
    (void)unused;
    MacCtx *ctx = (MacCtx *)op;
    uint8_t tag[16];
    if (ctx_tag(ctx, tag, "digest") < 0)
        return NULL;
    PyObject *r = PyBytes_FromStringAndSize((const char *)tag, ctx->owner->head.tag_len);
    aeskit_secure_zero(tag, sizeof tag);
    return r;
}

static PyObject *ctx_hexdigest(PyObject *op, PyObject *unused)
{
    (void)unused;
    MacCtx *ctx = (MacCtx *)op;
    static const char hex[] = "0123456789abcdef";
    uint8_t tag[16];
    char text[32];
    if (ctx_tag(ctx, tag, "hexdigest") < 0)
        return NULL;
    const unsigned t = ctx->owner->head.tag_len;
    for (unsigned i = 0; i < t; i++) {
        text[2 * i] = hex[tag[i] >> 4];
        text[2 * i + 1] = hex[tag[i] & 15];
    }
    PyObject *r = PyUnicode_FromStringAndSize(text, 2 * (Py_ssize_t)t);
    aeskit_secure_zero(tag, sizeof tag);
    aeskit_secure_zero(text, sizeof text);
    return r;
}

static PyObject *ctx_verify(PyObject *op, PyObject *arg)
{
    MacCtx *ctx = (MacCtx *)op;
    const aeskit_at at = AESKIT_AT(op, "verify");
    Py_buffer tag;
    uint8_t full[16];
    if (aeskit_take(at, "tag", arg, &tag, 0) < 0)
        return NULL;
    PyObject *r = NULL;
    if (ctx_tag(ctx, full, "verify") == 0 &&
        check_tag(at, &tag, full, ctx->owner->head.tag_len) == 0)
        r = Py_NewRef(Py_None);
    aeskit_secure_zero(full, sizeof full);
    aeskit_release(&tag);
    return r;
}

static PyObject *ctx_get_digest_size(PyObject *op, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLong(((MacCtx *)op)->owner->head.tag_len);
}

static PyObject *ctx_get_block_size(PyObject *op, void *c)
{
    (void)c;
    return PyLong_FromSize_t(((MacCtx *)op)->owner->head.mac->block_size);
}

static void ctx_dealloc(PyObject *op)
{
    MacCtx *ctx = (MacCtx *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(ctx->st, (size_t)Py_SIZE(ctx));
    Py_XDECREF(ctx->owner);
    tp->tp_free(op);
    Py_DECREF(tp);
}

/* copy.copy and copy.deepcopy are copy(): the key is shared (immutable), the
 * state is the copy's own. */
static PyObject *ctx_deepcopy(PyObject *op, PyObject *memo)
{
    (void)memo;
    return ctx_copy(op, NULL);
}

static PyMethodDef ctx_methods[] = {
    {"update", ctx_update, METH_O,
     PyDoc_STR("update($self, data, /)\n--\n\nAdd data to the message.")},
    {"copy", ctx_copy, METH_NOARGS,
     PyDoc_STR("copy($self, /)\n--\n\nAn independent copy of this context (a MACContext).")},
    {"digest", ctx_digest, METH_NOARGS,
     PyDoc_STR("digest($self, /)\n--\n\nThe tag of the data so far (bytes); the context "
               "goes on.")},
    {"hexdigest", ctx_hexdigest, METH_NOARGS,
     PyDoc_STR("hexdigest($self, /)\n--\n\ndigest() in hexadecimal (str).")},
    {"verify", ctx_verify, METH_O,
     PyDoc_STR("verify($self, tag, /)\n--\n\nCheck tag against the data so far in constant "
               "time; InvalidTag if it does not match, or is not digest_size bytes.")},
    AESKIT_NO_PICKLE_METHODS(ctx),
    {"__copy__", ctx_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\ncopy(): an independent copy of this context.")},
    {"__deepcopy__", ctx_deepcopy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\ncopy(): an independent copy of this "
               "context.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"digest_size", ctx_get_digest_size, NULL,
     PyDoc_STR("The length in bytes (int) of digest()'s tag: the AESCMAC's tag_length, as "
               "in hmac."),
     NULL},
    {"block_size", ctx_get_block_size, NULL,
     PyDoc_STR("The cipher's block size in bytes (int): 16 for AES, as in hmac."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot ctx_slots[] = {
    {Py_tp_dealloc, ctx_dealloc},
    {Py_tp_methods, ctx_methods},
    {Py_tp_getset, ctx_getset},
    {Py_tp_doc, (void *)PyDoc_STR("A MAC in progress, made by new(), in the manner of hmac: "
                                  "digest() does not end it. Not safe to share between "
                                  "threads; copy() one per thread (copy.copy and "
                                  "copy.deepcopy do the same). It cannot be pickled "
                                  "(TypeError).")},
    {0, NULL},
};

static PyType_Spec ctx_spec = {
    .name = "aeskit.MACContext",
    .basicsize = sizeof(MacCtx),
    .itemsize = 1,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = ctx_slots,
};

/* ---- for the benchmark (py/bench.c) ----------------------------------- */

const struct aeskit_mac *aeskit_mac_of(PyObject *obj, const void **key_state)
{
    if (!aeskit_is_keyobj(obj, mac_new))
        return NULL;
    const MacObject *self = (const MacObject *)obj;
    *key_state = self->ks;
    return self->head.mac;
}

/* ---- the types ---------------------------------------------------------- */

int aeskit_add_mac_types(PyObject *module, aeskit_state *st)
{
    for (size_t i = 0; aeskit_macs[i] != NULL; i++) {
        const struct aeskit_mac *d = aeskit_macs[i];
        if (d->tag_lengths == 0 || (d->tag_lengths & ~(uint32_t)0x1fffe) != 0 ||
            d->key_state == 0 || d->state == 0 || d->mac == NULL || d->init == NULL ||
            d->update == NULL || d->final == NULL) {
            PyErr_Format(PyExc_SystemError, "aeskit: the %s descriptor is wrong", d->name);
            return -1;
        }
        const aeskit_keyobj_shape shape = {.tag_lengths = d->tag_lengths};
        if (aeskit_add_key_type(module, st, d, d->type_name, d->doc, mac_new, mac_methods,
                                &shape, offsetof(MacObject, ks) + d->key_state) == NULL)
            return -1;
    }
    st->mac_ctx_type = aeskit_add_type(module, st, &ctx_spec, NULL);
    return st->mac_ctx_type == NULL ? -1 : 0;
}
