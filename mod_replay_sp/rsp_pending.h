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

#endif
