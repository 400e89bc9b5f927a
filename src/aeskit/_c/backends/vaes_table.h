/*
 * vaes_table.h: a vaes width's backend table, written once and included
 * last by vaes_avx2.c and vaes_avx512.c, after vaes_body.h and vaes_gcm.h,
 * with
 *   VAES_NAME       the table's name
 *   VAES_CPU_NEEDS  the AESKIT_CPU_* bits it needs
 * defined.
 *
 * The parallel modes, GHASH (its own key layout), XTS with its sectors
 * pass and the fused OCB kernel are this width's. The serial slots and
 * CBC-MAC are aesni's, valid on this key because set_key is aesni's
 * expansion, and so are two fused kernels that one vector cannot speed up:
 * CTR with CBC-MAC (the chain is one block wide), a short GCM-SIV
 * message (8 blocks at most, latency-bound) and XAES-256-GCM's message key
 * and short message (one chain). GCM and GCM-SIV's opening are
 * vaes_gcm.h's fused kernel.
 */
static const struct aeskit_gcm_impl VAES_FN(gcm_impl) = {
    .crypt = VAES_FN(gcm),
    .whole_key_blocks = VAES_GCM_WHOLE_KEY,
};

static const struct aeskit_gcmsiv_impl VAES_FN(gcmsiv_impl) = {
    .open = VAES_FN(gcmsiv_open),
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
    .set_enc_key = VAES_FN(set_enc_key),
    .gcm = &VAES_FN(gcm_impl),
    .gcmsiv = &VAES_FN(gcmsiv_impl),
    .ocb = &VAES_FN(ocb_impl),
    .ccm = &aeskit_aesni_ccm,
    .xaes = &aeskit_aesni_xaes,
    .constants = (const aeskit_constant[]){
        {"gcmsiv_short_blocks", AESKIT_AESNI_SIV_SHORT},
        {"xaes_short_blocks", AESKIT_AESNI_XAES_SHORT},
        {"batch_blocks", VAES_W},
        {"few_blocks", VAES_FEW},
        {"ghash_short_blocks", VAES_GSHORT},
        {"ghash_key_powers", VAES_GP},
        {"xts_window_blocks", VAES_XTS_K},
        {"gcm_fused_min_blocks", VAES_GCM_MIN},
        {"xaes_whole_key_blocks", VAES_GCM_WHOLE_KEY},
        {NULL, 0},
    },
    .cbc_x = VAES_FN(cbc_x),
    .cbc_x_chains = VAES_W,
    .cbc_x_lines = VAES_CBC_LINES,
    /* ctr hands up to VAES_FEW blocks to aesni's: a batch's short messages
     * of that many go into aeskit_ctr_many's ECB pass instead */
    .ctr_many_long = VAES_FEW + 1,
    .gcm_short = VAES_FN(gcm_short),
};
