/*
 * xts.h: XTS-AES (modes/xts.c), a block-cipher mode of modes/block.h with
 * its own stream engine and a sectors call. The stream's iv is the
 * current (encrypted) tweak, held/pos the bytes held back.
 */
#ifndef AESKIT_XTS_H
#define AESKIT_XTS_H

#include "block.h"

/* keys: the data key and the tweak key; tweak: 16 bytes, not encrypted. */
void aeskit_xts_init(aeskit_stream *st, const aeskit_key *keys, enum aeskit_mode mode,
                     int enc, const uint8_t *tweak);
size_t aeskit_xts_out_len(const aeskit_stream *st, size_t len);
size_t aeskit_xts_update(aeskit_stream *st, uint8_t *dst, const uint8_t *src, size_t len);
/* The data unit must have had at least 16 bytes (asserted). */
enum aeskit_finish aeskit_xts_finish(aeskit_stream *st, uint8_t *dst, size_t *out);
/* One data unit of len >= 16 bytes at once; tweak as for init. */
void aeskit_xts_oneshot(const aeskit_key *keys, int enc, const uint8_t *tweak, uint8_t *dst,
                        const uint8_t *src, size_t len);
/* len / unit data units of unit bytes (a multiple of 16), the first with
 * the 128-bit little-endian sequence number first, the next ones counting
 * up from it (the caller checks that they do not wrap). */
void aeskit_xts_sectors(const aeskit_key *keys, int enc, const uint8_t first[16],
                        size_t unit, uint8_t *dst, const uint8_t *src, size_t len);

#endif
