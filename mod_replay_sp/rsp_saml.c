/* Loading an SP definition and building Lasso servers; the diagnostics
 * of the XML stack. The SP's metadata and what is read from the IdPs'
 * metadata: rsp_saml_metadata.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_base64.h>
#include <apr_file_io.h>
#include <apr_strings.h>

#include <lasso/lasso.h>
#include <lasso/lasso_config.h>
#include <lasso/logging.h>
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
#include "rsp_saml_int.h"
#include "rsp_saml_shape.h"
#include "rsp_saml_decrypt.h"


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

/* Lasso's lasso_log formats every trace (and the date, through
 * localtime) before GLib hands it to glib_log above, which drops the debug
 * and info ones: a tenth of a sign-in's instructions went to traces
 * nobody sees. This definition takes the place of Lasso's in the module's
 * process (liblasso calls lasso_log through its PLT, and the module comes
 * before liblasso when httpd loads it): those traces now cost a test and
 * a return, and the others reach glib_log as before, without the date
 * (our log has its own). */
void lasso_log(GLogLevelFlags level, const char *filename, int line,
               const char *function, const char *format, ...)
{
    char msg[1024];
    va_list args;

    if (level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO)) {
        return;
    }
    va_start(args, format);
    g_vsnprintf(msg, sizeof(msg), format, args);
    va_end(args);
    if (level & G_LOG_LEVEL_CRITICAL) {
        g_log(LASSO_LOG_DOMAIN, level, "(%s/%s:%d) %s", filename, function, line, msg);
    }
    else {
        g_log(LASSO_LOG_DOMAIN, level, "%s", msg);
    }
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

apr_status_t rsp_saml_read_file(const char **out, apr_pool_t *p,
                                  const char *path, apr_off_t max,
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
    if (rv == APR_SUCCESS && (fi.size <= 0 || fi.size > max)) {
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

static apr_status_t read_file(const char **out, apr_pool_t *p, const char *path,
                              const char **err)
{
    return rsp_saml_read_file(out, p, path, MAX_FILE_SIZE, err);
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
    sp->dec_certs = apr_array_make(p, n ? n : 1, sizeof(const char *));
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
        APR_ARRAY_PUSH(sp->dec_certs, const char *) = cp;
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
    sp->dec_certs = apr_array_make(p, n ? n : 1, sizeof(const char *));
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
        APR_ARRAY_PUSH(sp->dec_certs, const char *) = sp->cert_pem;
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
        APR_ARRAY_PUSH(sp->dec_certs, const char *) = cp;
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

/* What every server of an SP is built from, parsed once per load: PEM
 * parsing through OpenSSL 3's decoders costs millions of instructions a
 * key, and Lasso copies (xmlSecKeyDuplicate) what it is given. The IdPs'
 * keys: rsp_saml_idps.c. */
static apr_status_t keys_free(void *data)
{
    struct rsp_saml_keys *k = data;

    if (k->signing) {
        g_object_unref(k->signing);
    }
    return APR_SUCCESS;
}

LassoKey *rsp_saml_key_from_pem(const char *pem)
{
    return lasso_key_new_for_signature_from_memory(
        pem, strlen(pem), NULL, LASSO_SIGNATURE_METHOD_RSA_SHA256, NULL);
}

static apr_status_t keys_load(struct rsp_saml_keys **out, apr_pool_t *p,
                              const rsp_saml_sp_t *sp, const char **err)
{
    struct rsp_saml_keys *k = apr_pcalloc(p, sizeof(*k));

    apr_pool_cleanup_register(p, k, keys_free, apr_pool_cleanup_null);
    if (rsp_saml_decrypt_keys_load(&k->dec, p, sp->dec_keys,
                                   sp->dec_certs, err)
        != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (sp->key_pem && !(k->signing = rsp_saml_key_from_pem(sp->key_pem))) {
        *err = "Lasso cannot load the signing key";
        return APR_EGENERAL;
    }
    *out = k;
    return APR_SUCCESS;
}

apr_status_t rsp_saml_sp_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err)
{
    apr_status_t rv;

    if ((rv = load_keys(sp, p, input, err)) != APR_SUCCESS) {
        return rv;
    }
    /* Our own metadata, for our LassoServer: the ACS location in it is not
     * used to validate anything (Destination and Recipient are checked
     * against the request's public URL). */
    sp->sp_metadata = rsp_saml_metadata_xml(p, sp, sp->entity_id, 0);
    *input = RSP_SP_INPUT_OTHER;
    if ((rv = keys_load(&sp->keys, p, sp, err)) != APR_SUCCESS) {
        return rv;
    }
    /* the IdPs asked for one by one (MDQ), and their first generation,
     * proven with one server */
    if (sp->mdq_url && (rv = rsp_saml_mdq_load(sp, p, err)) != APR_SUCCESS) {
        return rv;
    }
    return rsp_saml_idps_load(sp, p, input, err);
}

apr_status_t rsp_saml_server_new(rsp_lasso_server_t **out,
                                 const rsp_saml_sp_t *sp, const char **err)
{
    LassoServer *server;

    /* No certificate: given one, Lasso hands it to xmlsec as a file name
     * first, and xmlsec leaks a BIO on every signature when that fails.
     * Nothing needs it: HTTP-Redirect signatures carry no KeyInfo, and our
     * metadata is built from the certificate file. */
    /* No key either: Lasso would make the signing key a decryption key.
     * And no decryption key: this module decrypts EncryptedAssertions
     * (rsp_saml_decrypt) and EncryptedIDs (rsp_saml_encrypted_id_take)
     * itself, with dec_keys in order; Lasso, given none, decrypts
     * nothing (an EncryptedID stops it with
     * LASSO_PROFILE_ERROR_MISSING_ENCRYPTION_PRIVATE_KEY). */
    server = lasso_server_new_from_buffers(sp->sp_metadata, NULL, NULL, NULL);
    if (!server) {
        *err = "Lasso cannot build a server from our metadata";
        return APR_EGENERAL;
    }
    /* Lasso's default is RSA-SHA1: the messages we sign (AuthnRequests
     * when asked for, logout messages) use RSA-SHA256. Every IdP is
     * given the loaded key to sign what we send it; server->private_key
     * stays for Lasso's paths that name no IdP (which parse it again). */
    server->signature_method = LASSO_SIGNATURE_METHOD_RSA_SHA256;
    lasso_assign_string(server->private_key, sp->key_pem);
    *out = server;
    return APR_SUCCESS;
}

const apr_array_header_t *rsp_saml_decryption_keys(const rsp_saml_sp_t *sp)
{
    return sp->keys ? sp->keys->dec : NULL;
}

void rsp_saml_server_free(rsp_lasso_server_t *server)
{
    if (server) {
        g_object_unref(server);
    }
}

/* The check= name of a Lasso error. */
const char *rsp_saml_check_of(int rc)
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
int rsp_saml_opt_time(const char *s, apr_time_t *out)
{
    *out = 0;
    return !s || rsp_parse_time(out, s) == APR_SUCCESS;
}
