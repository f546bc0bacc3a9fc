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
#include <apr_thread_mutex.h>

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
#include "rsp_md_verify.h"


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

static apr_status_t read_file_max(const char **out, apr_pool_t *p,
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
    return read_file_max(out, p, path, MAX_FILE_SIZE, err);
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

/* What every server of an SP is built from. The SP's own keys are
 * parsed once per load: PEM parsing through OpenSSL 3's decoders costs
 * millions of instructions a key, and Lasso copies (xmlSecKeyDuplicate)
 * what it is given. An IdP's keys are decoded on its first use in a
 * process and kept for the process's other threads (at most
 * RSP_PROCESS_IDP_KEYS IdPs' worth), so that an aggregate of thousands
 * of IdPs costs nothing for those nobody signs in from. Per process by
 * design: each child has its own copy of this, filled as it is used. */
typedef struct {
    const char *first_pem;          /* what Lasso names the provider's key */
    apr_array_header_t *keys;       /* LassoKey *, one per certificate */
} idp_keys_t;

struct rsp_saml_keys {
    LassoKey *signing;           /* NULL for a guard */
    apr_array_header_t *dec;     /* rsp_dec_key_t *: dec_keys and
                                  * dec_certs, for rsp_saml_decrypt.c
                                  * (read by every thread) */
    apr_thread_mutex_t *lock;    /* guards what follows */
    apr_pool_t *idp_pool;        /* unmanaged: the IdPs' keys */
    idp_keys_t **idp;            /* by rsp_idp_t.pos; NULL: not loaded */
    int n_idp, loaded, max;
};

static void idp_keys_drop(struct rsp_saml_keys *k)
{
    int i, j;

    for (i = 0; i < k->n_idp; i++) {
        idp_keys_t *e = k->idp[i];
        for (j = 0; e && j < e->keys->nelts; j++) {
            g_object_unref(APR_ARRAY_IDX(e->keys, j, LassoKey *));
        }
        k->idp[i] = NULL;
    }
    k->loaded = 0;
    apr_pool_clear(k->idp_pool);
}

static apr_status_t keys_free(void *data)
{
    struct rsp_saml_keys *k = data;

    if (k->signing) {
        g_object_unref(k->signing);
    }
    if (k->idp_pool) {
        idp_keys_drop(k);
        apr_pool_destroy(k->idp_pool);
    }
    return APR_SUCCESS;
}

static LassoKey *key_from_pem(const char *pem)
{
    return lasso_key_new_for_signature_from_memory(
        pem, strlen(pem), NULL, LASSO_SIGNATURE_METHOD_RSA_SHA256, NULL);
}

static apr_status_t keys_load(struct rsp_saml_keys **out, apr_pool_t *p,
                              const rsp_saml_sp_t *sp, const char **err)
{
    struct rsp_saml_keys *k = apr_pcalloc(p, sizeof(*k));
    apr_status_t rv;

    if ((rv = apr_thread_mutex_create(&k->lock, APR_THREAD_MUTEX_DEFAULT, p))
            != APR_SUCCESS
        || (rv = apr_pool_create_unmanaged_ex(&k->idp_pool, NULL, NULL))
            != APR_SUCCESS) {
        *err = "cannot create the IdP key cache";
        return rv;
    }
    k->n_idp = rsp_idp_count(sp->idps);
    k->max = sp->process_idp_keys_max > 0 ? sp->process_idp_keys_max
                                          : RSP_PROCESS_IDP_KEYS;
    k->idp = apr_pcalloc(p, sizeof(idp_keys_t *) * (k->n_idp ? k->n_idp : 1));
    apr_pool_cleanup_register(p, k, keys_free, apr_pool_cleanup_null);
    if (rsp_saml_decrypt_keys_load(&k->dec, p, sp->dec_keys,
                                   sp->dec_certs, err)
        != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (sp->key_pem && !(k->signing = key_from_pem(sp->key_pem))) {
        *err = "Lasso cannot load the signing key";
        return APR_EGENERAL;
    }
    *out = k;
    return APR_SUCCESS;
}

/* The IdP's keys, decoded now if this process has not yet: NULL when one
 * of them cannot be loaded. Called with k->lock held. */
static const idp_keys_t *idp_keys(struct rsp_saml_keys *k, const rsp_idp_t *idp)
{
    apr_array_header_t *pems;
    idp_keys_t *e;
    int i;

    if (k->idp[idp->pos]) {
        return k->idp[idp->pos];
    }
    if (k->loaded >= k->max) {
        idp_keys_drop(k);
    }
    pems = rsp_saml_idp_public_keys(k->idp_pool, idp->certs);
    e = apr_pcalloc(k->idp_pool, sizeof(*e));
    e->keys = apr_array_make(k->idp_pool, pems->nelts ? pems->nelts : 1,
                             sizeof(LassoKey *));
    e->first_pem = pems->nelts ? APR_ARRAY_IDX(pems, 0, const char *) : NULL;
    for (i = 0; i < pems->nelts; i++) {
        LassoKey *key = key_from_pem(APR_ARRAY_IDX(pems, i, const char *));
        if (!key) {
            for (i = 0; i < e->keys->nelts; i++) {
                g_object_unref(APR_ARRAY_IDX(e->keys, i, LassoKey *));
            }
            rsp_log(RSP_LOG_ERR, "IdP %s: signing key %d of its "
                    "metadata cannot be loaded: its responses are refused "
                    "(check=issuer)", idp->entity_id, i + 1);
            return NULL;
        }
        APR_ARRAY_PUSH(e->keys, LassoKey *) = key;
    }
    k->idp[idp->pos] = e;
    k->loaded++;
    return e;
}

static apr_status_t pool_gone(void *pool)
{
    apr_pool_destroy(pool);
    return APR_SUCCESS;
}

apr_status_t rsp_saml_sp_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err)
{
    apr_status_t rv;
    rsp_lasso_server_t *server;
    int i, rc;
    const char *first;

    if ((rv = load_keys(sp, p, input, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_IDP;
    /* Our own metadata, for our LassoServer: the ACS location in it is not
     * used to validate anything (Destination and Recipient are checked
     * against the request's public URL). */
    sp->sp_metadata = rsp_saml_metadata_xml(p, sp, sp->entity_id, 0);
    sp->idps = rsp_idp_index_make(p);
    for (i = 0; i < sp->idp_files->nelts; i++) {
        const char *path = APR_ARRAY_IDX(sp->idp_files, i, const char *);
        const char *file, *why = NULL;
        const char *cert = sp->idp_file_certs
                           ? APR_ARRAY_IDX(sp->idp_file_certs, i, const char *)
                           : NULL;
        apr_time_t valid_until = 0;
        apr_pool_t *text;

        /* The file's text only while it is read (the index keeps what is
         * used of it), in memory of its own that goes back to the system
         * after: an aggregate is tens of megabytes. */
        if ((rv = apr_pool_create_unmanaged_ex(&text, NULL, NULL))
            != APR_SUCCESS) {
            return rv;
        }
        apr_pool_cleanup_register(p, text, pool_gone, apr_pool_cleanup_null);
        if ((rv = read_file_max(&file, text, path, RSP_MD_MAX_SIZE, err))
            != APR_SUCCESS) {
            return rv;
        }
        /* A signed file: its signature and validUntil before anything in
         * it is read. */
        if (cert) {
            const char *pem;
            if ((rv = read_file(&pem, p, cert, err)) != APR_SUCCESS) {
                return rv;
            }
            if (rsp_md_verify(p, file, strlen(file), pem, apr_time_now(),
                              sp->md_max_validity ? sp->md_max_validity
                                                  : RSP_MD_MAX_VALIDITY,
                              &valid_until, &why) != APR_SUCCESS) {
                *err = apr_psprintf(p, "%s (signed by %s): %s", path, cert, why);
                return APR_EINVAL;
            }
        }
        /* One IdP, or a federation's aggregate of many: parsed once. */
        rv = rsp_idp_index_add(sp->idps, p, file, strlen(file), valid_until,
                               sp->idp_include, sp->idp_exclude, &why);
        apr_pool_cleanup_run(p, text, pool_gone);
        if (rv != APR_SUCCESS) {
            *err = apr_psprintf(p, "%s: %s", path, why);
            return APR_EINVAL;
        }
    }
    if (!rsp_idp_count(sp->idps)) {
        *err = "no IdP is left once ReplaySPIdPInclude and ReplaySPIdPExclude "
               "have chosen";
        return APR_EINVAL;
    }
    *input = RSP_SP_INPUT_SHA1;
    for (i = 0; sp->sha1_idps && i < sp->sha1_idps->nelts; i++) {
        const char *idp = APR_ARRAY_IDX(sp->sha1_idps, i, const char *);
        if (!rsp_idp_find(sp->idps, idp)) {
            *err = apr_psprintf(p, "%s is none of this SP's IdPs (their "
                                "entityIDs, from ReplaySPIdPMetadataFile)", idp);
            return APR_EINVAL;
        }
    }
    *input = RSP_SP_INPUT_OTHER;
    if (sp->default_idp && !rsp_idp_find(sp->idps, sp->default_idp)) {
        *err = apr_psprintf(p, "ReplaySPDefaultIdP %s is none of this SP's "
                            "IdPs (their entityIDs, from "
                            "ReplaySPIdPMetadataFile)", sp->default_idp);
        return APR_EINVAL;
    }
    if ((rv = keys_load(&sp->keys, p, sp, err)) != APR_SUCCESS) {
        return rv;
    }
    /* Build one server, with the IdP a sign-in goes to first, now: what a
     * worker will do is proven here. */
    if ((rv = rsp_saml_server_new(&server, sp, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_IDP;
    first = sp->default_idp ? sp->default_idp
                            : rsp_idp_at(sp->idps, 0)->entity_id;
    rc = rsp_saml_server_idp(server, sp, first);
    rsp_saml_server_free(server);
    if (rc != 0) {
        *err = apr_psprintf(p, "IdP %s: %s", first, lasso_strerror(rc));
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* One IdP for our server: its metadata without keys, its signing keys as
 * bare keys (copies of the loaded ones), and our signing key for what we
 * send it. */
static int add_idp(LassoServer *server, const char *md,
                   const idp_keys_t *keys, LassoKey *signing)
{
    LassoProvider *prov = lasso_provider_new_from_buffer(
        LASSO_PROVIDER_ROLE_IDP, md, NULL, NULL);
    int i, rc = 0;

    if (!prov || !prov->ProviderID) {
        rc = LASSO_SERVER_ERROR_ADD_PROVIDER_FAILED;
        goto done;
    }
    if (lasso_provider_get_protocol_conformance(prov) != LASSO_PROTOCOL_SAML_2_0) {
        rc = LASSO_SERVER_ERROR_ADD_PROVIDER_PROTOCOL_MISMATCH;
        goto done;
    }
    for (i = 0; i < keys->keys->nelts && rc == 0; i++) {
        rc = lasso_provider_add_key(prov, APR_ARRAY_IDX(keys->keys, i, LassoKey *),
                                    TRUE);
    }
    /* Lasso hands out a provider's keys only when the provider names a
     * public key of its own (or has KeyDescriptors): the first one, the
     * very text it would have loaded, already loaded. */
    if (rc == 0 && keys->first_pem) {
        lasso_assign_string(prov->public_key, keys->first_pem);
    }
    if (rc == 0 && signing) {
        rc = lasso_provider_set_server_signing_key(prov, signing);
    }
    if (rc == 0) {
        rc = lasso_server_add_provider2(server, prov);
    }
done:
    if (prov) {
        g_object_unref(prov);
    }
    return rc;
}

int rsp_saml_server_idp(rsp_lasso_server_t *server, const rsp_saml_sp_t *sp,
                        const char *entity_id)
{
    const rsp_idp_t *idp = rsp_idp_find(sp->idps, entity_id);
    struct rsp_saml_keys *k = sp->keys;
    const idp_keys_t *keys;
    apr_pool_t *tmp;
    int rc;

    if (!idp) {
        return LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND;
    }
    if (g_hash_table_lookup(server->providers, entity_id)) {
        return 0;
    }
    if (g_hash_table_size(server->providers)
        >= (guint)(sp->server_idps_max > 0 ? sp->server_idps_max
                                           : RSP_SERVER_IDPS)) {
        g_hash_table_remove_all(server->providers);
    }
    if (apr_pool_create(&tmp, NULL) != APR_SUCCESS) {
        return LASSO_SERVER_ERROR_ADD_PROVIDER_FAILED;
    }
    /* The keys are copied into the provider with the lock held: a
     * process's cache may be emptied by another thread once released. */
    apr_thread_mutex_lock(k->lock);
    keys = idp_keys(k, idp);
    rc = keys ? add_idp(server, rsp_idp_lasso_metadata(tmp, idp), keys,
                        k->signing)
              : LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND;
    apr_thread_mutex_unlock(k->lock);
    apr_pool_destroy(tmp);
    return rc;
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

int rsp_saml_idp_keys_loaded(const rsp_saml_sp_t *sp)
{
    int n;

    apr_thread_mutex_lock(sp->keys->lock);
    n = sp->keys->loaded;
    apr_thread_mutex_unlock(sp->keys->lock);
    return n;
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
