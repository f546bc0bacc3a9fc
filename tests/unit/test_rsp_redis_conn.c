/* A pooled Redis connection (rsp_redis_conn.c) against fake servers (each
 * a thread answering one connection's requests in turn): AUTH (a
 * password, an ACL user) and SELECT before the first command, each
 * refusal with what was refused; an error reply that keeps the
 * connection, a reply cut short by the server closing; one that trickles its
 * reply, bounded by the timeout; the commands of a pipeline as one write;
 * host:port as messages name a server. Real servers: test_rsp_store_redis. */
#include <signal.h>
#include <string.h>

#include <check.h>
#include <apr_strings.h>

#include "rsp_redis.h"
#include "rsp_store.h"
#include "rsp_unit.h"
#include "rsp_unit_server.h"

#define HOST "127.0.0.1"

/* where needle first is in s, -1: nowhere */
static long at(const char *s, const char *needle)
{
    const char *f = strstr(s, needle);

    return f ? (long)(f - s) : -1;
}

START_TEST(test_auth_and_select_before_the_first_command)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, fake_replies("+OK\r\n", "+OK\r\n", "+OK\r\n", NULL), 0, 1);
    st = store_open(apr_psprintf(pool, "redis://ops:s3cret@" HOST ":%d/3", s.port),
                    T_NORMAL, 1);
    o = timed_claim(st, "k:auth");
    fake_join(&s);
    assert_won("a claim after AUTH and SELECT", o);
    ck_assert_msg(at(s.got, "AUTH") >= 0 && at(s.got, "AUTH") < at(s.got, "ops")
                  && at(s.got, "ops") < at(s.got, "s3cret")
                  && at(s.got, "s3cret") < at(s.got, "SELECT")
                  && at(s.got, "SELECT") < at(s.got, "k:auth"), "%s", s.got);
    ck_assert(contains(s.got, "$1\r\n3\r\n"));
}
END_TEST

START_TEST(test_a_password_alone_and_db_0)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, fake_replies("+OK\r\n", "+OK\r\n", NULL), 0, 1);
    st = store_open(apr_psprintf(pool, "redis://:pw@" HOST ":%d/0", s.port), T_NORMAL, 1);
    o = timed_claim(st, "k:pw");
    fake_join(&s);
    assert_won("a claim after AUTH with a password alone", o);
    ck_assert_msg(contains(s.got, "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n"), "%s", s.got);
    ck_assert_msg(!contains(s.got, "SELECT"), "%s", s.got);
}
END_TEST

START_TEST(test_auth_refused)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, fake_replies("-WRONGPASS invalid username-password pair\r\n", NULL), 0, 1);
    st = store_open(apr_psprintf(pool, "redis://ops:bad@" HOST ":%d/0", s.port), T_NORMAL, 1);
    o = timed_claim(st, "k:wrongpass");
    fake_join(&s);
    assert_failed(o, "AUTH refused: WRONGPASS invalid username-password pair");
    ck_assert_msg(!contains(o.err, "bad"), "the password shown: %s", o.err);
    ck_assert(!contains(s.got, "k:wrongpass"));
}
END_TEST

START_TEST(test_select_refused)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, fake_replies("-ERR DB index is out of range\r\n", NULL), 0, 1);
    st = store_open(apr_psprintf(pool, "redis://" HOST ":%d/15", s.port), T_NORMAL, 1);
    o = timed_claim(st, "k:select");
    fake_join(&s);
    assert_failed(o, "SELECT refused: ERR DB index is out of range");
}
END_TEST

START_TEST(test_an_error_reply_keeps_the_connection)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    /* one connection only: the second claim goes over the same one */
    fake_start(&s, fake_replies("-OOM command not allowed when used memory > 'maxmemory'\r\n",
                                "+OK\r\n", NULL), 0, 0);
    st = store_open(apr_psprintf(pool, "redis://" HOST ":%d/0", s.port), T_NORMAL, 1);
    o = timed_claim(st, "k:oom");
    assert_failed(o, "OOM command not allowed");
    o = timed_claim(st, "k:again");
    fake_join(&s);
    assert_won("a claim on the connection the error reply left", o);
    ck_assert(contains(s.got, "k:again"));
}
END_TEST

START_TEST(test_a_reply_cut_short)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    /* half a reply, then the server closes */
    fake_start(&s, fake_replies("$10\r\nabc", NULL), 0, 1);
    st = store_open(apr_psprintf(pool, "redis://" HOST ":%d/0", s.port), T_NORMAL, 1);
    o = timed_claim(st, "k:cut");
    fake_join(&s);
    assert_failed(o, "connection closed by the server");
    ck_assert_int_lt(o.ms, 2000);
}
END_TEST

START_TEST(test_a_trickled_reply_is_bounded)
{
    fake_server_t s;

    check_trickled_claim(&s, "redis://" HOST ":", "+OK\r\n", 200);
}
END_TEST

START_TEST(test_a_pipeline_is_one_write)
{
    rsp_redis_conn_t c;
    int i;

    memset(&c, 0, sizeof(c));
    for (i = 0; i < RSP_REDIS_MAX_PIPE + 2; i++) {
        ck_assert_int_eq(rsp_redis_append(&c, "SET k%d %s", i, "v"), REDIS_OK);
    }
    ck_assert_int_eq(c.ncmd, RSP_REDIS_MAX_PIPE + 2);
    ck_assert_msg(!strncmp(c.out, "*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$1\r\nv\r\n", 27), "%s", c.out);
    /* where each command ends is remembered for the first ones */
    ck_assert_uint_eq(c.cmd_end[0], strlen("*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$1\r\nv\r\n"));
    ck_assert_uint_lt(c.cmd_end[RSP_REDIS_MAX_PIPE - 1], c.out_len);
    ck_assert_int_eq(rsp_redis_append_raw(&c, "PING\r\n", 6), REDIS_OK);
    ck_assert(!memcmp(c.out + c.out_len - 6, "PING\r\n", 6));
    rsp_redis_clear(&c);
}
END_TEST

START_TEST(test_hostport)
{
    ck_assert_str_eq(rsp_redis_hostport(pool, "redis.example", 6379), "redis.example:6379");
    ck_assert_str_eq(rsp_redis_hostport(pool, "::1", 7000), "[::1]:7000");
}
END_TEST

static Suite *redis_conn_suite(void)
{
    Suite *s = suite_create("rsp_redis_conn");
    TCase *tc = tcase_create("fake servers");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_auth_and_select_before_the_first_command);
    tcase_add_test(tc, test_a_password_alone_and_db_0);
    tcase_add_test(tc, test_auth_refused);
    tcase_add_test(tc, test_select_refused);
    tcase_add_test(tc, test_an_error_reply_keeps_the_connection);
    tcase_add_test(tc, test_a_reply_cut_short);
    tcase_add_test(tc, test_a_trickled_reply_is_bounded);
    tcase_add_test(tc, test_a_pipeline_is_one_write);
    tcase_add_test(tc, test_hostport);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return rsp_unit_run(redis_conn_suite());
}
