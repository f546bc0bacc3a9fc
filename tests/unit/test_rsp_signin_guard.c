/* Unit tests for rsp_signin_guard.c, the guard's sign-in in front of
 * another SP: the claim, open while the SP answers; its verdicts (won,
 * replay, re-post by the browser that won it, a claim still being
 * answered); its completion with what the SP answered (a session cookie:
 * terminal whatever the status; no session below 500: terminal; a server
 * error without a session: left for a retry); the retry that takes a
 * failed claim over, exactly one of many; the store's failures. Against
 * the in-memory store of rsp_mem_store.c and its fault injection. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_signin_guard.h"
#include "rsp_store.h"
#include "rsp_util.h"
#include "rsp_mem_store.h"

#define PREFIX "rsp:"
#define IDP "https://idp.example/saml"
#define COOKIE "mellon-cookie"
#define TARGET "https://sp.example/app/"
#define CLAIM_TTL_MS APR_INT64_C(300000)
#define RETRIES 8

static apr_time_t NOW;
static rsp_store_t *st;
/* the cookie the browser of the next sign-in presents (NULL: none) */
static const char *browser_cookie;

static void setup(void)
{
    rsp_unit_setup();
    NOW = apr_time_from_sec(apr_time_sec(apr_time_now()));
    st = rsp_mem_store_create(pool, 1);
    browser_cookie = NULL;
}

static void teardown(void)
{
    st = NULL;
    rsp_unit_teardown();
}

static const char *cookie_of(void *baton, const char *name)
{
    (void)baton;
    return browser_cookie && !strcmp(name, COOKIE) ? browser_cookie : NULL;
}

static const rsp_assertion_t *assertion(const char *id)
{
    rsp_assertion_t *a = apr_pcalloc(pool, sizeof(*a));

    a->issuer = IDP;
    a->id = id;
    a->name_id = "alice";
    a->ttl_ms = CLAIM_TTL_MS;
    return a;
}

static void guard(rsp_signin_result_t *res, const rsp_assertion_t *a,
                  const char *replica, int fail_open)
{
    rsp_signin_guard_in_t in;

    memset(&in, 0, sizeof(in));
    in.st = st;
    in.prefix = PREFIX;
    in.a = a;
    in.replica = replica;
    in.now = NOW;
    in.cookie = cookie_of;
    in.fail_open = fail_open;
    rsp_signin_guard(res, pool, &in);
}

static rsp_claim_rec_t stored(const rsp_assertion_t *a)
{
    rsp_claim_rec_t rec;
    const char *v = rsp_mem_store_peek(
        st, -1, rsp_claim_key(pool, PREFIX, a->issuer, a->id));

    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, v), APR_SUCCESS);
    return rec;
}

static apr_int64_t ttl_of(const rsp_assertion_t *a)
{
    apr_int64_t ttl = 0;
    const char *err = NULL;

    ck_assert_int_eq(rsp_store_ttl(st, pool,
                                   rsp_claim_key(pool, PREFIX, a->issuer, a->id),
                                   &ttl, &err), APR_SUCCESS);
    return ttl;
}

/* The SP answered status, setting cookie (NULL: no session): *failed. */
static int finish(const rsp_signin_result_t *res, int status,
                  const char *cookie)
{
    const char *err = NULL;
    int failed = -1, replaced = -1;

    ck_assert_int_eq(rsp_signin_guard_finish(
                         st, pool, res->claim.key, res->claim.value, status,
                         cookie ? COOKIE : NULL, cookie, cookie ? TARGET : NULL,
                         &failed, &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 1);
    return failed;
}

START_TEST(test_won_open_until_the_sp_answers)
{
    const rsp_assertion_t *a = assertion("_g-won");
    rsp_signin_result_t res, again;
    rsp_claim_rec_t rec;

    guard(&res, a, "replica-1", 0);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(res.won, 1);
    ck_assert_int_eq(res.verdicts, 1);
    ck_assert_int_eq(res.claim.taken_over, 0);
    ck_assert_int_eq(res.failed_open, 0);
    rec = stored(a);
    ck_assert_int_eq(rec.open, 1);
    ck_assert_int_eq(rec.failed, 0);
    ck_assert_ptr_null(rec.session_hash);
    ck_assert_str_eq(rec.replica, "replica-1");
    ck_assert_int_eq(ttl_of(a), CLAIM_TTL_MS);
    /* while the SP answers, any other post of it is a replay, however
     * long the SP takes (never taken over by age) */
    guard(&again, a, "replica-2", 0);
    ck_assert_int_eq(again.outcome, RSP_SIGNIN_REPLAY);
    ck_assert_int_eq(again.won, 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&again.claim.taker,
                                              NOW + apr_time_from_sec(86400),
                                              RSP_SIGNIN_FAILED_ONLY), 0);
}
END_TEST

START_TEST(test_session_completes_whatever_the_status)
{
    static const int statuses[] = {302, 200, 500, 502};
    int i;

    for (i = 0; i < 4; i++) {
        const rsp_assertion_t *a = assertion(apr_psprintf(pool, "_g-s%d", i));
        rsp_signin_result_t res, again;
        rsp_claim_rec_t rec;

        guard(&res, a, "replica-1", 0);
        ck_assert_int_eq(finish(&res, statuses[i], "sp-session-1"), 0);
        rec = stored(a);
        ck_assert_int_eq(rec.open, 0);
        ck_assert_int_eq(rec.failed, 0);
        ck_assert_str_eq(rec.cookie_name, COOKIE);
        ck_assert_str_eq(rec.cookie_hash,
                         rsp_sha256_b64url(pool, "sp-session-1", 12));
        ck_assert_str_eq(rec.target, TARGET);
        ck_assert_int_eq(ttl_of(a), CLAIM_TTL_MS);   /* expiry kept */
        /* the browser that won it posts it again: where the SP sent it */
        browser_cookie = "sp-session-1";
        guard(&again, a, "replica-2", 0);
        ck_assert_int_eq(again.outcome, RSP_SIGNIN_REPOST);
        ck_assert_str_eq(again.target, TARGET);
        /* another browser (or none): a replay */
        browser_cookie = "sp-session-2";
        guard(&again, a, "replica-2", 0);
        ck_assert_int_eq(again.outcome, RSP_SIGNIN_REPLAY);
        browser_cookie = NULL;
        guard(&again, a, "replica-3", 0);
        ck_assert_int_eq(again.outcome, RSP_SIGNIN_REPLAY);
    }
}
END_TEST

START_TEST(test_no_session_below_500_is_terminal)
{
    static const int statuses[] = {200, 302, 400, 403, 404};
    int i;

    for (i = 0; i < 5; i++) {
        const rsp_assertion_t *a = assertion(apr_psprintf(pool, "_g-t%d", i));
        rsp_signin_result_t res, again;
        rsp_claim_rec_t rec;

        guard(&res, a, "replica-1", 0);
        ck_assert_int_eq(finish(&res, statuses[i], NULL), 0);
        rec = stored(a);
        ck_assert_int_eq(rec.open, 0);
        ck_assert_ptr_null(rec.cookie_name);
        guard(&again, a, "replica-2", 0);
        ck_assert_int_eq(again.outcome, RSP_SIGNIN_REPLAY);
    }
}
END_TEST

/* A server error without a session (mod_proxy's 502 on a dropped reused
 * connection, 503, 504, the SP's own 500): the user's retry signs in,
 * exactly one of any number of concurrent retries. */
START_TEST(test_server_error_left_for_one_retry)
{
    static const int statuses[] = {500, 502, 503, 504};
    int i, j;

    for (i = 0; i < 4; i++) {
        const rsp_assertion_t *a = assertion(apr_psprintf(pool, "_g-f%d", i));
        rsp_signin_result_t res, retry[RETRIES], late;
        rsp_claim_rec_t rec;
        int wins = 0;

        guard(&res, a, "replica-1", 0);
        ck_assert_int_eq(finish(&res, statuses[i], NULL), 1);
        rec = stored(a);
        ck_assert_int_eq(rec.open, 1);
        ck_assert_int_eq(rec.failed, 1);
        ck_assert_str_eq(rec.replica, "replica-1");
        ck_assert_int_eq(ttl_of(a), CLAIM_TTL_MS);
        rsp_mem_store_advance(st, 1000);
        for (j = 0; j < RETRIES; j++) {
            guard(&retry[j], a, apr_psprintf(pool, "replica-%d", j + 2), 0);
            if (retry[j].outcome == RSP_SIGNIN_ACCEPTED) {
                wins++;
                ck_assert_int_eq(retry[j].won, 1);
                ck_assert_int_eq(retry[j].claim.taken_over, 1);
                ck_assert_str_eq(retry[j].claim.taker.replica, "replica-1");
            }
            else {
                ck_assert_int_eq(retry[j].outcome, RSP_SIGNIN_REPLAY);
            }
        }
        ck_assert_int_eq(wins, 1);
        ck_assert_int_eq(retry[0].outcome, RSP_SIGNIN_ACCEPTED);
        /* the retry's claim: open again (not failed), expiry kept */
        rec = stored(a);
        ck_assert_int_eq(rec.open, 1);
        ck_assert_int_eq(rec.failed, 0);
        ck_assert_str_eq(rec.replica, "replica-2");
        ck_assert_int_eq(ttl_of(a), CLAIM_TTL_MS - 1000);
        /* it completes with its session; nothing takes it over after */
        ck_assert_int_eq(finish(&retry[0], 302, "sp-session-r"), 0);
        guard(&late, a, "replica-9", 0);
        ck_assert_int_eq(late.outcome, RSP_SIGNIN_REPLAY);
        ck_assert_int_eq(stored(a).open, 0);
    }
}
END_TEST

/* The request that lost its claim to a retry cannot complete it: its
 * compare-and-set is against its own record. */
START_TEST(test_finish_after_takeover_leaves_it)
{
    const rsp_assertion_t *a = assertion("_g-lost");
    rsp_signin_result_t first, retry;
    const char *err = NULL;
    int failed = -1, replaced = -1;

    guard(&first, a, "replica-1", 0);
    ck_assert_int_eq(finish(&first, 502, NULL), 1);
    guard(&retry, a, "replica-2", 0);
    ck_assert_int_eq(retry.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(rsp_signin_guard_finish(
                         st, pool, first.claim.key, first.claim.value, 302,
                         COOKIE, "sp-session-1", TARGET, &failed, &replaced,
                         &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    ck_assert_str_eq(stored(a).replica, "replica-2");
    ck_assert_int_eq(stored(a).open, 1);
    /* a value that is no claim record: nothing written */
    ck_assert_int_eq(rsp_signin_guard_finish(
                         st, pool, first.claim.key, "junk", 502, NULL, NULL,
                         NULL, &failed, &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    ck_assert_int_eq(failed, 0);
    ck_assert_str_eq(stored(a).replica, "replica-2");
}
END_TEST

START_TEST(test_store_failures)
{
    const rsp_assertion_t *a = assertion("_g-down");
    rsp_signin_result_t res;
    const char *err = NULL;
    int failed = -1, replaced = -1;

    /* no verdict on the claim: unavailable, or failed open */
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    guard(&res, a, "replica-1", 0);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_CLAIM);
    ck_assert_int_eq(res.store_errors, 1);
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    guard(&res, a, "replica-1", 1);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(res.failed_open, 1);
    ck_assert_int_eq(res.won, 0);
    /* written, not acknowledged: unavailable, the claim kept */
    rsp_mem_store_fault(st, 1, RSP_MEM_UNACKED);
    guard(&res, a, "replica-1", 0);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_UNACKED);
    ck_assert_int_eq(stored(a).open, 1);

    /* the SP failed; the retry's takeover meets a store failure: no
     * verdict (not a replay), and the claim still failed for the next */
    a = assertion("_g-down-2");
    guard(&res, a, "replica-1", 0);
    ck_assert_int_eq(finish(&res, 503, NULL), 1);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);    /* claim, then replace */
    guard(&res, a, "replica-2", 0);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_UNAVAILABLE);
    ck_assert_int_eq(res.failure, RSP_FAILED_CLAIM);
    ck_assert_int_eq(stored(a).failed, 1);
    guard(&res, a, "replica-3", 0);
    ck_assert_int_eq(res.outcome, RSP_SIGNIN_ACCEPTED);
    ck_assert_int_eq(res.claim.taken_over, 1);
    /* completing it meets a store failure: said so, nothing else */
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    ck_assert_int_ne(rsp_signin_guard_finish(
                         st, pool, res.claim.key, res.claim.value, 302, COOKIE,
                         "c", TARGET, &failed, &replaced, &err), APR_SUCCESS);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(stored(a).open, 1);
}
END_TEST

static Suite *guard_suite(void)
{
    Suite *s = suite_create("rsp_signin_guard");
    TCase *tc = tcase_create("guard");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_won_open_until_the_sp_answers);
    tcase_add_test(tc, test_session_completes_whatever_the_status);
    tcase_add_test(tc, test_no_session_below_500_is_terminal);
    tcase_add_test(tc, test_server_error_left_for_one_retry);
    tcase_add_test(tc, test_finish_after_takeover_leaves_it);
    tcase_add_test(tc, test_store_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(guard_suite());
}
