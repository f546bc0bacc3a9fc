/* The assertion consumer service (HTTP-POST binding):
 *   read the form (size-limited) -> Lasso and our checks -> claim
 *   (SET NX PX, TTL from the assertion's own window) -> only the winner
 *   stores a session and sets the cookie. Fail closed on store errors. */
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp_acs.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_signin.h"
#include "rsp_form.h"
#include "rsp_signin_acs.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

/* Take SAMLResponse and RelayState from an urlencoded form of at most
 * ReplaySPMaxBodySize bytes; a field given twice is refused (which one
 * would count?). */
static int read_form(request_rec *r, rsp_dir_cfg_t *dc, const char **saml,
                     const char **relay)
{
    const char *ctype = apr_table_get(r->headers_in, "Content-Type");
    const char *why = NULL;
    char *body;
    int rc;

    if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33)) {
        return rsp_refuse_response(r, "form", "Content-Type is not "
                                   "application/x-www-form-urlencoded");
    }
    if ((rc = rsp_read_body(r, rsp_cfg_max_body(dc), &body)) != OK) {
        if (rc == HTTP_REQUEST_ENTITY_TOO_LARGE) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01015)
                          "saml response refused: check=size: body larger "
                          "than ReplaySPMaxBodySize %" APR_INT64_T_FMT
                          " (client %s)", rsp_cfg_max_body(dc),
                          r->useragent_ip);
        }
        return rc;
    }
    *relay = NULL;
    *saml = rsp_form_value(r->pool, body, "SAMLResponse", &why);
    if (!why) {
        *relay = rsp_form_value(r->pool, body, "RelayState", &why);
    }
    if (!why && (!*saml || !**saml)) {
        why = "no SAMLResponse in the form";
    }
    return why ? rsp_refuse_response(r, "form", why) : OK;
}

/* The policy of this location before anything touches the store: an
 * unsolicited response only where allowed (its RelayState an allowed
 * target), the user attribute, the session's lifetime capped by the
 * assertion's SessionNotOnOrAfter. NULL, or the failed check. */
static const char *acs_policy(request_rec *r, rsp_dir_cfg_t *dc,
                              const rsp_assertion_t *a, const char *relay,
                              apr_time_t now, apr_int64_t *lifetime_ms,
                              const char **detail)
{
    const char *why;

    if (!a->in_response_to) {
        /* Unsolicited (IdP-initiated): only where allowed, and its
         * RelayState is a redirect target like any other. */
        if (!rsp_cfg_allow_unsolicited(dc)) {
            *detail = "the response answers no request (no InResponseTo) "
                      "and ReplaySPAllowUnsolicited is Off";
            return "unsolicited";
        }
        if (relay && (why = rsp_redirect_refused(r, dc, relay)) != NULL) {
            *detail = apr_psprintf(r->pool, "RelayState of an unsolicited "
                                   "response is not an allowed redirect "
                                   "target: %s", why);
            return "relay-state";
        }
    }
    if (dc->user_attribute && !rsp_attribute(a->attributes, dc->user_attribute)) {
        *detail = apr_psprintf(r->pool, "no attribute %s (ReplaySPUserAttribute) "
                               "in the assertion", dc->user_attribute);
        return "user-attribute";
    }
    *lifetime_ms = rsp_cfg_session_lifetime(dc) * 1000;
    if (a->session_not_on_or_after) {
        apr_int64_t cap = (a->session_not_on_or_after - now) / 1000;
        if (cap < 1000) {
            *detail = apr_psprintf(r->pool, "SessionNotOnOrAfter %s has passed",
                                   rsp_format_time(r->pool,
                                                   a->session_not_on_or_after));
            return "session-expired";
        }
        if (cap < *lifetime_ms) {
            *lifetime_ms = cap;
        }
    }
    return NULL;
}

/* A sign-in the store failed: its line, and 503 (500: no randomness). */
static int acs_unavailable(request_rec *r, const rsp_assertion_t *a,
                           const rsp_signin_result_t *res, apr_int64_t timeout_ms)
{
    const char *replica = rsp_replica(r), *h = res->claim.assertion_hash;

    switch (res->failure) {
    case RSP_FAILED_RANDOM:
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01018)
                      "random generator failed; refusing the sign-in");
        return HTTP_INTERNAL_SERVER_ERROR;
    case RSP_FAILED_REQUEST_READ:
    case RSP_FAILED_REQUEST_USE:
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01032)
                      "sign-in refused, store unavailable (fail closed): "
                      "cannot %s request %s: client=%s replica=%s: %s",
                      res->failure == RSP_FAILED_REQUEST_READ ? "read"
                      : "consume", res->request, r->useragent_ip, replica,
                      res->error);
        break;
    case RSP_FAILED_ABANDONED:
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01045)
                      "sign-in abandoned: its claim was taken over before it "
                      "completed (the store was slower than %" APR_INT64_T_FMT
                      " ms): issuer=%s assertion=%s replica=%s; no session "
                      "issued", timeout_ms, a->issuer, h, replica);
        break;
    case RSP_FAILED_SESSION:
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01005)
                      "sign-in refused, session could not be stored: "
                      "issuer=%s assertion=%s replica=%s: %s; %s%s",
                      a->issuer, h, replica, res->error,
                      res->released ? "claim " : "no claim",
                      res->released ? res->released : "");
        break;
    default:
        return rsp_claim_unavailable(r, a, res);
    }
    return rsp_unavailable(r);
}

/* The sign-in's answer: counters, cookies, its lines, the status. */
static int acs_render(request_rec *r, rsp_dir_cfg_t *dc, const rsp_assertion_t *a,
                      const char *relay, const rsp_signin_result_t *res,
                      apr_int64_t skew_s, apr_int64_t lifetime_ms)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *replica = rsp_replica(r), *h = res->claim.assertion_hash;

    rsp_signin_counted(r, res, a, skew_s);
    if (res->expire_binding) {
        rsp_binding_expire(r, dc, relay); /* done with */
    }
    if (res->won && res->claim.taken_over) {
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01044)
                      "claim taken over: the sign-in that won it at %s on "
                      "replica %s never completed: issuer=%s assertion=%s "
                      "client=%s replica=%s",
                      rsp_format_time(r->pool, res->claim.taker.claimed),
                      res->claim.taker.replica, a->issuer, h,
                      r->useragent_ip, replica);
    }
    switch (res->outcome) {
    case RSP_SIGNIN_REFUSED:
        return rsp_refuse_response(r, res->check, res->detail);
    case RSP_SIGNIN_REPLAY:
        return rsp_refuse_replay(r, a, &res->claim);
    case RSP_SIGNIN_UNAVAILABLE:
        return acs_unavailable(r, a, res, apr_time_as_msec(
            rsp_signin_takeover_age(sc->store)));
    case RSP_SIGNIN_REPOST:
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01026)
                      "re-post by the browser that claimed it: "
                      "issuer=%s assertion=%s client=%s replica=%s; "
                      "no new session", a->issuer, h, r->useragent_ip, replica);
        apr_table_setn(r->headers_out, "Location", res->target);
        return HTTP_SEE_OTHER;
    default:
        break;
    }
    apr_table_addn(r->err_headers_out, "Set-Cookie", apr_psprintf(
        r->pool, "%s=%s; Path=/; HttpOnly; SameSite=Lax%s", rsp_cfg_cookie(dc),
        res->sid, strcmp(ap_http_scheme(r), "https") ? "" : "; Secure"));
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01002)
                  "sign-in accepted: issuer=%s assertion=%s user=%s client=%s "
                  "replica=%s claim-ttl-ms=%" APR_INT64_T_FMT
                  " session-lifetime=%" APR_INT64_T_FMT "s", a->issuer, h,
                  a->name_id ? a->name_id
                             : rsp_attribute(a->attributes, dc->user_attribute),
                  r->useragent_ip, replica, a->ttl_ms,
                  lifetime_ms / 1000);
    apr_table_setn(r->headers_out, "Location", res->target);
    return HTTP_SEE_OTHER;
}

int rsp_acs_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *saml = NULL, *relay = NULL, *why, *check;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    rsp_check_params_t cp;
    rsp_assertion_t *a;
    int rc;

    if (r->method_number != M_POST) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_POST, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    if ((rc = read_form(r, dc, &saml, &relay)) != OK) {
        return rc;
    }
    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server");
        return rsp_unavailable(r);
    }
    /* Validate: Lasso (signature, issuer) and our checks; then this
     * location's policy. */
    if ((rc = rsp_validate(r, dc, saml, rsp_endpoint_url(r, dc, "acs"), NULL,
                           &cp, &a)) != OK) {
        return rc;
    }
    memset(&in, 0, sizeof(in));
    if ((check = acs_policy(r, dc, a, relay, cp.now, &in.session_lifetime_ms,
                            &why)) != NULL) {
        return rsp_refuse_response(r, check, why);
    }
    /* The sign-in: everything it does with the store. */
    in.st = sc->store;
    in.prefix = rsp_cfg_prefix(sc);
    in.a = a;
    in.sp = cp.entity_id;
    in.replica = rsp_replica(r);
    in.now = cp.now;
    in.relay = relay;
    in.session_cookie = rsp_session_cookie(r, dc);
    in.cookie_name = rsp_cfg_cookie(dc);
    in.cookie_header = apr_table_get(r->headers_in, "Cookie");
    in.request_lifetime_s = rsp_cfg_request_lifetime(dc);
    in.index_ttl_ms = rsp_cfg_session_lifetime(dc) * 1000;
    in.fail_open = sc->on_failure_open == 1;
    rsp_signin_acs(&res, r->pool, &in);
    return acs_render(r, dc, a, relay, &res, cp.skew_s, in.session_lifetime_ms);
}
