#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <zlib.h>

#include "rsp_saml_shape.h"
#include "rsp_util.h"

#define NS_SAMLP "urn:oasis:names:tc:SAML:2.0:protocol"
#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"
#define NS_DS "http://www.w3.org/2000/09/xmldsig#"

static int is_el(const xmlNode *n, const char *ns, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href
        && !strcmp((const char *)n->ns->href, ns)
        && !strcmp((const char *)n->name, name);
}

static xmlNodePtr child(xmlNodePtr n, const char *ns, const char *name)
{
    for (n = n ? n->children : NULL; n; n = n->next) {
        if (is_el(n, ns, name)) {
            return n;
        }
    }
    return NULL;
}

/* An attribute's value copied to p, or NULL. */
static const char *attr(apr_pool_t *p, xmlNodePtr n, const char *name)
{
    xmlChar *v = n ? xmlGetNoNsProp(n, BAD_CAST name) : NULL;
    const char *out = v ? apr_pstrdup(p, (const char *)v) : NULL;

    xmlFree(v);
    return out;
}

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
        if (!is_el(sig, NS_DS, "Signature")) {
            continue;
        }
        si = child(sig, NS_DS, "SignedInfo");
        n = child(si, NS_DS, "SignatureMethod");
        if (n && is_sha1(attr(p, n, "Algorithm"))) {
            return apr_psprintf(p, "%s signature uses %s", where,
                                rsp_alg_name(attr(p, n, "Algorithm")));
        }
        for (n = si ? si->children : NULL; n; n = n->next) {
            xmlNodePtr dm = is_el(n, NS_DS, "Reference")
                ? child(n, NS_DS, "DigestMethod") : NULL;
            if (dm && is_sha1(attr(p, dm, "Algorithm"))) {
                return apr_psprintf(p, "%s signature uses the %s digest",
                                    where, rsp_alg_name(attr(p, dm, "Algorithm")));
            }
        }
    }
    return NULL;
}

static int data_alg_ok(const char *a)
{
    return a && (!strcmp(a, RSP_ALG_AES128_CBC) || !strcmp(a, RSP_ALG_AES192_CBC)
                 || !strcmp(a, RSP_ALG_AES256_CBC)
                 || !strcmp(a, RSP_ALG_AES128_GCM)
                 || !strcmp(a, RSP_ALG_AES192_GCM)
                 || !strcmp(a, RSP_ALG_AES256_GCM));
}

/* Every EncryptedKey below n, wherever it sits (beside the EncryptedData,
 * in its KeyInfo, or deeper): each must use RSA-OAEP. Returns the refusal
 * detail or NULL; counts them in *count. */
static const char *check_keys(rsp_shape_t *out, apr_pool_t *p, xmlNodePtr n,
                              int depth)
{
    const char *why;

    if (depth > 16) {
        return "EncryptedAssertion nested too deeply";
    }
    for (n = n->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) {
            continue;
        }
        if (is_el(n, RSP_XENC_NS, "EncryptedKey")) {
            const char *alg = attr(p, child(n, RSP_XENC_NS, "EncryptionMethod"),
                                   "Algorithm");
            out->keys++;
            if (!out->key_alg) {
                out->key_alg = alg ? alg : "(none)";
            }
            if (!alg || strcmp(alg, RSP_ALG_RSA_OAEP_MGF1P) != 0) {
                return apr_psprintf(p, "key transport %s refused (only "
                                    "rsa-oaep-mgf1p; RSA-1.5 is a decryption "
                                    "oracle)", alg ? alg : "(none)");
            }
        }
        if ((why = check_keys(out, p, n, depth + 1)) != NULL) {
            return why;
        }
    }
    return NULL;
}

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

const char *rsp_saml_redirect_peek(apr_pool_t *p, const char *message,
                                   const char *root_name, const char **issuer,
                                   const char **check)
{
    char *raw, *xml;
    apr_size_t rawlen, xmllen;
    xmlDocPtr doc;
    xmlNodePtr root, n;
    const char *why = NULL;
    int issuers = 0, ids = 0;

    *issuer = NULL;
    *check = "binding";
    if (!message || rsp_b64_decode(p, message, 0, &raw, &rawlen) < 0) {
        return "the message is not base64";
    }
    if ((why = inflate_raw(p, raw, rawlen, &xml, &xmllen)) != NULL) {
        return why;
    }
    *check = "xml";
    if (memchr(xml, '\0', xmllen)) {
        return "a NUL byte in the message";
    }
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
    else if (!is_el(root, NS_SAMLP, root_name)) {
        why = apr_psprintf(p, "not a samlp:%s", root_name);
    }
    for (n = why ? NULL : root->children; n; n = n->next) {
        if (is_el(n, NS_SAML, "Issuer")) {
            xmlChar *t = xmlNodeGetContent(n);
            *issuer = t && *t ? apr_pstrdup(p, (const char *)t) : NULL;
            xmlFree(t);
            issuers++;
        }
        else if (is_el(n, NS_SAML, "BaseID") || is_el(n, NS_SAML, "NameID")
                 || is_el(n, NS_SAML, "EncryptedID")) {
            ids++;
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
    xmlFreeDoc(doc);
    if (why) {
        *issuer = NULL;
    }
    return why;
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
    const char *why;
    int n_data = 0;

    memset(out, 0, sizeof(*out));
    if (doc_out) {
        *doc_out = NULL;
    }
    if (len > (apr_size_t)0x7fffffff) {
        REFUSE("xml", "message too large");
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
    if (!is_el(root, NS_SAMLP, "Response")) {
        REFUSE("xml", "not a samlp:Response");
    }
    for (n = root->children; n; n = n->next) {
        if (is_el(n, NS_SAML, "Assertion")) {
            out->assertions++;
            assertion = n;
        }
        else if (is_el(n, NS_SAML, "EncryptedAssertion")) {
            out->encrypted++;
            enc = n;
        }
        else if (is_el(n, NS_DS, "Signature")) {
            out->response_signed = 1;
        }
        else if (is_el(n, NS_SAML, "Issuer") && !out->issuer) {
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
    if (enc) {
        for (n = enc->children; n; n = n->next) {
            if (is_el(n, RSP_XENC_NS, "EncryptedData")) {
                n_data++;
                data = n;
            }
        }
        if (n_data != 1) {
            REFUSE("encryption", "%d EncryptedData in the EncryptedAssertion "
                   "(exactly one is accepted)", n_data);
        }
        out->data_alg = attr(p, child(data, RSP_XENC_NS, "EncryptionMethod"),
                             "Algorithm");
        if (!data_alg_ok(out->data_alg)) {
            REFUSE("encryption-algorithm", "data encryption %s refused (AES-GCM "
                   "or AES-CBC only)", out->data_alg ? out->data_alg : "(none)");
        }
        if ((why = check_keys(out, p, enc, 0)) != NULL) {
            REFUSE("encryption-algorithm", "%s", why);
        }
        if (out->keys == 0) {
            REFUSE("encryption", "no EncryptedKey in the EncryptedAssertion");
        }
        /* Where the key is looked for: beside the EncryptedData, or in its
         * (first) ds:KeyInfo. One elsewhere only would be no key at all
         * (and costs Lasso a copy of our private key it never frees). */
        if (!child(enc, RSP_XENC_NS, "EncryptedKey")
            && !child(child(data, NS_DS, "KeyInfo"), RSP_XENC_NS, "EncryptedKey")) {
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
