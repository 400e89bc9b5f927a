/* glue.h: what the Python-facing files share. Only py/ includes Python. */
#ifndef AESKIT_GLUE_H
#define AESKIT_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "aeskit.h"
#include "errors.h"

/* Above this many bytes a call releases the GIL. Below it the release and
 * re-acquire cost more than they free up (measured with aeskit bench). */
#define AESKIT_GIL_THRESHOLD 8192

/* Types made from one descriptor each (modes/registry.c), at most. */
#define AESKIT_MAX_TYPES 32

/*
 * The module's state: everything the module made, reached from a type or
 * object it made (aeskit_state_of) or from the module itself. The CPU's
 * features are process facts and stay in cpu.c.
 */
typedef struct aeskit_state {
    const struct aeskit_impl *default_impl;
    PyObject *AlreadyFinalized, *InvalidTag, *NotYetFinalized, *LimitExceeded, *InvalidUnwrap;
    PyObject *str_copy;   /* "__copy__", interned: the packed batches' offsets_out */
    PyTypeObject *cipher_ctx_type, *aead_ctx_type, *mac_ctx_type;   /* also in types[] */
    size_t ntypes;
    struct {
        PyTypeObject *type;
        const void *desc;   /* its struct aeskit_cipher, aeskit_aead, ... */
    } types[AESKIT_MAX_TYPES];
} aeskit_state;

/* The state of the module that made tp (every type here is made by
 * PyType_FromModuleAndSpec and none can be subclassed). */
static inline aeskit_state *aeskit_state_of(PyTypeObject *tp)
{
    return (aeskit_state *)PyType_GetModuleState(tp);
}

/* The descriptor tp was made from (NULL if none). */
const void *aeskit_desc_of(aeskit_state *st, PyTypeObject *tp);

/* Makes a type from spec for descriptor desc (NULL: none), keeps it in st
 * and adds it to the module under its name after "aeskit.". A borrowed
 * reference, or NULL with an exception. */
PyTypeObject *aeskit_add_type(PyObject *module, aeskit_state *st, PyType_Spec *spec,
                              const void *desc);

/* "auto" or a backend name -> a backend usable here; NULL with ValueError
 * naming at. */
const struct aeskit_impl *aeskit_resolve_backend(aeskit_state *st, aeskit_at at,
                                                 const char *name);

/* Each adds its types and exceptions to the module and its state; -1 with
 * an exception on failure. */
int aeskit_add_cipher_types(PyObject *module, aeskit_state *st);   /* py/cipher.c */
int aeskit_add_aead_types(PyObject *module, aeskit_state *st);     /* py/aead.c */
int aeskit_add_keywrap_types(PyObject *module, aeskit_state *st);  /* py/kw.c */
int aeskit_add_mac_types(PyObject *module, aeskit_state *st);      /* py/mac.c */
int aeskit_add_bench(PyObject *module);                            /* py/bench.c */
int aeskit_add_slots(PyObject *module);                            /* py/slots.c */
int aeskit_add_segments(PyObject *module);                         /* py/segments.c */
int aeskit_add_mode_facts(PyObject *module);                       /* py/facts.c */

/* For py/bench.c, which times the mode entry points directly (NULL and no
 * exception when obj is not of that kind):
 *   aeskit_cipher_of: the descriptor and the expanded key(s) of an AESECB..
 *   aeskit_aead_of: the descriptor, per-key state and tag length of an AEAD
 *   aeskit_mac_of: the descriptor and per-key state of a MAC (AESCMAC)
 *   object. The object must stay alive while they are used. */
struct aeskit_mac;
const struct aeskit_cipher *aeskit_cipher_of(PyObject *obj, const aeskit_key **keys);
const struct aeskit_aead *aeskit_aead_of(PyObject *obj, const void **key_state,
                                         unsigned *tag_len);
const struct aeskit_mac *aeskit_mac_of(PyObject *obj, const void **key_state);

/* The key size in bits of an expanded key (10, 12, 14 rounds: 128, 192, 256). */
static inline long aeskit_key_bits(const aeskit_key *k)
{
    return 32L * ((long)k->rounds - 6);
}

#endif
