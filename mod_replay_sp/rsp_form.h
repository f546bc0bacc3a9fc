/* application/x-www-form-urlencoded text: queries and the ACS form, read
 * with the reader of the store's records (rsp_record.h), and how two
 * form parsers may read the same text differently. */
#ifndef RSP_FORM_H
#define RSP_FORM_H

#include <apr_pools.h>

/* The value of name in s (a query, a form body; rsp_record_get),
 * unescaped ('+' is a space, %XX a byte; a bad escape or %00 refused);
 * NULL when absent or refused, and then *why says why ("NAME given
 * twice", "bad escape in NAME"; left alone when absent). Nothing but the
 * value is copied. */
const char *rsp_form_value(apr_pool_t *p, const char *s, const char *name,
                           const char **why);

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
