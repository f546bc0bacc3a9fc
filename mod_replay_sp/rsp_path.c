#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "rsp_path.h"
#include "rsp_pct.h"

const char *rsp_path_of_target(apr_pool_t *p, const char *target)
{
    const char *s = target, *scheme;

    if (!s || !*s || !strcmp(s, "*")) {
        return NULL;
    }
    if (*s != '/') {
        if (!(scheme = strstr(s, "://"))) {
            return NULL;
        }
        s = scheme + 3;
        s += strcspn(s, "/?#");
        if (*s != '/') {
            return NULL;
        }
    }
    return apr_pstrmemdup(p, s, strcspn(s, "?#"));
}

/* Percent-decoded, a bad escape kept as it is, %00 the end (as mod_shib,
 * in C, reads it). */
static char *decode(apr_pool_t *p, const char *s)
{
    return rsp_pct_decode(p, s, strlen(s), RSP_PCT_LENIENT | RSP_PCT_NUL, NULL);
}

/* Each segment's ";parameters" removed. */
static char *strip_params(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) + 1), *o = out;

    while (*s) {
        if (*s == ';') {
            s += strcspn(s, "/\\");
        }
        else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

/* '\' as '/', repeated '/' merged; with dots, "." and ".." segments
 * resolved ("..", above the root, stays at the root). */
static char *normalize(apr_pool_t *p, const char *s, int dots)
{
    apr_size_t n = strlen(s);
    char *out = apr_palloc(p, n + 2), *o = out;

    *o++ = '/';
    while (*s) {
        apr_size_t len;
        while (*s == '/' || *s == '\\') {
            s++;
        }
        len = strcspn(s, "/\\");
        if (!len) {
            break;
        }
        if (dots && len == 1 && s[0] == '.') {
            /* nothing */
        }
        else if (dots && len == 2 && s[0] == '.' && s[1] == '.') {
            if (o > out + 1) {
                o--;                       /* the '/' after the last segment */
                while (o > out + 1 && o[-1] != '/') {
                    o--;
                }
            }
        }
        else {
            memcpy(o, s, len);
            o += len;
            *o++ = '/';
        }
        s += len;
    }
    if (o > out + 1 && !(n && (s[-1] == '/' || s[-1] == '\\'))) {
        o--;                               /* no trailing '/' it did not have */
    }
    *o = '\0';
    return out;
}

/* path is base or under it, in any letter case; base's trailing '/'
 * ignored. */
static int under_ci(const char *path, const char *base, apr_size_t blen)
{
    return !strncasecmp(path, base, blen)
           && (path[blen] == '\0' || path[blen] == '/');
}

int rsp_path_reaches(apr_pool_t *p, const char *raw, const char *base)
{
    const char *decoded[3];
    const char *b = normalize(p, base, 1);
    apr_size_t blen = strlen(b);
    int d, c, dots;

    while (blen > 0 && b[blen - 1] == '/') {
        blen--;
    }
    decoded[0] = raw;
    decoded[1] = decode(p, raw);
    decoded[2] = decode(p, decoded[1]);
    for (d = 0; d < 3; d++) {
        const char *cuts[3];
        cuts[0] = decoded[d];
        cuts[1] = apr_pstrmemdup(p, decoded[d], strcspn(decoded[d], ";?#"));
        cuts[2] = strip_params(p, decoded[d]);
        for (c = 0; c < 3; c++) {
            for (dots = 0; dots < 2; dots++) {
                if (under_ci(normalize(p, cuts[c], dots), b, blen)) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

const char *rsp_path_noncanonical(const char *raw)
{
    const char *s;

    if (*raw != '/') {
        return "a path that does not start with '/'";
    }
    for (s = raw; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '%') {
            return "a percent-encoded byte";
        }
        if (c == ';') {
            return "a path parameter (';')";
        }
        if (c == '\\') {
            return "a backslash";
        }
        if (!apr_isalnum(c) && !strchr("-._~!$&'()*+,=:@/", c)) {
            return c < 0x20 || c > 0x7e ? "a byte that is not printable ASCII"
                                        : "a character that must be escaped";
        }
        if (c == '/') {
            apr_size_t len = strcspn(s + 1, "/");
            if (s[1] == '/') {
                return "an empty segment ('//')";
            }
            if ((len == 1 && s[1] == '.') || (len == 2 && s[1] == '.' && s[2] == '.')) {
                return "a dot segment ('.' or '..')";
            }
        }
    }
    return NULL;
}

int rsp_path_under(const char *path, const char *base)
{
    apr_size_t blen = strlen(base);

    if (strncmp(path, base, blen)) {
        return 0;
    }
    return (blen && base[blen - 1] == '/') || path[blen] == '\0'
           || path[blen] == '/';
}
