/* The store monitor: one poller per host (a mod_watchdog child
 * singleton) that reads each store's own statistics, raises alarms in the
 * error log, and publishes what it saw to every child through the
 * counters' shared memory (mod_replay_sp_counters.c). It never runs on a request's path. */
#include <apr_atomic.h>
#include <apr_optional.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <http_core.h>
#include <mod_watchdog.h>

#include "mod_replay_sp_config.h"
#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_monitor.h"
#include "rsp_log.h"
#include "rsp_monitor.h"

APLOG_USE_MODULE(replay_sp);

#define WATCHDOG_NAME "replay_sp_monitor"
#define UNREACHABLE_REPEAT apr_time_from_sec(300)

/* ---- the poller ---- */

typedef struct {
    rsp_store_t store;            /* own connection, separate from requests */
    apr_hash_t *states;           /* server name -> rsp_monitor_state_t */
} watched_t;

typedef struct {
    server_rec *s;
    apr_array_header_t *stores;   /* rsp_store_t * (the configured ones) */
    apr_array_header_t *watched;  /* watched_t, in the watchdog's process */
    apr_pool_t *pool;
    rsp_monitor_params_t params;
    apr_int64_t max_window_s;     /* fallback when no claim was made yet */
} monitor_t;

static int alarm_tag(rsp_alarm_kind_t kind)
{
    return 2000 + (int)kind; /* RSP02001 .. RSP02015 */
}

static void log_alarm(server_rec *s, const rsp_alarm_t *a)
{
    /* One call site per tag keeps `grep RSP020xx` pointing here; the
     * numbers are listed in docs/operations.md. */
    ap_log_error(APLOG_MARK, a->level, 0, s, "RSP%05d: %s",
                 alarm_tag(a->kind), a->text);
}

static void poll_store(monitor_t *m, watched_t *w, apr_pool_t *p)
{
    apr_array_header_t *servers = NULL, *alarms;
    apr_time_t now = apr_time_now();
    apr_int64_t used = 0, limit = 0, evicted = 0;
    rsp_shared_t *shared = rsp_shared();
    int i, up = 1, have_limit = 1;

    rsp_health_poll(&servers, p, &w->store);
    m->params.replicas_required = w->store.replicas;
    alarms = apr_array_make(p, 4, sizeof(rsp_alarm_t));
    m->params.longest_window_s = m->max_window_s;
    if (shared && shared->claim_expiry_max > now) {
        m->params.longest_window_s =
            apr_time_sec(shared->claim_expiry_max - now) + 1;
    }
    for (i = 0; i < servers->nelts; i++) {
        rsp_health_t *h = &APR_ARRAY_IDX(servers, i, rsp_health_t);
        rsp_monitor_state_t *st = apr_hash_get(w->states, h->name,
                                               APR_HASH_KEY_STRING);
        apr_int64_t before;
        h->polled = now;
        if (!st) {
            st = apr_pcalloc(m->pool, sizeof(*st));
            apr_hash_set(w->states, apr_pstrdup(m->pool, h->name),
                         APR_HASH_KEY_STRING, st);
        }
        before = st->have_last ? st->last.evictions : -1;
        rsp_monitor_step(st, h, &m->params, p, alarms);
        if (!h->reachable) {
            up = 0;
            continue;
        }
        if (before >= 0 && h->evictions > before) {
            evicted += h->evictions - before;
        }
        used += h->used > 0 ? h->used : 0;
        if (h->limit > 0) {
            limit += h->limit;
        }
        else {
            have_limit = 0;
        }
    }
    for (i = 0; i < alarms->nelts; i++) {
        log_alarm(m->s, &APR_ARRAY_IDX(alarms, i, rsp_alarm_t));
    }
    if (shared) {
        shared->used = used;
        shared->limit = have_limit ? limit : 0;
        shared->store_up = up;
        shared->evictions_seen += evicted;
        shared->alarms_raised += alarms->nelts;
        shared->last_poll = now;
    }
}

static apr_status_t monitor_callback(int state, void *data, apr_pool_t *p)
{
    monitor_t *m = data;
    int i;

    switch (state) {
    case AP_WATCHDOG_STATE_STARTING:
        if (apr_pool_create(&m->pool, NULL) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        m->watched = apr_array_make(m->pool, m->stores->nelts, sizeof(watched_t));
        for (i = 0; i < m->stores->nelts; i++) {
            watched_t *w = apr_array_push(m->watched);
            w->store = *APR_ARRAY_IDX(m->stores, i, rsp_store_t *);
            w->store.impl = NULL;
            w->states = apr_hash_make(m->pool);
            if (rsp_store_child_init(&w->store, m->pool, 1) != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, 0, m->s, RSP_LOGNO(01021)
                             "store monitor: cannot set up a connection to %s",
                             w->store.url->display);
            }
        }
        break;
    case AP_WATCHDOG_STATE_RUNNING:
        for (i = 0; m->watched && i < m->watched->nelts; i++) {
            watched_t *w = &APR_ARRAY_IDX(m->watched, i, watched_t);
            if (w->store.impl) {
                poll_store(m, w, p);
            }
        }
        break;
    case AP_WATCHDOG_STATE_STOPPING:
        if (m->pool) {
            apr_pool_destroy(m->pool);
            m->pool = NULL;
            m->watched = NULL;
        }
        break;
    }
    return APR_SUCCESS;
}

int rsp_monitor_post_config(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *register_callback;
    rsp_srv_cfg_t *main_cfg = ap_get_module_config(s->module_config,
                                                   &replay_sp_module);
    apr_hash_t *seen = apr_hash_make(ptemp);
    ap_watchdog_t *wd;
    monitor_t *m;
    rsp_shared_t *shared;
    apr_shm_t *shm;
    server_rec *vs;
    apr_status_t rv;

    rsp_shared_attach(NULL);
    rv = apr_shm_create(&shm, sizeof(rsp_shared_t), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, RSP_LOGNO(01022)
                     "cannot create shared memory for counters");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    shared = apr_shm_baseaddr_get(shm);
    memset(shared, 0, sizeof(*shared));
    shared->store_up = -1;
    rsp_shared_attach(shared);

    m = apr_pcalloc(pconf, sizeof(*m));
    m->s = s;
    m->stores = apr_array_make(pconf, 2, sizeof(rsp_store_t *));
    m->params.headroom_warn_pct = main_cfg->headroom_warn != RSP_UNSET
        ? (int)main_cfg->headroom_warn : RSP_DEFAULT_HEADROOM_WARN;
    m->params.unreachable_repeat = UNREACHABLE_REPEAT;
    m->max_window_s = RSP_DEFAULT_MAX_WINDOW + 2 * RSP_DEFAULT_SKEW;
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        if (sc->store && !apr_hash_get(seen, &sc->store, sizeof(sc->store))) {
            apr_hash_set(seen, &sc->store, sizeof(sc->store), sc->store);
            APR_ARRAY_PUSH(m->stores, rsp_store_t *) = sc->store;
        }
    }
    if (m->stores->nelts == 0 || main_cfg->monitor_interval == 0) {
        return OK;
    }
    get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    register_callback = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    if (!get_instance || !register_callback) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, RSP_LOGNO(01023)
                     "the store monitor needs mod_watchdog (built into "
                     "httpd, or LoadModule watchdog_module)");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    /* A child singleton: exactly one poller per host (parent watchdogs do
     * not run under event, worker or prefork). */
    rv = get_instance(&wd, WATCHDOG_NAME, 0, 1, pconf);
    if (rv == APR_SUCCESS) {
        rv = register_callback(
            wd, apr_time_from_sec(main_cfg->monitor_interval != RSP_UNSET
                                  ? main_cfg->monitor_interval
                                  : RSP_DEFAULT_MONITOR_INTERVAL),
            m, monitor_callback);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, RSP_LOGNO(01024)
                     "cannot start the store monitor");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}
