/* What every reader of SAML XML here asks of a libxml2 tree. */
#ifndef RSP_XML_H
#define RSP_XML_H

#include <apr_pools.h>
#include <libxml/tree.h>

/* Whether n is an element in namespace ns named name (NULL: any name). */
int rsp_xml_is(const xmlNode *n, const char *ns, const char *name);

/* n's first child element in ns named name, or NULL. */
xmlNodePtr rsp_xml_child(xmlNodePtr n, const char *ns, const char *name);

/* n's attribute name (in no namespace) in p, "" when empty; NULL when n
 * is NULL or has none. */
const char *rsp_xml_attr(apr_pool_t *p, xmlNodePtr n, const char *name);

#endif
