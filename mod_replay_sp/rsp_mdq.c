/* Per-entity metadata (MDQ): where an entity is asked for, the host's
 * copies, and the limiter of fetches (rsp_mdq.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <apr_strings.h>
#include <openssl/evp.h>

#include "rsp_mdq.h"

const char *rsp_mdq_sha1_hex(apr_pool_t *p, const char *entity_id)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    char *out;

    if (EVP_Digest(entity_id, strlen(entity_id), md, &n, EVP_sha1(), NULL)
        != 1) {
        abort(); /* only on allocation failure inside OpenSSL */
    }
    out = apr_palloc(p, 2 * n + 1);
    for (i = 0; i < n; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[2 * n] = '\0';
    return out;
}

const char *rsp_mdq_url(apr_pool_t *p, const char *base_url,
                        const char *entity_id)
{
    apr_size_t n = strlen(base_url);

    while (n > 0 && base_url[n - 1] == '/') {
        n--;
    }
    return apr_pstrcat(p, apr_pstrndup(p, base_url, n),
                       "/entities/%7Bsha1%7D", rsp_mdq_sha1_hex(p, entity_id),
                       NULL);
}

const char *rsp_mdq_cache_file(apr_pool_t *p, const char *cache_dir,
                               const char *entity_id)
{
    return apr_pstrcat(p, cache_dir, "/", rsp_mdq_sha1_hex(p, entity_id),
                       ".xml", NULL);
}

apr_int64_t rsp_mdq_fresh_s(const rsp_mdq_t *q, apr_int64_t cache_duration_s,
                            apr_time_t valid_until, apr_time_t at)
{
    return rsp_md_next_refresh(q->refresh_s, cache_duration_s, 0, valid_until,
                               at);
}

/* The host's copy, touched: confirmed current now. */
static void touch(const char *path)
{
    (void)utimes(path, NULL);
}

apr_status_t rsp_mdq_get(rsp_md_result_t *res, apr_int64_t *fresh_s,
                         int *fetched, apr_pool_t *p, const rsp_mdq_t *q,
                         const char *entity_id, const rsp_md_have_t *have,
                         apr_time_t now,
                         apr_status_t (*accept)(void *, apr_pool_t *,
                                                const char *, apr_size_t,
                                                apr_time_t, const char **),
                         void *baton)
{
    const char *cache = rsp_mdq_cache_file(p, q->cache_dir, entity_id);
    rsp_md_source_t src;
    struct stat st;
    apr_status_t rv;

    *fresh_s = 0;
    *fetched = 0;
    memset(&src, 0, sizeof(src));
    src.cert_pem = q->cert_pem;
    src.max_validity_s = q->max_validity_s;
    src.max_size = RSP_MDQ_MAX_SIZE;
    src.accept = accept;
    src.accept_baton = baton;
    if (!have && stat(cache, &st) == 0 && S_ISREG(st.st_mode)) {
        apr_time_t at = apr_time_from_sec(st.st_mtime);

        src.path = cache;
        if (rsp_md_source_get(res, p, &src, NULL, now) == APR_SUCCESS) {
            apr_int64_t f = rsp_mdq_fresh_s(q, res->cache_duration_s,
                                            res->valid_until, at);
            if (now < at + apr_time_from_sec(f)) {
                /* what the host's copy was served with: the process that
                 * takes it asks again conditionally */
                rsp_md_backing_validators(p, cache, rsp_mdq_url(p, q->base_url,
                                                                entity_id),
                                          &res->etag, &res->last_modified);
                *fresh_s = apr_time_sec(at + apr_time_from_sec(f) - now);
                if (*fresh_s < 1) {
                    *fresh_s = 1;
                }
                return APR_SUCCESS;
            }
        }
        src.path = NULL;
    }
    src.url = rsp_mdq_url(p, q->base_url, entity_id);
    src.backing_file = cache;
    src.ca_file = q->ca_file;
    src.connect_timeout = RSP_MDQ_CONNECT_TIMEOUT;
    src.timeout = RSP_MDQ_TIMEOUT;
    *fetched = 1;
    rv = rsp_md_source_get(res, p, &src, have, now);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (res->from_backing) {
        /* the server failed: the host's copy until it is asked again */
        *fresh_s = RSP_MDQ_NEGATIVE_S;
        return APR_SUCCESS;
    }
    if (res->http_status == 304) {
        touch(cache);
    }
    *fresh_s = rsp_mdq_fresh_s(q, res->cache_duration_s, res->valid_until,
                               now);
    return APR_SUCCESS;
}

int rsp_mdq_limit_take(rsp_mdq_limit_t *l, apr_time_t now, const char **why)
{
    if (l->in_flight >= RSP_MDQ_IN_FLIGHT) {
        *why = "too many fetches under way in this process";
        return 0;
    }
    if (now < l->window_start || now - l->window_start >= apr_time_from_sec(60)) {
        l->window_start = now;
        l->in_window = 0;
    }
    if (l->in_window >= RSP_MDQ_PER_MINUTE) {
        *why = "too many fetches in the last minute in this process";
        return 0;
    }
    l->in_window++;
    l->in_flight++;
    return 1;
}

void rsp_mdq_limit_done(rsp_mdq_limit_t *l)
{
    if (l->in_flight > 0) {
        l->in_flight--;
    }
}
