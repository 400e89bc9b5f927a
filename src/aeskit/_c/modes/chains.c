/*
 * chains.c: the scheduler of chains.h over the cbc_x slot. Lanes are kept
 * packed (0..live-1) because cbc_x takes its chains side by side: after
 * each call a lane whose chain ended takes the queue's next chain where it
 * is, and once the queue is empty the lanes that go on move down in order
 * over those that ended. Only lengths steer it: nothing here reads a block
 * or a chain value but to copy it.
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

/* Lane j on the queue's next chain with blocks (c[*next..n)), its value
 * loaded; 0 when the queue holds none. */
static int lane_fill(lanes *l, size_t j, aeskit_chain *c, size_t n, size_t *next)
{
    while (*next < n) {
        l->chain[j] = &c[(*next)++];
        if (lane_seek(l, j, 0)) {
            memcpy(l->v[j], l->chain[j]->v, 16);
            return 1;
        }
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

/* The stagger of an encryption's first lanes (below): a group of lanes
 * enters every STAGGER_BLOCKS blocks, for chains of at least
 * STAGGER_MIN blocks. */
#define STAGGER_BLOCKS 4     /* a 64-byte line apart */
#define STAGGER_MIN 64

void aeskit_cbc_chains(const aeskit_key *k, int out, aeskit_chain *c, size_t n)
{
    /* A backend that encrypts by whole lines (cbc_x_lines) needs no
     * stagger (below), and takes encryption on its own count of chains. */
    size_t lines = out ? k->impl->cbc_x_lines : 0;
    for (size_t i = 0; i < n && lines != 0; i++)   /* the kernel's own test, on the bodies */
        if (c[i].n_seg > 0 && !aeskit_cbc_lines_alike(&c[i].seg[0].src, &c[i].seg[0].dst, 1, 64))
            lines = 0;
    const size_t w = lines != 0 ? lines : k->impl->cbc_x_chains;
    assert(w >= 1 && w <= k->impl->cbc_x_chains && w <= AESKIT_CBC_X_MAX);
    lanes l;
    size_t live = 0, next = 0;
    /* Messages laid 4 KiB apart (a packed batch of 4 KiB records) put
     * every lane's block at one offset modulo 4096: with 32 lanes reading
     * and writing, 64 lines meet in one L1 set of 12 ways, and stores that
     * miss stall the kernel (CBC encryption of 64 x 4 KiB ran at 2.4x its
     * time with the records 64 bytes apart on vaes_avx512). 8 lanes are
     * enough when the output sits 0-64 bytes past the input modulo 4096:
     * on Zen 3 aesni's 64 x 4 KiB took 960-1920 ns a message there against
     * 545 with the output 2 KiB off (the 3x gap between the bench's packed
     * and sequence forms, whose buffers land where malloc puts them). So
     * an encryption on 8 lanes or more starts its long chains a group of
     * w / 8 lanes at a time, STAGGER_BLOCKS blocks apart: each group then
     * sits in its own sets, and the lanes refilled later keep their
     * stagger. A MAC only reads, which the L2 absorbs; a backend that
     * writes whole lines (cbc_x_lines) keeps them apart itself. */
    size_t cap = w;
    const size_t group = w / 8;
    if (out && lines == 0 && group > 0 && n > 0 && c[0].n_seg > 0 &&
        c[0].seg[0].blocks >= STAGGER_MIN)
        cap = group;
    for (;;) {
        while (live < cap && lane_fill(&l, live, c, n, &next))
            live++;   /* a chain without blocks keeps its value as it is */
        if (live == 0)
            break;
        size_t m = l.left[0];
        for (size_t j = 1; j < live; j++)
            m = l.left[j] < m ? l.left[j] : m;
        if (cap < w && next < n) {
            m = m < STAGGER_BLOCKS ? m : STAGGER_BLOCKS;
            cap += group;
        } else {
            cap = w;
        }
        k->impl->cbc_x(k, live, l.v, out ? l.dst : NULL, l.src, m);
        size_t keep = 0;   /* the lanes that go on, packed down in order */
        for (size_t j = 0; j < live; j++) {
            l.left[j] -= m;
            l.src[j] += AESKIT_BLOCK * m;
            if (out)
                l.dst[j] += AESKIT_BLOCK * m;
            if (l.left[j] == 0 && !lane_seek(&l, j, l.seg[j] + 1)) {
                memcpy(l.chain[j]->v, l.v[j], 16);
                /* the queue's next chain takes the lane where it is:
                 * moving the lanes after it down over it and refilling
                 * the top cost aesni's 64 x 4 KiB (a call at each of a
                 * wave's staggered ends: 7 of every 8 calls end one
                 * chain) 153 TSC ticks a call outside cbc_x against 127
                 * (Zen 3, medians of 5, a timer call included): ~2% */
                if (!lane_fill(&l, j, c, n, &next))
                    continue;
            }
            if (keep != j)
                lane_move(&l, keep, j);
            keep++;
        }
        live = keep;
    }
    aeskit_secure_zero(l.v, sizeof l.v);
}

/* The size of group gi when n chains go in groups of at most w, as even
 * as they can be: 33 chains on 32 lanes go as 17 and 16, not 32 and a
 * lone one that runs at one chain's latency. */
static size_t even_group(size_t n, size_t w, size_t gi)
{
    const size_t groups = (n + w - 1) / w;
    return n / groups + (gi < n % groups);
}

/* Whether every chain of c[0..n) has c[0]'s shape (aeskit_cbc_macs):
 * lengths only. */
static int chains_alike(const aeskit_chain *c, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (c[i].n_seg != c[0].n_seg)
            return 0;
        for (size_t s = 0; s < c[0].n_seg; s++)
            if (c[i].seg[s].blocks != c[0].seg[s].blocks)
                return 0;
    }
    return 1;
}

void aeskit_cbc_macs_even(const aeskit_key *k, uint8_t (*v)[16], const uint8_t *const *src,
                          size_t n, size_t blocks)
{
    const size_t w = k->impl->cbc_x_chains;
    assert(w >= 1 && w <= AESKIT_CBC_X_MAX);
    if (n == 0 || blocks == 0)
        return;
    for (size_t i = 0, gi = 0; i < n; gi++) {
        const size_t g = even_group(n, w, gi);
        k->impl->cbc_x(k, g, v + i, NULL, src + i, blocks);
        i += g;
    }
}

void aeskit_cbc_macs(const aeskit_key *k, aeskit_chain *c, size_t n)
{
    const size_t w = k->impl->cbc_x_chains;
    if (!chains_alike(c, n)) {
        aeskit_cbc_chains(k, 0, c, n);
        return;
    }
    uint8_t v[AESKIT_CBC_X_MAX][16];
    const uint8_t *src[AESKIT_CBC_X_MAX];
    for (size_t i = 0, gi = 0; i < n; gi++) {
        const size_t g = even_group(n, w, gi);
        for (size_t j = 0; j < g; j++)
            memcpy(v[j], c[i + j].v, 16);
        for (size_t s = 0; s < c[0].n_seg; s++) {
            for (size_t j = 0; j < g; j++)
                src[j] = c[i + j].seg[s].src;
            aeskit_cbc_macs_even(k, v, src, g, c[0].seg[s].blocks);
        }
        for (size_t j = 0; j < g; j++)
            memcpy(c[i + j].v, v[j], 16);
        i += g;
    }
    aeskit_secure_zero(v, 16 * w);
}
