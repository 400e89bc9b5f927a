/*
 * batch.h: one call over many independent messages, for every family's
 * *_many methods (py/aead.c, cipher.c, mac.c, kw.c). A family turns its
 * arguments into n message records, checking each as its one-shot call
 * would, and gives a job that runs one record; the engine here runs the
 * jobs with the GIL released for the whole batch, on up to threads= OS
 * threads, and reports which failed. Nothing here asks which family or
 * mode it serves.
 *
 * Two ways in, one engine:
 *   - the sequence form: each argument a sequence of bytes-like objects,
 *     one per message (aeskit_batch_collect), each output a new bytes object;
 *   - the packed form: the messages back to back in one buffer with n + 1
 *     int32 or int64 offsets, the Arrow binary-column layout
 *     (aeskit_batch_collect_packed), the outputs back to back in dst.
 * Every check is made, and every buffer taken (which pins it), before any
 * job runs; a failed batch zeroes what it wrote (the sequence form: every
 * output; the packed form: every output, or with on_failure="zero" only
 * the failed ones).
 */
#ifndef AESKIT_BATCH_H
#define AESKIT_BATCH_H

#include "glue.h"
#include "modes/aead.h"   /* aeskit_span */

/* One message of a batch, as a job sees it. */
typedef struct {
    const uint8_t *src;
    size_t len;
    uint8_t *dst;
    size_t out_len;             /* room at dst; a job that writes less says so here */
    const uint8_t *iv;          /* nonce, iv or tweak; a tag to verify; NULL if none */
    size_t iv_len;
    const aeskit_span *ad;      /* associated data, n_ad items */
    size_t n_ad;
} aeskit_batch_msg;

/* Runs one message, without the GIL and without touching a Python object:
 * 1 if it succeeded, 0 if it failed its check (and then wrote nothing it
 * keeps: the engine zeroes its output anyway). key: the key object, which
 * the calling method keeps alive. */
typedef int (*aeskit_batch_job)(const void *key, int enc, aeskit_batch_msg *m);

/* Runs n records at once, as n calls of the family's job would, setting
 * ok[i] for each; returns the count that failed. For a family whose
 * modes interleave independent messages (multi-buffer kernels); the
 * engine hands each thread's chunk of records to it whole. */
typedef size_t (*aeskit_batch_many)(const void *key, int enc, aeskit_batch_msg *ms,
                                    uint8_t *ok, size_t n);

/* Records, and buffer views, a batch holds without allocating them
 * (aeskit_batch.msgs0, views0). */
#define AESKIT_BATCH_INLINE 16
#define AESKIT_BATCH_INLINE_VIEWS 6

/* The most threads= takes. */
#define AESKIT_BATCH_MAX_THREADS 256

/*
 * What a batch call holds while it is built and run: the argument
 * sequences as tuples, every buffer taken, the records, and the spans of
 * associated data. aeskit_batch_init it, and aeskit_batch_release it
 * whatever happened.
 */
typedef struct {
    aeskit_at at;
    size_t n;                   /* messages */
    aeskit_batch_msg *msgs;
    uint8_t *ok;                /* n: 1 per message that succeeded */
    PyObject *held;             /* a list of what is held for the call, or NULL */
    struct aeskit_batch_views *views;   /* taken, released at the end */
    aeskit_span *spans;         /* associated data of all messages */
    size_t n_spans, cap_spans;
    aeskit_span side, ad;       /* the packed form's side and associated data buffers */
    const char *side_name;      /* the side's argument */
    uint8_t *out_base;          /* packed outputs of one length (the shape's out_len):
                                   dst's buffer, each record's dst set at i x out_len by
                                   the collector; else NULL */
    size_t out_stride;          /* that out_len, with out_base */
    uint8_t want_lazy;          /* set by the caller before the packed collector: it may
                                   leave the records to the run (lazy) */
    const struct aeskit_offsets_s *lazy;   /* the packed offsets when the run fills the
                                   records a chunk at a time into msgs[0..], else NULL */
    const uint8_t *lazy_src;    /* with lazy: src's buffer */
    size_t *view_count;         /* the count new_view's view goes into when taken */
    /* What a small batch needs, kept here rather than allocated (three
     * allocations and frees were a tenth of a packed call's fixed cost):
     * the first views, and the records of up to AESKIT_BATCH_INLINE
     * messages. Last, so that aeskit_batch_init clears only what is above. */
    size_t views0_used;
    Py_buffer views0[AESKIT_BATCH_INLINE_VIEWS];
    aeskit_batch_msg msgs0[AESKIT_BATCH_INLINE];
    uint8_t ok0[AESKIT_BATCH_INLINE];
} aeskit_batch;

void aeskit_batch_init(aeskit_batch *b, aeskit_at at);
void aeskit_batch_release(aeskit_batch *b);

/* "arg[i]" into buf, for a message about one item. */
const char *aeskit_batch_name(char *buf, size_t cap, const char *arg, size_t i);

/* threads= (NULL: not given): 1 to AESKIT_BATCH_MAX_THREADS into *out; -1
 * with TypeError or ValueError naming at. */
int aeskit_batch_threads(aeskit_at at, PyObject *obj, unsigned *out);

/* ---- a family's batch: its shape and its operations -------------------- */

/* How a family's associated data comes. */
enum {
    AESKIT_BATCH_AD_NONE,       /* it has none */
    AESKIT_BATCH_AD_ONE,        /* None, one bytes-like for all, or one per message */
    AESKIT_BATCH_AD_LISTS,      /* None, or one list of items per message (SIV) */
};

/* The arguments of a family's batch, for the collectors and their errors. */
typedef struct {
    const char *data;           /* the messages' argument: "data", "messages", ... */
    const char *side;           /* one fixed-size item per message: "nonces", "ivs",
                                   "tweaks", "tags"; NULL if none */
    int ad;                     /* AESKIT_BATCH_AD_* */
    size_t max_ad;              /* items per message, for AESKIT_BATCH_AD_LISTS */
    unsigned data_flags;        /* AESKIT_BUF_TEXT where text is the usual mistake */
    uint8_t side_after;         /* the sequence form takes side after data (verify_many) */
    size_t out_len;             /* each record's out_len as collected: outputs of one
                                   length (a MAC's tags) need no pass to set it */
} aeskit_batch_shape;

typedef struct {
    aeskit_batch_job job;
    /* With the GIL, before any job (the records' ad pointers set): checks
     * record i as the one-shot call
     * checks its arguments (the side item's length, the mode's limits),
     * naming the item, and sets its out_len to the most it writes (or
     * leaves the shape's, where that is it); -1 with an exception. */
    int (*check)(aeskit_batch *b, const void *key, int enc, size_t i);
    /* NULL, or the records of a chunk at once, in place of job (then
     * NULL): one of the two is given. */
    aeskit_batch_many many;
    /* NULL, or check over every record in one call, in place of check (the
     * same checks, errors and out_len, in record order): for a family
     * whose per-record call costs more than its checks. */
    int (*check_all)(aeskit_batch *b, const void *key, int enc);
    /* 1: a job writes exactly the out_len its check set, never less (it
     * does not touch out_len), so the engine keeps no copy of it and moves
     * no output after the run. */
    uint8_t exact;
    /* 1: check_all neither fails nor reads a record, and no job fails, so
     * a packed batch on one thread with outputs of one length may fill its
     * records a chunk at a time as it runs them (aeskit_batch.lazy): 4096
     * records take 256 KiB, past L1, and a pass to write them all and
     * another to read them back cost a fifth of a batch of 64-byte CMACs. */
    uint8_t lazy_ok;
} aeskit_batch_ops;

/* The sequence form's arguments into b's records: data a sequence, side
 * (NULL if the shape has none) and ad (NULL or None: none) as the shape
 * says. -1 with an exception naming the argument and item. */
int aeskit_batch_collect(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *side,
                         PyObject *data, PyObject *ad);

/* Checks every record (ops->check), makes each output a new bytes object,
 * runs the batch, and returns the list of outputs (each cut to what its
 * job wrote); if any failed, zeroes every output and raises exc (what:
 * "decryption", ...) with .failed. */
PyObject *aeskit_batch_seq(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key,
                           int enc, unsigned threads, PyObject *exc, const char *what);

/* ---- the packed form -------------------------------------------------- */

/* A packed argument's offsets: n + 1 of them, 4 or 8 bytes each. */
typedef struct aeskit_offsets_s {
    Py_buffer *view;
    const uint8_t *p;
    size_t n;                   /* messages: the count of offsets less one */
    unsigned width;             /* 4 (int32) or 8 (int64) */
} aeskit_offsets;

/* The packed form's arguments into b's records: src with offsets (n + 1
 * of them, into *o), side one buffer of n equal items, ad None, one buffer
 * for all (ad_offsets None) or packed with ad_offsets. -1 with an
 * exception naming the argument, before any work. */
int aeskit_batch_collect_packed(aeskit_batch *b, const aeskit_batch_shape *s, PyObject *side,
                                PyObject *src, PyObject *offsets, PyObject *ad,
                                PyObject *ad_offsets, aeskit_offsets *o);

/* Checks every record, lays the outputs back to back in dst (in_place: dst
 * may be src itself, when every output is as long as its input or
 * shorter), runs the batch and returns offsets_out; a job that writes less
 * than its out_len has its output moved down after the run. A failure:
 * with on_failure="raise" (zero 0) every output zeroed and exc raised;
 * with "zero" the failed outputs zeroed and a bytearray of 0/1 per message
 * returned. */
PyObject *aeskit_batch_packed(aeskit_batch *b, const aeskit_batch_ops *ops, const void *key,
                              int enc, unsigned threads, const aeskit_offsets *o,
                              PyObject *offsets, PyObject *dst, int in_place, int zero,
                              PyObject *exc, const char *what);

/* A whole batch method of a family without associated data, from its
 * arguments to its result: the sequence form ([side,] data, *, threads=1:
 * s->side and s->data name them) or, into, the packed form ([side,] src,
 * offsets, dst, *, threads=1), as aeskit_batch_seq and aeskit_batch_packed
 * say. op: the key object, the jobs' key. */
PyObject *aeskit_batch_call(PyObject *op, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames, const char *fname, int into,
                            const aeskit_batch_shape *s, const aeskit_batch_ops *ops, int enc,
                            int in_place, PyObject *exc, const char *what);

/* on_failure= (NULL: not given): 0 "raise" or 1 "zero"; -1 with
 * ValueError or TypeError naming at. */
int aeskit_batch_on_failure(aeskit_at at, PyObject *obj, int *zero);

#endif
