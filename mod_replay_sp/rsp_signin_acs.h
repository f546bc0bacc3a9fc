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

/* The result's store failure at step f (UNAVAILABLE), with the store's
 * words (NULL: none given); counted in store_errors. */
void rsp_signin_unavailable(rsp_signin_result_t *res, rsp_signin_failure_t f,
                            const char *err);

#endif
