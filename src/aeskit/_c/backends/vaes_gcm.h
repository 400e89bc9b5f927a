/*
 * vaes_gcm.h: the fused GCM kernel of both vaes tables, included by
 * vaes_avx512.c and vaes_avx2.c after vaes_body.h, whose CTR and GHASH
 * pieces it uses. Contracts: modes/gcm.h (struct aeskit_gcm_impl) and
 * modes/gcmsiv.h (the open kernel).
 *
 * Each batch runs the AES rounds of VAES_W counter blocks (CTR's whitening
 * trick, vaes_ctr_whiten_k0) with the GHASH of VAES_W other blocks threaded
 * through the middle rounds, two vectors' VPCLMULQDQ at a time, the vector
 * carrying the accumulator last (as vaes_gbatch orders them; in the first
 * batch it is the vector holding the first present block). The hashed
 * batches go in chunks of up to four that share one reduction: a chunk of
 * m batches takes the key's last m batches of powers (H^(m VAES_W)..H^1), the
 * accumulator riding in its first batch, and its reduction runs after its
 * stores, where its latency overlaps the next batch's rounds; the short
 * chunk comes first. Decrypting, the hashed blocks are the batch's own
 * input, all loaded before it stores anything, so dst == src is safe.
 * Encrypting, they are the previous batch's output, reread from dst (hot in
 * L1): the first batch hashes nothing, and the last batch's ciphertext is
 * hashed after the loop with the tail's (gcm_tail). simd_body.h's GCM kernel is the
 * same design on 128-bit registers.
 *
 * GCM-SIV's opening (the gcmsiv sub-table's open) is the same kernel in
 * encryption's order (it hashes the plaintext it writes) with LE32
 * counters from the tag (32-bit lane adds wrap them modulo 2^32, as RFC
 * 8452 says; the first batch's alignment is the same) and POLYVAL's blocks
 * loaded without the byte swap (vaes_gstep2_pv). The mode builds its hash
 * key per message with VAES_W powers only (gcmsiv.c's POLY_BLOCKS: 128
 * would take 24 more vector multiplies in every message's key set-up),
 * so each batch is its own chunk and reduction, and the last batch and
 * the tail are hashed apart. That is the split path's reduction count (its
 * polyval calls take 32 blocks); what fusing saves is the second pass and
 * the stalls that the split CTR and POLYVAL each leave on the other's
 * units: on Zen 4 the opening runs at 1.1-1.2x its floor, about GCM's.
 *
 * On ymm (16 registers) the round keys, the powers and their halves are
 * memory operands, and a batch is 8 counter vectors (16 blocks) hashing 8
 * others in 4 pairs on rounds 2, 4, 6 and 8: live are the 8 counters, the 3
 * sums and one pair's data and products. Earlier ymm layouts (batches of 8
 * or of 4 counter vectors) were no faster than the split path; these are
 * what differs now, each a cut in the vector instructions that are neither
 * AES nor multiplies, which on Intel share three ports with AES (a ymm
 * VAES on two of them) and on Zen 4 the four FP pipes:
 *  - the key's Karatsuba halves are laid out per batch of VAES_W blocks
 *    (vaes_body.h), so a ymm batch reads its pairs' halves from the key
 *    instead of making them (with the data's: 2 unpacks and an XOR per pair);
 *  - the counters are aligned (one XOR per vector builds and whitens them),
 *    where the split path's BE32 ctr slot spends an add, a shuffle and an
 *    XOR per vector on any counter;
 *  - the ymm key holds 128 powers (64 then), so eight batches share a reduction.
 * Per 16 blocks of AES-128 the loop issues 80 VAES, 24.5 VPCLMULQDQ and
 * about 67 other vector instructions (9 byte shuffles, 10.5 unpacks and
 * lane moves, 47 XORs: 8 whitening, 8 data, 24 sums, 2 Karatsuba, 5 of the
 * reduction), against 80 + 25 + about 95 for the split CTR (8 shuffles, 10
 * adds, 10 lane moves, 16 XORs) and GHASH passes (8 byte swaps, 11 unpacks
 * and lane moves, 31.5 XORs). llvm-mca's ratio fused/split is 0.82
 * (sapphirerapids) and 0.87 (znver4); measured on Emerald Rapids, 1.83x ->
 * 1.66-1.69x ECB (AES-128), 1.58x -> 1.41-1.47x (AES-256). What is left
 * is the count itself: on Intel's three ports 80 + 24 + 67 instructions
 * take at least 57 cycles per 40 of AES. Linux's aes-gcm-vaes-avx2 hashes
 * 8 blocks per 8 counter blocks with a reduction each time and makes each
 * block's Karatsuba half itself (an unpack and an XOR per vector).
 *
 * On Zen 4 the count is not what costs (measured with independent-chain
 * loops shaped like a batch: 8 ymm AES chains of 10 rounds, 3 VPCLMULQDQ
 * per round 1..8): 80 VAES + 24 multiplies take 52 cycles per batch, and
 * 64 more XORs, shuffles and unpacks that nothing waits on add 3; but when
 * each product is XORed into a sum right behind its multiply, the batch
 * takes 66 cycles, the same with VPADDQ or VADDPS as the consumer, and 57
 * when those XORs come a round later (stores as the consumers: 57; stored
 * and reloaded into the sums: 66-79). So on ymm (VAES_GCM_ONE) a batch
 * hashes one vector per round 1..8 (vaes_gcm_prod: 3 products, 14 live
 * registers with the 8 counters, where a pair's 6 products took 17 and GCC
 * spilled counter vectors in mid-round), and adds them to the sums before
 * the next round (vaes_gcm_add): AES-128 1.96-2.03x -> 1.85-1.90x ECB,
 * AES-256 1.57-1.65x -> 1.51-1.61x on Zen 4 (kt.py, alternated with the
 * previous build). The vectors go by pairs for their Karatsuba halves
 * (two unpacks and an XOR per pair, as vaes_gstep2_pv, where a shuffle and
 * an XOR per vector took 16 instructions a batch, not 12), a's half
 * multiplied on b's round and b's on the next, 3 multiplies a round: AES-128
 * 1.92-1.94x -> 1.86-1.88x ECB (kt-style, alternated in one process with the
 * previous build). On Zen 4 every vector instruction that is neither AES
 * nor a multiply costs about 0.4-0.5 cycle a batch (without the 24 sum
 * XORs: 11-13% faster; without the 8 byte swaps: 5.5%; without the 16
 * Karatsuba instructions: 7-9%, all as timing-only builds), and the order
 * matters as much: the adds a round later (after the next round's VAES)
 * 1-5% slower, in mid-round 4-5%, GCC's -fschedule-insns 22%, a pair's
 * 4 multiplies on one round 1.5%. Tried and no faster there: the adds tied by an asm to
 * the next round's VAES (GCC then spills), the hashing on rounds 2..9
 * (AES-256 slower); on aesni (simd_body.h), its pair step with the adds a
 * round later (decryption slower) or one block per round (both slower).
 *
 * The kernel takes every whole block it is given. Its first batch starts
 * skip = (first counter mod 16) blocks before the data, at the last
 * counter at or before the first whose low 4 bits are zero (a 12-byte
 * nonce's data starts at counter 2: 2 blocks early), those lanes absent:
 * zero when hashed, neither loaded nor stored (vaes_load_skip). The last
 * 0..VAES_W-1 blocks go one vector at a time and are hashed with the last
 * batch, so a message costs one call and no reduction of its own for its
 * head and tail. A message shorter than VAES_GCM_MIN blocks plus those up
 * to the aligned counter is left to the split path entirely (returns 0),
 * which is as fast there.
 *
 * Speed (Zen 4): the floor is not max(CTR, GHASH). A zmm VPCLMULQDQ issues
 * once per 2 cycles, and next to zmm VAES each one takes a cycle from the
 * AES units: an AES-128 batch of 32 blocks is 80 VAES + 24 VPCLMULQDQ = 104
 * cycles, 0.203 c/B, against 0.156 for CTR alone (aeskit bench prints this
 * mix as the floor). The byte swaps, the Karatsuba halves and the
 * reduction with its folds of lanes run on the same pipes; the folds and
 * the reduction are the part that can be shared, so four batches share
 * one (eight on ymm). On ymm the multiplies overlap the rounds almost fully, but ymm GHASH
 * alone is bound at 24 x 2 cycles per 16 blocks (0.19 c/B).
 *
 * On Zen 3 (vaes_avx2's CPU) they do not hide. GCC's AES-128 ymm batch
 * loop, timed alone as a micro-loop (its memory operands on a buffer),
 * takes 80-84 cycles, as the bench's 0.32-0.33 c/B; without its 24
 * VPCLMULQDQ 54-56, without its register XORs and shuffles 70-71, without
 * all three 43-44 (AES alone: 40). Independent-chain loops: 80 VAES + 24
 * VPCLMULQDQ take 56-60 cycles whatever their order (after, before or
 * between a round's VAES, on rounds 1-8, 2-9 or spread over 10), each
 * further ymm multiply 1.1-1.4, the 24 as 48 xmm ones 95; beside them a
 * register XOR costs 0.1-0.15 cycle, a shuffle (vpshufb, unpack) 0.4-0.55.
 * So the 24 multiplies (Karatsuba's least, 1.5 a block) take 20-28 cycles
 * from the AES pipes, the 18 shuffles (8 byte swaps, 8 unpacks, the
 * counter's 2) and 46 XORs 13-14 more, though no one kind alone shows (the
 * 8 unpacks or the 8 byte swaps out, or the unpacks as blends: within the
 * micro-loop's noise, 2 cycles). Tried in the kernel and not kept (ab.py
 * B/A at 16 KiB, AES-128 enc/dec, AES-256 enc/dec): the round keys as VAES
 * memory operands 1.012/1.020/1.058/1.038; VAES_GCM_R10 on ymm 1.018/1.025
 * (AES-128; 64 KiB dec 1.028, 8 KiB enc 1.041); the pair step
 * (VAES_GCM_ONE 0) 1.02-1.05 slower by the minima; the adds right behind
 * the multiplies 0.998/1.039 (minima 1.004)/0.998/0.994, noise; the
 * counter base broadcast from memory (vbroadcasti128 m128, a load, for
 * vinserti128) 1.001/0.996/0.997/0.991, noise; the hashing issued before
 * each round's VAES: GCC spills 39 vectors a batch. GCC's -mtune=znver3
 * for vaes_avx2.c: 0.987-0.993, then 0.992-1.004 on a second run, noise.
 * In the micro-loop, the powers from registers rather than memory operands
 * save 1-3 cycles, and encryption's reread of the last batch's stores
 * costs 0-2.
 */

/* What every batch of a call reads, made once per call: the round keys
 * already broadcast (read as memory operands, they spare each batch 10-14
 * broadcasts) and the counter offsets. The powers and their halves are
 * read from the GHASH key itself. Holds the key schedule: wiped after
 * use. */
typedef struct vaes_gcm_ctx {
    vaes_v keys[AESKIT_MAX_ROUNDS + 1];
    vaes_v J[VAES_G];
} vaes_gcm_ctx;

/* On ymm (2 blocks per vector, 16 registers) a batch hashes one vector
 * per round; on zmm, two per second round (vaes_gstep2_pv). */
#ifndef VAES_GCM_ONE
#define VAES_GCM_ONE (VAES_BPV == 2)
#endif
/* On zmm (timing builds may set these to 0; ymm's code is as it was):
 *  - LATE: a pair's six products are added to the sums on the next round,
 *    before its VAES (vaes_gcm_prod2, vaes_gcm_add2), not right behind the
 *    multiplies (vaes_gstep2_pv), as ymm found on Zen 4;
 *  - KMEM: the round keys are reloaded from the context in each batch
 *    (an empty asm hides that they are the last batch's), so that GCC no
 *    longer holds 13 of them in registers and spills counter vectors and
 *    products in the last pair's rounds (15 stack accesses a batch, now 0
 *    or 1); the loads are cheap beside 72-104 VAES;
 *  - R10: AES-128 (rounds 10, a constant) gets its own copy of the run,
 *    without the branches to rounds 11-14 and their keys' registers.
 * Each alone was no faster on Zen 4, LATE alone 1-2% slower (more
 * spills). The three together (Zen 4, ab.py, alternated in one process
 * with the previous build): AES-128 opening 1.3-1.7% faster at 16 KiB,
 * 2.0-2.3% at 8 KiB, sealing unchanged (within 0.2%); AES-256 opening
 * 1.7%, sealing 0.8%; without R10, or without LATE and KMEM, about 1%
 * slower than all three. Tried and no faster: the pairs on rounds 1, 3,
 * 5, 7 (neutral); ymm's one vector a round (VAES_GCM_ONE) on zmm, 3%
 * slower (24 two-way XORs where 12 vpternlogq took the products).
 * What is left per AES-128 batch of 32 blocks besides 72 VAES, 8
 * VAESLAST and 24 VPCLMULQDQ: 8 byte swaps, 8 + 4 unpacks and XORs for
 * the Karatsuba halves, 12 vpternlogq for the sums, 8 whitening and 8
 * data XORs, 2 counter bases (xmm add, shuffle, XOR and broadcast), 1/4
 * of a reduction: near the least this design can issue; the rest
 * (bench: 1.10-1.13x the 0.203 c/B floor) is scheduling. */
#ifndef VAES_GCM_LATE
#define VAES_GCM_LATE (VAES_BPV == 4)
#endif
#ifndef VAES_GCM_KMEM
#define VAES_GCM_KMEM (VAES_BPV == 4)
#endif
#ifndef VAES_GCM_R10
#define VAES_GCM_R10 (VAES_BPV == 4)
#endif
/* A call's fixed cost on zmm: a decryption's tail of at most VAES_GSHORT
 * blocks is hashed on xmm (vaes_gblocks128: no lanes to fold), and only
 * the round keys the call wrote are wiped (the counter offsets are not
 * secret). */
#ifndef VAES_GCM_FIXED
#define VAES_GCM_FIXED (VAES_BPV == 4)
#endif

/* Hashed vector j, loaded (byte-swapped unless pv; acc, if not NULL,
 * rides in its first present block, as in vaes_gstep2_pv). */
AESKIT_INLINE vaes_v vaes_gcm_x(const uint8_t *p, size_t j, const __m128i *acc, size_t skip,
                                int pv)
{
    vaes_v x = vaes_load_skip(p, j, skip);
    if (!pv)
        x = vaes_shuffle8(x, vaes_bcast(vaes_gbswap()));
    if (acc != NULL && j == skip / VAES_BPV)
        x = vaes_xor(x, vaes_acc_at(*acc, skip % VAES_BPV));
    return x;
}

/* The ymm batch's hashing (VAES_GCM_ONE) on round i of 1..VAES_NV + 1:
 * vector i % VAES_NV (i <= VAES_NV) and its two products lo and hi by its
 * powers at pw; the vectors go in pairs (a on odd i, kept in *xa, b on the
 * next round), whose Karatsuba halves are made at once as in
 * vaes_gstep2_pv (two unpacks and an XOR per pair, where a shuffle and an
 * XOR per vector took 4 instructions) into *k on b's round, which
 * multiplies a's half by the pair's halves at hv (p->mid); b's half is
 * multiplied on the next round (*mid2), so that every round issues 3
 * multiplies. The products are left apart for vaes_gcm_add on the next
 * round. */
AESKIT_INLINE void vaes_gcm_prod(vaes_gsum *p, vaes_v *mid2, vaes_v *xa, vaes_v *k,
                                 const uint8_t *pw, const uint8_t *hv, const uint8_t *hp,
                                 unsigned i, const __m128i *acc, size_t skip, int pv)
{
    if (i >= 3 && i % 2 == 1)
        *mid2 = vaes_clmul(*k, vaes_load(hv + VAES_VL * ((i - 3) / 2)), 0x11);
    if (i <= VAES_NV) {
        const size_t j = i % VAES_NV;
        const vaes_v x = vaes_gcm_x(hp, j, acc, skip, pv), h = vaes_load(pw + (size_t)VAES_VL * j);
        p->lo = vaes_clmul(x, h, 0x00);
        p->hi = vaes_clmul(x, h, 0x11);
        if (i % 2 == 1) {
            *xa = x;
        } else {
            *k = vaes_xor(vaes_unpacklo64(*xa, x), vaes_unpackhi64(*xa, x));
            p->mid = vaes_clmul(*k, vaes_load(hv + VAES_VL * ((i - 1) / 2)), 0x00);
        }
    }
    VAES_PIN(p->lo, p->mid, p->hi);
}

/* Round i's products of round i - 1 into the sums, at the start of round i
 * (2..VAES_NV + 1): lo and hi, and the mid one made then (a's on even
 * rounds, b's on odd ones from round 3 on). */
AESKIT_INLINE void vaes_gcm_add(vaes_gsum *s, const vaes_gsum *p, vaes_v mid2, unsigned i)
{
    s->lo = vaes_xor(s->lo, p->lo);
    s->hi = vaes_xor(s->hi, p->hi);
    if (i % 2 == 1)
        s->mid = vaes_xor(s->mid, p->mid);
    else if (i >= 4)
        s->mid = vaes_xor(s->mid, mid2);
    VAES_PIN(s->lo, s->mid, s->hi);
}

/* The zmm batch's pair step (vaes_gstep2_pv) split in two (VAES_GCM_LATE):
 * the six products of vectors a and b on round i, left in *p ... */
typedef struct vaes_gprod6 {
    vaes_v lo_a, lo_b, hi_a, hi_b, mid_a, mid_b;
} vaes_gprod6;

AESKIT_INLINE void vaes_gcm_prod2(vaes_gprod6 *p, const uint8_t *pw, const uint8_t *hv,
                                  const uint8_t *hp, size_t a, size_t b, const __m128i *acc,
                                  size_t skip, int pv)
{
    const vaes_v xa = vaes_gcm_x(hp, a, acc, skip, pv), xb = vaes_gcm_x(hp, b, acc, skip, pv);
    const vaes_v k = vaes_xor(vaes_unpacklo64(xa, xb), vaes_unpackhi64(xa, xb));
    p->lo_a = vaes_clmul(xa, vaes_load(pw + (size_t)VAES_VL * a), 0x00);
    p->hi_a = vaes_clmul(xa, vaes_load(pw + (size_t)VAES_VL * a), 0x11);
    p->lo_b = vaes_clmul(xb, vaes_load(pw + (size_t)VAES_VL * b), 0x00);
    p->hi_b = vaes_clmul(xb, vaes_load(pw + (size_t)VAES_VL * b), 0x11);
    p->mid_a = vaes_clmul(k, vaes_load(hv), 0x00);
    p->mid_b = vaes_clmul(k, vaes_load(hv), 0x11);
}

/* ... and added to the sums on round i + 1, before its VAES. */
AESKIT_INLINE void vaes_gcm_add2(vaes_gsum *s, const vaes_gprod6 *p)
{
    s->lo = vaes_xor3(s->lo, p->lo_a, p->lo_b);
    s->hi = vaes_xor3(s->hi, p->hi_a, p->hi_b);
    s->mid = vaes_xor3(s->mid, p->mid_a, p->mid_b);
    VAES_PIN(s->lo, s->mid, s->hi);
}

/* One batch of VAES_W blocks: CTR (kind: BE32, or GCM-SIV's LE32) from c
 * (lowest counter bits a multiple of 16) into dst, with the VAES_W blocks
 * at hp (none if hp is NULL; pv: POLYVAL's, loaded as they are) added to
 * the sums s, times the powers at pw (halves at hv); acc, if not NULL,
 * rides in hp's first block. The first dskip blocks of the batch and the first
 * hskip of the hashed blocks are absent (the message's first batch, which
 * starts at the aligned counter before the data: vaes_load_skip); dst, src
 * and hp point at the first present block. Returns c + VAES_W. */
AESKIT_INLINE __m128i vaes_gcm_batch(const vaes_gcm_ctx *g, unsigned rounds,
                                   enum aeskit_ctr kind, int pv, int one, __m128i c,
                                   __m128i swap, vaes_gsum *s, const __m128i *acc, const uint8_t *hp,
                                   const uint8_t *pw, const uint8_t *hv, uint8_t *dst,
                                   const uint8_t *src, size_t dskip, size_t hskip,
                                   __m128i *ek)
{
    vaes_v x[VAES_NV];
#if VAES_GCM_KMEM && defined(AESKIT_GNU_ASM)
    __asm__("" : "+r"(g));
#endif
    const __m128i k0 = vaes_low128(g->keys[0]);
    c = vaes_ctr_whiten_k0(k0, kind, c, swap, g->J, x, VAES_NV);

    /* Straight-line rounds as in vaes_middle; the hashed vectors ride two
     * at a time (three-way XORs) on rounds 2, 4, 6 and 8, vector 0 (with
     * acc) in the last pair. */
    vaes_gsum prod = vaes_gsum_zero();
    vaes_v xa = vaes_zero(), k = vaes_zero(), mid2 = vaes_zero();
    vaes_gprod6 p6;   /* VAES_GCM_LATE: a pair's products, added a round later */
    AESKIT_UNROLL(9)
    for (unsigned i = 1; i < 10; i++) {
        if (hp != NULL && one && i >= 2 && i <= VAES_NV + 1)
            vaes_gcm_add(s, &prod, mid2, i);
        else if (hp != NULL && !one && VAES_GCM_LATE && i % 2 == 1 && i >= 3 && i <= VAES_NV + 1)
            vaes_gcm_add2(s, &p6);
        vaes_round_with(x, VAES_NV, g->keys[i], 1);
        if (hp != NULL && one && i <= VAES_NV + 1)
            vaes_gcm_prod(&prod, &mid2, &xa, &k, pw, hv, hp, i, acc, hskip, pv);
        else if (hp != NULL && VAES_GCM_LATE && i % 2 == 0 && i <= VAES_NV)
            vaes_gcm_prod2(&p6, pw, hv + VAES_VL * (i / 2 - 1), hp, i - 1, i % VAES_NV, acc, hskip,
                           pv);
        else if (hp != NULL && i % 2 == 0 && i <= VAES_NV)
            vaes_gstep2_pv(s, pw, hv + VAES_VL * (i / 2 - 1), hp, i - 1, i % VAES_NV, acc, hskip,
                           pv);
    }
    if (hp != NULL && one) {   /* the last pair's b half, from round VAES_NV + 1 */
        s->mid = vaes_xor(s->mid, mid2);
        VAES_PIN(s->lo, s->mid, s->hi);
    }
    if (rounds > 10) {   /* straight-line, as vaes_middle says why */
        vaes_round_with(x, VAES_NV, g->keys[10], 1);
        vaes_round_with(x, VAES_NV, g->keys[11], 1);
    }
    if (rounds > 12) {
        vaes_round_with(x, VAES_NV, g->keys[12], 1);
        vaes_round_with(x, VAES_NV, g->keys[13], 1);
    }
    const vaes_v kl = g->keys[rounds];
    VAES_UNROLL
    for (size_t j = 0; j < VAES_NV; j++) {
        const vaes_v d = vaes_load_skip(src, j, dskip);
        const vaes_v out = vaes_enclast(x[j], vaes_xor(kl, d));
        vaes_store_skip(dst, j, dskip, out);
        /* an absent lane's data reads as zero: its output is the keystream,
         * E(K, counter) of the block before the data (ek0, modes/gcm.h) */
        if (ek != NULL && j == (dskip - 1) / VAES_BPV)
            *ek = (dskip - 1) % VAES_BPV == 0 ? vaes_low128(out)
                                              : vaes_lane_high(out, (dskip - 1) % VAES_BPV);
    }
    return c;
}

/* Shorter messages run as fast split. The kernel itself needs only n +
 * skip >= 2 * VAES_W (encrypting, its first batch and one hashed batch).
 * The table exports the value (gcm_fused_min_blocks) for the tests, which
 * must cross the handover. */

#ifndef VAES_GCM_MIN
#define VAES_GCM_MIN (3 * VAES_W)
#endif
static_assert(VAES_GCM_MIN >= 2 * VAES_W,
              "encrypting, the first batch and one hashed batch are whole");

static_assert(VAES_NV <= 8, "one hashed vector per middle round of AES-128, and the last pair's b half on round VAES_NV + 1");
#define VAES_GCM_GROUPS VAES_GBATCHES   /* batches per reduction: the key's */
/* ... and with a key made for one message (AESKIT_GHASH_MSG powers) */
#define VAES_GCM_MSG_GROUPS (AESKIT_GHASH_MSG / VAES_W)
static_assert(VAES_GCM_MSG_GROUPS >= 1 && AESKIT_GHASH_MSG % VAES_W == 0,
              "a message's key holds whole batches of powers");

/* From this many data blocks XAES-256-GCM builds its per-message key
 * whole (struct aeskit_gcm_impl's whole_key_blocks), so that the kernel
 * runs as with a GCM object's key: on ymm, one vector per round and a
 * reduction per VAES_GCM_GROUPS batches, where a 32-power key takes the
 * pair step and one per VAES_GCM_MSG_GROUPS. The 96 extra powers cost
 * about 140 ns (48 more doubling multiplies, clmul-bound); the bulk gains
 * about 0.0065 ns/B (Zen 4, AES-256, XAES/AESGCM in one process, 3 runs:
 * 32 KiB 1.08-1.11 -> 1.10-1.12, 48 KiB enc even, dec 1.10 -> 1.07-1.08,
 * 64 KiB 1.07-1.10 -> 1.05-1.07). On zmm, where a whole key means four batches
 * per reduction against one, the bulk gains less: 16 KiB 1.07-1.13 ->
 * 1.19-1.21, 64 KiB even (1.04-1.06), 128 KiB enc 1.03-1.04 -> 1.02-1.03,
 * dec 1.05 -> 1.03-1.04: from 128 KiB. */
#ifndef VAES_GCM_WHOLE_KEY
#define VAES_GCM_WHOLE_KEY (VAES_GCM_ONE ? 3072 : 8192)
#endif

/* The powers hk holds: VAES_GP, or fewer in a key built per message
 * (GCM-SIV's and XAES-256-GCM's: AESKIT_GHASH_MSG, 32). */
AESKIT_INLINE size_t vaes_gbuilt(const aeskit_ghash_key *hk)
{
    return VAES_GP - hk->from / AESKIT_BLOCK;
}

/* The last 0..VAES_W-1 blocks, one vector at a time as the ctr slot's
 * tail, from counter *c; returns acc with them hashed: encrypting, with the
 * last batch's output before dst under one reduction (up to 2 VAES_W - 1
 * blocks), decrypting, before they are overwritten. siv: GCM-SIV's opening
 * (encryption's order, LE32 counters, POLYVAL blocks). A per-message key
 * (GCM-SIV's, XAES-256-GCM's) may hold fewer powers than the last batch
 * and the tail (on zmm, VAES_W): then they are two reductions. Then lens
 * (modes/gcm.h: a one-shot message's lengths block, or NULL) on xmm, as
 * the ghash slot's call for it would, without the call. Out of
 * line: inlined, it makes the bulk loop slower. */
AESKIT_NOINLINE static __m128i VAES_FN(gcm_tail)(const aeskit_key *k,
                                                          const aeskit_ghash_key *hk, int enc,
                                                          int siv, __m128i *c, __m128i y,
                                                          uint8_t *dst, const uint8_t *src,
                                                          size_t tail, const uint8_t *lens)
{
    const enum aeskit_ctr kind = siv ? AESKIT_CTR_LE32 : AESKIT_CTR_BE32;
    if (tail > 0 && !enc && VAES_GCM_FIXED && tail <= VAES_GSHORT)
        y = vaes_gblocks128(hk, y, src, tail, 0);
    else if (tail > 0 && !enc)
        y = vaes_gblocks(hk, y, src, tail);
    *c = vaes_ctr_single(aeskit_aesni_enc_keys(k), k->rounds, kind, *c, vaes_ctr_swap(kind), dst,
                         src, tail);
    if (enc && VAES_W + tail > vaes_gbuilt(hk)) {
        y = vaes_gblocks_pv(hk, y, dst - AESKIT_BLOCK * VAES_W, VAES_W, siv);
        if (tail > 0)
            y = vaes_gblocks_pv(hk, y, dst, tail, siv);
    } else if (enc) {
        y = vaes_gblocks_pv(hk, y, dst - AESKIT_BLOCK * VAES_W, VAES_W + tail, siv);
    }
    if (lens != NULL)
        y = vaes_gblocks128(hk, y, lens, 1, 0);
    return y;
}

/* GCM (siv 0), or GCM-SIV's opening (siv 1, enc 1: LE32 counters from the
 * tag, POLYVAL of the plaintext written). groups (a constant at each call):
 * batches per reduction, VAES_GCM_GROUPS with a whole key, or
 * VAES_GCM_MSG_GROUPS with one made for a message (one on zmm, two on ymm). */
AESKIT_INLINE size_t vaes_gcm_run(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                                  int siv, size_t groups, unsigned nr, uint8_t ctr[16], uint8_t acc[16],
                                  uint8_t *dst, const uint8_t *src, size_t n,
                                  const uint8_t *lens, uint8_t *ek0)
{
    const enum aeskit_ctr kind = siv ? AESKIT_CTR_LE32 : AESKIT_CTR_BE32;
    /* one vector per round (VAES_GCM_ONE) with a whole key only: with a
     * message's 32-power key (2 batches per reduction on ymm) the pair step
     * is faster (Zen 4, 16 KiB: GCM-SIV opening 2.27-2.32x -> 2.14-2.16x ECB,
     * XAES 1-3%) */
    const int one = VAES_GCM_ONE && groups == VAES_GCM_GROUPS;
    const __m128i swap = vaes_ctr_swap(kind);
    __m128i c = _mm_shuffle_epi8(aeskit_load128(ctr), swap);
    const size_t head = vaes_ctr_head(c);
    if (n < head + VAES_GCM_MIN)
        return 0;
    assert(groups >= 1 && groups <= VAES_GCM_GROUPS && vaes_gbuilt(hk) >= VAES_W * groups);
    /* The first batch starts at the aligned counter up to 15 blocks before
     * the data, those blocks absent (skip); c - skip does not borrow. */
    const size_t skip = (uint32_t)_mm_cvtsi128_si32(c) & 15;
    c = _mm_sub_epi32(c, _mm_cvtsi32_si128((int)skip));
    const size_t batches = (n + skip) / VAES_W;
    /* E(K, counter before the data) for ek0: lane skip - 1 of the first
     * batch, or (skip 0: an aligned counter) one block apart */
    __m128i ekv = _mm_setzero_si128();
    if (ek0 != NULL && skip == 0) {
        static const uint8_t zero[AESKIT_BLOCK];
        (void)vaes_ctr_single(aeskit_aesni_enc_keys(k), k->rounds, kind,
                              _mm_sub_epi32(c, _mm_cvtsi32_si128(1)), swap, ek0, zero, 1);
    }
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = nr != 0 ? nr : k->rounds;   /* nr: a constant (VAES_GCM_R10) */
    assert(rounds == k->rounds);
    const __m128i gswap = vaes_gbswap();
    __m128i y = _mm_shuffle_epi8(aeskit_load128(acc), gswap);
    vaes_gcm_ctx g;
    for (unsigned i = 0; i <= rounds; i++)
        g.keys[i] = vaes_key(rk, i);
    vaes_ctr_offsets(swap, g.J);

    /* Encrypting, a batch hashes the previous one's output (reread from
     * dst, hot in L1), so the first hashes nothing and the last batch's
     * ciphertext is hashed with the tail's (gcm_tail); decrypting, a batch
     * hashes its own input, all loaded before it stores anything, so dst ==
     * src is safe. The hashed batches go in chunks of up to
     * VAES_GCM_GROUPS sharing one reduction (see the header): a chunk of m
     * batches takes the key's last m groups of powers, acc in its first
     * batch, and the short chunk comes first. */
    const size_t back = enc ? AESKIT_BLOCK * VAES_W : 0;
    const uint8_t *const out0 = dst;
    size_t b = 0;
    if (enc) {
        vaes_gsum none = vaes_gsum_zero();
        c = vaes_gcm_batch(&g, rounds, kind, siv, one, c, swap, &none, NULL, NULL, NULL, NULL, dst,
                           src, skip, 0, ek0 != NULL && skip > 0 ? &ekv : NULL);
        dst += AESKIT_BLOCK * (VAES_W - skip), src += AESKIT_BLOCK * (VAES_W - skip), b++;
    }
    /* The first chunk's first batch hashes the first batch, absent blocks
     * and all; it runs apart, so that the loop holds whole batches only
     * (with it inside, decryption is slower). */
    size_t m = (batches - b) % groups, i = 1;
    m = m == 0 ? groups : m;
    size_t grp = VAES_GCM_GROUPS - m;
    vaes_gsum s = vaes_gsum_zero();
    const size_t dskip = enc ? 0 : skip;
    c = vaes_gcm_batch(&g, rounds, kind, siv, one, c, swap, &s, &y, enc ? out0 : src,
                       vaes_gpowers(hk, VAES_GP - VAES_W * grp), vaes_ghalves(hk, grp), dst, src,
                       dskip, skip, !enc && ek0 != NULL && skip > 0 ? &ekv : NULL);
    dst += AESKIT_BLOCK * (VAES_W - dskip), src += AESKIT_BLOCK * (VAES_W - dskip);
    for (;;) {
        for (; i < m; i++) {
            grp++;
            c = vaes_gcm_batch(&g, rounds, kind, siv, one, c, swap, &s, NULL, enc ? dst - back : src,
                               vaes_gpowers(hk, VAES_GP - VAES_W * grp), vaes_ghalves(hk, grp),
                               dst, src, 0, 0, NULL);
            dst += AESKIT_BLOCK * VAES_W, src += AESKIT_BLOCK * VAES_W;
        }
        y = vaes_gfinish(s);
        b += m;
        if (b == batches)
            break;
        m = groups, grp = VAES_GCM_GROUPS - groups, i = 1;
        s = vaes_gsum_zero();
        c = vaes_gcm_batch(&g, rounds, kind, siv, one, c, swap, &s, &y, enc ? dst - back : src,
                           vaes_gpowers(hk, VAES_W * groups), vaes_ghalves(hk, grp), dst, src,
                           0, 0, NULL);
        dst += AESKIT_BLOCK * VAES_W, src += AESKIT_BLOCK * VAES_W;
    }
    y = VAES_FN(gcm_tail)(k, hk, enc, siv, &c, y, dst, src, (n + skip) % VAES_W, lens);
    if (VAES_GCM_FIXED)
        aeskit_secure_zero(g.keys, sizeof g.keys[0] * (rounds + 1));
    else
        aeskit_secure_zero(&g, sizeof g);
    aeskit_store128(ctr, _mm_shuffle_epi8(c, swap));
    aeskit_store128(acc, _mm_shuffle_epi8(y, gswap));
    if (ek0 != NULL && skip > 0)
        aeskit_store128(ek0, ekv);
    return n;
}

static size_t VAES_FN(gcm)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                           uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                           const uint8_t *src, size_t n, const uint8_t *lens,
                           uint8_t *ek0)
{
    /* a key made for one message (XAES-256-GCM's long ones) */
    if (vaes_gbuilt(hk) < VAES_GP)
        return vaes_gcm_run(k, hk, enc, 0, VAES_GCM_MSG_GROUPS, 0, ctr, acc, dst, src, n, lens, ek0);
#if VAES_GCM_R10
    if (k->rounds == 10)
        return vaes_gcm_run(k, hk, enc, 0, VAES_GCM_GROUPS, 10, ctr, acc, dst, src, n, lens, ek0);
#endif
    return vaes_gcm_run(k, hk, enc, 0, VAES_GCM_GROUPS, 0, ctr, acc, dst, src, n, lens, ek0);
}

/* The mode's per-message key has AESKIT_GHASH_MSG powers from a message of
 * that many blocks on, shorter than any the kernel takes (VAES_GCM_MIN). */
static size_t VAES_FN(gcmsiv_open)(const aeskit_key *k, const aeskit_ghash_key *hk,
                                   uint8_t ctr[16], uint8_t acc[16], uint8_t *dst,
                                   const uint8_t *src, size_t n)
{
    assert(n < VAES_GCM_MIN || hk->max_blocks >= AESKIT_GHASH_MSG);
    return vaes_gcm_run(k, hk, 1, 1, VAES_GCM_MSG_GROUPS, 0, ctr, acc, dst, src, n, NULL, NULL);
}
