/* A metadata file's own signature (rsp_md_verify.h). */
#include <string.h>

#include <apr_strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/keys.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmltree.h>

#include "rsp_md_verify.h"
#include "rsp_xml.h"
#include "rsp_util.h"

#define MD_NS "urn:oasis:names:tc:SAML:2.0:metadata"
#define DS_NS "http://www.w3.org/2000/09/xmldsig#"

/* Deeper than RSP_MD_MAX_DEPTH anywhere (iterative: no recursion on
 * input). */
static int too_deep(xmlNodePtr root)
{
    xmlNodePtr n = root;
    int depth = 1;

    while (n) {
        if (n->type == XML_ELEMENT_NODE && n->children) {
            if (++depth > RSP_MD_MAX_DEPTH) {
                return 1;
            }
            n = n->children;
            continue;
        }
        while (n && !n->next && n != root) {
            n = n->parent;
            depth--;
        }
        if (!n || n == root) {
            break;
        }
        n = n->next;
    }
    return 0;
}

/* The root's one ds:Signature child, or NULL with *why. */
static xmlNodePtr root_signature(xmlNodePtr root, const char **why)
{
    xmlNodePtr c, sig = NULL;

    for (c = root->children; c; c = c->next) {
        if (!rsp_xml_is(c, DS_NS, "Signature")) {
            continue;
        }
        if (sig) {
            *why = "the root element has more than one ds:Signature";
            return NULL;
        }
        sig = c;
    }
    if (!sig) {
        *why = "the root element is not signed (no ds:Signature child)";
    }
    return sig;
}

/* The Reference URIs of sig's SignedInfo: exactly one, naming the root
 * ("" or "#" its ID). */
static const char *one_reference_to_root(apr_pool_t *p, xmlNodePtr sig,
                                         const char *root_id)
{
    xmlNodePtr si = xmlSecFindChild(sig, BAD_CAST "SignedInfo", BAD_CAST DS_NS);
    xmlNodePtr c;
    int n = 0;

    for (c = si ? si->children : NULL; c; c = c->next) {
        xmlChar *uri;
        int ok;
        if (!rsp_xml_is(c, DS_NS, "Reference")) {
            continue;
        }
        if (++n > 1) {
            return "the signature has more than one Reference";
        }
        uri = xmlGetProp(c, BAD_CAST "URI");
        ok = uri && (!*uri || (uri[0] == '#' && root_id
                               && !strcmp((const char *)uri + 1, root_id)));
        if (!ok) {
            const char *why = apr_psprintf(
                p, "the signature's Reference (%s) is not the root element",
                uri ? (const char *)uri : "no URI");
            xmlFree(uri);
            return why;
        }
        xmlFree(uri);
    }
    return n ? NULL : "the signature has no Reference";
}

/* Whether an element other than root carries the ID id. */
static int id_elsewhere(xmlNodePtr root, const char *id)
{
    xmlNodePtr n = root->children;

    while (n) {
        if (n->type == XML_ELEMENT_NODE) {
            xmlChar *v = xmlGetProp(n, BAD_CAST "ID");
            int same = v && !strcmp((const char *)v, id);
            xmlFree(v);
            if (same) {
                return 1;
            }
            if (n->children) {
                n = n->children;
                continue;
            }
        }
        while (n && !n->next && n->parent != root) {
            n = n->parent;
        }
        n = n ? n->next : NULL;
    }
    return 0;
}

static const char *check_signature(apr_pool_t *p, xmlDocPtr doc, xmlNodePtr root,
                                   xmlNodePtr sig, const char *cert_pem)
{
    xmlSecDSigCtxPtr ctx = NULL;
    xmlSecKeyPtr key;
    xmlAttrPtr id_attr = xmlHasProp(root, BAD_CAST "ID");
    xmlChar *id = id_attr ? xmlNodeListGetString(doc, id_attr->children, 1) : NULL;
    const char *why = NULL;

    if (id && id_elsewhere(root, (const char *)id)) {
        why = "another element has the root element's ID";
        goto done;
    }
    if ((why = one_reference_to_root(p, sig, (const char *)id)) != NULL) {
        goto done;
    }
    if (id && !xmlGetID(doc, id) && !xmlAddID(NULL, doc, id, id_attr)) {
        why = "cannot register the root element's ID";
        goto done;
    }
    key = xmlSecCryptoAppKeyLoadMemory((const xmlSecByte *)cert_pem,
                                       (xmlSecSize)strlen(cert_pem),
                                       xmlSecKeyDataFormatCertPem, NULL, NULL,
                                       NULL);
    if (!key) {
        why = "the certificate cannot be read";
        goto done;
    }
    if (!(ctx = xmlSecDSigCtxCreate(NULL))) {
        xmlSecKeyDestroy(key);
        why = "cannot create a signature context";
        goto done;
    }
    ctx->signKey = key;
    ctx->enabledReferenceUris = xmlSecTransformUriTypeEmpty
                                | xmlSecTransformUriTypeSameDocument;
    /* What a Reference may do: the enveloped signature, a
     * canonicalisation, a SHA-2 digest. What SignedInfo may use: a
     * canonicalisation and an RSA or ECDSA signature over SHA-2. */
    if (xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformEnvelopedId) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformExclC14NId) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformInclC14NId) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformSha256Id) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformSha384Id) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformSha512Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformExclC14NId) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformInclC14NId) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformRsaSha256Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformRsaSha384Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformRsaSha512Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformEcdsaSha256Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformEcdsaSha384Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecTransformEcdsaSha512Id) < 0) {
        why = "cannot set up the signature context";
        goto done;
    }
    if (xmlSecDSigCtxVerify(ctx, sig) < 0) {
        why = "the signature cannot be checked (an algorithm other than SHA-2 "
              "with RSA or ECDSA, another transform, or malformed)";
        goto done;
    }
    if (ctx->status != xmlSecDSigStatusSucceeded) {
        why = "the signature does not verify with the certificate";
    }

done:
    if (ctx) {
        xmlSecDSigCtxDestroy(ctx);
    }
    xmlFree(id);
    return why;
}

apr_status_t rsp_md_verify(apr_pool_t *p, const char *md, apr_size_t len,
                           const char *cert_pem, apr_time_t now,
                           apr_int64_t max_validity_s, apr_time_t *valid_until,
                           const char **err)
{
    return rsp_md_verify_tree(p, md, len, cert_pem, now, max_validity_s,
                              valid_until, NULL, err);
}

apr_status_t rsp_md_verify_tree(apr_pool_t *p, const char *md, apr_size_t len,
                                const char *cert_pem, apr_time_t now,
                                apr_int64_t max_validity_s,
                                apr_time_t *valid_until, xmlDocPtr *tree,
                                const char **err)
{
    xmlDocPtr doc = NULL;
    xmlNodePtr root, sig;
    xmlChar *vu = NULL;
    const char *why = NULL;

    if (len > RSP_MD_MAX_SIZE) {
        *err = apr_psprintf(p, "larger than %d MiB", RSP_MD_MAX_SIZE >> 20);
        return APR_EINVAL;
    }
    doc = xmlReadMemory(md, (int)len, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING
                            | XML_PARSE_HUGE);
    if (!doc || !(root = xmlDocGetRootElement(doc))) {
        why = "not well-formed XML";
        goto done;
    }
    if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE (refused)";
        goto done;
    }
    if (!rsp_xml_is(root, MD_NS, "EntitiesDescriptor") && !rsp_xml_is(root, MD_NS, "EntityDescriptor")) {
        why = "the root element is not a SAML 2.0 EntitiesDescriptor or "
              "EntityDescriptor";
        goto done;
    }
    if (too_deep(root)) {
        why = apr_psprintf(p, "nested deeper than %d elements", RSP_MD_MAX_DEPTH);
        goto done;
    }
    if (!(sig = root_signature(root, &why))
        || (why = check_signature(p, doc, root, sig, cert_pem)) != NULL) {
        goto done;
    }
    /* Signed metadata says until when it may be used; replayed old
     * metadata (a revoked key, a removed IdP) must not be. */
    vu = xmlGetProp(root, BAD_CAST "validUntil");
    if (!vu || rsp_parse_time(valid_until, (const char *)vu) != APR_SUCCESS) {
        why = vu ? "validUntil is not a date and time"
                 : "no validUntil on the root element (signed metadata must say "
                   "until when it may be used)";
        goto done;
    }
    if (*valid_until <= now) {
        why = apr_psprintf(p, "expired: validUntil %s has passed",
                           (const char *)vu);
        goto done;
    }
    if (*valid_until - now > apr_time_from_sec(max_validity_s)) {
        why = apr_psprintf(p, "validUntil %s is more than "
                           "ReplaySPMetadataMaxValidity (%" APR_INT64_T_FMT
                           " s) away", (const char *)vu, max_validity_s);
    }

done:
    xmlFree(vu);
    if (doc && !why && tree) {
        *tree = doc; /* the caller reads the tree that verified */
    }
    else if (doc) {
        xmlFreeDoc(doc);
    }
    if (why) {
        *err = apr_pstrcat(p, "metadata signature: ", why, NULL);
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}
