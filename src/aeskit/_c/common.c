/* common.c: helpers that must not be inlined away. */
#include "aeskit.h"

void aeskit_secure_zero(void *p, size_t len)
{
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (len--)
        *v++ = 0;
}
