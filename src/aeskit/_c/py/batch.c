/*
 * batch.c: the engine of the *_many methods (py/batch.h): holding a
 * batch's arguments, running its jobs with the GIL released on one or
 * more OS threads, and reporting its failures.
 *
 * Threads are CPython's own (PyThread_start_new_thread), so the engine
 * builds wherever CPython does. Workers take chunks of records from one
 * atomic counter, so a thread that meets long messages does fewer of
 * them; the calling thread works too, and so a worker that cannot be
 * started only means fewer hands. Jobs touch no Python object.
 */
#include <stdatomic.h>

#include "api.h"
#include "batch.h"
#include "buffers.h"
#include "common.h"
#include "pythread.h"

void aeskit_batch_init(aeskit_batch *b, aeskit_at at)
{
    memset(b, 0, offsetof(aeskit_batch, views0_used));
    b->views0_used = 0;
    b->at = at;
}

/* Views live in blocks that never move, so a view taken stays where it is
 * while more are taken. */
struct aeskit_batch_views {
    struct aeskit_batch_views *next;
    size_t used, cap;
    Py_buffer v[];
};

void aeskit_batch_release(aeskit_batch *b)
{
    for (size_t i = 0; i < b->views0_used; i++)
        aeskit_release(&b->views0[i]);
    b->views0_used = 0;
    while (b->views != NULL) {
        struct aeskit_batch_views *k = b->views;
        for (size_t i = 0; i < k->used; i++)
            aeskit_release(&k->v[i]);
        b->views = k->next;
        PyMem_Free(k);
    }
    PyMem_Free(b->spans);
    if (b->msgs != b->msgs0)
        PyMem_Free(b->msgs);
    if (b->ok != b->ok0)
        PyMem_Free(b->ok);
    Py_CLEAR(b->held);
    b->spans = NULL;
    b->msgs = NULL;
    b->ok = NULL;
}

/* The records a lazy batch (aeskit_batch.lazy) fills and runs at a time:
 * 8 KiB, which stay in L1 between the two. */
#define LAZY_CHUNK 128

/* Allocates b->msgs and b->ok for n messages (room for cap records), not zeroed: the collectors
 * write each record whole, the checks its out_len, the layout its dst, and
 * the jobs every ok (a calloc of 4096 records was a tenth of a packed
 * batch of 64-byte GCM seals); -1 with MemoryError. */
static int alloc_records(aeskit_batch *b, size_t n, size_t cap)
{
    b->n = n;
    b->msgs = cap <= AESKIT_BATCH_INLINE ? b->msgs0
                                         : PyMem_Malloc(cap * sizeof *b->msgs);
    b->ok = n <= AESKIT_BATCH_INLINE ? b->ok0 : PyMem_Malloc(n);
    if (b->msgs == NULL || b->ok == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Keeps obj (a new reference, stolen) alive until the release; -1 with
 * MemoryError (obj dropped). */
static int hold(aeskit_batch *b, PyObject *obj)
{
    if (b->held == NULL && (b->held = PyList_New(0)) == NULL) {
        Py_DECREF(obj);
        return -1;
    }
    const int r = PyList_Append(b->held, obj);
    Py_DECREF(obj);
    return r;
}

/* The sequence argument arg (a list, tuple or other sequence, not a
 * bytes-like object) as a tuple held by b; *n its length. -1 with
 * TypeError naming at and arg. */
static int take_items(aeskit_batch *b, const char *arg, PyObject *obj, PyObject **tuple,
                      size_t *n)
{
    /* A bytes-like object is a sequence too (of ints): the usual mistake of
     * passing one message where a batch is wanted. */
    if (PyObject_CheckBuffer(obj) || PyUnicode_Check(obj) || !PySequence_Check(obj))
        return aeskit_err_type(b->at, arg, "a sequence (list, tuple) of bytes-like objects, "
                               "one per message", obj, PyObject_CheckBuffer(obj)
                               ? "for one message, pass a list of it, or call the one-shot "
                                 "method" : NULL);
    /* A tuple held for the call: taking a buffer can run Python code, which
     * could change a list under a loop over it. */
    PyObject *t = PySequence_Tuple(obj);
    if (t == NULL || hold(b, t) < 0)
        return -1;
    *tuple = t;
    *n = (size_t)PyTuple_GET_SIZE(t);
    return 0;
}

/* 0 if count (of arg) is b->n, else -1 with ValueError naming both. */
static int same_count(aeskit_batch *b, const char *arg, size_t count)
{
    if (count == b->n)
        return 0;
    return aeskit_error(PyExc_ValueError, b->at, "%s must have one item per message (%zu), "
                        "got %zu", arg, b->n, count);
}

/* Room for one more view; the caller fills it and then counts it
 * (view_taken), so that only views taken are released. */
static Py_buffer *new_view(aeskit_batch *b)
{
    if (b->views0_used < AESKIT_BATCH_INLINE_VIEWS) {
        b->view_count = &b->views0_used;
        return &b->views0[b->views0_used];
    }
    struct aeskit_batch_views *k = b->views;
    if (k == NULL || k->used == k->cap) {
        const size_t cap = k == NULL ? 16 : 2 * k->cap;
        struct aeskit_batch_views *fresh = PyMem_Malloc(sizeof *fresh + cap * sizeof(Py_buffer));
        if (fresh == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        fresh->next = k;
        fresh->used = 0;
        fresh->cap = cap;
        b->views = k = fresh;
    }
    b->view_count = &k->used;
    return &k->v[k->used];
}

/* Counts the view new_view gave as taken. */
static void view_taken(aeskit_batch *b)
{
    ++*b->view_count;
}

/* Takes item i of tuple (argument arg) as a buffer held by b: 0 with *p
 * and *len set, or -1 with TypeError naming arg[i]. flags: AESKIT_BUF_*.
 * A bytes object (the usual item) is read in place, without a view: it
 * cannot change, and the tuple, which b holds, keeps it alive. A view per
 * item, filled and released, was a third of the sequence form's cost
 * over the packed form's for 64-byte messages. */
static int take_item(aeskit_batch *b, const char *arg, PyObject *tuple, size_t i,
                     unsigned flags, const uint8_t **p, size_t *len)
{
    PyObject *item = PyTuple_GET_ITEM(tuple, (Py_ssize_t)i);
    if (PyBytes_CheckExact(item)) {
        *p = (const uint8_t *)PyBytes_AS_STRING(item);
        *len = (size_t)PyBytes_GET_SIZE(item);
        return 0;
    }
    Py_buffer *v = new_view(b);
    if (v == NULL)
        return -1;
    if (PyObject_GetBuffer(item, v, PyBUF_SIMPLE) < 0)
        return aeskit_err_buffer(b->at, arg, (Py_ssize_t)i, item, flags);
    view_taken(b);
    *p = v->buf;
    *len = (size_t)v->len;
    return 0;
}

/* Takes a whole buffer argument (writable with AESKIT_BUF_WRITABLE) held
 * by b; -1 with TypeError naming arg. */
static int take_buffer(aeskit_batch *b, const char *arg, PyObject *obj, unsigned flags,
                       Py_buffer **view)
{
    Py_buffer *v = new_view(b);
    if (v == NULL || aeskit_take(b->at, arg, obj, v, flags) < 0)
        return -1;
    view_taken(b);
    *view = v;
    return 0;
}

/* n spans more for b's associated data: the first, or NULL with
 * MemoryError. Spans handed out earlier move: a family sets each record's
 * ad pointer only after all are taken (ad_fix). */
static aeskit_span *more_spans(aeskit_batch *b, size_t n)
{
    if (b->cap_spans - b->n_spans < n) {
        size_t cap = b->cap_spans ? 2 * b->cap_spans : 16;
        while (cap - b->n_spans < n)
            cap *= 2;
        aeskit_span *s = PyMem_Realloc(b->spans, cap * sizeof *s);
        if (s == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        b->spans = s;
        b->cap_spans = cap;
    }
    aeskit_span *first = b->spans + b->n_spans;
    b->n_spans += n;
    return first;
}

/* Turns each record's ad, which holds an index into b->spans (cast),
 * into the pointer it stands for: the sequence form's, once all are taken
 * (the packed form takes its spans at once and points at them). */
static void ad_fix(aeskit_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->msgs[i].n_ad > 0)
            b->msgs[i].ad = b->spans + (uintptr_t)b->msgs[i].ad;
}

const char *aeskit_batch_name(char *buf, size_t cap, const char *arg, size_t i)
{
    PyOS_snprintf(buf, cap, "%s[%zu]", arg, i);
    return buf;
}

int aeskit_batch_threads(aeskit_at at, PyObject *obj, unsigned *out)
{
    *out = 1;
    if (obj == NULL)
        return 0;
    if (!PyLong_Check(obj))
        return aeskit_err_type(at, "threads", "an int", obj, NULL);
    int overflow;
    const long v = PyLong_AsLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < 1 || v > AESKIT_BATCH_MAX_THREADS)
        return aeskit_error(PyExc_ValueError, at, "threads must be from 1 to %d, got %R",
                            AESKIT_BATCH_MAX_THREADS, obj);
    *out = (unsigned)v;
    return 0;
}

/* ---- running --------------------------------------------------------- */

typedef struct {
    aeskit_batch *b;
    aeskit_batch_job job;
    aeskit_batch_many many;     /* NULL: job once per record */
    const void *key;
    int enc;
    size_t chunk;
    atomic_size_t next;         /* the first record no thread has taken */
    atomic_size_t failed;
} work;

static void lazy_fill(aeskit_batch *b, size_t i, size_t k);

static void work_on(work *w)
{
    aeskit_batch *b = w->b;
    size_t failed = 0;
    if (b->lazy != NULL) {   /* one thread, a chunk of records at a time */
        assert(w->many != NULL);
        for (size_t i = 0; i < b->n; i += LAZY_CHUNK) {
            const size_t k = b->n - i < LAZY_CHUNK ? b->n - i : LAZY_CHUNK;
            lazy_fill(b, i, k);
            failed += w->many(w->key, w->enc, b->msgs, &b->ok[i], k);
        }
        atomic_fetch_add(&w->failed, failed);
        return;
    }
    for (;;) {
        const size_t i = atomic_fetch_add(&w->next, w->chunk);
        if (i >= b->n)
            break;
        const size_t end = b->n - i < w->chunk ? b->n : i + w->chunk;
        if (w->many != NULL) {
            failed += w->many(w->key, w->enc, &b->msgs[i], &b->ok[i], end - i);
            continue;
        }
        for (size_t j = i; j < end; j++) {
            const int ok = w->job(w->key, w->enc, &b->msgs[j]);
            b->ok[j] = (uint8_t)ok;
            failed += !ok;
        }
    }
    atomic_fetch_add(&w->failed, failed);
}

typedef struct {
    work *w;
    PyThread_type_lock done;    /* held from start to finish: the join */
} worker;

static void worker_main(void *arg)
{
    worker *k = arg;
    work_on(k->w);
    PyThread_release_lock(k->done);
}

/* A batch's work in bytes, with a message's setup counted as 64 bytes:
 * below the GIL threshold one batch keeps the GIL, as a one-shot call
 * would. */
static uint64_t offset_at(const struct aeskit_offsets_s *o, size_t i);

static int worth_release(const aeskit_batch *b)
{
    uint64_t work = 64 * (uint64_t)b->n;
    if (b->lazy != NULL)
        return work + (offset_at(b->lazy, b->n) - offset_at(b->lazy, 0)) >= AESKIT_GIL_THRESHOLD;
    for (size_t i = 0; i < b->n && work < AESKIT_GIL_THRESHOLD; i++)
        work += b->msgs[i].len;
    return work >= AESKIT_GIL_THRESHOLD;
}

/* Runs job over every record with the GIL released (one release for the
 * whole batch), split over up to threads OS threads; sets b->ok and
 * returns the count that failed. */
static size_t batch_run(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key, int enc,
                        unsigned threads)
{
    if (threads > b->n)
        threads = b->n ? (unsigned)b->n : 1;
    work w = {.b = b, .job = ops->job, .many = ops->many, .key = key, .enc = enc};
    /* Chunks small enough that the threads end together, large enough that
     * the counter is not contended, and that a many job has messages to
     * interleave. */
    w.chunk = threads > 1 ? b->n / ((size_t)threads * 16) : b->n;
    if (w.many != NULL && w.chunk < 64)
        w.chunk = 64;
    if (w.chunk == 0)
        w.chunk = 1;
    atomic_init(&w.next, 0);
    atomic_init(&w.failed, 0);
    if (threads == 1 && !worth_release(b)) {
        work_on(&w);
        return atomic_load(&w.failed);
    }
    worker *ks = NULL;
    if (threads > 1 && (ks = PyMem_Calloc(threads - 1, sizeof *ks)) == NULL)
        threads = 1;   /* no room to say who helps: this thread does it all */
    Py_BEGIN_ALLOW_THREADS
    unsigned started = 0;
    for (unsigned t = 0; t + 1 < threads; t++) {
        worker *k = &ks[started];
        k->w = &w;
        k->done = PyThread_allocate_lock();
        if (k->done == NULL)
            break;
        PyThread_acquire_lock(k->done, WAIT_LOCK);
        if (PyThread_start_new_thread(worker_main, k) == PYTHREAD_INVALID_THREAD_ID) {
            PyThread_release_lock(k->done);
            PyThread_free_lock(k->done);
            break;
        }
        started++;
    }
    work_on(&w);
    for (unsigned t = 0; t < started; t++) {
        PyThread_acquire_lock(ks[t].done, WAIT_LOCK);
        PyThread_release_lock(ks[t].done);
        PyThread_free_lock(ks[t].done);
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(ks);
    return atomic_load(&w.failed);
}

/* ---- failures ------------------------------------------------------- */

/* The failure of a batch: exc (InvalidTag, InvalidUnwrap, ValueError) with
 * message "<what> failed for N of n messages (indices i, j, ...)" and
 * the attribute failed, the list of the indices that failed. -1. */
static int batch_fail(aeskit_batch *b, PyObject *exc, const char *what)
{
    PyObject *failed = PyList_New(0);
    char shown[160] = "";
    size_t count = 0, used = 0;
    if (failed == NULL)
        return -1;
    for (size_t i = 0; i < b->n; i++) {
        if (b->ok[i])
            continue;
        PyObject *v = PyLong_FromSize_t(i);
        if (v == NULL || PyList_Append(failed, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(failed);
            return -1;
        }
        Py_DECREF(v);
        /* the first few indices in the message; all of them in .failed */
        if (++count <= 8 && used < sizeof shown)
            used += (size_t)PyOS_snprintf(shown + used, sizeof shown - used, "%s%zu",
                                          count > 1 ? ", " : "", i);
    }
    aeskit_error(exc, b->at, "%s failed for %zu of %zu message%s (%s %s%s); nothing is "
                 "returned, and the failed indices are in .failed", what, count, b->n,
                 b->n == 1 ? "" : "s", count == 1 ? "index" : "indices", shown,
                 count > 8 ? ", ..." : "");
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && PyObject_SetAttrString(value, "failed", failed) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    } else {
        PyErr_Restore(type, value, tb);
    }
    Py_DECREF(failed);
    return -1;
}

/* Offset i of offsets at p of width bytes (a constant where the loop
 * over them wants no branch). */
static inline uint64_t offset_in(const uint8_t *p, unsigned width, size_t i)
{
    if (width == 4) {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return (uint64_t)(uint32_t)v;
    }
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return (uint64_t)v;
}

/* Offset i of o. */
static inline uint64_t offset_at(const aeskit_offsets *o, size_t i)
{
    return offset_in(o->p, o->width, i);
}

AESKIT_INLINE void lazy_fill_w(aeskit_batch *b, unsigned width, size_t i, size_t k)
{
    const uint8_t *p = b->lazy->p;
    uint64_t at = offset_in(p, width, i);
    for (size_t j = 0; j < k; j++) {
        const uint64_t end = offset_in(p, width, i + j + 1);
        b->msgs[j] = (aeskit_batch_msg){
            .src = b->lazy_src + at,
            .len = (size_t)(end - at),
            .dst = b->out_base + (i + j) * b->out_stride,
            .out_len = b->out_stride,
        };
        at = end;
    }
}

/* Records i..i+k-1 of a lazy batch into msgs[0..k), as the collector
 * would have written them (no side items, no associated data). */
static void lazy_fill(aeskit_batch *b, size_t i, size_t k)
{
    if (b->lazy->width == 4)
        lazy_fill_w(b, 4, i, k);
    else
        lazy_fill_w(b, 8, i, k);
}

/* ---- the packed form -------------------------------------------------- */

/* The width of a buffer's items, from its struct format: 4 or 8 for a
 * signed integer of that size, else 0. */
static unsigned int_width(const Py_buffer *v)
{
    const char *f = v->format != NULL ? v->format : "B";
#ifdef AESKIT_LITTLE_ENDIAN
    const int native_order = *f == '<';
#else
    const int native_order = *f == '>' || *f == '!';
#endif
    if (*f == '=' || *f == '@' || native_order)
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return 0;
    if ((f[0] == 'i' || f[0] == 'l' || f[0] == 'q' || f[0] == 'n') &&
        (v->itemsize == 4 || v->itemsize == 8))
        return (unsigned)v->itemsize;
    return 0;
}

/* Whether offsets 1..n at p (of width bytes, a constant at each call)
 * are each at least 0 and at least the one before (offset 0 checked
 * apart): one pass that ORs a flag per offset, no branch per offset (a
 * branch each cost a batch of 64-byte CMACs more than its offsets'
 * reads). The offsets read as signed: a negative one passes neither. */
static inline int offsets_ok(const uint8_t *p, unsigned width, size_t n)
{
    int64_t prev = (int64_t)offset_in(p, width, 0);
    if (width == 4)
        prev = (int32_t)prev;
    unsigned bad = 0;
    for (size_t i = 1; i <= n; i++) {
        int64_t cur = (int64_t)offset_in(p, width, i);
        if (width == 4)
            cur = (int32_t)cur;
        bad |= cur < prev;
        prev = cur;
    }
    return !bad;
}

/* The offsets argument arg over data of data_len bytes: a buffer of n + 1
 * int32 or int64 (format i, l, q or their kin; or plain bytes-like, taken
 * as int64 if width_hint is 8, else refused), monotone, the last at most
 * data_len. -1 with TypeError or ValueError naming at and arg, before any
 * work. */
static int batch_offsets(aeskit_batch *b, const char *arg, PyObject *obj, size_t data_len,
                         aeskit_offsets *o)
{
    Py_buffer *v = new_view(b);
    if (v == NULL)
        return -1;
    if (PyObject_GetBuffer(obj, v, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return aeskit_err_buffer(b->at, arg, -1, obj, 0);
    view_taken(b);
    o->view = v;
    o->p = v->buf;
    o->width = int_width(v);
    if (o->width == 0)
        return aeskit_error(PyExc_TypeError, b->at, "%s must be a buffer of int32 or int64 "
                            "(numpy int32/int64, array.array('i'/'q'), an Arrow offsets "
                            "buffer), got format '%s' of %zd-byte items", arg,
                            v->format != NULL ? v->format : "B", v->itemsize);
    const size_t count = (size_t)v->len / o->width;
    if (count == 0)
        return aeskit_error(PyExc_ValueError, b->at, "%s must hold n + 1 offsets, at least "
                            "one, got none", arg);
    o->n = count - 1;
    uint64_t prev = offset_at(o, 0);
    if (o->width == 4 ? (int64_t)(int32_t)prev < 0 : (int64_t)prev < 0)
        return aeskit_error(PyExc_ValueError, b->at, "%s[0] must be at least 0, got %lld", arg,
                            o->width == 4 ? (long long)(int32_t)prev : (long long)prev);
    /* the scan without a branch (offsets_ok), the one that failed found
     * again only for its message */
    if (!(o->width == 4 ? offsets_ok(o->p, 4, o->n) : offsets_ok(o->p, 8, o->n))) {
        for (size_t i = 1; i <= o->n; i++) {
            const uint64_t cur = offset_at(o, i);
            const int neg = o->width == 4 ? (int32_t)cur < 0 : (int64_t)cur < 0;
            if (neg || cur < prev)
                return aeskit_error(PyExc_ValueError, b->at, "%s must not decrease: %s[%zu] "
                                    "is %lld, after %llu", arg, arg, i,
                                    o->width == 4 ? (long long)(int32_t)cur : (long long)cur,
                                    (unsigned long long)prev);
            prev = cur;
        }
    }
    prev = offset_at(o, o->n);
    if (prev > data_len)
        return aeskit_error(PyExc_ValueError, b->at, "%s runs past its data: the last offset "
                            "is %llu, the buffer %zu bytes", arg, (unsigned long long)prev,
                            data_len);
    return 0;
}

/* A copy of like by its __copy__ (numpy arrays, array.array) if that is a
 * writable C-contiguous buffer of the same width and count; else NULL
 * without an exception. The method's name is the module's interned
 * string: PyObject_CallMethod with a C string made and interned it anew
 * on every call. */
static PyObject *copy_like(aeskit_batch *b, PyObject *like, const aeskit_offsets *o,
                           Py_buffer *out)
{
    PyObject *name = aeskit_state_of(aeskit_at_type(b->at))->str_copy;
    PyObject *r = PyObject_CallMethodNoArgs(like, name);
    if (r == NULL || r == like) {
        PyErr_Clear();
        Py_XDECREF(r);
        return NULL;
    }
    if (PyObject_GetBuffer(r, out, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        Py_DECREF(r);
        return NULL;
    }
    if (int_width(out) != o->width || (size_t)out->len != (o->n + 1) * o->width) {
        PyBuffer_Release(out);
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

/* The offsets of outputs of the records' out_len into p (n + 1 of width
 * bytes each, a constant at each call), and with base each record's dst
 * (base + its offset): one pass. Returns n, or the message at which an
 * int32 offset would pass 2**31 - 1 (the rest unwritten); *total: the
 * bytes the outputs span. */
static inline size_t lay_out(aeskit_batch *b, uint8_t *p, unsigned width, uint8_t *base,
                             uint64_t *total)
{
    uint64_t at = 0;
    for (size_t i = 0; i < b->n; i++) {
        aeskit_batch_msg *m = &b->msgs[i];
        if (base != NULL)
            m->dst = base + at;
        if (width == 4) {
            const int32_t v = (int32_t)at;
            memcpy(p + 4 * i, &v, 4);
        } else {
            const int64_t v = (int64_t)at;
            memcpy(p + 8 * i, &v, 8);
        }
        at += m->out_len;
        if (width == 4 && at > INT32_MAX) {
            *total = at;
            return i;
        }
    }
    if (width == 4) {
        const int32_t v = (int32_t)at;
        memcpy(p + 4 * b->n, &v, 4);
    } else {
        const int64_t v = (int64_t)at;
        memcpy(p + 8 * b->n, &v, 8);
    }
    *total = at;
    return b->n;
}

/* lay_out's offsets for n outputs of stride bytes each, the records
 * untouched (their dst set by the collector: aeskit_batch.out_base); the
 * same return and *total as lay_out's. */
static inline size_t lay_stride(size_t n, uint8_t *p, unsigned width, size_t stride,
                                uint64_t *total)
{
    if (width == 4 && stride != 0 && (uint64_t)n * stride > INT32_MAX) {
        /* lay_out's stop: the first message whose end passes INT32_MAX */
        const size_t stop = INT32_MAX / stride;
        *total = (uint64_t)(stop + 1) * stride;
        return stop;
    }
    for (size_t i = 0; i <= n; i++) {
        if (width == 4) {
            const int32_t v = (int32_t)(i * stride);
            memcpy(p + 4 * i, &v, 4);
        } else {
            const int64_t v = (int64_t)(i * stride);
            memcpy(p + 8 * i, &v, 8);
        }
    }
    *total = (uint64_t)n * stride;
    return n;
}

/* offsets_out for outputs of the records' out_len, of the same width
 * and Python type as like (a copy of it, by its __copy__, when that gives
 * a writable buffer of the same size; else an array.array of the width).
 * NULL with LimitExceeded when an int32 offset would pass 2**31 - 1.
 * base: NULL, or dst, where each record's dst is set at its offset (in the
 * same pass). *total: the bytes of dst they span. */
static PyObject *offsets_out(aeskit_batch *b, PyObject *like, const aeskit_offsets *o,
                             uint8_t *base, size_t *total)
{
    Py_buffer out;
    PyObject *r = copy_like(b, like, o, &out);
    if (r == NULL) {
        PyObject *array = PyImport_ImportModule("array");
        if (array == NULL)
            return NULL;
        r = PyObject_CallMethod(array, "array", "s", o->width == 4 ? "i" : "q");
        Py_DECREF(array);
        if (r == NULL)
            return NULL;
        PyObject *zeros = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((o->n + 1) * o->width));
        if (zeros == NULL) {
            Py_DECREF(r);
            return NULL;
        }
        memset(PyBytes_AS_STRING(zeros), 0, (size_t)PyBytes_GET_SIZE(zeros));
        PyObject *x = PyObject_CallMethod(r, "frombytes", "O", zeros);
        Py_DECREF(zeros);
        if (x == NULL || PyObject_GetBuffer(r, &out, PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            Py_XDECREF(x);
            Py_DECREF(r);
            return NULL;
        }
        Py_DECREF(x);
    }
    uint64_t at;
    size_t stop;
    if (base != NULL && base == b->out_base) {
        /* the records' dst set by the collector: the offsets alone */
        stop = o->width == 4 ? lay_stride(b->n, out.buf, 4, b->out_stride, &at)
                             : lay_stride(b->n, out.buf, 8, b->out_stride, &at);
    } else {
        stop = o->width == 4 ? lay_out(b, out.buf, 4, base, &at)
                             : lay_out(b, out.buf, 8, base, &at);
    }
    PyBuffer_Release(&out);
    if (stop < b->n) {
        Py_DECREF(r);
        aeskit_error(aeskit_state_of(aeskit_at_type(b->at))->LimitExceeded, b->at,
                     "the outputs' offsets pass what int32 offsets hold (2**31 - 1) at "
                     "message %zu (%llu bytes): pass int64 offsets (Arrow's large_binary)",
                     stop, (unsigned long long)at);
        return NULL;
    }
    *total = (size_t)at;
    return r;
}

int aeskit_batch_on_failure(aeskit_at at, PyObject *obj, int *zero)
{
    *zero = 0;
    if (obj == NULL)
        return 0;
    if (PyUnicode_Check(obj)) {
        if (PyUnicode_CompareWithASCIIString(obj, "raise") == 0)
            return 0;
        if (PyUnicode_CompareWithASCIIString(obj, "zero") == 0) {
            *zero = 1;
            return 0;
        }
    }
    return aeskit_err_choice(at, "on_failure", "'raise' or 'zero'", obj);
}

/* dst (dst_len bytes written) against src (src_len): apart, or (in_place
 * allowed) the same start; else -1 with ValueError naming at. */
static int check_overlap(aeskit_at at, const void *src, size_t src_len, const void *dst,
                         size_t dst_len, int in_place)
{
    if (!aeskit_meets(src, src_len, dst, dst_len) || (in_place && src == dst))
        return 0;
    if (in_place)
        return aeskit_error(PyExc_ValueError, at, "dst partially overlaps src: pass src "
                            "itself (in place, offsets unchanged) or a separate buffer");
    return aeskit_error(PyExc_ValueError, at, "dst overlaps src: each output is longer or "
                        "shorter than its input, so it cannot run in place; pass a separate "
                        "buffer");
}


/* ---- collecting the arguments ------------------------------------------ */

/* Record i's associated data, item i of items: a buffer (list 0) or a list
 * or tuple of them (list 1); None: none. Into new spans; the record keeps
 * their first index until ad_fix. */
static int take_ad(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *items, size_t i,
                   int list)
{
    char name[64];
    aeskit_batch_msg *m = &b->msgs[i];
    PyObject *item = PyTuple_GET_ITEM(items, (Py_ssize_t)i);
    if (item == Py_None)
        return 0;
    if (!list) {
        aeskit_span *sp = more_spans(b, 1);
        if (sp == NULL)
            return -1;
        m->ad = (const aeskit_span *)(uintptr_t)(sp - b->spans);
        m->n_ad = 1;
        return take_item(b, "associated_data", items, i, AESKIT_BUF_TEXT, &sp->p, &sp->len);
    }
    if (!PyList_Check(item) && !PyTuple_Check(item))
        return aeskit_err_type(b->at, aeskit_batch_name(name, sizeof name, "associated_data",
                                                        i),
                               "a list of bytes-like objects, or None", item, NULL);
    PyObject *t = PySequence_Tuple(item);
    if (t == NULL || hold(b, t) < 0)
        return -1;
    const size_t count = (size_t)PyTuple_GET_SIZE(t);
    if (count > s->max_ad)
        return aeskit_error(PyExc_ValueError, b->at, "associated_data[%zu] must have at most "
                            "%zu items, got %zu", i, s->max_ad, count);
    if (count == 0)
        return 0;
    aeskit_span *sp = more_spans(b, count);
    if (sp == NULL)
        return -1;
    const size_t first = (size_t)(sp - b->spans);
    m->ad = (const aeskit_span *)(uintptr_t)first;
    m->n_ad = count;
    aeskit_batch_name(name, sizeof name, "associated_data", i);
    for (size_t j = 0; j < count; j++) {
        aeskit_span *x = &b->spans[first + j];
        if (take_item(b, name, t, j, AESKIT_BUF_TEXT, &x->p, &x->len) < 0)
            return -1;
    }
    return 0;
}

int aeskit_batch_collect(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *side,
                         PyObject *data, PyObject *ad)
{
    PyObject *dt, *st = NULL, *at = NULL;
    size_t n, count;
    if (take_items(b, s->data, data, &dt, &n) < 0 || alloc_records(b, n, n) < 0)
        return -1;
    if (s->side != NULL && (take_items(b, s->side, side, &st, &count) < 0 ||
                            same_count(b, s->side, count) < 0))
        return -1;
    const int for_all = ad != NULL && ad != Py_None && s->ad == AESKIT_BATCH_AD_ONE &&
                        PyObject_CheckBuffer(ad);
    if (ad != NULL && ad != Py_None && !for_all) {
        const int lists = s->ad == AESKIT_BATCH_AD_LISTS;
        if (PyObject_CheckBuffer(ad) || PyUnicode_Check(ad) || !PySequence_Check(ad))
            return aeskit_err_type(b->at, "associated_data", lists
                                   ? "None, or a sequence with one list of bytes-like objects "
                                     "(or None) per message"
                                   : "None, one bytes-like object for every message, or a "
                                     "sequence with one per message", ad,
                                   lists && PyObject_CheckBuffer(ad)
                                   ? "for every message, pass [[associated_data]] * n" : NULL);
        if (take_items(b, "associated_data", ad, &at, &count) < 0 ||
            same_count(b, "associated_data", count) < 0)
            return -1;
    }
    aeskit_span *one = NULL;
    if (for_all) {
        Py_buffer *v;
        if (take_buffer(b, "associated_data", ad, AESKIT_BUF_TEXT, &v) < 0 ||
            (one = more_spans(b, 1)) == NULL)
            return -1;
        one->p = v->buf;
        one->len = (size_t)v->len;
    }
    for (size_t i = 0; i < n; i++) {
        aeskit_batch_msg *m = &b->msgs[i];
        *m = (aeskit_batch_msg){.src = NULL, .out_len = s->out_len};
        if (take_item(b, s->data, dt, i, s->data_flags, &m->src, &m->len) < 0)
            return -1;
        if (st != NULL && take_item(b, s->side, st, i, 0, &m->iv, &m->iv_len) < 0)
            return -1;
        if (for_all) {
            m->ad = (const aeskit_span *)(uintptr_t)0;
            m->n_ad = 1;
        } else if (at != NULL && take_ad(b, s, at, i, s->ad == AESKIT_BATCH_AD_LISTS) < 0) {
            return -1;
        }
    }
    ad_fix(b);
    return 0;
}

/* The packed form's records: message i at base + its offset in o (of
 * width bytes, a constant at each call), its side item ivs + i * w (ivs
 * NULL: none), its associated data spans[i] (ad_o the AAD's offsets into
 * ad, each message's span set here) or spans[0] for all (ad_o NULL), or
 * none (spans NULL). */
AESKIT_INLINE void fill_records(aeskit_batch *b, const aeskit_offsets *o, unsigned width,
                                const uint8_t *base, const uint8_t *ivs, size_t w,
                                aeskit_span *spans, const uint8_t *ad,
                                const aeskit_offsets *ad_o, size_t out_len, uint8_t *out_base)
{
    assert(o->width == width);
    uint64_t at = offset_in(o->p, width, 0);
    for (size_t i = 0; i < b->n; i++) {
        const uint64_t end = offset_in(o->p, width, i + 1);
        b->msgs[i] = (aeskit_batch_msg){
            .src = base + at,
            .len = (size_t)(end - at),
            .dst = out_base != NULL ? out_base + i * out_len : NULL,
            .out_len = out_len,
            .iv = ivs != NULL ? ivs + i * w : NULL,
            .iv_len = w,
            .ad = spans != NULL ? spans + (ad_o != NULL ? i : 0) : NULL,
            .n_ad = spans != NULL,
        };
        at = end;
        if (ad_o != NULL) {
            const uint64_t a = offset_at(ad_o, i);
            spans[i].p = ad + a;
            spans[i].len = (size_t)(offset_at(ad_o, i + 1) - a);
        }
    }
}

int aeskit_batch_collect_packed(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *side,
                                PyObject *src, PyObject *offsets, PyObject *ad,
                                PyObject *ad_offsets, aeskit_offsets *o)
{
    Py_buffer *sv, *iv = NULL, *av = NULL;
    aeskit_offsets ao;
    if (take_buffer(b, "src", src, s->data_flags, &sv) < 0 ||
        batch_offsets(b, "offsets", offsets, (size_t)sv->len, o) < 0)
        return -1;
    /* records left to the run (aeskit_batch.lazy): one chunk's room */
    const int lazy = b->want_lazy && b->out_base != NULL && s->side == NULL &&
                     (ad == NULL || ad == Py_None);
    if (alloc_records(b, o->n, lazy && o->n > LAZY_CHUNK ? LAZY_CHUNK : o->n) < 0)
        return -1;
    if (lazy) {
        b->out_stride = s->out_len;
        b->lazy = o;
        b->lazy_src = sv->buf;
        return 0;
    }
    const size_t n = o->n;
    size_t w = 0;
    if (s->side != NULL) {
        if (take_buffer(b, s->side, side, 0, &iv) < 0)
            return -1;
        b->side_name = s->side;
        b->side.p = iv->buf;
        b->side.len = (size_t)iv->len;
        w = n ? (size_t)iv->len / n : 0;
        if ((size_t)iv->len != w * n)
            return aeskit_error(PyExc_ValueError, b->at, "%s must be %zu items of one length "
                                "packed together (n x their length), got %zd bytes", s->side,
                                n, iv->len);
    }
    if (ad_offsets != NULL && ad_offsets != Py_None && (ad == NULL || ad == Py_None))
        return aeskit_error(PyExc_ValueError, b->at, "ad_offsets needs associated_data: pass "
                            "both, or neither");
    if (ad != NULL && ad != Py_None) {
        if (s->ad == AESKIT_BATCH_AD_NONE)
            return aeskit_error(PyExc_TypeError, b->at, "this mode takes no associated_data");
        if (take_buffer(b, "associated_data", ad, AESKIT_BUF_TEXT, &av) < 0)
            return -1;
        b->ad.p = av->buf;
        b->ad.len = (size_t)av->len;
        if (ad_offsets != NULL && ad_offsets != Py_None) {
            if (batch_offsets(b, "ad_offsets", ad_offsets, (size_t)av->len, &ao) < 0)
                return -1;
            if (ao.n != n)
                return aeskit_error(PyExc_ValueError, b->at, "ad_offsets must have one offset "
                                    "per message and one more (%zu), got %zu", n + 1, ao.n + 1);
        }
    }
    const int per_message = av != NULL && ad_offsets != NULL && ad_offsets != Py_None;
    aeskit_span *spans = av == NULL ? NULL : more_spans(b, per_message ? n : 1);
    if (av != NULL && spans == NULL)
        return -1;
    if (av != NULL && !per_message) {
        spans[0].p = av->buf;
        spans[0].len = (size_t)av->len;
    }
    const uint8_t *ivs = iv != NULL ? iv->buf : NULL;
    const uint8_t *base = sv->buf;
    const aeskit_offsets *ad_o = per_message ? &ao : NULL;
    /* inlined for each width, and apart for the batches with neither side
     * items nor associated data (MACs): the loop then only stores, with no
     * test per record of what is the same for all (the same split for
     * AEADs' nonces made 64-byte GCM batches 0.7% slower) */
    if (spans == NULL && ivs == NULL && b->out_base != NULL) {
        b->out_stride = s->out_len;
        if (o->width == 4)
            fill_records(b, o, 4, base, NULL, 0, NULL, NULL, NULL, s->out_len, b->out_base);
        else
            fill_records(b, o, 8, base, NULL, 0, NULL, NULL, NULL, s->out_len, b->out_base);
    } else if (spans == NULL && ivs == NULL) {
        b->out_base = NULL;
        if (o->width == 4)
            fill_records(b, o, 4, base, NULL, 0, NULL, NULL, NULL, s->out_len, NULL);
        else
            fill_records(b, o, 8, base, NULL, 0, NULL, NULL, NULL, s->out_len, NULL);
    } else if (o->width == 4) {
        b->out_base = NULL;
        fill_records(b, o, 4, base, ivs, w, spans, av ? av->buf : NULL, ad_o, s->out_len, NULL);
    } else {
        b->out_base = NULL;
        fill_records(b, o, 8, base, ivs, w, spans, av ? av->buf : NULL, ad_o, s->out_len, NULL);
    }
    return 0;
}

/* ---- the two forms' calls ---------------------------------------------- */

static int check_all(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key, int enc)
{
    if (ops->check_all != NULL)
        return ops->check_all(b, key, enc);
    for (size_t i = 0; i < b->n; i++)
        if (ops->check(b, key, enc, i) < 0)
            return -1;
    return 0;
}

/* A job that writes less than its room says so in out_len: each record's
 * room kept apart into *room before the run, or NULL (without an
 * exception) for a family whose jobs are exact. -1 with MemoryError. */
static int keep_rooms(const aeskit_batch *b, const aeskit_batch_ops *ops, size_t **room)
{
    *room = NULL;
    if (ops->exact)
        return 0;
    if ((*room = PyMem_Malloc((b->n ? b->n : 1) * sizeof **room)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < b->n; i++)
        (*room)[i] = b->msgs[i].out_len;
    return 0;
}

/* Record i's room: as kept, or (exact jobs) its out_len. */
#define ROOM(b, room, i) ((room) != NULL ? (room)[i] : (b)->msgs[i].out_len)

PyObject *aeskit_batch_seq(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key,
                           int enc, unsigned threads, PyObject *exc, const char *what)
{
    if (check_all(b, ops, key, enc) < 0)
        return NULL;
    PyObject *list = PyList_New((Py_ssize_t)b->n);
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < b->n; i++) {
        PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)b->msgs[i].out_len);
        if (out == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        b->msgs[i].dst = (uint8_t *)PyBytes_AS_STRING(out);
        PyList_SET_ITEM(list, (Py_ssize_t)i, out);
    }
    size_t *room;
    if (keep_rooms(b, ops, &room) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    const size_t failed = batch_run(b, ops, key, enc, threads);
    if (failed != 0) {
        for (size_t i = 0; i < b->n; i++)
            aeskit_secure_zero(b->msgs[i].dst, ROOM(b, room, i));
        PyMem_Free(room);
        Py_DECREF(list);
        batch_fail(b, exc, what);
        return NULL;
    }
    for (size_t i = 0; room != NULL && i < b->n; i++) {
        if (b->msgs[i].out_len == room[i])
            continue;
        PyObject *cut = PyBytes_FromStringAndSize((const char *)b->msgs[i].dst,
                                                  (Py_ssize_t)b->msgs[i].out_len);
        aeskit_secure_zero(b->msgs[i].dst, room[i]);
        if (cut == NULL) {
            PyMem_Free(room);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SetItem(list, (Py_ssize_t)i, cut);
    }
    PyMem_Free(room);
    return list;
}

PyObject *aeskit_batch_packed(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key,
                              int enc, unsigned threads, const aeskit_offsets *o,
                              PyObject *offsets, PyObject *dst, int in_place, int zero,
                              PyObject *exc, const char *what)
{
    Py_buffer *dv;
    size_t total;
    if (check_all(b, ops, key, enc) < 0 ||
        take_buffer(b, "dst", dst, AESKIT_BUF_WRITABLE, &dv) < 0)
        return NULL;
    /* the outputs' offsets and each record's dst, in one pass */
    PyObject *out = offsets_out(b, offsets, o, dv->buf, &total);
    if (out == NULL)
        return NULL;
    if ((size_t)dv->len < total) {
        Py_DECREF(out);
        aeskit_error(PyExc_ValueError, b->at, "dst must be at least %zu bytes for these "
                     "outputs, got %zd", total, dv->len);
        return NULL;
    }
    /* the span the messages read; a lazy batch's records are not written
     * yet (msgs holds one chunk's room), so its offsets say it */
    const uint8_t *src = NULL;
    size_t src_len = 0;
    if (b->lazy != NULL) {
        src = b->lazy_src + offset_at(b->lazy, 0);
        src_len = (size_t)(offset_at(b->lazy, b->n) - offset_at(b->lazy, 0));
    } else if (b->n != 0) {
        src = b->msgs[0].src;
        src_len = (size_t)(b->msgs[b->n - 1].src + b->msgs[b->n - 1].len - src);
    }
    if (check_overlap(b->at, src, src_len, dv->buf, total, in_place) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    /* A message's output must not land on what a later message (or another
     * thread's) still reads. */
    const aeskit_span *read[2] = {&b->side, &b->ad};
    const char *name[2] = {b->side_name, "associated_data"};
    for (size_t k = 0; k < 2; k++) {
        if (aeskit_meets(read[k]->p, read[k]->len, dv->buf, total)) {
            Py_DECREF(out);
            aeskit_error(PyExc_ValueError, b->at, "dst overlaps %s: pass a separate buffer",
                         name[k]);
            return NULL;
        }
    }
    size_t *room;
    if (keep_rooms(b, ops, &room) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    const size_t failed = batch_run(b, ops, key, enc, threads);
    PyObject *r = NULL;
    if (failed != 0 && !zero) {
        aeskit_secure_zero(dv->buf, total);
        batch_fail(b, exc, what);
        goto done;
    }
    /* failed outputs zeroed, shorter ones moved down; nothing to do when
     * exact jobs all succeeded (every output is where it was laid) */
    if (room != NULL || failed != 0) {
        int moved = 0;
        uint8_t *p = dv->buf;
        for (size_t i = 0; i < b->n; i++) {
            aeskit_batch_msg *m = &b->msgs[i];
            if (!b->ok[i]) {
                aeskit_secure_zero(m->dst, ROOM(b, room, i));
                m->out_len = ROOM(b, room, i);
            } else if (m->dst != p) {
                memmove(p, m->dst, m->out_len);
            }
            moved |= m->out_len != ROOM(b, room, i);
            p += m->out_len;
        }
        if (moved) {
            /* the outputs moved down: zero what they left, and say where they are */
            aeskit_secure_zero(p, total - (size_t)(p - (uint8_t *)dv->buf));
            Py_DECREF(out);
            if ((out = offsets_out(b, offsets, o, NULL, &total)) == NULL)
                goto done;
        }
    }
    r = zero ? PyByteArray_FromStringAndSize((const char *)b->ok, (Py_ssize_t)b->n)
             : Py_NewRef(out);
done:
    PyMem_Free(room);
    Py_XDECREF(out);
    return r;
}

/* ---- a method without associated data ---------------------------------- */

/* Outputs of one length (s->out_len: a MAC's tags) go at i x out_len in
 * dst, so the collector can set each record's dst as it writes the record
 * (b->out_base), and the layout then writes the offsets alone: a pass
 * less over the records, which for 4096 messages (256 KiB) do not fit in
 * L1. dst is taken quietly here (a buffer that will not do is left to
 * aeskit_batch_packed's take, which names it in its place among the
 * arguments' errors); -1 only with MemoryError. */
static int early_dst(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *dst)
{
    if (s->out_len == 0)
        return 0;
    Py_buffer *v = new_view(b);
    if (v == NULL)
        return -1;
    if (PyObject_GetBuffer(dst, v, PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        return 0;
    }
    view_taken(b);
    b->out_base = v->buf;
    return 0;
}

PyObject *aeskit_batch_call(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames, const char *fname, int into,
                            const aeskit_batch_shape *s, const aeskit_batch_ops *ops, int enc,
                            int in_place, PyObject *exc, const char *what)
{
    const int has_side = s->side != NULL;
    const int after = has_side && s->side_after && !into;
    const char *const names[3][5] = {
        {s->side, s->data, "threads"},
        {s->side, "src", "offsets", "dst", "threads"},
        {s->data, s->side, "threads"},
    };
    const int npos = (into ? 4 : 2) - !has_side;
    const aeskit_params params = {fname, names[after ? 2 : into] + !has_side, npos + 1, npos,
                                  npos};
    PyObject *a[5] = {NULL};
    if (aeskit_parse(Py_TYPE(op), &params, argv, nargs, kwnames, a + !has_side) < 0)
        return NULL;
    if (after) {
        PyObject *data = a[0];
        a[0] = a[1];
        a[1] = data;
    }
    const aeskit_at at = AESKIT_AT(op, fname);
    aeskit_batch_shape shape = *s;
    if (into)
        shape.data = "src";
    aeskit_batch b;
    aeskit_batch_init(&b, at);
    PyObject *r = NULL;
    unsigned threads;
    aeskit_offsets o;
    b.want_lazy = ops->lazy_ok && into;
    if (!into) {
        if (aeskit_batch_threads(at, a[2], &threads) == 0 &&
            aeskit_batch_collect(&b, &shape, a[0], a[1], NULL) == 0)
            r = aeskit_batch_seq(&b, ops, op, enc, threads, exc, what);
    } else if (aeskit_batch_threads(at, a[4], &threads) == 0 &&
               ((b.want_lazy &= threads == 1), early_dst(&b, &shape, a[3]) == 0) &&
               aeskit_batch_collect_packed(&b, &shape, a[0], a[1], a[2], NULL, NULL, &o) == 0) {
        r = aeskit_batch_packed(&b, ops, op, enc, threads, &o, a[2], a[3], in_place, 0, exc,
                                what);
    }
    aeskit_batch_release(&b);
    return r;
}
