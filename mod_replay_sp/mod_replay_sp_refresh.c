/* Metadata re-read without a restart: in every child, a mod_watchdog
 * thread (not a singleton: each process holds its own generation of
 * IdPs) looks at each SP's metadata files every ReplaySPMetadataRefresh
 * seconds and reads them again when one changed (rsp_saml_sp_refresh).
 * A refused read keeps the generation in use and is logged at error
 * level once per change of the files.
 *
 * Metadata by URL (ReplaySPIdPMetadataURL): one fetcher per host (a child
 * singleton watchdog) fetches each URL when due (the refresh interval,
 * sooner when the document's cacheDuration says so, sooner again after
 * failures: rsp_md_next_refresh), verifies it and writes its backing
 * file (rsp_md_source.h); the children read the backing file like any
 * metadata file. A failed fetch keeps the last good copy, with an
 * error-level alarm naming the reason. None of it runs on a request's
 * path. */
#include <string.h>

#include <apr_atomic.h>
#include <apr_file_io.h>
#include <apr_optional.h>
#include <apr_shm.h>
#include <apr_thread_proc.h>
#include <apr_strings.h>
#include <http_core.h>
#include <mod_watchdog.h>

#include "mod_replay_sp_config.h"
#include "mod_replay_sp_refresh.h"
#include "rsp_md_source.h"

APLOG_USE_MODULE(replay_sp);

#define WATCHDOG_NAME "replay_sp_metadata"
#define FETCHER_NAME "replay_sp_metadata_fetch"

/* sp's ReplaySPMetadataRefresh, seconds (0: Off). */
static apr_int64_t refresh_every(const rsp_sp_conf_t *sp)
{
    return sp->def.md_refresh < 0 ? 0
           : sp->def.md_refresh ? sp->def.md_refresh : RSP_MD_REFRESH;
}

/* ---- what the sources are now ---- */

/* The URL source whose backing file is path (-1: none). */
static int url_of(const rsp_sp_conf_t *sp, const char *path)
{
    int j;

    for (j = 0; sp->def.md_urls && j < sp->def.md_urls->nelts; j++) {
        if (!strcmp(APR_ARRAY_IDX(sp->def.md_urls, j, rsp_md_url_t).backing_file,
                    path)) {
            return j;
        }
    }
    return -1;
}

/* A URL source's row: the host's fetches decide its age and whether it
 * is failing. */
static void url_row(rsp_md_source_row_t *row, const rsp_sp_conf_t *sp, int j,
                    apr_time_t now, apr_pool_t *p)
{
    rsp_md_fetch_state_t fs;

    row->kind = "url";
    row->source = rsp_md_redacted(p, APR_ARRAY_IDX(sp->def.md_urls, j,
                                                   rsp_md_url_t).url);
    if (!rsp_refresh_url_state(sp, j, &fs)) {
        return;
    }
    row->age_s = fs.ok_at ? apr_time_sec(now - fs.ok_at) : row->age_s;
    if (fs.failed_at && fs.failed_at >= row->last_error_at) {
        row->last_error = apr_pstrdup(p, fs.detail);
        row->last_error_at = fs.failed_at;
    }
    if (fs.failures > 0) {
        row->failing = rsp_md_reason_name((rsp_md_reason_e)fs.reason);
    }
}

/* An SP's MDQ service as this process has used it: the entities it
 * holds, the number of the last one fetched, failing when the last fetch
 * failed other than with a 404. */
static void mdq_row(rsp_md_source_row_t *row, const rsp_sp_conf_t *sp,
                    apr_pool_t *p)
{
    rsp_saml_mdq_state_t st;

    rsp_saml_mdq_state(&sp->def, &st, p);
    memset(row, 0, sizeof(*row));
    row->sp = sp->def.entity_id;
    row->source = rsp_md_redacted(p, sp->def.mdq_url);
    row->kind = "mdq";
    row->generation = st.generation;
    row->idps = st.entities;
    row->refresh_s = refresh_every(sp);
    if (st.failing) {
        row->failing = rsp_md_reason_name((rsp_md_reason_e)st.failing_reason);
    }
    row->last_error = st.last_error;
    row->last_error_at = st.failed_at;
}

apr_array_header_t *rsp_refresh_sources(server_rec *s, apr_pool_t *p)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(s->module_config,
                                             &replay_sp_module);
    apr_array_header_t *rows = apr_array_make(p, 4, sizeof(rsp_md_source_row_t));
    apr_time_t now = apr_time_now();
    int i, f, j;

    for (i = 0; sc && sc->sps && i < sc->sps->nelts; i++) {
        const rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
        rsp_saml_md_state_t st;

        rsp_saml_md_state(&sp->def, &st, p);
        for (f = 0; f < st.nfiles; f++) {
            const char *path = APR_ARRAY_IDX(sp->def.idp_files, f, const char *);
            rsp_md_source_row_t *row = apr_array_push(rows);

            memset(row, 0, sizeof(*row));
            row->sp = sp->def.entity_id;
            row->source = path;
            row->kind = "file";
            row->generation = st.files[f].generation;
            row->idps = st.files[f].idps;
            row->valid_until = st.files[f].valid_until;
            row->age_s = apr_time_sec(now - st.checked_at);
            row->refresh_s = refresh_every(sp);
            if (st.last_error && (st.failed_file == f || st.failed_file < 0)) {
                row->failing = rsp_md_reason_name(
                    (rsp_md_reason_e)st.failed_reason);
                row->last_error = st.last_error;
                row->last_error_at = st.failed_at;
            }
            if ((j = url_of(sp, path)) >= 0) {
                url_row(row, sp, j, now, p);
            }
        }
        if (sp->def.mdq_url) {
            mdq_row(apr_array_push(rows), sp, p);
        }
    }
    return rows;
}

/* ---- metadata by URL ---- */

/* One URL source's fetches, in shared memory: written by one process at
 * a time (the fetch at start in the parent, then the host's one
 * fetcher), read by any child; seq is odd while it is written. */
struct rsp_md_fetch_slot {
    volatile apr_uint32_t seq;
    rsp_md_fetch_state_t st;
};

int rsp_refresh_url_state(const rsp_sp_conf_t *sp, int j,
                          rsp_md_fetch_state_t *out)
{
    struct rsp_md_fetch_slot *slot;
    int tries;

    if (!sp->url_slots || !sp->def.md_urls || j < 0
        || j >= sp->def.md_urls->nelts) {
        return 0;
    }
    slot = &sp->url_slots[j];
    for (tries = 0; tries < 1000; tries++) {
        apr_uint32_t before = apr_atomic_add32(&slot->seq, 0);
        if (!(before & 1)) {
            memcpy(out, &slot->st, sizeof(*out));
            if (apr_atomic_add32(&slot->seq, 0) == before) {
                return 1;
            }
        }
        apr_thread_yield();
    }
    return 0;
}

/* What a fetch of sp's URL source j gave, into its slot. */
static void note_fetch(rsp_sp_conf_t *sp, int j, const rsp_md_result_t *res,
                       apr_time_t now)
{
    struct rsp_md_fetch_slot *slot = &sp->url_slots[j];
    rsp_md_fetch_state_t st;

    if (!rsp_refresh_url_state(sp, j, &st)) {
        memset(&st, 0, sizeof(st));
    }
    if (res->outcome == RSP_MD_FAILED || res->from_backing) {
        st.failures++;
        st.failed_at = now;
        st.reason = (int)res->reason;
        apr_cpystrn(st.detail, res->detail ? res->detail : "",
                    sizeof(st.detail));
        /* the copy in use is as old as the backing file it came from */
        if (res->from_backing && res->file.mtime > st.ok_at) {
            st.ok_at = res->file.mtime;
        }
    }
    else {
        st.ok_at = now;
        st.failures = 0;
    }
    apr_atomic_inc32(&slot->seq);   /* odd: being written */
    memcpy(&slot->st, &st, sizeof(st));
    apr_atomic_inc32(&slot->seq);
}

/* One URL source, in the fetcher's process. */
typedef struct {
    rsp_sp_conf_t *sp;
    int j;                        /* sp's URL source j */
    const rsp_md_url_t *u;
    server_rec *s;
    apr_pool_t *pool;             /* what is kept of the last good copy */
    rsp_md_have_t have;
    int have_any;
    apr_int64_t cache_duration_s;
    int failures;
    apr_time_t next_at;
} url_state_t;

static apr_status_t read_pem(const char **out, apr_pool_t *p, const char *path)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;
    apr_status_t rv = apr_file_open(&f, path, APR_FOPEN_READ, 0, p);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if ((rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f)) == APR_SUCCESS
        && (fi.size <= 0 || fi.size > 65536)) {
        rv = APR_EINVAL;
    }
    if (rv == APR_SUCCESS) {
        buf = apr_palloc(p, (apr_size_t)fi.size + 1);
        rv = apr_file_read_full(f, buf, (apr_size_t)fi.size, &n);
        buf[rv == APR_SUCCESS ? n : 0] = '\0';
        *out = buf;
    }
    apr_file_close(f);
    return rv;
}

static apr_status_t source_of(rsp_md_source_t *src, const rsp_sp_conf_t *sp,
                              const rsp_md_url_t *u, apr_pool_t *p)
{
    memset(src, 0, sizeof(*src));
    src->url = u->url;
    src->backing_file = u->backing_file;
    src->ca_file = sp->def.md_ca_file;
    src->max_validity_s = sp->def.md_max_validity ? sp->def.md_max_validity
                                                  : RSP_MD_MAX_VALIDITY;
    return read_pem(&src->cert_pem, p, u->cert_file);
}

static const char *why_of(apr_pool_t *p, const rsp_md_result_t *res)
{
    return apr_psprintf(p, "%s: %s", rsp_md_reason_name(res->reason),
                        res->detail ? res->detail : "");
}

int rsp_refresh_fetch_at_start(rsp_sp_conf_t *sp, server_rec *s,
                               apr_pool_t *pconf, apr_pool_t *ptemp)
{
    rsp_md_source_t src;
    rsp_md_result_t res;
    char ebuf[128];
    apr_status_t rv;
    int i;

    if (!sp->def.md_urls) {
        return OK;
    }
    /* in pconf until post_config moves them to shared memory */
    sp->url_slots = apr_pcalloc(pconf, sizeof(*sp->url_slots)
                                           * (apr_size_t)sp->def.md_urls->nelts);
    for (i = 0; i < sp->def.md_urls->nelts; i++) {
        const rsp_md_url_t *u = &APR_ARRAY_IDX(sp->def.md_urls, i, rsp_md_url_t);

        if ((rv = source_of(&src, sp, u, ptemp)) != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, RSP_LOGNO(01010)
                         "SP %s (%s): ReplaySPIdPMetadataURL %s: cannot read "
                         "the certificate %s: %s", sp->def.entity_id,
                         sp->defined_in, u->url, u->cert_file,
                         apr_strerror(rv, ebuf, sizeof(ebuf)));
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        if (rsp_md_source_get(&res, ptemp, &src, NULL, apr_time_now())
            != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, RSP_LOGNO(01010)
                         "SP %s (%s): ReplaySPIdPMetadataURL %s: %s; and no "
                         "usable copy in %s", sp->def.entity_id,
                         sp->defined_in, res.origin ? res.origin : u->url,
                         why_of(ptemp, &res), u->backing_file);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        note_fetch(sp, i, &res, apr_time_now());
        if (res.from_backing) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, RSP_LOGNO(01056)
                         "metadata of SP %s from %s not taken (%s): the "
                         "last good copy, %s, is used", sp->def.entity_id,
                         u->url, why_of(ptemp, &res), u->backing_file);
        }
        if (res.backing_error) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, RSP_LOGNO(01056)
                         "metadata of SP %s from %s: the backing file %s "
                         "cannot be written: %s", sp->def.entity_id, u->url,
                         u->backing_file, res.backing_error);
        }
    }
    return OK;
}

static void fetch_one(url_state_t *st, apr_pool_t *ptemp)
{
    rsp_md_source_t src;
    rsp_md_result_t res;
    apr_pool_t *p;
    apr_time_t now = apr_time_now();
    apr_int64_t every = refresh_every(st->sp);

    if (apr_pool_create(&p, ptemp) != APR_SUCCESS) {
        return;
    }
    if (source_of(&src, st->sp, st->u, p) != APR_SUCCESS) {
        res.outcome = RSP_MD_FAILED;
        res.reason = RSP_MD_ERR_SIGNATURE;
        res.detail = apr_psprintf(p, "cannot read the certificate %s",
                                  st->u->cert_file);
    }
    else {
        rsp_md_source_get(&res, p, &src, st->have_any ? &st->have : NULL, now);
    }
    note_fetch(st->sp, st->j, &res, now);
    if (res.outcome == RSP_MD_FAILED || res.from_backing) {
        st->failures++;
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, st->s, RSP_LOGNO(01056)
                     "metadata of SP %s from %s not taken (%s): the last good "
                     "copy, %s, stays in use", st->sp->def.entity_id,
                     st->u->url, why_of(p, &res), st->u->backing_file);
    }
    else {
        st->failures = 0;
    }
    if (res.outcome == RSP_MD_NEW && !res.from_backing) {
        apr_pool_clear(st->pool);
        st->have.etag = res.etag ? apr_pstrdup(st->pool, res.etag) : NULL;
        st->have.last_modified = res.last_modified
            ? apr_pstrdup(st->pool, res.last_modified) : NULL;
        st->have.valid_until = res.valid_until;
        st->have_any = 1;
        st->cache_duration_s = res.cache_duration_s;
        if (res.backing_error) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, st->s, RSP_LOGNO(01056)
                         "metadata of SP %s from %s: the backing file %s "
                         "cannot be written: %s", st->sp->def.entity_id,
                         st->u->url, st->u->backing_file, res.backing_error);
        }
        else {
            ap_log_error(APLOG_MARK, APLOG_INFO, 0, st->s,
                         "metadata of SP %s from %s: %s %s",
                         st->sp->def.entity_id, st->u->url,
                         res.http_status == 304 ? "unchanged since the copy in"
                                                : "a new copy in",
                         st->u->backing_file);
        }
    }
    st->next_at = now + apr_time_from_sec(rsp_md_next_refresh(
        every, st->cache_duration_s, st->failures, st->have.valid_until, now));
    apr_pool_destroy(p);
}

static apr_status_t fetch_callback(int state, void *data, apr_pool_t *ptemp)
{
    apr_array_header_t *urls = data;
    apr_time_t now = apr_time_now();
    int i;

    if (state != AP_WATCHDOG_STATE_RUNNING) {
        return APR_SUCCESS;
    }
    for (i = 0; i < urls->nelts; i++) {
        url_state_t *st = &APR_ARRAY_IDX(urls, i, url_state_t);
        if (!st->pool && apr_pool_create(&st->pool, NULL) != APR_SUCCESS) {
            continue;
        }
        if (now >= st->next_at) {
            fetch_one(st, ptemp);
        }
    }
    return APR_SUCCESS;
}

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

/* Every SP's URL sources' slots moved to one shared memory segment
 * (what the fetch at start gave copied in), so that the host's fetcher
 * writes where every child reads. */
static int share_url_slots(apr_pool_t *pconf, server_rec *s)
{
    struct rsp_md_fetch_slot *shared = NULL;
    apr_size_t n = 0;
    apr_shm_t *shm;
    server_rec *vs;
    apr_status_t rv;
    int pass, i;

    for (pass = 0; pass < 2; pass++) {
        apr_size_t at = 0;
        for (vs = s; vs; vs = vs->next) {
            rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                     &replay_sp_module);
            for (i = 0; sc->sps && i < sc->sps->nelts; i++) {
                rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
                apr_size_t k = sp->def.md_urls && sp->url_slots
                               ? (apr_size_t)sp->def.md_urls->nelts : 0;
                if (pass == 1 && k) {
                    memcpy(&shared[at], sp->url_slots, k * sizeof(*shared));
                    sp->url_slots = &shared[at];
                }
                at += k;
            }
        }
        if (pass == 0) {
            if (!(n = at)) {
                return OK;
            }
            rv = apr_shm_create(&shm, n * sizeof(*shared), NULL, pconf);
            if (rv != APR_SUCCESS) {
                ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, RSP_LOGNO(01022)
                             "cannot create shared memory for the state of "
                             "metadata by URL");
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            shared = apr_shm_baseaddr_get(shm);
        }
    }
    return OK;
}

int rsp_refresh_post_config(apr_pool_t *pconf, server_rec *s)
{
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *register_callback;
    ap_watchdog_t *wd = NULL, *fetcher;
    apr_array_header_t *urls = apr_array_make(pconf, 1, sizeof(url_state_t));
    server_rec *vs;
    apr_status_t rv;
    int i, j;

    if (share_url_slots(pconf, s) != OK) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    register_callback = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    for (vs = s; vs; vs = vs->next) {
        rsp_srv_cfg_t *sc = ap_get_module_config(vs->module_config,
                                                 &replay_sp_module);
        for (i = 0; sc->sps && i < sc->sps->nelts; i++) {
            rsp_sp_conf_t *sp = APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *);
            apr_int64_t every = refresh_every(sp);
            watched_sp_t *w;

            if (!every || !sp->def.live) {
                continue; /* ReplaySPMetadataRefresh Off */
            }
            for (j = 0; sp->def.md_urls && j < sp->def.md_urls->nelts; j++) {
                url_state_t *st = apr_array_push(urls);
                memset(st, 0, sizeof(*st));
                st->sp = sp;
                st->j = j;
                st->u = &APR_ARRAY_IDX(sp->def.md_urls, j, rsp_md_url_t);
                st->s = vs;
                st->cache_duration_s = -1;
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
    if (urls->nelts) {
        /* one fetcher per host: a child singleton, ticking every second
         * and fetching each URL when it is due */
        rv = get_instance(&fetcher, FETCHER_NAME, 0, 1, pconf);
        if (rv == APR_SUCCESS) {
            rv = register_callback(fetcher, apr_time_from_sec(1), urls,
                                   fetch_callback);
        }
        if (rv != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, RSP_LOGNO(01024)
                         "cannot start fetching metadata by URL");
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return OK;
}
