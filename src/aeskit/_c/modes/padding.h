/*
 * padding.h: PKCS#7 padding (RFC 5652 6.3) for 16-byte blocks, as ECB and
 * CBC use it (their shared stream, modes/block.c). A message of any length gets 1 to 16 bytes,
 * each of the value of their count; removing them is checked without a
 * branch or a memory index on the decrypted bytes, so that the time of a
 * failure does not say which byte was wrong (tests/ct/ct_harness.c proves
 * it under valgrind). Whether the padding was valid still is an oracle
 * wherever a failure can be observed: that is the caller's to prevent.
 */
#ifndef AESKIT_PADDING_H
#define AESKIT_PADDING_H

#include <stdint.h>

/* block holds n < 16 bytes of data: fills the rest with 16 - n bytes of
 * value 16 - n. n is public (it is the message's length mod 16). */
void aeskit_pkcs7_pad(uint8_t block[16], unsigned n);

/* The verdict on a decrypted last block: all ones if its padding is valid
 * (its last byte p is 1 to 16 and the last p bytes all equal p), else 0;
 * *pad = p either way. Constant time in the block's bytes. */
uint32_t aeskit_pkcs7_check(const uint8_t block[16], unsigned *pad);

/* dst[i] = block[i] for i < n, dst[i] unchanged for n <= i < 16, with n
 * (<= 16) a secret: reads and writes all 16 bytes of dst, whatever n. */
void aeskit_ct_copy_prefix(uint8_t dst[16], const uint8_t block[16], unsigned n);

#endif
