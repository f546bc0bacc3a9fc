/* SP-initiated login. Everything that crosses requests is in the shared
 * store (the records and keys are rsp_pending.h's), so the redirect, the
 * ACS and the application may each be served by a different replica. */
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp.h"
#include "rsp_claim.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

static rsp_store_t *store_of(request_rec *r)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);

    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server");
    }
    return sc->store;
}

apr_status_t rsp_request_store(request_rec *r, rsp_dir_cfg_t *dc,
                               rsp_pending_kind_t kind, const char *request_id,
                               const char *idp, const char *token,
                               const char *return_to, const char **err)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *rec = rsp_pending_encode(r->pool, idp, dc->sp->def.entity_id,
                                         token, return_to);

    if (!sc->store) {
        *err = "no ReplaySPStore for this server";
        return APR_EGENERAL;
    }
    return rsp_store_put(sc->store, r->pool,
                         rsp_pending_key(r->pool, rsp_cfg_prefix(sc), kind,
                                         request_id), rec,
                         strlen(rec), rsp_cfg_request_lifetime(dc) * 1000, err);
}

int rsp_login_start(request_rec *r, rsp_dir_cfg_t *dc, const char *idp,
                    const char *return_to)
{
    rsp_store_t *st = store_of(r);
    rsp_lasso_server_t *server;
    const char *token, *url, *id, *err;
    apr_status_t rv;
    void *res;

    if (!st) {
        return rsp_unavailable(r);
    }
    if (!idp) {
        idp = APR_ARRAY_IDX(dc->sp->def.idp_ids, 0, const char *);
    }
    if (rsp_random_token(&token, r->pool, RSP_RELAY_TOKEN_BYTES)
        != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01018)
                      "random generator failed; refusing the sign-in");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rsp_sp_server_acquire(r, dc->sp, &res, &server) != APR_SUCCESS) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = rsp_saml_authn_request(r->pool, server, idp,
                                rsp_endpoint_url(r, dc, "acs"), token, &url,
                                &id, &err);
    rsp_sp_server_release(dc->sp, res);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01027)
                      "cannot build an AuthnRequest: %s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rsp_request_store(r, dc, RSP_PENDING_LOGIN, id, idp, token, return_to,
                          &err) != APR_SUCCESS) {
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01028)
                      "sign-in not started, store unavailable (fail closed): "
                      "client=%s replica=%s: %s", r->useragent_ip,
                      rsp_replica(r), err);
        return rsp_unavailable(r);
    }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, RSP_LOGNO(01029)
                  "sign-in started: idp=%s request=%s client=%s replica=%s",
                  idp, rsp_short_hash(r->pool, id), r->useragent_ip,
                  rsp_replica(r));
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "Location", url);
    return HTTP_MOVED_TEMPORARILY;
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

/* <path>/login?ReturnTo=...&IdP=... */
int rsp_login_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    const char *return_to, *idp;
    int bad = 0, i, rc;

    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    idp = rsp_query_arg(r, "IdP", &bad);
    if (bad) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                      "login refused: malformed or repeated IdP (client %s)",
                      r->useragent_ip);
        return HTTP_BAD_REQUEST;
    }
    if ((rc = rsp_return_to(r, dc, "login", &return_to)) != OK) {
        return rc;
    }
    if (idp) {
        for (i = 0; i < dc->sp->def.idp_ids->nelts; i++) {
            if (!strcmp(idp, APR_ARRAY_IDX(dc->sp->def.idp_ids, i,
                                           const char *))) {
                break;
            }
        }
        if (i == dc->sp->def.idp_ids->nelts) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                          "login refused: IdP %s is not configured for this "
                          "SP (client %s)",
                          ap_escape_logitem(r->pool, idp), r->useragent_ip);
            return HTTP_BAD_REQUEST;
        }
    }
    return rsp_login_start(r, dc, idp, return_to);
}

rsp_pending_t *rsp_request_peek(request_rec *r, const char *request_id)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *val, *err;
    apr_size_t len;

    if (!sc->store
        || rsp_store_get(sc->store, r->pool,
                         rsp_pending_key(r->pool, rsp_cfg_prefix(sc),
                                         RSP_PENDING_LOGIN, request_id),
                         &val, &len, &err) != APR_SUCCESS || !val) {
        return NULL;
    }
    return rsp_pending_decode(r->pool, val);
}

int rsp_request_consume(request_rec *r, rsp_dir_cfg_t *dc,
                        rsp_pending_kind_t kind, const char *request_id,
                        const char *issuer, const char *relay_state,
                        rsp_pending_t **pending)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *what = kind == RSP_PENDING_LOGOUT ? "logout" : "sign-in";
    rsp_store_t *st = store_of(r);
    const char *val, *err, *rid = rsp_short_hash(r->pool, request_id), *mark;
    rsp_claim_rec_t use;
    rsp_pending_t *pd;
    apr_size_t len;
    int won = 0;

    if (!st) {
        return rsp_unavailable(r);
    }
    if (rsp_store_get(st, r->pool,
                      rsp_pending_key(r->pool, rsp_cfg_prefix(sc), kind,
                                      request_id), &val,
                      &len, &err) != APR_SUCCESS) {
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01032)
                      "%s refused, store unavailable (fail closed): "
                      "cannot read request %s: client=%s replica=%s: %s", what,
                      rid, r->useragent_ip, rsp_replica(r), err);
        return rsp_unavailable(r);
    }
    if (!val) {
        return rsp_refuse_response(r, "request-unknown", apr_psprintf(
            r->pool, "InResponseTo names request %s, which this fleet did not "
            "send or which expired (ReplaySPRequestLifetime %" APR_INT64_T_FMT
            " s)", rid, rsp_cfg_request_lifetime(dc)));
    }
    if (!(pd = rsp_pending_decode(r->pool, val))) {
        return rsp_refuse_response(r, "request-unknown", apr_psprintf(
            r->pool, "malformed record of request %s", rid));
    }
    if (strcmp(pd->sp, dc->sp->def.entity_id) != 0
        || strcmp(pd->idp, issuer) != 0) {
        return rsp_refuse_response(r, "request-mismatch", apr_psprintf(
            r->pool, "request %s was sent to %s for SP %s; the response comes "
            "from %s for SP %s", rid, pd->idp, pd->sp, issuer,
            dc->sp->def.entity_id));
    }
    if (!rsp_pending_relay_matches(r->pool, pd, relay_state)) {
        return rsp_refuse_response(r, "relay-state", apr_psprintf(
            r->pool, "RelayState %s the one sent with request %s",
            relay_state ? "is not" : "missing; expected", rid));
    }
    memset(&use, 0, sizeof(use));
    use.replica = rsp_replica(r);
    use.claimed = apr_time_now();
    use.session_hash = NULL;
    mark = rsp_claim_encode(r->pool, &use);
    if (rsp_store_claim(st, r->pool,
                        rsp_pending_use_key(r->pool, rsp_cfg_prefix(sc),
                                            request_id), mark,
                        rsp_cfg_request_lifetime(dc) * 1000, &won, &err)
        != APR_SUCCESS) {
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01032)
                      "%s refused, store unavailable (fail closed): "
                      "cannot consume request %s: client=%s replica=%s: %s",
                      what, rid, r->useragent_ip, rsp_replica(r), err);
        return rsp_unavailable(r);
    }
    if (!won) {
        return rsp_refuse_response(r, "request-used", apr_psprintf(
            r->pool, "request %s was already answered", rid));
    }
    *pending = pd;
    return OK;
}
