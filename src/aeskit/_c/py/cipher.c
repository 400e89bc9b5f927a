/*
 * cipher.c: one Python type per block-cipher mode descriptor (aeskit_ciphers,
 * modes/registry.c: AESECB .. AESCTR) and their streaming CipherContext.
 * Nothing here asks which mode it serves: the descriptor says the call
 * shape (key sizes and count, whether an iv comes first, whole blocks) and
 * gives the engine.
 *
 * A key object holds its expanded keys, built once by the chosen backend
 * and never changed, so it is safe to share between threads; the GIL is
 * released around large calls. A context holds one stream state and is
 * not safe to share: a second thread entering it while the first works
 * gets RuntimeError instead of a repeated keystream.
 */
#include <stddef.h>

#include "api.h"
#include "batch.h"
#include "buffers.h"
#include "common.h"
#include "guard.h"
#include "keyobj.h"
#include "modes/block.h"
#include "update.h"

#define MAX_KEYS 2

typedef struct {
    aeskit_keyobj head;             /* head.cipher: the descriptor; head.pkcs7:
                                       padding='pkcs7' (a mode with pkcs7) */
    aeskit_key keys[MAX_KEYS];      /* d->n_keys of them (the type's size) */
} KeyObject;
AESKIT_KEYOBJ_LAYOUT(KeyObject, keys);

typedef struct {
    PyObject_VAR_HEAD               /* ob_size: bytes of st */
    KeyObject *owner;
    aeskit_guard guard;
    uint64_t total;                 /* bytes in so far, for min_len/max_len */
    uint64_t st[];                  /* owner->head.cipher->state bytes */
} CtxObject;

/* ---- PKCS#7 padding (a mode whose descriptor has pkcs7) ---------------- */

/* Every failure to remove padding, whatever went wrong, says only this. */
#define BAD_PADDING "invalid padding"

/* One-shot output size with padding: encryption adds 1 to 16 bytes;
 * decryption takes a positive number of blocks and writes at most len - 1
 * bytes in their place, so it is given len. 0 with ValueError when the
 * data cannot be padded data. */
static size_t padded_out_len(aeskit_at at, int enc, size_t len)
{
    if (enc)
        return len / 16 * 16 + 16;
    if (len == 0 || len % 16 != 0) {
        aeskit_error(PyExc_ValueError, at, BAD_PADDING);
        return 0;
    }
    return len;
}

/* ---- key objects ------------------------------------------------------ */

AESKIT_COLD static int len_error(aeskit_at at, const struct aeskit_cipher *d, const char *arg,
                                 uint64_t len, int final)
{
    if (final && len < d->min_len)
        return aeskit_error(PyExc_ValueError, at, "%s must be at least %u bytes%s for %s, "
                            "got %llu", arg, (unsigned)d->min_len, final == 2 ? " in all" : "",
                            d->name, (unsigned long long)len);
    return aeskit_err_limit(aeskit_state_of(aeskit_at_type(at))->LimitExceeded, at, arg,
                            d->max_len, final == 0 ? " per data unit, in all" : " per data unit",
                            len);
}

/* 0 if a data unit of len bytes (the argument arg) is within d's limits;
 * else -1 with ValueError (too short, when final: 2 at finalize) or
 * LimitExceeded. */
static inline int check_len(aeskit_at at, const struct aeskit_cipher *d, const char *arg,
                            uint64_t len, int final)
{
    if ((final && len < d->min_len) || (d->max_len != 0 && len > d->max_len))
        return len_error(at, d, arg, len, final);
    return 0;
}

static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    const struct aeskit_cipher *d = aeskit_desc_of(aeskit_state_of(type), type);
    const aeskit_keyobj_shape shape = {
        .key_sizes = d->key_sizes, .n_keys = d->n_keys, .padding = d->pkcs7 != NULL,
        .distinct_keys = d->distinct_keys,
    };
    Py_buffer kb;
    KeyObject *self = (KeyObject *)aeskit_keyobj_new(type, args, kwds, &shape, &kb);
    if (self == NULL)
        return NULL;
    const size_t each = (size_t)kb.len / d->n_keys;
    for (unsigned i = 0; i < d->n_keys; i++)
        self->head.impl->set_key(&self->keys[i], (const uint8_t *)kb.buf + each * i, each);
    aeskit_release(&kb);
    return (PyObject *)self;
}

static int check_iv(aeskit_at at, const struct aeskit_cipher *d, PyObject *obj, Py_buffer *iv)
{
    if (aeskit_take(at, d->iv_name, obj, iv, 0) < 0)
        return -1;
    if (iv->len != 16) {
        aeskit_err_length(at, d->iv_name, 16, 16, "", (size_t)iv->len);
        aeskit_release(iv);
        return -1;
    }
    return 0;
}

/* d's update, the GIL released above the threshold; the bytes written. */
static size_t run(const struct aeskit_cipher *d, void *st, uint8_t *dst,
                  const uint8_t *src, size_t len)
{
    size_t done;
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        done = d->update(st, dst, src, len);
        Py_END_ALLOW_THREADS
    } else {
        done = d->update(st, dst, src, len);
    }
    return done;
}

/* The error for a stream that cannot end as it stands; n is what finish
 * reported with it. */
AESKIT_COLD static void finish_error(aeskit_at at, const struct aeskit_cipher *d,
                                     enum aeskit_finish end, size_t n)
{
    if (end == AESKIT_FINISH_PADDING) {
        aeskit_error(PyExc_ValueError, at, BAD_PADDING);
        return;
    }
    assert(end == AESKIT_FINISH_PARTIAL);
    aeskit_error(PyExc_ValueError, at, "%zu bytes of an incomplete block are left: %s data "
                 "must be a multiple of 16 bytes%s", n, d->name,
                 d->pkcs7 != NULL ? ", or the key object made with padding='pkcs7'" : "");
}

/* One message whole, touching no Python object: d's one-shot kernel, or
 * its stream from init to finish (the padding added or checked and
 * removed). *n: the bytes written; with an error, what finish reported. */
static enum aeskit_finish one_message(const KeyObject *self, int enc, const uint8_t *iv,
                                      uint8_t *dst, const uint8_t *src, size_t len, size_t *n)
{
    const struct aeskit_cipher *d = self->head.cipher;
    if (d->oneshot != NULL && !self->head.pkcs7) {
        d->oneshot(self->keys, enc, iv, dst, src, len);
        *n = len;
        return AESKIT_FINISH_OK;
    }
    uint64_t st[AESKIT_CIPHER_STATE_MAX / 8];
    size_t tail;
    d->init(st, self->keys, enc, iv);
    if (self->head.pkcs7)
        d->pkcs7(st);
    const size_t done = d->update(st, dst, src, len);
    const enum aeskit_finish end = d->finish(st, dst + done, &tail);
    aeskit_secure_zero(st, d->state);
    *n = end == AESKIT_FINISH_OK ? done + tail : tail;
    return end;
}

/* A message of len bytes (the argument arg) checked as one call takes it:
 * whole blocks, or padding's lengths, and the mode's limits; *out_len the
 * most it writes. -1 with an exception naming at and arg. */
static int check_message(aeskit_at at, const KeyObject *self, int enc, const char *arg,
                         size_t len, size_t *out_len)
{
    const struct aeskit_cipher *d = self->head.cipher;
    *out_len = len;
    if (self->head.pkcs7) {
        if ((*out_len = padded_out_len(at, enc, len)) == 0)
            return -1;
    } else if (d->whole_blocks && len % 16 != 0) {
        return aeskit_err_multiple(at, arg, 16, len,
                                   d->pkcs7 != NULL ? "pad it, or make the key object with "
                                                      "padding='pkcs7'" : NULL);
    }
    return check_len(at, d, arg, len, 1);
}

/* encrypt/decrypt(,_into): [iv,] data[, buf], by position or keyword */
AESKIT_INLINE PyObject *oneshot(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                                PyObject *kwnames, int enc, int into, const char *fname)
{
    KeyObject *self = (KeyObject *)op;
    const struct aeskit_cipher *d = self->head.cipher;
    const int has_iv = d->iv_name != NULL;
    const int want = has_iv + 1 + into;
    PyObject *const *args = argv, *slots[3];
    if (kwnames != NULL || nargs != want) {
        const char *const names[3] = {d->iv_name, "data", "buf"};
        const aeskit_params params = {fname, names + !has_iv, want, want, want};
        if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, slots) < 0)
            return NULL;
        args = slots;
    }
    const aeskit_at at = AESKIT_AT(op, fname);
    Py_buffer iv = {0}, data = {0}, out = {0};
    PyObject *result = NULL;
    if (has_iv && check_iv(at, d, args[0], &iv) < 0)
        return NULL;
    if (aeskit_take(at, "data", args[has_iv], &data, AESKIT_BUF_TEXT) < 0)
        goto done;
    const size_t len = (size_t)data.len;
    size_t out_len;
    if (check_message(at, self, enc, "data", len, &out_len) < 0)
        goto done;
    uint8_t *dst;
    if (aeskit_output(at, into ? args[has_iv + 1] : NULL, &data, out_len, &out, &result,
                      &dst) < 0)
        goto done;
    size_t n;
    enum aeskit_finish end;
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        end = one_message(self, enc, iv.buf, dst, data.buf, len, &n);
        Py_END_ALLOW_THREADS
    } else {
        end = one_message(self, enc, iv.buf, dst, data.buf, len, &n);
    }
    if (end != AESKIT_FINISH_OK) {
        /* A failed decryption releases nothing: it wrote plaintext. */
        aeskit_secure_zero(dst, out_len);
        finish_error(at, d, end, n);
        Py_CLEAR(result);
        goto done;
    }
    assert(n == out_len || (self->head.pkcs7 && !enc && n < out_len));
    if (into)
        result = PyLong_FromSize_t(n);
    else if (n < out_len)
        _PyBytes_Resize(&result, (Py_ssize_t)n);   /* NULL and MemoryError on failure */
done:
    aeskit_release(&iv);
    aeskit_release(&data);
    aeskit_release(&out);
    return result;
}

AESKIT_CALL_METHODS(key, , oneshot)

/* ---- batches (py/batch.h) ----------------------------------------------- */

static int batch_job(const void *key, int enc, aeskit_batch_msg *m)
{
    size_t n;
    const enum aeskit_finish end = one_message(key, enc, m->iv, m->dst, m->src, m->len, &n);
    m->out_len = n;
    return end == AESKIT_FINISH_OK;
}

static int batch_check(aeskit_batch *b, const void *key, int enc, size_t i)
{
    const KeyObject *self = key;
    const struct aeskit_cipher *d = self->head.cipher;
    aeskit_batch_msg *m = &b->msgs[i];
    char name[64];
    if (d->iv_name != NULL && m->iv_len != 16) {
        PyOS_snprintf(name, sizeof name, "%ss[%zu]", d->iv_name, i);
        return aeskit_err_length(b->at, name, 16, 16, "", m->iv_len);
    }
    /* The message's name ("data[i]") is made only when it fails: a
     * formatted name per message cost ~40 ns, half of a batch of short
     * messages. check_message depends on nothing but its arguments, so
     * the second call fails as the first did, naming the message. */
    if (check_message(b->at, self, enc, "data", m->len, &m->out_len) == 0)
        return 0;
    PyErr_Clear();
    return check_message(b->at, self, enc, aeskit_batch_name(name, sizeof name, "data", i),
                         m->len, &m->out_len);
}

/* A chunk of messages: encryptions (and a decryption that is one, CTR's)
 * in groups the mode takes at once (encrypt_many), else one message at a
 * time. */
static size_t batch_many(const void *key, int enc, aeskit_batch_msg *ms, uint8_t *ok, size_t n)
{
    const KeyObject *self = key;
    const struct aeskit_cipher *d = self->head.cipher;
    size_t failed = 0;
    if ((!enc && !d->decrypt_is_encrypt) || d->encrypt_many == NULL) {
        for (size_t i = 0; i < n; i++) {
            ok[i] = (uint8_t)batch_job(key, enc, &ms[i]);
            failed += !ok[i];
        }
        return failed;
    }
    aeskit_block_item items[AESKIT_CIPHER_MANY];
    for (size_t i = 0; i < n;) {
        const size_t k = n - i < AESKIT_CIPHER_MANY ? n - i : AESKIT_CIPHER_MANY;
        for (size_t j = 0; j < k; j++) {
            const aeskit_batch_msg *m = &ms[i + j];
            items[j] = (aeskit_block_item){m->iv, m->dst, m->src, m->len};
            ok[i + j] = 1;
        }
        d->encrypt_many(self->keys, self->head.pkcs7, items, k);
        i += k;
    }
    return 0;
}

static const aeskit_batch_ops batch_ops = {.check = batch_check, .many = batch_many};

/* encrypt_many / decrypt_many ([ivs | tweaks,] data, *, threads=1) and
 * their packed forms: each message one call's, under its own iv or tweak.
 * The packed form may run exactly in place: each output is as long as its
 * input, or (padding removed) shorter. */
static PyObject *batch_call(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames, int enc, int into, const char *fname)
{
    const KeyObject *self = (const KeyObject *)op;
    const struct aeskit_cipher *d = self->head.cipher;
    /* the side's argument, iv_name's plural ("ivs", "tweaks"): copied, not
     * formatted, as a snprintf cost a packed call ~5% of its fixed cost */
    char side[32];
    if (d->iv_name != NULL) {
        const size_t l = strlen(d->iv_name);
        assert(l + 2 <= sizeof side);
        memcpy(side, d->iv_name, l);
        side[l] = 's', side[l + 1] = '\0';
    }
    const aeskit_batch_shape shape = {
        .data = "data", .side = d->iv_name != NULL ? side : NULL, .data_flags = AESKIT_BUF_TEXT,
    };
    return aeskit_batch_call(op, argv, nargs, kwnames, fname, into, &shape, &batch_ops, enc,
                             !self->head.pkcs7 || !enc, PyExc_ValueError,
                             "removing the padding");
}

AESKIT_CALL_METHODS(key, _many, batch_call)

/* ---- data units laid end to end (a descriptor with sectors) ------------ */

/* first_sector as 16 little-endian bytes, if it and the last of n sectors
 * from it fit in 128 bits; else -1 with TypeError or LimitExceeded. A
 * number under 2**63, as nearly all are, takes no Python calls. */
static int sector_number(aeskit_at at, PyTypeObject *tp, PyObject *first, size_t n,
                         uint8_t out[16])
{
    if (!PyLong_Check(first))
        return aeskit_err_type(at, "first_sector", "an int", first, NULL);
    int overflow;
    const long long small = PyLong_AsLongLongAndOverflow(first, &overflow);
    if (small == -1 && PyErr_Occurred())
        return -1;
    int outside = overflow < 0 || (overflow == 0 && small < 0);
    if (overflow == 0 && !outside) {
        /* 2**63 + n - 1 sectors fit in 128 bits */
        memset(out, 0, 16);
        for (unsigned i = 0; i < 8; i++)
            out[i] = (uint8_t)((unsigned long long)small >> (8 * i));
        return 0;
    }
    if (!outside) {
        PyObject *span = PyLong_FromSize_t(n - 1);
        PyObject *last = span != NULL ? PyNumber_Add(first, span) : NULL;
        PyObject *bits = last != NULL ? PyObject_CallMethod(last, "bit_length", NULL) : NULL;
        Py_XDECREF(span);
        Py_XDECREF(last);
        if (bits == NULL)
            return -1;
        const long nbits = PyLong_AsLong(bits);
        Py_DECREF(bits);
        if (nbits == -1 && PyErr_Occurred())
            return -1;
        outside = nbits > 128;
    }
    if (outside)
        return aeskit_error(aeskit_state_of(tp)->LimitExceeded, at, "first_sector must be "
                            "from 0 to 2**128 - %zu with %zu sector%s (sector numbers are "
                            "128 bits), got %S", n, n, n == 1 ? "" : "s", first);
    PyObject *b = PyObject_CallMethod(first, "to_bytes", "is", 16, "little");
    if (b == NULL)
        return -1;
    memcpy(out, PyBytes_AS_STRING(b), 16);
    Py_DECREF(b);
    return 0;
}

/* encrypt/decrypt_sectors(,_into)(first_sector, data[, buf], *,
 * sector_size=4096), parsed by hand: a 512-byte sector's whole glue costs
 * about what the generic keyword parser alone would. The calls by position,
 * with or without sector_size=, take no call to parse. */
static PyObject *sectors_call(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames, int enc, int into, const char *fname)
{
    static const char *const names[2][4] = {
        {"first_sector", "data", "sector_size"},
        {"first_sector", "data", "buf", "sector_size"},
    };
    KeyObject *self = (KeyObject *)op;
    const struct aeskit_cipher *d = self->head.cipher;
    const int want = 2 + into;
    const aeskit_at at = AESKIT_AT(op, fname);
    PyObject *const *args = argv, *slots[4], *size = NULL;
    Py_ssize_t unit = 4096;
    if (nargs == want && kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 &&
        aeskit_name_is(PyTuple_GET_ITEM(kwnames, 0), "sector_size")) {
        size = argv[want];   /* the usual keyword call, taken here too */
    } else if (kwnames != NULL || nargs != want) {
        const aeskit_params params = {fname, names[into], want + 1, want, want};
        if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, slots) < 0)
            return NULL;
        args = slots;
        size = slots[want];
    }
    if (size != NULL) {
        if (!PyLong_Check(size)) {
            aeskit_err_type(at, "sector_size", "an int", size, NULL);
            return NULL;
        }
        unit = PyLong_AsSsize_t(size);
        if (unit == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return NULL;
            PyErr_Clear();
            unit = -1;   /* refused below, as any size out of range */
        }
    }
    if (unit < (Py_ssize_t)d->min_len || unit % 16 != 0 || (uint64_t)unit > d->max_len) {
        aeskit_error(PyExc_ValueError, at, "sector_size must be a multiple of 16 from %u to "
                     "%llu, got %S", (unsigned)d->min_len, (unsigned long long)d->max_len,
                     size != NULL ? size : Py_None);
        return NULL;
    }
    Py_buffer data = {0}, out = {0};
    PyObject *result = NULL;
    uint8_t number[16];
    if (aeskit_take(at, "data", args[1], &data, AESKIT_BUF_TEXT) < 0)
        return NULL;
    const size_t len = (size_t)data.len;
    if (len == 0 || len % (size_t)unit != 0) {
        aeskit_error(PyExc_ValueError, at, "data must be whole sectors of sector_size=%zd "
                     "bytes, at least one, got %zu bytes", unit, len);
        goto done;
    }
    if (sector_number(at, Py_TYPE(op), args[0], len / (size_t)unit, number) < 0)
        goto done;
    uint8_t *dst;
    if (aeskit_output(at, into ? args[2] : NULL, &data, len, &out, &result, &dst) < 0)
        goto done;
    if (len >= AESKIT_GIL_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        d->sectors(self->keys, enc, number, (size_t)unit, dst, data.buf, len);
        Py_END_ALLOW_THREADS
    } else {
        d->sectors(self->keys, enc, number, (size_t)unit, dst, data.buf, len);
    }
    if (into)
        result = PyLong_FromSize_t(len);
done:
    aeskit_release(&data);
    aeskit_release(&out);
    return result;
}

AESKIT_CALL_METHODS(key, _sectors, sectors_call)

static PyObject *make_context(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int enc,
                              const char *fname)
{
    KeyObject *self = (KeyObject *)op;
    const struct aeskit_cipher *d = self->head.cipher;
    const int has_iv = d->iv_name != NULL;
    if (nargs != has_iv) {
        aeskit_count_error(Py_TYPE(op), fname, has_iv, has_iv, nargs);
        return NULL;
    }
    Py_buffer iv = {0};
    if (has_iv && check_iv(AESKIT_AT(op, fname), d, args[0], &iv) < 0)
        return NULL;
    CtxObject *ctx = PyObject_NewVar(CtxObject, aeskit_state_of(Py_TYPE(op))->cipher_ctx_type,
                                     (Py_ssize_t)d->state);
    if (ctx != NULL) {
        Py_INCREF(op);
        ctx->owner = self;
        d->init(ctx->st, self->keys, enc, has_iv ? iv.buf : NULL);
        if (self->head.pkcs7)
            d->pkcs7(ctx->st);
        aeskit_guard_init(&ctx->guard, Py_TYPE(op), fname, has_iv ? d->iv_name : "");
        ctx->total = 0;
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

/* One-shot methods take their arguments by position or by keyword, as the
 * AEAD classes' do; encryptor() and decryptor() by position, likewise. Each
 * docstring starts with its signature, for help() and inspect.signature. */
#define KEY_METHOD(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, PyDoc_STR(doc)}
#define CTX_METHOD(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, PyDoc_STR(doc)}
#define SIG "\n--\n\n"

/* The one-shot, batch and context methods of a mode; ARGS: "", "iv, " or
 * "tweak, " (its 16-byte argument), ARGS2 its plural, UNIT: what the
 * one-shots take, STREAM: what a context streams, STREAM2: what each
 * message of a batch is under, for the docstrings. */
#define CALL_METHODS(ARGS, ARGS2, UNIT, STREAM, STREAM2)                                   \
    KEY_METHOD("encrypt", key_encrypt,                                                     \
               "encrypt($self, " ARGS "data)" SIG "Encrypt " UNIT "; returns the "         \
               "ciphertext (bytes)."),                                                     \
    KEY_METHOD("decrypt", key_decrypt,                                                     \
               "decrypt($self, " ARGS "data)" SIG "Decrypt " UNIT "; returns the "         \
               "plaintext (bytes)."),                                                      \
    KEY_METHOD("encrypt_into", key_encrypt_into,                                           \
               "encrypt_into($self, " ARGS "data, buf)" SIG "Encrypt into buf (data "      \
               "itself allowed); returns the count of bytes written (int)."),              \
    KEY_METHOD("decrypt_into", key_decrypt_into,                                           \
               "decrypt_into($self, " ARGS "data, buf)" SIG "Decrypt into buf (data "      \
               "itself allowed); returns the count of bytes written (int)."),              \
    CTX_METHOD("encryptor", key_encryptor,                                                 \
               "encryptor($self, " ARGS "/)" SIG "A streaming encryption" STREAM ": a "    \
               "CipherContext."),                                                          \
    CTX_METHOD("decryptor", key_decryptor,                                                 \
               "decryptor($self, " ARGS "/)" SIG "A streaming decryption" STREAM ": a "    \
               "CipherContext."),                                                          \
    KEY_METHOD("encrypt_many", key_encrypt_many,                                           \
               "encrypt_many($self, " ARGS2 "data, *, threads=1)" SIG "Encrypt each "       \
               "message of data (a list of bytes) as encrypt() would" STREAM2 "; one call, "\
               "the GIL released for the batch."),                                         \
    KEY_METHOD("decrypt_many", key_decrypt_many,                                           \
               "decrypt_many($self, " ARGS2 "data, *, threads=1)" SIG "Decrypt each "       \
               "message of data (a list of bytes) as decrypt() would" STREAM2 "."),        \
    KEY_METHOD("encrypt_many_into", key_encrypt_many_into,                                 \
               "encrypt_many_into($self, " ARGS2 "src, offsets, dst, *, threads=1)" SIG     \
               "Encrypt the messages packed in src (offsets: n + 1 int32 or int64) into "  \
               "dst (src itself allowed), back to back; returns their offsets."),          \
    KEY_METHOD("decrypt_many_into", key_decrypt_many_into,                                 \
               "decrypt_many_into($self, " ARGS2 "src, offsets, dst, *, threads=1)" SIG     \
               "Decrypt the messages packed in src into dst (src itself allowed), back to " \
               "back; returns their offsets.")

static PyMethodDef plain_methods[] = {
    CALL_METHODS("", "", "data (a multiple of 16 bytes; any length with padding='pkcs7', "
                 "which decryption checks and removes)", "", ""),
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

static PyMethodDef iv_methods[] = {
    CALL_METHODS("iv, ", "ivs, ", "data under the 16-byte iv", " from the 16-byte iv",
                 ", under its iv of ivs"),
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

/* A mode with sectors: its 16-byte argument is a tweak, one data unit per call. */
static PyMethodDef sector_methods[] = {
    CALL_METHODS("tweak, ", "tweaks, ", "one data unit under the 16-byte tweak",
                 " of one data unit", ", a data unit under its tweak of tweaks"),
    KEY_METHOD("encrypt_sectors", key_encrypt_sectors,
               "encrypt_sectors($self, first_sector, data, *, sector_size=4096)" SIG
               "Encrypt whole sectors; sector i is a data unit whose tweak is "
               "first_sector + i as a 128-bit little-endian integer. Returns bytes."),
    KEY_METHOD("decrypt_sectors", key_decrypt_sectors,
               "decrypt_sectors($self, first_sector, data, *, sector_size=4096)" SIG
               "Decrypt whole sectors, numbered as encrypt_sectors does. Returns bytes."),
    KEY_METHOD("encrypt_sectors_into", key_encrypt_sectors_into,
               "encrypt_sectors_into($self, first_sector, data, buf, *, sector_size=4096)" SIG
               "encrypt_sectors into buf (data itself allowed); returns the count (int)."),
    KEY_METHOD("decrypt_sectors_into", key_decrypt_sectors_into,
               "decrypt_sectors_into($self, first_sector, data, buf, *, sector_size=4096)" SIG
               "decrypt_sectors into buf (data itself allowed); returns the count (int)."),
    AESKIT_KEY_OBJECT_METHODS,
    {NULL, NULL, 0, NULL},
};

const struct aeskit_cipher *aeskit_cipher_of(PyObject *obj, const aeskit_key **keys)
{
    if (!aeskit_is_keyobj(obj, key_new))
        return NULL;
    *keys = ((KeyObject *)obj)->keys;
    return ((KeyObject *)obj)->head.cipher;
}

/* ---- streaming contexts ------------------------------------------------ */

static int ctx_prepare(PyObject *op, aeskit_at at, size_t len, size_t *out)
{
    const CtxObject *ctx = (const CtxObject *)op;
    const struct aeskit_cipher *d = ctx->owner->head.cipher;
    if (check_len(at, d, "data", ctx->total + len, 0) < 0)
        return -1;
    *out = d->out_len(ctx->st, len);
    return 0;
}

static void ctx_run(PyObject *op, uint8_t *dst, const uint8_t *src, size_t len)
{
    CtxObject *ctx = (CtxObject *)op;
    run(ctx->owner->head.cipher, ctx->st, dst, src, len);
    ctx->total += len;
}

static const aeskit_update_ops ctx_ops = {ctx_prepare, ctx_run};

static PyObject *ctx_update(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return aeskit_ctx_update(op, &((CtxObject *)op)->guard, a, n, 0, &ctx_ops);
}

static PyObject *ctx_update_into(PyObject *op, PyObject *const *a, Py_ssize_t n)
{
    return aeskit_ctx_update(op, &((CtxObject *)op)->guard, a, n, 1, &ctx_ops);
}

static PyObject *ctx_finalize(PyObject *op, PyObject *unused)
{
    (void)unused;
    CtxObject *ctx = (CtxObject *)op;
    const struct aeskit_cipher *d = ctx->owner->head.cipher;
    const aeskit_at at = AESKIT_AT(op, "finalize");
    if (aeskit_guard_enter(&ctx->guard, op, at.fn) < 0)
        return NULL;
    uint8_t tail[AESKIT_FINISH_MAX] = {0};   /* a PKCS#7 decryptor reads it */
    size_t n = 0;
    const int short_unit = ctx->total < d->min_len;
    const enum aeskit_finish end = short_unit ? AESKIT_FINISH_OK
                                              : d->finish(ctx->st, tail, &n);
    ctx->guard.finalized = 1;
    aeskit_secure_zero(ctx->st, (size_t)Py_SIZE(ctx));
    aeskit_guard_leave(&ctx->guard);
    PyObject *r = NULL;
    if (short_unit)
        check_len(at, d, "data", ctx->total, 2);
    else if (end != AESKIT_FINISH_OK)
        finish_error(at, d, end, n);
    else
        r = PyBytes_FromStringAndSize((const char *)tail, (Py_ssize_t)n);
    aeskit_secure_zero(tail, sizeof tail);
    return r;
}

static void ctx_dealloc(PyObject *op)
{
    CtxObject *ctx = (CtxObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    aeskit_secure_zero(ctx->st, (size_t)Py_SIZE(ctx));
    Py_XDECREF(ctx->owner);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef ctx_methods[] = {
    {"update", (PyCFunction)(void (*)(void))ctx_update, METH_FASTCALL,
     PyDoc_STR("update($self, data, /)" SIG "Process data; returns what is ready (bytes; "
               "ECB/CBC: whole blocks only, the rest waits for the next call; a decryptor "
               "with padding='pkcs7' also holds back the last whole block; XTS: holds "
               "back the last whole block too, for ciphertext stealing).")},
    {"update_into", (PyCFunction)(void (*)(void))ctx_update_into, METH_FASTCALL,
     PyDoc_STR("update_into($self, data, buf, /)" SIG "Like update, writing into buf (at "
               "least the bytes this call produces; data itself allowed). Returns the count "
               "(int).")},
    {"finalize", ctx_finalize, METH_NOARGS,
     PyDoc_STR("finalize($self, /)" SIG "End the stream (bytes). ECB/CBC: raises ValueError "
               "if an incomplete block is left; with padding='pkcs7', returns the padded last "
               "block (encryptor) or the last block's data (decryptor; "
               "ValueError('invalid padding') if the padding is wrong); XTS: returns the "
               "bytes held back, or raises ValueError for a data unit under 16 bytes. Any "
               "later call raises AlreadyFinalized.")},
    AESKIT_STREAM_METHODS,
    {NULL, NULL, 0, NULL},
};

static PyType_Slot ctx_slots[] = {
    {Py_tp_dealloc, ctx_dealloc},
    {Py_tp_methods, ctx_methods},
    {Py_tp_doc, (void *)PyDoc_STR("A streaming encryption or decryption of one message, "
                                  "made by a block mode's encryptor() or decryptor(); not "
                                  "safe to share between threads. It cannot be pickled or "
                                  "copied (TypeError): a copy would repeat its keystream.")},
    {0, NULL},
};

static PyType_Spec ctx_spec = {
    .name = "aeskit.CipherContext",
    .basicsize = sizeof(CtxObject),
    .itemsize = 1,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = ctx_slots,
};

int aeskit_add_cipher_types(PyObject *module, aeskit_state *st)
{
    for (size_t i = 0; aeskit_ciphers[i] != NULL; i++) {
        const struct aeskit_cipher *d = aeskit_ciphers[i];
        if (d->n_keys < 1 || d->n_keys > MAX_KEYS || d->key_sizes == 0 ||
            (d->key_sizes & ~AESKIT_KEY_ANY) != 0) {
            PyErr_Format(PyExc_SystemError, "aeskit: the %s descriptor's keys are wrong",
                         d->name);
            return -1;
        }
        if (d->state == 0 || d->state > AESKIT_CIPHER_STATE_MAX || d->init == NULL ||
            d->out_len == NULL || d->update == NULL || d->finish == NULL) {
            PyErr_Format(PyExc_SystemError, "aeskit: the %s descriptor's stream is wrong (a "
                         "state of 1 to AESKIT_CIPHER_STATE_MAX bytes and every entry point)",
                         d->name);
            return -1;
        }
        const aeskit_keyobj_shape shape = {.padding = d->pkcs7 != NULL};
        PyMethodDef *methods = d->sectors != NULL    ? sector_methods
                               : d->iv_name != NULL ? iv_methods
                                                    : plain_methods;
        if (aeskit_add_key_type(module, st, d, d->type_name, d->doc, key_new, methods, &shape,
                                offsetof(KeyObject, keys) + sizeof(aeskit_key) * d->n_keys) ==
            NULL)
            return -1;
    }
    st->cipher_ctx_type = aeskit_add_type(module, st, &ctx_spec, NULL);
    if (st->cipher_ctx_type == NULL)
        return -1;
    return 0;
}
