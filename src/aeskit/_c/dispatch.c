/*
 * dispatch.c: the backends compiled into this build, best first. Adding a
 * backend is one line in aeskit_impls; choosing one is a walk down it.
 */
#include <string.h>

#include "dispatch.h"

const struct aeskit_impl *const aeskit_impls[] = {
#if defined(AESKIT_HAVE_X86)
    &aeskit_vaes_avx512_impl,
    &aeskit_vaes_avx2_impl,
    &aeskit_aesni_impl,
#endif
#if defined(AESKIT_HAVE_ARMV8)
    &aeskit_armv8_ce_impl,
#endif
#if defined(AESKIT_HAVE_POWER8)
    &aeskit_power8_impl,
#endif
    &aeskit_portable_impl,
    NULL,
};

int aeskit_impl_available(const struct aeskit_impl *impl)
{
    return (impl->cpu_needs & ~aeskit_cpu_features()) == 0;
}

const struct aeskit_impl *aeskit_impl_by_name(const char *name)
{
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        if (strcmp(aeskit_impls[i]->name, name) == 0)
            return aeskit_impls[i];
    return NULL;
}

const struct aeskit_impl *aeskit_impl_best(void)
{
    size_t i = 0;
    while (!aeskit_impl_available(aeskit_impls[i]))
        i++;
    return aeskit_impls[i];   /* portable needs nothing: the walk ends */
}
