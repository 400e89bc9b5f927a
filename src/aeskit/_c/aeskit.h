/*
 * aeskit.h: the contract between the modes and the backends.
 *
 * Three layers, data flows down them once:
 *   py/       Python glue: types, buffers, lengths, overlap, the GIL.
 *   modes/    each mode written once against the backend table below
 *             (one header per family: block.h, aead.h, gcm.h, ocb.h, ...).
 *   backends/ each fills one const table of bulk primitives.
 *
 * This header holds only what both sides of the table must agree on: the
 * key, the slots and their rules. Every slot's contract is written here
 * once, but for a mode's fused kernels, whose contract its header holds
 * beside the sub-table they fill (below). Definitions carry only notes.
 * The CPU feature bits are in cpu.h, the list of backends in dispatch.h;
 * the helpers a backend may point a slot at are in modes/generic.h.
 */
#ifndef AESKIT_H
#define AESKIT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define AESKIT_BLOCK 16
#define AESKIT_MAX_ROUNDS 14

struct aeskit_impl;
struct aeskit_gcm_impl;
struct aeskit_gcmsiv_impl;
struct aeskit_ocb_impl;
struct aeskit_ccm_impl;
struct aeskit_xaes_impl;
struct aeskit_aead_item;

/*
 * An expanded key. The round-key layout is private to the backend that
 * built it (set_key); a key is only ever used with that backend, whose
 * table it points at. Nothing outside the backend reads rk.
 *   portable: bitsliced round keys, 8 words per round
 *   aesni:    encryption keys [0..rounds], then decryption keys
 *   vaes_*:   aesni's (their set_key is aesni's expansion)
 *   armv8_ce: aesni's layout (encryption keys, then AESIMC'd ones for AESD)
 *   power8:   encryption keys [0..rounds] only (vncipher takes them as is)
 */
typedef struct aeskit_key {
    uint64_t rk[128];
    unsigned rounds;                 /* 10, 12 or 14: the key size lives here */
    unsigned used;                   /* bytes of rk from the start that hold the
                                        schedule (the rest set_key zeroes): what
                                        a key made per message must wipe */
    const struct aeskit_impl *impl;
} aeskit_key;

/* Counter formats for the ctr slot. The counter is the whole 16-byte
 * block; only the named part is incremented, modulo its width. A ctr slot
 * may branch on a BE128 or LE32 counter's value (CTR mode's IV and
 * GCM-SIV's tag are public) but never on a BE32 or BE128_SECRET one:
 * GCM's counters derive from the hash key when the nonce is not 12 bytes
 * (modes/gcm.c), and EAX's first counter is a MAC of the nonce
 * (modes/eax.c). BE128_SECRET counts exactly as BE128 does; only the
 * promise differs: no branch and no memory index depends on any bit of
 * it, the carries included. */
enum aeskit_ctr {
    AESKIT_CTR_BE128,   /* all 16 bytes big-endian (SP 800-38A, OpenSSL CTR) */
    AESKIT_CTR_BE32,    /* bytes 12..15 big-endian, rest fixed (GCM inc32) */
    AESKIT_CTR_LE32,    /* bytes 0..3 little-endian, rest fixed (GCM-SIV) */
    AESKIT_CTR_BE128_SECRET,   /* BE128 that is a secret (EAX) */
};

/*
 * GHASH key: H and whatever the backend precomputes from it (powers of H,
 * Karatsuba halves). Layout private to the backend whose ghash_key built
 * it; max_blocks is what it was built for (ghash_key below).
 */
typedef struct aeskit_ghash_key {
    uint64_t w[384];   /* 3072 bytes: vaes_avx512's 128 powers and their halves */
    size_t max_blocks;
    size_t from, used; /* w's bytes [from, from + used) hold all ghash_key
                          wrote: what a key made per message must wipe */
} aeskit_ghash_key;

/* ghash_key's max_blocks for a key that serves calls of any length. */
#define AESKIT_GHASH_ANY SIZE_MAX
/* The most a key made for one message is built for (GCM-SIV's and
 * XAES-256-GCM's long messages). A key built for at least this many blocks
 * also serves calls of any length: the backend then reduces as often as the
 * powers it built require, inside the one call, its accumulator kept in a
 * register (not in runs of this many blocks that each store and reload it);
 * a fused kernel (GCM's, GCM-SIV's opening) given such a key shares each
 * reduction among the batches its powers cover. Building the wide tables'
 * 64 or 128 powers would cost a 16 KiB message more than those reductions. */
#define AESKIT_GHASH_MSG 32

/* Whether hk serves a call of n blocks (the slots assert it). */
static inline int aeskit_ghash_serves(const aeskit_ghash_key *hk, size_t n)
{
    return n <= hk->max_blocks || hk->max_blocks >= AESKIT_GHASH_MSG;
}

typedef void aeskit_set_key_fn(aeskit_key *k, const uint8_t *key, size_t len);
typedef void aeskit_ecb_fn(const aeskit_key *k, uint8_t *dst, const uint8_t *src,
                           size_t n);
typedef void aeskit_chain_fn(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                             const uint8_t *src, size_t n);
typedef void aeskit_ctr_fn(const aeskit_key *k, enum aeskit_ctr kind, uint8_t ctr[16],
                           uint8_t *dst, const uint8_t *src, size_t n);
typedef void aeskit_cbc_mac_fn(const aeskit_key *k, uint8_t mac[16], const uint8_t *src,
                               size_t n);
/* cbc_x (below): `chains` independent CBC chains, n blocks each, in
 * lockstep. */
typedef void aeskit_cbc_x_fn(const aeskit_key *k, size_t chains, uint8_t (*iv)[16],
                             uint8_t *const *dst, const uint8_t *const *src, size_t n);
typedef void aeskit_xts_fn(const aeskit_key *k, int enc, uint8_t tweak[16], uint8_t *dst,
                           const uint8_t *src, size_t n);
typedef void aeskit_xts_units_fn(const aeskit_key *k, int enc, const uint8_t *tweaks,
                                 size_t unit, uint8_t *dst, const uint8_t *src, size_t units);
typedef void aeskit_ghash_key_fn(aeskit_ghash_key *hk, const uint8_t h[16],
                                 size_t max_blocks);
typedef void aeskit_ghash_fn(const aeskit_ghash_key *hk, uint8_t acc[16], const uint8_t *p,
                             size_t n);
/* A number a backend exports to the tests (py/slots.c: backend_constants):
 * a boundary its kernels hand over at, which the tests must cross. */
typedef struct aeskit_constant {
    const char *name;
    size_t value;
} aeskit_constant;

/*
 * A backend: one const table of bulk primitives.
 *
 * Common rules for every function below:
 *   - n counts whole 16-byte blocks; n == 0 is allowed and does nothing
 *     (chaining values and counters are then left unchanged);
 *   - dst == src is allowed; any other overlap never happens;
 *   - no pointer needs any alignment;
 *   - nothing branches on or indexes memory by key, data, iv or counter
 *     (but see enum aeskit_ctr and modes/gcm.h for the public counters).
 *
 * Chaining values are updated in place so that a mode can continue a
 * stream with the next call:
 *   cbc_enc/cbc_dec  iv <- last ciphertext block
 *   cfb_enc/cfb_dec  iv <- last ciphertext block
 *   ofb              iv <- last keystream block (the next one is E(iv))
 *   ctr              ctr <- the counter after the last one used
 *   cbc_mac          mac <- E(mac ^ block) for each block in turn
 *   xts              tweak <- tweak * alpha^n
 * CFB here is CFB128 (full-block segments); CFB8 is built in modes/.
 */
struct aeskit_impl {
    const char *name;           /* "portable" | "aesni" | ... */
    uint32_t cpu_needs;         /* AESKIT_CPU_* bits (cpu.h), all required */
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
    /* CBC-MAC (serial): the chain of CBC encryption with no output, for
     * CMAC, CCM, EAX and SIV. The modes do the padding and subkeys. */
    aeskit_cbc_mac_fn *cbc_mac;
    /* XTS (IEEE 1619) on whole blocks with the data key k: block i is
     * E_k(P_i ^ T_i) ^ T_i (D_k when enc is 0) with T_0 = tweak and
     * T_(i+1) = T_i * alpha in GF(2^128), little-endian (IEEE 1619 5.2).
     * tweak is already encrypted with the tweak key (the mode does that)
     * and is a secret. Ciphertext stealing is the mode's. */
    aeskit_xts_fn *xts;
    /* GHASH (GCM, GMAC; POLYVAL by way of it). acc and the data are in the
     * byte order of SP 800-38D; ghash folds n whole blocks: acc = (acc ^
     * p_i) * H for each. ghash_key builds hk for calls of at most
     * max_blocks blocks (AESKIT_GHASH_ANY: any call), and a backend may
     * build less for a small max_blocks: a key made per message (GCM-SIV)
     * then costs what that message needs, not the whole power table. hk
     * records max_blocks, and in from and used the bytes of w that hold
     * everything ghash_key wrote (such a key is wiped in a fraction of the
     * struct's 3 KiB); ghash asserts aeskit_ghash_serves(hk, n): n <= hk->max_blocks,
     * or a key of at least AESKIT_GHASH_MSG blocks, which serves any n. */
    aeskit_ghash_key_fn *ghash_key;
    aeskit_ghash_fn *ghash;
    /* Optional: NULL, or ghash on blocks in POLYVAL's byte order (GCM-SIV,
     * RFC 8452 Appendix A): acc = (acc ^ rev(p_i)) * H for each block,
     * rev the byte reversal, acc and hk as for ghash. A CLMUL kernel gets
     * it by not swapping the bytes it loads; without it the mode reverses
     * the blocks into a buffer, a second pass over the data. */
    aeskit_ghash_fn *polyval;
    /* Optional: NULL, or set_key making the encryption schedule alone, for
     * a key made per message that only encrypts (GCM-SIV's message key,
     * XAES-256-GCM's Kx): such a key goes to ecb_enc, ctr, cbc_mac, ghash's
     * neighbours and the fused kernels' encrypting side, never to a slot
     * that decrypts. used covers that schedule; the rest of rk is left as
     * it was and is not read. NULL: the mode calls set_key. */
    aeskit_set_key_fn *set_enc_key;
    /* Optional: NULL, or xts on `units` consecutive data units of `unit`
     * blocks each, unit i starting from the encrypted tweak at tweaks +
     * 16 * i: what encrypt_sectors does, in one pass that does not restart
     * at every unit (a call per 4 KiB sector cost 4-7% more than one 1 MiB
     * unit on aesni; aesni and the vaes tables fill it). The tweaks are secrets, which the caller wipes; unit
     * and units are public. NULL: the mode calls xts once a unit. */
    aeskit_xts_units_fn *xts_units;
    /*
     * Optional fused paths, one sub-table per mode, declared in that mode's
     * header: NULL, or the sub-table of the kernels this backend fuses for
     * the mode. The common rules above hold for their kernels too. A
     * kernel that takes n blocks does a prefix of them and returns how many
     * it did (0..n), with its state updated to match; the mode finishes the
     * rest with the mandatory slots.
     *   gcm     modes/gcm.h      CTR and GHASH in one pass
     *   gcmsiv  modes/gcmsiv.h   the opening pass; a short message whole
     *   ocb     modes/ocb.h      OCB3's offsets, cipher and checksum
     *   ccm     modes/ccm.h      CTR and CBC-MAC in one pass (CCM, EAX, SIV)
     *   xaes    modes/xaes.h     a message's key: Kx, its schedule and H
     * polyval and xts_units stay above, though one mode each uses them:
     * they are forms of the ghash and xts slots, on the same keys.
     */
    const struct aeskit_gcm_impl *gcm;
    const struct aeskit_gcmsiv_impl *gcmsiv;
    const struct aeskit_ocb_impl *ocb;
    const struct aeskit_ccm_impl *ccm;
    const struct aeskit_xaes_impl *xaes;
    /* The boundaries of this table's kernels, for the tests; ends with a
     * NULL name. */
    const aeskit_constant *constants;
    /* Multi-buffer CBC (the batch methods of the serial modes, through
     * modes/chains.h): cbc_x runs chains (1..cbc_x_chains) independent
     * chains n blocks each, round by round together, so the AES unit
     * overlaps them where one chain would wait out each round's latency.
     * Chain c: iv[c] <- E(iv[c] ^ block) for each block of src[c] in
     * turn, each result stored to dst[c] (CBC encryption) or, with dst
     * NULL, to nothing (CBC-MAC). The iv array holds the chains' values
     * side by side; dst[c] may equal src[c] and overlaps nothing else.
     * cbc_x_chains is as many chains as the unit needs in flight
     * (latency x throughput), at most AESKIT_CBC_X_MAX. */
    aeskit_cbc_x_fn *cbc_x;
    size_t cbc_x_chains;
    /* Nonzero: cbc_x encrypts (dst not NULL) up to this many chains
     * (<= cbc_x_chains) a 64-byte line of each at a time, so chains laid
     * 4 KiB apart do not meet in one L1 set; modes/chains.c then runs
     * encryption on this many chains side by side. 0: it stores block by
     * block, and chains.c staggers encryption's chains instead. */
    size_t cbc_x_lines;
    /* The fewest whole blocks of a message that aeskit_ctr_many
     * (modes/generic.h: the CTR of the batch methods) gives the ctr slot;
     * a message with fewer goes into its shared ECB pass, beside the
     * others' counter blocks. AESKIT_CTR_MANY_LONG where the ctr slot runs
     * a few blocks as fast as ECB does; past the few blocks a vaes
     * backend's ctr hands to aesni's (latency-bound, one block per lane),
     * where its wide ECB runs them several to a vector. */
    size_t ctr_many_long;
    /* Many messages at once (the batch methods, issue 30). Never NULL.
     *   gcm_short  n short GCM messages, each sealed or opened whole:
     *              contract in modes/gcm.h (aeskit_gcm_short_fn); portable
     *              points it at the mode's own aeskit_gcm_short_generic. */
    void (*gcm_short)(const aeskit_key *k, const aeskit_ghash_key *hk, int enc,
                      const struct aeskit_aead_item *m, size_t n, uint8_t (*tags)[16]);
};

#define AESKIT_CBC_X_MAX 32

void aeskit_secure_zero(void *p, size_t len);   /* common.c */

#endif
