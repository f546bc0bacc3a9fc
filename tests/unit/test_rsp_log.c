/* Unit tests for rsp_log.c: the library's logging seam. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_log.h"

typedef struct {
    int calls;
    int level;
    char msg[2048];
} seen_t;

static void sink(void *baton, int level, const char *msg)
{
    seen_t *s = baton;

    s->calls++;
    s->level = level;
    apr_cpystrn(s->msg, msg, sizeof(s->msg));
}

static void teardown(void)
{
    rsp_log_set_sink(NULL, NULL);
    rsp_unit_teardown();
}

START_TEST(test_no_sink)
{
    /* before the glue sets one: nothing, and no crash */
    rsp_log_set_sink(NULL, NULL);
    rsp_log(RSP_LOG_ERR, "dropped %d", 1);
}
END_TEST

START_TEST(test_sink)
{
    seen_t s;

    memset(&s, 0, sizeof(s));
    rsp_log_set_sink(sink, &s);
    rsp_log(RSP_LOG_WARNING, "claim %s by %s: %d", "a:xyz", "r1", 42);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.level, RSP_LOG_WARNING);
    ck_assert_str_eq(s.msg, "claim a:xyz by r1: 42");
    rsp_log(RSP_LOG_DEBUG, "%s", "");
    ck_assert_int_eq(s.calls, 2);
    ck_assert_int_eq(s.level, RSP_LOG_DEBUG);
    ck_assert_str_eq(s.msg, "");
    /* the sink set last is the one called */
    {
        seen_t t;
        memset(&t, 0, sizeof(t));
        rsp_log_set_sink(sink, &t);
        rsp_log(RSP_LOG_INFO, "x");
        ck_assert_int_eq(t.calls, 1);
        ck_assert_int_eq(s.calls, 2);
    }
}
END_TEST

START_TEST(test_truncated)
{
    seen_t s;
    char *big = apr_palloc(pool, 3000);

    memset(big, 'x', 2999);
    big[2999] = '\0';
    memset(&s, 0, sizeof(s));
    rsp_log_set_sink(sink, &s);
    rsp_log(RSP_LOG_ERR, "[%s]", big);
    /* at most 1023 bytes reach the sink, NUL-terminated */
    ck_assert_int_eq(s.calls, 1);
    ck_assert_uint_eq(strlen(s.msg), 1023);
    ck_assert_int_eq(s.msg[0], '[');
    ck_assert_int_eq(s.msg[1022], 'x');
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("rsp_log");
    TCase *tc = tcase_create("log");

    tcase_add_checked_fixture(tc, rsp_unit_setup, teardown);
    tcase_add_test(tc, test_no_sink);
    tcase_add_test(tc, test_sink);
    tcase_add_test(tc, test_truncated);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(log_suite());
}
