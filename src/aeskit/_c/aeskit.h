/*
 * aeskit.h: the internal contract of the C core.
 *
 * Three layers, data flows down them once:
 *   py/       Python glue: types, buffers, lengths, overlap, the GIL.
 *   modes/    each mode written once against the backend table below.
 *   backends/ each fills one const table of bulk primitives.
 *
 * Every contract is written here once; definitions carry only notes.
 */
#ifndef AESKIT_H
#define AESKIT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define AESKIT_BLOCK 16
#define AESKIT_MAX_ROUNDS 14

struct aeskit_impl;

/*
 * An expanded key. The round-key layout is private to the backend that
 * built it (set_key); a key is only ever used with that backend, whose
 * table it points at. Nothing outside the backend reads rk.
 *   portable: bitsliced round keys, 8 words per round
 *   aesni:    encryption keys [0..rounds], then decryption keys
 *   vaes_*:   aesni's (their set_key is aesni's)
 */
typedef struct aeskit_key {
    uint64_t rk[128];
    unsigned rounds;                 /* 10, 12 or 14: the key size lives here */
    const struct aeskit_impl *impl;
} aeskit_key;

/* Counter formats for the ctr slot. The counter is the whole 16-byte
 * block; only the named part is incremented, modulo its width. A ctr slot
 * may branch on a BE128 or LE32 counter's value (CTR mode's IV and
 * GCM-SIV's tag are public) but never on a BE32 one: GCM's counters derive
 * from the hash key when the nonce is not 12 bytes (modes/gcm.c). */
enum aeskit_ctr {
    AESKIT_CTR_BE128,   /* all 16 bytes big-endian (SP 800-38A, OpenSSL CTR) */
    AESKIT_CTR_BE32,    /* bytes 12..15 big-endian, rest fixed (GCM inc32) */
    AESKIT_CTR_LE32,    /* bytes 0..3 little-endian, rest fixed (GCM-SIV) */
};

/* CPU feature bits (cpu.c). A bit is set only when the instructions are
 * present AND the OS saves the register state they need. */
enum {
    AESKIT_CPU_SSSE3      = 1u << 0,
    AESKIT_CPU_SSE41      = 1u << 1,
    AESKIT_CPU_AES        = 1u << 2,
    AESKIT_CPU_PCLMUL     = 1u << 3,
    AESKIT_CPU_AVX        = 1u << 4,   /* + OS YMM state */
    AESKIT_CPU_AVX2       = 1u << 5,
    AESKIT_CPU_BMI2       = 1u << 6,
    AESKIT_CPU_VAES       = 1u << 7,   /* + OS YMM state */
    AESKIT_CPU_VPCLMUL    = 1u << 8,   /* + OS YMM state */
    AESKIT_CPU_AVX512F    = 1u << 9,   /* + OS ZMM state */
    AESKIT_CPU_AVX512BW   = 1u << 10,
    AESKIT_CPU_AVX512VL   = 1u << 11,
};

/*
 * A backend: one const table of bulk primitives.
 *
 * Common rules for every function below:
 *   - n counts whole 16-byte blocks; n == 0 is allowed and does nothing
 *     (chaining values and counters are then left unchanged);
 *   - dst == src is allowed; any other overlap never happens;
 *   - no pointer needs any alignment;
 *   - nothing branches on or indexes memory by key, data, iv or counter.
 *
 * Chaining values are updated in place so that a mode can continue a
 * stream with the next call:
 *   cbc_enc/cbc_dec  iv <- last ciphertext block
 *   cfb_enc/cfb_dec  iv <- last ciphertext block
 *   ofb              iv <- last keystream block (the next one is E(iv))
 *   ctr              ctr <- the counter after the last one used
 * CFB here is CFB128 (full-block segments); CFB8 is built in modes/.
 */
/*
 * GHASH key: H and whatever the backend precomputes from it (powers of H,
 * Karatsuba halves). Layout private to the backend whose ghash_key built it.
 */
typedef struct aeskit_ghash_key {
    uint64_t w[384];   /* 3072 bytes: vaes_avx512's 128 powers and their halves */
} aeskit_ghash_key;

/*
 * OCB3 (RFC 7253) per-key values, computed once at key setup by the mode
 * layer (modes/ocb.c): L_* = E(0), L_$ = double(L_*), L[i] = double^i(L_$).
 * L[i] serves every block index whose ntz is i; 64 cover any 64-bit index.
 */
typedef struct aeskit_ocb_key {
    uint8_t l_star[16];
    uint8_t l_dollar[16];
    uint8_t l[64][16];
} aeskit_ocb_key;

/* Where an OCB3 pass stands: the offset of the last block done, the
 * checksum of the plaintext so far, and how many blocks were done. */
typedef struct aeskit_ocb_state {
    uint8_t offset[16];
    uint8_t checksum[16];
    uint64_t blocks;
} aeskit_ocb_state;

typedef void aeskit_set_key_fn(aeskit_key *k, const uint8_t *key, size_t len);
typedef void aeskit_ecb_fn(const aeskit_key *k, uint8_t *dst, const uint8_t *src,
                           size_t n);
typedef void aeskit_chain_fn(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                             const uint8_t *src, size_t n);
typedef void aeskit_ctr_fn(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                           uint8_t *dst, const uint8_t *src, size_t n);

struct aeskit_impl {
    const char *name;           /* "portable" | "aesni" | ... */
    uint32_t cpu_needs;         /* AESKIT_CPU_* bits, all required */
    /* mandatory, never NULL */
    aeskit_set_key_fn *set_key; /* len is 16, 24 or 32; sets rounds and impl */
    aeskit_ecb_fn *ecb_enc;
    aeskit_ecb_fn *ecb_dec;
    aeskit_chain_fn *cbc_enc;   /* serial */
    aeskit_chain_fn *cbc_dec;   /* parallel */
    aeskit_chain_fn *cfb_enc;   /* serial */
    aeskit_chain_fn *cfb_dec;   /* parallel */
    aeskit_chain_fn *ofb;       /* serial */
    aeskit_ctr_fn *ctr;         /* parallel */
    /* GHASH (GCM, GMAC). acc and the data are in the byte order of SP
     * 800-38D; ghash folds n whole blocks: acc = (acc ^ p_i) * H for each. */
    void (*ghash_key)(aeskit_ghash_key *hk, const uint8_t h[16]);
    void (*ghash)(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p, size_t n);
    /*
     * Optional fused paths: NULL, or do a prefix of the n blocks and return
     * how many were done (0..n); the mode finishes the rest with the
     * mandatory slots. State is updated to match what was done.
     *   ocb: enc=1 encrypts (checksum over the plaintext), enc=0 decrypts
     *        (checksum over the plaintext it produces), blocks numbered
     *        from st->blocks + 1.
     */
    size_t (*ocb)(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                  aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n);
    /*   gcm: CTR with BE32 counters from ctr, and GHASH of the ciphertext
     *        into acc (enc=1: of dst after encrypting; enc=0: of src before
     *        decrypting, so dst == src works), with hk from this backend's
     *        ghash_key. ctr and acc end as the split slots would leave them.
     *        Called only with a public counter (a 12-byte nonce's), so it
     *        may branch on the counter's value; the ctr slot may not. */
    size_t (*gcm)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc, uint8_t ctr[16],
                  uint8_t acc[16], uint8_t *dst, const uint8_t *src, size_t n);
};

/* ---- backends (one file each under backends/) ---------------------- */
extern const struct aeskit_impl aeskit_portable_impl;
#if defined(AESKIT_HAVE_X86)
extern const struct aeskit_impl aeskit_aesni_impl;
extern const struct aeskit_impl aeskit_vaes_avx2_impl;
extern const struct aeskit_impl aeskit_vaes_avx512_impl;
#endif

/* ---- generic helpers (modes/generic.c) ------------------------------
 * Each built only on k->impl->ecb_enc / ecb_dec; a backend with nothing
 * special for a slot points it here. */
aeskit_chain_fn aeskit_generic_cbc_enc;
aeskit_chain_fn aeskit_generic_cbc_dec;
aeskit_chain_fn aeskit_generic_cfb_enc;
aeskit_chain_fn aeskit_generic_cfb_dec;
aeskit_chain_fn aeskit_generic_ofb;
aeskit_ctr_fn aeskit_generic_ctr;
/* Add `add` to the counter part of ctr that kind names, modulo its width. */
void aeskit_ctr_add(enum aeskit_ctr kind, uint8_t ctr[16], uint64_t add);

/* ---- CPU and dispatch (cpu.c, dispatch.c) ---------------------------- */
uint32_t aeskit_cpu_detect(void);          /* CPUID + XGETBV; call once */
uint32_t aeskit_cpu_features(void);        /* what detect found */
const char *aeskit_cpu_feature_name(uint32_t bit);

/* All backends compiled in, in preference order (best first), ending NULL. */
extern const struct aeskit_impl *const aeskit_impls[];
int aeskit_impl_available(const struct aeskit_impl *impl);
const struct aeskit_impl *aeskit_impl_by_name(const char *name);   /* NULL if unknown */
const struct aeskit_impl *aeskit_impl_best(void);                  /* never NULL */

/* ---- modes (modes/block.c) -------------------------------------------
 * One streaming state serves every block-cipher mode; one-shot calls are
 * a fresh state, one update and a finalize. */
enum aeskit_mode {
    AESKIT_ECB, AESKIT_CBC, AESKIT_CFB, AESKIT_CFB8, AESKIT_OFB, AESKIT_CTR,
};

typedef struct aeskit_stream {
    const aeskit_key *key;
    uint8_t iv[16];     /* chaining value (CBC, CFB, CFB8), last keystream
                           block (OFB), next counter (CTR) */
    uint8_t buf[16];    /* ECB/CBC: pending input bytes; CFB/OFB/CTR: the
                           current keystream block */
    unsigned pos;       /* ECB/CBC: bytes pending; CFB/OFB/CTR: bytes of buf
                           used (0 = none left); always < 16 */
    uint8_t mode;       /* enum aeskit_mode */
    uint8_t enc;        /* 1 encrypt, 0 decrypt */
} aeskit_stream;

/* iv is ignored (may be NULL) for ECB, otherwise 16 bytes. */
void aeskit_stream_init(aeskit_stream *st, const aeskit_key *k, enum aeskit_mode mode,
                        int enc, const uint8_t *iv);
/* Bytes the next update of len bytes will write. */
size_t aeskit_stream_out_len(const aeskit_stream *st, size_t len);
/* Processes len bytes; writes exactly aeskit_stream_out_len(st, len) bytes
 * to dst and returns that count. dst == src is allowed. */
size_t aeskit_stream_update(aeskit_stream *st, uint8_t *dst, const uint8_t *src,
                            size_t len);
/* Bytes left pending (ECB/CBC: input that is not a whole block). */
unsigned aeskit_stream_pending(const aeskit_stream *st);
int aeskit_mode_is_blockwise(enum aeskit_mode mode);   /* ECB, CBC */

/*
 * Whole blocks out, a partial block kept: the streaming update shared by
 * ECB, CBC and OCB3. part/pos hold the pending bytes (pos < 16); each run
 * of whole blocks goes to fn(ctx, dst, src, n). Writes and returns
 * 16 * floor((pos + len) / 16) bytes; dst == src works (the output then
 * lags the input by pos bytes, so the blocks go through a bounce buffer).
 */
typedef void aeskit_blocks_fn(void *ctx, uint8_t *dst, const uint8_t *src, size_t n);
size_t aeskit_blockwise_update(uint8_t part[16], unsigned *pos, aeskit_blocks_fn *fn,
                               void *ctx, uint8_t *dst, const uint8_t *src, size_t len);

/* ---- GHASH and AEADs (backends/ghash_*.c, modes/gcm.c, modes/ocb.c) ---- */
void aeskit_ct64_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16]);
void aeskit_ct64_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                       size_t n);
#if defined(AESKIT_HAVE_X86)
void aeskit_clmul_ghash_key(aeskit_ghash_key *hk, const uint8_t h[16]);
void aeskit_clmul_ghash(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                        size_t n);
size_t aeskit_aesni_ocb(const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                        aeskit_ocb_state *st, uint8_t *dst, const uint8_t *src, size_t n);
size_t aeskit_aesni_gcm(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                        uint8_t ctr[16], uint8_t acc[16], uint8_t *dst, const uint8_t *src,
                        size_t n);
#endif

/*
 * GCM (SP 800-38D), streaming: init, any number of aad calls, any number
 * of update calls, then tag. Lengths are validated by the caller (the
 * Python boundary): data at most 2^36 - 32 bytes, AAD at most 2^61 - 1,
 * cumulative. dst == src allowed in update; decryption hashes each block
 * of ciphertext before it can be overwritten.
 */
typedef struct aeskit_gcm {
    const aeskit_key *key;
    const aeskit_ghash_key *hk;
    uint8_t ek_j0[16];  /* E(K, J0), masks the tag */
    uint8_t ctr[16];    /* next counter block (inc32) */
    uint8_t acc[16];    /* GHASH accumulator */
    uint8_t ks[16];     /* keystream of the current partial data block */
    uint8_t part[16];   /* bytes of the current partial block to hash
                           (AAD before data, then ciphertext) */
    uint64_t aad_len, data_len;   /* bytes so far */
    unsigned pos;       /* bytes in part (and used of ks); < 16 */
    uint8_t enc;
    uint8_t in_data;    /* set by the first update: AAD is then closed */
    uint8_t secret_ctr; /* J0 came from GHASH (nonce not 12 bytes): the
                           counters depend on the hash key (modes/gcm.c) */
} aeskit_gcm;

#define AESKIT_GCM_MAX_DATA ((UINT64_C(1) << 36) - 32)
#define AESKIT_GCM_MAX_AAD ((UINT64_C(1) << 61) - 1)

void aeskit_gcm_init(aeskit_gcm *g, const aeskit_key *k, const aeskit_ghash_key *hk,
                     int enc, const uint8_t *nonce, size_t nonce_len);   /* nonce_len >= 1 */
void aeskit_gcm_aad(aeskit_gcm *g, const uint8_t *aad, size_t len);     /* before update */
void aeskit_gcm_update(aeskit_gcm *g, uint8_t *dst, const uint8_t *src, size_t len);
void aeskit_gcm_tag(aeskit_gcm *g, uint8_t tag[16]);   /* full 16 bytes; ends g */
/* init, aad, update and tag over one whole message, with a shorter path for
 * short messages; dst may equal src or overlap the AAD; aad and src may be
 * NULL when their length is 0. */
void aeskit_gcm_oneshot(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                        const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                        size_t aad_len, uint8_t *dst, const uint8_t *src, size_t len,
                        uint8_t tag[16]);

/*
 * OCB3 (RFC 7253), streaming. Full data blocks are output as they
 * complete; a final partial block (1..15 bytes) can only be handled at
 * finish, so update outputs 16 * floor((pending + len) / 16) bytes and
 * finish outputs the pending 0..15. Nonce 1..15 bytes, tag 8..16 bytes
 * (taglen is part of the nonce formatting). AAD calls come before data.
 * dst == src is allowed in update (with pending bytes too).
 */
typedef struct aeskit_ocb {
    const aeskit_key *key;
    const aeskit_ocb_key *ok;
    aeskit_ocb_state st;        /* data: offset, checksum, blocks */
    aeskit_ocb_state ad;        /* AAD: offset, running Sum in checksum, blocks */
    uint8_t part[16];           /* pending data bytes */
    uint8_t apart[16];          /* pending AAD bytes */
    unsigned pos, apos;
    unsigned taglen;
    uint8_t enc;
} aeskit_ocb;

void aeskit_ocb_key_init(aeskit_ocb_key *ok, const aeskit_key *k);
void aeskit_ocb_init(aeskit_ocb *o, const aeskit_key *k, const aeskit_ocb_key *ok, int enc,
                     const uint8_t *nonce, size_t nonce_len, unsigned taglen);
void aeskit_ocb_aad(aeskit_ocb *o, const uint8_t *aad, size_t len);
size_t aeskit_ocb_update_len(const aeskit_ocb *o, size_t len);
size_t aeskit_ocb_update(aeskit_ocb *o, uint8_t *dst, const uint8_t *src, size_t len);
/* Writes the pending 0..15 bytes to dst (returns the count) and the full
 * 16-byte tag (the caller truncates to taglen); ends o. */
size_t aeskit_ocb_finish(aeskit_ocb *o, uint8_t *dst, uint8_t tag[16]);

/* ---- common ----------------------------------------------------------- */
void aeskit_secure_zero(void *p, size_t len);

#endif
