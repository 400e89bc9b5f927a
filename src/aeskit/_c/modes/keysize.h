/*
 * keysize.h: the AES key sizes as a mask, the form in which every
 * descriptor (block.h, aead.h, mac.h) says which sizes a type takes for
 * each of its keys, and the glue checks them (py/buffers.h).
 */
#ifndef AESKIT_KEYSIZE_H
#define AESKIT_KEYSIZE_H

enum {
    AESKIT_KEY128 = 1u << 0,
    AESKIT_KEY192 = 1u << 1,
    AESKIT_KEY256 = 1u << 2,
    AESKIT_KEY_ANY = AESKIT_KEY128 | AESKIT_KEY192 | AESKIT_KEY256,
};

#endif
