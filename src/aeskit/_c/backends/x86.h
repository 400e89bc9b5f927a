/*
 * x86.h: what every x86 backend file starts with, written once. Include
 * it first in code built with at least SSE2 (the aesni and vaes
 * libraries, meson.build); such code runs only after the CPU check.
 */
#ifndef AESKIT_X86_H
#define AESKIT_X86_H

#if !defined(AESKIT_HAVE_X86)
#error "x86 backends are built only where AESKIT_HAVE_X86 declares their tables"
#endif

#include <immintrin.h>

#include "aeskit.h"
#include "common.h"

/* One block, no alignment needed. */
AESKIT_INLINE __m128i aeskit_load128(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

AESKIT_INLINE void aeskit_store128(uint8_t *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)(void *)p, v);
}

#endif
