/* The ACS's sign-in, everything it does with the store, after the
 * response has been validated (rsp_saml_process_response) and the
 * front end's own policy checks have passed: the pending request a
 * solicited response answers, checked before the claim; the claim and
 * its verdict (re-post, replay, takeover); the request used up; the
 * session, its logout index entries and the claim's completion in one
 * batch; the claim released when that fails. One result says what
 * happened; the HTTP glue renders it (status, headers, one log line) and
 * does nothing else with the store. No httpd here. */
#ifndef RSP_SIGNIN_ACS_H
#define RSP_SIGNIN_ACS_H

#include "rsp_pending.h"
#include "rsp_signin.h"

typedef enum {
    RSP_SIGNIN_ACCEPTED = 1, /* a session: sid, target (failed_open: no
                              * claim, ReplaySPOnStoreFailure open) */
    RSP_SIGNIN_REPOST,       /* the browser that won the claim posted it
                              * again: target, no new session */
    RSP_SIGNIN_REPLAY,       /* the claim is someone else's */
    RSP_SIGNIN_REFUSED,      /* by a check: check, detail */
    RSP_SIGNIN_UNAVAILABLE   /* the store failed: failure, error */
} rsp_signin_outcome_t;

/* Which step the store failed at (UNAVAILABLE), each its own log line. */
typedef enum {
    RSP_FAILED_NONE = 0,
    RSP_FAILED_REQUEST_READ, /* reading the pending request: nothing claimed */
    RSP_FAILED_RANDOM,       /* the random generator (not the store) */
    RSP_FAILED_CLAIM,        /* no verdict on the claim */
    RSP_FAILED_UNACKED,      /* the claim (or takeover) written, too few
                              * replicas acknowledged it: it stays */
    RSP_FAILED_REQUEST_USE,  /* using the request up: the claim stays */
    RSP_FAILED_SESSION,      /* the session's writes: released says what
                              * became of the claim */
    RSP_FAILED_ABANDONED     /* the claim was taken over before this
                              * sign-in completed: its session deleted */
} rsp_signin_failure_t;

typedef struct {
    rsp_store_t *st;
    const char *prefix;            /* ReplaySPKeyPrefix */
    const rsp_assertion_t *a;      /* validated */
    const char *sp;                /* this SP's entity ID */
    const char *replica;           /* for the records */
    apr_time_t now;
    const char *relay;             /* RelayState (NULL: none) */
    const char *session_cookie;    /* the browser's session ID (NULL: none) */
    const char *cookie_name;       /* the session cookie's name (it names
                                    * the binding cookies) */
    const char *cookie_header;     /* the browser's Cookie (NULL: none) */
    apr_int64_t request_lifetime_s;
    apr_int64_t session_lifetime_ms;  /* this session's (capped by the
                                       * assertion's SessionNotOnOrAfter) */
    apr_int64_t index_ttl_ms;      /* the longest any session lives */
    int fail_open;                 /* ReplaySPOnStoreFailure open */
} rsp_signin_acs_in_t;

typedef struct {
    rsp_signin_outcome_t outcome;
    rsp_signin_failure_t failure;
    const char *check, *detail;    /* REFUSED */
    const char *error;             /* UNAVAILABLE, failed_open: the store's
                                    * words */
    const char *sid;               /* ACCEPTED: the new session's ID */
    const char *target;            /* ACCEPTED, REPOST: where to */
    int expire_binding;            /* ACCEPTED: the request's binding
                                    * cookies are done with */
    int failed_open;               /* ACCEPTED without a claim */
    const char *released;          /* FAILED_SESSION: "released", "kept
                                    * (...)", or NULL: there was no claim */
    const char *request;           /* short hash of the request ID */
    int verdicts;                  /* claim verdicts reached (the latency
                                    * and expiry counters): 0 or 1 */
    int won;                       /* the claim was won (or taken over) */
    int store_errors;              /* store failures along the way */
    rsp_claim_result_t claim;      /* the claim's facts, for the lines */
} rsp_signin_result_t;

/* How old an open claim must be before a retry may take it over: longer
 * than the sign-in that won it can still take after winning (consuming
 * its request, its writes, releasing the claim: each bounded by the
 * store's timeout). */
apr_interval_time_t rsp_signin_takeover_age(const rsp_store_t *st);

/* The sign-in of one validated response at the ACS. */
void rsp_signin_acs(rsp_signin_result_t *res, apr_pool_t *p,
                    const rsp_signin_acs_in_t *in);

/* The guard's sign-in, in front of another SP: the claim, complete from
 * the start (the SP behind makes the session). ACCEPTED: won (hand the
 * request on; failed_open: without a claim); REPOST: the browser that won
 * it, by the SP's session cookie the claim records (cookie() gives the
 * request's value of a cookie by name, NULL: none), sent where the SP
 * sent it (target); REPLAY; UNAVAILABLE (RSP_FAILED_CLAIM, _UNACKED). */
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

/* After the SP answered a response whose claim (key, holding value, until
 * expiry) the guard won: record in it the SP's session cookie (name, and
 * value by its hash) and where the SP sent the browser (target), so that
 * the same browser's re-post gets that answer again. The claim's expiry
 * stays what it was; nothing is written when less than a second is left
 * or value is not a claim record. */
apr_status_t rsp_signin_guard_record(rsp_store_t *st, apr_pool_t *p,
                                     const char *key, const char *value,
                                     apr_time_t expiry, const char *cookie_name,
                                     const char *cookie_value,
                                     const char *target, apr_time_t now,
                                     const char **err);

#endif
