#include <limits.h>
#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpathInternals.h>

#include "rsp_metadata.h"
#include "rsp_xml.h"

#define NS_MD "urn:oasis:names:tc:SAML:2.0:metadata"
#define NS_SAML2P "urn:oasis:names:tc:SAML:2.0:protocol"
#define MAX_DEPTH 16

/* Whether the space-separated list names the SAML 2.0 protocol. */
static int saml2_protocol(const char *list)
{
    apr_size_t n = strlen(NS_SAML2P);
    const char *at;

    for (at = list ? strstr(list, NS_SAML2P) : NULL; at;
         at = strstr(at + 1, NS_SAML2P)) {
        if ((at == list || at[-1] == ' ' || at[-1] == '\t' || at[-1] == '\n')
            && (!at[n] || at[n] == ' ' || at[n] == '\t' || at[n] == '\n')) {
            return 1;
        }
    }
    return 0;
}

xmlNodePtr rsp_metadata_idp_role(const xmlNode *ed)
{
    xmlNodePtr c;

    for (c = ed->children; c; c = c->next) {
        if (rsp_xml_is(c, NS_MD, "IDPSSODescriptor")) {
            xmlChar *v = xmlGetProp(c, BAD_CAST "protocolSupportEnumeration");
            int ok = saml2_protocol((const char *)v);
            xmlFree(v);
            if (ok) {
                return c;
            }
        }
    }
    return NULL;
}

/* The entity as a standalone document. */
static const char *standalone(apr_pool_t *p, xmlNodePtr ed)
{
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr copy = doc ? xmlDocCopyNode(ed, doc, 1) : NULL;
    xmlChar *text = NULL;
    const char *out = NULL;
    int len = 0;

    if (copy) {
        xmlDocSetRootElement(doc, copy);
        /* namespaces declared on the EntitiesDescriptor are declared
         * again where the copy uses them */
        xmlReconciliateNs(doc, copy);
        xmlDocDumpMemory(doc, &text, &len);
    }
    if (text && len > 0) {
        out = apr_pstrmemdup(p, (const char *)text, (apr_size_t)len);
    }
    xmlFree(text);
    if (doc) {
        xmlFreeDoc(doc);
    }
    return out;
}

static const char *walk(xmlNodePtr n, int depth, rsp_metadata_idp_fn fn,
                        void *baton, int *found)
{
    xmlNodePtr c;
    const char *why;

    if (depth > MAX_DEPTH) {
        return "EntitiesDescriptor nested too deeply";
    }
    if (rsp_xml_is(n, NS_MD, "EntityDescriptor")) {
        if (rsp_metadata_idp_role(n)) {
            ++*found;
            return fn(baton, n);
        }
        return NULL;
    }
    for (c = n->children; c; c = c->next) {
        if ((rsp_xml_is(c, NS_MD, "EntityDescriptor") || rsp_xml_is(c, NS_MD, "EntitiesDescriptor"))
            && (why = walk(c, depth + 1, fn, baton, found)) != NULL) {
            return why;
        }
    }
    return NULL;
}

xmlDocPtr rsp_metadata_read(const char *md, apr_size_t len)
{
    if (len > INT_MAX) {
        return NULL;
    }
    return xmlReadMemory(md, (int)len, NULL, NULL,
                         XML_PARSE_NONET | XML_PARSE_NOERROR
                             | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
}

xmlXPathContextPtr rsp_metadata_xpath(xmlNodePtr ed)
{
    static const char *const ns[][2] = {
        {"md", NS_MD},
        {"mdui", "urn:oasis:names:tc:SAML:metadata:ui"},
        {"mdattr", "urn:oasis:names:tc:SAML:metadata:attribute"},
        {"mdrpi", "urn:oasis:names:tc:SAML:metadata:rpi"},
        {"saml", "urn:oasis:names:tc:SAML:2.0:assertion"},
        {"shibmd", "urn:mace:shibboleth:metadata:1.0"},
        {"ds", "http://www.w3.org/2000/09/xmldsig#"},
    };
    xmlXPathContextPtr ctx = ed ? xmlXPathNewContext(ed->doc) : NULL;
    apr_size_t i;

    for (i = 0; ctx && i < sizeof(ns) / sizeof(ns[0]); i++) {
        xmlXPathRegisterNs(ctx, BAD_CAST ns[i][0], BAD_CAST ns[i][1]);
    }
    if (ctx) {
        ctx->node = ed;
    }
    return ctx;
}

apr_status_t rsp_metadata_each_idp_in(xmlDocPtr doc, rsp_metadata_idp_fn fn,
                                      void *baton, const char **err)
{
    xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
    const char *why = NULL;
    int found = 0;

    if (!doc) {
        why = "not well-formed XML";
    }
    else if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE is not allowed in metadata";
    }
    else if (!rsp_xml_is(root, NS_MD, "EntityDescriptor") && !rsp_xml_is(root, NS_MD, "EntitiesDescriptor")) {
        why = "not SAML 2.0 metadata (EntityDescriptor or EntitiesDescriptor)";
    }
    else if ((why = walk(root, 0, fn, baton, &found)) == NULL && found == 0) {
        why = rsp_xml_is(root, NS_MD, "EntityDescriptor")
            ? "the entity has no IDPSSODescriptor"
            : "no entity with an IDPSSODescriptor in the EntitiesDescriptor";
    }
    if (why) {
        *err = why;
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}

apr_status_t rsp_metadata_each_idp(const char *md, apr_size_t len,
                                   rsp_metadata_idp_fn fn, void *baton,
                                   const char **err)
{
    xmlDocPtr doc = rsp_metadata_read(md, len);
    apr_status_t rv = rsp_metadata_each_idp_in(doc, fn, baton, err);

    if (doc) {
        xmlFreeDoc(doc);
    }
    return rv;
}

typedef struct {
    apr_pool_t *p;
    apr_array_header_t *list;
} copies_t;

static const char *copy_one(void *baton, xmlNodePtr ed)
{
    copies_t *c = baton;
    const char *text = standalone(c->p, ed);

    if (!text) {
        return "cannot copy an EntityDescriptor";
    }
    APR_ARRAY_PUSH(c->list, const char *) = text;
    return NULL;
}

apr_status_t rsp_metadata_idps(apr_array_header_t **out, apr_pool_t *p,
                               const char *md, const char **err)
{
    copies_t c;

    c.p = p;
    c.list = apr_array_make(p, 4, sizeof(const char *));
    if (rsp_metadata_each_idp(md, strlen(md), copy_one, &c, err)
        != APR_SUCCESS) {
        return APR_EINVAL;
    }
    *out = c.list;
    return APR_SUCCESS;
}
