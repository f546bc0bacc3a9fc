/* The sign-in glue the endpoints share (mod_replay_sp_signin.c): the
 * validation of a response, the lines and answers of a sign-in's result
 * (rsp_signin_acs.h) that the ACS and the guard render alike, refusals,
 * and the pending requests of login and logout. */
#ifndef MOD_REPLAY_SP_SIGNIN_H
#define MOD_REPLAY_SP_SIGNIN_H

#include "mod_replay_sp_config.h"
#include "rsp_pending.h"
#include "rsp_signin_acs.h"

/* The store of r's server; NULL (logged, RSP01016) when it has none. */
rsp_store_t *rsp_srv_store(request_rec *r);

/* 400 for a refused SAML message, logged with the stable check name. */
int rsp_refuse_response(request_rec *r, const char *check, const char *detail);

/* Validate a base64 SAMLResponse for dc's SP, as posted to acs_url (its
 * Destination and Recipient): rsp_saml_process_response with this
 * section's skew and window, on this worker's Lasso server. OK with *a
 * and *cp filled, or the refusal's answer (400 logged as RSP01004, who
 * prefixing the detail; 500 when no Lasso server could be had). */
int rsp_validate(request_rec *r, rsp_dir_cfg_t *dc, const char *saml,
                 const char *acs_url, const char *who, rsp_check_params_t *cp,
                 rsp_assertion_t **a);

/* What the ACS and the guard render alike from a sign-in's result
 * (rsp_signin_acs.h): the counters it moved and the audited fail-open
 * line (RSP01025), once; the refusal of a replay (403, RSP01001); the
 * fail-closed answer to a claim without a verdict (503: RSP01003, or
 * RSP01048 when written but not acknowledged by the replicas). */
void rsp_signin_counted(request_rec *r, const rsp_signin_result_t *res,
                        const rsp_assertion_t *a, apr_int64_t skew_s);
int rsp_refuse_replay(request_rec *r, const rsp_assertion_t *a,
                      const rsp_claim_result_t *c);
int rsp_claim_unavailable(request_rec *r, const rsp_assertion_t *a,
                          const rsp_signin_result_t *res);

/* The warning (RSP01039) for a SHA-1 signature accepted under
 * ReplaySPAllowSHA1; nothing when what is NULL. */
void rsp_log_weak_signature(request_rec *r, const char *issuer,
                            const char *what);

/* The ReturnTo argument of <path>/login or <path>/logout (endpoint names
 * which, for the log): default "/", checked as a redirect target. OK, or
 * 400 with a tagged line (RSP01030 malformed, RSP01031 refused target). */
int rsp_return_to(request_rec *r, rsp_dir_cfg_t *dc, const char *endpoint,
                  const char **return_to);

/* Expire the binding cookies of the request whose RelayState is token. */
void rsp_binding_expire(request_rec *r, rsp_dir_cfg_t *dc, const char *token);

/* Keep a request we sent (AuthnRequest or LogoutRequest) for
 * ReplaySPRequestLifetime: the IdP, this SP, the hash of the RelayState
 * token and the checked return URL. */
apr_status_t rsp_request_store(request_rec *r, rsp_dir_cfg_t *dc,
                               rsp_pending_kind_t kind, const char *request_id,
                               const char *idp, const char *token,
                               const char *return_to, const char **err);

#endif
