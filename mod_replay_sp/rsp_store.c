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
