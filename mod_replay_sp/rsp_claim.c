#include <errno.h>
#include <string.h>

#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_form.h"
#include "rsp_util.h"

#define RSP_CLAIM_MAX_TIME APR_INT64_C(253402300799) /* 9999-12-31T23:59:59Z */

const char *rsp_claim_encode(apr_pool_t *p, const rsp_claim_rec_t *c)
{
    const char *rec = apr_psprintf(p, "v=1&r=%s&t=%" APR_TIME_T_FMT "%s%s%s",
                                   rsp_form_escape(p, c->replica),
                                   apr_time_sec(c->claimed),
                                   c->session_hash ? "&s=" : "",
                                   c->session_hash ? c->session_hash : "",
                                   c->open ? "&o=1" : "");

    if (c->cookie_name && c->cookie_hash) {
        rec = apr_pstrcat(p, rec, "&cn=", rsp_form_escape(p, c->cookie_name),
                          "&ch=", c->cookie_hash, NULL);
    }
    if (c->target) {
        rec = apr_pstrcat(p, rec, "&l=", rsp_form_escape(p, c->target), NULL);
    }
    return rec;
}

apr_status_t rsp_claim_decode(rsp_claim_rec_t *c, apr_pool_t *p,
                              const char *val)
{
    const char *v = rsp_record_field(p, val, "v");
    const char *t = rsp_record_field(p, val, "t");
    const char *o = rsp_record_field(p, val, "o");
    char *end;
    apr_int64_t secs;

    memset(c, 0, sizeof(*c));
    if (!v || strcmp(v, "1") != 0 || !t || !*t) {
        return APR_EINVAL;
    }
    errno = 0;
    secs = apr_strtoi64(t, &end, 10);
    /* a time in seconds before the year 10000: in microseconds it fits */
    if (*end || errno || secs <= 0 || secs > RSP_CLAIM_MAX_TIME) {
        return APR_EINVAL;
    }
    c->replica = rsp_record_field(p, val, "r");
    c->session_hash = rsp_record_field(p, val, "s");
    c->cookie_name = rsp_record_field(p, val, "cn");
    c->cookie_hash = rsp_record_field(p, val, "ch");
    c->target = rsp_record_field(p, val, "l");
    if (o && strcmp(o, "1") != 0) {
        return APR_EINVAL;
    }
    c->open = o != NULL;
    if (!c->replica || !*c->replica
        || (c->session_hash && !rsp_is_hash(c->session_hash))
        || (!c->cookie_name != !c->cookie_hash)
        || (c->cookie_hash && !rsp_is_hash(c->cookie_hash))) {
        return APR_EINVAL;
    }
    c->claimed = apr_time_from_sec(secs);
    return APR_SUCCESS;
}
