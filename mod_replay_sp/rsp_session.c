#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_lib.h>

#include "rsp_session.h"
#include "rsp_util.h"

static const char *esc(apr_pool_t *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out, *o;

    if (!s) {
        return NULL;
    }
    out = o = apr_palloc(p, strlen(s) * 3 + 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= 0x20 || c >= 0x7f || c == '%' || c == '&' || c == '=') {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
        else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static char *unesc(apr_pool_t *p, const char *s, apr_size_t len)
{
    char *out = apr_palloc(p, len + 1), *o = out;
    apr_size_t i;

    for (i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi, lo;
            if (i + 2 >= len) {
                return NULL;
            }
            hi = hexval((unsigned char)s[i + 1]);
            lo = hexval((unsigned char)s[i + 2]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0) {
                return NULL;
            }
            *o++ = (char)(hi << 4 | lo);
            i += 2;
        }
        else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

const char *rsp_session_encode(apr_pool_t *p, const rsp_session_t *s)
{
    const char *out = apr_psprintf(
        p, "v=1&sp=%s&iss=%s&nid=%s&ct=%" APR_TIME_T_FMT "&exp=%" APR_TIME_T_FMT,
        esc(p, s->sp), esc(p, s->issuer), esc(p, s->name_id), s->created,
        s->expires);

    if (s->name_id_format) {
        out = apr_pstrcat(p, out, "&nidf=", esc(p, s->name_id_format), NULL);
    }
    if (s->session_index) {
        out = apr_pstrcat(p, out, "&sidx=", esc(p, s->session_index), NULL);
    }
    if (s->claim_hash) {
        out = apr_pstrcat(p, out, "&ch=", esc(p, s->claim_hash), NULL);
    }
    /* Attributes: each value as a pair of fields, name then value. */
    if (s->attributes) {
        int i;
        for (i = 0; i < s->attributes->nelts; i++) {
            const rsp_attribute_t *a =
                &APR_ARRAY_IDX(s->attributes, i, rsp_attribute_t);
            out = apr_pstrcat(p, out, "&an=", esc(p, a->name), "&av=",
                              esc(p, a->value), NULL);
        }
    }
    return out;
}

static int parse_time_field(const char *v, apr_time_t *out)
{
    char *end;
    apr_int64_t n;

    if (!v || !*v || *v < '0' || *v > '9') {
        return 0;
    }
    errno = 0;
    n = apr_strtoi64(v, &end, 10);
    if (*end || errno || n <= 0) {
        return 0;
    }
    *out = n;
    return 1;
}

apr_status_t rsp_session_decode(rsp_session_t **out, apr_pool_t *p,
                                const char *data, apr_size_t len)
{
    rsp_session_t *s = apr_pcalloc(p, sizeof(*s));
    const char *cur = data, *end = data + len, *ct = NULL, *exp = NULL;
    const char *version = NULL, **slot, *pending = NULL;

    if (memchr(data, '\0', len)) {
        return APR_EINVAL;
    }
    while (cur < end) {
        const char *amp = memchr(cur, '&', (apr_size_t)(end - cur));
        const char *fend = amp ? amp : end;
        const char *eq = memchr(cur, '=', (apr_size_t)(fend - cur));
        const char *k, *v;

        if (!eq) {
            return APR_EINVAL;
        }
        k = apr_pstrmemdup(p, cur, (apr_size_t)(eq - cur));
        v = unesc(p, eq + 1, (apr_size_t)(fend - eq - 1));
        if (!v) {
            return APR_EINVAL;
        }
        if (!strcmp(k, "an") || !strcmp(k, "av")) {
            /* an=NAME then av=VALUE, repeated: the only repeated fields */
            if (!s->attributes) {
                s->attributes = apr_array_make(p, 4, sizeof(rsp_attribute_t));
            }
            if (k[1] == 'n') {
                if (pending) {
                    return APR_EINVAL;
                }
                pending = v;
            }
            else {
                rsp_attribute_t *a;
                if (!pending) {
                    return APR_EINVAL;
                }
                a = apr_array_push(s->attributes);
                a->name = pending;
                a->value = v;
                pending = NULL;
            }
            cur = amp ? amp + 1 : end;
            continue;
        }
        if (!strcmp(k, "v")) slot = &version;
        else if (!strcmp(k, "sp")) slot = &s->sp;
        else if (!strcmp(k, "iss")) slot = &s->issuer;
        else if (!strcmp(k, "nid")) slot = &s->name_id;
        else if (!strcmp(k, "nidf")) slot = &s->name_id_format;
        else if (!strcmp(k, "sidx")) slot = &s->session_index;
        else if (!strcmp(k, "ch")) slot = &s->claim_hash;
        else if (!strcmp(k, "ct")) slot = &ct;
        else if (!strcmp(k, "exp")) slot = &exp;
        else slot = NULL; /* written by a newer replica: ignore */
        if (slot) {
            if (*slot) {
                return APR_EINVAL; /* a field twice: which one counts? */
            }
            *slot = v;
        }
        cur = amp ? amp + 1 : end;
    }
    if (pending || !version || strcmp(version, "1") != 0 || !s->sp || !*s->sp
        || !s->issuer || !*s->issuer || !s->name_id || !*s->name_id
        || !parse_time_field(ct, &s->created)
        || !parse_time_field(exp, &s->expires)) {
        return APR_EINVAL;
    }
    *out = s;
    return APR_SUCCESS;
}

apr_status_t rsp_session_read(rsp_store_t *st, apr_pool_t *p,
                              const char *prefix, const char *sid, int end,
                              rsp_session_t **sess, int *malformed,
                              const char **err)
{
    const char *skey = rsp_session_key(p, prefix, sid), *val = NULL;
    apr_size_t len = 0;
    apr_status_t rv;
    int deleted = 0;

    *sess = NULL;
    *malformed = 0;
    if ((rv = rsp_store_get(st, p, skey, &val, &len, err)) != APR_SUCCESS
        || !val) {
        return rv;
    }
    if (rsp_session_decode(sess, p, val, len) != APR_SUCCESS) {
        *sess = NULL;
        *malformed = 1;
    }
    return end ? rsp_store_del_if_equal(st, p, skey, val, &deleted, err)
               : APR_SUCCESS;
}
