/*
 * vaes_many.h: the VAES tables' many-message kernels (the batch methods),
 * included by vaes_body.h after its GHASH helpers. Contracts: aeskit.h
 * and the mode headers.
 *
 * gcm_short (modes/gcm.h): simd_body.h's 128-bit kernel on this table's
 * GHASH key layout. A short message's few blocks gain nothing from a wide
 * register (the AES chain of one message is 5 blocks deep at 64 bytes, and
 * the fold of a wide GHASH costs more than its multiplies, see
 * VAES_GSHORT), so each message runs on xmm: its counter blocks J0..J0+db
 * through the rounds in one batch, the keystream XORed with the data, one
 * aggregated GHASH over the AAD, the ciphertext and the lengths block
 * (with the powers H^nh..H^1 as vaes_gblocks128 reads them), reduced
 * once, and the tag.
 * The round keys stay aesni's (set_key is aesni's expansion) and are read
 * once per round per message from L1; the next message's AES overlaps
 * this one's multiplies. Only lengths are branched on (counters from a
 * 12-byte nonce are public). As there, the blocks are hashed where they
 * lie, partial ones as images made in general registers; the keystream's
 * stack images are wiped.
 */
static_assert(AESKIT_GCM_SHORT_HASH <= VAES_GP, "a short message's powers are in the key");

/* The w counter blocks from J0 (already byte-reversed in c0), encrypted,
 * into c[0..w) (and, w odd, one more block of keystream into c[w], which
 * c has room for: w <= AESKIT_GCM_SHORT_HASH, even). Two blocks to a ymm
 * register, so that a round of a message's blocks is half as many
 * instructions: with each round's five xmm aesencs (64 bytes), a message's
 * waiting rounds filled the scheduler ahead of its GHASH. */
static_assert(AESKIT_GCM_SHORT_HASH % 2 == 0, "an odd block's pair fits");
AESKIT_INLINE void vaes_many_stream(const uint8_t *rk, unsigned rounds, __m128i c0, __m128i *c,
                                    size_t w)
{
    const __m256i swap = _mm256_broadcastsi128_si256(vaes_gbswap());
    const __m256i base = _mm256_broadcastsi128_si256(c0);
    const size_t p = (w + 1) / 2;
    __m256i y[AESKIT_GCM_SHORT_HASH / 2];
    AESKIT_UNROLL(4)
    for (size_t j = 0; j < p; j++)
        y[j] = _mm256_shuffle_epi8(
            _mm256_add_epi32(base, _mm256_set_epi32(0, 0, 0, (int)(2 * j + 1), 0, 0, 0,
                                                    (int)(2 * j))), swap);
    __m256i key = _mm256_broadcastsi128_si256(aeskit_load128(rk));
    AESKIT_UNROLL(4)
    for (size_t j = 0; j < p; j++)
        y[j] = _mm256_xor_si256(y[j], key);
    AESKIT_UNROLL(14)
    for (unsigned r = 1; r < 14; r++) {
        if (r >= 10 && r >= rounds)
            break;
        key = _mm256_broadcastsi128_si256(aeskit_load128(rk + AESKIT_BLOCK * r));
        AESKIT_UNROLL(4)
        for (size_t j = 0; j < p; j++)
            y[j] = _mm256_aesenc_epi128(y[j], key);
    }
    key = _mm256_broadcastsi128_si256(aeskit_load128(rk + AESKIT_BLOCK * rounds));
    AESKIT_UNROLL(4)
    for (size_t j = 0; j < p; j++)
        _mm256_storeu_si256((__m256i *)(void *)&c[2 * j], _mm256_aesenclast_epi128(y[j], key));
}

/* Item m's counter blocks J0..J0+db (db its data blocks), encrypted, into
 * c. */
AESKIT_INLINE void vaes_many_blocks(const uint8_t *rk, unsigned rounds, const aeskit_aead_item *m,
                                    __m128i *c)
{
    /* J0 = nonce || 1 reversed, from general registers (modes/gcm.h:
     * aeskit_gcm_bytes_in says why) */
    const __m128i c0 = _mm_set_epi64x(
        (long long)aeskit_load_be64(m->m.nonce),
        (long long)((uint64_t)aeskit_load_be32(m->m.nonce + 8) << 32 | 1));
    switch ((m->len + 15) / 16) {   /* at most 7 data blocks (nh <= 8) */
    case 0: vaes_many_stream(rk, rounds, c0, c, 1); break;
    case 1: vaes_many_stream(rk, rounds, c0, c, 2); break;
    case 2: vaes_many_stream(rk, rounds, c0, c, 3); break;
    case 3: vaes_many_stream(rk, rounds, c0, c, 4); break;
    case 4: vaes_many_stream(rk, rounds, c0, c, 5); break;
    case 5: vaes_many_stream(rk, rounds, c0, c, 6); break;
    case 6: vaes_many_stream(rk, rounds, c0, c, 7); break;
    default: vaes_many_stream(rk, rounds, c0, c, 8); break;
    }
}

/* Item m's data through its encrypted counter blocks c into dst, its
 * GHASH, and its tag into tag; kb the caller's scratch block (which it
 * wipes). */
AESKIT_INLINE void vaes_many_finish(const aeskit_ghash_key *hk, int enc, const aeskit_aead_item *m,
                                    const __m128i *c, uint8_t tag[16], uint8_t *kb)
{
    const __m128i swap = vaes_gbswap();
    const aeskit_gcm_short_shape sh = aeskit_gcm_short_shape_of(m);
    /* GHASH: block j of the nh (AAD, ciphertext, lengths) times H^(nh-j),
     * block j's power at pw + 16 * j */
    const uint8_t *pw = vaes_gpowers(hk, sh.nh);
    aeskit_clmul_sum s = aeskit_clmul_zero();
    __m128i h;
#define VAES_GCM_ADD(img) (h = aeskit_load128(pw), pw += AESKIT_BLOCK, \
                           aeskit_clmul_mul_add(&s, (img), h, aeskit_clmul_half(h)))
    uint64_t hi, lo;
    for (size_t j = 0; j < sh.awhole; j++)
        VAES_GCM_ADD(_mm_shuffle_epi8(aeskit_load128(sh.aad + AESKIT_BLOCK * j), swap));
    if (sh.ab > sh.awhole) {
        aeskit_gcm_bytes_in(sh.aad + AESKIT_BLOCK * sh.awhole, sh.aad_len % 16, &hi, &lo);
        VAES_GCM_ADD(_mm_set_epi64x((long long)hi, (long long)lo));
    }
    for (size_t j = 0; j < sh.whole; j++) {
        /* the ciphertext's image: opening's is read before dst (maybe
         * src) is written */
        const __m128i v = aeskit_load128(m->src + AESKIT_BLOCK * j);
        const __m128i o = _mm_xor_si128(v, c[j + 1]);
        aeskit_store128(m->dst + AESKIT_BLOCK * j, o);
        VAES_GCM_ADD(_mm_shuffle_epi8(enc ? o : v, swap));
    }
    if (sh.rest > 0) {
        aeskit_store128(kb, c[sh.db]);
        const uint64_t kh = aeskit_load_be64(kb), kl = aeskit_load_be64(kb + 8);
        aeskit_gcm_bytes_in(m->src + AESKIT_BLOCK * sh.whole, sh.rest, &hi, &lo);
        uint64_t oh = hi ^ kh, ol = lo ^ kl;
        aeskit_gcm_bytes_cut(sh.rest, &oh, &ol);
        aeskit_gcm_bytes_out(m->dst + AESKIT_BLOCK * sh.whole, sh.rest, oh, ol);
        VAES_GCM_ADD(enc ? _mm_set_epi64x((long long)oh, (long long)ol)
                         : _mm_set_epi64x((long long)hi, (long long)lo));
    }
    VAES_GCM_ADD(_mm_set_epi64x((long long)((uint64_t)sh.aad_len * 8),
                                (long long)((uint64_t)m->len * 8)));
#undef VAES_GCM_ADD
    const __m128i y = _mm_shuffle_epi8(aeskit_clmul_reduce(s), swap);
    aeskit_store128(tag, _mm_xor_si128(y, c[0]));
}

/* The next message's counter blocks are encrypted before this one's data,
 * GHASH and tag, as simd_body.h's kernel does and for its reason: a
 * message's AES is a chain its GHASH waits for, and a message ahead the
 * chains of two messages are in flight together. */
static void VAES_FN(gcm_short)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                               const aeskit_aead_item *m, size_t n, uint8_t (*tags)[16])
{
    const uint8_t *rk = aeskit_aesni_enc_keys(k);
    const unsigned rounds = k->rounds;
    assert(hk->max_blocks >= AESKIT_GCM_SHORT_HASH);
    __m128i c[2][AESKIT_GCM_SHORT_HASH];
    uint8_t kb[AESKIT_BLOCK];
    if (n > 0)
        vaes_many_blocks(rk, rounds, &m[0], c[0]);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n)
            vaes_many_blocks(rk, rounds, &m[i + 1], c[(i + 1) & 1]);
        vaes_many_finish(hk, enc, &m[i], c[i & 1], tags[i], kb);
    }
    aeskit_secure_zero(c, sizeof c);
    aeskit_secure_zero(kb, sizeof kb);
}
