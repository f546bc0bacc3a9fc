/* Binding a pending sign-in to the browser that started it (login CSRF).
 *
 * The login step gives the browser a random value in a cookie named after
 * the request's RelayState token, and keeps the value's hash with the
 * pending request; the ACS consumes the request only for a browser that
 * presents it. The cookie is HttpOnly, limited to the endpoint path and
 * lives as long as the request. The answer to the AuthnRequest arrives as
 * a cross-site POST: on https the cookie is SameSite=None; Secure, with a
 * twin without SameSite (the fallback for browsers that mishandle None);
 * on plain http it has no SameSite attribute (browsers reject None without
 * Secure). No I/O and no httpd here. */
#ifndef RSP_BINDING_H
#define RSP_BINDING_H

#include <apr_pools.h>
#include <apr_tables.h>

/* The cookie of the request whose RelayState token is token: cookie
 * (the session cookie's name) + "_req_" + 16 characters of its hash. The
 * fallback twin adds "_l". */
const char *rsp_binding_cookie_name(apr_pool_t *p, const char *cookie,
                                    const char *token);

/* Set-Cookie values (pushed onto out, const char *) giving value under
 * name for max_age seconds on path; max_age 0 expires them. */
void rsp_binding_set_cookies(apr_pool_t *p, const char *name,
                             const char *value, const char *path,
                             long max_age, int https,
                             apr_array_header_t *out);

/* Whether the request's Cookie header (NULL: none) holds name (or its
 * twin) with a value whose hash is bind_hash. When not, *why says how:
 * "no binding cookie" or "a binding cookie of another browser". */
int rsp_binding_matches(apr_pool_t *p, const char *cookie_header,
                        const char *name, const char *bind_hash,
                        const char **why);

#endif
