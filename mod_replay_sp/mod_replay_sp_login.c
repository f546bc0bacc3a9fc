/* SP-initiated login, and choosing the IdP it goes to (a discovery
 * service, or the built-in page at PATH/discovery). Everything that crosses
 * requests is in the shared store (the records and keys are
 * rsp_pending.h's), so the redirect, the ACS and the application may each
 * be served by a different replica. */
#include <apr_strings.h>
#include <util_cookies.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp_login.h"
#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_signin.h"
#include "rsp_claim.h"
#include "rsp_discovery.h"
#include "rsp_pct.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

/* No IdP chosen among several, and a discovery service configured: the
 * browser goes there (SAML IdP Discovery Protocol), to come back to the
 * login endpoint with the choice (returnIDParam=IdP) and where it was
 * going (ReturnTo). */
static int to_discovery(request_rec *r, rsp_dir_cfg_t *dc, const char *return_to)
{
    const char *disco = dc->sp->def.discovery_url;
    const char *back = apr_pstrcat(r->pool, rsp_endpoint_url(r, dc, "login"),
                                   "?ReturnTo=",
                                   rsp_pct_escape(r->pool, return_to,
                                                  RSP_PCT_UNRESERVED), NULL);
    const char *url = apr_pstrcat(
        r->pool, disco, strchr(disco, '?') ? "&" : "?", "entityID=",
        rsp_pct_escape(r->pool, dc->sp->def.entity_id, RSP_PCT_UNRESERVED),
        "&return=", rsp_pct_escape(r->pool, back, RSP_PCT_UNRESERVED),
        "&returnIDParam=IdP", NULL);

    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, RSP_LOGNO(01053)
                  "sign-in: to the discovery service %s to choose an IdP "
                  "(client %s)", disco, r->useragent_ip);
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "Location", url);
    return HTTP_MOVED_TEMPORARILY;
}

/* No IdP chosen among several, no service configured: the built-in
 * page. */
static int to_discovery_page(request_rec *r, rsp_dir_cfg_t *dc,
                             const char *return_to)
{
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "Location", apr_pstrcat(
        r->pool, rsp_endpoint_url(r, dc, "discovery"), "?ReturnTo=",
        rsp_pct_escape(r->pool, return_to, RSP_PCT_UNRESERVED), NULL));
    return HTTP_MOVED_TEMPORARILY;
}

/* The cookie that remembers the IdP a browser chose last (for the
 * built-in page to offer it first): its entity ID, escaped. */
static const char *remembered_cookie(request_rec *r, rsp_dir_cfg_t *dc)
{
    return apr_pstrcat(r->pool, rsp_cfg_cookie(dc), "_idp", NULL);
}

static void remember_idp(request_rec *r, rsp_dir_cfg_t *dc, const char *idp)
{
    int https = !strncmp(rsp_endpoint_url(r, dc, "login"), "https:", 6);

    apr_table_addn(r->err_headers_out, "Set-Cookie", apr_psprintf(
        r->pool, "%s=%s; Path=%s; Max-Age=31536000; HttpOnly; SameSite=Lax%s",
        remembered_cookie(r, dc), rsp_pct_escape(r->pool, idp, RSP_PCT_UNRESERVED),
        rsp_cfg_endpoint(dc), https ? "; Secure" : ""));
}

int rsp_login_start(request_rec *r, rsp_dir_cfg_t *dc, const char *idp,
                    const char *return_to)
{
    rsp_store_t *st = rsp_srv_store(r);
    rsp_lasso_server_t *server;
    const char *token, *url, *id, *err;
    apr_status_t rv;
    void *res;

    if (!st) {
        return rsp_unavailable(r);
    }
    if (!idp && dc->sp->def.default_idp) {
        idp = dc->sp->def.default_idp;
    }
    /* IdPs by MDQ: any entityID may be one, the discovery service says */
    if (!idp && (rsp_idp_count(rsp_sp_def(r, dc->sp)->idps) > 1
                 || (dc->sp->def.mdq_url && dc->sp->def.discovery_url))) {
        return dc->sp->def.discovery_url ? to_discovery(r, dc, return_to)
                                         : to_discovery_page(r, dc, return_to);
    }
    if (!idp && !rsp_idp_count(rsp_sp_def(r, dc->sp)->idps)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                      "login refused: no IdP named (IdP=) and none known "
                      "yet (client %s)", r->useragent_ip);
        return HTTP_BAD_REQUEST;
    }
    if (!idp) {
        idp = rsp_idp_at(rsp_sp_def(r, dc->sp)->idps, 0)->entity_id;
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
    rv = rsp_saml_authn_request(r->pool, server, rsp_sp_def(r, dc->sp), idp,
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

/* <path>/login?ReturnTo=...&IdP=... */
int rsp_login_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    const char *return_to, *idp;
    int bad = 0, rc;

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
        if (!rsp_saml_idp(rsp_sp_def(r, dc->sp), idp)) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                          "login refused: IdP %s is not configured for this "
                          "SP (client %s)",
                          ap_escape_logitem(r->pool, idp), r->useragent_ip);
            return HTTP_BAD_REQUEST;
        }
        remember_idp(r, dc, idp);
    }
    return rsp_login_start(r, dc, idp, return_to);
}

/* <path>/discovery?ReturnTo=...&q=...: the built-in page where a browser
 * chooses among the SP's IdPs; each choice is a link to the login
 * endpoint. */
int rsp_discovery_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    rsp_discovery_in_t in;
    const char *cookie = NULL;
    int bad = 0, rc;

    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    memset(&in, 0, sizeof(in));
    if ((rc = rsp_return_to(r, dc, "discovery", &in.return_to)) != OK) {
        return rc;
    }
    in.query = rsp_query_arg(r, "q", &bad);
    if (bad || (in.query && strlen(in.query) > 200)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01030)
                      "discovery refused: malformed, repeated or overlong q "
                      "(client %s)", r->useragent_ip);
        return HTTP_BAD_REQUEST;
    }
    if (ap_cookie_read(r, remembered_cookie(r, dc), &cookie, 0) == APR_SUCCESS
        && cookie) {
        in.remembered = rsp_pct_decode(r->pool, cookie, strlen(cookie), 0, NULL);
    }
    in.uis = rsp_sp_def(r, dc->sp)->idps->uis;
    in.page_path = apr_pstrcat(r->pool, rsp_cfg_endpoint(dc), "/discovery", NULL);
    in.login_path = apr_pstrcat(r->pool, rsp_cfg_endpoint(dc), "/login", NULL);
    in.langs = rsp_accept_languages(r->pool,
                                    apr_table_get(r->headers_in, "Accept-Language"));
    in.stylesheet = dc->sp->def.discovery_stylesheet;
    ap_set_content_type(r, "text/html; charset=utf-8");
    apr_table_setn(r->headers_out, "Content-Security-Policy",
                   rsp_discovery_csp(r->pool, in.stylesheet));
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    apr_table_setn(r->headers_out, "X-Frame-Options", "DENY");
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "Vary", "Accept-Language, Cookie");
    if (!r->header_only) {
        ap_rputs(rsp_discovery_page(r->pool, &in), r);
    }
    return OK;
}

