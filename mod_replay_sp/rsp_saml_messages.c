/* Messages over the HTTP-Redirect binding: AuthnRequests, single logout
 * (both ways), and the query signatures we check ourselves. */
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
#include "rsp_saml_int.h"
#include "rsp_util.h"
#include "rsp_saml_shape.h"


apr_status_t rsp_saml_authn_request(apr_pool_t *p, rsp_lasso_server_t *server,
                                    const rsp_saml_sp_t *sp,
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
    rc = rsp_saml_server_idp(server, sp, idp_id);
    if (rc == 0) {
        rc = lasso_login_init_authn_request(login, idp_id,
                                            LASSO_HTTP_METHOD_REDIRECT);
    }
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
                           const rsp_saml_sp_t *sp, const char *idp_id)
{
    LassoProvider *prov = rsp_saml_server_idp(server, sp, idp_id) == 0
                          ? lasso_server_get_provider(server, idp_id) : NULL;
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
    const char *message;    /* SAMLRequest or SAMLResponse, decoded */
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
    m->message = url_decode(p, strchr(msg, '=') + 1);
    if (!m->sig_alg || !m->signature || !m->message) {
        return "bad escape in SigAlg, Signature or the message";
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
    const rsp_idp_t *known;
    apr_array_header_t *certs = NULL;
    unsigned char *sig;
    char *sigtext;
    apr_size_t siglen;
    int i;

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
    if ((known = rsp_saml_idp(sp, idp)) != NULL) {
        certs = known->certs;
    }
    if (!certs || certs->nelts == 0) {
        return apr_psprintf(p, "no signing certificate for %s in its metadata",
                            idp);
    }
    if (rsp_b64_decode(p, m->signature, 0, &sigtext, &siglen) < 0) {
        return "Signature is not base64";
    }
    sig = (unsigned char *)sigtext;
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

/* Before Lasso reads a single byte of it: the message's shape (Lasso
 * aborts the process on some malformed ones), its issuer one of this SP's
 * IdPs, and its signature that IdP's. NULL, or the refusal (check, why). */
static const char *known_issuer(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                const char *root, const char *issuer,
                                const char **check)
{
    if (!issuer) {
        *check = "xml";
        return apr_psprintf(p, "%s without an Issuer", root);
    }
    if (!rsp_saml_idp(sp, issuer)) {
        *check = "issuer";
        return apr_psprintf(p, "%s from %s, which is not an IdP of this SP",
                            root, issuer);
    }
    return NULL;
}

static const char *redirect_trusted(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                    const redirect_msg_t *m, const char *root,
                                    const char **issuer, const char **weak,
                                    const char **check)
{
    const char *why;

    if ((why = rsp_saml_redirect_peek(p, m->message, root, issuer, check))
        || (why = known_issuer(p, sp, root, *issuer, check))) {
        return why;
    }
    if ((why = verify_redirect(p, sp, *issuer, m, weak)) != NULL) {
        *check = "signature";
    }
    return why;
}

/* HTTP-POST (SAML bindings 3.5): the message's own enveloped signature,
 * on its root, by the IdP that issued it, checked on the decoded bytes
 * before Lasso parses them (with the signature check off: done here). */
static const char *post_trusted(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                rsp_lasso_server_t *server, const char *message,
                                const char *root, const char **issuer,
                                const char **weak, const char **check)
{
    LassoProvider *idp;
    const char *why, *xml = NULL;
    int rc;

    if ((why = rsp_saml_post_peek(p, message, root, &xml, issuer, weak, check))
        || (why = known_issuer(p, sp, root, *issuer, check))) {
        return why;
    }
    *check = "signature";
    if (*weak && !rsp_saml_sha1_allowed(sp, *issuer)) {
        return apr_psprintf(p, "%s (SHA-1 is refused unless ReplaySPAllowSHA1 "
                            "names the IdP %s)", *weak, *issuer);
    }
    if (rsp_saml_server_idp(server, sp, *issuer) != 0
        || !(idp = lasso_server_get_provider(server, *issuer))) {
        return apr_psprintf(p, "%s from %s, which Lasso does not know", root,
                            *issuer);
    }
    rc = lasso_provider_verify_signature(idp, xml, "ID",
                                         LASSO_MESSAGE_FORMAT_XML);
    if (rc != 0) {
        return apr_psprintf(p, "the %s's signature does not verify with %s's "
                            "certificates (%s, lasso %d)", root, *issuer,
                            lasso_strerror(rc), rc);
    }
    return NULL;
}

/* A logout message of either binding, before Lasso reads it: NULL, or
 * why (and *check). *lasso_msg: what Lasso is to parse (the query less
 * its signature, or the form value). */
static const char *inbound(apr_pool_t *p, const rsp_saml_sp_t *sp,
                           rsp_lasso_server_t *server, const rsp_saml_in_t *in,
                           const char *root, const char **lasso_msg,
                           const char **issuer, const char **weak,
                           const char **check)
{
    redirect_msg_t m;
    const char *why;

    *issuer = NULL;
    *weak = NULL;
    if (!in->query) {
        *lasso_msg = in->message;
        return post_trusted(p, sp, server, in->message, root, issuer, weak,
                            check);
    }
    if ((why = split_redirect(p, in->query, &m)) != NULL) {
        *check = strstr(why, "signed") ? "signature" : "binding";
        return why;
    }
    *lasso_msg = m.stripped;
    if ((why = redirect_trusted(p, sp, &m, root, issuer, weak, check))) {
        return why;
    }
    /* what Lasso reads next needs the IdP in the server */
    if (rsp_saml_server_idp(server, sp, *issuer) != 0) {
        *check = "issuer";
        return apr_psprintf(p, "%s from %s, whose metadata cannot be used",
                            root, *issuer);
    }
    return NULL;
}

/* Lasso builds and validates logout messages against a session holding
 * the IdP's assertion: a minimal one (issuer, NameID, SessionIndex) is
 * all it reads. named: the NameID exactly as a LogoutRequest carries it
 * (Lasso compares the whole of it, qualifiers included), or NULL for one
 * made of name_id and format. */
static int set_session(LassoProfile *profile, const char *idp_id,
                       const char *name_id, const char *format,
                       LassoSaml2NameID *named, const char *session_index)
{
    LassoSaml2Assertion *a = LASSO_SAML2_ASSERTION(lasso_saml2_assertion_new());
    LassoSaml2NameID *nid = LASSO_SAML2_NAME_ID(lasso_saml2_name_id_new_with_string(
        (char *)(named ? named->content : name_id)));
    LassoSaml2AuthnStatement *st =
        LASSO_SAML2_AUTHN_STATEMENT(lasso_saml2_authn_statement_new());
    LassoSession *session = lasso_session_new();
    gchar *dump;
    int rc;

    if (named) {
        lasso_assign_string(nid->Format, named->Format);
        lasso_assign_string(nid->NameQualifier, named->NameQualifier);
        lasso_assign_string(nid->SPNameQualifier, named->SPNameQualifier);
        lasso_assign_string(nid->SPProvidedID, named->SPProvidedID);
    }
    else if (format) {
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
                                     const rsp_saml_sp_t *sp,
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
    if ((rc = rsp_saml_server_idp(server, sp, who->idp)) != 0
        || (rc = set_session(profile, who->idp, who->name_id, who->name_id_format,
                             NULL, who->session_index)) != 0
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
                                         const rsp_saml_in_t *in,
                                         rsp_logout_response_t *out,
                                         const char **check,
                                         const char **detail)
{
    LassoLogout *logout = NULL;
    LassoProfile *profile;
    LassoSamlp2StatusResponse *sr;
    apr_status_t rv = APR_SUCCESS;
    const char *why, *issuer = NULL, *msg = NULL;
    int rc;

    if ((why = inbound(p, sp, server, in, "LogoutResponse", &msg, &issuer,
                       &out->weak_signature, check)) != NULL) {
        *detail = why;
        return APR_EGENERAL;
    }
    if (!(logout = lasso_logout_new(server))) {
        REFUSE("lasso", "cannot create a Lasso logout");
    }
    profile = LASSO_PROFILE(logout);
    lasso_profile_set_signature_verify_hint(
        profile, LASSO_PROFILE_SIGNATURE_VERIFY_HINT_IGNORE);
    rc = lasso_logout_process_response_msg(logout, (gchar *)msg);
    /* A non-Success status is an answer, not a refusal. */
    if (rc != 0 && rc != LASSO_PROFILE_ERROR_STATUS_NOT_SUCCESS
        && rc != LASSO_LOGOUT_ERROR_REQUEST_DENIED
        && rc != LASSO_LOGOUT_ERROR_UNKNOWN_PRINCIPAL
        && rc != LASSO_LOGOUT_ERROR_PARTIAL_LOGOUT
        && rc != LASSO_PROFILE_ERROR_REQUEST_DENIED
        && rc != LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE) {
        REFUSE(rsp_saml_check_of(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_STATUS_RESPONSE(profile->response)) {
        REFUSE("xml", "not a LogoutResponse");
    }
    sr = LASSO_SAMLP2_STATUS_RESPONSE(profile->response);
    if (!sr->Issuer || !sr->Issuer->content || !sr->InResponseTo
        || !*sr->InResponseTo || !status_of(sr)) {
        REFUSE("xml", "LogoutResponse without Issuer, InResponseTo or Status");
    }
    if (strcmp(sr->Issuer->content, issuer) != 0) {
        REFUSE("xml", "the LogoutResponse's Issuer read twice differs");
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
    const rsp_saml_sp_t *sp;
    int post;               /* the request came over HTTP-POST */
    const char *relay;      /* HTTP-POST: the RelayState to echo */
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
                                        const rsp_saml_in_t *in,
                                        rsp_logout_request_t *req,
                                        const char **check,
                                        const char **detail)
{
    rsp_slo_t *slo = apr_pcalloc(p, sizeof(*slo));
    LassoSamlp2LogoutRequest *lr;
    LassoSamlp2RequestAbstract *ra;
    LassoProfile *profile;
    apr_status_t rv = APR_SUCCESS;
    const char *why, *issuer = NULL, *msg = NULL;
    GList *it, *indexes;
    int rc;

    *out = NULL;
    if ((why = inbound(p, sp, server, in, "LogoutRequest", &msg, &issuer,
                       &req->weak_signature, check)) != NULL) {
        *detail = why;
        return APR_EGENERAL;
    }
    slo->post = !in->query;
    slo->sp = sp;
    slo->relay = in->query ? NULL : in->relay;
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
    rc = lasso_logout_process_request_msg(slo->logout, (gchar *)msg);
    /* An EncryptedID (Shibboleth IdP's default once the SP publishes an
     * encryption key): Lasso, with no decryption key of its own
     * (rsp_saml_server_new), stops there; the message's signature was
     * verified above (inbound), so it is decrypted here, into the NameID
     * Lasso would have put in its place, before any session is looked
     * up by it. */
    if (rc == LASSO_PROFILE_ERROR_MISSING_ENCRYPTION_PRIVATE_KEY
        && LASSO_IS_SAMLP2_LOGOUT_REQUEST(profile->request)
        && !LASSO_SAMLP2_LOGOUT_REQUEST(profile->request)->NameID
        && LASSO_SAMLP2_LOGOUT_REQUEST(profile->request)->EncryptedID) {
        lr = LASSO_SAMLP2_LOGOUT_REQUEST(profile->request);
        if ((rv = rsp_saml_encrypted_id_take(p, sp, issuer, "the LogoutRequest",
                                             &lr->NameID, &lr->EncryptedID,
                                             check, detail)) != APR_SUCCESS) {
            goto done;
        }
        lasso_assign_gobject(profile->nameIdentifier, LASSO_NODE(lr->NameID));
        req->encrypted_id = 1;
        rc = 0;
    }
    if (rc != 0 && rc != LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE) {
        REFUSE(rsp_saml_check_of(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_LOGOUT_REQUEST(profile->request)) {
        REFUSE("xml", "not a LogoutRequest");
    }
    lr = LASSO_SAMLP2_LOGOUT_REQUEST(profile->request);
    ra = LASSO_SAMLP2_REQUEST_ABSTRACT(profile->request);
    if (!ra->Issuer || !ra->Issuer->content || !ra->ID || !*ra->ID) {
        REFUSE("xml", "LogoutRequest without Issuer or ID");
    }
    if (strcmp(ra->Issuer->content, issuer) != 0) {
        REFUSE("xml", "the LogoutRequest's Issuer read twice differs");
    }
    if (!lr->NameID || !lr->NameID->content || !*lr->NameID->content) {
        REFUSE("subject", "LogoutRequest without a NameID (a BaseID, or "
               "an EncryptedID that holds none)");
    }
    req->issuer = apr_pstrdup(p, ra->Issuer->content);
    req->id = apr_pstrdup(p, ra->ID);
    req->name_id = apr_pstrdup(p, lr->NameID->content);
    req->name_id_format = lr->NameID->Format
        ? apr_pstrdup(p, lr->NameID->Format) : NULL;
    if (!ra->IssueInstant
        || rsp_parse_time(&req->issue_instant, ra->IssueInstant) != APR_SUCCESS
        || !rsp_saml_opt_time(lr->NotOnOrAfter, &req->not_on_or_after)) {
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
                                    const char **url, const char **form,
                                    const char **err)
{
    LassoProfile *profile = LASSO_PROFILE(slo->logout);
    const char *first = req->session_indexes->nelts
        ? APR_ARRAY_IDX(req->session_indexes, 0, const char *) : NULL;
    int rc;

    /* The sessions are gone from the store: answer Success, through a
     * session Lasso can validate the request against (its NameID the
     * request's own, qualifiers and all: NameQualifier, SPNameQualifier,
     * SPProvidedID). */
    if ((rc = set_session(profile, req->issuer, req->name_id,
                          req->name_id_format,
                          LASSO_IS_SAMLP2_LOGOUT_REQUEST(profile->request)
                              ? LASSO_SAMLP2_LOGOUT_REQUEST(profile->request)->NameID
                              : NULL,
                          first)) != 0
        || (rc = lasso_logout_validate_request(slo->logout)) != 0) {
        goto failed;
    }
    /* A request that came over HTTP-POST is answered over HTTP-Redirect
     * where the IdP has that binding, else over HTTP-POST (the form is
     * the glue's to send). */
    if (slo->post) {
        /* Lasso 2.8 answers over the binding the request came by (the
         * LassoLogout's initial_http_request_method, a field its header
         * calls private and no function sets): set it to the one chosen. */
        profile->http_request_method =
            rsp_saml_idp_slo_url(p, profile->server, slo->sp, req->issuer)
                ? LASSO_HTTP_METHOD_REDIRECT : LASSO_HTTP_METHOD_POST;
        slo->logout->initial_http_request_method = profile->http_request_method;
        lasso_assign_string(profile->msg_relayState, slo->relay);
    }
    if ((rc = lasso_logout_build_response_msg(slo->logout)) != 0
        || !profile->msg_url
        || (profile->http_request_method == LASSO_HTTP_METHOD_POST
            && !profile->msg_body)) {
        goto failed;
    }
    *url = apr_pstrdup(p, profile->msg_url);
    *form = profile->http_request_method == LASSO_HTTP_METHOD_POST
        ? apr_pstrdup(p, profile->msg_body) : NULL;
    return APR_SUCCESS;

failed:
    *err = apr_psprintf(p, "cannot build the LogoutResponse to %s: %s",
                        req->issuer, rc ? lasso_strerror(rc) : "no URL");
    return APR_EGENERAL;
}
