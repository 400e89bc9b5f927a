/*
 * simd_serial.h: the serial-chain modes (CBC and CFB encryption, OFB,
 * CBC-MAC) on simd_body.h's primitives, one block through the whole cipher
 * after another. Included after simd_body.h by armv8_ce.c and power8.c;
 * aesni.c has its own, which fold the data XOR into the last round key
 * (x86's AESENCLAST makes that fold free).
 */
SIMD_FN void SIMD_NAME(cbc_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = simd_enc1(&ks, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
        SIMD_STORE(dst + AESKIT_BLOCK * i, x);
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(cfb_enc)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst,
                                const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = SIMD_XOR(simd_enc1(&ks, x), SIMD_LOAD(src + AESKIT_BLOCK * i));
        SIMD_STORE(dst + AESKIT_BLOCK * i, x);
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(ofb)(const aeskit_key *k, uint8_t iv[16], uint8_t *dst, const uint8_t *src,
                            size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(iv);
    for (size_t i = 0; i < n; i++) {
        x = simd_enc1(&ks, x);
        SIMD_STORE(dst + AESKIT_BLOCK * i, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
    }
    SIMD_STORE(iv, x);
}

SIMD_FN void SIMD_NAME(cbc_mac)(const aeskit_key *k, uint8_t mac[16], const uint8_t *src, size_t n)
{
    if (n == 0)
        return;
    SIMD_KEYS ks;
    SIMD_LOAD_KEYS(&ks, k, 0);
    SIMD_V x = SIMD_LOAD(mac);
    for (size_t i = 0; i < n; i++)
        x = simd_enc1(&ks, SIMD_XOR(x, SIMD_LOAD(src + AESKIT_BLOCK * i)));
    SIMD_STORE(mac, x);
}
