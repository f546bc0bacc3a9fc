/* Redis backend: hiredis's command encoder and reply reader over the
 * module's own connections (plaintext or TLS, rsp_io.h).
 *
 * Connections are per child (made after fork), held in an apr_reslist of
 * slots sized for the MPM's threads, reused across requests and rebuilt
 * lazily after any error. Each exchange (connect and handshake included,
 * then the writes and every reply) must finish within the store's timeout,
 * counted from its start, however the server dribbles its answer. A claim
 * is one SET NX PX round trip. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <apr_reslist.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <hiredis.h>

#include "rsp_io.h"
#include "rsp_log.h"
#include "rsp_store.h"

typedef struct {
    rsp_conn_t *c;           /* NULL: not connected */
    redisReader *rd;         /* its replies */
    char *out;               /* commands not yet sent (heap) */
    size_t out_len, out_cap;
    const char *errstr;      /* why the last command could not be built */
} slot_t;

typedef struct {
    apr_reslist_t *slots;
    rsp_tls_cache_t *tls_cache;  /* with TLS: the session to resume */
    /* Sentinel: the sentinel that answered last (asked first next time)
     * and the master the last connection went to ("host:port"), under
     * lock */
    apr_thread_mutex_t *lock;
    int sentinel_first;
    char master[300];
    char append_sha[41];     /* SHA-1 of append_lua, hex: for EVALSHA */
    char replace_sha[41];    /* of replace_lua */
} redis_impl_t;

static apr_status_t slot_make(void **res, void *params, apr_pool_t *p)
{
    *res = apr_pcalloc(p, sizeof(slot_t));
    return APR_SUCCESS;
}

static void drop(slot_t *s)
{
    rsp_conn_close(s->c);
    s->c = NULL;
    if (s->rd) {
        redisReaderFree(s->rd);
        s->rd = NULL;
    }
    s->out_len = 0;
}

static apr_status_t slot_free(void *res, void *params, apr_pool_t *p)
{
    slot_t *s = res;

    drop(s);
    free(s->out);
    s->out = NULL;
    s->out_cap = 0;
    return APR_SUCCESS;
}

/* Format one command after those not yet sent. */
static int vappend(slot_t *s, const char *fmt, va_list ap)
{
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap);

    if (len < 0 || !cmd) {
        s->errstr = "cannot format";
        return REDIS_ERR;
    }
    if (s->out_len + (size_t)len > s->out_cap) {
        size_t cap = (s->out_len + (size_t)len) * 2;
        char *grown = realloc(s->out, cap);
        if (!grown) {
            redisFreeCommand(cmd);
            s->errstr = "out of memory";
            return REDIS_ERR;
        }
        s->out = grown;
        s->out_cap = cap;
    }
    memcpy(s->out + s->out_len, cmd, (size_t)len);
    s->out_len += (size_t)len;
    redisFreeCommand(cmd);
    return REDIS_OK;
}

static int append_cmd(slot_t *s, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vappend(s, fmt, ap);
    va_end(ap);
    return rc;
}

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
    redis_impl_t *impl = apr_pcalloc(pchild, sizeof(*impl));
    apr_status_t rv;

    if (max_conns < 1) {
        max_conns = 1;
    }
    rv = apr_reslist_create(&impl->slots, 0, max_conns, max_conns, 0,
                            slot_make, slot_free, st, pchild);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* Waiting for a free connection is bounded like everything else. */
    apr_reslist_timeout_set(impl->slots, st->timeout);
    if (st->url->tls) {
        if (!st->tls) {
            return APR_EINVAL; /* a TLS URL needs its context */
        }
        if ((rv = rsp_tls_cache_create(&impl->tls_cache, pchild))
            != APR_SUCCESS) {
            return rv;
        }
    }
    if (st->url->sentinels
        && (rv = apr_thread_mutex_create(&impl->lock, APR_THREAD_MUTEX_DEFAULT,
                                         pchild)) != APR_SUCCESS) {
        return rv;
    }
    sha1_hex(impl->append_sha, append_lua);
    sha1_hex(impl->replace_sha, replace_lua);
    st->impl = impl;
    return APR_SUCCESS;
}

/* Write the commands appended to s and read their n replies by the
 * deadline: APR_SUCCESS, or APR_TIMEUP, APR_EOF or APR_EGENERAL with *why
 * (the replies read so far are then freed). */
static apr_status_t transfer(slot_t *s, apr_pool_t *p, int n, redisReply **out,
                             apr_time_t deadline, const char **why)
{
    char buf[8192];
    int got = 0, i;
    apr_status_t rv;

    rv = rsp_conn_send(s->c, s->out, s->out_len, deadline, p, why);
    s->out_len = 0;
    while (rv == APR_SUCCESS && got < n) {
        void *reply = NULL;
        apr_size_t len = 0;
        if (redisReaderGetReply(s->rd, &reply) != REDIS_OK) {
            *why = apr_psprintf(p, "protocol error: %s", s->rd->errstr);
            rv = APR_EGENERAL;
            break;
        }
        if (reply) {
            out[got++] = reply;
            continue;
        }
        rv = rsp_conn_recv(s->c, buf, sizeof(buf), &len, deadline, p, why);
        if (rv == APR_SUCCESS && redisReaderFeed(s->rd, buf, len) != REDIS_OK) {
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

/* transfer() within st->timeout from now. On a transport error or a
 * timeout *err says which (naming the store) and the connection is
 * dropped, since its state is unknown. */
static apr_status_t exchange(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                             int n, redisReply **out, const char **err)
{
    const char *why = NULL;
    apr_status_t rv = transfer(s, p, n, out, apr_time_now() + st->timeout, &why);

    if (rv == APR_SUCCESS) {
        return APR_SUCCESS;
    }
    *err = rv == APR_TIMEUP
        ? apr_psprintf(p, "%s: no complete reply within %" APR_TIME_T_FMT
                       " ms (timeout)", st->url->display,
                       apr_time_as_msec(st->timeout))
        : rv == APR_EOF
        ? apr_psprintf(p, "%s: connection closed by the server",
                       st->url->display)
        : apr_psprintf(p, "%s: %s", st->url->display, why);
    drop(s);
    return APR_EGENERAL;
}

/* Send one command and read its whole reply within st->timeout from now.
 * NULL on a transport error or a timeout (see exchange). */
static redisReply *command(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                           const char **err, const char *fmt, ...)
{
    redisReply *reply = NULL;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vappend(s, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, s->errstr);
        drop(s);
        return NULL;
    }
    return exchange(st, s, p, 1, &reply, err) == APR_SUCCESS ? reply : NULL;
}

/* Run a setup command on a fresh connection; expect a status reply. */
static apr_status_t setup_cmd(slot_t *s, apr_pool_t *p, const char **err,
                              const char *what, redisReply *r)
{
    apr_status_t rv = APR_SUCCESS;

    if (!r) {
        rv = APR_EGENERAL; /* *err set by command() */
    }
    else if (r->type == REDIS_REPLY_ERROR) {
        *err = apr_psprintf(p, "%s refused: %s", what, r->str);
        rv = APR_EGENERAL;
    }
    if (r) {
        freeReplyObject(r);
    }
    if (rv != APR_SUCCESS && s->c) {
        drop(s);
    }
    return rv;
}

/* One question to one sentinel: its one reply (NULL and *why on any
 * failure), within the deadline. */
static redisReply *sentinel_call(rsp_store_t *st, apr_pool_t *p,
                                 const rsp_server_t *sv, apr_time_t deadline,
                                 const char **why, const char *fmt, ...)
{
    rsp_peer_t peer;
    slot_t t;
    redisReply *reply = NULL;
    apr_status_t rv;
    va_list ap;
    int rc;

    memset(&peer, 0, sizeof(peer));
    memset(&t, 0, sizeof(t));
    peer.host = sv->host;
    peer.port = sv->port;
    peer.tls = st->url->tls ? st->tls : NULL;
    va_start(ap, fmt);
    rc = vappend(&t, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK) {
        *why = t.errstr;
    }
    else if (rsp_conn_open(&t.c, p, &peer, deadline, why) != APR_SUCCESS) {
        t.c = NULL;
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
    slot_free(&t, NULL, p);
    return reply;
}

/* The master's address, from the sentinels asked in turn (the one that
 * answered last first), each within its share of the deadline. The error
 * tells "no sentinel answered" from "the sentinels do not know it". */
static apr_status_t resolve_master(rsp_store_t *st, apr_pool_t *p,
                                   apr_time_t deadline, const char **host,
                                   int *port, const char **err)
{
    const rsp_store_url_t *u = st->url;
    redis_impl_t *impl = st->impl;
    int n = u->sentinels->nelts, first, i, unknown = 0;
    const char *failures = "";

    apr_thread_mutex_lock(impl->lock);
    first = impl->sentinel_first;
    apr_thread_mutex_unlock(impl->lock);
    for (i = 0; i < n; i++) {
        int k = (first + i) % n;
        const rsp_server_t *sv = &APR_ARRAY_IDX(u->sentinels, k, rsp_server_t);
        apr_time_t now = apr_time_now(), until;
        const char *why = NULL;
        redisReply *r;

        if (now >= deadline) {
            failures = apr_psprintf(p, "%s%s%s: not asked (timeout)", failures,
                                    *failures ? "; " : "", sv->name);
            continue;
        }
        until = now + (deadline - now) / (n - i);
        r = sentinel_call(st, p, sv, until, &why,
                          "SENTINEL get-master-addr-by-name %s", u->master_name);
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2
            && r->element[0]->type == REDIS_REPLY_STRING
            && r->element[1]->type == REDIS_REPLY_STRING) {
            char *end;
            long v = strtol(r->element[1]->str, &end, 10);
            if (*end == '\0' && v > 0 && v < 65536 && r->element[0]->len > 0) {
                *host = apr_pstrmemdup(p, r->element[0]->str, r->element[0]->len);
                *port = (int)v;
                freeReplyObject(r);
                apr_thread_mutex_lock(impl->lock);
                impl->sentinel_first = k;
                apr_thread_mutex_unlock(impl->lock);
                return APR_SUCCESS;
            }
            why = "a malformed address";
        }
        else if (r && r->type == REDIS_REPLY_NIL) {
            unknown++;
            why = "does not know it";
        }
        else if (r && r->type == REDIS_REPLY_ERROR) {
            why = apr_pstrdup(p, r->str);
        }
        else if (r) {
            why = "an unexpected reply";
        }
        if (r) {
            freeReplyObject(r);
        }
        failures = apr_psprintf(p, "%s%s%s: %s", failures, *failures ? "; " : "",
                                sv->name, why ? why : "no answer");
    }
    *err = unknown == n
        ? apr_psprintf(p, "%s: the sentinels do not know the master %s "
                       "(every one answered: check the name)", u->display,
                       u->master_name)
        : unknown > 0
        ? apr_psprintf(p, "%s: no sentinel gave the address of the master %s "
                       "(%s)", u->display, u->master_name, failures)
        : apr_psprintf(p, "%s: no sentinel answered (%s)", u->display, failures);
    return APR_ECONNREFUSED;
}

/* A fresh connection under Sentinel: it must be to the master. */
static apr_status_t confirm_master(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                                   const char *where, const char **err)
{
    redisReply *r = command(st, s, p, err, "ROLE");

    if (!r) {
        return APR_EGENERAL; /* *err set, connection dropped */
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0
        && r->element[0]->type == REDIS_REPLY_STRING
        && !strcmp(r->element[0]->str, "master")) {
        freeReplyObject(r);
        return APR_SUCCESS;
    }
    *err = apr_psprintf(p, "%s: %s, which the sentinels gave as the master, "
                        "answers ROLE %s: not the master (a failover in "
                        "progress?); asked again at the next connection",
                        st->url->display, where,
                        r->type == REDIS_REPLY_ARRAY && r->elements > 0
                            && r->element[0]->type == REDIS_REPLY_STRING
                        ? r->element[0]->str
                        : r->type == REDIS_REPLY_ERROR ? r->str : "(unexpected)");
    freeReplyObject(r);
    drop(s);
    return APR_EGENERAL;
}

static apr_status_t connect_slot(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                                 const char **err)
{
    const rsp_store_url_t *u = st->url;
    redis_impl_t *impl = st->impl;
    rsp_peer_t peer;
    const char *why = NULL, *where = NULL;
    apr_time_t deadline = apr_time_now() + st->timeout;
    apr_status_t rv;

    memset(&peer, 0, sizeof(peer));
    if (u->kind == RSP_STORE_REDIS_UNIX) {
        peer.path = u->path;
    }
    else {
        peer.host = u->host;
        peer.port = u->port;
        peer.tls = u->tls ? st->tls : NULL;
        peer.cache = impl->tls_cache;
    }
    if (u->sentinels) {
        /* Asked again at every connection (the Sentinel client rules). */
        if ((rv = resolve_master(st, p, deadline, &peer.host, &peer.port, err))
            != APR_SUCCESS) {
            return rv;
        }
        where = apr_psprintf(p, strchr(peer.host, ':') ? "[%s]:%d" : "%s:%d",
                             peer.host, peer.port);
    }
    rv = rsp_conn_open(&s->c, p, &peer, deadline, &why);
    if (rv != APR_SUCCESS) {
        s->c = NULL;
        *err = where ? apr_psprintf(p, "%s: the master at %s: %s", u->display,
                                    where, why)
                     : apr_psprintf(p, "%s: %s", u->display, why);
        return APR_ECONNREFUSED;
    }
    if (peer.tls) {
        rsp_log(RSP_LOG_DEBUG, "store %s: TLS connection (%s)", u->display,
                rsp_conn_resumed(s->c) ? "session resumed" : "full handshake");
    }
    if (!(s->rd = redisReaderCreate())) {
        drop(s);
        *err = "cannot allocate a Redis reply reader";
        return APR_ENOMEM;
    }
    if (u->password) {
        redisReply *r = u->user
            ? command(st, s, p, err, "AUTH %s %s", u->user, u->password)
            : command(st, s, p, err, "AUTH %s", u->password);
        if ((rv = setup_cmd(s, p, err, "AUTH", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (u->db) {
        redisReply *r = command(st, s, p, err, "SELECT %d", u->db);
        if ((rv = setup_cmd(s, p, err, "SELECT", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (where) {
        if ((rv = confirm_master(st, s, p, where, err)) != APR_SUCCESS) {
            return rv;
        }
        apr_thread_mutex_lock(impl->lock);
        apr_cpystrn(impl->master, where, sizeof(impl->master));
        apr_thread_mutex_unlock(impl->lock);
    }
    return APR_SUCCESS;
}

static apr_status_t acquire(rsp_store_t *st, apr_pool_t *p, slot_t **out,
                            const char **err)
{
    redis_impl_t *impl = st->impl;
    void *res;
    apr_status_t rv;

    if (!impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    rv = apr_reslist_acquire(impl->slots, &res);
    if (rv != APR_SUCCESS) {
        *err = APR_STATUS_IS_TIMEUP(rv)
            ? "no free store connection within the timeout"
            : "cannot acquire a store connection";
        return rv;
    }
    *out = res;
    if ((*out)->c && rsp_conn_idle_closed((*out)->c)) {
        /* The server closed it while idle (restart, idle timeout): nothing
         * was sent on it, so reconnecting is safe. */
        drop(*out);
    }
    if (!(*out)->c && (rv = connect_slot(st, *out, p, err)) != APR_SUCCESS) {
        apr_reslist_release(impl->slots, res);
        return rv;
    }
    return APR_SUCCESS;
}

static void release(rsp_store_t *st, slot_t *s)
{
    apr_reslist_release(((redis_impl_t *)st->impl)->slots, s);
}

/* A NULL reply (command() has set *err and dropped the connection) or an
 * error reply (OOM, READONLY, ...: the connection stays) is a failure. */
static apr_status_t check_reply(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                                redisReply *r, const char **err)
{
    if (!r) {
        return APR_EGENERAL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, r->str);
        if (st->url->sentinels && !strncmp(r->str, "READONLY", 8)) {
            drop(s); /* not the master any more: ask the sentinels again */
        }
        freeReplyObject(r);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t unexpected(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                               redisReply *r, const char **err)
{
    *err = apr_psprintf(p, "%s: unexpected reply type %d", st->url->display,
                        r->type);
    freeReplyObject(r);
    drop(s); /* protocol state unknown */
    return APR_EGENERAL;
}

/* WAIT after a claim: the replicas' acknowledgement, when asked for. */
static int append_wait(rsp_store_t *st, slot_t *s)
{
    return st->replicas > 0
        ? append_cmd(s, "WAIT %d %lld", st->replicas,
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
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if (ttl_ms < 1) {
        *err = "claim TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    if (st->replicas > 0) {
        rsp_claim_read_t c;
        release(st, s);
        memset(&c, 0, sizeof(c));
        c.key = key;
        c.value = value;
        c.ttl_ms = ttl_ms;
        rv = st->ops->claim_read(st, p, &c, err);
        *won = c.won;
        return rv;
    }
    r = command(st, s, p, err, "SET %s %s NX PX %lld", key, value,
                     (long long)ttl_ms);
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
            *won = 1;
            freeReplyObject(r);
        }
        else if (r->type == REDIS_REPLY_NIL) {
            *won = 0;
            freeReplyObject(r);
        }
        else {
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
    return rv;
}

static apr_status_t redis_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char **value, apr_size_t *len,
                              const char **err)
{
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, s, p, err, "GET %s", key);
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
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
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
    return rv;
}

static apr_status_t redis_ttl(rsp_store_t *st, apr_pool_t *p, const char *key,
                              apr_int64_t *ttl_ms, const char **err)
{
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, s, p, err, "PTTL %s", key);
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_INTEGER && r->integer >= -2) {
            *ttl_ms = (apr_int64_t)r->integer;
            freeReplyObject(r);
        }
        else {
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
    return rv;
}

static apr_status_t redis_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *value, apr_size_t len,
                              apr_int64_t ttl_ms, const char **err)
{
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if (ttl_ms < 1) {
        *err = "TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, s, p, err, "SET %s %b PX %lld", key, value, len,
                     (long long)ttl_ms);
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0) {
            freeReplyObject(r);
        }
        else {
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
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
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, s, p, err, "EVAL %s 1 %s %s", del_if_equal_lua, key, value);
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_INTEGER) {
            *deleted = r->integer > 0;
            freeReplyObject(r);
        }
        else {
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
    return rv;
}


static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

/* SET NX PX (the verdict), GET of the claim key, and GET of also_key:
 * pipelined, one round trip. */
static apr_status_t redis_claim_read(rsp_store_t *st, apr_pool_t *p,
                                     rsp_claim_read_t *c, const char **err)
{
    redisReply *r[4];
    slot_t *s;
    apr_status_t rv;
    int w = st->replicas > 0;   /* the WAIT's reply is r[1] */
    int n = (c->also_key ? 3 : 2) + w, i;

    if (c->ttl_ms < 1) {
        *err = "claim TTL must be positive";
        return APR_EINVAL;
    }
    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    if (append_cmd(s, "SET %s %s NX PX %lld", c->key, c->value,
                           (long long)c->ttl_ms) != REDIS_OK
        || append_wait(st, s) != REDIS_OK
        || append_cmd(s, "GET %s", c->key) != REDIS_OK
        || (c->also_key
            && append_cmd(s, "GET %s", c->also_key) != REDIS_OK)) {
        *err = apr_psprintf(p, "%s: cannot format the claim", st->url->display);
        drop(s);
        release(st, s);
        return APR_EGENERAL;
    }
    if ((rv = exchange(st, s, p, n, r, err)) != APR_SUCCESS) {
        release(st, s);
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
        if (st->url->sentinels && !strncmp(r[0]->str, "READONLY", 8)) {
            drop(s); /* not the master any more: ask the sentinels again */
        }
        rv = APR_EGENERAL;
    }
    else {
        *err = apr_psprintf(p, "%s: unexpected reply type %d to the claim",
                            st->url->display, r[0]->type);
        drop(s);
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
    if (rv == APR_SUCCESS && c->also_key) {
        redisReply *a = r[2 + w];
        if (a->type == REDIS_REPLY_STRING) {
            c->also = apr_pstrmemdup(p, a->str, a->len);
            c->also_len = a->len;
        }
        else if (a->type == REDIS_REPLY_ERROR) {
            *err = apr_psprintf(p, "%s: %s", st->url->display, a->str);
            rv = APR_EGENERAL;
        }
        else if (a->type != REDIS_REPLY_NIL) {
            *err = apr_psprintf(p, "%s: unexpected reply type %d",
                                st->url->display, a->type);
            drop(s);
            rv = APR_EGENERAL;
        }
    }
    for (i = 0; i < n; i++) {
        freeReplyObject(r[i]);
    }
    release(st, s);
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
    redis_impl_t *impl = st->impl;
    redisReply *r[MAX_WRITES + 1];
    slot_t *s;
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
    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < n && rc == REDIS_OK; i++) {
        w[i].replaced = 0;
        switch (w[i].kind) {
        case RSP_WRITE_PUT:
            rc = append_cmd(s, "SET %s %b PX %lld", w[i].key,
                                    w[i].value, w[i].len, (long long)w[i].ttl_ms);
            break;
        case RSP_WRITE_APPEND:
            rc = append_cmd(s, "EVALSHA %s 1 %s %s %lld",
                                    impl->append_sha, w[i].key,
                                    apr_pstrcat(p, " ", w[i].value, NULL),
                                    (long long)w[i].ttl_ms);
            break;
        default:
            rc = append_cmd(s, "EVALSHA %s 1 %s %s %s",
                                    impl->replace_sha, w[i].key, w[i].expect,
                                    w[i].value);
        }
    }
    if (rc == REDIS_OK && acked) {
        rc = append_wait(st, s);
    }
    if (rc != REDIS_OK) {
        *err = apr_psprintf(p, "%s: cannot format the writes", st->url->display);
        drop(s);
        release(st, s);
        return APR_EGENERAL;
    }
    if ((rv = exchange(st, s, p, n + acked, r, err)) != APR_SUCCESS) {
        release(st, s);
        return rv;
    }
    for (i = 0; i < n; i++) {
        redisReply *x = r[i], *again = NULL;
        if (w[i].kind != RSP_WRITE_PUT && is_noscript(x) && s->c) {
            again = w[i].kind == RSP_WRITE_APPEND
                ? command(st, s, p, err, "EVAL %s 1 %s %s %lld", append_lua,
                          w[i].key, apr_pstrcat(p, " ", w[i].value, NULL),
                          (long long)w[i].ttl_ms)
                : command(st, s, p, err, "EVAL %s 1 %s %s %s", replace_lua,
                          w[i].key, w[i].expect, w[i].value);
            if (!again) {
                rv = APR_EGENERAL; /* *err set, connection dropped */
                continue;
            }
            again_sent = 1;
            x = again;
        }
        else if (!s->c) {
            continue; /* dropped: rv and *err already say why */
        }
        if (x->type == REDIS_REPLY_ERROR) {
            if (rv == APR_SUCCESS) {
                *err = apr_psprintf(p, "%s: %s", st->url->display, x->str);
            }
            rv = APR_EGENERAL;
            if (st->url->sentinels && !strncmp(x->str, "READONLY", 8)) {
                if (again) {
                    freeReplyObject(again);
                }
                drop(s); /* not the master any more */
                continue;
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
            drop(s);
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
            x = again = command(st, s, p, err, "WAIT %d %lld", st->replicas,
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
    release(st, s);
    return rv;
}

static apr_status_t redis_write_many(rsp_store_t *st, apr_pool_t *p,
                                     rsp_write_t *w, int n, const char **err)
{
    return write_many(st, p, w, n, 0, err);
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
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire(st, p, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = section ? command(st, s, p, err, "INFO %s", section)
                : command(st, s, p, err, "INFO");
    if ((rv = check_reply(st, s, p, r, err)) == APR_SUCCESS) {
        if (r->type == REDIS_REPLY_STRING) {
            *text = apr_pstrmemdup(p, r->str, r->len);
            if (st->url->sentinels && strstr(*text, "\nrole:slave")) {
                drop(s); /* demoted: the next connection asks again */
            }
            freeReplyObject(r);
        }
        else {
            rv = unexpected(st, s, p, r, err);
        }
    }
    release(st, s);
    return rv;
}

const char *rsp_store_primary(rsp_store_t *st, apr_pool_t *p)
{
    redis_impl_t *impl = st->impl;
    const char *out = NULL;

    if (st->ops != &rsp_store_redis_ops || !st->url->sentinels || !impl) {
        return NULL;
    }
    apr_thread_mutex_lock(impl->lock);
    if (impl->master[0]) {
        out = apr_pstrdup(p, impl->master);
    }
    apr_thread_mutex_unlock(impl->lock);
    return out;
}

const rsp_store_ops_t rsp_store_redis_ops = {
    "redis",
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
    NULL,   /* one server */
    NULL,
    NULL,
    NULL,
    redis_info,
};
