/* AuthType ReplaySP: a request is authenticated by a session that any
 * replica wrote to the shared store. */
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mod_auth.h>

#include "mod_replay_sp_authn.h"
#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_login.h"
#include "mod_replay_sp_request.h"
#include "rsp_session.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

#define AUTH_TYPE "ReplaySP"

static void export_env(request_rec *r, const rsp_dir_cfg_t *dc,
                       const rsp_session_t *sess);

/* No usable session: a browser's GET goes to the IdP (SP-initiated login,
 * back to this URL afterwards); anything else gets 401. */
static int no_session(request_rec *r, rsp_dir_cfg_t *dc)
{
    if (r->method_number == M_GET && !r->main
        && r->unparsed_uri && rsp_redirect_refused(r, dc, r->unparsed_uri) == NULL) {
        return rsp_login_start(r, dc, NULL, r->unparsed_uri);
    }
    return HTTP_UNAUTHORIZED;
}

int rsp_check_authn(request_rec *r)
{
    const char *type = ap_auth_type(r), *sid = NULL, *err = NULL;
    const request_rec *o;
    rsp_dir_cfg_t *dc;
    rsp_srv_cfg_t *sc;
    rsp_session_t *sess;
    int malformed = 0;

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
        return no_session(r, dc);
    }
    if (rsp_session_read(sc->store, r->pool, rsp_cfg_prefix(sc), sid, 0, &sess,
                         &malformed, &err) != APR_SUCCESS) {
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01006)
                      "cannot read the session, store unavailable (fail "
                      "closed): client=%s replica=%s: %s", r->useragent_ip,
                      rsp_replica(r), err);
        return rsp_unavailable(r);
    }
    if (malformed) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01020)
                      "malformed session record in the store (session %s); "
                      "treated as no session", rsp_short_hash(r->pool, sid));
    }
    if (!sess) {
        return no_session(r, dc);
    }
    if (strcmp(sess->sp, dc->sp->def.entity_id) != 0
        || sess->expires <= apr_time_now()) {
        return no_session(r, dc);
    }
    /* none: made under another configuration (an attribute no longer
     * set, or a NameID-less session and no ReplaySPUserAttribute now) */
    if (!(r->user = (char *)rsp_session_user(r->pool, sess, dc->user_attribute,
                                             rsp_cfg_qualify_user(dc)))) {
        return no_session(r, dc);
    }
    r->ap_auth_type = AUTH_TYPE;
    export_env(r, dc, sess);
    ap_set_module_config(r->request_config, &replay_sp_module, sess);
    return OK;
}

/* ---- attributes for the application and for Require ---- */

/* PREFIX + NAME with every character other than a letter or digit as '_'. */
static const char *env_name(apr_pool_t *p, const char *prefix, const char *name)
{
    char *out = apr_pstrcat(p, prefix, name, NULL), *c;

    for (c = out + strlen(prefix); *c; c++) {
        if (!apr_isalnum(*c)) {
            *c = '_';
        }
    }
    return out;
}

/* NAME (first value), NAME_0, NAME_1, ... and NAME_N (how many), plus the
 * NameID, the IdP and the session index. */
static void export_env(request_rec *r, const rsp_dir_cfg_t *dc,
                       const rsp_session_t *sess)
{
    const char *prefix = rsp_cfg_env_prefix(dc);
    apr_table_t *e = r->subprocess_env;
    apr_hash_t *count = apr_hash_make(r->pool);
    int i;

    if (sess->name_id) {
        apr_table_set(e, apr_pstrcat(r->pool, prefix, "NAME_ID", NULL),
                      sess->name_id);
    }
    apr_table_set(e, apr_pstrcat(r->pool, prefix, "IDP", NULL), sess->issuer);
    if (sess->session_index) {
        apr_table_set(e, apr_pstrcat(r->pool, prefix, "SESSION_INDEX", NULL),
                      sess->session_index);
    }
    for (i = 0; sess->attributes && i < sess->attributes->nelts; i++) {
        const rsp_attribute_t *a =
            &APR_ARRAY_IDX(sess->attributes, i, rsp_attribute_t);
        const char *base = env_name(r->pool, prefix, a->name);
        int *n = apr_hash_get(count, base, APR_HASH_KEY_STRING);
        if (!n) {
            n = apr_pcalloc(r->pool, sizeof(*n));
            apr_hash_set(count, base, APR_HASH_KEY_STRING, n);
            apr_table_set(e, base, a->value);
        }
        apr_table_set(e, apr_psprintf(r->pool, "%s_%d", base, *n), a->value);
        (*n)++;
        apr_table_set(e, apr_pstrcat(r->pool, base, "_N", NULL),
                      apr_itoa(r->pool, *n));
    }
}

/* The session authn found for this request or the one it belongs to. */
static const rsp_session_t *session_of(const request_rec *r)
{
    for (; r; r = r->main ? r->main : r->prev) {
        const rsp_session_t *s =
            ap_get_module_config(r->request_config, &replay_sp_module);
        if (s) {
            return s;
        }
    }
    return NULL;
}

/* Require replay-sp-attribute NAME VALUE [VALUE...] */
static authz_status attribute_check(request_rec *r, const char *require_args,
                                    const void *parsed)
{
    const rsp_session_t *sess = session_of(r);
    const char *args = require_args, *name, *want;
    int i;

    if (!r->user || !sess) {
        return AUTHZ_DENIED_NO_USER;
    }
    name = ap_getword_conf(r->pool, &args);
    while (*(want = ap_getword_conf(r->pool, &args))) {
        for (i = 0; sess->attributes && i < sess->attributes->nelts; i++) {
            const rsp_attribute_t *a =
                &APR_ARRAY_IDX(sess->attributes, i, rsp_attribute_t);
            if (!strcmp(a->name, name) && !strcmp(a->value, want)) {
                return AUTHZ_GRANTED;
            }
        }
    }
    return AUTHZ_DENIED;
}

static const char *attribute_parse(cmd_parms *cmd, const char *line,
                                   const void **parsed)
{
    const char *args = line;

    if (!*ap_getword_conf(cmd->temp_pool, &args)
        || !*ap_getword_conf(cmd->temp_pool, &args)) {
        return "Require replay-sp-attribute needs an attribute name and at "
               "least one value";
    }
    return NULL;
}

static const authz_provider attribute_provider = {
    &attribute_check,
    &attribute_parse,
};

void rsp_authz_register(apr_pool_t *p)
{
    ap_register_auth_provider(p, AUTHZ_PROVIDER_GROUP, "replay-sp-attribute",
                              AUTHZ_PROVIDER_VERSION, &attribute_provider,
                              AP_AUTH_INTERNAL_PER_CONF);
}
