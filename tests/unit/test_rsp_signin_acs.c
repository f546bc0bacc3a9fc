/* Unit tests for rsp_signin_acs.c, the ACS's sign-in after validation:
 * the pending request checked before the claim, the claim's verdicts
 * (re-post, replay, takeover), the request used up, the session with its
 * logout index entries and the claim's completion, the release on
 * failure, and ReplaySPOnStoreFailure open; every outcome and every
 * failed step, against the in-memory store of rsp_mem_store.c (its fault
 * injection, and a wrapper of its operations that traces their order and
 * can rewrite the claim key just before the session's writes). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_binding.h"
#include "rsp_claim.h"
#include "rsp_logout_index.h"
#include "rsp_pending.h"
#include "rsp_session.h"
#include "rsp_signin_acs.h"
#include "rsp_store.h"
#include "rsp_util.h"
#include "rsp_mem_store.h"

#define PREFIX "rsp:"
#define IDP "https://idp.example/saml"
#define OTHER_IDP "https://other-idp.example/saml"
#define SP "https://sp.example/saml"
#define OTHER_SP "https://other-sp.example/saml"
#define COOKIE "rspsession"
#define RELAY "relay-token-1"
#define RETURN_TO "https://sp.example/app/page?x=1"
#define BINDING "binding-value-of-browser-1"
#define REQ_ID "_request-1"
#define NAME_ID "alice@example.org"
#define NAME_ID_FORMAT "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
#define SESSION_INDEX "_session-index-1"
#define CLAIM_TTL_MS APR_INT64_C(300000)
#define LIFETIME_MS APR_INT64_C(3600000)
#define INDEX_TTL_MS APR_INT64_C(28800000)
#define REQUEST_LIFETIME_S APR_INT64_C(600)

/* "Now" as the sign-ins see it, in whole seconds as claims record it: the
 * real time, since the code judges a claim's age (takeover) by
 * apr_time_now(), not by its input's now nor by the store's clock. */
static apr_time_t NOW;
/* An open claim this old (by its record) may be taken over; one claimed
 * at NOW may not (rsp_signin_takeover_age: 4 s with the mem store's 1 s
 * timeout, plus the 1 s of rounding). */
#define OLD apr_time_from_sec(60)

static rsp_store_t *st;

/* ---- the mem store's operations, traced ---- */

static const rsp_store_ops_t *mem_ops;
static rsp_store_ops_t traced_ops;
static char trace[64];
/* Before the next write_many: write steal_value under steal_key (a retry
 * that took the claim over meanwhile; NULL: the value it holds, written
 * again). Not a call of the store's: counted nowhere, meets no fault. */
static const char *steal_key, *steal_value;

static void note(char op)
{
    apr_size_t n = strlen(trace);

    if (n + 1 < sizeof(trace)) {
        trace[n] = op;
        trace[n + 1] = '\0';
    }
}

static apr_status_t t_get(rsp_store_t *s, apr_pool_t *p, const char *key,
                          const char **value, apr_size_t *len,
                          const char **err)
{
    note('G');
    return mem_ops->get(s, p, key, value, len, err);
}

static apr_status_t t_claim_read(rsp_store_t *s, apr_pool_t *p,
                                 rsp_claim_read_t *c, const char **err)
{
    note('C');
    return mem_ops->claim_read(s, p, c, err);
}

static apr_status_t t_write_many(rsp_store_t *s, apr_pool_t *p,
                                 rsp_write_t *w, int n, const char **err)
{
    note('W');
    if (steal_key) {
        /* steal_value NULL: the same value again, another version */
        const char *v = steal_value ? steal_value
                                    : rsp_mem_store_peek(s, -1, steal_key);
        ck_assert_ptr_nonnull(v);
        rsp_mem_store_poke(s, -1, steal_key, v, CLAIM_TTL_MS);
        steal_key = steal_value = NULL;
    }
    return mem_ops->write_many(s, p, w, n, err);
}

static apr_status_t t_replace(rsp_store_t *s, apr_pool_t *p, const char *key,
                              const char *expect, const char *token,
                              const char *value, int *replaced,
                              const char **err)
{
    note('R');
    return mem_ops->replace(s, p, key, expect, token, value, replaced, err);
}

static apr_status_t t_del_if_equal(rsp_store_t *s, apr_pool_t *p,
                                   const char *key, const char *value,
                                   int *deleted, const char **err)
{
    note('D');
    return mem_ops->del_if_equal(s, p, key, value, deleted, err);
}

static rsp_store_t *traced_store(int servers)
{
    rsp_store_t *s = rsp_mem_store_create(pool, servers);

    mem_ops = s->ops;
    traced_ops = *mem_ops;
    traced_ops.get = t_get;
    traced_ops.claim_read = t_claim_read;
    traced_ops.write_many = t_write_many;
    traced_ops.replace = t_replace;
    traced_ops.del_if_equal = t_del_if_equal;
    s->ops = &traced_ops;
    return s;
}

static void setup(void)
{
    rsp_unit_setup();
    NOW = apr_time_from_sec(apr_time_sec(apr_time_now()));
    st = traced_store(1);
    trace[0] = '\0';
    steal_key = steal_value = NULL;
}

static void teardown(void)
{
    st = NULL;
    rsp_unit_teardown();
}

/* ---- inputs ---- */

static const rsp_assertion_t *assertion(const char *id, const char *irt)
{
    rsp_assertion_t *a = apr_pcalloc(pool, sizeof(*a));
    rsp_attribute_t *at;

    a->issuer = IDP;
    a->id = id;
    a->name_id = NAME_ID;
    a->name_id_format = NAME_ID_FORMAT;
    a->session_index = SESSION_INDEX;
    a->in_response_to = irt;
    a->ttl_ms = CLAIM_TTL_MS;
    a->attributes = apr_array_make(pool, 1, sizeof(rsp_attribute_t));
    at = apr_array_push(a->attributes);
    at->name = "mail";
    at->value = "alice@example.org";
    return a;
}

/* The Cookie header of the browser holding binding value (name: the
 * request's binding cookie, or its fallback twin). */
static const char *cookies(const char *name, const char *value)
{
    return apr_psprintf(pool, "theme=dark; %s=%s; lang=en", name, value);
}

static const char *binding_cookie(void)
{
    return rsp_binding_cookie_name(pool, COOKIE, RELAY);
}

/* The input of a post of a by the browser that started its sign-in
 * (solicited: the request's RelayState and binding cookie; unsolicited:
 * no RelayState, no cookie). */
static void input(rsp_signin_acs_in_t *in, rsp_store_t *s,
                  const rsp_assertion_t *a)
{
    memset(in, 0, sizeof(*in));
    in->st = s;
    in->prefix = PREFIX;
    in->a = a;
    in->sp = SP;
    in->replica = "replica-a";
    in->now = NOW;
    in->cookie_name = COOKIE;
    in->request_lifetime_s = REQUEST_LIFETIME_S;
    in->session_lifetime_ms = LIFETIME_MS;
    in->index_ttl_ms = INDEX_TTL_MS;
    if (a->in_response_to) {
        in->relay = RELAY;
        in->cookie_header = cookies(binding_cookie(), BINDING);
    }
}

/* The same post by a browser that did not start it and has no session. */
static void stranger(rsp_signin_acs_in_t *in)
{
    in->cookie_header = NULL;
    in->session_cookie = NULL;
    in->replica = "replica-x";
}

/* The record of a request as the login step keeps it: sent to idp for
 * sp with RELAY and RETURN_TO, bound to binding (NULL: not bound). */
static const char *request_record(const char *idp, const char *sp,
                                  const char *binding)
{
    return rsp_pending_encode(pool, idp, sp, RELAY, RETURN_TO, binding);
}

static const char *pending_key(const char *rid)
{
    return rsp_pending_key(pool, PREFIX, RSP_PENDING_LOGIN, rid);
}

/* The request rid kept in the store (not a call: counted nowhere). */
static void put_request(rsp_store_t *s, const char *rid, const char *rec)
{
    rsp_mem_store_poke(s, -1, pending_key(rid), rec,
                       REQUEST_LIFETIME_S * 1000);
}

static const char *use_key(const char *rid)
{
    return rsp_pending_use_key(pool, PREFIX, rid);
}

static const char *claim_key(const rsp_assertion_t *a)
{
    return rsp_claim_key(pool, PREFIX, a->issuer, a->id);
}

static const char *si_key(void)
{
    return rsp_logout_index_key(pool, PREFIX, IDP, NAME_ID, SESSION_INDEX);
}

static const char *nameid_key(void)
{
    return rsp_logout_index_key(pool, PREFIX, IDP, NAME_ID, NULL);
}

/* A claim record as an ACS writes it. */
static const char *record(const char *replica, apr_time_t claimed,
                          const char *sid, int open)
{
    rsp_claim_rec_t r;

    memset(&r, 0, sizeof(r));
    r.replica = replica;
    r.claimed = claimed;
    r.session_hash = sid ? rsp_session_hash(pool, sid) : NULL;
    r.open = open;
    return rsp_claim_encode(pool, &r);
}

/* Another sign-in holds a's claim with rec. */
static void hold(rsp_store_t *s, const rsp_assertion_t *a, const char *rec)
{
    rsp_mem_store_poke(s, -1, claim_key(a), rec, CLAIM_TTL_MS);
}

static void run(rsp_signin_result_t *res, const rsp_signin_acs_in_t *in)
{
    trace[0] = '\0';
    rsp_mem_store_reset_calls(in->st);
    rsp_signin_acs(res, pool, in);
    /* every fault injected was met by this sign-in's calls */
    ck_assert_int_eq(rsp_mem_store_faults_pending(in->st), 0);
}

static apr_int64_t ttl_of(rsp_store_t *s, const char *key)
{
    apr_int64_t ttl = 0;
    const char *err = NULL;

    ck_assert_int_eq(rsp_store_ttl(s, pool, key, &ttl, &err), APR_SUCCESS);
    return ttl;
}

static rsp_claim_rec_t decoded(const char *val)
{
    rsp_claim_rec_t rec;

    ck_assert_ptr_nonnull(val);
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, val), APR_SUCCESS);
    return rec;
}

/* Whether the index entry key on server lists session hash sh. */
static int indexed(rsp_store_t *s, int server, const char *key,
                   const char *sh)
{
    apr_array_header_t *hs = rsp_logout_index_parse(
        pool, rsp_mem_store_peek(s, server, key));
    int i;

    for (i = 0; i < hs->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(hs, i, const char *), sh)) {
            return 1;
        }
    }
    return 0;
}

/* An accepted sign-in: its session (on server: -1, its key's own), its
 * two index entries there, its claim completed (unless failed open). */
static void assert_accepted(const rsp_signin_result_t *res,
                            const rsp_signin_acs_in_t *in, int server)
{
    const rsp_assertion_t *a = in->a;
    const char *skey, *sh, *v;
    rsp_session_t *s = NULL;
    rsp_attribute_t *at;
    rsp_claim_rec_t rec;

    ck_assert_int_eq(res->outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(res->failure, RSP_FAILED_NONE);
    ck_assert_ptr_null(res->check);
    ck_assert_ptr_null(res->detail);
    ck_assert_ptr_null(res->released);
    ck_assert_ptr_nonnull(res->sid);
    ck_assert_int_eq(strlen(res->sid), RSP_HASH_B64_LEN);
    ck_assert_ptr_nonnull(res->target);
    ck_assert_str_eq(res->claim.assertion_hash, rsp_short_hash(pool, a->id));
    if (a->in_response_to) {
        ck_assert_str_eq(res->request,
                         rsp_short_hash(pool, a->in_response_to));
    }
    else {
        ck_assert_ptr_null(res->request);
    }
    /* the session, for the lifetime */
    skey = rsp_session_key(pool, PREFIX, res->sid);
    sh = rsp_session_hash(pool, res->sid);
    v = rsp_mem_store_peek(in->st, server, skey);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(rsp_session_decode(&s, pool, v, strlen(v)), APR_SUCCESS);
    ck_assert_str_eq(s->sp, in->sp);
    ck_assert_str_eq(s->issuer, a->issuer);
    ck_assert_str_eq(s->name_id, NAME_ID);
    ck_assert_str_eq(s->name_id_format, NAME_ID_FORMAT);
    ck_assert_str_eq(s->session_index, SESSION_INDEX);
    ck_assert_str_eq(s->claim_hash, rsp_short_hash(pool, a->id));
    ck_assert_int_eq(s->created, in->now);
    ck_assert_int_eq(s->expires, in->now + in->session_lifetime_ms * 1000);
    ck_assert_ptr_nonnull(s->attributes);
    ck_assert_int_eq(s->attributes->nelts, 1);
    at = &APR_ARRAY_IDX(s->attributes, 0, rsp_attribute_t);
    ck_assert_str_eq(at->name, "mail");
    ck_assert_str_eq(at->value, "alice@example.org");
    /* its two logout index entries, by SessionIndex and by NameID */
    ck_assert(indexed(in->st, server, si_key(), sh));
    ck_assert(indexed(in->st, server, nameid_key(), sh));
    if (res->failed_open) {
        return;
    }
    /* the claim: ours, completed */
    rec = decoded(rsp_mem_store_peek(in->st, server, claim_key(a)));
    ck_assert_str_eq(rec.replica, in->replica);
    ck_assert_int_eq(rec.claimed, in->now);
    ck_assert_str_eq(rec.session_hash, sh);
    ck_assert_int_eq(rec.open, 0);
    ck_assert_int_eq(res->won, 1);
    ck_assert_int_eq(res->verdicts, 1);
    ck_assert_int_eq(res->failed_open, 0);
    ck_assert_int_eq(res->store_errors, 0);
    ck_assert_ptr_null(res->error);
}

/* A sign-in that made no session and claimed nothing new. */
static void assert_no_session_for(const rsp_signin_result_t *res)
{
    if (res->sid) {
        ck_assert_ptr_null(rsp_mem_store_peek(
            st, -1, rsp_session_key(pool, PREFIX, res->sid)));
    }
}

/* ---- accepted ---- */

START_TEST(test_unsolicited_accepted)
{
    const rsp_assertion_t *a = assertion("_unsolicited-1", NULL);
    const rsp_assertion_t *b = assertion("_unsolicited-2", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res, res2;
    const char *skey;

    input(&in, st, a);
    in.relay = "https://sp.example/after";
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_str_eq(res.target, "https://sp.example/after");
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_WON);
    ck_assert_int_eq(res.claim.taken_over, 0);
    ck_assert_int_eq(res.claim.taker_known, 0);
    /* a claim and one round trip of writes: no request read, no use */
    ck_assert_str_eq(trace, "CW");
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 2);
    /* the claim, the session, two index entries; with their lifetimes */
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 4);
    skey = rsp_session_key(pool, PREFIX, res.sid);
    ck_assert_int_eq(ttl_of(st, skey), LIFETIME_MS);
    ck_assert_int_eq(ttl_of(st, si_key()), INDEX_TTL_MS);
    ck_assert_int_eq(ttl_of(st, nameid_key()), INDEX_TTL_MS);
    ck_assert_int_eq(ttl_of(st, claim_key(a)), CLAIM_TTL_MS);

    /* no RelayState: "/"; a second session of the user in both entries */
    input(&in, st, b);
    run(&res2, &in);
    assert_accepted(&res2, &in, -1);
    ck_assert_str_eq(res2.target, "/");
    ck_assert_str_ne(res.sid, res2.sid);
    ck_assert(indexed(st, -1, si_key(), rsp_session_hash(pool, res.sid)));
    ck_assert(indexed(st, -1, nameid_key(), rsp_session_hash(pool, res.sid)));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 6);
}
END_TEST

/* AD FS without a NameID rule, the user named by an attribute: the
 * session has no NameID and no logout index entries (an IdP's
 * LogoutRequest always names a NameID); the claim completes as ever. */
START_TEST(test_accepted_without_name_id)
{
    rsp_assertion_t *a = apr_pmemdup(pool, assertion("_no-nameid", NULL),
                                     sizeof(rsp_assertion_t));
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    rsp_session_t *s = NULL;
    rsp_claim_rec_t rec;
    const char *v;

    a->name_id = NULL;
    a->name_id_format = NULL;
    input(&in, st, a);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_str_eq(trace, "CW");
    /* the claim and the session only */
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 2);
    v = rsp_mem_store_peek(st, -1, rsp_session_key(pool, PREFIX, res.sid));
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(rsp_session_decode(&s, pool, v, strlen(v)), APR_SUCCESS);
    ck_assert_ptr_null(s->name_id);
    ck_assert_str_eq(APR_ARRAY_IDX(s->attributes, 0, rsp_attribute_t).value,
                     "alice@example.org");
    rec = decoded(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_int_eq(rec.open, 0);
    ck_assert_str_eq(rec.session_hash, rsp_session_hash(pool, res.sid));
}
END_TEST

START_TEST(test_solicited_accepted)
{
    const rsp_assertion_t *a = assertion("_solicited-1", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    rsp_claim_rec_t use;
    apr_time_t t0, t1;

    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    t0 = apr_time_from_sec(apr_time_sec(apr_time_now()));
    run(&res, &in);
    t1 = apr_time_now();
    assert_accepted(&res, &in, -1);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.expire_binding, 1);
    /* the request read once, on its own, before the claim; then the claim,
     * the request's use, the writes: 4 round trips */
    ck_assert_str_eq(trace, "GCCW");
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_GET), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_CLAIM_READ), 2);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_WRITE_MANY), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 4);
    /* the request used up, by this replica, for the request's lifetime */
    use = decoded(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
    ck_assert_str_eq(use.replica, "replica-a");
    ck_assert_int_ge(use.claimed, t0);
    ck_assert_int_le(use.claimed, t1);
    ck_assert_ptr_null(use.session_hash);
    ck_assert_int_eq(ttl_of(st, use_key(REQ_ID)), REQUEST_LIFETIME_S * 1000);
    /* the request itself stays (until it expires) */
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, pending_key(REQ_ID)));
    /* request, use, claim, session, two index entries */
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 6);
}
END_TEST

START_TEST(test_solicited_accepted_unbound_or_twin)
{
    const rsp_assertion_t *a = assertion("_solicited-unbound", "_req-unbound");
    const rsp_assertion_t *b = assertion("_solicited-twin", "_req-twin");
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* a request that is not bound: no cookie needed, none to expire */
    put_request(st, "_req-unbound", request_record(IDP, SP, NULL));
    input(&in, st, a);
    in.cookie_header = NULL;
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key("_req-unbound")));

    /* bound, presented in the fallback twin cookie only */
    put_request(st, "_req-twin", request_record(IDP, SP, BINDING));
    input(&in, st, b);
    in.cookie_header = cookies(apr_pstrcat(pool, binding_cookie(), "_l", NULL),
                               BINDING);
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_int_eq(res.expire_binding, 1);
    ck_assert_str_eq(res.target, RETURN_TO);
}
END_TEST

/* ---- refused by the request, before any claim ---- */

enum {
    BAD_ABSENT, BAD_MALFORMED, BAD_OTHER_IDP, BAD_OTHER_SP, BAD_RELAY_OTHER,
    BAD_RELAY_MISSING, BAD_NO_COOKIE, BAD_OTHER_COOKIES, BAD_OTHER_BINDING,
    BAD_COUNT
};

static const struct {
    const char *check;
    const char *detail;  /* a part of it */
} bad_cases[BAD_COUNT] = {
    {"request-unknown", "which this fleet did not send or which expired"},
    {"request-unknown", "malformed record of request"},
    {"request-mismatch", "was sent to " OTHER_IDP " for SP " SP},
    {"request-mismatch", "the response comes from " IDP " for SP " OTHER_SP},
    {"relay-state", "RelayState is not the one sent with request"},
    {"relay-state", "RelayState missing; expected"},
    {"request-browser", "no binding cookie"},
    {"request-browser", "no binding cookie"},
    {"request-browser", "a binding cookie of another browser"},
};

START_TEST(test_refused_before_claim)
{
    int i = _i;
    const char *rid = apr_psprintf(pool, "_req-bad-%d", i);
    const rsp_assertion_t *a = assertion(apr_psprintf(pool, "_bad-%d", i), rid);
    const char *good = request_record(IDP, SP, BINDING);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    int keys;

    input(&in, st, a);
    switch (i) {
    case BAD_ABSENT:
        break; /* not (yet) in the store */
    case BAD_MALFORMED:
        put_request(st, rid, "v=1&i=only-an-idp");
        break;
    case BAD_OTHER_IDP:
        put_request(st, rid, request_record(OTHER_IDP, SP, BINDING));
        break;
    default:
        put_request(st, rid, good);
        break;
    }
    switch (i) {
    case BAD_OTHER_SP:
        in.sp = OTHER_SP;
        break;
    case BAD_RELAY_OTHER:
        in.relay = "another-relay-token";
        break;
    case BAD_RELAY_MISSING:
        in.relay = NULL;
        break;
    case BAD_NO_COOKIE:
        in.cookie_header = NULL;
        break;
    case BAD_OTHER_COOKIES:
        in.cookie_header = "theme=dark; lang=en";
        break;
    case BAD_OTHER_BINDING:
        in.cookie_header = cookies(binding_cookie(), "binding-of-browser-2");
        break;
    default:
        break;
    }
    keys = rsp_mem_store_size(st, -1);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REFUSED);
    ck_assert_int_eq(res.failure, RSP_FAILED_NONE);
    ck_assert_str_eq(res.check, bad_cases[i].check);
    ck_assert_ptr_nonnull(res.detail);
    ck_assert_msg(strstr(res.detail, bad_cases[i].detail) != NULL,
                  "detail: %s", res.detail);
    ck_assert_ptr_nonnull(strstr(res.detail, rsp_short_hash(pool, rid)));
    ck_assert_str_eq(res.request, rsp_short_hash(pool, rid));
    ck_assert_ptr_null(res.sid);
    ck_assert_ptr_null(res.target);
    ck_assert_ptr_null(res.released);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.store_errors, 0);
    ck_assert_int_eq(res.failed_open, 0);
    /* the claim looked at, not made: nobody holds it */
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_ABSENT);
    ck_assert_str_eq(res.claim.key, claim_key(a));
    /* the request and the claim read: nothing written */
    ck_assert_str_eq(trace, "GG");
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 2);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_GET), 2);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(rid)));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);

    /* the right browser's post of the same assertion (the request as it
     * was sent, now in the store): accepted */
    put_request(st, rid, good);
    input(&in, st, a);
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.expire_binding, 1);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key(rid)));
    keys = rsp_mem_store_size(st, -1);

    /* once: anyone else's post of it now is a replay (told as one though
     * its request refuses it: the claim is read) */
    stranger(&in);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_ptr_null(res.check);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_str_eq(res.claim.taker.replica, "replica-a");
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.won, 0);
    ck_assert_str_eq(trace, "GG");
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
}
END_TEST

/* ---- refused by the request, but claimed already ---- */

START_TEST(test_refused_but_claimed)
{
    const rsp_assertion_t *a = assertion("_claimed-1", REQ_ID);
    const char *ckey = claim_key(a), *done;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t first, res;
    int keys;

    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    run(&first, &in);
    assert_accepted(&first, &in, -1);
    done = rsp_mem_store_peek(st, -1, ckey);
    keys = rsp_mem_store_size(st, -1);

    /* the winner posts it again (back button): its binding cookie expired
     * by the first answer, its session cookie set by it. The request
     * refuses it (request-browser) but the claim is its own: the re-post,
     * back to the request's return URL, no new session */
    in.cookie_header = "theme=dark";
    in.session_cookie = first.sid;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_ptr_null(res.check);
    ck_assert_ptr_null(res.sid);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_str_eq(trace, "GG");
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), done);

    /* refused by another check (its RelayState changed): still its
     * re-post, to "/" (the request's return URL is the RelayState's) */
    in.relay = "another-relay-token";
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, "/");

    /* anyone else: a replay */
    input(&in, st, a);
    stranger(&in);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_ptr_null(res.target);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_str_eq(res.claim.taker.replica, "replica-a");
    ck_assert_str_eq(res.claim.taker.session_hash,
                     rsp_session_hash(pool, first.sid));
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), done);
}
END_TEST

START_TEST(test_refused_open_claim)
{
    const rsp_assertion_t *a = assertion("_claimed-open", REQ_ID);
    const char *ckey = claim_key(a), *young, *old;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    stranger(&in);

    /* an open claim, too young to take over: a replay */
    young = record("replica-b", NOW, "sid-b", 1);
    hold(st, a, young);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_str_eq(res.claim.taker.replica, "replica-b");
    ck_assert_int_eq(res.claim.taker.open, 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), young);

    /* one old enough to be taken over: a retry may, so this is not a
     * replay; refused by its request's check, nothing taken over */
    old = record("replica-b", NOW - OLD, "sid-b", 1);
    hold(st, a, old);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REFUSED);
    ck_assert_str_eq(res.check, "request-browser");
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_int_eq(res.claim.taken_over, 0);
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.won, 0);
    ck_assert_str_eq(trace, "GG");
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), old);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));

    /* unreadable: a replay (never taken over) */
    hold(st, a, "garbage");
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(res.claim.taker_known, 0);

    /* the claim cannot be read: refused by the request's check */
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REFUSED);
    ck_assert_str_eq(res.check, "request-browser");
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_int_eq(res.store_errors, 0);
}
END_TEST

/* ---- request-used ---- */

START_TEST(test_request_used)
{
    const rsp_assertion_t *a = assertion("_used-1", REQ_ID);
    const char *prior = record("replica-b", NOW, NULL, 0);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    rsp_claim_rec_t rec;

    /* the request was answered already (by another response) */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    rsp_mem_store_poke(st, -1, use_key(REQ_ID), prior,
                       REQUEST_LIFETIME_S * 1000);
    input(&in, st, a);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REFUSED);
    ck_assert_int_eq(res.failure, RSP_FAILED_NONE);
    ck_assert_str_eq(res.check, "request-used");
    ck_assert_str_eq(res.detail,
                     apr_psprintf(pool, "request %s was already answered",
                                  rsp_short_hash(pool, REQ_ID)));
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.store_errors, 0);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_str_eq(trace, "GCC");
    /* the assertion stays claimed (open: no session was made), the use
     * key is the earlier one's */
    rec = decoded(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), res.claim.value);
    ck_assert_str_eq(rec.replica, "replica-a");
    ck_assert_int_eq(rec.open, 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, use_key(REQ_ID)), prior);
    assert_no_session_for(&res);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, si_key()));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, nameid_key()));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 3);

    /* posted again: held by the open claim of the post just refused */
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(res.claim.taker.open, 1);
}
END_TEST

/* ---- re-post, replay ---- */

START_TEST(test_repost_through_claim)
{
    const rsp_assertion_t *a = assertion("_repost-1", REQ_ID);
    const rsp_assertion_t *u = assertion("_repost-2", NULL);
    const char *use;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t first, res;
    int keys;

    /* solicited, its binding cookie still there: through the claim */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    run(&first, &in);
    assert_accepted(&first, &in, -1);
    use = rsp_mem_store_peek(st, -1, use_key(REQ_ID));
    keys = rsp_mem_store_size(st, -1);
    in.session_cookie = first.sid;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_int_eq(res.store_errors, 0);
    /* no request used, no session: the request read and the claim only */
    ck_assert_str_eq(trace, "GC");
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, use_key(REQ_ID)), use);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)),
                     record("replica-a", NOW, first.sid, 0));

    /* unsolicited: to its RelayState, or "/" */
    input(&in, st, u);
    in.relay = "https://sp.example/u";
    run(&first, &in);
    assert_accepted(&first, &in, -1);
    keys = rsp_mem_store_size(st, -1);
    in.session_cookie = first.sid;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, "https://sp.example/u");
    ck_assert_str_eq(trace, "C");
    in.relay = NULL;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, "/");
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);

    /* another session's cookie is not the winner's */
    in.session_cookie = "someone-elses-session";
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
}
END_TEST

START_TEST(test_replay)
{
    const rsp_assertion_t *a = assertion("_replay-1", NULL);
    const char *done;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t first, res;
    int keys;

    input(&in, st, a);
    run(&first, &in);
    assert_accepted(&first, &in, -1);
    done = rsp_mem_store_peek(st, -1, claim_key(a));
    keys = rsp_mem_store_size(st, -1);

    input(&in, st, a);
    in.replica = "replica-b";
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(res.failure, RSP_FAILED_NONE);
    ck_assert_ptr_null(res.check);
    ck_assert_ptr_null(res.target);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(res.claim.taker_known, 1);
    ck_assert_str_eq(res.claim.taker.replica, "replica-a");
    ck_assert_int_eq(res.claim.taker.claimed, NOW);
    ck_assert_int_eq(res.claim.taker.open, 0);
    ck_assert_str_eq(res.claim.taker.session_hash,
                     rsp_session_hash(pool, first.sid));
    ck_assert_str_eq(res.claim.holder, done);
    ck_assert_int_eq(res.claim.taken_over, 0);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.store_errors, 0);
    ck_assert_int_eq(res.failed_open, 0);
    /* one round trip; a completed claim is never taken over, even late */
    ck_assert_str_eq(trace, "C");
    in.now = NOW + apr_time_from_sec(3600);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_str_eq(trace, "C");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), done);
    ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
    assert_no_session_for(&res);
}
END_TEST

/* ---- takeover ---- */

#define RETRIES 5

START_TEST(test_takeover)
{
    const rsp_assertion_t *a = assertion("_takeover-1", NULL);
    const char *ckey = claim_key(a);
    const char *holder = record("replica-0", NOW - OLD, "sid-0", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res, won;
    int i, keys = 0;

    /* a claim whose sign-in never completed (open, older than the
     * takeover age): RETRIES retries one after the other */
    memset(&won, 0, sizeof(won));
    hold(st, a, holder);
    for (i = 0; i < RETRIES; i++) {
        input(&in, st, a);
        in.replica = apr_psprintf(pool, "replica-%d", i + 1);
        run(&res, &in);
        if (i == 0) {
            won = res;
            assert_accepted(&res, &in, -1);
            ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_WON);
            ck_assert_int_eq(res.claim.taken_over, 1);
            ck_assert_int_eq(res.won, 1);
            ck_assert_int_eq(res.verdicts, 1);
            /* the one it took over, for the log line */
            ck_assert_int_eq(res.claim.taker_known, 1);
            ck_assert_str_eq(res.claim.taker.replica, "replica-0");
            ck_assert_int_eq(res.claim.taker.claimed, NOW - OLD);
            /* the claim, the takeover, the writes, the completion (by
             * value: the takeover's version is not known) */
            ck_assert_str_eq(trace, "CRWR");
            ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 2);
            ck_assert_int_eq(rsp_mem_store_size(st, -1), 4);
            /* the claim keeps its expiry */
            ck_assert_int_eq(ttl_of(st, ckey), CLAIM_TTL_MS);
            keys = rsp_mem_store_size(st, -1);
        }
        else {
            /* the rest: replays of the completed claim */
            ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
            ck_assert_int_eq(res.claim.taker.open, 0);
            ck_assert_str_eq(res.claim.taker.replica, "replica-1");
            ck_assert_str_eq(res.claim.taker.session_hash,
                             rsp_session_hash(pool, won.sid));
            ck_assert_int_eq(res.won, 0);
            ck_assert_int_eq(res.verdicts, 1);
            ck_assert_str_eq(trace, "C");
            ck_assert_int_eq(rsp_mem_store_size(st, -1), keys);
        }
    }
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey),
                     record("replica-1", NOW, won.sid, 0));
}
END_TEST

START_TEST(test_takeover_too_young)
{
    const rsp_assertion_t *a = assertion("_takeover-young", NULL);
    const char *holder = record("replica-0", NOW - apr_time_from_sec(1),
                                "sid-0", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    hold(st, a, holder);
    input(&in, st, a);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(res.claim.taker.open, 1);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_str_eq(trace, "C");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), holder);
    /* the age is the store's: 3 timeouts and a second */
    ck_assert_int_eq(rsp_signin_takeover_age(st), apr_time_from_sec(4));
}
END_TEST

START_TEST(test_takeover_solicited)
{
    const rsp_assertion_t *a = assertion("_takeover-sol", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the first post's claim timed out before the request was used: a
     * retry takes it over and uses the request */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    hold(st, a, record("replica-0", NOW - OLD, "sid-0", 1));
    input(&in, st, a);
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_int_eq(res.claim.taken_over, 1);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.expire_binding, 1);
    ck_assert_str_eq(trace, "GCRCWR");
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
}
END_TEST

START_TEST(test_takeover_store_failure)
{
    const rsp_assertion_t *a = assertion("_takeover-fail", NULL);
    const char *holder = record("replica-0", NOW - OLD, "sid-0", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the takeover's compare-and-set fails: no verdict, not a replay */
    hold(st, a, holder);
    input(&in, st, a);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_CLAIM);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(trace, "CR");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), holder);

    /* written, too few replicas acknowledged it: it stays */
    rsp_mem_store_fault(st, 2, RSP_MEM_UNACKED);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_UNACKED);
    ck_assert_str_eq(res.error, "injected: unacknowledged");
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), res.claim.value);
    assert_no_session_for(&res);
}
END_TEST

/* ---- abandoned: taken over between the claim and its completion ---- */

START_TEST(test_abandoned)
{
    const rsp_assertion_t *a = assertion("_abandoned-1", NULL);
    const char *ckey = claim_key(a);
    const char *retry = record("replica-b", NOW, "sid-retry", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    input(&in, st, a);
    steal_key = ckey;
    steal_value = retry;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_ABANDONED);
    ck_assert_str_eq(res.error, "the store gave no answer");
    ck_assert_ptr_null(res.released);
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_int_eq(res.claim.taken_over, 0);
    /* the writes (the completion not done), then its session deleted */
    ck_assert_str_eq(trace, "CWD");
    ck_assert_ptr_nonnull(res.sid);
    ck_assert_ptr_null(rsp_mem_store_peek(
        st, -1, rsp_session_key(pool, PREFIX, res.sid)));
    /* the retry's claim stays */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), retry);
    /* (the index entries stay, naming a session that is gone) */
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 3);

    /* our own record written again meanwhile (another version): the
     * completion is a compare-and-set against our version, so this is
     * abandoned too */
    a = assertion("_abandoned-2", NULL);
    input(&in, st, a);
    steal_key = claim_key(a);
    steal_value = NULL;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_ABANDONED);
    ck_assert_ptr_null(rsp_mem_store_peek(
        st, -1, rsp_session_key(pool, PREFIX, res.sid)));
}
END_TEST

START_TEST(test_abandoned_after_takeover)
{
    const rsp_assertion_t *a = assertion("_abandoned-3", NULL);
    const char *ckey = claim_key(a);
    const char *retry = record("replica-c", NOW, "sid-retry", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    hold(st, a, record("replica-0", NOW - OLD, "sid-0", 1));
    input(&in, st, a);
    steal_key = ckey;
    steal_value = retry;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_ABANDONED);
    ck_assert_int_eq(res.claim.taken_over, 1);
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(trace, "CRWRD");
    ck_assert_ptr_null(rsp_mem_store_peek(
        st, -1, rsp_session_key(pool, PREFIX, res.sid)));
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, ckey), retry);
}
END_TEST

/* ---- the store failing, step by step ---- */

START_TEST(test_request_read_fails)
{
    const rsp_assertion_t *a = assertion("_fail-read", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_REQUEST_READ);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_ptr_null(res.check);
    ck_assert_ptr_null(res.sid);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.won, 0);
    ck_assert_str_eq(res.request, rsp_short_hash(pool, REQ_ID));
    /* nothing claimed, nothing else tried */
    ck_assert_str_eq(trace, "G");
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 1);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 1);

    /* with ReplaySPOnStoreFailure open too: no sign-in without its request */
    in.fail_open = 1;
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_REQUEST_READ);
    ck_assert_int_eq(res.failed_open, 0);

    /* the store back: the sign-in goes through */
    in.fail_open = 0;
    run(&res, &in);
    assert_accepted(&res, &in, -1);
}
END_TEST

START_TEST(test_claim_fails)
{
    /* for an unsolicited response the claim is call 1; for a solicited
     * one call 2 (after the request's read) */
    int solicited;

    for (solicited = 0; solicited <= 1; solicited++) {
        const char *rid = solicited ? REQ_ID : NULL;
        const rsp_assertion_t *a = assertion(
            apr_psprintf(pool, "_fail-claim-%d", solicited), rid);
        const rsp_assertion_t *b = assertion(
            apr_psprintf(pool, "_fail-claim-w-%d", solicited), rid);
        const rsp_assertion_t *c = assertion(
            apr_psprintf(pool, "_fail-claim-u-%d", solicited), rid);
        int nth = solicited ? 2 : 1;
        rsp_signin_acs_in_t in;
        rsp_signin_result_t res;

        if (solicited) {
            put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
        }
        /* no verdict: nothing written */
        input(&in, st, a);
        rsp_mem_store_fault(st, nth, RSP_MEM_FAIL);
        run(&res, &in);
        ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
        ck_assert_int_eq(res.failure, RSP_FAILED_CLAIM);
        ck_assert_str_eq(res.error, "injected");
        ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_NO_VERDICT);
        ck_assert_int_eq(res.verdicts, 0);
        ck_assert_int_eq(res.won, 0);
        ck_assert_int_eq(res.store_errors, 1);
        ck_assert_int_eq(res.failed_open, 0);
        ck_assert_ptr_null(res.released);
        ck_assert_str_eq(trace, solicited ? "GC" : "C");
        ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
        if (solicited) {
            ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
        }
        assert_no_session_for(&res);

        /* written, the answer lost: still no verdict; the record stays
         * (open: a retry takes it over once it is old enough) */
        input(&in, st, b);
        rsp_mem_store_fault(st, nth, RSP_MEM_WRITE_THEN_FAIL);
        run(&res, &in);
        ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
        ck_assert_int_eq(res.failure, RSP_FAILED_CLAIM);
        ck_assert_int_eq(res.store_errors, 1);
        ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(b)),
                         res.claim.value);
        ck_assert_int_eq(decoded(res.claim.value).open, 1);
        assert_no_session_for(&res);

        /* written, unacknowledged: it stays */
        input(&in, st, c);
        rsp_mem_store_fault(st, nth, RSP_MEM_UNACKED);
        run(&res, &in);
        ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
        ck_assert_int_eq(res.failure, RSP_FAILED_UNACKED);
        ck_assert_str_eq(res.error, "injected: unacknowledged");
        ck_assert_int_eq(res.claim.unacked, 1);
        ck_assert_int_eq(res.verdicts, 0);
        ck_assert_int_eq(res.won, 0);
        ck_assert_int_eq(res.store_errors, 1);
        ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(c)),
                         res.claim.value);
        ck_assert_int_eq(ttl_of(st, claim_key(c)), CLAIM_TTL_MS);
        assert_no_session_for(&res);
        if (solicited) {
            ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
        }
        /* and the next post of it is refused as held (too young) */
        run(&res, &in);
        ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    }
}
END_TEST

START_TEST(test_request_use_fails)
{
    const rsp_assertion_t *a = assertion("_fail-use", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    const char *held;

    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    in.now = NOW - OLD; /* (so that the retry below may take it over) */
    rsp_mem_store_fault(st, 3, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_REQUEST_USE);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_int_eq(res.expire_binding, 0);
    ck_assert_ptr_null(res.released);
    ck_assert_str_eq(trace, "GCC");
    /* the claim stays (ours, open), no use, no session */
    held = rsp_mem_store_peek(st, -1, claim_key(a));
    ck_assert_str_eq(held, res.claim.value);
    ck_assert_int_eq(decoded(held).open, 1);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
    assert_no_session_for(&res);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, si_key()));

    /* a retry once that claim is old enough: taken over, signed in */
    input(&in, st, a);
    run(&res, &in);
    assert_accepted(&res, &in, -1);
    ck_assert_int_eq(res.claim.taken_over, 1);
    ck_assert_str_eq(res.target, RETURN_TO);
}
END_TEST

START_TEST(test_request_use_unacked)
{
    const rsp_assertion_t *a = assertion("_fail-use-2", REQ_ID);
    const rsp_assertion_t *b = assertion("_fail-use-3", "_req-3");
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the use written, not acknowledged: used up all the same */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    rsp_mem_store_fault(st, 3, RSP_MEM_UNACKED);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_REQUEST_USE);
    ck_assert_str_eq(res.error, "injected: unacknowledged");
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), res.claim.value);
    assert_no_session_for(&res);

    /* written, the answer lost */
    put_request(st, "_req-3", request_record(IDP, SP, BINDING));
    input(&in, st, b);
    rsp_mem_store_fault(st, 3, RSP_MEM_WRITE_THEN_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failure, RSP_FAILED_REQUEST_USE);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key("_req-3")));
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(b)), res.claim.value);
}
END_TEST

START_TEST(test_session_fails)
{
    const rsp_assertion_t *u = assertion("_fail-session-u", NULL);
    const rsp_assertion_t *a = assertion("_fail-session-s", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* unsolicited: the writes fail before any is done; the claim released
     * (one compare-and-delete), so that the next post signs in */
    input(&in, st, u);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_str_eq(res.released, "released");
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_int_eq(res.failed_open, 0);
    ck_assert_str_eq(trace, "CWD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(u)));
    assert_no_session_for(&res);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, si_key()));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, nameid_key()));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 0);
    run(&res, &in);
    assert_accepted(&res, &in, -1);

    /* solicited: released too, but the request stays used */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    rsp_mem_store_fault(st, 4, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_str_eq(trace, "GCCWD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
    assert_no_session_for(&res);
    /* so the next post of it is refused: request-used (a new sign-in is
     * needed; the claim was released for nothing) */
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REFUSED);
    ck_assert_str_eq(res.check, "request-used");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), res.claim.value);
}
END_TEST

START_TEST(test_session_written_then_fails)
{
    const rsp_assertion_t *a = assertion("_fail-session-w", NULL);
    const rsp_assertion_t *b = assertion("_fail-session-x", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res, next;
    const char *skey;

    /* every write done (the completion too), the answer lost: released by
     * the completed record (the second compare) */
    input(&in, st, a);
    rsp_mem_store_fault(st, 2, RSP_MEM_WRITE_THEN_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_str_eq(res.released, "released");
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(trace, "CWDD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    /* its session was written: UNAVAILABLE, so no cookie ever names it;
     * it is never used, and expires */
    skey = rsp_session_key(pool, PREFIX, res.sid);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, skey));
    /* the next post signs in, with another session: the only one a
     * browser is given */
    run(&next, &in);
    assert_accepted(&next, &in, -1);
    ck_assert_str_ne(next.sid, res.sid);
    /* and after that, only replays */
    stranger(&in);
    run(&next, &in);
    ck_assert_int_eq(next.outcome, RSP_SIGNIN_REPLAY);

    /* unacknowledged: the same */
    input(&in, st, b);
    rsp_mem_store_fault(st, 2, RSP_MEM_UNACKED);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.error, "injected: unacknowledged");
    ck_assert_str_eq(res.released, "released");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(b)));
}
END_TEST

START_TEST(test_session_fails_kept)
{
    const rsp_assertion_t *a = assertion("_fail-kept-1", NULL);
    const rsp_assertion_t *b = assertion("_fail-kept-2", NULL);
    const char *other = record("replica-b", NOW, "sid-b", 1);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res, next;

    /* the writes fail, and so does the release: kept, open; a retry takes
     * it over once it is old enough */
    input(&in, st, a);
    in.now = NOW - OLD;
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    rsp_mem_store_fault(st, 3, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "kept (release failed: injected)");
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(trace, "CWD");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(a)), res.claim.value);
    assert_no_session_for(&res);
    input(&in, st, a);
    run(&next, &in);
    assert_accepted(&next, &in, -1);
    ck_assert_int_eq(next.claim.taken_over, 1);

    /* the claim no longer ours when the writes failed: left be */
    input(&in, st, b);
    steal_key = claim_key(b);
    steal_value = other;
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "kept (no longer ours)");
    ck_assert_str_eq(trace, "CWDD");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, claim_key(b)), other);
}
END_TEST

START_TEST(test_session_fails_after_takeover)
{
    const rsp_assertion_t *a = assertion("_fail-to-1", NULL);
    const rsp_assertion_t *b = assertion("_fail-to-2", NULL);
    const rsp_assertion_t *c = assertion("_fail-to-3", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the writes fail: our takeover's record released */
    hold(st, a, record("replica-0", NOW - OLD, "sid-0", 1));
    input(&in, st, a);
    rsp_mem_store_fault(st, 3, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_int_eq(res.claim.taken_over, 1);
    ck_assert_int_eq(res.won, 1);
    ck_assert_str_eq(trace, "CRWD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    assert_no_session_for(&res);

    /* the writes done, the completion fails: released */
    hold(st, b, record("replica-0", NOW - OLD, "sid-0", 1));
    input(&in, st, b);
    rsp_mem_store_fault(st, 4, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_str_eq(trace, "CRWRD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(b)));

    /* the completion done, its answer lost: released by the completed
     * record */
    hold(st, c, record("replica-0", NOW - OLD, "sid-0", 1));
    input(&in, st, c);
    rsp_mem_store_fault(st, 4, RSP_MEM_WRITE_THEN_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_str_eq(trace, "CRWRDD");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(c)));
}
END_TEST

/* ---- ReplaySPOnStoreFailure open ---- */

START_TEST(test_fail_open)
{
    const rsp_assertion_t *u = assertion("_open-1", NULL);
    const rsp_assertion_t *a = assertion("_open-2", REQ_ID);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the claim fails: accepted without one */
    input(&in, st, u);
    in.fail_open = 1;
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failed_open, 1);
    assert_accepted(&res, &in, -1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(res.error, "injected");
    ck_assert_int_eq(res.won, 0);
    ck_assert_int_eq(res.verdicts, 0);
    ck_assert_int_eq(res.claim.verdict, RSP_CLAIM_NO_VERDICT);
    /* the session and its entries, then the claim completed should it
     * be there (it is not: nothing replaced) */
    ck_assert_str_eq(trace, "CWR");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(u)));
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 3);

    /* solicited: the request still checked first and used up */
    put_request(st, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, st, a);
    in.fail_open = 1;
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failed_open, 1);
    assert_accepted(&res, &in, -1);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_str_eq(res.target, RETURN_TO);
    ck_assert_int_eq(res.expire_binding, 1);
    ck_assert_str_eq(trace, "GCCWR");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, claim_key(a)));
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, use_key(REQ_ID)));
}
END_TEST

START_TEST(test_fail_open_session_fails)
{
    const rsp_assertion_t *a = assertion("_open-3", NULL);
    const rsp_assertion_t *b = assertion("_open-4", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* the claim and then the writes fail: unavailable, no claim to
     * release */
    input(&in, st, a);
    in.fail_open = 1;
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_ptr_null(res.released);
    ck_assert_int_eq(res.failed_open, 1);
    ck_assert_int_eq(res.store_errors, 2);
    ck_assert_int_eq(res.won, 0);
    ck_assert_str_eq(trace, "CW");
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 0);

    /* the claim won, the writes fail: released as without fail_open */
    input(&in, st, b);
    in.fail_open = 1;
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_int_eq(res.failed_open, 0);
    ck_assert_int_eq(res.store_errors, 1);
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 0);
}
END_TEST

/* A sign-in accepted failed open after its claim WAS written (a timeout
 * whose command ran, or too few replicas acknowledged it) leaves that
 * claim open: it made a session but never completes the claim. Once the
 * record is older than the takeover age, a replay of the assertion takes
 * it over as if that sign-in had never completed, and gets a second
 * session for the same assertion. So the fail-open sign-in completes the
 * claim it may have written (by its value, with its session's writes):
 * the replay is refused. */
START_TEST(test_fail_open_written_claim_replayed)
{
    const rsp_assertion_t *a = assertion("_open-written", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t first, replay;

    input(&in, st, a);
    in.fail_open = 1;
    in.now = NOW - OLD;
    rsp_mem_store_fault(st, 1, RSP_MEM_UNACKED);
    run(&first, &in);
    ck_assert_int_eq(first.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(first.failed_open, 1);
    /* the store back: the replay of the assertion */
    input(&in, st, a);
    stranger(&in);
    run(&replay, &in);
    ck_assert_int_eq(replay.outcome, RSP_SIGNIN_REPLAY);
}
END_TEST

/* ---- several servers ---- */

START_TEST(test_servers)
{
    rsp_store_t *many = traced_store(3);
    const rsp_assertion_t *a = NULL;
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;
    const char *skey;
    int home = -1, req_home, i, n;

    /* an assertion whose claim lives on neither index entry's own server
     * (so that where they land is not a given) */
    for (i = 0; i < 100; i++) {
        a = assertion(apr_psprintf(pool, "_servers-%d", i), REQ_ID);
        home = rsp_store_home(many, claim_key(a));
        if (home != rsp_store_home(many, si_key())
            && home != rsp_store_home(many, nameid_key())) {
            break;
        }
    }
    ck_assert_int_lt(i, 100);
    req_home = rsp_store_home(many, pending_key(REQ_ID));
    put_request(many, REQ_ID, request_record(IDP, SP, BINDING));
    input(&in, many, a);
    run(&res, &in);
    assert_accepted(&res, &in, home);
    skey = rsp_session_key(pool, PREFIX, res.sid);
    ck_assert_int_eq(rsp_store_home(many, skey), home);
    for (i = 0; i < 3; i++) {
        /* the claim, the session, the index entries: on the claim's */
        ck_assert_int_eq(rsp_mem_store_peek(many, i, claim_key(a)) != NULL,
                         i == home);
        ck_assert_int_eq(rsp_mem_store_peek(many, i, skey) != NULL, i == home);
        ck_assert_int_eq(rsp_mem_store_peek(many, i, si_key()) != NULL,
                         i == home);
        ck_assert_int_eq(rsp_mem_store_peek(many, i, nameid_key()) != NULL,
                         i == home);
        /* the request and its use: on the request's */
        ck_assert_int_eq(rsp_mem_store_peek(many, i, pending_key(REQ_ID))
                         != NULL, i == req_home);
        ck_assert_int_eq(rsp_mem_store_peek(many, i, use_key(REQ_ID)) != NULL,
                         i == req_home);
        n = (i == home ? 4 : 0) + (i == req_home ? 2 : 0);
        ck_assert_int_eq(rsp_mem_store_size(many, i), n);
    }

    /* the winner's re-post meets the claim there; a replay too */
    in.session_cookie = res.sid;
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPOST);
    ck_assert_str_eq(res.target, RETURN_TO);
    stranger(&in);
    run(&res, &in);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_str_eq(res.claim.taker.replica, "replica-a");
    ck_assert_int_eq(rsp_mem_store_size(many, -1), 6);
}
END_TEST

START_TEST(test_servers_session_fails)
{
    rsp_store_t *many = traced_store(3);
    const rsp_assertion_t *a = assertion("_servers-fail", NULL);
    rsp_signin_acs_in_t in;
    rsp_signin_result_t res;

    /* released where the claim lives */
    input(&in, many, a);
    rsp_mem_store_fault(many, 2, RSP_MEM_FAIL);
    run(&res, &in);
    ck_assert_int_eq(res.failure, RSP_FAILED_SESSION);
    ck_assert_str_eq(res.released, "released");
    ck_assert_int_eq(rsp_mem_store_size(many, -1), 0);
    run(&res, &in);
    assert_accepted(&res, &in, rsp_store_home(many, claim_key(a)));
}
END_TEST

static Suite *signin_acs_suite(void)
{
    Suite *s = suite_create("rsp_signin_acs");
    TCase *tc = tcase_create("signin_acs");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_unsolicited_accepted);
    tcase_add_test(tc, test_accepted_without_name_id);
    tcase_add_test(tc, test_solicited_accepted);
    tcase_add_test(tc, test_solicited_accepted_unbound_or_twin);
    tcase_add_loop_test(tc, test_refused_before_claim, 0, BAD_COUNT);
    tcase_add_test(tc, test_refused_but_claimed);
    tcase_add_test(tc, test_refused_open_claim);
    tcase_add_test(tc, test_request_used);
    tcase_add_test(tc, test_repost_through_claim);
    tcase_add_test(tc, test_replay);
    tcase_add_test(tc, test_takeover);
    tcase_add_test(tc, test_takeover_too_young);
    tcase_add_test(tc, test_takeover_solicited);
    tcase_add_test(tc, test_takeover_store_failure);
    tcase_add_test(tc, test_abandoned);
    tcase_add_test(tc, test_abandoned_after_takeover);
    tcase_add_test(tc, test_request_read_fails);
    tcase_add_test(tc, test_claim_fails);
    tcase_add_test(tc, test_request_use_fails);
    tcase_add_test(tc, test_request_use_unacked);
    tcase_add_test(tc, test_session_fails);
    tcase_add_test(tc, test_session_written_then_fails);
    tcase_add_test(tc, test_session_fails_kept);
    tcase_add_test(tc, test_session_fails_after_takeover);
    tcase_add_test(tc, test_fail_open);
    tcase_add_test(tc, test_fail_open_session_fails);
    tcase_add_test(tc, test_fail_open_written_claim_replayed);
    tcase_add_test(tc, test_servers);
    tcase_add_test(tc, test_servers_session_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(signin_acs_suite());
}
