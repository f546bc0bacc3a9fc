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
    apr_size_t len;
    apr_status_t rv;

    c->won = 0;
    c->holder = NULL;
    if (st->ops->claim_read) {
        return st->ops->claim_read(st, p, c, err);
    }
    if (c->home_key && rsp_store_servers(st) > 1) {
        *err = "this store cannot place a claim by another key";
        return APR_ENOTIMPL;
    }
    rv = rsp_store_claim(st, p, c->key, c->value, c->ttl_ms, &c->won, err);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!c->won) {
        const char *e = NULL;
        /* Never part of the verdict: an unreadable holder stays unknown. */
        if (rsp_store_get(st, p, c->key, &c->holder, &len, &e) != APR_SUCCESS) {
            c->holder = NULL;
        }
    }
    return rv;
}

apr_status_t rsp_store_write_many(rsp_store_t *st, apr_pool_t *p,
                                  rsp_write_t *w, int n, const char **err)
{
    apr_status_t rv = APR_SUCCESS;
    int i;

    if (st->ops->write_many) {
        return st->ops->write_many(st, p, w, n, err);
    }
    for (i = 0; i < n && rv == APR_SUCCESS; i++) {
        switch (w[i].kind) {
        case RSP_WRITE_PUT:
            rv = rsp_store_put(st, p, w[i].key, w[i].value, w[i].len,
                               w[i].ttl_ms, err);
            break;
        case RSP_WRITE_APPEND:
            rv = rsp_store_append(st, p, w[i].key, w[i].value, w[i].ttl_ms,
                                  err);
            break;
        default:
            rv = rsp_store_replace(st, p, w[i].key, w[i].expect, w[i].token,
                                   w[i].value, &w[i].replaced, err);
        }
    }
    return rv;
}

int rsp_store_servers(rsp_store_t *st)
{
    return st->ops->servers ? st->ops->servers(st) : 1;
}

int rsp_store_home(rsp_store_t *st, const char *key)
{
    return st->ops->home ? st->ops->home(st, key) : 0;
}

apr_status_t rsp_store_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                              const char *key, const char **value,
                              apr_size_t *len, const char **err)
{
    if (st->ops->get_at) {
        return st->ops->get_at(st, p, server, key, value, len, err);
    }
    return rsp_store_get(st, p, key, value, len, err);
}

apr_status_t rsp_store_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                       int server, const char *key,
                                       const char *value, int *deleted,
                                       const char **err)
{
    if (st->ops->del_if_equal_at) {
        return st->ops->del_if_equal_at(st, p, server, key, value, deleted, err);
    }
    return rsp_store_del_if_equal(st, p, key, value, deleted, err);
}
