/* Counters in shared memory (mod_replay_sp_counters.c): what any child
 * counts and the monitor publishes; the endpoints only count. */
#ifndef MOD_REPLAY_SP_COUNTERS_H
#define MOD_REPLAY_SP_COUNTERS_H

#include <apr_atomic.h>
#include <apr_time.h>

#define RSP_LATENCY_BUCKETS 6
/* upper bounds of the claim latency buckets, microseconds; the last is +Inf */
extern const apr_interval_time_t rsp_latency_bounds[RSP_LATENCY_BUCKETS - 1];

/* Per host, in shared memory: counters any child increments, and what the
 * poller last saw (written by the poller only). */
typedef struct {
    apr_uint32_t claims_won;
    apr_uint32_t replays_refused;
    apr_uint32_t replays_reported;      /* ReplaySPGuard Report: passed on */
    apr_uint32_t guard_reported;        /* every refusal Report passed on */
    apr_uint32_t store_errors;
    apr_uint32_t fail_open;
    apr_uint32_t lasso_servers_built;   /* in child_init, one per thread */
    apr_uint32_t latency[RSP_LATENCY_BUCKETS];
    apr_uint32_t latency_sum_us_lo;     /* sum of claim latencies (wraps) */
    volatile apr_int64_t claim_expiry_max; /* latest expiry of a claim, us */
    volatile apr_int64_t last_poll;     /* us since epoch; 0 = never */
    volatile apr_int64_t used;          /* bytes, all servers */
    volatile apr_int64_t limit;         /* bytes, all servers; 0 = none */
    volatile apr_int64_t evictions_seen;
    volatile apr_int32_t store_up;      /* 1 all reachable, 0 not, -1 unknown */
    volatile apr_int32_t alarms_raised;
} rsp_shared_t;

/* NULL before post_config or when shared memory could not be made. */
rsp_shared_t *rsp_shared(void);
/* The segment made in post_config (NULL: none), inherited by every
 * child. */
void rsp_shared_attach(rsp_shared_t *segment);
/* A claim the store answered: its latency and the claim's expiry. */
void rsp_count_claim(apr_interval_time_t latency, apr_time_t expiry);
/* One more of a counter: RSP_COUNT(replays_refused). */
#define RSP_COUNT(field) do {                          \
        rsp_shared_t *sh_ = rsp_shared();              \
        if (sh_) {                                     \
            apr_atomic_inc32(&sh_->field);             \
        }                                              \
    } while (0)

#endif
