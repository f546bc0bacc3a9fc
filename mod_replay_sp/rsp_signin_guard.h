/* The guard's sign-in, everything it does with the store, in front of
 * another SP (mod_replay_sp_guard.c renders it): the claim of a validated
 * response, open while the SP behind answers, and its completion with
 * what the SP answered. No httpd here. */
#ifndef RSP_SIGNIN_GUARD_H
#define RSP_SIGNIN_GUARD_H

#include "rsp_signin_acs.h"

/* The guard's sign-in, in front of another SP: the claim, open until the
 * SP has answered (rsp_signin_guard_finish; the SP behind makes the
 * session). ACCEPTED: won (hand the request on; failed_open: without a
 * claim; claim.taken_over: from a sign-in whose SP answered a server error
 * without a session, by one compare-and-set); REPOST: the browser that won
 * it, by the SP's session cookie the claim records (cookie() gives the
 * request's value of a cookie by name, NULL: none), sent where the SP
 * sent it (target); REPLAY (a claim completed, or open while its SP
 * answers); UNAVAILABLE (RSP_FAILED_CLAIM, _UNACKED). */
typedef struct {
    rsp_store_t *st;
    const char *prefix;
    const rsp_assertion_t *a;
    const char *replica;
    apr_time_t now;
    const char *(*cookie)(void *baton, const char *name);
    void *baton;
    int fail_open;
} rsp_signin_guard_in_t;

void rsp_signin_guard(rsp_signin_result_t *res, apr_pool_t *p,
                      const rsp_signin_guard_in_t *in);

/* After the SP answered a response whose claim (key, holding value) the
 * guard won: the claim completed, with the SP's session cookie (name, and
 * value by its hash) and where the SP sent the browser (target) when it
 * set one (terminal whatever its status: at most one session per
 * assertion), or without them when it answered below 500; left open and
 * marked failed when it answered a server error (status >= 500: a proxy's
 * 502/503/504, the SP's own 500) without a session, so that a retry takes
 * it over (*failed). One compare-and-set against value, the expiry kept:
 * *replaced 0 when the claim is no longer that (taken over, or gone). */
apr_status_t rsp_signin_guard_finish(rsp_store_t *st, apr_pool_t *p,
                                     const char *key, const char *value,
                                     int status, const char *cookie_name,
                                     const char *cookie_value,
                                     const char *target, int *failed,
                                     int *replaced, const char **err);

#endif
