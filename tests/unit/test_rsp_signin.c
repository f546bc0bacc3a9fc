/* Unit tests for rsp_signin.c, the sign-in verdicts the ACS and the guard
 * share (claim, peek, re-post, take-over, session ID), against the
 * in-memory store of rsp_mem_store.c: every verdict, including the store's
 * failures and its writes that were not acknowledged, without a server. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_session.h"
#include "rsp_signin.h"
#include "rsp_store.h"
#include "rsp_util.h"
#include "rsp_mem_store.h"

#define PREFIX "rsp:"
#define ISSUER "https://idp.example/saml"
#define TTL_MS APR_INT64_C(300000)
/* The ACS's take-over age for a store timeout of 1 s (3 timeouts + 1 s). */
#define AGE apr_time_from_sec(4)

/* "Now" as the sign-ins see it: whole seconds, as claims record it. */
static const apr_time_t NOW = APR_INT64_C(1764581000) * APR_USEC_PER_SEC;

static rsp_store_t *st;

static void setup(void)
{
    rsp_unit_setup();
    st = rsp_mem_store_create(pool, 1);
}

static void teardown(void)
{
    st = NULL;
    rsp_unit_teardown();
}

static const rsp_assertion_t *assertion(const char *id)
{
    rsp_assertion_t *a = apr_pcalloc(pool, sizeof(*a));

    a->issuer = ISSUER;
    a->id = id;
    a->ttl_ms = TTL_MS;
    return a;
}

static const char *key_of(const rsp_assertion_t *a)
{
    return rsp_claim_key(pool, PREFIX, a->issuer, a->id);
}

/* A claim record as an ACS (sid given) or a guard (sid NULL) writes it. */
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

/* Another sign-in holds a's claim with rec (a put: not counted after). */
static void hold(rsp_store_t *s, const rsp_assertion_t *a, const char *rec)
{
    const char *err = NULL;

    ck_assert_int_eq(rsp_store_put(s, pool, key_of(a), rec, strlen(rec), TTL_MS,
                                   &err), APR_SUCCESS);
    rsp_mem_store_reset_calls(s);
}

static const char *version_str(const char *key)
{
    return apr_psprintf(pool, "%" APR_UINT64_T_FMT,
                        rsp_mem_store_version(st, -1, key));
}

static apr_int64_t ttl_of(const char *key)
{
    apr_int64_t ttl = 0;
    const char *err = NULL;

    ck_assert_int_eq(rsp_store_ttl(st, pool, key, &ttl, &err), APR_SUCCESS);
    return ttl;
}

/* ---- the claim ---- */

START_TEST(test_claim_won)
{
    const rsp_assertion_t *a = assertion("_id-won");
    const char *sh = rsp_session_hash(pool, "session-1");
    rsp_claim_result_t c;
    rsp_claim_rec_t rec;
    apr_time_t t0, t1;

    t0 = apr_time_now();
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", sh, NOW, 1);
    t1 = apr_time_now();
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    ck_assert_str_eq(c.key, key_of(a));
    ck_assert_str_eq(c.assertion_hash, rsp_short_hash(pool, a->id));
    ck_assert_ptr_null(c.holder);
    ck_assert_int_eq(c.taker_known, 0);
    ck_assert_int_eq(c.taken_over, 0);
    ck_assert_int_eq(c.unacked, 0);
    ck_assert_ptr_null(c.error);
    /* what was written: ours, open, with the session's hash */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, c.value), APR_SUCCESS);
    ck_assert_str_eq(rec.replica, "replica-a");
    ck_assert_int_eq(rec.claimed, NOW);
    ck_assert_str_eq(rec.session_hash, sh);
    ck_assert_int_eq(rec.open, 1);
    /* and what completing it writes: the same record, not open */
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, c.done_value), APR_SUCCESS);
    ck_assert_str_eq(rec.replica, "replica-a");
    ck_assert_str_eq(rec.session_hash, sh);
    ck_assert_int_eq(rec.open, 0);
    ck_assert_str_ne(c.value, c.done_value);
    /* our version, for completing it by compare-and-set */
    ck_assert_ptr_nonnull(c.token);
    ck_assert_str_eq(c.token, version_str(c.key));
    /* one round trip */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_CLAIM_READ), 1);
    /* expiry: the TTL rule's, in the store and in the result */
    ck_assert_int_eq(ttl_of(c.key), TTL_MS);
    ck_assert_int_ge(c.expiry, t0 + TTL_MS * 1000);
    ck_assert_int_le(c.expiry, t1 + TTL_MS * 1000);
    ck_assert_int_ge(c.latency, 0);
    ck_assert_int_le(c.latency, t1 - t0);
}
END_TEST

START_TEST(test_claim_won_guard)
{
    const rsp_assertion_t *a = assertion("_id-guard");
    rsp_claim_result_t c;
    rsp_claim_rec_t rec;

    /* no session, complete from the start (open 0) */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-g", NULL, NOW, 0);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    ck_assert_str_eq(c.value, c.done_value);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, c.value), APR_SUCCESS);
    ck_assert_ptr_null(rec.session_hash);
    ck_assert_int_eq(rec.open, 0);
    ck_assert_int_eq(ttl_of(c.key), TTL_MS);
}
END_TEST

START_TEST(test_claim_taken)
{
    const rsp_assertion_t *a = assertion("_id-taken");
    const char *holder = record("replica-b", NOW - apr_time_from_sec(2),
                                "session-0", 1);
    rsp_claim_result_t c;

    hold(st, a, holder);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "session-1"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(c.holder, holder);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_str_eq(c.taker.replica, "replica-b");
    ck_assert_int_eq(c.taker.claimed, NOW - apr_time_from_sec(2));
    ck_assert_str_eq(c.taker.session_hash, rsp_session_hash(pool, "session-0"));
    ck_assert_int_eq(c.taker.open, 1);
    ck_assert_int_eq(c.taken_over, 0);
    ck_assert_ptr_null(c.error);
    /* the holder's version, for a take-over */
    ck_assert_str_eq(c.token, version_str(c.key));
    /* nothing written: the holder's record stays */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), holder);
    /* the verdict and the read in one round trip */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 1);
}
END_TEST

START_TEST(test_claim_taken_undecodable)
{
    const rsp_assertion_t *a = assertion("_id-junk");
    const char *junks[] = {"junk", "v=2&r=x&t=17", "v=1&t=17",
                           "v=1&r=x&t=17&s=short"};
    rsp_claim_result_t c;
    apr_size_t i;

    for (i = 0; i < sizeof(junks) / sizeof(junks[0]); i++) {
        hold(st, a, junks[i]);
        rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                         rsp_session_hash(pool, "s"), NOW, 1);
        ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
        ck_assert_str_eq(c.holder, junks[i]);
        ck_assert_int_eq(c.taker_known, 0);
        /* told as no one's re-post, and never taken over */
        ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "s"), 0);
        rsp_signin_takeover(&c, pool, st, NOW + apr_time_from_sec(3600), AGE);
        ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
        ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 0);
        ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), junks[i]);
    }
}
END_TEST

START_TEST(test_claim_store_failure)
{
    const rsp_assertion_t *a = assertion("_id-fail");
    rsp_claim_result_t c;

    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_str_eq(c.error, "injected");
    ck_assert_int_eq(c.unacked, 0);
    ck_assert_ptr_null(c.token);
    ck_assert_str_eq(c.key, key_of(a));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, c.key));
    /* the store back: the claim is still to be won */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_CLAIM_READ), 2);
}
END_TEST

START_TEST(test_claim_written_unknown)
{
    const rsp_assertion_t *a = assertion("_id-timeout");
    const char *sh = rsp_session_hash(pool, "session-1");
    rsp_claim_result_t c, retry;

    /* a timeout whose command still ran: no verdict, but the claim is held
     * by a record whose sign-in never completes */
    rsp_mem_store_fault(st, 1, RSP_MEM_WRITE_THEN_FAIL);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", sh, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_str_eq(c.error, "injected");
    ck_assert_int_eq(c.unacked, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    /* the same browser posts again at once: its own claim, a re-post */
    rsp_signin_claim(&retry, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "session-2"), NOW, 1);
    ck_assert_int_eq(retry.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(rsp_signin_is_repost(&retry, pool, "session-1"), 1);
    /* too young to take over */
    rsp_signin_takeover(&retry, pool, st, NOW + AGE, AGE);
    ck_assert_int_eq(retry.verdict, RSP_CLAIM_TAKEN);
    /* older than the age: a retry takes it over */
    rsp_signin_takeover(&retry, pool, st, NOW + AGE + apr_time_from_sec(2),
                        AGE);
    ck_assert_int_eq(retry.verdict, RSP_CLAIM_WON);
    ck_assert_int_eq(retry.taken_over, 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), retry.value);
}
END_TEST

START_TEST(test_claim_unacked)
{
    const rsp_assertion_t *a = assertion("_id-unacked");
    rsp_claim_result_t c, again;

    rsp_mem_store_fault(st, 1, RSP_MEM_UNACKED);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "session-1"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_int_eq(c.unacked, 1);
    ck_assert_str_eq(c.error, "injected: unacknowledged");
    /* the record stays, with its expiry: the assertion stays refused */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    ck_assert_int_eq(ttl_of(c.key), TTL_MS);
    rsp_signin_claim(&again, pool, st, PREFIX, a, "replica-b", NULL, NOW, 1);
    ck_assert_int_eq(again.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(again.holder, c.value);
}
END_TEST

START_TEST(test_claim_unacked_lost)
{
    const rsp_assertion_t *a = assertion("_id-unacked-lost");
    const char *holder = record("replica-b", NOW, "session-0", 0);
    rsp_claim_result_t c;

    /* a lost claim writes nothing: nothing to acknowledge, a verdict */
    hold(st, a, holder);
    rsp_mem_store_fault(st, 1, RSP_MEM_UNACKED);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(c.unacked, 0);
    ck_assert_int_eq(c.taker_known, 1);
}
END_TEST

START_TEST(test_claim_expires)
{
    const rsp_assertion_t *a = assertion("_id-expires");
    rsp_claim_result_t c;

    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 0);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    rsp_mem_store_advance(st, TTL_MS - 1);
    ck_assert_int_eq(ttl_of(c.key), 1);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 0);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    rsp_mem_store_advance(st, 1);
    ck_assert_int_eq(ttl_of(c.key), -2);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 0);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
}
END_TEST

/* ---- peek ---- */

START_TEST(test_peek)
{
    const rsp_assertion_t *a = assertion("_id-peek");
    const char *holder = record("replica-b", NOW, "session-0", 0);
    rsp_claim_result_t c;

    /* absent: nothing written */
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_ABSENT);
    ck_assert_str_eq(c.key, key_of(a));
    ck_assert_str_eq(c.assertion_hash, rsp_short_hash(pool, a->id));
    ck_assert_ptr_null(c.holder);
    ck_assert_int_eq(rsp_mem_store_size(st, -1), 0);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_GET), 1);

    /* taken: the holder as a claim gives it */
    hold(st, a, holder);
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(c.holder, holder);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_str_eq(c.taker.replica, "replica-b");
    ck_assert_str_eq(c.taker.session_hash, rsp_session_hash(pool, "session-0"));
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "session-0"), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), holder);

    /* taken by something unreadable */
    hold(st, a, "garbage");
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(c.holder, "garbage");
    ck_assert_int_eq(c.taker_known, 0);

    /* the store fails */
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_str_eq(c.error, "injected");
    ck_assert_ptr_null(c.holder);

    /* expired: absent again */
    rsp_mem_store_advance(st, TTL_MS);
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_ABSENT);
}
END_TEST

/* ---- re-posts ---- */

START_TEST(test_is_repost)
{
    const rsp_assertion_t *a = assertion("_id-repost");
    rsp_claim_result_t c, won;

    rsp_signin_claim(&won, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "sid-1"), NOW, 1);
    ck_assert_int_eq(won.verdict, RSP_CLAIM_WON);
    /* a won claim is nobody's re-post */
    ck_assert_int_eq(rsp_signin_is_repost(&won, pool, "sid-1"), 0);

    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-b",
                     rsp_session_hash(pool, "sid-2"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "sid-1"), 1);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "sid-2"), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, NULL), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, ""), 0);
    /* the hash itself is not the session ID */
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool,
                                          rsp_session_hash(pool, "sid-1")), 0);
    /* a holder that could not be read: no one's */
    c.taker_known = 0;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "sid-1"), 0);

    /* a claim that records no session (the guard's) */
    a = assertion("_id-repost-guard");
    hold(st, a, record("replica-g", NOW, NULL, 0));
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-b",
                     rsp_session_hash(pool, "sid-1"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "sid-1"), 0);
}
END_TEST

START_TEST(test_repost_target)
{
    const rsp_assertion_t *a = assertion("_id-target");
    const char *cookie = "shib-cookie-value";
    rsp_claim_rec_t r;
    rsp_claim_result_t c;

    memset(&r, 0, sizeof(r));
    r.replica = "replica-g";
    r.claimed = NOW;
    r.cookie_name = "_shibsession_64656661756c74";
    r.cookie_hash = rsp_sha256_b64url(pool, cookie, strlen(cookie));
    r.target = "https://app.example/home?x=1&y=%2F";
    hold(st, a, rsp_claim_encode(pool, &r));
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-h", NULL, NOW, 0);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_str_eq(rsp_signin_repost_target(&c, pool, cookie), r.target);
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, "another"));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, r.cookie_hash));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, ""));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, NULL));
    c.taker_known = 0;
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, cookie));
    c.taker_known = 1;
    c.verdict = RSP_CLAIM_WON;
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, cookie));

    /* a claim where the SP's answer is not (yet) recorded */
    a = assertion("_id-target-2");
    r.target = NULL;
    hold(st, a, rsp_claim_encode(pool, &r));
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-h", NULL, NOW, 0);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, cookie));
    a = assertion("_id-target-3");
    hold(st, a, record("replica-g", NOW, NULL, 0));
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-h", NULL, NOW, 0);
    ck_assert_int_eq(c.taker_known, 1);
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, cookie));
}
END_TEST

/* ---- take-over ---- */

START_TEST(test_may_take_over)
{
    rsp_claim_rec_t r;
    apr_time_t edge;

    memset(&r, 0, sizeof(r));
    r.replica = "replica-a";
    r.claimed = NOW;
    r.open = 1;
    /* claimed is whole seconds, rounded down: the age plus one second */
    edge = NOW + AGE + apr_time_from_sec(1);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, NOW, AGE), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, NOW + AGE, AGE), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, edge, AGE), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, edge + 1, AGE), 1);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, NOW + apr_time_from_sec(3600),
                                              AGE), 1);
    /* completed: never */
    r.open = 0;
    ck_assert_int_eq(rsp_signin_may_take_over(&r, edge + 1, AGE), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&r, NOW + apr_time_from_sec(3600),
                                              AGE), 0);
}
END_TEST

START_TEST(test_takeover_not_allowed)
{
    const rsp_assertion_t *a = assertion("_id-no-takeover");
    const char *done = record("replica-b", NOW - apr_time_from_sec(60),
                              "session-0", 0);
    const char *young = record("replica-b", NOW, "session-0", 1);
    rsp_claim_result_t c;

    /* completed, however old */
    hold(st, a, done);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(c.taken_over, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), done);

    /* open, but its sign-in may still be running */
    hold(st, a, young);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    rsp_signin_takeover(&c, pool, st, NOW + AGE, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), young);

    /* a won claim: nothing to take over */
    a = assertion("_id-no-takeover-2");
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    rsp_signin_takeover(&c, pool, st, NOW + apr_time_from_sec(3600), AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    ck_assert_int_eq(c.taken_over, 0);
    /* none of this tried a compare-and-set */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 0);
}
END_TEST

#define RETRIES 5

START_TEST(test_takeover_once)
{
    const rsp_assertion_t *a = assertion("_id-takeover");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    const char *holder_token, *key = key_of(a);
    rsp_claim_result_t c[RETRIES], late;
    rsp_claim_rec_t rec;
    const char *err = NULL;
    int i, wins = 0, replaced = 1;

    hold(st, a, holder);
    holder_token = version_str(key);
    /* RETRIES retries claim at once: all see the same holder ... */
    for (i = 0; i < RETRIES; i++) {
        const char *sid = apr_psprintf(pool, "sid-%d", i);
        rsp_signin_claim(&c[i], pool, st, PREFIX, a,
                         apr_psprintf(pool, "replica-%d", i + 1),
                         rsp_session_hash(pool, sid), NOW, 1);
        ck_assert_int_eq(c[i].verdict, RSP_CLAIM_TAKEN);
        ck_assert_str_eq(c[i].holder, holder);
        ck_assert_str_eq(c[i].token, holder_token);
        ck_assert_int_eq(c[i].taker_known, 1);
    }
    /* ... and try to take it over: exactly one wins */
    rsp_mem_store_advance(st, 1000);
    for (i = 0; i < RETRIES; i++) {
        rsp_signin_takeover(&c[i], pool, st, NOW, AGE);
        if (c[i].verdict == RSP_CLAIM_WON) {
            wins++;
            ck_assert_int_eq(i, 0);
            ck_assert_int_eq(c[i].taken_over, 1);
            ck_assert_ptr_null(c[i].token);
            ck_assert_ptr_null(c[i].error);
        }
        else {
            ck_assert_int_eq(c[i].verdict, RSP_CLAIM_TAKEN);
            ck_assert_int_eq(c[i].taken_over, 0);
            ck_assert_int_eq(c[i].unacked, 0);
            ck_assert_ptr_null(c[i].error);
        }
    }
    ck_assert_int_eq(wins, 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), RETRIES);
    /* the winner's record holds the claim, open, with its expiry kept */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, key), c[0].value);
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, c[0].value), APR_SUCCESS);
    ck_assert_int_eq(rec.open, 1);
    ck_assert_str_eq(rec.session_hash, rsp_session_hash(pool, "sid-0"));
    ck_assert_int_eq(ttl_of(key), TTL_MS - 1000);

    /* the sign-in that lost it cannot complete: its compare-and-set is
     * against its own record, at its own version */
    ck_assert_int_eq(rsp_store_replace(st, pool, key, holder, holder_token,
                                       record("replica-0",
                                              NOW - apr_time_from_sec(60),
                                              "session-0", 0),
                                       &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, key), c[0].value);

    /* a later retry sees the winner's claim, too young to take over */
    rsp_signin_claim(&late, pool, st, PREFIX, a, "replica-9", NULL, NOW, 1);
    ck_assert_int_eq(late.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(late.holder, c[0].value);
    rsp_signin_takeover(&late, pool, st, NOW, AGE);
    ck_assert_int_eq(late.verdict, RSP_CLAIM_TAKEN);
    /* (not even tried: the take-overs and the loser's completion only) */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), RETRIES + 1);

    /* the winner completes (as the ACS does after a take-over: compared by
     * value, its token being gone) and is never taken over */
    ck_assert_int_eq(rsp_store_replace(st, pool, key, c[0].value, c[0].token,
                                       c[0].done_value, &replaced, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(replaced, 1);
    rsp_signin_claim(&late, pool, st, PREFIX, a, "replica-9", NULL, NOW, 1);
    ck_assert_int_eq(late.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(late.taker.open, 0);
    rsp_signin_takeover(&late, pool, st, NOW + apr_time_from_sec(3600), AGE);
    ck_assert_int_eq(late.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, key), c[0].done_value);
}
END_TEST

START_TEST(test_takeover_sequential)
{
    const rsp_assertion_t *a = assertion("_id-takeover-seq");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    rsp_claim_result_t c;
    int i, wins = 0;

    hold(st, a, holder);
    /* one retry after the other, each claiming then taking over */
    for (i = 0; i < RETRIES; i++) {
        rsp_signin_claim(&c, pool, st, PREFIX, a,
                         apr_psprintf(pool, "replica-%d", i + 1), NULL, NOW, 1);
        ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
        rsp_signin_takeover(&c, pool, st, NOW, AGE);
        wins += c.verdict == RSP_CLAIM_WON;
        if (i > 0) {
            ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
            ck_assert_str_eq(c.taker.replica, "replica-1");
        }
    }
    ck_assert_int_eq(wins, 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 1);
}
END_TEST

START_TEST(test_takeover_by_version)
{
    const rsp_assertion_t *a = assertion("_id-takeover-cas");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    rsp_claim_result_t c;

    hold(st, a, holder);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-1", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    /* the same record written again since it was read: another version,
     * so the compare-and-set (given the token read) refuses */
    hold(st, a, holder);
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), holder);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_REPLACE), 1);
}
END_TEST

START_TEST(test_takeover_unacked)
{
    const rsp_assertion_t *a = assertion("_id-takeover-unacked");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    rsp_claim_result_t c;

    hold(st, a, holder);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-1", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    rsp_mem_store_fault(st, 1, RSP_MEM_UNACKED);
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_int_eq(c.unacked, 1);
    ck_assert_str_eq(c.error, "injected: unacknowledged");
    ck_assert_int_eq(c.taken_over, 0);
    /* written on the primary: ours stays, and stays refused */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    ck_assert_int_eq(ttl_of(c.key), TTL_MS);
}
END_TEST

/* A peek has no record of ours: it is never taken over with it, however
 * old and open the holder. */
START_TEST(test_takeover_not_from_peek)
{
    const rsp_assertion_t *a = assertion("_id-takeover-peek");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    rsp_claim_result_t c;

    hold(st, a, holder);
    rsp_signin_peek(&c, pool, st, PREFIX, a);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert(rsp_signin_may_take_over(&c.taker, NOW, AGE));
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), holder);
}
END_TEST

START_TEST(test_takeover_store_failure)
{
    const rsp_assertion_t *a = assertion("_id-takeover-fail");
    const char *holder = record("replica-0", NOW - apr_time_from_sec(60),
                                "session-0", 1);
    rsp_claim_result_t c, next;

    /* the compare-and-set fails: no verdict (the caller fails closed, and
     * does not call it a replay), the holder's record stays */
    hold(st, a, holder);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-1", NULL, NOW, 1);
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_int_eq(c.unacked, 0);
    ck_assert_str_eq(c.error, "injected");
    ck_assert_int_eq(c.taken_over, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), holder);

    /* it failed after writing: not won either, and the record it wrote is
     * an open one that a later retry may take over in its turn */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-1", NULL, NOW, 1);
    rsp_mem_store_fault(st, 1, RSP_MEM_WRITE_THEN_FAIL);
    rsp_signin_takeover(&c, pool, st, NOW, AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_NO_VERDICT);
    ck_assert_int_eq(c.taken_over, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.value);
    rsp_signin_claim(&next, pool, st, PREFIX, a, "replica-2", NULL,
                     NOW + AGE + apr_time_from_sec(2), 1);
    ck_assert_int_eq(next.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(next.taker.replica, "replica-1");
    rsp_signin_takeover(&next, pool, st, NOW + AGE + apr_time_from_sec(2), AGE);
    ck_assert_int_eq(next.verdict, RSP_CLAIM_WON);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), next.value);
}
END_TEST

/* ---- after the claim: the ACS's writes, and the release ---- */

/* The ACS's writes after a won claim: two logout index entries and the
 * session, kept with the claim, then the claim completed. */
static void signin_writes(rsp_write_t *w, const rsp_claim_result_t *c,
                          const char *skey)
{
    memset(w, 0, 4 * sizeof(*w));
    w[0].kind = w[1].kind = RSP_WRITE_APPEND;
    w[0].key = PREFIX "n:index-by-nameid";
    w[1].key = PREFIX "i:index-by-session-index";
    w[0].value = w[1].value = "session-hash";
    w[0].ttl_ms = w[1].ttl_ms = TTL_MS;
    w[0].home_key = w[1].home_key = c->key;
    w[2].kind = RSP_WRITE_PUT;
    w[2].key = skey;
    w[2].value = "session-record";
    w[2].len = strlen(w[2].value);
    w[2].ttl_ms = TTL_MS;
    w[3].kind = RSP_WRITE_REPLACE;
    w[3].key = c->key;
    w[3].expect = c->value;
    w[3].token = c->token;
    w[3].value = c->done_value;
}

/* What the ACS does when its writes failed: release the claim if it is
 * still ours, open or (its last write done) completed. */
static int release(const rsp_claim_result_t *c)
{
    const char *err = NULL;
    int deleted = 0;

    ck_assert_int_eq(rsp_store_del_if_equal(st, pool, c->key, c->value,
                                            &deleted, &err), APR_SUCCESS);
    if (!deleted) {
        ck_assert_int_eq(rsp_store_del_if_equal(st, pool, c->key,
                                                c->done_value, &deleted, &err),
                         APR_SUCCESS);
    }
    return deleted;
}

START_TEST(test_signin_completes)
{
    const rsp_assertion_t *a = assertion("_id-complete");
    const char *skey = rsp_session_key(pool, PREFIX, "sid-1");
    rsp_claim_result_t c;
    rsp_write_t w[4];
    const char *err = NULL;

    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "sid-1"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    signin_writes(w, &c, skey);
    ck_assert_int_eq(rsp_store_write_many(st, pool, w, 4, &err), APR_SUCCESS);
    ck_assert_int_eq(w[3].replaced, 1);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.done_value);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, skey), "session-record");
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, w[0].key), " session-hash");
    /* a claim and one round trip of writes */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 2);
    /* completed: the claim keeps its expiry, and is never taken over */
    ck_assert_int_eq(ttl_of(c.key), TTL_MS);
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-b", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
    ck_assert_int_eq(c.taker.open, 0);
    rsp_signin_takeover(&c, pool, st, NOW + apr_time_from_sec(3600), AGE);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_TAKEN);
}
END_TEST

START_TEST(test_release_after_failed_write)
{
    const rsp_assertion_t *a = assertion("_id-release");
    const char *skey = rsp_session_key(pool, PREFIX, "sid-1");
    rsp_claim_result_t c, again;
    rsp_write_t w[4];
    const char *err = NULL;

    /* the writes fail before any is done */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "sid-1"), NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    signin_writes(w, &c, skey);
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    ck_assert_int_ne(rsp_store_write_many(st, pool, w, 4, &err), APR_SUCCESS);
    ck_assert_str_eq(err, "injected");
    ck_assert_int_eq(w[3].replaced, 0);
    ck_assert_int_eq(release(&c), 1);
    /* released with one round trip: the claim key is gone */
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_DEL_IF_EQUAL), 1);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, c.key));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, skey));
    rsp_signin_peek(&again, pool, st, PREFIX, a);
    ck_assert_int_eq(again.verdict, RSP_CLAIM_ABSENT);
    /* and the next post of the response signs in */
    rsp_signin_claim(&again, pool, st, PREFIX, a, "replica-b",
                     rsp_session_hash(pool, "sid-2"), NOW, 1);
    ck_assert_int_eq(again.verdict, RSP_CLAIM_WON);
}
END_TEST

START_TEST(test_release_after_unacked_writes)
{
    const rsp_assertion_t *a = assertion("_id-release-2");
    const char *skey = rsp_session_key(pool, PREFIX, "sid-1");
    rsp_claim_result_t c;
    rsp_write_t w[4];
    const char *err = NULL;

    /* every write done, the reply lost: the claim was completed, so its
     * release is by the completed record (the second compare) */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a",
                     rsp_session_hash(pool, "sid-1"), NOW, 1);
    signin_writes(w, &c, skey);
    rsp_mem_store_fault(st, 1, RSP_MEM_WRITE_THEN_FAIL);
    ck_assert_int_eq(rsp_store_write_many(st, pool, w, 4, &err), APR_EGENERAL);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), c.done_value);
    ck_assert_int_eq(release(&c), 1);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_DEL_IF_EQUAL), 2);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, c.key));
    /* the session is named by no cookie: it is never used, and expires */
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, skey), "session-record");
}
END_TEST

START_TEST(test_release_not_ours)
{
    const rsp_assertion_t *a = assertion("_id-release-3");
    rsp_claim_result_t c, other;
    const char *err = NULL;
    int deleted = 1;

    /* a retry took the claim over meanwhile: the release leaves it be */
    rsp_signin_claim(&c, pool, st, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    rsp_signin_claim(&other, pool, st, PREFIX, a, "replica-b", NULL,
                     NOW + apr_time_from_sec(60), 1);
    rsp_signin_takeover(&other, pool, st, NOW + apr_time_from_sec(60), AGE);
    ck_assert_int_eq(other.verdict, RSP_CLAIM_WON);
    ck_assert_int_eq(release(&c), 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), other.value);
    /* nor does a release that fails */
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    ck_assert_int_eq(rsp_store_del_if_equal(st, pool, other.key, other.value,
                                            &deleted, &err), APR_EGENERAL);
    ck_assert_int_eq(deleted, 0);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, c.key), other.value);
}
END_TEST

/* ---- session IDs ---- */

START_TEST(test_session_id_one_server)
{
    const char *sid1 = NULL, *sid2 = NULL;

    ck_assert_int_eq(rsp_signin_session_id(&sid1, pool, st, PREFIX,
                                           key_of(assertion("_id-s")), 32),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_signin_session_id(&sid2, pool, st, PREFIX,
                                           key_of(assertion("_id-s")), 32),
                     APR_SUCCESS);
    ck_assert_int_eq(strlen(sid1), RSP_HASH_B64_LEN);
    ck_assert_int_eq(strlen(sid2), RSP_HASH_B64_LEN);
    ck_assert_str_ne(sid1, sid2);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 0);
}
END_TEST

START_TEST(test_session_id_servers)
{
    rsp_store_t *many = rsp_mem_store_create(pool, 4);
    int homes[4] = {0, 0, 0, 0};
    int i, used = 0;

    ck_assert_int_eq(rsp_store_servers(many), 4);
    for (i = 0; i < 40; i++) {
        const char *ckey = key_of(assertion(apr_psprintf(pool, "_id-%d", i)));
        const char *sid = NULL;
        int home = rsp_store_home(many, ckey);
        ck_assert_int_eq(rsp_signin_session_id(&sid, pool, many, PREFIX, ckey,
                                               32), APR_SUCCESS);
        ck_assert_int_eq(strlen(sid), RSP_HASH_B64_LEN);
        ck_assert_int_eq(rsp_store_home(many,
                                        rsp_session_key(pool, PREFIX, sid)),
                         home);
        homes[home]++;
    }
    /* the claims were spread: the placement was not a given */
    for (i = 0; i < 4; i++) {
        used += homes[i] > 0;
    }
    ck_assert_int_ge(used, 2);
    ck_assert_int_eq(rsp_mem_store_calls(many, RSP_MEM_OP_ALL), 0);
}
END_TEST

START_TEST(test_signin_servers)
{
    rsp_store_t *many = rsp_mem_store_create(pool, 3);
    const rsp_assertion_t *a = assertion("_id-servers");
    const char *sid = NULL, *skey, *v, *err = NULL;
    rsp_claim_result_t c, again;
    rsp_write_t w[4];
    apr_size_t len;
    int home, i, deleted = 0;

    /* the claim on its key's server; the session ID drawn to live there;
     * the index entries written there by home_key */
    rsp_signin_claim(&c, pool, many, PREFIX, a, "replica-a", NULL, NOW, 1);
    ck_assert_int_eq(c.verdict, RSP_CLAIM_WON);
    home = rsp_store_home(many, c.key);
    ck_assert_int_eq(rsp_signin_session_id(&sid, pool, many, PREFIX, c.key, 32),
                     APR_SUCCESS);
    skey = rsp_session_key(pool, PREFIX, sid);
    ck_assert_int_eq(rsp_store_home(many, skey), home);
    signin_writes(w, &c, skey);
    ck_assert_int_eq(rsp_store_write_many(many, pool, w, 4, &err), APR_SUCCESS);
    ck_assert_int_eq(w[3].replaced, 1);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(rsp_mem_store_size(many, i), i == home ? 4 : 0);
        ck_assert_int_eq(rsp_store_get_at(many, pool, i, w[0].key, &v, &len,
                                          &err), APR_SUCCESS);
        if (i == home) {
            ck_assert_str_eq(v, " session-hash");
        }
        else {
            ck_assert_ptr_null(v);
        }
    }
    /* another replica's claim meets it there */
    rsp_signin_claim(&again, pool, many, PREFIX, a, "replica-b", NULL, NOW, 1);
    ck_assert_int_eq(again.verdict, RSP_CLAIM_TAKEN);
    ck_assert_str_eq(again.holder, c.done_value);
    /* and an index entry is removed where it lives */
    ck_assert_int_eq(rsp_store_del_if_equal_at(many, pool, home, w[0].key,
                                               " session-hash", &deleted, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_int_eq(rsp_mem_store_size(many, home), 3);
}
END_TEST

/* ---- the in-memory store itself ---- */

START_TEST(test_mem_store)
{
    rsp_store_t *many = rsp_mem_store_create(pool, 2);
    rsp_claim_read_t cr;
    rsp_write_t w[3];
    const char *v, *err = NULL, *info = NULL;
    apr_int64_t ttl;
    apr_size_t len;
    int won, other, deleted;

    /* claim, then expiry by the clock */
    ck_assert_int_eq(rsp_store_claim(st, pool, "k", "v1", 1000, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(rsp_store_claim(st, pool, "k", "v2", 1000, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    rsp_mem_store_advance(st, 999);
    ck_assert_int_eq(rsp_store_get(st, pool, "k", &v, &len, &err), APR_SUCCESS);
    ck_assert_str_eq(v, "v1");
    ck_assert_int_eq(len, 2);
    rsp_mem_store_advance(st, 1);
    ck_assert_int_eq(rsp_store_get(st, pool, "k", &v, &len, &err), APR_SUCCESS);
    ck_assert_ptr_null(v);
    /* no expiry */
    ck_assert_int_eq(rsp_store_put(st, pool, "p", "x", 1, 0, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_store_ttl(st, pool, "p", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, -1);
    /* append: created, then extended only */
    ck_assert_int_eq(rsp_store_append(st, pool, "a", "one", 5000, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_store_append(st, pool, "a", "two", 1000, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, "a"), " one two");
    ck_assert_int_eq(rsp_store_ttl(st, pool, "a", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, 5000);
    ck_assert_int_eq(rsp_store_append(st, pool, "a", "six", 6000, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_store_ttl(st, pool, "a", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, 6000);
    /* replace: by value, and by version when given */
    ck_assert_int_eq(rsp_store_put(st, pool, "r", "old", 3, 2000, &err),
                     APR_SUCCESS);
    rsp_mem_store_advance(st, 500);
    ck_assert_int_eq(rsp_store_replace(st, pool, "r", "other", NULL, "new",
                                       &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    ck_assert_int_eq(rsp_store_replace(st, pool, "r", "old", "999999", "new",
                                       &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    ck_assert_int_eq(rsp_store_replace(st, pool, "r", "old",
                                       version_str("r"), "new", &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(rsp_store_ttl(st, pool, "r", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, 1500);
    ck_assert_int_eq(rsp_store_replace(st, pool, "gone", "old", NULL, "new",
                                       &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    /* del_if_equal */
    ck_assert_int_eq(rsp_store_del_if_equal(st, pool, "r", "old", &deleted,
                                            &err), APR_SUCCESS);
    ck_assert_int_eq(deleted, 0);
    ck_assert_int_eq(rsp_store_del_if_equal(st, pool, "r", "new", &deleted,
                                            &err), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);

    /* faults: the nth call, counting every op */
    rsp_mem_store_reset_calls(st);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    rsp_mem_store_fault(st, 3, RSP_MEM_UNACKED);
    ck_assert_int_eq(rsp_store_get(st, pool, "p", &v, &len, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_store_put(st, pool, "f", "x", 1, 0, &err),
                     APR_EGENERAL);
    ck_assert_str_eq(err, "injected");
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, "f"));
    ck_assert_int_eq(rsp_store_claim(st, pool, "f", "x", 0, &won, &err),
                     RSP_STORE_UNACKED);
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, "f"), "x");
    ck_assert_int_eq(rsp_mem_store_faults_pending(st), 0);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_ALL), 3);
    ck_assert_int_eq(rsp_mem_store_calls(st, RSP_MEM_OP_PUT), 1);

    /* claim_read: our version when won, the holder and its when lost */
    memset(&cr, 0, sizeof(cr));
    cr.key = "c";
    cr.value = "mine";
    cr.ttl_ms = 1000;
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &cr, &err), APR_SUCCESS);
    ck_assert_int_eq(cr.won, 1);
    ck_assert_ptr_null(cr.holder);
    ck_assert_str_eq(cr.token, version_str("c"));
    cr.value = "theirs";
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &cr, &err), APR_SUCCESS);
    ck_assert_int_eq(cr.won, 0);
    ck_assert_str_eq(cr.holder, "mine");
    ck_assert_str_eq(cr.token, version_str("c"));

    /* write_many: every write attempted, home_key places a key */
    ck_assert_int_eq(rsp_store_servers(many), 2);
    for (other = 0; rsp_store_home(many, apr_psprintf(pool, "o%d", other))
                    == rsp_store_home(many, "h"); other++)
        ;
    memset(w, 0, sizeof(w));
    w[0].kind = RSP_WRITE_PUT;
    w[0].key = apr_psprintf(pool, "o%d", other);
    w[0].value = "placed";
    w[0].len = 6;
    w[0].home_key = "h";
    w[1].kind = RSP_WRITE_REPLACE;
    w[1].key = "absent";
    w[1].expect = "x";
    w[1].value = "y";
    w[2].kind = RSP_WRITE_APPEND;
    w[2].key = "h";
    w[2].value = "item";
    ck_assert_int_eq(rsp_store_write_many(many, pool, w, 3, &err), APR_SUCCESS);
    ck_assert_int_eq(w[1].replaced, 0);
    ck_assert_ptr_null(rsp_mem_store_peek(many, 1 - rsp_store_home(many, "h"),
                                          w[0].key));
    ck_assert_str_eq(rsp_mem_store_peek(many, rsp_store_home(many, "h"),
                                        w[0].key), "placed");
    ck_assert_int_eq(rsp_store_get(many, pool, w[0].key, &v, &len, &err),
                     APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(rsp_store_get_at(many, pool, rsp_store_home(many, "h"),
                                      w[0].key, &v, &len, &err), APR_SUCCESS);
    ck_assert_str_eq(v, "placed");
    ck_assert_int_eq(rsp_store_get_at(many, pool, 2, w[0].key, &v, &len, &err),
                     APR_EINVAL);
    /* claim_read by home_key */
    memset(&cr, 0, sizeof(cr));
    cr.key = w[0].key;
    cr.value = "claimed";
    cr.home_key = "h";
    ck_assert_int_eq(rsp_store_claim_read(many, pool, &cr, &err), APR_SUCCESS);
    ck_assert_int_eq(cr.won, 0);
    ck_assert_str_eq(cr.holder, "placed");
    ck_assert_int_eq(rsp_store_info(many, pool, NULL, &info, &err),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(strstr(info, "server mem1"));
    ck_assert_int_eq(rsp_store_child_init(many, pool, 1), APR_SUCCESS);
}
END_TEST

/* The take-over rule on records as a claim decodes them: whole seconds,
 * up to the latest time a record can carry. */
START_TEST(test_may_take_over_record_times)
{
    rsp_claim_rec_t rec;
    apr_time_t now = apr_time_from_sec(1764581000);
    apr_interval_time_t age = apr_time_from_sec(4);

    memset(&rec, 0, sizeof(rec));
    rec.replica = "r1";
    rec.open = 1;
    /* claimed is whole seconds: age + 1 s must have passed */
    rec.claimed = now - apr_time_from_sec(6);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 1);
    rec.claimed = now - apr_time_from_sec(5);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    rec.claimed = now;
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    /* a completed sign-in's claim: never, however old */
    rec.open = 0;
    rec.claimed = now - apr_time_from_sec(86400);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    /* the latest time a record can carry (9999-12-31): in the future,
     * never taken over, and no overflow on the way */
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, "v=1&r=a&t=253402300799&o=1"),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, APR_INT64_C(1) << 40), 0);
}
END_TEST

/* The re-post rule: only the browser whose session the claim records (by
 * the hash of its cookie) gets its first answer again; anyone else posting
 * the same response is a replay. */
START_TEST(test_repost_rule)
{
    rsp_claim_result_t c;
    const char *sid = "S3ss10n-1d-of-the-w1nner";

    memset(&c, 0, sizeof(c));
    c.verdict = RSP_CLAIM_TAKEN;
    c.taker_known = 1;
    c.taker.replica = "r1";
    c.taker.session_hash = rsp_session_hash(pool, sid);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 1);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "another-browser"), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, NULL), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, ""), 0);
    /* the hash is what is compared, never the value itself */
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, c.taker.session_hash), 0);
    /* a claim that records no session (the guard's), or unreadable */
    c.taker.session_hash = NULL;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);
    c.taker.session_hash = rsp_session_hash(pool, sid);
    c.taker_known = 0;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);
    /* a won claim is no re-post */
    c.taker_known = 1;
    c.verdict = RSP_CLAIM_WON;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);

    /* the guard: the SP's cookie, by its hash */
    memset(&c, 0, sizeof(c));
    c.verdict = RSP_CLAIM_TAKEN;
    c.taker_known = 1;
    c.taker.cookie_name = "mellon-cookie";
    c.taker.cookie_hash = rsp_sha256_b64url(pool, "v4lue", 5);
    c.taker.target = "/app/";
    ck_assert_str_eq(rsp_signin_repost_target(&c, pool, "v4lue"), "/app/");
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, "v4lue2"));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, ""));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, NULL));
    c.taker.target = NULL;
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, "v4lue"));
}
END_TEST

static Suite *signin_suite(void)
{
    Suite *s = suite_create("rsp_signin");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_claim_won);
    tcase_add_test(tc, test_claim_won_guard);
    tcase_add_test(tc, test_claim_taken);
    tcase_add_test(tc, test_claim_taken_undecodable);
    tcase_add_test(tc, test_claim_store_failure);
    tcase_add_test(tc, test_claim_written_unknown);
    tcase_add_test(tc, test_claim_unacked);
    tcase_add_test(tc, test_claim_unacked_lost);
    tcase_add_test(tc, test_claim_expires);
    tcase_add_test(tc, test_peek);
    tcase_add_test(tc, test_is_repost);
    tcase_add_test(tc, test_repost_target);
    tcase_add_test(tc, test_may_take_over);
    tcase_add_test(tc, test_may_take_over_record_times);
    tcase_add_test(tc, test_repost_rule);
    tcase_add_test(tc, test_takeover_not_allowed);
    tcase_add_test(tc, test_takeover_once);
    tcase_add_test(tc, test_takeover_sequential);
    tcase_add_test(tc, test_takeover_by_version);
    tcase_add_test(tc, test_takeover_unacked);
    tcase_add_test(tc, test_takeover_store_failure);
    tcase_add_test(tc, test_takeover_not_from_peek);
    tcase_add_test(tc, test_signin_completes);
    tcase_add_test(tc, test_release_after_failed_write);
    tcase_add_test(tc, test_release_after_unacked_writes);
    tcase_add_test(tc, test_release_not_ours);
    tcase_add_test(tc, test_session_id_one_server);
    tcase_add_test(tc, test_session_id_servers);
    tcase_add_test(tc, test_signin_servers);
    tcase_add_test(tc, test_mem_store);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(signin_suite());
}
