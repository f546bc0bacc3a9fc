/* The sign-in core that the ACS and the guard share: after a response has
 * been validated (rsp_saml_process_response) and the front end's own
 * checks have passed, claim its assertion. The claim is one create-if-
 * absent with the TTL rule's expiry; its reply is the verdict. Each front
 * end renders the verdict its own way (the ACS issues a session, the guard
 * hands the body on to the SP). */
#ifndef RSP_SIGNIN_H
#define RSP_SIGNIN_H

#include <apr_pools.h>
#include <apr_time.h>

#include "rsp_claim.h"
#include "rsp_saml.h"
#include "rsp_store.h"

typedef enum {
    RSP_CLAIM_WON = 1,    /* this call created the claim */
    RSP_CLAIM_TAKEN,      /* it existed: a replay, or a re-post */
    RSP_CLAIM_NO_VERDICT, /* the store failed: the outcome is unknown */
    RSP_CLAIM_ABSENT      /* rsp_signin_peek: nobody holds it */
} rsp_claim_verdict_t;

typedef struct {
    rsp_claim_verdict_t verdict;
    const char *key;              /* the claim key */
    const char *value;            /* the record written (to release it if
                                   * still ours: rsp_store_del_if_equal) */
    const char *done_value;       /* the same record, completed (not open) */
    const char *token;            /* the version of ours (WON) or of the
                                   * holder's (TAKEN), for rsp_store_replace */
    const char *assertion_hash;   /* short hash of the assertion ID, for logs */
    apr_time_t expiry;            /* when the claim expires (WON) */
    apr_interval_time_t latency;  /* the claim's round trip (store answered) */
    /* TAKEN: what the claim records (read after the verdict, never part of
     * it); taker_known is 0 when it could not be read */
    rsp_claim_rec_t taker;
    int taker_known;
    const char *holder;           /* TAKEN: the holder's record as stored */
    int taken_over;               /* WON by rsp_signin_takeover */
    const char *error;            /* NO_VERDICT: the store's words */
    int unacked;                  /* NO_VERDICT because the store wrote the
                                   * claim but too few replicas acknowledged
                                   * it (RSP_STORE_UNACKED): it stays */
} rsp_claim_result_t;

/* Claim a's (issuer, ID) under prefix, recording replica, now and
 * session_hash (NULL: none, e.g. the guard); open marks the record as
 * written by a sign-in that completes later (the ACS: see
 * rsp_signin_takeover), else it is complete from the start (the guard). */
void rsp_signin_claim(rsp_claim_result_t *out, apr_pool_t *p, rsp_store_t *st,
                      const char *prefix, const rsp_assertion_t *a,
                      const char *replica, const char *session_hash,
                      apr_time_t now, int open);

/* Whether a's (issuer, ID) is claimed, without claiming it (a response
 * refused before its claim: a replay or a re-post is still told as one):
 * TAKEN with the holder as rsp_signin_claim gives it, ABSENT, or
 * NO_VERDICT when the store could not be read. */
void rsp_signin_peek(rsp_claim_result_t *out, apr_pool_t *p, rsp_store_t *st,
                     const char *prefix, const rsp_assertion_t *a);

/* Whether a TAKEN claim was won by the browser that now presents
 * session_id (its session cookie at the ACS): a re-post (back button,
 * double submit), not a replay. 0 when the claim records no session or
 * could not be read. */
int rsp_signin_is_repost(const rsp_claim_result_t *c, apr_pool_t *p,
                         const char *session_id);

/* The guard's form: where the SP sent the browser that won the claim,
 * when cookie_value (of the cookie the claim names) is the one the SP set
 * then (recorded by its hash); NULL otherwise. */
const char *rsp_signin_repost_target(const rsp_claim_result_t *c,
                                     apr_pool_t *p, const char *cookie_value);

/* Whether a claim held by rec may be taken over at now: only an open one
 * (its sign-in never completed) that is failed (its sign-in ended without
 * a session) or was claimed longer than age ago, age being longer than
 * that sign-in can still take (its store operations are bounded). With
 * age RSP_SIGNIN_FAILED_ONLY, only a failed one (the guard: how long the
 * SP behind it may take is not bounded here). */
#define RSP_SIGNIN_FAILED_ONLY (APR_INT64_C(1) << 60)
int rsp_signin_may_take_over(const rsp_claim_rec_t *rec, apr_time_t now,
                             apr_interval_time_t age);

/* A TAKEN claim that may be taken over (rsp_signin_may_take_over) is, in
 * one compare-and-set against the holder's record: exactly one of any
 * number of concurrent retries wins it (verdict WON, taken_over 1); the
 * others stay TAKEN. The sign-in that lost it cannot complete: completing
 * is a compare-and-set against its own record. A store failure on the
 * compare-and-set is NO_VERDICT (unacked when written but not
 * acknowledged by enough replicas). Only a claim rsp_signin_claim read
 * can be taken over (not one rsp_signin_peek read: it has no record of
 * ours to write). */
void rsp_signin_takeover(rsp_claim_result_t *c, apr_pool_t *p, rsp_store_t *st,
                         apr_time_t now, apr_interval_time_t age);

/* A new session ID (nbytes of randomness, base64url) whose session key
 * under prefix lives on the server that holds home_key: with several
 * memcached servers a sign-in's records stay with its claim, so that a
 * server's outage fails the sign-ins whose claims it holds and no others.
 * Drawn again until it does (about as many draws as servers; the
 * constraint takes log2(servers) bits of the ID's entropy). APR_EGENERAL
 * if the random generator fails. */
apr_status_t rsp_signin_session_id(const char **sid, apr_pool_t *p,
                                   rsp_store_t *st, const char *prefix,
                                   const char *home_key, apr_size_t nbytes);

#endif
