/* Per-entity metadata: the Metadata Query Protocol (MDQ,
 * draft-young-md-query, as federations publish it), for IdPs that none of
 * an SP's metadata files names.
 *
 *   ReplaySPIdPMetadataQuery BASEURL CERTFILE CACHEDIR
 *
 * An entity is asked for at BASEURL/entities/%7Bsha1%7D<hex>: the SHA-1 of
 * its entityID, in lower-case hex (the MDQ "transformed identifier"; an
 * entityID never appears in a URL). What comes back is trusted only as
 * rsp_md_source trusts metadata: signed by CERTFILE (one signed root, no
 * wrapping, no DOCTYPE, size and depth limits), validUntil required and
 * bounded; the caller's accept check then says whether it describes the
 * entity asked for.
 *
 * Kept per host: CACHEDIR/<hex>.xml, the last verified copy (with its
 * HTTP validators in CACHEDIR/<hex>.xml.meta), written atomically after
 * the checks. A copy is current for rsp_mdq_fresh_s from when it was
 * fetched or confirmed (the file's mtime: a 304 touches it), so that the
 * processes of a host ask the server once per entity per interval.
 *
 * The library does not log and keeps no state: the per-process table of
 * entities, the negative cache and the limiter's counts are the caller's
 * (rsp_saml_mdq.c). */
#ifndef RSP_MDQ_H
#define RSP_MDQ_H

#include <apr_pools.h>
#include <apr_time.h>

#include "rsp_md_source.h"

#define RSP_MDQ_MAX_SIZE (1024 * 1024)             /* one entity's document */
#define RSP_MDQ_CONNECT_TIMEOUT apr_time_from_sec(3)
#define RSP_MDQ_TIMEOUT apr_time_from_sec(10)      /* the whole transfer */
#define RSP_MDQ_ENTITY_ID_MAX 1024  /* longer entityIDs are never asked for */
#define RSP_MDQ_NEGATIVE_S 60       /* a failed entity is not asked again
                                       for this long (per process) */
#define RSP_MDQ_IN_FLIGHT 4         /* fetches under way, per process */
#define RSP_MDQ_PER_MINUTE 60       /* fetches begun per minute, per process */

typedef struct {
    const char *base_url;       /* http:// or https://, no trailing '/' needed */
    const char *cert_pem;       /* the signer's certificate, PEM text */
    const char *cache_dir;      /* the host's copies */
    const char *ca_file;        /* https: the CAs (NULL: the system's) */
    apr_int64_t max_validity_s; /* ReplaySPMetadataMaxValidity */
    apr_int64_t refresh_s;      /* ReplaySPMetadataRefresh (<= 0: none) */
} rsp_mdq_t;

/* The SHA-1 of entity_id, 40 lower-case hex digits. */
const char *rsp_mdq_sha1_hex(apr_pool_t *p, const char *entity_id);
/* base_url/entities/%7Bsha1%7D<hex> (one '/' between them). */
const char *rsp_mdq_url(apr_pool_t *p, const char *base_url,
                        const char *entity_id);
/* cache_dir/<hex>.xml */
const char *rsp_mdq_cache_file(apr_pool_t *p, const char *cache_dir,
                               const char *entity_id);

/* How long a copy fetched (or confirmed) at `at` is current: the
 * rsp_md_next_refresh rule with refresh_s, the copy's cacheDuration and
 * validUntil. */
apr_int64_t rsp_mdq_fresh_s(const rsp_mdq_t *q, apr_int64_t cache_duration_s,
                            apr_time_t valid_until, apr_time_t at);

/* entity_id's metadata. In order:
 *   have == NULL (the process holds nothing of it): the host's copy when
 *     it is current (*fetched 0, no request; origin the cache file); else
 *     a GET conditional on the copy's validators (a 304: the copy,
 *     verified again, and its mtime touched); the server failing, the
 *     host's copy while its validUntil is ahead (from_backing).
 *   have != NULL (the process's copy is no longer current): a GET
 *     conditional on have's validators: NOT_MODIFIED (the host's copy
 *     touched), NEW, or FAILED.
 * accept/baton: rsp_md_source_t.accept, for every document tried.
 * *fresh_s: how long the result is current from now (NEW and
 * NOT_MODIFIED). *fetched: whether the server was asked. Returns as
 * rsp_md_source_get. */
apr_status_t rsp_mdq_get(rsp_md_result_t *res, apr_int64_t *fresh_s,
                         int *fetched, apr_pool_t *p, const rsp_mdq_t *q,
                         const char *entity_id, const rsp_md_have_t *have,
                         apr_time_t now,
                         apr_status_t (*accept)(void *, apr_pool_t *,
                                                const char *, apr_size_t,
                                                apr_time_t, const char **),
                         void *baton);

/* The limiter of fetches (the caller serialises calls): an unverified
 * Issuer makes a fetch, so a process begins at most RSP_MDQ_PER_MINUTE a
 * minute and has at most RSP_MDQ_IN_FLIGHT under way. */
typedef struct {
    int in_flight;
    apr_time_t window_start;
    int in_window;
} rsp_mdq_limit_t;

/* Whether a fetch may begin now (then counted, until rsp_mdq_limit_done);
 * else 0 with *why. */
int rsp_mdq_limit_take(rsp_mdq_limit_t *l, apr_time_t now, const char **why);
void rsp_mdq_limit_done(rsp_mdq_limit_t *l);

#endif
