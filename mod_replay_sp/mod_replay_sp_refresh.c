/* Metadata re-read without a restart: in every child, a mod_watchdog
 * thread (not a singleton: each process holds its own generation of
 * IdPs) looks at each SP's metadata files every ReplaySPMetadataRefresh
 * seconds and reads them again when one changed (rsp_saml_sp_refresh).
 * A refused read keeps the generation in use and is logged at error
 * level once per change of the files. It never runs on a request's
 * path. */
#include <apr_optional.h>
#include <http_core.h>
#include <mod_watchdog.h>

#include "mod_replay_sp_config.h"
#include "mod_replay_sp_refresh.h"

APLOG_USE_MODULE(replay_sp);

#define WATCHDOG_NAME "replay_sp_metadata"

typedef struct {
    rsp_sp_conf_t *sp;
    server_rec *s;
} watched_sp_t;

static apr_status_t refresh_callback(int state, void *data, apr_pool_t *ptemp)
{
    watched_sp_t *w = data;
    rsp_saml_md_state_t st;
    apr_uint64_t generation = 0;
    const char *err = NULL;
    int changed = 0;

    if (state != AP_WATCHDOG_STATE_RUNNING) {
        return APR_SUCCESS;
    }
    if (rsp_saml_sp_refresh(&w->sp->def, ptemp, &changed, &generation, &err)
        != APR_SUCCESS) {
        rsp_saml_md_state(&w->sp->def, &st, ptemp);
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, w->s, RSP_LOGNO(01055)
                     "metadata of SP %s refused, generation %" APR_UINT64_T_FMT
                     " (%d IdPs) stays in use: %s", w->sp->def.entity_id,
                     st.generation, st.idps, err);
    }
    else if (changed) {
        rsp_saml_md_state(&w->sp->def, &st, ptemp);
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, w->s, RSP_LOGNO(01054)
                     "metadata of SP %s read again: generation %"
                     APR_UINT64_T_FMT " (%d IdPs) in use in process %"
                     APR_PID_T_FMT, w->sp->def.entity_id, generation, st.idps,
                     getpid());
    }
    return APR_SUCCESS;
}

int rsp_refresh_post_config(apr_pool_t *pconf, server_rec *s)
{
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *register_callback;
    ap_watchdog_t *wd = NULL;
    server_rec *vs;
    apr_status_t rv;
    int i;

    get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    register_callback = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        for (i = 0; sc->sps && i < sc->sps->nelts; i++) {
            rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
            apr_int64_t every = sp->def.md_refresh ? sp->def.md_refresh
                                                   : RSP_MD_REFRESH;
            watched_sp_t *w;

            if (every < 0 || !sp->def.live) {
                continue; /* ReplaySPMetadataRefresh Off */
            }
            if (!get_instance || !register_callback) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, vs, RSP_LOGNO(01023)
                             "re-reading metadata (ReplaySPMetadataRefresh) "
                             "needs mod_watchdog (built into httpd, or "
                             "LoadModule watchdog_module)");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            /* a child watchdog, not a singleton: one in every child */
            rv = wd ? APR_SUCCESS
                    : get_instance(&wd, WATCHDOG_NAME, 0, 0, pconf);
            w = apr_palloc(pconf, sizeof(*w));
            w->sp = sp;
            w->s = vs;
            if (rv == APR_SUCCESS) {
                rv = register_callback(wd, apr_time_from_sec(every), w,
                                       refresh_callback);
            }
            if (rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, rv, vs, RSP_LOGNO(01024)
                             "cannot start re-reading the metadata of SP %s",
                             sp->def.entity_id);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
        }
    }
    return OK;
}
