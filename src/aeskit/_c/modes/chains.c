/*
 * chains.c: the scheduler of chains.h over the cbc_x slot. Lanes are kept
 * packed (0..live-1) because cbc_x takes its chains side by side; a lane
 * whose chain ends takes the next chain of the queue, or, once the queue
 * is empty, the last lane's chain. Only lengths steer it: nothing here
 * reads a block or a chain value but to copy it.
 */
#include <string.h>

#include "chains.h"
#include "common.h"

/* The lanes: lane j runs chain[j], now in its segment seg[j], with left[j]
 * blocks of it to go from src[j] (and dst[j]); v[j] is its value. */
typedef struct {
    aeskit_chain *chain[AESKIT_CBC_X_MAX];
    size_t seg[AESKIT_CBC_X_MAX], left[AESKIT_CBC_X_MAX];
    const uint8_t *src[AESKIT_CBC_X_MAX];
    uint8_t *dst[AESKIT_CBC_X_MAX];
    uint8_t v[AESKIT_CBC_X_MAX][16];
} lanes;

/* Lane j on its chain's next nonempty segment from seg on; 0 when the
 * chain has none left. */
static int lane_seek(lanes *l, size_t j, size_t seg)
{
    const aeskit_chain *c = l->chain[j];
    for (; seg < c->n_seg; seg++)
        if (c->seg[seg].blocks != 0) {
            l->seg[j] = seg;
            l->left[j] = c->seg[seg].blocks;
            l->src[j] = c->seg[seg].src;
            l->dst[j] = c->seg[seg].dst;
            return 1;
        }
    return 0;
}

/* Lane j takes lane from's place and state. */
static void lane_move(lanes *l, size_t j, size_t from)
{
    l->chain[j] = l->chain[from];
    l->seg[j] = l->seg[from];
    l->left[j] = l->left[from];
    l->src[j] = l->src[from];
    l->dst[j] = l->dst[from];
    memcpy(l->v[j], l->v[from], 16);
}

void aeskit_cbc_chains(const aeskit_key *k, int out, aeskit_chain *c, size_t n)
{
    const size_t w = k->impl->cbc_x_chains;
    assert(w >= 1 && w <= AESKIT_CBC_X_MAX);
    lanes l;
    size_t live = 0, next = 0;
    for (;;) {
        while (live < w && next < n) {
            l.chain[live] = &c[next++];
            if (!lane_seek(&l, live, 0))
                continue;   /* no blocks: its value stays as it is */
            memcpy(l.v[live], l.chain[live]->v, 16);
            live++;
        }
        if (live == 0)
            break;
        size_t m = l.left[0];
        for (size_t j = 1; j < live; j++)
            m = l.left[j] < m ? l.left[j] : m;
        k->impl->cbc_x(k, live, l.v, out ? l.dst : NULL, l.src, m);
        for (size_t j = 0; j < live;) {
            l.left[j] -= m;
            l.src[j] += AESKIT_BLOCK * m;
            if (out)
                l.dst[j] += AESKIT_BLOCK * m;
            if (l.left[j] != 0 || lane_seek(&l, j, l.seg[j] + 1)) {
                j++;
                continue;
            }
            memcpy(l.chain[j]->v, l.v[j], 16);
            if (j != --live)
                lane_move(&l, j, live);
        }
    }
    aeskit_secure_zero(l.v, sizeof l.v);
}
