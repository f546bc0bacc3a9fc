/* XML Encryption's primitives (rsp_xenc.h) on any bytes, and round trips
 * through them:
 *
 * - rsp_xenc_decrypt_data on the input as a ciphertext (any length: too
 *   short, not whole blocks, a tag or padding that fails);
 * - a plaintext of the input encrypted here with OpenSSL's EVP interface
 *   (AES-GCM, or AES-CBC with XML Encryption's padding, the padding bytes
 *   the input's) decrypts back to itself; changed at a byte or cut short,
 *   GCM refuses it, CBC never yields more than there was;
 * - a session key wrapped here for the fixture SP's public key with the
 *   OAEP digest, MGF and label the input picks unwraps to itself with
 *   rsp_xenc_unwrap; with another label or digest it does not.
 *
 * Input: byte 0 the data algorithm (mod 6), 1 the OAEP digest (mod 5), 2
 * the MGF (mod 5), 3 flags (1: a label, 2: change a byte, 4: cut short,
 * 8: wrap a key), 4 where to change (mod the length), 5 the label's
 * length (mod 64); then 32 bytes of key, 16 of IV, the label, the padding
 * bytes (16), and the plaintext. */
#include <string.h>

#include <apr_strings.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "fuzz_common.h"
#include "rsp_xenc.h"

#ifndef FUZZ_SAML_DIR
#define FUZZ_SAML_DIR "tests/fuzz/saml"
#endif

static const char *const data_uris[] = {
    RSP_ALG_AES128_GCM, RSP_ALG_AES192_GCM, RSP_ALG_AES256_GCM,
    RSP_ALG_AES128_CBC, RSP_ALG_AES192_CBC, RSP_ALG_AES256_CBC,
};
static const EVP_MD *(*const mds[])(void) = {
    EVP_sha1, EVP_sha224, EVP_sha256, EVP_sha384, EVP_sha512,
};

/* Set up once: the fixture SP's key pair. */
static EVP_PKEY *key;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("RSP_FUZZ_SAML_DIR");
    char path[4096];
    FILE *f;

    fuzz_init();
    snprintf(path, sizeof(path), "%s/sp.key", dir ? dir : FUZZ_SAML_DIR);
    if (!(f = fopen(path, "r")) || !(key = PEM_read_PrivateKey(f, NULL, NULL,
                                                                NULL))) {
        fprintf(stderr, "fuzz: cannot read %s\n", path);
        abort();
    }
    fclose(f);
    return 0;
}

static const EVP_CIPHER *cipher(const rsp_xenc_data_t *alg)
{
    switch (alg->key_bytes) {
    case 16:
        return alg->gcm ? EVP_aes_128_gcm() : EVP_aes_128_cbc();
    case 24:
        return alg->gcm ? EVP_aes_192_gcm() : EVP_aes_192_cbc();
    default:
        return alg->gcm ? EVP_aes_256_gcm() : EVP_aes_256_cbc();
    }
}

/* plain (n bytes) encrypted as XML Encryption writes it: IV first; GCM's
 * tag last; CBC padded with pad's bytes and the count last. */
static unsigned char *encrypt(apr_pool_t *p, const rsp_xenc_data_t *alg,
                              const unsigned char *k, const unsigned char *iv,
                              const unsigned char *pad, const uint8_t *plain,
                              size_t n, size_t *outlen)
{
    size_t ivlen = alg->gcm ? 12 : 16, padn = alg->gcm ? 0 : 16 - n % 16;
    unsigned char *in = fuzz_malloc(p, n + padn);
    unsigned char *out = fuzz_malloc(p, ivlen + n + padn + 16);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len = 0, fin = 0;

    memcpy(in, plain, n);
    if (padn) {
        memcpy(in + n, pad, padn - 1);
        in[n + padn - 1] = (unsigned char)padn;
    }
    memcpy(out, iv, ivlen);
    FUZZ_ASSERT(ctx);
    FUZZ_ASSERT(EVP_EncryptInit_ex(ctx, cipher(alg), NULL, NULL, NULL) == 1);
    FUZZ_ASSERT(!alg->gcm || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN,
                                                 12, NULL) == 1);
    FUZZ_ASSERT(EVP_EncryptInit_ex(ctx, NULL, NULL, k, iv) == 1);
    FUZZ_ASSERT(EVP_CIPHER_CTX_set_padding(ctx, 0) == 1);
    FUZZ_ASSERT(EVP_EncryptUpdate(ctx, out + ivlen, &len, in,
                                  (int)(n + padn)) == 1);
    FUZZ_ASSERT(EVP_EncryptFinal_ex(ctx, out + ivlen + len, &fin) == 1);
    *outlen = ivlen + (size_t)len + (size_t)fin;
    if (alg->gcm) {
        FUZZ_ASSERT(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16,
                                        out + *outlen) == 1);
        *outlen += 16;
    }
    EVP_CIPHER_CTX_free(ctx);
    return out;
}

/* k (n bytes) wrapped with RSA-OAEP for the fixture's public key. */
static unsigned char *wrap(apr_pool_t *p, const rsp_xenc_oaep_t *oaep,
                           const unsigned char *k, size_t n, size_t *outlen)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    unsigned char *out = fuzz_malloc(p, (size_t)EVP_PKEY_get_size(key));
    unsigned char *label = oaep->label
        ? OPENSSL_memdup(oaep->label, oaep->label_len) : NULL;

    *outlen = (size_t)EVP_PKEY_get_size(key);
    FUZZ_ASSERT(ctx && EVP_PKEY_encrypt_init(ctx) > 0);
    FUZZ_ASSERT(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0);
    FUZZ_ASSERT(EVP_PKEY_CTX_set_rsa_oaep_md(ctx, oaep->md) > 0);
    FUZZ_ASSERT(EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, oaep->mgf1_md) > 0);
    FUZZ_ASSERT(!label || EVP_PKEY_CTX_set0_rsa_oaep_label(
                              ctx, label, (int)oaep->label_len) > 0);
    FUZZ_ASSERT(EVP_PKEY_encrypt(ctx, out, outlen, k, n) > 0);
    EVP_PKEY_CTX_free(ctx);
    return out;
}

#define HEAD 6
#define FIXED (HEAD + 32 + 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    const rsp_xenc_data_t *alg;
    const uint8_t *k, *iv, *label, *pad, *plain;
    size_t labellen, n, ctlen, wlen;
    unsigned char *ct, *w, *raw, out[1024];
    char *text;
    apr_size_t textlen, outlen;
    rsp_xenc_oaep_t oaep;
    int ok;

    if (size < FIXED + 16) {
        return 0;
    }
    p = fuzz_pool_begin();
    alg = rsp_xenc_data_alg(data_uris[data[0] % 6]);
    FUZZ_ASSERT(alg);
    k = data + HEAD;
    iv = k + 32;
    labellen = (size_t)(data[5] % 64);
    label = iv + 16;
    if (FIXED + labellen + 16 > size) {
        labellen = 0;
    }
    pad = label + labellen;
    plain = pad + 16;
    n = (size_t)(data + size - plain);

    /* any bytes as a ciphertext */
    raw = fuzz_malloc(p, size);
    memcpy(raw, data, size);
    ok = rsp_xenc_decrypt_data(&text, &textlen, p, alg, k, raw, size);
    FUZZ_ASSERT(!ok || !text || textlen < size);
    FUZZ_ASSERT(!alg->gcm || !ok || text);

    /* a round trip */
    ct = encrypt(p, alg, k, iv, pad, plain, n, &ctlen);
    ok = rsp_xenc_decrypt_data(&text, &textlen, p, alg, k, ct, ctlen);
    FUZZ_ASSERT(ok && textlen == n && !memcmp(text, plain, n)
                && text[n] == '\0');
    if (data[3] & 2) {
        ct[data[4] % ctlen] ^= 0x01;
        ok = rsp_xenc_decrypt_data(&text, &textlen, p, alg, k, ct, ctlen);
        FUZZ_ASSERT(!alg->gcm ? !ok || textlen < ctlen : !ok && !text);
    }
    if (data[3] & 4) {
        ok = rsp_xenc_decrypt_data(&text, &textlen, p, alg, k, ct,
                                   ctlen - 1 - data[4] % ctlen);
        FUZZ_ASSERT(!alg->gcm ? !ok || textlen < ctlen : !ok && !text);
    }

    /* a key wrapped, unwrapped (an RSA private-key operation: 1 in 2) */
    if (data[3] & 8) {
        memset(&oaep, 0, sizeof(oaep));
        oaep.md = mds[data[1] % 5]();
        oaep.mgf1_md = mds[data[2] % 5]();
        if ((data[3] & 1) && labellen) {
            oaep.label = label;
            oaep.label_len = labellen;
        }
        w = wrap(p, &oaep, k, (size_t)alg->key_bytes, &wlen);
        ok = rsp_xenc_unwrap(out, &outlen, sizeof(out), key, &oaep, w, wlen);
        FUZZ_ASSERT(ok && outlen == (apr_size_t)alg->key_bytes
                    && !memcmp(out, k, outlen));
        /* another label, or none where there was one */
        oaep.label = oaep.label ? NULL : (const unsigned char *)"x";
        oaep.label_len = oaep.label ? 1 : 0;
        FUZZ_ASSERT(!rsp_xenc_unwrap(out, &outlen, sizeof(out), key, &oaep,
                                     w, wlen));
        FUZZ_ASSERT(outlen == 0);
    }
    ERR_clear_error();
    fuzz_pool_end(p);
    return 0;
}
