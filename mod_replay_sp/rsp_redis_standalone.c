/* Redis topology: one server, at the URL's address (TCP, TLS or a unix
 * socket). Every command goes to it. */
#include "rsp_redis.h"

static apr_status_t one_init(rsp_store_t *st, apr_pool_t *pchild)
{
    rsp_redis_t *impl = st->impl;

    return rsp_redis_node_init(st, &impl->node, pchild);
}

static apr_status_t one_connect(rsp_store_t *st, rsp_redis_conn_t *c,
                                apr_pool_t *p, apr_time_t deadline,
                                const char **err)
{
    rsp_peer_t peer;

    rsp_redis_peer(st, &peer, st->url->host, st->url->port);
    return rsp_redis_connect(st, c, p, &peer, NULL, deadline, err);
}

apr_status_t rsp_redis_one_acquire(rsp_store_t *st, apr_pool_t *p,
                                   const char *key, apr_time_t deadline,
                                   rsp_redis_conn_t **out, const char **err)
{
    rsp_redis_t *impl = st->impl;

    (void)key;
    return rsp_redis_acquire_at(st, p, &impl->node, deadline, out, err);
}

apr_status_t rsp_redis_one_exchange(rsp_store_t *st, rsp_redis_conn_t **cp,
                                    apr_pool_t *p, int n, redisReply **out,
                                    apr_time_t deadline, const char **err)
{
    return rsp_redis_exchange_at(st, *cp, p, n, out, deadline, err);
}

static apr_status_t one_info(rsp_store_t *st, apr_pool_t *p,
                             const char *section, const char **text,
                             const char **err)
{
    rsp_redis_t *impl = st->impl;

    return rsp_redis_info_at(st, p, &impl->node, section, 0, text, err);
}

const rsp_redis_topology_t rsp_redis_standalone = {
    "standalone",
    0,
    one_init,
    one_connect,
    rsp_redis_one_acquire,
    rsp_redis_one_exchange,
    NULL,
    one_info,
};
