/* The assertion consumer service (HTTP-POST binding):
 *   read the form (size-limited) -> Lasso and our checks -> claim
 *   (SET NX PX, TTL from the assertion's own window) -> only the winner
 *   stores a session and sets the cookie. Fail closed on store errors. */
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp.h"
#include "rsp_claim.h"
#include "rsp_signin.h"
#include "rsp_session.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

/* Read the whole body, at most max bytes. */
static int read_body(request_rec *r, apr_int64_t max, char **out)
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

/* Take SAMLResponse and RelayState from an urlencoded form; a field given
 * twice is refused (which one would count?). */
static const char *parse_form(request_rec *r, const char *body,
                              const char **saml, const char **relay)
{
    const char *why = NULL;

    *relay = NULL;
    *saml = rsp_form_value(r->pool, body, "SAMLResponse", &why);
    if (!why) {
        *relay = rsp_form_value(r->pool, body, "RelayState", &why);
    }
    if (why) {
        return why;
    }
    if (!*saml || !**saml) {
        return "no SAMLResponse in the form";
    }
    return NULL;
}

/* How old an open claim must be before a retry may take it over: longer
 * than the sign-in that won it can still take after winning (consuming
 * its request, its writes, releasing the claim: each bounded by the
 * store's timeout). */
static apr_interval_time_t takeover_age(const rsp_store_t *st)
{
    return 3 * st->timeout + apr_time_from_sec(1);
}

/* A claim held already: the browser that won it posts it again (back
 * button, double submit) and gets the first answer again, without a new
 * session: where the first answer went, as far as the store still knows
 * it (pd: the request it answers, read before the claim). 0 when it is
 * not that browser. */
static int repost(request_rec *r, rsp_dir_cfg_t *dc, const rsp_assertion_t *a,
                  const rsp_claim_result_t *claim, const rsp_pending_t *pd,
                  const char *relay)
{
    const char *target = relay ? relay : "/";

    if (!rsp_signin_is_repost(claim, r->pool, rsp_session_cookie(r, dc))) {
        return 0;
    }
    if (a->in_response_to) {
        target = pd && rsp_pending_relay_matches(r->pool, pd, relay)
                 ? pd->return_to : "/";
    }
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01026)
                  "re-post by the browser that claimed it: "
                  "issuer=%s assertion=%s client=%s replica=%s; "
                  "no new session", a->issuer, claim->assertion_hash,
                  r->useragent_ip, rsp_replica(r));
    apr_table_setn(r->headers_out, "Location", target);
    return HTTP_SEE_OTHER;
}

/* A solicited response its request refuses (check, detail: unknown,
 * another IdP's, another RelayState, another browser's) is refused
 * without claiming its assertion: a browser that did not start the
 * sign-in cannot burn it for the one that did. Claimed already, it is
 * what it would have been after the claim: the winner's re-post or a
 * replay (one that a retry may still take over is only refused). */
static int refused_by_request(request_rec *r, rsp_dir_cfg_t *dc,
                              const rsp_assertion_t *a, const rsp_pending_t *pd,
                              const char *relay, const char *check,
                              const char *detail)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    rsp_claim_result_t held;
    int rc;

    rsp_signin_peek(&held, r->pool, sc->store, rsp_cfg_prefix(sc), a);
    if (held.verdict == RSP_CLAIM_TAKEN
        && !(held.taker_known
             && rsp_signin_may_take_over(&held.taker, apr_time_now(),
                                         takeover_age(sc->store)))) {
        if ((rc = repost(r, dc, a, &held, pd, relay)) != 0) {
            return rc;
        }
        return rsp_refuse_replay(r, a, &held);
    }
    return rsp_refuse_response(r, check, detail);
}

int rsp_acs_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    rsp_store_t *st = sc->store;
    const char *ctype, *saml, *relay, *why, *err, *check = NULL;
    const char *sid, *skey, *replica, *cookie;
    rsp_pending_t *pd = NULL;
    rsp_claim_result_t claim;
    const char *target;
    rsp_check_params_t cp;
    rsp_assertion_t *a;
    rsp_session_t sess;
    rsp_write_t writes[4];
    apr_int64_t lifetime_ms;
    apr_time_t now;
    apr_status_t rv;
    char *body;
    int rc, won, deleted = 0;

    if (r->method_number != M_POST) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_POST, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    ctype = apr_table_get(r->headers_in, "Content-Type");
    if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33)) {
        return rsp_refuse_response(r, "form", "Content-Type is not "
                      "application/x-www-form-urlencoded");
    }
    if ((rc = read_body(r, rsp_cfg_max_body(dc), &body)) != OK) {
        if (rc == HTTP_REQUEST_ENTITY_TOO_LARGE) {
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01015)
                          "saml response refused: check=size: body larger "
                          "than ReplaySPMaxBodySize %" APR_INT64_T_FMT
                          " (client %s)", rsp_cfg_max_body(dc),
                          r->useragent_ip);
        }
        return rc;
    }
    if ((why = parse_form(r, body, &saml, &relay)) != NULL) {
        return rsp_refuse_response(r, "form", why);
    }
    if (!st) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server");
        return rsp_unavailable(r);
    }

    /* 1. Validate: Lasso (signature, issuer) and our checks. */
    if ((rc = rsp_validate(r, dc, saml, rsp_endpoint_url(r, dc, "acs"), NULL,
                           &cp, &a)) != OK) {
        return rc;
    }
    now = cp.now;
    if (!a->in_response_to) {
        /* Unsolicited (IdP-initiated): only where allowed, and its
         * RelayState is a redirect target like any other. */
        if (!rsp_cfg_allow_unsolicited(dc)) {
            return rsp_refuse_response(r, "unsolicited", "the response "
                                       "answers no request (no InResponseTo) "
                                       "and ReplaySPAllowUnsolicited is Off");
        }
        if (relay && (why = rsp_redirect_refused(r, dc, relay)) != NULL) {
            return rsp_refuse_response(r, "relay-state", apr_psprintf(
                r->pool, "RelayState of an unsolicited response is not an "
                "allowed redirect target: %s", why));
        }
    }
    if (dc->user_attribute && !rsp_attribute(a->attributes, dc->user_attribute)) {
        return rsp_refuse_response(r, "user-attribute", apr_psprintf(
            r->pool, "no attribute %s (ReplaySPUserAttribute) in the assertion",
            dc->user_attribute));
    }
    lifetime_ms = rsp_cfg_session_lifetime(dc) * 1000;
    if (a->session_not_on_or_after) {
        apr_int64_t cap = (a->session_not_on_or_after - now) / 1000;
        if (cap < 1000) {
            return rsp_refuse_response(r, "session-expired", apr_psprintf(
                r->pool, "SessionNotOnOrAfter %s has passed",
                rsp_format_time(r->pool, a->session_not_on_or_after)));
        }
        if (cap < lifetime_ms) {
            lifetime_ms = cap;
        }
    }

    /* 2. A solicited response is checked against its request before its
     * assertion is claimed (one read). */
    if (a->in_response_to
        && ((rc = rsp_request_check(r, dc, RSP_PENDING_LOGIN,
                                    a->in_response_to, a->issuer, relay, &pd,
                                    &check, &why)) != OK
            || (check && (rc = refused_by_request(r, dc, a, pd, relay, check,
                                                  why)) != OK))) {
        return rc;
    }

    /* 3. Claim: one SET NX PX; the reply is the verdict. */
    replica = rsp_replica(r);
    /* The session lives where the claim does (several memcached servers:
     * one server per sign-in). */
    if (rsp_signin_session_id(&sid, r->pool, st, rsp_cfg_prefix(sc),
                              rsp_claim_key(r->pool, rsp_cfg_prefix(sc),
                                            a->issuer, a->id),
                              RSP_SESSION_ID_BYTES) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01018)
                      "random generator failed; refusing the sign-in");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    skey = rsp_session_key(r->pool, rsp_cfg_prefix(sc), sid);
    rsp_signin_claim(&claim, r->pool, st, rsp_cfg_prefix(sc), a, replica,
                     rsp_session_hash(r->pool, sid), now, 1);
    if ((rc = rsp_claim_answer(r, a, &claim, cp.skew_s)) != OK) {
        return rc;
    }
    if (claim.verdict == RSP_CLAIM_TAKEN) {
        /* The browser that won the claim: a re-post. Anyone else: a
         * replay. */
        if ((rc = repost(r, dc, a, &claim, pd, relay)) != 0) {
            return rc;
        }
        /* A claim whose sign-in never completed (a store timeout whose
         * command still ran, a session that could not be stored nor the
         * claim released) is not a replay: a retry takes it over, once. */
        rsp_signin_takeover(&claim, r->pool, st, apr_time_now(),
                            takeover_age(st));
        if (claim.verdict == RSP_CLAIM_TAKEN) {
            return rsp_refuse_replay(r, a, &claim);
        }
        if (claim.verdict == RSP_CLAIM_NO_VERDICT) {
            /* taken over on the primary, not acknowledged by its replicas */
            if ((rc = rsp_claim_answer(r, a, &claim, cp.skew_s)) != OK) {
                return rc;
            }
        }
        RSP_COUNT(claims_won);
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01044)
                      "claim taken over: the sign-in that won it at %s on "
                      "replica %s never completed: issuer=%s assertion=%s "
                      "client=%s replica=%s",
                      rsp_format_time(r->pool, claim.taker.claimed),
                      claim.taker.replica, a->issuer, claim.assertion_hash,
                      r->useragent_ip, replica);
    }

    /* 4. Won. A response to one of our requests uses the request up (the
     * assertion stays claimed whatever the verdict). */
    if (a->in_response_to) {
        if ((rc = rsp_request_use(r, dc, RSP_PENDING_LOGIN, a->in_response_to,
                                  relay, pd)) != OK) {
            return rc;
        }
        target = pd->return_to;
    }
    else {
        target = relay ? relay : "/";
    }

    /* 5. The session, then the cookie. */
    memset(&sess, 0, sizeof(sess));
    sess.sp = cp.entity_id;
    sess.issuer = a->issuer;
    sess.name_id = a->name_id;
    sess.name_id_format = a->name_id_format;
    sess.session_index = a->session_index;
    sess.claim_hash = claim.assertion_hash;
    sess.attributes = a->attributes;
    sess.created = now;
    sess.expires = now + lifetime_ms * 1000;
    /* The logout index and the session in one round trip, in this order
     * (the server runs them in order: the index entries exist before the
     * session does). If any write fails the sign-in fails, and a session
     * written after a failed index write is named by no cookie: it is
     * never used, and expires. */
    memset(writes, 0, sizeof(writes));
    rsp_logout_index_writes(r, dc, a->issuer, a->name_id, a->session_index,
                            rsp_session_hash(r->pool, sid), writes);
    writes[0].home_key = writes[1].home_key = claim.key;
    writes[2].kind = RSP_WRITE_PUT;
    writes[2].key = skey;
    writes[2].value = rsp_session_encode(r->pool, &sess);
    writes[2].len = strlen(writes[2].value);
    writes[2].ttl_ms = lifetime_ms;
    /* Last, the claim marked complete: a compare-and-set against our own
     * record, so that a sign-in whose claim a retry took over meanwhile
     * cannot complete (at most one session per assertion). After a
     * takeover ours is another version: completed on its own below. */
    writes[3].kind = RSP_WRITE_REPLACE;
    writes[3].key = claim.key;
    writes[3].expect = claim.value;
    writes[3].token = claim.token;
    writes[3].value = claim.done_value;
    /* An audited fail-open has no claim to complete. */
    won = claim.verdict == RSP_CLAIM_WON;
    rv = rsp_store_write_many(st, r->pool, writes,
                              won && !claim.taken_over ? 4 : 3, &err);
    if (rv == APR_SUCCESS && won && claim.taken_over) {
        rv = rsp_store_replace(st, r->pool, claim.key, claim.value, NULL,
                               claim.done_value, &writes[3].replaced, &err);
    }
    if (rv == APR_SUCCESS && won && !writes[3].replaced) {
        /* Taken over by a retry (it saw our claim as never completed), or
         * gone: that retry's sign-in is the one that counts. */
        int gone = 0;
        RSP_COUNT(store_errors);
        rsp_store_del_if_equal(st, r->pool, skey, writes[2].value, &gone, &err);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01045)
                      "sign-in abandoned: its claim was taken over before it "
                      "completed (the store was slower than %" APR_TIME_T_FMT
                      " ms): issuer=%s assertion=%s replica=%s; no session "
                      "issued", apr_time_as_msec(takeover_age(st)), a->issuer,
                      claim.assertion_hash, replica);
        return rsp_unavailable(r);
    }
    if (rv != APR_SUCCESS && !won) {
        /* fail-open: no claim of ours to release */
        RSP_COUNT(store_errors);
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01005)
                      "sign-in refused, session could not be stored: "
                      "issuer=%s assertion=%s replica=%s: %s; no claim",
                      a->issuer, claim.assertion_hash, replica, err);
        return rsp_unavailable(r);
    }
    if (rv != APR_SUCCESS) {
        const char *err2 = NULL;
        RSP_COUNT(store_errors);
        apr_status_t rv2 = rsp_store_del_if_equal(st, r->pool, claim.key,
                                                  claim.value, &deleted, &err2);
        if (rv2 == APR_SUCCESS && !deleted) {
            /* completed before a later write failed */
            rv2 = rsp_store_del_if_equal(st, r->pool, claim.key,
                                         claim.done_value, &deleted, &err2);
        }
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01005)
                      "sign-in refused, session could not be stored: "
                      "issuer=%s assertion=%s replica=%s: %s; claim %s",
                      a->issuer, claim.assertion_hash, replica, err,
                      rv2 != APR_SUCCESS ? apr_pstrcat(r->pool,
                          "kept (release failed: ", err2, ")", NULL)
                      : deleted ? "released" : "kept (no longer ours)");
        return rsp_unavailable(r);
    }
    cookie = apr_psprintf(r->pool, "%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
                          rsp_cfg_cookie(dc), sid,
                          strcmp(ap_http_scheme(r), "https") ? "" : "; Secure");
    apr_table_addn(r->err_headers_out, "Set-Cookie", cookie);
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01002)
                  "sign-in accepted: issuer=%s assertion=%s user=%s client=%s "
                  "replica=%s claim-ttl-ms=%" APR_INT64_T_FMT
                  " session-lifetime=%" APR_INT64_T_FMT "s", a->issuer, claim.assertion_hash,
                  a->name_id, r->useragent_ip, replica, a->ttl_ms,
                  lifetime_ms / 1000);
    apr_table_setn(r->headers_out, "Location", target);
    return HTTP_SEE_OTHER;
}
