/*
 * keyobj.h: what every key object shares, whatever its family (AESCBC and
 * the block modes, py/cipher.c; AESGCM and the AEADs, py/aead.c; AESCMAC,
 * py/mac.c; AESKW and AESKWP, py/kw.c): a head with its descriptor, its
 * backend and the sizes it was made with; the constructor's common
 * arguments (key, tag_length, padding, backend), checked; the wipe of its
 * key material when it goes; its getters, repr and type. A family's object
 * begins with the head and keeps its key material after it, in its own
 * layout; its constructor expands the key there.
 */
#ifndef AESKIT_KEYOBJ_H
#define AESKIT_KEYOBJ_H

#include <stddef.h>

#include "glue.h"

typedef struct aeskit_keyobj {
    PyObject_HEAD
    union {                         /* the descriptor its type was made from */
        const void *d;
        const struct aeskit_cipher *cipher;
        const struct aeskit_aead *aead;
        const struct aeskit_mac *mac;
        const struct aeskit_keywrap *keywrap;
    };
    const struct aeskit_impl *impl;
    unsigned key_bits;              /* of the whole key argument */
    unsigned tag_len;               /* tag_length; 0 for a type without one */
    uint8_t pkcs7;                  /* padding='pkcs7' (a type with padding=) */
} aeskit_keyobj;

/* What a family's type takes and keeps, for the shared code. */
typedef struct aeskit_keyobj_shape {
    unsigned key_sizes, n_keys;     /* AESKIT_KEY* mask, for each of n_keys keys */
    uint32_t tag_lengths;           /* tag_length= (bit t: t bytes); 0: none */
    uint8_t tag_positional;         /* tag_length may come second, positionally */
    uint8_t padding;                /* padding=None | 'pkcs7' */
    uint8_t distinct_keys;          /* the n_keys keys must differ */
} aeskit_keyobj_shape;

/* A family's object type begins with the head and holds its key material
 * from the head's end to its own: what the shared dealloc wipes. */
#define AESKIT_KEYOBJ_LAYOUT(type, material)                                               \
    static_assert(offsetof(type, head) == 0 &&                                             \
                  offsetof(type, material) == sizeof(aeskit_keyobj),                       \
                  #type ": the head, then the key material")

/* The constructor's common part: parses (key, [tag_length], *, [padding],
 * backend) as shape says, checks them (the backend, the key's length, the
 * keys distinct), and allocates the object with its head set. Returns it
 * with kb holding the key bytes, which the caller expands into the object
 * and then releases; NULL with an exception naming the class. */
aeskit_keyobj *aeskit_keyobj_new(PyTypeObject *type, PyObject *args, PyObject *kwds,
                                 const aeskit_keyobj_shape *shape, Py_buffer *kb);

/* Adds the key type of descriptor d, named type_name with doc, to the
 * module: tp_new, the shared dealloc (which wipes the key material),
 * repr and getters (backend, key_size, and
 * tag_length or padding when shape has them), and the family's methods.
 * Its tp_new tells the family's objects apart (aeskit_is_keyobj). */
PyTypeObject *aeskit_add_key_type(PyObject *module, aeskit_state *st, const void *d,
                                  const char *type_name, const char *doc, newfunc tp_new,
                                  PyMethodDef *methods, const aeskit_keyobj_shape *shape,
                                  size_t basicsize);

/* 1 if obj is a key object whose type tp_new makes. */
static inline int aeskit_is_keyobj(PyObject *obj, newfunc tp_new)
{
    return PyType_GetSlot(Py_TYPE(obj), Py_tp_new) == (void *)tp_new;
}

#endif
