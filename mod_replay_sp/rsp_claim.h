/* The records of a claim and of a used request ID: who took it and when,
 * and, for a sign-in's claim, which session it made. Stored as
 * "v=1&r=REPLICA&t=SECONDS[&s=SESSION-HASH][&o=1[&f=1]][&cn=NAME&ch=HASH&l=URL]"
 * (rsp_record.h, RSP_RECORD_FORM: values URL-encoded) under the claim key
 * (rsp_claim_key) or a request's use key; any replica (and the replay-sp
 * tool) reads what another wrote. The verdict of a claim is the store's
 * reply to create-if-absent, never this record: it only says by whom. */
#ifndef RSP_CLAIM_H
#define RSP_CLAIM_H

#include <apr_pools.h>
#include <apr_time.h>

typedef struct {
    const char *replica;      /* ReplaySPReplicaName, or host:port */
    apr_time_t claimed;       /* when, whole seconds */
    const char *session_hash; /* base64url SHA-256 of the session ID it
                               * created (rsp_session_hash); NULL: none */
    int open;                 /* o=1: written by an ACS whose sign-in has
                               * not completed (yet, or ever): the only
                               * claims a retry may take over */
    int failed;               /* f=1 (open only): its sign-in ended without
                               * a session (the SP behind the guard answered
                               * a server error and set none): a retry may
                               * take it over at once */
    /* guard: the session cookie the SP behind it set for the browser that
     * won (its name, and base64url SHA-256 of its value) and where the SP
     * sent that browser; NULL: not recorded */
    const char *cookie_name;
    const char *cookie_hash;
    const char *target;
} rsp_claim_rec_t;

/* Claim key: prefix + "a:" + base64url(SHA-256(issuer || 0x00 || id)).
 * Returns NULL when issuer or id is NULL or empty. */
const char *rsp_claim_key(apr_pool_t *p, const char *prefix,
                          const char *issuer, const char *id);

const char *rsp_claim_encode(apr_pool_t *p, const rsp_claim_rec_t *c);

/* APR_EINVAL unless val is a version-1 record with a replica and a time
 * (and, when present, a well-formed session hash). */
apr_status_t rsp_claim_decode(rsp_claim_rec_t *c, apr_pool_t *p,
                              const char *val);

#endif
