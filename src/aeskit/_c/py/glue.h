/* glue.h: what the Python-facing files share. Only py/ includes Python. */
#ifndef AESKIT_GLUE_H
#define AESKIT_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "aeskit.h"

/* Above this many bytes a call releases the GIL. Below it the release and
 * re-acquire cost more than they free up (measured with aeskit bench). */
#define AESKIT_GIL_THRESHOLD 8192

extern PyObject *aeskit_AlreadyFinalized;

/* The key size in bits of an expanded key (10, 12, 14 rounds: 128, 192, 256),
 * for the key_size attribute of every key-holding object. */
static inline long aeskit_key_bits(const aeskit_key *k)
{
    return 32L * ((long)k->rounds - 6);
}

/* "auto" or a backend name -> a backend usable here; NULL with ValueError. */
const struct aeskit_impl *aeskit_resolve_backend(const char *name);

/* Adds the cipher types to the module; -1 with an exception on failure. */
int aeskit_add_cipher_types(PyObject *module);

/* The expanded key and mode of an AESECB..AESCTR object; -1 with TypeError
 * for anything else. */
int aeskit_key_of(PyObject *obj, const aeskit_key **key, enum aeskit_mode *mode);

/* Adds AESGCM, AESOCB3, AEADContext, InvalidTag, NotYetFinalized (py/aead.c). */
int aeskit_add_aead_types(PyObject *module);

/* For kernel_time (py/bench.c): whether obj is an AESGCM/AESOCB3 object
 * (no exception either way), and loops whole one-shot messages on it in
 * place: nonce (12 bytes) + size bytes, no associated data; enc seals and
 * writes the tag after the data (buf needs size + 16 bytes), dec opens with
 * the tag computed but not compared. Runs without the GIL; obj must stay
 * alive. (py/aead.c) */
int aeskit_aead_of(PyObject *obj);
void aeskit_aead_kernel(PyObject *obj, int enc, uint8_t *buf, size_t size, size_t loops);
/* For ghash_time (py/bench.c): the expanded key of an AESGCM object and the
 * GHASH key its backend built; -1 with TypeError for anything else. */
int aeskit_gcm_keys_of(PyObject *obj, const aeskit_key **key, const aeskit_ghash_key **hk);

/* Adds clock_mhz, aes_probe, unit_probe, kernel_time and ghash_time (py/bench.c). */
int aeskit_add_bench(PyObject *module);

/* Adds _ctr_slot, for the tests (py/slots.c). */
int aeskit_add_slots(PyObject *module);

#endif
