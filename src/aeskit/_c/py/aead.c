/*
 * aead.c: one Python type per AEAD descriptor (aeskit_aeads, modes/registry.c:
 * AESGCM, AESOCB3, ...) with pyca/cryptography's names, argument order and
 * semantics, plus _into methods and, for the modes that stream, the
 * AEADContext. Nothing here asks which mode it serves: the descriptor
 * (modes/aead.h) states the call shape, the limits and the entry points.
 *
 * A failed decryption releases nothing: one-shot calls drop the plaintext
 * they built, _into calls find what they wrote zeroed; the tags are
 * compared in constant time, by aeskit_aead_open_verified and
 * aeskit_aead_finish_verified (modes/verify.c), the glue's only opens.
 * Every length limit is checked before any work.
 */
#include <stddef.h>

#include "api.h"
#include "batch.h"
#include "buffers.h"
#include "common.h"
#include "guard.h"
#include "keyobj.h"
#include "modes/aead.h"
#include "update.h"

typedef struct {
    aeskit_keyobj head;             /* head.aead: the descriptor */
    uint64_t ks[];                  /* d->key_state bytes (modes/aead.h: 8-byte aligned) */
} AeadObject;
AESKIT_KEYOBJ_LAYOUT(AeadObject, ks);

typedef struct {
    PyObject_VAR_HEAD               /* ob_size: bytes of st */
    AeadObject *owner;
    aeskit_guard guard;
    int enc;
    int updated;                    /* data seen: AAD is closed */
    int have_tag;
    uint8_t tag[16];
    uint64_t aad_total, data_total, max_data;
    uint64_t st[];                  /* owner->head.aead->stream_state bytes */
} AeadCtx;

static inline int check_nonce(aeskit_at at, const struct aeskit_aead *d,
                              const Py_buffer *nonce)
{
    const size_t n = (size_t)nonce->len;
    if (n >= d->nonce_min && n <= d->nonce_max)
        return 0;
    aeskit_err_length(at, "nonce", d->nonce_min, d->nonce_max, d->nonce_note, n);
    return -1;
}

AESKIT_COLD static int limit_error(aeskit_at at, const struct aeskit_aead *d, uint64_t aad_total,
                                   uint64_t max_data, uint64_t data_total, int stream)
{
    PyObject *limit = aeskit_state_of(aeskit_at_type(at))->LimitExceeded;
    const char *per = stream ? " per message, across its calls" : " per message";
    if (data_total > max_data) {
        /* below the mode's own limit: CCM's length field, set by the nonce */
        if (max_data < d->max_data)
            per = stream ? " with this nonce's length, across the message's calls"
                         : " with this nonce's length (a shorter nonce takes more)";
        return aeskit_err_limit(limit, at, "data", max_data, per, data_total);
    }
    assert(aad_total > d->max_aad);
    return aeskit_err_limit(limit, at, "associated data", d->max_aad, per, aad_total);
}

/* 0, or -1 with aeskit.LimitExceeded; stream: the totals are a stream's so
 * far. */
static inline int check_limits(aeskit_at at, const struct aeskit_aead *d, uint64_t aad_total,
                               uint64_t max_data, uint64_t data_total, int stream)
{
    if (data_total <= max_data && aad_total <= d->max_aad)
        return 0;
    return limit_error(at, d, aad_total, max_data, data_total, stream);
}

/* ---- key objects ------------------------------------------------------ */

static PyObject *aead_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    const struct aeskit_aead *d = aeskit_desc_of(aeskit_state_of(type), type);
    const aeskit_keyobj_shape shape = {
        .key_sizes = d->key_sizes, .n_keys = d->n_keys, .tag_lengths = d->tag_lengths,
        .tag_positional = d->tag_positional,
    };
    Py_buffer kb;
    AeadObject *self = (AeadObject *)aeskit_keyobj_new(type, args, kwds, &shape, &kb);
    if (self == NULL)
        return NULL;
    d->key_init(self->ks, self->head.impl, kb.buf, (size_t)kb.len, self->head.tag_len);
    aeskit_release(&kb);
    return (PyObject *)self;
}

/* bit_length may be left out (or None) where the type takes keys of one
 * size only (XAES256GCM): pyca's ChaCha20Poly1305.generate_key() has no
 * argument. */
static PyObject *aead_generate_key(PyObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"bit_length", NULL};
    const struct aeskit_aead *d =
        aeskit_desc_of(aeskit_state_of((PyTypeObject *)cls), (PyTypeObject *)cls);
    PyObject *arg = NULL;
    char fmt[48];
    if (!PyArg_ParseTupleAndKeywords(args, kwds,
                                     aeskit_format(fmt, sizeof fmt, "|O", (PyTypeObject *)cls,
                                                   "generate_key"),
                                     kwlist, &arg))
        return NULL;
    const aeskit_at at = AESKIT_AT(cls, "generate_key");
    size_t len[3], n = aeskit_key_lengths(d->key_sizes, d->n_keys, len), bytes = len[0];
    if ((arg == NULL || arg == Py_None) && n != 1) {
        if (arg == NULL) {   /* CPython's words for a missing argument */
            PyErr_Format(PyExc_TypeError,
                         "%s.generate_key() missing required argument 'bit_length' (pos 1)",
                         aeskit_public_name((PyTypeObject *)cls));
            return NULL;
        }
        aeskit_err_type(at, "bit_length", "an int", arg, NULL);
        return NULL;
    }
    if (arg != NULL && arg != Py_None) {
        if (!PyLong_Check(arg)) {
            aeskit_err_type(at, "bit_length", "an int", arg, NULL);
            return NULL;
        }
        long bits = PyLong_AsLong(arg);
        if (bits == -1 && PyErr_Occurred())
            return NULL;
        size_t ok = 0;
        for (size_t i = 0; i < n; i++)
            ok |= bits >= 0 && (size_t)bits == 8 * len[i];
        if (!ok) {
            aeskit_err_bit_length(at, d->key_sizes, d->n_keys, bits);
            return NULL;
        }
        bytes = (size_t)bits / 8;
    }
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(os, "urandom", "n", (Py_ssize_t)bytes);
    Py_DECREF(os);
    return r;
}

/* ---- one-shot ----------------------------------------------------------- */

/* The associated data of one call, as taken from its argument: n views and
 * their spans, and their total length. */
typedef struct {
    PyObject *items;            /* a list's items, as a tuple held for the call */
    Py_buffer *views;           /* &one, or n of them on the heap (a list) */
    aeskit_span *spans;         /* &one_span, or likewise */
    Py_buffer one;
    aeskit_span one_span;
    size_t n;
    uint64_t total;
} ad_args;

static inline void ad_init(ad_args *a)
{
    a->items = NULL;
    a->views = &a->one;
    a->spans = &a->one_span;
    a->one.obj = NULL;
    a->n = 0;
    a->total = 0;
}

static inline void ad_release(ad_args *a)
{
    for (size_t i = 0; i < a->n; i++)
        aeskit_release(&a->views[i]);
    if (a->views != &a->one) {
        PyMem_Free(a->views);
        PyMem_Free(a->spans);
    }
    Py_XDECREF(a->items);
}

/* The list form of ad_take (below), out of line: only SIV-shaped modes.
 * The items are taken into a tuple first: taking a buffer can run Python
 * code, which could change the list under a loop over it. */
static int ad_take_list(aeskit_at at, const struct aeskit_aead *d, PyObject *obj, ad_args *a)
{
    if (!PyList_Check(obj) && !PyTuple_Check(obj))
        return aeskit_err_type(at, "associated_data", "a list of bytes-like objects, or None",
                               obj, PyObject_CheckBuffer(obj) ? "for one item, pass a list "
                               "of it: [associated_data]" : NULL);
    if ((a->items = PySequence_Tuple(obj)) == NULL)
        return -1;
    const size_t count = (size_t)PyTuple_GET_SIZE(a->items);
    if (count > d->max_ad)
        return aeskit_error(PyExc_ValueError, at, "associated_data must have at most %zu "
                            "items, got %zu", d->max_ad, count);
    if (count == 0)
        return 0;
    a->views = PyMem_Calloc(count, sizeof *a->views);
    a->spans = PyMem_Calloc(count, sizeof *a->spans);
    if (a->views == NULL || a->spans == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(a->items, (Py_ssize_t)i);
        if (PyObject_GetBuffer(item, &a->views[i], PyBUF_SIMPLE) < 0)
            return aeskit_err_buffer(at, "associated_data", (Py_ssize_t)i, item,
                                     AESKIT_BUF_TEXT);
        a->n = i + 1;
        a->spans[i].p = a->views[i].buf;
        a->spans[i].len = (size_t)a->views[i].len;
        a->total += a->spans[i].len;
    }
    return 0;
}

/* The associated data of a call: None, one buffer, or (ad_list) a list of
 * at most max_ad buffers. a is ad_init'ed; ad_release it, whatever this
 * returns. */
static inline int ad_take(aeskit_at at, const struct aeskit_aead *d, PyObject *obj,
                          ad_args *a)
{
    if (obj == Py_None)
        return 0;
    if (d->ad_list)
        return ad_take_list(at, d, obj, a);
    if (aeskit_take(at, "associated_data", obj, &a->one,
                    AESKIT_BUF_OR_NONE | AESKIT_BUF_TEXT) < 0)
        return -1;
    a->one_span.p = a->one.buf;
    a->one_span.len = (size_t)a->one.len;
    a->total = a->one_span.len;
    a->n = 1;
    return 0;
}

AESKIT_INLINE PyObject *aead_oneshot(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, int enc, int into, const char *fname)
{
    static const char *const with_nonce[] = {"nonce", "data", "associated_data", "buf"};
    static const char *const no_nonce[] = {"data", "associated_data", "buf"};
    AeadObject *self = (AeadObject *)op;
    const struct aeskit_aead *d = self->head.aead;
    const int has_nonce = d->nonce_max > 0;
    const int nnames = has_nonce + 2 + into;
    PyObject *const *a = args, *slots[4];
    if (kwnames != NULL || nargs != nnames) {
        const aeskit_params params = {fname, has_nonce ? with_nonce : no_nonce, nnames, nnames,
                                      nnames};
        if (aeskit_parse(Py_TYPE(op), &params, args, nargs, kwnames, slots) < 0)
            return NULL;
        a = slots;
    }
    PyObject *const *arg = a + has_nonce;   /* data, associated_data[, buf] */
    const aeskit_at at = AESKIT_AT(op, fname);
    Py_buffer nonce = {0}, data = {0}, out = {0};
    ad_args ad;
    PyObject *result = NULL;
    uint8_t tag[16], want[16];
    int ok = 1;
    ad_init(&ad);
    if (has_nonce && (aeskit_take(at, "nonce", a[0], &nonce, 0) < 0 ||
                      check_nonce(at, d, &nonce) < 0))
        goto done;
    if (aeskit_take(at, "data", arg[0], &data, AESKIT_BUF_TEXT) < 0 ||
        ad_take(at, d, arg[1], &ad) < 0)
        goto done;
    const uint64_t aad_len = ad.total;
    const size_t len = (size_t)data.len, t = self->head.tag_len;
    if (!enc && len < t) {
        aeskit_error(aeskit_state_of(Py_TYPE(op))->InvalidTag, at, "data (%zu byte%s) is "
                     "shorter than the tag (%zu bytes)", len, len == 1 ? "" : "s", t);
        goto done;
    }
    const size_t body = enc ? len : len - t, out_len = enc ? len + t : len - t;
    if (check_limits(at, d, aad_len, aeskit_aead_max_data(d, (size_t)nonce.len), body, 0) < 0)
        goto done;
    uint8_t *dst;
    if (aeskit_output(at, into ? arg[2] : NULL, &data, out_len, &out, &result, &dst) < 0)
        goto done;
    /* Where the body is read and written: the tag goes before it or after. */
    const uint8_t *in = (const uint8_t *)data.buf + (d->tag_first && !enc ? t : 0);
    uint8_t *ct = dst + (d->tag_first && enc ? t : 0);
    if (!enc)
        memcpy(want, d->tag_first ? (const uint8_t *)data.buf : in + body, t);
    if (d->tag_first && in != ct && aeskit_meets(in, body, ct, body)) {
        /* In place with the tag first, the body moves by the tag's length:
         * move it before the mode runs, which wants dst == src or apart.
         * Associated data in the way would be overwritten first. */
        for (size_t i = 0; i < ad.n; i++) {
            if (aeskit_meets(ad.spans[i].p, ad.spans[i].len, ct, body)) {
                aeskit_error(PyExc_ValueError, at, "buf overlaps associated_data: with the tag "
                             "first, pass a buffer apart from both");
                Py_CLEAR(result);
                goto done;
            }
        }
        memmove(ct, in, body);
        in = ct;
    }
    const aeskit_aead_msg msg = {
        .nonce = has_nonce ? nonce.buf : NULL,
        .nonce_len = (size_t)nonce.len,
        .ad = ad.spans,
        .n_ad = ad.n,
    };
    if (body + aad_len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        if (enc)
            d->seal(self->ks, &msg, ct, in, body, tag);
        else
            ok = aeskit_aead_open_verified(d, self->ks, &msg, ct, in, body, want, t);
        Py_END_ALLOW_THREADS
    } else if (enc) {
        d->seal(self->ks, &msg, ct, in, body, tag);
    } else {
        ok = aeskit_aead_open_verified(d, self->ks, &msg, ct, in, body, want, t);
    }
    if (enc) {
        memcpy(d->tag_first ? dst : dst + body, tag, t);
    } else if (!ok) {
        /* the open zeroed the body it wrote */
        Py_CLEAR(result);
        aeskit_error(aeskit_state_of(Py_TYPE(op))->InvalidTag, at, "authentication failed: "
                     "wrong key, nonce, tag, data or associated data");
        goto done;
    }
    if (into)
        result = PyLong_FromSize_t(out_len);
done:
    aeskit_secure_zero(tag, sizeof tag);
    aeskit_release(&nonce);
    aeskit_release(&data);
    aeskit_release(&out);
    ad_release(&ad);
    return result;
}

AESKIT_CALL_METHODS(aead, , aead_oneshot)

/* ---- batches (py/batch.h) ----------------------------------------------- */

/* A chunk of a batch's messages, in groups the mode takes at once
 * (seal_many, open_many; one call per message where it has none): sealed,
 * or opened and their tags compared (a message shorter than the tag fails,
 * as a wrong tag does). dst is apart from everything the message reads. */
static size_t aead_many_job(const void *key, int enc, aeskit_batch_msg *ms, uint8_t *ok,
                            size_t n)
{
    const AeadObject *self = key;
    const struct aeskit_aead *d = self->head.aead;
    const size_t t = self->head.tag_len, first = d->tag_first ? t : 0;
    aeskit_aead_item items[AESKIT_AEAD_MANY];
    uint8_t tags[AESKIT_AEAD_MANY][16], verdict[AESKIT_AEAD_MANY];
    if (enc) {   /* every message seals: groups of the records as they come */
        for (size_t i = 0; i < n;) {
            const size_t k = n - i < AESKIT_AEAD_MANY ? n - i : AESKIT_AEAD_MANY;
            const aeskit_batch_msg *m = &ms[i];
            for (size_t j = 0; j < k; j++)
                items[j] = (aeskit_aead_item){
                    {m[j].iv, m[j].iv_len, m[j].ad, m[j].n_ad}, m[j].dst + first, m[j].src,
                    m[j].len, NULL,
                };
            aeskit_aead_seal_many(d, self->ks, items, k, tags);
            for (size_t j = 0; j < k; j++) {
                uint8_t *to = d->tag_first ? m[j].dst : m[j].dst + m[j].len;
                if (t == 16)
                    memcpy(to, tags[j], 16);   /* inline, where a length t calls libc */
                else
                    memcpy(to, tags[j], t);
            }
            memset(ok + i, 1, k);
            /* a full tag is all output; a cut one's rest is not given out */
            if (t < 16)
                aeskit_secure_zero(tags, k * sizeof tags[0]);
            i += k;
        }
        return 0;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n;) {
        size_t k = 0, at[AESKIT_AEAD_MANY];
        for (; i < n && k < AESKIT_AEAD_MANY; i++) {
            aeskit_batch_msg *m = &ms[i];
            if (m->len < t) {
                ok[i] = 0;
                failed++;
                continue;
            }
            const size_t body = m->len - t;
            items[k] = (aeskit_aead_item){
                {m->iv, m->iv_len, m->ad, m->n_ad}, m->dst, m->src + first, body,
                d->tag_first ? m->src : m->src + body,
            };
            at[k++] = i;
        }
        failed += aeskit_aead_open_many_verified(d, self->ks, items, k, t, verdict);
        for (size_t j = 0; j < k; j++)
            ok[at[j]] = verdict[j];
    }
    return failed;
}

/* Every message's checks, as the one-shot call's: its nonce, its limits.
 * A nonce length is checked when it differs from the last message's (the
 * packed form's are all one), with the data limit it sets. */
static int aead_check_all(aeskit_batch *b, const void *key, int enc)
{
    const AeadObject *self = key;
    const struct aeskit_aead *d = self->head.aead;
    const size_t t = self->head.tag_len;
    size_t nonce_len = SIZE_MAX;
    uint64_t max_data = 0;
    char name[64];
    for (size_t i = 0; i < b->n; i++) {
        aeskit_batch_msg *m = &b->msgs[i];
        if (m->iv_len != nonce_len) {
            if (d->nonce_max > 0 && (m->iv_len < d->nonce_min || m->iv_len > d->nonce_max))
                return aeskit_err_length(b->at,
                                         aeskit_batch_name(name, sizeof name, "nonces", i),
                                         d->nonce_min, d->nonce_max, d->nonce_note, m->iv_len);
            nonce_len = m->iv_len;
            max_data = aeskit_aead_max_data(d, nonce_len);
        }
        if (!enc && m->len < t) {
            m->out_len = 0;
            continue;
        }
        uint64_t ad_total = m->n_ad == 1 ? m->ad->len : 0;
        for (size_t j = 0; m->n_ad > 1 && j < m->n_ad; j++)
            ad_total += m->ad[j].len;
        const size_t body = enc ? m->len : m->len - t;
        if (check_limits(b->at, d, ad_total, max_data, body, 0) < 0)
            return -1;
        m->out_len = enc ? m->len + t : body;
    }
    return 0;
}

static const aeskit_batch_ops aead_batch_ops = {
    .many = aead_many_job, .check_all = aead_check_all, .exact = 1,
};

/* encrypt_many / decrypt_many ([nonces,] data, associated_data=None, *,
 * threads=1) and their packed forms ([nonces,] src, offsets, dst,
 * associated_data=None, ad_offsets=None, *, [on_failure="raise",]
 * threads=1). */
static PyObject *aead_many(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames, int enc, int into, const char *fname)
{
    static const char *const names[2][2][8] = {
        {{"nonces", "data", "associated_data", "threads"},
         {"nonces", "src", "offsets", "dst", "associated_data", "ad_offsets", "threads",
          "on_failure"}},
        {{"nonces", "data", "associated_data", "threads"},
         {"nonces", "src", "offsets", "dst", "associated_data", "ad_offsets", "threads"}},
    };
    AeadObject *self = (AeadObject *)op;
    const struct aeskit_aead *d = self->head.aead;
    const int has_nonce = d->nonce_max > 0;
    /* without a nonce, the names from the second on */
    const int n = (into ? 7 + !enc : 4) - !has_nonce, npos = (into ? 6 : 3) - !has_nonce;
    const int nreq = (into ? 4 : 2) - !has_nonce;
    const aeskit_params params = {fname, names[enc][into] + !has_nonce, n, npos, nreq};
    PyObject *a[8] = {NULL};
    if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, a + !has_nonce) < 0)
        return NULL;
    const aeskit_at at = AESKIT_AT(op, fname);
    const aeskit_batch_shape shape = {
        .data = into ? "src" : "data",
        .side = has_nonce ? "nonces" : NULL,
        .ad = d->ad_list ? AESKIT_BATCH_AD_LISTS : AESKIT_BATCH_AD_ONE,
        .max_ad = d->max_ad,
        .data_flags = AESKIT_BUF_TEXT,
    };
    PyObject *invalid = aeskit_state_of(Py_TYPE(op))->InvalidTag, *r = NULL;
    aeskit_batch b;
    aeskit_batch_init(&b, at);
    unsigned threads;
    int zero = 0;
    if (!into) {
        if (aeskit_batch_threads(at, a[3], &threads) < 0 ||
            aeskit_batch_collect(&b, &shape, a[0], a[1], a[2]) < 0)
            goto done;
        r = aeskit_batch_seq(&b, &aead_batch_ops, self, enc, threads, invalid, "decryption");
        goto done;
    }
    aeskit_offsets o;
    if (aeskit_batch_threads(at, a[6], &threads) < 0 ||
        (!enc && aeskit_batch_on_failure(at, a[7], &zero) < 0) ||
        aeskit_batch_collect_packed(&b, &shape, a[0], a[1], a[2], a[4], a[5], &o) < 0)
        goto done;
    r = aeskit_batch_packed(&b, &aead_batch_ops, self, enc, threads, &o, a[2], a[3], 0, zero,
                            invalid, "decryption");
done:
    aeskit_batch_release(&b);
    return r;
}

AESKIT_CALL_METHODS(aead, _many, aead_many)

/* ---- streaming ---------------------------------------------------------- */

static PyObject *aead_context(PyObject *op, PyObject *nonceobj, int enc)
{
    AeadObject *self = (AeadObject *)op;
    const struct aeskit_aead *d = self->head.aead;
    const char *maker = enc ? "encryptor" : "decryptor";
    const aeskit_at at = AESKIT_AT(op, maker);
    Py_buffer nonce;
    if (aeskit_take(at, "nonce", nonceobj, &nonce, 0) < 0)
        return NULL;
    if (check_nonce(at, d, &nonce) < 0) {
        aeskit_release(&nonce);
        return NULL;
    }
    AeadCtx *ctx = PyObject_NewVar(AeadCtx, aeskit_state_of(Py_TYPE(op))->aead_ctx_type,
                                   (Py_ssize_t)d->stream_state);
    if (ctx != NULL) {
        Py_INCREF(op);
        ctx->owner = self;
        ctx->enc = enc;
        ctx->updated = 0;
        ctx->have_tag = 0;
        ctx->aad_total = ctx->data_total = 0;
        ctx->max_data = aeskit_aead_max_data(d, (size_t)nonce.len);
        aeskit_guard_init(&ctx->guard, Py_TYPE(op), maker, "nonce");
        d->init(ctx->st, self->ks, enc, nonce.buf, (size_t)nonce.len);
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

#define SIG "\n--\n\n"

/* Each docstring starts with its signature, for help() and inspect.signature. */
#define ONESHOT_METHODS(args, many, packed, genkey)                                      \
    {"encrypt", (PyCFunction)(void (*)(void))aead_encrypt, METH_FASTCALL | METH_KEYWORDS, \
     PyDoc_STR("encrypt($self, " args ")" SIG "The sealed message (bytes): ciphertext and " \
               "tag.")},                                                                 \
    {"decrypt", (PyCFunction)(void (*)(void))aead_decrypt, METH_FASTCALL | METH_KEYWORDS, \
     PyDoc_STR("decrypt($self, " args ")" SIG "The plaintext (bytes), or InvalidTag "    \
               "(nothing is returned on failure).")},                                    \
    {"encrypt_into", (PyCFunction)(void (*)(void))aead_encrypt_into,                     \
     METH_FASTCALL | METH_KEYWORDS,                                                      \
     PyDoc_STR("encrypt_into($self, " args ", buf)" SIG "Write the sealed message into " \
               "buf (data itself allowed); returns len(data) + tag_length.")},           \
    {"decrypt_into", (PyCFunction)(void (*)(void))aead_decrypt_into,                     \
     METH_FASTCALL | METH_KEYWORDS,                                                      \
     PyDoc_STR("decrypt_into($self, " args ", buf)" SIG "Write the plaintext into buf "  \
               "and return its length; on InvalidTag those bytes of buf are zeroed.")},  \
    GENKEY_##genkey, BATCH_METHODS(many, packed), AESKIT_KEY_OBJECT_METHODS

/* generate_key for a type of several key sizes, and of one (its argument
 * optional): ONESHOT_METHODS' genkey, SIZES or ONE */
#define GENERATE_KEY(sig, doc)                                                           \
    {"generate_key", (PyCFunction)(void (*)(void))aead_generate_key,                     \
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,                                          \
     PyDoc_STR("generate_key($type, " sig ")" SIG "A random key (bytes) " doc            \
               ", from os.urandom.")}
#define GENKEY_SIZES GENERATE_KEY("bit_length", "of one of the allowed sizes")
#define GENKEY_ONE GENERATE_KEY("bit_length=None", "of the one size this type takes "    \
                                "(bit_length, if given, must be it)")

/* The batch forms (docs/batch.md): many, the sequence form's arguments;
 * packed, the packed form's. */
#define BATCH_METHOD(name, fn, sig, doc)                                                 \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS,               \
     PyDoc_STR(name "($self, " sig ")" SIG doc)}
#define BATCH_METHODS(many, packed)                                                      \
    BATCH_METHOD("encrypt_many", aead_encrypt_many,                                      \
                 many "=None, *, threads=1",                                             \
                 "Seal each message (a list of bytes): one call, the GIL released for the " \
                 "batch."),                                                              \
    BATCH_METHOD("decrypt_many", aead_decrypt_many,                                      \
                 many "=None, *, threads=1",                                             \
                 "Open each message (a list of bytes); if any fails, InvalidTag with its " \
                 "indices in .failed, and nothing is returned."),                        \
    BATCH_METHOD("encrypt_many_into", aead_encrypt_many_into,                            \
                 packed ", *, threads=1",                                    \
                 "Seal messages packed in src (offsets: n + 1 int32 or int64) into dst, " \
                 "back to back; returns their offsets, of the type of offsets."),        \
    BATCH_METHOD("decrypt_many_into", aead_decrypt_many_into,                            \
                 packed ", *, threads=1, on_failure='raise'",                \
                 "Open packed messages into dst; returns their offsets. on_failure='zero' " \
                 "returns a bytearray of 1 (opened) or 0 (failed, its output zeroed).")

#define STREAM_METHODS(genkey)                                                           \
    {                                                                                    \
        ONESHOT_METHODS(NONCE_ONE, NONCE_MANY, NONCE_PACKED, genkey),                   \
        {"encryptor", aead_encryptor, METH_O,                                            \
         PyDoc_STR("encryptor($self, nonce, /)" SIG "A streaming encryption: an "        \
                   "AEADContext.")},                                                     \
        {"decryptor", aead_decryptor, METH_O,                                            \
         PyDoc_STR("decryptor($self, nonce, /)" SIG "A streaming decryption: an "        \
                   "AEADContext. Its output is UNAUTHENTICATED until "                   \
                   "finalize_with_tag() succeeds: do not act on it before then.")},      \
        {NULL, NULL, 0, NULL},                                                           \
    }
#define ONESHOT_ONLY(args, many, packed, genkey)                                         \
    {ONESHOT_METHODS(args, many, packed, genkey), {NULL, NULL, 0, NULL}}
/* each form's arguments, with a nonce and without */
#define NONCE_ONE "nonce, data, associated_data"
#define NONCE_MANY "nonces, data, associated_data"
#define NONCE_PACKED "nonces, src, offsets, dst, associated_data=None, ad_offsets=None"
#define NO_NONCE_ONE "data, associated_data"
#define NO_NONCE_MANY "data, associated_data"
#define NO_NONCE_PACKED "src, offsets, dst, associated_data=None, ad_offsets=None"

static PyMethodDef stream_sizes[] = STREAM_METHODS(SIZES);
static PyMethodDef stream_one[] = STREAM_METHODS(ONE);
static PyMethodDef oneshot_sizes[] = ONESHOT_ONLY(NONCE_ONE, NONCE_MANY, NONCE_PACKED, SIZES);
static PyMethodDef oneshot_one[] = ONESHOT_ONLY(NONCE_ONE, NONCE_MANY, NONCE_PACKED, ONE);
static PyMethodDef no_nonce_sizes[] =
    ONESHOT_ONLY(NO_NONCE_ONE, NO_NONCE_MANY, NO_NONCE_PACKED, SIZES);
static PyMethodDef no_nonce_one[] =
    ONESHOT_ONLY(NO_NONCE_ONE, NO_NONCE_MANY, NO_NONCE_PACKED, ONE);

/* The methods of a type that streams, of one that does not, and of one
 * without a nonce; [1] where it takes keys of one size. */
static PyMethodDef *const stream_methods[2] = {stream_sizes, stream_one};
static PyMethodDef *const oneshot_methods[2] = {oneshot_sizes, oneshot_one};
static PyMethodDef *const no_nonce_methods[2] = {no_nonce_sizes, no_nonce_one};

static PyObject *actx_aad(PyObject *op, PyObject *arg)
{
    AeadCtx *ctx = (AeadCtx *)op;
    const struct aeskit_aead *d = ctx->owner->head.aead;
    const aeskit_at at = AESKIT_AT(op, "authenticate_additional_data");
    if (aeskit_guard_enter(&ctx->guard, op, at.fn) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_buffer aad = {0};
    if (ctx->updated) {
        aeskit_error(PyExc_ValueError, at, "associated data must all come before the first "
                     "update(): authenticate all of it first");
        goto done;
    }
    if (aeskit_take(at, "data", arg, &aad, AESKIT_BUF_TEXT) < 0 ||
        check_limits(at, d, ctx->aad_total + (uint64_t)aad.len, ctx->max_data, 0, 1) < 0)
        goto done;
    ctx->aad_total += (uint64_t)aad.len;
    if ((size_t)aad.len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        d->aad(ctx->st, aad.buf, (size_t)aad.len);
        Py_END_ALLOW_THREADS
    } else {
        d->aad(ctx->st, aad.buf, (size_t)aad.len);
    }
    result = Py_NewRef(Py_None);
done:
    aeskit_release(&aad);
    aeskit_guard_leave(&ctx->guard);
    return result;
}

static int actx_prepare(PyObject *op, aeskit_at at, size_t len, size_t *out)
{
    const AeadCtx *ctx = (const AeadCtx *)op;
    const struct aeskit_aead *d = ctx->owner->head.aead;
    *out = d->update_len != NULL ? d->update_len(ctx->st, len) : len;
    return check_limits(at, d, 0, ctx->max_data, ctx->data_total + (uint64_t)len, 1);
}

static void actx_run(PyObject *op, uint8_t *dst, const uint8_t *src, size_t len)
{
    AeadCtx *ctx = (AeadCtx *)op;
    const struct aeskit_aead *d = ctx->owner->head.aead;
    ctx->updated = 1;
    ctx->data_total += (uint64_t)len;
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        d->update(ctx->st, dst, src, len);
        Py_END_ALLOW_THREADS
    } else {
        d->update(ctx->st, dst, src, len);
    }
}

static const aeskit_update_ops actx_ops = {actx_prepare, actx_run};

static PyObject *actx_update(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return aeskit_ctx_update(op, &((AeadCtx *)op)->guard, a, n, 0, &actx_ops);
}
static PyObject *actx_update_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return aeskit_ctx_update(op, &((AeadCtx *)op)->guard, a, n, 1, &actx_ops);
}

/* Ends the stream: the held-back bytes into a new bytes object. An
 * encryptor (want NULL) writes its full tag into ctx->tag; a decryptor
 * checks want (tag_len bytes) and sets *ok, 0 meaning failed (then the
 * bytes object holds zeros, for the caller to drop). Marks the context
 * finalized and wipes its state. */
static PyObject *actx_finish(AeadCtx *ctx, const uint8_t *want, int *ok)
{
    const struct aeskit_aead *d = ctx->owner->head.aead;
    uint8_t tail[16];
    size_t n;
    if (want == NULL) {
        n = d->finish(ctx->st, tail, ctx->tag);
        *ok = 1;
    } else {
        *ok = aeskit_aead_finish_verified(d, ctx->st, tail, want, ctx->owner->head.tag_len, &n);
    }
    assert(n < 16);
    ctx->guard.finalized = 1;
    aeskit_secure_zero(ctx->st, (size_t)Py_SIZE(ctx));
    PyObject *r = PyBytes_FromStringAndSize((const char *)tail, (Py_ssize_t)n);
    aeskit_secure_zero(tail, sizeof tail);
    return r;
}

static PyObject *actx_finalize(PyObject *op, PyObject *unused)
{
    (void)unused;
    AeadCtx *ctx = (AeadCtx *)op;
    if (aeskit_guard_enter(&ctx->guard, op, "finalize") < 0)
        return NULL;
    PyObject *r = NULL;
    if (!ctx->enc) {
        aeskit_error(PyExc_ValueError, AESKIT_AT(op, "finalize"), "a decryptor ends "
                     "with finalize_with_tag(tag), which checks the tag");
    } else {
        int ok;
        r = actx_finish(ctx, NULL, &ok);
        ctx->have_tag = r != NULL;
    }
    aeskit_guard_leave(&ctx->guard);
    return r;
}

static PyObject *actx_finalize_with_tag(PyObject *op, PyObject *arg)
{
    AeadCtx *ctx = (AeadCtx *)op;
    const aeskit_at at = AESKIT_AT(op, "finalize_with_tag");
    if (aeskit_guard_enter(&ctx->guard, op, at.fn) < 0)
        return NULL;
    PyObject *r = NULL;
    Py_buffer want = {0};
    const unsigned t = ctx->owner->head.tag_len;
    int ok;
    if (ctx->enc) {
        aeskit_error(PyExc_ValueError, at, "an encryptor ends with finalize(), and then its "
                     "tag is in .tag; finalize_with_tag(tag) ends a decryptor");
        goto done;
    }
    if (aeskit_take(at, "tag", arg, &want, 0) < 0)
        goto done;
    if ((size_t)want.len != t) {
        /* Too long or too short alike: a length is no secret, and the
         * stream is left as it was. */
        aeskit_err_length(at, "tag", t, t, "", (size_t)want.len);
        goto done;
    }
    r = actx_finish(ctx, want.buf, &ok);
    if (r != NULL && !ok) {
        Py_CLEAR(r);
        aeskit_error(aeskit_state_of(Py_TYPE(op))->InvalidTag, at, "authentication failed: "
                     "the data before this call must not be trusted either");
    }
done:
    aeskit_release(&want);
    aeskit_guard_leave(&ctx->guard);
    return r;
}

static PyObject *actx_get_tag(PyObject *op, void *c)
{
    (void)c;
    AeadCtx *ctx = (AeadCtx *)op;
    if (!ctx->have_tag) {
        aeskit_error(aeskit_state_of(Py_TYPE(op))->NotYetFinalized, AESKIT_AT(op, "tag"),
                     ctx->enc ? "the tag is there after finalize(): call it first"
                              : "a decryptor has no tag to give: it checks one, in "
                                "finalize_with_tag(tag)");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)ctx->tag, ctx->owner->head.tag_len);
}

static void actx_dealloc(PyObject *op)
{
    AeadCtx *ctx = (AeadCtx *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(ctx->st, (size_t)Py_SIZE(ctx));
    aeskit_secure_zero(ctx->tag, sizeof ctx->tag);
    Py_XDECREF(ctx->owner);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef actx_methods[] = {
    {"authenticate_additional_data", actx_aad, METH_O,
     PyDoc_STR("authenticate_additional_data($self, data, /)" SIG "Associated data; any "
               "number of calls, all before the first update().")},
    {"update", (PyCFunction)(void (*)(void))actx_update, METH_FASTCALL,
     PyDoc_STR("update($self, data, /)" SIG "What is ready (bytes). GCM: all of it; OCB3: "
               "whole blocks, the rest at the end. A decryptor's output is unauthenticated "
               "until finalize_with_tag().")},
    {"update_into", (PyCFunction)(void (*)(void))actx_update_into, METH_FASTCALL,
     PyDoc_STR("update_into($self, data, buf, /)" SIG "Like update, writing into buf (data "
               "itself allowed); returns the count (int).")},
    {"finalize", actx_finalize, METH_NOARGS,
     PyDoc_STR("finalize($self, /)" SIG "End an encryption (bytes held back); the tag is "
               "then in .tag.")},
    {"finalize_with_tag", actx_finalize_with_tag, METH_O,
     PyDoc_STR("finalize_with_tag($self, tag, /)" SIG "End a decryption (bytes held back): "
               "ValueError for a tag of another length than tag_length (the stream goes "
               "on); InvalidTag unless tag authenticates everything, in which case the "
               "output of every update() may be trusted.")},
    AESKIT_STREAM_METHODS,
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef actx_getset[] = {
    {"tag", actx_get_tag, NULL, PyDoc_STR("The tag (bytes, tag_length of them) of an encryption, once "
               "finalize() has returned; before that, and on a decryptor (which checks a "
               "tag in finalize_with_tag instead), NotYetFinalized."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot actx_slots[] = {
    {Py_tp_dealloc, actx_dealloc},
    {Py_tp_methods, actx_methods},
    {Py_tp_getset, actx_getset},
    {Py_tp_doc, (void *)PyDoc_STR("A streaming AEAD encryption or decryption, made by "
                                  "encryptor() or decryptor(). A decryptor's output is "
                                  "unauthenticated until finalize_with_tag() succeeds. Not "
                                  "safe to share between threads. It cannot be pickled or "
                                  "copied (TypeError): a copy would reuse its nonce.")},
    {0, NULL},
};

static PyType_Spec actx_spec = {
    .name = "aeskit.AEADContext",
    .basicsize = sizeof(AeadCtx),
    .itemsize = 1,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = actx_slots,
};

/* ---- for the benchmark (py/bench.c) ----------------------------------- */

const struct aeskit_aead *aeskit_aead_of(PyObject *obj, const void **key_state,
                                         unsigned *tag_len)
{
    if (!aeskit_is_keyobj(obj, aead_new))
        return NULL;
    const AeadObject *self = (const AeadObject *)obj;
    *key_state = self->ks;
    *tag_len = self->head.tag_len;
    return self->head.aead;
}

/* ---- the types ---------------------------------------------------------- */

/* What the glue relies on in a descriptor, checked when the module loads
 * (asserts would vanish from release builds); NULL, or what is wrong. */
static const char *check_descriptor(const struct aeskit_aead *d)
{
    const int streams = d->init != NULL;
    if (d->n_keys < 1 || (d->key_sizes & ~AESKIT_KEY_ANY) != 0 || d->key_sizes == 0)
        return "key sizes";
    if (d->tag_lengths == 0 || (d->tag_lengths & ~AESKIT_TAGS(1, 16)) != 0)
        return "tag lengths (1..16)";
    if (d->nonce_min > d->nonce_max)
        return "nonce range";
    if (d->max_ad < 1 || (!d->ad_list && d->max_ad != 1))
        return "max_ad (1 unless ad_list)";
    if (d->key_state == 0 || d->key_init == NULL || d->seal == NULL || d->open == NULL)
        return "per-key state and one-shot entry points";
    if (streams != (d->aad != NULL) || streams != (d->update != NULL) ||
        streams != (d->finish != NULL) || streams != (d->stream_state != 0))
        return "streaming: all of init, aad, update, finish and stream_state, or none";
    if (streams && (d->nonce_max == 0 || d->ad_list))
        return "a stream starts from a nonce and takes AAD calls";
    return NULL;
}

int aeskit_add_aead_types(PyObject *module, aeskit_state *st)
{
    st->InvalidTag = PyErr_NewExceptionWithDoc(
        "aeskit.InvalidTag", "Authentication failed: the tag does not match.",
        PyExc_ValueError, NULL);
    st->NotYetFinalized = PyErr_NewExceptionWithDoc(
        "aeskit.NotYetFinalized", "The tag was asked for before finalize().", NULL, NULL);
    st->InvalidUnwrap = st->InvalidTag == NULL ? NULL : PyErr_NewExceptionWithDoc(
        "aeskit.InvalidUnwrap", "A wrapped key failed its integrity check, or has the wrong "
        "length: nothing was unwrapped.", st->InvalidTag, NULL);
    if (st->InvalidTag == NULL || st->NotYetFinalized == NULL || st->InvalidUnwrap == NULL ||
        PyModule_AddObjectRef(module, "InvalidUnwrap", st->InvalidUnwrap) < 0 ||
        PyModule_AddObjectRef(module, "InvalidTag", st->InvalidTag) < 0 ||
        PyModule_AddObjectRef(module, "NotYetFinalized", st->NotYetFinalized) < 0)
        return -1;
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++) {
        const struct aeskit_aead *d = aeskit_aeads[i];
        const int streams = d->init != NULL;
        const char *bad = check_descriptor(d);
        if (bad != NULL) {
            PyErr_Format(PyExc_SystemError, "aeskit: the %s descriptor is wrong: %s", d->name,
                         bad);
            return -1;
        }
        const aeskit_keyobj_shape shape = {.tag_lengths = d->tag_lengths};
        size_t lengths[3];
        const int one = aeskit_key_lengths(d->key_sizes, d->n_keys, lengths) == 1;
        PyMethodDef *methods = d->nonce_max == 0 ? no_nonce_methods[one]
                               : streams         ? stream_methods[one]
                                                 : oneshot_methods[one];
        if (aeskit_add_key_type(module, st, d, d->type_name, d->doc, aead_new, methods, &shape,
                                offsetof(AeadObject, ks) + d->key_state) == NULL)
            return -1;
    }
    st->aead_ctx_type = aeskit_add_type(module, st, &actx_spec, NULL);
    if (st->aead_ctx_type == NULL)
        return -1;
    return 0;
}
