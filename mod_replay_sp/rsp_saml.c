#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_base64.h>
#include <apr_file_io.h>
#include <apr_strings.h>

#include <lasso/lasso.h>
#include <lasso/utils.h>
#include <lasso/xml/saml-2.0/samlp2_authn_request.h>
#include <lasso/xml/saml-2.0/samlp2_logout_request.h>
#include <lasso/xml/saml-2.0/samlp2_status_response.h>
#include <lasso/xml/saml-2.0/samlp2_name_id_policy.h>
#include <lasso/xml/saml-2.0/samlp2_response.h>
#include <lasso/xml/saml-2.0/saml2_assertion.h>
#include <lasso/xml/misc_text_node.h>
#include <lasso/xml/saml-2.0/saml2_attribute.h>
#include <lasso/xml/saml-2.0/saml2_attribute_statement.h>
#include <lasso/xml/saml-2.0/saml2_attribute_value.h>
#include <lasso/xml/saml-2.0/saml2_audience_restriction.h>
#include <lasso/xml/saml-2.0/saml2_authn_statement.h>
#include <lasso/xml/saml-2.0/saml2_conditions.h>
#include <lasso/xml/saml-2.0/saml2_subject.h>
#include <lasso/xml/saml-2.0/saml2_subject_confirmation.h>
#include <lasso/xml/saml-2.0/saml2_subject_confirmation_data.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <libxml/globals.h>
#include <xmlsec/errors.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "rsp_log.h"
#include "rsp_saml.h"
#include "rsp_metadata.h"
#include "rsp_saml_shape.h"

typedef struct {
    unsigned char *der;
    int len;
} der_t;

#define MAX_FILE_SIZE (16 * 1024 * 1024)

/* ---- diagnostics of the XML stack go to our log at debug level ---- */

static void glib_log(const gchar *domain, GLogLevelFlags level,
                     const gchar *message, gpointer data)
{
    /* Lasso's own debug trace is a line per XML node: not for our log. */
    if (level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO)) {
        return;
    }
    rsp_log(RSP_LOG_DEBUG, "%s: %s", domain ? domain : "glib", message);
}

static void xml_structured(void *ctx, xmlErrorPtr e)
{
    if (e && e->message) {
        rsp_log(RSP_LOG_DEBUG, "libxml2: %s", e->message);
    }
}

static void xml_generic(void *ctx, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    rsp_log(RSP_LOG_DEBUG, "libxml2: %s", buf);
}

static void xmlsec_errors(const char *file, int line, const char *func,
                          const char *obj, const char *subj, int reason,
                          const char *msg)
{
    rsp_log(RSP_LOG_DEBUG, "xmlsec: %s: %s (reason %d)", func ? func : "",
            msg ? msg : "", reason);
}

apr_status_t rsp_saml_global_init(const char **err)
{
    int rc = lasso_init();

    if (rc != 0) {
        *err = lasso_strerror(rc);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Per process by design: the id of our GLib handler while installed. */
static guint glib_handler_id;

void rsp_saml_log_install(void)
{
    glib_handler_id = g_log_set_handler(
        "Lasso", G_LOG_LEVEL_MASK | G_LOG_FLAG_RECURSION, glib_log, NULL);
    g_log_set_default_handler(glib_log, NULL);
    /* The thread defaults cover the worker threads created later. */
    xmlSetStructuredErrorFunc(NULL, xml_structured);
    xmlThrDefSetStructuredErrorFunc(NULL, xml_structured);
    xmlSetGenericErrorFunc(NULL, xml_generic);
    xmlThrDefSetGenericErrorFunc(NULL, xml_generic);
    xmlSecErrorsSetCallback(xmlsec_errors);
}

void rsp_saml_log_remove(void)
{
    if (glib_handler_id) {
        g_log_remove_handler("Lasso", glib_handler_id);
        glib_handler_id = 0;
    }
    g_log_set_default_handler(g_log_default_handler, NULL);
    xmlSetStructuredErrorFunc(NULL, NULL);
    xmlThrDefSetStructuredErrorFunc(NULL, NULL);
    xmlSetGenericErrorFunc(NULL, NULL);
    xmlThrDefSetGenericErrorFunc(NULL, NULL);
    xmlSecErrorsSetCallback(xmlSecErrorsDefaultCallback);
}

/* ---- loading an SP definition ---- */

static apr_status_t read_file(const char **out, apr_pool_t *p, const char *path,
                              const char **err)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_status_t rv;
    apr_size_t n;
    char *buf, ebuf[128];

    rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot read %s: %s", path,
                            apr_strerror(rv, ebuf, sizeof(ebuf)));
        return rv;
    }
    rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (rv == APR_SUCCESS && (fi.size <= 0 || fi.size > MAX_FILE_SIZE)) {
        *err = apr_psprintf(p, "%s: %s", path,
                            fi.size <= 0 ? "file is empty" : "file too large");
        apr_file_close(f);
        return APR_EINVAL;
    }
    if (rv == APR_SUCCESS) {
        buf = apr_palloc(p, (apr_size_t)fi.size + 1);
        rv = apr_file_read_full(f, buf, (apr_size_t)fi.size, &n);
        buf[rv == APR_SUCCESS ? n : 0] = '\0';
        *out = buf;
    }
    apr_file_close(f);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot read %s: %s", path,
                            apr_strerror(rv, ebuf, sizeof(ebuf)));
    }
    return rv;
}

static const char *xml_escape(apr_pool_t *p, const char *s)
{
    apr_size_t len = 0;
    const char *c;
    char *out, *o;

    for (c = s; *c; c++) {
        len += (*c == '&') ? 5 : (*c == '<' || *c == '>') ? 4 : (*c == '"') ? 6 : 1;
    }
    out = o = apr_palloc(p, len + 1);
    for (c = s; *c; c++) {
        switch (*c) {
        case '&': memcpy(o, "&amp;", 5); o += 5; break;
        case '<': memcpy(o, "&lt;", 4); o += 4; break;
        case '>': memcpy(o, "&gt;", 4); o += 4; break;
        case '"': memcpy(o, "&quot;", 6); o += 6; break;
        default: *o++ = *c;
        }
    }
    *o = '\0';
    return out;
}

/* "AB:CD:..." as openssl x509 -fingerprint prints a digest. */
static const char *hex_fp(apr_pool_t *p, const unsigned char *md,
                          unsigned int n)
{
    char *f = apr_palloc(p, n * 3 + 1);
    unsigned int i;

    for (i = 0; i < n; i++) {
        apr_snprintf(f + i * 3, 4, "%02X%s", md[i], i + 1 < n ? ":" : "");
    }
    f[n ? n * 3 - 1 : 0] = '\0';
    return f;
}

/* A PEM private key, RSA when it is to decrypt (RSA-OAEP is the only key
 * transport we take); NULL with *err set otherwise. */
static EVP_PKEY *read_key(apr_pool_t *p, const char *key_file,
                          const char *key_pem, int decrypts, const char **err)
{
    BIO *kb = BIO_new_mem_buf(key_pem, -1);
    EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;

    BIO_free(kb);
    if (!key) {
        *err = apr_psprintf(p, "%s: not a PEM private key (or it is "
                            "encrypted: give an unencrypted key readable "
                            "only by root)", key_file);
    }
    else if (decrypts && EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
        *err = apr_psprintf(p, "%s: not an RSA key (assertions are "
                            "decrypted with RSA-OAEP only)", key_file);
        EVP_PKEY_free(key);
        key = NULL;
    }
    return key;
}

/* A key pair read from PEM: the key must match the certificate. *b64 is
 * the certificate's DER in base64 (metadata), *fp its SHA-256
 * fingerprint. *bad_key tells which file the error is about. */
static apr_status_t check_pair(apr_pool_t *p, const char *key_file,
                               const char *key_pem, const char *cert_file,
                               const char *cert_pem, int decrypts,
                               const char **b64, const char **fp, int *bad_key,
                               const char **err)
{
    EVP_PKEY *key = read_key(p, key_file, key_pem, decrypts, err);
    BIO *cb = key ? BIO_new_mem_buf(cert_pem, -1) : NULL;
    X509 *cert = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    unsigned char *der = NULL, md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int derlen;
    apr_status_t rv = APR_EINVAL;

    *bad_key = !key;
    if (!key) {
        /* *err says why */
    }
    else if (!cert) {
        *err = apr_psprintf(p, "%s: not a PEM X.509 certificate", cert_file);
    }
    else if (X509_check_private_key(cert, key) != 1) {
        *err = apr_psprintf(p, "%s does not match the certificate %s",
                            key_file, cert_file);
    }
    else if ((derlen = i2d_X509(cert, &der)) <= 0
             || X509_digest(cert, EVP_sha256(), md, &mdlen) != 1) {
        *err = apr_psprintf(p, "%s: cannot encode the certificate", cert_file);
    }
    else {
        char *b = apr_palloc(p, (apr_size_t)apr_base64_encode_len(derlen));
        apr_base64_encode_binary(b, der, derlen);
        *b64 = b;
        *fp = hex_fp(p, md, mdlen);
        rv = APR_SUCCESS;
    }
    OPENSSL_free(der);
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cb);
    return rv;
}

/* An RSA private key alone: *fp names it by the SHA-256 fingerprint of its
 * public key (DER SubjectPublicKeyInfo), "key sha256 AB:CD:...". */
static apr_status_t check_key(apr_pool_t *p, const char *key_file,
                              const char *key_pem, const char **fp,
                              const char **err)
{
    EVP_PKEY *key = read_key(p, key_file, key_pem, 1, err);
    unsigned char *der = NULL, md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int derlen;
    apr_status_t rv = APR_EINVAL;

    if (key && ((derlen = i2d_PUBKEY(key, &der)) <= 0
                || EVP_Digest(der, (size_t)derlen, md, &mdlen, EVP_sha256(),
                              NULL) != 1)) {
        *err = apr_psprintf(p, "%s: cannot encode the public key", key_file);
    }
    else if (key) {
        *fp = apr_pstrcat(p, "key sha256 ", hex_fp(p, md, mdlen), NULL);
        rv = APR_SUCCESS;
    }
    OPENSSL_free(der);
    EVP_PKEY_free(key);
    return rv;
}

/* A guard signs nothing: its keys are the guarded SP's decryption keys,
 * certificates optional (a key is then named by the SHA-256 fingerprint
 * of its public key). */
static apr_status_t load_guard_keys(rsp_saml_sp_t *sp, apr_pool_t *p, int n,
                                    rsp_sp_input_t *input, const char **err)
{
    const char *names = NULL, *b64, *fp;
    apr_status_t rv;
    int i, bad_key;

    sp->dec_keys = apr_array_make(p, n ? n : 1, sizeof(const char *));
    if (sp->enc_cert_files && sp->enc_cert_files->nelts
        && sp->enc_cert_files->nelts != n) {
        *input = RSP_SP_INPUT_ENC_CERT;
        *err = apr_psprintf(p, "%d ReplaySPEncryptionKeyFile but %d "
                            "ReplaySPEncryptionCertFile: give a certificate "
                            "for every key, or none", n,
                            sp->enc_cert_files->nelts);
        return APR_EINVAL;
    }
    for (i = 0; i < n; i++) {
        const char *kf = APR_ARRAY_IDX(sp->enc_key_files, i, const char *);
        const char *cf = sp->enc_cert_files
            ? APR_ARRAY_IDX(sp->enc_cert_files, i, const char *) : NULL;
        const char *kp, *cp = NULL;

        *input = RSP_SP_INPUT_ENC_KEY;
        if ((rv = read_file(&kp, p, kf, err)) != APR_SUCCESS) {
            return rv;
        }
        if (cf) {
            *input = RSP_SP_INPUT_ENC_CERT;
            if ((rv = read_file(&cp, p, cf, err)) != APR_SUCCESS) {
                return rv;
            }
            rv = check_pair(p, kf, kp, cf, cp, 1, &b64, &fp, &bad_key, err);
            if (rv != APR_SUCCESS) {
                *input = bad_key ? RSP_SP_INPUT_ENC_KEY : RSP_SP_INPUT_ENC_CERT;
                return rv;
            }
            fp = apr_pstrcat(p, "cert sha256 ", fp, NULL);
        }
        else if ((rv = check_key(p, kf, kp, &fp, err)) != APR_SUCCESS) {
            *input = RSP_SP_INPUT_ENC_KEY;
            return rv;
        }
        APR_ARRAY_PUSH(sp->dec_keys, const char *) = kp;
        names = apr_pstrcat(p, names ? names : "", names ? ", " : "", fp, NULL);
    }
    sp->dec_names = names ? names : "none (no ReplaySPEncryptionKeyFile)";
    return APR_SUCCESS;
}

/* The signing pair, then the decryption pairs (ReplaySPEncryptionKeyFile
 * and ReplaySPEncryptionCertFile, the Nth key with the Nth certificate);
 * without those the signing pair decrypts too. */
static apr_status_t load_keys(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err)
{
    const char *fp, *b64, *names = NULL;
    apr_status_t rv;
    int i, bad_key, n;

    n = sp->enc_key_files ? sp->enc_key_files->nelts : 0;
    if (sp->guard) {
        return load_guard_keys(sp, p, n, input, err);
    }
    *input = RSP_SP_INPUT_KEY;
    if ((rv = read_file(&sp->key_pem, p, sp->key_file, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_CERT;
    if ((rv = read_file(&sp->cert_pem, p, sp->cert_file, err)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = check_pair(p, sp->key_file, sp->key_pem, sp->cert_file,
                         sp->cert_pem, n == 0, &sp->cert_b64, &fp, &bad_key,
                         err)) != APR_SUCCESS) {
        *input = bad_key ? RSP_SP_INPUT_KEY : RSP_SP_INPUT_CERT;
        return rv;
    }
    sp->dec_keys = apr_array_make(p, n ? n : 1, sizeof(const char *));
    if (n == 0 && sp->enc_cert_files && sp->enc_cert_files->nelts) {
        *input = RSP_SP_INPUT_ENC_CERT;
        *err = apr_psprintf(p, "%d certificates but no "
                            "ReplaySPEncryptionKeyFile: they go in pairs, the "
                            "Nth key with the Nth certificate",
                            sp->enc_cert_files->nelts);
        return APR_EINVAL;
    }
    if (n == 0) {
        APR_ARRAY_PUSH(sp->dec_keys, const char *) = sp->key_pem;
        sp->enc_cert_b64 = sp->cert_b64;
        sp->dec_names = apr_pstrcat(p, "cert sha256 ", fp, " (the signing "
                                    "key)", NULL);
        return APR_SUCCESS;
    }
    *input = RSP_SP_INPUT_ENC_CERT;
    if (!sp->enc_cert_files || sp->enc_cert_files->nelts != n) {
        *err = apr_psprintf(p, "%d ReplaySPEncryptionKeyFile but %d "
                            "ReplaySPEncryptionCertFile: they go in pairs, "
                            "the Nth key with the Nth certificate", n,
                            sp->enc_cert_files ? sp->enc_cert_files->nelts : 0);
        return APR_EINVAL;
    }
    for (i = 0; i < n; i++) {
        const char *kf = APR_ARRAY_IDX(sp->enc_key_files, i, const char *);
        const char *cf = APR_ARRAY_IDX(sp->enc_cert_files, i, const char *);
        const char *kp, *cp;

        *input = RSP_SP_INPUT_ENC_KEY;
        if ((rv = read_file(&kp, p, kf, err)) != APR_SUCCESS) {
            return rv;
        }
        *input = RSP_SP_INPUT_ENC_CERT;
        if ((rv = read_file(&cp, p, cf, err)) != APR_SUCCESS) {
            return rv;
        }
        if ((rv = check_pair(p, kf, kp, cf, cp, 1, &b64, &fp, &bad_key, err))
            != APR_SUCCESS) {
            *input = bad_key ? RSP_SP_INPUT_ENC_KEY : RSP_SP_INPUT_ENC_CERT;
            return rv;
        }
        APR_ARRAY_PUSH(sp->dec_keys, const char *) = kp;
        names = apr_pstrcat(p, names ? names : "", names ? ", " : "",
                            "cert sha256 ", fp, NULL);
        if (i == (sp->enc_publish >= 0 ? sp->enc_publish : 0)) {
            sp->enc_cert_b64 = b64;
        }
    }
    sp->dec_names = names;
    return APR_SUCCESS;
}

int rsp_saml_sha1_allowed(const rsp_saml_sp_t *sp, const char *idp)
{
    int i;

    for (i = 0; idp && sp->sha1_idps && i < sp->sha1_idps->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(sp->sha1_idps, i, const char *), idp)) {
            return 1;
        }
    }
    return 0;
}

const char *rsp_saml_metadata(apr_pool_t *p, const rsp_saml_sp_t *sp,
                              const char *base_url)
{
    static const char ki[] =
        "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s"
        "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>";
    /* What we decrypt, the IdP's choice among them: AES-GCM first
     * (saml2int SDP-ALG01), AES-CBC for IdPs without it, and the one key
     * transport we accept. */
    static const char methods[] =
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES256_GCM "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES128_GCM "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES256_CBC "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_AES128_CBC "\"/>"
        "\n   <md:EncryptionMethod Algorithm=\"" RSP_ALG_RSA_OAEP_MGF1P "\"/>\n  ";
    const char *sign_kd, *enc_kd, *kds = "";

    /* A guard has no key pair of its own: its metadata (for its own
     * LassoServer only) has no KeyDescriptor. */
    if (sp->cert_b64) {
        sign_kd = apr_psprintf(p, ki, sp->cert_b64);
        enc_kd = apr_psprintf(p, ki, sp->enc_cert_b64 ? sp->enc_cert_b64
                                                      : sp->cert_b64);
        kds = apr_psprintf(p, "  <md:KeyDescriptor use=\"signing\">%s"
                           "</md:KeyDescriptor>\n"
                           "  <md:KeyDescriptor use=\"encryption\">%s%s"
                           "</md:KeyDescriptor>\n", sign_kd, enc_kd, methods);
    }

    return apr_psprintf(
        p,
        "<?xml version=\"1.0\"?>\n"
        "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" "
        "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" entityID=\"%s\">\n"
        " <md:SPSSODescriptor WantAssertionsSigned=\"true\" "
        "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">\n"
        "%s"
        "  <md:SingleLogoutService "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" "
        "Location=\"%s/slo\"/>\n"
        "  <md:AssertionConsumerService index=\"0\" isDefault=\"true\" "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" "
        "Location=\"%s/acs\"/>\n"
        " </md:SPSSODescriptor>\n"
        "</md:EntityDescriptor>\n",
        xml_escape(p, sp->entity_id), kds, xml_escape(p, base_url),
        xml_escape(p, base_url));
}

/* The IdP's signing certificates (KeyDescriptor use="signing" or without
 * use, in its IDPSSODescriptor), DER, for the HTTP-Redirect signatures we
 * verify ourselves. */
static apr_array_header_t *idp_signing_certs(apr_pool_t *p, const char *md)
{
    apr_array_header_t *out = apr_array_make(p, 2, sizeof(der_t));
    xmlDocPtr doc = xmlReadMemory(md, (int)strlen(md), NULL, NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOBLANKS);
    xmlXPathContextPtr ctx = doc ? xmlXPathNewContext(doc) : NULL;
    xmlXPathObjectPtr res = NULL;
    int i;

    if (ctx) {
        xmlXPathRegisterNs(ctx, BAD_CAST "md",
                           BAD_CAST "urn:oasis:names:tc:SAML:2.0:metadata");
        xmlXPathRegisterNs(ctx, BAD_CAST "ds",
                           BAD_CAST "http://www.w3.org/2000/09/xmldsig#");
        res = xmlXPathEvalExpression(
            BAD_CAST "//md:IDPSSODescriptor/md:KeyDescriptor[not(@use) or "
                     "@use='signing']//ds:X509Certificate", ctx);
    }
    for (i = 0; res && res->nodesetval && i < res->nodesetval->nodeNr; i++) {
        xmlChar *text = xmlNodeGetContent(res->nodesetval->nodeTab[i]);
        char *clean, *o;
        const char *c;
        const unsigned char *q;
        X509 *x;
        der_t d;

        if (!text) {
            continue;
        }
        clean = o = apr_palloc(p, strlen((char *)text) + 1);
        for (c = (char *)text; *c; c++) {
            if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n') {
                *o++ = *c;
            }
        }
        *o = '\0';
        xmlFree(text);
        d.der = apr_palloc(p, (apr_size_t)apr_base64_decode_len(clean));
        d.len = apr_base64_decode_binary(d.der, clean);
        q = d.der;
        if (d.len > 0 && (x = d2i_X509(NULL, &q, d.len)) != NULL) {
            X509_free(x);
            APR_ARRAY_PUSH(out, der_t) = d;
        }
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    if (ctx) {
        xmlXPathFreeContext(ctx);
    }
    if (doc) {
        xmlFreeDoc(doc);
    }
    return out;
}

apr_status_t rsp_saml_sp_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err)
{
    apr_status_t rv;
    rsp_lasso_server_t *server;
    int i, j, k;

    if ((rv = load_keys(sp, p, input, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_IDP;
    /* Our own metadata, for our LassoServer: the ACS location in it is not
     * used to validate anything (Destination and Recipient are checked
     * against the request's public URL). */
    sp->sp_metadata = rsp_saml_metadata(p, sp, sp->entity_id);
    sp->idp_metadata = apr_array_make(p, sp->idp_files->nelts, sizeof(char *));
    sp->idp_ids = apr_array_make(p, sp->idp_files->nelts, sizeof(char *));
    sp->idp_certs = apr_array_make(p, sp->idp_files->nelts,
                                   sizeof(apr_array_header_t *));
    for (i = 0; i < sp->idp_files->nelts; i++) {
        const char *path = APR_ARRAY_IDX(sp->idp_files, i, const char *);
        const char *file, *why = NULL;
        apr_array_header_t *entities;

        if ((rv = read_file(&file, p, path, err)) != APR_SUCCESS) {
            return rv;
        }
        /* One IdP, or a federation's aggregate of many. */
        if (rsp_metadata_idps(&entities, p, file, &why) != APR_SUCCESS) {
            *err = apr_psprintf(p, "%s: %s", path, why);
            return APR_EINVAL;
        }
        for (k = 0; k < entities->nelts; k++) {
            const char *md = APR_ARRAY_IDX(entities, k, const char *);
            LassoProvider *prov = lasso_provider_new_from_buffer(
                LASSO_PROVIDER_ROLE_IDP, md, NULL, NULL);

            if (!prov || !prov->ProviderID) {
                *err = apr_psprintf(p, "%s: not valid SAML 2.0 metadata of an "
                                    "IdP (entity %d)", path, k + 1);
                if (prov) {
                    g_object_unref(prov);
                }
                return APR_EINVAL;
            }
            if (!(lasso_provider_get_roles(prov) & LASSO_PROVIDER_ROLE_IDP)) {
                *err = apr_psprintf(p, "%s: entity %s has no IDPSSODescriptor",
                                    path, prov->ProviderID);
                g_object_unref(prov);
                return APR_EINVAL;
            }
            for (j = 0; j < sp->idp_ids->nelts; j++) {
                if (!strcmp(APR_ARRAY_IDX(sp->idp_ids, j, const char *),
                            prov->ProviderID)) {
                    *err = apr_psprintf(p, "%s: IdP %s is already configured by "
                                        "another metadata file or entity", path,
                                        prov->ProviderID);
                    g_object_unref(prov);
                    return APR_EINVAL;
                }
            }
            APR_ARRAY_PUSH(sp->idp_ids, const char *) =
                apr_pstrdup(p, prov->ProviderID);
            APR_ARRAY_PUSH(sp->idp_metadata, const char *) = md;
            APR_ARRAY_PUSH(sp->idp_certs, apr_array_header_t *) =
                idp_signing_certs(p, md);
            g_object_unref(prov);
        }
    }
    *input = RSP_SP_INPUT_SHA1;
    for (i = 0; sp->sha1_idps && i < sp->sha1_idps->nelts; i++) {
        const char *idp = APR_ARRAY_IDX(sp->sha1_idps, i, const char *);
        for (j = 0; j < sp->idp_ids->nelts
                    && strcmp(APR_ARRAY_IDX(sp->idp_ids, j, const char *), idp);
             j++)
            ;
        if (j == sp->idp_ids->nelts) {
            *err = apr_psprintf(p, "%s is none of this SP's IdPs (their "
                                "entityIDs, from ReplaySPIdPMetadataFile)", idp);
            return APR_EINVAL;
        }
    }
    /* Build one server now so that what a worker will do is proven here. */
    *input = RSP_SP_INPUT_OTHER;
    if ((rv = rsp_saml_server_new(&server, sp, err)) != APR_SUCCESS) {
        return rv;
    }
    rsp_saml_server_free(server);
    return APR_SUCCESS;
}

apr_status_t rsp_saml_server_new(rsp_lasso_server_t **out,
                                 const rsp_saml_sp_t *sp, const char **err)
{
    LassoServer *server;
    int i, rc;

    /* No certificate: given one, Lasso hands it to xmlsec as a file name
     * first, and xmlsec leaks a BIO on every signature when that fails.
     * Nothing needs it: HTTP-Redirect signatures carry no KeyInfo, and our
     * metadata is built from the certificate file. */
    /* No key either: Lasso would make the signing key a decryption key.
     * Signing reads server->private_key where it signs; the keys that
     * decrypt are exactly dec_keys, in order. */
    server = lasso_server_new_from_buffers(sp->sp_metadata, NULL, NULL, NULL);
    if (!server) {
        *err = "Lasso cannot build a server from our metadata";
        return APR_EGENERAL;
    }
    lasso_assign_string(server->private_key, sp->key_pem);
    for (i = 0; i < sp->dec_keys->nelts; i++) {
        rc = lasso_server_set_encryption_private_key_with_password(
            server, APR_ARRAY_IDX(sp->dec_keys, i, const char *), NULL);
        if (rc != 0) {
            *err = lasso_strerror(rc);
            g_object_unref(server);
            return APR_EGENERAL;
        }
    }
    /* Lasso's default is RSA-SHA1: the messages we sign (AuthnRequests
     * when asked for, logout messages) use RSA-SHA256. */
    server->signature_method = LASSO_SIGNATURE_METHOD_RSA_SHA256;
    for (i = 0; i < sp->idp_metadata->nelts; i++) {
        rc = lasso_server_add_provider_from_buffer(
            server, LASSO_PROVIDER_ROLE_IDP,
            APR_ARRAY_IDX(sp->idp_metadata, i, const char *), NULL, NULL);
        if (rc != 0) {
            *err = lasso_strerror(rc);
            g_object_unref(server);
            return APR_EGENERAL;
        }
    }
    *out = server;
    return APR_SUCCESS;
}

void rsp_saml_server_free(rsp_lasso_server_t *server)
{
    if (server) {
        g_object_unref(server);
    }
}

/* ---- processing a response ---- */

/* Strict base64 (no whitespace): the decoded length, or -1. */
static int strict_b64(const char *s)
{
    apr_size_t n = strlen(s), i, pad = 0;

    if (n == 0 || n % 4 != 0) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '=' && i >= n - 2) {
            pad++;
        }
        else if (pad || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                          || (c >= '0' && c <= '9') || c == '+' || c == '/')) {
            return -1;
        }
    }
    return (int)(n / 4 * 3 - pad);
}

/* Standard base64 (whitespace allowed) whose decoded text starts with
 * '<': the decoded text in *xml, its length in *len. */
static const char *check_base64(apr_pool_t *p, const char *b64,
                                const char **xml, apr_size_t *len)
{
    const char *c;
    char *clean, *o, *dec;
    int declen;

    clean = o = apr_palloc(p, strlen(b64) + 1);
    for (c = b64; *c; c++) {
        if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n') {
            *o++ = *c;
        }
    }
    *o = '\0';
    if (strict_b64(clean) < 0) {
        return "not base64 (bad character, length or padding)";
    }
    dec = apr_palloc(p, (apr_size_t)apr_base64_decode_len(clean) + 1);
    declen = apr_base64_decode_binary((unsigned char *)dec, clean);
    dec[declen > 0 ? declen : 0] = '\0';
    for (c = dec; c < dec + declen && (*c == ' ' || *c == '\t' || *c == '\r'
                                      || *c == '\n'); c++)
        ;
    if (c >= dec + declen || *c != '<') {
        return "decoded data is not XML";
    }
    *xml = dec;
    *len = (apr_size_t)declen;
    return NULL;
}

static const char *lasso_check_name(int rc)
{
    switch (rc) {
    case LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND:
    case LASSO_PROFILE_ERROR_MISSING_ISSUER:
    case LASSO_PROFILE_ERROR_INVALID_ISSUER:
        return "issuer";
    case LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE:
        return "signature";
    case LASSO_PROFILE_ERROR_MISSING_ASSERTION:
        return "assertion-count";
    case LASSO_PROFILE_ERROR_MISSING_SUBJECT:
        return "subject";
    case LASSO_PROFILE_ERROR_INVALID_MSG:
    case LASSO_PROFILE_ERROR_UNSUPPORTED_PROFILE:
        return "xml";
    case LASSO_LOGIN_ERROR_STATUS_NOT_SUCCESS:
    case LASSO_LOGIN_ERROR_REQUEST_DENIED:
    case LASSO_PROFILE_ERROR_STATUS_NOT_SUCCESS:
    case LASSO_PROFILE_ERROR_MISSING_STATUS_CODE:
        return "status";
    }
    /* Lasso's XML-signature errors are numbered 101..199 (either sign). */
    if ((rc >= 100 && rc < 200) || (rc <= -100 && rc > -200)) {
        return "signature";
    }
    return "lasso";
}

/* Parse an optional time attribute; absent -> 0. */
static int opt_time(const char *s, apr_time_t *out)
{
    *out = 0;
    return !s || rsp_parse_time(out, s) == APR_SUCCESS;
}

/* The text values of the assertion's attributes (values that are XML
 * elements rather than text are skipped). */
static apr_array_header_t *attributes_of(apr_pool_t *p, LassoSaml2Assertion *a)
{
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(rsp_attribute_t));
    GList *st, *at, *v, *n;

    for (st = a->AttributeStatement; st; st = st->next) {
        if (!LASSO_IS_SAML2_ATTRIBUTE_STATEMENT(st->data)) {
            continue;
        }
        for (at = LASSO_SAML2_ATTRIBUTE_STATEMENT(st->data)->Attribute; at;
             at = at->next) {
            LassoSaml2Attribute *attr = at->data;
            if (!LASSO_IS_SAML2_ATTRIBUTE(attr) || !attr->Name) {
                continue;
            }
            for (v = attr->AttributeValue; v; v = v->next) {
                if (!LASSO_IS_SAML2_ATTRIBUTE_VALUE(v->data)) {
                    continue;
                }
                for (n = LASSO_SAML2_ATTRIBUTE_VALUE(v->data)->any; n;
                     n = n->next) {
                    if (LASSO_IS_MISC_TEXT_NODE(n->data)
                        && LASSO_MISC_TEXT_NODE(n->data)->content) {
                        rsp_attribute_t *x = apr_array_push(out);
                        x->name = apr_pstrdup(p, attr->Name);
                        x->value = apr_pstrdup(
                            p, LASSO_MISC_TEXT_NODE(n->data)->content);
                    }
                }
            }
        }
    }
    return out;
}

/* An EncryptedAssertion is decrypted only once a signed Response's
 * signature has been verified: Lasso decrypts first and refuses a broken
 * Response signature after. The same Lasso check of the same bytes, run
 * before it. */
static apr_status_t before_decrypt(apr_pool_t *p, rsp_lasso_server_t *server,
                                   const rsp_shape_t *shape, const char *xml,
                                   const char **check, const char **detail)
{
    LassoProvider *idp;
    int rc;

    if (!shape->response_signed) {
        return APR_SUCCESS; /* the decrypted assertion must be signed */
    }
    idp = shape->issuer ? lasso_server_get_provider(server, shape->issuer)
                        : NULL;
    if (!idp) {
        *check = "issuer";
        *detail = apr_psprintf(p, "Response Issuer %s is none of our IdPs",
                               shape->issuer ? shape->issuer : "(none)");
        return APR_EGENERAL;
    }
    rc = lasso_provider_verify_signature(idp, xml, "ID",
                                         LASSO_MESSAGE_FORMAT_XML);
    if (rc != 0) {
        *check = "signature";
        *detail = apr_psprintf(p, "the Response signature does not verify "
                               "(%s, lasso %d); nothing was decrypted",
                               lasso_strerror(rc), rc);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

#define REFUSE(c, ...) do {                                   \
        *check = (c);                                          \
        *detail = apr_psprintf(p, __VA_ARGS__);                \
        rv = APR_EGENERAL;                                     \
        goto done;                                             \
    } while (0)

apr_status_t rsp_saml_process_response(rsp_assertion_t **out, apr_pool_t *p,
                                       rsp_lasso_server_t *server,
                                       const char *b64,
                                       const rsp_check_params_t *cp,
                                       const char **check, const char **detail)
{
    LassoLogin *login = NULL;
    LassoSamlp2Response *resp;
    LassoSamlp2StatusResponse *sresp;
    LassoSaml2Assertion *a;
    LassoSaml2Subject *subj;
    LassoSaml2SubjectConfirmation *sc;
    LassoSaml2SubjectConfirmationData *scd;
    rsp_assertion_t *res;
    rsp_times_t t;
    rsp_window_verdict_t verdict;
    rsp_shape_t shape;
    const char *why, *xml = NULL;
    apr_size_t xml_len = 0;
    apr_status_t rv = APR_SUCCESS;
    GList *it;
    int rc, audience_ok = 0, n_audience = 0;

    if ((why = check_base64(p, b64, &xml, &xml_len)) != NULL) {
        *check = "base64";
        *detail = why;
        return APR_EGENERAL;
    }
    /* Before Lasso: the shape (one assertion, plaintext or encrypted; the
     * encryption algorithms) and SHA-1 signatures. */
    if (rsp_saml_shape(&shape, p, xml, xml_len, NULL, check, detail)
        != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (shape.weak && !rsp_saml_sha1_allowed(cp->sp, shape.issuer)) {
        REFUSE("weak-signature", "%s (SHA-1 is refused unless "
               "ReplaySPAllowSHA1 names the IdP %s)", shape.weak,
               shape.issuer ? shape.issuer : "(no Issuer)");
    }
    res = apr_pcalloc(p, sizeof(*res));
    res->weak_signature = shape.weak;
    if (shape.encrypted) {
        if ((rv = before_decrypt(p, server, &shape, xml, check, detail))
            != APR_SUCCESS) {
            return rv;
        }
        rsp_log(RSP_LOG_DEBUG, "decrypting the EncryptedAssertion from %s "
                "(data %s, key transport %s) with %d key%s: %s",
                shape.issuer, rsp_alg_name(shape.data_alg),
                rsp_alg_name(shape.key_alg), cp->sp->dec_keys->nelts,
                cp->sp->dec_keys->nelts == 1 ? "" : "s", cp->sp->dec_names);
    }
    login = lasso_login_new(server);
    if (!login) {
        REFUSE("lasso", "cannot create a Lasso login");
    }
    rc = lasso_login_process_authn_response_msg(login, (gchar *)b64);
    if (rc == LASSO_PROFILE_ERROR_MISSING_ASSERTION && shape.encrypted) {
        /* The one assertion was encrypted and Lasso has none: no key of
         * ours decrypted it (Lasso does not say so itself). */
        REFUSE("decrypt", "the EncryptedAssertion from %s (data %s, key "
               "transport %s, %d EncryptedKey) cannot be decrypted with any "
               "key of this SP (tried: %s)", shape.issuer,
               rsp_alg_name(shape.data_alg), rsp_alg_name(shape.key_alg),
               shape.keys, cp->sp->dec_names);
    }
    if (rc != 0) {
        REFUSE(lasso_check_name(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response)) {
        REFUSE("xml", "not a samlp:Response");
    }
    resp = LASSO_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response);
    sresp = LASSO_SAMLP2_STATUS_RESPONSE(resp);
    /* After Lasso: what it read is what we counted. One assertion, and
     * when the Response carried an EncryptedAssertion (and no plaintext
     * one), it is the decrypted one. */
    if (g_list_length(resp->Assertion) != 1
        || g_list_length(resp->EncryptedAssertion) != (guint)shape.encrypted) {
        REFUSE("assertion-count", "Lasso read %u assertions and %u "
               "EncryptedAssertion where the document has %d and %d (exactly "
               "one is accepted)", g_list_length(resp->Assertion),
               g_list_length(resp->EncryptedAssertion), shape.assertions,
               shape.encrypted);
    }
    a = LASSO_SAML2_ASSERTION(resp->Assertion->data);
    if (!a->ID || !*a->ID || !a->Issuer || !a->Issuer->content
        || !*a->Issuer->content) {
        REFUSE("issuer", "assertion without ID or Issuer");
    }
    if (shape.encrypted) {
        /* Its signature was inside the encryption: now it can be read. */
        xmlNode *orig = lasso_node_get_original_xmlnode(LASSO_NODE(a));
        const char *weak = orig ? rsp_saml_weak_signature(
                                      p, orig, "the decrypted assertion")
                                : NULL;
        if (weak && !rsp_saml_sha1_allowed(cp->sp, a->Issuer->content)) {
            REFUSE("weak-signature", "%s (SHA-1 is refused unless "
                   "ReplaySPAllowSHA1 names the IdP %s)", weak,
                   a->Issuer->content);
        }
        if (!res->weak_signature) {
            res->weak_signature = weak;
        }
        res->encrypted = 1;
    }
    /* Lasso found the issuer among our IdPs and checked that response and
     * assertion issuer agree. */
    if (sresp->Destination && strcmp(sresp->Destination, cp->acs_url) != 0) {
        REFUSE("destination", "Destination %s is not this ACS %s",
               sresp->Destination, cp->acs_url);
    }
    subj = a->Subject;
    if (!subj || !subj->NameID || !subj->NameID->content
        || !*subj->NameID->content) {
        REFUSE("subject", "no NameID in the Subject");
    }
    sc = subj->SubjectConfirmation;
    if (!sc || !sc->Method
        || strcmp(sc->Method, LASSO_SAML2_CONFIRMATION_METHOD_BEARER) != 0) {
        REFUSE("bearer", "subject confirmation method is %s, not bearer",
               sc && sc->Method ? sc->Method : "(none)");
    }
    scd = sc->SubjectConfirmationData;
    if (!scd || !scd->Recipient || strcmp(scd->Recipient, cp->acs_url) != 0) {
        REFUSE("recipient", "Recipient %s is not this ACS %s",
               scd && scd->Recipient ? scd->Recipient : "(none)", cp->acs_url);
    }
    /* The response and its assertion must not answer different requests
     * (either may carry InResponseTo; SAML profiles 4.1.4.2 and 4.1.4.3). */
    if (sresp->InResponseTo && scd->InResponseTo
        && strcmp(sresp->InResponseTo, scd->InResponseTo) != 0) {
        REFUSE("in-response-to", "response answers request %s, its assertion "
               "request %s", sresp->InResponseTo, scd->InResponseTo);
    }
    if ((sresp->InResponseTo && !*sresp->InResponseTo)
        || (scd->InResponseTo && !*scd->InResponseTo)) {
        REFUSE("in-response-to", "empty InResponseTo");
    }
    if (a->Conditions) {
        for (it = a->Conditions->AudienceRestriction; it; it = it->next) {
            LassoSaml2AudienceRestriction *ar = it->data;
            n_audience++;
            if (ar && ar->Audience && !strcmp(ar->Audience, cp->entity_id)) {
                audience_ok++;
            }
        }
    }
    /* Every AudienceRestriction must name us (SAML core 2.5.1.4). */
    if (n_audience == 0 || audience_ok != n_audience) {
        REFUSE("audience", "audience restriction does not name %s",
               cp->entity_id);
    }
    memset(&t, 0, sizeof(t));
    if (!opt_time(scd->NotBefore, &t.scd_not_before)
        || !opt_time(scd->NotOnOrAfter, &t.scd_not_on_or_after)
        || (a->Conditions
            && (!opt_time(a->Conditions->NotBefore, &t.conditions_not_before)
                || !opt_time(a->Conditions->NotOnOrAfter,
                             &t.conditions_not_on_or_after)))) {
        REFUSE("xml", "malformed time in Conditions or SubjectConfirmationData");
    }
    verdict = rsp_window_check(&t, cp->now, cp->skew_s, cp->max_window_s,
                               &res->window_end, &res->ttl_ms);
    if (verdict != RSP_WINDOW_OK) {
        REFUSE(rsp_window_verdict_name(verdict),
               "now %s, SubjectConfirmationData NotOnOrAfter %s, Conditions "
               "NotBefore %s NotOnOrAfter %s, skew %" APR_INT64_T_FMT
               " s, maximum window %" APR_INT64_T_FMT " s",
               rsp_format_time(p, cp->now),
               scd->NotOnOrAfter ? scd->NotOnOrAfter : "-",
               a->Conditions && a->Conditions->NotBefore ? a->Conditions->NotBefore : "-",
               a->Conditions && a->Conditions->NotOnOrAfter ? a->Conditions->NotOnOrAfter : "-",
               cp->skew_s, cp->max_window_s);
    }
    res->issuer = apr_pstrdup(p, a->Issuer->content);
    res->in_response_to = sresp->InResponseTo
        ? apr_pstrdup(p, sresp->InResponseTo)
        : scd->InResponseTo ? apr_pstrdup(p, scd->InResponseTo) : NULL;
    res->id = apr_pstrdup(p, a->ID);
    res->name_id = apr_pstrdup(p, subj->NameID->content);
    res->name_id_format = subj->NameID->Format
        ? apr_pstrdup(p, subj->NameID->Format) : NULL;
    res->attributes = attributes_of(p, a);
    for (it = a->AuthnStatement; it; it = it->next) {
        LassoSaml2AuthnStatement *as = it->data;
        apr_time_t snoa;
        if (!LASSO_IS_SAML2_AUTHN_STATEMENT(as)) {
            continue;
        }
        if (as->SessionIndex && *as->SessionIndex && !res->session_index) {
            res->session_index = apr_pstrdup(p, as->SessionIndex);
        }
        if (!opt_time(as->SessionNotOnOrAfter, &snoa)) {
            REFUSE("xml", "malformed SessionNotOnOrAfter");
        }
        if (snoa && (!res->session_not_on_or_after
                     || snoa < res->session_not_on_or_after)) {
            res->session_not_on_or_after = snoa;
        }
    }
    *out = res;

done:
    if (login) {
        g_object_unref(login);
    }
    return rv;
}

apr_status_t rsp_saml_authn_request(apr_pool_t *p, rsp_lasso_server_t *server,
                                    const char *idp_id, const char *acs_url,
                                    const char *relay_state, const char **url,
                                    const char **request_id, const char **err)
{
    LassoLogin *login = lasso_login_new(server);
    LassoSamlp2AuthnRequest *req;
    apr_status_t rv = APR_EGENERAL;
    int rc;

    if (!login) {
        *err = "cannot create a Lasso login";
        return APR_EGENERAL;
    }
    rc = lasso_login_init_authn_request(login, idp_id,
                                        LASSO_HTTP_METHOD_REDIRECT);
    if (rc != 0 || !LASSO_IS_SAMLP2_AUTHN_REQUEST(LASSO_PROFILE(login)->request)) {
        *err = apr_psprintf(p, "cannot start an AuthnRequest for %s: %s", idp_id,
                            rc ? lasso_strerror(rc) : "no SAML 2.0 request");
        goto done;
    }
    req = LASSO_SAMLP2_AUTHN_REQUEST(LASSO_PROFILE(login)->request);
    req->ForceAuthn = FALSE;
    req->IsPassive = FALSE;
    /* The answer comes to this replica's public ACS, by HTTP-POST; any
     * NameID format the IdP likes (Format left out: unspecified). */
    lasso_assign_string(req->AssertionConsumerServiceURL, acs_url);
    lasso_assign_string(req->ProtocolBinding, LASSO_SAML2_METADATA_BINDING_POST);
    if (req->NameIDPolicy) {
        lasso_release_string(req->NameIDPolicy->Format);
        req->NameIDPolicy->AllowCreate = TRUE;
    }
    lasso_assign_string(LASSO_PROFILE(login)->msg_relayState, relay_state);
    rc = lasso_login_build_authn_request_msg(login);
    if (rc != 0 || !LASSO_PROFILE(login)->msg_url
        || !LASSO_SAMLP2_REQUEST_ABSTRACT(req)->ID) {
        *err = apr_psprintf(p, "cannot build the AuthnRequest for %s: %s",
                            idp_id, rc ? lasso_strerror(rc) : "no URL");
        goto done;
    }
    *url = apr_pstrdup(p, LASSO_PROFILE(login)->msg_url);
    *request_id = apr_pstrdup(p, LASSO_SAMLP2_REQUEST_ABSTRACT(req)->ID);
    rv = APR_SUCCESS;

done:
    g_object_unref(login);
    return rv;
}

/* ---- single logout (HTTP-Redirect) ---- */

char *rsp_saml_idp_slo_url(apr_pool_t *p, rsp_lasso_server_t *server,
                           const char *idp_id)
{
    LassoProvider *prov = lasso_server_get_provider(server, idp_id);
    gchar *url;
    char *out = NULL;

    if (!prov) {
        return NULL;
    }
    url = lasso_provider_get_metadata_one(prov, "SingleLogoutService HTTP-Redirect");
    if (url && *url) {
        out = apr_pstrdup(p, url);
    }
    g_free(url);
    return out;
}

/* ---- HTTP-Redirect signatures, checked here: Lasso's own check loses
 * memory on every message (measured: about 250 bytes), so Lasso is given
 * the query without SigAlg and Signature and told not to look for them. */

typedef struct {
    const char *stripped;   /* the query without SigAlg and Signature */
    const char *signed_part; /* the octets the signature covers */
    const char *sig_alg;    /* decoded */
    const char *signature;  /* base64, decoded from the URL */
} redirect_msg_t;

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* application/x-www-form-urlencoded value; NULL on a bad escape or NUL. */
static const char *url_decode(apr_pool_t *p, const char *in)
{
    char *out = apr_palloc(p, strlen(in) + 1), *o = out;

    for (; *in; in++) {
        if (*in == '+') {
            *o++ = ' ';
        }
        else if (*in == '%') {
            int h = hexval(in[1]), l = h < 0 ? -1 : hexval(in[2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0)) {
                return NULL;
            }
            *o++ = (char)(h * 16 + l);
            in += 2;
        }
        else {
            *o++ = *in;
        }
    }
    *o = '\0';
    return out;
}

/* Split a raw query; NULL on success, else why it is refused. */
static const char *split_redirect(apr_pool_t *p, const char *query,
                                  redirect_msg_t *m)
{
    const char *msg = NULL, *relay = NULL, *alg = NULL, *sig = NULL;
    char *copy = apr_pstrdup(p, query), *pair, *state = NULL;
    apr_array_header_t *keep = apr_array_make(p, 4, sizeof(char *));

    for (pair = apr_strtok(copy, "&", &state); pair;
         pair = apr_strtok(NULL, "&", &state)) {
        const char **slot = NULL;
        if (!strncmp(pair, "SAMLRequest=", 12)
            || !strncmp(pair, "SAMLResponse=", 13)) {
            slot = &msg;
        }
        else if (!strncmp(pair, "RelayState=", 11)) {
            slot = &relay;
        }
        else if (!strncmp(pair, "SigAlg=", 7)) {
            slot = &alg;
        }
        else if (!strncmp(pair, "Signature=", 10)) {
            slot = &sig;
        }
        if (slot) {
            if (*slot) {
                return "a SAML query parameter given twice";
            }
            *slot = pair;
        }
        if (slot != &alg && slot != &sig) {
            APR_ARRAY_PUSH(keep, char *) = pair;
        }
    }
    if (!msg) {
        return "no SAMLRequest or SAMLResponse";
    }
    if (!alg || !sig) {
        return "the message is not signed (no SigAlg or Signature)";
    }
    m->stripped = apr_array_pstrcat(p, keep, '&');
    /* SAML bindings 3.4.4.1: the parameters as received, in this order. */
    m->signed_part = relay ? apr_pstrcat(p, msg, "&", relay, "&", alg, NULL)
                           : apr_pstrcat(p, msg, "&", alg, NULL);
    m->sig_alg = url_decode(p, alg + 7);
    m->signature = url_decode(p, sig + 10);
    if (!m->sig_alg || !m->signature) {
        return "bad escape in SigAlg or Signature";
    }
    return NULL;
}

#define RSA_SHA1_URI "http://www.w3.org/2000/09/xmldsig#rsa-sha1"

static const EVP_MD *redirect_md(const char *alg)
{
    static const char pre[] = "http://www.w3.org/2001/04/xmldsig-more#rsa-";

    if (!strcmp(alg, RSA_SHA1_URI)) {
        return EVP_sha1();
    }
    if (strncmp(alg, pre, sizeof(pre) - 1) != 0) {
        return NULL;
    }
    alg += sizeof(pre) - 1;
    return !strcmp(alg, "sha256") ? EVP_sha256()
         : !strcmp(alg, "sha384") ? EVP_sha384()
         : !strcmp(alg, "sha512") ? EVP_sha512() : NULL;
}

/* NULL when one of the IdP's signing certificates verifies m. RSA-SHA1
 * only where ReplaySPAllowSHA1 names the IdP, and then *weak says so. */
static const char *verify_redirect(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                   const char *idp, const redirect_msg_t *m,
                                   const char **weak)
{
    const EVP_MD *md = redirect_md(m->sig_alg);
    apr_array_header_t *certs = NULL;
    unsigned char *sig;
    int i, siglen;

    *weak = NULL;
    if (md == EVP_sha1() && !rsp_saml_sha1_allowed(sp, idp)) {
        return apr_psprintf(p, "signature algorithm %s is not accepted (SHA-1 "
                            "is refused unless ReplaySPAllowSHA1 names the IdP "
                            "%s)", m->sig_alg, idp);
    }
    if (!md) {
        return apr_psprintf(p, "signature algorithm %s is not accepted "
                            "(RSA with SHA-256, -384 or -512)", m->sig_alg);
    }
    if (md == EVP_sha1()) {
        *weak = "the HTTP-Redirect signature uses rsa-sha1";
    }
    for (i = 0; i < sp->idp_ids->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(sp->idp_ids, i, const char *), idp)) {
            certs = APR_ARRAY_IDX(sp->idp_certs, i, apr_array_header_t *);
        }
    }
    if (!certs || certs->nelts == 0) {
        return apr_psprintf(p, "no signing certificate for %s in its metadata",
                            idp);
    }
    if (strict_b64(m->signature) < 0) {
        return "Signature is not base64";
    }
    sig = apr_palloc(p, (apr_size_t)apr_base64_decode_len(m->signature));
    siglen = apr_base64_decode_binary(sig, m->signature);
    for (i = 0; i < certs->nelts; i++) {
        const der_t *d = &APR_ARRAY_IDX(certs, i, der_t);
        const unsigned char *q = d->der;
        X509 *x = d2i_X509(NULL, &q, d->len);
        EVP_PKEY *key = x ? X509_get0_pubkey(x) : NULL;
        EVP_MD_CTX *ctx = key ? EVP_MD_CTX_new() : NULL;
        int ok = ctx && siglen > 0
            && EVP_DigestVerifyInit(ctx, NULL, md, NULL, key) == 1
            && EVP_DigestVerify(ctx, sig, (size_t)siglen,
                                (const unsigned char *)m->signed_part,
                                strlen(m->signed_part)) == 1;
        EVP_MD_CTX_free(ctx);
        X509_free(x);
        if (ok) {
            return NULL;
        }
    }
    return apr_psprintf(p, "the signature does not verify with %s's "
                        "certificate%s", idp, certs->nelts > 1 ? "s" : "");
}

/* Lasso builds and validates logout messages against a session holding
 * the IdP's assertion: a minimal one (issuer, NameID, SessionIndex) is
 * all it reads. */
static int set_session(LassoProfile *profile, const char *idp_id,
                       const char *name_id, const char *format,
                       const char *session_index)
{
    LassoSaml2Assertion *a = LASSO_SAML2_ASSERTION(lasso_saml2_assertion_new());
    LassoSaml2NameID *nid =
        LASSO_SAML2_NAME_ID(lasso_saml2_name_id_new_with_string((char *)name_id));
    LassoSaml2AuthnStatement *st =
        LASSO_SAML2_AUTHN_STATEMENT(lasso_saml2_authn_statement_new());
    LassoSession *session = lasso_session_new();
    gchar *dump;
    int rc;

    if (format) {
        lasso_assign_string(nid->Format, format);
    }
    a->Issuer = LASSO_SAML2_NAME_ID(
        lasso_saml2_name_id_new_with_string((char *)idp_id));
    a->Subject = LASSO_SAML2_SUBJECT(lasso_saml2_subject_new());
    a->Subject->NameID = nid;
    /* Lasso finds the NameID only through an AuthnStatement with a
     * SessionIndex: a stand-in when there is none (callers remove it from
     * what they send). */
    lasso_assign_string(st->SessionIndex,
                        session_index ? session_index : "rsp-none");
    a->AuthnStatement = g_list_append(NULL, st);
    rc = lasso_session_add_assertion(session, idp_id, LASSO_NODE(a));
    g_object_unref(a);
    if (rc == 0) {
        dump = lasso_session_dump(session);
        rc = dump ? lasso_profile_set_session_from_dump(profile, dump)
                  : LASSO_ERROR_UNDEFINED;
        g_free(dump);
    }
    g_object_unref(session);
    return rc;
}

apr_status_t rsp_saml_logout_request(apr_pool_t *p, rsp_lasso_server_t *server,
                                     const rsp_logout_subject_t *who,
                                     const char *relay_state, const char **url,
                                     const char **request_id, const char **err)
{
    LassoLogout *logout = lasso_logout_new(server);
    LassoProfile *profile;
    apr_status_t rv = APR_EGENERAL;
    int rc;

    if (!logout) {
        *err = "cannot create a Lasso logout";
        return APR_EGENERAL;
    }
    profile = LASSO_PROFILE(logout);
    if ((rc = set_session(profile, who->idp, who->name_id, who->name_id_format,
                          who->session_index)) != 0
        || (rc = lasso_logout_init_request(logout, (char *)who->idp,
                                           LASSO_HTTP_METHOD_REDIRECT)) != 0) {
        *err = apr_psprintf(p, "cannot start a LogoutRequest to %s: %s",
                            who->idp, lasso_strerror(rc));
        goto done;
    }
    if (!who->session_index
        && LASSO_IS_SAMLP2_LOGOUT_REQUEST(profile->request)) {
        LassoSamlp2LogoutRequest *lr = LASSO_SAMLP2_LOGOUT_REQUEST(profile->request);
        lasso_samlp2_logout_request_set_session_indexes(lr, NULL);
        lasso_release_string(lr->SessionIndex);
    }
    lasso_assign_string(profile->msg_relayState, relay_state);
    rc = lasso_logout_build_request_msg(logout);
    if (rc != 0 || !profile->msg_url
        || !LASSO_IS_SAMLP2_REQUEST_ABSTRACT(profile->request)) {
        *err = apr_psprintf(p, "cannot build the LogoutRequest to %s: %s",
                            who->idp, rc ? lasso_strerror(rc) : "no URL");
        goto done;
    }
    *url = apr_pstrdup(p, profile->msg_url);
    *request_id = apr_pstrdup(p, LASSO_SAMLP2_REQUEST_ABSTRACT(profile->request)->ID);
    rv = APR_SUCCESS;

done:
    g_object_unref(logout);
    return rv;
}

static const char *status_of(LassoSamlp2StatusResponse *sr)
{
    if (sr->Status && sr->Status->StatusCode && sr->Status->StatusCode->Value) {
        return sr->Status->StatusCode->Value;
    }
    return NULL;
}

apr_status_t rsp_saml_logout_response_in(apr_pool_t *p,
                                         rsp_lasso_server_t *server,
                                         const rsp_saml_sp_t *sp,
                                         const char *query,
                                         rsp_logout_response_t *out,
                                         const char **check,
                                         const char **detail)
{
    LassoLogout *logout = NULL;
    LassoProfile *profile;
    LassoSamlp2StatusResponse *sr;
    redirect_msg_t m;
    apr_status_t rv = APR_SUCCESS;
    const char *why;
    int rc;

    if ((why = split_redirect(p, query, &m)) != NULL) {
        REFUSE(strstr(why, "signed") ? "signature" : "binding", "%s", why);
    }
    if (!(logout = lasso_logout_new(server))) {
        REFUSE("lasso", "cannot create a Lasso logout");
    }
    profile = LASSO_PROFILE(logout);
    lasso_profile_set_signature_verify_hint(
        profile, LASSO_PROFILE_SIGNATURE_VERIFY_HINT_IGNORE);
    rc = lasso_logout_process_response_msg(logout, (gchar *)m.stripped);
    /* A non-Success status is an answer, not a refusal. */
    if (rc != 0 && rc != LASSO_PROFILE_ERROR_STATUS_NOT_SUCCESS
        && rc != LASSO_LOGOUT_ERROR_REQUEST_DENIED
        && rc != LASSO_LOGOUT_ERROR_UNKNOWN_PRINCIPAL
        && rc != LASSO_LOGOUT_ERROR_PARTIAL_LOGOUT
        && rc != LASSO_PROFILE_ERROR_REQUEST_DENIED
        && rc != LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE) {
        REFUSE(lasso_check_name(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_STATUS_RESPONSE(profile->response)) {
        REFUSE("xml", "not a LogoutResponse");
    }
    sr = LASSO_SAMLP2_STATUS_RESPONSE(profile->response);
    if (!sr->Issuer || !sr->Issuer->content || !sr->InResponseTo
        || !*sr->InResponseTo || !status_of(sr)) {
        REFUSE("xml", "LogoutResponse without Issuer, InResponseTo or Status");
    }
    if ((why = verify_redirect(p, sp, sr->Issuer->content, &m,
                               &out->weak_signature)) != NULL) {
        REFUSE("signature", "%s", why);
    }
    out->issuer = apr_pstrdup(p, sr->Issuer->content);
    out->in_response_to = apr_pstrdup(p, sr->InResponseTo);
    out->status = apr_pstrdup(p, status_of(sr));

done:
    if (logout) {
        g_object_unref(logout);
    }
    return rv;
}

struct rsp_slo_t {
    LassoLogout *logout;
};

static apr_status_t slo_cleanup(void *data)
{
    rsp_slo_t *slo = data;

    if (slo->logout) {
        g_object_unref(slo->logout);
        slo->logout = NULL;
    }
    return APR_SUCCESS;
}

void rsp_saml_slo_free(rsp_slo_t *slo, apr_pool_t *p)
{
    apr_pool_cleanup_run(p, slo, slo_cleanup);
}

apr_status_t rsp_saml_logout_request_in(rsp_slo_t **out, apr_pool_t *p,
                                        rsp_lasso_server_t *server,
                                        const rsp_saml_sp_t *sp,
                                        const char *query,
                                        rsp_logout_request_t *req,
                                        const char **check,
                                        const char **detail)
{
    rsp_slo_t *slo = apr_pcalloc(p, sizeof(*slo));
    LassoSamlp2LogoutRequest *lr;
    LassoSamlp2RequestAbstract *ra;
    LassoProfile *profile;
    redirect_msg_t m;
    apr_status_t rv = APR_SUCCESS;
    const char *why;
    GList *it, *indexes;
    int rc;

    *out = NULL;
    if ((why = split_redirect(p, query, &m)) != NULL) {
        *check = strstr(why, "signed") ? "signature" : "binding";
        *detail = why;
        return APR_EGENERAL;
    }
    slo->logout = lasso_logout_new(server);
    if (!slo->logout) {
        *check = "lasso";
        *detail = "cannot create a Lasso logout";
        return APR_EGENERAL;
    }
    apr_pool_cleanup_register(p, slo, slo_cleanup, apr_pool_cleanup_null);
    profile = LASSO_PROFILE(slo->logout);
    lasso_profile_set_signature_verify_hint(
        profile, LASSO_PROFILE_SIGNATURE_VERIFY_HINT_IGNORE);
    rc = lasso_logout_process_request_msg(slo->logout, (gchar *)m.stripped);
    if (rc != 0 && rc != LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE) {
        REFUSE(lasso_check_name(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_LOGOUT_REQUEST(profile->request)) {
        REFUSE("xml", "not a LogoutRequest");
    }
    lr = LASSO_SAMLP2_LOGOUT_REQUEST(profile->request);
    ra = LASSO_SAMLP2_REQUEST_ABSTRACT(profile->request);
    if (!ra->Issuer || !ra->Issuer->content || !ra->ID || !*ra->ID) {
        REFUSE("xml", "LogoutRequest without Issuer or ID");
    }
    if ((why = verify_redirect(p, sp, ra->Issuer->content, &m,
                               &req->weak_signature)) != NULL) {
        REFUSE("signature", "%s", why);
    }
    if (!lr->NameID || !lr->NameID->content || !*lr->NameID->content) {
        REFUSE("subject", "LogoutRequest without a NameID (an encrypted ID "
               "is not supported)");
    }
    req->issuer = apr_pstrdup(p, ra->Issuer->content);
    req->id = apr_pstrdup(p, ra->ID);
    req->name_id = apr_pstrdup(p, lr->NameID->content);
    req->name_id_format = lr->NameID->Format
        ? apr_pstrdup(p, lr->NameID->Format) : NULL;
    if (!ra->IssueInstant
        || rsp_parse_time(&req->issue_instant, ra->IssueInstant) != APR_SUCCESS
        || !opt_time(lr->NotOnOrAfter, &req->not_on_or_after)) {
        REFUSE("xml", "LogoutRequest without a valid IssueInstant, or with a "
               "malformed NotOnOrAfter");
    }
    req->session_indexes = apr_array_make(p, 2, sizeof(const char *));
    indexes = lasso_samlp2_logout_request_get_session_indexes(lr);
    for (it = indexes; it; it = it->next) {
        if (it->data && *(const char *)it->data) {
            APR_ARRAY_PUSH(req->session_indexes, const char *) =
                apr_pstrdup(p, it->data);
        }
    }
    g_list_free_full(indexes, g_free);
    *out = slo;

done:
    if (rv != APR_SUCCESS) {
        rsp_saml_slo_free(slo, p);
    }
    return rv;
}

apr_status_t rsp_saml_logout_answer(rsp_slo_t *slo, apr_pool_t *p,
                                    const rsp_logout_request_t *req,
                                    const char **url, const char **err)
{
    LassoProfile *profile = LASSO_PROFILE(slo->logout);
    const char *first = req->session_indexes->nelts
        ? APR_ARRAY_IDX(req->session_indexes, 0, const char *) : NULL;
    int rc;

    /* The sessions are gone from the store: answer Success, through a
     * session Lasso can validate the request against. */
    if ((rc = set_session(profile, req->issuer, req->name_id,
                          req->name_id_format, first)) != 0
        || (rc = lasso_logout_validate_request(slo->logout)) != 0
        || (rc = lasso_logout_build_response_msg(slo->logout)) != 0
        || !profile->msg_url) {
        *err = apr_psprintf(p, "cannot build the LogoutResponse to %s: %s",
                            req->issuer, rc ? lasso_strerror(rc) : "no URL");
        return APR_EGENERAL;
    }
    *url = apr_pstrdup(p, profile->msg_url);
    return APR_SUCCESS;
}
