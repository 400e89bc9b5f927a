/*
 * errors.h: every message the glue raises to a user, built in one place
 * (errors.c) so that they all read alike:
 *
 *     AESGCM: key must be 16, 24 or 32 bytes, got 15
 *     AESGCM.encrypt: data must be a bytes-like object (bytes, bytearray,
 *         memoryview, ...), not str: encode text first, e.g. data.encode()
 *     CipherContext.update: this context is finalized: a context is one
 *         message; for another, make a new one with AESCTR.encryptor(iv)
 *
 * That is: where (the class and method, or the function, as the user wrote
 * the call), the argument, what is accepted, what was given, and the usual
 * fix where there is one. What is accepted comes from the mode's
 * descriptor (key sizes, nonce range, tag lengths, limits), passed in as
 * the descriptor states it. Calls of the wrong shape (too many arguments, an
 * unknown keyword) keep CPython's own words: "AESCTR.encrypt() missing
 * required argument 'data'".
 *
 * Every function here is out of line and cold: a call that succeeds never
 * builds a message, and the checks in front of them stay small inline
 * tests. Each returns -1 with the exception set.
 */
#ifndef AESKIT_ERRORS_H
#define AESKIT_ERRORS_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* AESKIT_COLD: an error path, kept out of its callers' code; AESKIT_UNUSED:
 * a static helper in a header, which some files that include it do not call. */
#include "compiler.h"

/* Where a call was made, as its user wrote it: the class of who (an
 * object of ours, or the class itself for a constructor or class method)
 * and the method fn ("AESGCM.encrypt"); the class alone when fn is NULL
 * ("AESGCM"); fn alone for a module function ("aes_key_wrap"); neither for
 * a private entry point, whose messages then start with the argument. A
 * method passes its self: that is live for the whole call anyway, so the
 * class is looked up on the error path alone. */
typedef struct {
    PyObject *who;
    const char *fn;
} aeskit_at;

#define AESKIT_AT(who, fn) ((aeskit_at){(who), (fn)})
#define AESKIT_NOWHERE ((aeskit_at){NULL, NULL})

/* The class that at names, or NULL. */
static inline PyTypeObject *aeskit_at_type(aeskit_at at)
{
    if (at.who == NULL)
        return NULL;
    return PyType_Check(at.who) ? (PyTypeObject *)at.who : Py_TYPE(at.who);
}

/* "AESCTR" for aeskit.AESCTR: the name a user writes. */
static inline const char *aeskit_public_name(PyTypeObject *tp)
{
    const char *dot = strrchr(tp->tp_name, '.');
    return dot != NULL ? dot + 1 : tp->tp_name;
}

/* exc with "<where>: " and then fmt as PyUnicode_FromFormat reads it: the
 * one builder that every other here ends in. */
AESKIT_COLD int aeskit_error(PyObject *exc, aeskit_at at, const char *fmt, ...);

/* A TypeError for a call of the wrong shape, in CPython's words:
 * "<where>() " then fmt. */
AESKIT_COLD int aeskit_call_error(aeskit_at at, const char *fmt, ...);

/* What a buffer argument must be. */
enum {
    AESKIT_BUF_WRITABLE = 1,    /* written to (buf) */
    AESKIT_BUF_OR_NONE = 2,     /* None is accepted too (said in the message) */
    AESKIT_BUF_TEXT = 4,        /* message data, where text is the usual mistake
                                   (the fix: .encode()); else bytes such as a key
                                   or nonce (the fix for text: bytes.fromhex()) */
};

/* The argument arg (item index of it if index >= 0) is not a buffer of the
 * kind flags asks for: TypeError saying what was given, with the fix for
 * the usual mistakes (text; a read-only or non-contiguous buffer). Called
 * with the exception of the failed PyObject_GetBuffer set: one other than
 * BufferError or TypeError is left as it is. */
AESKIT_COLD int aeskit_err_buffer(aeskit_at at, const char *arg, Py_ssize_t index,
                                  PyObject *given, unsigned flags);

/* TypeError: "<arg> must be <accepted>, not <type of given>[: <fix>]". */
AESKIT_COLD int aeskit_err_type(aeskit_at at, const char *arg, const char *accepted,
                                PyObject *given, const char *fix);

/* ValueError: "<arg> must be <accepted>, got <repr of given>". */
AESKIT_COLD int aeskit_err_choice(aeskit_at at, const char *arg, const char *accepted,
                                  PyObject *given);

/* ValueError for a key of given bytes: the lengths n_keys AES keys of the
 * sizes in mask (AESKIT_KEY*) make. */
AESKIT_COLD int aeskit_err_key_length(aeskit_at at, const char *arg, unsigned sizes,
                                      unsigned n_keys, size_t given);

/* ValueError for arg of given bytes, lo to hi accepted (hi SIZE_MAX: no
 * bound); note ("" or " (...)") follows the accepted lengths. */
AESKIT_COLD int aeskit_err_length(aeskit_at at, const char *arg, size_t lo, size_t hi,
                                  const char *note, size_t given);

/* ValueError: "tag_length must be <the lengths in mask>, got <given>";
 * mask bit t set: a t-byte tag. */
AESKIT_COLD int aeskit_err_tag_length(aeskit_at at, uint32_t mask, PyObject *given);

/* ValueError: "bit_length must be <8 x the key lengths>, got <given>". */
AESKIT_COLD int aeskit_err_bit_length(aeskit_at at, unsigned sizes, unsigned n_keys,
                                      long given);

/* ValueError: "buf must be at least <need> bytes, got <given>". */
AESKIT_COLD int aeskit_err_out_len(aeskit_at at, size_t need, Py_ssize_t given);

/* ValueError: buf partly over the input arg. */
AESKIT_COLD int aeskit_err_overlap(aeskit_at at, const char *arg);

/* ValueError: arg of given bytes is not whole units of unit bytes; fix,
 * if not NULL, follows. */
AESKIT_COLD int aeskit_err_multiple(aeskit_at at, const char *arg, size_t unit, size_t given,
                                    const char *fix);

/* limit (the LimitExceeded of the module): "<what> is limited to <limit>
 * bytes<per>[, got <given>]" (given 0: not said), the limit as the docs
 * write it ("2**36 - 32"). */
AESKIT_COLD int aeskit_err_limit(PyObject *limit, aeskit_at at, const char *what,
                                 uint64_t max, const char *per, uint64_t given);

/* A context's refusals (py/guard.h): finalized (exc: AlreadyFinalized) or
 * in use by another thread (RuntimeError). The fix names the call that
 * makes another: owner's maker(arg). */
AESKIT_COLD int aeskit_err_finalized(PyObject *exc, aeskit_at at, PyTypeObject *owner,
                                     const char *maker, const char *arg);
AESKIT_COLD int aeskit_err_busy(aeskit_at at, PyTypeObject *owner, const char *maker,
                                const char *arg);

/* "16, 24 or 32": the lengths n_keys AES keys of the sizes in mask make,
 * times scale (8: in bits), into buf. */
void aeskit_key_lengths_text(unsigned sizes, unsigned n_keys, unsigned scale, char *buf,
                             size_t cap);

#endif
