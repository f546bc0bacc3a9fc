/* memcached backend: a small client of our own over non-blocking sockets.
 *
 * Why not libmemcached or apr_memcache: a claim must never move to another
 * server (DESIGN.md invariant 7) and must never wait past the timeout
 * (invariant 8). Here a key always maps to the same server,
 *     index = first 4 bytes of SHA-256(key), big-endian, mod N
 * over the servers in URL order, whatever their state; an operation on a
 * server that is down, slow or full fails, and the caller fails closed.
 * Every command, connect included, runs against one deadline.
 *
 * Protocol: the text protocol (add, set, get, stats) and the meta commands
 * of memcached >= 1.6 (mg, md) for compare-and-delete. Connections are per
 * child, pooled per server, reused, and rebuilt after any error. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <apr_reslist.h>
#include <apr_strings.h>
#include <openssl/evp.h>

#include "rsp_io.h"
#include "rsp_store.h"
#include "rsp_util.h"

/* memcached reads an expiry above 30 days as an absolute Unix time. */
#define MC_MAX_RELATIVE_EXPIRY (30 * 86400)
#define MC_LINE_MAX 1024
#define MC_MAX_VALUE (1024 * 1024)

typedef struct {
    int fd;                 /* -1 when not connected */
    char buf[4096];
    apr_size_t start, end;  /* unread bytes in buf */
} conn_t;

typedef struct {
    const rsp_server_t *server;
    const char *name;       /* host:port for messages */
    apr_reslist_t *conns;
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
    conn_t *c = apr_pcalloc(p, sizeof(*c));

    c->fd = -1;
    *res = c;
    return APR_SUCCESS;
}

static void conn_close(conn_t *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
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
    if (op->c->fd >= 0
        && (op->c->start != op->c->end || rsp_io_idle_closed(op->c->fd))) {
        /* Closed by the server while idle, or out of step: nothing was
         * sent on it for this operation, so reconnecting is safe. */
        conn_close(op->c);
    }
    if (op->c->fd < 0) {
        const char *why;
        if (rsp_io_connect(&op->c->fd, p, sv->server->host, sv->server->port,
                           op->deadline, &why) != APR_SUCCESS) {
            *err = apr_psprintf(p, "memcached %s: %s", sv->name, why);
            apr_reslist_release(sv->conns, op->c);
            op->c = NULL;
            return APR_EGENERAL;
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
    while (len > 0) {
        ssize_t n;
        int rc = rsp_io_wait(op->c->fd, POLLOUT, op->deadline);
        if (rc != 0) {
            return fail_io(op, rc, "sending");
        }
        n = send(op->c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                continue;
            }
            return fail_io(op, errno, "sending");
        }
        data += n;
        len -= (apr_size_t)n;
    }
    return APR_SUCCESS;
}

/* Read more bytes into the buffer (compacting it first). */
static apr_status_t fill(op_t *op)
{
    conn_t *c = op->c;
    ssize_t n;
    int rc;

    if (c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    if (c->end == sizeof(c->buf)) {
        return fail(op, "reply line too long");
    }
    for (;;) {
        if ((rc = rsp_io_wait(c->fd, POLLIN, op->deadline)) != 0) {
            return fail_io(op, rc, "reading");
        }
        n = recv(c->fd, c->buf + c->end, sizeof(c->buf) - c->end, MSG_DONTWAIT);
        if (n > 0) {
            c->end += (apr_size_t)n;
            return APR_SUCCESS;
        }
        if (n == 0) {
            return fail(op, "connection closed by the server");
        }
        if (errno != EAGAIN && errno != EINTR) {
            return fail_io(op, errno, "reading");
        }
    }
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

/* add or set: one storage command, "STORED" or not. */
static apr_status_t store_cmd(rsp_store_t *st, apr_pool_t *p, const char *cmd,
                              const char *key, const char *value,
                              apr_size_t len, apr_int64_t ttl_ms, int *stored,
                              const char **err)
{
    op_t op;
    apr_int64_t exp;
    apr_status_t rv;
    const char *line;

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
    line = apr_psprintf(p, "%s %s 0 %" APR_INT64_T_FMT " %" APR_SIZE_T_FMT
                        "\r\n", cmd, key, exp, len);
    if ((rv = send_all(&op, line, strlen(line))) == APR_SUCCESS
        && (rv = send_all(&op, value, len)) == APR_SUCCESS
        && (rv = send_all(&op, "\r\n", 2)) == APR_SUCCESS
        && (rv = read_line(&op, &line)) == APR_SUCCESS) {
        if (!strcmp(line, "STORED")) {
            *stored = 1;
        }
        else if (!strcmp(line, "NOT_STORED")) {
            *stored = 0;
        }
        else {
            rv = unexpected(&op, line);
        }
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

static apr_status_t mc_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char **value, apr_size_t *len,
                           const char **err)
{
    op_t op;
    apr_status_t rv;
    const char *line, *cmd;
    char *data;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    *value = NULL;
    *len = 0;
    cmd = apr_pstrcat(p, "get ", key, "\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) == APR_SUCCESS
        && (rv = read_line(&op, &line)) == APR_SUCCESS) {
        const char *prefix = apr_pstrcat(p, "VALUE ", key, " ", NULL);
        if (!strcmp(line, "END")) {
            /* absent */
        }
        else if (!strncmp(line, prefix, strlen(prefix))) {
            unsigned flags;
            apr_size_t n;
            char extra;
            if (sscanf(line + strlen(prefix), "%u %zu%c", &flags, &n, &extra) != 2
                || n > MC_MAX_VALUE) {
                rv = unexpected(&op, line);
            }
            else if ((rv = read_data(&op, n, &data)) == APR_SUCCESS
                     && (rv = read_line(&op, &line)) == APR_SUCCESS) {
                if (strcmp(line, "END")) {
                    rv = unexpected(&op, line);
                }
                else {
                    *value = data;
                    *len = n;
                }
            }
        }
        else {
            rv = unexpected(&op, line);
        }
    }
    end(&op);
    return rv;
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
static apr_status_t mc_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                    const char *key, const char *value,
                                    int *deleted, const char **err)
{
    op_t op;
    apr_status_t rv;
    const char *line, *cmd, *cas = NULL;
    char *data = NULL;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    *deleted = 0;
    cmd = apr_pstrcat(p, "mg ", key, " v c\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) != APR_SUCCESS
        || (rv = read_line(&op, &line)) != APR_SUCCESS) {
        goto done;
    }
    if (!strcmp(line, "EN")) {
        goto done; /* absent: nothing of ours to release */
    }
    if (strncmp(line, "VA ", 3) != 0) {
        rv = unexpected(&op, line);
        goto done;
    }
    {
        char *state, *tok, *copy = apr_pstrdup(p, line + 3);
        apr_size_t n = 0;
        int i = 0;
        for (tok = apr_strtok(copy, " ", &state); tok;
             tok = apr_strtok(NULL, " ", &state), i++) {
            if (i == 0) {
                char *e;
                n = (apr_size_t)apr_strtoi64(tok, &e, 10);
                if (*e || n > MC_MAX_VALUE) {
                    rv = unexpected(&op, line);
                    goto done;
                }
            }
            else if (tok[0] == 'c' && tok[1]) {
                cas = tok + 1;
            }
        }
        if (!cas) {
            rv = unexpected(&op, line);
            goto done;
        }
        if ((rv = read_data(&op, n, &data)) != APR_SUCCESS) {
            goto done;
        }
        if (n != strlen(value) || memcmp(data, value, n) != 0) {
            goto done; /* someone else's now */
        }
    }
    cmd = apr_pstrcat(p, "md ", key, " C", cas, "\r\n", NULL);
    if ((rv = send_all(&op, cmd, strlen(cmd))) != APR_SUCCESS
        || (rv = read_line(&op, &line)) != APR_SUCCESS) {
        goto done;
    }
    if (!strcmp(line, "HD")) {
        *deleted = 1;
    }
    else if (strcmp(line, "EX") && strcmp(line, "NF")) {
        rv = unexpected(&op, line);
    }
done:
    end(&op);
    return rv;
}

/* "stats" or "stats <section>" of every server, each block introduced by
 * a line "server host:port". A server that cannot answer gets a block
 * with one line "error <why>"; the call fails only if none answers. */
/* append to an existing item, else add it; then touch it to the expiry
 * (callers give a key the same TTL every time, so touch only extends).
 * A lost race between append and add is retried a bounded number of
 * times. */
static apr_status_t mc_append(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *item, apr_int64_t ttl_ms,
                              const char **err)
{
    const char *val = apr_pstrcat(p, " ", item, NULL), *line;
    apr_int64_t exp;
    apr_status_t rv;
    int stored = 0, attempt;
    op_t op;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = expiry(ttl_ms, &exp, err)) != APR_SUCCESS) {
        return rv;
    }
    for (attempt = 0; attempt < 3; attempt++) {
        rv = store_cmd(st, p, "append", key, val, strlen(val), ttl_ms, &stored,
                       err);
        if (rv != APR_SUCCESS) {
            return rv;
        }
        if (!stored) {
            rv = store_cmd(st, p, "add", key, val, strlen(val), ttl_ms,
                           &stored, err);
            if (rv != APR_SUCCESS) {
                return rv;
            }
            if (stored) {
                return APR_SUCCESS;   /* new item, with its expiry */
            }
            continue;                 /* created meanwhile: append again */
        }
        if ((rv = begin(&op, st, server_of(st->impl, key), p, err))
            != APR_SUCCESS) {
            return rv;
        }
        line = apr_psprintf(p, "touch %s %" APR_INT64_T_FMT "\r\n", key, exp);
        if ((rv = send_all(&op, line, strlen(line))) == APR_SUCCESS
            && (rv = read_line(&op, &line)) == APR_SUCCESS
            && strcmp(line, "TOUCHED") != 0 && strcmp(line, "NOT_FOUND") != 0) {
            rv = unexpected(&op, line);
        }
        end(&op);
        return rv;
    }
    *err = "append: the item kept appearing and disappearing";
    return APR_EGENERAL;
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
    NULL,   /* claim_read: the generic one */
    NULL,   /* write_many: one after the other */
    mc_info,
};
