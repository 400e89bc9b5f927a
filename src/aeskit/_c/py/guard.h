/*
 * guard.h: the one rule every streaming context follows. A finalized
 * context refuses every call; a context is for one thread, and a second
 * thread entering while the first works (the GIL may be released) gets
 * RuntimeError instead of a repeated keystream.
 */
#ifndef AESKIT_GUARD_H
#define AESKIT_GUARD_H

#include <stdatomic.h>

#include "glue.h"

typedef struct {
    atomic_int busy;
    int finalized;
} aeskit_guard;

static inline void aeskit_guard_init(aeskit_guard *g)
{
    atomic_init(&g->busy, 0);
    g->finalized = 0;
}

/* 0 to go on (pair with aeskit_guard_leave), -1 with an exception set;
 * st is the state of the module whose context this is. */
static inline int aeskit_guard_enter(aeskit_guard *g, aeskit_state *st)
{
    if (g->finalized) {
        PyErr_SetString(st->AlreadyFinalized, "this context has already been finalized");
        return -1;
    }
    if (atomic_exchange(&g->busy, 1) != 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this context is in use by another thread; a context is "
                        "not safe to share, make one per thread");
        return -1;
    }
    return 0;
}

static inline void aeskit_guard_leave(aeskit_guard *g)
{
    atomic_store(&g->busy, 0);
}

#endif
