#include <errno.h>
#include <string.h>

#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_form.h"
#include "rsp_util.h"

const char *rsp_claim_encode(apr_pool_t *p, const rsp_claim_rec_t *c)
{
    return apr_psprintf(p, "v=1&r=%s&t=%" APR_TIME_T_FMT "%s%s",
                        rsp_form_escape(p, c->replica),
                        apr_time_sec(c->claimed),
                        c->session_hash ? "&s=" : "",
                        c->session_hash ? c->session_hash : "");
}

apr_status_t rsp_claim_decode(rsp_claim_rec_t *c, apr_pool_t *p,
                              const char *val)
{
    const char *v = rsp_record_field(p, val, "v");
    const char *t = rsp_record_field(p, val, "t");
    char *end;
    apr_int64_t secs;

    memset(c, 0, sizeof(*c));
    if (!v || strcmp(v, "1") != 0 || !t || !*t) {
        return APR_EINVAL;
    }
    errno = 0;
    secs = apr_strtoi64(t, &end, 10);
    if (*end || errno || secs <= 0) {
        return APR_EINVAL;
    }
    c->replica = rsp_record_field(p, val, "r");
    c->session_hash = rsp_record_field(p, val, "s");
    if (!c->replica || !*c->replica
        || (c->session_hash && !rsp_is_hash(c->session_hash))) {
        return APR_EINVAL;
    }
    c->claimed = apr_time_from_sec(secs);
    return APR_SUCCESS;
}
