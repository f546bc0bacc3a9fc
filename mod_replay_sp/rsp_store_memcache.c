/* memcached backend: a small client of our own over the module's
 * connections (plaintext or TLS, rsp_io.h).
 *
 * Why not libmemcached or apr_memcache: a claim must never move to another
 * server (DESIGN.md invariant 7) and must never wait past the timeout
 * (invariant 8). Here a key always maps to the same server,
 *     index = first 4 bytes of SHA-256(key), big-endian, mod N
 * over the servers in URL order, whatever their state; an operation on a
 * server that is down, slow or full fails, and the caller fails closed.
 * Every command, connect included, runs against one deadline.
 *
 * Protocol: the text protocol (add, set, append, get, stats) and the meta
 * commands of memcached >= 1.6 (mg, md) for expiry and compare-and-delete.
 * Commands that go together are pipelined: one round trip per server. Connections are per
 * child, pooled per server, reused, and rebuilt after any error. */
#include <string.h>

#include <apr_reslist.h>
#include <apr_strings.h>
#include <openssl/evp.h>

#include "rsp_io.h"
#include "rsp_log.h"
#include "rsp_store.h"
#include "rsp_util.h"

/* memcached reads an expiry above 30 days as an absolute Unix time. */
#define MC_MAX_RELATIVE_EXPIRY (30 * 86400)
#define MC_LINE_MAX 1024
#define MC_MAX_VALUE (1024 * 1024)

typedef struct {
    rsp_conn_t *io;         /* NULL when not connected */
    char buf[4096];
    apr_size_t start, end;  /* unread bytes in buf */
} conn_t;

typedef struct {
    const rsp_server_t *server;
    const char *name;       /* host:port for messages */
    apr_reslist_t *conns;
    rsp_tls_cache_t *tls_cache; /* with TLS: the session to resume */
} server_t;

typedef struct {
    int n;
    server_t *servers;
} mc_impl_t;

/* One command in flight: the connection, its server and the deadline. */
typedef struct {
    rsp_store_t *st;
    server_t *sv;
    conn_t *c;
    apr_pool_t *p;
    apr_time_t deadline;
    const char **err;
} op_t;

static apr_status_t conn_make(void **res, void *params, apr_pool_t *p)
{
    *res = apr_pcalloc(p, sizeof(conn_t));
    return APR_SUCCESS;
}

static void conn_close(conn_t *c)
{
    rsp_conn_close(c->io);
    c->io = NULL;
    c->start = c->end = 0;
}

static apr_status_t conn_free(void *res, void *params, apr_pool_t *p)
{
    conn_close(res);
    return APR_SUCCESS;
}

static apr_status_t mc_child_init(rsp_store_t *st, apr_pool_t *pchild,
                                  int max_conns)
{
    const apr_array_header_t *list = st->url->servers;
    mc_impl_t *impl = apr_pcalloc(pchild, sizeof(*impl));
    apr_status_t rv;
    int i;

    if (max_conns < 1) {
        max_conns = 1;
    }
    impl->n = list->nelts;
    impl->servers = apr_pcalloc(pchild, sizeof(server_t) * (apr_size_t)impl->n);
    for (i = 0; i < impl->n; i++) {
        server_t *sv = &impl->servers[i];
        sv->server = &APR_ARRAY_IDX(list, i, rsp_server_t);
        sv->name = sv->server->name;
        rv = apr_reslist_create(&sv->conns, 0, max_conns, max_conns, 0,
                                conn_make, conn_free, st, pchild);
        if (rv != APR_SUCCESS) {
            return rv;
        }
        apr_reslist_timeout_set(sv->conns, st->timeout);
        if (st->url->tls) {
            if (!st->tls) {
                return APR_EINVAL; /* a TLS URL needs its context */
            }
            if ((rv = rsp_tls_cache_create(&sv->tls_cache, pchild))
                != APR_SUCCESS) {
                return rv;
            }
        }
    }
    st->impl = impl;
    return APR_SUCCESS;
}

/* The server a key lives on: fixed by the key and the configured list. */
static server_t *server_of(mc_impl_t *impl, const char *key)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    apr_uint32_t h;

    EVP_Digest(key, strlen(key), md, &mdlen, EVP_sha256(), NULL);
    h = ((apr_uint32_t)md[0] << 24) | ((apr_uint32_t)md[1] << 16)
        | ((apr_uint32_t)md[2] << 8) | md[3];
    return &impl->servers[h % (apr_uint32_t)impl->n];
}

static apr_status_t fail(op_t *op, const char *what)
{
    *op->err = apr_psprintf(op->p, "memcached %s: %s", op->sv->name, what);
    conn_close(op->c); /* its state is unknown: never reuse it */
    return APR_EGENERAL;
}

static apr_status_t fail_io(op_t *op, int rc, const char *during)
{
    return fail(op, rc == APR_TIMEUP
                    ? apr_psprintf(op->p, "no complete reply within %"
                                   APR_TIME_T_FMT " ms (timeout) %s",
                                   apr_time_as_msec(op->st->timeout), during)
                    : apr_psprintf(op->p, "%s %s", strerror(rc), during));
}

static apr_status_t begin(op_t *op, rsp_store_t *st, server_t *sv,
                          apr_pool_t *p, const char **err)
{
    void *res;
    apr_status_t rv;

    op->st = st;
    op->sv = sv;
    op->p = p;
    op->err = err;
    op->deadline = apr_time_now() + st->timeout;
    rv = apr_reslist_acquire(sv->conns, &res);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "memcached %s: %s", sv->name,
                            APR_STATUS_IS_TIMEUP(rv)
                            ? "no free connection within the timeout"
                            : "cannot acquire a connection");
        op->c = NULL;
        return rv;
    }
    op->c = res;
    if (op->c->io
        && (op->c->start != op->c->end || rsp_conn_idle_closed(op->c->io))) {
        /* Closed by the server while idle, or out of step: nothing was
         * sent on it for this operation, so reconnecting is safe. */
        conn_close(op->c);
    }
    if (!op->c->io) {
        const char *why;
        rsp_peer_t peer;
        memset(&peer, 0, sizeof(peer));
        peer.host = sv->server->host;
        peer.port = sv->server->port;
        peer.tls = st->url->tls ? st->tls : NULL;
        peer.cache = sv->tls_cache;
        if (rsp_conn_open(&op->c->io, p, &peer, op->deadline, &why)
            != APR_SUCCESS) {
            op->c->io = NULL;
            *err = apr_psprintf(p, "memcached %s: %s", sv->name, why);
            apr_reslist_release(sv->conns, op->c);
            op->c = NULL;
            return APR_EGENERAL;
        }
        if (peer.tls) {
            rsp_log(RSP_LOG_DEBUG, "store memcached %s: TLS connection (%s)",
                    sv->name, rsp_conn_resumed(op->c->io) ? "session resumed"
                                                          : "full handshake");
        }
    }
    return APR_SUCCESS;
}

static void end(op_t *op)
{
    if (op->c) {
        apr_reslist_release(op->sv->conns, op->c);
        op->c = NULL;
    }
}

static apr_status_t send_all(op_t *op, const char *data, apr_size_t len)
{
    const char *why = NULL;
    apr_status_t rv = rsp_conn_send(op->c->io, data, len, op->deadline, op->p,
                                    &why);

    if (rv == APR_TIMEUP) {
        return fail_io(op, APR_TIMEUP, "sending");
    }
    if (rv != APR_SUCCESS) {
        return fail(op, apr_psprintf(op->p, "%s sending", why));
    }
    return APR_SUCCESS;
}

/* Read more bytes into the buffer (compacting it first). */
static apr_status_t fill(op_t *op)
{
    conn_t *c = op->c;
    const char *why = NULL;
    apr_size_t n = 0;
    apr_status_t rv;

    if (c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    if (c->end == sizeof(c->buf)) {
        return fail(op, "reply line too long");
    }
    rv = rsp_conn_recv(c->io, c->buf + c->end, sizeof(c->buf) - c->end, &n,
                       op->deadline, op->p, &why);
    if (rv == APR_SUCCESS) {
        c->end += n;
        return APR_SUCCESS;
    }
    if (rv == APR_EOF) {
        return fail(op, "connection closed by the server");
    }
    if (rv == APR_TIMEUP) {
        return fail_io(op, APR_TIMEUP, "reading");
    }
    return fail(op, apr_psprintf(op->p, "%s reading", why));
}

/* One reply line, without its CRLF, copied into p. */
static apr_status_t read_line(op_t *op, const char **line)
{
    for (;;) {
        conn_t *c = op->c;
        char *nl = memchr(c->buf + c->start, '\n', c->end - c->start);
        if (nl) {
            apr_size_t len = (apr_size_t)(nl - (c->buf + c->start));
            if (len == 0 || nl[-1] != '\r') {
                return fail(op, "malformed reply line");
            }
            *line = apr_pstrmemdup(op->p, c->buf + c->start, len - 1);
            c->start += len + 1;
            return APR_SUCCESS;
        }
        if (c->end - c->start > MC_LINE_MAX) {
            return fail(op, "reply line too long");
        }
        if (fill(op) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
}

/* Exactly len bytes of data followed by CRLF. */
static apr_status_t read_data(op_t *op, apr_size_t len, char **out)
{
    char *data = apr_palloc(op->p, len + 1);
    apr_size_t got = 0;

    while (got < len + 2) {
        conn_t *c = op->c;
        apr_size_t avail = c->end - c->start, take;
        if (avail == 0) {
            if (fill(op) != APR_SUCCESS) {
                return APR_EGENERAL;
            }
            continue;
        }
        take = len + 2 - got < avail ? len + 2 - got : avail;
        if (got < len) {
            apr_size_t d = take < len - got ? take : len - got;
            memcpy(data + got, c->buf + c->start, d);
        }
        if (got + take > len) { /* the CRLF, or part of it */
            apr_size_t i;
            for (i = (got > len ? got : len); i < got + take; i++) {
                char want = i == len ? '\r' : '\n';
                if (c->buf[c->start + (i - got)] != want) {
                    return fail(op, "data block not followed by CRLF");
                }
            }
        }
        c->start += take;
        got += take;
    }
    data[len] = '\0';
    *out = data;
    return APR_SUCCESS;
}

/* A reply line that is not the expected one: the server's own words. */
static apr_status_t unexpected(op_t *op, const char *line)
{
    if (!strncmp(line, "SERVER_ERROR", 12)) {
        /* e.g. "SERVER_ERROR out of memory storing object" */
        return fail(op, line);
    }
    return fail(op, apr_psprintf(op->p, "unexpected reply \"%.80s\"", line));
}

static apr_status_t check_ready(rsp_store_t *st, const char **err)
{
    if (!st->impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t expiry(apr_int64_t ttl_ms, apr_int64_t *exp, const char **err)
{
    if (ttl_ms < 1) {
        *err = "TTL must be positive";
        return APR_EINVAL;
    }
    /* memcached's clock ticks once a second and an item set just before a
     * tick loses up to a second: one more keeps every item for at least
     * its TTL (a claim must never expire before its window). */
    *exp = rsp_ttl_seconds(ttl_ms) + 1;
    if (*exp > MC_MAX_RELATIVE_EXPIRY) {
        *err = "TTL beyond memcached's 30-day relative expiry";
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}

/* ---- pipelines: several commands written at once, replies read in
 * order; one round trip per server. ---- */

typedef struct {
    char *data;
    apr_size_t len, cap;
} wbuf_t;

static void buf_add(apr_pool_t *p, wbuf_t *b, const void *d, apr_size_t n)
{
    if (b->len + n > b->cap) {
        apr_size_t cap = (b->len + n) * 2 + 256;
        char *nd = apr_palloc(p, cap);
        if (b->len) {
            memcpy(nd, b->data, b->len);
        }
        b->data = nd;
        b->cap = cap;
    }
    memcpy(b->data + b->len, d, n);
    b->len += n;
}

static void buf_str(apr_pool_t *p, wbuf_t *b, const char *s)
{
    buf_add(p, b, s, strlen(s));
}

/* "add|set|append key 0 exp len" CRLF data CRLF */
static void buf_store(apr_pool_t *p, wbuf_t *b, const char *verb,
                      const char *key, apr_int64_t exp, const char *data,
                      apr_size_t len)
{
    buf_str(p, b, apr_psprintf(p, "%s %s 0 %" APR_INT64_T_FMT " %"
                               APR_SIZE_T_FMT "\r\n", verb, key, exp, len));
    buf_add(p, b, data, len);
    buf_add(p, b, "\r\n", 2);
}

/* The reply to "mg key v c t" (or, ttl NULL, "mg key v c"): VA <len>
 * c<cas> [t<ttl>] + data, or EN (*value NULL). *cas and *ttl: the version
 * and the seconds left (-1: no expiry); each required when asked for. */
static apr_status_t read_mg(op_t *op, const char **value, apr_size_t *len,
                            const char **cas, const char **ttl)
{
    const char *line, *t = NULL;
    char *state, *tok, *copy, *data, *e;
    apr_size_t n = 0;
    apr_status_t rv;
    int i = 0;

    *value = *cas = NULL;
    if (ttl) {
        *ttl = NULL;
    }
    *len = 0;
    if ((rv = read_line(op, &line)) != APR_SUCCESS || !strcmp(line, "EN")) {
        return rv;
    }
    if (strncmp(line, "VA ", 3) != 0) {
        return unexpected(op, line);
    }
    copy = apr_pstrdup(op->p, line + 3);
    for (tok = apr_strtok(copy, " ", &state); tok;
         tok = apr_strtok(NULL, " ", &state), i++) {
        if (i == 0) {
            n = (apr_size_t)apr_strtoi64(tok, &e, 10);
            if (*e || n > MC_MAX_VALUE) {
                return unexpected(op, line);
            }
        }
        else if (tok[0] == 'c' && tok[1]) {
            *cas = tok + 1;
        }
        else if (tok[0] == 't' && tok[1]) {
            t = tok + 1;
        }
    }
    if (!*cas || (ttl && !t)) {
        return unexpected(op, line);
    }
    if (ttl) {
        *ttl = t;
    }
    if ((rv = read_data(op, n, &data)) != APR_SUCCESS) {
        return rv;
    }
    *value = data;
    *len = n;
    return APR_SUCCESS;
}

/* What a compare-and-set of the version read_mg saw sends: "C<cas>
 * T<ttl>". T<t> sets the expiry to memcached's clock + t: the same second
 * it had (a later one if its clock ticked in between, never an earlier
 * one). NULL when nothing was read. */
static const char *version_token(apr_pool_t *p, const char *cas, const char *ttl)
{
    if (!cas) {
        return NULL;
    }
    return !strcmp(ttl, "-1") ? apr_psprintf(p, "C%s", cas)
                              : apr_psprintf(p, "C%s T%s", cas, ttl);
}

/* One of two replies: *yes 1 for the first, 0 for no or no2 (NULL: none);
 * anything else fails the operation. */
static apr_status_t read_outcome(op_t *op, const char *yes, const char *no,
                                 const char *no2, int *out)
{
    const char *line;
    apr_status_t rv = read_line(op, &line);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!strcmp(line, yes)) {
        *out = 1;
    }
    else if (!strcmp(line, no) || (no2 && !strcmp(line, no2))) {
        *out = 0;
    }
    else {
        return unexpected(op, line);
    }
    return APR_SUCCESS;
}

/* "ms key len <token>" data: HD (replaced), EX or NF (not). */
static void buf_replace(apr_pool_t *p, wbuf_t *b, const char *key,
                        const char *token, const char *value)
{
    buf_str(p, b, apr_psprintf(p, "ms %s %" APR_SIZE_T_FMT " %s\r\n", key,
                               strlen(value), token));
    buf_str(p, b, value);
    buf_add(p, b, "\r\n", 2);
}

/* STORED (1) or NOT_STORED (0); anything else fails the operation. */
static apr_status_t read_stored(op_t *op, int *stored)
{
    return read_outcome(op, "STORED", "NOT_STORED", NULL, stored);
}

static apr_status_t read_replace(op_t *op, int *replaced)
{
    return read_outcome(op, "HD", "EX", "NF", replaced);
}

/* add or set: one storage command, "STORED" or not. */
static apr_status_t store_cmd(rsp_store_t *st, apr_pool_t *p, const char *cmd,
                              const char *key, const char *value,
                              apr_size_t len, apr_int64_t ttl_ms, int *stored,
                              const char **err)
{
    op_t op;
    wbuf_t b;
    apr_int64_t exp;
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = expiry(ttl_ms, &exp, err)) != APR_SUCCESS) {
        return rv;
    }
    if (len > MC_MAX_VALUE) {
        *err = "value too large for memcached";
        return APR_EINVAL;
    }
    if ((rv = begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    memset(&b, 0, sizeof(b));
    buf_store(p, &b, cmd, key, exp, value, len);
    if ((rv = send_all(&op, b.data, b.len)) == APR_SUCCESS) {
        rv = read_stored(&op, stored);
    }
    end(&op);
    return rv;
}

static apr_status_t mc_claim(rsp_store_t *st, apr_pool_t *p, const char *key,
                             const char *value, apr_int64_t ttl_ms, int *won,
                             const char **err)
{
    return store_cmd(st, p, "add", key, value, strlen(value), ttl_ms, won, err);
}

static apr_status_t mc_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char *value, apr_size_t len,
                           apr_int64_t ttl_ms, const char **err)
{
    int stored = 0;
    apr_status_t rv = store_cmd(st, p, "set", key, value, len, ttl_ms, &stored,
                                err);

    if (rv == APR_SUCCESS && !stored) {
        *err = "memcached did not store the value";
        return APR_EGENERAL;
    }
    return rv;
}

/* The reply to "get key": VALUE ... data END, or END (absent). */
static apr_status_t read_get(op_t *op, const char *key, const char **value,
                             apr_size_t *len)
{
    const char *line, *prefix;
    apr_status_t rv;
    char *data;

    *value = NULL;
    *len = 0;
    if ((rv = read_line(op, &line)) != APR_SUCCESS || !strcmp(line, "END")) {
        return rv;
    }
    prefix = apr_pstrcat(op->p, "VALUE ", key, " ", NULL);
    if (!strncmp(line, prefix, strlen(prefix))) {
        unsigned flags;
        apr_size_t n;
        char extra;
        if (sscanf(line + strlen(prefix), "%u %zu%c", &flags, &n, &extra) != 2
            || n > MC_MAX_VALUE) {
            return unexpected(op, line);
        }
        if ((rv = read_data(op, n, &data)) == APR_SUCCESS
            && (rv = read_line(op, &line)) == APR_SUCCESS) {
            if (strcmp(line, "END")) {
                return unexpected(op, line);
            }
            *value = data;
            *len = n;
        }
        return rv;
    }
    return unexpected(op, line);
}

static apr_status_t get_on(rsp_store_t *st, apr_pool_t *p, server_t *sv,
                           const char *key, const char **value,
                           apr_size_t *len, const char **err)
{
    op_t op;
    apr_status_t rv;
    const char *cmd;

    *value = NULL;
    *len = 0;
    if ((rv = begin(&op, st, sv, p, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = apr_pstrcat(p, "get ", key, "\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) == APR_SUCCESS) {
        rv = read_get(&op, key, value, len);
    }
    end(&op);
    return rv;
}

static apr_status_t mc_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char **value, apr_size_t *len,
                           const char **err)
{
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    return get_on(st, p, server_of(st->impl, key), key, value, len, err);
}

/* Server number server (0..N-1, URL order). */
static apr_status_t server_at(rsp_store_t *st, int server, server_t **sv,
                              const char **err)
{
    mc_impl_t *impl = st->impl;
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    if (server < 0 || server >= impl->n) {
        *err = "no such memcached server";
        return APR_EINVAL;
    }
    *sv = &impl->servers[server];
    return APR_SUCCESS;
}

static apr_status_t mc_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                              const char *key, const char **value,
                              apr_size_t *len, const char **err)
{
    server_t *sv;
    apr_status_t rv = server_at(st, server, &sv, err);

    return rv != APR_SUCCESS ? rv : get_on(st, p, sv, key, value, len, err);
}

/* mg key t: "HD t<seconds>" (t-1: no expiry) or "EN" (absent). */
static apr_status_t mc_ttl(rsp_store_t *st, apr_pool_t *p, const char *key,
                           apr_int64_t *ttl_ms, const char **err)
{
    op_t op;
    apr_status_t rv;
    const char *line, *cmd;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = apr_pstrcat(p, "mg ", key, " t\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) == APR_SUCCESS
        && (rv = read_line(&op, &line)) == APR_SUCCESS) {
        char *e;
        apr_int64_t secs;
        if (!strcmp(line, "EN")) {
            *ttl_ms = -2;
        }
        else if (!strncmp(line, "HD t", 4)
                 && ((secs = apr_strtoi64(line + 4, &e, 10)) >= -1)
                 && (*e == '\0' || *e == ' ')) {
            *ttl_ms = secs < 0 ? -1 : secs * 1000;
        }
        else {
            rv = unexpected(&op, line);
        }
    }
    end(&op);
    return rv;
}

/* mg key v c, then md key C<cas>: deleted only if the value is still ours
 * and nobody changed it in between. */
static apr_status_t del_on(rsp_store_t *st, apr_pool_t *p, server_t *sv,
                           const char *key, const char *value, int *deleted,
                           const char **err)
{
    op_t op;
    apr_status_t rv;
    const char *cmd, *data, *cas;
    apr_size_t n;

    if ((rv = begin(&op, st, sv, p, err)) != APR_SUCCESS) {
        return rv;
    }
    *deleted = 0;
    cmd = apr_pstrcat(p, "mg ", key, " v c\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) == APR_SUCCESS
        && (rv = read_mg(&op, &data, &n, &cas, NULL)) == APR_SUCCESS
        /* absent, or someone else's now: nothing of ours to release */
        && data && n == strlen(value) && memcmp(data, value, n) == 0) {
        cmd = apr_pstrcat(p, "md ", key, " C", cas, "\r\n", NULL);
        if ((rv = send_all(&op, cmd, strlen(cmd))) == APR_SUCCESS) {
            rv = read_outcome(&op, "HD", "EX", "NF", deleted);
        }
    }
    end(&op);
    return rv;
}

static apr_status_t mc_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                    const char *key, const char *value,
                                    int *deleted, const char **err)
{
    apr_status_t rv;

    *deleted = 0;
    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    return del_on(st, p, server_of(st->impl, key), key, value, deleted, err);
}

static apr_status_t mc_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                       int server, const char *key,
                                       const char *value, int *deleted,
                                       const char **err)
{
    server_t *sv;
    apr_status_t rv = server_at(st, server, &sv, err);

    *deleted = 0;
    return rv != APR_SUCCESS ? rv : del_on(st, p, sv, key, value, deleted, err);
}

/* "stats" or "stats <section>" of every server, each block introduced by
 * a line "server host:port". A server that cannot answer gets a block
 * with one line "error <why>"; the call fails only if none answers. */
/* An append to the logout index, as three pipelined commands: add the
 * key empty (NOT_STORED when it exists: either is fine), append the item
 * (atomic: concurrent appends all land), then set its expiry (mg T: the
 * same TTL every time, so it only moves forward). */
static void buf_append(apr_pool_t *p, wbuf_t *b, const char *key,
                       const char *item, apr_int64_t exp)
{
    const char *val = apr_pstrcat(p, " ", item, NULL);

    buf_store(p, b, "add", key, exp, "", 0);
    buf_store(p, b, "append", key, 0, val, strlen(val));
    buf_str(p, b, apr_psprintf(p, "mg %s T%" APR_INT64_T_FMT "\r\n", key, exp));
}

static apr_status_t read_append(op_t *op, const char *key)
{
    const char *line;
    apr_status_t rv;
    int stored = 0;

    if ((rv = read_stored(op, &stored)) != APR_SUCCESS
        || (rv = read_stored(op, &stored)) != APR_SUCCESS
        || (rv = read_line(op, &line)) != APR_SUCCESS) {
        return rv;
    }
    if (!stored || strcmp(line, "HD")) {
        if (!stored || !strcmp(line, "EN")) {
            /* The item went between the add and the append (a flush): the
             * index entry is lost. */
            *op->err = apr_psprintf(op->p, "memcached %s: append to %s: the "
                                    "item vanished", op->sv->name, key);
            return APR_EGENERAL;
        }
        return unexpected(op, line);
    }
    return APR_SUCCESS;
}

#define MAX_WRITES 8

static apr_status_t mc_replace(rsp_store_t *st, apr_pool_t *p, const char *key,
                               const char *expect, const char *token,
                               const char *value, int *replaced,
                               const char **err);

/* Every write to its server (its own key's, or its home_key's), each
 * server's writes in one pipeline; all servers are written to before any
 * reply is read. */
static apr_status_t mc_write_many(rsp_store_t *st, apr_pool_t *p,
                                  rsp_write_t *w, int n, const char **err)
{
    server_t *where[MAX_WRITES];
    op_t ops[MAX_WRITES];
    wbuf_t bufs[MAX_WRITES];
    apr_int64_t exps[MAX_WRITES];
    int used[MAX_WRITES], group[MAX_WRITES], ok[MAX_WRITES];
    apr_status_t rv;
    int i, g, ngroups = 0;
    const char *e = NULL;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    if (n < 1 || n > MAX_WRITES) {
        *err = "write_many: 1 to 8 writes";
        return APR_EINVAL;
    }
    for (i = 0; i < n; i++) {
        server_t *sv = server_of(st->impl, w[i].home_key ? w[i].home_key
                                                         : w[i].key);
        w[i].replaced = 0;
        group[i] = -1;
        if (w[i].kind == RSP_WRITE_REPLACE) {
            if (!w[i].token) {
                continue; /* no version to compare: after the pipelines */
            }
            exps[i] = 0;
        }
        else if ((rv = expiry(w[i].ttl_ms, &exps[i], err)) != APR_SUCCESS) {
            return rv;
        }
        if (w[i].kind == RSP_WRITE_PUT && w[i].len > MC_MAX_VALUE) {
            *err = "value too large for memcached";
            return APR_EINVAL;
        }
        for (g = 0; g < ngroups && where[g] != sv; g++)
            ;
        if (g == ngroups) {
            where[ngroups] = sv;
            memset(&bufs[ngroups], 0, sizeof(bufs[ngroups]));
            used[ngroups] = 0;
            ngroups++;
        }
        group[i] = g;
        if (w[i].kind == RSP_WRITE_PUT) {
            buf_store(p, &bufs[g], "set", w[i].key, exps[i], w[i].value,
                      w[i].len);
        }
        else if (w[i].kind == RSP_WRITE_APPEND) {
            buf_append(p, &bufs[g], w[i].key, w[i].value, exps[i]);
        }
        else {
            buf_replace(p, &bufs[g], w[i].key, w[i].token, w[i].value);
        }
    }
    /* Write every pipeline, then read every reply. */
    for (g = 0; g < ngroups; g++) {
        ok[g] = begin(&ops[g], st, where[g], p, &e) == APR_SUCCESS;
        used[g] = ok[g];
        if (ok[g] && send_all(&ops[g], bufs[g].data, bufs[g].len) != APR_SUCCESS) {
            ok[g] = 0;
        }
        if (!ok[g] && rv == APR_SUCCESS) {
            rv = APR_EGENERAL;
            *err = e;
        }
    }
    for (i = 0; i < n; i++) {
        g = group[i];
        if (g < 0 || !ok[g]) {
            continue;
        }
        if (w[i].kind == RSP_WRITE_PUT) {
            int stored = 0;
            if (read_stored(&ops[g], &stored) != APR_SUCCESS) {
                ok[g] = 0;
            }
            else if (!stored) {
                e = apr_psprintf(p, "memcached %s did not store the value",
                                 where[g]->name);
                ok[g] = 0;
            }
        }
        else if (w[i].kind == RSP_WRITE_APPEND) {
            if (read_append(&ops[g], w[i].key) != APR_SUCCESS) {
                ok[g] = 0;
            }
        }
        else if (read_replace(&ops[g], &w[i].replaced) != APR_SUCCESS) {
            ok[g] = 0;
        }
        if (!ok[g] && rv == APR_SUCCESS) {
            rv = APR_EGENERAL;
            *err = e;
        }
    }
    for (g = 0; g < ngroups; g++) {
        if (used[g]) {
            if (!ok[g] && ops[g].c) {
                conn_close(ops[g].c); /* replies may be left unread */
            }
            end(&ops[g]);
        }
    }
    for (i = 0; i < n && rv == APR_SUCCESS; i++) {
        if (group[i] < 0) {
            rv = mc_replace(st, p, w[i].key, w[i].expect, NULL, w[i].value,
                            &w[i].replaced, err);
        }
    }
    return rv;
}

static apr_status_t mc_append(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *item, apr_int64_t ttl_ms,
                              const char **err)
{
    rsp_write_t w;

    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_APPEND;
    w.key = key;
    w.value = item;
    w.ttl_ms = ttl_ms;
    return mc_write_many(st, p, &w, 1, err);
}

/* The claim (add: its reply is the verdict) and a read of the key after
 * it, pipelined on the claim's server. */
static apr_status_t mc_claim_read(rsp_store_t *st, apr_pool_t *p,
                                  rsp_claim_read_t *c, const char **err)
{
    mc_impl_t *impl = st->impl;
    server_t *home;
    op_t op;
    wbuf_t b;
    apr_int64_t exp;
    apr_size_t len;
    apr_status_t rv;
    const char *cas, *ttl;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = expiry(c->ttl_ms, &exp, err)) != APR_SUCCESS) {
        return rv;
    }
    home = server_of(impl, c->home_key ? c->home_key : c->key);
    memset(&b, 0, sizeof(b));
    buf_store(p, &b, "add", c->key, exp, c->value, strlen(c->value));
    buf_str(p, &b, apr_pstrcat(p, "mg ", c->key, " v c t\r\n", NULL));
    if ((rv = begin(&op, st, home, p, err)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = send_all(&op, b.data, b.len)) != APR_SUCCESS) {
        end(&op);
        return rv;
    }
    if ((rv = read_stored(&op, &c->won)) == APR_SUCCESS
        && (rv = read_mg(&op, &c->holder, &len, &cas, &ttl)) == APR_SUCCESS) {
        c->token = version_token(p, cas, ttl);
        if (c->won) {
            c->holder = NULL; /* our own record (its version in token) */
        }
    }
    end(&op);
    return rv;
}

/* Compare-and-set: with a token, one "ms C<cas>"; without, the version
 * is read first (mg v c t) and the value compared. */
static apr_status_t mc_replace(rsp_store_t *st, apr_pool_t *p, const char *key,
                               const char *expect, const char *token,
                               const char *value, int *replaced,
                               const char **err)
{
    op_t op;
    wbuf_t b;
    apr_status_t rv;

    *replaced = 0;
    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    if (!token) {
        const char *cur, *cas, *ttl;
        const char *cmd = apr_pstrcat(p, "mg ", key, " v c t\r\n", NULL);
        apr_size_t len;
        if ((rv = send_all(&op, cmd, strlen(cmd))) != APR_SUCCESS
            || (rv = read_mg(&op, &cur, &len, &cas, &ttl)) != APR_SUCCESS
            || !cur || len != strlen(expect) || memcmp(cur, expect, len)) {
            end(&op);
            return rv;
        }
        token = version_token(p, cas, ttl);
    }
    memset(&b, 0, sizeof(b));
    buf_replace(p, &b, key, token, value);
    if ((rv = send_all(&op, b.data, b.len)) == APR_SUCCESS) {
        rv = read_replace(&op, replaced);
    }
    end(&op);
    return rv;
}

static int mc_servers(rsp_store_t *st)
{
    return st->impl ? ((mc_impl_t *)st->impl)->n : 0;
}

static int mc_home(rsp_store_t *st, const char *key)
{
    mc_impl_t *impl = st->impl;

    return impl ? (int)(server_of(impl, key) - impl->servers) : 0;
}

static apr_status_t mc_info(rsp_store_t *st, apr_pool_t *p, const char *section,
                            const char **text, const char **err)
{
    mc_impl_t *impl = st->impl;
    const char *out = "", *cmd, *line, *why = NULL;
    apr_status_t rv;
    int i, lines, answered = 0;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = section ? apr_pstrcat(p, "stats ", section, "\r\n", NULL) : "stats\r\n";
    for (i = 0; i < impl->n; i++) {
        const char *block = "";
        op_t op;
        if ((rv = begin(&op, st, &impl->servers[i], p, &why)) == APR_SUCCESS) {
            rv = send_all(&op, cmd, strlen(cmd));
            for (lines = 0; rv == APR_SUCCESS; lines++) {
                if ((rv = read_line(&op, &line)) != APR_SUCCESS) {
                    break;
                }
                if (!strcmp(line, "END")) {
                    break;
                }
                if (strncmp(line, "STAT ", 5) != 0 || lines > 10000) {
                    rv = unexpected(&op, line);
                    break;
                }
                block = apr_pstrcat(p, block, line + 5, "\n", NULL);
            }
            end(&op);
        }
        if (rv == APR_SUCCESS) {
            answered++;
        }
        else {
            block = apr_pstrcat(p, "error ", why, "\n", NULL);
        }
        out = apr_pstrcat(p, out, "server ", impl->servers[i].name, "\n",
                          block, NULL);
    }
    if (!answered) {
        *err = why;
        return APR_EGENERAL;
    }
    *text = out;
    return APR_SUCCESS;
}

const rsp_store_ops_t rsp_store_memcache_ops = {
    "memcache",
    mc_child_init,
    mc_claim,
    mc_get,
    mc_put,
    mc_del_if_equal,
    mc_append,
    mc_ttl,
    mc_claim_read,
    mc_write_many,
    mc_replace,
    mc_servers,
    mc_home,
    mc_get_at,
    mc_del_if_equal_at,
    mc_info,
};
