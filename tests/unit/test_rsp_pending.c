/* Unit tests for rsp_pending.c: the records and keys of the requests
 * this SP sent (and of those an IdP sent it), the checks of a response
 * against its request, and their store operations (against the
 * in-memory store of rsp_mem_store.c). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_binding.h"
#include "rsp_claim.h"
#include "rsp_pending.h"
#include "rsp_util.h"
#include "rsp_mem_store.h"

#define HASH_A "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define PREFIX "rsp:"
#define NOW apr_time_from_sec(1764581000)

static const char *h(const char *s)
{
    return rsp_sha256_b64url(pool, s, strlen(s));
}

START_TEST(test_pending_round_trip)
{
    const char *rec = rsp_pending_encode(pool, "https://idp.example/?a=1&b",
                                         "https://sp.example/", "token-1",
                                         "/app/page?x=1&y=%2F z", NULL);
    rsp_pending_t *pd = rsp_pending_decode(pool, rec);

    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->idp, "https://idp.example/?a=1&b");
    ck_assert_str_eq(pd->sp, "https://sp.example/");
    ck_assert_str_eq(pd->return_to, "/app/page?x=1&y=%2F z");
    ck_assert(rsp_pending_relay_matches(pool, pd, "token-1"));
    ck_assert(!rsp_pending_relay_matches(pool, pd, "token-2"));
    ck_assert(!rsp_pending_relay_matches(pool, pd, NULL));
    ck_assert_ptr_null(pd->bind_hash);    /* not bound */
    /* the token itself is not in the record */
    ck_assert_ptr_null(strstr(rec, "token-1"));
    /* what ap_escape_urlencoded wrote (spaces as '+') still reads */
    pd = rsp_pending_decode(pool, "v=1&i=idp&p=sp&h=" HASH_A "&u=%2Fa+b");
    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->return_to, "/a b");
}
END_TEST

/* The bytes of a record: what every replica, old or new, writes and
 * reads (a rolling upgrade mixes them on one store). */
START_TEST(test_pending_bytes)
{
    ck_assert_str_eq(rsp_pending_encode(pool, "https://idp.example/",
                                        "https://sp.example/", "tok",
                                        "/app?x=1 y+z~", NULL),
                     apr_pstrcat(pool, "v=1&i=https%3A%2F%2Fidp.example%2F"
                                 "&p=https%3A%2F%2Fsp.example%2F&h=", h("tok"),
                                 "&u=%2Fapp%3Fx%3D1%20y%2Bz~", NULL));
    ck_assert_str_eq(rsp_pending_encode(pool, "i", "p", "t", "u", "bind"),
                     apr_pstrcat(pool, "v=1&i=i&p=p&h=", h("t"), "&u=u&b=",
                                 h("bind"), NULL));
    /* fields in any order, unknown ones (a newer replica's) ignored */
    ck_assert_ptr_nonnull(rsp_pending_decode(
        pool, "u=%2F&x=new&h=" HASH_A "&p=sp&i=idp&v=1"));
}
END_TEST

/* A bound request keeps the hash of the browser's binding value, never
 * the value; the ACS takes it from the browser's cookie of that request
 * (or its twin) only. */
START_TEST(test_pending_bound)
{
    const char *rec = rsp_pending_encode(pool, "idp", "sp", "tok", "/", "B-value");
    rsp_pending_t *pd = rsp_pending_decode(pool, rec);
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");
    const char *why = NULL;

    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->bind_hash, h("B-value"));
    ck_assert_ptr_null(strstr(rec, "B-value"));
    ck_assert(rsp_binding_matches(pool, apr_psprintf(pool, "%s=B-value", name),
                                  name, pd->bind_hash, &why));
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=B-valuf", name),
                                   name, pd->bind_hash, &why));
    /* an empty binding hash is a malformed record */
    ck_assert_ptr_null(rsp_pending_decode(pool, "v=1&i=a&p=b&h=c&u=d&b="));
}
END_TEST

/* The checks of a response against the request it answers, each with its
 * tag, in order; a logout is never bound. */
START_TEST(test_pending_refusal)
{
    const char *bound = rsp_pending_encode(pool, "idp", "sp", "tok", "/back",
                                           "B-value");
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");
    rsp_pending_answer_t ans;
    rsp_pending_t *pd = NULL;
    const char *detail = NULL;

    memset(&ans, 0, sizeof(ans));
    ans.rid = "RID";
    ans.sp = "sp";
    ans.issuer = "idp";
    ans.relay = "tok";
    ans.cookie_base = "rsp_session";
    ans.cookie_header = apr_psprintf(pool, "x=1; %s=B-value", name);
    ans.lifetime_s = 300;
    /* the browser that started it, with the request's token */
    ck_assert_ptr_null(rsp_pending_refusal(pool, bound, &ans, &pd, &detail));
    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->return_to, "/back");
    /* absent (never sent, or expired) */
    ck_assert_str_eq(rsp_pending_refusal(pool, NULL, &ans, &pd, &detail),
                     "request-unknown");
    ck_assert_ptr_null(pd);
    ck_assert_ptr_nonnull(strstr(detail, "RID"));
    ck_assert_ptr_nonnull(strstr(detail, "ReplaySPRequestLifetime 300 s"));
    ck_assert_str_eq(rsp_pending_refusal(pool, "v=2&i=idp", &ans, &pd, &detail),
                     "request-unknown");
    ck_assert_ptr_nonnull(strstr(detail, "malformed"));
    /* another IdP, another SP */
    ans.issuer = "idp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
    ans.issuer = "idp";
    ans.sp = "sp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
    ans.sp = "sp";
    /* another RelayState, none */
    ans.relay = "tok2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "relay-state");
    ans.relay = NULL;
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "relay-state");
    ck_assert_ptr_nonnull(strstr(detail, "missing"));
    ans.relay = "tok";
    /* another browser: no cookie, another value */
    ans.cookie_header = NULL;
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-browser");
    ck_assert_ptr_nonnull(strstr(detail, "no binding cookie"));
    ans.cookie_header = apr_psprintf(pool, "%s=B-valuf", name);
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-browser");
    ck_assert_ptr_nonnull(strstr(detail, "another browser"));
    /* a logout is not bound; an unbound request takes any browser */
    ans.cookie_base = NULL;
    ck_assert_ptr_null(rsp_pending_refusal(pool, bound, &ans, &pd, &detail));
    ans.cookie_base = "rsp_session";
    ck_assert_ptr_null(rsp_pending_refusal(
        pool, rsp_pending_encode(pool, "idp", "sp", "tok", "/", NULL), &ans,
        &pd, &detail));
    /* the first failing check counts: another IdP and another browser */
    ans.issuer = "idp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
}
END_TEST

START_TEST(test_pending_malformed)
{
    static const char *const bad[] = {
        "", "v=2&i=a&p=b&h=c&u=d", "i=a&p=b&h=c&u=d", "v=1&p=b&h=c&u=d",
        "v=1&i=a&h=c&u=d", "v=1&i=a&p=b&u=d", "v=1&i=a&p=b&h=c",
        "v=1&i=a&i=b&p=b&h=c&u=d", "v=1&i=%zz&p=b&h=c&u=d"};
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(rsp_pending_decode(pool, bad[i]) == NULL, "accepted %s", bad[i]);
    }
    ck_assert_ptr_null(rsp_pending_decode(pool, NULL));
}
END_TEST

START_TEST(test_request_keys)
{
    const char *q = rsp_pending_key(pool, "rsp:", RSP_PENDING_LOGIN, "_r1");
    const char *l = rsp_pending_key(pool, "rsp:", RSP_PENDING_LOGOUT, "_r1");
    const char *u = rsp_pending_use_key(pool, "rsp:", "_r1");
    const char *i1 = rsp_idp_request_key(pool, "rsp:", "idp", "_r1");

    ck_assert(!strncmp(q, "rsp:q:", 6) && rsp_is_hash(q + 6));
    ck_assert(!strncmp(l, "rsp:l:", 6) && rsp_is_hash(l + 6));
    ck_assert(!strncmp(u, "rsp:u:", 6) && rsp_is_hash(u + 6));
    ck_assert(!strncmp(i1, "rsp:i:", 6) && rsp_is_hash(i1 + 6));
    /* the same request, three kinds of record: the same hash */
    ck_assert_str_eq(q + 6, l + 6);
    ck_assert_str_eq(q + 6, u + 6);
    ck_assert_str_eq(q + 6, rsp_sha256_b64url(pool, "_r1", 3));
    /* an IdP's request is keyed by IdP and ID: no cross-IdP collision */
    ck_assert_str_ne(i1, rsp_idp_request_key(pool, "rsp:", "idp2", "_r1"));
    ck_assert_str_ne(rsp_idp_request_key(pool, "rsp:", "idp_", "r1"), i1);
}
END_TEST

/* The store's side: kept for the request's lifetime, read back, of its
 * kind only; used once, fleet-wide; an IdP's request taken once. */
START_TEST(test_pending_store)
{
    rsp_store_t *st = rsp_mem_store_create(pool, 1);
    const char *val = NULL, *err = NULL;
    rsp_pending_t *pd;

    ck_assert_int_eq(rsp_pending_put(st, pool, PREFIX, RSP_PENDING_LOGIN, "_r1",
                                     "idp", "sp", "tok", "/back", NULL, 300,
                                     &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_pending_read(st, pool, PREFIX, RSP_PENDING_LOGIN,
                                      "_r1", &val, &err), APR_SUCCESS);
    ck_assert_str_eq(val, rsp_pending_encode(pool, "idp", "sp", "tok", "/back",
                                             NULL));
    ck_assert_str_eq(rsp_mem_store_peek(st, -1, rsp_pending_key(
                         pool, PREFIX, RSP_PENDING_LOGIN, "_r1")), val);
    pd = rsp_pending_decode(pool, val);
    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->return_to, "/back");
    /* a LogoutRequest of the same ID is another record */
    ck_assert_int_eq(rsp_pending_read(st, pool, PREFIX, RSP_PENDING_LOGOUT,
                                      "_r1", &val, &err), APR_SUCCESS);
    ck_assert_ptr_null(val);
    /* gone after its lifetime */
    rsp_mem_store_advance(st, 299 * 1000);
    ck_assert_int_eq(rsp_pending_read(st, pool, PREFIX, RSP_PENDING_LOGIN,
                                      "_r1", &val, &err), APR_SUCCESS);
    ck_assert_ptr_nonnull(val);
    rsp_mem_store_advance(st, 2 * 1000);
    ck_assert_int_eq(rsp_pending_read(st, pool, PREFIX, RSP_PENDING_LOGIN,
                                      "_r1", &val, &err), APR_SUCCESS);
    ck_assert_ptr_null(val);
    /* a store failure is the caller's to see */
    rsp_mem_store_fault(st, 1, RSP_MEM_FAIL);
    ck_assert_int_ne(rsp_pending_read(st, pool, PREFIX, RSP_PENDING_LOGIN,
                                      "_r1", &val, &err), APR_SUCCESS);
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(test_pending_use_once)
{
    rsp_store_t *st = rsp_mem_store_create(pool, 3);
    const char *err = NULL, *ukey = rsp_pending_use_key(pool, PREFIX, "_r1");
    const char *home = rsp_pending_key(pool, PREFIX, RSP_PENDING_LOGIN, "_r1");
    rsp_claim_rec_t rec;
    int won = -1;

    ck_assert_int_eq(rsp_pending_use(st, pool, PREFIX, RSP_PENDING_LOGIN, "_r1",
                                     "replica-a", NOW, 300, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 1);
    /* the use lives with the request, as a claim record of its user */
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, rsp_store_home(st, home), ukey));
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, rsp_mem_store_peek(
                         st, rsp_store_home(st, home), ukey)), APR_SUCCESS);
    ck_assert_str_eq(rec.replica, "replica-a");
    ck_assert_int_eq(rec.claimed, NOW);
    ck_assert_int_eq(rec.open, 0);
    ck_assert_ptr_null(rec.session_hash);
    /* a second answer to the same request, from any replica: used */
    ck_assert_int_eq(rsp_pending_use(st, pool, PREFIX, RSP_PENDING_LOGIN, "_r1",
                                     "replica-b", NOW, 300, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    /* another request is not */
    ck_assert_int_eq(rsp_pending_use(st, pool, PREFIX, RSP_PENDING_LOGIN, "_r2",
                                     "replica-b", NOW, 300, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 1);
}
END_TEST

START_TEST(test_idp_request_take)
{
    rsp_store_t *st = rsp_mem_store_create(pool, 1);
    const char *err = NULL;
    int won = -1;

    ck_assert_int_eq(rsp_idp_request_take(st, pool, PREFIX, "idp", "_q", "r1",
                                          NOW, 60000, &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(rsp_idp_request_take(st, pool, PREFIX, "idp", "_q", "r2",
                                          NOW, 60000, &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    /* the same ID from another IdP is another request */
    ck_assert_int_eq(rsp_idp_request_take(st, pool, PREFIX, "idp2", "_q", "r2",
                                          NOW, 60000, &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 1);
    /* after ttl_ms, the same request may be taken again */
    rsp_mem_store_advance(st, 60001);
    ck_assert_int_eq(rsp_idp_request_take(st, pool, PREFIX, "idp", "_q", "r2",
                                          NOW, 60000, &won, &err), APR_SUCCESS);
    ck_assert_int_eq(won, 1);
}
END_TEST

static Suite *pending_suite(void)
{
    Suite *s = suite_create("rsp_pending");
    TCase *tc = tcase_create("pending");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_pending_round_trip);
    tcase_add_test(tc, test_pending_bytes);
    tcase_add_test(tc, test_pending_bound);
    tcase_add_test(tc, test_pending_refusal);
    tcase_add_test(tc, test_pending_malformed);
    tcase_add_test(tc, test_request_keys);
    tcase_add_test(tc, test_pending_store);
    tcase_add_test(tc, test_pending_use_once);
    tcase_add_test(tc, test_idp_request_take);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(pending_suite());
}
