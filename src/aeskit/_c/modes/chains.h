/*
 * chains.h: many independent CBC chains through the backend's cbc_x slot
 * (modes/chains.c), for the batch methods of the serial modes: CBC
 * encryption (modes/cbc.c), CMAC (modes/cmac.c) and CCM's CBC-MAC
 * (modes/ccm.c).
 *
 * A chain is a list of segments of whole blocks, each read from its own
 * place (a message's body in the caller's buffer, a header or padded last
 * block on the mode's stack), so that a mode hands over a message as it
 * lies, with no copy. The scheduler keeps up to the backend's
 * cbc_x_chains chains in lanes and runs them in lockstep for as many
 * blocks as the shortest current segment has left; a lane whose chain
 * ends is refilled from the queue at once, as "Comb to Pipeline" (FSE
 * 2015) does, so messages of unequal length keep every lane busy until
 * the queue runs dry.
 */
#ifndef AESKIT_CHAINS_H
#define AESKIT_CHAINS_H

#include "aeskit.h"

/* blocks whole blocks at src; with output, written to dst (which may be
 * src). */
typedef struct aeskit_seg {
    const uint8_t *src;
    uint8_t *dst;
    size_t blocks;
} aeskit_seg;

/* A chain: its value (the IV in, the last block out: CBC's next IV, or
 * CBC-MAC's MAC) and its segments, in order. */
typedef struct aeskit_chain {
    uint8_t v[16];
    const aeskit_seg *seg;
    size_t n_seg;
} aeskit_chain;

/* The most segments a mode gives one chain (CCM: B0 and the AAD's head,
 * its body, its padded tail, the data's body and its padded tail). */
#define AESKIT_CHAIN_SEGS 5

/* Whether each of the chains' src[c] and dst[c] sit alike within a
 * line of `line` bytes: what a backend's whole-line encryption
 * (aeskit_impl.cbc_x_lines) needs to read and write whole lines of both.
 * Addresses only. */
static inline int aeskit_cbc_lines_alike(const uint8_t *const *src, uint8_t *const *dst,
                                         size_t chains, size_t line)
{
    for (size_t c = 0; c < chains; c++)
        if (((uintptr_t)src[c] - (uintptr_t)dst[c]) % line != 0)
            return 0;
    return 1;
}

/* Every chain of c[0..n) through all its segments under k: CBC
 * encryption (out 1: each block's result to its segment's dst) or
 * CBC-MAC (out 0). Chains never overlap one another. */
void aeskit_cbc_chains(const aeskit_key *k, int out, aeskit_chain *c, size_t n);

/* aeskit_cbc_chains(k, 0, c, n): the CBC-MACs of c[0..n). When the chains
 * are alike (as many segments each, and segment j as many blocks in every
 * chain: a batch of messages of one length, the common case) they run in
 * lockstep, in even groups of at most cbc_x_chains, one cbc_x call per
 * segment, with no scheduler; otherwise the scheduler takes them. */
void aeskit_cbc_macs(const aeskit_key *k, aeskit_chain *c, size_t n);

/* n CBC-MAC chains side by side, all of one length: chain i's value v[i]
 * through the blocks whole blocks at src[i], through cbc_x in groups of
 * at most cbc_x_chains, as even as they can be. The plain loop under
 * aeskit_cbc_macs, for a mode whose messages are of one length and whose
 * values lie side by side already (CMAC's tags). */
void aeskit_cbc_macs_even(const aeskit_key *k, uint8_t (*v)[16], const uint8_t *const *src,
                          size_t n, size_t blocks);

#endif
