/* The module's configuration (mod_replay_sp_config.c): the directives,
 * the per-server and per-directory records, and their effective values. */
#ifndef MOD_REPLAY_SP_CONFIG_H
#define MOD_REPLAY_SP_CONFIG_H

#include <apr_reslist.h>

#include "mod_replay_sp_private.h"
#include "rsp_saml.h"
#include "rsp_store.h"
#include "rsp_url.h"

#define RSP_UNSET (-1)
#define RSP_GUARD_ON 1
#define RSP_GUARD_REPORT 2

/* A <Location> path with ReplaySPGuard On or Report. */
typedef struct {
    const char *path;
    int report;                        /* ReplaySPGuard Report */
} rsp_guard_path_t;

#define RSP_DEFAULT_STORE_TIMEOUT_MS 1000
#define RSP_DEFAULT_REPLICAS_WAIT_MS 100
#define RSP_DEFAULT_KEY_PREFIX "rsp:"
#define RSP_DEFAULT_ENDPOINT "/saml"
#define RSP_DEFAULT_SKEW 60
#define RSP_DEFAULT_SESSION_LIFETIME 28800
#define RSP_DEFAULT_MAX_WINDOW 3900
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
    /* each ReplaySPIdPMetadataURL's fetches, host-wide (in shared memory
     * from post_config; mod_replay_sp_refresh.h) */
    struct rsp_md_fetch_slot *url_slots;
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
    apr_array_header_t *guard_paths;   /* rsp_guard_path_t: <Location> paths
                                        * with ReplaySPGuard On or Report,
                                        * this server's and the main
                                        * server's */
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
    int qualify_user;             /* ReplaySPQualifyUser: RSP_UNSET, 0, 1 */
    apr_array_header_t *redirect_domains; /* const char *; NULL: unset */
    int guard;                    /* ReplaySPGuard: RSP_UNSET, 0,
                                   * RSP_GUARD_ON, RSP_GUARD_REPORT */
} rsp_dir_cfg_t;

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

/* For directive handlers: "Invalid value for directive ...: why"; an
 * integer in [min, max]; the SP of cmd's section, made on its first SP
 * directive. */
const char *rsp_cfg_invalid(cmd_parms *cmd, const char *arg, const char *why);
const char *rsp_cfg_parse_num(cmd_parms *cmd, const char *arg, apr_int64_t min,
                              apr_int64_t max, apr_int64_t *out);
rsp_sp_conf_t *rsp_cfg_section_sp(cmd_parms *cmd, rsp_dir_cfg_t *dc);
apr_int64_t rsp_cfg_request_lifetime(const rsp_dir_cfg_t *dc);
int rsp_cfg_allow_unsolicited(const rsp_dir_cfg_t *dc);
int rsp_cfg_bind_requests(const rsp_dir_cfg_t *dc);
/* ReplaySPQualifyUser; unset: On when the SP trusts more than one IdP. */
int rsp_cfg_qualify_user(const rsp_dir_cfg_t *dc);

#endif
