/*
 * vaes_table.h: a vaes width's backend table, written once and included
 * last by vaes_avx2.c and vaes_avx512.c, after vaes_body.h (and
 * vaes_gcm.h, which defines VAES_HAVE_GCM), with
 *   VAES_NAME       the table's name
 *   VAES_CPU_NEEDS  the AESKIT_CPU_* bits it needs
 * defined.
 *
 * The parallel modes, GHASH (its own key layout), XTS with its sectors
 * pass and the fused OCB kernel are this width's. The serial slots and
 * CBC-MAC are aesni's, valid on this key because set_key is aesni's
 * expansion, and so are two fused kernels that one vector cannot speed up:
 * CTR with CBC-MAC (the chain is one block wide) and a short GCM-SIV
 * message (8 blocks at most, latency-bound). Without vaes_gcm.h the gcm
 * sub-table is empty: modes/gcm.c runs this table's CTR and GHASH.
 */
#if defined(VAES_HAVE_GCM)
static const struct aeskit_gcm_impl VAES_FN(gcm_impl) = {.crypt = VAES_FN(gcm)};
#endif

static const struct aeskit_gcmsiv_impl VAES_FN(gcmsiv_impl) = {
#if defined(VAES_HAVE_GCM)
    .open = VAES_FN(gcmsiv_open),
#endif
    .short_msg = aeskit_aesni_gcmsiv_short,
};

static const struct aeskit_ocb_impl VAES_FN(ocb_impl) = {.crypt = VAES_FN(ocb)};

const struct aeskit_impl VAES_IMPL = {
    .name = VAES_NAME,
    .cpu_needs = VAES_CPU_NEEDS,
    .set_key = VAES_FN(set_key),
    .ecb_enc = VAES_FN(ecb_enc),
    .ecb_dec = VAES_FN(ecb_dec),
    .cbc_enc = aeskit_aesni_cbc_enc,
    .cbc_dec = VAES_FN(cbc_dec),
    .cfb_enc = aeskit_aesni_cfb_enc,
    .cfb_dec = VAES_FN(cfb_dec),
    .ofb = aeskit_aesni_ofb,
    .ctr = VAES_FN(ctr),
    .cbc_mac = aeskit_aesni_cbc_mac,
    .xts = VAES_FN(xts),
    .xts_units = VAES_FN(xts_units),
    .ghash_key = VAES_FN(ghash_key),
    .ghash = VAES_FN(ghash),
    .polyval = VAES_FN(polyval),
#if defined(VAES_HAVE_GCM)
    .gcm = &VAES_FN(gcm_impl),
#endif
    .gcmsiv = &VAES_FN(gcmsiv_impl),
    .ocb = &VAES_FN(ocb_impl),
    .ccm = &aeskit_aesni_ccm,
    .constants = (const aeskit_constant[]){
        {"gcmsiv_short_blocks", AESKIT_AESNI_SIV_SHORT},
        {"batch_blocks", VAES_W},
        {"few_blocks", VAES_FEW},
        {"ghash_short_blocks", VAES_GSHORT},
        {"ghash_key_powers", VAES_GP},
        {"xts_window_blocks", VAES_XTS_K},
#if defined(VAES_HAVE_GCM)
        {"gcm_fused_min_blocks", VAES_GCM_MIN},
#endif
        {NULL, 0},
    },
    .gcm_short = VAES_FN(gcm_short),
};
