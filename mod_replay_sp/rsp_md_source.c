/* A metadata source (rsp_md_source.h): fetched with libcurl or read from
 * a file, verified with rsp_md_verify, kept in a backing file. The
 * schedule and cacheDuration are in rsp_md_schedule.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_NAME "mod_replay_sp"
#define PACKAGE_VERSION "0"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_md_verify.h"
#include "rsp_util.h"

#define USER_AGENT PACKAGE_NAME "/" PACKAGE_VERSION " (metadata)"
#define VALIDATOR_MAX 1024   /* an ETag or Last-Modified kept, at most */
#define META_MAX 8192        /* BACKINGFILE.meta, at most */

/* ------------------------------------------------------------------ */
/* Process-wide                                                        */

static int curl_inits;

apr_status_t rsp_md_source_global_init(const char **err)
{
    CURLcode rc;

    if (curl_inits++ > 0) {
        return APR_SUCCESS;
    }
    if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
        curl_inits = 0;
        *err = curl_easy_strerror(rc);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

void rsp_md_source_global_cleanup(void)
{
    if (curl_inits > 0 && --curl_inits == 0) {
        curl_global_cleanup();
    }
}

const char *rsp_md_reason_name(rsp_md_reason_e reason)
{
    switch (reason) {
    case RSP_MD_OK:
        return "ok";
    case RSP_MD_ERR_FETCH:
        return "fetch";
    case RSP_MD_ERR_SIGNATURE:
        return "signature";
    case RSP_MD_ERR_EXPIRED:
        return "expired";
    case RSP_MD_ERR_MALFORMED:
        return "malformed";
    case RSP_MD_ERR_TOO_LARGE:
        return "too-large";
    }
    return "unknown";
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

static void file_id_of(rsp_md_file_id_t *id, const apr_finfo_t *fi)
{
    memset(id, 0, sizeof(*id));
    id->dev = (apr_int64_t)fi->device;
    id->inode = (apr_int64_t)fi->inode;
    id->size = fi->size;
    id->mtime = fi->mtime;
}

apr_status_t rsp_md_file_id(rsp_md_file_id_t *id, const char *path,
                            apr_pool_t *ptemp)
{
    apr_finfo_t fi;
    apr_status_t rv = apr_stat(&fi, path,
                               APR_FINFO_DEV | APR_FINFO_INODE | APR_FINFO_SIZE
                                   | APR_FINFO_MTIME, ptemp);

    if (rv == APR_SUCCESS || rv == APR_INCOMPLETE) {
        file_id_of(id, &fi);
        return APR_SUCCESS;
    }
    return rv;
}

int rsp_md_file_changed(const rsp_md_file_id_t *a, const rsp_md_file_id_t *b)
{
    return a->dev != b->dev || a->inode != b->inode || a->size != b->size
           || a->mtime != b->mtime;
}

static apr_status_t free_buf(void *data)
{
    free(data);
    return APR_SUCCESS;
}

/* Read path whole (at most max bytes) into a buffer owned by p (NUL-
 * terminated), with its identity. On failure *reason and *err. */
static apr_status_t read_file(apr_pool_t *p, const char *path, apr_size_t max,
                              char **out, apr_size_t *len, rsp_md_file_id_t *id,
                              rsp_md_reason_e *reason, const char **err)
{
    apr_file_t *f = NULL;
    apr_finfo_t fi;
    apr_size_t n = 0;
    apr_status_t rv;
    char *buf, ebuf[128];

    *reason = RSP_MD_ERR_FETCH;
    if ((rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p))
        != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot open %s: %s", path,
                            apr_strerror(rv, ebuf, sizeof(ebuf)));
        return rv;
    }
    rv = apr_file_info_get(&fi, APR_FINFO_DEV | APR_FINFO_INODE | APR_FINFO_SIZE
                                    | APR_FINFO_MTIME | APR_FINFO_TYPE, f);
    if ((rv != APR_SUCCESS && rv != APR_INCOMPLETE) || fi.filetype != APR_REG) {
        *err = apr_psprintf(p, "%s is not a regular file", path);
        apr_file_close(f);
        return APR_EGENERAL;
    }
    if (fi.size < 0 || (apr_uint64_t)fi.size > max) {
        *reason = RSP_MD_ERR_TOO_LARGE;
        *err = apr_psprintf(p, "%s is too large (%" APR_OFF_T_FMT " bytes, "
                            "at most %" APR_SIZE_T_FMT ")", path, fi.size, max);
        apr_file_close(f);
        return APR_EGENERAL;
    }
    file_id_of(id, &fi);
    if (!(buf = malloc((apr_size_t)fi.size + 1))) {
        apr_file_close(f);
        *err = "out of memory";
        return APR_ENOMEM;
    }
    rv = apr_file_read_full(f, buf, (apr_size_t)fi.size, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && !(rv == APR_EOF && n == 0 && fi.size == 0)) {
        free(buf);
        *err = apr_psprintf(p, "cannot read %s: %s", path,
                            apr_strerror(rv, ebuf, sizeof(ebuf)));
        return rv;
    }
    buf[n] = '\0';
    apr_pool_cleanup_register(p, buf, free_buf, apr_pool_cleanup_null);
    *out = buf;
    *len = n;
    *reason = RSP_MD_OK;
    return APR_SUCCESS;
}

/* Write data to path atomically: a temporary file in the same directory,
 * fsync, rename, fsync of the directory. NULL, or what failed. */
static const char *write_atomic(apr_pool_t *p, const char *path,
                                const char *data, apr_size_t len)
{
    char *tmp = apr_pstrcat(p, path, ".tmp.XXXXXX", NULL);
    char *dir = apr_pstrdup(p, path), *slash = strrchr(dir, '/');
    const char *what = NULL;
    apr_size_t off = 0;
    int fd, dfd, saved;

    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    else {
        dir = ".";
    }
    if ((fd = mkstemp(tmp)) < 0) {
        return apr_psprintf(p, "cannot create a temporary file beside %s: %s",
                            path, strerror(errno));
    }
    while (off < len && !what) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno != EINTR) {
            what = "write";
        }
        off += w > 0 ? (apr_size_t)w : 0;
    }
    if (!what && fchmod(fd, 0644) != 0) {
        what = "fchmod";
    }
    if (!what && fsync(fd) != 0) {
        what = "fsync";
    }
    saved = errno;
    if (close(fd) != 0 && !what) {
        what = "close";
        saved = errno;
    }
    if (!what && rename(tmp, path) != 0) {
        what = "rename";
        saved = errno;
    }
    if (what) {
        unlink(tmp);
        return apr_psprintf(p, "cannot write %s (%s): %s", path, what,
                            strerror(saved));
    }
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0) {
        if (fsync(dfd) != 0) {
            what = apr_psprintf(p, "cannot fsync the directory %s: %s", dir,
                                strerror(errno));
        }
        close(dfd);
    }
    return what;
}

/* ------------------------------------------------------------------ */
/* BACKINGFILE.meta: the validators of the backing file's document       */

/* A validator worth sending back: printable ASCII, bounded. */
static const char *validator(apr_pool_t *p, const char *s, apr_size_t n)
{
    apr_size_t i;

    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'
                     || s[n - 1] == '\n')) {
        n--;
    }
    if (n == 0 || n > VALIDATOR_MAX) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return NULL;
        }
    }
    return apr_pstrmemdup(p, s, n);
}

const char *rsp_md_redacted(apr_pool_t *p, const char *url)
{
    const char *s = strstr(url, "://"), *at, *end;

    if (!s) {
        return url;
    }
    end = s + 3 + strcspn(s + 3, "/?#");
    at = memchr(s + 3, '@', (size_t)(end - (s + 3)));
    if (!at) {
        return url;
    }
    return apr_pstrcat(p, apr_pstrmemdup(p, url, (apr_size_t)(s + 3 - url)),
                       "***", at, NULL);
}

void rsp_md_backing_validators(apr_pool_t *p, const char *backing,
                               const char *url, const char **etag,
                               const char **lm)
{
    const char *path = apr_pstrcat(p, backing, ".meta", NULL);
    const char *e = NULL, *l = NULL, *u = NULL, *err;
    rsp_md_file_id_t id;
    rsp_md_reason_e reason;
    apr_size_t len;
    char *buf, *line, *last;

    *etag = *lm = NULL;
    if (read_file(p, path, META_MAX, &buf, &len, &id, &reason, &err)
        != APR_SUCCESS) {
        return;
    }
    for (line = apr_strtok(buf, "\n", &last); line;
         line = apr_strtok(NULL, "\n", &last)) {
        char *sp = strchr(line, ' ');
        if (!sp || *line == '#') {
            continue;
        }
        *sp++ = '\0';
        if (!strcmp(line, "url")) {
            u = sp;
        }
        else if (!strcmp(line, "etag")) {
            e = validator(p, sp, strlen(sp));
        }
        else if (!strcmp(line, "last-modified")) {
            l = validator(p, sp, strlen(sp));
        }
    }
    /* another URL's validators say nothing about this one */
    if (u && !strcmp(u, rsp_md_redacted(p, url))) {
        *etag = e;
        *lm = l;
    }
}

/* ------------------------------------------------------------------ */
/* Fetching                                                            */

typedef struct {
    apr_pool_t *p;
    char *buf;
    apr_size_t len, cap, max;
    int too_large;
    const char *etag, *lm;
} fetch_t;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    fetch_t *f = ud;
    size_t add = size * nmemb;

    if (add > f->max - f->len) {
        f->too_large = 1;   /* stops the transfer: CURLE_WRITE_ERROR */
        return 0;
    }
    if (f->len + add + 1 > f->cap) {
        apr_size_t cap = f->cap ? f->cap : 65536;
        char *nb;
        while (cap < f->len + add + 1) {
            cap *= 2;
        }
        if (cap > f->max + 1) {
            cap = f->max + 1;
        }
        if (!(nb = realloc(f->buf, cap))) {
            return 0;
        }
        f->buf = nb;
        f->cap = cap;
    }
    memcpy(f->buf + f->len, ptr, add);
    f->len += add;
    f->buf[f->len] = '\0';
    return add;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
    fetch_t *f = ud;
    size_t n = size * nmemb;

    if (n >= 5 && !strncmp(ptr, "HTTP/", 5)) {
        f->etag = f->lm = NULL;   /* a new response (after a redirect) */
    }
    else if (n > 5 && !strncasecmp(ptr, "ETag:", 5)) {
        f->etag = validator(f->p, ptr + 5, n - 5);
    }
    else if (n > 14 && !strncasecmp(ptr, "Last-Modified:", 14)) {
        f->lm = validator(f->p, ptr + 14, n - 14);
    }
    return n;
}

static long ms_of(apr_interval_time_t t, apr_interval_time_t dflt)
{
    return (long)apr_time_as_msec(t > 0 ? t : dflt);
}

/* GET src->url (conditional on etag / lm when set). On return: f (the
 * body, validators), res->http_status and res->curl_code; APR_SUCCESS for
 * a 200 or a 304, else res->reason and res->detail. */
static apr_status_t fetch(fetch_t *f, rsp_md_result_t *res, apr_pool_t *p,
                          const rsp_md_source_t *src, const char *etag,
                          const char *lm)
{
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *hdrs = NULL;
    int https = !strncasecmp(src->url, "https:", 6);
    CURL *h;
    CURLcode rc;
    long status = 0;

    memset(f, 0, sizeof(*f));
    f->p = p;
    f->max = src->max_size ? src->max_size : RSP_MD_SOURCE_MAX_SIZE;
    errbuf[0] = '\0';
    if (!(h = curl_easy_init())) {
        res->reason = RSP_MD_ERR_FETCH;
        res->detail = "cannot create a libcurl handle";
        return APR_EGENERAL;
    }
    hdrs = curl_slist_append(hdrs, "Accept: application/samlmetadata+xml, "
                                   "application/xml;q=0.9, */*;q=0.5");
    if (etag) {
        hdrs = curl_slist_append(hdrs, apr_pstrcat(p, "If-None-Match: ", etag, NULL));
    }
    if (lm) {
        hdrs = curl_slist_append(hdrs, apr_pstrcat(p, "If-Modified-Since: ", lm, NULL));
    }
    curl_easy_setopt(h, CURLOPT_URL, src->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    /* redirects: few, and from https to https only */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)RSP_MD_MAX_REDIRECTS);
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     ms_of(src->connect_timeout, RSP_MD_CONNECT_TIMEOUT));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms_of(src->timeout, RSP_MD_TIMEOUT));
    curl_easy_setopt(h, CURLOPT_USERAGENT, USER_AGENT);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)f->max);
    curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, f);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (src->ca_file) {
        /* this file alone: not also the CA directory libcurl was built with */
        curl_easy_setopt(h, CURLOPT_CAINFO, src->ca_file);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    if (src->proxy) {
        curl_easy_setopt(h, CURLOPT_PROXY, src->proxy);
    }
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    res->http_status = status;
    res->curl_code = (int)rc;
    if (rc == CURLE_OK && (status == 200 || status == 304)) {
        if (status == 304 && !etag && !lm) {
            res->reason = RSP_MD_ERR_FETCH;
            res->detail = "HTTP status 304 to an unconditional GET";
            return APR_EGENERAL;
        }
        return APR_SUCCESS;
    }
    res->reason = RSP_MD_ERR_FETCH;
    if (rc == CURLE_FILESIZE_EXCEEDED || (rc == CURLE_WRITE_ERROR && f->too_large)) {
        res->reason = RSP_MD_ERR_TOO_LARGE;
        res->detail = apr_psprintf(p, "too large: more than %" APR_SIZE_T_FMT
                                   " bytes (transfer stopped)", f->max);
    }
    else if (rc == CURLE_OK || rc == CURLE_HTTP_RETURNED_ERROR) {
        res->detail = apr_psprintf(p, "HTTP status %ld", status);
    }
    else {
        res->detail = apr_psprintf(p, "curl error %d: %s%s", (int)rc,
                                   errbuf[0] ? errbuf : curl_easy_strerror(rc),
                                   rc == CURLE_UNSUPPORTED_PROTOCOL && https
                                       ? " (redirects from https go to https only)"
                                       : "");
    }
    return APR_EGENERAL;
}

/* ------------------------------------------------------------------ */
/* Verifying                                                           */

rsp_md_reason_e rsp_md_reason_of(const char *err)
{
    if (strstr(err, "larger than")) {
        return RSP_MD_ERR_TOO_LARGE;
    }
    if (strstr(err, "not well-formed") || strstr(err, "DOCTYPE")
        || strstr(err, "not a SAML 2.0") || strstr(err, "nested deeper")) {
        return RSP_MD_ERR_MALFORMED;
    }
    if (strstr(err, "validUntil") || strstr(err, "expired")) {
        return RSP_MD_ERR_EXPIRED;
    }
    return RSP_MD_ERR_SIGNATURE;
}

/* Whether src's own check takes the document; else reason and detail. */
static int accepted(rsp_md_result_t *res, apr_pool_t *p,
                    const rsp_md_source_t *src, const char *data,
                    apr_size_t len, apr_time_t valid_until)
{
    const char *why = NULL;

    if (src->accept && src->accept(src->accept_baton, p, data, len,
                                   valid_until, &why) != APR_SUCCESS) {
        res->reason = RSP_MD_ERR_MALFORMED;
        res->detail = why ? why : "refused";
        return 0;
    }
    return 1;
}

/* Verify data and fill res's document fields; else reason and detail. */
static apr_status_t verify(rsp_md_result_t *res, apr_pool_t *p,
                           const rsp_md_source_t *src, const char *data,
                           apr_size_t len, apr_time_t now)
{
    const char *err = NULL;
    apr_time_t vu = 0;

    if (len == 0 || !data) {
        res->reason = RSP_MD_ERR_MALFORMED;
        res->detail = "an empty document";
        return APR_EINVAL;
    }
    if (rsp_md_verify(p, data, len, src->cert_pem, now, src->max_validity_s,
                      &vu, &err) != APR_SUCCESS) {
        res->reason = rsp_md_reason_of(err);
        res->detail = err;
        return APR_EINVAL;
    }
    if (!accepted(res, p, src, data, len, vu)) {
        return APR_EINVAL;
    }
    res->data = data;
    res->len = len;
    res->valid_until = vu;
    res->digest = rsp_sha256_b64url(p, data, len);
    res->cache_duration_s = rsp_md_cache_duration(p, data, len, &res->note);
    return APR_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The sources                                                         */

static apr_status_t get_file(rsp_md_result_t *res, apr_pool_t *p,
                             const rsp_md_source_t *src,
                             const rsp_md_have_t *have, apr_time_t now)
{
    apr_size_t max = src->max_size ? src->max_size : RSP_MD_SOURCE_MAX_SIZE;
    rsp_md_file_id_t id;
    apr_size_t len;
    char *buf;

    res->origin = src->path;
    if (have && rsp_md_file_id(&id, src->path, p) == APR_SUCCESS
        && !rsp_md_file_changed(&id, &have->file)) {
        res->file = id;
        if (have->valid_until > 0 && have->valid_until <= now) {
            res->reason = RSP_MD_ERR_EXPIRED;
            res->detail = "not modified, and the copy held has expired";
            return APR_EGENERAL;
        }
        res->outcome = RSP_MD_NOT_MODIFIED;
        res->valid_until = have->valid_until;
        return APR_SUCCESS;
    }
    if (read_file(p, src->path, max, &buf, &len, &res->file, &res->reason,
                  &res->detail) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (src->cert_pem) {
        return verify(res, p, src, buf, len, now);
    }
    if (!accepted(res, p, src, buf, len, 0)) {
        return APR_EGENERAL;
    }
    res->data = buf;
    res->len = len;
    res->digest = rsp_sha256_b64url(p, buf, len);
    res->cache_duration_s = -1;
    return APR_SUCCESS;
}

/* The backing file, verified, as the result (keeping the URL's reason). */
static apr_status_t use_backing(rsp_md_result_t *res, apr_pool_t *p,
                                const rsp_md_source_t *src, apr_time_t now,
                                const char **err)
{
    apr_size_t max = src->max_size ? src->max_size : RSP_MD_SOURCE_MAX_SIZE;
    rsp_md_result_t b;
    rsp_md_file_id_t id;
    apr_size_t len;
    char *buf;

    memset(&b, 0, sizeof(b));
    if (read_file(p, src->backing_file, max, &buf, &len, &id, &b.reason,
                  &b.detail) != APR_SUCCESS
        || verify(&b, p, src, buf, len, now) != APR_SUCCESS) {
        *err = b.detail;
        return APR_EGENERAL;
    }
    res->data = b.data;
    res->len = b.len;
    res->digest = b.digest;
    res->note = b.note;
    res->valid_until = b.valid_until;
    res->cache_duration_s = b.cache_duration_s;
    res->origin = src->backing_file;
    res->from_backing = 1;
    res->file = id;
    rsp_md_backing_validators(p, src->backing_file, src->url, &res->etag,
                              &res->last_modified);
    return APR_SUCCESS;
}

static void write_backing(rsp_md_result_t *res, apr_pool_t *p,
                          const rsp_md_source_t *src)
{
    const char *meta = apr_pstrcat(p, src->backing_file, ".meta", NULL);
    const char *err;

    /* the .meta must never describe another document than the file */
    if (unlink(meta) != 0 && errno != ENOENT) {
        res->backing_error = apr_psprintf(p, "cannot remove %s: %s", meta,
                                          strerror(errno));
        return;
    }
    if ((err = write_atomic(p, src->backing_file, res->data, res->len))) {
        res->backing_error = err;
        return;
    }
    if (res->etag || res->last_modified) {
        const char *text = apr_pstrcat(
            p, "# the HTTP validators of ", src->backing_file, "\n",
            "url ", rsp_md_redacted(p, src->url), "\n",
            res->etag ? "etag " : "", res->etag ? res->etag : "",
            res->etag ? "\n" : "",
            res->last_modified ? "last-modified " : "",
            res->last_modified ? res->last_modified : "",
            res->last_modified ? "\n" : "", NULL);
        res->backing_error = write_atomic(p, meta, text, strlen(text));
    }
}

static apr_status_t get_url(rsp_md_result_t *res, apr_pool_t *p,
                            const rsp_md_source_t *src,
                            const rsp_md_have_t *have, apr_time_t now)
{
    const char *etag = NULL, *lm = NULL, *berr = NULL;
    int attempt;
    fetch_t f;

    res->origin = rsp_md_redacted(p, src->url);
    if (!src->cert_pem) {
        res->reason = RSP_MD_ERR_SIGNATURE;
        res->detail = "no certificate to verify the metadata with";
        return APR_EGENERAL;
    }
    if (have) {
        etag = have->etag;
        lm = have->last_modified;
    }
    else if (src->backing_file) {
        rsp_md_backing_validators(p, src->backing_file, src->url, &etag, &lm);
    }
    /* a 304 at start whose backing file no longer verifies: once more,
     * unconditionally */
    for (attempt = 0; attempt < 2; attempt++) {
        if (fetch(&f, res, p, src, etag, lm) != APR_SUCCESS) {
            free(f.buf);
            break;
        }
        if (res->http_status == 304) {
            free(f.buf);
            if (have) {
                if (have->valid_until > 0 && have->valid_until <= now) {
                    res->reason = RSP_MD_ERR_EXPIRED;
                    res->detail = "not modified, and the copy held has expired";
                    return APR_EGENERAL;
                }
                res->outcome = RSP_MD_NOT_MODIFIED;
                res->etag = have->etag;
                res->last_modified = have->last_modified;
                res->valid_until = have->valid_until;
                return APR_SUCCESS;
            }
            if (use_backing(res, p, src, now, &berr) == APR_SUCCESS) {
                /* the URL says the backing file is current: not a
                 * failure of the URL */
                res->from_backing = 0;
                return APR_SUCCESS;
            }
            etag = lm = NULL;
            continue;
        }
        if (f.buf) {
            apr_pool_cleanup_register(p, f.buf, free_buf, apr_pool_cleanup_null);
        }
        if (verify(res, p, src, f.buf, f.len, now) == APR_SUCCESS) {
            res->etag = f.etag;
            res->last_modified = f.lm;
            if (src->backing_file) {
                write_backing(res, p, src);
            }
            return APR_SUCCESS;
        }
        break;
    }
    /* the URL failed: at start, the backing file */
    if (!have && src->backing_file
        && use_backing(res, p, src, now, &berr) == APR_SUCCESS) {
        return APR_SUCCESS;
    }
    if (berr) {
        res->detail = apr_pstrcat(p, res->detail, "; backing file ",
                                  src->backing_file, ": ", berr, NULL);
    }
    return APR_EGENERAL;
}

apr_status_t rsp_md_source_get(rsp_md_result_t *res, apr_pool_t *p,
                               const rsp_md_source_t *src,
                               const rsp_md_have_t *have, apr_time_t now)
{
    apr_status_t rv;

    memset(res, 0, sizeof(*res));
    res->cache_duration_s = -1;
    if ((src->url != NULL) == (src->path != NULL)) {
        res->reason = RSP_MD_ERR_FETCH;
        res->detail = "a source has a URL or a path (exactly one)";
        rv = APR_EGENERAL;
    }
    else {
        rv = src->url ? get_url(res, p, src, have, now)
                      : get_file(res, p, src, have, now);
    }
    if (rv != APR_SUCCESS) {
        res->outcome = RSP_MD_FAILED;
        if (res->reason == RSP_MD_OK) {
            res->reason = RSP_MD_ERR_FETCH;
        }
        res->data = NULL;
        res->len = 0;
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}
