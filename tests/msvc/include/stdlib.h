/* tests/msvc: see assert.h */
#include <stddef.h>
unsigned long _byteswap_ulong(unsigned long);
unsigned long long _byteswap_uint64(unsigned long long);
void *malloc(size_t);
void free(void *);
