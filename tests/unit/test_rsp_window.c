/* Unit tests for rsp_window.c: the assertion validity window and the
 * claim TTL derived from it (DESIGN.md invariant 4). */
#include "rsp_unit.h"
#include <apr_time.h>

#include "rsp_window.h"

/* 2026-11-30T10:00:00Z */
#define T0_SEC APR_INT64_C(1796032800)
#define T0 apr_time_from_sec(T0_SEC)

/*
 * The TTL comes from the assertion's own window and the SP's clock only.
 * rsp_window_check deliberately has no session-lifetime parameter: the
 * local session lifetime never enters the TTL (DESIGN.md invariant 4).
 * These tests pin the inputs it does have (times, now, skew, max window).
 */

#define SKEW 60
#define MAXW 3600
#define SEC(n) apr_time_from_sec(n)

static rsp_times_t times4(apr_time_t cnb, apr_time_t cnoa, apr_time_t snb,
                          apr_time_t snoa)
{
    rsp_times_t t;

    t.conditions_not_before = cnb;
    t.conditions_not_on_or_after = cnoa;
    t.scd_not_before = snb;
    t.scd_not_on_or_after = snoa;
    return t;
}

START_TEST(test_window_scd_earlier)
{
    rsp_times_t t = times4(T0 - SEC(5), T0 + SEC(600), 0, T0 + SEC(300));
    apr_time_t end = 0;
    apr_int64_t ttl = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(300));
    ck_assert_int_eq(ttl, 300000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_conditions_earlier)
{
    rsp_times_t t = times4(T0 - SEC(5), T0 + SEC(120), 0, T0 + SEC(300));
    apr_time_t end = 0;
    apr_int64_t ttl = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(120));
    ck_assert_int_eq(ttl, 120000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_only_one)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(200));

    /* only SCD NotOnOrAfter */
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(200));
    ck_assert_int_eq(ttl, 200000 + SKEW * 1000);

    /* only Conditions NotOnOrAfter */
    t = times4(0, T0 + SEC(250), 0, 0);
    end = 0;
    ttl = 0;
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(250));
    ck_assert_int_eq(ttl, 250000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_missing)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, 0);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_MISSING);
    /* NotBefore alone does not make a window */
    t = times4(T0 - SEC(5), 0, T0 - SEC(5), 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_MISSING);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_MISSING),
                     "window-missing");
}
END_TEST

START_TEST(test_window_expired)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0);

    /* now == end + skew: expired */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* well past */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(3600), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* skew 0: now == end is expired (NotOnOrAfter) */
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* the earlier of the two ends decides */
    t = times4(0, T0 + SEC(600), 0, T0);
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    t = times4(0, T0, 0, T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_EXPIRED), "expired");
}
END_TEST

START_TEST(test_window_within_skew)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0);

    /* 30 s past the end, skew 60: still OK, ttl = -30000 + 60000 */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(30), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0);
    ck_assert_int_eq(ttl, -30000 + SKEW * 1000);

    /* 1 us before end + skew: OK; remaining = -(60 s - 1 us), rounded up
     * to -59999 ms, + 60000 = 1 */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW) - 1, SKEW, MAXW, &end,
                                      &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1);

    /* remaining = -1.5 ms rounds up to -1 ms */
    ck_assert_int_eq(rsp_window_check(&t, T0 + 1500, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, -1 + SKEW * 1000);

    /* exactly at the end: remaining 0 */
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, SKEW * 1000);
}
END_TEST

START_TEST(test_window_not_yet_valid_conditions)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* Conditions NotBefore at now + skew + 1 us: not yet valid */
    rsp_times_t t = times4(T0 + SEC(SKEW) + 1, T0 + SEC(600), 0, 0);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    /* exactly now + skew: valid */
    t = times4(T0 + SEC(SKEW), T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 600000 + SKEW * 1000);
    /* skew 0: NotBefore 1 us ahead fails, == now passes */
    t = times4(T0 + 1, T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    t = times4(T0, T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_NOT_YET_VALID),
                     "not-yet-valid");
}
END_TEST

START_TEST(test_window_not_yet_valid_scd)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* SCD NotBefore at now + skew + 1 us: not yet valid */
    rsp_times_t t = times4(0, 0, T0 + SEC(SKEW) + 1, T0 + SEC(600));

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    /* boundary: exactly now + skew is valid */
    t = times4(0, 0, T0 + SEC(SKEW), T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(600));
    ck_assert_int_eq(ttl, 600000 + SKEW * 1000);
    /* Conditions NotBefore fine, SCD NotBefore in the future: rejected */
    t = times4(T0 - SEC(10), T0 + SEC(600), T0 + SEC(SKEW + 5), T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
}
END_TEST

START_TEST(test_window_too_long)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* remaining = max + skew + 1 us: refused */
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(MAXW + SKEW) + 1);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_TOO_LONG);
    /* exactly max + skew (an IdP clock the whole skew ahead): OK, and the
     * claim covers it all plus the skew */
    t = times4(0, 0, 0, T0 + SEC(MAXW + SKEW));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(MAXW + SKEW));
    ck_assert_int_eq(ttl, (apr_int64_t)(MAXW + 2 * SKEW) * 1000);
    /* exactly max: OK */
    t = times4(0, 0, 0, T0 + SEC(MAXW));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, (apr_int64_t)MAXW * 1000 + SKEW * 1000);
    /* with no skew tolerated, max is the limit */
    t = times4(0, 0, 0, T0 + SEC(MAXW) + 1);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_TOO_LONG);
    /* the shorter Conditions end decides: not too long */
    t = times4(0, T0 + SEC(MAXW), 0, T0 + SEC(10 * MAXW));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(MAXW));
    /* the window is never silently shortened: too long is rejected */
    t = times4(0, T0 + SEC(MAXW + SKEW + 1), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_TOO_LONG);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_TOO_LONG),
                     "window-too-long");
}
END_TEST

/* Microsoft Entra ID: Conditions and SubjectConfirmationData end 65
 * minutes after a NotBefore back-dated 5 minutes from the IssueInstant.
 * With the defaults (window 3900 s, skew 60 s), such an assertion signs in
 * whether the IdP's clock is ours or up to the skew ahead, and whether or
 * not its NotBefore is back-dated; 65 minutes from a clock more than the
 * skew ahead is refused. */
#define DEF_MAXW 3900
#define DEF_SKEW 60

static rsp_window_verdict_t entra(apr_int64_t ahead_s, apr_int64_t back_s,
                                  apr_int64_t *ttl)
{
    apr_time_t issued = T0 + SEC(ahead_s), end = 0;
    apr_time_t nb = issued - SEC(back_s), noa = nb + SEC(65 * 60);
    rsp_times_t t = times4(nb, noa, 0, noa);

    return rsp_window_check(&t, T0, DEF_SKEW, DEF_MAXW, &end, ttl);
}

START_TEST(test_window_entra_defaults)
{
    apr_int64_t ttl = 0;

    ck_assert_int_eq(entra(0, 300, &ttl), RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, (apr_int64_t)(3600 + DEF_SKEW) * 1000);
    ck_assert_int_eq(entra(30, 300, &ttl), RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, (apr_int64_t)(3630 + DEF_SKEW) * 1000);
    ck_assert_int_eq(entra(60, 300, &ttl), RSP_WINDOW_OK);
    /* not back-dated: 65 minutes remain */
    ck_assert_int_eq(entra(0, 0, &ttl), RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, (apr_int64_t)(3900 + DEF_SKEW) * 1000);
    ck_assert_int_eq(entra(30, 0, &ttl), RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, (apr_int64_t)(3930 + DEF_SKEW) * 1000);
    /* a clock further ahead than the skew tolerates */
    ck_assert_int_eq(entra(61, 0, &ttl), RSP_WINDOW_NOT_YET_VALID);
    ck_assert_int_eq(entra(61, 300, &ttl), RSP_WINDOW_OK);
    ck_assert_int_eq(entra(361, 300, &ttl), RSP_WINDOW_NOT_YET_VALID);
}
END_TEST

START_TEST(test_window_ttl_rounding)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* remaining 299.0001 s -> 299001 ms (rounded up) + skew */
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(299) + 100);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 299001 + SKEW * 1000);

    /* remaining 299 s exactly: no rounding */
    t = times4(0, 0, 0, T0 + SEC(299));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 299000 + SKEW * 1000);

    /* remaining 1 us -> 1 ms */
    t = times4(0, 0, 0, T0 + 1);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1 + SKEW * 1000);

    /* remaining 999 us -> 1 ms; 1001 us -> 2 ms */
    t = times4(0, 0, 0, T0 + 999);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1 + SKEW * 1000);
    t = times4(0, 0, 0, T0 + 1001);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 2 + SKEW * 1000);

    /* skew 0, remaining 1 us: ttl 1 ms, never 0 */
    t = times4(0, 0, 0, T0 + 1);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1);
}
END_TEST

START_TEST(test_window_skew_added_exactly)
{
    /* Widening the skew widens retention by exactly that much. */
    static const apr_int64_t skews[] = { 0, 1, 30, 60, 180, 300, 3600 };
    rsp_times_t t = times4(T0 - SEC(1), T0 + SEC(299) + 100, T0 - SEC(1),
                           T0 + SEC(500));
    apr_time_t end0 = 0;
    apr_int64_t ttl0 = 0;
    apr_size_t i;

    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end0, &ttl0),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl0, 299001);
    for (i = 0; i < sizeof(skews) / sizeof(skews[0]); i++) {
        apr_time_t end = 0;
        apr_int64_t ttl = 0;

        ck_assert_int_eq(rsp_window_check(&t, T0, skews[i], MAXW, &end, &ttl),
                         RSP_WINDOW_OK);
        ck_assert_int_eq(end, end0);
        ck_assert_int_eq(ttl - ttl0, skews[i] * 1000);
    }
}
END_TEST

START_TEST(test_window_ttl_from_window_only)
{
    /* No session lifetime is passed in (see the comment above): the TTL is
     * the window's remaining time plus the skew, whatever the session
     * lifetime is configured to. An 8-hour window with a 24-hour maximum
     * gives an 8-hour (+ skew) TTL; the same window seen 1 h later gives a
     * TTL exactly 1 h shorter (SP's clock, relative value). */
    rsp_times_t t = times4(0, T0 + SEC(8 * 3600), 0, 0);
    apr_time_t end = 0;
    apr_int64_t ttl = 0, ttl_later = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, 24 * 3600, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, APR_INT64_C(8) * 3600 * 1000 + SKEW * 1000);
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(3600), SKEW, 24 * 3600, &end,
                                      &ttl_later),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl - ttl_later, 3600 * 1000);
}
END_TEST

START_TEST(test_verdict_names)
{
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_OK), "ok");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_MISSING), "window-missing");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_EXPIRED), "expired");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_NOT_YET_VALID),
                     "not-yet-valid");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_TOO_LONG),
                     "window-too-long");
}
END_TEST

static Suite *window_suite(void)
{
    Suite *s = suite_create("rsp_window");
    TCase *tc;

    tc = tcase_create("window");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_window_scd_earlier);
    tcase_add_test(tc, test_window_conditions_earlier);
    tcase_add_test(tc, test_window_only_one);
    tcase_add_test(tc, test_window_missing);
    tcase_add_test(tc, test_window_expired);
    tcase_add_test(tc, test_window_within_skew);
    tcase_add_test(tc, test_window_not_yet_valid_conditions);
    tcase_add_test(tc, test_window_not_yet_valid_scd);
    tcase_add_test(tc, test_window_too_long);
    tcase_add_test(tc, test_window_entra_defaults);
    tcase_add_test(tc, test_window_ttl_rounding);
    tcase_add_test(tc, test_window_skew_added_exactly);
    tcase_add_test(tc, test_window_ttl_from_window_only);
    tcase_add_test(tc, test_verdict_names);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(window_suite());
}
