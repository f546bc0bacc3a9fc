#include "rsp_window.h"

const char *rsp_window_verdict_name(rsp_window_verdict_t v)
{
    switch (v) {
    case RSP_WINDOW_OK:
        return "ok";
    case RSP_WINDOW_MISSING:
        return "window-missing";
    case RSP_WINDOW_EXPIRED:
        return "expired";
    case RSP_WINDOW_NOT_YET_VALID:
        return "not-yet-valid";
    case RSP_WINDOW_TOO_LONG:
        return "window-too-long";
    }
    return "unknown";
}

rsp_window_verdict_t rsp_window_check(const rsp_times_t *t, apr_time_t now,
                                      apr_int64_t skew_s,
                                      apr_int64_t max_window_s,
                                      apr_time_t *window_end,
                                      apr_int64_t *ttl_ms)
{
    apr_time_t end = 0, skew = apr_time_from_sec(skew_s);
    apr_int64_t remaining_us;

    if (t->scd_not_on_or_after) {
        end = t->scd_not_on_or_after;
    }
    if (t->conditions_not_on_or_after
        && (!end || t->conditions_not_on_or_after < end)) {
        end = t->conditions_not_on_or_after;
    }
    if (!end) {
        return RSP_WINDOW_MISSING;
    }
    if (now >= end + skew) {
        return RSP_WINDOW_EXPIRED;
    }
    if ((t->conditions_not_before && now + skew < t->conditions_not_before)
        || (t->scd_not_before && now + skew < t->scd_not_before)) {
        return RSP_WINDOW_NOT_YET_VALID;
    }
    /* An IdP whose clock is ahead of ours (by up to the skew) sends a
     * window that looks that much longer here: Entra's 65 minutes after a
     * NotBefore back-dated 5 minutes, from a clock 30 s ahead, is 60 min
     * 30 s of remaining validity on ours. The skew that lets its NotBefore
     * pass lets its end pass too. */
    remaining_us = end - now;
    if (remaining_us > apr_time_from_sec(max_window_s + skew_s)) {
        return RSP_WINDOW_TOO_LONG;
    }
    *window_end = end;
    /* Round the remaining window up to the millisecond; then add the skew.
     * remaining_us may be negative (inside the skew): the sum stays > 0. */
    if (remaining_us >= 0) {
        *ttl_ms = (remaining_us + 999) / 1000 + skew_s * 1000;
    }
    else {
        *ttl_ms = -((-remaining_us) / 1000) + skew_s * 1000;
    }
    if (*ttl_ms < 1) {
        *ttl_ms = 1;
    }
    return RSP_WINDOW_OK;
}
