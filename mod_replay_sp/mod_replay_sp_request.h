/* What every endpoint needs of a request (mod_replay_sp_request.c): which
 * endpoint it is, public URLs, the replica's name, the session cookie,
 * query arguments, redirect targets, the fail-closed answer, and this
 * worker's Lasso server. Below the endpoints: it calls none of them. */
#ifndef MOD_REPLAY_SP_REQUEST_H
#define MOD_REPLAY_SP_REQUEST_H

#include "mod_replay_sp_config.h"

/* The first value of attribute name, or NULL. */
const char *rsp_attribute(const apr_array_header_t *attrs, const char *name);

typedef enum {
    RSP_EP_NONE = 0, RSP_EP_ACS, RSP_EP_METADATA, RSP_EP_LOGIN, RSP_EP_LOGOUT,
    RSP_EP_SLO, RSP_EP_DISCOFEED, RSP_EP_DISCOVERY
} rsp_endpoint_t;
rsp_endpoint_t rsp_endpoint_of(request_rec *r, const rsp_dir_cfg_t *dc);

/* The public URL of an endpoint: scheme, ServerName and port as httpd
 * derives them (UseCanonicalName), plus the endpoint path. */
const char *rsp_endpoint_url(request_rec *r, const rsp_dir_cfg_t *dc,
                             const char *leaf);

/* Which replica this is, for claims and log lines: ReplaySPReplicaName,
 * or this host's name (given once, in post_config, by
 * rsp_replica_host) and the port the request came in on. */
const char *rsp_replica(request_rec *r);
void rsp_replica_host(const char *name);

/* The request's session cookie when it is well formed, else NULL. */
const char *rsp_session_cookie(request_rec *r, const rsp_dir_cfg_t *dc);

/* 503 with Retry-After: the fail-closed answer. */
int rsp_unavailable(request_rec *r);
/* A request at a ReplaySPGuard Report location: its refusals are logged,
 * marked by rsp_not_enforced(), and it is passed on. */
void rsp_set_report_only(request_rec *r);
void rsp_clear_report_only(request_rec *r);
int rsp_report_only(const request_rec *r);
/* "" or the mark every refusal line of a report-only request carries. */
const char *rsp_not_enforced(const request_rec *r);
/* Counts a request a Report location would have refused and passed on. */
void rsp_report_passed(request_rec *r);

/* This worker's Lasso server for sp (built on first use); give the slot
 * back with rsp_sp_server_release. A failure is logged here (RSP01012,
 * RSP01017): callers only answer. */
/* The SP as this request sees it: the generation of its IdPs current
 * when the request first asked, for all of the request
 * (rsp_saml_sp_pin). */
const rsp_saml_sp_t *rsp_sp_def(request_rec *r, const rsp_sp_conf_t *sp);

apr_status_t rsp_sp_server_acquire(request_rec *r, rsp_sp_conf_t *sp,
                                   void **slot, rsp_lasso_server_t **server);
void rsp_sp_server_release(rsp_sp_conf_t *sp, void *slot);

/* Per child: sp's pool of Lasso servers, one per thread, all built now
 * (building one parses keys and metadata: no request should wait). */
apr_status_t rsp_sp_servers_create(rsp_sp_conf_t *sp, int threads,
                                   apr_pool_t *pchild);

/* NULL when target may be a redirect target here (this host, or
 * ReplaySPRedirectDomains), else why not. */
const char *rsp_redirect_refused(request_rec *r, const rsp_dir_cfg_t *dc,
                                 const char *target);

/* The whole request body in *out (NUL-terminated), at most max bytes: OK,
 * or the status to answer (413 when longer, 400 when it breaks off). */
int rsp_read_body(request_rec *r, apr_int64_t max, char **out);

/* A query argument of r (rsp_form_value); NULL when absent. *bad is set
 * when it is badly escaped or repeated. */
const char *rsp_query_arg(request_rec *r, const char *name, int *bad);

#endif
