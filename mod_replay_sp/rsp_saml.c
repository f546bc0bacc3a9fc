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
#include <libxml/xmlerror.h>
#include <libxml/globals.h>
#include <xmlsec/errors.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "rsp_log.h"
#include "rsp_saml.h"

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

/* Check the key and certificate with OpenSSL; return the cert's DER in
 * base64 for metadata. */
static apr_status_t check_keypair(rsp_saml_sp_t *sp, apr_pool_t *p,
                                  rsp_sp_input_t *input, const char **err)
{
    BIO *kb = BIO_new_mem_buf(sp->key_pem, -1);
    BIO *cb = BIO_new_mem_buf(sp->cert_pem, -1);
    EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    X509 *cert = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    unsigned char *der = NULL;
    int derlen;
    apr_status_t rv = APR_EINVAL;

    *input = !key ? RSP_SP_INPUT_KEY : RSP_SP_INPUT_CERT;
    if (!key) {
        *err = apr_psprintf(p, "%s: not a PEM private key (or it is "
                            "encrypted: give an unencrypted key readable "
                            "only by root)", sp->key_file);
    }
    else if (!cert) {
        *err = apr_psprintf(p, "%s: not a PEM X.509 certificate",
                            sp->cert_file);
    }
    else if (X509_check_private_key(cert, key) != 1) {
        *err = apr_psprintf(p, "%s does not match the certificate %s",
                            sp->key_file, sp->cert_file);
    }
    else if ((derlen = i2d_X509(cert, &der)) <= 0) {
        *err = apr_psprintf(p, "%s: cannot encode the certificate",
                            sp->cert_file);
    }
    else {
        char *b64 = apr_palloc(p, (apr_size_t)apr_base64_encode_len(derlen));
        apr_base64_encode_binary(b64, der, derlen);
        sp->cert_b64 = b64;
        rv = APR_SUCCESS;
    }
    OPENSSL_free(der);
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(kb);
    BIO_free(cb);
    return rv;
}

const char *rsp_saml_metadata(apr_pool_t *p, const rsp_saml_sp_t *sp,
                              const char *base_url)
{
    /* No encryption key: encrypted assertions are refused, and an IdP
     * encrypts whenever the SP's metadata offers a key. */
    const char *kd = apr_psprintf(
        p,
        "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s"
        "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>",
        sp->cert_b64);

    return apr_psprintf(
        p,
        "<?xml version=\"1.0\"?>\n"
        "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" "
        "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" entityID=\"%s\">\n"
        " <md:SPSSODescriptor WantAssertionsSigned=\"true\" "
        "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">\n"
        "  <md:KeyDescriptor use=\"signing\">%s</md:KeyDescriptor>\n"
        "  <md:SingleLogoutService "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" "
        "Location=\"%s/slo\"/>\n"
        "  <md:AssertionConsumerService index=\"0\" isDefault=\"true\" "
        "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" "
        "Location=\"%s/acs\"/>\n"
        " </md:SPSSODescriptor>\n"
        "</md:EntityDescriptor>\n",
        xml_escape(p, sp->entity_id), kd, xml_escape(p, base_url),
        xml_escape(p, base_url));
}

apr_status_t rsp_saml_sp_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err)
{
    apr_status_t rv;
    rsp_lasso_server_t *server;
    int i, j;

    *input = RSP_SP_INPUT_KEY;
    if ((rv = read_file(&sp->key_pem, p, sp->key_file, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_CERT;
    if ((rv = read_file(&sp->cert_pem, p, sp->cert_file, err)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = check_keypair(sp, p, input, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_IDP;
    /* Our own metadata, for our LassoServer: the ACS location in it is not
     * used to validate anything (Destination and Recipient are checked
     * against the request's public URL). */
    sp->sp_metadata = rsp_saml_metadata(p, sp, sp->entity_id);
    sp->idp_metadata = apr_array_make(p, sp->idp_files->nelts, sizeof(char *));
    sp->idp_ids = apr_array_make(p, sp->idp_files->nelts, sizeof(char *));
    for (i = 0; i < sp->idp_files->nelts; i++) {
        const char *path = APR_ARRAY_IDX(sp->idp_files, i, const char *);
        const char *md;
        LassoProvider *prov;

        if ((rv = read_file(&md, p, path, err)) != APR_SUCCESS) {
            return rv;
        }
        prov = lasso_provider_new_from_buffer(LASSO_PROVIDER_ROLE_IDP, md,
                                              NULL, NULL);
        if (!prov || !prov->ProviderID) {
            *err = apr_psprintf(p, "%s: not valid SAML 2.0 metadata of one "
                                "entity (EntityDescriptor)", path);
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
                                    "another metadata file", path,
                                    prov->ProviderID);
                g_object_unref(prov);
                return APR_EINVAL;
            }
        }
        APR_ARRAY_PUSH(sp->idp_ids, const char *) =
            apr_pstrdup(p, prov->ProviderID);
        APR_ARRAY_PUSH(sp->idp_metadata, const char *) = md;
        g_object_unref(prov);
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

    server = lasso_server_new_from_buffers(sp->sp_metadata, sp->key_pem, NULL,
                                           sp->cert_pem);
    if (!server) {
        *err = "Lasso cannot build a server from our metadata, key and "
               "certificate";
        return APR_EGENERAL;
    }
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

/* Standard base64 (whitespace allowed) whose decoded text starts with '<'. */
static const char *check_base64(apr_pool_t *p, const char *b64)
{
    apr_size_t n = 0, pad = 0;
    const char *c;
    char *clean, *o, *dec;
    int declen;

    clean = o = apr_palloc(p, strlen(b64) + 1);
    for (c = b64; *c; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
            continue;
        }
        if (*c == '=') {
            pad++;
        }
        else if (pad || !((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z')
                          || (*c >= '0' && *c <= '9') || *c == '+' || *c == '/')) {
            return "not base64";
        }
        *o++ = *c;
        n++;
    }
    *o = '\0';
    if (n == 0 || n % 4 != 0 || pad > 2) {
        return "not base64 (bad length or padding)";
    }
    dec = apr_palloc(p, (apr_size_t)apr_base64_decode_len(clean) + 1);
    declen = apr_base64_decode(dec, clean);
    for (c = dec; c < dec + declen && (*c == ' ' || *c == '\t' || *c == '\r'
                                      || *c == '\n'); c++)
        ;
    if (c >= dec + declen || *c != '<') {
        return "decoded data is not XML";
    }
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
    const char *why;
    apr_status_t rv = APR_SUCCESS;
    GList *it;
    int rc, audience_ok = 0, n_audience = 0;

    if ((why = check_base64(p, b64)) != NULL) {
        *check = "base64";
        *detail = why;
        return APR_EGENERAL;
    }
    login = lasso_login_new(server);
    if (!login) {
        REFUSE("lasso", "cannot create a Lasso login");
    }
    rc = lasso_login_process_authn_response_msg(login, (gchar *)b64);
    if (rc != 0) {
        REFUSE(lasso_check_name(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response)) {
        REFUSE("xml", "not a samlp:Response");
    }
    resp = LASSO_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response);
    sresp = LASSO_SAMLP2_STATUS_RESPONSE(resp);
    if (resp->EncryptedAssertion) {
        /* Lasso drops assertions it cannot decrypt without telling its
         * caller, so "exactly one assertion" cannot be proven here. */
        REFUSE("encrypted", "EncryptedAssertion is not supported");
    }
    if (g_list_length(resp->Assertion) != 1) {
        REFUSE("assertion-count", "%u assertions in the response (exactly one "
               "is accepted)", g_list_length(resp->Assertion));
    }
    a = LASSO_SAML2_ASSERTION(resp->Assertion->data);
    if (!a->ID || !*a->ID || !a->Issuer || !a->Issuer->content
        || !*a->Issuer->content) {
        REFUSE("issuer", "assertion without ID or Issuer");
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
    res = apr_pcalloc(p, sizeof(*res));
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
        if (as->SessionIndex && !res->session_index) {
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
