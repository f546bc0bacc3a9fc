/* Redis backend: hiredis's command encoder and reply reader over the
 * module's own connections (plaintext or TLS, rsp_io.h).
 *
 * Connections are per child (made after fork), held in an apr_reslist of
 * slots per server sized for the MPM's threads, reused across requests and
 * rebuilt lazily after any error. Each exchange (connect and handshake
 * included, then the writes and every reply) must finish within the
 * store's timeout, counted from its start, however the server dribbles its
 * answer. A claim is one SET NX PX round trip.
 *
 * Redis Cluster: every command is about one key and goes to the master of
 * that key's slot (CRC16 mod 16384), from a map read with CLUSTER SHARDS;
 * MOVED updates the map (and has it read again), ASK sends the commands
 * once to the node named, each after ASKING. A redirected command was not
 * executed, so sending it again is safe. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include <apr_reslist.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <hiredis.h>

#include "rsp_io.h"
#include "rsp_log.h"
#include "rsp_store.h"

#define CLUSTER_SLOTS 16384
#define MAX_NODES 64           /* cluster nodes one child knows */
#define MAX_PIPE 16            /* commands of one pipeline, remembered */
#define MAX_HOPS 5             /* redirections followed for one exchange */
#define REFRESH_GAP APR_USEC_PER_SEC / 10   /* map read at most this often
                                             * after a MOVED or an error */

typedef struct node_t node_t;

typedef struct {
    node_t *node;            /* the server this connection goes to */
    rsp_conn_t *c;           /* NULL: not connected */
    redisReader *rd;         /* its replies */
    char *out;               /* commands not yet sent (heap) */
    size_t out_len, out_cap;
    int ncmd;                /* commands in out, and where each ends */
    size_t cmd_end[MAX_PIPE];
    const char *errstr;      /* why the last command could not be built */
} slot_t;

struct node_t {
    const char *host;        /* NULL: the URL's, or the master the
                              * sentinels give */
    int port;
    char name[300];          /* "host:port", for logs */
    apr_reslist_t *slots;
};

typedef struct {
    node_t nodes[MAX_NODES]; /* [0]: the server (standalone, Sentinel);
                              * cluster: every node met, never removed */
    int nnodes;
    apr_pool_t *npool;       /* cluster: the nodes' lists come from here */
    int max_conns;
    rsp_tls_cache_t *tls_cache;  /* with TLS: the session to resume */
    /* under lock: Sentinel's sentinel that answered last (asked first next
     * time) and the master the last connection went to ("host:port");
     * the cluster's nodes, its map (slot -> node index + 1, 0: unknown)
     * and whether and when to read it again */
    apr_thread_mutex_t *lock;
    int sentinel_first;
    char master[300];
    apr_uint16_t *map;
    int map_ready, refresh, refreshing, node_first;
    apr_time_t refreshed;
    apr_uint64_t moved, asked;   /* redirections followed */
    char append_sha[41];     /* SHA-1 of append_lua, hex: for EVALSHA */
    char replace_sha[41];    /* of replace_lua */
} redis_impl_t;

static apr_status_t slot_make(void **res, void *params, apr_pool_t *p)
{
    slot_t *s = calloc(1, sizeof(slot_t));

    if (!s) {
        return APR_ENOMEM;
    }
    s->node = params;
    *res = s;
    return APR_SUCCESS;
}

static void drop(slot_t *s)
{
    if (!s) {
        return;
    }
    rsp_conn_close(s->c);
    s->c = NULL;
    if (s->rd) {
        redisReaderFree(s->rd);
        s->rd = NULL;
    }
    s->out_len = 0;
    s->ncmd = 0;
}

static void slot_clear(slot_t *s)
{
    drop(s);
    free(s->out);
    s->out = NULL;
    s->out_cap = 0;
}

static apr_status_t slot_free(void *res, void *params, apr_pool_t *p)
{
    slot_clear(res);
    free(res);
    return APR_SUCCESS;
}

/* Bytes after those not yet sent: one whole command. */
static int append_raw(slot_t *s, const char *cmd, size_t len)
{
    if (s->out_len + len > s->out_cap) {
        size_t cap = (s->out_len + len) * 2;
        char *grown = realloc(s->out, cap);
        if (!grown) {
            s->errstr = "out of memory";
            return REDIS_ERR;
        }
        s->out = grown;
        s->out_cap = cap;
    }
    memcpy(s->out + s->out_len, cmd, len);
    s->out_len += len;
    if (s->ncmd < MAX_PIPE) {
        s->cmd_end[s->ncmd] = s->out_len;
    }
    s->ncmd++;
    return REDIS_OK;
}

/* Format one command after those not yet sent. */
static int vappend(slot_t *s, const char *fmt, va_list ap)
{
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap), rc;

    if (len < 0 || !cmd) {
        s->errstr = "cannot format";
        return REDIS_ERR;
    }
    rc = append_raw(s, cmd, (size_t)len);
    redisFreeCommand(cmd);
    return rc;
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

static const char *hostport(apr_pool_t *p, const char *host, int port)
{
    return apr_psprintf(p, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

static apr_status_t node_init(rsp_store_t *st, node_t *n, apr_pool_t *p)
{
    apr_status_t rv;
    redis_impl_t *impl = st->impl;

    rv = apr_reslist_create(&n->slots, 0, impl->max_conns, impl->max_conns, 0,
                            slot_make, slot_free, n, p);
    if (rv == APR_SUCCESS) {
        /* Waiting for a free connection is bounded like everything else. */
        apr_reslist_timeout_set(n->slots, st->timeout);
    }
    return rv;
}

/* The cluster node at host:port, added when new (its list from a pool of
 * its own, so that lists never share one); NULL when the child knows too
 * many. Under impl->lock. */
static node_t *node_get_locked(rsp_store_t *st, const char *host, int port)
{
    redis_impl_t *impl = st->impl;
    node_t *n;
    apr_pool_t *np;
    int i;

    for (i = 0; i < impl->nnodes; i++) {
        n = &impl->nodes[i];
        if (n->port == port && !strcasecmp(n->host, host)) {
            return n;
        }
    }
    if (impl->nnodes >= MAX_NODES
        || apr_pool_create(&np, impl->npool) != APR_SUCCESS) {
        return NULL;
    }
    n = &impl->nodes[impl->nnodes];
    n->host = apr_pstrdup(np, host);
    n->port = port;
    apr_cpystrn(n->name, hostport(np, host, port), sizeof(n->name));
    if (node_init(st, n, np) != APR_SUCCESS) {
        apr_pool_destroy(np);
        return NULL;
    }
    impl->nnodes++;
    return n;
}

static node_t *node_get(rsp_store_t *st, const char *host, int port)
{
    redis_impl_t *impl = st->impl;
    node_t *n;

    apr_thread_mutex_lock(impl->lock);
    n = node_get_locked(st, host, port);
    apr_thread_mutex_unlock(impl->lock);
    return n;
}

static apr_status_t redis_child_init(rsp_store_t *st, apr_pool_t *pchild,
                                     int max_conns)
{
    redis_impl_t *impl = apr_pcalloc(pchild, sizeof(*impl));
    apr_status_t rv;
    int i;

    impl->max_conns = max_conns < 1 ? 1 : max_conns;
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
    if ((st->url->sentinels || st->url->cluster)
        && (rv = apr_thread_mutex_create(&impl->lock, APR_THREAD_MUTEX_DEFAULT,
                                         pchild)) != APR_SUCCESS) {
        return rv;
    }
    sha1_hex(impl->append_sha, append_lua);
    sha1_hex(impl->replace_sha, replace_lua);
    if (!st->url->cluster) {
        impl->nnodes = 1;
        apr_cpystrn(impl->nodes[0].name, st->url->display,
                    sizeof(impl->nodes[0].name));
        return node_init(st, &impl->nodes[0], pchild);
    }
    /* Nodes are met while requests run: their pools come from an allocator
     * with a mutex of its own. */
    {
        apr_allocator_t *a;
        apr_thread_mutex_t *m;
        if ((rv = apr_allocator_create(&a)) != APR_SUCCESS) {
            return rv;
        }
        if ((rv = apr_pool_create_ex(&impl->npool, pchild, NULL, a))
            != APR_SUCCESS) {
            apr_allocator_destroy(a);
            return rv;
        }
        apr_allocator_owner_set(a, impl->npool);
        if ((rv = apr_thread_mutex_create(&m, APR_THREAD_MUTEX_DEFAULT,
                                          impl->npool)) != APR_SUCCESS) {
            return rv;
        }
        apr_allocator_mutex_set(a, m);
    }
    impl->map = apr_pcalloc(pchild, CLUSTER_SLOTS * sizeof(*impl->map));
    for (i = 0; i < st->url->cluster->nelts; i++) {
        const rsp_server_t *sv = &APR_ARRAY_IDX(st->url->cluster, i,
                                                rsp_server_t);
        if (!node_get(st, sv->host, sv->port)) {
            return APR_ENOMEM;
        }
    }
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

/* transfer() by the deadline. On a transport error or a timeout *err says
 * which (naming the store, and the node of a cluster) and the connection
 * is dropped, since its state is unknown. */
static apr_status_t exchange_once(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                                  int n, redisReply **out, apr_time_t deadline,
                                  const char **err)
{
    const char *why = NULL;
    const char *where = st->url->cluster
        ? apr_pstrcat(p, st->url->display, " (node ", s->node->name, ")", NULL)
        : st->url->display;
    apr_status_t rv;

    s->ncmd = 0;
    rv = transfer(s, p, n, out, deadline, &why);
    if (rv == APR_SUCCESS) {
        return APR_SUCCESS;
    }
    *err = rv == APR_TIMEUP
        ? apr_psprintf(p, "%s: no complete reply within %" APR_TIME_T_FMT
                       " ms (timeout)", where, apr_time_as_msec(st->timeout))
        : rv == APR_EOF
        ? apr_psprintf(p, "%s: connection closed by the server", where)
        : apr_psprintf(p, "%s: %s", where, why);
    drop(s);
    return APR_EGENERAL;
}

static apr_status_t acquire_at(rsp_store_t *st, apr_pool_t *p, node_t *n,
                               slot_t **out, apr_time_t deadline,
                               const char **err);
static void release(rsp_store_t *st, slot_t *s);

/* Cluster: have the map read again (soon, see REFRESH_GAP). */
static void want_map(rsp_store_t *st)
{
    redis_impl_t *impl = st->impl;

    if (st->url->cluster) {
        apr_thread_mutex_lock(impl->lock);
        impl->refresh = 1;
        apr_thread_mutex_unlock(impl->lock);
    }
}

typedef enum { NOT_REDIRECTED = 0, MOVED, ASK } redirect_t;

/* "MOVED 3999 127.0.0.1:6381" / "ASK 3999 :6381" (an empty host: the
 * node that answered). */
static redirect_t redirection(const redisReply *r, apr_pool_t *p,
                              const node_t *from, int *slot,
                              const char **host, int *port)
{
    redirect_t kind;
    const char *a, *colon;
    char *end;
    long v;

    if (r->type != REDIS_REPLY_ERROR) {
        return NOT_REDIRECTED;
    }
    if (!strncmp(r->str, "MOVED ", 6)) {
        kind = MOVED;
        a = r->str + 6;
    }
    else if (!strncmp(r->str, "ASK ", 4)) {
        kind = ASK;
        a = r->str + 4;
    }
    else {
        return NOT_REDIRECTED;
    }
    v = strtol(a, &end, 10);
    if (end == a || *end != ' ' || v < 0 || v >= CLUSTER_SLOTS) {
        return NOT_REDIRECTED;
    }
    *slot = (int)v;
    a = end + 1;
    colon = strrchr(a, ':');
    if (!colon) {
        return NOT_REDIRECTED;
    }
    v = strtol(colon + 1, &end, 10);
    if (*end != '\0' || v < 1 || v > 65535) {
        return NOT_REDIRECTED;
    }
    *port = (int)v;
    *host = colon > a ? apr_pstrmemdup(p, a, (apr_size_t)(colon - a))
                      : from->host;
    return kind;
}

/* The commands appended to *sp and their n replies, by the deadline. In a
 * cluster the commands are about one key (and WAIT): when the first is
 * redirected none of them ran, and they are sent again where the cluster
 * says, *sp then being a connection to that node (NULL when none could be
 * had: *err says why). */
static apr_status_t exchange(rsp_store_t *st, slot_t **sp, apr_pool_t *p,
                             int n, redisReply **out, apr_time_t deadline,
                             const char **err)
{
    redis_impl_t *impl = st->impl;
    slot_t *s = *sp;
    redirect_t kind = NOT_REDIRECTED;
    size_t ends[MAX_PIPE];
    char *saved;
    int ncmd, hop, i;
    apr_status_t rv;

    if (!st->url->cluster) {
        return exchange_once(st, s, p, n, out, deadline, err);
    }
    ncmd = s->ncmd;
    if (ncmd != n || n > MAX_PIPE) {
        *err = apr_psprintf(p, "%s: %d commands in one exchange",
                            st->url->display, ncmd);
        drop(s);
        return APR_EGENERAL;
    }
    saved = apr_pmemdup(p, s->out, s->out_len);
    memcpy(ends, s->cmd_end, sizeof(size_t) * (size_t)n);
    for (hop = 0;; hop++) {
        redisReply *r[2 * MAX_PIPE];
        int slot = 0, port = 0, bad = 0;
        const char *host = NULL;
        node_t *target;

        rv = exchange_once(st, s, p, kind == ASK ? 2 * n : n,
                           kind == ASK ? r : out, deadline, err);
        if (rv != APR_SUCCESS) {
            want_map(st); /* the node may have failed over */
            return rv;
        }
        if (kind == ASK) {
            for (i = 0; i < n; i++) {
                bad |= !(r[2 * i]->type == REDIS_REPLY_STATUS
                         && !strcmp(r[2 * i]->str, "OK"));
                freeReplyObject(r[2 * i]);
                out[i] = r[2 * i + 1];
            }
            if (bad) {
                for (i = 0; i < n; i++) {
                    freeReplyObject(out[i]);
                }
                *err = apr_psprintf(p, "%s (node %s): ASKING refused",
                                    st->url->display, s->node->name);
                drop(s);
                return APR_EGENERAL;
            }
        }
        if (out[0]->type == REDIS_REPLY_ERROR
            && !strncmp(out[0]->str, "CLUSTERDOWN", 11)) {
            want_map(st);
        }
        kind = redirection(out[0], p, s->node, &slot, &host, &port);
        if (kind == NOT_REDIRECTED) {
            return APR_SUCCESS;
        }
        for (i = 0; i < n; i++) {
            freeReplyObject(out[i]);
        }
        if (hop + 1 >= MAX_HOPS) {
            *err = apr_psprintf(p, "%s: redirected %d times for slot %d "
                                "(the cluster is being changed?)",
                                st->url->display, MAX_HOPS, slot);
            return APR_EGENERAL;
        }
        apr_thread_mutex_lock(impl->lock);
        target = node_get_locked(st, host, port);
        if (target && kind == MOVED) {
            impl->map[slot] = (apr_uint16_t)(target - impl->nodes + 1);
            impl->refresh = 1;
            impl->moved++;
        }
        else if (target) {
            impl->asked++;
        }
        apr_thread_mutex_unlock(impl->lock);
        if (!target) {
            *err = apr_psprintf(p, "%s: redirected to a %dth node: too many "
                                "nodes", st->url->display, MAX_NODES + 1);
            return APR_EGENERAL;
        }
        rsp_log(RSP_LOG_DEBUG, "store %s: slot %d: %s %s", st->url->display,
                slot, kind == MOVED ? "MOVED to" : "ASK at", target->name);
        release(st, s);
        *sp = NULL;
        if ((rv = acquire_at(st, p, target, &s, deadline, err))
            != APR_SUCCESS) {
            return rv;
        }
        *sp = s;
        for (i = 0; i < n; i++) {
            size_t from = i ? ends[i - 1] : 0;
            if ((kind == ASK
                 && append_raw(s, "*1\r\n$6\r\nASKING\r\n", 16) != REDIS_OK)
                || append_raw(s, saved + from, ends[i] - from) != REDIS_OK) {
                *err = apr_psprintf(p, "%s: %s", st->url->display, s->errstr);
                drop(s);
                return APR_EGENERAL;
            }
        }
    }
}

/* Send one command and read its whole reply by the deadline. NULL on a
 * transport error or a timeout (see exchange). */
static redisReply *vcommand(rsp_store_t *st, slot_t **sp, apr_pool_t *p,
                            apr_time_t deadline, const char **err,
                            const char *fmt, va_list ap)
{
    redisReply *reply = NULL;

    if (vappend(*sp, fmt, ap) != REDIS_OK) {
        *err = apr_psprintf(p, "%s: %s", st->url->display, (*sp)->errstr);
        drop(*sp);
        return NULL;
    }
    return exchange(st, sp, p, 1, &reply, deadline, err) == APR_SUCCESS
        ? reply : NULL;
}

static redisReply *command_until(rsp_store_t *st, slot_t **sp, apr_pool_t *p,
                                 apr_time_t deadline, const char **err,
                                 const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = vcommand(st, sp, p, deadline, err, fmt, ap);
    va_end(ap);
    return r;
}

/* Within st->timeout from now. */
static redisReply *command(rsp_store_t *st, slot_t **sp, apr_pool_t *p,
                           const char **err, const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = vcommand(st, sp, p, apr_time_now() + st->timeout, err, fmt, ap);
    va_end(ap);
    return r;
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
    slot_clear(&t);
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
                                   const char *where, apr_time_t deadline,
                                   const char **err)
{
    redisReply *r = command_until(st, &s, p, deadline, err, "ROLE");

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

/* A fresh connection to s's node, set up, by the deadline. */
static apr_status_t connect_slot(rsp_store_t *st, slot_t *s, apr_pool_t *p,
                                 apr_time_t deadline, const char **err)
{
    const rsp_store_url_t *u = st->url;
    redis_impl_t *impl = st->impl;
    rsp_peer_t peer;
    const char *why = NULL, *where = NULL;
    apr_status_t rv;

    memset(&peer, 0, sizeof(peer));
    if (u->kind == RSP_STORE_REDIS_UNIX) {
        peer.path = u->path;
    }
    else {
        peer.host = s->node->host ? s->node->host : u->host;
        peer.port = s->node->host ? s->node->port : u->port;
        peer.tls = u->tls ? st->tls : NULL;
        peer.cache = impl->tls_cache;
    }
    if (u->sentinels) {
        /* Asked again at every connection (the Sentinel client rules). */
        if ((rv = resolve_master(st, p, deadline, &peer.host, &peer.port, err))
            != APR_SUCCESS) {
            return rv;
        }
        where = hostport(p, peer.host, peer.port);
    }
    else if (u->cluster) {
        where = s->node->name;
    }
    rv = rsp_conn_open(&s->c, p, &peer, deadline, &why);
    if (rv != APR_SUCCESS) {
        s->c = NULL;
        *err = where ? apr_psprintf(p, "%s: %s at %s: %s", u->display,
                                    u->cluster ? "the node" : "the master",
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
            ? command_until(st, &s, p, deadline, err, "AUTH %s %s", u->user,
                            u->password)
            : command_until(st, &s, p, deadline, err, "AUTH %s", u->password);
        if ((rv = setup_cmd(s, p, err, "AUTH", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (u->db) {
        redisReply *r = command_until(st, &s, p, deadline, err, "SELECT %d",
                                      u->db);
        if ((rv = setup_cmd(s, p, err, "SELECT", r)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (u->sentinels) {
        if ((rv = confirm_master(st, s, p, where, deadline, err))
            != APR_SUCCESS) {
            return rv;
        }
        apr_thread_mutex_lock(impl->lock);
        apr_cpystrn(impl->master, where, sizeof(impl->master));
        apr_thread_mutex_unlock(impl->lock);
    }
    return APR_SUCCESS;
}

/* A connection to node n, connected (by the deadline) if need be. */
static apr_status_t acquire_at(rsp_store_t *st, apr_pool_t *p, node_t *n,
                               slot_t **out, apr_time_t deadline,
                               const char **err)
{
    void *res;
    apr_status_t rv;

    rv = apr_reslist_acquire(n->slots, &res);
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
    (*out)->ncmd = 0;
    if (!(*out)->c
        && (rv = connect_slot(st, *out, p, deadline, err)) != APR_SUCCESS) {
        apr_reslist_release(n->slots, res);
        if (st->url->cluster) {
            want_map(st); /* the node may be gone */
        }
        return rv;
    }
    return APR_SUCCESS;
}

/* CRC16-CCITT (XMODEM), the cluster's key hash. */
static unsigned crc16(const char *buf, apr_size_t len)
{
    unsigned crc = 0;
    apr_size_t i;
    int b;

    for (i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)buf[i] << 8;
        for (b = 0; b < 8; b++) {
            crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
        }
        crc &= 0xffff;
    }
    return crc;
}

int rsp_redis_key_slot(const char *key, apr_size_t len)
{
    const char *open = memchr(key, '{', len), *close;

    /* A hash tag: the part between the first '{' and the next '}', when
     * not empty. */
    if (open) {
        close = memchr(open + 1, '}', len - (apr_size_t)(open + 1 - key));
        if (close && close > open + 1) {
            return (int)(crc16(open + 1, (apr_size_t)(close - open - 1))
                         % CLUSTER_SLOTS);
        }
    }
    return (int)(crc16(key, len) % CLUSTER_SLOTS);
}

static const redisReply *field(const redisReply *r, const char *name)
{
    size_t i;

    if (r->type != REDIS_REPLY_ARRAY) {
        return NULL;
    }
    for (i = 0; i + 1 < r->elements; i += 2) {
        if (r->element[i]->type == REDIS_REPLY_STRING
            && !strcmp(r->element[i]->str, name)) {
            return r->element[i + 1];
        }
    }
    return NULL;
}

static int field_is(const redisReply *r, const char *name, const char *want)
{
    const redisReply *f = field(r, name);

    return f && f->type == REDIS_REPLY_STRING && !strcmp(f->str, want);
}

/* CLUSTER SHARDS into map (slot -> node index + 1): every shard's master
 * (an online one first), at its endpoint (or ip), its TLS port with TLS. */
static apr_status_t parse_shards(rsp_store_t *st, apr_pool_t *p,
                                 const redisReply *r, apr_uint16_t *map,
                                 const char **why)
{
    redis_impl_t *impl = st->impl;
    size_t i, j;
    int covered = 0;

    if (r->type != REDIS_REPLY_ARRAY) {
        *why = r->type == REDIS_REPLY_ERROR ? apr_pstrdup(p, r->str)
                                            : "an unexpected reply";
        return APR_EGENERAL;
    }
    for (i = 0; i < r->elements; i++) {
        const redisReply *sh = r->element[i], *slots = field(sh, "slots");
        const redisReply *nodes = field(sh, "nodes"), *m = NULL, *f;
        const char *host;
        node_t *n;
        int port = 0;

        if (!slots || slots->type != REDIS_REPLY_ARRAY || !nodes
            || nodes->type != REDIS_REPLY_ARRAY) {
            *why = "a malformed shard";
            return APR_EGENERAL;
        }
        if (slots->elements == 0) {
            continue; /* no slots: nothing to route there */
        }
        for (j = 0; j < nodes->elements; j++) {
            const redisReply *nd = nodes->element[j];
            if (field_is(nd, "role", "master")
                && (!m || field_is(nd, "health", "online"))) {
                m = nd;
            }
        }
        if (!m) {
            continue; /* its slots stay unknown: their keys fail */
        }
        f = field(m, "endpoint");
        if (!f || f->type != REDIS_REPLY_STRING || !f->len
            || !strcmp(f->str, "?")) {
            f = field(m, "ip");
        }
        if (!f || f->type != REDIS_REPLY_STRING || !f->len) {
            *why = "a master without an address";
            return APR_EGENERAL;
        }
        host = f->str;
        f = st->url->tls ? field(m, "tls-port") : NULL;
        if (!f) {
            f = field(m, "port");
        }
        if (f && f->type == REDIS_REPLY_INTEGER && f->integer > 0
            && f->integer < 65536) {
            port = (int)f->integer;
        }
        if (!port) {
            *why = "a master without a port";
            return APR_EGENERAL;
        }
        if (!(n = node_get(st, host, port))) {
            *why = "too many nodes";
            return APR_EGENERAL;
        }
        for (j = 0; j + 1 < slots->elements; j += 2) {
            long long lo = slots->element[j]->integer;
            long long hi = slots->element[j + 1]->integer, k;
            if (slots->element[j]->type != REDIS_REPLY_INTEGER
                || slots->element[j + 1]->type != REDIS_REPLY_INTEGER
                || lo < 0 || hi < lo || hi >= CLUSTER_SLOTS) {
                *why = "a malformed slot range";
                return APR_EGENERAL;
            }
            for (k = lo; k <= hi; k++) {
                map[k] = (apr_uint16_t)(n - impl->nodes + 1);
                covered++;
            }
        }
    }
    if (!covered) {
        *why = "no slot is served (is the cluster set up?)";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Read the cluster's map from its nodes in turn (the one that answered
 * last first), each within its share of the time left to the deadline. */
static apr_status_t refresh_map(rsp_store_t *st, apr_pool_t *p,
                                apr_time_t deadline, const char **err)
{
    redis_impl_t *impl = st->impl;
    apr_uint16_t *map = apr_pcalloc(p, CLUSTER_SLOTS * sizeof(*map));
    const char *failures = "";
    int n, first, i;

    apr_thread_mutex_lock(impl->lock);
    n = impl->nnodes;
    first = impl->node_first;
    apr_thread_mutex_unlock(impl->lock);
    for (i = 0; i < n; i++) {
        int k = (first + i) % n;
        node_t *nd = &impl->nodes[k];
        apr_time_t now = apr_time_now(), until;
        const char *why = NULL;
        redisReply *r;
        slot_t *s;

        if (now >= deadline) {
            failures = apr_psprintf(p, "%s%s%s: not asked (timeout)", failures,
                                    *failures ? "; " : "", nd->name);
            continue;
        }
        until = now + (deadline - now) / (n - i);
        if (acquire_at(st, p, nd, &s, until, &why) != APR_SUCCESS) {
            failures = apr_psprintf(p, "%s%s%s", failures,
                                    *failures ? "; " : "", why);
            continue;
        }
        r = command_until(st, &s, p, until, &why, "CLUSTER SHARDS");
        if (r && parse_shards(st, p, r, map, &why) == APR_SUCCESS) {
            freeReplyObject(r);
            release(st, s);
            apr_thread_mutex_lock(impl->lock);
            memcpy(impl->map, map, CLUSTER_SLOTS * sizeof(*map));
            impl->map_ready = 1;
            impl->refresh = 0;
            impl->refreshed = apr_time_now();
            impl->node_first = k;
            apr_thread_mutex_unlock(impl->lock);
            rsp_log(RSP_LOG_DEBUG, "store %s: cluster map read from %s",
                    st->url->display, nd->name);
            return APR_SUCCESS;
        }
        if (r) {
            freeReplyObject(r);
            failures = apr_psprintf(p, "%s%s%s: CLUSTER SHARDS: %s", failures,
                                    *failures ? "; " : "", nd->name, why);
        }
        else {
            failures = apr_psprintf(p, "%s%s%s", failures,
                                    *failures ? "; " : "", why);
        }
        release(st, s);
    }
    *err = apr_psprintf(p, "%s: no node gave the cluster's map (%s)",
                        st->url->display, failures);
    return APR_ECONNREFUSED;
}

/* The cluster's map, read first when there is none yet or it is due
 * again (one thread at a time then; the others use the one they have).
 * Fails only when there is no map. */
static apr_status_t ensure_map(rsp_store_t *st, apr_pool_t *p,
                               apr_time_t deadline, const char **err)
{
    redis_impl_t *impl = st->impl;
    int ready, due;
    apr_status_t rv;

    apr_thread_mutex_lock(impl->lock);
    ready = impl->map_ready;
    due = !ready || (impl->refresh && !impl->refreshing
                     && apr_time_now() - impl->refreshed >= REFRESH_GAP);
    if (due && ready) {
        impl->refreshing = 1;
    }
    apr_thread_mutex_unlock(impl->lock);
    if (!due) {
        return APR_SUCCESS;
    }
    rv = refresh_map(st, p, deadline, err);
    if (!ready) {
        return rv;
    }
    apr_thread_mutex_lock(impl->lock);
    impl->refreshing = 0;
    impl->refreshed = apr_time_now(); /* tried: not again at once */
    apr_thread_mutex_unlock(impl->lock);
    return APR_SUCCESS;
}

/* The master of key's slot. */
static apr_status_t node_for_key(rsp_store_t *st, apr_pool_t *p,
                                 const char *key, apr_time_t deadline,
                                 node_t **out, const char **err)
{
    redis_impl_t *impl = st->impl;
    int slot = rsp_redis_key_slot(key, strlen(key)), idx;
    apr_status_t rv;

    if ((rv = ensure_map(st, p, deadline, err)) != APR_SUCCESS) {
        return rv;
    }
    apr_thread_mutex_lock(impl->lock);
    idx = impl->map[slot];
    apr_thread_mutex_unlock(impl->lock);
    if (!idx) {
        want_map(st);
        *err = apr_psprintf(p, "%s: no master serves slot %d (a shard "
                            "without a master: the cluster is down there)",
                            st->url->display, slot);
        return APR_EGENERAL;
    }
    *out = &impl->nodes[idx - 1];
    return APR_SUCCESS;
}

/* A connection to the server that holds key. In a cluster, when the
 * master the map names cannot be reached (nothing was sent to it), the
 * map is read again at once (unless it was within REFRESH_GAP) and, when
 * it names another master for the slot, that one is tried, within the
 * same deadline: a process that has not yet heard of a failover does not
 * fail its first request after it. */
static apr_status_t acquire(rsp_store_t *st, apr_pool_t *p, const char *key,
                            slot_t **out, const char **err)
{
    redis_impl_t *impl = st->impl;
    apr_time_t deadline = apr_time_now() + st->timeout;
    const char *why = NULL;
    node_t *n, *other;
    apr_status_t rv;

    if (!impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    if (!st->url->cluster) {
        return acquire_at(st, p, &impl->nodes[0], out, deadline, err);
    }
    if ((rv = node_for_key(st, p, key, deadline, &n, err)) != APR_SUCCESS
        || (rv = acquire_at(st, p, n, out, deadline, err)) == APR_SUCCESS
        || apr_time_now() >= deadline
        || node_for_key(st, p, key, deadline, &other, &why) != APR_SUCCESS
        || other == n) {
        return rv;
    }
    rsp_log(RSP_LOG_DEBUG, "store %s: %s (%s); the map read again names %s",
            st->url->display, n->name, *err, other->name);
    return acquire_at(st, p, other, out, deadline, err);
}

static void release(rsp_store_t *st, slot_t *s)
{
    if (s) {
        apr_reslist_release(s->node->slots, s);
    }
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
    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
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
    r = command(st, &s, p, err, "SET %s %s NX PX %lld", key, value,
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

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "GET %s", key);
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

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "PTTL %s", key);
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
    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "SET %s %b PX %lld", key, value, len,
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

    if ((rv = acquire(st, p, key, &s, err)) != APR_SUCCESS) {
        return rv;
    }
    r = command(st, &s, p, err, "EVAL %s 1 %s %s", del_if_equal_lua, key, value);
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

/* SET NX PX (the verdict) and GET of the claim key: pipelined, one round
 * trip. */
static apr_status_t redis_claim_read(rsp_store_t *st, apr_pool_t *p,
                                     rsp_claim_read_t *c, const char **err)
{
    redisReply *r[3];
    slot_t *s;
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
    if (append_cmd(s, "SET %s %s NX PX %lld", c->key, c->value,
                           (long long)c->ttl_ms) != REDIS_OK
        || append_wait(st, s) != REDIS_OK
        || append_cmd(s, "GET %s", c->key) != REDIS_OK) {
        *err = apr_psprintf(p, "%s: cannot format the claim", st->url->display);
        drop(s);
        release(st, s);
        return APR_EGENERAL;
    }
    if ((rv = exchange(st, &s, p, n, r, apr_time_now() + st->timeout, err)) != APR_SUCCESS) {
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
    if ((rv = acquire(st, p, w[0].key, &s, err)) != APR_SUCCESS) {
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
    if ((rv = exchange(st, &s, p, n + acked, r, apr_time_now() + st->timeout, err)) != APR_SUCCESS) {
        release(st, s);
        return rv;
    }
    for (i = 0; i < n; i++) {
        redisReply *x = r[i], *again = NULL;
        if (w[i].kind != RSP_WRITE_PUT && is_noscript(x) && s->c) {
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
    release(st, s);
    return rv;
}

static apr_status_t redis_write_many(rsp_store_t *st, apr_pool_t *p,
                                     rsp_write_t *w, int n, const char **err)
{
    apr_status_t rv = APR_SUCCESS;
    int i;

    if (!st->url->cluster || n == 1) {
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

/* INFO [section] on node n (or the server), by the deadline. */
static apr_status_t info_at(rsp_store_t *st, apr_pool_t *p, node_t *n,
                            const char *section, const char **text,
                            const char **err)
{
    slot_t *s;
    redisReply *r;
    apr_status_t rv;

    if ((rv = acquire_at(st, p, n, &s, apr_time_now() + st->timeout, err))
        != APR_SUCCESS) {
        return rv;
    }
    r = section ? command(st, &s, p, err, "INFO %s", section)
                : command(st, &s, p, err, "INFO");
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

/* Cluster: every master of the map, each as a block (see rsp_store.h),
 * named by its first slot range, which a failover keeps (a resharding
 * that moves it names the shard anew). */
static apr_status_t cluster_info(rsp_store_t *st, apr_pool_t *p,
                                 const char *section, const char **text,
                                 const char **err)
{
    redis_impl_t *impl = st->impl;
    apr_uint16_t *map = apr_palloc(p, CLUSTER_SLOTS * sizeof(*map));
    int first[MAX_NODES], last[MAX_NODES], k, answered = 0, have_map;
    const char *out = "";
    apr_status_t rv;

    /* The map read afresh (the monitor polls seldom): every process
     * names the shards alike, whatever its requests have met. */
    rv = refresh_map(st, p, apr_time_now() + st->timeout, err);
    apr_thread_mutex_lock(impl->lock);
    have_map = impl->map_ready;   /* else the map the requests have, if any */
    memcpy(map, impl->map, CLUSTER_SLOTS * sizeof(*map));
    apr_thread_mutex_unlock(impl->lock);
    if (rv != APR_SUCCESS && !have_map) {
        return rv;
    }
    for (k = 0; k < MAX_NODES; k++) {
        first[k] = last[k] = -1;
    }
    for (k = 0; k < CLUSTER_SLOTS; k++) {
        int i = map[k] - 1;
        if (i < 0) {
            continue;
        }
        if (first[i] < 0) {
            first[i] = last[i] = k;
        }
        else if (last[i] == k - 1) {
            last[i] = k; /* the first range goes on */
        }
    }
    for (k = 0; k < MAX_NODES; k++) {
        const char *t = NULL, *e = NULL;
        if (first[k] < 0) {
            continue;
        }
        out = apr_psprintf(p, "%s# rsp-node %s slots %d-%d %s\r\n", out,
                           st->url->display, first[k], last[k],
                           impl->nodes[k].name);
        if (info_at(st, p, &impl->nodes[k], section, &t, &e) == APR_SUCCESS) {
            out = apr_pstrcat(p, out, t, "\r\n", NULL);
            answered++;
        }
        else {
            out = apr_pstrcat(p, out, "error ", e, "\r\n", NULL);
            *err = e;
        }
    }
    if (!answered) {
        return APR_EGENERAL;
    }
    *text = out;
    return APR_SUCCESS;
}

static apr_status_t redis_info(rsp_store_t *st, apr_pool_t *p,
                               const char *section, const char **text,
                               const char **err)
{
    redis_impl_t *impl = st->impl;

    if (!impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    return st->url->cluster ? cluster_info(st, p, section, text, err)
                            : info_at(st, p, &impl->nodes[0], section, text,
                                      err);
}

void rsp_store_redirections(rsp_store_t *st, apr_uint64_t *moved,
                            apr_uint64_t *asked)
{
    redis_impl_t *impl = st->impl;

    *moved = *asked = 0;
    if (st->ops == &rsp_store_redis_ops && st->url->cluster && impl) {
        apr_thread_mutex_lock(impl->lock);
        *moved = impl->moved;
        *asked = impl->asked;
        apr_thread_mutex_unlock(impl->lock);
    }
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
