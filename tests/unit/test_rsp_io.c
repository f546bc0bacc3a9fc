/* Unit tests for rsp_io.c: the store connections, TLS above all, against
 * real redis-server TLS listeners with certificates made here (openssl)
 * by a throwaway CA.
 *
 * What a TLS store connection must do: refuse a server whose certificate
 * does not chain to the configured CA, or names another host (DNS name)
 * or address (IP); refuse bad TLS settings (CA, certificate, key) with the
 * input named, never prompting for a passphrase; finish or fail every
 * handshake within its deadline; keep an idle connection whose server only
 * sent session tickets (no reconnect per request); resume the session on
 * the next connection, also after the server closed the previous one.
 *
 * The per-server pools the backends share: a connection reused, made
 * again after a drop, when out of step or closed by the server; waiting
 * for a free one bounded; a failed connect holding nothing.
 *
 * main() makes the certificates and starts two servers (one with a
 * certificate for localhost and 127.0.0.1, one with a valid certificate
 * for other.example) before the suite, and stops them by PID after it.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rsp_unit.h"
#include "rsp_unit_server.h"
#include <apr_general.h>
#include <apr_strings.h>
#include <hiredis.h>

#include "rsp_io.h"
#include "rsp_store.h"
#include "rsp_url.h"

#define HOST "127.0.0.1"
#define DEADLINE() (apr_time_now() + T_NORMAL)

static char dir[] = "/tmp/rsp-io-XXXXXX";
static char path_buf[16][300];
static int n_paths;

typedef struct {
    pid_t pid;
    int port;       /* plaintext: the tests' own client */
    int tls_port;
    char log[300];
} server_t;

static server_t good = {-1}, other = {-1};

static const char *file(const char *name)
{
    char *p = path_buf[n_paths++ % 16];

    snprintf(p, sizeof(path_buf[0]), "%s/%s", dir, name);
    return p;
}

/* ------------------------------------------------------------------ */
/* Certificates and servers (plain POSIX: before apr_initialize)        */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "failed (%d): %s\n", rc, cmd);
    }
    return rc;
}

static int make_ca(const char *name, const char *cn)
{
    return sh("cd %s && openssl req -x509 -newkey rsa:2048 -nodes -keyout %s.key "
              "-out %s.pem -days 2 -subj '/CN=%s' -addext "
              "basicConstraints=critical,CA:TRUE -addext "
              "keyUsage=critical,keyCertSign >/dev/null 2>&1",
              dir, name, name, cn);
}

static int make_leaf(const char *name, const char *san, const char *ca)
{
    return sh("cd %s && printf 'subjectAltName=%s\\nextendedKeyUsage=serverAuth,"
              "clientAuth\\n' > %s.ext && openssl req -newkey rsa:2048 -nodes "
              "-keyout %s.key -out %s.csr -subj /CN=%s >/dev/null 2>&1 && "
              "openssl x509 -req -in %s.csr -CA %s.pem -CAkey %s.key "
              "-CAcreateserial -out %s.pem -days 2 -extfile %s.ext >/dev/null 2>&1",
              dir, san, name, name, name, name, name, ca, ca, name, name);
}

static int make_pki(void)
{
    return make_ca("ca", "rsp io test CA") || make_ca("rogue", "rsp unrelated CA")
        || make_leaf("server", "DNS:localhost,IP:127.0.0.1", "ca")
        || make_leaf("other", "DNS:other.example", "ca")
        || make_leaf("client", "DNS:replica.example", "ca")
        || sh("cd %s && cat client.pem client.key > client-both.pem && "
              "echo 'not a certificate' > garbage.pem && openssl genpkey "
              "-algorithm RSA -aes256 -pass pass:secret -out encrypted.key "
              ">/dev/null 2>&1", dir);
}

static int server_ping(void *arg)
{
    server_t *s = arg;
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout(HOST, s->port, tv);
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

static int start_one(server_t *s, const char *cert)
{
    const char *bin = getenv("RSP_REDIS_SERVER");
    char port[16], tls_port[16], crt[300], key[300], ca[300];
    /* clang-format off */
    const char *argv[] = {NULL,
        "--port", port, "--bind", HOST, "--save", "", "--appendonly", "no",
        "--daemonize", "no", "--dir", dir, "--tls-port", tls_port,
        "--tls-cert-file", crt, "--tls-key-file", key, "--tls-ca-cert-file", ca,
        "--tls-auth-clients", "no", NULL};
    /* clang-format on */
    int fd;

    argv[0] = bin ? bin : "/usr/bin/redis-server";
    snprintf(crt, sizeof(crt), "%s/%s.pem", dir, cert);
    snprintf(key, sizeof(key), "%s/%s.key", dir, cert);
    snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
    snprintf(s->log, sizeof(s->log), "%s/redis-%s.log", dir, cert);
    if ((fd = bound_socket(&s->port)) < 0) {
        return -1;
    }
    close(fd);
    if ((fd = bound_socket(&s->tls_port)) < 0) {
        return -1;
    }
    close(fd);
    snprintf(port, sizeof(port), "%d", s->port);
    snprintf(tls_port, sizeof(tls_port), "%d", s->tls_port);
    s->pid = spawn_server(argv, s->log, server_ping, s);
    return s->pid > 0 ? 0 : -1;
}

static int servers_start(void)
{
    if (make_pki() != 0) {
        return -1;
    }
    return start_one(&good, "server") || start_one(&other, "other") ? -1 : 0;
}

static void servers_stop(void)
{
    stop_server(&good.pid, "redis-server (TLS)");
    stop_server(&other.pid, "redis-server (TLS, other name)");
}

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static rsp_tls_t *tls_with(const char *ca, const char *cert, const char *key)
{
    rsp_tls_t *t = NULL;
    const char *err = NULL;
    rsp_tls_input_t input = RSP_TLS_INPUT_NONE;

    ck_assert_msg(rsp_tls_create(&t, pool, ca, cert, key, &input, &err)
                      == APR_SUCCESS, "tls: %s", ERR_S(err));
    return t;
}

static rsp_peer_t peer_of(const char *host, int port, rsp_tls_t *t,
                          rsp_tls_cache_t *cache)
{
    rsp_peer_t peer;

    memset(&peer, 0, sizeof(peer));
    peer.host = host;
    peer.port = port;
    peer.tls = t;
    peer.cache = cache;
    return peer;
}

/* PING on c, PONG back. */
static void ping(rsp_conn_t *c)
{
    char buf[64];
    apr_size_t got = 0, have = 0;
    const char *err = NULL;

    ck_assert_int_eq(rsp_conn_send(c, "PING\r\n", 6, DEADLINE(), pool, &err),
                     APR_SUCCESS);
    while (have < 7) {
        ck_assert_msg(rsp_conn_recv(c, buf + have, sizeof(buf) - have, &got,
                                    DEADLINE(), pool, &err) == APR_SUCCESS,
                      "recv: %s", ERR_S(err));
        have += got;
    }
    ck_assert_int_eq(have, 7);
    ck_assert(memcmp(buf, "+PONG\r\n", 7) == 0);
}

static rsp_conn_t *open_ok(const rsp_peer_t *peer)
{
    rsp_conn_t *c = NULL;
    const char *err = NULL;

    ck_assert_msg(rsp_conn_open(&c, pool, peer, DEADLINE(), &err) == APR_SUCCESS,
                  "open %s:%d: %s", peer->host, peer->port, ERR_S(err));
    return c;
}

/* A connection that must be refused: *err contains why. */
static void open_refused(const rsp_peer_t *peer, const char *why)
{
    rsp_conn_t *c = (rsp_conn_t *)&c;
    const char *err = NULL;
    apr_time_t t0 = apr_time_now();

    ck_assert_int_ne(rsp_conn_open(&c, pool, peer, DEADLINE(), &err), APR_SUCCESS);
    ck_assert_msg(contains(err, why), "expected \"%s\", got: %s", why, ERR_S(err));
    ck_assert_msg(c == (rsp_conn_t *)&c, "*out written on failure");
    ck_assert_int_lt(ms_since(t0), 2000);
}

/* Drop every client connection on s's TLS port (CLIENT KILL LADDR). */
static void kill_tls_clients(server_t *s)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout(HOST, s->port, tv);
    redisReply *r;
    char laddr[64];

    ck_assert(c && !c->err);
    snprintf(laddr, sizeof(laddr), HOST ":%d", s->tls_port);
    r = redisCommand(c, "CLIENT KILL LADDR %s", laddr);
    ck_assert(r && r->type == REDIS_REPLY_INTEGER && r->integer >= 1);
    freeReplyObject(r);
    redisFree(c);
}

/* ------------------------------------------------------------------ */
/* TLS settings                                                         */

static void tls_refused(const char *ca, const char *cert, const char *key,
                        rsp_tls_input_t want, const char *why)
{
    rsp_tls_t *t = (rsp_tls_t *)&t;
    rsp_tls_input_t input = RSP_TLS_INPUT_NONE;
    const char *err = NULL;
    apr_time_t t0 = apr_time_now();

    ck_assert_int_ne(rsp_tls_create(&t, pool, ca, cert, key, &input, &err),
                     APR_SUCCESS);
    ck_assert_msg(input == want, "input %d, expected %d (%s)", input, want,
                  ERR_S(err));
    ck_assert_msg(contains(err, why), "expected \"%s\", got: %s", why, ERR_S(err));
    ck_assert_msg(t == (rsp_tls_t *)&t, "*out written on failure");
    ck_assert_int_lt(ms_since(t0), 2000); /* no passphrase prompt */
}

START_TEST(test_tls_settings)
{
    /* good: the system's CAs; a CA file; a client pair; the key in the
     * certificate file */
    tls_with(NULL, NULL, NULL);
    tls_with(file("ca.pem"), NULL, NULL);
    tls_with(file("ca.pem"), file("client.pem"), file("client.key"));
    tls_with(file("ca.pem"), file("client-both.pem"), NULL);

    tls_refused(file("absent.pem"), NULL, NULL, RSP_TLS_INPUT_CA, "absent.pem");
    tls_refused(file("garbage.pem"), NULL, NULL, RSP_TLS_INPUT_CA, "garbage.pem");
    tls_refused(file("ca.pem"), file("garbage.pem"), file("client.key"),
                RSP_TLS_INPUT_CERT, "garbage.pem");
    tls_refused(file("ca.pem"), file("client.pem"), file("server.key"),
                RSP_TLS_INPUT_KEY, "server.key");
    tls_refused(file("ca.pem"), file("client.pem"), NULL, RSP_TLS_INPUT_KEY,
                "client.pem");                   /* no key in it */
    tls_refused(file("ca.pem"), file("client.pem"), file("encrypted.key"),
                RSP_TLS_INPUT_KEY, "unencrypted PEM key is expected");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The server's certificate                                             */

START_TEST(test_verified_name_and_address)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_peer_t peer;

    peer = peer_of("localhost", good.tls_port, t, NULL);
    rsp_conn_t *c = open_ok(&peer);
    ping(c);
    ck_assert_int_eq(rsp_conn_resumed(c), 0);
    rsp_conn_close(c);
    peer = peer_of(HOST, good.tls_port, t, NULL);
    c = open_ok(&peer);
    ping(c);
    rsp_conn_close(c);
}
END_TEST

START_TEST(test_other_ca_refused)
{
    rsp_tls_t *rogue = tls_with(file("rogue.pem"), NULL, NULL);
    rsp_tls_t *system_cas = tls_with(NULL, NULL, NULL);
    rsp_peer_t peer = peer_of("localhost", good.tls_port, rogue, NULL);

    open_refused(&peer, "certificate is not accepted");
    peer.tls = system_cas;
    open_refused(&peer, "certificate is not accepted");
}
END_TEST

START_TEST(test_valid_certificate_for_another_name_refused)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_peer_t peer = peer_of("localhost", other.tls_port, t, NULL);

    open_refused(&peer, "hostname mismatch");
    peer.host = HOST;
    open_refused(&peer, "IP address mismatch");
    /* its own name is fine (other.example does not resolve: checked on
     * the IP form above; the name form needs the name to connect) */
}
END_TEST

/* rediss:// pointed at a plaintext port: Redis reads the ClientHello as
 * the start of a command and waits for its end; the handshake fails at
 * its deadline, nothing is sent in plaintext. */
START_TEST(test_plaintext_port_refused)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_peer_t peer = peer_of("localhost", good.port, t, NULL);
    rsp_conn_t *c = NULL;
    const char *err = NULL;
    apr_time_t t0 = apr_time_now();

    ck_assert_int_ne(rsp_conn_open(&c, pool, &peer, t0 + T_SHORT, &err),
                     APR_SUCCESS);
    ck_assert_msg(contains(err, "TLS handshake"), "err: %s", ERR_S(err));
    ck_assert_int_lt(ms_since(t0), HUNG_BOUND_MS);
}
END_TEST

START_TEST(test_handshake_bounded)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    int port = 0;
    rsp_peer_t peer;
    rsp_conn_t *c = NULL;
    const char *err = NULL;
    apr_time_t t0;

    listener(16, &port); /* the kernel accepts; nobody ever answers */
    peer = peer_of(HOST, port, t, NULL);
    t0 = apr_time_now();
    ck_assert_int_ne(rsp_conn_open(&c, pool, &peer, t0 + T_SHORT, &err),
                     APR_SUCCESS);
    ck_assert_msg(contains(err, "TLS handshake: timed out"), "err: %s", ERR_S(err));
    ck_assert_int_ge(ms_since(t0), apr_time_as_msec(T_SHORT) - 5);
    ck_assert_int_lt(ms_since(t0), HUNG_BOUND_MS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Connections kept, sessions resumed                                   */

START_TEST(test_idle_with_tickets_is_not_closed)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_peer_t peer = peer_of("localhost", good.tls_port, t, NULL);
    rsp_conn_t *c = open_ok(&peer);

    /* TLS 1.3: the server sends its tickets after the handshake; they
     * arrive on the idle connection */
    sleep_ms(100);
    ck_assert_int_eq(rsp_conn_idle_closed(c), 0);
    ck_assert_int_eq(rsp_conn_idle_closed(c), 0);
    ping(c); /* and the stream is still in step */
    ck_assert_int_eq(rsp_conn_idle_closed(c), 0);
    rsp_conn_close(c);
}
END_TEST

START_TEST(test_closed_by_server_is_seen)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_peer_t peer = peer_of("localhost", good.tls_port, t, NULL);
    rsp_conn_t *c = open_ok(&peer);
    char buf[16];
    apr_size_t got = 0;
    const char *err = NULL;

    ping(c);
    kill_tls_clients(&good);
    sleep_ms(100);
    ck_assert_int_eq(rsp_conn_idle_closed(c), 1);
    rsp_conn_close(c);

    c = open_ok(&peer);
    ping(c);
    kill_tls_clients(&good);
    ck_assert_int_eq(rsp_conn_recv(c, buf, sizeof(buf), &got, DEADLINE(), pool,
                                   &err), APR_EOF);
    rsp_conn_close(c);
}
END_TEST

START_TEST(test_session_resumed)
{
    rsp_tls_t *t = tls_with(file("ca.pem"), NULL, NULL);
    rsp_tls_cache_t *cache = NULL;
    rsp_peer_t peer;
    rsp_conn_t *a, *b, *c;

    ck_assert_int_eq(rsp_tls_cache_create(&cache, pool), APR_SUCCESS);
    peer = peer_of("localhost", good.tls_port, t, cache);
    ck_assert_int_eq(rsp_tls_cache_ready(cache), 0);
    a = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(a), 0);
    ping(a); /* reads the tickets */
    ck_assert_int_eq(rsp_tls_cache_ready(cache), 1);
    /* a second connection while the first is open */
    b = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(b), 1);
    ping(b);
    rsp_conn_close(b);
    c = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(c), 1);
    ping(c);
    /* the server drops them: what the client holds stays resumable
     * (OpenSSL marks a connection's own session unresumable when it is
     * freed after the server closed it; the cache has its own copy).
     * Whether the server still knows it is the server's business. */
    kill_tls_clients(&good);
    sleep_ms(100);
    ck_assert_int_eq(rsp_conn_idle_closed(a), 1);
    ck_assert_int_eq(rsp_conn_idle_closed(c), 1);
    rsp_conn_close(a);
    rsp_conn_close(c);
    ck_assert_int_eq(rsp_tls_cache_ready(cache), 1);
    c = open_ok(&peer);
    ping(c);
    rsp_conn_close(c);
    /* a TLS error forgets it; the session does not skip the checks: a
     * server with another name's certificate is refused */
    peer.port = other.tls_port;
    open_refused(&peer, "hostname mismatch");
    ck_assert_int_eq(rsp_tls_cache_ready(cache), 0);
    peer.port = good.tls_port;
    c = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(c), 0);
    ping(c);
    rsp_conn_close(c);
    ck_assert_int_eq(rsp_tls_cache_ready(cache), 1);
    /* without a cache, nothing is resumed */
    peer = peer_of("localhost", good.tls_port, t, NULL);
    c = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(c), 0);
    rsp_conn_close(c);
}
END_TEST

START_TEST(test_plaintext_bounded)
{
    int port = 0;
    rsp_peer_t peer;
    rsp_conn_t *c;
    char buf[16];
    apr_size_t got = 0;
    const char *err = NULL;
    apr_time_t t0;

    listener(16, &port);
    peer = peer_of(HOST, port, NULL, NULL);
    c = open_ok(&peer);
    ck_assert_int_eq(rsp_conn_resumed(c), 0);
    ck_assert_int_eq(rsp_conn_idle_closed(c), 0);
    t0 = apr_time_now();
    ck_assert_int_eq(rsp_conn_recv(c, buf, sizeof(buf), &got, t0 + T_SHORT, pool,
                                   &err), APR_TIMEUP);
    ck_assert_int_lt(ms_since(t0), HUNG_BOUND_MS);
    rsp_conn_close(c);
    rsp_conn_close(NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The store over TLS                                                   */

START_TEST(test_store_over_tls)
{
    const char *url = apr_psprintf(pool, "rediss://localhost:%d/0", good.tls_port);
    rsp_store_url_t *u = NULL;
    rsp_store_t *st = NULL;
    const char *err = NULL, *v = NULL;
    apr_size_t len = 0;
    int won = -1;

    ck_assert_int_eq(rsp_store_url_parse(&u, pool, url, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_store_create(&st, pool, u, T_NORMAL, &err), APR_SUCCESS);
    /* a TLS URL without its context is refused, not sent in plaintext */
    ck_assert_int_eq(rsp_store_child_init(st, pool, 2), APR_EINVAL);
    st->tls = tls_with(file("ca.pem"), NULL, NULL);
    ck_assert_int_eq(rsp_store_child_init(st, pool, 2), APR_SUCCESS);
    ck_assert_msg(rsp_store_claim(st, pool, "io:claim", "r1", TTL, &won, &err)
                      == APR_SUCCESS, "claim: %s", ERR_S(err));
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(rsp_store_claim(st, pool, "io:claim", "r2", TTL, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(won, 0);
    ck_assert_int_eq(rsp_store_get(st, pool, "io:claim", &v, &len, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(v, "r1");
    /* the server drops the connection: the next command reconnects */
    kill_tls_clients(&good);
    sleep_ms(100);
    ck_assert_msg(rsp_store_get(st, pool, "io:claim", &v, &len, &err)
                      == APR_SUCCESS, "get after kill: %s", ERR_S(err));
    ck_assert_str_eq(v, "r1");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Per-server pools (rsp_pool_*): what both backends build on           */

typedef struct {
    rsp_pooled_t base;
    int stale;               /* out of step, as the test says */
} pconn_t;

typedef struct {
    int port;
    int connects, closes, destroys;
} pserver_t;

static apr_status_t p_connect(rsp_pooled_t *c, void *ctx, apr_pool_t *p,
                              apr_time_t deadline, const char **err)
{
    pserver_t *sv = c->server;
    rsp_peer_t peer;

    ck_assert_ptr_eq(ctx, sv);
    memset(&peer, 0, sizeof(peer));
    peer.host = HOST;
    peer.port = sv->port;
    sv->connects++;
    return rsp_conn_open(&c->io, p, &peer, deadline, err);
}

static void p_closed(rsp_pooled_t *c)
{
    ((pserver_t *)c->server)->closes++;
    ((pconn_t *)c)->stale = 0;
}

static void p_destroy(rsp_pooled_t *c)
{
    ((pserver_t *)c->server)->destroys++;
}

static int p_stale(const rsp_pooled_t *c)
{
    return ((const pconn_t *)c)->stale;
}

static const rsp_pool_kind_t p_kind = {
    sizeof(pconn_t), p_connect, p_closed, p_destroy, p_stale
};

/* From the test's pool: the pool's cleanup still reaches it. */
static pserver_t *pserver(int port)
{
    pserver_t *sv = apr_pcalloc(pool, sizeof(*sv));

    sv->port = port;
    return sv;
}

static pconn_t *acquire_ok(rsp_pool_t *pl, pserver_t *sv)
{
    rsp_pooled_t *c = NULL;
    const char *err = NULL;

    ck_assert_msg(rsp_pool_acquire(pl, sv, pool, "srv", DEADLINE(), &c, &err)
                      == APR_SUCCESS, "acquire: %s", ERR_S(err));
    ck_assert_ptr_nonnull(c->io);
    ck_assert_ptr_eq(c->server, sv);
    return (pconn_t *)c;
}

START_TEST(test_pool_reuses_and_connects_again)
{
    pserver_t *sv = pserver(0);
    apr_pool_t *sub;
    rsp_pool_t *pl;
    pconn_t *c, *again;

    listener(8, &sv->port); /* connections wait in its backlog */
    apr_pool_create(&sub, pool);
    ck_assert_int_eq(rsp_pool_create(&pl, sub, &p_kind, sv, 1, T_SHORT),
                     APR_SUCCESS);
    c = acquire_ok(pl, sv);
    ck_assert_int_eq(sv->connects, 1);
    rsp_pool_release(&c->base);
    again = acquire_ok(pl, sv);
    ck_assert_ptr_eq(again, c);
    ck_assert_int_eq(sv->connects, 1);    /* reused */
    rsp_pool_drop(&c->base);             /* its state unknown */
    ck_assert_ptr_null(c->base.io);
    ck_assert_int_eq(sv->closes, 1);
    rsp_pool_release(&c->base);
    c = acquire_ok(pl, sv);
    ck_assert_int_eq(sv->connects, 2);    /* connected again */
    c->stale = 1;                        /* bytes left unread */
    rsp_pool_release(&c->base);
    c = acquire_ok(pl, sv);
    ck_assert_int_eq(sv->connects, 3);
    ck_assert_int_eq(sv->closes, 2);
    rsp_pool_release(&c->base);
    ck_assert_int_eq(sv->destroys, 0);
    apr_pool_destroy(sub);
    ck_assert_int_eq(sv->destroys, 1);
    ck_assert_int_eq(sv->closes, 3);
}
END_TEST

START_TEST(test_pool_connects_again_after_the_server_closed)
{
    pserver_t *sv = pserver(0);
    int lfd = listener(8, &sv->port), afd;
    rsp_pool_t *pl;
    pconn_t *c;

    ck_assert_int_eq(rsp_pool_create(&pl, pool, &p_kind, sv, 1, T_SHORT),
                     APR_SUCCESS);
    c = acquire_ok(pl, sv);
    rsp_pool_release(&c->base);
    afd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(afd, 0);
    close(afd);                          /* closed while idle */
    sleep_ms(50);
    c = acquire_ok(pl, sv);
    ck_assert_int_eq(sv->connects, 2);
    rsp_pool_release(&c->base);
}
END_TEST

START_TEST(test_pool_full_is_bounded)
{
    pserver_t *sv = pserver(0);
    rsp_pool_t *pl;
    rsp_pooled_t *c2 = NULL;
    const char *err = NULL;
    pconn_t *c;
    apr_time_t t0;

    listener(8, &sv->port);
    ck_assert_int_eq(rsp_pool_create(&pl, pool, &p_kind, sv, 0, T_SHORT),
                     APR_SUCCESS);       /* 0: at least one */
    c = acquire_ok(pl, sv);
    t0 = apr_time_now();
    ck_assert_int_ne(rsp_pool_acquire(pl, sv, pool, "srv", DEADLINE(), &c2,
                                      &err), APR_SUCCESS);
    ck_assert_msg(ms_since(t0) < HUNG_BOUND_MS, "waited %lld ms",
                  ms_since(t0));
    ck_assert_str_eq(err, "srv: no free connection within the timeout");
    ck_assert_ptr_null(c2);
    rsp_pool_release(&c->base);
}
END_TEST

START_TEST(test_pool_failed_connect_holds_nothing)
{
    pserver_t *sv = pserver(0);
    rsp_pool_t *pl;
    rsp_pooled_t *c = NULL;
    const char *err = NULL;
    int i;

    sv->port = dead_port();
    ck_assert_int_eq(rsp_pool_create(&pl, pool, &p_kind, sv, 1, T_SHORT),
                     APR_SUCCESS);
    for (i = 0; i < 2; i++) {   /* the one connection is free again */
        err = NULL;
        ck_assert_int_ne(rsp_pool_acquire(pl, sv, pool, "srv", DEADLINE(),
                                          &c, &err), APR_SUCCESS);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(!contains(err, "no free connection"), "err: %s", err);
        ck_assert_int_eq(sv->connects, i + 1);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *io_suite(void)
{
    Suite *s = suite_create("rsp_io");
    TCase *tc = tcase_create("tls");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tls_settings);
    tcase_add_test(tc, test_verified_name_and_address);
    tcase_add_test(tc, test_other_ca_refused);
    tcase_add_test(tc, test_valid_certificate_for_another_name_refused);
    tcase_add_test(tc, test_plaintext_port_refused);
    tcase_add_test(tc, test_handshake_bounded);
    tcase_add_test(tc, test_idle_with_tickets_is_not_closed);
    tcase_add_test(tc, test_closed_by_server_is_seen);
    tcase_add_test(tc, test_session_resumed);
    tcase_add_test(tc, test_plaintext_bounded);
    tcase_add_test(tc, test_store_over_tls);
    suite_add_tcase(s, tc);

    tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_pool_reuses_and_connects_again);
    tcase_add_test(tc, test_pool_connects_again_after_the_server_closed);
    tcase_add_test(tc, test_pool_full_is_bounded);
    tcase_add_test(tc, test_pool_failed_connect_holds_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_with_servers(io_suite, dir, servers_start, servers_stop);
}
