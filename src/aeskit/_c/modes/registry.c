/*
 * registry.c: the modes the Python types are made from, one entry each,
 * in the order the module adds them; py/ reads only these lists.
 *
 * A new AEAD is: its file in modes/ with its descriptor (modes/aead.h; its
 * header if other files call it), its entry here, its line in meson.build,
 * and its class in the stubs (__init__.pyi, which test_api_surface.py
 * checks against the registry), plus its tests (its references in
 * tests/aead_helpers.py, its known answers marked known_answer) and docs.
 * A new block-cipher mode is its file in modes/ alone, which holds its
 * stream state and its struct aeskit_cipher (modes/block.h: a mode that
 * works as ECB/CBC or CFB/OFB/CTR do fills their shared head and takes
 * their entry points), then the same entries. Python reads every mode's
 * facts from _aeskit.MODES (py/facts.c, aeskit/_modes.py): the package's
 * exports, the benchmark's rows and floors (the descriptor's facts,
 * modes/facts.h) and the tests' specs follow. Neither touches py/ or a
 * shared file in modes/, unless it brings a call shape no mode had before
 * (XTS's encrypt_sectors, ECB/CBC padding): the glue then learns it from a
 * new descriptor field, for every mode, and never asks which mode it
 * serves. A new mandatory slot is a field of struct aeskit_impl
 * (aeskit.h), a generic fallback in modes/generic.c that every table
 * points at until it has its own kernel, and its test entry point in
 * py/slots.c; an optional fused slot is NULL in every table until its
 * first kernel, which brings its test entry point. Key wrap (KW, KWP) is
 * its own kind of object (wrap/unwrap): a struct aeskit_keywrap
 * (modes/kw.h) in aeskit_keywraps, served by py/kw.c. So is a MAC (CMAC:
 * mac/verify and an hmac-like context): a struct aeskit_mac (modes/mac.h)
 * in aeskit_macs, served by py/mac.c.
 */
#include "aead.h"
#include "block.h"
#include "kw.h"
#include "mac.h"

extern const struct aeskit_cipher aeskit_ecb_cipher, aeskit_cbc_cipher, aeskit_cfb_cipher,
    aeskit_cfb8_cipher, aeskit_ofb_cipher, aeskit_ctr_cipher, aeskit_xts_cipher;
extern const struct aeskit_aead aeskit_gcm_aead, aeskit_ocb3_aead, aeskit_gcmsiv_aead,
    aeskit_ccm_aead, aeskit_eax_aead, aeskit_siv_aead, aeskit_xaes_aead;
extern const struct aeskit_mac aeskit_cmac_mac;

const struct aeskit_cipher *const aeskit_ciphers[] = {
    &aeskit_ecb_cipher, &aeskit_cbc_cipher, &aeskit_cfb_cipher,
    &aeskit_cfb8_cipher, &aeskit_ofb_cipher, &aeskit_ctr_cipher,
    &aeskit_xts_cipher,
    NULL,
};

const struct aeskit_aead *const aeskit_aeads[] = {
    &aeskit_gcm_aead,
    &aeskit_ocb3_aead,
    &aeskit_gcmsiv_aead,
    &aeskit_ccm_aead,
    &aeskit_eax_aead,
    &aeskit_siv_aead,
    &aeskit_xaes_aead,
    NULL,
};

const struct aeskit_keywrap *const aeskit_keywraps[] = {
    &aeskit_kw_keywrap,
    &aeskit_kwp_keywrap,
    NULL,
};

const struct aeskit_mac *const aeskit_macs[] = {
    &aeskit_cmac_mac,
    NULL,
};
