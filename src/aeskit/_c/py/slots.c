/*
 * slots.c: one backend's slots called directly, and the boundaries its
 * kernels hand over at. For the tests, not public API: every mandatory slot
 * is compared with portable's on every backend, including those that no
 * public mode uses yet (the ctr slot's LE32 counters, cbc_mac, xts, a GHASH
 * key built for a few blocks), so that no kernel ships unchecked. An
 * optional slot gets its entry here with its first kernel (ctr_cbcmac's:
 * _ctr_cbcmac_slot; polyval rides on _ghash_slot; gcmsiv short_msg takes a
 * whole message, so AESGCMSIV is its entry: test_gcmsiv sweeps every
 * length it takes and past it on each backend). Two more entry points
 * serve the tests of lengths no buffer can have: an AEAD's data limit for a
 * nonce length, and CCM's formatting (B0, the AAD length's encoding).
 *
 *   _ctr_slot(backend, key, kind, counter, data) -> (out, next_counter)
 *   _cbc_mac_slot(backend, key, mac, data) -> mac
 *   _xts_slot(backend, key, encrypt, tweak, data) -> (out, next_tweak)
 *   _ghash_slot(backend, h, acc, data, max_blocks[, polyval]) -> acc
 *   _gcmsiv_open_slot(backend, key, h, counter, data[, max_blocks])
 *       -> (out, next_counter, acc, done); max_blocks: the key's (any call's by
 *       default; GCM-SIV builds its per-message key for poly_blocks)
 *   _ghash_key_extent(backend, h, max_blocks) -> (from, used, written_outside)
 *   _ctr_cbcmac_slot(backend, key, mac_dst, counter, mac, data[, ctr_key])
 *       -> (out, next_counter, mac, blocks_done), or None without the slot
 *   _cbc_x_slot(backend, key, ivs, data, out) -> (out | None, next_ivs)
 *   backend_constants(backend) -> dict[str, int]
 *   mode_constants(aead) -> dict[str, int]
 *   _aead_max_data(aead, nonce_len) -> int
 *   _ccm_header(nonce, tag_length, data_len, aad_len) -> bytes
 *
 * key is an AES key (16, 24 or 32 bytes), data whole 16-byte blocks, and
 * the other buffers 16 bytes.
 */
#include <string.h>

#include "buffers.h"
#include "common.h"
#include "dispatch.h"
#include "modes/aead.h"
#include "modes/block.h"
#include "modes/ccm.h"
#include "modes/gcmsiv.h"

static int ctr_kind(const char *name, enum aeskit_ctr *kind)
{
    static const struct { const char *name; enum aeskit_ctr kind; } kinds[] = {
        {"be128", AESKIT_CTR_BE128}, {"be32", AESKIT_CTR_BE32}, {"le32", AESKIT_CTR_LE32},
        {"be128_secret", AESKIT_CTR_BE128_SECRET},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(name, kinds[i].name) == 0) {
            *kind = kinds[i].kind;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "counter kind must be 'be128', 'be32', 'le32' or 'be128_secret', not '%s'",
                 name);
    return -1;
}

/* What every slot call takes: a backend, an AES key expanded with it (or
 * none: key NULL), a 16-byte block and whole blocks of data. */
typedef struct {
    const struct aeskit_impl *impl;
    aeskit_key key;
    uint8_t block[16];
    Py_buffer data;
    PyObject *out;   /* n blocks of output, when asked for */
} slot_call;

static int slot_begin(PyObject *m, slot_call *c, const char *backend, PyObject *key,
                      PyObject *block, PyObject *data, int with_out)
{
    Py_buffer kb = {0}, bb = {0};
    c->data.obj = NULL;
    c->out = NULL;
    c->impl = key != NULL ? aeskit_key_argument(PyModule_GetState(m), AESKIT_NOWHERE, "key", key,
                                                backend, AESKIT_KEY_ANY, 1, &kb)
                          : aeskit_resolve_backend(PyModule_GetState(m), AESKIT_NOWHERE,
                                                   backend);
    if (c->impl == NULL)
        return -1;
    if (key != NULL) {
        c->impl->set_key(&c->key, kb.buf, (size_t)kb.len);
        aeskit_release(&kb);
    }
    if (aeskit_get_buffer(block, &bb, 0, "block") < 0 ||
        aeskit_get_buffer(data, &c->data, 0, "data") < 0)
        goto fail;
    if (bb.len != 16 || c->data.len % 16 != 0) {
        PyErr_SetString(PyExc_ValueError, "need a 16-byte block and whole 16-byte blocks");
        goto fail;
    }
    memcpy(c->block, bb.buf, 16);
    aeskit_release(&bb);
    if (with_out && (c->out = PyBytes_FromStringAndSize(NULL, c->data.len)) == NULL)
        goto fail;
    return 0;
fail:
    aeskit_release(&bb);
    aeskit_release(&c->data);
    aeskit_secure_zero(&c->key, sizeof c->key);
    return -1;
}

/* Ends a call: (out, block) or block alone. */
static PyObject *slot_end(slot_call *c)
{
    PyObject *r = c->out != NULL
                      ? Py_BuildValue("(Oy#)", c->out, (const char *)c->block, (Py_ssize_t)16)
                      : PyBytes_FromStringAndSize((const char *)c->block, 16);
    Py_XDECREF(c->out);
    aeskit_release(&c->data);
    aeskit_secure_zero(&c->key, sizeof c->key);
    return r;
}

static uint8_t *slot_dst(slot_call *c)
{
    return (uint8_t *)PyBytes_AS_STRING(c->out);
}

static size_t slot_blocks(const slot_call *c)
{
    return (size_t)c->data.len / 16;
}

static PyObject *slots_ctr(PyObject *m, PyObject *args)
{
    const char *backend, *kind_name;
    PyObject *key, *counter, *data;
    enum aeskit_ctr kind;
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOsOO:_ctr_slot", &backend, &key, &kind_name, &counter, &data)
        || ctr_kind(kind_name, &kind) < 0 || slot_begin(m, &c, backend, key, counter, data, 1) < 0)
        return NULL;
    c.impl->ctr(&c.key, kind, c.block, slot_dst(&c), c.data.buf, slot_blocks(&c));
    return slot_end(&c);
}

static PyObject *slots_cbc_mac(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *key, *mac, *data;
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOOO:_cbc_mac_slot", &backend, &key, &mac, &data) ||
        slot_begin(m, &c, backend, key, mac, data, 0) < 0)
        return NULL;
    c.impl->cbc_mac(&c.key, c.block, c.data.buf, slot_blocks(&c));
    return slot_end(&c);
}

static PyObject *slots_xts(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *key, *tweak, *data;
    PyObject *enc;
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOO!OO:_xts_slot", &backend, &key, &PyBool_Type, &enc, &tweak,
                          &data) ||
        slot_begin(m, &c, backend, key, tweak, data, 1) < 0)
        return NULL;
    c.impl->xts(&c.key, enc == Py_True, c.block, slot_dst(&c), c.data.buf, slot_blocks(&c));
    return slot_end(&c);
}

static PyObject *slots_ghash(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *h, *acc, *data;
    Py_ssize_t max_blocks;
    int polyval = 0;
    Py_buffer hb = {0};
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOOOn|p:_ghash_slot", &backend, &h, &acc, &data, &max_blocks,
                          &polyval) ||
        slot_begin(m, &c, backend, NULL, acc, data, 0) < 0)
        return NULL;
    aeskit_ghash_key *hk = NULL;
    if (aeskit_get_buffer(h, &hb, 0, "h") == 0) {
        if (hb.len != 16 || max_blocks < 0 || (size_t)max_blocks < slot_blocks(&c))
            PyErr_SetString(PyExc_ValueError, "need a 16-byte h and max_blocks >= the blocks");
        else if (polyval && c.impl->polyval == NULL)
            PyErr_Format(PyExc_ValueError, "%s has no polyval slot", c.impl->name);
        else if ((hk = PyMem_Malloc(sizeof *hk)) == NULL)
            PyErr_NoMemory();
    }
    if (hk != NULL) {
        c.impl->ghash_key(hk, hb.buf, (size_t)max_blocks);
        (polyval ? c.impl->polyval : c.impl->ghash)(hk, c.block, c.data.buf, slot_blocks(&c));
        aeskit_secure_zero(hk, sizeof *hk);
        PyMem_Free(hk);
    }
    aeskit_release(&hb);
    if (hk == NULL) {   /* an error is set: end the call without a result */
        aeskit_release(&c.data);
        return NULL;
    }
    return slot_end(&c);
}

static PyObject *slots_gcmsiv_open(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *key, *h, *ctr, *data;
    Py_ssize_t max_blocks = -1;
    Py_buffer hb = {0};
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOOOO|n:_gcmsiv_open_slot", &backend, &key, &h, &ctr, &data,
                          &max_blocks) ||
        slot_begin(m, &c, backend, key, ctr, data, 1) < 0)
        return NULL;
    aeskit_ghash_key *hk = NULL;
    if (aeskit_get_buffer(h, &hb, 0, "h") == 0) {
        if (hb.len != 16)
            PyErr_SetString(PyExc_ValueError, "need a 16-byte h");
        else if (max_blocks == 0 || max_blocks < -1)
            PyErr_SetString(PyExc_ValueError, "need max_blocks >= 1");
        else if (c.impl->gcmsiv == NULL || c.impl->gcmsiv->open == NULL)
            PyErr_Format(PyExc_ValueError, "%s has no gcmsiv_open slot", c.impl->name);
        else if ((hk = PyMem_Malloc(sizeof *hk)) == NULL)
            PyErr_NoMemory();
    }
    if (hk == NULL) {
        aeskit_release(&hb);
        Py_XDECREF(c.out);
        aeskit_release(&c.data);
        aeskit_secure_zero(&c.key, sizeof c.key);
        return NULL;
    }
    uint8_t acc[16] = {0};
    c.impl->ghash_key(hk, hb.buf, max_blocks < 0 ? AESKIT_GHASH_ANY : (size_t)max_blocks);
    aeskit_release(&hb);
    const size_t done = c.impl->gcmsiv->open(&c.key, hk, c.block, acc, slot_dst(&c),
                                             c.data.buf, slot_blocks(&c));
    aeskit_secure_zero(hk, sizeof *hk);
    PyMem_Free(hk);
    PyObject *r = Py_BuildValue("(y#y#y#n)", PyBytes_AS_STRING(c.out), (Py_ssize_t)(16 * done),
                                (const char *)c.block, (Py_ssize_t)16, (const char *)acc,
                                (Py_ssize_t)16, (Py_ssize_t)done);
    Py_DECREF(c.out);
    aeskit_release(&c.data);
    aeskit_secure_zero(&c.key, sizeof c.key);
    return r;
}

static PyObject *slots_ctr_cbcmac(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *key, *mac_dst, *counter, *mac, *data, *ctr_key = NULL;
    Py_buffer mb = {0}, kb = {0};
    aeskit_key kc;
    slot_call c;
    if (!PyArg_ParseTuple(args, "sOO!OOO|O:_ctr_cbcmac_slot", &backend, &key, &PyBool_Type,
                          &mac_dst, &counter, &mac, &data, &ctr_key) ||
        slot_begin(m, &c, backend, key, counter, data, 1) < 0)
        return NULL;
    PyObject *r = NULL;
    kc = c.key;   /* the CTR key: the MAC's, unless ctr_key is given */
    if (ctr_key != NULL && aeskit_get_buffer(ctr_key, &kb, 0, "ctr_key") == 0) {
        if (kb.len != (Py_ssize_t)(4 * (c.key.rounds - 6)))
            PyErr_SetString(PyExc_ValueError, "ctr_key must be as long as key");
        else
            c.impl->set_key(&kc, kb.buf, (size_t)kb.len);
        aeskit_release(&kb);
    }
    if (!PyErr_Occurred() && aeskit_get_buffer(mac, &mb, 0, "mac") == 0 && mb.len != 16)
        PyErr_SetString(PyExc_ValueError, "need a 16-byte mac");
    if (!PyErr_Occurred() && c.impl->ccm == NULL) {
        r = Py_NewRef(Py_None);
    } else if (!PyErr_Occurred()) {
        uint8_t tag[16];
        memcpy(tag, mb.buf, 16);
        const size_t done = c.impl->ccm->ctr_cbcmac(&c.key, &kc, mac_dst == Py_True, c.block, tag,
                                                    slot_dst(&c), c.data.buf, slot_blocks(&c));
        r = Py_BuildValue("(Oy#y#n)", c.out, (const char *)c.block, (Py_ssize_t)16,
                          (const char *)tag, (Py_ssize_t)16, (Py_ssize_t)done);
    }
    aeskit_release(&mb);
    Py_XDECREF(c.out);
    aeskit_release(&c.data);
    aeskit_secure_zero(&c.key, sizeof c.key);
    aeskit_secure_zero(&kc, sizeof kc);
    return r;
}

/* Where ghash_key writes: hk filled with a pattern first, the bytes of w
 * outside [from, from + used) that changed are counted (a per-message key
 * wipes only that range). */
static PyObject *slots_ghash_key_extent(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *h;
    Py_ssize_t max_blocks;
    Py_buffer hb = {0};
    if (!PyArg_ParseTuple(args, "sOn:_ghash_key_extent", &backend, &h, &max_blocks))
        return NULL;
    const struct aeskit_impl *impl = aeskit_resolve_backend(PyModule_GetState(m),
                                                            AESKIT_NOWHERE, backend);
    if (impl == NULL || aeskit_get_buffer(h, &hb, 0, "h") < 0)
        return NULL;
    if (hb.len != 16 || max_blocks < 0) {
        aeskit_release(&hb);
        PyErr_SetString(PyExc_ValueError, "need a 16-byte h and max_blocks >= 0");
        return NULL;
    }
    aeskit_ghash_key *hk = PyMem_Malloc(sizeof *hk);
    if (hk == NULL) {
        aeskit_release(&hb);
        return PyErr_NoMemory();
    }
    memset(hk, 0xa5, sizeof *hk);
    impl->ghash_key(hk, hb.buf, (size_t)max_blocks);
    aeskit_release(&hb);
    const uint8_t *w = (const uint8_t *)hk->w;
    Py_ssize_t outside = 0;
    for (size_t i = 0; i < sizeof hk->w; i++)
        outside += (i < hk->from || i >= hk->from + hk->used) && w[i] != 0xa5;
    PyObject *r = Py_BuildValue("(nnn)", (Py_ssize_t)hk->from, (Py_ssize_t)hk->used, outside);
    aeskit_secure_zero(hk, sizeof *hk);
    PyMem_Free(hk);
    return r;
}

/* The cbc_x slot on len(ivs) / 16 chains, chain c's blocks the c-th of as
 * many equal parts of data; with out, CBC encryption into a buffer of the
 * same layout, else CBC-MAC. */
static PyObject *slots_cbc_x(PyObject *m, PyObject *args)
{
    const char *backend;
    PyObject *key, *ivs, *data;
    int out;
    slot_call c;
    Py_buffer vb = {0};
    if (!PyArg_ParseTuple(args, "sOOOp:_cbc_x_slot", &backend, &key, &ivs, &data, &out) ||
        aeskit_get_buffer(ivs, &vb, 0, "ivs") < 0)
        return NULL;
    const size_t chains = (size_t)vb.len / 16;
    uint8_t v[AESKIT_CBC_X_MAX][16];
    if (vb.len % 16 != 0 || chains == 0 || chains > AESKIT_CBC_X_MAX) {
        aeskit_release(&vb);
        PyErr_Format(PyExc_ValueError, "cbc_x takes 1 to %d chains (16-byte ivs)",
                     AESKIT_CBC_X_MAX);
        return NULL;
    }
    memcpy(v, vb.buf, vb.len);
    aeskit_release(&vb);
    /* the first iv as slot_begin's block: the slot reads v */
    PyObject *first = PyBytes_FromStringAndSize((const char *)v[0], 16);
    const int began = first != NULL ? slot_begin(m, &c, backend, key, first, data, out) : -1;
    Py_XDECREF(first);
    if (began < 0)
        return NULL;
    const size_t blocks = slot_blocks(&c);
    if (chains > c.impl->cbc_x_chains || blocks % chains != 0) {
        PyErr_Format(PyExc_ValueError, "%s's cbc_x takes 1 to %zu chains of equal length",
                     c.impl->name, c.impl->cbc_x_chains);
        Py_XDECREF(slot_end(&c));
        return NULL;
    }
    const size_t n = blocks / chains;
    const uint8_t *src[AESKIT_CBC_X_MAX];
    uint8_t *dst[AESKIT_CBC_X_MAX];
    for (size_t j = 0; j < chains; j++) {
        src[j] = (const uint8_t *)c.data.buf + 16 * n * j;
        dst[j] = out ? slot_dst(&c) + 16 * n * j : NULL;
    }
    c.impl->cbc_x(&c.key, chains, v, out ? dst : NULL, src, n);
    PyObject *next = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(16 * chains));
    PyObject *o = c.out != NULL ? Py_NewRef(c.out) : Py_NewRef(Py_None);
    Py_XDECREF(slot_end(&c));
    PyObject *r = next != NULL ? Py_BuildValue("(NN)", o, next) : NULL;
    if (r == NULL)
        Py_DECREF(o);
    return r;
}

/* A dict of a NULL-ended list of constants. */
static PyObject *constants_dict(const aeskit_constant *c)
{
    PyObject *d = PyDict_New();
    for (; d != NULL && c != NULL && c->name != NULL; c++) {
        PyObject *v = PyLong_FromSize_t(c->value);
        if (v == NULL || PyDict_SetItemString(d, c->name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *slots_constants(PyObject *m, PyObject *args)
{
    const char *backend;
    (void)m;
    if (!PyArg_ParseTuple(args, "s:backend_constants", &backend))
        return NULL;
    const struct aeskit_impl *impl = aeskit_impl_by_name(backend);
    if (impl == NULL) {
        PyErr_Format(PyExc_ValueError, "unknown backend '%s'", backend);
        return NULL;
    }
    PyObject *d = constants_dict(impl->constants);
    PyObject *w = d != NULL ? PyLong_FromSize_t(impl->cbc_x_chains) : NULL;
    if (w == NULL || PyDict_SetItemString(d, "cbc_x_chains", w) < 0)
        Py_CLEAR(d);
    Py_XDECREF(w);
    PyObject *l = d != NULL ? PyLong_FromSize_t(impl->ctr_many_long) : NULL;
    if (l == NULL || PyDict_SetItemString(d, "ctr_many_long", l) < 0)
        Py_CLEAR(d);
    Py_XDECREF(l);
    return d;
}

static PyObject *slots_mode_constants(PyObject *m, PyObject *args)
{
    const char *name;
    (void)m;
    if (!PyArg_ParseTuple(args, "s:mode_constants", &name))
        return NULL;
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        if (strcmp(aeskit_aeads[i]->name, name) == 0)
            return constants_dict(aeskit_aeads[i]->constants);
    PyErr_Format(PyExc_ValueError, "unknown AEAD '%s'", name);
    return NULL;
}

/* The AEAD named name, or NULL with a ValueError. */
static const struct aeskit_aead *aead_named(const char *name)
{
    for (size_t i = 0; aeskit_aeads[i] != NULL; i++)
        if (strcmp(aeskit_aeads[i]->name, name) == 0)
            return aeskit_aeads[i];
    PyErr_Format(PyExc_ValueError, "unknown AEAD '%s'", name);
    return NULL;
}

static PyObject *slots_aead_max_data(PyObject *m, PyObject *args)
{
    const char *name;
    Py_ssize_t nonce_len;
    (void)m;
    if (!PyArg_ParseTuple(args, "sn:_aead_max_data", &name, &nonce_len))
        return NULL;
    const struct aeskit_aead *d = aead_named(name);
    if (d == NULL)
        return NULL;
    if (nonce_len < 0 || (size_t)nonce_len < d->nonce_min || (size_t)nonce_len > d->nonce_max) {
        PyErr_Format(PyExc_ValueError, "%s takes no %zd-byte nonce", d->name, nonce_len);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(aeskit_aead_max_data(d, (size_t)nonce_len));
}

/* CCM's B0 and the encoding of the AAD's length (none when aad_len is 0),
 * at lengths no buffer can have. */
static PyObject *slots_ccm_header(PyObject *m, PyObject *args)
{
    Py_buffer nonce;
    unsigned tag_len;
    unsigned long long data_len, aad_len;
    (void)m;
    if (!PyArg_ParseTuple(args, "y*IKK:_ccm_header", &nonce, &tag_len, &data_len, &aad_len))
        return NULL;
    PyObject *r = NULL;
    if (nonce.len < AESKIT_CCM_NONCE_MIN || nonce.len > AESKIT_CCM_NONCE_MAX ||
        tag_len < 4 || tag_len > 16 || tag_len % 2 ||
        data_len > aeskit_ccm_max_data((size_t)nonce.len)) {
        PyErr_SetString(PyExc_ValueError, "need a CCM nonce, tag length and data length");
    } else {
        uint8_t out[26];
        aeskit_ccm_b0(out, nonce.buf, (size_t)nonce.len, tag_len, data_len, aad_len > 0);
        const size_t pre = aad_len > 0 ? aeskit_ccm_aad_prefix(out + 16, aad_len) : 0;
        r = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(16 + pre));
    }
    PyBuffer_Release(&nonce);
    return r;
}

static PyMethodDef slots_methods[] = {
    {"_ctr_slot", slots_ctr, METH_VARARGS,
     PyDoc_STR("_ctr_slot(backend, key, kind, counter, data) -> (out, next_counter)\n\n"
               "Tests only: the backend's ctr slot on whole blocks with the counter kind "
               "'be128', 'be32', 'le32' or 'be128_secret'.")},
    {"_cbc_mac_slot", slots_cbc_mac, METH_VARARGS,
     PyDoc_STR("_cbc_mac_slot(backend, key, mac, data) -> mac\n\nTests only: the backend's "
               "cbc_mac slot on whole blocks from the chaining value mac.")},
    {"_xts_slot", slots_xts, METH_VARARGS,
     PyDoc_STR("_xts_slot(backend, key, encrypt, tweak, data) -> (out, next_tweak)\n\n"
               "Tests only: the backend's xts slot on whole blocks with the data key key "
               "and the (already encrypted) tweak.")},
    {"_ghash_slot", slots_ghash, METH_VARARGS,
     PyDoc_STR("_ghash_slot(backend, h, acc, data, max_blocks[, polyval]) -> acc\n\nTests "
               "only: a GHASH key for H = h built for calls of at most max_blocks blocks, then "
               "the backend's ghash slot (polyval: its polyval slot, ValueError if it has "
               "none) on data from the accumulator acc.")},
    {"_gcmsiv_open_slot", slots_gcmsiv_open, METH_VARARGS,
     PyDoc_STR("_gcmsiv_open_slot(backend, key, h, counter, data[, max_blocks]) -> (out, "
               "next_counter, acc, done)\n\nTests only: the backend's fused GCM-SIV opening "
               "(ValueError if it has none) with a GHASH key for H = h built for max_blocks "
               "(any call's by default), from a zero accumulator; out is the done blocks it "
               "did.")},
    {"_ghash_key_extent", slots_ghash_key_extent, METH_VARARGS,
     PyDoc_STR("_ghash_key_extent(backend, h, max_blocks) -> (from, used, written_outside)\n\n"
               "Tests only: the range of the GHASH key's words ghash_key says it wrote, and "
               "how many bytes outside it changed (must be none).")},
    {"_ctr_cbcmac_slot", slots_ctr_cbcmac, METH_VARARGS,
     PyDoc_STR("_ctr_cbcmac_slot(backend, key, mac_dst, counter, mac, data[, ctr_key]) -> "
               "(out, next_counter, mac, blocks_done) | None\n\nTests only: the backend's "
               "fused ctr_cbcmac slot (CTR with BE128 counters under ctr_key, default key, and "
               "CBC-MAC under key of the data read, or written if mac_dst); None when its "
               "table has none.")},
    {"_cbc_x_slot", slots_cbc_x, METH_VARARGS,
     PyDoc_STR("_cbc_x_slot(backend, key, ivs, data, out) -> (out | None, next_ivs)\n\nTests "
               "only: the backend's cbc_x slot on len(ivs) / 16 chains (1 to its "
               "cbc_x_chains), chain c's blocks the c-th of as many equal parts of data: CBC "
               "encryption (out true, out in data's layout) or CBC-MAC.")},
    {"backend_constants", slots_constants, METH_VARARGS,
     PyDoc_STR("backend_constants(name) -> dict[str, int]\n\nThe block counts where a "
               "backend's kernels hand over (batch widths, the fused GCM's minimum), for "
               "tests that must cross them.")},
    {"mode_constants", slots_mode_constants, METH_VARARGS,
     PyDoc_STR("mode_constants(aead) -> dict[str, int]\n\nThe block counts where an AEAD's "
               "own code hands over (GCM's one-shot short path, its chunks), for tests "
               "that must cross them.")},
    {"_aead_max_data", slots_aead_max_data, METH_VARARGS,
     PyDoc_STR("_aead_max_data(aead, nonce_len) -> int\n\nTests only: the most bytes of "
               "data an AEAD takes with a nonce of that length (CCM's length field).")},
    {"_ccm_header", slots_ccm_header, METH_VARARGS,
     PyDoc_STR("_ccm_header(nonce, tag_length, data_len, aad_len) -> bytes\n\nTests only: "
               "CCM's B0 for that message, then the encoding of aad_len that precedes the "
               "AAD (none for 0), at any length the length field holds.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_slots(PyObject *module)
{
    return PyModule_AddFunctions(module, slots_methods);
}
