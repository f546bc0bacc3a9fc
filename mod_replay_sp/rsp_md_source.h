/* A metadata source: where a verified metadata document comes from.
 *
 * What the module exposes on top of it (the glue owns the directives):
 *
 *   ReplaySPIdPMetadataURL URL CERTFILE BACKINGFILE
 *       a federation's aggregate (or one entity) fetched from URL (http or
 *       https), trusted only once its signature verifies with CERTFILE
 *       (rsp_md_verify: one signed root, no wrapping, no DOCTYPE, size and
 *       depth limits, validUntil present, in the future and no further
 *       off than ReplaySPMetadataMaxValidity). The last verified copy is
 *       kept in BACKINGFILE (and its ETag / Last-Modified in
 *       BACKINGFILE.meta), used at start when URL cannot be fetched.
 *   ReplaySPIdPMetadataFile PATH [CERTFILE]
 *       a local file: the same verification when CERTFILE is given, and
 *       re-read when it changes (device, inode, size or mtime).
 *   ReplaySPMetadataRefresh SECONDS
 *       the refresh interval; cacheDuration on the document's root, when
 *       shorter, wins (rsp_md_next_refresh below).
 *   a CA file for https (rsp_md_source_t.ca_file; the system CAs when
 *       not set).
 *
 * The transport is not what makes metadata trusted: the signature is.
 * https and a CA file only keep a network attacker from holding back
 * updates; an http URL is fine for signed metadata.
 *
 * Fetching (libcurl):
 *   - http and https only; TLS peers verified (the system CAs, or ca_file
 *     alone when given); never a cookie; User-Agent "mod_replay_sp/VERSION
 *     (metadata)"; gzip and deflate accepted (the size cap applies to the
 *     decoded bytes).
 *   - bounded: connect_timeout and timeout (the whole transfer, redirects
 *     included) always apply; a body larger than max_size is refused as
 *     soon as it is known to be (a Content-Length above it, or the bytes
 *     received passing it: the transfer is stopped there).
 *   - redirects: at most RSP_MD_MAX_REDIRECTS; to http or https only, and
 *     from an https URL to https only (no downgrade: a redirect to http is
 *     a fetch failure).
 *   - conditional GET: If-None-Match / If-Modified-Since with the ETag /
 *     Last-Modified of the copy the caller holds (or, at start, of the
 *     backing file). 304 means "not modified": nothing is re-verified.
 *   - proxies: NULL proxy is libcurl's default (the http_proxy, https_proxy
 *     and no_proxy environment variables); "" is no proxy at all.
 *
 * The backing file is written only after a document verified: to a
 * temporary file in the same directory, fsync'ed, renamed over
 * BACKINGFILE, the directory fsync'ed; BACKINGFILE.meta (ETag,
 * Last-Modified, URL) likewise after it, and removed before the rename
 * so that it never describes another document than BACKINGFILE. A
 * failure to write it does not fail the document (res->backing_error).
 *
 * libcurl runs with CURLOPT_NOSIGNAL (no alarm(), safe in threads): the
 * process ignores SIGPIPE, as httpd does.
 *
 * Not thread-safe per source: one refresh at a time for a source (the
 * module's single watchdog does this). rsp_md_source_global_init once per
 * process, before any thread, and rsp_md_source_global_cleanup at its
 * end. The library does not log; results carry what the alarm needs. */
#ifndef RSP_MD_SOURCE_H
#define RSP_MD_SOURCE_H

#include <apr_pools.h>
#include <apr_time.h>

#define RSP_MD_MAX_REDIRECTS 3
#define RSP_MD_SOURCE_MAX_SIZE (64 * 1024 * 1024)      /* default size cap */
#define RSP_MD_CONNECT_TIMEOUT apr_time_from_sec(10)   /* defaults */
#define RSP_MD_TIMEOUT apr_time_from_sec(120)
#define RSP_MD_REFRESH_MIN_S 60         /* rsp_md_next_refresh's bounds */
#define RSP_MD_REFRESH_MAX_S (24 * 3600)
#define RSP_MD_REFRESH_DEFAULT_S 3600   /* ReplaySPMetadataRefresh unset */

/* libcurl's process-wide state: once per process (the module's pre_config
 * / child exit; a suite's main). Counted: as many cleanups as inits. */
apr_status_t rsp_md_source_global_init(const char **err);
void rsp_md_source_global_cleanup(void);

/* Where a document comes from. Exactly one of url and path. A URL with a
 * user and password in it is shown and stored without the password. */
typedef struct {
    const char *url;          /* http:// or https:// */
    const char *path;         /* a local file (ReplaySPIdPMetadataFile) */
    const char *cert_pem;     /* the signer's certificate, PEM text; required
                                 with url; NULL with path: not verified */
    const char *backing_file; /* url: where the last verified copy is kept
                                 (NULL: none) */
    const char *ca_file;      /* https: the CAs to trust (NULL: the system's) */
    const char *proxy;        /* NULL: libcurl's default; "": none */
    apr_int64_t max_validity_s;    /* ReplaySPMetadataMaxValidity */
    apr_size_t max_size;           /* 0: RSP_MD_SOURCE_MAX_SIZE */
    apr_interval_time_t connect_timeout; /* 0: RSP_MD_CONNECT_TIMEOUT */
    apr_interval_time_t timeout;         /* whole transfer; 0: RSP_MD_TIMEOUT */
    /* After a document verified (or was read, unverified), before it is
     * written to the backing file or returned: may refuse it (not
     * APR_SUCCESS, with *why in p: then a malformed document). Called
     * again for each document tried (the URL's, then the backing
     * file's). NULL: every verified document is taken. */
    apr_status_t (*accept)(void *baton, apr_pool_t *p, const char *data,
                           apr_size_t len, apr_time_t valid_until,
                           const char **why);
    void *accept_baton;
} rsp_md_source_t;

/* What a local file was when it was read: changed when any differs. */
typedef struct {
    apr_int64_t dev, inode;
    apr_off_t size;
    apr_time_t mtime;
} rsp_md_file_id_t;

/* What the caller holds of this source (from an earlier result). */
typedef struct {
    const char *etag;          /* NULL: none */
    const char *last_modified; /* NULL: none */
    apr_time_t valid_until;    /* 0: unknown */
    rsp_md_file_id_t file;     /* path sources */
} rsp_md_have_t;

typedef enum {
    RSP_MD_NEW = 0,        /* a verified document: take it */
    RSP_MD_NOT_MODIFIED,   /* the held copy is still current */
    RSP_MD_FAILED          /* keep the last good copy; raise the alarm */
} rsp_md_outcome_e;

/* Why a source failed: a fixed set the alarm names (rsp_md_reason_name). */
typedef enum {
    RSP_MD_OK = 0,
    RSP_MD_ERR_FETCH,      /* transport: connect, TLS, timeout, HTTP status,
                              redirects; for a file, cannot read it */
    RSP_MD_ERR_SIGNATURE,  /* not signed, or not by the certificate */
    RSP_MD_ERR_EXPIRED,    /* validUntil passed, missing, or too far off */
    RSP_MD_ERR_MALFORMED,  /* not well-formed, a DOCTYPE, not metadata,
                              too deep */
    RSP_MD_ERR_TOO_LARGE   /* larger than the size cap */
} rsp_md_reason_e;

/* "ok", "fetch", "signature", "expired", "malformed", "too-large". */
const char *rsp_md_reason_name(rsp_md_reason_e reason);

/* url without the password it may carry (for results, logs, metrics). */
const char *rsp_md_redacted(apr_pool_t *p, const char *url);

/* rsp_md_verify's refusal (its *err), as one of the reasons. */
rsp_md_reason_e rsp_md_reason_of(const char *verify_err);

typedef struct {
    rsp_md_outcome_e outcome;
    /* RSP_MD_NEW: the verified document (NUL-terminated, in p) */
    const char *data;
    apr_size_t len;
    apr_time_t valid_until;        /* 0 for an unverified local file */
    apr_int64_t cache_duration_s;  /* the root's cacheDuration; -1: none or
                                      not a valid xs:duration (ignored) */
    const char *digest;            /* SHA-256 of the bytes (base64url): the
                                      same document again when equal */
    const char *note;              /* why a cacheDuration was ignored, or NULL */
    const char *etag, *last_modified; /* the HTTP validators, or NULL */
    const char *origin;            /* the URL, the backing file or the path */
    int from_backing;              /* the URL failed: the backing file used
                                      (not set when a 304 at start says the
                                      backing file is current: origin says
                                      so) */
    rsp_md_file_id_t file;         /* path sources: what was read */
    /* RSP_MD_FAILED: why (and the URL's failure when from_backing) */
    rsp_md_reason_e reason;
    const char *detail;            /* one line, no key material */
    long http_status;              /* the last HTTP status, 0: none */
    int curl_code;                 /* CURLcode of the transfer, 0: none */
    /* the backing file or its .meta could not be written (the document
     * is still good) */
    const char *backing_error;
} rsp_md_result_t;

/* Get src's document. have: what the caller holds (NULL: nothing yet, as
 * at start). In order:
 *   url, have != NULL (a refresh): conditional GET with have's validators;
 *     304 → NOT_MODIFIED (FAILED expired when have->valid_until passed);
 *     200 → verified → NEW (the backing file written); any failure →
 *     FAILED with its reason (the backing file untouched).
 *   url, have == NULL (start): the same with the validators of
 *     BACKINGFILE.meta (for this URL); 304 → the backing file, verified,
 *     NEW; the URL failing (transport or verification) → the backing file,
 *     verified (validUntil still ahead) → NEW with from_backing and the
 *     URL's reason and detail kept; both failing → FAILED with the URL's
 *     reason (the backing file's error in detail).
 *   path: have->file the same as the file now → NOT_MODIFIED (FAILED
 *     expired when have->valid_until passed); else read, verified when
 *     cert_pem is set → NEW, else FAILED.
 * now: the clock for validUntil. p: the result (the document's buffer is
 * freed with it). Returns
 * APR_SUCCESS unless FAILED (then APR_EGENERAL). */
apr_status_t rsp_md_source_get(rsp_md_result_t *res, apr_pool_t *p,
                               const rsp_md_source_t *src,
                               const rsp_md_have_t *have, apr_time_t now);

/* The root element's cacheDuration of a well-formed document: seconds, or
 * -1 when there is none or it is not a valid non-negative xs:duration
 * (*err then says why, else NULL). */
apr_int64_t rsp_md_cache_duration(apr_pool_t *p, const char *md, apr_size_t len,
                                  const char **err);

/* An xs:duration (PnYnMnDTnHnMnS; a year 365 days, a month 30 days,
 * fractions of a second dropped), surrounding white space allowed.
 * APR_SUCCESS with *seconds; APR_EINVAL (syntax, negative, above
 * RSP_MD_DURATION_MAX_S) with *err. */
#define RSP_MD_DURATION_MAX_S ((apr_int64_t)100 * 365 * 24 * 3600)
apr_status_t rsp_md_duration_parse(const char *s, apr_int64_t *seconds,
                                   const char **err);

/* When to refresh next, in seconds from now (a pure function):
 *   base = interval_s (RSP_MD_REFRESH_DEFAULT_S when <= 0), lowered to
 *          cache_duration_s when that is >= 0 and shorter, and to half the
 *          time left until valid_until when one is known (so that a copy
 *          is replaced well before it expires);
 *   after failures consecutive failures (>= 1), sooner:
 *          min(base, RSP_MD_REFRESH_MIN_S * 2^(failures-1)): 1, 2, 4, 8...
 *          minutes, never later than the normal schedule;
 *   then bounded to [RSP_MD_REFRESH_MIN_S, RSP_MD_REFRESH_MAX_S], the
 *   lower bound lowered to interval_s when that is shorter (asked for). */
apr_int64_t rsp_md_next_refresh(apr_int64_t interval_s,
                                apr_int64_t cache_duration_s, int failures,
                                apr_time_t valid_until, apr_time_t now);

/* The ETag and Last-Modified BACKINGFILE.meta holds for url (NULL each
 * when it holds none, or holds them for another URL). */
void rsp_md_backing_validators(apr_pool_t *p, const char *backing,
                               const char *url, const char **etag,
                               const char **last_modified);

/* A local file's identity now (stat). APR_SUCCESS or the error. */
apr_status_t rsp_md_file_id(rsp_md_file_id_t *id, const char *path,
                            apr_pool_t *ptemp);
/* Whether a and b differ (the file changed since a). */
int rsp_md_file_changed(const rsp_md_file_id_t *a, const rsp_md_file_id_t *b);

#endif
