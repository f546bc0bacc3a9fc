/* Where the module may send a browser: the open-redirect rules. */
#ifndef RSP_REDIRECT_H
#define RSP_REDIRECT_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Longest redirect target accepted, in bytes. */
#define RSP_REDIRECT_MAX 2048

/* NULL when target may be followed, else why not (static text).
 *
 * Accepted: an absolute path on this host ("/app?x=1"), or an absolute
 * http/https URL whose host is self_host or matches an entry of domains
 * (const char *: "host.example.org" exactly, or "*.example.org" for any
 * name below example.org). Hosts compare case-insensitively.
 * Refused: empty or longer than RSP_REDIRECT_MAX; control characters,
 * spaces, backslashes or bytes above 0x7e anywhere; "//host" and "/\"
 * (scheme-relative); any other scheme; relative references ("x", "?q",
 * "#f"); user information ("http://a@b/"); an empty or malformed host or
 * port. */
const char *rsp_redirect_check(const char *target, const char *self_host,
                               const apr_array_header_t *domains);

/* NULL when pattern is a valid ReplaySPRedirectDomains entry (a host name
 * or "*." followed by one), else why not. */
const char *rsp_redirect_domain_check(const char *pattern);

#endif
