/* Claim keys, hashes, tokens, SAML time parsing and the window/TTL rule. */
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

/* Claim key: prefix + "a:" + base64url(SHA-256(issuer || 0x00 || id)).
 * Returns NULL when issuer or id is NULL or empty. */
const char *rsp_claim_key(apr_pool_t *p, const char *prefix,
                          const char *issuer, const char *id);

/* Session key: prefix + "s:" + base64url(SHA-256(session id)). The
 * session's hash (what claims and the logout index record) is the part
 * after "s:"; NULL in, NULL out. */
const char *rsp_session_key(apr_pool_t *p, const char *prefix,
                            const char *session_id);
const char *rsp_session_hash(apr_pool_t *p, const char *session_id);
const char *rsp_session_key_of_hash(apr_pool_t *p, const char *prefix,
                                    const char *hash);

/* Whether h looks like rsp_sha256_b64url's output (43 base64url chars). */
int rsp_is_hash(const char *h);

/* nbytes of CSPRNG output, base64url. APR_EGENERAL if the CSPRNG fails. */
apr_status_t rsp_random_token(const char **out, apr_pool_t *p, apr_size_t nbytes);

/* Parse an xs:dateTime (YYYY-MM-DDThh:mm:ss[.fff][Z|(+|-)hh:mm]).
 * A value without zone designator is taken as UTC (SAML requires UTC). */
apr_status_t rsp_parse_time(apr_time_t *out, const char *s);

/* The times of one assertion that decide its window; 0 = absent. */
typedef struct {
    apr_time_t conditions_not_before;
    apr_time_t conditions_not_on_or_after;
    apr_time_t scd_not_before;
    apr_time_t scd_not_on_or_after;
} rsp_times_t;

typedef enum {
    RSP_WINDOW_OK = 0,
    RSP_WINDOW_MISSING,       /* no NotOnOrAfter at all */
    RSP_WINDOW_EXPIRED,       /* now >= window end + skew */
    RSP_WINDOW_NOT_YET_VALID, /* now + skew < a NotBefore */
    RSP_WINDOW_TOO_LONG       /* window end - now > max_window */
} rsp_window_verdict_t;

const char *rsp_window_verdict_name(rsp_window_verdict_t v);

/* The window rule (DESIGN.md invariant 4):
 *   window_end = min(SCD NotOnOrAfter, Conditions NotOnOrAfter)
 *   ttl_ms     = ceil((window_end - now) / 1 ms) + skew
 * skew and max_window in seconds. On RSP_WINDOW_OK, *window_end and
 * *ttl_ms are set (ttl_ms >= 1). */
rsp_window_verdict_t rsp_window_check(const rsp_times_t *t, apr_time_t now,
                                      apr_int64_t skew_s,
                                      apr_int64_t max_window_s,
                                      apr_time_t *window_end,
                                      apr_int64_t *ttl_ms);

/* ttl in milliseconds rounded up to whole seconds (memcached expiry). */
apr_int64_t rsp_ttl_seconds(apr_int64_t ttl_ms);

/* Format an apr_time_t as xs:dateTime UTC with seconds ("...Z"). */
const char *rsp_format_time(apr_pool_t *p, apr_time_t t);

#endif
