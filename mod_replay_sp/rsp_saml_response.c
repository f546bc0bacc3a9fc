/* Processing a POSTed Response: the shape before Lasso, Lasso, and our
 * checks after it. */
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
#include "rsp_window.h"
#include "rsp_saml_shape.h"
#include "rsp_saml_decrypt.h"
#include "rsp_scope.h"


/* ---- processing a response ---- */


/* Standard base64 (whitespace allowed) whose decoded text starts with
 * '<': the decoded text in *xml, its length in *len. */
static const char *check_base64(apr_pool_t *p, const char *b64,
                                const char **xml, apr_size_t *len)
{
    const char *c;
    char *dec;
    apr_size_t declen;

    if (rsp_b64_decode(p, b64, 1, &dec, &declen) < 0) {
        return "not base64 (bad character, length or padding)";
    }
    for (c = dec; c < dec + declen && (*c == ' ' || *c == '\t' || *c == '\r'
                                      || *c == '\n'); c++)
        ;
    if (c >= dec + declen || *c != '<') {
        return "decoded data is not XML";
    }
    /* Lasso reads the text up to its first NUL, our checks the whole
     * length: they must read the same bytes (XML has no NUL anyway). */
    if (memchr(dec, '\0', declen)) {
        return "decoded data contains a NUL byte";
    }
    *xml = dec;
    *len = declen;
    return NULL;
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
 * signature has been verified (Lasso's check of the same bytes): that
 * signature covers the ciphertext, so it is verified here, on the
 * Response as it came, and removed from the one Lasso reads. */
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
                        : NULL; /* made known before (rsp_saml_server_idp) */
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


/* The validUntil of the signed metadata file naming the issuer, when it
 * has passed (else 0). */
static apr_time_t metadata_expired(const rsp_check_params_t *cp,
                                   const char *issuer)
{
    const rsp_idp_t *idp = cp->sp ? rsp_saml_idp(cp->sp, issuer) : NULL;

    return idp && idp->valid_until && cp->now >= idp->valid_until
        ? idp->valid_until : 0;
}

/* Drop the values of scoped attributes outside the scopes the issuer's
 * metadata declares (res->scope_dropped names them); 1 with *detail when
 * one of them is of the attribute that names the user. */
static int scoped_values_refused(rsp_assertion_t *res, apr_pool_t *p,
                                 const rsp_check_params_t *cp,
                                 const char **detail)
{
    const rsp_idp_t *idp = cp->sp ? rsp_saml_idp(cp->sp, res->issuer) : NULL;
    const rsp_scopes_t *scopes = idp ? idp->scopes : NULL;
    int i;

    res->scope_dropped = rsp_scope_filter(p, scopes,
                                          cp->sp ? cp->sp->scoped_names : NULL,
                                          res->attributes);
    for (i = 0; cp->user_attribute && i < res->scope_dropped->nelts; i++) {
        const rsp_scope_drop_t *d =
            &APR_ARRAY_IDX(res->scope_dropped, i, rsp_scope_drop_t);
        if (!strcmp(d->name, cp->user_attribute)) {
            *detail = apr_psprintf(p, "the user attribute %s (ReplaySPUserAttribute) "
                                   "has %s%s%s, not a scope IdP %s declares in "
                                   "its metadata (%d declared)", d->name,
                                   d->scope ? "the scope " : "no single scope",
                                   d->scope ? d->scope : "",
                                   "", res->issuer,
                                   rsp_scopes_count(scopes));
            return 1;
        }
    }
    return 0;
}

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
    rsp_decrypted_t dec;
    xmlDocPtr doc = NULL;
    const char *why, *xml = NULL, *lasso_b64 = b64;
    apr_size_t xml_len = 0;
    apr_status_t rv = APR_SUCCESS;
    GList *it;
    const char *detail_scope = NULL;
    apr_time_t md_expired;
    int rc, audience_ok = 0, n_audience = 0, verified = 0;

    memset(&dec, 0, sizeof(dec));
    if ((why = check_base64(p, b64, &xml, &xml_len)) != NULL) {
        *check = "base64";
        *detail = why;
        return APR_EGENERAL;
    }
    /* Before Lasso: the shape (one assertion, plaintext or encrypted; the
     * encryption algorithms) and SHA-1 signatures. */
    if (rsp_saml_shape(&shape, p, xml, xml_len, &doc, check, detail)
        != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (!shape.encrypted) {
        xmlFreeDoc(doc); /* the nodes to decrypt were all it was kept for */
        doc = NULL;
    }
    if (shape.weak && !rsp_saml_sha1_allowed(cp->sp, shape.issuer)) {
        REFUSE("weak-signature", "%s (SHA-1 is refused unless "
               "ReplaySPAllowSHA1 names the IdP %s)", shape.weak,
               shape.issuer ? shape.issuer : "(no Issuer)");
    }
    /* The issuer's provider, in this server from now on (Lasso finds it
     * by the Issuer): one that is none of this generation's IdPs is
     * refused here. */
    if (shape.issuer && cp->sp
        && (rc = rsp_saml_server_idp(server, cp->sp, shape.issuer)) != 0) {
        REFUSE("issuer", "Response Issuer %s is none of our IdPs (%s)",
               shape.issuer, lasso_strerror(rc));
    }
    res = apr_pcalloc(p, sizeof(*res));
    res->weak_signature = shape.weak;
    if (shape.encrypted) {
        if ((rv = before_decrypt(p, server, &shape, xml, check, detail))
            != APR_SUCCESS) {
            goto done;
        }
        rsp_log(RSP_LOG_DEBUG, "decrypting the EncryptedAssertion from %s "
                "(data %s, key transport %s) with %d key%s: %s",
                shape.issuer, rsp_alg_name(shape.data_alg), shape.key_desc,
                cp->sp->dec_keys->nelts,
                cp->sp->dec_keys->nelts == 1 ? "" : "s", cp->sp->dec_names);
        /* Decrypted here, checked, and put in the Response in place of
         * the EncryptedAssertion: Lasso reads that. A signed Response
         * loses its signature (verified above, it covers the
         * ciphertext); an assertion without a signature of its own then
         * has nothing more to verify, and Lasso is told not to look for
         * one (an assertion with one has it verified by Lasso, as for an
         * unsigned Response). */
        if ((rv = rsp_saml_decrypt(&dec, p, rsp_saml_decryption_keys(cp->sp),
                                   cp->sp->dec_names, &shape, check, detail))
                != APR_SUCCESS
            || (rv = rsp_saml_decrypt_splice(&lasso_b64, &verified, p,
                                             doc, &shape, &dec, check,
                                             detail)) != APR_SUCCESS) {
            goto done;
        }
        xmlFreeDoc(doc);
        doc = NULL;
    }
    login = lasso_login_new(server);
    if (!login) {
        REFUSE("lasso", "cannot create a Lasso login");
    }
    if (verified) {
        /* only a signed Response (verified by before_decrypt, else
         * refused) around an assertion without a signature of its own */
        lasso_profile_set_signature_verify_hint(
            LASSO_PROFILE(login), LASSO_PROFILE_SIGNATURE_VERIFY_HINT_IGNORE);
    }
    /* base64: Lasso refuses an XML POST message as another profile. */
    rc = lasso_login_process_authn_response_msg(login, (gchar *)lasso_b64);
    /* An EncryptedID in the Subject: Lasso, with no decryption key of its
     * own (rsp_saml_server_new), stops there, once the signatures that
     * cover it are verified; it is decrypted here, into the NameID Lasso
     * would have put in its place, and the checks go on. */
    if (rc == LASSO_PROFILE_ERROR_MISSING_ENCRYPTION_PRIVATE_KEY
        && LASSO_IS_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response)) {
        resp = LASSO_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response);
        a = g_list_length(resp->Assertion) == 1
            && g_list_length(resp->EncryptedAssertion) == 0
            && LASSO_IS_SAML2_ASSERTION(resp->Assertion->data)
            ? LASSO_SAML2_ASSERTION(resp->Assertion->data) : NULL;
        subj = a ? a->Subject : NULL;
        if (subj && !subj->NameID && subj->EncryptedID) {
            if ((rv = rsp_saml_encrypted_id_take(
                     p, cp->sp, shape.issuer, "the assertion's Subject",
                     &subj->NameID, &subj->EncryptedID, check, detail))
                != APR_SUCCESS) {
                goto done;
            }
            res->encrypted_id = 1;
            rc = 0;
        }
    }
    if (rc != 0) {
        REFUSE(rsp_saml_check_of(rc), "%s (lasso %d)", lasso_strerror(rc), rc);
    }
    if (!LASSO_IS_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response)) {
        REFUSE("xml", "not a samlp:Response");
    }
    resp = LASSO_SAMLP2_RESPONSE(LASSO_PROFILE(login)->response);
    sresp = LASSO_SAMLP2_STATUS_RESPONSE(resp);
    /* After Lasso: what it read is what we counted. One assertion, and
     * when the Response carried an EncryptedAssertion, it is the one
     * decrypted here (Lasso was given no EncryptedAssertion). */
    if (g_list_length(resp->Assertion) != 1
        || g_list_length(resp->EncryptedAssertion) != 0) {
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
        /* Lasso read the assertion decrypted here. Said, not assumed. */
        if (!dec.id || strcmp(dec.id, a->ID) != 0) {
            REFUSE("decrypt", "Lasso read assertion %s where the one "
                   "decrypted is %s", a->ID, dec.id ? dec.id : "(no ID)");
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
    if (!subj) {
        REFUSE("subject", "no Subject in the assertion");
    }
    /* AD FS without a NameID rule sends none: the user is then named by
     * ReplaySPUserAttribute (that the attribute is there is the ACS's
     * check, user-attribute). */
    if ((!subj->NameID || !subj->NameID->content || !*subj->NameID->content)
        && (!cp->user_attribute || subj->NameID)) {
        REFUSE("subject", "%s in the Subject%s", subj->NameID
               ? "an empty NameID" : "no NameID", subj->NameID ? ""
               : ", and no ReplaySPUserAttribute to name the user by");
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
    if (!rsp_saml_opt_time(scd->NotBefore, &t.scd_not_before)
        || !rsp_saml_opt_time(scd->NotOnOrAfter, &t.scd_not_on_or_after)
        || (a->Conditions
            && (!rsp_saml_opt_time(a->Conditions->NotBefore, &t.conditions_not_before)
                || !rsp_saml_opt_time(a->Conditions->NotOnOrAfter,
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
    if (subj->NameID) {
        res->name_id = apr_pstrdup(p, subj->NameID->content);
        res->name_id_format = subj->NameID->Format
            ? apr_pstrdup(p, subj->NameID->Format) : NULL;
    }
    if ((md_expired = metadata_expired(cp, res->issuer)) != 0) {
        REFUSE("metadata-expired", "the signed metadata naming IdP %s expired "
               "at %s (its validUntil): restart httpd with a fresh copy",
               res->issuer, rsp_format_time(p, md_expired));
    }
    res->attributes = attributes_of(p, a);
    if (scoped_values_refused(res, p, cp, &detail_scope)) {
        REFUSE("scope", "%s", detail_scope);
    }
    for (it = a->AuthnStatement; it; it = it->next) {
        LassoSaml2AuthnStatement *as = it->data;
        apr_time_t snoa;
        if (!LASSO_IS_SAML2_AUTHN_STATEMENT(as)) {
            continue;
        }
        if (as->SessionIndex && *as->SessionIndex && !res->session_index) {
            res->session_index = apr_pstrdup(p, as->SessionIndex);
        }
        if (!rsp_saml_opt_time(as->SessionNotOnOrAfter, &snoa)) {
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
    if (doc) {
        xmlFreeDoc(doc);
    }
    return rv;
}
