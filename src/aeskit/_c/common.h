/* common.h: small helpers shared by modes and backends. */
#ifndef AESKIT_COMMON_H
#define AESKIT_COMMON_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"

/* For the small helpers that must become part of their caller (a kernel's
 * registers, constant arguments folded): -O2 alone declines some. */
#define AESKIT_INLINE static AESKIT_ALWAYS_INLINE

/* Big-endian loads and stores: one bswap and one move where the compiler
 * has the builtin (GCC does not merge the byte-wise form: 16 instructions
 * per 64-bit store, a quarter of a short GCM message's own work). */
#if defined(AESKIT_BSWAP32) && defined(AESKIT_BSWAP64) && defined(AESKIT_LITTLE_ENDIAN)
#define AESKIT_BSWAP_BUILTINS 1
#endif

static inline uint32_t aeskit_load_be32(const uint8_t *p)
{
#ifdef AESKIT_BSWAP_BUILTINS
    uint32_t v;
    memcpy(&v, p, 4);
    return AESKIT_BSWAP32(v);
#else
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
#endif
}

static inline void aeskit_store_be32(uint8_t *p, uint32_t v)
{
#ifdef AESKIT_BSWAP_BUILTINS
    v = AESKIT_BSWAP32(v);
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
#endif
}

static inline uint32_t aeskit_load_le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline void aeskit_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;         p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t aeskit_load_be64(const uint8_t *p)
{
#ifdef AESKIT_BSWAP_BUILTINS
    uint64_t v;
    memcpy(&v, p, 8);
    return AESKIT_BSWAP64(v);
#else
    return (uint64_t)aeskit_load_be32(p) << 32 | aeskit_load_be32(p + 4);
#endif
}

static inline void aeskit_store_be64(uint8_t *p, uint64_t v)
{
#ifdef AESKIT_BSWAP_BUILTINS
    v = AESKIT_BSWAP64(v);
    memcpy(p, &v, 8);
#else
    aeskit_store_be32(p, (uint32_t)(v >> 32));
    aeskit_store_be32(p + 4, (uint32_t)v);
#endif
}

/* The 64-bit little-endian ones: one move on a little-endian host (the
 * 128-bit body's XTS tweaks go through them per block). */
static inline uint64_t aeskit_load_le64(const uint8_t *p)
{
#ifdef AESKIT_LITTLE_ENDIAN
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)aeskit_load_le32(p + 4) << 32 | aeskit_load_le32(p);
#endif
}

static inline void aeskit_store_le64(uint8_t *p, uint64_t v)
{
#ifdef AESKIT_LITTLE_ENDIAN
    memcpy(p, &v, 8);
#else
    aeskit_store_le32(p, (uint32_t)v);
    aeskit_store_le32(p + 4, (uint32_t)(v >> 32));
#endif
}

/* dst = a ^ b over one block; any of the three may alias. */
static inline void aeskit_xor16(uint8_t *dst, const uint8_t *a, const uint8_t *b)
{
    uint64_t a0, a1, b0, b1;
    memcpy(&a0, a, 8); memcpy(&a1, a + 8, 8);
    memcpy(&b0, b, 8); memcpy(&b1, b + 8, 8);
    a0 ^= b0; a1 ^= b1;
    memcpy(dst, &a0, 8); memcpy(dst + 8, &a1, 8);
}

/* dst = a ^ b over len bytes; dst may equal a or b. */
static inline void aeskit_xor_bytes(uint8_t *dst, const uint8_t *a, const uint8_t *b,
                                    size_t len)
{
    size_t i = 0;
    for (; i + 16 <= len; i += 16)
        aeskit_xor16(dst + i, a + i, b + i);
    for (; i < len; i++)
        dst[i] = a[i] ^ b[i];
}

/* hi:lo * x in GF(2^128) with x^128 = x^7 + x^2 + x + 1, the reduction
 * masked, not branched: the value is a secret. */
AESKIT_INLINE void aeskit_gf128_double(uint64_t *hi, uint64_t *lo)
{
    const uint64_t carry = 0 - (*hi >> 63);
    *hi = *hi << 1 | *lo >> 63;
    *lo = *lo << 1 ^ (carry & 0x87);
}

/* dst = src * x with blocks read big-endian: RFC 7253's double() (OCB3),
 * SP 800-38B's subkey step (CMAC) and RFC 5297's dbl() (SIV). dst may be
 * src. */
AESKIT_INLINE void aeskit_gf128_double_be(uint8_t dst[16], const uint8_t src[16])
{
    uint64_t hi = aeskit_load_be64(src), lo = aeskit_load_be64(src + 8);
    aeskit_gf128_double(&hi, &lo);
    aeskit_store_be64(dst, hi);
    aeskit_store_be64(dst + 8, lo);
}

/* The same with blocks read little-endian: XTS's multiplication by alpha
 * (IEEE 1619 5.2). */
AESKIT_INLINE void aeskit_gf128_double_le(uint8_t dst[16], const uint8_t src[16])
{
    uint64_t lo = aeskit_load_le64(src), hi = aeskit_load_le64(src + 8);
    aeskit_gf128_double(&hi, &lo);
    aeskit_store_le64(dst, lo);
    aeskit_store_le64(dst + 8, hi);
}

/* Powers H^1..H^n of a hash key as a tree, not a chain: H^i = H^a *
 * H^(i - a) with a the largest power of two below i (this returns a, for
 * i >= 2), so H^n is ceil(log2 n) products deep, not n - 1: a key made per
 * message (GCM-SIV's, XAES-256-GCM's) waits on that depth. */
static inline size_t aeskit_power_split(size_t i)
{
    assert(i >= 2);
    size_t a = 1;
    while (2 * a < i)
        a *= 2;
    return a;
}

/* Number of trailing zero bits of i != 0: OCB3's L index for block i.
 * Block indices are public, so this may take any time. */
static inline unsigned aeskit_ntz64(uint64_t i)
{
    assert(i != 0);
#if defined(AESKIT_CTZ64)
    return AESKIT_CTZ64(i);
#else
    unsigned n = 0;
    for (; (i & 1) == 0; i >>= 1)
        n++;
    return n;
#endif
}

/* Constant-time equality: 1 if equal. OR-accumulates, never exits early;
 * only len (public) steers it. Eight bytes at a time, then the rest: a
 * 16-byte tag is two XORs rather than a 16-step byte loop (every AEAD
 * open and MAC verify ends here). */
static inline int aeskit_ct_memeq(const uint8_t *a, const uint8_t *b, size_t len)
{
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        acc |= aeskit_load_le64(a + i) ^ aeskit_load_le64(b + i);
    for (; i < len; i++)
        acc |= (uint64_t)(a[i] ^ b[i]);
    /* acc != 0 exactly when acc | -acc has its top bit set */
    return (int)(1 ^ ((acc | (0 - acc)) >> 63));
}

#endif
