/*
 * aesni_gcm_asm.h: the GCM kernel's loop of two-batch steps (simd_body.h,
 * simd_gcm_run, with a key of 16 powers) for AES-128 as one block of x86-64
 * GNU inline asm, in aesni_avx.c's build only (VEX encodings). Included by
 * aesni.c before simd_body.h, which calls it through SIMD_GCM_PAIRS_RUN
 * where SIMD_GCM_PAIRS_OK; every other build, key size and the batches
 * outside whole pairs keep the C step, and so does GCM-SIV opening (its
 * per-message keys hold 8 powers, never a pair's 16). GCM sealing and
 * opening share it.
 *
 * What it does differently from the C step (same products, same sums, same
 * reduction, same order of the hashed blocks), each measured on Zen 3 with
 * the kernel alone (min of 20000 16 KiB calls, cycles a batch, noise +-2):
 *   - each block's three products are added to the sums at the end of its
 *     AES round, not between its AES instructions (82.5 -> 77);
 *   - the Karatsuba half (lo ^ hi) of each hashed block is made one batch
 *     ahead in general registers (two 8-byte loads, a XOR, a bswap, one
 *     store into p[] of simd_gcm_ctrs) and read as the third product's
 *     operand: no unpacks, where the C step makes a pair's halves with two
 *     unpacks and a XOR; the accumulator's block alone (y is folded into
 *     it) gets its half in vector registers;
 *   - the powers are memory operands of PCLMULQDQ; the counter blocks are
 *     refilled two batches ahead as in the C step (bswap, XOR with rk[0]'s
 *     word, a 4-byte store); the sums start from a pair's first products;
 *   - the last round takes rk[10] ^ data, and each block, once stored,
 *     loads the next batch's counter block and runs its round 1, so the
 *     batches meet without the AES units draining.
 * All told 1.5-3% on GCM AES-128 at 16-64 KiB (ab.py, Zen 3), not the 4%
 * the 1.25x asked. What holds it, from removing one part at a time
 * (timing only): 80 AESENC alone run at 38 a batch; the 24 PCLMULQDQ with
 * their loads bring it to 66 (a micro-loop of the same mix: 62); then the
 * sums' XORs (+4), the reduction (+3), the 8 byte swaps (+3), the scalar
 * halves and counters (+2-3). Tried and no faster: the block's byte swap
 * in general registers too (two stores more a block; the 16-byte reload of
 * two 8-byte stores), the reduction after the last round, the data XOR
 * after AESENCLAST, round keys as memory operands of AESENC (slower: 4
 * cycles on the micro-loop).
 *
 * Layout of simd_gcm_ctrs: b[2][8][16] (the whitened counter blocks) at 0,
 * p[2][8][8] (the halves) at 256. Batch A of a pair runs on b[0], hashes
 * with H^16..H^9 the blocks whose halves are in p[0] and fills p[1]; batch
 * B runs on b[1], hashes with H^8..H^1 and fills p[0] for the next pair.
 * Nothing branches on data, keys or counters (only on the pair count);
 * p[] and b[] are wiped by the caller.
 */
#ifndef AESKIT_AESNI_GCM_ASM_H
#define AESKIT_AESNI_GCM_ASM_H

#if defined(AESKIT_AESNI_VEX) && defined(AESKIT_GNU_ASM) && defined(__x86_64__)

/* One batch, rounds 2..10 (round 1 ran with the batch before's last): s
 * the slot it runs on and hashes (0 A, 1 B), n the other (the one it
 * prepares, and whose counter blocks it loads and runs round 1 on after
 * its own last round), pw the power of its block 7 (A: 8, B: 0), first (A:
 * y folded into block 0; the sums start), 0 or 1; doff the data's
 * offset from src and dst; h + ho the blocks it hashes, q + qo those it
 * prepares the halves of. Round r (1..8) multiplies block 8 - r (three
 * PCLMULQDQ, their sums a round's AES later) and prepares block 8 - r's
 * half and counter block r - 1 in general registers. Registers: x0..x7 the
 * blocks, xmm8..10 the sums lo, mid, hi, xmm11..13 a block, its half and
 * the products, xmm14 the byte swap (the last round's key in round 10),
 * xmm15 the round key. */
#define AESNI_GCM_AES2(a, b)                                                                  \
    ".if \\r > 1\n\t"                                                                         \
    "vaesenc %%xmm15, %%xmm" #a ", %%xmm" #a "\n\t"                                           \
    "vaesenc %%xmm15, %%xmm" #b ", %%xmm" #b "\n\t"                                           \
    ".endif\n\t"
#define AESNI_GCM_POW(pw, o) "(32*(" #pw "+\\r-1)+" #o ")(%[hk])"
#define AESNI_GCM_BATCH(s, n, pw, first, doff, h, ho, q, qo)                            \
    "vmovdqa %[swap], %%xmm14\n\t"                                                            \
    ".irp r,1,2,3,4,5,6,7,8\n\t"                                                              \
    "vmovdqu (16*\\r)(%[rk]), %%xmm15\n\t"                                                    \
    AESNI_GCM_AES2(0, 1)                                                                      \
    ".if " #first " && \\r == 8\n\t" /* block 0 with y: its half made here */                \
    "vmovdqu (" #ho ")(%[" #h "]), %%xmm11\n\t"                                               \
    "vpshufb %%xmm14, %%xmm11, %%xmm11\n\t"                                                   \
    "vpxor %[y], %%xmm11, %%xmm11\n\t"                                                        \
    "vpshufd $0x4e, %%xmm11, %%xmm13\n\t"                                                     \
    "vpxor %%xmm11, %%xmm13, %%xmm13\n\t"                                                     \
    ".else\n\t"                                                                               \
    "vmovdqu (" #ho "+16*(8-\\r))(%[" #h "]), %%xmm11\n\t"                                    \
    "vpshufb %%xmm14, %%xmm11, %%xmm11\n\t"                                                   \
    "vmovq (256+64*" #s "+8*(8-\\r))(%[w]), %%xmm13\n\t"                                    \
    ".endif\n\t"                                                                              \
    AESNI_GCM_AES2(2, 3)                                                                      \
    ".if " #first " && \\r == 1\n\t" /* the sums start */                                     \
    "vpclmulqdq $0x00, " AESNI_GCM_POW(pw, 0) ", %%xmm11, %%xmm8\n\t"                         \
    "vpclmulqdq $0x11, " AESNI_GCM_POW(pw, 0) ", %%xmm11, %%xmm10\n\t"                        \
    "vpclmulqdq $0x00, " AESNI_GCM_POW(pw, 16) ", %%xmm13, %%xmm9\n\t"                        \
    ".else\n\t"                                                                               \
    "vpclmulqdq $0x00, " AESNI_GCM_POW(pw, 0) ", %%xmm11, %%xmm12\n\t"                        \
    "vpclmulqdq $0x11, " AESNI_GCM_POW(pw, 0) ", %%xmm11, %%xmm11\n\t"                        \
    "vpclmulqdq $0x00, " AESNI_GCM_POW(pw, 16) ", %%xmm13, %%xmm13\n\t"                       \
    ".endif\n\t"                                                                              \
    AESNI_GCM_AES2(4, 5)                                                                      \
    "mov (" #qo "+16*(8-\\r))(%[" #q "]), %[t1]\n\t"                                          \
    "xor (" #qo "+16*(8-\\r)+8)(%[" #q "]), %[t1]\n\t"                                        \
    "bswap %[t1]\n\t"                                                                         \
    "mov %[t1], (256+64*" #n "+8*(8-\\r))(%[w])\n\t"                                        \
    AESNI_GCM_AES2(6, 7)                                                                      \
    ".if !(" #first " && \\r == 1)\n\t"                                                       \
    "vpxor %%xmm12, %%xmm8, %%xmm8\n\t"                                                       \
    "vpxor %%xmm11, %%xmm10, %%xmm10\n\t"                                                     \
    "vpxor %%xmm13, %%xmm9, %%xmm9\n\t"                                                       \
    ".endif\n\t"                                                                              \
    "leal (16+8*" #s "+\\r-1)(%q[c]), %k[t3]\n\t"                                             \
    "bswapl %k[t3]\n\t"                                                                       \
    "xorl %k[kw], %k[t3]\n\t"                                                                 \
    "movl %k[t3], (128*" #s "+16*(\\r-1)+12)(%[w])\n\t"                                       \
    ".endr\n\t"                                                                               \
    "vmovdqu 144(%[rk]), %%xmm15\n\t"                                                         \
    ".irp j,0,1,2,3,4,5,6,7\n\t"                                                              \
    "vaesenc %%xmm15, %%xmm\\j, %%xmm\\j\n\t"                                                 \
    ".endr\n\t"                                                                               \
    ".if !" #first "\n\t" /* clmul128.h's reduction, into y */                                \
    "vpxor %%xmm8, %%xmm9, %%xmm9\n\t"                                                        \
    "vpxor %%xmm10, %%xmm9, %%xmm9\n\t"                                                       \
    "vpclmulqdq $0x00, %[poly], %%xmm8, %%xmm12\n\t"                                          \
    "vpshufd $0x4e, %%xmm8, %%xmm8\n\t"                                                       \
    "vpxor %%xmm8, %%xmm9, %%xmm9\n\t"                                                        \
    "vpxor %%xmm12, %%xmm9, %%xmm9\n\t"                                                       \
    "vpclmulqdq $0x00, %[poly], %%xmm9, %%xmm12\n\t"                                          \
    "vpshufd $0x4e, %%xmm9, %%xmm9\n\t"                                                       \
    "vpxor %%xmm9, %%xmm10, %%xmm10\n\t"                                                      \
    "vpxor %%xmm12, %%xmm10, %%xmm10\n\t"                                                     \
    "vmovdqu %%xmm10, %[y]\n\t"                                                               \
    ".endif\n\t"                                                                              \
    "vmovdqu 160(%[rk]), %%xmm14\n\t"                                                         \
    "vmovdqu 16(%[rk]), %%xmm13\n\t"                                                          \
    ".irp j,0,1,2,3,4,5,6,7\n\t"                                                              \
    "vpxor (" #doff "+16*\\j)(%[src]), %%xmm14, %%xmm15\n\t"                                  \
    "vaesenclast %%xmm15, %%xmm\\j, %%xmm\\j\n\t"                                             \
    "vmovdqu %%xmm\\j, (" #doff "+16*\\j)(%[dst])\n\t"                                        \
    "vmovdqa (128*" #n "+16*\\j)(%[w]), %%xmm\\j\n\t"                                         \
    "vaesenc %%xmm13, %%xmm\\j, %%xmm\\j\n\t"                                                 \
    ".endr\n\t"

/* The loop over pairs, with the counter blocks of its first batch loaded
 * and through round 1 first; the last pair's B runs round 1 on the next
 * (valid, unused) counter blocks. out: hash_out. */
#define AESNI_GCM_LOOP(out, h0, ho0, q0, qo0, h1, ho1, q1, qo1)                         \
    __asm__ volatile("vmovdqu 16(%[rk]), %%xmm13\n\t"                                         \
                     ".irp j,0,1,2,3,4,5,6,7\n\t"                                             \
                     "vmovdqa (16*\\j)(%[w]), %%xmm\\j\n\t"                                   \
                     "vaesenc %%xmm13, %%xmm\\j, %%xmm\\j\n\t"                                \
                     ".endr\n\t"                                                              \
                     "1:\n\t"                                                                 \
                     ".if !" #out "\n\t"                                                      \
                     "lea 256(%[src]), %[qb]\n\t"                                             \
                     "cmp $1, %[cnt]\n\t"                                                     \
                     "cmove %[src], %[qb]\n\t"                                                \
                     ".endif\n\t"                                                             \
                     AESNI_GCM_BATCH(0, 1, 8, 1, 0, h0, ho0, q0, qo0)                    \
                     AESNI_GCM_BATCH(1, 0, 0, 0, 128, h1, ho1, q1, qo1)                  \
                     "add $256, %[src]\n\t"                                                   \
                     "add $256, %[dst]\n\t"                                                   \
                     "addl $16, %k[c]\n\t"                                                    \
                     "dec %[cnt]\n\t"                                                         \
                     "jnz 1b\n\t"                                                             \
                     : [y] "+m"(*y), [t1] "=&r"(t1), [t3] "=&r"(t3), [qb] "=&r"(qb),         \
                       [src] "+r"(src), [dst] "+r"(dst), [c] "+r"(c), [cnt] "+r"(pairs)      \
                     : [rk] "r"(rk), [hk] "r"(hkw), [w] "r"(w), [kw] "r"(kw),                \
                       [poly] "m"(poly), [swap] "m"(swap)                                     \
                     : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",       \
                       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",   \
                       "xmm14", "xmm15")

/* p[0] of w (the halves of a pair's batch A's GHASH blocks) from the 8
 * blocks at q, as the asm's batch B prepares them. */
AESKIT_INLINE void aesni_gcm_prep(uint8_t *w, const uint8_t *q)
{
    for (size_t j = 0; j < 8; j++) {
        const uint64_t half = aeskit_load_le64(q + 16 * j) ^ aeskit_load_le64(q + 16 * j + 8);
        aeskit_store_le64(w + 256 + 8 * j, AESKIT_BSWAP64(half));
    }
}

/* pairs two-batch steps (AES-128, 16 powers in hk) from counter c: w the
 * simd_gcm_ctrs (b[] filled for c and c + 8), y the GHASH image in and
 * out; hash_out: hash the output of two batches back (GCM sealing, GCM-SIV
 * opening), else the input (GCM opening). */
AESKIT_INLINE void aesni_gcm_pairs(const uint8_t *rk, const aeskit_ghash_key *hk, uint8_t *w,
                                   uint32_t kw, uint32_t c, __m128i *y, uint8_t *dst,
                                   const uint8_t *src, size_t pairs, int hash_out)
{
    const size_t lag = 256;   /* hash_out: a pair hashes the pair before's output */
    const uint8_t *hkw = (const uint8_t *)hk->w;
    const __m128i poly = _mm_set_epi64x(0, (long long)UINT64_C(0xC200000000000000));
    const __m128i swap = aeskit_clmul_bswap();
    uint64_t t1, t3;
    aesni_gcm_prep(w, hash_out ? dst - lag : src);
    if (pairs == 0)
        return;
    /* A hashes p[0] (from ha) and fills p[1] from qa, B hashes p[1] and
     * fills p[0] from qb: sealing, the pair before's output and this
     * pair's A's; opening, this pair's input and the next pair's (the last
     * pair: its own again, a harmless copy) */
    const uint8_t *qb;
    if (hash_out)
        AESNI_GCM_LOOP(1, dst, -256, dst, -128, dst, -128, dst, 0);
    else
        AESNI_GCM_LOOP(0, src, 0, src, 128, src, 128, qb, 0);
    (void)t1, (void)t3, (void)qb, (void)lag;
}

#define SIMD_GCM_PAIRS 1
/* GCM only: GCM-SIV's keys hold 8 powers (no pairs), so its LE32 counters
 * and POLYVAL's unswapped blocks are not written here */
#define SIMD_GCM_PAIRS_OK(ks, siv) ((ks)->rounds == 10 && !(siv))
#define SIMD_GCM_PAIRS_RUN(ks, hk, w, kw, c, y, dst, src, pairs, hash_out) \
    aesni_gcm_pairs((ks)->rk, (hk), (w), (kw), (c), (y), (dst), (src), (pairs), (hash_out))
#endif

#endif
