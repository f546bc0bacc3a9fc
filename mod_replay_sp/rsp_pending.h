/* The requests this SP sent and waits for an answer to, and the requests
 * an IdP sent it, as store records and keys:
 *
 *   <prefix>q:<hash of request ID>  a pending AuthnRequest, for
 *       ReplaySPRequestLifetime: "v=1&i=IDP&p=SP&h=HASH&u=RETURN[&b=BIND]",
 *       values URL-encoded; HASH is the SHA-256 of the RelayState token,
 *       RETURN the checked return URL (the browser only ever sees the
 *       token), BIND the SHA-256 of the binding cookie's value
 *       (rsp_binding.h; absent: the request is not bound).
 *   <prefix>l:<hash of request ID>  the same for a pending LogoutRequest.
 *   <prefix>u:<hash of request ID>  its use: created with the same
 *       create-if-absent as an assertion claim (an rsp_claim record), so a
 *       request is answered once, fleet-wide.
 *   <prefix>i:<hash of IdP 0x00 request ID>  an IdP's LogoutRequest,
 *       taken once (an rsp_claim record). */
#ifndef RSP_PENDING_H
#define RSP_PENDING_H

#include <apr_pools.h>
#include <apr_time.h>

#include "rsp_store.h"

typedef enum { RSP_PENDING_LOGIN, RSP_PENDING_LOGOUT } rsp_pending_kind_t;

typedef struct {
    const char *idp;
    const char *sp;
    const char *relay_hash;   /* SHA-256 of the RelayState token */
    const char *return_to;
    const char *bind_hash;    /* SHA-256 of the binding value; NULL: none */
} rsp_pending_t;

const char *rsp_pending_key(apr_pool_t *p, const char *prefix,
                            rsp_pending_kind_t kind, const char *request_id);
const char *rsp_pending_use_key(apr_pool_t *p, const char *prefix,
                                const char *request_id);
const char *rsp_idp_request_key(apr_pool_t *p, const char *prefix,
                                const char *issuer, const char *request_id);

/* The record of a request sent to idp for sp, with RelayState token, the
 * checked return URL and the browser's binding value (NULL: not bound). */
const char *rsp_pending_encode(apr_pool_t *p, const char *idp, const char *sp,
                               const char *token, const char *return_to,
                               const char *binding);

/* NULL unless val is a version-1 record with every field. */
rsp_pending_t *rsp_pending_decode(apr_pool_t *p, const char *val);

/* Whether token is the RelayState token the record was made with. */
int rsp_pending_relay_matches(apr_pool_t *p, const rsp_pending_t *pd,
                              const char *token);

/* A response answering a request, as the request's checks see it. */
typedef struct {
    const char *rid;           /* the request ID's short hash, for details */
    const char *sp;            /* the SP it was posted to */
    const char *issuer;        /* the IdP it comes from */
    const char *relay;         /* its RelayState (NULL: none) */
    const char *cookie_base;   /* a sign-in: the session cookie's name, which
                                * names the binding cookie; NULL: a logout
                                * (not bound) */
    const char *cookie_header; /* the posting browser's Cookie (NULL: none) */
    apr_int64_t lifetime_s;    /* ReplaySPRequestLifetime, for details */
} rsp_pending_answer_t;

/* The checks of a response against the record val (NULL: absent) of the
 * request it answers, in order: request-unknown (absent, expired or
 * malformed), request-mismatch (sent to another IdP or for another SP),
 * relay-state (not the request's token), request-browser (a bound sign-in
 * posted by a browser without the request's binding cookie). Returns the
 * failed check's tag with *detail, or NULL with *pd the request. Whether
 * the request was already used is the store's to say (its use key). */
const char *rsp_pending_refusal(apr_pool_t *p, const char *val,
                                const rsp_pending_answer_t *ans,
                                rsp_pending_t **pd, const char **detail);

/* The store's side of pending requests (under prefix): keep one for
 * lifetime_s (the record of rsp_pending_encode), read one (*val NULL:
 * absent or expired), and use one up: a create-if-absent of its use key
 * (an rsp_claim record by replica at now, on the request's server), *won
 * 0 when it was used already. rsp_pending_put's record is
 * rsp_pending_encode's. */
apr_status_t rsp_pending_put(rsp_store_t *st, apr_pool_t *p, const char *prefix,
                             rsp_pending_kind_t kind, const char *request_id,
                             const char *idp, const char *sp,
                             const char *token, const char *return_to,
                             const char *binding, apr_int64_t lifetime_s,
                             const char **err);
apr_status_t rsp_pending_read(rsp_store_t *st, apr_pool_t *p,
                              const char *prefix, rsp_pending_kind_t kind,
                              const char *request_id, const char **val,
                              const char **err);
apr_status_t rsp_pending_use(rsp_store_t *st, apr_pool_t *p, const char *prefix,
                             rsp_pending_kind_t kind, const char *request_id,
                             const char *replica, apr_time_t now,
                             apr_int64_t lifetime_s, int *won,
                             const char **err);

/* Take an IdP's request (issuer, request_id) once, fleet-wide: a
 * create-if-absent of its key (rsp_idp_request_key, an rsp_claim record
 * by replica at now) kept ttl_ms; *won 0 when it was taken already. */
apr_status_t rsp_idp_request_take(rsp_store_t *st, apr_pool_t *p,
                                  const char *prefix, const char *issuer,
                                  const char *request_id, const char *replica,
                                  apr_time_t now, apr_int64_t ttl_ms, int *won,
                                  const char **err);

#endif
