/* Metadata re-read without a restart (mod_replay_sp_refresh.c): a
 * watchdog thread in every child. */
#ifndef MOD_REPLAY_SP_REFRESH_H
#define MOD_REPLAY_SP_REFRESH_H

#include "mod_replay_sp_config.h"

int rsp_refresh_post_config(apr_pool_t *pconf, server_rec *s);

/* What the fetcher last did for one ReplaySPIdPMetadataURL, host-wide
 * (the fetch at start, then the one fetcher of the host). */
typedef struct {
    apr_time_t ok_at;        /* the last fetch that gave a verified copy,
                                or a 304 for the one held; when the URL
                                failed at start, when the backing file in
                                use was written (0: none) */
    apr_time_t failed_at;    /* the last failed one (0: none) */
    int failures;            /* failed in a row since ok_at */
    int reason;              /* rsp_md_reason_e of the last failure */
    char detail[256];        /* the last failure, one line */
} rsp_md_fetch_state_t;

/* One metadata source of an SP as this process uses it (a
 * ReplaySPIdPMetadataFile, or a ReplaySPIdPMetadataURL through its
 * backing file), for the status handler. */
typedef struct {
    const char *sp;            /* the SP's entityID */
    const char *source;        /* the path, or the URL (no password) */
    const char *kind;          /* "file", "url", "mdq" (the entities
                                  this process holds, the number of the
                                  last one fetched, no validUntil or age) */
    apr_uint64_t generation;   /* the generation its content came in */
    int idps;                  /* the IdPs taken from it */
    apr_time_t valid_until;    /* its signed validUntil (0: unsigned) */
    apr_int64_t age_s;         /* url: since ok_at of the host's fetches;
                                  file: since this process last looked at
                                  it */
    apr_int64_t refresh_s;     /* ReplaySPMetadataRefresh (0: Off) */
    const char *failing;       /* the reason it is refused now
                                  (rsp_md_reason_name), or NULL */
    const char *last_error;    /* the last refusal (NULL: none) */
    apr_time_t last_error_at;
} rsp_md_source_row_t;

/* The sources of the SPs of server s, as this process holds them now:
 * an array of rsp_md_source_row_t in p. */
apr_array_header_t *rsp_refresh_sources(server_rec *s, apr_pool_t *p);

/* sp's URL source j as the host last fetched it: 1 with *out, 0 when
 * there is nothing to say (no shared memory). */
int rsp_refresh_url_state(const rsp_sp_conf_t *sp, int j,
                          rsp_md_fetch_state_t *out);

/* Before sp is loaded: each ReplaySPIdPMetadataURL fetched and verified,
 * its backing file written (or, the URL failing, the backing file
 * verified and used, with an error logged); what happened kept in pconf
 * for rsp_refresh_url_state. OK, or an error logged and
 * HTTP_INTERNAL_SERVER_ERROR when neither is usable. */
int rsp_refresh_fetch_at_start(rsp_sp_conf_t *sp, server_rec *s,
                               apr_pool_t *pconf, apr_pool_t *ptemp);

#endif
