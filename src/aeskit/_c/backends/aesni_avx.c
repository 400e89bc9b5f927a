/*
 * aesni_avx.c: the aesni library (aesni.c) again, compiled with -mavx so
 * that every SSE instruction takes its VEX encoding, under its own symbol
 * names (aesni.h says why and which table dispatch.c prefers).
 */
#define AESKIT_AESNI_VEX 1
#include "aesni.c"
