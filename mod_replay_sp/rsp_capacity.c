#include <apr_strings.h>

#include "rsp_capacity.h"

static void line(apr_array_header_t *out, const char *what, double count,
                 apr_int64_t each, const char *why)
{
    rsp_capacity_line_t *l = apr_array_push(out);

    l->what = what;
    l->count = count;
    l->bytes_each = each;
    l->bytes = count * (double)each;
    l->why = why;
}

/* The rate as people write it: APR's %g drops the leading zero (".5"). */
static const char *rate_of(apr_pool_t *p, double rate)
{
    const char *r = apr_psprintf(p, "%g", rate);

    return *r == '.' ? apr_pstrcat(p, "0", r, NULL) : r;
}

apr_array_header_t *rsp_capacity(apr_pool_t *p, const rsp_capacity_in_t *in,
                                 double *total)
{
    apr_array_header_t *out = apr_array_make(p, 5, sizeof(rsp_capacity_line_t));
    double sessions = in->sessions >= 0 ? (double)in->sessions
                                        : in->rate * (double)in->session_s;
    int i;

    line(out, "claims", in->rate * (double)(in->window_s + in->skew_s),
         RSP_BYTES_CLAIM, apr_psprintf(p, "%s/s x (window %" APR_INT64_T_FMT
                                       " s + skew %" APR_INT64_T_FMT " s)",
                                       rate_of(p, in->rate), in->window_s,
                                       in->skew_s));
    line(out, "sessions", sessions, RSP_BYTES_SESSION,
         in->sessions >= 0
             ? apr_psprintf(p, "%" APR_INT64_T_FMT " signed-in users",
                            in->sessions)
             : apr_psprintf(p, "%s/s x session lifetime %" APR_INT64_T_FMT
                            " s", rate_of(p, in->rate), in->session_s));
    line(out, "logout index entries", 2 * sessions, RSP_BYTES_INDEX,
         "2 per session (by SessionIndex, by NameID)");
    if (in->sp_initiated) {
        double held = in->rate * (double)in->request_s;
        const char *why = apr_psprintf(p, "%s/s x request lifetime %"
                                       APR_INT64_T_FMT " s",
                                       rate_of(p, in->rate), in->request_s);
        line(out, "pending requests", held, RSP_BYTES_PENDING, why);
        line(out, "request uses", held, RSP_BYTES_USE, why);
    }
    *total = 0;
    for (i = 0; i < out->nelts; i++) {
        *total += APR_ARRAY_IDX(out, i, rsp_capacity_line_t).bytes;
    }
    if (in->memcached) {
        *total *= RSP_MEMCACHED_FACTOR;
    }
    return out;
}
