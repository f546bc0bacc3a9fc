/* The IdPs an SP trusts, read once from all of its metadata into a
 * compact index: entityID -> what a sign-in, a login, a logout and
 * discovery need of that IdP (endpoints, signing certificates, scopes,
 * how it is shown). A federation's aggregate is parsed once, not once per
 * entity or per reader, and nothing in the index is an OpenSSL or Lasso
 * object: keys are decoded, and Lasso providers built, only for the IdPs
 * that are used (rsp_saml.c), so thousands of IdPs cost their bytes, not
 * their keys. The index is built at startup (in httpd's parent, shared
 * with the children it forks) and read without locks afterwards. */
#ifndef RSP_IDP_INDEX_H
#define RSP_IDP_INDEX_H

#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include <libxml/tree.h>

#include "rsp_idp_ui.h"
#include "rsp_scope.h"

/* A certificate, DER. */
typedef struct {
    unsigned char *der;
    int len;
} rsp_der_t;

/* A SingleSignOnService or SingleLogoutService. */
typedef struct {
    const char *binding;
    const char *location;
    const char *response_location;    /* NULL: none */
} rsp_md_endpoint_t;

typedef struct {
    const char *entity_id;
    int pos;                          /* its place in the index, from 0 */
    int want_requests_signed;         /* WantAuthnRequestsSigned="true" */
    apr_array_header_t *sso;          /* rsp_md_endpoint_t */
    apr_array_header_t *slo;          /* rsp_md_endpoint_t */
    apr_array_header_t *name_id_formats; /* const char * */
    apr_array_header_t *certs;        /* rsp_der_t: signing certificates
                                       * (KeyDescriptor use="signing" or
                                       * without use), not yet decoded */
    rsp_scopes_t *scopes;             /* shibmd:Scope it declares */
    rsp_idp_ui_t *ui;                 /* how discovery shows it */
    apr_time_t valid_until;           /* of its signed source; 0: unsigned */
} rsp_idp_t;

typedef struct {
    apr_array_header_t *list;         /* rsp_idp_t *, in the order read */
    apr_array_header_t *uis;          /* rsp_idp_ui_t *, the same order */
    apr_hash_t *by_id;                /* entityID -> rsp_idp_t * */
    int skipped;                      /* IdPs left out by the filters */
    apr_time_t valid_until;           /* the earliest of the IdPs' (0:
                                       * none is from a signed source) */
} rsp_idp_index_t;

rsp_idp_index_t *rsp_idp_index_make(apr_pool_t *p);

/* The IdPs of md (len bytes: one EntityDescriptor, or an aggregate) kept
 * by includes and excludes (rsp_md_filter.h; either may be NULL), added
 * to ix with valid_until. The document is parsed once. APR_EINVAL with
 * *err for what rsp_metadata_each_idp refuses, an IdP without an
 * entityID, one already in ix, and scopes that cannot be read. */
apr_status_t rsp_idp_index_add(rsp_idp_index_t *ix, apr_pool_t *p,
                               const char *md, apr_size_t len,
                               apr_time_t valid_until,
                               const apr_array_header_t *includes,
                               const apr_array_header_t *excludes,
                               const char **err);

/* The same of a parsed document (a signed file's tree as verified:
 * rsp_md_verify_tree), which is not parsed again. */
apr_status_t rsp_idp_index_add_tree(rsp_idp_index_t *ix, apr_pool_t *p,
                                    xmlDocPtr tree, apr_time_t valid_until,
                                    const apr_array_header_t *includes,
                                    const apr_array_header_t *excludes,
                                    const char **err);

/* The IdP with that entityID, or NULL. */
const rsp_idp_t *rsp_idp_find(const rsp_idp_index_t *ix, const char *entity_id);

/* How many IdPs, and the nth (in the order read). */
int rsp_idp_count(const rsp_idp_index_t *ix);
const rsp_idp_t *rsp_idp_at(const rsp_idp_index_t *ix, int n);

/* The IdP's metadata as Lasso reads it: its entityID, its
 * IDPSSODescriptor's endpoints, NameID formats and
 * WantAuthnRequestsSigned; no keys (Lasso is given those decoded), no
 * extensions. */
const char *rsp_idp_lasso_metadata(apr_pool_t *p, const rsp_idp_t *idp);

#endif
