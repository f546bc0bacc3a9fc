/* memcached connections and the protocol's messages: the text protocol
 * (add, set, append, get, stats) and the meta commands of memcached >= 1.6
 * (mg, ms, md), written into buffers that go out in one write and read
 * back in order, every read and write bounded by the operation's
 * deadline. Connections come from rsp_io's per-server pools. */
#include <string.h>

#include <apr_strings.h>

#include "rsp_log.h"
#include "rsp_memcache.h"

apr_status_t rsp_mc_fail(rsp_mc_op_t *op, const char *what)
{
    *op->err = apr_psprintf(op->p, "memcached %s: %s", op->sv->name, what);
    rsp_mc_conn_close(op->c); /* its state is unknown: never reuse it */
    return APR_EGENERAL;
}

static apr_status_t rsp_mc_fail_io(rsp_mc_op_t *op, int rc, const char *during)
{
    return rsp_mc_fail(op, rc == APR_TIMEUP
                    ? apr_psprintf(op->p, "no complete reply within %"
                                   APR_TIME_T_FMT " ms (timeout) %s",
                                   apr_time_as_msec(op->st->timeout), during)
                    : apr_psprintf(op->p, "%s %s", strerror(rc), during));
}

static apr_status_t mc_connect(rsp_pooled_t *b, void *ctx, apr_pool_t *p,
                               apr_time_t deadline, const char **err)
{
    rsp_mc_conn_t *c = (rsp_mc_conn_t *)b;
    rsp_mc_server_t *sv = b->server;
    rsp_store_t *st = ctx;
    const char *why = NULL;
    rsp_peer_t peer;

    memset(&peer, 0, sizeof(peer));
    peer.host = sv->server->host;
    peer.port = sv->server->port;
    peer.tls = st->url->tls ? st->tls : NULL;
    peer.cache = sv->tls_cache;
    if (rsp_conn_open(&c->base.io, p, &peer, deadline, &why) != APR_SUCCESS) {
        c->base.io = NULL;
        *err = apr_psprintf(p, "memcached %s: %s", sv->name, why);
        return APR_EGENERAL;
    }
    if (peer.tls) {
        rsp_log(RSP_LOG_DEBUG, "store memcached %s: TLS connection (%s)",
                sv->name, rsp_conn_resumed(c->base.io) ? "session resumed"
                                                       : "full handshake");
    }
    return APR_SUCCESS;
}

static void mc_closed(rsp_pooled_t *b)
{
    rsp_mc_conn_t *c = (rsp_mc_conn_t *)b;

    c->start = c->end = 0;
}

/* Bytes left unread: out of step. */
static int mc_stale(const rsp_pooled_t *b)
{
    const rsp_mc_conn_t *c = (const rsp_mc_conn_t *)b;

    return c->start != c->end;
}

static const rsp_pool_kind_t mc_kind = {
    sizeof(rsp_mc_conn_t), mc_connect, mc_closed, NULL, mc_stale
};

apr_status_t rsp_mc_server_init(rsp_store_t *st, rsp_mc_server_t *sv,
                                apr_pool_t *pchild, int max_conns)
{
    apr_status_t rv;

    if (st->url->tls) {
        if (!st->tls) {
            return APR_EINVAL; /* a TLS URL needs its context */
        }
        if ((rv = rsp_tls_cache_create(&sv->tls_cache, pchild))
            != APR_SUCCESS) {
            return rv;
        }
    }
    return rsp_pool_create(&sv->conns, pchild, &mc_kind, sv, max_conns,
                           st->timeout);
}

void rsp_mc_conn_close(rsp_mc_conn_t *c)
{
    if (c) {
        rsp_pool_drop(&c->base);
    }
}

apr_status_t rsp_mc_begin(rsp_mc_op_t *op, rsp_store_t *st,
                          rsp_mc_server_t *sv, apr_pool_t *p,
                          const char **err)
{
    rsp_pooled_t *b;
    apr_status_t rv;

    op->st = st;
    op->sv = sv;
    op->p = p;
    op->err = err;
    op->deadline = apr_time_now() + st->timeout;
    op->c = NULL;
    rv = rsp_pool_acquire(sv->conns, st, p,
                          apr_pstrcat(p, "memcached ", sv->name, NULL),
                          op->deadline, &b, err);
    if (rv == APR_SUCCESS) {
        op->c = (rsp_mc_conn_t *)b;
    }
    return rv;
}

void rsp_mc_end(rsp_mc_op_t *op)
{
    if (op->c) {
        rsp_pool_release(&op->c->base);
        op->c = NULL;
    }
}

apr_status_t rsp_mc_send(rsp_mc_op_t *op, const char *data, apr_size_t len)
{
    const char *why = NULL;
    apr_status_t rv = rsp_conn_send(op->c->base.io, data, len, op->deadline, op->p,
                                    &why);

    if (rv == APR_TIMEUP) {
        return rsp_mc_fail_io(op, APR_TIMEUP, "sending");
    }
    if (rv != APR_SUCCESS) {
        return rsp_mc_fail(op, apr_psprintf(op->p, "%s sending", why));
    }
    return APR_SUCCESS;
}

/* Read more bytes into the buffer (compacting it first). */
static apr_status_t fill(rsp_mc_op_t *op)
{
    rsp_mc_conn_t *c = op->c;
    const char *why = NULL;
    apr_size_t n = 0;
    apr_status_t rv;

    if (c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    if (c->end == sizeof(c->buf)) {
        return rsp_mc_fail(op, "reply line too long");
    }
    rv = rsp_conn_recv(c->base.io, c->buf + c->end, sizeof(c->buf) - c->end, &n,
                       op->deadline, op->p, &why);
    if (rv == APR_SUCCESS) {
        c->end += n;
        return APR_SUCCESS;
    }
    if (rv == APR_EOF) {
        return rsp_mc_fail(op, "connection closed by the server");
    }
    if (rv == APR_TIMEUP) {
        return rsp_mc_fail_io(op, APR_TIMEUP, "reading");
    }
    return rsp_mc_fail(op, apr_psprintf(op->p, "%s reading", why));
}

/* One reply line, without its CRLF, copied into p. */
apr_status_t rsp_mc_read_line(rsp_mc_op_t *op, const char **line)
{
    for (;;) {
        rsp_mc_conn_t *c = op->c;
        char *nl = memchr(c->buf + c->start, '\n', c->end - c->start);
        if (nl) {
            apr_size_t len = (apr_size_t)(nl - (c->buf + c->start));
            if (len == 0 || nl[-1] != '\r') {
                return rsp_mc_fail(op, "malformed reply line");
            }
            *line = apr_pstrmemdup(op->p, c->buf + c->start, len - 1);
            c->start += len + 1;
            return APR_SUCCESS;
        }
        if (c->end - c->start > MC_LINE_MAX) {
            return rsp_mc_fail(op, "reply line too long");
        }
        if (fill(op) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
}

/* Exactly len bytes of data followed by CRLF. */
apr_status_t rsp_mc_read_data(rsp_mc_op_t *op, apr_size_t len, char **out)
{
    char *data = apr_palloc(op->p, len + 1);
    apr_size_t got = 0;

    while (got < len + 2) {
        rsp_mc_conn_t *c = op->c;
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
                    return rsp_mc_fail(op, "data block not followed by CRLF");
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
apr_status_t rsp_mc_unexpected(rsp_mc_op_t *op, const char *line)
{
    if (!strncmp(line, "SERVER_ERROR", 12)) {
        /* e.g. "SERVER_ERROR out of memory storing object" */
        return rsp_mc_fail(op, line);
    }
    return rsp_mc_fail(op, apr_psprintf(op->p, "rsp_mc_unexpected reply \"%.80s\"", line));
}


void rsp_mc_buf_add(apr_pool_t *p, rsp_mc_buf_t *b, const void *d, apr_size_t n)
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

void rsp_mc_buf_str(apr_pool_t *p, rsp_mc_buf_t *b, const char *s)
{
    rsp_mc_buf_add(p, b, s, strlen(s));
}

/* "add|set|append key 0 exp len" CRLF data CRLF */
void rsp_mc_buf_store(apr_pool_t *p, rsp_mc_buf_t *b, const char *verb,
                      const char *key, apr_int64_t exp, const char *data,
                      apr_size_t len)
{
    rsp_mc_buf_str(p, b, apr_psprintf(p, "%s %s 0 %" APR_INT64_T_FMT " %"
                               APR_SIZE_T_FMT "\r\n", verb, key, exp, len));
    rsp_mc_buf_add(p, b, data, len);
    rsp_mc_buf_add(p, b, "\r\n", 2);
}

/* The reply to "mg key v c t" (or, ttl NULL, "mg key v c"): VA <len>
 * c<cas> [t<ttl>] + data, or EN (*value NULL). *cas and *ttl: the version
 * and the seconds left (-1: no expiry); each required when asked for. */
apr_status_t rsp_mc_read_mg(rsp_mc_op_t *op, const char **value, apr_size_t *len,
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
    if ((rv = rsp_mc_read_line(op, &line)) != APR_SUCCESS || !strcmp(line, "EN")) {
        return rv;
    }
    if (strncmp(line, "VA ", 3) != 0) {
        return rsp_mc_unexpected(op, line);
    }
    copy = apr_pstrdup(op->p, line + 3);
    for (tok = apr_strtok(copy, " ", &state); tok;
         tok = apr_strtok(NULL, " ", &state), i++) {
        if (i == 0) {
            n = (apr_size_t)apr_strtoi64(tok, &e, 10);
            if (*e || n > MC_MAX_VALUE) {
                return rsp_mc_unexpected(op, line);
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
        return rsp_mc_unexpected(op, line);
    }
    if (ttl) {
        *ttl = t;
    }
    if ((rv = rsp_mc_read_data(op, n, &data)) != APR_SUCCESS) {
        return rv;
    }
    *value = data;
    *len = n;
    return APR_SUCCESS;
}

/* What a compare-and-set of the version rsp_mc_read_mg saw sends: "C<cas>
 * T<ttl>". T<t> sets the expiry to memcached's clock + t: the same second
 * it had (a later one if its clock ticked in between, never an earlier
 * one). NULL when nothing was read. */
const char *rsp_mc_version_token(apr_pool_t *p, const char *cas, const char *ttl)
{
    if (!cas) {
        return NULL;
    }
    return !strcmp(ttl, "-1") ? apr_psprintf(p, "C%s", cas)
                              : apr_psprintf(p, "C%s T%s", cas, ttl);
}

/* One of two replies: *yes 1 for the first, 0 for no or no2 (NULL: none);
 * anything else fails the operation. */
apr_status_t rsp_mc_read_outcome(rsp_mc_op_t *op, const char *yes, const char *no,
                                 const char *no2, int *out)
{
    const char *line;
    apr_status_t rv = rsp_mc_read_line(op, &line);

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
        return rsp_mc_unexpected(op, line);
    }
    return APR_SUCCESS;
}

/* "ms key len <token>" data: HD (replaced), EX or NF (not). */
void rsp_mc_buf_replace(apr_pool_t *p, rsp_mc_buf_t *b, const char *key,
                        const char *token, const char *value)
{
    rsp_mc_buf_str(p, b, apr_psprintf(p, "ms %s %" APR_SIZE_T_FMT " %s\r\n", key,
                               strlen(value), token));
    rsp_mc_buf_str(p, b, value);
    rsp_mc_buf_add(p, b, "\r\n", 2);
}

/* STORED (1) or NOT_STORED (0); anything else fails the operation. */
apr_status_t rsp_mc_read_stored(rsp_mc_op_t *op, int *stored)
{
    return rsp_mc_read_outcome(op, "STORED", "NOT_STORED", NULL, stored);
}

apr_status_t rsp_mc_read_replace(rsp_mc_op_t *op, int *replaced)
{
    return rsp_mc_read_outcome(op, "HD", "EX", "NF", replaced);
}
