/*
 * facts.c: _aeskit.MODES, every mode of the registry (modes/registry.c) as
 * one ModeFacts record: its name, class, call shape, limits and speed
 * bounds, read from its descriptor. Python derives from these what it
 * would otherwise list by hand: the package's exports, the benchmark's
 * mode sets and floors, the tests' specs (aeskit/_modes.py).
 */
#include <string.h>

#include "buffers.h"
#include "glue.h"
#include "modes/aead.h"
#include "modes/block.h"
#include "modes/kw.h"
#include "modes/mac.h"

static PyStructSequence_Field fact_fields[] = {
    {"name", "the canonical name: 'GCM-SIV', as in messages"},
    {"family", "'cipher', 'aead', 'mac' or 'keywrap': the glue that serves it"},
    {"class_name", "its class in aeskit: 'AESGCMSIV'"},
    {"aliases", "other names users know it by, beyond its name without hyphens"},
    {"key_sizes", "the key argument's lengths in bytes, ascending"},
    {"n_keys", "AES keys of one size, concatenated in the key argument"},
    {"nonce_name", "the argument before the data: 'nonce', 'iv', 'tweak', or None"},
    {"nonce_min", "its shortest length in bytes"},
    {"nonce_max", "its longest length in bytes; None: no bound"},
    {"tag_lengths", "tag lengths in bytes the constructor takes; () without a tag"},
    {"aead", "an AEAD: encrypt(nonce, data, associated_data), InvalidTag"},
    {"streams", "has streaming contexts (encryptor(), decryptor() or new())"},
    {"whole_blocks", "a stream's update writes whole blocks and holds back the rest; a "
                     "cipher's one-shot data must be whole blocks too, unless padded"},
    {"padding", "takes padding='pkcs7'"},
    {"sectors", "has the *_sectors methods"},
    {"tag_first", "sealed output is tag || ciphertext"},
    {"tag_positional", "tag_length may come second, positionally"},
    {"min_len", "the shortest data a call takes, in bytes"},
    {"max_data", "the most data a message holds, in bytes; None: no limit"},
    {"max_aad", "the most associated data a message holds, in bytes; None: no limit"},
    {"floor_enc", "what bounds its speed encrypting (bench/floor.py's KINDS)"},
    {"floor_dec", "... decrypting; None for a mode with one direction"},
    {"chained_aes", "AES calls per 16 bytes in its serial chain"},
    {NULL, NULL},
};

static PyStructSequence_Desc fact_desc = {
    .name = "aeskit._aeskit.ModeFacts",
    .doc = "One mode's facts, read from its C descriptor (the entries of _aeskit.MODES).",
    .fields = fact_fields,
    .n_in_sequence = (int)(sizeof fact_fields / sizeof fact_fields[0]) - 1,
};

/* A mode's facts in C terms, before they become Python objects. */
typedef struct row {
    const char *name, *family, *type_name, *nonce_name;
    const aeskit_facts *facts;
    unsigned key_sizes, n_keys;
    size_t nonce_min, nonce_max;    /* SIZE_MAX: no bound */
    uint32_t tag_lengths;
    int aead, streams, whole_blocks, padding, sectors, tag_first, tag_positional;
    uint64_t min_len, max_data, max_aad;   /* 0 or UINT64_MAX for the limits: none */
} row;

static PyObject *str_or_none(const char *s)
{
    return s != NULL ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
}

static PyObject *limit_or_none(uint64_t n)
{
    return n != 0 && n != UINT64_MAX ? PyLong_FromUnsignedLongLong(n) : Py_NewRef(Py_None);
}

/* The words of a space-separated list (NULL: none) as a tuple. */
static PyObject *words(const char *s)
{
    PyObject *list = PyList_New(0);
    while (list != NULL && s != NULL && *s != '\0') {
        const size_t n = strcspn(s, " ");
        PyObject *w = n > 0 ? PyUnicode_FromStringAndSize(s, (Py_ssize_t)n) : NULL;
        if (n > 0 && (w == NULL || PyList_Append(list, w) < 0))
            Py_CLEAR(list);
        Py_XDECREF(w);
        s += n + (s[n] == ' ');
    }
    if (list == NULL)
        return NULL;
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

static PyObject *key_sizes(const row *r)
{
    size_t len[3], n = aeskit_key_lengths(r->key_sizes, r->n_keys, len);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyLong_FromSize_t(len[i]);
        if (v == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
    }
    return t;
}

static PyObject *tag_lengths(uint32_t mask)
{
    PyObject *list = PyList_New(0);
    for (long t = 1; list != NULL && t <= 16; t++) {
        if (!(mask & AESKIT_TAG(t)))
            continue;
        PyObject *v = PyLong_FromLong(t);
        if (v == NULL || PyList_Append(list, v) < 0)
            Py_CLEAR(list);
        Py_XDECREF(v);
    }
    if (list == NULL)
        return NULL;
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

static PyObject *make_facts(PyTypeObject *type, const row *r)
{
    const char *dot = strrchr(r->type_name, '.');
    PyObject *items[] = {
        PyUnicode_FromString(r->name),
        PyUnicode_FromString(r->family),
        PyUnicode_FromString(dot != NULL ? dot + 1 : r->type_name),
        words(r->facts->aliases),
        key_sizes(r),
        PyLong_FromUnsignedLong(r->n_keys),
        str_or_none(r->nonce_name),
        PyLong_FromSize_t(r->nonce_min),
        r->nonce_max == SIZE_MAX ? Py_NewRef(Py_None) : PyLong_FromSize_t(r->nonce_max),
        tag_lengths(r->tag_lengths),
        PyBool_FromLong(r->aead),
        PyBool_FromLong(r->streams),
        PyBool_FromLong(r->whole_blocks),
        PyBool_FromLong(r->padding),
        PyBool_FromLong(r->sectors),
        PyBool_FromLong(r->tag_first),
        PyBool_FromLong(r->tag_positional),
        PyLong_FromUnsignedLongLong(r->min_len),
        limit_or_none(r->max_data),
        limit_or_none(r->max_aad),
        str_or_none(r->facts->floor_enc),
        str_or_none(r->facts->floor_dec),
        PyLong_FromLong(r->facts->chained_aes > 1 ? r->facts->chained_aes : 1),
    };
    const size_t n = sizeof items / sizeof items[0];
    static_assert(sizeof items / sizeof items[0] == sizeof fact_fields / sizeof fact_fields[0] - 1,
                  "one item per field");
    PyObject *facts = PyStructSequence_New(type);
    for (size_t i = 0; i < n; i++) {
        if (items[i] == NULL || facts == NULL) {
            Py_CLEAR(facts);
            Py_XDECREF(items[i]);
        } else {
            PyStructSequence_SET_ITEM(facts, (Py_ssize_t)i, items[i]);
        }
    }
    return facts;
}

static row cipher_row(const struct aeskit_cipher *d)
{
    const int iv = d->iv_name != NULL;
    return (row){
        .name = d->name, .family = "cipher", .type_name = d->type_name,
        .nonce_name = d->iv_name, .facts = &d->facts,
        .key_sizes = d->key_sizes, .n_keys = d->n_keys,
        .nonce_min = iv ? AESKIT_BLOCK : 0, .nonce_max = iv ? AESKIT_BLOCK : 0,
        .streams = 1, .whole_blocks = d->whole_blocks, .padding = d->pkcs7 != NULL,
        .sectors = d->sectors != NULL, .min_len = d->min_len, .max_data = d->max_len,
    };
}

static row aead_row(const struct aeskit_aead *d)
{
    return (row){
        .name = d->name, .family = "aead", .type_name = d->type_name,
        .nonce_name = d->nonce_max > 0 ? "nonce" : NULL, .facts = &d->facts,
        .key_sizes = d->key_sizes, .n_keys = d->n_keys,
        .nonce_min = d->nonce_min, .nonce_max = d->nonce_max, .tag_lengths = d->tag_lengths,
        .aead = 1, .streams = d->stream_state != 0, .whole_blocks = d->update_len != NULL,
        .tag_first = d->tag_first,
        .tag_positional = d->tag_positional, .max_data = d->max_data, .max_aad = d->max_aad,
    };
}

static row mac_row(const struct aeskit_mac *d)
{
    return (row){
        .name = d->name, .family = "mac", .type_name = d->type_name, .facts = &d->facts,
        .key_sizes = d->key_sizes, .n_keys = 1, .tag_lengths = d->tag_lengths, .streams = 1,
    };
}

static row keywrap_row(const struct aeskit_keywrap *d)
{
    return (row){
        .name = d->name, .family = "keywrap", .type_name = d->type_name, .facts = &d->facts,
        .key_sizes = AESKIT_KEY_ANY, .n_keys = 1, .min_len = d->wrap_min,
        .max_data = d->wrap_max,
    };
}

/* Appends each entry of a NULL-ended list of descriptors, made a row by ROW. */
#define APPEND_ALL(list, type, descs, ROW)                                               \
    for (size_t i_ = 0; (list) != NULL && (descs)[i_] != NULL; i_++) {                  \
        const row r_ = ROW((descs)[i_]);                                                 \
        PyObject *f_ = make_facts((type), &r_);                                          \
        if (f_ == NULL || PyList_Append((list), f_) < 0)                                 \
            Py_CLEAR(list);                                                              \
        Py_XDECREF(f_);                                                                  \
    }

int aeskit_add_mode_facts(PyObject *module)
{
    PyTypeObject *type = PyStructSequence_NewType(&fact_desc);
    if (type == NULL)
        return -1;
    PyObject *list = PyList_New(0);
    APPEND_ALL(list, type, aeskit_ciphers, cipher_row);
    APPEND_ALL(list, type, aeskit_aeads, aead_row);
    APPEND_ALL(list, type, aeskit_macs, mac_row);
    APPEND_ALL(list, type, aeskit_keywraps, keywrap_row);
    PyObject *modes = list != NULL ? PyList_AsTuple(list) : NULL;
    const int rc = modes != NULL && PyModule_AddObjectRef(module, "ModeFacts",
                                                          (PyObject *)type) == 0
        ? PyModule_AddObjectRef(module, "MODES", modes) : -1;
    Py_XDECREF(list);
    Py_XDECREF(modes);
    Py_DECREF(type);
    return rc;
}
