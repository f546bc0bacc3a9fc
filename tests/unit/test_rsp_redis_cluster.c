/* The Cluster topology (rsp_redis_cluster.c) against fake nodes: short
 * scripted conversations, each node a thread that answers the requests of
 * one connection in turn. What a real cluster cannot be made to say on
 * demand: MOVED to a node not in the map, ASK and a refused ASKING,
 * CLUSTERDOWN, a shard without a master, redirections without end. The
 * real cluster's cases (migration under load, failover, WAIT per shard)
 * are test_rsp_store_cluster's. */
#include <signal.h>
#include <string.h>

#include <check.h>
#include <apr_strings.h>

#include "rsp_store.h"
#include "rsp_unit.h"
#include "rsp_unit_server.h"

#define HOST "127.0.0.1"

/* One shard of a CLUSTER SHARDS reply: slots lo-hi, one node. */
static const char *shard(int lo, int hi, int port, const char *role)
{
    return apr_psprintf(pool,
                        "*4\r\n$5\r\nslots\r\n*2\r\n:%d\r\n:%d\r\n"
                        "$5\r\nnodes\r\n*1\r\n*8\r\n"
                        "$4\r\nport\r\n:%d\r\n"
                        "$8\r\nendpoint\r\n$9\r\n" HOST "\r\n"
                        "$4\r\nrole\r\n$%d\r\n%s\r\n"
                        "$6\r\nhealth\r\n$6\r\nonline\r\n",
                        lo, hi, port, (int)strlen(role), role);
}

/* The map: every slot served by the master at port. */
static const char *all_slots(int port)
{
    return apr_pstrcat(pool, "*1\r\n", shard(0, 16383, port, "master"), NULL);
}

static const char *moved(const char *key, int port)
{
    return apr_psprintf(pool, "-MOVED %d " HOST ":%d\r\n",
                        rsp_redis_key_slot(key, strlen(key)), port);
}

static const char *ask(const char *key, int port)
{
    return apr_psprintf(pool, "-ASK %d " HOST ":%d\r\n",
                        rsp_redis_key_slot(key, strlen(key)), port);
}

/* Replies filled in after the nodes have their ports: a node reads its
 * next reply only once a request has come, and requests come only from
 * the claims made after that. */
static const char **script(int n)
{
    const char **r = apr_pcalloc(pool, (apr_size_t)(n + 1) * sizeof(*r));
    int i;

    for (i = 0; i < n; i++) {
        r[i] = "-ERR not scripted yet\r\n";
    }
    return r;
}

static rsp_store_t *cluster_at(int port)
{
    return store_open(apr_psprintf(pool, "redis+cluster://" HOST ":%d", port),
                      T_SHORT, 1);
}

/* How often needle occurs in what a fake node was sent. */
static int sent(const fake_server_t *fs, const char *needle)
{
    const char *at = fs->got;
    int n = 0;

    while ((at = strstr(at, needle)) != NULL) {
        n++;
        at += strlen(needle);
    }
    return n;
}

static void redirections(rsp_store_t *st, int moved_want, int asked_want)
{
    apr_uint64_t m = 0, a = 0;

    rsp_store_redirections(st, &m, &a);
    ck_assert_int_eq((int)m, moved_want);
    ck_assert_int_eq((int)a, asked_want);
}

/* Fake nodes A (the seed, which gives a map naming itself for every slot
 * as its first reply) and, b not NULL, B. */
static void start_nodes(fake_server_t *a, const char **ra, fake_server_t *b,
                        const char **rb)
{
    fake_start(a, ra, 0, 1);
    if (b) {
        fake_start(b, rb, 0, 1);
    }
    ra[0] = all_slots(a->port);
}

static void join_nodes(fake_server_t *a, fake_server_t *b)
{
    fake_join(a);
    if (b) {
        fake_join(b);
    }
}

START_TEST(test_moved_to_a_node_not_in_the_map)
{
    fake_server_t a, b;
    const char **ra = script(2), **rb = script(1);
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, &b, rb);
    ra[1] = moved("k:moved", b.port);
    rb[0] = "+OK\r\n";
    st = cluster_at(a.port);
    o = timed_claim(st, "k:moved");
    join_nodes(&a, &b);
    assert_won("a claim MOVED to a node the map did not name", o);
    ck_assert_int_eq(sent(&a, "SHARDS"), 1);
    ck_assert_int_eq(sent(&a, "k:moved"), 1);
    ck_assert_int_eq(sent(&b, "k:moved"), 1);
    ck_assert_int_eq(sent(&b, "ASKING"), 0);
    redirections(st, 1, 0);
}
END_TEST

START_TEST(test_ask_goes_once_and_keeps_the_map)
{
    fake_server_t a, b;
    const char **ra = script(3), **rb = script(1);
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, &b, rb);
    ra[1] = ask("k:ask", b.port);
    ra[2] = "$-1\r\n";         /* the second claim: taken, on A */
    rb[0] = "+OK\r\n+OK\r\n";  /* ASKING, then the claim */
    st = cluster_at(a.port);
    o = timed_claim(st, "k:ask");
    assert_won("a claim sent once to the node ASK named", o);
    o = timed_claim(st, "k:ask");
    join_nodes(&a, &b);
    ck_assert_msg(o.rv == APR_SUCCESS && !o.won,
                  "the next claim of the slot goes to A again: rv %d won %d "
                  "(%s)", o.rv, o.won, ERR_S(o.err));
    ck_assert_int_eq(sent(&b, "ASKING"), 1);
    ck_assert_int_eq(sent(&b, "k:ask"), 1);
    ck_assert_int_eq(sent(&a, "k:ask"), 2);
    ck_assert_int_eq(sent(&a, "SHARDS"), 1);
    redirections(st, 0, 1);
}
END_TEST

START_TEST(test_asking_refused_fails_the_claim)
{
    fake_server_t a, b;
    const char **ra = script(2), **rb = script(1);
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, &b, rb);
    ra[1] = ask("k:asking", b.port);
    rb[0] = "-ERR unknown command 'ASKING'\r\n+OK\r\n";
    st = cluster_at(a.port);
    o = timed_claim(st, "k:asking");
    join_nodes(&a, &b);
    assert_failed(o, "ASKING refused");
    ck_assert_msg(contains(o.err, apr_psprintf(pool, ":%d", b.port)),
                  "the error names the node: %s", ERR_S(o.err));
}
END_TEST

START_TEST(test_clusterdown_fails_and_the_map_is_read_again)
{
    fake_server_t a;
    const char **ra = script(4);
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, NULL, NULL);
    ra[1] = "-CLUSTERDOWN Hash slot not served\r\n";
    ra[2] = all_slots(a.port);
    ra[3] = "+OK\r\n";
    st = cluster_at(a.port);
    o = timed_claim(st, "k:down");
    assert_failed(o, "CLUSTERDOWN");
    sleep_ms(150);   /* past the gap between two reads of the map */
    o = timed_claim(st, "k:down");
    fake_join(&a);
    assert_won("the claim after the cluster came back", o);
    ck_assert_int_eq(sent(&a, "SHARDS"), 2);
}
END_TEST

START_TEST(test_no_master_for_the_slot)
{
    fake_server_t a;
    const char **ra = script(2);
    const char *orphan = NULL, *served = NULL;
    rsp_store_t *st;
    outcome_t o;
    int i;

    /* a key of each half (the first 64 cover both, many times over) */
    for (i = 0; i < 64 && (!orphan || !served); i++) {
        const char *k = apr_psprintf(pool, "k:%d", i);
        if (rsp_redis_key_slot(k, strlen(k)) >= 8192) {
            orphan = orphan ? orphan : k;
        }
        else {
            served = served ? served : k;
        }
    }
    ck_assert(orphan && served);
    fake_start(&a, ra, 0, 1);
    /* slots 8192-16383: a shard whose only node is a replica */
    ra[0] = apr_pstrcat(pool, "*2\r\n", shard(0, 8191, a.port, "master"),
                        shard(8192, 16383, dead_port(), "replica"), NULL);
    ra[1] = "+OK\r\n";
    st = cluster_at(a.port);
    o = timed_claim(st, orphan);
    assert_failed(o, apr_psprintf(pool, "no master serves slot %d",
                                  rsp_redis_key_slot(orphan, strlen(orphan))));
    o = timed_claim(st, served);
    fake_join(&a);
    assert_won("a claim on the shard that has a master", o);
    ck_assert_int_eq(sent(&a, orphan), 0);
}
END_TEST

START_TEST(test_redirections_without_end)
{
    fake_server_t a, b;
    const char **ra = script(4), **rb = script(2);
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, &b, rb);
    ra[1] = ra[2] = ra[3] = moved("k:loop", b.port);
    rb[0] = rb[1] = moved("k:loop", a.port);
    st = cluster_at(a.port);
    o = timed_claim(st, "k:loop");
    join_nodes(&a, &b);
    assert_failed(o, "redirected 5 times");
    ck_assert_int_eq(sent(&a, "k:loop") + sent(&b, "k:loop"), 5);
}
END_TEST

START_TEST(test_moved_to_a_node_that_is_down)
{
    fake_server_t a;
    const char **ra = script(2);
    int dead = dead_port();
    rsp_store_t *st;
    outcome_t o;

    start_nodes(&a, ra, NULL, NULL);
    ra[1] = moved("k:gone", dead);
    st = cluster_at(a.port);
    o = timed_claim(st, "k:gone");
    fake_join(&a);
    ck_assert_msg(o.ms < HUNG_BOUND_MS, "took %lld ms", o.ms);
    assert_failed(o, apr_psprintf(pool, "the node at " HOST ":%d", dead));
}
END_TEST

static Suite *redis_cluster_suite(void)
{
    Suite *s = suite_create("rsp_redis_cluster");
    TCase *tc = tcase_create("fake nodes");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_moved_to_a_node_not_in_the_map);
    tcase_add_test(tc, test_ask_goes_once_and_keeps_the_map);
    tcase_add_test(tc, test_asking_refused_fails_the_claim);
    tcase_add_test(tc, test_clusterdown_fails_and_the_map_is_read_again);
    tcase_add_test(tc, test_no_master_for_the_slot);
    tcase_add_test(tc, test_redirections_without_end);
    tcase_add_test(tc, test_moved_to_a_node_that_is_down);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return rsp_unit_run(redis_cluster_suite());
}
