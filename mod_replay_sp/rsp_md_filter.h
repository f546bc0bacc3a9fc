/* Which IdPs of a metadata file an SP trusts (ReplaySPIdPInclude,
 * ReplaySPIdPExclude): a federation's aggregate holds thousands; an
 * operator trusts "the federation's IdPs in category X", "those registered
 * by our federation", or names them. A selector is one of
 *
 *   entity=ENTITYID        the IdP's entityID
 *   registrar=AUTHORITY    mdrpi:RegistrationInfo's registrationAuthority
 *   category=URI           an entity category (the entity attribute
 *                          http://macedir.org/entity-category)
 *
 * An IdP is kept when no include selector is given or one matches, and no
 * exclude selector matches. */
#ifndef RSP_MD_FILTER_H
#define RSP_MD_FILTER_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <libxml/tree.h>

/* NULL when s is a selector; else why not. */
const char *rsp_md_selector_invalid(const char *s);

/* Whether the IdP of entity_md (one EntityDescriptor) is kept by
 * includes and excludes (const char *: selectors, either may be NULL). */
int rsp_md_filter_keeps(apr_pool_t *p, const char *entity_md,
                        const apr_array_header_t *includes,
                        const apr_array_header_t *excludes);

/* The same of an EntityDescriptor in a parsed document (NULL: one that
 * could not be read, which no include selector matches). */
int rsp_md_filter_keeps_entity(apr_pool_t *p, xmlNodePtr ed,
                               const apr_array_header_t *includes,
                               const apr_array_header_t *excludes);

#endif
