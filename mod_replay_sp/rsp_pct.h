/* Percent-encoding: the one decoder of this module (queries, forms, store
 * records, store URLs, request paths) with the rules its readers differ
 * in, and the one escaper with the two sets of bytes the records escape. */
#ifndef RSP_PCT_H
#define RSP_PCT_H

#include <apr_pools.h>

/* The decoder's rules. Without a flag: %XX is the byte XX (hex digits in
 * either case); a '%' not followed by two hex digits, or %00, refuses
 * the whole text; '+' is itself. */
#define RSP_PCT_PLUS 1    /* '+' is a space (the form rule) */
#define RSP_PCT_LENIENT 2 /* nothing refused: a bad escape, and %00, kept
                           * as they are (as a lenient parser reads them) */
#define RSP_PCT_NUL 4     /* %00 decoded as any other escape (a C reader's
                           * text then ends there), not refused or kept */

/* The hex digit c's value, -1 when c is not one. */
int rsp_pct_hexval(int c);

/* s[0..n) decoded under flags into a new NUL-terminated string (s need
 * not be NUL-terminated; only its n bytes are read); NULL when refused.
 * *outlen (when not NULL) is the decoded length (with RSP_PCT_NUL it may
 * count bytes after a decoded NUL). */
char *rsp_pct_decode(apr_pool_t *p, const char *s, apr_size_t n, int flags,
                     apr_size_t *outlen);

/* Which bytes rsp_pct_escape writes as %XX (upper-case hex). Letters and
 * digits are ASCII's, whatever the locale. */
typedef enum {
    /* every byte but A-Z a-z 0-9 - . _ ~ (claims, request uses and
     * pending requests: their values are read with the form rule) */
    RSP_PCT_UNRESERVED = 0,
    /* only controls, space, bytes from 0x7F up, '%', '&' and '=': '+'
     * and other punctuation are themselves (sessions) */
    RSP_PCT_MINIMAL = 1
} rsp_pct_set_t;

/* Whether set escapes byte c. */
int rsp_pct_escapes(rsp_pct_set_t set, unsigned char c);

/* s with the bytes of set escaped. */
const char *rsp_pct_escape(apr_pool_t *p, const char *s, rsp_pct_set_t set);

/* The same written at out (room for strlen(s) * 3 + 1 bytes), NUL
 * included; returns where the NUL is. */
char *rsp_pct_escape_into(char *out, const char *s, rsp_pct_set_t set);

#endif
