#include <string.h>

#include <apr_strings.h>

#include "rsp_logout_index.h"
#include "rsp_util.h"

const char *rsp_logout_index_key(apr_pool_t *p, const char *prefix,
                                 const char *issuer, const char *name_id,
                                 const char *session_index)
{
    apr_size_t il = strlen(issuer), nl = strlen(name_id);
    apr_size_t sl = session_index ? strlen(session_index) + 1 : 0;
    char *buf = apr_palloc(p, il + 1 + nl + sl);

    /* issuer 0x00 name_id [0x00 session_index] */
    memcpy(buf, issuer, il);
    buf[il] = '\0';
    memcpy(buf + il + 1, name_id, nl);
    if (session_index) {
        buf[il + 1 + nl] = '\0';
        memcpy(buf + il + 2 + nl, session_index, sl - 1);
    }
    return apr_pstrcat(p, prefix, "n:",
                       rsp_sha256_b64url(p, buf, il + 1 + nl + sl), NULL);
}

apr_array_header_t *rsp_logout_index_parse(apr_pool_t *p, const char *val)
{
    apr_array_header_t *out = apr_array_make(p, 4, sizeof(const char *));
    const char *c, *end;
    int i, dup;

    for (c = val ? val : ""; *c && out->nelts < RSP_LOGOUT_INDEX_MAX; c = end) {
        const char *h;
        while (*c == ' ') {
            c++;
        }
        end = c + strcspn(c, " ");
        if (end == c) {
            continue;
        }
        h = apr_pstrmemdup(p, c, (apr_size_t)(end - c));
        if (!rsp_is_hash(h)) {
            continue;
        }
        for (i = 0, dup = 0; i < out->nelts && !dup; i++) {
            dup = !strcmp(APR_ARRAY_IDX(out, i, const char *), h);
        }
        if (!dup) {
            APR_ARRAY_PUSH(out, const char *) = h;
        }
    }
    return out;
}

/* One listed session: a live one of the user, ended when end. */
static apr_status_t one_session(rsp_store_t *st, apr_pool_t *p,
                                const char *prefix, const char *hash,
                                const char *issuer, const char *name_id,
                                const char *session_index, int end,
                                rsp_logout_visit_fn visit, void *baton,
                                int *ended, const char **err)
{
    const char *skey = rsp_session_key_of_hash(p, prefix, hash), *val;
    rsp_session_t *s;
    apr_size_t len;
    apr_status_t rv;
    int deleted = 0;

    if ((rv = rsp_store_get(st, p, skey, &val, &len, err)) != APR_SUCCESS
        || !val) {
        return rv;
    }
    if (rsp_session_decode(&s, p, val, len) != APR_SUCCESS
        || strcmp(s->issuer, issuer) != 0 || strcmp(s->name_id, name_id) != 0
        || (session_index && (!s->session_index
                              || strcmp(s->session_index, session_index)))) {
        return APR_SUCCESS;
    }
    if (end) {
        if ((rv = rsp_store_del_if_equal(st, p, skey, val, &deleted, err))
            != APR_SUCCESS) {
            return rv;
        }
        *ended += deleted;
    }
    if (visit) {
        visit(baton, hash, s, deleted);
    }
    return APR_SUCCESS;
}

apr_status_t rsp_logout_index_sessions(rsp_store_t *st, apr_pool_t *p,
                                       const char *prefix, const char *issuer,
                                       const char *name_id,
                                       const char *session_index, int end,
                                       rsp_logout_visit_fn visit, void *baton,
                                       int *ended, const char **err)
{
    const char *key = rsp_logout_index_key(p, prefix, issuer, name_id,
                                           session_index);
    int n = rsp_store_servers(st), server, i, gone;
    const char **copies = apr_pcalloc(p, sizeof(*copies) * (apr_size_t)n);
    const char *all = "";
    apr_array_header_t *hashes;
    apr_size_t len;
    apr_status_t rv;

    for (server = 0; server < n; server++) {
        if ((rv = rsp_store_get_at(st, p, server, key, &copies[server], &len,
                                   err)) != APR_SUCCESS) {
            return rv;
        }
        if (copies[server]) {
            all = apr_pstrcat(p, all, " ", copies[server], NULL);
        }
    }
    hashes = rsp_logout_index_parse(p, all);
    for (i = 0; i < hashes->nelts; i++) {
        if ((rv = one_session(st, p, prefix,
                              APR_ARRAY_IDX(hashes, i, const char *), issuer,
                              name_id, session_index, end, visit, baton, ended,
                              err)) != APR_SUCCESS) {
            return rv;
        }
    }
    for (server = 0; end && server < n; server++) {
        if (copies[server]
            && (rv = rsp_store_del_if_equal_at(st, p, server, key,
                                               copies[server], &gone, err))
               != APR_SUCCESS) {
            return rv;
        }
    }
    return APR_SUCCESS;
}

void rsp_logout_index_writes(apr_pool_t *p, const char *prefix,
                             const char *issuer, const char *name_id,
                             const char *session_index,
                             const char *session_hash, apr_int64_t ttl_ms,
                             rsp_write_t w[2])
{
    int i;

    memset(w, 0, 2 * sizeof(*w));
    for (i = 0; i < 2; i++) {
        w[i].kind = RSP_WRITE_APPEND;
        w[i].value = session_hash;
        w[i].len = strlen(session_hash);
        w[i].ttl_ms = ttl_ms;
    }
    w[0].key = rsp_logout_index_key(p, prefix, issuer, name_id,
                                    session_index ? session_index : "");
    w[1].key = rsp_logout_index_key(p, prefix, issuer, name_id, NULL);
}
