/* Redis backend: the store operations. A claim is one SET NX PX round
 * trip (with ReplaySPStoreReplicas, a WAIT after it); the writes of a
 * sign-in are one pipeline; the logout index's append and a takeover's
 * compare-and-set are scripts run by their SHA-1. Connections, pipelines
 * and the topologies (standalone, Sentinel, Cluster) are rsp_redis.h's. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <apr_strings.h>

#include "rsp_redis.h"

/* APPEND, then make the expiry at least ARGV[2] ms (PTTL is -1 for the
 * fresh key): one atomic step on the server. */
static const char append_lua[] =
    "redis.call('APPEND', KEYS[1], ARGV[1]) "
    "if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then "
    "redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 1";

/* Compare-and-set keeping the expiry: one atomic step on the server. */
static const char replace_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "local t = redis.call('PTTL', KEYS[1]) "
    "if t > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', t) "
    "else redis.call('SET', KEYS[1], ARGV[2]) end return 1 end return 0";

/* What EVALSHA names a script by. */
static void sha1_hex(char out[41], const char *script)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0, i;

    if (EVP_Digest(script, strlen(script), md, &len, EVP_sha1(), NULL) != 1
        || len != 20) {
        abort(); /* allocation failure inside OpenSSL */
    }
    for (i = 0; i < 20; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[40] = '\0';
}


static apr_status_t redis_child_init(rsp_store_t *st, apr_pool_t *pchild,
                                     int max_conns)
{
    rsp_redis_t *impl = apr_pcalloc(pchild, sizeof(*impl));
    apr_status_t rv;

    impl->max_conns = max_conns < 1 ? 1 : max_conns;
    impl->topo = st->url->cluster ? &rsp_redis_cluster
               : st->url->sentinels ? &rsp_redis_sentinel
               : &rsp_redis_standalone;
    apr_cpystrn(impl->node.name, st->url->display, sizeof(impl->node.name));
    st->impl = impl;
    if (st->url->tls) {
        if (!st->tls) {
            return APR_EINVAL; /* a TLS URL needs its context */
        }
        if ((rv = rsp_tls_cache_create(&impl->tls_cache, pchild))
            != APR_SUCCESS) {
            return rv;
        }
    }
    sha1_hex(impl->append_sha, append_lua);
    sha1_hex(impl->replace_sha, replace_lua);
    return impl->topo->init(st, pchild);
}

/* A connection to the server that holds key, within st->timeout. */
static apr_status_t acquire(rsp_store_t *st, apr_pool_t *p, const char *key,
                            rsp_redis_conn_t **out, const char **err)
{
    rsp_redis_t *impl = st->impl;

    if (!impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    return impl->topo->acquire(st, p, key, apr_time_now() + st->timeout, out,
                               err);
}

/* The commands appended to *cp and their n replies, within st->timeout. */
static apr_status_t exchange(rsp_store_t *st, rsp_redis_conn_t **cp,
                             apr_pool_t *p, int n, redisReply **out,
                             const char **err)
{
    rsp_redis_t *impl = st->impl;

    return impl->topo->exchange(st, cp, p, n, out,
                                apr_time_now() + st->timeout, err);
}

/* An error reply to a command that ran on c: the topology is told. */
static void told(rsp_store_t *st, rsp_redis_conn_t *c, const redisReply *r)
{
    rsp_redis_t *impl = st->impl;

    if (impl->topo->on_error) {
        impl->topo->on_error(st, c, r);
    }
}

/* One command within st->timeout. */
#define command(st, cp, p, err, ...) \
    rsp_redis_command((st), (cp), (p), apr_time_now() + (st)->timeout, (err), \
                      __VA_ARGS__)

/* WAIT after a claim: the replicas' acknowledgement, when asked for. */
static int append_wait(rsp_store_t *st, rsp_redis_conn_t *s)
{
    return st->replicas > 0
        ? rsp_redis_append(s, "WAIT %d %lld", st->replicas,
                     (long long)apr_time_as_msec(st->replicas_wait))
        : REDIS_OK;
}

/* The reply to that WAIT, for a claim this call wrote. */
static apr_status_t check_acked(rsp_store_t *st, apr_pool_t *p,
                                const redisReply *w, const char *what,
                                const char **err)
{
    if (w->type == REDIS_REPLY_INTEGER && w->integer >= st->replicas) {
        return APR_SUCCESS;
    }
    if (w->type != REDIS_REPLY_INTEGER) {
        *err = apr_psprintf(p, "%s: WAIT: %s", st->url->display,
                            w->type == REDIS_REPLY_ERROR ? w->str
                                                         : "unexpected reply");
        return APR_EGENERAL;
    }
    *err = apr_psprintf(p, "%s: %s was written, but %" APR_INT64_T_FMT
                        " of the %d replicas (ReplaySPStoreReplicas) "
                        "acknowledged it within %" APR_TIME_T_FMT " ms; it "
                        "stays, refused until it expires", st->url->display,
                        what, (apr_int64_t)w->integer, st->replicas,
                        apr_time_as_msec(st->replicas_wait));
    return RSP_STORE_UNACKED;
}

static apr_status_t redis_claim(rsp_store_t *st, apr_pool_t *p, const char *key,
                                const char *value, apr_int64_t ttl_ms, int *won,
                                const char **err)
{
    rsp_redis_conn_t *s;
    redisReply *r;
    apr_status_t rv;

    if (ttl_ms < 1) {
        *err = "claim TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    if (st->replicas > 0) {
        rsp_claim_read_t c;
        rsp_redis_release(s);
        memset(&c, 0, sizeof(c));
        c.key = key;
        c.value = value;
        c.ttl_ms = ttl_ms;
        rv = st->ops->claim_read(st, p, &c, err);
        *won = c.won;
        return rv;
    }
    r = command(st, &s, p, err, "SET %s %s NX PX %lld", key, value,
                     (long long)ttl_ms);
    if ((rv = rsp_redis_reply_ok(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
            *won = 1;
            freeReplyObject(r);
        }
        else if (r->type == REDIS_REPLY_NIL) {
            *won = 0;
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, s, p, r, err);
        }
    }
    rsp_redis_release(s);
    return rv;
}

static apr_status_t redis_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char **value, apr_size_t *len,
                              const char **err)
{
    rsp_redis_conn_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "GET %s", key);
    if ((rv = rsp_redis_reply_ok(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STRING) {
            *value = apr_pstrmemdup(p, r->str, r->len);
            *len = r->len;
            freeReplyObject(r);
        }
        else if (r->type == REDIS_REPLY_NIL) {
            *value = NULL;
            *len = 0;
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, s, p, r, err);
        }
    }
    rsp_redis_release(s);
    return rv;
}

static apr_status_t redis_ttl(rsp_store_t *st, apr_pool_t *p, const char *key,
                              apr_int64_t *ttl_ms, const char **err)
{
    rsp_redis_conn_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "PTTL %s", key);
    if ((rv = rsp_redis_reply_ok(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_INTEGER && r->integer >= -2) {
            *ttl_ms = (apr_int64_t)r->integer;
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, s, p, r, err);
        }
    }
    rsp_redis_release(s);
    return rv;
}

static apr_status_t redis_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *value, apr_size_t len,
                              apr_int64_t ttl_ms, const char **err)
{
    rsp_redis_conn_t *s;
    redisReply *r;
    apr_status_t rv;

    if (ttl_ms < 1) {
        *err = "TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "SET %s %b PX %lld", key, value, len,
                     (long long)ttl_ms);
    if ((rv = rsp_redis_reply_ok(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, s, p, r, err);
        }
    }
    rsp_redis_release(s);
    return rv;
}

/* Compare-and-delete in one atomic step on the server. */
static const char del_if_equal_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) else return 0 end";

static apr_status_t redis_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                       const char *key, const char *value,
                                       int *deleted, const char **err)
{
    rsp_redis_conn_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "EVAL %s 1 %s %s", del_if_equal_lua, key, value);
    if ((rv = rsp_redis_reply_ok(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_INTEGER) {
            *deleted = r->integer > 0;
            freeReplyObject(r);
        }
        else {
            rv = rsp_redis_unexpected(st, s, p, r, err);
        }
    }
    rsp_redis_release(s);
    return rv;
}


static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

/* SET NX PX (the verdict) and GET of the claim key: pipelined, one round
 * trip. */
static apr_status_t redis_claim_read(rsp_store_t *st, apr_pool_t *p,
                                     rsp_claim_read_t *c, const char **err)
{
    redisReply *r[3];
    rsp_redis_conn_t *s;
    apr_status_t rv;
    int w = st->replicas > 0;   /* the WAIT's reply is r[1] */
    int n = 2 + w, i;

    if (c->ttl_ms < 1) {
        *err = "claim TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, c->key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    if (rsp_redis_append(s, "SET %s %s NX PX %lld", c->key, c->value,
                           (long long)c->ttl_ms) != REDIS_OK
        || append_wait(st, s) != REDIS_OK
        || rsp_redis_append(s, "GET %s", c->key) != REDIS_OK) {
        *err = apr_psprintf(p, "%s: cannot format the claim", st->url->display);
        rsp_redis_drop(s);
        rsp_redis_release(s);
        return APR_EGENERAL;
    }
    if ((rv = exchange(st, &s, p, n, r, err)) != APR_SUCCESS) {
        rsp_redis_release(s);
        return rv;
    }
    /* The verdict: the SET's reply, and nothing else. */
    if (r[0]->type == REDIS_REPLY_STATUS && !strcmp(r[0]->str, "OK")) {
        c->won = 1;
    }
    else if (r[0]->type == REDIS_REPLY_NIL) {
        c->won = 0;
    }
    else if (r[0]->type == REDIS_REPLY_ERROR) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, r[0]->str);
        told(st, s, r[0]);
        rv = APR_EGENERAL;
    }
    else {
        *err = apr_psprintf(p, "%s: unexpected reply type %d to the claim",
                            st->url->display, r[0]->type);
        rsp_redis_drop(s);
        rv = APR_EGENERAL;
    }
    /* Won, but only once the replicas have it: else not won, kept. */
    if (rv == APR_SUCCESS && c->won && w
        && (rv = check_acked(st, p, r[1], "the claim", err)) != APR_SUCCESS) {
        c->won = 0;
    }
    if (rv == APR_SUCCESS && !c->won && r[1 + w]->type == REDIS_REPLY_STRING) {
        c->holder = apr_pstrmemdup(p, r[1 + w]->str, r[1 + w]->len);
    }
    for (i = 0; i < n; i++) {
        freeReplyObject(r[i]);
    }
    rsp_redis_release(s);
    return rv;
}

#define MAX_WRITES 8

/* Every write pipelined: one round trip (a second one only for appends
 * whose script the server no longer has, e.g. after SCRIPT FLUSH). With
 * acked, a WAIT follows them (see check_acked): a replace done is then
 * acknowledged by st->replicas replicas, or RSP_STORE_UNACKED. */
static apr_status_t write_many(rsp_store_t *st, apr_pool_t *p, rsp_write_t *w,
                               int n, int acked, const char **err)
{
    rsp_redis_t *impl = st->impl;
    redisReply *r[MAX_WRITES + 1];
    rsp_redis_conn_t *s;
    apr_status_t rv;
    int i, rc = REDIS_OK, again_sent = 0, replaced = 0;

    if (n < 1 || n > MAX_WRITES) {
        *err = "write_many: 1 to 8 writes";
        return APR_EINVAL;
    }
    for (i = 0; i < n; i++) {
        if (w[i].kind != RSP_WRITE_REPLACE && w[i].ttl_ms < 1) {
            *err = "TTL must be positive";
            return APR_EINVAL;
        }
    }
    if ((rv = acquire(st, p, w[0].key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < n && rc == REDIS_OK; i++) {
        w[i].replaced = 0;
        switch (w[i].kind) {
        case RSP_WRITE_PUT:
            rc = rsp_redis_append(s, "SET %s %b PX %lld", w[i].key,
                                    w[i].value, w[i].len, (long long)w[i].ttl_ms);
            break;
        case RSP_WRITE_APPEND:
            rc = rsp_redis_append(s, "EVALSHA %s 1 %s %s %lld",
                                    impl->append_sha, w[i].key,
                                    apr_pstrcat(p, " ", w[i].value, NULL),
                                    (long long)w[i].ttl_ms);
            break;
        default:
            rc = rsp_redis_append(s, "EVALSHA %s 1 %s %s %s",
                                    impl->replace_sha, w[i].key, w[i].expect,
                                    w[i].value);
        }
    }
    if (rc == REDIS_OK && acked) {
        rc = append_wait(st, s);
    }
    if (rc != REDIS_OK) {
        *err = apr_psprintf(p, "%s: cannot format the writes", st->url->display);
        rsp_redis_drop(s);
        rsp_redis_release(s);
        return APR_EGENERAL;
    }
    if ((rv = exchange(st, &s, p, n + acked, r, err)) != APR_SUCCESS) {
        rsp_redis_release(s);
        return rv;
    }
    for (i = 0; i < n; i++) {
        redisReply *x = r[i], *again = NULL;
        if (w[i].kind != RSP_WRITE_PUT && is_noscript(x) && s->base.io) {
            again = w[i].kind == RSP_WRITE_APPEND
                ? command(st, &s, p, err, "EVAL %s 1 %s %s %lld", append_lua,
                          w[i].key, apr_pstrcat(p, " ", w[i].value, NULL),
                          (long long)w[i].ttl_ms)
                : command(st, &s, p, err, "EVAL %s 1 %s %s %s", replace_lua,
                          w[i].key, w[i].expect, w[i].value);
            if (!again) {
                rv = APR_EGENERAL; /* *err set, connection dropped */
                continue;
            }
            again_sent = 1;
            x = again;
        }
        else if (!s->base.io) {
            continue; /* dropped: rv and *err already say why */
        }
        if (x->type == REDIS_REPLY_ERROR) {
            if (rv == APR_SUCCESS) {
                *err = apr_psprintf(p, "%s: %s", st->url->display, x->str);
            }
            rv = APR_EGENERAL;
            told(st, s, x);
            if (!s->base.io) {
                if (again) {
                    freeReplyObject(again);
                }
                continue; /* dropped (not the master any more) */
            }
        }
        else if (w[i].kind == RSP_WRITE_PUT
                 ? !(x->type == REDIS_REPLY_STATUS && !strcmp(x->str, "OK"))
                 : x->type != REDIS_REPLY_INTEGER) {
            if (rv == APR_SUCCESS) {
                *err = apr_psprintf(p, "%s: unexpected reply type %d",
                                    st->url->display, x->type);
            }
            rv = APR_EGENERAL;
            rsp_redis_drop(s);
        }
        else if (w[i].kind == RSP_WRITE_REPLACE) {
            w[i].replaced = x->integer == 1;
            replaced |= w[i].replaced;
        }
        if (again) {
            freeReplyObject(again);
        }
    }
    if (rv == APR_SUCCESS && acked && replaced) {
        /* the WAIT after the writes, or again after a resent script */
        redisReply *x = r[n], *again = NULL;
        if (again_sent) {
            x = again = command(st, &s, p, err, "WAIT %d %lld", st->replicas,
                                (long long)apr_time_as_msec(st->replicas_wait));
        }
        rv = x ? check_acked(st, p, x, "the takeover", err) : APR_EGENERAL;
        if (again) {
            freeReplyObject(again);
        }
    }
    for (i = 0; i < n + acked; i++) {
        freeReplyObject(r[i]);
    }
    rsp_redis_release(s);
    return rv;
}

static apr_status_t redis_write_many(rsp_store_t *st, apr_pool_t *p,
                                     rsp_write_t *w, int n, const char **err)
{
    rsp_redis_t *impl = st->impl;
    apr_status_t rv = APR_SUCCESS;
    int i;

    if (!impl->topo->keys_apart || n == 1) {
        return write_many(st, p, w, n, 0, err);
    }
    /* Cluster: each key on its own node, in order (a replace last stays
     * last); every one attempted, the first failure reported. */
    for (i = 0; i < n; i++) {
        const char *e = NULL;
        apr_status_t r1 = write_many(st, p, &w[i], 1, 0, &e);
        if (r1 != APR_SUCCESS && rv == APR_SUCCESS) {
            rv = r1;
            *err = e;
        }
    }
    return rv;
}

/* One append: the same script, by its SHA, as the writes of a batch. */
static apr_status_t redis_append(rsp_store_t *st, apr_pool_t *p,
                                 const char *key, const char *item,
                                 apr_int64_t ttl_ms, const char **err)
{
    rsp_write_t w;

    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_APPEND;
    w.key = key;
    w.value = item;
    w.ttl_ms = ttl_ms;
    return redis_write_many(st, p, &w, 1, err);
}

static apr_status_t redis_replace(rsp_store_t *st, apr_pool_t *p,
                                  const char *key, const char *expect,
                                  const char *token, const char *value,
                                  int *replaced, const char **err)
{
    rsp_write_t w;
    apr_status_t rv;

    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_REPLACE;
    w.key = key;
    w.expect = expect;
    w.value = value;
    w.ttl_ms = 1;   /* unused: the expiry is kept */
    /* A replace on its own is a takeover, a claim changing hands:
     * acknowledged by the replicas like a claim. */
    rv = write_many(st, p, &w, 1, st->replicas > 0, err);
    *replaced = w.replaced;
    return rv;
}

static apr_status_t redis_info(rsp_store_t *st, apr_pool_t *p,
                               const char *section, const char **text,
                               const char **err)
{
    rsp_redis_t *impl = st->impl;

    if (!impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    return impl->topo->info(st, p, section, text, err);
}

const rsp_store_ops_t rsp_store_redis_ops = {
    "redis",
    0,
    redis_child_init,
    redis_claim,
    redis_get,
    redis_put,
    redis_del_if_equal,
    redis_append,
    redis_ttl,
    redis_claim_read,
    redis_write_many,
    redis_replace,
    NULL,   /* one server: no RSP_STORE_CAP_SERVERS */
    NULL,
    NULL,
    NULL,
    redis_info,
};
