/*
 * ghash_ct64.h: GHASH in constant time on 64-bit integers (ghash_ct64.c),
 * the portable backend's ghash slots. Contract: aeskit.h.
 */
#ifndef AESKIT_GHASH_CT64_H
#define AESKIT_GHASH_CT64_H

#include "aeskit.h"

aeskit_ghash_key_fn aeskit_ct64_ghash_key;
aeskit_ghash_fn aeskit_ct64_ghash;

#endif
