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
    &aeskit_aesni_avx_impl,
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

/* The first entry of that name this CPU can run, else the last of that
 * name, the one that needs least (for the caller's error: what it lacks),
 * else NULL. */
const struct aeskit_impl *aeskit_impl_by_name(const char *name)
{
    const struct aeskit_impl *last = NULL;
    for (size_t i = 0; aeskit_impls[i] != NULL; i++)
        if (strcmp(aeskit_impls[i]->name, name) == 0) {
            if (aeskit_impl_available(aeskit_impls[i]))
                return aeskit_impls[i];
            last = aeskit_impls[i];
        }
    return last;
}

/* Whether a list of names has shown aeskit_impls[i]'s already: an earlier
 * entry of the same name, one this CPU can run where runnable is set (the
 * list of available names, in which by_name's choice is the one shown). */
int aeskit_impl_named_before(size_t i, int runnable)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(aeskit_impls[j]->name, aeskit_impls[i]->name) == 0
            && (!runnable || aeskit_impl_available(aeskit_impls[j])))
            return 1;
    return 0;
}

const struct aeskit_impl *aeskit_impl_best(void)
{
    size_t i = 0;
    while (!aeskit_impl_available(aeskit_impls[i]))
        i++;
    return aeskit_impls[i];   /* portable needs nothing: the walk ends */
}
