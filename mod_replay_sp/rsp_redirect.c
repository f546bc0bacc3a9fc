#include <string.h>
#include <strings.h>

#include "rsp_redirect.h"

/* A host name: letters, digits, '-' and '.', 1..253 characters, no empty
 * label. IPv4 literals pass as names (digits and dots). */
static int host_name_ok(const char *h, size_t len)
{
    size_t i, label = 0;

    if (len == 0 || len > 253 || h[0] == '.') {
        return 0;
    }
    for (i = 0; i < len; i++) {
        char c = h[i];
        if (c == '.') {
            if (label == 0) {
                return 0;
            }
            label = 0;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '-') || ++label > 63) {
            return 0;
        }
    }
    return 1;
}

static int host_matches(const char *host, size_t len, const char *pattern)
{
    size_t plen = strlen(pattern);

    if (pattern[0] == '*' && pattern[1] == '.') {
        /* "*.example.org": any name ending in ".example.org" */
        plen -= 1;
        return len > plen
            && !strncasecmp(host + len - plen, pattern + 1, plen);
    }
    return len == plen && !strncasecmp(host, pattern, len);
}

const char *rsp_redirect_domain_check(const char *pattern)
{
    const char *name = pattern;

    if (pattern[0] == '*' && pattern[1] == '.') {
        name = pattern + 2;
    }
    if (!host_name_ok(name, strlen(name))) {
        return "expected a host name (letters, digits, '-', '.') or "
               "*. followed by one";
    }
    return NULL;
}

const char *rsp_redirect_check(const char *target, const char *self_host,
                               const apr_array_header_t *domains)
{
    const char *c, *auth, *end, *host, *host_end;
    size_t len;
    int i;

    if (!target || !*target) {
        return "empty";
    }
    len = strlen(target);
    if (len > RSP_REDIRECT_MAX) {
        return "too long";
    }
    for (c = target; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (u <= 0x20 || u >= 0x7f) {
            return "control character, space or non-ASCII byte";
        }
        if (u == '\\') {
            return "backslash";
        }
    }
    if (target[0] == '/') {
        if (target[1] == '/') {
            return "scheme-relative (//host)";
        }
        return NULL;
    }
    if (!strncasecmp(target, "https://", 8)) {
        auth = target + 8;
    }
    else if (!strncasecmp(target, "http://", 7)) {
        auth = target + 7;
    }
    else {
        return strchr(target, ':') ? "not an http or https URL"
                                   : "not an absolute path or URL";
    }
    end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(end - auth))) {
        return "user information in the URL";
    }
    host = auth;
    if (*host == '[') {
        host_end = memchr(host, ']', (size_t)(end - host));
        if (!host_end) {
            return "malformed host";
        }
        host_end++;
        c = host_end;
    }
    else {
        host_end = memchr(host, ':', (size_t)(end - host));
        if (!host_end) {
            host_end = end;
        }
        if (!host_name_ok(host, (size_t)(host_end - host))) {
            return "malformed host";
        }
        c = host_end;
    }
    if (c < end) {
        const char *d;
        if (*c != ':' || c + 1 == end || end - c > 6) {
            return "malformed port";
        }
        for (d = c + 1; d < end; d++) {
            if (*d < '0' || *d > '9') {
                return "malformed port";
            }
        }
    }
    len = (size_t)(host_end - host);
    if (self_host && host_matches(host, len, self_host)) {
        return NULL;
    }
    for (i = 0; domains && i < domains->nelts; i++) {
        if (host_matches(host, len, APR_ARRAY_IDX(domains, i, const char *))) {
            return NULL;
        }
    }
    return "host not allowed (ReplaySPRedirectDomains)";
}
