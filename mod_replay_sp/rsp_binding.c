#include <string.h>

#include <apr_strings.h>

#include "rsp_binding.h"
#include "rsp_util.h"

const char *rsp_binding_cookie_name(apr_pool_t *p, const char *cookie,
                                    const char *token)
{
    const char *h = rsp_sha256_b64url(p, token, strlen(token));

    return apr_pstrcat(p, cookie, "_req_", apr_pstrndup(p, h, 16), NULL);
}

void rsp_binding_set_cookies(apr_pool_t *p, const char *name,
                             const char *value, const char *path,
                             long max_age, int https,
                             apr_array_header_t *out)
{
    const char *common = apr_psprintf(p, "Path=%s; Max-Age=%ld; HttpOnly",
                                      path, max_age);

    if (https) {
        APR_ARRAY_PUSH(out, const char *) = apr_pstrcat(
            p, name, "=", value, "; ", common, "; SameSite=None; Secure", NULL);
        APR_ARRAY_PUSH(out, const char *) = apr_pstrcat(
            p, name, "_l=", value, "; ", common, "; Secure", NULL);
    }
    else {
        APR_ARRAY_PUSH(out, const char *) = apr_pstrcat(
            p, name, "=", value, "; ", common, NULL);
    }
}

/* Constant time for equal lengths. */
static int same(const char *a, const char *b)
{
    apr_size_t n = strlen(a), i;
    unsigned char d = 0;

    if (n != strlen(b)) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        d |= (unsigned char)(a[i] ^ b[i]);
    }
    return d == 0;
}

int rsp_binding_matches(apr_pool_t *p, const char *cookie_header,
                        const char *name, const char *bind_hash,
                        const char **why)
{
    const char *twin = apr_pstrcat(p, name, "_l", NULL);
    const char *c = cookie_header;
    int seen = 0;

    while (c && *c) {
        const char *end = strchr(c, ';'), *eq;
        apr_size_t len = end ? (apr_size_t)(end - c) : strlen(c);
        const char *pair;

        while (len && (*c == ' ' || *c == '\t')) {
            c++;
            len--;
        }
        pair = apr_pstrmemdup(p, c, len);
        eq = strchr(pair, '=');
        if (eq) {
            const char *k = apr_pstrmemdup(p, pair, (apr_size_t)(eq - pair));
            const char *v = eq + 1;
            if (!strcmp(k, name) || !strcmp(k, twin)) {
                seen = 1;
                if (*v && same(rsp_sha256_b64url(p, v, strlen(v)), bind_hash)) {
                    return 1;
                }
            }
        }
        c = end ? end + 1 : NULL;
    }
    *why = seen ? "a binding cookie of another browser" : "no binding cookie";
    return 0;
}
