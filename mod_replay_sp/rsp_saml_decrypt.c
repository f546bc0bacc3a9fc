/* Decrypting an EncryptedAssertion (rsp_saml_decrypt.h): the keys, which
 * EncryptedKey is for which of them, the unwrap and the data, and the
 * Response Lasso then reads. */
#include <ctype.h>
#include <string.h>

#include <apr_base64.h>
#include <apr_strings.h>
#include <libxml/parser.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "rsp_saml_decrypt.h"
#include "rsp_util.h"
#include "rsp_xml.h"

#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"

/* The text of an element, in p, or NULL. */
static const char *text_of(apr_pool_t *p, xmlNodePtr n)
{
    xmlChar *t = n ? xmlNodeGetContent(n) : NULL;
    const char *out = t ? apr_pstrdup(p, (const char *)t) : NULL;

    xmlFree(t);
    return out;
}

/* ---- the keys ---- */

/* A name as compared here: ASCII lowercase, a run of whitespace one
 * space, none next to ',', '+' or '=' (RFC 2253 as OpenSSL and Java
 * write it, and "CN=a, O=b" as .NET does), nor at either end. */
static const char *norm_name(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) + 1), *o = out;
    const char *c, *q;

    for (c = s; *c; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
            /* a run of whitespace: one space, or none (linear) */
            for (q = c; *q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'; q++)
                ;
            if (o != out && *q && !strchr(",+=", *q) && !strchr(",+=", o[-1])) {
                *o++ = ' ';
            }
            c = q - 1;
            continue;
        }
        *o++ = (char)tolower((unsigned char)*c);
    }
    *o = '\0';
    return out;
}

/* Hex digits only, lowercase (a fingerprint as "AB:CD:.." or "abcd.."). */
static const char *norm_hex(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) + 1), *o = out;

    for (; *s; s++) {
        if (isxdigit((unsigned char)*s)) {
            *o++ = (char)tolower((unsigned char)*s);
        }
        else if (*s != ':' && *s != ' ' && *s != '\t' && *s != '\r'
                 && *s != '\n') {
            return "";
        }
    }
    *o = '\0';
    return out;
}

static const char *name_of(apr_pool_t *p, const X509_NAME *name)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data;
    long n;
    const char *out = NULL;

    if (b && X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253) >= 0
        && (n = BIO_get_mem_data(b, &data)) >= 0) {
        out = norm_name(p, apr_pstrmemdup(p, data, (apr_size_t)n));
    }
    BIO_free(b);
    return out;
}

static const char *fingerprint(apr_pool_t *p, X509 *cert, const EVP_MD *md)
{
    unsigned char buf[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    char *out;

    if (X509_digest(cert, md, buf, &n) != 1) {
        return NULL;
    }
    out = apr_palloc(p, 2 * n + 1);
    for (i = 0; i < n; i++) {
        apr_snprintf(out + 2 * i, 3, "%02x", buf[i]);
    }
    out[2 * n] = '\0';
    return out;
}

static void describe(rsp_dec_key_t *k, apr_pool_t *p)
{
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(k->cert), NULL);
    char *dec = bn ? BN_bn2dec(bn) : NULL;
    char cn[256];

    k->serial = dec ? apr_pstrdup(p, dec) : NULL;
    OPENSSL_free(dec);
    BN_free(bn);
    k->issuer = name_of(p, X509_get_issuer_name(k->cert));
    k->subject = name_of(p, X509_get_subject_name(k->cert));
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(k->cert),
                                  NID_commonName, cn, sizeof(cn)) > 0) {
        k->cn = apr_pstrdup(p, cn);
    }
    k->sha256 = fingerprint(p, k->cert, EVP_sha256());
    k->sha1 = fingerprint(p, k->cert, EVP_sha1());
}

/* Whether k decrypts what its public key encrypts (RSA-OAEP, SHA-1): a
 * key that cannot is refused when it is loaded, not at a sign-in; and
 * what OpenSSL keeps in a key after its first private-key operation is
 * made now, once. */
static int key_works(EVP_PKEY *k)
{
    static const rsp_xenc_oaep_t oaep = {NULL, NULL, NULL, 0, NULL};
    rsp_xenc_oaep_t o = oaep;
    unsigned char in[16], ct[1024], out[1024];
    size_t ctlen = sizeof(ct);
    apr_size_t outlen = 0;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k, NULL);
    int ok;

    o.md = o.mgf1_md = EVP_sha1();
    ok = ctx && EVP_PKEY_get_size(k) <= (int)sizeof(ct)
        && RAND_bytes(in, sizeof(in)) == 1
        && EVP_PKEY_encrypt_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0
        && EVP_PKEY_encrypt(ctx, ct, &ctlen, in, sizeof(in)) > 0
        && rsp_xenc_unwrap(out, &outlen, sizeof(out), k, &o, ct, ctlen)
        && outlen == sizeof(in) && !CRYPTO_memcmp(in, out, sizeof(in));
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

static apr_status_t key_free(void *data)
{
    rsp_dec_key_t *k = data;

    EVP_PKEY_free(k->key);
    X509_free(k->cert);
    return APR_SUCCESS;
}

apr_status_t rsp_saml_decrypt_keys_load(apr_array_header_t **out,
                                        apr_pool_t *p,
                                        const apr_array_header_t *pems,
                                        const apr_array_header_t *certs,
                                        const char **err)
{
    apr_array_header_t *keys = apr_array_make(p, pems->nelts ? pems->nelts : 1,
                                              sizeof(rsp_dec_key_t *));
    int i;

    for (i = 0; i < pems->nelts; i++) {
        const char *pem = APR_ARRAY_IDX(pems, i, const char *);
        const char *cpem = certs && i < certs->nelts
            ? APR_ARRAY_IDX(certs, i, const char *) : NULL;
        rsp_dec_key_t *k = apr_pcalloc(p, sizeof(*k));
        BIO *b;

        apr_pool_cleanup_register(p, k, key_free, apr_pool_cleanup_null);
        if ((b = BIO_new_mem_buf(pem, -1)) != NULL) {
            k->key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
            BIO_free(b);
        }
        if (!k->key || EVP_PKEY_get_base_id(k->key) != EVP_PKEY_RSA) {
            ERR_clear_error();
            *err = apr_psprintf(p, "decryption key %d is no RSA private key",
                                i + 1);
            return APR_EGENERAL;
        }
        if (!key_works(k->key)) {
            *err = apr_psprintf(p, "decryption key %d does not decrypt what "
                                "its public key encrypts", i + 1);
            return APR_EGENERAL;
        }
        if (cpem && (b = BIO_new_mem_buf(cpem, -1)) != NULL) {
            k->cert = PEM_read_bio_X509(b, NULL, NULL, NULL);
            BIO_free(b);
            if (!k->cert) {
                ERR_clear_error();
                *err = apr_psprintf(p, "the certificate of decryption key "
                                    "%d cannot be read", i + 1);
                return APR_EGENERAL;
            }
            describe(k, p);
        }
        APR_ARRAY_PUSH(keys, rsp_dec_key_t *) = k;
    }
    *out = keys;
    return APR_SUCCESS;
}

/* ---- which EncryptedKey is for which key ---- */

typedef struct {
    xmlNodePtr node;
    rsp_xenc_oaep_t oaep;
    const unsigned char *ct;     /* its CipherValue, decoded (NULL: none) */
    apr_size_t ctlen;
    int *want;                   /* per key: to try with it */
} enc_key_t;

static int same_serial(apr_pool_t *p, const char *given, const char *ours)
{
    const char *g = given ? norm_name(p, given) : NULL;

    while (g && *g == '0' && g[1]) {
        g++;
    }
    return g && ours && !strcmp(g, ours);
}

/* The names of a key a KeyInfo is read for (KeyName, X509Certificate,
 * X509IssuerSerial, X509SubjectName); those after are not looked at. */
#define KEY_NAMES_MAX 8

/* Mark in want[] the keys that the ds:KeyInfo of an EncryptedKey names.
 * Returns how many it named; -1 when it carries a certificate that is
 * none of the keys' (for another recipient). */
static int recipient(apr_pool_t *p, xmlNodePtr key_info,
                     const apr_array_header_t *keys, int *want)
{
    xmlNodePtr n, x;
    int i, named = 0, foreign_cert = 0, names = 0;

    for (n = key_info ? key_info->children : NULL;
         n && names < KEY_NAMES_MAX; n = n->next) {
        if (rsp_xml_is(n, RSP_DS_NS, "KeyName")) {
            names++;
            const char *v = text_of(p, n), *nv, *hv;
            if (!v) {
                continue;
            }
            nv = norm_name(p, v);
            hv = norm_hex(p, v);
            for (i = 0; i < keys->nelts; i++) {
                const rsp_dec_key_t *k = APR_ARRAY_IDX(keys, i, rsp_dec_key_t *);
                if (k->cert && ((k->cn && !strcmp(norm_name(p, k->cn), nv))
                                || (k->subject && !strcmp(k->subject, nv))
                                || (k->sha256 && !strcmp(k->sha256, hv))
                                || (k->sha1 && !strcmp(k->sha1, hv)))) {
                    named += !want[i];
                    want[i] = 1;
                }
            }
            continue;
        }
        if (!rsp_xml_is(n, RSP_DS_NS, "X509Data")) {
            continue;
        }
        for (x = n->children; x && names < KEY_NAMES_MAX; x = x->next) {
            names += rsp_xml_is(x, RSP_DS_NS, "X509Certificate")
                || rsp_xml_is(x, RSP_DS_NS, "X509IssuerSerial")
                || rsp_xml_is(x, RSP_DS_NS, "X509SubjectName");
            if (rsp_xml_is(x, RSP_DS_NS, "X509Certificate")) {
                const char *b64 = text_of(p, x);
                char *der;
                apr_size_t len;
                const unsigned char *d;
                X509 *cert = NULL;
                int mine = 0;

                if (b64 && rsp_b64_decode(p, b64, 1, &der, &len) == 0
                    && len < 65536) {
                    d = (const unsigned char *)der;
                    cert = d2i_X509(NULL, &d, (long)len);
                }
                for (i = 0; cert && i < keys->nelts; i++) {
                    const rsp_dec_key_t *k =
                        APR_ARRAY_IDX(keys, i, rsp_dec_key_t *);
                    EVP_PKEY *pub = X509_get0_pubkey(cert);
                    if (pub && EVP_PKEY_eq(pub, k->key) == 1) {
                        named += !want[i];
                        want[i] = mine = 1;
                    }
                }
                foreign_cert |= cert && !mine;
                X509_free(cert);
                ERR_clear_error();
            }
            else if (rsp_xml_is(x, RSP_DS_NS, "X509IssuerSerial")) {
                const char *issuer = text_of(p, rsp_xml_child(x, RSP_DS_NS,
                                                      "X509IssuerName"));
                const char *serial = text_of(p, rsp_xml_child(x, RSP_DS_NS,
                                                      "X509SerialNumber"));
                int *same = apr_pcalloc(p, sizeof(int) * keys->nelts);
                int serials = 0, both = 0;

                /* the serial; of several of ours with it, the issuer's */
                for (i = 0; serial && i < keys->nelts; i++) {
                    const rsp_dec_key_t *k =
                        APR_ARRAY_IDX(keys, i, rsp_dec_key_t *);
                    if (k->cert && same_serial(p, serial, k->serial)) {
                        same[i] = 1 + (issuer && k->issuer
                                       && !strcmp(norm_name(p, issuer),
                                                  k->issuer));
                        serials++;
                        both += same[i] == 2;
                    }
                }
                for (i = 0; serials && i < keys->nelts; i++) {
                    if (same[i] == (both ? 2 : 1)) {
                        named += !want[i];
                        want[i] = 1;
                    }
                }
            }
            else if (rsp_xml_is(x, RSP_DS_NS, "X509SubjectName")) {
                const char *v = text_of(p, x), *nv = v ? norm_name(p, v) : NULL;
                for (i = 0; nv && i < keys->nelts; i++) {
                    const rsp_dec_key_t *k =
                        APR_ARRAY_IDX(keys, i, rsp_dec_key_t *);
                    if (k->subject && !strcmp(k->subject, nv)) {
                        named += !want[i];
                        want[i] = 1;
                    }
                }
            }
        }
    }
    return named ? named : foreign_cert ? -1 : 0;
}

/* An EncryptedKey read: its parameters (checked by rsp_saml_shape), its
 * ciphertext and the keys to try. 0 when it is for none of them. */
static int read_key(enc_key_t *ek, apr_pool_t *p, xmlNodePtr node,
                    const apr_array_header_t *keys)
{
    const char *check, *b64;
    char *ct;
    int i, named;

    memset(ek, 0, sizeof(*ek));
    ek->node = node;
    if (rsp_xenc_key_method(&ek->oaep, p, rsp_xml_child(node, RSP_XENC_NS,
                                                  "EncryptionMethod"),
                            &check) != NULL) {
        return 0;
    }
    b64 = text_of(p, rsp_xml_child(rsp_xml_child(node, RSP_XENC_NS, "CipherData"),
                           RSP_XENC_NS, "CipherValue"));
    if (!b64 || rsp_b64_decode(p, b64, 1, &ct, &ek->ctlen) < 0) {
        return 0;
    }
    ek->ct = (const unsigned char *)ct;
    ek->want = apr_pcalloc(p, sizeof(int) * (keys->nelts ? keys->nelts : 1));
    named = recipient(p, rsp_xml_child(node, RSP_DS_NS, "KeyInfo"), keys, ek->want);
    if (named < 0) {
        return 0;
    }
    for (i = 0; !named && i < keys->nelts; i++) {
        ek->want[i] = 1;
    }
    return keys->nelts > 0;
}

/* The EncryptedKeys to try, in order: inline (in the EncryptedData's
 * first KeyInfo), then peer (beside the EncryptedData, which a
 * RetrievalMethod in that KeyInfo names: they are all read). */
static apr_array_header_t *enc_keys(apr_pool_t *p, const rsp_shape_t *shape,
                                    const apr_array_header_t *keys)
{
    apr_array_header_t *out = apr_array_make(p, RSP_ENCRYPTED_KEYS_MAX,
                                             sizeof(enc_key_t));
    xmlNodePtr places[2], n;
    int i;

    places[0] = rsp_xml_child(shape->enc_data, RSP_DS_NS, "KeyInfo");
    places[1] = shape->enc;
    for (i = 0; i < 2; i++) {
        for (n = places[i] ? places[i]->children : NULL; n; n = n->next) {
            enc_key_t ek;
            if (out->nelts < RSP_ENCRYPTED_KEYS_MAX
                && rsp_xml_is(n, RSP_XENC_NS, "EncryptedKey")
                && read_key(&ek, p, n, keys)) {
                *(enc_key_t *)apr_array_push(out) = ek;
            }
        }
    }
    return out;
}

/* ---- decryption ---- */

/* The bytes the EncryptedData's CipherValue decodes to, at most: what
 * its decryption can yield is shorter (by the IV, and the tag or the
 * padding). */
static apr_size_t cipher_bytes(xmlNodePtr enc_data)
{
    xmlNodePtr cv = rsp_xml_child(rsp_xml_child(enc_data, RSP_XENC_NS, "CipherData"),
                          RSP_XENC_NS, "CipherValue");
    apr_size_t n = 0;
    const xmlChar *c;

    for (cv = cv ? cv->children : NULL; cv; cv = cv->next) {
        for (c = cv->type == XML_TEXT_NODE ? cv->content : NULL; c && *c; c++) {
            n += *c != ' ' && *c != '\t' && *c != '\r' && *c != '\n';
        }
    }
    return n / 4 * 3;
}

#define REFUSE(c, ...) do {                                   \
        *check = (c);                                          \
        *detail = apr_psprintf(p, __VA_ARGS__);                \
        rv = APR_EGENERAL;                                     \
        goto done;                                             \
    } while (0)

#define SESSION_MAX 32

/* What an element decrypts to is checked by one of these: NULL when it is
 * acceptable, else why (and *check); out: what it read. */
typedef const char *(*plain_check_t)(apr_pool_t *p, const char *text,
                                     apr_size_t len, void *out,
                                     const char **check);

/* What is decrypted: the element's name and what it should hold, for the
 * refusals, the most it may decrypt to, and the check of its plaintext. */
typedef struct {
    const char *element;     /* "EncryptedAssertion" */
    const char *holds;       /* "an assertion" */
    apr_size_t max;
    plain_check_t plain;
} target_t;

/* The EncryptedData of shape->enc (an EncryptedAssertion or an
 * EncryptedID) decrypted with keys, its plaintext checked by t->plain
 * (into out): see rsp_saml_decrypt. */
static apr_status_t decrypt_element(char **out_text, apr_size_t *out_len,
                                    int *out_unwraps, void *out,
                                    apr_pool_t *p,
                                    const apr_array_header_t *keys,
                                    const char *names,
                                    const rsp_shape_t *shape,
                                    const target_t *t, const char **check,
                                    const char **detail)
{
    const rsp_xenc_data_t *alg;
    apr_array_header_t *eks;
    unsigned char session[SESSION_MAX], *buf = NULL;
    apr_size_t buflen = 0, ctlen = 0, len = 0, textlen = 0;
    const char *b64, *why = NULL, *failed;
    char *ct = NULL, *text = NULL;
    int i, j, have = 0, data_ok, ok, unwraps = 0;
    apr_status_t rv = APR_SUCCESS;

    if (!shape->enc || !shape->enc_data || !shape->enc_key
        || !(alg = rsp_xenc_data_alg(shape->data_alg))) {
        *check = "decrypt";
        *detail = "no EncryptedData or EncryptedKey to decrypt";
        return APR_EGENERAL;
    }
    /* The one refusal of every failure from here on (and of a ciphertext
     * that is not base64: a truncated one may not be). */
    failed = apr_psprintf(
        p, "the %s from %s (data %s, key transport %s, %d "
        "EncryptedKey) cannot be decrypted with any key of this SP (tried: "
        "%s)%s%s%s", t->element, shape->issuer, alg->name, shape->key_desc
            ? shape->key_desc : rsp_alg_name(shape->key_alg), shape->keys,
        names, alg->gcm ? "" : "; AES-CBC is not authenticated: a key that "
        "is not this SP's, a changed ciphertext and a plaintext that is not ",
        alg->gcm ? "" : t->holds, alg->gcm ? "" : " are not told apart");
    /* Too large for what it holds: not worth the private key's time. */
    if (cipher_bytes(shape->enc_data) > t->max + 64) {
        REFUSE("decrypted-size", "the %s from %s holds %" APR_SIZE_T_FMT
               " bytes of ciphertext (%s of at most %" APR_SIZE_T_FMT
               " bytes is accepted)", t->element, shape->issuer,
               cipher_bytes(shape->enc_data), t->holds, t->max);
    }
    b64 = text_of(p, rsp_xml_child(rsp_xml_child(shape->enc_data, RSP_XENC_NS, "CipherData"),
                           RSP_XENC_NS, "CipherValue"));
    if (!b64 || rsp_b64_decode(p, b64, 1, &ct, &ctlen) < 0) {
        REFUSE("decrypt", "%s", failed);
    }
    /* Every key each EncryptedKey may be for, whatever the others gave:
     * the first key of the data's size that unwraps is the session key. */
    eks = keys ? enc_keys(p, shape, keys) : NULL;
    for (i = 0; eks && i < eks->nelts; i++) {
        const enc_key_t *ek = &APR_ARRAY_IDX(eks, i, enc_key_t);
        for (j = 0; j < keys->nelts; j++) {
            const rsp_dec_key_t *k = APR_ARRAY_IDX(keys, j, rsp_dec_key_t *);
            apr_size_t size = (apr_size_t)EVP_PKEY_get_size(k->key);

            if (!ek->want[j]) {
                continue;
            }
            if (size > buflen) {
                buf = apr_palloc(p, buflen = size);
            }
            ok = rsp_xenc_unwrap(buf, &len, buflen, k->key, &ek->oaep,
                                 ek->ct, ek->ctlen)
                && len == (apr_size_t)alg->key_bytes;
            unwraps++;
            if (ok && !have) {
                memcpy(session, buf, (apr_size_t)alg->key_bytes);
                have = 1;
            }
            OPENSSL_cleanse(buf, buflen);
        }
    }
    /* None: the same work with a key nobody has. */
    if (!have && RAND_bytes(session, alg->key_bytes) != 1) {
        memset(session, 0, sizeof(session));
        ERR_clear_error();
    }
    data_ok = rsp_xenc_decrypt_data(&text, &textlen, p, alg, session,
                                    (const unsigned char *)ct, ctlen);
    OPENSSL_cleanse(session, sizeof(session));
    if (alg->gcm) {
        if (!have || !data_ok) {
            REFUSE("decrypt", "%s", failed);
        }
        /* authenticated: what is wrong with it may be said */
        if ((why = t->plain(p, text, textlen, out, check))) {
            *detail = apr_psprintf(p, "the %s from %s decrypts to %s",
                                   t->element, shape->issuer, why);
            rv = APR_EGENERAL;
            goto done;
        }
    }
    else {
        /* read whatever the padding was (the same work either way), told
         * apart from nothing else */
        const char *tag;
        why = text ? t->plain(p, text, textlen, out, &tag) : "nothing";
        if (!have || !data_ok || why) {
            REFUSE("decrypt", "%s", failed);
        }
    }
    *out_text = text;
    *out_len = textlen;
    *out_unwraps = unwraps;
done:
    if (rv != APR_SUCCESS && text) {
        OPENSSL_cleanse(text, textlen);
    }
    return rv;
}

static const char *assertion_plain(apr_pool_t *p, const char *text,
                                   apr_size_t len, void *out,
                                   const char **check)
{
    return rsp_saml_plaintext_shape(p, text, len, (const char **)out, check);
}

static const char *name_id_plain(apr_pool_t *p, const char *text,
                                 apr_size_t len, void *out, const char **check)
{
    return rsp_saml_name_id_plaintext(p, text, len, out, check);
}

apr_status_t rsp_saml_decrypt(rsp_decrypted_t *out, apr_pool_t *p,
                              const apr_array_header_t *keys,
                              const char *names, const rsp_shape_t *shape,
                              const char **check, const char **detail)
{
    static const target_t t = {"EncryptedAssertion", "an assertion",
                               RSP_DECRYPTED_MAX_SIZE, assertion_plain};
    char *text = NULL;
    apr_size_t len = 0;
    const char *id = NULL;
    int unwraps = 0;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    rv = decrypt_element(&text, &len, &unwraps, &id, p, keys, names, shape,
                         &t, check, detail);
    if (rv == APR_SUCCESS) {
        out->text = text;
        out->len = len;
        out->id = id;
        out->unwraps = unwraps;
    }
    return rv;
}

apr_status_t rsp_saml_decrypt_id(rsp_name_id_t *out, int *unwraps,
                                 apr_pool_t *p,
                                 const apr_array_header_t *keys,
                                 const char *names, const rsp_shape_t *shape,
                                 const char **check, const char **detail)
{
    static const target_t t = {"EncryptedID", "a NameID",
                               RSP_DECRYPTED_ID_MAX_SIZE, name_id_plain};
    rsp_name_id_t got;
    char *text = NULL;
    apr_size_t len = 0;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    memset(&got, 0, sizeof(got));
    *unwraps = 0;
    rv = decrypt_element(&text, &len, unwraps, &got, p, keys, names, shape,
                         &t, check, detail);
    if (rv == APR_SUCCESS) {
        *out = got;
        OPENSSL_cleanse(text, len); /* what is kept is in *out */
    }
    return rv;
}

/* ---- the Response Lasso reads ---- */

apr_status_t rsp_saml_decrypt_splice(const char **b64, int *verified,
                                     apr_pool_t *p, xmlDocPtr doc,
                                     const rsp_shape_t *shape,
                                     const rsp_decrypted_t *dec,
                                     const char **check, const char **detail)
{
    xmlDocPtr plain = NULL;
    xmlNodePtr root, copy, n, next;
    xmlChar *mem = NULL;
    int size = 0;
    char *out;
    apr_status_t rv = APR_SUCCESS;

    *b64 = NULL;
    *verified = 0;
    if (!doc || !shape->enc || !dec->text || dec->len > (apr_size_t)0x7fffffff) {
        REFUSE("decrypt", "nothing decrypted to put in the Response");
    }
    /* As rsp_saml_plaintext_shape read it (and accepted it). */
    plain = xmlReadMemory(dec->text, (int)dec->len, NULL, "UTF-8",
                          XML_PARSE_NONET | XML_PARSE_NOERROR
                              | XML_PARSE_NOWARNING);
    root = plain ? xmlDocGetRootElement(plain) : NULL;
    if (!rsp_xml_is(root, NS_SAML, "Assertion")
        || !(copy = xmlDocCopyNode(root, doc, 1))) {
        REFUSE("decrypt", "the decrypted assertion cannot be put in the "
               "Response");
    }
    xmlReplaceNode(shape->enc, copy);
    xmlFreeNode(shape->enc);
    /* The Response's signature covers the ciphertext, which is gone. */
    if (shape->response_signed) {
        for (n = xmlDocGetRootElement(doc)->children; n; n = next) {
            next = n->next;
            if (rsp_xml_is(n, RSP_DS_NS, "Signature")) {
                xmlUnlinkNode(n);
                xmlFreeNode(n);
            }
        }
    }
    *verified = shape->response_signed
        && rsp_xml_child(copy, RSP_DS_NS, "Signature") == NULL;
    xmlDocDumpMemoryEnc(doc, &mem, &size, "UTF-8");
    if (!mem || size <= 0) {
        REFUSE("decrypt", "the Response with the decrypted assertion cannot "
               "be written");
    }
    out = apr_palloc(p, (apr_size_t)apr_base64_encode_len(size));
    apr_base64_encode(out, (const char *)mem, size);
    *b64 = out;
done:
    if (mem) {
        xmlFree(mem);
    }
    if (plain) {
        xmlFreeDoc(plain);
    }
    return rv;
}
