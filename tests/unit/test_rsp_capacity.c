/* Unit tests for rsp_capacity.c: the store's sizing rule (the operations
 * guide's, and replay-sp capacity's). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_capacity.h"

static const rsp_capacity_line_t *line(apr_array_header_t *a, int i)
{
    return &APR_ARRAY_IDX(a, i, rsp_capacity_line_t);
}

static rsp_capacity_in_t base(void)
{
    rsp_capacity_in_t in;

    memset(&in, 0, sizeof(in));
    in.rate = 50;
    in.window_s = 300;
    in.skew_s = 60;
    in.session_s = 28800;
    in.sessions = -1;
    in.request_s = 300;
    return in;
}

START_TEST(test_unsolicited)
{
    rsp_capacity_in_t in = base();
    double total = -1;
    apr_array_header_t *a = rsp_capacity(pool, &in, &total);

    ck_assert_int_eq(a->nelts, 3);
    /* claims: every sign-in of a window and its skew */
    ck_assert_str_eq(line(a, 0)->what, "claims");
    ck_assert_double_eq(line(a, 0)->count, 50.0 * 360);
    ck_assert_int_eq(line(a, 0)->bytes_each, RSP_BYTES_CLAIM);
    ck_assert_double_eq(line(a, 0)->bytes, 50.0 * 360 * RSP_BYTES_CLAIM);
    ck_assert_str_eq(line(a, 0)->why, "50/s x (window 300 s + skew 60 s)");
    /* sessions: every sign-in of a session lifetime */
    ck_assert_str_eq(line(a, 1)->what, "sessions");
    ck_assert_double_eq(line(a, 1)->count, 50.0 * 28800);
    ck_assert_int_eq(line(a, 1)->bytes_each, RSP_BYTES_SESSION);
    ck_assert_str_eq(line(a, 1)->why, "50/s x session lifetime 28800 s");
    /* two index entries per session */
    ck_assert_str_eq(line(a, 2)->what, "logout index entries");
    ck_assert_double_eq(line(a, 2)->count, 2 * 50.0 * 28800);
    ck_assert_int_eq(line(a, 2)->bytes_each, RSP_BYTES_INDEX);
    ck_assert_double_eq(total, 50.0 * 360 * RSP_BYTES_CLAIM
                                   + 50.0 * 28800 * RSP_BYTES_SESSION
                                   + 2 * 50.0 * 28800 * RSP_BYTES_INDEX);
}
END_TEST

START_TEST(test_sessions_given)
{
    rsp_capacity_in_t in = base();
    double total = 0;
    apr_array_header_t *a;

    in.sessions = 1000;
    a = rsp_capacity(pool, &in, &total);
    ck_assert_double_eq(line(a, 1)->count, 1000);
    ck_assert_str_eq(line(a, 1)->why, "1000 signed-in users");
    ck_assert_double_eq(line(a, 2)->count, 2000);
    /* none at all is a count too, not "every sign-in" */
    in.sessions = 0;
    a = rsp_capacity(pool, &in, &total);
    ck_assert_double_eq(line(a, 1)->count, 0);
    ck_assert_double_eq(total, 50.0 * 360 * RSP_BYTES_CLAIM);
}
END_TEST

START_TEST(test_sp_initiated_and_memcached)
{
    rsp_capacity_in_t in = base();
    double plain = 0, total = 0;
    apr_array_header_t *a;

    rsp_capacity(pool, &in, &plain);
    in.sp_initiated = 1;
    in.request_s = 120;
    a = rsp_capacity(pool, &in, &total);
    ck_assert_int_eq(a->nelts, 5);
    ck_assert_str_eq(line(a, 3)->what, "pending requests");
    ck_assert_double_eq(line(a, 3)->count, 50.0 * 120);
    ck_assert_int_eq(line(a, 3)->bytes_each, RSP_BYTES_PENDING);
    ck_assert_str_eq(line(a, 4)->what, "request uses");
    ck_assert_double_eq(line(a, 4)->count, 50.0 * 120);
    ck_assert_int_eq(line(a, 4)->bytes_each, RSP_BYTES_USE);
    ck_assert_str_eq(line(a, 4)->why, "50/s x request lifetime 120 s");
    ck_assert_double_eq(total, plain + 50.0 * 120 * (RSP_BYTES_PENDING
                                                     + RSP_BYTES_USE));
    /* memcached: the total (not the lines) times its factor */
    in.memcached = 1;
    a = rsp_capacity(pool, &in, &plain);
    ck_assert_double_eq(plain, total * RSP_MEMCACHED_FACTOR);
    ck_assert_double_eq(line(a, 0)->bytes, 50.0 * 360 * RSP_BYTES_CLAIM);
}
END_TEST

START_TEST(test_fractional_rate)
{
    rsp_capacity_in_t in = base();
    double total = 0;
    apr_array_header_t *a;

    in.rate = 0.5;
    a = rsp_capacity(pool, &in, &total);
    ck_assert_double_eq(line(a, 0)->count, 180);
    /* with its leading zero (APR's %g writes none) */
    ck_assert_str_eq(line(a, 0)->why, "0.5/s x (window 300 s + skew 60 s)");
    ck_assert_str_eq(line(a, 1)->why, "0.5/s x session lifetime 28800 s");
    in.rate = 0;
    rsp_capacity(pool, &in, &total);
    ck_assert_double_eq(total, 0);
}
END_TEST

static Suite *capacity_suite(void)
{
    Suite *s = suite_create("rsp_capacity");
    TCase *tc = tcase_create("capacity");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_unsolicited);
    tcase_add_test(tc, test_sessions_given);
    tcase_add_test(tc, test_sp_initiated_and_memcached);
    tcase_add_test(tc, test_fractional_rate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(capacity_suite());
}
