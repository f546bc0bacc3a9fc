/* Logout, on any replica:
 *
 *   <path>/logout?ReturnTo=URL  ends this browser's session (deleted from
 *       the store, so no replica accepts it again), then, when the IdP has
 *       an HTTP-Redirect SingleLogoutService, sends it a LogoutRequest
 *       (kept as a pending request, like an AuthnRequest).
 *   <path>/slo  the IdP's messages (HTTP-Redirect): its LogoutResponse to
 *       ours, or its own LogoutRequest, which ends every session it names.
 *
 * The logout index, kept for ReplaySPSessionLifetime, finds the sessions
 * an IdP's LogoutRequest names:
 *   <prefix>n:<hash of IdP, NameID, SessionIndex>  " h1 h2 ..."
 *   <prefix>n:<hash of IdP, NameID>                " h1 h2 ..."
 * where h is the hash naming the session key <prefix>s:h. */
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp_logout.h"
#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_login.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_signin.h"
#include "rsp_form.h"
#include "rsp_logout_index.h"
#include "rsp_session.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

#define SAML_STATUS_SUCCESS "urn:oasis:names:tc:SAML:2.0:status:Success"
/* Read the session this browser holds and delete it from the store.
 * *sess: what it was (NULL: none). */
static apr_status_t end_own_session(request_rec *r, rsp_dir_cfg_t *dc,
                                    rsp_store_t *st, rsp_session_t **sess,
                                    const char **err)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *sid = rsp_session_cookie(r, dc);
    int malformed = 0;

    *sess = NULL;
    return sid ? rsp_session_read(st, r->pool, rsp_cfg_prefix(sc), sid, 1, sess,
                                  &malformed, err)
               : APR_SUCCESS;
}

static void expire_cookie(request_rec *r, rsp_dir_cfg_t *dc)
{
    apr_table_addn(r->err_headers_out, "Set-Cookie", apr_psprintf(
        r->pool, "%s=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax%s",
        rsp_cfg_cookie(dc),
        strcmp(ap_http_scheme(r), "https") ? "" : "; Secure"));
}

static int logout_store_failed(request_rec *r, const char *doing,
                               const char *err)
{
    RSP_COUNT(store_errors);
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01034)
                  "logout failed, store unavailable (fail closed): %s: "
                  "client=%s replica=%s: %s", doing, r->useragent_ip,
                  rsp_replica(r), err);
    return rsp_unavailable(r);
}

/* Consume the pending LogoutRequest request_id that a LogoutResponse from
 * issuer answers, with relay_state: read once and checked
 * (rsp_pending_refusal: a logout is not bound to a browser), then used
 * up, single use fleet-wide. OK with *pending set; 400 (logged) when the
 * request is unknown, expired, used, or not for this IdP, SP or
 * RelayState; the fail-closed answer when the store fails. */
static int consume_request(request_rec *r, rsp_dir_cfg_t *dc,
                           const char *request_id, const char *issuer,
                           const char *relay_state, rsp_pending_t **pending)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    rsp_store_t *st = rsp_srv_store(r);
    rsp_pending_answer_t ans;
    const char *val = NULL, *err = NULL, *check, *detail, *doing = "read";
    int won = 0;

    if (!st) {
        return rsp_unavailable(r);
    }
    memset(&ans, 0, sizeof(ans));
    ans.rid = rsp_short_hash(r->pool, request_id);
    ans.sp = dc->sp->def.entity_id;
    ans.issuer = issuer;
    ans.relay = relay_state;
    ans.lifetime_s = rsp_cfg_request_lifetime(dc);
    if (rsp_pending_read(st, r->pool, rsp_cfg_prefix(sc), RSP_PENDING_LOGOUT,
                         request_id, &val, &err) == APR_SUCCESS) {
        if ((check = rsp_pending_refusal(r->pool, val, &ans, pending, &detail))) {
            return rsp_refuse_response(r, check, detail);
        }
        doing = "consume";
        if (rsp_pending_use(st, r->pool, rsp_cfg_prefix(sc), RSP_PENDING_LOGOUT,
                            request_id, rsp_replica(r), apr_time_now(),
                            ans.lifetime_s, &won, &err) == APR_SUCCESS) {
            return won ? OK : rsp_refuse_response(r, "request-used", apr_psprintf(
                r->pool, "request %s was already answered", ans.rid));
        }
    }
    RSP_COUNT(store_errors);
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01032)
                  "logout refused, store unavailable (fail closed): "
                  "cannot %s request %s: client=%s replica=%s: %s",
                  doing, ans.rid, r->useragent_ip, rsp_replica(r), err);
    return rsp_unavailable(r);
}

/* A LogoutRequest to the session's IdP, when it takes them: the URL to
 * send the browser to, or NULL (*slo says why not). */
static const char *start_slo(request_rec *r, rsp_dir_cfg_t *dc,
                             const rsp_session_t *sess, const char *return_to,
                             const char **slo)
{
    rsp_lasso_server_t *server;
    rsp_logout_subject_t who;
    const char *token, *url = NULL, *id, *err = NULL;
    void *res;

    *slo = "none";
    if (strcmp(sess->sp, dc->sp->def.entity_id) != 0) {
        return NULL;
    }
    if (rsp_sp_server_acquire(r, dc->sp, &res, &server) != APR_SUCCESS) {
        err = "no Lasso server available";
    }
    else {
        /* A LogoutRequest names the NameID: none without one. */
        if (sess->name_id
            && rsp_saml_idp_slo_url(r->pool, server, rsp_sp_def(r, dc->sp), sess->issuer)) {
            who.idp = sess->issuer;
            who.name_id = sess->name_id;
            who.name_id_format = sess->name_id_format;
            who.session_index = sess->session_index;
            if (rsp_random_token(&token, r->pool, RSP_RELAY_TOKEN_BYTES)
                != APR_SUCCESS) {
                err = "random generator failed";
            }
            else if (rsp_saml_logout_request(r->pool, server, rsp_sp_def(r, dc->sp), &who, token,
                                             &url, &id, &err) == APR_SUCCESS
                     && rsp_request_store(r, dc, RSP_PENDING_LOGOUT, id,
                                          sess->issuer, token, return_to,
                                          &err) != APR_SUCCESS) {
                url = NULL;
            }
        }
        rsp_sp_server_release(dc->sp, res);
    }
    if (err) {
        *slo = "failed";
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01038)
                      "no LogoutRequest sent to %s (the local session is "
                      "ended): %s", sess->issuer, err);
        return NULL;
    }
    if (url) {
        *slo = "sent";
    }
    return url;
}

/* <path>/logout?ReturnTo=URL */
int rsp_logout_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *return_to, *err, *slo = "none", *to;
    rsp_session_t *sess;
    int rc;

    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    if ((rc = rsp_return_to(r, dc, "logout", &return_to)) != OK) {
        return rc;
    }
    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server");
        return rsp_unavailable(r);
    }
    if (end_own_session(r, dc, sc->store, &sess, &err) != APR_SUCCESS) {
        return logout_store_failed(r, "cannot end the session", err);
    }
    expire_cookie(r, dc);
    to = return_to;
    if (sess) {
        const char *url = start_slo(r, dc, sess, return_to, &slo);
        if (url) {
            to = url;
        }
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01033)
                      "signed out: issuer=%s user=%s client=%s replica=%s "
                      "slo=%s", sess->issuer,
                      sess->name_id ? sess->name_id : "-", r->useragent_ip,
                      rsp_replica(r), slo);
    }
    apr_table_setn(r->headers_out, "Location", to);
    return HTTP_MOVED_TEMPORARILY;
}

static int refuse_request(request_rec *r, const char *check,
                          const char *detail)
{
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01035)
                  "logout request refused: check=%s: %s (client %s)", check,
                  detail, r->useragent_ip);
    return HTTP_BAD_REQUEST;
}

/* The IdP answers our LogoutRequest. */
static int slo_response(request_rec *r, rsp_dir_cfg_t *dc,
                        const rsp_saml_in_t *in, const char *relay)
{
    rsp_lasso_server_t *server;
    rsp_logout_response_t lr;
    rsp_pending_t *pd = NULL;
    const char *check, *detail;
    apr_status_t rv;
    void *res;
    int rc;

    if (rsp_sp_server_acquire(r, dc->sp, &res, &server) != APR_SUCCESS) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = rsp_saml_logout_response_in(r->pool, server, rsp_sp_def(r, dc->sp), in, &lr,
                                     &check, &detail);
    rsp_sp_server_release(dc->sp, res);
    if (rv != APR_SUCCESS) {
        return rsp_refuse_response(r, check, detail);
    }
    rsp_log_weak_signature(r, lr.issuer, lr.weak_signature);
    if ((rc = consume_request(r, dc, lr.in_response_to, lr.issuer, relay,
                              &pd)) != OK) {
        return rc;
    }
    if (strcmp(lr.status, SAML_STATUS_SUCCESS) != 0) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01037)
                      "the IdP reports the logout incomplete: issuer=%s "
                      "status=%s client=%s (the session here is ended)",
                      lr.issuer, lr.status, r->useragent_ip);
    }
    apr_table_setn(r->headers_out, "Location", pd->return_to);
    return HTTP_MOVED_TEMPORARILY;
}

/* An IdP's LogoutRequest is taken once, while fresh: issued no earlier
 * than ReplaySPRequestLifetime + skew ago (and not in the future beyond
 * the skew), before its NotOnOrAfter; its ID is claimed for that long
 * (<prefix>i:<hash of IdP and ID>), so a captured request cannot end
 * sessions again. OK, 400 (RSP01035) or 503 (RSP01034). */
static int fresh_and_first(request_rec *r, rsp_dir_cfg_t *dc,
                           const rsp_logout_request_t *req)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    apr_time_t now = apr_time_now();
    apr_interval_time_t skew = apr_time_from_sec(rsp_cfg_skew(dc));
    apr_interval_time_t life = apr_time_from_sec(rsp_cfg_request_lifetime(dc));
    const char *err = NULL;
    int won = 0;

    if (req->issue_instant > now + skew) {
        return refuse_request(r, "not-yet-valid", apr_psprintf(
            r->pool, "IssueInstant %s is in the future",
            rsp_format_time(r->pool, req->issue_instant)));
    }
    if (req->issue_instant + life + skew <= now
        || (req->not_on_or_after && req->not_on_or_after + skew <= now)) {
        return refuse_request(r, "expired", apr_psprintf(
            r->pool, "issued %s%s%s; ReplaySPRequestLifetime %"
            APR_INT64_T_FMT " s, skew %" APR_INT64_T_FMT " s",
            rsp_format_time(r->pool, req->issue_instant),
            req->not_on_or_after ? ", NotOnOrAfter " : "",
            req->not_on_or_after
                ? rsp_format_time(r->pool, req->not_on_or_after) : "",
            rsp_cfg_request_lifetime(dc), rsp_cfg_skew(dc)));
    }
    /* Kept until the request could no longer pass the freshness test. */
    if (rsp_idp_request_take(sc->store, r->pool, rsp_cfg_prefix(sc),
                             req->issuer, req->id, rsp_replica(r), now,
                             apr_time_as_msec(req->issue_instant + life
                                              + 2 * skew - now) + 1,
                             &won, &err) != APR_SUCCESS) {
        return logout_store_failed(r, "cannot record the LogoutRequest", err);
    }
    if (!won) {
        return refuse_request(r, "replayed", apr_psprintf(
            r->pool, "LogoutRequest %s from %s was already taken",
            rsp_short_hash(r->pool, req->id), req->issuer));
    }
    return OK;
}

/* The LogoutResponse over HTTP-POST (an IdP without an HTTP-Redirect
 * SingleLogoutService): a page whose form the browser posts to it. */
static int post_answer(request_rec *r, const char *url, const char *form,
                       const char *relay)
{
    ap_set_content_type(r, "text/html; charset=utf-8");
    ap_rprintf(r, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
               "<title>Signing out</title></head>\n"
               "<body onload=\"document.forms[0].submit()\">\n"
               "<form method=\"post\" action=\"%s\">\n"
               "<input type=\"hidden\" name=\"SAMLResponse\" value=\"%s\">\n",
               ap_escape_html2(r->pool, url, 1),
               ap_escape_html2(r->pool, form, 1));
    if (relay) {
        ap_rprintf(r, "<input type=\"hidden\" name=\"RelayState\" "
                   "value=\"%s\">\n", ap_escape_html2(r->pool, relay, 1));
    }
    ap_rputs("<noscript><button type=\"submit\">Continue</button></noscript>\n"
             "</form>\n</body></html>\n", r);
    return OK;
}

/* The IdP ends sessions: every session of the NameID with one of the
 * SessionIndexes, or all of the NameID's when none is given. */
static int slo_request(request_rec *r, rsp_dir_cfg_t *dc,
                       const rsp_saml_in_t *in)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    rsp_lasso_server_t *server;
    rsp_logout_request_t req;
    rsp_slo_t *slo;
    const char *check, *detail, *err = NULL, *url = NULL, *form = NULL;
    apr_status_t rv;
    void *res;
    int i, ended = 0, rc = OK;

    if (rsp_sp_server_acquire(r, dc->sp, &res, &server) != APR_SUCCESS) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = rsp_saml_logout_request_in(&slo, r->pool, server, rsp_sp_def(r, dc->sp), in,
                                    &req, &check, &detail);
    if (rv != APR_SUCCESS) {
        rsp_sp_server_release(dc->sp, res);
        return refuse_request(r, check, detail);
    }
    rsp_log_weak_signature(r, req.issuer, req.weak_signature);
    if ((rc = fresh_and_first(r, dc, &req)) != OK) {
        rsp_saml_slo_free(slo, r->pool);
        rsp_sp_server_release(dc->sp, res);
        return rc;
    }
    if (req.session_indexes->nelts == 0) {
        rv = rsp_logout_index_sessions(sc->store, r->pool, rsp_cfg_prefix(sc),
                                       req.issuer, req.name_id, NULL, 1, NULL,
                                       NULL, &ended, &err);
    }
    for (i = 0; rv == APR_SUCCESS && i < req.session_indexes->nelts; i++) {
        rv = rsp_logout_index_sessions(
            sc->store, r->pool, rsp_cfg_prefix(sc), req.issuer, req.name_id,
            APR_ARRAY_IDX(req.session_indexes, i, const char *), 1, NULL, NULL,
            &ended, &err);
    }
    if (rv != APR_SUCCESS) {
        rc = logout_store_failed(r, apr_psprintf(
                                     r->pool, "cannot end the sessions %s "
                                     "names", req.issuer), err);
    }
    else if (rsp_saml_logout_answer(slo, r->pool, &req, &url, &form, &err)
             != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01038)
                      "no LogoutResponse could be built for %s (its sessions "
                      "here are ended): %s", req.issuer, err);
        rc = HTTP_INTERNAL_SERVER_ERROR;
    }
    rsp_saml_slo_free(slo, r->pool);
    rsp_sp_server_release(dc->sp, res);
    if (rc != OK) {
        return rc;
    }
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01036)
                  "IdP-initiated logout: issuer=%s user=%s session-index=%s "
                  "sessions-ended=%d binding=%s answer=%s client=%s "
                  "replica=%s", req.issuer, req.name_id,
                  req.session_indexes->nelts
                  ? apr_array_pstrcat(r->pool, req.session_indexes, ',') : "-",
                  ended, in->query ? "redirect" : "post",
                  form ? "post" : "redirect", r->useragent_ip, rsp_replica(r));
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    if (form) {
        return post_answer(r, url, form, in->relay);
    }
    apr_table_setn(r->headers_out, "Location", url);
    return HTTP_MOVED_TEMPORARILY;
}

/* HTTP-POST: SAMLRequest or SAMLResponse, and RelayState, from an
 * urlencoded form of at most ReplaySPMaxBodySize bytes, none given twice,
 * and no SAML message in the query beside it. OK, or the status. */
static int slo_form(request_rec *r, rsp_dir_cfg_t *dc, const char **request,
                    const char **response, const char **relay)
{
    const char *ctype = apr_table_get(r->headers_in, "Content-Type");
    const char *why = NULL;
    char *body;
    int rc, bad = 0;

    if (rsp_query_arg(r, "SAMLRequest", &bad)
        || rsp_query_arg(r, "SAMLResponse", &bad) || bad) {
        return refuse_request(r, "binding", "a SAML message in the query of "
                              "an HTTP-POST");
    }
    if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33)) {
        return refuse_request(r, "binding", "Content-Type is not "
                              "application/x-www-form-urlencoded");
    }
    if ((rc = rsp_read_body(r, rsp_cfg_max_body(dc), &body)) != OK) {
        if (rc == HTTP_REQUEST_ENTITY_TOO_LARGE) {
            refuse_request(r, "size", "body larger than ReplaySPMaxBodySize");
        }
        return rc;
    }
    *request = rsp_form_value(r->pool, body, "SAMLRequest", &why);
    if (!why) {
        *response = rsp_form_value(r->pool, body, "SAMLResponse", &why);
    }
    if (!why) {
        *relay = rsp_form_value(r->pool, body, "RelayState", &why);
    }
    return why ? refuse_request(r, "binding", why) : OK;
}

/* <path>/slo: the HTTP-Redirect and HTTP-POST bindings. */
int rsp_slo_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *request = NULL, *response = NULL, *relay = NULL;
    rsp_saml_in_t in;
    int bad = 0, rc;

    if (r->method_number != M_GET && r->method_number != M_POST) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, M_POST, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    if (r->method_number == M_POST) {
        if ((rc = slo_form(r, dc, &request, &response, &relay)) != OK) {
            return rc;
        }
    }
    else {
        request = rsp_query_arg(r, "SAMLRequest", &bad);
        response = rsp_query_arg(r, "SAMLResponse", &bad);
        relay = rsp_query_arg(r, "RelayState", &bad);
    }
    if (bad || (!request) == (!response)) {
        return refuse_request(r, "binding", "expected one SAMLRequest or "
                              "SAMLResponse, once, in the query "
                              "(HTTP-Redirect) or the form (HTTP-POST)");
    }
    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server");
        return rsp_unavailable(r);
    }
    in.query = r->method_number == M_POST ? NULL : r->args;
    in.message = request ? request : response;
    in.relay = relay;
    return response ? slo_response(r, dc, &in, relay) : slo_request(r, dc, &in);
}
