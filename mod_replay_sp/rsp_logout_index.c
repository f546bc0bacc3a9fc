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
