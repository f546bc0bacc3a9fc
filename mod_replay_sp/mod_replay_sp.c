/* mod_replay_sp: module definition, start-up checks, per-child set-up,
 * hooks and the helpers the endpoint files share. */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#include <apr_lib.h>
#include <apr_strings.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <apr_network_io.h>
#include <ap_mpm.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mod_status.h>
#include <util_cookies.h>

#include "mod_replay_sp_acs.h"
#include "mod_replay_sp_authn.h"
#include "mod_replay_sp_config.h"
#include "mod_replay_sp_guard.h"
#include "mod_replay_sp_login.h"
#include "mod_replay_sp_logout.h"
#include "mod_replay_sp_metadata.h"
#include "mod_replay_sp_monitor.h"
#include "mod_replay_sp_refresh.h"
#include "rsp_md_source.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_status.h"
#include "rsp_log.h"
#include "rsp_redirect.h"
#include "rsp_session.h"

/* AP_DECLARE_MODULE below also does what APLOG_USE_MODULE does. */

/* Per process by design: the main server of the current generation, for
 * the library's log seam, and this host's name. */
static server_rec *log_server;

static void log_sink(void *baton, int level, const char *msg)
{
    if (level <= RSP_LOG_NOTICE) {
        ap_log_error(APLOG_MARK, level, 0, log_server,
                     RSP_LOGNO(01000) "%s", msg);
    }
    else {
        ap_log_error(APLOG_MARK, level, 0, log_server, "%s", msg);
    }
}

/* Lasso, libxml2 and xmlsec: initialised once per process, before any
 * thread, and never shut down (httpd may unload and reload this module on
 * restart; Lasso's GObject types cannot be registered twice). */
static apr_status_t global_init(server_rec *s, apr_pool_t *ptemp)
{
    static const char key[] = "replay_sp_lasso_initialised";
    apr_pool_t *proc = s->process->pool;
    void *done = NULL;
    const char *err;

    apr_pool_userdata_get(&done, key, proc);
    if (done) {
        return APR_SUCCESS;
    }
    /* Keep liblasso mapped even if this module is unloaded. */
    if (!dlopen("liblasso.so.3", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s,
                     "cannot pin liblasso.so.3: %s", dlerror());
    }
    if (!dlopen("libcurl.so.4", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s,
                     "cannot pin libcurl.so.4: %s", dlerror());
    }
    if (rsp_saml_global_init(&err) != APR_SUCCESS
        || rsp_md_source_global_init(&err) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, RSP_LOGNO(01007)
                     "Lasso or libcurl initialisation failed: %s", err);
        return APR_EGENERAL;
    }
    apr_pool_userdata_set((void *)1, key, apr_pool_cleanup_null, proc);
    return APR_SUCCESS;
}

static apr_status_t log_remove(void *data)
{
    rsp_saml_log_remove();
    return APR_SUCCESS;
}

/* The replica and TLS settings of each server's store: refused when they
 * do not fit its URL, and each distinct TLS set built (files read and
 * checked) once, here, so that configtest refuses a bad CA, certificate or
 * key. */
static int check_store_tls(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    apr_hash_t *built = apr_hash_make(ptemp);
    server_rec *vs;

    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        const char *id, *err = NULL;
        rsp_tls_input_t input = RSP_TLS_INPUT_NONE;

        sc->tls = NULL;
        if (sc->replicas > 0) {
            apr_int64_t to = sc->store_timeout != RSP_UNSET
                ? apr_time_as_msec(sc->store_timeout)
                : RSP_DEFAULT_STORE_TIMEOUT_MS;
            if (!sc->store_url || sc->store_url->kind == RSP_STORE_MEMCACHE) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01049)
                             "ReplaySPStoreReplicas needs a Redis store "
                             "(memcached has no replicas to wait for): %s",
                             sc->store_url ? sc->store_url->display : "(none)");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            if (sc->replicas_wait_ms >= to) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01049)
                             "ReplaySPStoreReplicas: the wait (%" APR_INT64_T_FMT
                             " ms) must be shorter than ReplaySPStoreTimeout (%"
                             APR_INT64_T_FMT " ms), which bounds the whole "
                             "round trip", sc->replicas_wait_ms, to);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
        }
        if (!sc->store_url || !sc->store_url->tls) {
            if (sc->tls_ca_file || sc->tls_cert_file || sc->tls_key_file) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01046)
                             "ReplaySPStoreTLS%sFile is set, but the store %s "
                             "is not a TLS one (rediss:// or memcaches://)",
                             sc->tls_ca_file ? "CA"
                             : sc->tls_cert_file ? "Cert" : "Key",
                             sc->store_url ? sc->store_url->display
                                           : "(none)");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            continue;
        }
        if (sc->tls_key_file && !sc->tls_cert_file) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01046)
                         "ReplaySPStoreTLSKeyFile is set without "
                         "ReplaySPStoreTLSCertFile (store %s)",
                         sc->store_url->display);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        id = apr_pstrcat(ptemp, sc->tls_ca_file ? sc->tls_ca_file : "", "|",
                         sc->tls_cert_file ? sc->tls_cert_file : "", "|",
                         sc->tls_key_file ? sc->tls_key_file : "", NULL);
        sc->tls = apr_hash_get(built, id, APR_HASH_KEY_STRING);
        if (sc->tls) {
            continue;
        }
        if (rsp_tls_create(&sc->tls, pconf, sc->tls_ca_file, sc->tls_cert_file,
                           sc->tls_key_file, &input, &err) != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01047)
                         "store %s: %s: %s", sc->store_url->display,
                         input == RSP_TLS_INPUT_CA
                         ? (sc->tls_ca_file ? "ReplaySPStoreTLSCAFile"
                                            : "the system's CA certificates "
                                              "(ReplaySPStoreTLSCAFile unset)")
                         : input == RSP_TLS_INPUT_CERT ? "ReplaySPStoreTLSCertFile"
                         : input == RSP_TLS_INPUT_KEY
                         ? (sc->tls_key_file ? "ReplaySPStoreTLSKeyFile"
                                             : "ReplaySPStoreTLSKeyFile (unset: "
                                               "the key is read from "
                                               "ReplaySPStoreTLSCertFile)")
                         : "TLS", err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        apr_hash_set(built, id, APR_HASH_KEY_STRING, sc->tls);
    }
    return OK;
}

/* Load and check every SP and the store settings. Runs in check_config,
 * so `apachectl configtest` refuses what would fail at the first sign-in. */
static int rsp_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                            apr_pool_t *ptemp, server_rec *s)
{
    server_rec *vs;
    const char *err;
    rsp_sp_input_t input;
    int i, lasso_ready = 0;

    log_server = s;
    rsp_log_set_sink(log_sink, NULL);
    if (check_store_tls(pconf, ptemp, s) != OK) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        if (sc->sps->nelts == 0) {
            continue;
        }
        if (!lasso_ready) {
            if (global_init(s, ptemp) != APR_SUCCESS) {
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            /* Our callbacks, for this configuration's life: removed before
             * httpd may unload this module on restart. */
            rsp_saml_log_install();
            apr_pool_cleanup_register(pconf, NULL, log_remove,
                                      apr_pool_cleanup_null);
            lasso_ready = 1;
        }
        if (!sc->store_url) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01008)
                         "ReplaySPStore is not set for server %s, but an SP "
                         "is defined at %s: claims need a shared store",
                         vs->server_hostname ? vs->server_hostname : "(main)",
                         APR_ARRAY_IDX(sc->sps, 0, rsp_sp_conf_t *)->defined_in);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        for (i = 0; i < sc->sps->nelts; i++) {
            rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
            const char *missing =
                !sp->def.entity_id ? "ReplaySPEntityID"
                : !sp->def.guard && !sp->def.key_file ? "ReplaySPKeyFile"
                : !sp->def.guard && !sp->def.cert_file ? "ReplaySPCertFile"
                : sp->def.idp_files->nelts == 0 && !sp->def.mdq_url
                    ? "ReplaySPIdPMetadataFile"
                : NULL;
            if (sp->def.guard && (sp->def.key_file || sp->def.cert_file)) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01041)
                             "%s in the %s (%s), which has ReplaySPGuard On: "
                             "the guard signs nothing; give the key the SP "
                             "decrypts with as ReplaySPEncryptionKeyFile",
                             sp->def.key_file ? "ReplaySPKeyFile"
                                              : "ReplaySPCertFile",
                             sp->section, sp->defined_in);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            if (missing) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01009)
                             "%s missing in the %s (%s): %s go together in "
                             "one section", missing, sp->section,
                             sp->defined_in, sp->def.guard
                             ? "ReplaySPGuard, ReplaySPEntityID and "
                               "ReplaySPIdPMetadataFile"
                             : "ReplaySPEntityID, ReplaySPKeyFile, "
                               "ReplaySPCertFile and ReplaySPIdPMetadataFile");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            if (!sp->def.guard && sp->def.idp_files->nelts == 0
                && !sp->def.default_idp && !sp->def.discovery_url) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01009)
                             "ReplaySPIdPMetadataQuery alone in the %s (%s): "
                             "no IdP is known before it is asked for; give "
                             "ReplaySPDiscoveryURL or ReplaySPDefaultIdP (or "
                             "a ReplaySPIdPMetadataFile)", sp->section,
                             sp->defined_in);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            if (rsp_refresh_fetch_at_start(sp, vs, pconf, ptemp) != OK) {
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            if (rsp_saml_sp_load(&sp->def, pconf, &input, &err)
                != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01010)
                             "SP %s (%s): %s%s", sp->def.entity_id,
                             sp->defined_in,
                             input == RSP_SP_INPUT_KEY ? "ReplaySPKeyFile: "
                             : input == RSP_SP_INPUT_CERT ? "ReplaySPCertFile: "
                             : input == RSP_SP_INPUT_IDP
                                 ? "ReplaySPIdPMetadataFile: "
                             : input == RSP_SP_INPUT_ENC_KEY
                                 ? "ReplaySPEncryptionKeyFile: "
                             : input == RSP_SP_INPUT_ENC_CERT
                                 ? "ReplaySPEncryptionCertFile: "
                             : input == RSP_SP_INPUT_SHA1
                                 ? "ReplaySPAllowSHA1: " : "",
                             err);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
        }
    }
#ifdef __GLIBC__
    /* Reading an aggregate of thousands of IdPs builds and frees a tree
     * several times its size: hand the freed pages back before children
     * are forked, or each would count them in its resident size. */
    malloc_trim(0);
#endif
    return OK;
}

static int rsp_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                           apr_pool_t *ptemp, server_rec *s)
{
    apr_hash_t *stores = apr_hash_make(ptemp);
    server_rec *vs;
    char name[APRMAXHOSTLEN + 1];

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    log_server = s;
    if (apr_gethostname(name, sizeof(name), pconf) == APR_SUCCESS) {
        rsp_replica_host(apr_pstrdup(pconf, name));
    }
    /* One store object per distinct URL and timeout: virtual hosts that
     * inherit the main server's store share its connections. */
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        apr_interval_time_t to;
        const char *id, *err;

        if (!sc->store_url) {
            continue;
        }
        to = sc->store_timeout != RSP_UNSET
            ? sc->store_timeout : RSP_DEFAULT_STORE_TIMEOUT_MS * 1000;
        id = apr_psprintf(ptemp, "%s|%" APR_TIME_T_FMT "|%pp|%" APR_INT64_T_FMT
                          "|%" APR_INT64_T_FMT, sc->store_url_str, to,
                          (void *)sc->tls, sc->replicas, sc->replicas_wait_ms);
        sc->store = apr_hash_get(stores, id, APR_HASH_KEY_STRING);
        if (!sc->store) {
            if (rsp_store_create(&sc->store, pconf, sc->store_url, to, &err)
                != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01011)
                             "store %s: %s", sc->store_url->display, err);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            sc->store->tls = sc->tls;
            if (sc->replicas > 0) {
                sc->store->replicas = (int)sc->replicas;
                sc->store->replicas_wait =
                    apr_time_from_msec(sc->replicas_wait_ms);
            }
            apr_hash_set(stores, id, APR_HASH_KEY_STRING, sc->store);
        }
    }
    if (rsp_refresh_post_config(pconf, s) != OK) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return rsp_monitor_post_config(pconf, ptemp, s);
}

/* Per child, after fork: store connections (made on first use) and
 * Lasso servers (built now), sized for the MPM's threads. */
/* What a child does once rather than on its first requests. */
static void warm_child(apr_pool_t *pchild)
{
    const char *token;

    /* glibc's localtime() stats /etc/localtime on every call while TZ is
     * unset, and Lasso formats a time for each of its (discarded) debug
     * lines: the same zone, named, is read once. Children only, before
     * their threads start. */
    if (!getenv("TZ")) {
        setenv("TZ", ":/etc/localtime", 0);
        tzset();
    }
    /* OpenSSL instantiates its random generator on first use (millions of
     * instructions): before the first session ID rather than in it. */
    if (rsp_random_token(&token, pchild, 16) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, NULL, RSP_LOGNO(01043)
                     "the system's random generator failed: sessions cannot "
                     "be issued");
    }
}

static void rsp_child_init(apr_pool_t *pchild, server_rec *s)
{
    server_rec *vs;
    apr_hash_t *seen = apr_hash_make(pchild);
    int threads = 1, i;
    apr_status_t rv;

    warm_child(pchild);
    if (ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads) != APR_SUCCESS
        || threads < 1) {
        threads = 1;
    }
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        if (sc->store && !apr_hash_get(seen, &sc->store, sizeof(sc->store))) {
            apr_hash_set(seen, &sc->store, sizeof(sc->store), sc->store);
            rv = rsp_store_child_init(sc->store, pchild, threads);
            if (rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, rv, vs, RSP_LOGNO(01013)
                             "cannot set up the store connection pool");
            }
        }
        for (i = 0; i < sc->sps->nelts; i++) {
            rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
            rv = rsp_sp_servers_create(sp, threads, pchild);
            if (rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, rv, vs, RSP_LOGNO(01014)
                             "cannot set up the Lasso server pool");
            }
        }
    }
}

/* The SP's endpoints answer without a session, inside protected space. */
static int rsp_endpoint_access(request_rec *r)
{
    rsp_dir_cfg_t *dc = ap_get_module_config(r->per_dir_config,
                                             &replay_sp_module);

    return rsp_endpoint_of(r, dc) != RSP_EP_NONE ? OK : DECLINED;
}

static int rsp_handler(request_rec *r)
{
    rsp_dir_cfg_t *dc = ap_get_module_config(r->per_dir_config,
                                             &replay_sp_module);

    switch (rsp_endpoint_of(r, dc)) {
    case RSP_EP_ACS:
        return rsp_acs_handler(r, dc);
    case RSP_EP_METADATA:
        return rsp_metadata_handler(r, dc);
    case RSP_EP_LOGIN:
        return rsp_login_handler(r, dc);
    case RSP_EP_LOGOUT:
        return rsp_logout_handler(r, dc);
    case RSP_EP_SLO:
        return rsp_slo_handler(r, dc);
    case RSP_EP_DISCOFEED:
        return rsp_discofeed_handler(r, dc);
    case RSP_EP_DISCOVERY:
        return rsp_discovery_handler(r, dc);
    default:
        return DECLINED;
    }
}

static void rsp_register_hooks(apr_pool_t *p)
{
    /* Before mod_watchdog's post_config, which starts the registered
     * watchdogs (the store monitor). */
    static const char *const before_watchdog[] = {"mod_watchdog.c", NULL};

    ap_hook_check_config(rsp_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(rsp_post_config, NULL, before_watchdog,
                        APR_HOOK_MIDDLE);
    ap_hook_child_init(rsp_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_check_access_ex(rsp_endpoint_access, NULL, NULL, APR_HOOK_FIRST,
                            AP_AUTH_INTERNAL_PER_CONF);
    ap_hook_check_authn(rsp_check_authn, NULL, NULL, APR_HOOK_MIDDLE,
                        AP_AUTH_INTERNAL_PER_CONF);
    ap_hook_handler(rsp_handler, NULL, NULL, APR_HOOK_FIRST);
    rsp_guard_register_hooks(p);
    rsp_authz_register(p);
    ap_hook_handler(rsp_status_handler, NULL, NULL, APR_HOOK_MIDDLE);
    APR_OPTIONAL_HOOK(ap, status_hook, rsp_status_hook, NULL, NULL,
                      APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(replay_sp) = {
    STANDARD20_MODULE_STUFF,
    rsp_create_dir_cfg,
    rsp_merge_dir_cfg,
    rsp_create_srv_cfg,
    rsp_merge_srv_cfg,
    rsp_cmds,
    rsp_register_hooks,
};
