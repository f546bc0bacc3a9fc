/* IdP metadata files as federations publish them: one EntityDescriptor,
 * or an EntitiesDescriptor (nested ones too) holding many entities, IdPs
 * and SPs alike. */
#ifndef RSP_METADATA_H
#define RSP_METADATA_H

#include <apr_pools.h>
#include <apr_tables.h>

/* The entities of md that are IdPs (an IDPSSODescriptor), each as a
 * document of its own (const char *: an EntityDescriptor with every
 * namespace it uses declared), in document order. A file of one
 * EntityDescriptor gives that one; entities without an IDPSSODescriptor
 * in an aggregate are skipped. APR_EINVAL with *err when md is not SAML
 * 2.0 metadata, has a DOCTYPE, or holds no IdP. */
apr_status_t rsp_metadata_idps(apr_array_header_t **out, apr_pool_t *p,
                               const char *md, const char **err);

#endif
