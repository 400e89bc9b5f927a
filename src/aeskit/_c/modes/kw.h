/*
 * kw.h: AES key wrap (modes/kw.c), SP 800-38F: KW (RFC 3394, the default
 * IV A6A6A6A6A6A6A6A6) and KWP (RFC 5649, the alternative IV A65959A6 ||
 * the 32-bit length, zero padding to whole 8-byte semiblocks). Each is a
 * descriptor through which the Python glue (py/kw.c) serves it as a type
 * (aeskit.AESKW, aeskit.AESKWP) without asking which one it is; the list
 * is aeskit_keywraps[] (modes/registry.c).
 *
 * The glue checks the wrap lengths (ValueError, or LimitExceeded above
 * wrap_max) and the public unwrap lengths (a multiple of 8, from
 * unwrap_min to unwrap_max) before any work; the entry points assert them. Everything an
 * unwrap finds inside the data (the integrity value, KWP's length and
 * padding) is checked here, in constant time, into one verdict.
 */
#ifndef AESKIT_KW_H
#define AESKIT_KW_H

#include "aeskit.h"
#include "facts.h"

/* A semiblock: the unit key wrap works in. */
#define AESKIT_SEMIBLOCK 8

/* KWP's 32-bit length indicator bounds what it wraps (RFC 5649 §3), and
 * so what it unwraps: that padded, plus the semiblock of the AIV. */
#define AESKIT_KWP_MAX 0xffffffffu
#define AESKIT_KWP_WRAPPED_MAX ((uint64_t)AESKIT_KWP_MAX + 1 + AESKIT_SEMIBLOCK)

struct aeskit_keywrap {
    const char *name;           /* "KW", for messages */
    const char *type_name;      /* "aeskit.AESKW" */
    const char *doc;            /* the type's docstring */
    aeskit_facts facts;         /* for Python and the benchmark (facts.h) */
    size_t wrap_min;            /* bytes wrap takes, at least */
    size_t wrap_multiple;       /* ... a multiple of this (8 for KW, 1 for KWP) */
    uint64_t wrap_max;          /* ... at most this (LimitExceeded above it) */
    size_t unwrap_min;          /* bytes unwrap takes, at least (a multiple of 8) */
    uint64_t unwrap_max;        /* ... at most this (what wrap_max wraps to) */
    /* The wrapped length of len bytes. */
    size_t (*wrapped_len)(size_t len);
    /* Wraps len bytes of src into wrapped_len(len) bytes of dst; dst may
     * equal src (with room for the result). */
    void (*wrap)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);
    /* Unwraps len bytes of src into len - 8 bytes of dst (dst may equal
     * src): the key, then (KWP) its zero padding. Returns the key's
     * length, or 0 when the data fails its check; dst is then all zero.
     * Nothing branches on the data or the verdict. */
    size_t (*unwrap)(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);
};

/* The two descriptors (modes/kw.c). */
extern const struct aeskit_keywrap aeskit_kw_keywrap, aeskit_kwp_keywrap;

/* The entry points, for the constant-time harness (tests/ct). */
size_t aeskit_kw_wrapped_len(size_t len);
void aeskit_kw_wrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);
size_t aeskit_kw_unwrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);
size_t aeskit_kwp_wrapped_len(size_t len);
void aeskit_kwp_wrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);
size_t aeskit_kwp_unwrap(const aeskit_key *k, uint8_t *dst, const uint8_t *src, size_t len);

/* Every key-wrap mode, ending NULL (modes/registry.c). */
extern const struct aeskit_keywrap *const aeskit_keywraps[];

#endif
