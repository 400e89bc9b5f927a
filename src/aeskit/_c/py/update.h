/*
 * update.h: a stream context's update(data) and update_into(data, buf), as
 * every family's context takes them (py/cipher.c, py/aead.c): the argument
 * count, the one-thread guard (guard.h), the data and the output rule
 * (buffers.h). The family gives what differs as two functions, which the
 * compiler sees at each call (the ops are constants).
 */
#ifndef AESKIT_UPDATE_H
#define AESKIT_UPDATE_H

#include "api.h"
#include "buffers.h"
#include "guard.h"

typedef struct aeskit_update_ops {
    /* The family's checks of an update of len bytes (its limits): 0 with
     * *out the bytes it writes, or -1 with an exception naming at. */
    int (*prepare)(PyObject *ctx, aeskit_at at, size_t len, size_t *out);
    /* The update itself, writing the *out bytes prepare gave to dst; it
     * releases the GIL where the family does. */
    void (*run)(PyObject *ctx, uint8_t *dst, const uint8_t *src, size_t len);
} aeskit_update_ops;

static inline PyObject *aeskit_ctx_update(PyObject *ctx, aeskit_guard *guard,
                                          PyObject *const *args, Py_ssize_t nargs, int into,
                                          const aeskit_update_ops *ops)
{
    const char *fn = into ? "update_into" : "update";
    if (nargs != 1 + into) {
        aeskit_count_error(Py_TYPE(ctx), fn, 1 + into, 1 + into, nargs);
        return NULL;
    }
    const aeskit_at at = AESKIT_AT(ctx, fn);
    if (aeskit_guard_enter(guard, ctx, fn) < 0)
        return NULL;
    Py_buffer data = {0}, out = {0};
    PyObject *result = NULL;
    size_t out_len;
    uint8_t *dst;
    if (aeskit_take(at, "data", args[0], &data, AESKIT_BUF_TEXT) == 0 &&
        ops->prepare(ctx, at, (size_t)data.len, &out_len) == 0 &&
        aeskit_output(at, into ? args[1] : NULL, &data, out_len, &out, &result, &dst) == 0) {
        ops->run(ctx, dst, data.buf, (size_t)data.len);
        if (into)
            result = PyLong_FromSize_t(out_len);
    }
    aeskit_release(&data);
    aeskit_release(&out);
    aeskit_guard_leave(guard);
    return result;
}

#endif
