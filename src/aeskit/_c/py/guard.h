/*
 * guard.h: the one rule every streaming context follows. A finalized
 * context refuses every call; a context is for one thread, and a second
 * thread entering while the first works (the GIL may be released) gets
 * RuntimeError instead of a repeated keystream. Each refusal names the
 * call that makes another context (py/errors.h).
 */
#ifndef AESKIT_GUARD_H
#define AESKIT_GUARD_H

#include <stdatomic.h>

#include "glue.h"

typedef struct {
    atomic_int busy;
    int finalized;
    /* what made the context, for the refusals: owner.maker(arg), as in
     * "AESCTR.encryptor(iv)" (owner: the key object's type, which the
     * context keeps alive through the key object) */
    PyTypeObject *owner;
    const char *maker, *arg;
} aeskit_guard;

static inline void aeskit_guard_init(aeskit_guard *g, PyTypeObject *owner, const char *maker,
                                     const char *arg)
{
    atomic_init(&g->busy, 0);
    g->finalized = 0;
    g->owner = owner;
    g->maker = maker;
    g->arg = arg;
}

AESKIT_COLD AESKIT_UNUSED static int aeskit_guard_refuse(const aeskit_guard *g, PyObject *ctx,
                                                        const char *method)
{
    const aeskit_at at = AESKIT_AT(ctx, method);
    if (g->finalized)
        return aeskit_err_finalized(aeskit_state_of(Py_TYPE(ctx))->AlreadyFinalized, at,
                                    g->owner, g->maker, g->arg);
    return aeskit_err_busy(at, g->owner, g->maker, g->arg);
}

/* 0 to go on (pair with aeskit_guard_leave), or -1 with an exception
 * naming ctx's class and method. */
static inline int aeskit_guard_enter(aeskit_guard *g, PyObject *ctx, const char *method)
{
    if (g->finalized || atomic_exchange(&g->busy, 1) != 0) {
        aeskit_guard_refuse(g, ctx, method);
        return -1;
    }
    return 0;
}

static inline void aeskit_guard_leave(aeskit_guard *g)
{
    atomic_store(&g->busy, 0);
}

#endif
