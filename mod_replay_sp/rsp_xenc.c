/* XML Encryption's key transport and data decryption with OpenSSL
 * (rsp_xenc.h). */
#include <string.h>

#include <apr_strings.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

#include "rsp_util.h"
#include "rsp_xml.h"
#include "rsp_xenc.h"

static const rsp_xenc_data_t data_algs[] = {
    {1, 16, "aes128-gcm"}, {1, 24, "aes192-gcm"}, {1, 32, "aes256-gcm"},
    {0, 16, "aes128-cbc"}, {0, 24, "aes192-cbc"}, {0, 32, "aes256-cbc"},
};
static const char *const data_uris[] = {
    RSP_ALG_AES128_GCM, RSP_ALG_AES192_GCM, RSP_ALG_AES256_GCM,
    RSP_ALG_AES128_CBC, RSP_ALG_AES192_CBC, RSP_ALG_AES256_CBC,
};

const rsp_xenc_data_t *rsp_xenc_data_alg(const char *uri)
{
    apr_size_t i;

    for (i = 0; uri && i < sizeof(data_uris) / sizeof(data_uris[0]); i++) {
        if (!strcmp(uri, data_uris[i])) {
            return &data_algs[i];
        }
    }
    return NULL;
}

/* Digests: ds:DigestMethod's URIs (XML Encryption 1.1 section 5.2, RFC
 * 6931 for SHA-224 and SHA-384), and xenc11:MGF's (section 5.5.2). */
typedef struct {
    const char *uri;
    const char *name;
    const EVP_MD *(*md)(void);
} digest_t;

static const digest_t digests[] = {
    {RSP_DS_NS "sha1", "sha1", EVP_sha1},
    {"http://www.w3.org/2001/04/xmldsig-more#sha224", "sha224", EVP_sha224},
    {RSP_XENC_NS "sha256", "sha256", EVP_sha256},
    {"http://www.w3.org/2001/04/xmldsig-more#sha384", "sha384", EVP_sha384},
    {RSP_XENC_NS "sha512", "sha512", EVP_sha512},
};
static const digest_t mgfs[] = {
    {RSP_XENC11_NS "mgf1sha1", "mgf1sha1", EVP_sha1},
    {RSP_XENC11_NS "mgf1sha224", "mgf1sha224", EVP_sha224},
    {RSP_XENC11_NS "mgf1sha256", "mgf1sha256", EVP_sha256},
    {RSP_XENC11_NS "mgf1sha384", "mgf1sha384", EVP_sha384},
    {RSP_XENC11_NS "mgf1sha512", "mgf1sha512", EVP_sha512},
};
#define N_DIGESTS (sizeof(digests) / sizeof(digests[0]))

static const digest_t *lookup(const digest_t *table, const char *uri)
{
    apr_size_t i;

    for (i = 0; uri && i < N_DIGESTS; i++) {
        if (!strcmp(uri, table[i].uri)) {
            return &table[i];
        }
    }
    return NULL;
}

/* An attribute's value copied to p, or NULL. */
#define REFUSED(c, ...) (*check = (c), apr_psprintf(p, __VA_ARGS__))

const char *rsp_xenc_key_method(rsp_xenc_oaep_t *out, apr_pool_t *p,
                                xmlNodePtr method, const char **check)
{
    const char *alg = rsp_xml_attr(p, method, "Algorithm"), *uri;
    const digest_t *md = &digests[0], *mgf = &mgfs[0];
    xmlNodePtr n, dm = NULL, mg = NULL, lb = NULL;
    int oaep11;

    memset(out, 0, sizeof(*out));
    if (alg && !strcmp(alg, RSP_ALG_RSA_1_5)) {
        return REFUSED("encryption-algorithm", "key transport rsa-1_5 "
                       "refused (RSA-1.5 padding is a decryption oracle: "
                       "RSA-OAEP only)");
    }
    oaep11 = alg && !strcmp(alg, RSP_ALG_RSA_OAEP);
    if (!oaep11 && (!alg || strcmp(alg, RSP_ALG_RSA_OAEP_MGF1P) != 0)) {
        return REFUSED("encryption-algorithm", "key transport %s refused "
                       "(RSA-OAEP only: xmlenc#rsa-oaep-mgf1p or "
                       "xmlenc11#rsa-oaep)", alg ? alg : "(none)");
    }
    for (n = method->children; n; n = n->next) {
        xmlNodePtr *slot = rsp_xml_is(n, RSP_DS_NS, "DigestMethod") ? &dm
            : rsp_xml_is(n, RSP_XENC11_NS, "MGF") ? &mg
            : rsp_xml_is(n, RSP_XENC_NS, "OAEPparams") ? &lb : NULL;

        if (!slot) {
            /* KeySize means nothing to RSA; any other element of these
             * namespaces is a parameter not understood. */
            if ((rsp_xml_is(n, RSP_XENC_NS, NULL) && !rsp_xml_is(n, RSP_XENC_NS, "KeySize"))
                || rsp_xml_is(n, RSP_XENC11_NS, NULL) || rsp_xml_is(n, RSP_DS_NS, NULL)) {
                return REFUSED("encryption-algorithm", "key transport %s "
                               "with a parameter not understood (%s)",
                               oaep11 ? "rsa-oaep" : "rsa-oaep-mgf1p",
                               (const char *)n->name);
            }
            continue;
        }
        if (*slot) {
            return REFUSED("encryption", "key transport with two %s",
                           (const char *)n->name);
        }
        *slot = n;
    }
    if (dm && !(md = lookup(digests, uri = rsp_xml_attr(p, dm, "Algorithm")))) {
        return REFUSED("encryption-algorithm", "key transport digest %s "
                       "refused (SHA-1, SHA-224, SHA-256, SHA-384 or "
                       "SHA-512)", uri ? uri : "(none)");
    }
    if (mg && !(mgf = lookup(mgfs, uri = rsp_xml_attr(p, mg, "Algorithm")))) {
        return REFUSED("encryption-algorithm", "key transport MGF %s refused "
                       "(MGF1 with SHA-1, SHA-224, SHA-256, SHA-384 or "
                       "SHA-512)", uri ? uri : "(none)");
    }
    /* rsa-oaep-mgf1p is MGF1 with SHA-1 by its name. */
    if (!oaep11 && mgf != &mgfs[0]) {
        return REFUSED("encryption-algorithm", "key transport rsa-oaep-mgf1p "
                       "with MGF %s refused (its MGF is MGF1 with SHA-1)",
                       mgf->name);
    }
    if (lb) {
        xmlChar *t = xmlNodeGetContent(lb);
        char *label = NULL;
        apr_size_t len = 0;
        int bad = t && *t && rsp_b64_decode(p, (const char *)t, 1, &label,
                                            &len) < 0;

        xmlFree(t);
        if (bad || len > RSP_XENC_LABEL_MAX) {
            return REFUSED("encryption", "key transport OAEPparams %s",
                           bad ? "not base64" : "too long");
        }
        out->label = len ? (const unsigned char *)label : NULL;
        out->label_len = len;
    }
    out->md = md->md();
    out->mgf1_md = mgf->md();
    out->desc = apr_psprintf(p, "%s (%s, %s%s)",
                             oaep11 ? "rsa-oaep" : "rsa-oaep-mgf1p", md->name,
                             mgf->name, out->label ? ", a label" : "");
    return NULL;
}

int rsp_xenc_unwrap(unsigned char *out, apr_size_t *outlen,
                    apr_size_t outsize, EVP_PKEY *key,
                    const rsp_xenc_oaep_t *oaep, const unsigned char *in,
                    apr_size_t inlen)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    unsigned char *label = NULL;
    size_t n = outsize;
    int ok;

    ok = ctx && EVP_PKEY_decrypt_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0
        && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, oaep->md) > 0
        && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, oaep->mgf1_md) > 0;
    if (ok && oaep->label) {
        /* the context takes it (and frees it) */
        label = OPENSSL_memdup(oaep->label, oaep->label_len);
        ok = label && EVP_PKEY_CTX_set0_rsa_oaep_label(
                          ctx, label, (int)oaep->label_len) > 0;
        if (!ok) {
            OPENSSL_free(label);
        }
    }
    ok = ok && EVP_PKEY_decrypt(ctx, out, &n, in, inlen) > 0;
    *outlen = ok ? n : 0;
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error(); /* a failure's reason stays here */
    return ok;
}

static const EVP_CIPHER *cipher(const rsp_xenc_data_t *alg)
{
    switch (alg->key_bytes) {
    case 16:
        return alg->gcm ? EVP_aes_128_gcm() : EVP_aes_128_cbc();
    case 24:
        return alg->gcm ? EVP_aes_192_gcm() : EVP_aes_192_cbc();
    case 32:
        return alg->gcm ? EVP_aes_256_gcm() : EVP_aes_256_cbc();
    }
    return NULL;
}

#define GCM_IV 12
#define GCM_TAG 16
#define BLOCK 16

int rsp_xenc_decrypt_data(char **out, apr_size_t *outlen, apr_pool_t *p,
                          const rsp_xenc_data_t *alg, const unsigned char *key,
                          const unsigned char *in, apr_size_t inlen)
{
    EVP_CIPHER_CTX *ctx;
    const EVP_CIPHER *c = cipher(alg);
    unsigned char *buf;
    apr_size_t iv = alg->gcm ? GCM_IV : BLOCK, n;
    int len = 0, fin = 0, ok;
    unsigned int pad, bad;

    *out = NULL;
    *outlen = 0;
    /* GCM: IV, tag; CBC: IV and at least one whole block */
    if (!c || inlen > (apr_size_t)0x7fffffff
        || (alg->gcm ? inlen < GCM_IV + GCM_TAG
                     : inlen < 2 * BLOCK || inlen % BLOCK)) {
        return 0;
    }
    n = inlen - iv - (alg->gcm ? GCM_TAG : 0);
    buf = apr_palloc(p, n + BLOCK + 1);
    if (!(ctx = EVP_CIPHER_CTX_new())) {
        return 0;
    }
    ok = EVP_DecryptInit_ex(ctx, c, NULL, NULL, NULL) == 1
        && (!alg->gcm || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN,
                                             GCM_IV, NULL) == 1)
        && EVP_DecryptInit_ex(ctx, NULL, NULL, key, in) == 1
        && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1
        && EVP_DecryptUpdate(ctx, buf, &len, in + iv, (int)n) == 1
        && (!alg->gcm || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG,
                                             GCM_TAG,
                                             (void *)(in + iv + n)) == 1);
    /* GCM: the tag is checked here; nothing of buf leaves unless it is */
    ok = ok && EVP_DecryptFinal_ex(ctx, buf + len, &fin) == 1;
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
    if (!ok || (apr_size_t)(len + fin) != n) {
        OPENSSL_cleanse(buf, n);
        return 0;
    }
    if (alg->gcm) {
        buf[n] = '\0';
        *out = (char *)buf;
        *outlen = n;
        return 1;
    }
    /* CBC: the last byte counts the padding (1 to 16), the others are
     * whatever the sender put there (XML Encryption 1.0, 5.2). Decided
     * without a branch on it; the caller reads the text either way. */
    pad = buf[n - 1];
    bad = ((pad - 1u) >> 31) | ((BLOCK - pad) >> 31);
    n -= pad & (0u - (1u - bad));
    buf[n] = '\0';
    *out = (char *)buf;
    *outlen = n;
    return !bad;
}
