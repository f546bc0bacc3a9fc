#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <util_cookies.h>

#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_request.h"
#include "rsp_form.h"
#include "rsp_redirect.h"
#include "rsp_session.h"

APLOG_USE_MODULE(replay_sp);

/* Per process by design: this host's name, read once in post_config. */
static const char *host_name;

void rsp_replica_host(const char *name)
{
    host_name = name;
}

/* One worker's Lasso server. All are built in child_init, one per
 * thread, before any request: building one parses keys and metadata
 * (milliseconds), which no request should wait for. */
static apr_status_t server_ctor(void **res, void *params, apr_pool_t *p)
{
    rsp_sp_conf_t *sp = params;
    rsp_lasso_server_t *server;
    const char *err;

    if (rsp_saml_server_new(&server, &sp->def, &err) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, NULL, RSP_LOGNO(01012)
                     "SP %s: cannot build a Lasso server: %s",
                     sp->def.entity_id, err);
        return APR_EGENERAL;
    }
    RSP_COUNT(lasso_servers_built);
    *res = server;
    return APR_SUCCESS;
}

static apr_status_t server_dtor(void *res, void *params, apr_pool_t *p)
{
    rsp_saml_server_free(res);
    return APR_SUCCESS;
}

const rsp_saml_sp_t *rsp_sp_def(request_rec *r, const rsp_sp_conf_t *sp)
{
    return rsp_saml_sp_pin(&sp->def, r->pool);
}

apr_status_t rsp_sp_server_acquire(request_rec *r, rsp_sp_conf_t *sp,
                                   void **slot, rsp_lasso_server_t **server)
{
    apr_status_t rv = sp->servers ? apr_reslist_acquire(sp->servers, slot)
                                  : APR_EGENERAL;

    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, RSP_LOGNO(01017)
                      "no Lasso server available for SP %s",
                      sp->def.entity_id);
        return rv;
    }
    *server = *slot;
    return APR_SUCCESS;
}

void rsp_sp_server_release(rsp_sp_conf_t *sp, void *slot)
{
    apr_reslist_release(sp->servers, slot);
}

rsp_endpoint_t rsp_endpoint_of(request_rec *r, const rsp_dir_cfg_t *dc)
{
    const char *ep = rsp_cfg_endpoint(dc);
    apr_size_t len = strlen(ep);

    /* A guard section belongs to the SP behind it: its path (an
     * application's /saml/acs, say) is that SP's, never our endpoint. */
    if (!dc->sp || dc->guard >= RSP_GUARD_ON || !r->uri
        || strncmp(r->uri, ep, len) != 0 || r->uri[len] != '/') {
        return RSP_EP_NONE;
    }
    if (!strcmp(r->uri + len + 1, "acs")) {
        return RSP_EP_ACS;
    }
    if (!strcmp(r->uri + len + 1, "metadata")) {
        return RSP_EP_METADATA;
    }
    if (!strcmp(r->uri + len + 1, "login")) {
        return RSP_EP_LOGIN;
    }
    if (!strcmp(r->uri + len + 1, "logout")) {
        return RSP_EP_LOGOUT;
    }
    if (!strcmp(r->uri + len + 1, "slo")) {
        return RSP_EP_SLO;
    }
    if (!strcmp(r->uri + len + 1, "DiscoFeed")) {
        return RSP_EP_DISCOFEED;
    }
    if (!strcmp(r->uri + len + 1, "discovery")) {
        return RSP_EP_DISCOVERY;
    }
    return RSP_EP_NONE;
}

const char *rsp_endpoint_url(request_rec *r, const rsp_dir_cfg_t *dc,
                             const char *leaf)
{
    return ap_construct_url(r->pool,
                            apr_pstrcat(r->pool, rsp_cfg_endpoint(dc), "/",
                                        leaf, NULL), r);
}

const char *rsp_replica(request_rec *r)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);

    if (sc->replica_name) {
        return sc->replica_name;
    }
    return apr_psprintf(r->pool, "%s:%u", host_name ? host_name : "localhost",
                        (unsigned)r->connection->local_addr->port);
}

const char *rsp_attribute(const apr_array_header_t *attrs, const char *name)
{
    int i;

    for (i = 0; attrs && i < attrs->nelts; i++) {
        const rsp_attribute_t *a = &APR_ARRAY_IDX(attrs, i, rsp_attribute_t);
        if (!strcmp(a->name, name)) {
            return a->value;
        }
    }
    return NULL;
}

/* A session ID is RSP_SESSION_ID_BYTES of randomness in base64url. */
static int well_formed_sid(const char *v)
{
    apr_size_t n = 0;

    for (; v && *v; v++, n++) {
        if (!apr_isalnum(*v) && *v != '-' && *v != '_') {
            return 0;
        }
    }
    return n == (RSP_SESSION_ID_BYTES * 4 + 2) / 3;
}

const char *rsp_session_cookie(request_rec *r, const rsp_dir_cfg_t *dc)
{
    const char *sid = NULL;

    if (ap_cookie_read(r, rsp_cfg_cookie(dc), &sid, 0) != APR_SUCCESS
        || !sid || !well_formed_sid(sid)) {
        return NULL;
    }
    return sid;
}

const char *rsp_redirect_refused(request_rec *r, const rsp_dir_cfg_t *dc,
                                 const char *target)
{
    return rsp_redirect_check(target, ap_get_server_name_for_url(r),
                              dc->redirect_domains);
}

const char *rsp_query_arg(request_rec *r, const char *name, int *bad)
{
    const char *why = NULL, *v;

    if (!r->args) {
        return NULL;
    }
    v = rsp_form_value(r->pool, r->args, name, &why);
    if (why) {
        *bad = 1;
    }
    return v;
}

#define REPORT_NOTE "replay-sp-report-only"

void rsp_set_report_only(request_rec *r)
{
    apr_table_setn(r->notes, REPORT_NOTE, "1");
}

void rsp_clear_report_only(request_rec *r)
{
    apr_table_unset(r->notes, REPORT_NOTE);
}

int rsp_report_only(const request_rec *r)
{
    return apr_table_get(r->notes, REPORT_NOTE) != NULL;
}

const char *rsp_not_enforced(const request_rec *r)
{
    return rsp_report_only(r) ? " [not enforced: ReplaySPGuard Report, "
                                "passed on to the SP]" : "";
}

void rsp_report_passed(request_rec *r)
{
    (void)r;
    RSP_COUNT(guard_reported);
}

int rsp_unavailable(request_rec *r)
{
    apr_table_setn(r->err_headers_out, "Retry-After", RSP_RETRY_AFTER);
    return HTTP_SERVICE_UNAVAILABLE;
}

apr_status_t rsp_sp_servers_create(rsp_sp_conf_t *sp, int threads,
                                   apr_pool_t *pchild)
{
    /* min = max = threads: all built now, none later */
    return apr_reslist_create(&sp->servers, threads, threads, threads, 0,
                              server_ctor, server_dtor, sp, pchild);
}

int rsp_read_body(request_rec *r, apr_int64_t max, char **out)
{
    char *buf;
    apr_size_t used = 0;
    long n;
    int rc;

    if ((rc = ap_setup_client_block(r, REQUEST_CHUNKED_DECHUNK)) != OK) {
        return rc;
    }
    if (r->remaining > max) {
        return HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    buf = apr_palloc(r->pool, (apr_size_t)max + 1);
    if (ap_should_client_block(r)) {
        while ((n = ap_get_client_block(r, buf + used,
                                        (apr_size_t)max + 1 - used)) > 0) {
            used += (apr_size_t)n;
            if (used > (apr_size_t)max) {
                return HTTP_REQUEST_ENTITY_TOO_LARGE;
            }
        }
        if (n < 0) {
            return HTTP_BAD_REQUEST;
        }
    }
    buf[used] = '\0';
    *out = buf;
    return OK;
}
