/* The Sentinel topology (rsp_redis_sentinel.c) against fake sentinels and
 * fake masters: each a thread that answers the requests of one connection
 * in turn. The client rules: the sentinels asked in turn for the master
 * at every new connection, the master's ROLE checked, a master that has
 * become a replica (READONLY) left for the one the sentinels give next.
 * Real sentinels and failovers are the fleet's (test_sentinel.py). */
#include <signal.h>
#include <string.h>

#include <check.h>
#include <apr_strings.h>

#include "rsp_store.h"
#include "rsp_unit.h"
#include "rsp_unit_server.h"

#define HOST "127.0.0.1"
#define MASTER "mymaster"
#define ROLE_MASTER "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"

/* A sentinel's answer: the master at port. */
static const char *address(int port)
{
    const char *p = apr_psprintf(pool, "%d", port);

    return apr_psprintf(pool, "*2\r\n$9\r\n" HOST "\r\n$%d\r\n%s\r\n",
                        (int)strlen(p), p);
}

static const char **replies(const char *first, const char *second)
{
    const char **r = apr_pcalloc(pool, 3 * sizeof(*r));

    r[0] = first;
    r[1] = second;
    return r;
}

/* A store under the sentinels at these ports, in this order. */
static rsp_store_t *under(apr_interval_time_t timeout, int s1, int s2)
{
    const char *url = s2
        ? apr_psprintf(pool, "redis+sentinel://" HOST ":%d," HOST ":%d/" MASTER,
                       s1, s2)
        : apr_psprintf(pool, "redis+sentinel://" HOST ":%d/" MASTER, s1);

    return store_open(url, timeout, 1);
}

static void assert_primary(rsp_store_t *st, int port)
{
    const char *m = rsp_store_primary(st, pool);

    ck_assert_msg(m && !strcmp(m, apr_psprintf(pool, HOST ":%d", port)),
                  "primary %s, want port %d", m ? m : "(none)", port);
}

START_TEST(test_the_master_the_sentinel_gives)
{
    fake_server_t s, m;
    const char **rs = replies(NULL, NULL);
    rsp_store_t *st;
    outcome_t o;

    fake_start(&m, replies(ROLE_MASTER, "+OK\r\n"), 0, 1);
    rs[0] = address(m.port);
    fake_start(&s, rs, 0, 1);
    st = under(T_NORMAL, s.port, 0);
    ck_assert_ptr_null(rsp_store_primary(st, pool));
    o = timed_claim(st, "k:s");
    fake_join(&s);
    fake_join(&m);
    assert_won("a claim on the master the sentinel gave", o);
    ck_assert(contains(s.got, "get-master-addr-by-name"));
    ck_assert(contains(s.got, MASTER));
    ck_assert(contains(m.got, "ROLE"));
    ck_assert(contains(m.got, "k:s"));
    assert_primary(st, m.port);
}
END_TEST

START_TEST(test_the_next_sentinel_when_one_is_down)
{
    fake_server_t s, m;
    const char **rs = replies(NULL, NULL);
    rsp_store_t *st;
    outcome_t o;

    fake_start(&m, replies(ROLE_MASTER, "+OK\r\n"), 0, 1);
    rs[0] = address(m.port);
    fake_start(&s, rs, 0, 1);
    st = under(T_NORMAL, dead_port(), s.port);
    o = timed_claim(st, "k:next");
    fake_join(&s);
    fake_join(&m);
    assert_won("a claim after the first sentinel refused", o);
    assert_primary(st, m.port);
}
END_TEST

START_TEST(test_the_sentinels_do_not_know_the_master)
{
    fake_server_t s1, s2;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s1, replies("*-1\r\n", NULL), 0, 1);
    fake_start(&s2, replies("*-1\r\n", NULL), 0, 1);
    st = under(T_NORMAL, s1.port, s2.port);
    o = timed_claim(st, "k:unknown");
    fake_join(&s1);
    fake_join(&s2);
    assert_failed(o, "the sentinels do not know the master " MASTER
                     " (every one answered: check the name)");
}
END_TEST

START_TEST(test_one_sentinel_does_not_know_the_other_is_down)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, replies("*-1\r\n", NULL), 0, 1);
    st = under(T_NORMAL, s.port, dead_port());
    o = timed_claim(st, "k:half");
    fake_join(&s);
    assert_failed(o, "no sentinel gave the address of the master " MASTER);
    assert_failed(o, "does not know it");
}
END_TEST

START_TEST(test_no_sentinel_answers)
{
    rsp_store_t *st = under(T_SHORT, dead_port(), dead_port());
    outcome_t o = timed_claim(st, "k:none");

    assert_failed(o, "no sentinel answered");
    ck_assert_msg(o.ms < HUNG_BOUND_MS, "took %lld ms", o.ms);
}
END_TEST

START_TEST(test_a_malformed_address)
{
    fake_server_t s;
    rsp_store_t *st;
    outcome_t o;

    fake_start(&s, replies("*2\r\n$9\r\n" HOST "\r\n$5\r\n63xy9\r\n", NULL), 0,
               1);
    st = under(T_NORMAL, s.port, 0);
    o = timed_claim(st, "k:malformed");
    fake_join(&s);
    assert_failed(o, "a malformed address");
}
END_TEST

START_TEST(test_a_master_that_says_it_is_a_replica)
{
    fake_server_t s, m;
    const char **rs = replies(NULL, NULL);
    rsp_store_t *st;
    outcome_t o;

    fake_start(&m, replies("*5\r\n$5\r\nslave\r\n$9\r\n" HOST "\r\n:6379\r\n"
                           "$9\r\nconnected\r\n:0\r\n", NULL), 0, 1);
    rs[0] = address(m.port);
    fake_start(&s, rs, 0, 1);
    st = under(T_NORMAL, s.port, 0);
    o = timed_claim(st, "k:demoted");
    fake_join(&s);
    fake_join(&m);
    assert_failed(o, "answers ROLE slave: not the master");
    ck_assert_int_eq(contains(m.got, "k:demoted"), 0);
}
END_TEST

START_TEST(test_readonly_asks_the_sentinels_again)
{
    fake_server_t s1, s2, m1, m2;
    const char **r1 = replies(NULL, NULL), **r2 = replies(NULL, NULL);
    rsp_store_t *st;
    outcome_t o;

    /* m1 keeps its connection open: only the client's drop ends it */
    fake_start(&m1, replies(ROLE_MASTER, "-READONLY You can't write against "
                            "a read only replica.\r\n"), 0, 0);
    fake_start(&m2, replies(ROLE_MASTER, "+OK\r\n"), 0, 1);
    r1[0] = address(m1.port);
    r2[0] = address(m2.port);
    fake_start(&s1, r1, 0, 1);
    fake_start(&s2, r2, 0, 1);
    /* s1 answers once: asked again, it holds the question until its share
     * of the timeout is over, and s2 gives the new master */
    st = under(apr_time_from_sec(1), s1.port, s2.port);
    o = timed_claim(st, "k:ro");
    assert_failed(o, "READONLY");
    assert_primary(st, m1.port);
    o = timed_claim(st, "k:ro");
    fake_join(&s1);
    fake_join(&s2);
    fake_join(&m1);
    fake_join(&m2);
    assert_won("the claim on the master the sentinels gave next", o);
    assert_primary(st, m2.port);
}
END_TEST

static Suite *redis_sentinel_suite(void)
{
    Suite *s = suite_create("rsp_redis_sentinel");
    TCase *tc = tcase_create("fake sentinels");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_the_master_the_sentinel_gives);
    tcase_add_test(tc, test_the_next_sentinel_when_one_is_down);
    tcase_add_test(tc, test_the_sentinels_do_not_know_the_master);
    tcase_add_test(tc, test_one_sentinel_does_not_know_the_other_is_down);
    tcase_add_test(tc, test_no_sentinel_answers);
    tcase_add_test(tc, test_a_malformed_address);
    tcase_add_test(tc, test_a_master_that_says_it_is_a_replica);
    tcase_add_test(tc, test_readonly_asks_the_sentinels_again);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return rsp_unit_run(redis_sentinel_suite());
}
