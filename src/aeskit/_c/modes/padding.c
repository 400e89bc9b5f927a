/*
 * padding.c: PKCS#7 for 16-byte blocks. Contracts: padding.h.
 *
 * Why the check is constant time: with p the last byte, byte i belongs to
 * the padding iff i >= 16 - p, that is iff 15 - i < p, which is the sign
 * of (15 - i) - p computed in 32 bits (both sides are below 256), spread
 * to a mask. Every byte is read, its difference from p masked and ORed
 * into one word; p == 0 and p > 16 are two more signs ORed into it. The
 * verdict is one word, zero or not, turned into a mask the same way:
 * nothing branches on or indexes by a decrypted byte, and the caller
 * branches once, on the verdict.
 */
#include "padding.h"

#include <assert.h>
#include <string.h>

/* All ones if a < b, else 0; a, b < 2^31. */
static inline uint32_t lt_mask(uint32_t a, uint32_t b)
{
    return 0 - ((a - b) >> 31);
}

void aeskit_pkcs7_pad(uint8_t block[16], unsigned n)
{
    assert(n < 16);
    memset(block + n, (int)(16 - n), 16 - n);
}

uint32_t aeskit_pkcs7_check(const uint8_t block[16], unsigned *pad)
{
    const uint32_t p = block[15];
    /* p == 0 wraps p - 1, p > 16 wraps 16 - p: either sets bit 31 */
    uint32_t bad = ((p - 1) | (16 - p)) >> 31;
    for (uint32_t i = 0; i < 16; i++)
        bad |= lt_mask(15 - i, p) & (block[i] ^ p);
    *pad = p;
    /* bad < 256: bad | -bad has bit 31 set iff bad != 0 */
    return ((bad | (0 - bad)) >> 31) - 1;
}

void aeskit_ct_copy_prefix(uint8_t dst[16], const uint8_t block[16], unsigned n)
{
    /* n is a secret: not even an assert may look at it */
    for (uint32_t i = 0; i < 16; i++) {
        const uint8_t m = (uint8_t)lt_mask(i, n);
        dst[i] = (uint8_t)((block[i] & m) | (dst[i] & ~m));
    }
}
