/* The sign-in glue the endpoints share: validation of a response, the
 * lines and answers of a sign-in's result (rsp_signin_acs.h) that the ACS
 * and the guard render alike, refusals, the requests login and logout
 * keep (with their binding cookies), and the return URL of both. What a
 * sign-in does with the store is the library's (rsp_signin_acs). */
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_signin.h"
#include "rsp_binding.h"
#include "rsp_scope.h"
#include "rsp_signin.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

int rsp_refuse_response(request_rec *r, const char *check, const char *detail)
{
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01004)
                  "saml response refused: check=%s: %s (client %s)%s", check,
                  detail, r->useragent_ip, rsp_not_enforced(r));
    return HTTP_BAD_REQUEST;
}

void rsp_log_weak_signature(request_rec *r, const char *issuer,
                            const char *what)
{
    if (what) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01039)
                      "SHA-1 signature accepted from IdP %s "
                      "(ReplaySPAllowSHA1): %s (client %s)", issuer, what,
                      r->useragent_ip);
    }
}

/* Values of scoped attributes the issuer may not assert, dropped before
 * the session is made (the value itself is not logged). A guard does not
 * drop what the SP behind it reads: it says nothing. */
static void log_scope_drops(request_rec *r, const rsp_assertion_t *a)
{
    int i;

    for (i = 0; a->scope_dropped && i < a->scope_dropped->nelts; i++) {
        const rsp_scope_drop_t *d =
            &APR_ARRAY_IDX(a->scope_dropped, i, rsp_scope_drop_t);
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01052)
                      "attribute value dropped: %s%s%s is not a scope IdP %s "
                      "declares in its metadata: attribute=%s client=%s",
                      d->scope ? "its scope " : "it has no single scope",
                      d->scope ? ap_escape_logitem(r->pool, d->scope) : "",
                      d->scope ? "" : ", which", a->issuer,
                      ap_escape_logitem(r->pool, d->name), r->useragent_ip);
    }
}

int rsp_validate(request_rec *r, rsp_dir_cfg_t *dc, const char *saml,
                 const char *acs_url, const char *who, rsp_check_params_t *cp,
                 rsp_assertion_t **a)
{
    rsp_lasso_server_t *server;
    const char *check, *detail;
    apr_status_t rv;
    void *res;

    cp->sp = rsp_sp_def(r, dc->sp);
    cp->entity_id = dc->sp->def.entity_id;
    cp->acs_url = acs_url;
    cp->now = apr_time_now();
    cp->skew_s = rsp_cfg_skew(dc);
    cp->max_window_s = rsp_cfg_max_window(dc);
    cp->user_attribute = dc->user_attribute;
    if (rsp_sp_server_acquire(r, dc->sp, &res, &server) != APR_SUCCESS) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = rsp_saml_process_response(a, r->pool, server, saml, cp, &check,
                                   &detail);
    rsp_sp_server_release(dc->sp, res);
    if (rv != APR_SUCCESS) {
        return rsp_refuse_response(r, check, who ? apr_pstrcat(
            r->pool, who, ": ", detail, NULL) : detail);
    }
    rsp_log_weak_signature(r, (*a)->issuer, (*a)->weak_signature);
    if (!who) {
        log_scope_drops(r, *a);
    }
    return OK;
}

void rsp_signin_counted(request_rec *r, const rsp_signin_result_t *res,
                        const rsp_assertion_t *a, apr_int64_t skew_s)
{
    int i;

    if (res->verdicts) {
        rsp_count_claim(res->claim.latency, res->claim.expiry);
    }
    if (res->won) {
        RSP_COUNT(claims_won);
    }
    for (i = 0; i < res->store_errors; i++) {
        RSP_COUNT(store_errors);
    }
    if (!res->failed_open) {
        return;
    }
    /* ReplaySPOnStoreFailure open: the operator chose availability. */
    RSP_COUNT(fail_open);
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01025)
                  "sign-in accepted WITHOUT a claim (ReplaySPOnStoreFailure "
                  "open): a replay of this assertion would not be detected "
                  "until %s: issuer=%s assertion=%s client=%s replica=%s: %s",
                  rsp_format_time(r->pool, a->window_end
                                  + apr_time_from_sec(skew_s)),
                  a->issuer, res->claim.assertion_hash, r->useragent_ip,
                  rsp_replica(r), res->error);
}

int rsp_claim_unavailable(request_rec *r, const rsp_assertion_t *a,
                          const rsp_signin_result_t *res)
{
    if (res->failure == RSP_FAILED_UNACKED) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01048)
                      "sign-in refused, claim not acknowledged by the "
                      "store's replicas (fail closed): issuer=%s "
                      "assertion=%s client=%s replica=%s: %s%s",
                      a->issuer, res->claim.assertion_hash, r->useragent_ip,
                      rsp_replica(r), res->error, rsp_not_enforced(r));
    }
    else {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01003)
                      "sign-in refused, store unavailable (fail closed): "
                      "issuer=%s assertion=%s client=%s replica=%s: %s%s",
                      a->issuer, res->claim.assertion_hash, r->useragent_ip,
                      rsp_replica(r), res->error, rsp_not_enforced(r));
    }
    return rsp_unavailable(r);
}

int rsp_refuse_replay(request_rec *r, const rsp_assertion_t *a,
                      const rsp_claim_result_t *c)
{
    if (rsp_report_only(r)) {
        RSP_COUNT(replays_reported);
    }
    else {
        RSP_COUNT(replays_refused);
    }
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01001)
                  "replay refused: issuer=%s assertion=%s client=%s "
                  "replica=%s first-claimed-by=%s%s", a->issuer,
                  c->assertion_hash, r->useragent_ip, rsp_replica(r),
                  c->taker_known ? c->taker.replica : "unknown",
                  rsp_not_enforced(r));
    return HTTP_FORBIDDEN;
}

rsp_store_t *rsp_srv_store(request_rec *r)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);

    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server%s", rsp_not_enforced(r));
    }
    return sc->store;
}

/* The binding cookies of the request whose RelayState is token (value
 * NULL and max_age 0: expired). */
static void binding_cookies(request_rec *r, rsp_dir_cfg_t *dc,
                            const char *token, const char *value, long max_age)
{
    apr_array_header_t *set = apr_array_make(r->pool, 2, sizeof(const char *));
    int i;

    rsp_binding_set_cookies(r->pool,
                            rsp_binding_cookie_name(r->pool, rsp_cfg_cookie(dc),
                                                    token),
                            value ? value : "", rsp_cfg_endpoint(dc), max_age,
                            !strncmp(rsp_endpoint_url(r, dc, "acs"), "https:", 6),
                            set);
    for (i = 0; i < set->nelts; i++) {
        apr_table_addn(r->err_headers_out, "Set-Cookie",
                       APR_ARRAY_IDX(set, i, const char *));
    }
}

void rsp_binding_expire(request_rec *r, rsp_dir_cfg_t *dc, const char *token)
{
    binding_cookies(r, dc, token, NULL, 0);
}

apr_status_t rsp_request_store(request_rec *r, rsp_dir_cfg_t *dc,
                               rsp_pending_kind_t kind, const char *request_id,
                               const char *idp, const char *token,
                               const char *return_to, const char **err)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *binding = NULL;
    apr_status_t rv;

    if (!sc->store) {
        *err = "no ReplaySPStore for this server";
        return APR_EGENERAL;
    }
    if (kind == RSP_PENDING_LOGIN && rsp_cfg_bind_requests(dc)
        && rsp_random_token(&binding, r->pool, RSP_RELAY_TOKEN_BYTES)
           != APR_SUCCESS) {
        *err = "random generator failed (binding cookie)";
        return APR_EGENERAL;
    }
    rv = rsp_pending_put(sc->store, r->pool, rsp_cfg_prefix(sc), kind,
                         request_id, idp, dc->sp->def.entity_id, token,
                         return_to, binding, rsp_cfg_request_lifetime(dc), err);
    if (rv == APR_SUCCESS && binding) {
        binding_cookies(r, dc, token, binding, (long)rsp_cfg_request_lifetime(dc));
    }
    return rv;
}

int rsp_return_to(request_rec *r, rsp_dir_cfg_t *dc, const char *endpoint,
                  const char **return_to)
{
    const char *why;
    int bad = 0;

    *return_to = rsp_query_arg(r, "ReturnTo", &bad);
    if (bad) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                      "%s refused: malformed or repeated ReturnTo (client %s)",
                      endpoint, r->useragent_ip);
        return HTTP_BAD_REQUEST;
    }
    if (!*return_to) {
        *return_to = "/";
    }
    if ((why = rsp_redirect_refused(r, dc, *return_to)) != NULL) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01031)
                      "redirect target refused: ReturnTo of %s: %s "
                      "(client %s)", endpoint, why, r->useragent_ip);
        return HTTP_BAD_REQUEST;
    }
    return OK;
}
