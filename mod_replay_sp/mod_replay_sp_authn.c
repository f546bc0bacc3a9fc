/* AuthType ReplaySP: a request is authenticated by a session that any
 * replica wrote to the shared store. */
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp.h"
#include "rsp_session.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

#define AUTH_TYPE "ReplaySP"

int rsp_check_authn(request_rec *r)
{
    const char *type = ap_auth_type(r), *sid = NULL, *val, *err;
    const request_rec *o;
    rsp_dir_cfg_t *dc;
    rsp_srv_cfg_t *sc;
    rsp_session_t *sess;
    apr_size_t len;

    if (!type || strcasecmp(type, AUTH_TYPE) != 0) {
        return DECLINED;
    }
    /* A sub-request or internal redirect of an authenticated request. */
    o = r->main ? r->main : r->prev;
    if (o && o->user && o->ap_auth_type
        && !strcasecmp(o->ap_auth_type, AUTH_TYPE)) {
        r->user = o->user;
        r->ap_auth_type = o->ap_auth_type;
        return OK;
    }
    dc = ap_get_module_config(r->per_dir_config, &replay_sp_module);
    sc = ap_get_module_config(r->server->module_config, &replay_sp_module);
    if (!dc->sp || !sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01019)
                      "AuthType ReplaySP for %s, but no SP (ReplaySPEntityID "
                      "and friends) or no ReplaySPStore applies here",
                      r->uri);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (!(sid = rsp_session_cookie(r, dc))) {
        return HTTP_UNAUTHORIZED;
    }
    if (rsp_store_get(sc->store, r->pool,
                      rsp_session_key(r->pool, rsp_cfg_prefix(sc), sid), &val,
                      &len, &err) != APR_SUCCESS) {
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01006)
                      "cannot read the session, store unavailable (fail "
                      "closed): client=%s replica=%s: %s", r->useragent_ip,
                      rsp_replica(r), err);
        return rsp_unavailable(r);
    }
    if (!val) {
        return HTTP_UNAUTHORIZED;
    }
    if (rsp_session_decode(&sess, r->pool, val, len) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01020)
                      "malformed session record in the store (session %s); "
                      "treated as no session", rsp_short_hash(r->pool, sid));
        return HTTP_UNAUTHORIZED;
    }
    if (strcmp(sess->sp, dc->sp->def.entity_id) != 0
        || sess->expires <= apr_time_now()) {
        return HTTP_UNAUTHORIZED;
    }
    r->user = apr_pstrdup(r->pool, sess->name_id);
    r->ap_auth_type = AUTH_TYPE;
    return OK;
}
