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

typedef struct {
    aeskit_chain *chain;
    size_t seg;         /* the segment running */
    size_t left;        /* its blocks not yet run */
} lane;

/* The lane on its chain's next nonempty segment from seg on; 0 when the
 * chain has none left. */
static int lane_seek(lane *l, size_t seg)
{
    for (; seg < l->chain->n_seg; seg++)
        if (l->chain->seg[seg].blocks != 0) {
            l->seg = seg;
            l->left = l->chain->seg[seg].blocks;
            return 1;
        }
    return 0;
}

void aeskit_cbc_chains(const aeskit_key *k, int out, aeskit_chain *c, size_t n)
{
    const size_t w = k->impl->cbc_x_chains;
    assert(w >= 1 && w <= AESKIT_CBC_X_MAX);
    lane lanes[AESKIT_CBC_X_MAX];
    uint8_t v[AESKIT_CBC_X_MAX][16];
    const uint8_t *src[AESKIT_CBC_X_MAX];
    uint8_t *dst[AESKIT_CBC_X_MAX];
    size_t live = 0, next = 0;
    for (;;) {
        while (live < w && next < n) {
            lane *l = &lanes[live];
            l->chain = &c[next++];
            if (!lane_seek(l, 0))
                continue;   /* no blocks: its value stays as it is */
            memcpy(v[live], l->chain->v, 16);
            live++;
        }
        if (live == 0)
            break;
        size_t m = SIZE_MAX;
        for (size_t j = 0; j < live; j++) {
            const aeskit_seg *s = &lanes[j].chain->seg[lanes[j].seg];
            const size_t done = s->blocks - lanes[j].left;
            src[j] = s->src + AESKIT_BLOCK * done;
            dst[j] = out ? s->dst + AESKIT_BLOCK * done : NULL;
            m = lanes[j].left < m ? lanes[j].left : m;
        }
        k->impl->cbc_x(k, live, v, out ? dst : NULL, src, m);
        for (size_t j = 0; j < live;) {
            lane *l = &lanes[j];
            l->left -= m;
            if (l->left != 0 || lane_seek(l, l->seg + 1)) {
                j++;
                continue;
            }
            memcpy(l->chain->v, v[j], 16);
            live--;
            if (j != live) {
                lanes[j] = lanes[live];
                memcpy(v[j], v[live], 16);
            }
        }
    }
    aeskit_secure_zero(v, sizeof v);
}
