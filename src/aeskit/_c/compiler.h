/*
 * compiler.h: what differs between the compilers that build aeskit, each
 * behind one macro, so that GCC, clang, MSVC and clang-cl read the same
 * sources. Outside this file no C in the core spells __attribute__ or
 * __builtin_*, inline asm stands only behind AESKIT_GNU_ASM, and nothing
 * tests __GNUC__ or _MSC_VER. Two exceptions, on CPUs no other compiler
 * targets: power8.c calls GCC's and clang's vector crypto builtins (POWER's
 * intrinsics), and it and armv8_ce.c spell a target string the way each
 * of the two wants it (__clang__).
 *
 *   AESKIT_ALWAYS_INLINE  inline, and inlined even where the optimizer
 *                         declines (a kernel's helpers must share its
 *                         registers and fold their constant arguments)
 *   AESKIT_NOINLINE       never inlined (a kernel's cold tail kept out of
 *                         its loop's registers)
 *   AESKIT_COLD           never inlined, and laid out as rarely run (an
 *                         error path; it may go unused in a file)
 *   AESKIT_UNUSED         may go unused without a warning
 *   AESKIT_TARGET(isa)    a function compiled for instruction sets beyond
 *                         the file's (GCC/clang: "aes,sse2" and the like);
 *                         MSVC compiles every intrinsic anywhere, so empty
 *   AESKIT_UNROLL(n)      unroll the next loop n times (GCC and clang; MSVC
 *                         has no such pragma and decides itself)
 *   AESKIT_BARRIER()      the compiler may not move memory accesses across
 *   AESKIT_GNU_ASM        defined where GNU inline asm is understood: the
 *                         register pins and latency chains that use it
 *                         have a plain-C path beside them
 *   AESKIT_BSWAP32/64(v)  one-instruction byte swaps, where the compiler
 *                         has them
 *   AESKIT_LITTLE_ENDIAN  defined where the target is known little-endian
 *                         (common.h's big-endian loads are then a swap)
 *   AESKIT_CTZ64(v)       trailing zero bits of v != 0, where there is a
 *                         builtin (else common.h counts)
 */
#ifndef AESKIT_COMPILER_H
#define AESKIT_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
/* GCC, clang, and clang-cl (which understands both dialects) */
#define AESKIT_ALWAYS_INLINE inline __attribute__((always_inline))
#define AESKIT_NOINLINE __attribute__((noinline))
#define AESKIT_COLD __attribute__((cold, noinline, unused))
#define AESKIT_UNUSED __attribute__((unused))
#define AESKIT_TARGET(isa) __attribute__((target(isa)))
#define AESKIT_BARRIER() __asm__ volatile("" ::: "memory")
#define AESKIT_PRAGMA(x) _Pragma(#x)
#define AESKIT_UNROLL(n) AESKIT_PRAGMA(GCC unroll n)
#define AESKIT_GNU_ASM 1
#define AESKIT_BSWAP32(v) __builtin_bswap32(v)
#define AESKIT_BSWAP64(v) __builtin_bswap64(v)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define AESKIT_LITTLE_ENDIAN 1
#endif
#define AESKIT_CTZ64(v) ((unsigned)__builtin_ctzll(v))

#elif defined(_MSC_VER)
#include <intrin.h>
#include <stdlib.h>   /* _byteswap_* */
#define AESKIT_ALWAYS_INLINE __forceinline
#define AESKIT_NOINLINE __declspec(noinline)
#define AESKIT_COLD __declspec(noinline)
#define AESKIT_UNUSED
#define AESKIT_TARGET(isa)
#define AESKIT_BARRIER() _ReadWriteBarrier()
#define AESKIT_UNROLL(n)
#define AESKIT_LITTLE_ENDIAN 1   /* every Windows target */
#define AESKIT_BSWAP32(v) _byteswap_ulong(v)
#define AESKIT_BSWAP64(v) _byteswap_uint64(v)
#if defined(_M_X64) || defined(_M_ARM64)
static __forceinline unsigned aeskit_msvc_ctz64(unsigned __int64 v)
{
    unsigned long i;
    _BitScanForward64(&i, v);
    return (unsigned)i;
}
#define AESKIT_CTZ64(v) aeskit_msvc_ctz64(v)
#endif

#else
#define AESKIT_ALWAYS_INLINE inline
#define AESKIT_NOINLINE
#define AESKIT_COLD
#define AESKIT_UNUSED
#define AESKIT_TARGET(isa)
#define AESKIT_BARRIER() ((void)0)
#define AESKIT_UNROLL(n)
#endif

#endif
