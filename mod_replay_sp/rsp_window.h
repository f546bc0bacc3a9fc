/* The assertion validity window and the claim TTL derived from it
 * (DESIGN.md invariant 4): whether an assertion may be claimed now, and
 * for how long its claim must outlive it. */
#ifndef RSP_WINDOW_H
#define RSP_WINDOW_H

#include <apr_time.h>

/* The times of one assertion that decide its window; 0 = absent. */
typedef struct {
    apr_time_t conditions_not_before;
    apr_time_t conditions_not_on_or_after;
    apr_time_t scd_not_before;
    apr_time_t scd_not_on_or_after;
} rsp_times_t;

typedef enum {
    RSP_WINDOW_OK = 0,
    RSP_WINDOW_MISSING,       /* no NotOnOrAfter at all */
    RSP_WINDOW_EXPIRED,       /* now >= window end + skew */
    RSP_WINDOW_NOT_YET_VALID, /* now + skew < a NotBefore */
    RSP_WINDOW_TOO_LONG       /* window end - now > max_window + skew */
} rsp_window_verdict_t;

const char *rsp_window_verdict_name(rsp_window_verdict_t v);

/* The window rule (DESIGN.md invariant 4):
 *   window_end = min(SCD NotOnOrAfter, Conditions NotOnOrAfter)
 *   ttl_ms     = ceil((window_end - now) / 1 ms) + skew
 * skew and max_window in seconds. The remaining window may exceed
 * max_window by the skew (an IdP clock ahead of ours), so a claim lives at
 * most max_window + 2 * skew. On RSP_WINDOW_OK, *window_end and *ttl_ms
 * are set (ttl_ms >= 1). */
rsp_window_verdict_t rsp_window_check(const rsp_times_t *t, apr_time_t now,
                                      apr_int64_t skew_s,
                                      apr_int64_t max_window_s,
                                      apr_time_t *window_end,
                                      apr_int64_t *ttl_ms);

#endif
