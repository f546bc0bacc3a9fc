/* The IdPs of a loaded SP: generations of them read from its metadata
 * files, each IdP's keys decoded on its first use, and IdPs made known to
 * a worker's Lasso server as it needs them.
 *
 * A generation is what one read of every metadata file gave (the index
 * of rsp_idp_index.h) with the keys decoded from it so far. The first is
 * read at load, in httpd's parent, and every child starts with it;
 * rsp_saml_sp_refresh reads the files again in a process when one
 * changed, and the new generation replaces the current one there.
 * Requests pin the generation they start with (rsp_saml_sp_pin): it is
 * freed when it is no longer current and the last request holding it is
 * done. Each generation's memory is its own and goes back to the system
 * with it. Per process by design: each process has its own current
 * generation and its own decoded keys. */
#include <string.h>

#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <lasso/lasso.h>
#include <lasso/utils.h>

#include "rsp_log.h"
#include "rsp_md_source.h"
#include "rsp_md_verify.h"
#include "rsp_saml.h"
#include "rsp_saml_int.h"

/* One IdP's keys, decoded. */
typedef struct {
    const char *first_pem;          /* what Lasso names the provider's key */
    apr_array_header_t *keys;       /* LassoKey *, one per certificate */
} idp_keys_t;

struct rsp_idp_gen {
    apr_pool_t *pool;               /* unmanaged: all of it */
    apr_uint64_t number;            /* 1, 2, ... in this process */
    rsp_idp_index_t *idps;
    rsp_md_file_id_t *files;        /* what was read of each file */
    rsp_saml_md_file_t *per_file;   /* and what each gave */
    apr_time_t read_at;
    int refs;                       /* current (or in the MDQ table), and
                                     * each pin (ref_lock) */
    apr_thread_mutex_t *ref_lock;   /* live->lock, or the MDQ table's */
    /* the IdPs' keys, decoded on first use (lock guards these) */
    apr_thread_mutex_t *lock;
    apr_pool_t *key_pool;           /* unmanaged */
    idp_keys_t **slot;              /* by rsp_idp_t.pos; NULL: not yet */
    int loaded, max;
};

struct rsp_idp_live {
    apr_thread_mutex_t *lock;
    struct rsp_idp_gen *current;
    rsp_md_file_id_t *failed;       /* the files of the last refused read */
    int has_failed;
    int failed_file;                /* the file refused (-1: the whole) */
    rsp_md_reason_e failed_reason;
    apr_time_t failed_at;
    apr_time_t checked_at;          /* the files last looked at */
    char last_error[512];
};

/* ---- one generation ---- */

static void keys_drop(struct rsp_idp_gen *g)
{
    int i, j;

    for (i = 0; i < rsp_idp_count(g->idps); i++) {
        idp_keys_t *e = g->slot[i];
        for (j = 0; e && j < e->keys->nelts; j++) {
            g_object_unref(APR_ARRAY_IDX(e->keys, j, LassoKey *));
        }
        g->slot[i] = NULL;
    }
    g->loaded = 0;
    apr_pool_clear(g->key_pool);
}

static void gen_free(struct rsp_idp_gen *g)
{
    if (g->key_pool) {
        keys_drop(g);
        apr_pool_destroy(g->key_pool);
    }
    apr_pool_destroy(g->pool);
}

/* g's cache of decoded keys: at most max IdPs' (<= 0:
 * RSP_PROCESS_IDP_KEYS). */
static apr_status_t keys_init(struct rsp_idp_gen *g, int max)
{
    apr_status_t rv;

    if ((rv = apr_thread_mutex_create(&g->lock, APR_THREAD_MUTEX_DEFAULT,
                                      g->pool)) != APR_SUCCESS
        || (rv = apr_pool_create_unmanaged_ex(&g->key_pool, NULL, NULL))
            != APR_SUCCESS) {
        return rv;
    }
    g->max = max > 0 ? max : RSP_PROCESS_IDP_KEYS;
    g->slot = apr_pcalloc(g->pool, sizeof(idp_keys_t *)
                                   * (apr_size_t)(rsp_idp_count(g->idps) + 1));
    return APR_SUCCESS;
}

struct rsp_idp_gen *rsp_saml_gen_new(apr_pool_t *pool, rsp_idp_index_t *idps,
                                     apr_uint64_t number,
                                     apr_thread_mutex_t *ref_lock)
{
    struct rsp_idp_gen *g = apr_pcalloc(pool, sizeof(*g));

    g->pool = pool;
    g->number = number;
    g->idps = idps;
    g->read_at = apr_time_now();
    g->ref_lock = ref_lock;
    g->refs = 1;
    if (keys_init(g, 0) != APR_SUCCESS) {
        return NULL;
    }
    return g;
}

/* One metadata file into g's index: read (its text in memory of its own,
 * returned once read: an aggregate is tens of megabytes), its signature
 * and validUntil verified when a certificate signs it, its IdPs added. */
static apr_status_t read_one(struct rsp_idp_gen *g, const rsp_saml_sp_t *sp,
                             int i, rsp_md_reason_e *reason, apr_pool_t *errp,
                             const char **err)
{
    const char *path = APR_ARRAY_IDX(sp->idp_files, i, const char *);
    const char *cert = sp->idp_file_certs
                       ? APR_ARRAY_IDX(sp->idp_file_certs, i, const char *)
                       : NULL;
    const char *file, *pem, *why = NULL;
    apr_time_t valid_until = 0;
    int before = rsp_idp_count(g->idps);
    apr_pool_t *text;
    xmlDocPtr tree = NULL;
    apr_status_t rv;

    if ((rv = apr_pool_create_unmanaged_ex(&text, NULL, NULL)) != APR_SUCCESS) {
        *err = "out of memory";
        return rv;
    }
    /* what is read is what the file is now: a change after this is seen
     * by the next refresh */
    if (rsp_md_file_id(&g->files[i], path, text) != APR_SUCCESS) {
        memset(&g->files[i], 0, sizeof(g->files[i]));
    }
    if ((rv = rsp_saml_read_file(&file, text, path, RSP_MD_MAX_SIZE, err))
        != APR_SUCCESS) {
        /* APR_EINVAL: empty, or larger than the limit */
        *reason = rv != APR_EINVAL ? RSP_MD_ERR_FETCH
                  : strstr(*err, "too large") ? RSP_MD_ERR_TOO_LARGE
                  : RSP_MD_ERR_MALFORMED;
        *err = apr_pstrdup(errp, *err);
        goto done;
    }
    if (cert) {
        *reason = RSP_MD_ERR_SIGNATURE; /* nothing to verify it with */
        if ((rv = rsp_saml_read_file(&pem, text, cert, 64 * 1024, err))
            != APR_SUCCESS) {
            *err = apr_pstrdup(errp, *err);
            goto done;
        }
        /* the tree that verified is the one read: parsed once */
        if ((rv = rsp_md_verify_tree(text, file, strlen(file), pem,
                                     apr_time_now(),
                                     sp->md_max_validity ? sp->md_max_validity
                                                         : RSP_MD_MAX_VALIDITY,
                                     &valid_until, &tree, &why))
            != APR_SUCCESS) {
            *err = apr_psprintf(errp, "%s (signed by %s): %s", path, cert, why);
            *reason = rsp_md_reason_of(why);
            goto done;
        }
    }
    /* One IdP, or a federation's aggregate of many. */
    g->per_file[i].valid_until = valid_until;
    rv = tree ? rsp_idp_index_add_tree(g->idps, g->pool, tree, valid_until,
                                       sp->idp_include, sp->idp_exclude, &why)
              : rsp_idp_index_add(g->idps, g->pool, file, strlen(file),
                                  valid_until, sp->idp_include,
                                  sp->idp_exclude, &why);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(errp, "%s: %s", path, why);
        *reason = RSP_MD_ERR_MALFORMED;
    }
    g->per_file[i].idps = rsp_idp_count(g->idps) - before;
done:
    if (tree) {
        xmlFreeDoc(tree);
    }
    apr_pool_destroy(text);
    return rv;
}

/* A generation read from sp's files now, after prev (NULL: the first);
 * *err in errp, and *failed_file the file refused (-1: none of them
 * alone). */
static apr_status_t gen_build(struct rsp_idp_gen **out, const rsp_saml_sp_t *sp,
                              const struct rsp_idp_gen *prev,
                              rsp_sp_input_t *input, int *failed_file,
                              rsp_md_reason_e *reason, apr_pool_t *errp,
                              const char **err)
{
    struct rsp_idp_gen *g;
    apr_pool_t *pool;
    apr_status_t rv;
    int i;

    *input = RSP_SP_INPUT_IDP;
    if ((rv = apr_pool_create_unmanaged_ex(&pool, NULL, NULL)) != APR_SUCCESS) {
        *err = "out of memory";
        return rv;
    }
    g = apr_pcalloc(pool, sizeof(*g));
    g->pool = pool;
    g->number = prev ? prev->number + 1 : 1;
    g->idps = rsp_idp_index_make(pool);
    g->files = apr_pcalloc(pool, sizeof(rsp_md_file_id_t)
                                     * (apr_size_t)(sp->idp_files->nelts + 1));
    g->per_file = apr_pcalloc(pool, sizeof(rsp_saml_md_file_t)
                                        * (apr_size_t)(sp->idp_files->nelts + 1));
    g->read_at = apr_time_now();
    for (i = 0; i < sp->idp_files->nelts; i++) {
        *failed_file = i;
        if ((rv = read_one(g, sp, i, reason, errp, err)) != APR_SUCCESS) {
            goto fail;
        }
        /* a file as it was in prev: its content came in with prev's */
        g->per_file[i].generation =
            prev && !rsp_md_file_changed(&prev->files[i], &g->files[i])
            ? prev->per_file[i].generation : g->number;
    }
    *failed_file = -1;
    *reason = RSP_MD_ERR_MALFORMED; /* read, but not usable as it is */
    rv = APR_EINVAL;
    if (!rsp_idp_count(g->idps) && !sp->mdq_url) {
        *err = "no IdP is left once ReplaySPIdPInclude and ReplaySPIdPExclude "
               "have chosen";
        goto fail;
    }
    *input = RSP_SP_INPUT_SHA1;
    for (i = 0; sp->sha1_idps && i < sp->sha1_idps->nelts; i++) {
        const char *idp = APR_ARRAY_IDX(sp->sha1_idps, i, const char *);
        if (!rsp_idp_find(g->idps, idp) && !sp->mdq_url) {
            *err = apr_psprintf(errp, "%s is none of this SP's IdPs (their "
                                "entityIDs, from ReplaySPIdPMetadataFile)", idp);
            goto fail;
        }
    }
    *input = RSP_SP_INPUT_OTHER;
    if (sp->default_idp && !rsp_idp_find(g->idps, sp->default_idp)
        && !sp->mdq_url) {
        *err = apr_psprintf(errp, "ReplaySPDefaultIdP %s is none of this SP's "
                            "IdPs (their entityIDs, from "
                            "ReplaySPIdPMetadataFile)", sp->default_idp);
        goto fail;
    }
    if ((rv = keys_init(g, sp->process_idp_keys_max)) != APR_SUCCESS) {
        *err = "cannot create the IdP key cache";
        goto fail;
    }
    *out = g;
    return APR_SUCCESS;
fail:
    apr_pool_destroy(pool);
    return rv;
}

/* ---- the current generation of a process ---- */

static apr_status_t live_gone(void *data)
{
    struct rsp_idp_live *live = data;

    /* the configuration's end: no request holds a generation any more */
    if (live->current) {
        gen_free(live->current);
        live->current = NULL;
    }
    return APR_SUCCESS;
}

void rsp_saml_gen_release(struct rsp_idp_gen *g)
{
    int dead;

    apr_thread_mutex_lock(g->ref_lock);
    dead = --g->refs == 0;
    apr_thread_mutex_unlock(g->ref_lock);
    if (dead) {
        gen_free(g);
    }
}

int rsp_saml_gen_unref_locked(struct rsp_idp_gen *g)
{
    return --g->refs == 0;
}

void rsp_saml_gen_free(struct rsp_idp_gen *g)
{
    gen_free(g);
}

static apr_status_t gen_unpin(void *data)
{
    rsp_saml_gen_release(data);
    return APR_SUCCESS;
}

void rsp_saml_gen_pin_locked(struct rsp_idp_gen *g, apr_pool_t *p)
{
    g->refs++;
    apr_pool_cleanup_register(p, g, gen_unpin, apr_pool_cleanup_null);
}

static struct rsp_idp_gen *gen_take(struct rsp_idp_live *live)
{
    struct rsp_idp_gen *g;

    apr_thread_mutex_lock(live->lock);
    g = live->current;
    g->refs++;
    apr_thread_mutex_unlock(live->lock);
    return g;
}

const rsp_saml_sp_t *rsp_saml_sp_pin(const rsp_saml_sp_t *sp, apr_pool_t *p)
{
    const char *key;
    void *found = NULL;
    rsp_saml_sp_t *copy;
    struct rsp_idp_gen *g;

    if (!sp->live) {
        return sp; /* not loaded: nothing to pin */
    }
    key = apr_psprintf(p, "rsp-pin:%pp", (const void *)sp);
    if (apr_pool_userdata_get(&found, key, p) == APR_SUCCESS && found) {
        return found;
    }
    apr_thread_mutex_lock(sp->live->lock);
    g = sp->live->current;
    rsp_saml_gen_pin_locked(g, p);
    apr_thread_mutex_unlock(sp->live->lock);
    copy = apr_pmemdup(p, sp, sizeof(*sp));
    copy->gen = g;
    copy->idps = g->idps;
    copy->pin_pool = p;
    apr_pool_userdata_setn(copy, key, NULL, p);
    return copy;
}

/* The IdP entity_id and the generation it is of: sp's, or (found by
 * MDQ) its own, pinned to the request. */
static const rsp_idp_t *idp_of(const rsp_saml_sp_t *sp, const char *entity_id,
                               struct rsp_idp_gen **g)
{
    const rsp_idp_t *idp;

    *g = sp->gen;
    if (!entity_id) {
        return NULL;
    }
    idp = sp->idps ? rsp_idp_find(sp->idps, entity_id) : NULL;
    if (!idp && sp->mdq) {
        idp = rsp_saml_mdq_find(sp, entity_id, g);
    }
    return idp;
}

const rsp_idp_t *rsp_saml_idp(const rsp_saml_sp_t *sp, const char *entity_id)
{
    struct rsp_idp_gen *g;

    return idp_of(sp, entity_id, &g);
}

apr_status_t rsp_saml_idps_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                                rsp_sp_input_t *input, const char **err)
{
    struct rsp_idp_live *live = apr_pcalloc(p, sizeof(*live));
    struct rsp_idp_gen *g;
    rsp_lasso_server_t *server;
    rsp_saml_sp_t proof;
    const char *first;
    apr_status_t rv;
    int rc, failed_file;
    rsp_md_reason_e reason;

    if ((rv = apr_thread_mutex_create(&live->lock, APR_THREAD_MUTEX_DEFAULT, p))
        != APR_SUCCESS) {
        *err = "cannot create a mutex";
        return rv;
    }
    live->failed = apr_pcalloc(p, sizeof(rsp_md_file_id_t)
                                      * (apr_size_t)(sp->idp_files->nelts + 1));
    if ((rv = gen_build(&g, sp, NULL, input, &failed_file, &reason, p, err))
        != APR_SUCCESS) {
        return rv;
    }
    g->ref_lock = live->lock;
    g->refs = 1; /* current */
    live->current = g;
    live->checked_at = g->read_at;
    apr_pool_cleanup_register(p, live, live_gone, apr_pool_cleanup_null);
    sp->live = live;
    sp->qualify_default = rsp_idp_count(g->idps) > 1 || sp->mdq_url;
    first = sp->default_idp && rsp_idp_find(g->idps, sp->default_idp)
            ? sp->default_idp
            : rsp_idp_count(g->idps) ? rsp_idp_at(g->idps, 0)->entity_id
                                     : NULL;
    if (!first) {
        return APR_SUCCESS; /* IdPs by MDQ alone: nothing to prove now */
    }
    /* Build one server, with the IdP a sign-in goes to first, now: what a
     * worker will do is proven here. */
    proof = *sp;
    proof.gen = g;
    proof.idps = g->idps;
    if ((rv = rsp_saml_server_new(&server, sp, err)) != APR_SUCCESS) {
        return rv;
    }
    *input = RSP_SP_INPUT_IDP;
    rc = rsp_saml_server_idp(server, &proof, first);
    rsp_saml_server_free(server);
    if (rc != 0) {
        *err = apr_psprintf(p, "IdP %s: %s", first, lasso_strerror(rc));
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static int same_files(const rsp_md_file_id_t *a, const rsp_md_file_id_t *b,
                      int n)
{
    int i;

    for (i = 0; i < n; i++) {
        if (rsp_md_file_changed(&a[i], &b[i])) {
            return 0;
        }
    }
    return 1;
}

apr_status_t rsp_saml_sp_refresh(rsp_saml_sp_t *sp, apr_pool_t *ptemp,
                                 int *changed, apr_uint64_t *generation,
                                 const char **err)
{
    struct rsp_idp_live *live = sp->live;
    struct rsp_idp_gen *cur, *g, *old;
    rsp_md_file_id_t *now;
    rsp_sp_input_t input;
    apr_status_t rv = APR_SUCCESS;
    int i, n = sp->idp_files->nelts, nothing_new, failed_file = -1;
    rsp_md_reason_e reason = RSP_MD_OK;

    *changed = 0;
    if (!live) {
        return APR_SUCCESS;
    }
    now = apr_pcalloc(ptemp, sizeof(*now) * (apr_size_t)(n + 1));
    for (i = 0; i < n; i++) {
        if (rsp_md_file_id(&now[i], APR_ARRAY_IDX(sp->idp_files, i,
                                                  const char *), ptemp)
            != APR_SUCCESS) {
            memset(&now[i], 0, sizeof(now[i])); /* gone: a change */
        }
    }
    cur = gen_take(live);
    apr_thread_mutex_lock(live->lock);
    live->checked_at = apr_time_now();
    nothing_new = live->has_failed && same_files(now, live->failed, n);
    if (same_files(now, cur->files, n)) {
        live->has_failed = 0; /* back to what is in use */
        nothing_new = 1;
    }
    apr_thread_mutex_unlock(live->lock);
    if (nothing_new) {
        rsp_saml_gen_release(cur);
        return APR_SUCCESS;
    }
    rv = gen_build(&g, sp, cur, &input, &failed_file, &reason, ptemp, err);
    apr_thread_mutex_lock(live->lock);
    if (rv != APR_SUCCESS) {
        memcpy(live->failed, now, sizeof(*now) * (apr_size_t)n);
        live->has_failed = 1;
        live->failed_file = failed_file;
        live->failed_reason = reason;
        live->failed_at = apr_time_now();
        apr_cpystrn(live->last_error, *err, sizeof(live->last_error));
        old = NULL;
    }
    else {
        g->ref_lock = live->lock;
        g->refs = 1;
        old = live->current;
        live->current = g;
        live->has_failed = 0;
        live->last_error[0] = '\0';
        *changed = 1;
        *generation = g->number;
    }
    apr_thread_mutex_unlock(live->lock);
    if (old) {
        rsp_saml_gen_release(old); /* no longer current */
    }
    rsp_saml_gen_release(cur);
    return rv;
}

void rsp_saml_md_state(const rsp_saml_sp_t *sp, rsp_saml_md_state_t *out,
                       apr_pool_t *p)
{
    struct rsp_idp_live *live = sp->live;

    memset(out, 0, sizeof(*out));
    if (!live) {
        return;
    }
    apr_thread_mutex_lock(live->lock);
    out->generation = live->current->number;
    out->idps = rsp_idp_count(live->current->idps);
    out->valid_until = live->current->idps->valid_until;
    out->read_at = live->current->read_at;
    out->checked_at = live->checked_at;
    out->nfiles = sp->idp_files->nelts;
    out->files = apr_pmemdup(p, live->current->per_file,
                             sizeof(rsp_saml_md_file_t)
                             * (apr_size_t)(out->nfiles + 1));
    out->failed_file = -1;
    if (live->has_failed) {
        out->failed_at = live->failed_at;
        out->failed_file = live->failed_file;
        out->failed_reason = live->failed_reason;
        out->last_error = apr_pstrdup(p, live->last_error);
    }
    apr_thread_mutex_unlock(live->lock);
}

/* ---- IdPs' keys and providers ---- */

/* The IdP's keys, decoded now if this process has not yet: NULL when one
 * of them cannot be loaded. Called with g->lock held. */
static const idp_keys_t *idp_keys(struct rsp_idp_gen *g, const rsp_idp_t *idp)
{
    apr_array_header_t *pems;
    idp_keys_t *e;
    int i;

    if (g->slot[idp->pos]) {
        return g->slot[idp->pos];
    }
    if (g->loaded >= g->max) {
        keys_drop(g);
    }
    pems = rsp_saml_idp_public_keys(g->key_pool, idp->certs);
    e = apr_pcalloc(g->key_pool, sizeof(*e));
    e->keys = apr_array_make(g->key_pool, pems->nelts ? pems->nelts : 1,
                             sizeof(LassoKey *));
    e->first_pem = pems->nelts ? APR_ARRAY_IDX(pems, 0, const char *) : NULL;
    for (i = 0; i < pems->nelts; i++) {
        LassoKey *key = rsp_saml_key_from_pem(APR_ARRAY_IDX(pems, i,
                                                            const char *));
        if (!key) {
            rsp_log(RSP_LOG_ERR, "IdP %s: signing key %d of its metadata "
                    "cannot be loaded: its messages are refused "
                    "(check=issuer)", idp->entity_id, i + 1);
            for (i = 0; i < e->keys->nelts; i++) {
                g_object_unref(APR_ARRAY_IDX(e->keys, i, LassoKey *));
            }
            return NULL;
        }
        APR_ARRAY_PUSH(e->keys, LassoKey *) = key;
    }
    g->slot[idp->pos] = e;
    g->loaded++;
    return e;
}

int rsp_saml_idp_keys_loaded(const rsp_saml_sp_t *sp)
{
    int n;

    apr_thread_mutex_lock(sp->gen->lock);
    n = sp->gen->loaded;
    apr_thread_mutex_unlock(sp->gen->lock);
    return n;
}

/* What a server's provider was made from: 0 for the generation's IdPs,
 * an MDQ entity's own number for it (a newer copy of the entity is
 * another number). */
#define SERVER_SRC "rsp-source"

/* One IdP for our server: its metadata without keys, its signing keys as
 * bare keys (copies of the loaded ones), and our signing key for what we
 * send it. */
static int add_idp(LassoServer *server, const char *md,
                   const idp_keys_t *keys, LassoKey *signing, gsize tag)
{
    LassoProvider *prov = lasso_provider_new_from_buffer(
        LASSO_PROVIDER_ROLE_IDP, md, NULL, NULL);
    int i, rc = 0;

    if (!prov || !prov->ProviderID) {
        rc = LASSO_SERVER_ERROR_ADD_PROVIDER_FAILED;
        goto done;
    }
    if (lasso_provider_get_protocol_conformance(prov) != LASSO_PROTOCOL_SAML_2_0) {
        rc = LASSO_SERVER_ERROR_ADD_PROVIDER_PROTOCOL_MISMATCH;
        goto done;
    }
    for (i = 0; i < keys->keys->nelts && rc == 0; i++) {
        rc = lasso_provider_add_key(prov, APR_ARRAY_IDX(keys->keys, i, LassoKey *),
                                    TRUE);
    }
    /* Lasso hands out a provider's keys only when the provider names a
     * public key of its own (or has KeyDescriptors): the first one, the
     * very text it would have loaded, already loaded. */
    if (rc == 0 && keys->first_pem) {
        lasso_assign_string(prov->public_key, keys->first_pem);
    }
    if (rc == 0 && signing) {
        rc = lasso_provider_set_server_signing_key(prov, signing);
    }
    if (rc == 0) {
        g_object_set_data(G_OBJECT(prov), SERVER_SRC, GSIZE_TO_POINTER(tag));
        rc = lasso_server_add_provider2(server, prov);
    }
done:
    if (prov) {
        g_object_unref(prov);
    }
    return rc;
}

#define SERVER_GEN "rsp-generation"

int rsp_saml_server_idp(rsp_lasso_server_t *server, const rsp_saml_sp_t *sp,
                        const char *entity_id)
{
    struct rsp_idp_gen *g = sp->gen, *of;
    const rsp_idp_t *idp;
    const idp_keys_t *keys;
    LassoProvider *have;
    gpointer held;
    apr_pool_t *tmp;
    gsize tag;
    int rc;

    if (!g) {
        return LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND;
    }
    /* A server's IdPs are all of one generation: what it learnt of an
     * earlier one (an IdP since removed, a key since rolled over) is
     * forgotten, before anything is looked up. */
    held = g_object_get_data(G_OBJECT(server), SERVER_GEN);
    if (GPOINTER_TO_SIZE(held) != (gsize)g->number) {
        g_hash_table_remove_all(server->providers);
        g_object_set_data(G_OBJECT(server), SERVER_GEN,
                          GSIZE_TO_POINTER((gsize)g->number));
    }
    if (!(idp = idp_of(sp, entity_id, &of))) {
        return LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND;
    }
    tag = of == g ? 0 : (gsize)of->number;
    if ((have = g_hash_table_lookup(server->providers, entity_id))) {
        if (GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(have), SERVER_SRC))
            == tag) {
            return 0;
        }
        /* an MDQ entity fetched again since (a key rolled over) */
        g_hash_table_remove(server->providers, entity_id);
    }
    if (g_hash_table_size(server->providers)
        >= (guint)(sp->server_idps_max > 0 ? sp->server_idps_max
                                           : RSP_SERVER_IDPS)) {
        g_hash_table_remove_all(server->providers);
    }
    if (apr_pool_create(&tmp, NULL) != APR_SUCCESS) {
        return LASSO_SERVER_ERROR_ADD_PROVIDER_FAILED;
    }
    /* The keys are copied into the provider with the lock held: the
     * generation's keys may be dropped by another thread once released. */
    apr_thread_mutex_lock(of->lock);
    keys = idp_keys(of, idp);
    rc = keys ? add_idp(server, rsp_idp_lasso_metadata(tmp, idp), keys,
                        sp->keys->signing, tag)
              : LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND;
    apr_thread_mutex_unlock(of->lock);
    apr_pool_destroy(tmp);
    return rc;
}
