/* Scoped attributes: an IdP may assert only values in the scopes its
 * metadata declares (shibmd:Scope, literal or regexp="true").
 *
 * A scoped attribute's value is "local@scope", with exactly one '@'. The
 * scoped attributes are eduPersonPrincipalName and
 * eduPersonScopedAffiliation (by OID and by name), SAML subject-id and
 * pairwise-id, and those an operator names (ReplaySPScopedAttribute). A
 * value whose scope the issuing IdP did not declare, or that has no scope
 * or more than one '@', is dropped. An IdP that declares no scope asserts
 * no scoped value. */
#ifndef RSP_SCOPE_H
#define RSP_SCOPE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <libxml/tree.h>

typedef struct rsp_scopes rsp_scopes_t;

/* One value dropped: the attribute's name and the scope it claimed (NULL:
 * none, or more than one '@'). The value itself is not kept. */
typedef struct {
    const char *name;
    const char *scope;
} rsp_scope_drop_t;

/* The scopes one IdP's metadata (one EntityDescriptor) declares, in its
 * EntityDescriptor's or its IDPSSODescriptor's Extensions. APR_EINVAL with
 * *err for an empty scope, a bad regexp="" value or a regular expression
 * that does not compile (POSIX extended, matched against the whole scope).
 * Compiled expressions are freed with p. */
apr_status_t rsp_scopes_of_metadata(rsp_scopes_t **out, apr_pool_t *p,
                                    const char *md, const char **err);

/* The same of an EntityDescriptor in a parsed document. */
apr_status_t rsp_scopes_of_entity(rsp_scopes_t **out, apr_pool_t *p,
                                  xmlNodePtr ed, const char **err);

/* How many scopes s declares. */
int rsp_scopes_count(const rsp_scopes_t *s);

/* Whether scope is one s declares: a literal one equal to it (letter case
 * aside: scopes are domain names), or a regular expression matching all
 * of it. */
int rsp_scope_allowed(const rsp_scopes_t *s, const char *scope);

/* Whether name is a scoped attribute: one of the defaults or one of extra
 * (const char *; may be NULL). */
int rsp_scoped_attribute(const apr_array_header_t *extra, const char *name);

/* Drop from attrs (rsp_attribute_t, rsp_saml.h) every value of a scoped
 * attribute that s does not allow (s NULL: no scope declared), in place;
 * what was dropped is returned (rsp_scope_drop_t, empty: nothing). */
apr_array_header_t *rsp_scope_filter(apr_pool_t *p, const rsp_scopes_t *s,
                                     const apr_array_header_t *extra,
                                     apr_array_header_t *attrs);

#endif
