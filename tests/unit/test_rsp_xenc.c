/* Unit tests for rsp_xenc.c: XML Encryption's algorithms as the SP
 * decrypts them, against OpenSSL directly: the data algorithms by URI,
 * an EncryptedKey's EncryptionMethod read (each refusal with its check=
 * and reason), RSA-OAEP unwrapping with the digest, MGF and label it
 * says (and failing with any other), AES-GCM and AES-CBC data with XML
 * Encryption's padding. */
#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "rsp_unit.h"
#include "rsp_xenc.h"

#define MORE "http://www.w3.org/2001/04/xmldsig-more#"

static EVP_PKEY *rsa;

static void setup(void)
{
    rsp_unit_setup();
    if (!rsa) {
        rsa = EVP_RSA_gen(1536);   /* room for OAEP with SHA-512 */
    }
    ck_assert_ptr_nonnull(rsa);
}

/* ------------------------------------------------------------------ */

START_TEST(test_data_alg)
{
    static const struct {
        const char *uri;
        int gcm, bytes;
        const char *name;
    } ok[] = {
        {RSP_ALG_AES128_GCM, 1, 16, "aes128-gcm"}, {RSP_ALG_AES192_GCM, 1, 24, "aes192-gcm"},
        {RSP_ALG_AES256_GCM, 1, 32, "aes256-gcm"}, {RSP_ALG_AES128_CBC, 0, 16, "aes128-cbc"},
        {RSP_ALG_AES192_CBC, 0, 24, "aes192-cbc"}, {RSP_ALG_AES256_CBC, 0, 32, "aes256-cbc"},
    };
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        const rsp_xenc_data_t *a = rsp_xenc_data_alg(ok[i].uri);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(a->gcm, ok[i].gcm);
        ck_assert_int_eq(a->key_bytes, ok[i].bytes);
        ck_assert_str_eq(a->name, ok[i].name);
    }
    ck_assert_ptr_null(rsp_xenc_data_alg(NULL));
    ck_assert_ptr_null(rsp_xenc_data_alg(RSP_XENC_NS "tripledes-cbc"));
    ck_assert_ptr_null(rsp_xenc_data_alg(RSP_XENC_NS "aes128-gcm"));  /* 1.1's, not 1.0's */
    ck_assert_ptr_null(rsp_xenc_data_alg(RSP_ALG_RSA_OAEP));
}
END_TEST

/* ------------------------------------------------------------------ */
/* The EncryptionMethod                                                */

/* rsp_xenc_key_method on <xenc:EncryptionMethod Algorithm=alg>inner</...>;
 * NULL when accepted (then *out), else why with *check. */
static const char *method(rsp_xenc_oaep_t *out, const char *alg, const char *inner,
                          const char **check)
{
    const char *text = apr_psprintf(
        pool, "<xenc:EncryptionMethod xmlns:xenc='" RSP_XENC_NS "' xmlns:xenc11='"
        RSP_XENC11_NS "' xmlns:ds='" RSP_DS_NS "' xmlns:o='urn:other'%s%s%s>%s"
        "</xenc:EncryptionMethod>", alg ? " Algorithm='" : "", alg ? alg : "",
        alg ? "'" : "", inner);
    xmlDocPtr doc = xmlReadMemory(text, (int)strlen(text), "m.xml", NULL, XML_PARSE_NONET);
    const char *why;

    ck_assert_ptr_nonnull(doc);
    *check = NULL;
    why = rsp_xenc_key_method(out, pool, xmlDocGetRootElement(doc), check);
    xmlFreeDoc(doc);
    return why;
}

static void accepted(const char *alg, const char *inner, const EVP_MD *md,
                     const EVP_MD *mgf, const char *label, const char *desc)
{
    rsp_xenc_oaep_t o;
    const char *check, *why = method(&o, alg, inner, &check);

    ck_assert_msg(why == NULL, "%s: %s", inner, why);
    ck_assert_int_eq(EVP_MD_get_type(o.md), EVP_MD_get_type(md));
    ck_assert_int_eq(EVP_MD_get_type(o.mgf1_md), EVP_MD_get_type(mgf));
    if (label) {
        ck_assert_uint_eq(o.label_len, strlen(label));
        ck_assert(!memcmp(o.label, label, o.label_len));
    }
    else {
        ck_assert_ptr_null(o.label);
        ck_assert_uint_eq(o.label_len, 0);
    }
    ck_assert_str_eq(o.desc, desc);
}

static void refused(const char *alg, const char *inner, const char *check,
                    const char *says)
{
    rsp_xenc_oaep_t o;
    const char *c, *why = method(&o, alg, inner, &c);

    ck_assert_msg(why != NULL, "%s %s: accepted", alg, inner);
    ck_assert_msg(c && !strcmp(c, check), "%s %s: check=%s, not %s", alg, inner,
                  c ? c : "(null)", check);
    ck_assert_msg(strstr(why, says) != NULL, "\"%s\" does not say \"%s\"", why, says);
}

START_TEST(test_key_method_accepted)
{
    accepted(RSP_ALG_RSA_OAEP_MGF1P, "", EVP_sha1(), EVP_sha1(), NULL,
             "rsa-oaep-mgf1p (sha1, mgf1sha1)");
    accepted(RSP_ALG_RSA_OAEP_MGF1P, "<ds:DigestMethod Algorithm='" RSP_XENC_NS "sha256'/>"
             "<xenc:KeySize>2048</xenc:KeySize><o:ignored/>",
             EVP_sha256(), EVP_sha1(), NULL, "rsa-oaep-mgf1p (sha256, mgf1sha1)");
    accepted(RSP_ALG_RSA_OAEP, "<ds:DigestMethod Algorithm='" MORE "sha384'/>"
             "<xenc11:MGF Algorithm='" RSP_XENC11_NS "mgf1sha512'/>"
             "<xenc:OAEPparams>bGFiZWw=</xenc:OAEPparams>",
             EVP_sha384(), EVP_sha512(), "label", "rsa-oaep (sha384, mgf1sha512, a label)");
    accepted(RSP_ALG_RSA_OAEP, "<ds:DigestMethod Algorithm='" MORE "sha224'/>"
             "<xenc:OAEPparams></xenc:OAEPparams>",
             EVP_sha224(), EVP_sha1(), NULL, "rsa-oaep (sha224, mgf1sha1)");
}
END_TEST

START_TEST(test_key_method_refused)
{
    char *long_label = apr_palloc(pool, 2000);

    memset(long_label, 'A', 1999);
    long_label[1999] = '\0';   /* 1499 bytes once decoded... */
    long_label[1368] = '\0';   /* ...1026 here */
    refused(RSP_ALG_RSA_1_5, "", "encryption-algorithm", "rsa-1_5 refused");
    refused(NULL, "", "encryption-algorithm", "key transport (none) refused");
    refused(RSP_XENC_NS "kw-aes128", "", "encryption-algorithm", "RSA-OAEP only");
    refused(RSP_ALG_RSA_OAEP, "<ds:DigestMethod Algorithm='" RSP_XENC_NS "ripemd160'/>",
            "encryption-algorithm", "digest " RSP_XENC_NS "ripemd160 refused");
    refused(RSP_ALG_RSA_OAEP, "<ds:DigestMethod/>", "encryption-algorithm",
            "digest (none) refused");
    refused(RSP_ALG_RSA_OAEP, "<xenc11:MGF Algorithm='urn:mgf2'/>", "encryption-algorithm",
            "MGF urn:mgf2 refused");
    refused(RSP_ALG_RSA_OAEP_MGF1P, "<xenc11:MGF Algorithm='" RSP_XENC11_NS "mgf1sha256'/>",
            "encryption-algorithm", "rsa-oaep-mgf1p with MGF mgf1sha256 refused");
    refused(RSP_ALG_RSA_OAEP, "<ds:Transforms/>", "encryption-algorithm",
            "a parameter not understood (Transforms)");
    refused(RSP_ALG_RSA_OAEP, "<xenc:CipherData/>", "encryption-algorithm",
            "a parameter not understood (CipherData)");
    refused(RSP_ALG_RSA_OAEP, "<ds:DigestMethod Algorithm='" RSP_XENC_NS "sha256'/>"
            "<ds:DigestMethod Algorithm='" RSP_XENC_NS "sha256'/>", "encryption",
            "two DigestMethod");
    refused(RSP_ALG_RSA_OAEP, "<xenc:OAEPparams>a</xenc:OAEPparams>"
            "<xenc:OAEPparams>a</xenc:OAEPparams>", "encryption", "two OAEPparams");
    refused(RSP_ALG_RSA_OAEP, "<xenc:OAEPparams>!!!</xenc:OAEPparams>", "encryption",
            "OAEPparams not base64");
    refused(RSP_ALG_RSA_OAEP, apr_psprintf(pool, "<xenc:OAEPparams>%s</xenc:OAEPparams>",
                                           long_label), "encryption", "OAEPparams too long");
}
END_TEST

/* ------------------------------------------------------------------ */
/* RSA-OAEP                                                            */

/* 32 bytes wrapped for rsa with md, mgf and label (NULL: none). */
static unsigned char *wrap(const unsigned char *key32, const EVP_MD *md, const EVP_MD *mgf,
                           const char *label, size_t *len)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(rsa, NULL);
    unsigned char *out = apr_palloc(pool, 512);

    *len = 512;
    ck_assert(ctx && EVP_PKEY_encrypt_init(ctx) > 0);
    ck_assert(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0);
    ck_assert(EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) > 0);
    ck_assert(EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, mgf) > 0);
    if (label) {
        ck_assert(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, OPENSSL_strdup(label),
                                                   (int)strlen(label)) > 0);
    }
    ck_assert(EVP_PKEY_encrypt(ctx, out, len, key32, 32) > 0);
    EVP_PKEY_CTX_free(ctx);
    return out;
}

START_TEST(test_unwrap)
{
    unsigned char key[32], out[512];
    rsp_xenc_oaep_t o = { EVP_sha256(), EVP_sha512(), (const unsigned char *)"lbl", 3, "t" };
    rsp_xenc_oaep_t other;
    apr_size_t n = 0;
    size_t len;
    unsigned char *w;

    ck_assert_int_eq(RAND_bytes(key, sizeof(key)), 1);
    w = wrap(key, EVP_sha256(), EVP_sha512(), "lbl", &len);
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &o, w, len), 1);
    ck_assert_uint_eq(n, 32);
    ck_assert(!memcmp(out, key, 32));
    /* any other parameter: nothing */
    other = o;
    other.md = EVP_sha1();
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &other, w, len), 0);
    ck_assert_uint_eq(n, 0);
    other = o;
    other.mgf1_md = EVP_sha256();
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &other, w, len), 0);
    other = o;
    other.label = NULL;
    other.label_len = 0;
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &other, w, len), 0);
    other = o;
    other.label = (const unsigned char *)"lbm";
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &other, w, len), 0);
    /* tampered, cut short, or no room for the result */
    w[len / 2] ^= 1;
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &o, w, len), 0);
    w[len / 2] ^= 1;
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &o, w, len - 1), 0);
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, 16, rsa, &o, w, len), 0);
    /* without a label on either side */
    w = wrap(key, EVP_sha1(), EVP_sha1(), NULL, &len);
    other.md = other.mgf1_md = EVP_sha1();
    other.label = NULL;
    other.label_len = 0;
    ck_assert_int_eq(rsp_xenc_unwrap(out, &n, sizeof(out), rsa, &other, w, len), 1);
    ck_assert(!memcmp(out, key, 32));
}
END_TEST

/* ------------------------------------------------------------------ */
/* AES                                                                 */

/* text encrypted with alg and key: IV, ciphertext (CBC: XML Encryption's
 * padding, pad bytes; the last byte last_pad when not 0), GCM tag. */
static unsigned char *encrypt(const rsp_xenc_data_t *alg, const unsigned char *key,
                              const char *text, int last_pad, apr_size_t *len)
{
    const EVP_CIPHER *c = alg->gcm ? (alg->key_bytes == 16 ? EVP_aes_128_gcm()
                                      : alg->key_bytes == 24 ? EVP_aes_192_gcm()
                                      : EVP_aes_256_gcm())
                                   : (alg->key_bytes == 16 ? EVP_aes_128_cbc()
                                      : alg->key_bytes == 24 ? EVP_aes_192_cbc()
                                      : EVP_aes_256_cbc());
    apr_size_t iv = alg->gcm ? 12 : 16, n = strlen(text), pad = alg->gcm ? 0 : 16 - n % 16;
    unsigned char *in = apr_palloc(pool, n + 16), *out = apr_palloc(pool, iv + n + 48);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int k = 0, f = 0;

    memcpy(in, text, n);
    if (!alg->gcm) {
        memset(in + n, 0x55, pad);              /* whatever the sender put */
        in[n + pad - 1] = (unsigned char)(last_pad ? last_pad : (int)pad);
        n += pad;
    }
    ck_assert_int_eq(RAND_bytes(out, (int)iv), 1);
    ck_assert(EVP_EncryptInit_ex(ctx, c, NULL, NULL, NULL) == 1);
    if (alg->gcm) {
        ck_assert(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1);
    }
    ck_assert(EVP_EncryptInit_ex(ctx, NULL, NULL, key, out) == 1);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    ck_assert(EVP_EncryptUpdate(ctx, out + iv, &k, in, (int)n) == 1);
    ck_assert(EVP_EncryptFinal_ex(ctx, out + iv + k, &f) == 1);
    *len = iv + (apr_size_t)(k + f);
    if (alg->gcm) {
        ck_assert(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + *len) == 1);
        *len += 16;
    }
    EVP_CIPHER_CTX_free(ctx);
    return out;
}

START_TEST(test_decrypt_data)
{
    static const char *const uris[] = {
        RSP_ALG_AES128_GCM, RSP_ALG_AES192_GCM, RSP_ALG_AES256_GCM,
        RSP_ALG_AES128_CBC, RSP_ALG_AES192_CBC, RSP_ALG_AES256_CBC,
    };
    const char *text = "<saml:Assertion>sixteen bytes+</saml:Assertion>";
    unsigned char key[32];
    size_t i;

    ck_assert_int_eq(RAND_bytes(key, sizeof(key)), 1);
    for (i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
        const rsp_xenc_data_t *alg = rsp_xenc_data_alg(uris[i]);
        apr_size_t len, n;
        unsigned char *c = encrypt(alg, key, text, 0, &len);
        char *out;

        ck_assert_msg(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len) == 1, "%s",
                      alg->name);
        ck_assert_str_eq(out, text);
        ck_assert_uint_eq(n, strlen(text));
        /* a bit changed in the last block: GCM hands nothing out */
        c[len - 1] ^= 1;
        if (alg->gcm) {
            ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len), 0);
            ck_assert_ptr_null(out);
            ck_assert_uint_eq(n, 0);
        }
        c[len - 1] ^= 1;
        /* too short */
        ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c,
                                               alg->gcm ? 27 : 31), 0);
        ck_assert_ptr_null(out);
        if (!alg->gcm) {
            /* not whole blocks */
            ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len - 1), 0);
        }
    }
}
END_TEST

START_TEST(test_cbc_padding)
{
    const rsp_xenc_data_t *alg = rsp_xenc_data_alg(RSP_ALG_AES128_CBC);
    const char *text = "0123456789";         /* 6 bytes of padding */
    unsigned char key[16];
    apr_size_t len, n;
    unsigned char *c;
    char *out;

    ck_assert_int_eq(RAND_bytes(key, sizeof(key)), 1);
    /* the last byte counts the padding, 1 to 16: 0 and 17 are refused,
     * the whole decrypted text handed out all the same */
    c = encrypt(alg, key, text, 17, &len);
    ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len), 0);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(n, 16);
    c = encrypt(alg, key, text, 0x100, &len);   /* the byte 0 */
    ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len), 0);
    /* a full block of padding */
    c = encrypt(alg, key, "0123456789abcdef", 0, &len);
    ck_assert_uint_eq(len, 48);
    ck_assert_int_eq(rsp_xenc_decrypt_data(&out, &n, pool, alg, key, c, len), 1);
    ck_assert_str_eq(out, "0123456789abcdef");
}
END_TEST

static void free_rsa(void)
{
    EVP_PKEY_free(rsa);
    rsa = NULL;
}

static Suite *xenc_suite(void)
{
    Suite *s = suite_create("rsp_xenc");
    TCase *tc = tcase_create("xenc");

    tcase_add_checked_fixture(tc, setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_data_alg);
    tcase_add_test(tc, test_key_method_accepted);
    tcase_add_test(tc, test_key_method_refused);
    tcase_add_test(tc, test_unwrap);
    tcase_add_test(tc, test_decrypt_data);
    tcase_add_test(tc, test_cbc_padding);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int rc = rsp_unit_run(xenc_suite());

    free_rsa();
    return rc;
}
