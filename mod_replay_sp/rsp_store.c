#include "rsp_store.h"

apr_status_t rsp_store_create(rsp_store_t **out, apr_pool_t *p,
                              const rsp_store_url_t *url,
                              apr_interval_time_t timeout, const char **err)
{
    rsp_store_t *st = apr_pcalloc(p, sizeof(*st));

    switch (url->kind) {
    case RSP_STORE_REDIS:
    case RSP_STORE_REDIS_UNIX:
        st->ops = &rsp_store_redis_ops;
        break;
    case RSP_STORE_MEMCACHE:
        st->ops = &rsp_store_memcache_ops;
        break;
    default:
        *err = "no backend for this store URL";
        return APR_ENOTIMPL;
    }
    st->url = url;
    st->timeout = timeout;
    *out = st;
    return APR_SUCCESS;
}

apr_status_t rsp_store_claim_read(rsp_store_t *st, apr_pool_t *p,
                                  rsp_claim_read_t *c, const char **err)
{
    c->won = 0;
    c->holder = NULL;
    return st->ops->claim_read(st, p, c, err);
}

int rsp_store_servers(rsp_store_t *st)
{
    return st->ops->caps & RSP_STORE_CAP_SERVERS ? st->ops->servers(st) : 1;
}

int rsp_store_home(rsp_store_t *st, const char *key)
{
    return st->ops->caps & RSP_STORE_CAP_SERVERS ? st->ops->home(st, key) : 0;
}

apr_status_t rsp_store_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                              const char *key, const char **value,
                              apr_size_t *len, const char **err)
{
    if (st->ops->caps & RSP_STORE_CAP_SERVERS) {
        return st->ops->get_at(st, p, server, key, value, len, err);
    }
    return rsp_store_get(st, p, key, value, len, err);
}

apr_status_t rsp_store_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                       int server, const char *key,
                                       const char *value, int *deleted,
                                       const char **err)
{
    if (st->ops->caps & RSP_STORE_CAP_SERVERS) {
        return st->ops->del_if_equal_at(st, p, server, key, value, deleted, err);
    }
    return rsp_store_del_if_equal(st, p, key, value, deleted, err);
}
