/*
 * simd_serial.h: the serial-chain modes (CBC and CFB encryption, OFB,
 * CBC-MAC) on simd_body.h's primitives, one block through the whole cipher
 * after another. Included after simd_body.h by armv8_ce.c and power8.c;
 * aesni.c has its own, which fold the data XOR into the last round key
 * (x86's AESENCLAST makes that fold free).
 */

enum simd_serial { SIMD_CBC_ENC, SIMD_CFB_ENC, SIMD_OFB, SIMD_CBC_MAC };

/* The chain x from iv through n blocks, mode a constant at each call: CBC
 * encrypts x ^ P, CFB and OFB encrypt x (CFB's next x is the output's
 * ciphertext, OFB's the keystream block), CBC-MAC is CBC that stores only
 * the last x, into iv. */
SIMD_INLINE void simd_serial(const aeskit_key *k, enum simd_serial mode, uint8_t iv[16],
                             uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        const SIMD_V p = SIMD_LOAD(src + AESKIT_BLOCK * i);
        if (mode == SIMD_CBC_ENC || mode == SIMD_CBC_MAC)
            x = simd_enc1(&ks, SIMD_XOR(x, p));
        else if (mode == SIMD_CFB_ENC)
            x = SIMD_XOR(simd_enc1(&ks, x), p);
        else
            x = simd_enc1(&ks, x);
        if (mode != SIMD_CBC_MAC)
            SIMD_STORE(dst + AESKIT_BLOCK * i, mode == SIMD_OFB ? SIMD_XOR(x, p) : x);
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(cbc_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    simd_serial(k, SIMD_CBC_ENC, iv, dst, src, n);
}

SIMD_FN void SIMD_NAME(cfb_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    simd_serial(k, SIMD_CFB_ENC, iv, dst, src, n);
}

SIMD_FN void SIMD_NAME(ofb)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                            size_t n)
{
    simd_serial(k, SIMD_OFB, iv, dst, src, n);
}

SIMD_FN void SIMD_NAME(cbc_mac)(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    simd_serial(k, SIMD_CBC_MAC, mac, NULL, src, n);
}
