/* Unit tests for rsp_mdq.c and rsp_saml_mdq.c: entities asked for by MDQ
 * from a real loopback server (md_http_server.py's /mdq/ route, started
 * here, stopped by PID), verified with the federation certificate of
 * make_saml_cases.py's metadata group, kept in a host cache directory;
 * the limiter; and an SP whose only IdPs come by MDQ, looked up as a
 * request does (found, the host's copy used, a missing entity refused
 * with check=issuer and not asked for again at once). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <apr_file_info.h>
#include <apr_strings.h>

#include "rsp_mdq.h"
#include "rsp_unit_saml.h"
#include "rsp_unit_server.h"

#define WEEKS4 (28 * 24 * 3600)
#define IDP_HEX "c1f75106a51f3195f8461ba5cff40eb0c8d024ea" /* sha1(IDP_ENTITY) */
#define OTHER_ENTITY "https://other.unit.example/idp"
#define THIRD_ENTITY "https://third.unit.example/idp"

static pid_t srv_pid = -1, owner;
static int http_port, https_port;
static const char *srv_root, *mdq_dir;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

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

static const char *md_case(const char *name)
{
    return slurp(apr_pstrcat(pool, saml_dir, "/md/", name, ".xml", NULL));
}

/* What the MDQ server answers for entity: the case `name`, or a 404. */
static void publish(const char *entity, const char *name)
{
    const char *path = apr_pstrcat(pool, mdq_dir, "/",
                                   rsp_mdq_sha1_hex(pool, entity), ".xml", NULL);

    if (name) {
        put_file(path, md_case(name));
    }
    else {
        unlink(path);
    }
}

static const char *tmpdir(void)
{
    char *d = apr_pstrcat(pool, saml_dir, "/t-XXXXXX", NULL);

    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static const char *base_url(void)
{
    return apr_psprintf(pool, "http://127.0.0.1:%d/mdq/", http_port);
}

static rsp_mdq_t query(const char *cache_dir)
{
    rsp_mdq_t q;

    memset(&q, 0, sizeof(q));
    q.base_url = base_url();
    q.cert_pem = slurp(apr_pstrcat(pool, saml_dir, "/md/fed.crt", NULL));
    q.cache_dir = cache_dir;
    q.max_validity_s = WEEKS4;
    q.refresh_s = 300;
    return q;
}

/* How many requests the server has logged for the entity's hash. */
static int requests_for(const char *hex)
{
    const char *log = slurp(apr_pstrcat(pool, srv_root, "/requests.log", NULL));
    const char *s = log;
    int n = 0;

    while (s && (s = strstr(s, hex)) != NULL) {
        n++;
        s += strlen(hex);
    }
    return n;
}

/* An accept callback: takes what names the entity asked for. */
typedef struct {
    const char *want;
    int calls;
} want_t;

static apr_status_t accept_entity(void *baton, apr_pool_t *p, const char *data,
                                  apr_size_t len, apr_time_t valid_until,
                                  const char **why)
{
    want_t *w = baton;

    (void)p;
    (void)len;
    (void)valid_until;
    w->calls++;
    if (!strstr(data, apr_psprintf(pool, "entityID=\"%s\"", w->want))) {
        *why = "not the entity asked for";
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}

static void set_mtime(const char *path, apr_time_t when)
{
    struct timeval tv[2];

    tv[0].tv_sec = tv[1].tv_sec = (time_t)apr_time_sec(when);
    tv[0].tv_usec = tv[1].tv_usec = 0;
    ck_assert_int_eq(utimes(path, tv), 0);
}

static apr_time_t mtime_of(const char *path)
{
    struct stat st;

    ck_assert_int_eq(stat(path, &st), 0);
    return apr_time_from_sec(st.st_mtime);
}

/* ------------------------------------------------------------------ */
/* rsp_mdq.c                                                           */

START_TEST(test_names)
{
    ck_assert_str_eq(rsp_mdq_sha1_hex(pool, IDP_ENTITY), IDP_HEX);
    ck_assert_str_eq(rsp_mdq_url(pool, "https://mdq.example/", IDP_ENTITY),
                     "https://mdq.example/entities/%7Bsha1%7D" IDP_HEX);
    ck_assert_str_eq(rsp_mdq_url(pool, "https://mdq.example/global//",
                                 IDP_ENTITY),
                     "https://mdq.example/global/entities/%7Bsha1%7D" IDP_HEX);
    ck_assert_str_eq(rsp_mdq_url(pool, "http://mdq.example", IDP_ENTITY),
                     "http://mdq.example/entities/%7Bsha1%7D" IDP_HEX);
    ck_assert_str_eq(rsp_mdq_cache_file(pool, "/var/cache/x", IDP_ENTITY),
                     "/var/cache/x/" IDP_HEX ".xml");
}
END_TEST

START_TEST(test_fetched_kept_on_host_confirmed)
{
    const char *dir = tmpdir(), *cache = rsp_mdq_cache_file(pool, dir, IDP_ENTITY);
    rsp_mdq_t q = query(dir);
    want_t w = { IDP_ENTITY, 0 };
    rsp_md_result_t r;
    apr_int64_t fresh;
    int fetched, before = requests_for(IDP_HEX);

    publish(IDP_ENTITY, "good-entity");
    /* first sight: asked for, verified, accepted, kept */
    ck_assert_int_eq(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert_msg(r.outcome == RSP_MD_NEW, "%s", ERR_S(r.detail));
    ck_assert_int_eq(fetched, 1);
    ck_assert_int_eq(r.http_status, 200);
    ck_assert_int_eq(w.calls, 1);
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    ck_assert_str_eq(slurp(cache), r.data);
    ck_assert(fresh > 0 && fresh <= 300);
    /* another process: the host's copy, no request */
    ck_assert_int_eq(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert(r.outcome == RSP_MD_NEW);
    ck_assert_int_eq(fetched, 0);
    ck_assert_str_eq(r.origin, cache);
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    ck_assert(fresh > 0 && fresh <= 300);
    /* the host's copy no longer current: a conditional GET, 304, the copy
     * used and touched */
    set_mtime(cache, apr_time_now() - apr_time_from_sec(3600));
    ck_assert_int_eq(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert_msg(r.outcome == RSP_MD_NEW, "%s", ERR_S(r.detail));
    ck_assert_int_eq(fetched, 1);
    ck_assert_int_eq(r.http_status, 304);
    ck_assert_int_eq(r.from_backing, 0);
    ck_assert(mtime_of(cache) > apr_time_now() - apr_time_from_sec(60));
    ck_assert_int_eq(requests_for(IDP_HEX), before + 2);
}
END_TEST

START_TEST(test_held_copy_not_modified)
{
    const char *dir = tmpdir(), *cache = rsp_mdq_cache_file(pool, dir, IDP_ENTITY);
    rsp_mdq_t q = query(dir);
    want_t w = { IDP_ENTITY, 0 };
    rsp_md_result_t r, r2;
    rsp_md_have_t have;
    apr_int64_t fresh;
    int fetched;

    publish(IDP_ENTITY, "good-entity");
    rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY, NULL,
                apr_time_now(), accept_entity, &w);
    ck_assert(r.outcome == RSP_MD_NEW);
    set_mtime(cache, apr_time_now() - apr_time_from_sec(3600));
    memset(&have, 0, sizeof(have));
    have.etag = r.etag;
    have.last_modified = r.last_modified;
    have.valid_until = r.valid_until;
    ck_assert_int_eq(rsp_mdq_get(&r2, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 &have, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert_msg(r2.outcome == RSP_MD_NOT_MODIFIED, "%d %s", r2.outcome,
                  ERR_S(r2.detail));
    ck_assert_int_eq(fetched, 1);
    ck_assert(mtime_of(cache) > apr_time_now() - apr_time_from_sec(60));
}
END_TEST

/* Every refusal: nothing written to the host's cache. */
static void assert_refused(const char *entity, const char *name,
                           rsp_md_reason_e reason, const char *detail)
{
    const char *dir = tmpdir();
    rsp_mdq_t q = query(dir);
    want_t w = { entity, 0 };
    rsp_md_result_t r;
    apr_int64_t fresh;
    int fetched;

    publish(entity, name);
    ck_assert_int_ne(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, entity, NULL,
                                 apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert(r.outcome == RSP_MD_FAILED);
    ck_assert_msg(r.reason == reason, "%s: reason %s (%s)", ERR_S(name),
                  rsp_md_reason_name(r.reason), ERR_S(r.detail));
    ck_assert_msg(contains(r.detail, detail), "%s: detail %s", ERR_S(name),
                  ERR_S(r.detail));
    ck_assert_int_eq(fetched, 1);
    ck_assert_int_eq(access(rsp_mdq_cache_file(pool, dir, entity), F_OK), -1);
    publish(entity, NULL);
}

START_TEST(test_refusals_write_nothing)
{
    assert_refused(OTHER_ENTITY, NULL, RSP_MD_ERR_FETCH, "HTTP status 404");
    /* signed, but it describes another entity than the one asked for */
    assert_refused(OTHER_ENTITY, "good-entity", RSP_MD_ERR_MALFORMED,
                   "not the entity asked for");
    assert_refused(IDP_ENTITY, "other-key", RSP_MD_ERR_SIGNATURE, "");
    assert_refused(IDP_ENTITY, "tampered", RSP_MD_ERR_SIGNATURE, "");
    assert_refused(IDP_ENTITY, "expired", RSP_MD_ERR_EXPIRED, "");
    assert_refused(IDP_ENTITY, "no-valid-until", RSP_MD_ERR_EXPIRED, "");
    assert_refused(IDP_ENTITY, "doctype", RSP_MD_ERR_MALFORMED, "");
}
END_TEST

START_TEST(test_server_down_host_copy_used)
{
    const char *dir = tmpdir(), *cache = rsp_mdq_cache_file(pool, dir, IDP_ENTITY);
    rsp_mdq_t q = query(dir);
    want_t w = { IDP_ENTITY, 0 };
    rsp_md_result_t r;
    apr_int64_t fresh;
    int fetched, port, fd = bound_socket(&port);

    publish(IDP_ENTITY, "good-entity");
    rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY, NULL,
                apr_time_now(), accept_entity, &w);
    ck_assert(r.outcome == RSP_MD_NEW);
    set_mtime(cache, apr_time_now() - apr_time_from_sec(3600));
    /* a port nobody listens on */
    q.base_url = apr_psprintf(pool, "http://127.0.0.1:%d/mdq", port);
    ck_assert_int_eq(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    close(fd);
    ck_assert(r.outcome == RSP_MD_NEW);
    ck_assert_int_eq(r.from_backing, 1);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_FETCH);
    ck_assert_int_eq(fresh, RSP_MDQ_NEGATIVE_S);
    /* and without a copy: refused */
    ck_assert_int_eq(unlink(cache), 0);
    ck_assert_int_ne(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert_int_eq(r.reason, RSP_MD_ERR_FETCH);
}
END_TEST

START_TEST(test_limiter)
{
    rsp_mdq_limit_t l;
    apr_time_t now = apr_time_now();
    const char *why = NULL;
    int i;

    memset(&l, 0, sizeof(l));
    for (i = 0; i < RSP_MDQ_IN_FLIGHT; i++) {
        ck_assert(rsp_mdq_limit_take(&l, now, &why));
    }
    ck_assert(!rsp_mdq_limit_take(&l, now, &why));
    ck_assert(contains(why, "under way"));
    rsp_mdq_limit_done(&l);
    ck_assert(rsp_mdq_limit_take(&l, now, &why));
    for (i = 0; i < RSP_MDQ_IN_FLIGHT; i++) {
        rsp_mdq_limit_done(&l);
    }
    /* RSP_MDQ_PER_MINUTE begun in a minute, not one more */
    for (i = RSP_MDQ_IN_FLIGHT + 1; i < RSP_MDQ_PER_MINUTE; i++) {
        ck_assert_msg(rsp_mdq_limit_take(&l, now, &why), "fetch %d", i);
        rsp_mdq_limit_done(&l);
    }
    why = NULL;
    ck_assert(!rsp_mdq_limit_take(&l, now + apr_time_from_sec(59), &why));
    ck_assert(contains(why, "last minute"));
    ck_assert(rsp_mdq_limit_take(&l, now + apr_time_from_sec(61), &why));
    rsp_mdq_limit_done(&l);
    rsp_mdq_limit_done(&l); /* never below zero */
    ck_assert_int_eq(l.in_flight, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* An SP whose IdPs come by MDQ (rsp_saml_mdq.c)                        */

static rsp_saml_sp_t mdq_sp_def;

/* An SP like the suites' one, its IdPs by MDQ only, loaded as the module
 * loads it, pinned to the test's pool. */
static const rsp_saml_sp_t *mdq_sp(const char *cache_dir)
{
    rsp_sp_input_t input;
    const char *err = NULL;

    memset(&mdq_sp_def, 0, sizeof(mdq_sp_def));
    mdq_sp_def.entity_id = SP_ENTITY;
    mdq_sp_def.key_file = apr_pstrcat(pool, saml_dir, "/sp.key", NULL);
    mdq_sp_def.cert_file = apr_pstrcat(pool, saml_dir, "/sp.crt", NULL);
    mdq_sp_def.idp_files = apr_array_make(pool, 1, sizeof(const char *));
    mdq_sp_def.enc_publish = -1;
    mdq_sp_def.mdq_url = base_url();
    mdq_sp_def.mdq_cert_file = apr_pstrcat(pool, saml_dir, "/md/fed.crt", NULL);
    mdq_sp_def.mdq_cache_dir = cache_dir;
    mdq_sp_def.md_max_validity = WEEKS4;
    ck_assert_msg(rsp_saml_sp_load(&mdq_sp_def, pool, &input, &err)
                  == APR_SUCCESS, "%s", ERR_S(err));
    ck_assert_int_eq(rsp_idp_count(mdq_sp_def.idps), 0);
    return rsp_saml_sp_pin(&mdq_sp_def, pool);
}

static apr_status_t process(const rsp_saml_sp_t *sp, const char *name,
                            const char **check, const char **detail)
{
    rsp_lasso_server_t *server;
    rsp_check_params_t cp;
    rsp_assertion_t *a = NULL;
    const char *err = NULL;
    apr_status_t rv;

    ck_assert_msg(rsp_saml_server_new(&server, sp, &err) == APR_SUCCESS, "%s",
                  ERR_S(err));
    memset(&cp, 0, sizeof(cp));
    cp.sp = sp;
    cp.entity_id = SP_ENTITY;
    cp.acs_url = ACS_URL;
    cp.now = apr_time_now();
    cp.skew_s = 180;
    cp.max_window_s = 3600;
    *check = *detail = NULL;
    rv = rsp_saml_process_response(&a, pool, server,
                                   rsp_unit_saml_case(pool, name), &cp, check,
                                   detail);
    rsp_saml_server_free(server);
    return rv;
}

START_TEST(test_sp_signs_in_by_mdq)
{
    const char *dir = tmpdir(), *check, *detail;
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    const rsp_idp_t *idp;
    apr_pool_t *req;
    int before;

    publish(IDP_ENTITY, "good-entity");
    before = requests_for(IDP_HEX);
    /* a Response from the IdP: its metadata asked for, its signature
     * verified with the key in it */
    ck_assert_msg(process(sp, "good-both-signed", &check, &detail)
                  == APR_SUCCESS, "check=%s %s", ERR_S(check), ERR_S(detail));
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    idp = rsp_saml_idp(sp, IDP_ENTITY);
    ck_assert_ptr_nonnull(idp);
    ck_assert_str_eq(idp->entity_id, IDP_ENTITY);
    ck_assert_int_gt(idp->sso->nelts, 0);
    ck_assert(idp->valid_until > apr_time_now());
    /* another request of this process: the table, no request */
    apr_pool_create(&req, pool);
    ck_assert_ptr_nonnull(rsp_saml_idp(rsp_saml_sp_pin(&mdq_sp_def, req),
                                       IDP_ENTITY));
    apr_pool_destroy(req);
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* a Response signed by another key than the one published: refused */
    ck_assert_int_ne(process(sp, "another-key", &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "signature");
}
END_TEST

START_TEST(test_sp_refuses_unknown_entity)
{
    const char *dir = tmpdir(), *check, *detail;
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    int before;

    publish(IDP_ENTITY, NULL);
    before = requests_for(IDP_HEX);
    ck_assert_int_ne(process(sp, "good-both-signed", &check, &detail),
                     APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "issuer");
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* published now, but a failed entity is not asked for again at once */
    publish(IDP_ENTITY, "good-entity");
    ck_assert_int_ne(process(sp, "good-both-signed", &check, &detail),
                     APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "issuer");
    ck_assert_ptr_null(rsp_saml_idp(sp, IDP_ENTITY));
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* an entityID too long to be asked for, and an empty one */
    ck_assert_ptr_null(rsp_saml_idp(sp, apr_psprintf(pool, "https://x/%01100d", 0)));
    ck_assert_ptr_null(rsp_saml_idp(sp, ""));
    /* an entity whose document describes another: refused */
    publish(OTHER_ENTITY, "good-entity");
    ck_assert_ptr_null(rsp_saml_idp(sp, OTHER_ENTITY));
    publish(OTHER_ENTITY, NULL);
}
END_TEST

START_TEST(test_sp_state)
{
    const char *dir = tmpdir();
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    rsp_saml_mdq_state_t st;

    publish(IDP_ENTITY, "good-entity");
    publish(OTHER_ENTITY, NULL);
    ck_assert_ptr_nonnull(rsp_saml_idp(sp, IDP_ENTITY));
    ck_assert_ptr_null(rsp_saml_idp(sp, OTHER_ENTITY));
    rsp_saml_mdq_state(sp, &st, pool);
    ck_assert_int_eq(st.entities, 1);
    ck_assert_uint_eq(st.fetches, 2);
    ck_assert_uint_eq(st.failures, 1);
    /* a 404 is an entity the service does not know: not its failure */
    ck_assert_int_eq(st.failing, 0);
    ck_assert_msg(contains(st.last_error, "HTTP status 404"), "%s",
                  ERR_S(st.last_error));
    ck_assert(st.failed_at > 0);
    /* a document that does not verify is */
    publish(THIRD_ENTITY, "other-key");
    ck_assert_ptr_null(rsp_saml_idp(sp, THIRD_ENTITY));
    publish(THIRD_ENTITY, NULL);
    rsp_saml_mdq_state(sp, &st, pool);
    ck_assert_uint_eq(st.failures, 2);
    ck_assert_int_eq(st.failing, 1);
    ck_assert_int_eq(st.failing_reason, RSP_MD_ERR_SIGNATURE);
    ck_assert_int_eq(st.entities, 1);
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

static Suite *mdq_suite(void)
{
    static char root[256], ports[512], log[512], mddir[512], mdq[600];
    const char *argv[] = {"/usr/bin/python3", RSP_SRCDIR "/tests/unit/md_http_server.py",
                          root, mddir, NULL};
    const char *err = NULL;
    Suite *s = suite_create("rsp_mdq");
    TCase *tc = tcase_create("mdq");

    owner = getpid();
    snprintf(root, sizeof(root), "%s/srv", saml_dir);
    snprintf(ports, sizeof(ports), "%s/ports", root);
    snprintf(log, sizeof(log), "%s/server.log", root);
    snprintf(mddir, sizeof(mddir), "%s/md", saml_dir);
    snprintf(mdq, sizeof(mdq), "%s/mdq", mddir);
    srv_root = root;
    mdq_dir = mdq;
    if (mkdir(root, 0700) != 0 || mkdir(mdq, 0700) != 0) {
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
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_fetched_kept_on_host_confirmed);
    tcase_add_test(tc, test_held_copy_not_modified);
    tcase_add_test(tc, test_refusals_write_nothing);
    tcase_add_test(tc, test_server_down_host_copy_used);
    tcase_add_test(tc, test_limiter);
    tcase_add_test(tc, test_sp_signs_in_by_mdq);
    tcase_add_test(tc, test_sp_refuses_unknown_entity);
    tcase_add_test(tc, test_sp_state);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("responses,metadata", mdq_suite);
}
