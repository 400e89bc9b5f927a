/* common.c: helpers that must not be inlined away. */
#include <string.h>

#include "aeskit.h"
#include "compiler.h"

void aeskit_secure_zero(void *p, size_t len)
{
#if defined(AESKIT_GNU_ASM)
    /* memset at full speed; the barrier tells the compiler the zeros are
     * read, so a dead-store pass cannot drop them */
    memset(p, 0, len);
    __asm__ volatile("" : : "r"(p) : "memory");
#else
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (len--)
        *v++ = 0;
#endif
}
