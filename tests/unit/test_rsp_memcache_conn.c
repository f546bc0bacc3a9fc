/* Unit tests for rsp_memcache_conn.c: the memcached protocol's messages as
 * written (storage and meta set commands, byte for byte) and the replies
 * as read, from a fake server that sends exactly what a test says: a
 * value with its version and expiry, a miss, the outcomes of a storage
 * or compare-and-set command, and each malformed reply refused with what
 * was wrong (and the connection closed, its state unknown). Through the
 * store's operations they are test_rsp_store_memcache's (real memcached)
 * and fuzz_memcache's. */
#include <signal.h>
#include <string.h>

#include <check.h>
#include <apr_strings.h>

#include "rsp_memcache.h"
#include "rsp_unit.h"
#include "rsp_unit_server.h"

#define HOST "127.0.0.1"

static fake_server_t fs;

/* An operation on a fake server that answers the first request with
 * reply (then closes), the request sent. */
static rsp_mc_op_t *op_answered(const char *reply, const char **err)
{
    const char **r = apr_pcalloc(pool, 2 * sizeof(*r));
    rsp_mc_op_t *op = apr_pcalloc(pool, sizeof(*op));
    rsp_store_t *st;

    r[0] = reply;
    fake_start(&fs, r, 0, 1);
    st = store_open(apr_psprintf(pool, "memcache://" HOST ":%d", fs.port),
                    T_NORMAL, 1);
    ck_assert_int_eq(rsp_mc_begin(op, st, &((rsp_mc_t *)st->impl)->servers[0],
                                  pool, err), APR_SUCCESS);
    ck_assert_int_eq(rsp_mc_send(op, "mg k v c t\r\n", 12), APR_SUCCESS);
    return op;
}

static void done(rsp_mc_op_t *op)
{
    rsp_mc_end(op);
    fake_join(&fs);
}

/* The reply was refused: *err names the server and says want, and the
 * connection is closed. */
static void assert_refused(rsp_mc_op_t *op, apr_status_t rv, const char *err,
                           const char *want)
{
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert_msg(contains(err, apr_psprintf(pool, "memcached " HOST ":%d: ",
                                             fs.port)),
                  "err %s names the server", ERR_S(err));
    ck_assert_msg(contains(err, want), "err %s says %s", ERR_S(err), want);
    ck_assert_ptr_null(op->c->base.io);
}

START_TEST(test_value_with_version_and_expiry)
{
    const char *err = NULL, *value, *cas, *ttl;
    rsp_mc_op_t *op = op_answered("VA 5 c123 t60\r\nhe\r\no\r\n", &err);
    apr_size_t len = 0;

    ck_assert_int_eq(rsp_mc_read_mg(op, &value, &len, &cas, &ttl),
                     APR_SUCCESS);
    ck_assert_uint_eq(len, 5);
    ck_assert_int_eq(memcmp(value, "he\r\no", 5), 0);
    ck_assert_str_eq(cas, "123");
    ck_assert_str_eq(ttl, "60");
    ck_assert_str_eq(rsp_mc_version_token(pool, cas, ttl), "C123 T60");
    ck_assert_str_eq(rsp_mc_version_token(pool, cas, "-1"), "C123");
    ck_assert_ptr_null(rsp_mc_version_token(pool, NULL, NULL));
    ck_assert(contains(fs.got, "mg k v c t\r\n"));
    done(op);
}
END_TEST

START_TEST(test_miss)
{
    const char *err = NULL, *value = "x", *cas = "x", *ttl = "x";
    rsp_mc_op_t *op = op_answered("EN\r\n", &err);
    apr_size_t len = 9;

    ck_assert_int_eq(rsp_mc_read_mg(op, &value, &len, &cas, &ttl),
                     APR_SUCCESS);
    ck_assert_ptr_null(value);
    ck_assert_ptr_null(cas);
    ck_assert_ptr_null(ttl);
    ck_assert_uint_eq(len, 0);
    done(op);
}
END_TEST

/* Each malformed answer to mg, and what the refusal says. */
static const struct {
    const char *reply;
    const char *want;
} bad_mg[] = {
    {"VA 5 t60\r\nhello\r\n", "unexpected reply \"VA 5 t60\""},  /* no cas */
    {"VA 5 c1\r\nhello\r\n", "unexpected reply \"VA 5 c1\""},    /* no ttl */
    {"VA 2000000 c1 t1\r\n", "unexpected reply"},                /* too big */
    {"VA x c1 t1\r\n", "unexpected reply"},
    {"VA 5 c1 t1\r\nhelloXY", "data block not followed by CRLF"},
    {"HD\r\n", "unexpected reply \"HD\""},
    {"SERVER_ERROR out of memory\r\n", "SERVER_ERROR out of memory"},
    {"EN\n", "malformed reply line"},
    {"\r\n", "unexpected reply"},
    {"VA 5 c1 t1\r\nhel", "connection closed by the server"},
};

START_TEST(test_malformed_mg_refused)
{
    const char *err = NULL, *value, *cas, *ttl;
    rsp_mc_op_t *op = op_answered(bad_mg[_i].reply, &err);
    apr_size_t len;
    apr_status_t rv = rsp_mc_read_mg(op, &value, &len, &cas, &ttl);

    assert_refused(op, rv, err, bad_mg[_i].want);
    done(op);
}
END_TEST

START_TEST(test_line_too_long)
{
    char *line = apr_palloc(pool, MC_LINE_MAX + 200);
    const char *err = NULL, *got;
    rsp_mc_op_t *op;
    apr_status_t rv;

    memset(line, 'x', MC_LINE_MAX + 100);
    line[MC_LINE_MAX + 100] = '\0';
    op = op_answered(line, &err);
    rv = rsp_mc_read_line(op, &got);
    assert_refused(op, rv, err, "reply line too long");
    done(op);
}
END_TEST

/* The outcome replies: yes, no, and anything else refused. */
static const struct {
    const char *reply;
    int replace;     /* read as a compare-and-set's outcome, not a store's */
    int want;        /* 1, 0, or -1: refused */
} outcomes[] = {
    {"STORED\r\n", 0, 1},
    {"NOT_STORED\r\n", 0, 0},
    {"EXISTS\r\n", 0, -1},
    {"HD\r\n", 1, 1},
    {"EX\r\n", 1, 0},
    {"NF\r\n", 1, 0},
    {"NS\r\n", 1, -1},
};

START_TEST(test_outcomes)
{
    const char *err = NULL;
    rsp_mc_op_t *op = op_answered(outcomes[_i].reply, &err);
    int out = -7;
    apr_status_t rv = outcomes[_i].replace ? rsp_mc_read_replace(op, &out)
                                           : rsp_mc_read_stored(op, &out);

    if (outcomes[_i].want < 0) {
        assert_refused(op, rv, err, "unexpected reply");
    }
    else {
        ck_assert_int_eq(rv, APR_SUCCESS);
        ck_assert_int_eq(out, outcomes[_i].want);
    }
    done(op);
}
END_TEST

START_TEST(test_commands_as_written)
{
    rsp_mc_buf_t b;

    memset(&b, 0, sizeof(b));
    rsp_mc_buf_store(pool, &b, "add", "rsp:c:k", 61, "v\r\n1", 4);
    rsp_mc_buf_replace(pool, &b, "rsp:c:k", "C9 T30", "new");
    rsp_mc_buf_str(pool, &b, "mn\r\n");
    ck_assert_uint_eq(b.len, strlen("add rsp:c:k 0 61 4\r\nv\r\n1\r\n"
                                    "ms rsp:c:k 3 C9 T30\r\nnew\r\nmn\r\n"));
    ck_assert_int_eq(memcmp(b.data, "add rsp:c:k 0 61 4\r\nv\r\n1\r\n"
                                    "ms rsp:c:k 3 C9 T30\r\nnew\r\nmn\r\n",
                            b.len), 0);
}
END_TEST

static Suite *memcache_conn_suite(void)
{
    Suite *s = suite_create("rsp_memcache_conn");
    TCase *tc = tcase_create("messages");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_value_with_version_and_expiry);
    tcase_add_test(tc, test_miss);
    tcase_add_loop_test(tc, test_malformed_mg_refused, 0,
                        (int)(sizeof(bad_mg) / sizeof(bad_mg[0])));
    tcase_add_test(tc, test_line_too_long);
    tcase_add_loop_test(tc, test_outcomes, 0,
                        (int)(sizeof(outcomes) / sizeof(outcomes[0])));
    tcase_add_test(tc, test_commands_as_written);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return rsp_unit_run(memcache_conn_suite());
}
