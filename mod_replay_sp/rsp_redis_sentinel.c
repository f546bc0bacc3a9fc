/* Redis topology: a master found through Redis Sentinel, by the client
 * rules: at every new connection the sentinels are asked in turn (the one
 * that answered last first) for the master's address, and the server
 * there must say ROLE master. A master that turns out to be a replica
 * (READONLY, or INFO role:slave) is not kept connected: the next
 * connection asks again. */
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include "rsp_redis.h"

typedef struct {
    /* under lock: the sentinel that answered last (asked first next
     * time) and the master the last connection went to ("host:port") */
    apr_thread_mutex_t *lock;
    int sentinel_first;
    char master[300];
} sentinel_t;

static apr_status_t sentinel_init(rsp_store_t *st, apr_pool_t *pchild)
{
    rsp_redis_t *impl = st->impl;
    sentinel_t *s = apr_pcalloc(pchild, sizeof(*s));
    apr_status_t rv;

    if ((rv = apr_thread_mutex_create(&s->lock, APR_THREAD_MUTEX_DEFAULT,
                                      pchild)) != APR_SUCCESS) {
        return rv;
    }
    impl->topo_state = s;
    return rsp_redis_node_init(st, &impl->node, pchild);
}

/* The master's address from sentinel's reply, or NULL and *why. */
static const char *master_of(apr_pool_t *p, const redisReply *r, int *port,
                             const char **why)
{
    char *end;
    long v;

    if (r->type == REDIS_REPLY_NIL) {
        *why = "does not know it";
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        *why = apr_pstrdup(p, r->str);
        return NULL;
    }
    if (!(r->type == REDIS_REPLY_ARRAY && r->elements == 2
          && r->element[0]->type == REDIS_REPLY_STRING
          && r->element[1]->type == REDIS_REPLY_STRING)) {
        *why = "an unexpected reply";
        return NULL;
    }
    v = strtol(r->element[1]->str, &end, 10);
    if (*end != '\0' || v <= 0 || v >= 65536 || r->element[0]->len == 0) {
        *why = "a malformed address";
        return NULL;
    }
    *port = (int)v;
    return apr_pstrmemdup(p, r->element[0]->str, r->element[0]->len);
}

/* The master's address, from the sentinels asked in turn, each within its
 * share of the deadline. The error tells "no sentinel answered" from "the
 * sentinels do not know it". */
static apr_status_t resolve_master(rsp_store_t *st, apr_pool_t *p,
                                   apr_time_t deadline, const char **host,
                                   int *port, const char **err)
{
    const rsp_store_url_t *u = st->url;
    sentinel_t *s = ((rsp_redis_t *)st->impl)->topo_state;
    int n = u->sentinels->nelts, first, i, unknown = 0;
    const char *failures = "";

    apr_thread_mutex_lock(s->lock);
    first = s->sentinel_first;
    apr_thread_mutex_unlock(s->lock);
    for (i = 0; i < n; i++) {
        int k = (first + i) % n;
        const rsp_server_t *sv = &APR_ARRAY_IDX(u->sentinels, k, rsp_server_t);
        apr_time_t now = apr_time_now(), until;
        const char *why = NULL;
        rsp_peer_t peer;
        redisReply *r;

        if (now >= deadline) {
            failures = apr_psprintf(p, "%s%s%s: not asked (timeout)", failures,
                                    *failures ? "; " : "", sv->name);
            continue;
        }
        until = now + (deadline - now) / (n - i);
        memset(&peer, 0, sizeof(peer));
        peer.host = sv->host;
        peer.port = sv->port;
        peer.tls = u->tls ? st->tls : NULL;
        r = rsp_redis_call(p, &peer, until, &why,
                           "SENTINEL get-master-addr-by-name %s",
                           u->master_name);
        if (r) {
            *host = master_of(p, r, port, &why);
            unknown += r->type == REDIS_REPLY_NIL;
            freeReplyObject(r);
            if (*host) {
                apr_thread_mutex_lock(s->lock);
                s->sentinel_first = k;
                apr_thread_mutex_unlock(s->lock);
                return APR_SUCCESS;
            }
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
static apr_status_t confirm_master(rsp_store_t *st, rsp_redis_conn_t *c,
                                   apr_pool_t *p, const char *where,
                                   apr_time_t deadline, const char **err)
{
    redisReply *r = rsp_redis_command_at(st, c, p, deadline, err, "ROLE");

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
    rsp_redis_drop(c);
    return APR_EGENERAL;
}

static apr_status_t sentinel_connect(rsp_store_t *st, rsp_redis_conn_t *c,
                                     apr_pool_t *p, apr_time_t deadline,
                                     const char **err)
{
    sentinel_t *s = ((rsp_redis_t *)st->impl)->topo_state;
    const char *host = NULL, *where;
    rsp_peer_t peer;
    int port = 0;
    apr_status_t rv;

    /* Asked again at every connection (the Sentinel client rules). */
    if ((rv = resolve_master(st, p, deadline, &host, &port, err))
        != APR_SUCCESS) {
        return rv;
    }
    where = rsp_redis_hostport(p, host, port);
    rsp_redis_peer(st, &peer, host, port);
    if ((rv = rsp_redis_connect(st, c, p, &peer,
                                apr_pstrcat(p, "the master at ", where, NULL),
                                deadline, err)) != APR_SUCCESS
        || (rv = confirm_master(st, c, p, where, deadline, err))
           != APR_SUCCESS) {
        return rv;
    }
    apr_thread_mutex_lock(s->lock);
    apr_cpystrn(s->master, where, sizeof(s->master));
    apr_thread_mutex_unlock(s->lock);
    return APR_SUCCESS;
}

static void sentinel_on_error(rsp_store_t *st, rsp_redis_conn_t *c,
                              const redisReply *r)
{
    (void)st;
    if (!strncmp(r->str, "READONLY", 8)) {
        rsp_redis_drop(c); /* not the master any more: ask the sentinels again */
    }
}

static apr_status_t sentinel_info(rsp_store_t *st, apr_pool_t *p,
                                  const char *section, const char **text,
                                  const char **err)
{
    rsp_redis_t *impl = st->impl;

    return rsp_redis_info_at(st, p, &impl->node, section, 1, text, err);
}

const rsp_redis_topology_t rsp_redis_sentinel = {
    "sentinel",
    0,
    sentinel_init,
    sentinel_connect,
    rsp_redis_one_acquire,
    rsp_redis_one_exchange,
    sentinel_on_error,
    sentinel_info,
};

const char *rsp_store_primary(rsp_store_t *st, apr_pool_t *p)
{
    rsp_redis_t *impl = st->impl;
    sentinel_t *s;
    const char *out = NULL;

    if (st->ops != &rsp_store_redis_ops || !impl
        || impl->topo != &rsp_redis_sentinel) {
        return NULL;
    }
    s = impl->topo_state;
    apr_thread_mutex_lock(s->lock);
    if (s->master[0]) {
        out = apr_pstrdup(p, s->master);
    }
    apr_thread_mutex_unlock(s->lock);
    return out;
}
