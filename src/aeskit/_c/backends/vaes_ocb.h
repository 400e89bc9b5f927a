/*
 * vaes_ocb.h: the fused OCB3 kernel for the vaes tables' ocb slot, written
 * once for both widths. Contract: aeskit.h (struct aeskit_impl, ocb).
 * Included at the end of vaes_body.h, whose helpers, key layout, lanes and
 * build rules it shares (see there).
 *
 * Batches: VAES_W blocks (VAES_NV vectors) from a block index i0 that is a
 * multiple of W. For j < W, ntz(i0 + j) = ntz(j), so
 *   Offset_{i0+j} = Offset_{i0} ^ delta_j,  delta_j = L[ntz(1)] ^ .. ^ L[ntz(j)],
 * and only the batch's last block depends on i0:
 *   Offset_{i0+W} = Offset_{i0} ^ delta_{W-1} ^ L[ntz(i0 + W)].
 * The deltas are made once per call as VAES_NV vectors D[v] (lanes in block
 * order, like the data), kept in registers. Per vector of a batch:
 *   whitening   in ^ O ^ D[v]        O = Offset_{i0} ^ rk[0] in every lane
 *   last key    fold ^ O ^ D[v]      fold = rk[last] ^ rk[0], as
 *                                    aesenclast(x, k) ^ o = aesenclast(x, k ^ o)
 *                                    (likewise aesdeclast)
 *   checksum    sum ^ P              every lane; the lanes fold at the end
 * On zmm each line is one vpternlogq and the checksum takes two vectors per
 * op: 2.5 vector ops per 10 VAES. On ymm it is 4 (no ternary logic; the
 * batch shares fold ^ O). Per batch, L[ntz(i0 + W)] joins the top lane of
 * the last vector's O (one masked XOR or blend), and O moves on by one
 * three-way XOR. So OCB3 runs within a few percent of ECB on both widths.
 *
 * Tail (fewer than W blocks after the batches, or a whole short message):
 * half a batch if it fills one, then whole vectors one at a time
 * (independent chains that out-of-order execution overlaps), the last
 * partial; nothing outside the n blocks is read or written. Every D[v] use
 * has a constant index after unrolling, so D never goes through memory
 * (read back from a stack array at run-time positions, it costs a short
 * message more than its own rounds).
 *
 * Head (a call that starts inside a batch, as a stream's updates do): a
 * head shorter than half a batch runs on aesni's kernel, which takes the
 * same key and state, and so do the 1..BPV-1 blocks of a longer head before
 * its first whole vector; the rest of a long head runs as whole vectors
 * like the tail. This kernel's fixed cost per call (its deltas) would make
 * streams of short updates slower than aesni's; handed over, with the
 * dispatch a pair of tail calls, short updates cost what aesni's do.
 *
 * The checksum: when encrypting, over the plaintext reloaded just before
 * the store of its block (in place, src vector j is intact until dst vector
 * j is stored; each batch loads all its input before its first store); when
 * decrypting, over the output, lanes past a partial vector's end cleared.
 * Indices (ntz, positions) are public; nothing secret selects a branch or
 * an address.
 */

static_assert(1 << VAES_LOG2_BPV == VAES_BPV, "VAES_LOG2_BPV");

/* delta_j = L[ntz(1)] ^ .. ^ L[ntz(j)], j public: L[b] for each bit b set
 * in the Gray code j ^ (j >> 1) (each step to j flips bit ntz(j) of it). */
AESKIT_INLINE __m128i vaes_ocb_delta(const aeskit_ocb_key *ok, size_t j)
{
    __m128i d = _mm_setzero_si128();
    for (size_t g = j ^ (j >> 1), b = 0; g != 0; g >>= 1, b++)
        if (g & 1)
            d = _mm_xor_si128(d, aeskit_load128(ok->l[b]));
    return d;
}

/*
 * D[v] = the deltas of batch positions BPV * v + 1 .. BPV * v + BPV for
 * v < nv (<= VAES_NV); D[VAES_NV - 1]'s top lane is delta_{W-1}, without
 * the batch's own L[ntz(i0 + W)]. With E_v = delta_{BPV v} in every lane
 * and b = log2(BPV): D[v] = E_v ^ Q ^ (L[b + ntz(v + 1)] in the top lane),
 * E_{v+1} = E_v ^ L[b - 1] ^ L[b + ntz(v + 1)]. Unrolled, and indexed only
 * by constants after unrolling, so that D stays in registers (see the
 * header: Tail).
 */
AESKIT_INLINE void vaes_ocb_deltas(const aeskit_ocb_key *ok, vaes_v *D, size_t nv)
{
    const vaes_v q = vaes_ocb_q(ok), lb = vaes_bcast(aeskit_load128(ok->l[VAES_LOG2_BPV - 1]));
    vaes_v e = vaes_zero();
    VAES_UNROLL
    for (size_t v = 0; v < VAES_NV; v++) {
        if (v >= nv) {   /* never read: set only to keep the compiler's analysis simple */
            D[v] = q;
            continue;
        }
        D[v] = vaes_xor(e, q);
        if (v + 1 < VAES_NV) {
            const __m128i lx = aeskit_load128(ok->l[VAES_LOG2_BPV + aeskit_ntz64(v + 1)]);
            D[v] = vaes_xor_lane(D[v], lx, VAES_BPV - 1);
            e = vaes_xor3(e, lb, vaes_bcast(lx));
        }
    }
}

/*
 * w vectors, the last with `last` blocks: vectors v0 .. v0 + w - 1 of a
 * batch whose base is O (Offset_{i0} ^ rk[0] in every lane), D[j] the
 * deltas of vector v0 + j; the top lane of vector VAES_NV - 1 also takes
 * lw (L[ntz(i0 + W)], or zero where the run stops short of position W).
 * Ciphers, folds the checksum into *sum, stores.
 */
AESKIT_INLINE void vaes_ocb_vectors(const uint8_t *rk, unsigned rounds, int enc, vaes_v fold,
                                  vaes_v O, const vaes_v *D, size_t v0, __m128i lw,
                                  vaes_v *sum, uint8_t *dst, const uint8_t *src, size_t w,
                                  size_t last)
{
    vaes_v x[VAES_NV], base[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        base[j] = v0 + j == VAES_NV - 1 ? vaes_xor_lane(O, lw, VAES_BPV - 1) : O;
        x[j] = vaes_xor3(vaes_load_part(src + VAES_VL * j, vaes_nb(j, w, last)), base[j], D[j]);
    }
    vaes_middle(x, w, rk, rounds, enc);
    vaes_v c[VAES_NV];
    VAES_UNROLL
    for (size_t j = 0; j < w; j++) {
        const size_t nb = vaes_nb(j, w, last);
        const vaes_v y = vaes_last(x[j], vaes_xor3(fold, base[j], D[j]), enc);
        c[j] = enc ? vaes_load_part(src + VAES_VL * j, nb) : vaes_keep(y, nb);
        if (j % 2 == 1)
            *sum = vaes_xor3(*sum, c[j - 1], c[j]);
        else if (j == w - 1)
            *sum = vaes_xor(*sum, c[j]);
        vaes_store_part(dst + VAES_VL * j, y, nb);
    }
}

/* r >= 1 blocks from the start of vector v0 of the batch with base O: half
 * a batch if they start the batch and fill one (cheaper than single
 * vectors for messages of 256-496 bytes), then one vector at a time
 * (independent chains that out-of-order execution overlaps), the last
 * partial. Unrolled over the VAES_NV vectors so that each takes its D[v]
 * from a register. */
AESKIT_INLINE void vaes_ocb_grid(const uint8_t *rk, unsigned rounds, int enc, vaes_v fold,
                               vaes_v O, const vaes_v *D, size_t v0, size_t r, __m128i lw,
                               vaes_v *sum, uint8_t *dst, const uint8_t *src)
{
    assert(r >= 1 && VAES_BPV * v0 + r <= VAES_W);
    if (v0 == 0 && r >= VAES_W / 2) {
        vaes_ocb_vectors(rk, rounds, enc, fold, O, D, 0, lw, sum, dst, src, VAES_NV / 2,
                         VAES_BPV);
        r -= VAES_W / 2, src += 8 * VAES_W, dst += 8 * VAES_W, v0 = VAES_NV / 2;
        if (r == 0)
            return;
    }
    VAES_UNROLL
    for (size_t v = 0; v < VAES_NV; v++) {
        if (v < v0)
            continue;
        if (r == 0)
            break;
        const size_t nb = r < VAES_BPV ? r : VAES_BPV;
        vaes_ocb_vectors(rk, rounds, enc, fold, O, D + v, v, lw, sum, dst, src, 1, nb);
        r -= nb, src += AESKIT_BLOCK * nb, dst += AESKIT_BLOCK * nb;
    }
}

/* All n blocks with schedule rk (enc: the cipher's, else the Equivalent
 * Inverse Cipher's): a head up to a multiple of W, whole batches, a tail. */
AESKIT_INLINE void vaes_ocb_run(const uint8_t *rk, unsigned rounds, const aeskit_ocb_key *ok,
                              int enc, aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src,
                              size_t n)
{
    const __m128i k0 = aeskit_load128(rk);
    const vaes_v fold = vaes_bcast(_mm_xor_si128(k0, aeskit_load128(rk + AESKIT_BLOCK * rounds)));
    const __m128i zero = _mm_setzero_si128();
    __m128i off = _mm_xor_si128(aeskit_load128(st->offset), k0);   /* carries rk[0] */
    vaes_v sum = vaes_from128(aeskit_load128(st->checksum));
    uint64_t i = st->blocks;
    const size_t p = (size_t)(i % VAES_W);
    const size_t nd = n < VAES_W - p ? p + n : VAES_W;   /* positions this call uses */
    vaes_v D[VAES_NV];
    vaes_ocb_deltas(ok, D, (nd + VAES_BPV - 1) / VAES_BPV);

    if (p > 0) {   /* the head: positions p + 1 .. nd, whole vectors from p */
        assert(p % VAES_BPV == 0);
        const size_t m = nd - p;
        const __m128i base = _mm_xor_si128(off, vaes_ocb_delta(ok, p));
        const __m128i lw = nd == VAES_W ? aeskit_load128(ok->l[aeskit_ntz64(i + m)]) : zero;
        vaes_ocb_grid(rk, rounds, enc, fold, vaes_bcast(base), D, p / VAES_BPV, m, lw, &sum,
                      dst, src);
        off = _mm_xor_si128(base, vaes_ocb_delta(ok, nd < VAES_W ? nd : VAES_W - 1));
        off = _mm_xor_si128(off, lw);
        i += m, n -= m, src += AESKIT_BLOCK * m, dst += AESKIT_BLOCK * m;
    }
    if (n >= VAES_W) {
        const vaes_v dw = vaes_bcast(vaes_ocb_delta(ok, VAES_W - 1));
        vaes_v O = vaes_bcast(off);
        for (; n >= VAES_W; n -= VAES_W, src += 16 * VAES_W, dst += 16 * VAES_W) {
            i += VAES_W;
            const __m128i lw = aeskit_load128(ok->l[aeskit_ntz64(i)]);
            vaes_ocb_vectors(rk, rounds, enc, fold, O, D, 0, lw, &sum, dst, src, VAES_NV,
                             VAES_BPV);
            O = vaes_xor3(O, vaes_bcast(lw), dw);
        }
        off = vaes_low128(O);
    }
    if (n > 0) {   /* the tail: positions 1 .. n of a new batch */
        vaes_ocb_grid(rk, rounds, enc, fold, vaes_bcast(off), D, 0, n, zero, &sum, dst, src);
        off = _mm_xor_si128(off, vaes_ocb_delta(ok, n));
        i += n;
    }
    aeskit_store128(st->offset, _mm_xor_si128(off, k0));
    aeskit_store128(st->checksum, vaes_fold_lanes(sum));
    st->blocks = i;
}

/* All n blocks, a head that fills half a batch or more first: its blocks
 * before the first whole vector on aesni's kernel, the rest here. Out of
 * line, so that the slot itself stays a pair of tail calls. */
AESKIT_NOINLINE static size_t VAES_FN(ocb_wide)(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                                aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const size_t p = (size_t)(st->blocks % VAES_W);
    const size_t m = n < VAES_W - p ? n : VAES_W - p;
    const size_t h = p == 0 ? 0 : m < VAES_W / 2 ? m : (VAES_BPV - p % VAES_BPV) % VAES_BPV;
    if (h > 0)
        aeskit_aesni_ocb(k, ok, enc, st, dst, src, h);
    if (h == n)
        return n;
    dst += AESKIT_BLOCK * h, src += AESKIT_BLOCK * h;
    if (enc)
        vaes_ocb_run(aeskit_aesni_enc_keys(k), k->rounds, ok, 1, st, dst, src, n - h);
    else
        vaes_ocb_run(aeskit_aesni_dec_keys(k), k->rounds, ok, 0, st, dst, src, n - h);
    return n;
}

/* Does all n blocks. A call that ends inside the batch it starts in, short
 * of half of it, is aesni's kernel's (see the header: Head). */
static size_t VAES_FN(ocb)(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                           aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n)
{
    const size_t p = (size_t)(st->blocks % VAES_W);
    if (p > 0 && n < VAES_W / 2 && n <= VAES_W - p)
        return aeskit_aesni_ocb(k, ok, enc, st, dst, src, n);
    return VAES_FN(ocb_wide)(k, ok, enc, st, dst, src, n);
}
