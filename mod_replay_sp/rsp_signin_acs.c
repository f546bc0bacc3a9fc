#include <string.h>

#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_logout_index.h"
#include "rsp_session.h"
#include "rsp_signin_acs.h"
#include "rsp_util.h"

apr_interval_time_t rsp_signin_takeover_age(const rsp_store_t *st)
{
    return 3 * st->timeout + apr_time_from_sec(1);
}

void rsp_signin_unavailable(rsp_signin_result_t *res, rsp_signin_failure_t f,
                            const char *err)
{
    res->outcome = RSP_SIGNIN_UNAVAILABLE;
    res->failure = f;
    res->error = err ? err : "the store gave no answer";
    res->store_errors++;
}

static void refused(rsp_signin_result_t *res, const char *check,
                    const char *detail)
{
    res->outcome = RSP_SIGNIN_REFUSED;
    res->check = check;
    res->detail = detail;
}

/* A claim held already: the browser that won it posts it again (back
 * button, double submit) and gets the first answer again, without a new
 * session: where the first answer went, as far as the store still knows
 * it (pd: the request it answers). Anyone else: a replay. */
static void held(rsp_signin_result_t *res, apr_pool_t *p,
                 const rsp_signin_acs_in_t *in, const rsp_claim_result_t *c,
                 const rsp_pending_t *pd)
{
    if (c != &res->claim) {
        res->claim = *c;
    }
    if (!rsp_signin_is_repost(c, p, in->session_cookie)) {
        res->outcome = RSP_SIGNIN_REPLAY;
        return;
    }
    res->outcome = RSP_SIGNIN_REPOST;
    res->target = in->relay ? in->relay : "/";
    if (in->a->in_response_to) {
        res->target = pd && rsp_pending_relay_matches(p, pd, in->relay)
                      ? pd->return_to : "/";
    }
}

/* A solicited response is checked against its request before its
 * assertion is claimed (one read): refused by it, nothing is claimed, so
 * that a browser that did not start the sign-in cannot burn it for the
 * one that did. Claimed already, it is what it would have been after the
 * claim: the winner's re-post or a replay (one that a retry may still
 * take over is only refused). 0: go on to the claim. */
static int request_checked(rsp_signin_result_t *res, apr_pool_t *p,
                           const rsp_signin_acs_in_t *in, rsp_pending_t **pd)
{
    const rsp_assertion_t *a = in->a;
    rsp_pending_answer_t ans;
    rsp_claim_result_t c;
    const char *val = NULL, *err = NULL, *check, *detail;

    if (rsp_pending_read(in->st, p, in->prefix, RSP_PENDING_LOGIN,
                         a->in_response_to, &val, &err) != APR_SUCCESS) {
        rsp_signin_unavailable(res, RSP_FAILED_REQUEST_READ, err);
        return 1;
    }
    memset(&ans, 0, sizeof(ans));
    ans.rid = res->request;
    ans.sp = in->sp;
    ans.issuer = a->issuer;
    ans.relay = in->relay;
    ans.cookie_base = in->cookie_name;
    ans.cookie_header = in->cookie_header;
    ans.lifetime_s = in->request_lifetime_s;
    if (!(check = rsp_pending_refusal(p, val, &ans, pd, &detail))) {
        return 0;
    }
    rsp_signin_peek(&c, p, in->st, in->prefix, a);
    if (c.verdict == RSP_CLAIM_TAKEN
        && !(c.taker_known
             && rsp_signin_may_take_over(&c.taker, apr_time_now(),
                                         rsp_signin_takeover_age(in->st)))) {
        held(res, p, in, &c, *pd);
        return 1;
    }
    res->claim = c;
    refused(res, check, detail);
    return 1;
}

/* The claim's verdict: 0 to go on (won, taken over, or failed open). */
static int claimed(rsp_signin_result_t *res, apr_pool_t *p,
                   const rsp_signin_acs_in_t *in, const rsp_pending_t *pd)
{
    rsp_claim_result_t *c = &res->claim;

    rsp_signin_claim(c, p, in->st, in->prefix, in->a, in->replica,
                     rsp_session_hash(p, res->sid), in->now, 1);
    if (c->verdict == RSP_CLAIM_TAKEN) {
        res->verdicts = 1;
        if (rsp_signin_is_repost(c, p, in->session_cookie)) {
            held(res, p, in, c, pd);
            return 1;
        }
        /* A claim whose sign-in never completed (a store timeout whose
         * command still ran, a session that could not be stored nor the
         * claim released) is not a replay: a retry takes it over, once. */
        rsp_signin_takeover(c, p, in->st, apr_time_now(),
                            rsp_signin_takeover_age(in->st));
        if (c->verdict == RSP_CLAIM_TAKEN) {
            res->outcome = RSP_SIGNIN_REPLAY;
            return 1;
        }
    }
    else if (c->verdict == RSP_CLAIM_WON) {
        res->verdicts = 1;
    }
    if (c->verdict == RSP_CLAIM_NO_VERDICT) {
        if (!in->fail_open) {
            rsp_signin_unavailable(res, c->unacked ? RSP_FAILED_UNACKED : RSP_FAILED_CLAIM,
                        c->error);
            return 1;
        }
        /* ReplaySPOnStoreFailure open: the operator chose availability. */
        res->store_errors++;
        res->failed_open = 1;
        res->error = c->error;
        return 0;
    }
    res->won = 1;
    return 0;
}

/* Release a claim of ours after its session could not be stored. */
static void release(rsp_signin_result_t *res, apr_pool_t *p,
                    const rsp_signin_acs_in_t *in)
{
    const rsp_claim_result_t *c = &res->claim;
    const char *err2 = NULL;
    int deleted = 0;
    apr_status_t rv;

    rv = rsp_store_del_if_equal(in->st, p, c->key, c->value, &deleted, &err2);
    if (rv == APR_SUCCESS && !deleted) {
        /* completed before a later write failed */
        rv = rsp_store_del_if_equal(in->st, p, c->key, c->done_value, &deleted,
                                    &err2);
    }
    res->released = rv != APR_SUCCESS
        ? apr_pstrcat(p, "kept (release failed: ", err2, ")", NULL)
        : deleted ? "released" : "kept (no longer ours)";
}

/* The session, its logout index entries and the claim's completion. */
static void session_stored(rsp_signin_result_t *res, apr_pool_t *p,
                           const rsp_signin_acs_in_t *in)
{
    const rsp_assertion_t *a = in->a;
    rsp_claim_result_t *c = &res->claim;
    const char *err = NULL, *skey = rsp_session_key(p, in->prefix, res->sid);
    rsp_write_t writes[4];
    rsp_session_t sess;
    apr_status_t rv;
    int nidx;

    memset(&sess, 0, sizeof(sess));
    sess.sp = in->sp;
    sess.issuer = a->issuer;
    sess.name_id = a->name_id;
    sess.name_id_format = a->name_id_format;
    sess.session_index = a->session_index;
    sess.claim_hash = c->assertion_hash;
    sess.attributes = a->attributes;
    sess.created = in->now;
    sess.expires = in->now + in->session_lifetime_ms * 1000;
    /* The logout index and the session in one round trip, in this order
     * (the server runs them in order: the index entries exist before the
     * session does). If any write fails the sign-in fails, and a session
     * written after a failed index write is named by no cookie: it is
     * never used, and expires. */
    memset(writes, 0, sizeof(writes));
    if (a->name_id) {
        rsp_logout_index_writes(p, in->prefix, a->issuer, a->name_id,
                                a->session_index, rsp_session_hash(p, res->sid),
                                in->index_ttl_ms, writes);
        writes[0].home_key = writes[1].home_key = c->key;
    }
    writes[2].kind = RSP_WRITE_PUT;
    writes[2].key = skey;
    writes[2].value = rsp_session_encode(p, &sess);
    writes[2].len = strlen(writes[2].value);
    writes[2].ttl_ms = in->session_lifetime_ms;
    /* Last, the claim marked complete: a compare-and-set against our own
     * record, so that a sign-in whose claim a retry took over meanwhile
     * cannot complete (at most one session per assertion). After a
     * takeover ours is another version: completed on its own below. */
    writes[3].kind = RSP_WRITE_REPLACE;
    writes[3].key = c->key;
    writes[3].expect = c->value;
    writes[3].token = c->token;
    writes[3].value = c->done_value;
    /* Without a NameID (the user named by an attribute) no logout index:
     * an IdP's LogoutRequest always names a NameID. */
    nidx = a->name_id ? 0 : 2;
    rv = rsp_store_write_many(in->st, p, writes + nidx,
                              (res->won && !c->taken_over ? 4 : 3) - nidx,
                              &err);
    if (rv == APR_SUCCESS && res->failed_open) {
        /* Failed open: the claim may have been written after all (a
         * timeout whose command ran, a write the replicas did not
         * acknowledge). Left open, a replay could take it over once old
         * enough: completed by its value, if it is there (best effort,
         * apart from the session's writes, which the store took). */
        const char *err2 = NULL;
        int done = 0;
        rsp_store_replace(in->st, p, c->key, c->value, NULL, c->done_value,
                          &done, &err2);
    }
    if (rv == APR_SUCCESS && res->won && c->taken_over) {
        rv = rsp_store_replace(in->st, p, c->key, c->value, NULL,
                               c->done_value, &writes[3].replaced, &err);
    }
    if (rv == APR_SUCCESS && res->won && !writes[3].replaced) {
        /* Taken over by a retry (it saw our claim as never completed), or
         * gone: that retry's sign-in is the one that counts. */
        int gone = 0;
        rsp_store_del_if_equal(in->st, p, skey, writes[2].value, &gone, &err);
        rsp_signin_unavailable(res, RSP_FAILED_ABANDONED, NULL);
        return;
    }
    if (rv != APR_SUCCESS) {
        rsp_signin_unavailable(res, RSP_FAILED_SESSION, err);
        if (res->won) {
            release(res, p, in);
        }
        return;
    }
    res->outcome = RSP_SIGNIN_ACCEPTED;
}

void rsp_signin_acs(rsp_signin_result_t *res, apr_pool_t *p,
                    const rsp_signin_acs_in_t *in)
{
    const rsp_assertion_t *a = in->a;
    rsp_pending_t *pd = NULL;
    const char *err = NULL;
    int used = 0;

    memset(res, 0, sizeof(*res));
    res->claim.assertion_hash = rsp_short_hash(p, a->id);
    if (a->in_response_to) {
        res->request = rsp_short_hash(p, a->in_response_to);
        if (request_checked(res, p, in, &pd)) {
            return;
        }
    }
    /* The session lives where the claim does (several memcached servers:
     * one server per sign-in). */
    if (rsp_signin_session_id(&res->sid, p, in->st, in->prefix,
                              rsp_claim_key(p, in->prefix, a->issuer, a->id),
                              RSP_SESSION_ID_BYTES) != APR_SUCCESS) {
        res->outcome = RSP_SIGNIN_UNAVAILABLE;
        res->failure = RSP_FAILED_RANDOM;
        res->error = "random generator failed";
        return;
    }
    if (claimed(res, p, in, pd)) {
        return;
    }
    /* Won (or failed open). A response to one of our requests uses the
     * request up (the assertion stays claimed whatever the verdict). */
    res->target = in->relay ? in->relay : "/";
    if (a->in_response_to) {
        if (rsp_pending_use(in->st, p, in->prefix, RSP_PENDING_LOGIN,
                            a->in_response_to, in->replica, apr_time_now(),
                            in->request_lifetime_s, &used, &err)
            != APR_SUCCESS) {
            rsp_signin_unavailable(res, RSP_FAILED_REQUEST_USE, err);
            return;
        }
        if (!used) {
            refused(res, "request-used", apr_psprintf(
                p, "request %s was already answered", res->request));
            return;
        }
        res->expire_binding = pd->bind_hash != NULL;
        res->target = pd->return_to;
    }
    session_stored(res, p, in);
}
