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

/* One field of a record "v=1&a=x&b=y", or NULL (absent, repeated or badly
 * escaped). */
const char *rsp_record_field(apr_pool_t *p, const char *rec, const char *name);

/* s with every byte but A-Z a-z 0-9 - . _ ~ as %XX: safe as a value. */
const char *rsp_form_escape(apr_pool_t *p, const char *s);

/* NULL when a form (is_query 0: a POST body) or a query string (1)
 * cannot be read differently by two parsers, else why it can: in a body,
 * a parameter name that is percent-encoded (or has '+'), given twice, or
 * another spelling (case) of SAMLResponse or RelayState; in a query,
 * SAMLResponse or RelayState at all, however spelled or escaped; a badly
 * escaped name in either. The guard refuses such input: the SP behind it
 * must see the message the guard checked. */
const char *rsp_form_ambiguity(apr_pool_t *p, const char *form, int is_query);

#endif
