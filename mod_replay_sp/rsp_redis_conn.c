/* Redis connections: hiredis's command encoder and reply reader over the
 * module's own connections (plaintext or TLS, rsp_io.h), pooled per node
 * and per child, reused across requests and made again after any error.
 * Each exchange (connect and handshake included, then the writes and
 * every reply) must finish by its deadline, however the server dribbles
 * its answer. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "rsp_log.h"
#include "rsp_redis.h"

static void conn_closed(rsp_pooled_t *b)
{
    rsp_redis_conn_t *c = (rsp_redis_conn_t *)b;

    if (c->rd) {
        redisReaderFree(c->rd);
        c->rd = NULL;
    }
    c->out_len = 0;
    c->ncmd = 0;
}

static void conn_destroy(rsp_pooled_t *b)
{
    rsp_redis_conn_t *c = (rsp_redis_conn_t *)b;

    free(c->out);
    c->out = NULL;
    c->out_cap = 0;
}

static apr_status_t conn_connect(rsp_pooled_t *b, void *ctx, apr_pool_t *p,
                                 apr_time_t deadline, const char **err)
{
    rsp_store_t *st = ctx;
    rsp_redis_t *impl = st->impl;

    return impl->topo->connect(st, (rsp_redis_conn_t *)b, p, deadline, err);
}

static const rsp_pool_kind_t conn_kind = {
    sizeof(rsp_redis_conn_t), conn_connect, conn_closed, conn_destroy, NULL
};

apr_status_t rsp_redis_node_init(rsp_store_t *st, rsp_redis_node_t *n,
                                 apr_pool_t *p)
{
    rsp_redis_t *impl = st->impl;

    return rsp_pool_create(&n->conns, p, &conn_kind, n, impl->max_conns,
                           st->timeout);
}

const char *rsp_redis_hostport(apr_pool_t *p, const char *host, int port)
{
    return apr_psprintf(p, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

void rsp_redis_drop(rsp_redis_conn_t *c)
{
    if (c) {
        rsp_pool_drop(&c->base);
    }
}

void rsp_redis_clear(rsp_redis_conn_t *c)
{
    rsp_conn_close(c->base.io);
    c->base.io = NULL;
    conn_closed(&c->base);
    conn_destroy(&c->base);
}

void rsp_redis_release(rsp_redis_conn_t *c)
{
    if (c) {
        rsp_pool_release(&c->base);
    }
}

apr_status_t rsp_redis_acquire_at(rsp_store_t *st, apr_pool_t *p,
                                  rsp_redis_node_t *n, apr_time_t deadline,
                                  rsp_redis_conn_t **out, const char **err)
{
    rsp_pooled_t *b;
    apr_status_t rv;

    rv = rsp_pool_acquire(n->conns, st, p, st->url->display, deadline, &b,
                          err);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    *out = (rsp_redis_conn_t *)b;
    (*out)->ncmd = 0;
    return APR_SUCCESS;
}

int rsp_redis_append_raw(rsp_redis_conn_t *c, const char *cmd, size_t len)
{
    if (c->out_len + len > c->out_cap) {
        size_t cap = (c->out_len + len) * 2;
        char *grown = realloc(c->out, cap);
        if (!grown) {
            c->errstr = "out of memory";
            return REDIS_ERR;
        }
        c->out = grown;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, cmd, len);
    c->out_len += len;
    if (c->ncmd < RSP_REDIS_MAX_PIPE) {
        c->cmd_end[c->ncmd] = c->out_len;
    }
    c->ncmd++;
    return REDIS_OK;
}

int rsp_redis_vappend(rsp_redis_conn_t *c, const char *fmt, va_list ap)
{
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap), rc;

    if (len < 0 || !cmd) {
        c->errstr = "cannot format";
        return REDIS_ERR;
    }
    rc = rsp_redis_append_raw(c, cmd, (size_t)len);
    redisFreeCommand(cmd);
    return rc;
}

int rsp_redis_append(rsp_redis_conn_t *c, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = rsp_redis_vappend(c, fmt, ap);
    va_end(ap);
    return rc;
}

/* Write the commands appended to c and read their n replies by the
 * deadline: APR_SUCCESS, or APR_TIMEUP, APR_EOF or APR_EGENERAL with *why
 * (the replies read so far are then freed). */
static apr_status_t transfer(rsp_redis_conn_t *c, apr_pool_t *p, int n,
                             redisReply **out, apr_time_t deadline,
                             const char **why)
{
    char buf[8192];
    int got = 0, i;
    apr_status_t rv;

    rv = rsp_conn_send(c->base.io, c->out, c->out_len, deadline, p, why);
    c->out_len = 0;
    while (rv == APR_SUCCESS && got < n) {
        void *reply = NULL;
        apr_size_t len = 0;
        if (redisReaderGetReply(c->rd, &reply) != REDIS_OK) {
            *why = apr_psprintf(p, "protocol error: %s", c->rd->errstr);
            rv = APR_EGENERAL;
            break;
        }
        if (reply) {
            out[got++] = reply;
            continue;
        }
        rv = rsp_conn_recv(c->base.io, buf, sizeof(buf), &len, deadline, p,
                           why);
        if (rv == APR_SUCCESS && redisReaderFeed(c->rd, buf, len) != REDIS_OK) {
            *why = "out of memory";
            rv = APR_EGENERAL;
        }
    }
    if (rv != APR_SUCCESS) {
        for (i = 0; i < got; i++) {
            freeReplyObject(out[i]);
        }
    }
    return rv;
}

apr_status_t rsp_redis_exchange_at(rsp_store_t *st, rsp_redis_conn_t *c,
                                   apr_pool_t *p, int n, redisReply **out,
                                   apr_time_t deadline, const char **err)
{
    const rsp_redis_node_t *node = RSP_REDIS_NODE(c);
    const char *why = NULL;
    /* a node with an address of its own (a cluster's) is named */
    const char *where = node->host
        ? apr_pstrcat(p, st->url->display, " (node ", node->name, ")", NULL)
        : st->url->display;
    apr_status_t rv;

    c->ncmd = 0;
    rv = transfer(c, p, n, out, deadline, &why);
    if (rv == APR_SUCCESS) {
        return APR_SUCCESS;
    }
    *err = rv == APR_TIMEUP
        ? apr_psprintf(p, "%s: no complete reply within %" APR_TIME_T_FMT
                       " ms (timeout)", where, apr_time_as_msec(st->timeout))
        : rv == APR_EOF
        ? apr_psprintf(p, "%s: connection closed by the server", where)
        : apr_psprintf(p, "%s: %s", where, why);
    rsp_redis_drop(c);
    return APR_EGENERAL;
}

static redisReply *vcommand(rsp_store_t *st, rsp_redis_conn_t **cp,
                            int through_topology, apr_pool_t *p,
                            apr_time_t deadline, const char **err,
                            const char *fmt, va_list ap)
{
    rsp_redis_t *impl = st->impl;
    redisReply *reply = NULL;
    apr_status_t rv;

    if (rsp_redis_vappend(*cp, fmt, ap) != REDIS_OK) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, (*cp)->errstr);
        rsp_redis_drop(*cp);
        return NULL;
    }
    rv = through_topology
        ? impl->topo->exchange(st, cp, p, 1, &reply, deadline, err)
        : rsp_redis_exchange_at(st, *cp, p, 1, &reply, deadline, err);
    return rv == APR_SUCCESS ? reply : NULL;
}

redisReply *rsp_redis_command_at(rsp_store_t *st, rsp_redis_conn_t *c,
                                 apr_pool_t *p, apr_time_t deadline,
                                 const char **err, const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = vcommand(st, &c, 0, p, deadline, err, fmt, ap);
    va_end(ap);
    return r;
}

redisReply *rsp_redis_command(rsp_store_t *st, rsp_redis_conn_t **cp,
                              apr_pool_t *p, apr_time_t deadline,
                              const char **err, const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = vcommand(st, cp, 1, p, deadline, err, fmt, ap);
    va_end(ap);
    return r;
}

redisReply *rsp_redis_call(apr_pool_t *p,
                           const rsp_peer_t *peer, apr_time_t deadline,
                           const char **why, const char *fmt, ...)
{
    rsp_redis_conn_t t;
    redisReply *reply = NULL;
    apr_status_t rv;
    va_list ap;
    int rc;

    memset(&t, 0, sizeof(t));
    va_start(ap, fmt);
    rc = rsp_redis_vappend(&t, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK) {
        *why = t.errstr;
    }
    else if (rsp_conn_open(&t.base.io, p, peer, deadline, why)
             != APR_SUCCESS) {
        t.base.io = NULL;
    }
    else if (!(t.rd = redisReaderCreate())) {
        *why = "out of memory";
    }
    else if ((rv = transfer(&t, p, 1, &reply, deadline, why)) != APR_SUCCESS) {
        reply = NULL;
        if (rv == APR_TIMEUP) {
            *why = "no answer within the timeout";
        }
        else if (rv == APR_EOF) {
            *why = "connection closed";
        }
    }
    rsp_redis_clear(&t);
    return reply;
}

void rsp_redis_peer(rsp_store_t *st, rsp_peer_t *peer, const char *host,
                    int port)
{
    rsp_redis_t *impl = st->impl;

    memset(peer, 0, sizeof(*peer));
    if (st->url->kind == RSP_STORE_REDIS_UNIX) {
        peer->path = st->url->path;
        return;
    }
    peer->host = host;
    peer->port = port;
    peer->tls = st->url->tls ? st->tls : NULL;
    peer->cache = impl->tls_cache;
}

/* A setup command's reply: a status, else the connection is dropped. */
static apr_status_t setup_reply(rsp_redis_conn_t *c, apr_pool_t *p,
                                const char **err, const char *what,
                                redisReply *r)
{
    apr_status_t rv = APR_SUCCESS;

    if (!r) {
        rv = APR_EGENERAL; /* *err set, connection dropped */
    }
    else if (r->type == REDIS_REPLY_ERROR) {
        *err = apr_psprintf(p, "%s refused: %s", what, r->str);
        rv = APR_EGENERAL;
    }
    if (r) {
        freeReplyObject(r);
    }
    if (rv != APR_SUCCESS) {
        rsp_redis_drop(c);
    }
    return rv;
}

apr_status_t rsp_redis_connect(rsp_store_t *st, rsp_redis_conn_t *c,
                               apr_pool_t *p, const rsp_peer_t *peer,
                               const char *where, apr_time_t deadline,
                               const char **err)
{
    const rsp_store_url_t *u = st->url;
    const char *why = NULL;
    apr_status_t rv;

    rv = rsp_conn_open(&c->base.io, p, peer, deadline, &why);
    if (rv != APR_SUCCESS) {
        c->base.io = NULL;
        *err = where ? apr_psprintf(p, "%s: %s: %s", u->display, where, why)
                     : apr_psprintf(p, "%s: %s", u->display, why);
        return APR_ECONNREFUSED;
    }
    if (peer->tls) {
        rsp_log(RSP_LOG_DEBUG, "store %s: TLS connection (%s)", u->display,
                rsp_conn_resumed(c->base.io) ? "session resumed"
                                             : "full handshake");
    }
    if (!(c->rd = redisReaderCreate())) {
        rsp_redis_drop(c);
        *err = "cannot allocate a Redis reply reader";
        return APR_ENOMEM;
    }
    if (u->password) {
        redisReply *r = u->user
            ? rsp_redis_command_at(st, c, p, deadline, err, "AUTH %s %s",
                                   u->user, u->password)
            : rsp_redis_command_at(st, c, p, deadline, err, "AUTH %s",
                                   u->password);
        if ((rv = setup_reply(c, p, err, "AUTH", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (u->db) {
        redisReply *r = rsp_redis_command_at(st, c, p, deadline, err,
                                             "SELECT %d", u->db);
        if ((rv = setup_reply(c, p, err, "SELECT", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    return APR_SUCCESS;
}

apr_status_t rsp_redis_reply_ok(rsp_store_t *st, rsp_redis_conn_t *c,
                                apr_pool_t *p, redisReply *r,
                                const char **err)
{
    rsp_redis_t *impl = st->impl;

    if (!r) {
        return APR_EGENERAL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, r->str);
        if (impl->topo->on_error) {
            impl->topo->on_error(st, c, r);
        }
        freeReplyObject(r);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

apr_status_t rsp_redis_unexpected(rsp_store_t *st, rsp_redis_conn_t *c,
                                  apr_pool_t *p, redisReply *r,
                                  const char **err)
{
    *err = apr_psprintf(p, "%s: unexpected reply type %d", st->url->display,
                        r->type);
    freeReplyObject(r);
    rsp_redis_drop(c); /* protocol state unknown */
    return APR_EGENERAL;
}

apr_status_t rsp_redis_info_at(rsp_store_t *st, apr_pool_t *p,
                               rsp_redis_node_t *n, const char *section,
                               int want_master, const char **text,
                               const char **err)
{
    apr_time_t deadline = apr_time_now() + st->timeout;
    rsp_redis_conn_t *c;
    redisReply *r;
    apr_status_t rv;

    if ((rv = rsp_redis_acquire_at(st, p, n, deadline, &c, err))
        != APR_SUCCESS) {
        return rv;
    }
    r = section ? rsp_redis_command_at(st, c, p, deadline, err, "INFO %s",
                                       section)
                : rsp_redis_command_at(st, c, p, deadline, err, "INFO");
    if ((rv = rsp_redis_reply_ok(st, c, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STRING) {
            *text = apr_pstrmemdup(p, r->str, r->len);
            if (want_master && strstr(*text, "\nrole:slave")) {
                rsp_redis_drop(c); /* demoted: the next connection asks again */
            }
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, c, p, r, err);
        }
    }
    rsp_redis_release(c);
    return rv;
}
