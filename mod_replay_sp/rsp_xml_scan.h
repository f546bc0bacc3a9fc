/* A scan of an XML message's bytes before libxml2 reads them: what
 * libxml2 does not bound (depth, elements, attributes), DOCTYPEs, and
 * what a decrypted element may have beside it. */
#ifndef RSP_XML_SCAN_H
#define RSP_XML_SCAN_H

#include <apr_pools.h>

/* What rsp_xml_scan checks: limits (0: none) and, for a decrypted assertion,
 * that there is exactly one element at the top and nothing beside it but
 * whitespace (what a document may have beside its root otherwise, an XML
 * declaration, comments, processing instructions, is not counted). */
typedef struct {
    apr_size_t max_size;
    int max_depth;
    int max_elements;
    int max_attributes;
    int one_element;
    const char *size_check;   /* the check= of size, elements, attributes */
    const char *what;         /* one_element: the element's name, */
    const char *count_check;  /* and the check= of anything beside it */
} rsp_scan_limits_t;

/* The limits, the count of top-level elements and what is beside them, by
 * a scan of the bytes: every '<' outside comments, CDATA sections,
 * processing instructions and quoted attribute values starts a tag, and
 * every '=' in a start tag outside its quoted values is an attribute's.
 * That is exact on XML that is well-formed; what the scan finds is not
 * (a tag, comment or value not closed, an end tag with no start) is
 * refused here, and what it does not find is refused by the parse after,
 * which then reads no more than the scan counted. NULL when s passes;
 * else why (in p), with *check the check= of the refusal: lim's
 * size_check or count_check, "xml" (not well-formed, a DOCTYPE) or
 * "xml-depth". */
const char *rsp_xml_scan(apr_pool_t *p, const char *s, apr_size_t len,
                         const rsp_scan_limits_t *lim, const char **check);

#endif
