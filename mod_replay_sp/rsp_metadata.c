#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "rsp_metadata.h"

#define NS_MD "urn:oasis:names:tc:SAML:2.0:metadata"
#define MAX_DEPTH 16

static int is_md(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href
        && !strcmp((const char *)n->ns->href, NS_MD)
        && !strcmp((const char *)n->name, name);
}

static int has_idp_role(const xmlNode *ed)
{
    const xmlNode *c;

    for (c = ed->children; c; c = c->next) {
        if (is_md(c, "IDPSSODescriptor")) {
            return 1;
        }
    }
    return 0;
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

static const char *walk(apr_array_header_t *out, apr_pool_t *p, xmlNodePtr n,
                        int depth)
{
    xmlNodePtr c;
    const char *why;

    if (depth > MAX_DEPTH) {
        return "EntitiesDescriptor nested too deeply";
    }
    if (is_md(n, "EntityDescriptor")) {
        if (has_idp_role(n)) {
            const char *text = standalone(p, n);
            if (!text) {
                return "cannot copy an EntityDescriptor";
            }
            APR_ARRAY_PUSH(out, const char *) = text;
        }
        return NULL;
    }
    for (c = n->children; c; c = c->next) {
        if ((is_md(c, "EntityDescriptor") || is_md(c, "EntitiesDescriptor"))
            && (why = walk(out, p, c, depth + 1)) != NULL) {
            return why;
        }
    }
    return NULL;
}

apr_status_t rsp_metadata_idps(apr_array_header_t **out, apr_pool_t *p,
                               const char *md, const char **err)
{
    xmlDocPtr doc = xmlReadMemory(md, (int)strlen(md), NULL, NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR
                                      | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
    apr_array_header_t *list = apr_array_make(p, 4, sizeof(const char *));
    const char *why = NULL;

    if (!doc) {
        why = "not well-formed XML";
    }
    else if (doc->intSubset || doc->extSubset) {
        why = "a DOCTYPE is not allowed in metadata";
    }
    else if (!is_md(root, "EntityDescriptor") && !is_md(root, "EntitiesDescriptor")) {
        why = "not SAML 2.0 metadata (EntityDescriptor or EntitiesDescriptor)";
    }
    else if ((why = walk(list, p, root, 0)) == NULL && list->nelts == 0) {
        why = is_md(root, "EntityDescriptor")
            ? "the entity has no IDPSSODescriptor"
            : "no entity with an IDPSSODescriptor in the EntitiesDescriptor";
    }
    if (doc) {
        xmlFreeDoc(doc);
    }
    if (why) {
        *err = why;
        return APR_EINVAL;
    }
    *out = list;
    return APR_SUCCESS;
}
