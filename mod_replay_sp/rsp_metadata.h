/* IdP metadata files as federations publish them: one EntityDescriptor,
 * or an EntitiesDescriptor (nested ones too) holding many entities, IdPs
 * and SPs alike. */
#ifndef RSP_METADATA_H
#define RSP_METADATA_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>

/* The entities of md that are IdPs (an IDPSSODescriptor), each as a
 * document of its own (const char *: an EntityDescriptor with every
 * namespace it uses declared), in document order. A file of one
 * EntityDescriptor gives that one; entities without an IDPSSODescriptor
 * in an aggregate are skipped. APR_EINVAL with *err when md is not SAML
 * 2.0 metadata, has a DOCTYPE, or holds no IdP. */
apr_status_t rsp_metadata_idps(apr_array_header_t **out, apr_pool_t *p,
                               const char *md, const char **err);

/* What is done with each IdP entity of a document: NULL, or why the
 * whole document is refused. */
typedef const char *(*rsp_metadata_idp_fn)(void *baton, xmlNodePtr ed);

/* fn on each entity of md (len bytes) that is an IdP, in document order,
 * the document parsed once; stops at fn's first refusal (in *err). The
 * same refusals as rsp_metadata_idps otherwise. An IdP is an
 * EntityDescriptor with an IDPSSODescriptor that supports SAML 2.0. */
apr_status_t rsp_metadata_each_idp(const char *md, apr_size_t len,
                                   rsp_metadata_idp_fn fn, void *baton,
                                   const char **err);

/* The same on a parsed document (NULL: one that did not parse). */
apr_status_t rsp_metadata_each_idp_in(xmlDocPtr doc, rsp_metadata_idp_fn fn,
                                      void *baton, const char **err);

/* ed's IDPSSODescriptor that supports SAML 2.0, or NULL. */
xmlNodePtr rsp_metadata_idp_role(const xmlNode *ed);

/* md parsed as the readers of metadata parse it (no network, no entity
 * expansion, large documents allowed); NULL when not well-formed. */
xmlDocPtr rsp_metadata_read(const char *md, apr_size_t len);

/* An XPath context over ed's document with ed as its context node and
 * the metadata namespaces under their usual prefixes (md, mdui, mdattr,
 * mdrpi, saml, shibmd, ds); free with xmlXPathFreeContext. */
xmlXPathContextPtr rsp_metadata_xpath(xmlNodePtr ed);

#endif
