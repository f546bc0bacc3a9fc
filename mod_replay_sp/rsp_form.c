#include <string.h>

#include <apr_lib.h>
#include <apr_tables.h>
#include <apr_strings.h>

#include "rsp_form.h"

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
         : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* In place; 0 on a bad escape or an escaped NUL. Runs without '%' or '+'
 * (most of a base64 value) are found by strcspn and moved whole. */
static int unescape(char *s)
{
    char *o = s;

    for (;;) {
        apr_size_t run = strcspn(s, "%+");
        if (o != s) {
            memmove(o, s, run);
        }
        o += run;
        s += run;
        if (*s == '\0') {
            break;
        }
        if (*s == '+') {
            *o++ = ' ';
            s++;
        }
        else {
            int hi = hexval((unsigned char)s[1]);
            int lo = hi < 0 ? -1 : hexval((unsigned char)s[2]);
            if (lo < 0 || (hi | lo) == 0) {
                return 0;
            }
            *o++ = (char)(hi << 4 | lo);
            s += 3;
        }
    }
    *o = '\0';
    return 1;
}

const char *rsp_form_value(apr_pool_t *p, const char *s, const char *name,
                           const char **why)
{
    const char *pair = s, *found = NULL, *end = NULL;
    apr_size_t n = strlen(name);
    char *v;

    while (pair && *pair) {
        const char *next = strchr(pair, '&');
        apr_size_t len = next ? (apr_size_t)(next - pair) : strlen(pair);
        if (len >= n && !strncmp(pair, name, n)
            && (len == n || pair[n] == '=')) {
            if (found) {
                *why = apr_psprintf(p, "%s given twice", name);
                return NULL;
            }
            found = len == n ? pair + n : pair + n + 1;
            end = pair + len;
        }
        pair = next ? next + 1 : NULL;
    }
    if (!found) {
        return NULL;
    }
    v = apr_pstrmemdup(p, found, (apr_size_t)(end - found));
    if (!unescape(v)) {
        *why = apr_psprintf(p, "bad escape in %s", name);
        return NULL;
    }
    return v;
}

const char *rsp_record_field(apr_pool_t *p, const char *rec, const char *name)
{
    const char *why = NULL;

    return rsp_form_value(p, rec, name, &why);
}

const char *rsp_form_escape(apr_pool_t *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = apr_palloc(p, strlen(s) * 3 + 1), *o = out;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (apr_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            *o++ = (char)c;
        }
        else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

const char *rsp_form_ambiguity(apr_pool_t *p, const char *form, int is_query)
{
    apr_array_header_t *seen = apr_array_make(p, 4, sizeof(char *));
    const char *pair = form;
    int i;

    while (pair && *pair) {
        const char *next = strchr(pair, '&');
        apr_size_t len = next ? (apr_size_t)(next - pair) : strlen(pair);
        const char *eq = memchr(pair, '=', len);
        apr_size_t nlen = eq ? (apr_size_t)(eq - pair) : len;
        char *name = apr_pstrmemdup(p, pair, nlen);

        if (!unescape(name)) {
            return "a badly escaped parameter name";
        }
        if (is_query) {
            if (!strcasecmp(name, "SAMLResponse")
                || !strcasecmp(name, "RelayState")) {
                return apr_psprintf(p, "%s in the query string", name);
            }
        }
        else {
            if (memchr(pair, '%', nlen) || memchr(pair, '+', nlen)) {
                return "a percent-encoded parameter name";
            }
            if ((!strcasecmp(name, "SAMLResponse") && strcmp(name, "SAMLResponse"))
                || (!strcasecmp(name, "RelayState") && strcmp(name, "RelayState"))) {
                return apr_psprintf(p, "parameter %s (another spelling of a "
                                    "SAML parameter)", name);
            }
            for (i = 0; i < seen->nelts; i++) {
                if (!strcmp(APR_ARRAY_IDX(seen, i, const char *), name)) {
                    return apr_psprintf(p, "parameter %s given twice", name);
                }
            }
            APR_ARRAY_PUSH(seen, const char *) = name;
        }
        pair = next ? next + 1 : NULL;
    }
    return NULL;
}
