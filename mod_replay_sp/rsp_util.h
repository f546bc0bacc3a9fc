/* Hashes, tokens, SAML time parsing and formatting, and a TTL as
 * memcached's expiry. (Claim keys are rsp_claim.h's, session keys
 * rsp_session.h's, the window/TTL rule rsp_window.h's.) */
#ifndef RSP_UTIL_H
#define RSP_UTIL_H

#include <apr_pools.h>
#include <apr_time.h>

/* Length of base64url(SHA-256(...)) without padding. */
#define RSP_HASH_B64_LEN 43

/* base64url without padding of len bytes. */
const char *rsp_b64url(apr_pool_t *p, const unsigned char *buf, apr_size_t len);

/* Strict standard base64, decoded in one pass: the characters A-Z a-z
 * 0-9 + /, a length that is a multiple of 4, at most two '=' and only at
 * the end; ASCII whitespace (space, tab, CR, LF) is skipped when
 * skip_space, refused otherwise. *out is NUL-terminated (the NUL is not
 * counted in *outlen). -1 when s is not such base64 (or empty), else 0. */
int rsp_b64_decode(apr_pool_t *p, const char *s, int skip_space,
                   char **out, apr_size_t *outlen);

/* base64url(SHA-256(data)) : 43 characters. */
const char *rsp_sha256_b64url(apr_pool_t *p, const void *data, apr_size_t len);

/* First 12 characters of rsp_sha256_b64url(s): for log lines. */
const char *rsp_short_hash(apr_pool_t *p, const char *s);

/* Whether h looks like rsp_sha256_b64url's output (43 base64url chars). */
int rsp_is_hash(const char *h);

/* nbytes of CSPRNG output, base64url. APR_EGENERAL if the CSPRNG fails. */
apr_status_t rsp_random_token(const char **out, apr_pool_t *p, apr_size_t nbytes);

/* Parse an xs:dateTime (YYYY-MM-DDThh:mm:ss[.fff][Z|(+|-)hh:mm]).
 * A value without zone designator is taken as UTC (SAML requires UTC). */
apr_status_t rsp_parse_time(apr_time_t *out, const char *s);

/* ttl in milliseconds rounded up to whole seconds (memcached expiry). */
apr_int64_t rsp_ttl_seconds(apr_int64_t ttl_ms);

/* Format an apr_time_t as xs:dateTime UTC with seconds ("...Z"). */
const char *rsp_format_time(apr_pool_t *p, apr_time_t t);

/* s as a JSON string, quotes included ("null" for NULL); '<', '>', '&',
 * U+2028 and U+2029 escaped too, so that it can stand in an HTML page. */
const char *rsp_json_string(apr_pool_t *p, const char *s);

/* s with &, <, >, " and ' as entities: text or an attribute value in
 * HTML or XML. */
const char *rsp_html_escape(apr_pool_t *p, const char *s);

/* s (NULL: "") without the spaces, tabs and line ends around it, in p:
 * an XML element's text as written. */
const char *rsp_trimmed(apr_pool_t *p, const char *s);

#endif
