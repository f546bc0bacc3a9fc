/* The standalone Redis topology (rsp_redis_standalone.c) against fake
 * servers: every key's commands go to the one server of the URL, over
 * connections of its pool; INFO is asked of it; an error reply says
 * nothing about the topology (no redirection is followed, the connection
 * stays); the server down is an error naming it. Real servers:
 * test_rsp_store_redis. */
#include <signal.h>
#include <string.h>

#include <check.h>
#include <apr_strings.h>

#include "rsp_redis.h"
#include "rsp_store.h"
#include "rsp_unit.h"
#include "rsp_unit_server.h"

#define HOST "127.0.0.1"
#define INFO_TEXT "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"

static rsp_store_t *at(int port, int max_conns)
{
    return store_open(apr_psprintf(pool, "redis://" HOST ":%d/0", port), T_NORMAL,
                      max_conns);
}

START_TEST(test_the_topology_of_a_redis_url)
{
    rsp_store_t *st = at(dead_port(), 1);
    rsp_redis_t *impl = st->impl;

    ck_assert_ptr_eq(impl->topo, &rsp_redis_standalone);
    ck_assert_str_eq(impl->topo->name, "standalone");
    ck_assert_int_eq(impl->topo->keys_apart, 0);
    ck_assert_ptr_null(impl->topo->on_error);
    ck_assert_int_eq(rsp_store_servers(st), 1);
}
END_TEST

START_TEST(test_every_key_to_the_one_server)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t a, b;

    fake_start(&s, fake_replies("+OK\r\n", "$-1\r\n", NULL), 0, 0);
    st = at(s.port, 1);
    a = timed_claim(st, "k:{one}");
    b = timed_claim(st, "k:{other}");
    fake_join(&s);
    assert_won("the first key", a);
    ck_assert(b.rv == APR_SUCCESS && !b.won);   /* taken: a nil reply */
    ck_assert(contains(s.got, "k:{one}") && contains(s.got, "k:{other}"));
}
END_TEST

START_TEST(test_info_from_the_server)
{
    fake_server_t s;
    const char *text = NULL, *err = NULL, *reply;
    rsp_store_t *st;

    reply = apr_psprintf(pool, "$%d\r\n%s\r\n", (int)strlen(INFO_TEXT), INFO_TEXT);
    fake_start(&s, fake_replies(reply, NULL), 0, 1);
    st = at(s.port, 1);
    ck_assert_int_eq(rsp_store_info(st, pool, "replication", &text, &err), APR_SUCCESS);
    fake_join(&s);
    ck_assert_msg(contains(text, "role:master"), "%s", ERR_S(text));
    ck_assert_msg(contains(s.got, "INFO") && contains(s.got, "replication"), "%s", s.got);
}
END_TEST

START_TEST(test_a_redirection_is_not_followed)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, fake_replies("-MOVED 3999 127.0.0.1:1\r\n", "+OK\r\n", NULL), 0, 0);
    st = at(s.port, 1);
    o = timed_claim(st, "k:moved");
    assert_failed(o, "MOVED 3999");
    o = timed_claim(st, "k:stays");
    fake_join(&s);
    assert_won("the next claim on the same connection", o);
}
END_TEST

START_TEST(test_the_server_down)
{
    int port = dead_port();
    rsp_store_t *st = at(port, 1);
    outcome_t o = timed_claim(st, "k:down");

    ck_assert(o.rv != APR_SUCCESS && o.won != 1 && o.err && *o.err);
    ck_assert_msg(contains(o.err, apr_psprintf(pool, "%d", port)), "%s", ERR_S(o.err));
    ck_assert_int_lt(o.ms, 2000);
}
END_TEST

static Suite *redis_standalone_suite(void)
{
    Suite *s = suite_create("rsp_redis_standalone");
    TCase *tc = tcase_create("fake servers");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_the_topology_of_a_redis_url);
    tcase_add_test(tc, test_every_key_to_the_one_server);
    tcase_add_test(tc, test_info_from_the_server);
    tcase_add_test(tc, test_a_redirection_is_not_followed);
    tcase_add_test(tc, test_the_server_down);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return rsp_unit_run(redis_standalone_suite());
}
