/* Redirect targets (rsp_redirect.h): the return URL of a sign-in (stored
 * with the pending AuthnRequest and followed after the ACS) and of a
 * logout, and ReplaySPRedirectDomains entries. The input is one target
 * (and, for rsp_redirect_domain_check, one pattern).
 *
 * Besides crashes, every accepted target is checked against an
 * independent reading of the rule: a path on this host, or http(s) to an
 * allowed host, with nothing a browser could read as another host. */
#include <string.h>
#include <strings.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz_common.h"
#include "rsp_redirect.h"

#define SELF "sp.example.org"
#define EXACT "app.example.org"
#define WILD_SUFFIX ".example.net"

static int host_allowed(const char *h, size_t n)
{
    size_t sl = sizeof(WILD_SUFFIX) - 1;

    return (n == sizeof(SELF) - 1 && !strncasecmp(h, SELF, n))
        || (n == sizeof(EXACT) - 1 && !strncasecmp(h, EXACT, n))
        || (n > sl && !strncasecmp(h + n - sl, WILD_SUFFIX, sl));
}

/* What an accepted target must be. */
static void check_accepted(const char *t)
{
    const char *c, *auth, *end, *host_end;

    FUZZ_ASSERT(*t && strlen(t) <= RSP_REDIRECT_MAX);
    for (c = t; *c; c++) {
        FUZZ_ASSERT((unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f
                    && *c != '\\');
    }
    if (t[0] == '/') {
        FUZZ_ASSERT(t[1] != '/');
        return;
    }
    if (!strncasecmp(t, "https://", 8)) {
        auth = t + 8;
    }
    else {
        FUZZ_ASSERT(!strncasecmp(t, "http://", 7));
        auth = t + 7;
    }
    end = auth + strcspn(auth, "/?#");
    FUZZ_ASSERT(!memchr(auth, '@', (size_t)(end - auth)));
    /* No allowed host is an IPv6 literal. */
    FUZZ_ASSERT(auth[0] != '[');
    host_end = memchr(auth, ':', (size_t)(end - auth));
    if (!host_end) {
        host_end = end;
    }
    FUZZ_ASSERT(host_allowed(auth, (size_t)(host_end - auth)));
    if (host_end < end) {
        /* :port, digits only */
        FUZZ_ASSERT(end - host_end >= 2);
        for (c = host_end + 1; c < end; c++) {
            FUZZ_ASSERT(*c >= '0' && *c <= '9');
        }
    }
}

/* A pattern rsp_redirect_domain_check accepts lets its own hosts in. */
static void check_domain(apr_pool_t *p, const char *pattern)
{
    apr_array_header_t *d = apr_array_make(p, 1, sizeof(const char *));
    const char *name = pattern, *host;

    if (rsp_redirect_domain_check(pattern) != NULL) {
        return;
    }
    APR_ARRAY_PUSH(d, const char *) = pattern;
    if (pattern[0] == '*' && pattern[1] == '.') {
        name = pattern + 2;
        if (strlen(name) > 250) {
            return; /* "a." + name would be too long a name */
        }
        host = apr_pstrcat(p, "a.", name, NULL);
    }
    else {
        host = name;
    }
    FUZZ_ASSERT(rsp_redirect_check(apr_pstrcat(p, "https://", host, "/x", NULL),
                                   NULL, d) == NULL);
    FUZZ_ASSERT(rsp_redirect_check(apr_pstrcat(p, "http://", host, ":8080", NULL),
                                   NULL, d) == NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    const char *t = fuzz_cstr(p, data, size);
    apr_array_header_t *domains = apr_array_make(p, 2, sizeof(const char *));
    const char *why;

    APR_ARRAY_PUSH(domains, const char *) = EXACT;
    APR_ARRAY_PUSH(domains, const char *) = "*" WILD_SUFFIX;

    why = rsp_redirect_check(t, SELF, domains);
    if (!why) {
        check_accepted(t);
    }
    /* No self host and no domains: only paths. */
    why = rsp_redirect_check(t, NULL, NULL);
    if (!why) {
        FUZZ_ASSERT(t[0] == '/' && t[1] != '/');
    }
    check_domain(p, t);

    fuzz_pool_end(p);
    return 0;
}
