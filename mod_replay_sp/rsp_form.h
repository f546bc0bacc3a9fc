/* application/x-www-form-urlencoded fields: the one reader for queries,
 * the ACS form and the "v=1&k=v" records this module keeps in its store. */
#ifndef RSP_FORM_H
#define RSP_FORM_H

#include <apr_pools.h>

/* The value of name in s (a query, a form body, a record of ours),
 * unescaped ('+' is a space, %XX a byte; a bad escape or %00 refused);
 * NULL when absent or refused, and then *why says why ("NAME given
 * twice", "bad escape in NAME"; left alone when absent). Nothing but the
 * value is copied. */
const char *rsp_form_value(apr_pool_t *p, const char *s, const char *name,
                           const char **why);

/* s[0..n) percent-decoded as a lenient parser would: a bad escape kept as
 * it is; '+' a space with RSP_DECODE_PLUS; %00 kept as it is unless
 * RSP_DECODE_NUL (then the result ends there, as a C reader's would). */
#define RSP_DECODE_PLUS 1
#define RSP_DECODE_NUL 2
char *rsp_form_decode_loose(apr_pool_t *p, const char *s, apr_size_t n,
                            int flags);

/* One field of a record "v=1&a=x&b=y", or NULL (absent, repeated or badly
 * escaped). */
const char *rsp_record_field(apr_pool_t *p, const char *rec, const char *name);

/* s with every byte but A-Z a-z 0-9 - . _ ~ as %XX: safe as a value. */
const char *rsp_form_escape(apr_pool_t *p, const char *s);

/* NULL when a POST body cannot be read differently by two form parsers,
 * else why it can: a parameter name that is percent-encoded (or has '+'),
 * has a byte that is not printable ASCII, or is given twice; a name that
 * some parser reads as a SAML binding's (SAMLResponse, RelayState,
 * SAMLart, SAMLRequest, SigAlg, Signature: in any letter case, after
 * leading punctuation, as a prefix) other than SAMLResponse and RelayState
 * spelled exactly; a ';' (a separator to some parsers); a SAML name that a
 * parser decoding the body before splitting it finds inside a value. The
 * guard refuses such input: the SP behind it must see the message the
 * guard checked. */
const char *rsp_form_ambiguity(apr_pool_t *p, const char *form);

/* NULL when no form parser can read a SAML binding's parameter in query
 * (a request's query string), else why one can: under every reading
 * (percent-decoding before or after splitting at '&' or ';', once or
 * twice, '+' as a space or not), a name read as any of the SAML names
 * above (in any letter case, after leading punctuation, as a prefix); a
 * name with a byte that is not printable ASCII; a bad escape anywhere. */
const char *rsp_form_query_ambiguity(apr_pool_t *p, const char *query);

#endif
