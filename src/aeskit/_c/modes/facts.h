/*
 * facts.h: what Python derives from a mode beyond the call shape its glue
 * checks (py/module.c exports it, with the descriptor's shape, in
 * _aeskit.MODES): the other names users know the mode by, and what bounds
 * its speed, for the benchmark's floor (bench/floor.py). Every descriptor
 * (block.h, aead.h, mac.h, kw.h) holds one, written in the mode's file.
 */
#ifndef AESKIT_FACTS_H
#define AESKIT_FACTS_H

#include <stdint.h>

typedef struct aeskit_facts {
    /* Other names a user may give the mode, space separated ("OCB" for
     * OCB3), or NULL. Its name without hyphens and its class name need no
     * entry: Python adds them. */
    const char *aliases;
    /* What bounds encryption (wrapping, a MAC) and decryption (unwrapping;
     * NULL for a MAC, which has one direction): one of bench/floor.py's
     * KINDS ("serial", "parallel", "aes+clmul", ...). */
    const char *floor_enc, *floor_dec;
    /* A serial chain's AES calls per 16 bytes where not 1 (CFB8: 16, one a
     * byte; KW: 12, RFC 3394's 6 per 64-bit half block); 0 means 1. */
    uint8_t chained_aes;
} aeskit_facts;

#endif
