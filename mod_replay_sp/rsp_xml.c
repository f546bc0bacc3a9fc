/* What every reader of SAML XML here asks of a libxml2 tree (rsp_xml.h). */
#include <string.h>

#include <apr_strings.h>

#include "rsp_xml.h"

int rsp_xml_is(const xmlNode *n, const char *ns, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href
        && !strcmp((const char *)n->ns->href, ns)
        && (!name || !strcmp((const char *)n->name, name));
}

xmlNodePtr rsp_xml_child(xmlNodePtr n, const char *ns, const char *name)
{
    for (n = n ? n->children : NULL; n; n = n->next) {
        if (rsp_xml_is(n, ns, name)) {
            return n;
        }
    }
    return NULL;
}

const char *rsp_xml_attr(apr_pool_t *p, xmlNodePtr n, const char *name)
{
    xmlChar *v = n ? xmlGetNoNsProp(n, BAD_CAST name) : NULL;
    const char *out = v ? apr_pstrdup(p, (const char *)v) : NULL;

    xmlFree(v);
    return out;
}
