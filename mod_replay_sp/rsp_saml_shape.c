#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <zlib.h>

#include "rsp_saml_shape.h"
#include "rsp_util.h"
#include "rsp_xml.h"
#include "rsp_xml_scan.h"

#define NS_SAMLP "urn:oasis:names:tc:SAML:2.0:protocol"
#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"
#define NS_DS "http://www.w3.org/2000/09/xmldsig#"

/* An attribute's value copied to p, or NULL. */
const char *rsp_alg_name(const char *uri)
{
    const char *h = uri ? strrchr(uri, '#') : NULL;

    return h && h[1] ? h + 1 : uri ? uri : "(none)";
}

static int is_sha1(const char *alg)
{
    apr_size_t n = alg ? strlen(alg) : 0;

    /* xmldsig#rsa-sha1, #dsa-sha1, #hmac-sha1, #sha1, xmldsig-more#ecdsa-sha1 */
    return n >= 4 && !strcmp(alg + n - 4, "sha1");
}

const char *rsp_saml_weak_signature(apr_pool_t *p, xmlNodePtr node,
                                    const char *where)
{
    xmlNodePtr sig, si, n;

    for (sig = node ? node->children : NULL; sig; sig = sig->next) {
        if (!rsp_xml_is(sig, NS_DS, "Signature")) {
            continue;
        }
        si = rsp_xml_child(sig, NS_DS, "SignedInfo");
        n = rsp_xml_child(si, NS_DS, "SignatureMethod");
        if (n && is_sha1(rsp_xml_attr(p, n, "Algorithm"))) {
            return apr_psprintf(p, "%s signature uses %s", where,
                                rsp_alg_name(rsp_xml_attr(p, n, "Algorithm")));
        }
        for (n = si ? si->children : NULL; n; n = n->next) {
            xmlNodePtr dm = rsp_xml_is(n, NS_DS, "Reference")
                ? rsp_xml_child(n, NS_DS, "DigestMethod") : NULL;
            if (dm && is_sha1(rsp_xml_attr(p, dm, "Algorithm"))) {
                return apr_psprintf(p, "%s signature uses the %s digest",
                                    where, rsp_alg_name(rsp_xml_attr(p, dm, "Algorithm")));
            }
        }
    }
    return NULL;
}

/* Every EncryptedKey below n, wherever it sits (beside the EncryptedData,
 * in its KeyInfo, or deeper): each must use RSA-OAEP with parameters
 * known here (rsp_xenc_key_method), and there are at most
 * RSP_ENCRYPTED_KEYS_MAX. Returns the refusal detail (*check set) or
 * NULL; counts them in out->keys, the first one's algorithm in
 * out->key_alg and out->key_desc. */
static const char *check_keys(rsp_shape_t *out, apr_pool_t *p, xmlNodePtr n,
                              int depth, const char **check)
{
    const char *why;

    if (depth > 16) {
        *check = "encryption";
        return "EncryptedAssertion nested too deeply";
    }
    for (n = n->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) {
            continue;
        }
        if (rsp_xml_is(n, RSP_XENC_NS, "EncryptedKey")) {
            xmlNodePtr method = rsp_xml_child(n, RSP_XENC_NS, "EncryptionMethod");
            rsp_xenc_oaep_t oaep;

            if (++out->keys > RSP_ENCRYPTED_KEYS_MAX) {
                *check = "encryption";
                return apr_psprintf(p, "more than %d EncryptedKey in the "
                                    "EncryptedAssertion",
                                    RSP_ENCRYPTED_KEYS_MAX);
            }
            if (!method) {
                *check = "encryption-algorithm";
                return "an EncryptedKey without EncryptionMethod";
            }
            if ((why = rsp_xenc_key_method(&oaep, p, method, check)) != NULL) {
                return why;
            }
            if (!out->key_alg) {
                out->key_alg = rsp_xml_attr(p, method, "Algorithm");
                out->key_desc = oaep.desc;
            }
        }
        if ((why = check_keys(out, p, n, depth + 1, check)) != NULL) {
            return why;
        }
    }
    return NULL;
}

/* An EncryptedID (a LogoutRequest's, a Subject's) before Lasso reads the
 * message (rsp_saml_encrypted_id_take decrypts it after, once the
 * signature over it is verified): the same algorithms as an EncryptedAssertion's (one EncryptedData,
 * AES-GCM or AES-CBC; RSA-OAEP key transport with known parameters, at
 * least one key, at most RSP_ENCRYPTED_KEYS_MAX). NULL, or why with
 * *check. */
static const char *encrypted_id_refused(apr_pool_t *p, xmlNodePtr id,
                                        const char **check)
{
    rsp_shape_t scratch;
    xmlNodePtr n, data = NULL;
    const char *alg, *why;
    int n_data = 0;

    for (n = id->children; n; n = n->next) {
        if (rsp_xml_is(n, RSP_XENC_NS, "EncryptedData")) {
            n_data++;
            data = n;
        }
    }
    if (n_data != 1) {
        *check = "encryption";
        return apr_psprintf(p, "%d EncryptedData in an EncryptedID (exactly "
                            "one is accepted)", n_data);
    }
    alg = rsp_xml_attr(p, rsp_xml_child(data, RSP_XENC_NS, "EncryptionMethod"), "Algorithm");
    if (!rsp_xenc_data_alg(alg)) {
        *check = "encryption-algorithm";
        return apr_psprintf(p, "EncryptedID: data encryption %s refused (AES-GCM "
                            "or AES-CBC only)", alg ? alg : "(none)");
    }
    memset(&scratch, 0, sizeof(scratch));
    if ((why = check_keys(&scratch, p, id, 0, check)) != NULL) {
        return apr_pstrcat(p, "EncryptedID: ", why, NULL);
    }
    if (!scratch.keys) {
        *check = "encryption";
        return "no EncryptedKey in an EncryptedID";
    }
    return NULL;
}

/* The first EncryptedID at or below n whose algorithms are refused. */
static const char *encrypted_ids_refused(apr_pool_t *p, xmlNodePtr n,
                                         int depth, const char **check)
{
    const char *why;

    for (n = n ? n->children : NULL; n && depth < 64; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) {
            continue;
        }
        if (rsp_xml_is(n, NS_SAML, "EncryptedID")) {
            if ((why = encrypted_id_refused(p, n, check)) != NULL) {
                return why;
            }
            continue;
        }
        if ((why = encrypted_ids_refused(p, n, depth + 1, check)) != NULL) {
            return why;
        }
    }
    return NULL;
}

/* Whether an element named ns:name is at or below n (n is checked to be
 * at most 16 levels deep by check_keys). */
static int has_el(xmlNodePtr n, const char *ns, const char *name)
{
    for (n = n ? n->children : NULL; n; n = n->next) {
        if (rsp_xml_is(n, ns, name) || has_el(n, ns, name)) {
            return 1;
        }
    }
    return 0;
}

/* Any message: what libxml2 does not bound. */
static const rsp_scan_limits_t message_limits = {
    0, RSP_MESSAGE_MAX_DEPTH, 0, RSP_MESSAGE_MAX_ATTRIBUTES, 0, "xml", NULL,
    NULL
};

#define REDIRECT_MAX (128 * 1024)

/* Raw DEFLATE (SAML bindings 3.4.4.1) of at most REDIRECT_MAX bytes. */
static const char *inflate_raw(apr_pool_t *p, const char *in, apr_size_t len,
                               char **out, apr_size_t *outlen)
{
    z_stream z;
    int rc;

    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        return "cannot inflate";
    }
    *out = apr_palloc(p, REDIRECT_MAX + 1);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)*out;
    z.avail_out = REDIRECT_MAX;
    rc = inflate(&z, Z_FINISH);
    *outlen = REDIRECT_MAX - z.avail_out;
    inflateEnd(&z);
    if (rc == Z_STREAM_END && z.avail_in == 0) {
        (*out)[*outlen] = '\0';
        return NULL;
    }
    return rc == Z_BUF_ERROR && z.avail_out == 0
        ? "the message inflates to more than 128 KiB"
        : "the message is not DEFLATE-compressed (SAML HTTP-Redirect binding)";
}

/* The decoded XML of a message (xmllen bytes, NUL-terminated) of either
 * binding: see rsp_saml_redirect_peek. *weak (when weak is not NULL):
 * whether the root's own ds:Signature uses SHA-1. */
static const char *peek_xml(apr_pool_t *p, const char *xml, apr_size_t xmllen,
                            const char *root_name, const char **issuer,
                            const char **weak, const char **check)
{
    xmlDocPtr doc;
    xmlNodePtr root, n;
    const char *why = NULL;
    int issuers = 0, ids = 0;

    *check = "xml";
    if (memchr(xml, '\0', xmllen)) {
        return "a NUL byte in the message";
    }
    if ((why = rsp_xml_scan(p, xml, xmllen, &message_limits, check)) != NULL) {
        return why;
    }
    *check = "xml";
    doc = xmlReadMemory(xml, (int)xmllen, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    if (!doc) {
        return "not well-formed XML";
    }
    root = xmlDocGetRootElement(doc);
    if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE is not allowed in a SAML message";
    }
    else if (!rsp_xml_is(root, NS_SAMLP, root_name)) {
        why = apr_psprintf(p, "not a samlp:%s", root_name);
    }
    for (n = why ? NULL : root->children; n; n = n->next) {
        if (rsp_xml_is(n, NS_SAML, "Issuer")) {
            xmlChar *t = xmlNodeGetContent(n);
            *issuer = t && *t ? apr_pstrdup(p, (const char *)t) : NULL;
            xmlFree(t);
            issuers++;
        }
        else if (rsp_xml_is(n, NS_SAML, "BaseID") || rsp_xml_is(n, NS_SAML, "NameID")) {
            ids++;
        }
        else if (rsp_xml_is(n, NS_SAML, "EncryptedID")) {
            ids++;
            if (!why && (why = encrypted_id_refused(p, n, check)) != NULL) {
                xmlFreeDoc(doc);
                *issuer = NULL;
                return why;
            }
        }
    }
    if (!why && (issuers > 1 || (issuers == 1 && !*issuer))) {
        why = apr_psprintf(p, "%s with %s Issuer", root_name,
                           issuers > 1 ? "more than one" : "an empty");
    }
    if (!why && !strcmp(root_name, "LogoutRequest") && ids != 1) {
        why = apr_psprintf(p, "LogoutRequest with %d of BaseID, NameID and "
                           "EncryptedID (exactly one is required)", ids);
    }
    if (!why && weak) {
        *weak = rsp_saml_weak_signature(p, root, apr_pstrcat(
                                            p, "the ", root_name, NULL));
    }
    xmlFreeDoc(doc);
    if (why) {
        *issuer = NULL;
    }
    return why;
}

const char *rsp_saml_redirect_peek(apr_pool_t *p, const char *message,
                                   const char *root_name, const char **issuer,
                                   const char **check)
{
    char *raw, *xml;
    apr_size_t rawlen, xmllen;
    const char *why;

    *issuer = NULL;
    *check = "binding";
    if (!message || rsp_b64_decode(p, message, 0, &raw, &rawlen) < 0) {
        return "the message is not base64";
    }
    if ((why = inflate_raw(p, raw, rawlen, &xml, &xmllen)) != NULL) {
        return why;
    }
    return peek_xml(p, xml, xmllen, root_name, issuer, NULL, check);
}

const char *rsp_saml_post_peek(apr_pool_t *p, const char *message,
                               const char *root_name, const char **xml,
                               const char **issuer, const char **weak,
                               const char **check)
{
    char *dec;
    apr_size_t declen;

    *issuer = NULL;
    *weak = NULL;
    *check = "binding";
    if (!message || rsp_b64_decode(p, message, 1, &dec, &declen) < 0) {
        return "the message is not base64";
    }
    if (declen > REDIRECT_MAX) {
        return "the message is longer than 128 KiB";
    }
    *xml = dec;
    return peek_xml(p, dec, declen, root_name, issuer, weak, check);
}

#define REFUSE(c, ...) do {                           \
        *check = (c);                                  \
        *detail = apr_psprintf(p, __VA_ARGS__);        \
        goto refused;                                  \
    } while (0)

apr_status_t rsp_saml_shape(rsp_shape_t *out, apr_pool_t *p, const char *xml,
                            apr_size_t len, xmlDocPtr *doc_out,
                            const char **check, const char **detail)
{
    xmlDocPtr doc = NULL;
    xmlNodePtr root, n, enc = NULL, assertion = NULL, data = NULL;
    const char *why, *tag;
    int n_data = 0;

    memset(out, 0, sizeof(*out));
    if (doc_out) {
        *doc_out = NULL;
    }
    if (len > (apr_size_t)0x7fffffff) {
        REFUSE("xml", "message too large");
    }
    if ((why = rsp_xml_scan(p, xml, len, &message_limits, &tag)) != NULL) {
        REFUSE(tag, "%s", why);
    }
    /* No network, no entity substitution, no DTD loading (the defaults,
     * spelled out), and a document with a DOCTYPE is refused below. */
    doc = xmlReadMemory(xml, (int)len, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    if (!doc) {
        REFUSE("xml", "not well-formed XML");
    }
    if (doc->intSubset || doc->extSubset) {
        REFUSE("xml", "a DOCTYPE is not allowed in a SAML message");
    }
    root = xmlDocGetRootElement(doc);
    if (!rsp_xml_is(root, NS_SAMLP, "Response")) {
        REFUSE("xml", "not a samlp:Response");
    }
    for (n = root->children; n; n = n->next) {
        if (rsp_xml_is(n, NS_SAML, "Assertion")) {
            out->assertions++;
            assertion = n;
        }
        else if (rsp_xml_is(n, NS_SAML, "EncryptedAssertion")) {
            out->encrypted++;
            enc = n;
        }
        else if (rsp_xml_is(n, NS_DS, "Signature")) {
            out->response_signed = 1;
        }
        else if (rsp_xml_is(n, NS_SAML, "Issuer") && !out->issuer) {
            xmlChar *t = xmlNodeGetContent(n);
            out->issuer = t ? apr_pstrdup(p, (const char *)t) : "";
            xmlFree(t);
        }
    }
    if (out->assertions + out->encrypted != 1) {
        REFUSE("assertion-count", "%d Assertion and %d EncryptedAssertion in "
               "the Response (exactly one is accepted)", out->assertions,
               out->encrypted);
    }
    out->weak = rsp_saml_weak_signature(p, root, "the Response");
    if (assertion && !out->weak) {
        out->weak = rsp_saml_weak_signature(p, assertion, "the assertion");
    }
    /* An EncryptedID in the assertion (its Subject's, say): refused now
     * if its algorithms are, before Lasso reads the Response; decrypted
     * after (rsp_saml_encrypted_id_take), once Lasso verified the
     * signatures. */
    if (assertion && (why = encrypted_ids_refused(p, assertion, 0, &tag)) != NULL) {
        REFUSE(tag, "%s", why);
    }
    if (enc) {
        for (n = enc->children; n; n = n->next) {
            if (rsp_xml_is(n, RSP_XENC_NS, "EncryptedData")) {
                n_data++;
                data = n;
            }
        }
        if (n_data != 1) {
            REFUSE("encryption", "%d EncryptedData in the EncryptedAssertion "
                   "(exactly one is accepted)", n_data);
        }
        out->data_alg = rsp_xml_attr(p, rsp_xml_child(data, RSP_XENC_NS, "EncryptionMethod"),
                             "Algorithm");
        if (!rsp_xenc_data_alg(out->data_alg)) {
            REFUSE("encryption-algorithm", "data encryption %s refused (AES-GCM "
                   "or AES-CBC only)", out->data_alg ? out->data_alg : "(none)");
        }
        if ((why = check_keys(out, p, enc, 0, &tag)) != NULL) {
            REFUSE(tag, "%s", why);
        }
        if (out->keys == 0) {
            REFUSE("encryption", "no EncryptedKey in the EncryptedAssertion");
        }
        /* A CipherReference's URI (http, file) would be fetched, before
         * any signature is checked. */
        if (has_el(enc, RSP_XENC_NS, "CipherReference")) {
            REFUSE("encryption", "a CipherReference in the EncryptedAssertion "
                   "(only CipherValue: a reference is not fetched)");
        }
        /* Where keys are looked for: in the EncryptedData's (first)
         * ds:KeyInfo, or beside the EncryptedData. One elsewhere only
         * would be no key at all. */
        out->enc = enc;
        out->enc_data = data;
        out->enc_key = rsp_xml_child(rsp_xml_child(data, NS_DS, "KeyInfo"), RSP_XENC_NS,
                             "EncryptedKey");
        if (!out->enc_key) {
            out->enc_key = rsp_xml_child(enc, RSP_XENC_NS, "EncryptedKey");
        }
        if (!out->enc_key) {
            REFUSE("encryption", "no EncryptedKey beside the EncryptedData or "
                   "in its KeyInfo");
        }
    }
    if (doc_out) {
        *doc_out = doc;
    }
    else {
        xmlFreeDoc(doc);
    }
    return APR_SUCCESS;

refused:
    if (doc) {
        xmlFreeDoc(doc);
    }
    return APR_EGENERAL;
}

/* ---- what comes out of a decryption ---- */

static const rsp_scan_limits_t plaintext_limits = {
    RSP_DECRYPTED_MAX_SIZE, RSP_DECRYPTED_MAX_DEPTH,
    RSP_DECRYPTED_MAX_ELEMENTS, RSP_DECRYPTED_MAX_ATTRIBUTES, 1,
    "decrypted-size", "Assertion", "assertion-count"
};

const char *rsp_saml_plaintext_shape(apr_pool_t *p, const char *text,
                                     apr_size_t len, const char **id,
                                     const char **check)
{
    xmlDocPtr doc;
    xmlNodePtr root;
    const char *why;

    if ((why = rsp_xml_scan(p, text, len, &plaintext_limits, check)) != NULL) {
        return why;
    }
    *check = "xml";
    if (memchr(text, '\0', len)) {
        return "a NUL byte";
    }
    /* Within the limits now. As xmlsec reads it: UTF-8 (its context
     * declares no encoding), nothing from the network. */
    doc = xmlReadMemory(text, (int)len, NULL, "UTF-8",
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    if (!doc) {
        return "not well-formed XML";
    }
    root = xmlDocGetRootElement(doc);
    if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE";
    }
    else if (!rsp_xml_is(root, NS_SAML, "Assertion")) {
        *check = "assertion-count";
        why = apr_psprintf(p, "the element is %s%s%s, not saml:Assertion",
                           root && root->ns && root->ns->href
                               ? (const char *)root->ns->href : "",
                           root && root->ns && root->ns->href ? ":" : "",
                           root ? (const char *)root->name : "(none)");
    }
    else if ((why = encrypted_ids_refused(p, root, 0, check)) == NULL && id) {
        *id = rsp_xml_attr(p, root, "ID");
    }
    xmlFreeDoc(doc);
    if (!why) {
        *check = NULL;
    }
    return why;
}

/* ---- an EncryptedID, and what comes out of it ---- */

apr_status_t rsp_saml_encrypted_id_shape(rsp_shape_t *out, apr_pool_t *p,
                                         const char *xml, apr_size_t len,
                                         const char *issuer,
                                         xmlDocPtr *doc_out,
                                         const char **check,
                                         const char **detail)
{
    xmlDocPtr doc = NULL;
    xmlNodePtr root, n;
    const char *why, *tag;

    memset(out, 0, sizeof(*out));
    *doc_out = NULL;
    out->issuer = issuer ? issuer : "(no Issuer)";
    if (len > (apr_size_t)0x7fffffff || memchr(xml, '\0', len)) {
        REFUSE("xml", "the EncryptedID is too large or holds a NUL byte");
    }
    if ((why = rsp_xml_scan(p, xml, len, &message_limits, &tag)) != NULL) {
        REFUSE(tag, "the EncryptedID: %s", why);
    }
    doc = xmlReadMemory(xml, (int)len, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    if (!doc || doc->intSubset || doc->extSubset) {
        REFUSE("xml", "the EncryptedID is not well-formed XML without a "
               "DOCTYPE");
    }
    root = xmlDocGetRootElement(doc);
    if (!rsp_xml_is(root, NS_SAML, "EncryptedID")) {
        REFUSE("xml", "not a saml:EncryptedID");
    }
    /* the algorithms, as before Lasso read the message */
    if ((why = encrypted_id_refused(p, root, &tag)) != NULL) {
        REFUSE(tag, "%s", why);
    }
    for (n = root->children; n; n = n->next) {
        if (rsp_xml_is(n, RSP_XENC_NS, "EncryptedData")) {
            out->enc_data = n;
        }
    }
    out->data_alg = rsp_xml_attr(p, rsp_xml_child(out->enc_data, RSP_XENC_NS,
                                  "EncryptionMethod"), "Algorithm");
    if ((why = check_keys(out, p, root, 0, &tag)) != NULL) {
        REFUSE(tag, "EncryptedID: %s", why);
    }
    if (has_el(root, RSP_XENC_NS, "CipherReference")) {
        REFUSE("encryption", "a CipherReference in the EncryptedID (only "
               "CipherValue: a reference is not fetched)");
    }
    out->enc = root;
    out->enc_key = rsp_xml_child(rsp_xml_child(out->enc_data, NS_DS, "KeyInfo"), RSP_XENC_NS,
                         "EncryptedKey");
    if (!out->enc_key) {
        out->enc_key = rsp_xml_child(root, RSP_XENC_NS, "EncryptedKey");
    }
    if (!out->enc_key) {
        REFUSE("encryption", "no EncryptedKey beside the EncryptedData of "
               "the EncryptedID or in its KeyInfo");
    }
    *doc_out = doc;
    return APR_SUCCESS;

refused:
    if (doc) {
        xmlFreeDoc(doc);
    }
    return APR_EGENERAL;
}

static const rsp_scan_limits_t name_id_limits = {
    RSP_DECRYPTED_ID_MAX_SIZE, 1, 0, RSP_DECRYPTED_ID_MAX_ATTRIBUTES, 1,
    "decrypted-size", "NameID", "subject"
};

const char *rsp_saml_name_id_plaintext(apr_pool_t *p, const char *text,
                                       apr_size_t len, rsp_name_id_t *out,
                                       const char **check)
{
    xmlDocPtr doc;
    xmlNodePtr root, n;
    const char *why = NULL;
    xmlChar *t;

    memset(out, 0, sizeof(*out));
    if ((why = rsp_xml_scan(p, text, len, &name_id_limits, check)) != NULL) {
        return why;
    }
    *check = "xml";
    if (memchr(text, '\0', len)) {
        return "a NUL byte";
    }
    doc = xmlReadMemory(text, (int)len, NULL, "UTF-8",
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    if (!doc) {
        return "not well-formed XML";
    }
    root = xmlDocGetRootElement(doc);
    if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE";
        goto done;
    }
    *check = "subject";
    if (!rsp_xml_is(root, NS_SAML, "NameID")) {
        why = apr_psprintf(p, "the element is %s%s%s, not saml:NameID (a "
                           "BaseID or anything else is not accepted)",
                           root && root->ns && root->ns->href
                               ? (const char *)root->ns->href : "",
                           root && root->ns && root->ns->href ? ":" : "",
                           root ? (const char *)root->name : "(none)");
        goto done;
    }
    /* its value one text: no comment, CDATA or entity splits it */
    for (n = root->children; n; n = n->next) {
        if (n->type != XML_TEXT_NODE || n != root->children) {
            why = "a NameID whose value is not one text";
            goto done;
        }
    }
    t = xmlNodeGetContent(root);
    out->value = t && *t ? apr_pstrdup(p, (const char *)t) : NULL;
    xmlFree(t);
    if (!out->value) {
        why = "an empty NameID";
        goto done;
    }
    out->format = rsp_xml_attr(p, root, "Format");
    out->name_qualifier = rsp_xml_attr(p, root, "NameQualifier");
    out->sp_name_qualifier = rsp_xml_attr(p, root, "SPNameQualifier");
    out->sp_provided_id = rsp_xml_attr(p, root, "SPProvidedID");
done:
    xmlFreeDoc(doc);
    if (why) {
        memset(out, 0, sizeof(*out));
    }
    else {
        *check = NULL;
    }
    return why;
}
