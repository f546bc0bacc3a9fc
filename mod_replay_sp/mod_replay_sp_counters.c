#include <apr_atomic.h>

#include "mod_replay_sp_counters.h"

const apr_interval_time_t rsp_latency_bounds[RSP_LATENCY_BUCKETS - 1] = {
    1000, 5000, 25000, 100000, 500000
};

/* Per process by design: the segment made in post_config, inherited by
 * every child. */
static rsp_shared_t *shared;

rsp_shared_t *rsp_shared(void)
{
    return shared;
}

void rsp_shared_attach(rsp_shared_t *segment)
{
    shared = segment;
}

void rsp_count_claim(apr_interval_time_t latency, apr_time_t expiry)
{
    int i;
    apr_int64_t seen;

    if (!shared) {
        return;
    }
    for (i = 0; i < RSP_LATENCY_BUCKETS - 1 && latency > rsp_latency_bounds[i];
         i++)
        ;
    apr_atomic_inc32(&shared->latency[i]);
    apr_atomic_add32(&shared->latency_sum_us_lo, (apr_uint32_t)latency);
    /* the latest expiry of any claim: "replays possible until" */
    while ((seen = shared->claim_expiry_max) < expiry) {
        if (__sync_bool_compare_and_swap(&shared->claim_expiry_max, seen,
                                         (apr_int64_t)expiry)) {
            break;
        }
    }
}
