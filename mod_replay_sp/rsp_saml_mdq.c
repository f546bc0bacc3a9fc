/* The IdPs an SP learns by MDQ (ReplaySPIdPMetadataQuery), per process:
 * a table of entities, each its own generation of one IdP (its keys
 * decoded on first use as a generation's are), current for the interval
 * rsp_mdq_fresh_s gives it; a negative cache of the entities that could
 * not be had; the limiter of fetches (rsp_mdq.h).
 *
 * A request pins what it finds (the entity's generation stays until the
 * request's pool is cleared, even once a newer copy replaces it in the
 * table). The table is bounded (RSP_MDQ_ENTITIES: beyond it, it starts
 * afresh), and so is the negative cache. Per process by design: each
 * process holds what it has asked for; the host's copies are shared
 * through the cache directory. */
#include <string.h>
#include <sys/stat.h>

#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include "rsp_log.h"
#include "rsp_mdq.h"
#include "rsp_saml.h"
#include "rsp_saml_int.h"

#define RSP_MDQ_ENTITIES 1024   /* entities held per SP per process */
#define RSP_MDQ_FAILED 4096     /* entities remembered as failed */
#define LIMIT_LOG_EVERY apr_time_from_sec(10)

typedef struct {
    const char *entity_id;          /* the table's key (in gen's pool) */
    struct rsp_idp_gen *gen;        /* its one IdP; the table's reference */
    const rsp_idp_t *idp;
    apr_time_t fresh_until;         /* asked again from then on */
    apr_time_t valid_until;
    apr_int64_t cache_duration_s;
    const char *etag, *last_modified;
} entry_t;

struct rsp_saml_mdq {
    apr_thread_mutex_t *lock;       /* everything below, and the entities'
                                     * references */
    rsp_mdq_t q;
    apr_pool_t *pool;               /* unmanaged: the table */
    apr_hash_t *entries;            /* entityID -> entry_t * */
    apr_pool_t *failed_pool;        /* unmanaged: the negative cache */
    apr_hash_t *failed;             /* entityID -> apr_time_t (until) */
    rsp_mdq_limit_t limit;
    apr_uint64_t number;            /* the last entity generation's */
    apr_time_t limit_logged;
    /* for the status handler */
    apr_uint64_t fetches, failures;
    int failing;                    /* the last fetch failed, other than
                                     * with a 404 */
    rsp_md_reason_e reason;
    apr_time_t failed_at;
    char last_error[512];
};

static apr_status_t mdq_gone(void *data)
{
    struct rsp_saml_mdq *m = data;
    apr_hash_index_t *hi;

    /* the configuration's end: no request holds an entity any more */
    for (hi = apr_hash_first(NULL, m->entries); hi; hi = apr_hash_next(hi)) {
        entry_t *e = apr_hash_this_val(hi);
        if (rsp_saml_gen_unref_locked(e->gen)) {
            rsp_saml_gen_free(e->gen);
        }
    }
    apr_pool_destroy(m->failed_pool);
    apr_pool_destroy(m->pool);
    return APR_SUCCESS;
}

apr_status_t rsp_saml_mdq_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                               const char **err)
{
    struct rsp_saml_mdq *m = apr_pcalloc(p, sizeof(*m));
    struct stat st;
    apr_status_t rv;

    if ((rv = rsp_saml_read_file(&m->q.cert_pem, p, sp->mdq_cert_file,
                                 64 * 1024, err)) != APR_SUCCESS) {
        *err = apr_psprintf(p, "ReplaySPIdPMetadataQuery: its certificate: %s",
                            *err);
        return rv;
    }
    if (!strstr(m->q.cert_pem, "-----BEGIN CERTIFICATE-----")) {
        *err = apr_psprintf(p, "ReplaySPIdPMetadataQuery: %s is not a PEM "
                            "certificate", sp->mdq_cert_file);
        return APR_EINVAL;
    }
    if (stat(sp->mdq_cache_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        *err = apr_psprintf(p, "ReplaySPIdPMetadataQuery: the cache directory "
                            "%s is not a directory", sp->mdq_cache_dir);
        return APR_EINVAL;
    }
    m->q.base_url = sp->mdq_url;
    m->q.cache_dir = sp->mdq_cache_dir;
    m->q.ca_file = sp->md_ca_file;
    m->q.max_validity_s = sp->md_max_validity ? sp->md_max_validity
                                              : RSP_MD_MAX_VALIDITY;
    m->q.refresh_s = sp->md_refresh == 0 ? RSP_MD_REFRESH : sp->md_refresh;
    if ((rv = apr_thread_mutex_create(&m->lock, APR_THREAD_MUTEX_DEFAULT, p))
            != APR_SUCCESS
        || (rv = apr_pool_create_unmanaged_ex(&m->pool, NULL, NULL))
            != APR_SUCCESS) {
        *err = "ReplaySPIdPMetadataQuery: cannot create its table";
        return rv;
    }
    if ((rv = apr_pool_create_unmanaged_ex(&m->failed_pool, NULL, NULL))
        != APR_SUCCESS) {
        apr_pool_destroy(m->pool);
        *err = "ReplaySPIdPMetadataQuery: cannot create its table";
        return rv;
    }
    m->entries = apr_hash_make(m->pool);
    m->failed = apr_hash_make(m->failed_pool);
    apr_pool_cleanup_register(p, m, mdq_gone, apr_pool_cleanup_null);
    sp->mdq = m;
    return APR_SUCCESS;
}

/* ---- what a document must be ---- */

typedef struct {
    const rsp_saml_sp_t *sp;
    const char *entity_id;
    apr_pool_t *pool;               /* unmanaged: the last document taken */
    rsp_idp_index_t *idps;
} take_t;

static void take_drop(take_t *t)
{
    if (t->pool) {
        apr_pool_destroy(t->pool);
    }
    t->pool = NULL;
    t->idps = NULL;
}

/* rsp_md_source_t.accept: one IdP, the entity asked for, kept by the
 * SP's filters. */
static apr_status_t take(void *baton, apr_pool_t *p, const char *data,
                         apr_size_t len, apr_time_t valid_until,
                         const char **why)
{
    take_t *t = baton;
    const char *err = NULL;
    int n;

    take_drop(t);
    if (apr_pool_create_unmanaged_ex(&t->pool, NULL, NULL) != APR_SUCCESS) {
        *why = "out of memory";
        return APR_ENOMEM;
    }
    t->idps = rsp_idp_index_make(t->pool);
    if (rsp_idp_index_add(t->idps, t->pool, data, len, valid_until,
                          t->sp->idp_include, t->sp->idp_exclude, &err)
        != APR_SUCCESS) {
        *why = apr_pstrdup(p, err);
        take_drop(t);
        return APR_EINVAL;
    }
    n = rsp_idp_count(t->idps);
    if (n == 1 && !strcmp(rsp_idp_at(t->idps, 0)->entity_id, t->entity_id)) {
        return APR_SUCCESS;
    }
    *why = n > 1 ? apr_psprintf(p, "it describes %d IdPs, not one", n)
         : n == 1 ? apr_psprintf(p, "it describes %s, not the entity asked "
                                 "for", rsp_idp_at(t->idps, 0)->entity_id)
         : t->idps->skipped ? "its IdP is left out by ReplaySPIdPInclude / "
                              "ReplaySPIdPExclude"
         : "it describes no IdP (no IDPSSODescriptor)";
    take_drop(t);
    return APR_EINVAL;
}

/* ---- the table (m->lock held) ---- */

/* Remember entity_id as failed until `until`. */
static void failed_note(struct rsp_saml_mdq *m, const char *entity_id,
                        apr_time_t until)
{
    apr_time_t *at = apr_hash_get(m->failed, entity_id, APR_HASH_KEY_STRING);

    if (!at) {
        if (apr_hash_count(m->failed) >= RSP_MDQ_FAILED) {
            apr_pool_clear(m->failed_pool);
            m->failed = apr_hash_make(m->failed_pool);
        }
        at = apr_palloc(m->failed_pool, sizeof(*at));
        apr_hash_set(m->failed, apr_pstrdup(m->failed_pool, entity_id),
                     APR_HASH_KEY_STRING, at);
    }
    *at = until;
}

/* Take e out of the table; its generation into *dead when that was its
 * last reference (to be freed once the lock is released). */
static void entry_drop(struct rsp_saml_mdq *m, entry_t *e,
                       apr_array_header_t *dead)
{
    apr_hash_set(m->entries, e->entity_id, APR_HASH_KEY_STRING, NULL);
    if (rsp_saml_gen_unref_locked(e->gen)) {
        APR_ARRAY_PUSH(dead, struct rsp_idp_gen *) = e->gen;
    }
}

/* t's document as the entity's entry (replacing the one held), or NULL
 * when its generation cannot be made. */
static entry_t *entry_put(struct rsp_saml_mdq *m, take_t *t,
                          const rsp_md_result_t *res, apr_int64_t fresh_s,
                          apr_time_t now, apr_array_header_t *dead)
{
    entry_t *e, *old;
    struct rsp_idp_gen *g;
    apr_hash_index_t *hi;

    if (!t->idps   /* every document taken went through take() */
        || !(g = rsp_saml_gen_new(t->pool, t->idps, m->number + 1, m->lock))) {
        return NULL;
    }
    m->number++;
    e = apr_pcalloc(t->pool, sizeof(*e));
    e->gen = g;
    e->idp = rsp_idp_at(t->idps, 0);
    e->entity_id = e->idp->entity_id;
    e->fresh_until = now + apr_time_from_sec(fresh_s);
    e->valid_until = res->valid_until;
    e->cache_duration_s = res->cache_duration_s;
    e->etag = res->etag ? apr_pstrdup(t->pool, res->etag) : NULL;
    e->last_modified = res->last_modified
                       ? apr_pstrdup(t->pool, res->last_modified) : NULL;
    t->pool = NULL; /* the generation's now */
    if ((old = apr_hash_get(m->entries, e->entity_id, APR_HASH_KEY_STRING))) {
        entry_drop(m, old, dead);
    }
    if (apr_hash_count(m->entries) >= RSP_MDQ_ENTITIES) {
        /* full: start afresh (what requests hold stays theirs) */
        while ((hi = apr_hash_first(NULL, m->entries))) {
            entry_drop(m, apr_hash_this_val(hi), dead);
        }
    }
    apr_hash_set(m->entries, e->entity_id, APR_HASH_KEY_STRING, e);
    apr_hash_set(m->failed, e->entity_id, APR_HASH_KEY_STRING, NULL);
    return e;
}

static void failure_note(struct rsp_saml_mdq *m, const rsp_md_result_t *res,
                         apr_time_t now)
{
    m->failures++;
    /* the service failing, not an entity it does not know (anyone can
     * send any Issuer) */
    m->failing = res->http_status != 404;
    m->reason = res->reason;
    m->failed_at = now;
    apr_snprintf(m->last_error, sizeof(m->last_error), "%s: %s",
                 rsp_md_reason_name(res->reason),
                 res->detail ? res->detail : "");
}

/* ---- a lookup ---- */

/* entity_id fetched (or read from the host's copy) and put in the table,
 * or confirmed, or failed; held: the entry the process has (pinned), or
 * NULL. The IdP to use, pinned, or NULL. */
static const rsp_idp_t *fetch(const rsp_saml_sp_t *sp, struct rsp_saml_mdq *m,
                              const char *entity_id, entry_t *held,
                              apr_time_t now, struct rsp_idp_gen **g)
{
    apr_pool_t *p = sp->pin_pool;
    apr_array_header_t *dead = apr_array_make(p, 2, sizeof(struct rsp_idp_gen *));
    take_t t = { sp, entity_id, NULL, NULL };
    const rsp_idp_t *idp = NULL;
    const char *said = NULL;
    int level = RSP_LOG_ERR, fetched, i;
    rsp_md_have_t have, *hp = NULL;
    rsp_md_result_t res;
    apr_int64_t fresh_s;
    apr_status_t rv;
    entry_t *e;

    if (held) {
        memset(&have, 0, sizeof(have));
        have.etag = held->etag;
        have.last_modified = held->last_modified;
        have.valid_until = held->valid_until;
        hp = &have;
    }
    rv = rsp_mdq_get(&res, &fresh_s, &fetched, p, &m->q, entity_id, hp, now,
                     take, &t);
    apr_thread_mutex_lock(m->lock);
    rsp_mdq_limit_done(&m->limit);
    m->fetches += fetched;
    e = apr_hash_get(m->entries, entity_id, APR_HASH_KEY_STRING);
    if (rv == APR_SUCCESS && res.outcome == RSP_MD_NEW
        && (e = entry_put(m, &t, &res, fresh_s, now, dead))) {
        rsp_saml_gen_pin_locked(e->gen, p);
        idp = e->idp;
        *g = e->gen;
        m->failing = 0;
        if (res.from_backing) {
            failure_note(m, &res, now);
            said = apr_psprintf(p, "MDQ: %s: %s: %s; the host's copy (%s) is "
                                "used until it is asked for again",
                                entity_id, rsp_md_reason_name(res.reason),
                                res.detail, res.origin);
        }
    }
    else if (rv == APR_SUCCESS && res.outcome == RSP_MD_NOT_MODIFIED && held) {
        if (e == held) {
            held->fresh_until = now + apr_time_from_sec(rsp_mdq_fresh_s(
                &m->q, held->cache_duration_s, held->valid_until, now));
        }
        idp = held->idp;
        *g = held->gen;
        m->failing = 0;
    }
    else {
        if (rv == APR_SUCCESS) { /* a generation that could not be made */
            res.reason = RSP_MD_ERR_MALFORMED;
            res.detail = "out of memory";
        }
        failure_note(m, &res, now);
        if (held && held->valid_until > now) {
            /* the copy held is still valid: kept, asked again later */
            if (e == held) {
                held->fresh_until = now + apr_time_from_sec(RSP_MDQ_NEGATIVE_S);
            }
            idp = held->idp;
            *g = held->gen;
            said = apr_psprintf(p, "MDQ: %s: %s: %s; the copy held is kept "
                                "until its validUntil", entity_id,
                                rsp_md_reason_name(res.reason), res.detail);
        }
        else {
            if (e && e == held) {
                entry_drop(m, e, dead);
            }
            failed_note(m, entity_id,
                        now + apr_time_from_sec(RSP_MDQ_NEGATIVE_S));
            said = apr_psprintf(p, "MDQ: %s: %s: %s; this IdP's messages are "
                                "refused (check=issuer), asked for again in "
                                "%d s", entity_id,
                                rsp_md_reason_name(res.reason), res.detail,
                                RSP_MDQ_NEGATIVE_S);
        }
    }
    apr_thread_mutex_unlock(m->lock);
    take_drop(&t);
    for (i = 0; i < dead->nelts; i++) {
        rsp_saml_gen_free(APR_ARRAY_IDX(dead, i, struct rsp_idp_gen *));
    }
    if (said) {
        rsp_log(level, "%s", said);
    }
    else if (idp && fetched) {
        rsp_log(RSP_LOG_INFO, "MDQ: %s: %s (%s)", entity_id,
                res.outcome == RSP_MD_NOT_MODIFIED ? "not modified"
                                                   : "fetched and verified",
                res.origin);
    }
    return idp;
}

const rsp_idp_t *rsp_saml_mdq_find(const rsp_saml_sp_t *sp,
                                   const char *entity_id,
                                   struct rsp_idp_gen **g)
{
    struct rsp_saml_mdq *m = sp->mdq;
    apr_time_t now = apr_time_now();
    const char *why = NULL;
    apr_time_t *until;
    entry_t *e;
    int log_limit = 0;

    if (!m || !sp->pin_pool || !*entity_id
        || strlen(entity_id) > RSP_MDQ_ENTITY_ID_MAX) {
        return NULL;
    }
    apr_thread_mutex_lock(m->lock);
    e = apr_hash_get(m->entries, entity_id, APR_HASH_KEY_STRING);
    if (e) {
        rsp_saml_gen_pin_locked(e->gen, sp->pin_pool);
        if (now < e->fresh_until) {
            apr_thread_mutex_unlock(m->lock);
            *g = e->gen;
            return e->idp;
        }
    }
    else if ((until = apr_hash_get(m->failed, entity_id, APR_HASH_KEY_STRING))
             && now < *until) {
        apr_thread_mutex_unlock(m->lock);
        return NULL;
    }
    if (!rsp_mdq_limit_take(&m->limit, now, &why)) {
        if (now - m->limit_logged >= LIMIT_LOG_EVERY) {
            m->limit_logged = now;
            log_limit = 1;
        }
        apr_thread_mutex_unlock(m->lock);
        if (log_limit) {
            rsp_log(RSP_LOG_WARNING, "MDQ: %s not asked for: %s (at most %d "
                    "a minute, %d at once); refused (check=issuer)",
                    entity_id, why, RSP_MDQ_PER_MINUTE, RSP_MDQ_IN_FLIGHT);
        }
        if (e && e->valid_until > now) {
            *g = e->gen; /* a copy still valid: not refused for that */
            return e->idp;
        }
        return NULL;
    }
    apr_thread_mutex_unlock(m->lock);
    return fetch(sp, m, entity_id, e, now, g);
}

void rsp_saml_mdq_state(const rsp_saml_sp_t *sp, rsp_saml_mdq_state_t *out,
                        apr_pool_t *p)
{
    struct rsp_saml_mdq *m = sp->mdq;

    memset(out, 0, sizeof(*out));
    if (!m) {
        return;
    }
    apr_thread_mutex_lock(m->lock);
    out->entities = (int)apr_hash_count(m->entries);
    out->fetches = m->fetches;
    out->failures = m->failures;
    out->generation = m->number;
    if (m->failing) {
        out->failing_reason = (int)m->reason;
    }
    out->failing = m->failing;
    if (m->failed_at) {
        out->failed_at = m->failed_at;
        out->last_error = apr_pstrdup(p, m->last_error);
    }
    apr_thread_mutex_unlock(m->lock);
}
