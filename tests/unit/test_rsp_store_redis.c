/* Unit tests for rsp_store_redis.c (and rsp_store.c) against a real
 * redis-server: DESIGN.md invariant 1 (a claim is one SET NX PX, its reply
 * the verdict), 5 (store errors, refusals and unknown outcomes are errors,
 * never verdicts) and 8 (bounded time: refused, unreachable, hung and slow
 * stores).
 *
 * main() starts redis-server on 127.0.0.1 (a free port found by binding port
 * 0, plus a unix socket in a mkdtemp directory) before the suite runs, so
 * that forked tests reach it too, and stops it by its PID afterwards. Each
 * test starts from a clean server (checked setup: SIGCONT, FLUSHALL,
 * configuration restored). Tests that change the server (SIGSTOP, CONFIG
 * SET, ACL, REPLICAOF) undo the change before asserting, and the parent
 * undoes it again after each test case (unchecked teardown), so a failed
 * assertion in a forked test cannot leave the server stopped or locked.
 *
 * The tests check the server with a hiredis connection of their own ("raw").
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "rsp_unit.h"
#include "rsp_unit_server.h"
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_time.h>
#include <hiredis.h>

#include "rsp_store.h"
#include "rsp_url.h"

#define HOST "127.0.0.1"
#define PASS "secret"

/* ------------------------------------------------------------------ */
/* The server (plain POSIX: runs before apr_initialize)                 */

static pid_t srv_pid = -1;
static int srv_port;
static char srv_dir[] = "/tmp/rsp-redis-XXXXXX";
static char srv_sock[256];
static char srv_log[256];

static int server_ping(void *unused)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout(HOST, srv_port, tv);
    redisReply *r;
    int ok = 0;

    if (!c) {
        return 0;
    }
    if (!c->err && redisSetTimeout(c, tv) == REDIS_OK) {
        r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
        if (r) {
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return ok;
}

static int server_start(void)
{
    const char *bin = getenv("RSP_REDIS_SERVER");
    char port[16];
    /* Options and their values. */
    /* clang-format off */
    const char *argv[] = {NULL,
        "--port", port, "--bind", HOST, "--save", "",
        "--appendonly", "no", "--daemonize", "no", "--dir", srv_dir,
        "--unixsocket", srv_sock, "--unixsocketperm", "700", NULL};
    /* clang-format on */
    int fd;

    argv[0] = bin ? bin : "/usr/bin/redis-server";
    snprintf(srv_sock, sizeof(srv_sock), "%s/redis.sock", srv_dir);
    snprintf(srv_log, sizeof(srv_log), "%s/redis.log", srv_dir);
    if ((fd = bound_socket(&srv_port)) < 0) {
        perror("bind 127.0.0.1:0");
        return -1;
    }
    close(fd);
    snprintf(port, sizeof(port), "%d", srv_port);
    srv_pid = spawn_server(argv, srv_log, server_ping, NULL);
    return srv_pid > 0 ? 0 : -1;
}

static void server_stop(void)
{
    stop_server(&srv_pid, "redis-server");
}

/* Send sig to the server and wait until it is stopped / running. */
static int server_signal(int sig)
{
    return signal_wait(srv_pid, sig);
}

#define USER_U "rsp_u"
#define USER_R "rsp_r"

/* Undo whatever a test may have left: running, no password, no maxmemory,
 * a master, no test ACL users, empty. 0 on success, else why says why. */
static int server_reset(char *why, size_t whylen)
{
    static const char *const fmts[] = {
        "CONFIG SET requirepass %s",
        "CONFIG SET maxmemory 0",
        "CONFIG SET maxmemory-policy noeviction",
        "REPLICAOF NO ONE",
        "ACL DELUSER " USER_U " " USER_R,
        "FLUSHALL",
    };
    struct timeval ctv = {2, 0}, tv = {5, 0};
    redisContext *c;
    redisReply *r;
    size_t i;
    int rc = 0;

    if (srv_pid > 0) {
        server_signal(SIGCONT);
    }
    c = redisConnectWithTimeout(HOST, srv_port, ctv);
    if (!c || c->err || redisSetTimeout(c, tv) != REDIS_OK) {
        snprintf(why, whylen, "connect: %s", c ? c->errstr : "no memory");
        if (c) {
            redisFree(c);
        }
        return -1;
    }
    /* In case a test left the password set; an error otherwise. */
    if ((r = redisCommand(c, "AUTH %s", PASS)) != NULL) {
        freeReplyObject(r);
    }
    for (i = 0; rc == 0 && i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        r = i == 0 ? redisCommand(c, fmts[i], "") : redisCommand(c, fmts[i]);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            snprintf(why, whylen, "%s: %s", fmts[i], r ? r->str : c->errstr);
            rc = -1;
        }
        if (r) {
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */

static void setup(void)
{
    char why[512] = "";

    rsp_unit_setup();
    ck_assert_msg(server_reset(why, sizeof(why)) == 0,
                  "cannot reset redis-server: %s", why);
}

static void teardown(void)
{
    rsp_unit_teardown();
}

/* Unchecked (in the parent, after each test case). */
static void tcase_restore(void)
{
    char why[512] = "";

    if (server_reset(why, sizeof(why)) != 0) {
        fprintf(stderr, "cannot reset redis-server: %s\n", why);
    }
}

/* ------------------------------------------------------------------ */
/* The tests' own connection                                           */

typedef struct {
    int type;
    long long integer;
    const char *str;
    size_t len;
} reply_t;

static apr_status_t raw_free(void *data)
{
    redisFree(data);
    return APR_SUCCESS;
}

static redisContext *raw_connect(void)
{
    struct timeval ctv = {2, 0}, tv = {5, 0};
    redisContext *c = redisConnectWithTimeout(HOST, srv_port, ctv);

    ck_assert_ptr_nonnull(c);
    apr_pool_cleanup_register(pool, c, raw_free, apr_pool_cleanup_null);
    ck_assert_msg(!c->err, "raw connect: %s", c->errstr);
    ck_assert_int_eq(redisSetTimeout(c, tv), REDIS_OK);
    return c;
}

static reply_t raw_cmd(redisContext *c, const char *fmt, ...)
{
    reply_t out = {0, 0, NULL, 0};
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    ck_assert_msg(r != NULL, "raw \"%s\": %s", fmt, c->errstr);
    out.type = r->type;
    out.integer = r->integer;
    if (r->str) {
        out.str = apr_pstrmemdup(pool, r->str, r->len);
        out.len = r->len;
    }
    freeReplyObject(r);
    return out;
}

/* A command that must answer +OK. */
static void raw_ok(redisContext *c, const char *what, reply_t r)
{
    ck_assert_msg(r.type == REDIS_REPLY_STATUS && strcmp(r.str, "OK") == 0,
                  "raw %s: type %d, %s", what, r.type, r.str ? r.str : "");
}

static long long raw_int(redisContext *c, const char *cmd, const char *key)
{
    reply_t r = raw_cmd(c, "%s %s", cmd, key);

    ck_assert_msg(r.type == REDIS_REPLY_INTEGER, "raw %s %s: type %d, %s", cmd,
                  key, r.type, r.str ? r.str : "");
    return r.integer;
}

#define raw_exists(c, k) raw_int((c), "EXISTS", (k))
#define raw_pttl(c, k) raw_int((c), "PTTL", (k))

static void raw_select(redisContext *c, int db)
{
    raw_ok(c, "SELECT", raw_cmd(c, "SELECT %d", db));
}

/* A numeric field of INFO section. */
static long long raw_info_field(redisContext *c, const char *section,
                                const char *field)
{
    reply_t r = raw_cmd(c, "INFO %s", section);
    const char *name = apr_pstrcat(pool, field, ":", NULL);
    const char *f;

    ck_assert_int_eq(r.type, REDIS_REPLY_STRING);
    f = strstr(r.str, name);
    ck_assert_msg(f != NULL, "INFO %s has no %s", section, field);
    return strtoll(f + strlen(name), NULL, 10);
}

/* ------------------------------------------------------------------ */
/* Stores                                                              */

static const char *tcp_url(const char *cred, int port, int db)
{
    return apr_psprintf(pool, "redis://%s%s" HOST ":%d%s", cred ? cred : "",
                        cred ? "@" : "", port,
                        db ? apr_psprintf(pool, "/%d", db) : "");
}

/* ------------------------------------------------------------------ */
/* claim (invariant 1)                                                  */

START_TEST(test_claim_first_wins)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    long long pttl;
    reply_t r;

    ck_assert_int_eq(claim_ok(st, "c:k1", "v1", TTL), 1);
    r = raw_cmd(raw, "GET %s", "c:k1");
    ck_assert_int_eq(r.type, REDIS_REPLY_STRING);
    ck_assert_str_eq(r.str, "v1");
    pttl = raw_pttl(raw, "c:k1");
    ck_assert_int_gt(pttl, TTL - 1000);
    ck_assert_int_le(pttl, TTL);

    /* Second claim of the same key: lost, value and expiry untouched. */
    ck_assert_int_eq(claim_ok(st, "c:k1", "v2", 2 * TTL), 0);
    r = raw_cmd(raw, "GET %s", "c:k1");
    ck_assert_str_eq(r.str, "v1");
    ck_assert_int_le(raw_pttl(raw, "c:k1"), TTL);

    /* And again: still lost. Another key is independent. */
    ck_assert_int_eq(claim_ok(st, "c:k1", "v1", TTL), 0);
    ck_assert_int_eq(claim_ok(st, "c:k2", "v1", TTL), 1);
}
END_TEST

START_TEST(test_claim_ttl_must_be_positive)
{
    static const apr_int64_t bad[] = {0, -1, -60000};
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *err = NULL;
        int won = -1;

        ck_assert_int_ne(
            rsp_store_claim(st, pool, "c:ttl", "v", bad[i], &won, &err),
            APR_SUCCESS);
        ck_assert_int_ne(won, 1);
        ck_assert_msg(err && *err, "no error text for ttl %lld",
                      (long long)bad[i]);
        ck_assert_int_eq(raw_exists(raw, "c:ttl"), 0);
    }
}
END_TEST

/* PX, not EX: a 100 ms claim really expires after 100 ms, and the key can
 * then be claimed again. */
START_TEST(test_claim_expires_in_ms)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    int i;
    long long pttl;

    ck_assert_int_eq(claim_ok(st, "c:short", "v", 100), 1);
    pttl = raw_pttl(raw, "c:short");
    ck_assert_int_le(pttl, 100);
    for (i = 0; i < 100 && raw_exists(raw, "c:short"); i++) {
        sleep_ms(20);
    }
    ck_assert_int_eq(raw_exists(raw, "c:short"), 0);
    ck_assert_int_eq(claim_ok(st, "c:short", "v", TTL), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* get, put, del_if_equal, info                                        */

START_TEST(test_get_absent)
{
    check_get_absent(store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1));
}
END_TEST

START_TEST(test_put_get_binary)
{
    static const char bin[] = {'a', 'b', '\0', 'c', '\xff', '\r', '\n', 'd'};
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    long long pttl;
    reply_t r;

    check_round_trip(st, "g:bin", bin, sizeof(bin));
    r = raw_cmd(raw, "GET %s", "g:bin");
    ck_assert_int_eq(r.type, REDIS_REPLY_STRING);
    ck_assert_uint_eq(r.len, sizeof(bin));
    ck_assert_int_eq(memcmp(r.str, bin, sizeof(bin)), 0);
    pttl = raw_pttl(raw, "g:bin");
    ck_assert_int_gt(pttl, TTL - 1000);
    ck_assert_int_le(pttl, TTL);

    /* Large values round-trip too; an empty value is a value, not
     * absence. */
    check_round_trip(st, "g:big", test_bytes(256 * 1024), 256 * 1024);
    check_round_trip(st, "g:empty", "", 0);
}
END_TEST

START_TEST(test_put_overwrites_and_sets_ttl)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL, *value = NULL;
    apr_size_t len = 0;
    long long pttl;

    put_ok(st, "g:k", "one", 3, TTL);
    put_ok(st, "g:k", "second", 6, TTL / 2);
    value = get_ok(st, "g:k", &len);
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(value, "second");
    pttl = raw_pttl(raw, "g:k");
    ck_assert_int_gt(pttl, TTL / 2 - 1000);
    ck_assert_int_le(pttl, TTL / 2);

    /* A non-positive TTL is refused, nothing written or changed. */
    err = NULL;
    ck_assert_int_ne(rsp_store_put(st, pool, "g:zero", "v", 1, 0, &err),
                     APR_SUCCESS);
    ck_assert_msg(err && *err, "no error text");
    ck_assert_int_eq(raw_exists(raw, "g:zero"), 0);
    err = NULL;
    ck_assert_int_ne(rsp_store_put(st, pool, "g:k", "v", 1, -1, &err),
                     APR_SUCCESS);
    ck_assert_msg(err && *err, "no error text");
    ck_assert_str_eq(raw_cmd(raw, "GET %s", "g:k").str, "second");
}
END_TEST

START_TEST(test_ttl)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL;
    apr_int64_t ttl = 0;

    put_ok(st, "g:ttl", "v", 1, TTL);
    ck_assert_int_eq(rsp_store_ttl(st, pool, "g:ttl", &ttl, &err), APR_SUCCESS);
    ck_assert_int_gt(ttl, TTL - 1000);
    ck_assert_int_le(ttl, TTL);
    ck_assert_int_eq(rsp_store_ttl(st, pool, "g:absent", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, -2);
    raw_cmd(raw, "SET %s %s", "g:forever", "v");
    ck_assert_int_eq(rsp_store_ttl(st, pool, "g:forever", &ttl, &err), APR_SUCCESS);
    ck_assert_int_eq(ttl, -1);
}
END_TEST

#define APPEND_CONNS 4

START_TEST(test_claim_read)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL,
                                 APPEND_CONNS);

    check_claim_read(st);
}
END_TEST

START_TEST(test_write_many)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL,
                                 APPEND_CONNS);

    check_write_many(st);
}
END_TEST

START_TEST(test_replace)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL,
                                 APPEND_CONNS);

    check_replace(st);
}
END_TEST

START_TEST(test_write_many_after_script_flush)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL,
                                 APPEND_CONNS);
    rsp_write_t w;
    const char *err = NULL;
    apr_size_t len;

    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_APPEND;
    w.key = "wf:idx";
    w.value = "a";
    w.ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_write_many(st, pool, &w, 1, &err), APR_SUCCESS);
    /* The server forgets the script (SCRIPT FLUSH, a restart): the append
     * is sent again with the script's text, and lands once. */
    raw_ok(raw, "SCRIPT FLUSH", raw_cmd(raw, "SCRIPT FLUSH"));
    w.value = "b";
    ck_assert_int_eq(rsp_store_write_many(st, pool, &w, 1, &err), APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "wf:idx", &len), " a b");
    ck_assert_int_eq(rsp_store_write_many(st, pool, &w, 1, &err), APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "wf:idx", &len), " a b b");
}
END_TEST

START_TEST(test_append)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL,
                                 APPEND_CONNS);
    const char *err = NULL;
    long long pttl;

    check_append(st);
    /* The fresh key gets the TTL; a longer one extends it; a shorter one
     * never shortens it. */
    ck_assert_int_eq(rsp_store_append(st, pool, "x:ttl", "a", 5000, &err),
                     APR_SUCCESS);
    pttl = raw_pttl(raw, "x:ttl");
    ck_assert_int_gt(pttl, 4000);
    ck_assert_int_le(pttl, 5000);
    ck_assert_int_eq(rsp_store_append(st, pool, "x:ttl", "b", 50000, &err),
                     APR_SUCCESS);
    ck_assert_int_gt(raw_pttl(raw, "x:ttl"), 49000);
    ck_assert_int_eq(rsp_store_append(st, pool, "x:ttl", "c", 1000, &err),
                     APR_SUCCESS);
    ck_assert_int_gt(raw_pttl(raw, "x:ttl"), 49000);
    ck_assert_str_eq(raw_cmd(raw, "GET %s", "x:ttl").str, " a b c");
}
END_TEST

START_TEST(test_del_if_equal)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL;
    int deleted = -1;

    put_ok(st, "d:k", "mine", 4, TTL);

    /* Different value: kept. */
    ck_assert_int_eq(del_ok(st, "d:k", "theirs"), 0);
    ck_assert_int_eq(raw_exists(raw, "d:k"), 1);
    /* A prefix of the value is not the value. */
    ck_assert_int_eq(del_ok(st, "d:k", "min"), 0);
    ck_assert_int_eq(raw_exists(raw, "d:k"), 1);

    /* Equal value: gone. */
    ck_assert_int_eq(del_ok(st, "d:k", "mine"), 1);
    ck_assert_int_eq(raw_exists(raw, "d:k"), 0);

    /* Absent key. */
    ck_assert_int_eq(del_ok(st, "d:k", "mine"), 0);

    /* A claim can be released by its owner. */
    ck_assert_int_eq(
        rsp_store_claim(st, pool, "d:c", "owner", TTL, &deleted, &err),
        APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_int_eq(del_ok(st, "d:c", "owner"), 1);
    ck_assert_int_eq(raw_exists(raw, "d:c"), 0);
}
END_TEST

START_TEST(test_info)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL, *text = NULL;

    ck_assert_int_eq(rsp_store_info(st, pool, NULL, &text, &err), APR_SUCCESS);
    ck_assert_msg(contains(text, "redis_version:"), "INFO: %s", ERR_S(text));
    ck_assert_msg(contains(text, "maxmemory_policy:"),
                  "INFO: no memory section");
    text = NULL;
    ck_assert_int_eq(rsp_store_info(st, pool, "server", &text, &err),
                     APR_SUCCESS);
    ck_assert_msg(contains(text, "redis_version:"), "INFO server: %s",
                  ERR_S(text));
    ck_assert_msg(contains(text, "run_id:"), "INFO server has no run_id");
    text = NULL;
    ck_assert_int_eq(rsp_store_info(st, pool, "clients", &text, &err),
                     APR_SUCCESS);
    ck_assert_msg(contains(text, "connected_clients:"), "INFO clients: %s",
                  ERR_S(text));
    ck_assert_msg(!contains(text, "redis_version:"),
                  "INFO clients: whole INFO");
}
END_TEST

START_TEST(test_not_initialised)
{
    check_not_initialised(tcp_url(NULL, srv_port, 0), "redis");
}
END_TEST

START_TEST(test_unknown_backend)
{
    rsp_store_url_t u;
    rsp_store_t *st = NULL;
    const char *err = NULL;

    memset(&u, 0, sizeof(u));
    u.kind = (rsp_store_kind_t)0;
    ck_assert_int_eq(rsp_store_create(&st, pool, &u, T_NORMAL, &err),
                     APR_ENOTIMPL);
    ck_assert_ptr_null(st);
    ck_assert_msg(err && *err, "no error text");
}
END_TEST

START_TEST(test_db_selection)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st3 = store_open(tcp_url(NULL, srv_port, 3), T_NORMAL, 1);
    rsp_store_t *st0 = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *value = NULL;
    apr_size_t len = 0;

    ck_assert_int_eq(claim_ok(st3, "db:k", "v3", TTL), 1);
    put_ok(st3, "db:p", "p3", 2, TTL);

    ck_assert_int_eq(raw_exists(raw, "db:k"), 0);
    ck_assert_int_eq(raw_exists(raw, "db:p"), 0);
    raw_select(raw, 3);
    ck_assert_int_eq(raw_exists(raw, "db:k"), 1);
    ck_assert_int_eq(raw_exists(raw, "db:p"), 1);
    raw_select(raw, 0);

    /* db 0 is a different namespace: the same key is won there again. */
    ck_assert_int_eq(claim_ok(st0, "db:k", "v0", TTL), 1);
    value = get_ok(st0, "db:p", &len);
    ck_assert_ptr_null(value);
    value = get_ok(st3, "db:p", &len);
    ck_assert_ptr_nonnull(value);
    ck_assert_str_eq(value, "p3");
}
END_TEST

/* The pool's cleanup closes the store's connections. */
START_TEST(test_pool_cleanup_closes)
{
    redisContext *raw = raw_connect();
    apr_pool_t *sp = NULL;
    rsp_store_t *st;
    const char *err = NULL;
    long long before, during, after = -1;
    int won = -1, i;

    ck_assert_int_eq(apr_pool_create(&sp, pool), APR_SUCCESS);
    sleep_ms(50); /* the setup's connection is closed */
    before = raw_info_field(raw, "clients", "connected_clients");
    st = store_in(sp, tcp_url(NULL, srv_port, 0), T_NORMAL, 2);
    ck_assert_int_eq(rsp_store_claim(st, sp, "pc:k", "v", TTL, &won, &err),
                     APR_SUCCESS);
    during = raw_info_field(raw, "clients", "connected_clients");
    ck_assert_int_eq(during, before + 1);
    apr_pool_destroy(sp);
    for (i = 0; i < 100; i++) {
        after = raw_info_field(raw, "clients", "connected_clients");
        if (after <= before) {
            break;
        }
        sleep_ms(20);
    }
    ck_assert_int_eq(after, before);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Error replies are errors, not verdicts (invariant 5)                 */

START_TEST(test_oom_is_error)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL, *err_put = NULL, *err_get = NULL, *value = NULL;
    apr_status_t rv, rv_put, rv_get;
    apr_size_t len = 0;
    int won = -1;
    reply_t r1, r2, r3;
    long long exists;

    /* Connected and pooled before the server fills up. */
    ck_assert_int_eq(claim_ok(st, "o:k0", "v", TTL), 1);

    r1 = raw_cmd(raw, "CONFIG SET maxmemory %s", "1");
    r2 = raw_cmd(raw, "CONFIG SET maxmemory-policy %s", "noeviction");
    won = -1;
    rv = rsp_store_claim(st, pool, "o:k1", "v", TTL, &won, &err);
    rv_put = rsp_store_put(st, pool, "o:p", "v", 1, TTL, &err_put);
    rv_get = rsp_store_get(st, pool, "o:k0", &value, &len, &err_get);
    /* Undo before asserting. */
    r3 = raw_cmd(raw, "CONFIG SET maxmemory %s", "0");

    raw_ok(raw, "CONFIG SET maxmemory 1", r1);
    raw_ok(raw, "CONFIG SET maxmemory-policy", r2);
    raw_ok(raw, "CONFIG SET maxmemory 0", r3);
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert_int_ne(won, 1);
    ck_assert_msg(contains(err, "OOM"), "claim err: %s", ERR_S(err));
    ck_assert_int_ne(rv_put, APR_SUCCESS);
    ck_assert_msg(contains(err_put, "OOM"), "put err: %s", ERR_S(err_put));
    /* Reads still work on a full server. */
    ck_assert_msg(rv_get == APR_SUCCESS, "get err: %s", ERR_S(err_get));
    ck_assert_ptr_nonnull(value);
    exists = raw_exists(raw, "o:k1");
    ck_assert_int_eq(exists, 0);

    /* The same store works again. */
    won = -1;
    err = NULL;
    rv = rsp_store_claim(st, pool, "o:k1", "v", TTL, &won, &err);
    ck_assert_msg(rv == APR_SUCCESS, "claim after OOM: %s", ERR_S(err));
    ck_assert_int_eq(won, 1);
}
END_TEST

START_TEST(test_readonly_is_error)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL;
    apr_status_t rv;
    int won = -1, nowhere = dead_port();
    reply_t r1, r2;

    ck_assert_int_eq(claim_ok(st, "ro:k0", "v", TTL), 1);

    r1 = raw_cmd(raw, "REPLICAOF %s %d", HOST, nowhere);
    won = -1;
    rv = rsp_store_claim(st, pool, "ro:k1", "v", TTL, &won, &err);
    r2 = raw_cmd(raw, "REPLICAOF NO ONE");

    raw_ok(raw, "REPLICAOF", r1);
    raw_ok(raw, "REPLICAOF NO ONE", r2);
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert_int_ne(won, 1);
    ck_assert_msg(contains(err, "READONLY"), "err: %s", ERR_S(err));

    won = -1;
    err = NULL;
    rv = rsp_store_claim(st, pool, "ro:k1", "v", TTL, &won, &err);
    ck_assert_msg(rv == APR_SUCCESS, "claim after READONLY: %s", ERR_S(err));
    ck_assert_int_eq(won, 1);
}
END_TEST

START_TEST(test_wrongtype_is_error)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL, *value = "sentinel";
    apr_size_t len = 0;
    int deleted = -1;

    ck_assert_int_eq(raw_cmd(raw, "RPUSH %s %s", "w:list", "x").type,
                     REDIS_REPLY_INTEGER);
    ck_assert_int_ne(rsp_store_get(st, pool, "w:list", &value, &len, &err),
                     APR_SUCCESS);
    ck_assert_msg(contains(err, "WRONGTYPE"), "get err: %s", ERR_S(err));
    err = NULL;
    ck_assert_int_ne(
        rsp_store_del_if_equal(st, pool, "w:list", "x", &deleted, &err),
        APR_SUCCESS);
    ck_assert_int_ne(deleted, 1);
    ck_assert_msg(contains(err, "WRONGTYPE"), "del err: %s", ERR_S(err));
    ck_assert_int_eq(raw_exists(raw, "w:list"), 1);
    /* SET NX on a key of another type: the key exists, the claim is lost. */
    ck_assert_int_eq(claim_ok(st, "w:list", "v", TTL), 0);
    /* The connection still works. */
    put_ok(st, "w:s", "v", 1, TTL);
}
END_TEST

START_TEST(test_noperm_is_error)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st =
        store_open(tcp_url(USER_R ":pw", srv_port, 0), T_NORMAL, 1);
    const char *err_denied = NULL, *err_allowed = NULL;
    apr_status_t rv_denied, rv_allowed;
    int won_denied = -1, won_allowed = -1;
    reply_t r1, r2;

    r1 = raw_cmd(raw, "ACL SETUSER %s on %s %s %s", USER_R, ">pw", "~allowed:*",
                 "+@all");
    rv_denied = rsp_store_claim(st, pool, "denied:k", "v", TTL, &won_denied,
                                &err_denied);
    rv_allowed = rsp_store_claim(st, pool, "allowed:k", "v", TTL, &won_allowed,
                                 &err_allowed);
    r2 = raw_cmd(raw, "ACL DELUSER %s", USER_R);

    raw_ok(raw, "ACL SETUSER", r1);
    ck_assert_int_eq(r2.type, REDIS_REPLY_INTEGER);
    ck_assert_int_ne(rv_denied, APR_SUCCESS);
    ck_assert_int_ne(won_denied, 1);
    ck_assert_msg(contains(err_denied, "NOPERM"), "err: %s", ERR_S(err_denied));
    ck_assert_msg(rv_allowed == APR_SUCCESS, "allowed: %s", ERR_S(err_allowed));
    ck_assert_int_eq(won_allowed, 1);
}
END_TEST

/* The server closes a pooled connection while it is idle (restart, idle
 * timeout, CLIENT KILL): the store notices before sending anything on it
 * and reconnects, so the next claim simply works. */
START_TEST(test_server_closed_connection)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err = NULL;
    apr_status_t rv;
    int won = -1;
    reply_t r;

    ck_assert_int_eq(rsp_store_claim(st, pool, "sc:k0", "v", TTL, &won, &err),
                     APR_SUCCESS);
    r = raw_cmd(raw, "CLIENT KILL TYPE normal SKIPME yes");
    ck_assert_int_eq(r.type, REDIS_REPLY_INTEGER);
    ck_assert_int_ge(r.integer, 1);

    sleep_ms(50); /* the FIN reaches the client side */
    won = -1;
    err = NULL;
    rv = rsp_store_claim(st, pool, "sc:k1", "v", TTL, &won, &err);
    ck_assert_msg(rv == APR_SUCCESS, "no reconnect: %s", ERR_S(err));
    ck_assert_int_eq(won, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* AUTH and ACL users                                                  */

START_TEST(test_requirepass)
{
    redisContext *raw = raw_connect();
    rsp_store_t *good = store_open(tcp_url(":" PASS, srv_port, 0), T_NORMAL, 1);
    rsp_store_t *good3 =
        store_open(tcp_url(":" PASS, srv_port, 3), T_NORMAL, 1);
    rsp_store_t *bad =
        store_open(tcp_url(":badpass", srv_port, 0), T_NORMAL, 1);
    rsp_store_t *none = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 1);
    const char *err_good = NULL, *err_good3 = NULL, *err_bad = NULL,
               *err_none = NULL;
    apr_status_t rv_good, rv_good3, rv_bad, rv_none;
    int won_good = -1, won_good3 = -1, won_bad = -1, won_none = -1;
    reply_t r1, r2;

    r1 = raw_cmd(raw, "CONFIG SET requirepass %s", PASS);
    raw_cmd(raw, "AUTH %s", PASS);
    rv_good =
        rsp_store_claim(good, pool, "a:good", "v", TTL, &won_good, &err_good);
    rv_good3 = rsp_store_claim(good3, pool, "a:good3", "v", TTL, &won_good3,
                               &err_good3);
    rv_bad = rsp_store_claim(bad, pool, "a:bad", "v", TTL, &won_bad, &err_bad);
    rv_none =
        rsp_store_claim(none, pool, "a:none", "v", TTL, &won_none, &err_none);
    r2 = raw_cmd(raw, "CONFIG SET requirepass %s", "");

    raw_ok(raw, "CONFIG SET requirepass", r1);
    raw_ok(raw, "CONFIG SET requirepass \"\"", r2);
    ck_assert_msg(rv_good == APR_SUCCESS, "good: %s", ERR_S(err_good));
    ck_assert_int_eq(won_good, 1);
    ck_assert_msg(rv_good3 == APR_SUCCESS, "good /3: %s", ERR_S(err_good3));
    ck_assert_int_eq(won_good3, 1);

    ck_assert_int_ne(rv_bad, APR_SUCCESS);
    ck_assert_int_ne(won_bad, 1);
    ck_assert_msg(contains(err_bad, "AUTH") && contains(err_bad, "WRONGPASS"),
                  "bad: %s", ERR_S(err_bad));
    ck_assert_msg(!contains(err_bad, "badpass"), "password in err: %s",
                  err_bad);

    ck_assert_int_ne(rv_none, APR_SUCCESS);
    ck_assert_int_ne(won_none, 1);
    ck_assert_msg(contains(err_none, "NOAUTH"), "none: %s", ERR_S(err_none));

    ck_assert_int_eq(raw_exists(raw, "a:good"), 1);
    ck_assert_int_eq(raw_exists(raw, "a:bad"), 0);
    ck_assert_int_eq(raw_exists(raw, "a:none"), 0);
    ck_assert_int_eq(raw_exists(raw, "a:good3"), 0);
    raw_select(raw, 3);
    ck_assert_int_eq(raw_exists(raw, "a:good3"), 1);
    raw_select(raw, 0);
}
END_TEST

START_TEST(test_acl_user)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st =
        store_open(tcp_url(USER_U ":pw", srv_port, 0), T_NORMAL, 1);
    rsp_store_t *bad =
        store_open(tcp_url(USER_U ":nope", srv_port, 0), T_NORMAL, 1);
    const char *err = NULL, *err_bad = NULL, *err_put = NULL, *err_gone1 = NULL,
               *err_gone2 = NULL, *value = NULL;
    apr_status_t rv, rv_bad, rv_put, rv_get, rv_gone1, rv_gone2;
    int won = -1, won_bad = -1, won_gone1 = -1, won_gone2 = -1;
    apr_size_t len = 0;
    long long exists;
    reply_t r1, r2;

    r1 = raw_cmd(raw, "ACL SETUSER %s on %s %s %s", USER_U, ">pw", "~*",
                 "+@all");
    rv = rsp_store_claim(st, pool, "u:k", "v", TTL, &won, &err);
    rv_put = rsp_store_put(st, pool, "u:p", "pv", 2, TTL, &err_put);
    rv_get = rsp_store_get(st, pool, "u:p", &value, &len, &err_put);
    rv_bad = rsp_store_claim(bad, pool, "u:bad", "v", TTL, &won_bad, &err_bad);
    exists = raw_exists(raw, "u:k");
    r2 = raw_cmd(raw, "ACL DELUSER %s", USER_U);
    /* The user is gone: its pooled connection was closed by the server and a
     * new one cannot authenticate. Both attempts fail closed. */
    rv_gone1 =
        rsp_store_claim(st, pool, "u:gone", "v", TTL, &won_gone1, &err_gone1);
    rv_gone2 =
        rsp_store_claim(st, pool, "u:gone", "v", TTL, &won_gone2, &err_gone2);

    raw_ok(raw, "ACL SETUSER", r1);
    ck_assert_int_eq(r2.type, REDIS_REPLY_INTEGER);
    ck_assert_int_eq(r2.integer, 1);
    ck_assert_msg(rv == APR_SUCCESS, "claim as ACL user: %s", ERR_S(err));
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(exists, 1);
    ck_assert_msg(rv_put == APR_SUCCESS && rv_get == APR_SUCCESS, "put/get: %s",
                  ERR_S(err_put));
    ck_assert_str_eq(value, "pv");

    ck_assert_int_ne(rv_bad, APR_SUCCESS);
    ck_assert_int_ne(won_bad, 1);
    ck_assert_msg(contains(err_bad, "AUTH") && contains(err_bad, "WRONGPASS"),
                  "bad: %s", ERR_S(err_bad));
    ck_assert_msg(!contains(err_bad, "nope"), "password in err: %s", err_bad);

    ck_assert_int_ne(rv_gone1, APR_SUCCESS);
    ck_assert_int_ne(won_gone1, 1);
    ck_assert_msg(err_gone1 && *err_gone1, "no error text");
    ck_assert_int_ne(rv_gone2, APR_SUCCESS);
    ck_assert_int_ne(won_gone2, 1);
    ck_assert_msg(contains(err_gone2, "AUTH"), "gone: %s", ERR_S(err_gone2));
    ck_assert_int_eq(raw_exists(raw, "u:gone"), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bounded time (invariant 8)                                          */

START_TEST(test_refused_fails_fast)
{
    int port = dead_port();
    apr_interval_time_t to = apr_time_from_sec(3);
    rsp_store_t *st = store_open(tcp_url(NULL, port, 0), to, 1);
    const char *err = NULL, *value = NULL, *text = NULL;
    apr_size_t len = 0;
    apr_time_t t0;
    long long el;
    int won = -1, deleted = -1, i;

    for (i = 0; i < 2; i++) {
        won = -1;
        err = NULL;
        t0 = apr_time_now();
        ck_assert_int_ne(rsp_store_claim(st, pool, "r:k", "v", TTL, &won, &err),
                         APR_SUCCESS);
        el = ms_since(t0);
        ck_assert_int_ne(won, 1);
        ck_assert_msg(contains(err, "refused"), "err: %s", ERR_S(err));
        ck_assert_msg(contains(err, apr_psprintf(pool, ":%d", port)),
                      "err does not name the store: %s", err);
        ck_assert_msg(el < 1000, "refused connect took %lld ms", el);
    }

    t0 = apr_time_now();
    err = NULL;
    ck_assert_int_ne(rsp_store_get(st, pool, "r:k", &value, &len, &err),
                     APR_SUCCESS);
    ck_assert_msg(err && *err, "get: no error text");
    err = NULL;
    ck_assert_int_ne(rsp_store_put(st, pool, "r:k", "v", 1, TTL, &err),
                     APR_SUCCESS);
    ck_assert_msg(err && *err, "put: no error text");
    err = NULL;
    ck_assert_int_ne(
        rsp_store_del_if_equal(st, pool, "r:k", "v", &deleted, &err),
        APR_SUCCESS);
    ck_assert_int_ne(deleted, 1);
    ck_assert_msg(err && *err, "del: no error text");
    err = NULL;
    ck_assert_int_ne(rsp_store_info(st, pool, NULL, &text, &err), APR_SUCCESS);
    ck_assert_msg(err && *err, "info: no error text");
    el = ms_since(t0);
    ck_assert_msg(el < 1000, "four refused operations took %lld ms", el);
}
END_TEST

/* A listener whose accept queue is full: the SYN is dropped and connect()
 * hangs; the connect timeout must end it. */
START_TEST(test_connect_timeout)
{
    int port = full_backlog_port();
    rsp_store_t *st;
    const char *err = NULL;
    apr_status_t rv;
    apr_time_t t0;
    long long el;
    int won = -1;

    st = store_open(tcp_url(NULL, port, 0), T_SHORT, 1);
    t0 = apr_time_now();
    rv = rsp_store_claim(st, pool, "ct:k", "v", TTL, &won, &err);
    el = ms_since(t0);
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert_int_ne(won, 1);
    ck_assert_msg(err && *err, "no error text");
    ck_assert_msg(el < apr_time_as_msec(T_SHORT + SLACK),
                  "connect to a full backlog took %lld ms (timeout %lld ms)",
                  el, (long long)apr_time_as_msec(T_SHORT));
    /* It did hang until the timeout (else this test proves nothing). */
    ck_assert_msg(el >= apr_time_as_msec(T_SHORT) - 50,
                  "failed after %lld ms: %s", el, err);
}
END_TEST

/* SIGSTOP the server: the claim errors out within its timeout, on the
 * pooled connection and on a fresh one; after SIGCONT the same store works
 * (reconnects); a second stop times out again, so the rebuilt connection got
 * its timeout too. */
START_TEST(test_hung_store)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_SHORT, 1);
    outcome_t o0, o1, o2, o3, o4, o5;
    int s1, c1, s2, c2;

    o0 = timed_claim(st, "h:k0");
    assert_won("before", o0);

    s1 = server_signal(SIGSTOP);
    o1 = timed_claim(st, "h:k1"); /* pooled connection */
    o2 = timed_claim(st, "h:k2"); /* fresh connection, to a stopped server */
    c1 = server_signal(SIGCONT);
    o3 = timed_claim(st, "h:k3");
    s2 = server_signal(SIGSTOP);
    o4 = timed_claim(st, "h:k4"); /* the rebuilt connection */
    c2 = server_signal(SIGCONT);
    o5 = timed_claim(st, "h:k5");

    ck_assert_int_eq(s1, 0);
    ck_assert_int_eq(c1, 0);
    ck_assert_int_eq(s2, 0);
    ck_assert_int_eq(c2, 0);
    assert_timed_out("stopped, pooled connection", o1);
    assert_timed_out("stopped, fresh connection", o2);
    assert_won("after SIGCONT", o3);
    assert_timed_out("stopped again, rebuilt connection", o4);
    assert_won("after the second SIGCONT", o5);
}
END_TEST

/* Workers queued for a pooled connection on a stopped server: every one
 * returns an error, within the wait for a connection plus the command's
 * timeout. */
START_TEST(test_hung_store_pool)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_SHORT, 2);
    long long bound = apr_time_as_msec(2 * T_SHORT + SLACK);
    outcome_t o0, o1;
    worker_t *w;
    int s;

    o0 = timed_claim(st, "hp:warm");
    assert_won("before", o0);
    s = server_signal(SIGSTOP);
    w = run_workers(st, "hp", 1, 0, 5000, srv_pid);
    o1 = timed_claim(st, "hp:after");

    ck_assert_int_eq(s, 0);
    assert_workers_failed(w, bound);
    assert_won("after SIGCONT", o1);
}
END_TEST

/* A store that answers, but one byte every 250 ms ("+OK\r\n" in 1.25 s):
 * each read() returns within the 300 ms timeout, the command does not. The
 * store's contract (rsp_store.h) bounds each command by the timeout. */
START_TEST(test_slow_reply_bounded)
{
    fake_server_t fs;

    check_trickled_claim(&fs, "redis://" HOST ":", "+OK\r\n", 250);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The connection pool                                                 */

START_TEST(test_pool_distinct_keys)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 2);
    long long conns0, conns1;
    worker_t *w;

    conns0 = raw_info_field(raw, "stats", "total_connections_received");
    w = run_workers(st, "pd", 25, 0, 20000, 0);
    conns1 = raw_info_field(raw, "stats", "total_connections_received");

    assert_all_won(w);
    ck_assert_int_eq(raw_cmd(raw, "DBSIZE").integer, NTHREADS * 25);
    /* max_conns 2: 8 threads shared at most 2 connections. */
    ck_assert_msg(conns1 - conns0 >= 1 && conns1 - conns0 <= 2,
                  "%lld connections for max_conns 2", conns1 - conns0);
}
END_TEST

START_TEST(test_pool_same_key_won_once)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 2);

    assert_one_winner_each(run_workers(st, "ps", 25, 1, 20000, 0), 25);
}
END_TEST

START_TEST(test_pool_max_conns_at_least_one)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 0);
    outcome_t o = timed_claim(st, "pm:k");

    assert_won("max_conns 0", o);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Unix socket                                                         */

START_TEST(test_unix_socket)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = store_open(
        apr_pstrcat(pool, "redis+unix://", srv_sock, NULL), T_NORMAL, 1);
    rsp_store_t *st2 =
        store_open(apr_pstrcat(pool, "redis+unix://", srv_sock, "?db=2", NULL),
                   T_NORMAL, 1);
    const char *value = NULL;
    apr_size_t len = 0;

    ck_assert_int_eq(claim_ok(st, "ux:k", "v", TTL), 1);
    ck_assert_int_eq(claim_ok(st, "ux:k", "v", TTL), 0);
    ck_assert_int_eq(raw_exists(raw, "ux:k"), 1);
    ck_assert_int_gt(raw_pttl(raw, "ux:k"), TTL - 1000);

    ck_assert_int_eq(claim_ok(st2, "ux:k2", "v", TTL), 1);
    put_ok(st2, "ux:p", "pv", 2, TTL);
    value = get_ok(st2, "ux:p", &len);
    ck_assert_str_eq(value, "pv");
    ck_assert_int_eq(raw_exists(raw, "ux:k2"), 0);
    raw_select(raw, 2);
    ck_assert_int_eq(raw_exists(raw, "ux:k2"), 1);
    raw_select(raw, 0);
}
END_TEST

START_TEST(test_unix_socket_missing)
{
    rsp_store_t *st = store_open(
        apr_pstrcat(pool, "redis+unix://", srv_dir, "/absent.sock", NULL),
        T_NORMAL, 1);
    const char *err = NULL;
    apr_time_t t0 = apr_time_now();
    int won = -1;

    ck_assert_int_ne(rsp_store_claim(st, pool, "ux:k", "v", TTL, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_ne(won, 1);
    ck_assert_msg(contains(err, "absent.sock"), "err: %s", ERR_S(err));
    ck_assert_int_lt(ms_since(t0), 1000);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ReplaySPStoreReplicas: claims acknowledged by replicas (WAIT)        */

#define WAIT_MS 100

static rsp_store_t *acked_store(void)
{
    rsp_store_t *st = store_open(tcp_url(NULL, srv_port, 0), T_NORMAL, 2);

    st->replicas = 1;
    st->replicas_wait = apr_time_from_msec(WAIT_MS);
    return st;
}

/* No replica attached: a claim is written but not won; it stays. */
START_TEST(test_replicas_unacked_claim_kept)
{
    redisContext *raw = raw_connect();
    rsp_store_t *st = acked_store();
    rsp_claim_read_t c;
    const char *err = NULL;
    apr_time_t t0 = apr_time_now();
    apr_status_t rv;
    int won = -1, replaced = -1;
    reply_t r;

    memset(&c, 0, sizeof(c));
    c.key = "w:claim";
    c.value = "mine";
    c.ttl_ms = TTL;
    rv = rsp_store_claim_read(st, pool, &c, &err);
    ck_assert_int_eq(rv, RSP_STORE_UNACKED);
    ck_assert_int_eq(c.won, 0);
    ck_assert_msg(contains(err, "0 of the 1 replicas"), "err: %s", ERR_S(err));
    ck_assert_int_ge(ms_since(t0), WAIT_MS - 5);
    ck_assert_int_lt(ms_since(t0), 1000);
    r = raw_cmd(raw, "GET %s", "w:claim");
    ck_assert_int_eq(r.type, REDIS_REPLY_STRING);
    ck_assert_str_eq(r.str, "mine");                /* kept */
    /* a second claim of it is lost, and a lost claim is not waited for */
    c.value = "theirs";
    t0 = apr_time_now();
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 0);
    ck_assert_str_eq(c.holder, "mine");
    /* the single claim */
    ck_assert_int_eq(rsp_store_claim(st, pool, "w:one", "v", TTL, &won, &err),
                     RSP_STORE_UNACKED);
    ck_assert_int_eq(won, 0);
    ck_assert_int_eq(raw_cmd(raw, "EXISTS %s", "w:one").integer, 1);
    ck_assert_int_eq(rsp_store_claim(st, pool, "w:one", "v", TTL, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    /* a takeover (a replace on its own) likewise: done on the primary,
     * not acknowledged */
    ck_assert_int_eq(rsp_store_replace(st, pool, "w:claim", "mine", NULL,
                                       "taken", &replaced, &err),
                     RSP_STORE_UNACKED);
    ck_assert_int_eq(replaced, 1);
    ck_assert_str_eq(raw_cmd(raw, "GET %s", "w:claim").str, "taken");
    /* one that does not apply is not waited for */
    ck_assert_int_eq(rsp_store_replace(st, pool, "w:claim", "mine", NULL, "x",
                                       &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    /* the session's writes are not claims: not waited for */
    ck_assert_int_eq(rsp_store_put(st, pool, "w:session", "s", 1, TTL, &err),
                     APR_SUCCESS);
}
END_TEST

static int replica_port;

static int replica_synced(void *unused)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout(HOST, srv_port, tv);
    redisReply *r;
    int ok = 0;

    if (!c) {
        return 0;
    }
    if (!c->err && redisSetTimeout(c, tv) == REDIS_OK) {
        r = redisCommand(c, "INFO replication");
        ok = r && r->type == REDIS_REPLY_STRING
            && strstr(r->str, "connected_slaves:1") && strstr(r->str, "state=online");
        if (r) {
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return ok;
}

/* A replica attached: claims are won once it has them. */
START_TEST(test_replicas_acked_claim_won)
{
    char port[16], master_port[16], log[300], rdir[300];
    /* clang-format off */
    const char *argv[] = {"/usr/bin/redis-server", "--port", port, "--bind", HOST,
        "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", rdir,
        "--replicaof", HOST, master_port, NULL};
    /* clang-format on */
    rsp_store_t *st;
    rsp_claim_read_t c;
    const char *err = NULL;
    pid_t pid;
    int fd, replaced = 0;

    if (getenv("RSP_REDIS_SERVER")) {
        argv[0] = getenv("RSP_REDIS_SERVER");
    }
    ck_assert_int_ge(fd = bound_socket(&replica_port), 0);
    close(fd);
    snprintf(port, sizeof(port), "%d", replica_port);
    snprintf(master_port, sizeof(master_port), "%d", srv_port);
    snprintf(rdir, sizeof(rdir), "%s", srv_dir);
    snprintf(log, sizeof(log), "%s/replica.log", srv_dir);
    pid = spawn_server(argv, log, replica_synced, NULL);
    ck_assert_int_gt(pid, 0);
    st = acked_store();
    /* a replica acknowledges in a millisecond; the test allows a loaded
     * machine more */
    st->replicas_wait = apr_time_from_msec(1500);
    memset(&c, 0, sizeof(c));
    c.key = "w:acked";
    c.value = "mine";
    c.ttl_ms = TTL;
    ck_assert_msg(rsp_store_claim_read(st, pool, &c, &err) == APR_SUCCESS,
                  "claim: %s", ERR_S(err));
    ck_assert_int_eq(c.won, 1);
    c.value = "theirs";
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 0);
    ck_assert_msg(rsp_store_replace(st, pool, "w:acked", "mine", NULL, "taken",
                                    &replaced, &err) == APR_SUCCESS,
                  "replace: %s", ERR_S(err));
    ck_assert_int_eq(replaced, 1);
    /* asking for more replicas than there are: not won */
    st->replicas = 2;
    c.key = "w:two";
    c.value = "mine";
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), RSP_STORE_UNACKED);
    ck_assert_msg(contains(err, "1 of the 2 replicas"), "err: %s", ERR_S(err));
    stop_server(&pid, "redis-server (replica)");
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *store_redis_suite(void)
{
    Suite *s = suite_create("rsp_store_redis");
    TCase *tc;

    tc = store_tcase("ops", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_claim_first_wins);
    tcase_add_test(tc, test_claim_ttl_must_be_positive);
    tcase_add_test(tc, test_claim_expires_in_ms);
    tcase_add_test(tc, test_get_absent);
    tcase_add_test(tc, test_put_get_binary);
    tcase_add_test(tc, test_put_overwrites_and_sets_ttl);
    tcase_add_test(tc, test_del_if_equal);
    tcase_add_test(tc, test_append);
    tcase_add_test(tc, test_claim_read);
    tcase_add_test(tc, test_write_many);
    tcase_add_test(tc, test_replace);
    tcase_add_test(tc, test_write_many_after_script_flush);
    tcase_add_test(tc, test_ttl);
    tcase_add_test(tc, test_info);
    tcase_add_test(tc, test_not_initialised);
    tcase_add_test(tc, test_unknown_backend);
    tcase_add_test(tc, test_db_selection);
    tcase_add_test(tc, test_pool_cleanup_closes);
    suite_add_tcase(s, tc);

    tc = store_tcase("errors", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_oom_is_error);
    tcase_add_test(tc, test_readonly_is_error);
    tcase_add_test(tc, test_wrongtype_is_error);
    tcase_add_test(tc, test_noperm_is_error);
    tcase_add_test(tc, test_server_closed_connection);
    suite_add_tcase(s, tc);

    tc = store_tcase("auth", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_requirepass);
    tcase_add_test(tc, test_acl_user);
    suite_add_tcase(s, tc);

    tc = store_tcase("bounded", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_refused_fails_fast);
    tcase_add_test(tc, test_connect_timeout);
    tcase_add_test(tc, test_hung_store);
    tcase_add_test(tc, test_hung_store_pool);
    tcase_add_test(tc, test_slow_reply_bounded);
    suite_add_tcase(s, tc);

    tc = store_tcase("pool", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_pool_distinct_keys);
    tcase_add_test(tc, test_pool_same_key_won_once);
    tcase_add_test(tc, test_pool_max_conns_at_least_one);
    suite_add_tcase(s, tc);

    tc = store_tcase("replicas", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_replicas_unacked_claim_kept);
    tcase_add_test(tc, test_replicas_acked_claim_won);
    suite_add_tcase(s, tc);

    tc = store_tcase("unix", setup, teardown, tcase_restore);
    tcase_add_test(tc, test_unix_socket);
    tcase_add_test(tc, test_unix_socket_missing);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return run_with_servers(store_redis_suite, srv_dir, server_start,
                            server_stop);
}
