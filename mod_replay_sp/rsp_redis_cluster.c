/* Redis topology: Redis Cluster. Every command is about one key and goes
 * to the master of that key's slot (CRC16 mod 16384), from a map read
 * with CLUSTER SHARDS; MOVED updates the map (and has it read again), ASK
 * sends the commands once to the node named, each after ASKING. A
 * redirected command was not executed, so sending it again is safe. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include "rsp_log.h"
#include "rsp_redis.h"

#define CLUSTER_SLOTS 16384
#define MAX_NODES 64           /* cluster nodes one child knows */
#define MAX_HOPS 5             /* redirections followed for one exchange */
#define REFRESH_GAP APR_USEC_PER_SEC / 10   /* map read at most this often
                                             * after a MOVED or an error */

typedef struct {
    rsp_redis_node_t nodes[MAX_NODES]; /* every node met, never removed */
    int nnodes;
    apr_pool_t *npool;       /* the nodes' pools come from here */
    /* under lock: the nodes, the map (slot -> node index + 1, 0:
     * unknown), whether and when to read it again, the node that gave it
     * last (asked first next time) */
    apr_thread_mutex_t *lock;
    apr_uint16_t *map;
    int map_ready, refresh, refreshing, node_first;
    apr_time_t refreshed;
    apr_uint64_t moved, asked;   /* redirections followed */
} cluster_t;

static cluster_t *state(rsp_store_t *st)
{
    return ((rsp_redis_t *)st->impl)->topo_state;
}

/* The node at host:port, added when new (its pool of connections from a
 * pool of its own); NULL when the child knows too many. Under lock. */
static rsp_redis_node_t *node_get_locked(rsp_store_t *st, const char *host,
                                         int port)
{
    cluster_t *cl = state(st);
    rsp_redis_node_t *n;
    apr_pool_t *np;
    int i;

    for (i = 0; i < cl->nnodes; i++) {
        n = &cl->nodes[i];
        if (n->port == port && !strcasecmp(n->host, host)) {
            return n;
        }
    }
    if (cl->nnodes >= MAX_NODES
        || apr_pool_create(&np, cl->npool) != APR_SUCCESS) {
        return NULL;
    }
    n = &cl->nodes[cl->nnodes];
    n->host = apr_pstrdup(np, host);
    n->port = port;
    apr_cpystrn(n->name, rsp_redis_hostport(np, host, port), sizeof(n->name));
    if (rsp_redis_node_init(st, n, np) != APR_SUCCESS) {
        apr_pool_destroy(np);
        return NULL;
    }
    cl->nnodes++;
    return n;
}

static rsp_redis_node_t *node_get(rsp_store_t *st, const char *host, int port)
{
    cluster_t *cl = state(st);
    rsp_redis_node_t *n;

    apr_thread_mutex_lock(cl->lock);
    n = node_get_locked(st, host, port);
    apr_thread_mutex_unlock(cl->lock);
    return n;
}

static apr_status_t cluster_init(rsp_store_t *st, apr_pool_t *pchild)
{
    rsp_redis_t *impl = st->impl;
    cluster_t *cl = apr_pcalloc(pchild, sizeof(*cl));
    apr_allocator_t *a;
    apr_thread_mutex_t *m;
    apr_status_t rv;
    int i;

    impl->topo_state = cl;
    if ((rv = apr_thread_mutex_create(&cl->lock, APR_THREAD_MUTEX_DEFAULT,
                                      pchild)) != APR_SUCCESS) {
        return rv;
    }
    /* Nodes are met while requests run: their pools come from an allocator
     * with a mutex of its own. */
    if ((rv = apr_allocator_create(&a)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = apr_pool_create_ex(&cl->npool, pchild, NULL, a))
        != APR_SUCCESS) {
        apr_allocator_destroy(a);
        return rv;
    }
    apr_allocator_owner_set(a, cl->npool);
    if ((rv = apr_thread_mutex_create(&m, APR_THREAD_MUTEX_DEFAULT,
                                      cl->npool)) != APR_SUCCESS) {
        return rv;
    }
    apr_allocator_mutex_set(a, m);
    cl->map = apr_pcalloc(pchild, CLUSTER_SLOTS * sizeof(*cl->map));
    for (i = 0; i < st->url->cluster->nelts; i++) {
        const rsp_server_t *sv = &APR_ARRAY_IDX(st->url->cluster, i,
                                                rsp_server_t);
        if (!node_get(st, sv->host, sv->port)) {
            return APR_ENOMEM;
        }
    }
    return APR_SUCCESS;
}

static apr_status_t cluster_connect(rsp_store_t *st, rsp_redis_conn_t *c,
                                    apr_pool_t *p, apr_time_t deadline,
                                    const char **err)
{
    const rsp_redis_node_t *n = RSP_REDIS_NODE(c);
    rsp_peer_t peer;

    rsp_redis_peer(st, &peer, n->host, n->port);
    return rsp_redis_connect(st, c, p, &peer,
                             apr_pstrcat(p, "the node at ", n->name, NULL),
                             deadline, err);
}

/* Have the map read again (soon, see REFRESH_GAP). */
static void want_map(rsp_store_t *st)
{
    cluster_t *cl = state(st);

    apr_thread_mutex_lock(cl->lock);
    cl->refresh = 1;
    apr_thread_mutex_unlock(cl->lock);
}

/* A connection to node n; when none can be had, the node may be gone. */
static apr_status_t node_acquire(rsp_store_t *st, apr_pool_t *p,
                                 rsp_redis_node_t *n, apr_time_t deadline,
                                 rsp_redis_conn_t **out, const char **err)
{
    apr_status_t rv = rsp_redis_acquire_at(st, p, n, deadline, out, err);

    if (rv != APR_SUCCESS) {
        want_map(st);
    }
    return rv;
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

/* A shard's master (an online one first): its node, or NULL and *why
 * (*why NULL: the shard has no master). */
static rsp_redis_node_t *shard_master(rsp_store_t *st, const redisReply *nodes,
                                      const char **why)
{
    const redisReply *m = NULL, *f;
    int port = 0;
    size_t j;

    for (j = 0; j < nodes->elements; j++) {
        const redisReply *nd = nodes->element[j];
        if (field_is(nd, "role", "master")
            && (!m || field_is(nd, "health", "online"))) {
            m = nd;
        }
    }
    *why = NULL;
    if (!m) {
        return NULL;
    }
    f = field(m, "endpoint");
    if (!f || f->type != REDIS_REPLY_STRING || !f->len
        || !strcmp(f->str, "?")) {
        f = field(m, "ip");
    }
    if (!f || f->type != REDIS_REPLY_STRING || !f->len) {
        *why = "a master without an address";
        return NULL;
    }
    {
        const char *host = f->str;
        const redisReply *pf = st->url->tls ? field(m, "tls-port") : NULL;
        rsp_redis_node_t *n;
        if (!pf) {
            pf = field(m, "port");
        }
        if (pf && pf->type == REDIS_REPLY_INTEGER && pf->integer > 0
            && pf->integer < 65536) {
            port = (int)pf->integer;
        }
        if (!port) {
            *why = "a master without a port";
            return NULL;
        }
        if (!(n = node_get(st, host, port))) {
            *why = "too many nodes";
        }
        return n;
    }
}

/* CLUSTER SHARDS into map (slot -> node index + 1): every shard's master,
 * at its endpoint (or ip), its TLS port with TLS. */
static apr_status_t parse_shards(rsp_store_t *st, apr_pool_t *p,
                                 const redisReply *r, apr_uint16_t *map,
                                 const char **why)
{
    cluster_t *cl = state(st);
    size_t i, j;
    int covered = 0;

    if (r->type != REDIS_REPLY_ARRAY) {
        *why = r->type == REDIS_REPLY_ERROR ? apr_pstrdup(p, r->str)
                                            : "an unexpected reply";
        return APR_EGENERAL;
    }
    for (i = 0; i < r->elements; i++) {
        const redisReply *sh = r->element[i], *slots = field(sh, "slots");
        const redisReply *nodes = field(sh, "nodes");
        rsp_redis_node_t *n;

        if (!slots || slots->type != REDIS_REPLY_ARRAY || !nodes
            || nodes->type != REDIS_REPLY_ARRAY) {
            *why = "a malformed shard";
            return APR_EGENERAL;
        }
        if (slots->elements == 0) {
            continue; /* no slots: nothing to route there */
        }
        if (!(n = shard_master(st, nodes, why))) {
            if (*why) {
                return APR_EGENERAL;
            }
            continue; /* no master: its slots stay unknown, their keys fail */
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
                map[k] = (apr_uint16_t)(n - cl->nodes + 1);
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
    cluster_t *cl = state(st);
    apr_uint16_t *map = apr_pcalloc(p, CLUSTER_SLOTS * sizeof(*map));
    const char *failures = "";
    int n, first, i;

    apr_thread_mutex_lock(cl->lock);
    n = cl->nnodes;
    first = cl->node_first;
    apr_thread_mutex_unlock(cl->lock);
    for (i = 0; i < n; i++) {
        int k = (first + i) % n;
        rsp_redis_node_t *nd = &cl->nodes[k];
        apr_time_t now = apr_time_now(), until;
        const char *why = NULL;
        redisReply *r;
        rsp_redis_conn_t *c;

        if (now >= deadline) {
            failures = apr_psprintf(p, "%s%s%s: not asked (timeout)", failures,
                                    *failures ? "; " : "", nd->name);
            continue;
        }
        until = now + (deadline - now) / (n - i);
        if (node_acquire(st, p, nd, until, &c, &why) != APR_SUCCESS) {
            failures = apr_psprintf(p, "%s%s%s", failures,
                                    *failures ? "; " : "", why);
            continue;
        }
        r = rsp_redis_command_at(st, c, p, until, &why, "CLUSTER SHARDS");
        if (r && parse_shards(st, p, r, map, &why) == APR_SUCCESS) {
            freeReplyObject(r);
            rsp_redis_release(c);
            apr_thread_mutex_lock(cl->lock);
            memcpy(cl->map, map, CLUSTER_SLOTS * sizeof(*map));
            cl->map_ready = 1;
            cl->refresh = 0;
            cl->refreshed = apr_time_now();
            cl->node_first = k;
            apr_thread_mutex_unlock(cl->lock);
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
        rsp_redis_release(c);
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
    cluster_t *cl = state(st);
    int ready, due;
    apr_status_t rv;

    apr_thread_mutex_lock(cl->lock);
    ready = cl->map_ready;
    due = !ready || (cl->refresh && !cl->refreshing
                     && apr_time_now() - cl->refreshed >= REFRESH_GAP);
    if (due && ready) {
        cl->refreshing = 1;
    }
    apr_thread_mutex_unlock(cl->lock);
    if (!due) {
        return APR_SUCCESS;
    }
    rv = refresh_map(st, p, deadline, err);
    if (!ready) {
        return rv;
    }
    apr_thread_mutex_lock(cl->lock);
    cl->refreshing = 0;
    cl->refreshed = apr_time_now(); /* tried: not again at once */
    apr_thread_mutex_unlock(cl->lock);
    return APR_SUCCESS;
}

/* The master of key's slot. */
static apr_status_t node_for_key(rsp_store_t *st, apr_pool_t *p,
                                 const char *key, apr_time_t deadline,
                                 rsp_redis_node_t **out, const char **err)
{
    cluster_t *cl = state(st);
    int slot = rsp_redis_key_slot(key, strlen(key)), idx;
    apr_status_t rv;

    if ((rv = ensure_map(st, p, deadline, err)) != APR_SUCCESS) {
        return rv;
    }
    apr_thread_mutex_lock(cl->lock);
    idx = cl->map[slot];
    apr_thread_mutex_unlock(cl->lock);
    if (!idx) {
        want_map(st);
        *err = apr_psprintf(p, "%s: no master serves slot %d (a shard "
                            "without a master: the cluster is down there)",
                            st->url->display, slot);
        return APR_EGENERAL;
    }
    *out = &cl->nodes[idx - 1];
    return APR_SUCCESS;
}

/* When the master the map names cannot be reached (nothing was sent to
 * it), the map is read again at once (unless it was within REFRESH_GAP)
 * and, when it names another master for the slot, that one is tried,
 * within the same deadline: a process that has not yet heard of a
 * failover does not fail its first request after it. */
static apr_status_t cluster_acquire(rsp_store_t *st, apr_pool_t *p,
                                    const char *key, apr_time_t deadline,
                                    rsp_redis_conn_t **out, const char **err)
{
    const char *why = NULL;
    rsp_redis_node_t *n, *other;
    apr_status_t rv;

    if ((rv = node_for_key(st, p, key, deadline, &n, err)) != APR_SUCCESS
        || (rv = node_acquire(st, p, n, deadline, out, err)) == APR_SUCCESS
        || apr_time_now() >= deadline
        || node_for_key(st, p, key, deadline, &other, &why) != APR_SUCCESS
        || other == n) {
        return rv;
    }
    rsp_log(RSP_LOG_DEBUG, "store %s: %s (%s); the map read again names %s",
            st->url->display, n->name, *err, other->name);
    return node_acquire(st, p, other, deadline, out, err);
}

typedef enum { NOT_REDIRECTED = 0, MOVED, ASK } redirect_t;

/* "MOVED 3999 127.0.0.1:6381" / "ASK 3999 :6381" (an empty host: the
 * node that answered). */
static redirect_t redirection(const redisReply *r, apr_pool_t *p,
                              const rsp_redis_node_t *from, int *slot,
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

/* The replies to ASKING (every other one, first) must all be OK: out
 * gets the others. */
static apr_status_t after_asking(rsp_store_t *st, rsp_redis_conn_t *c,
                                 apr_pool_t *p, int n, redisReply **r,
                                 redisReply **out, const char **err)
{
    int i, bad = 0;

    for (i = 0; i < n; i++) {
        bad |= !(r[2 * i]->type == REDIS_REPLY_STATUS
                 && !strcmp(r[2 * i]->str, "OK"));
        freeReplyObject(r[2 * i]);
        out[i] = r[2 * i + 1];
    }
    if (!bad) {
        return APR_SUCCESS;
    }
    for (i = 0; i < n; i++) {
        freeReplyObject(out[i]);
    }
    *err = apr_psprintf(p, "%s (node %s): ASKING refused", st->url->display,
                        RSP_REDIS_NODE(c)->name);
    rsp_redis_drop(c);
    return APR_EGENERAL;
}

/* The node a redirection names, the map told of a MOVED. */
static rsp_redis_node_t *follow(rsp_store_t *st, redirect_t kind, int slot,
                                const char *host, int port)
{
    cluster_t *cl = state(st);
    rsp_redis_node_t *target;

    apr_thread_mutex_lock(cl->lock);
    target = node_get_locked(st, host, port);
    if (target && kind == MOVED) {
        cl->map[slot] = (apr_uint16_t)(target - cl->nodes + 1);
        cl->refresh = 1;
        cl->moved++;
    }
    else if (target) {
        cl->asked++;
    }
    apr_thread_mutex_unlock(cl->lock);
    return target;
}

/* The commands are about one key (and WAIT): when the first is
 * redirected none of them ran, and they are sent again where the cluster
 * says. */
static apr_status_t cluster_exchange(rsp_store_t *st, rsp_redis_conn_t **cp,
                                     apr_pool_t *p, int n, redisReply **out,
                                     apr_time_t deadline, const char **err)
{
    rsp_redis_conn_t *c = *cp;
    redirect_t kind = NOT_REDIRECTED;
    size_t ends[RSP_REDIS_MAX_PIPE];
    char *saved;
    int hop, i;
    apr_status_t rv;

    if (c->ncmd != n || n > RSP_REDIS_MAX_PIPE) {
        *err = apr_psprintf(p, "%s: %d commands in one exchange",
                            st->url->display, c->ncmd);
        rsp_redis_drop(c);
        return APR_EGENERAL;
    }
    saved = apr_pmemdup(p, c->out, c->out_len);
    memcpy(ends, c->cmd_end, sizeof(size_t) * (size_t)n);
    for (hop = 0;; hop++) {
        redisReply *r[2 * RSP_REDIS_MAX_PIPE];
        int slot = 0, port = 0;
        const char *host = NULL;
        rsp_redis_node_t *target;

        rv = rsp_redis_exchange_at(st, c, p, kind == ASK ? 2 * n : n,
                                   kind == ASK ? r : out, deadline, err);
        if (rv != APR_SUCCESS) {
            want_map(st); /* the node may have failed over */
            return rv;
        }
        if (kind == ASK
            && (rv = after_asking(st, c, p, n, r, out, err)) != APR_SUCCESS) {
            return rv;
        }
        if (out[0]->type == REDIS_REPLY_ERROR
            && !strncmp(out[0]->str, "CLUSTERDOWN", 11)) {
            want_map(st);
        }
        kind = redirection(out[0], p, RSP_REDIS_NODE(c), &slot, &host, &port);
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
        if (!(target = follow(st, kind, slot, host, port))) {
            *err = apr_psprintf(p, "%s: redirected to a %dth node: too many "
                                "nodes", st->url->display, MAX_NODES + 1);
            return APR_EGENERAL;
        }
        rsp_log(RSP_LOG_DEBUG, "store %s: slot %d: %s %s", st->url->display,
                slot, kind == MOVED ? "MOVED to" : "ASK at", target->name);
        rsp_redis_release(c);
        *cp = NULL;
        if ((rv = node_acquire(st, p, target, deadline, &c, err))
            != APR_SUCCESS) {
            return rv;
        }
        *cp = c;
        for (i = 0; i < n; i++) {
            size_t from = i ? ends[i - 1] : 0;
            if ((kind == ASK
                 && rsp_redis_append_raw(c, "*1\r\n$6\r\nASKING\r\n", 16)
                    != REDIS_OK)
                || rsp_redis_append_raw(c, saved + from, ends[i] - from)
                   != REDIS_OK) {
                *err = apr_psprintf(p, "%s: %s", st->url->display, c->errstr);
                rsp_redis_drop(c);
                return APR_EGENERAL;
            }
        }
    }
}

/* Every master of the map, each as a block (see rsp_store.h), named by
 * its first slot range, which a failover keeps (a resharding that moves
 * it names the shard anew). */
static apr_status_t cluster_info(rsp_store_t *st, apr_pool_t *p,
                                 const char *section, const char **text,
                                 const char **err)
{
    cluster_t *cl = state(st);
    apr_uint16_t *map = apr_palloc(p, CLUSTER_SLOTS * sizeof(*map));
    int first[MAX_NODES], last[MAX_NODES], k, answered = 0, have_map;
    const char *out = "";
    apr_status_t rv;

    /* The map read afresh (the monitor polls seldom): every process
     * names the shards alike, whatever its requests have met. */
    rv = refresh_map(st, p, apr_time_now() + st->timeout, err);
    apr_thread_mutex_lock(cl->lock);
    have_map = cl->map_ready;   /* else the map the requests have, if any */
    memcpy(map, cl->map, CLUSTER_SLOTS * sizeof(*map));
    apr_thread_mutex_unlock(cl->lock);
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
                           cl->nodes[k].name);
        if (rsp_redis_info_at(st, p, &cl->nodes[k], section, 0, &t, &e)
            == APR_SUCCESS) {
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

const rsp_redis_topology_t rsp_redis_cluster = {
    "cluster",
    1,
    cluster_init,
    cluster_connect,
    cluster_acquire,
    cluster_exchange,
    NULL,
    cluster_info,
};

void rsp_store_redirections(rsp_store_t *st, apr_uint64_t *moved,
                            apr_uint64_t *asked)
{
    rsp_redis_t *impl = st->impl;
    cluster_t *cl;

    *moved = *asked = 0;
    if (st->ops != &rsp_store_redis_ops || !impl
        || impl->topo != &rsp_redis_cluster) {
        return;
    }
    cl = impl->topo_state;
    apr_thread_mutex_lock(cl->lock);
    *moved = cl->moved;
    *asked = cl->asked;
    apr_thread_mutex_unlock(cl->lock);
}
