/* Unit tests for rsp_md_source.c: metadata fetched
 * from a real loopback http and https server (md_http_server.py, started
 * here on ports it chooses, stopped by PID), verified with the federation
 * certificate of make_saml_cases.py's metadata group, kept in a backing
 * file; local files; the xs:duration parser and the refresh schedule. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include <apr_file_info.h>
#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_unit_saml.h"
#include "rsp_unit_server.h"

#define WEEKS4 (28 * 24 * 3600)
#define STALL_TIMEOUT_MS 1000
#define STALL_BOUND_MS (STALL_TIMEOUT_MS + 2500)   /* valgrind included */

static pid_t srv_pid = -1, owner;
static int http_port, https_port;
static const char *srv_root;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static const char *md_path(const char *name)
{
    return apr_pstrcat(pool, saml_dir, "/md/", name, NULL);
}

static const char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = apr_palloc(pool, (apr_size_t)n + 1);
    n = (long)fread(buf, 1, (size_t)n, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory for this test's backing files. */
static const char *tmpdir(void)
{
    char *d = apr_pstrcat(pool, saml_dir, "/t-XXXXXX", NULL);

    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static const char *http_url(const char *path)
{
    return apr_psprintf(pool, "http://127.0.0.1:%d%s", http_port, path);
}

static const char *https_url(const char *path)
{
    return apr_psprintf(pool, "https://127.0.0.1:%d%s", https_port, path);
}

/* A source for url, verified with the federation's certificate. */
static rsp_md_source_t source(const char *url, const char *backing)
{
    rsp_md_source_t s;

    memset(&s, 0, sizeof(s));
    s.url = url;
    s.cert_pem = slurp(md_path("fed.crt"));
    s.backing_file = backing;
    s.proxy = "";   /* whatever the environment says */
    s.max_validity_s = WEEKS4;
    s.connect_timeout = apr_time_from_sec(5);
    s.timeout = apr_time_from_sec(20);
    return s;
}

static rsp_md_result_t get(const rsp_md_source_t *s, const rsp_md_have_t *have)
{
    rsp_md_result_t r;

    rsp_md_source_get(&r, pool, s, have, apr_time_now());
    return r;
}

static void assert_new(const rsp_md_result_t *r, const char *want_name)
{
    ck_assert_msg(r->outcome == RSP_MD_NEW, "outcome %d, %s: %s", r->outcome,
                  rsp_md_reason_name(r->reason), ERR_S(r->detail));
    ck_assert_ptr_nonnull(r->data);
    ck_assert_uint_eq(r->len, strlen(r->data));
    ck_assert(r->valid_until > apr_time_now() + apr_time_from_sec(6 * 24 * 3600));
    if (want_name) {
        ck_assert_str_eq(r->data, slurp(md_path(want_name)));
    }
}

static void assert_failed_with(const rsp_md_result_t *r, rsp_md_reason_e reason,
                               const char *detail)
{
    ck_assert_msg(r->outcome == RSP_MD_FAILED, "outcome %d (%s)", r->outcome,
                  ERR_S(r->detail));
    ck_assert_msg(r->reason == reason, "reason %s (%s), expected %s",
                  rsp_md_reason_name(r->reason), ERR_S(r->detail),
                  rsp_md_reason_name(reason));
    ck_assert_ptr_null(r->data);
    ck_assert_msg(contains(r->detail, detail), "detail \"%s\" does not say \"%s\"",
                  ERR_S(r->detail), detail);
}

/* The last line of the server's requests.log with tag in it (NULL: none). */
static const char *request_line(const char *tag)
{
    const char *log = slurp(apr_pstrcat(pool, srv_root, "/requests.log", NULL));
    const char *last = NULL, *s = log;

    while (s && (s = strstr(s, tag)) != NULL) {
        const char *b = s, *e = strchr(s, '\n');
        while (b > log && b[-1] != '\n') {
            b--;
        }
        last = apr_pstrmemdup(pool, b, e ? (apr_size_t)(e - b) : strlen(b));
        s = e ? e : s + strlen(s);
    }
    return last;
}

/* A line of the server's events.log with what in it, waiting up to 5 s. */
static const char *event_line(const char *what)
{
    int i;

    for (i = 0; i < 250; i++) {
        const char *log = slurp(apr_pstrcat(pool, srv_root, "/events.log", NULL));
        const char *s = log ? strstr(log, what) : NULL;
        if (s) {
            const char *e = strchr(s, '\n');
            return apr_pstrmemdup(pool, s, e ? (apr_size_t)(e - s) : strlen(s));
        }
        sleep_ms(20);
    }
    return NULL;
}

static int nfiles(const char *dir)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;

    ck_assert_int_eq(apr_dir_open(&d, dir, pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        n += strcmp(fi.name, ".") && strcmp(fi.name, "..");
    }
    apr_dir_close(d);
    return n;
}

/* ------------------------------------------------------------------ */
/* http                                                                */

START_TEST(test_signed_aggregate_accepted)
{
    const char *dir = tmpdir(), *backing = apr_pstrcat(pool, dir, "/fed.xml", NULL);
    rsp_md_source_t s = source(http_url("/md/good.xml?t=accepted"), backing);
    rsp_md_result_t r = get(&s, NULL);
    const char *req, *meta;

    assert_new(&r, "good.xml");
    ck_assert_int_eq(r.reason, RSP_MD_OK);
    ck_assert_int_eq(r.from_backing, 0);
    ck_assert_str_eq(r.origin, s.url);
    ck_assert_ptr_nonnull(r.digest);
    ck_assert_int_eq(r.http_status, 200);
    ck_assert_ptr_nonnull(r.etag);
    ck_assert_ptr_nonnull(r.last_modified);
    ck_assert_int_eq(r.cache_duration_s, -1);
    ck_assert_ptr_null(r.backing_error);
    /* the backing file: the verified bytes; the validators beside it;
     * nothing else left in the directory */
    ck_assert_str_eq(slurp(backing), r.data);
    meta = slurp(apr_pstrcat(pool, backing, ".meta", NULL));
    ck_assert_ptr_nonnull(meta);
    ck_assert(contains(meta, apr_pstrcat(pool, "etag ", r.etag, "\n", NULL)));
    ck_assert(contains(meta, apr_pstrcat(pool, "url ", s.url, "\n", NULL)));
    ck_assert_int_eq(nfiles(dir), 2);
    /* what the server saw: the module's User-Agent, no condition, no cookie */
    req = request_line("t=accepted");
    ck_assert_ptr_nonnull(req);
    ck_assert_msg(contains(req, "\"ua\": \"mod_replay_sp/"), "%s", req);
    ck_assert_msg(contains(req, "\"inm\": null"), "%s", req);
    ck_assert_msg(contains(req, "\"cookie\": null"), "%s", req);
}
END_TEST

START_TEST(test_cache_duration_read)
{
    rsp_md_source_t s = source(http_url("/md/good-cache.xml"), NULL);
    rsp_md_result_t r = get(&s, NULL);

    assert_new(&r, "good-cache.xml");
    ck_assert_int_eq(r.cache_duration_s, 6 * 3600);
    ck_assert_ptr_null(r.note);
    /* the same bytes, the same digest; others, another */
    ck_assert_str_eq(get(&s, NULL).digest, r.digest);
    s.url = http_url("/md/good.xml");
    ck_assert_str_ne(get(&s, NULL).digest, r.digest);
}
END_TEST

START_TEST(test_not_modified)
{
    const char *dir = tmpdir(), *backing = apr_pstrcat(pool, dir, "/fed.xml", NULL);
    rsp_md_source_t s = source(http_url("/md/good.xml?t=cond"), backing);
    rsp_md_result_t r = get(&s, NULL), r2;
    rsp_md_have_t have;
    rsp_md_file_id_t before, after;
    const char *req;

    assert_new(&r, "good.xml");
    ck_assert_int_eq(rsp_md_file_id(&before, backing, pool), APR_SUCCESS);
    memset(&have, 0, sizeof(have));
    have.etag = r.etag;
    have.last_modified = r.last_modified;
    have.valid_until = r.valid_until;
    /* a refresh: 304, nothing re-verified, the backing file untouched */
    r2 = get(&s, &have);
    ck_assert_msg(r2.outcome == RSP_MD_NOT_MODIFIED, "outcome %d: %s", r2.outcome,
                  ERR_S(r2.detail));
    ck_assert_int_eq(r2.http_status, 304);
    ck_assert_ptr_null(r2.data);
    ck_assert_str_eq(r2.etag, r.etag);
    req = request_line("t=cond");
    ck_assert_msg(contains(req, apr_psprintf(pool, "\"inm\": \"%s",
                                             r.etag[0] == '"' ? "\\\"" : "")),
                  "%s", req);
    ck_assert_int_eq(rsp_md_file_id(&after, backing, pool), APR_SUCCESS);
    ck_assert_int_eq(rsp_md_file_changed(&before, &after), 0);
    /* only Last-Modified known: If-Modified-Since */
    have.etag = NULL;
    r2 = get(&s, &have);
    ck_assert_int_eq(r2.outcome, RSP_MD_NOT_MODIFIED);
    ck_assert(contains(request_line("t=cond"), "\"ims\": \""));
    /* not modified, but what the caller holds has expired */
    have.valid_until = apr_time_now() - apr_time_from_sec(1);
    r2 = get(&s, &have);
    assert_failed_with(&r2, RSP_MD_ERR_EXPIRED, "expired");

    /* a restart: the validators from BACKINGFILE.meta, 304, the backing
     * file verified and used */
    r2 = get(&s, NULL);
    assert_new(&r2, "good.xml");
    ck_assert_int_eq(r2.http_status, 304);
    ck_assert_int_eq(r2.from_backing, 0); /* the URL did not fail */
    ck_assert_int_eq(r2.reason, RSP_MD_OK);
    ck_assert_str_eq(r2.origin, backing);
    ck_assert_str_eq(r2.etag, r.etag);
    ck_assert(contains(request_line("t=cond"), "\"inm\": \""));

    /* the backing file no longer verifies: once more, unconditionally */
    put_file(backing, slurp(md_path("tampered.xml")));
    r2 = get(&s, NULL);
    assert_new(&r2, "good.xml");
    ck_assert_int_eq(r2.http_status, 200);
    ck_assert_int_eq(r2.from_backing, 0);
    ck_assert_str_eq(slurp(backing), r2.data);
}
END_TEST

START_TEST(test_tampered_keeps_backing)
{
    const char *dir = tmpdir(), *backing = apr_pstrcat(pool, dir, "/fed.xml", NULL);
    rsp_md_source_t s = source(http_url("/md/good.xml"), backing);
    rsp_md_result_t r = get(&s, NULL);
    rsp_md_file_id_t before, after;
    rsp_md_have_t have;

    assert_new(&r, "good.xml");
    ck_assert_int_eq(rsp_md_file_id(&before, backing, pool), APR_SUCCESS);
    memset(&have, 0, sizeof(have));
    have.valid_until = r.valid_until;
    /* a refresh that brings a tampered aggregate: refused, the backing
     * file untouched */
    s.url = http_url("/md/tampered.xml");
    r = get(&s, &have);
    assert_failed_with(&r, RSP_MD_ERR_SIGNATURE, "does not verify with the certificate");
    ck_assert_str_eq(rsp_md_reason_name(r.reason), "signature");
    ck_assert_int_eq(rsp_md_file_id(&after, backing, pool), APR_SUCCESS);
    ck_assert_int_eq(rsp_md_file_changed(&before, &after), 0);
    ck_assert_str_eq(slurp(backing), slurp(md_path("good.xml")));
    /* signed by another key, unsigned, wrapped: signature */
    s.url = http_url("/md/other-key.xml");
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_SIGNATURE, "certificate");
    s.url = http_url("/md/unsigned.xml");
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_SIGNATURE, "not signed");
    s.url = http_url("/md/wrapped-reference.xml");
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_SIGNATURE, "root element");
    /* at start, the same refusal: the backing file used, the URL's
     * reason kept for the alarm */
    s.url = http_url("/md/tampered.xml");
    r = get(&s, NULL);
    assert_new(&r, "good.xml");
    ck_assert_int_eq(r.from_backing, 1);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_SIGNATURE);
    ck_assert_str_eq(r.origin, backing);
    ck_assert_int_eq(rsp_md_file_id(&after, backing, pool), APR_SUCCESS);
    ck_assert_int_eq(rsp_md_file_changed(&before, &after), 0);
}
END_TEST

START_TEST(test_password_not_shown)
{
    const char *backing = apr_pstrcat(pool, tmpdir(), "/fed.xml", NULL);
    rsp_md_source_t s = source(apr_psprintf(pool, "http://fed:s3cret@127.0.0.1:%d"
                                            "/md/good.xml", http_port), backing);
    rsp_md_result_t r = get(&s, NULL);

    assert_new(&r, "good.xml");
    ck_assert_str_eq(r.origin, apr_psprintf(pool, "http://***@127.0.0.1:%d/md/good.xml",
                                            http_port));
    ck_assert(!contains(slurp(apr_pstrcat(pool, backing, ".meta", NULL)), "s3cret"));
    /* and the validators still serve a restart */
    r = get(&s, NULL);
    assert_new(&r, "good.xml");
    ck_assert_int_eq(r.http_status, 304);
}
END_TEST

START_TEST(test_expired_and_malformed)
{
    const char *backing = apr_pstrcat(pool, tmpdir(), "/fed.xml", NULL);
    rsp_md_source_t s = source(http_url("/md/expired.xml"), backing);
    rsp_md_result_t r;

    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_EXPIRED, "has passed");
    ck_assert_str_eq(rsp_md_reason_name(r.reason), "expired");
    s.url = http_url("/md/no-valid-until.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_EXPIRED, "no validUntil");
    s.url = http_url("/md/too-long.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_EXPIRED,
                       "ReplaySPMetadataMaxValidity");
    s.url = http_url("/md/doctype.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_MALFORMED, "DOCTYPE");
    ck_assert_str_eq(rsp_md_reason_name(r.reason), "malformed");
    s.url = http_url("/md/deep.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_MALFORMED, "nested deeper");
    put_file(apr_pstrcat(pool, srv_root, "/www/junk.xml", NULL), "<md:Entities");
    s.url = http_url("/f/junk.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_MALFORMED, "well-formed");
    put_file(apr_pstrcat(pool, srv_root, "/www/empty.xml", NULL), "");
    s.url = http_url("/f/empty.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_MALFORMED, "empty");
    /* none of them became the backing file */
    ck_assert_ptr_null(slurp(backing));
}
END_TEST

START_TEST(test_too_large_stops_the_transfer)
{
    rsp_md_source_t s = source(http_url("/big/67108864"), NULL);
    rsp_md_result_t r;
    apr_time_t t0 = apr_time_now();
    const char *ev;
    long long sent = -1;

    s.max_size = 1024 * 1024;
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_TOO_LARGE, "too large");
    ck_assert_str_eq(rsp_md_reason_name(r.reason), "too-large");
    ck_assert_int_eq(r.curl_code, CURLE_WRITE_ERROR);
    ck_assert_msg(ms_since(t0) < 10000, "took %lld ms", ms_since(t0));
    /* the server could not send it all: the client hung up */
    ev = event_line("/big/67108864 ");
    ck_assert_msg(ev && sscanf(ev, "/big/67108864 aborted after %lld", &sent) == 1,
                  "server: %s", ERR_S(ev));
    ck_assert_msg(sent < 67108864 / 2, "sent %lld", sent);

    /* a Content-Length above the cap: refused before the body */
    s.url = http_url("/bigcl/4194304");
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_TOO_LARGE, "too large");
    ck_assert_int_eq(r.curl_code, CURLE_FILESIZE_EXCEEDED);

    /* a real document above the cap */
    s.url = http_url("/md/good.xml");
    s.max_size = 1000;
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_TOO_LARGE, "1000 bytes");
    s.max_size = strlen(slurp(md_path("good.xml")));
    assert_new((r = get(&s, NULL), &r), "good.xml");
}
END_TEST

START_TEST(test_server_down_backing_used)
{
    const char *dir = tmpdir(), *backing = apr_pstrcat(pool, dir, "/fed.xml", NULL);
    rsp_md_source_t s = source(apr_psprintf(pool, "http://127.0.0.1:%d/md/good.xml",
                                            dead_port()), backing);
    rsp_md_result_t r;
    rsp_md_have_t have;

    /* nothing to fall back on */
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "curl error 7");
    ck_assert_int_eq(r.curl_code, CURLE_COULDNT_CONNECT);
    ck_assert_str_eq(rsp_md_reason_name(r.reason), "fetch");
    /* at start: the backing file, verified, with the URL's error kept */
    put_file(backing, slurp(md_path("good.xml")));
    r = get(&s, NULL);
    assert_new(&r, "good.xml");
    ck_assert_int_eq(r.from_backing, 1);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_FETCH);
    ck_assert(contains(r.detail, "curl error 7"));
    ck_assert_str_eq(r.origin, backing);
    /* a refresh: the caller keeps its copy; the backing file is not news */
    memset(&have, 0, sizeof(have));
    have.valid_until = r.valid_until;
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_FETCH, "curl error 7");
    /* a backing file that has expired is no fallback */
    put_file(backing, slurp(md_path("expired.xml")));
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "curl error 7");
    ck_assert(contains(r.detail, "backing file"));
    ck_assert(contains(r.detail, "has passed"));
    /* HTTP errors */
    s.url = http_url("/status/404");
    s.backing_file = NULL;
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "HTTP status 404");
    ck_assert_int_eq(r.http_status, 404);
    s.url = http_url("/status/503");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_FETCH, "HTTP status 503");
    /* not http(s) */
    s.url = apr_pstrcat(pool, "file://", md_path("good.xml"), NULL);
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_FETCH, "curl error 1");
}
END_TEST

START_TEST(test_backing_not_writable)
{
    rsp_md_source_t s = source(http_url("/md/good.xml"),
                               apr_pstrcat(pool, saml_dir, "/no-such-dir/fed.xml", NULL));
    rsp_md_result_t r = get(&s, NULL);

    /* the document is still good; the alarm can say the file was not kept */
    assert_new(&r, "good.xml");
    ck_assert_msg(contains(r.backing_error, "no-such-dir"), "%s", ERR_S(r.backing_error));
}
END_TEST

/* ------------------------------------------------------------------ */
/* https, redirects, timeouts                                          */

START_TEST(test_https)
{
    rsp_md_source_t s = source(https_url("/md/good.xml"), NULL);
    rsp_md_result_t r;

    /* the system CAs do not know the test CA */
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "certificate");
    ck_assert_int_eq(r.curl_code, CURLE_PEER_FAILED_VERIFICATION);
    /* the test CA configured: accepted */
    s.ca_file = apr_pstrcat(pool, srv_root, "/tls/ca.crt", NULL);
    assert_new((r = get(&s, NULL), &r), "good.xml");
    /* a CA file that holds another CA: refused */
    s.ca_file = md_path("fed.crt");
    r = get(&s, NULL);
    ck_assert_int_eq(r.outcome, RSP_MD_FAILED);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_FETCH);
    /* the transport is not what makes it trusted */
    s.ca_file = apr_pstrcat(pool, srv_root, "/tls/ca.crt", NULL);
    s.url = https_url("/md/tampered.xml");
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_SIGNATURE, "certificate");
}
END_TEST

START_TEST(test_redirects)
{
    rsp_md_source_t s = source(http_url("/redir/3/md/good.xml"), NULL);
    rsp_md_result_t r;
    const char *req;

    assert_new((r = get(&s, NULL), &r), "good.xml");
    s.url = http_url("/redir/4/md/good.xml");
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "curl error 47");
    ck_assert_int_eq(r.curl_code, CURLE_TOO_MANY_REDIRECTS);
    /* no downgrade from https to http */
    s.url = https_url("/to-http/md/good.xml?t=downgrade");
    s.ca_file = apr_pstrcat(pool, srv_root, "/tls/ca.crt", NULL);
    r = get(&s, NULL);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "https only");
    ck_assert_ptr_null(request_line("\"path\": \"/md/good.xml?t=downgrade"));
    /* no cookie is kept from one response to the next */
    s.url = http_url("/cookie/md/good.xml?t=cookie");
    assert_new((r = get(&s, NULL), &r), "good.xml");
    req = request_line("\"path\": \"/md/good.xml?t=cookie");
    ck_assert_ptr_nonnull(req);
    ck_assert_msg(contains(req, "\"cookie\": null"), "%s", req);
}
END_TEST

static void check_stall(const char *path)
{
    rsp_md_source_t s = source(http_url(path), NULL);
    rsp_md_result_t r;
    apr_time_t t0 = apr_time_now();
    long long ms;

    s.timeout = apr_time_from_msec(STALL_TIMEOUT_MS);
    r = get(&s, NULL);
    ms = ms_since(t0);
    assert_failed_with(&r, RSP_MD_ERR_FETCH, "curl error 28");
    ck_assert_int_eq(r.curl_code, CURLE_OPERATION_TIMEDOUT);
    ck_assert_msg(ms >= STALL_TIMEOUT_MS - 50 && ms < STALL_BOUND_MS,
                  "%s: took %lld ms (timeout %d ms)", path, ms, STALL_TIMEOUT_MS);
}

START_TEST(test_stalled_server_times_out)
{
    check_stall("/stall");        /* no answer at all */
    check_stall("/stall-body");   /* part of the body, then nothing */
}
END_TEST

START_TEST(test_connect_timeout)
{
    rsp_md_source_t s = source(apr_psprintf(pool, "http://127.0.0.1:%d/md/good.xml",
                                            full_backlog_port()), NULL);
    rsp_md_result_t r;
    apr_time_t t0 = apr_time_now();

    s.connect_timeout = apr_time_from_msec(STALL_TIMEOUT_MS);
    r = get(&s, NULL);
    ck_assert_int_eq(r.outcome, RSP_MD_FAILED);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_FETCH);
    ck_assert_msg(ms_since(t0) < STALL_BOUND_MS, "took %lld ms", ms_since(t0));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Local files                                                         */

START_TEST(test_file_source)
{
    const char *dir = tmpdir(), *path = apr_pstrcat(pool, dir, "/idps.xml", NULL);
    rsp_md_source_t s = source(NULL, NULL);
    rsp_md_result_t r;
    rsp_md_have_t have;
    rsp_md_file_id_t id;

    s.path = path;
    put_file(path, slurp(md_path("good.xml")));
    r = get(&s, NULL);
    assert_new(&r, "good.xml");
    ck_assert_str_eq(r.origin, path);
    ck_assert_int_eq(rsp_md_file_id(&id, path, pool), APR_SUCCESS);
    ck_assert_int_eq(rsp_md_file_changed(&id, &r.file), 0);
    memset(&have, 0, sizeof(have));
    have.file = r.file;
    have.valid_until = r.valid_until;
    ck_assert_int_eq((r = get(&s, &have), r.outcome), RSP_MD_NOT_MODIFIED);
    /* replaced (another size): read again and verified */
    put_file(path, slurp(md_path("good-entity.xml")));
    ck_assert_int_eq(rsp_md_file_id(&id, path, pool), APR_SUCCESS);
    ck_assert_int_ne(rsp_md_file_changed(&id, &have.file), 0);
    r = get(&s, &have);
    ck_assert_int_eq(r.outcome, RSP_MD_NEW);
    ck_assert_str_eq(r.data, slurp(md_path("good-entity.xml")));
    have.file = r.file;
    /* the same size, another mtime */
    id = have.file;
    id.mtime -= apr_time_from_sec(10);
    ck_assert_int_ne(rsp_md_file_changed(&id, &have.file), 0);
    /* tampered: refused */
    put_file(path, slurp(md_path("tampered.xml")));
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_SIGNATURE, "certificate");
    /* without a certificate: read as it is */
    s.cert_pem = NULL;
    r = get(&s, NULL);
    ck_assert_int_eq(r.outcome, RSP_MD_NEW);
    ck_assert_int_eq(r.valid_until, 0);
    /* gone */
    unlink(path);
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_FETCH, "cannot open");
    ck_assert_int_ne(rsp_md_file_id(&id, path, pool), APR_SUCCESS);
    /* not modified, but what the caller holds has expired */
    put_file(path, slurp(md_path("good.xml")));
    r = get(&s, NULL);
    have.file = r.file;
    have.valid_until = apr_time_now() - 1;
    assert_failed_with((r = get(&s, &have), &r), RSP_MD_ERR_EXPIRED, "expired");
    /* a URL and a path, or neither */
    s.url = http_url("/md/good.xml");
    s.path = path;
    assert_failed_with((r = get(&s, NULL), &r), RSP_MD_ERR_FETCH, "exactly one");
}
END_TEST

START_TEST(test_reason_names)
{
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_OK), "ok");
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_ERR_FETCH), "fetch");
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_ERR_SIGNATURE), "signature");
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_ERR_EXPIRED), "expired");
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_ERR_MALFORMED), "malformed");
    ck_assert_str_eq(rsp_md_reason_name(RSP_MD_ERR_TOO_LARGE), "too-large");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The server, the suite                                               */

static int ports_ready(void *arg)
{
    const char *path = arg;
    FILE *f = fopen(path, "r");
    int ok;

    if (!f) {
        return 0;
    }
    ok = fscanf(f, "%d %d", &http_port, &https_port) == 2;
    fclose(f);
    return ok && http_port > 0 && https_port > 0;
}

static void stop_md_server(void)
{
    if (getpid() != owner) {
        return;   /* a forked test process */
    }
    stop_server(&srv_pid, "md_http_server.py");
    rsp_md_source_global_cleanup();
}

static Suite *md_source_suite(void)
{
    static char root[256], www[512], ports[512], log[512];
    const char *argv[] = {"/usr/bin/python3", RSP_SRCDIR "/tests/unit/md_http_server.py",
                          root, NULL, NULL};
    static char mddir[512];
    const char *err = NULL;
    Suite *s = suite_create("rsp_md_source");
    TCase *tc = tcase_create("source");

    owner = getpid();
    snprintf(root, sizeof(root), "%s/srv", saml_dir);
    snprintf(www, sizeof(www), "%s/www", root);
    snprintf(ports, sizeof(ports), "%s/ports", root);
    snprintf(log, sizeof(log), "%s/server.log", root);
    snprintf(mddir, sizeof(mddir), "%s/md", saml_dir);
    argv[3] = mddir;
    srv_root = root;
    if (mkdir(root, 0700) != 0 || mkdir(www, 0700) != 0) {
        fprintf(stderr, "mkdir %s: %s\n", root, strerror(errno));
        exit(99);
    }
    if (rsp_md_source_global_init(&err) != APR_SUCCESS) {
        fprintf(stderr, "libcurl: %s\n", err);
        exit(99);
    }
    if ((srv_pid = spawn_server(argv, log, ports_ready, ports)) < 0) {
        fprintf(stderr, "the metadata server did not start\n");
        exit(99);
    }
    atexit(stop_md_server);

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_signed_aggregate_accepted);
    tcase_add_test(tc, test_cache_duration_read);
    tcase_add_test(tc, test_not_modified);
    tcase_add_test(tc, test_tampered_keeps_backing);
    tcase_add_test(tc, test_expired_and_malformed);
    tcase_add_test(tc, test_too_large_stops_the_transfer);
    tcase_add_test(tc, test_server_down_backing_used);
    tcase_add_test(tc, test_backing_not_writable);
    tcase_add_test(tc, test_password_not_shown);
    tcase_add_test(tc, test_https);
    tcase_add_test(tc, test_redirects);
    tcase_add_test(tc, test_stalled_server_times_out);
    tcase_add_test(tc, test_connect_timeout);
    tcase_add_test(tc, test_file_source);
    tcase_add_test(tc, test_reason_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("metadata", md_source_suite);
}
