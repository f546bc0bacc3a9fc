/* Unit tests for rsp_mdq.c: entities asked for by MDQ from a real
 * loopback server (md_http_server.py's /mdq/ route, rsp_unit_mdq.h),
 * verified with the federation certificate of make_saml_cases.py's
 * metadata group, kept in a host cache directory; and the limiter. */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <apr_strings.h>

#include "rsp_mdq.h"
#include "rsp_unit_mdq.h"
#include "rsp_unit_server.h"

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
    const char *etag;
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
    ck_assert_ptr_nonnull(r.etag);
    etag = r.etag;
    ck_assert(fresh > 0 && fresh <= 300);
    /* another process: the host's copy, no request */
    ck_assert_int_eq(rsp_mdq_get(&r, &fresh, &fetched, pool, &q, IDP_ENTITY,
                                 NULL, apr_time_now(), accept_entity, &w),
                     APR_SUCCESS);
    ck_assert(r.outcome == RSP_MD_NEW);
    ck_assert_int_eq(fetched, 0);
    ck_assert_str_eq(r.origin, cache);
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* with what the server sent it with: this process asks again
     * conditionally too */
    ck_assert_ptr_nonnull(r.etag);
    ck_assert_str_eq(r.etag, etag);
    ck_assert_ptr_nonnull(r.last_modified);
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


static Suite *mdq_suite(void)
{
    Suite *s = suite_create("rsp_mdq");
    TCase *tc = tcase_create("mdq");

    mdq_server_start();
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_fetched_kept_on_host_confirmed);
    tcase_add_test(tc, test_held_copy_not_modified);
    tcase_add_test(tc, test_refusals_write_nothing);
    tcase_add_test(tc, test_server_down_host_copy_used);
    tcase_add_test(tc, test_limiter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("metadata", mdq_suite);
}
