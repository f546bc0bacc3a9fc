/* What the rsp_saml*.c files share and nothing else needs. */
#ifndef RSP_SAML_INT_H
#define RSP_SAML_INT_H

/* A certificate, DER. */
typedef struct {
    unsigned char *der;
    int len;
} der_t;

/* The check= name of a Lasso error code. */
const char *rsp_saml_check_of(int rc);

/* Parse an optional time attribute (absent: 0); 0 when malformed. */
int rsp_saml_opt_time(const char *s, apr_time_t *out);

/* Refuse with a check name and a detail: in functions with p, check,
 * detail, rv and a label done. */
#define REFUSE(c, ...) do {                                   \
        *check = (c);                                          \
        *detail = apr_psprintf(p, __VA_ARGS__);                \
        rv = APR_EGENERAL;                                     \
        goto done;                                             \
    } while (0)

#endif
