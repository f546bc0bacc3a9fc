/* mod_replay_sp glue: shared declarations. */
#ifndef MOD_REPLAY_SP_H
#define MOD_REPLAY_SP_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>
#include <apr_atomic.h>
#include <apr_reslist.h>

#include "rsp_form.h"
#include "rsp_pending.h"
#include "rsp_saml.h"
#include "rsp_signin_acs.h"
#include "rsp_store.h"
#include "rsp_url.h"

/* Stable message tags: RSP_LOGNO(01001) -> "RSP01001: ".
 * Every notice-and-above line carries one; a number is never reused.
 * Next free numbers: 01050 and 02012 (the list is in docs/operations.md). */
#define RSP_LOGNO(n) "RSP" #n ": "

#define RSP_UNSET (-1)

#define RSP_DEFAULT_STORE_TIMEOUT_MS 1000
#define RSP_DEFAULT_REPLICAS_WAIT_MS 100
#define RSP_DEFAULT_KEY_PREFIX "rsp:"
#define RSP_DEFAULT_ENDPOINT "/saml"
#define RSP_DEFAULT_SKEW 60
#define RSP_DEFAULT_SESSION_LIFETIME 28800
#define RSP_DEFAULT_MAX_WINDOW 3600
#define RSP_MAX_MAX_WINDOW (29 * 86400)
#define RSP_DEFAULT_MAX_BODY 262144
#define RSP_DEFAULT_COOKIE "replay_sp_session"
#define RSP_DEFAULT_ENV_PREFIX "REPLAYSP_"
#define RSP_RETRY_AFTER "5"
#define RSP_DEFAULT_MONITOR_INTERVAL 5
#define RSP_DEFAULT_HEADROOM_WARN 80
#define RSP_DEFAULT_REQUEST_LIFETIME 300
#define RSP_RELAY_TOKEN_BYTES 24

/* One SP definition (the four SP directives of one section) and, per
 * child, the Lasso servers its worker threads use (one each). */
typedef struct {
    rsp_saml_sp_t def;
    const char *section;        /* "<Location /x>" etc., for messages */
    const char *defined_in;     /* file:line of the first SP directive */
    apr_reslist_t *servers;     /* per child */
} rsp_sp_conf_t;

typedef struct {
    const char *store_url_str;
    rsp_store_url_t *store_url;
    apr_interval_time_t store_timeout; /* RSP_UNSET when unset */
    const char *tls_ca_file;           /* ReplaySPStoreTLSCAFile, or NULL */
    const char *tls_cert_file;         /* ReplaySPStoreTLSCertFile */
    const char *tls_key_file;          /* ReplaySPStoreTLSKeyFile */
    rsp_tls_t *tls;                    /* built in check_config */
    apr_int64_t replicas;              /* ReplaySPStoreReplicas; RSP_UNSET */
    apr_int64_t replicas_wait_ms;      /* its bound; RSP_UNSET */
    const char *key_prefix;
    const char *replica_name;
    int on_failure_open;               /* RSP_UNSET, 0 closed, 1 open */
    apr_int64_t monitor_interval;      /* seconds; RSP_UNSET */
    apr_int64_t headroom_warn;         /* percent; RSP_UNSET */
    rsp_store_t *store;                /* set in post_config */
    apr_array_header_t *sps;           /* rsp_sp_conf_t *, defined here */
    apr_array_header_t *guard_paths;   /* const char *: <Location> paths with
                                        * ReplaySPGuard On, this server's and
                                        * the main server's */
} rsp_srv_cfg_t;

typedef struct {
    rsp_sp_conf_t *sp;
    const char *endpoint_path;
    apr_int64_t skew;
    apr_int64_t session_lifetime;
    apr_int64_t max_window;
    apr_int64_t max_body;
    const char *cookie_name;
    const char *user_attribute;   /* NULL: REMOTE_USER is the NameID */
    const char *env_prefix;
    apr_int64_t request_lifetime;
    int allow_unsolicited;        /* RSP_UNSET, 0, 1 */
    int bind_requests;            /* ReplaySPBindRequests: RSP_UNSET, 0, 1 */
    apr_array_header_t *redirect_domains; /* const char *; NULL: unset */
    int guard;                    /* ReplaySPGuard: RSP_UNSET, 0, 1 */
} rsp_dir_cfg_t;

extern module AP_MODULE_DECLARE_DATA replay_sp_module;
extern const command_rec rsp_cmds[];

void *rsp_create_dir_cfg(apr_pool_t *p, char *dir);
void *rsp_merge_dir_cfg(apr_pool_t *p, void *base, void *add);
void *rsp_create_srv_cfg(apr_pool_t *p, server_rec *s);
void *rsp_merge_srv_cfg(apr_pool_t *p, void *base, void *add);

/* Effective values, defaults applied where read. */
apr_int64_t rsp_cfg_skew(const rsp_dir_cfg_t *dc);
apr_int64_t rsp_cfg_session_lifetime(const rsp_dir_cfg_t *dc);
apr_int64_t rsp_cfg_max_window(const rsp_dir_cfg_t *dc);
apr_int64_t rsp_cfg_max_body(const rsp_dir_cfg_t *dc);
const char *rsp_cfg_endpoint(const rsp_dir_cfg_t *dc);
const char *rsp_cfg_cookie(const rsp_dir_cfg_t *dc);
const char *rsp_cfg_prefix(const rsp_srv_cfg_t *sc);
const char *rsp_cfg_env_prefix(const rsp_dir_cfg_t *dc);
apr_int64_t rsp_cfg_request_lifetime(const rsp_dir_cfg_t *dc);
int rsp_cfg_allow_unsolicited(const rsp_dir_cfg_t *dc);
int rsp_cfg_bind_requests(const rsp_dir_cfg_t *dc);

/* The first value of attribute name, or NULL. */
const char *rsp_attribute(const apr_array_header_t *attrs, const char *name);

typedef enum {
    RSP_EP_NONE = 0, RSP_EP_ACS, RSP_EP_METADATA, RSP_EP_LOGIN, RSP_EP_LOGOUT,
    RSP_EP_SLO
} rsp_endpoint_t;
rsp_endpoint_t rsp_endpoint_of(request_rec *r, const rsp_dir_cfg_t *dc);

/* The public URL of an endpoint: scheme, ServerName and port as httpd
 * derives them (UseCanonicalName), plus the endpoint path. */
const char *rsp_endpoint_url(request_rec *r, const rsp_dir_cfg_t *dc,
                             const char *leaf);

/* Which replica this is, for claims and log lines. */
const char *rsp_replica(request_rec *r);

/* The request's session cookie when it is well formed, else NULL. */
const char *rsp_session_cookie(request_rec *r, const rsp_dir_cfg_t *dc);

/* The store of r's server; NULL (logged, RSP01016) when it has none. */
rsp_store_t *rsp_srv_store(request_rec *r);

/* 503 with Retry-After: the fail-closed answer. */
int rsp_unavailable(request_rec *r);

/* This worker's Lasso server for sp (built on first use); give the slot
 * back with rsp_sp_server_release. A failure is logged here (RSP01012,
 * RSP01017): callers only answer. */
apr_status_t rsp_sp_server_acquire(request_rec *r, rsp_sp_conf_t *sp,
                                   void **slot, rsp_lasso_server_t **server);
void rsp_sp_server_release(rsp_sp_conf_t *sp, void *slot);

/* NULL when target may be a redirect target here (this host, or
 * ReplaySPRedirectDomains), else why not. */
const char *rsp_redirect_refused(request_rec *r, const rsp_dir_cfg_t *dc,
                                 const char *target);

/* A query argument of r (rsp_form_value); NULL when absent. *bad is set
 * when it is badly escaped or repeated. */
const char *rsp_query_arg(request_rec *r, const char *name, int *bad);

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

/* ---- SP-initiated login (mod_replay_sp_login.c) ---- */

/* The ReturnTo argument of <path>/login or <path>/logout (endpoint names
 * which, for the log): default "/", checked as a redirect target. OK, or
 * 400 with a tagged line (RSP01030 malformed, RSP01031 refused target). */
int rsp_return_to(request_rec *r, rsp_dir_cfg_t *dc, const char *endpoint,
                  const char **return_to);

/* Store a pending AuthnRequest for idp (NULL: the first IdP) and answer
 * with the redirect to the IdP; return_to must have been checked. */
int rsp_login_start(request_rec *r, rsp_dir_cfg_t *dc, const char *idp,
                    const char *return_to);
int rsp_login_handler(request_rec *r, rsp_dir_cfg_t *dc);

/* Expire the binding cookies of the request whose RelayState is token. */
void rsp_binding_expire(request_rec *r, rsp_dir_cfg_t *dc, const char *token);

/* Keep a request we sent (AuthnRequest or LogoutRequest) for
 * ReplaySPRequestLifetime: the IdP, this SP, the hash of the RelayState
 * token and the checked return URL. */
apr_status_t rsp_request_store(request_rec *r, rsp_dir_cfg_t *dc,
                               rsp_pending_kind_t kind, const char *request_id,
                               const char *idp, const char *token,
                               const char *return_to, const char **err);

/* Consume the pending request request_id for a response from issuer that
 * came with relay_state: read once and checked (rsp_pending_refusal),
 * then used up, single use fleet-wide. OK with *pending set;
 * HTTP_BAD_REQUEST (logged) when the request is unknown, expired, used,
 * or not for this IdP/SP/RelayState/browser; or the fail-closed answer
 * when the store fails. */
int rsp_request_consume(request_rec *r, rsp_dir_cfg_t *dc,
                        rsp_pending_kind_t kind, const char *request_id,
                        const char *issuer, const char *relay_state,
                        rsp_pending_t **pending);

/* ---- logout (mod_replay_sp_logout.c) ---- */

int rsp_logout_handler(request_rec *r, rsp_dir_cfg_t *dc);
int rsp_slo_handler(request_rec *r, rsp_dir_cfg_t *dc);

int rsp_acs_handler(request_rec *r, rsp_dir_cfg_t *dc);
void rsp_guard_register_hooks(apr_pool_t *p);
int rsp_metadata_handler(request_rec *r, rsp_dir_cfg_t *dc);
int rsp_check_authn(request_rec *r);
void rsp_authz_register(apr_pool_t *p);

/* ---- counters and the store monitor (mod_replay_sp_monitor.c) ---- */

#define RSP_LATENCY_BUCKETS 6
/* upper bounds of the claim latency buckets, microseconds; the last is +Inf */
extern const apr_interval_time_t rsp_latency_bounds[RSP_LATENCY_BUCKETS - 1];

/* Per host, in shared memory: counters any child increments, and what the
 * poller last saw (written by the poller only). */
typedef struct {
    apr_uint32_t claims_won;
    apr_uint32_t replays_refused;
    apr_uint32_t store_errors;
    apr_uint32_t fail_open;
    apr_uint32_t lasso_servers_built;   /* in child_init, one per thread */
    apr_uint32_t latency[RSP_LATENCY_BUCKETS];
    apr_uint32_t latency_sum_us_lo;     /* sum of claim latencies (wraps) */
    volatile apr_int64_t claim_expiry_max; /* latest expiry of a claim, us */
    volatile apr_int64_t last_poll;     /* us since epoch; 0 = never */
    volatile apr_int64_t used;          /* bytes, all servers */
    volatile apr_int64_t limit;         /* bytes, all servers; 0 = none */
    volatile apr_int64_t evictions_seen;
    volatile apr_int32_t store_up;      /* 1 all reachable, 0 not, -1 unknown */
    volatile apr_int32_t alarms_raised;
} rsp_shared_t;

/* NULL before post_config or when shared memory could not be made. */
rsp_shared_t *rsp_shared(void);
/* A claim the store answered: its latency and the claim's expiry. */
void rsp_count_claim(apr_interval_time_t latency, apr_time_t expiry);
/* One more of a counter: RSP_COUNT(replays_refused). */
#define RSP_COUNT(field) do {                          \
        rsp_shared_t *sh_ = rsp_shared();              \
        if (sh_) {                                     \
            apr_atomic_inc32(&sh_->field);             \
        }                                              \
    } while (0)

int rsp_monitor_post_config(apr_pool_t *pconf, apr_pool_t *ptemp,
                            server_rec *s);
void rsp_monitor_register_hooks(apr_pool_t *p);

/* mod_replay_sp_status.c */
int rsp_status_handler(request_rec *r);
int rsp_status_hook(request_rec *r, int flags);

#endif
