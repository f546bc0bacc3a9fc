/* The "name=value&name=value" form: the one encoder of the records this
 * module keeps in its store (claims and request uses, rsp_claim.h;
 * pending requests, rsp_pending.h; sessions, rsp_session.h) and the one
 * reader of their fields, which also reads queries and form bodies
 * (rsp_form.h). Any replica, of any version, reads what another wrote, so
 * a record's bytes never change for the same fields: each record keeps
 * the escaping (rsp_record_kind_t) it has always had.
 *
 * Fields are the pieces of the text between '&' (an empty last piece,
 * after a trailing '&' or of an empty text, is none); a field's name is
 * what precedes its first '=', its value what follows it (a field
 * without '=' has no value). */
#ifndef RSP_RECORD_H
#define RSP_RECORD_H

#include <apr_pools.h>

typedef enum {
    /* Claims, request uses, pending requests, and queries and forms: values
     * escaped as RSP_PCT_UNRESERVED, read with the form rule ('+' a space),
     * a bad escape or %00 refused. */
    RSP_RECORD_FORM = 0,
    /* Sessions: values escaped as RSP_PCT_MINIMAL ('+' is itself), read
     * without the form rule, a bad escape or %00 refused. */
    RSP_RECORD_SESSION = 1
} rsp_record_kind_t;

typedef struct {
    const char *name;  /* written as it is: no '&', '=' or '%' in it */
    const char *value; /* escaped as kind says; NULL: the field left out */
} rsp_record_field_t;

/* "name=value&..." of the n fields with a value, in order. */
const char *rsp_record_encode(apr_pool_t *p, rsp_record_kind_t kind,
                              const rsp_record_field_t *fields, int n);

/* v in decimal ("-" before a negative one), as "%" APR_INT64_T_FMT. */
const char *rsp_record_number(apr_pool_t *p, apr_int64_t v);

/* The fields of rec[0..len) in order (rec need not be NUL-terminated). */
typedef struct {
    const char *cur;
    const char *end;
} rsp_record_iter_t;

typedef struct {
    const char *name;   /* not NUL-terminated: name_len bytes */
    apr_size_t name_len;
    const char *value;  /* still escaped, value_len bytes; NULL: no '=' */
    apr_size_t value_len;
} rsp_record_piece_t;

void rsp_record_iter_init(rsp_record_iter_t *it, const char *rec,
                          apr_size_t len);

/* The next field into *f; 0 when there is none left. */
int rsp_record_next(rsp_record_iter_t *it, rsp_record_piece_t *f);

/* Whether f is named name (a NUL-terminated name without '='). */
int rsp_record_is(const rsp_record_piece_t *f, const char *name);

/* f's value unescaped as kind reads it ("" for a field without '='); NULL
 * when refused (a bad escape, %00). */
char *rsp_record_unescape(apr_pool_t *p, rsp_record_kind_t kind,
                          const rsp_record_piece_t *f);

/* The values of the fields names[0..n) (names without '=') of rec[0..len),
 * in one pass: values[i] unescaped, or NULL when absent, given twice or
 * refused; *why (when not NULL), for the first name in names order that
 * was given twice or refused: "NAME given twice", "bad escape in NAME"
 * (left alone otherwise). */
void rsp_record_lookup(apr_pool_t *p, rsp_record_kind_t kind, const char *rec,
                       apr_size_t len, const char *const *names, int n,
                       const char **values, const char **why);

/* One field's value of a NUL-terminated rec (rsp_record_lookup). */
const char *rsp_record_get(apr_pool_t *p, rsp_record_kind_t kind,
                           const char *rec, const char *name,
                           const char **why);

#endif
