/* Unit tests for rsp_url.c: store URL parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp_unit.h"
#include <apr_general.h>
#include <apr_pools.h>

#include "rsp_url.h"

/* Parse a URL that must be accepted. */
static rsp_store_url_t *parse_ok(const char *url)
{
    rsp_store_url_t *u = NULL;
    const char *err = NULL;
    apr_status_t rv = rsp_store_url_parse(&u, pool, url, &err);

    ck_assert_msg(rv == APR_SUCCESS, "\"%s\" rejected: %s", url,
                  err ? err : "(no message)");
    ck_assert_ptr_nonnull(u);
    ck_assert_ptr_nonnull(u->display);
    return u;
}

/* A URL that must be rejected with APR_EINVAL and a non-empty message,
 * leaving *out untouched. */
static void expect_reject(const char *url)
{
    rsp_store_url_t *u = (rsp_store_url_t *)&u; /* sentinel */
    const char *err = NULL;
    apr_status_t rv = rsp_store_url_parse(&u, pool, url, &err);

    ck_assert_msg(rv == APR_EINVAL, "\"%s\" accepted (rv %d)",
                  url ? url : "(null)", rv);
    ck_assert_msg(err != NULL && *err != '\0', "\"%s\": no error message",
                  url ? url : "(null)");
    ck_assert_msg(u == (rsp_store_url_t *)&u, "\"%s\": *out written on failure",
                  url ? url : "(null)");
}

START_TEST(test_tcp_default_db)
{
    rsp_store_url_t *u = parse_ok("redis://127.0.0.1:6379");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_str_eq(u->host, "127.0.0.1");
    ck_assert_int_eq(u->port, 6379);
    ck_assert_int_eq(u->db, 0);
    ck_assert_ptr_null(u->user);
    ck_assert_ptr_null(u->password);
    ck_assert_ptr_null(u->path);
    ck_assert_str_eq(u->display, "redis://127.0.0.1:6379/0");
}
END_TEST

START_TEST(test_tcp_db)
{
    rsp_store_url_t *u = parse_ok("redis://host:6380/3");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_str_eq(u->host, "host");
    ck_assert_int_eq(u->port, 6380);
    ck_assert_int_eq(u->db, 3);
    ck_assert_ptr_null(u->user);
    ck_assert_ptr_null(u->password);
    ck_assert_str_eq(u->display, "redis://host:6380/3");

    u = parse_ok("redis://redis.example.net:65535/15");
    ck_assert_str_eq(u->host, "redis.example.net");
    ck_assert_int_eq(u->port, 65535);
    ck_assert_int_eq(u->db, 15);

    u = parse_ok("redis://h:1/");
    ck_assert_int_eq(u->port, 1);
    ck_assert_int_eq(u->db, 0);
}
END_TEST

START_TEST(test_tcp_password_only)
{
    rsp_store_url_t *u = parse_ok("redis://:secret@h:1/0");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_ptr_null(u->user);
    ck_assert_ptr_nonnull(u->password);
    ck_assert_str_eq(u->password, "secret");
    ck_assert_str_eq(u->host, "h");
    ck_assert_int_eq(u->port, 1);
    ck_assert_int_eq(u->db, 0);
}
END_TEST

START_TEST(test_tcp_user_encoded_password)
{
    rsp_store_url_t *u = parse_ok("redis://user:p%40ss@h:1");

    ck_assert_ptr_nonnull(u->user);
    ck_assert_str_eq(u->user, "user");
    ck_assert_ptr_nonnull(u->password);
    ck_assert_str_eq(u->password, "p@ss");
    ck_assert_str_eq(u->host, "h");
    ck_assert_int_eq(u->port, 1);
    ck_assert_int_eq(u->db, 0);
    ck_assert_ptr_null(strstr(u->display, "p@ss"));
    ck_assert_ptr_null(strstr(u->display, "p%40ss"));
    ck_assert_str_eq(u->display, "redis://user:***@h:1/0");

    /* escapes in the user name too, lower-case hex */
    u = parse_ok("redis://us%3aer:a%2fb@h:2/4");
    ck_assert_str_eq(u->user, "us:er");
    ck_assert_str_eq(u->password, "a/b");
    ck_assert_int_eq(u->db, 4);
}
END_TEST

START_TEST(test_tcp_ipv6)
{
    rsp_store_url_t *u = parse_ok("redis://[::1]:6379");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_str_eq(u->host, "::1");
    ck_assert_int_eq(u->port, 6379);
    ck_assert_int_eq(u->db, 0);
    ck_assert_str_eq(u->display, "redis://[::1]:6379/0");

    u = parse_ok("redis://:secret@[2001:db8::2]:6380/2");
    ck_assert_str_eq(u->host, "2001:db8::2");
    ck_assert_int_eq(u->port, 6380);
    ck_assert_int_eq(u->db, 2);
    ck_assert_str_eq(u->password, "secret");
}
END_TEST

START_TEST(test_unix)
{
    rsp_store_url_t *u = parse_ok("redis+unix:///run/redis.sock");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS_UNIX);
    ck_assert_str_eq(u->path, "/run/redis.sock");
    ck_assert_int_eq(u->db, 0);
    ck_assert_ptr_null(u->host);
    ck_assert_ptr_null(u->user);
    ck_assert_ptr_null(u->password);
    ck_assert_str_eq(u->display, "redis+unix:///run/redis.sock");
}
END_TEST

START_TEST(test_unix_db)
{
    rsp_store_url_t *u = parse_ok("redis+unix:///x.sock?db=2");

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS_UNIX);
    ck_assert_str_eq(u->path, "/x.sock");
    ck_assert_int_eq(u->db, 2);
    ck_assert_str_eq(u->display, "redis+unix:///x.sock?db=2");
}
END_TEST

START_TEST(test_reject_empty_and_scheme)
{
    expect_reject(NULL);
    expect_reject("");
    expect_reject("http://127.0.0.1:6379");
    expect_reject("https://127.0.0.1:6379");
    expect_reject("memcached://127.0.0.1:11211");
    expect_reject("redis+tls://127.0.0.1:6379");
    expect_reject("rediss+unix:///run/redis.sock");
    expect_reject("memcache+tls://127.0.0.1:11211");
    expect_reject("rediss://");
    expect_reject("memcaches://");
    expect_reject("127.0.0.1:6379");
    expect_reject("redis:127.0.0.1:6379");
    expect_reject("redis:/127.0.0.1:6379");
    expect_reject("redis://");
    expect_reject("redis+unix://");
}
END_TEST

START_TEST(test_reject_port)
{
    expect_reject("redis://127.0.0.1");        /* missing port */
    expect_reject("redis://127.0.0.1/0");
    expect_reject("redis://127.0.0.1:");
    expect_reject("redis://127.0.0.1:/0");
    expect_reject("redis://127.0.0.1:0");
    expect_reject("redis://127.0.0.1:65536");
    expect_reject("redis://127.0.0.1:99999999999");
    expect_reject("redis://127.0.0.1:abc");
    expect_reject("redis://127.0.0.1:-1");
    expect_reject("redis://127.0.0.1:+80");
    expect_reject("redis://[::1]");            /* IPv6 without port */
    expect_reject("redis://[::1]6379");
    expect_reject("redis://[]:6379");
    expect_reject("redis://[::1:6379");
    expect_reject("redis://:6379");            /* missing host */
}
END_TEST

START_TEST(test_reject_db)
{
    expect_reject("redis://h:6379/-1");
    expect_reject("redis://h:6379/abc");
    expect_reject("redis://h:6379/1x");
    expect_reject("redis+unix:///x.sock?db=-1");
    expect_reject("redis+unix:///x.sock?db=abc");
    expect_reject("redis+unix:///x.sock?db=");
}
END_TEST

START_TEST(test_reject_trailing_junk_and_spaces)
{
    expect_reject("redis://h:6379x");
    expect_reject("redis://h:6379/0/extra");
    expect_reject("redis://h:6379/0?x=1");
    expect_reject("redis://h:6379?db=1");
    expect_reject("redis://h:6379#frag");
    expect_reject("redis+unix:///x.sock?db=2&x=1");
    expect_reject("redis+unix:///x.sock?db=2x");
    expect_reject("redis://h :6379");
    expect_reject(" redis://h:6379");
    expect_reject("redis://h:6379 ");
    expect_reject("redis://h:63 79");
    expect_reject("redis+unix:///run/my redis.sock");
    expect_reject("redis://h\t:6379");
    expect_reject("redis://h:6379\n");
}
END_TEST

/* rediss:// and memcaches://: the same forms as redis:// and memcache://,
 * with TLS; the display keeps the scheme (an operator sees which). */
START_TEST(test_tls_forms)
{
    rsp_store_url_t *u = parse_ok("rediss://app:s%40cret@redis.example:6380/2");
    rsp_server_t *sv;

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_int_eq(u->tls, 1);
    ck_assert_str_eq(u->host, "redis.example");
    ck_assert_int_eq(u->port, 6380);
    ck_assert_int_eq(u->db, 2);
    ck_assert_str_eq(u->user, "app");
    ck_assert_str_eq(u->password, "s@cret");
    ck_assert_str_eq(u->display, "rediss://app:***@redis.example:6380/2");
    ck_assert_ptr_null(strstr(u->display, "cret"));

    u = parse_ok("REDISS://[::1]:6379");
    ck_assert_int_eq(u->tls, 1);
    ck_assert_str_eq(u->host, "::1");
    ck_assert_str_eq(u->display, "rediss://[::1]:6379/0");

    u = parse_ok("memcaches://mc-a.example:11211,127.0.0.1:11212");
    ck_assert_int_eq(u->kind, RSP_STORE_MEMCACHE);
    ck_assert_int_eq(u->tls, 1);
    ck_assert_int_eq(u->servers->nelts, 2);
    sv = &APR_ARRAY_IDX(u->servers, 0, rsp_server_t);
    ck_assert_str_eq(sv->host, "mc-a.example");
    ck_assert_str_eq(u->display, "memcaches://mc-a.example:11211,127.0.0.1:11212");

    /* The plaintext forms say so. */
    ck_assert_int_eq(parse_ok("redis://127.0.0.1:6379")->tls, 0);
    ck_assert_int_eq(parse_ok("memcache://127.0.0.1:11211")->tls, 0);
    ck_assert_int_eq(parse_ok("redis+unix:///run/r.sock")->tls, 0);

    expect_reject("rediss://127.0.0.1");            /* no port */
    expect_reject("rediss://127.0.0.1:6379?x=1");
    expect_reject("memcaches://user:pw@a:11211");
    expect_reject("memcaches://a:1,a:1");
}
END_TEST

START_TEST(test_sentinel_forms)
{
    rsp_store_url_t *u = parse_ok("redis+sentinel://app:pw@10.0.0.1:26379,"
                                  "[::1]:26380,s3.example:26381/mymaster/2");
    rsp_server_t *sv;

    ck_assert_int_eq(u->kind, RSP_STORE_REDIS);
    ck_assert_int_eq(u->tls, 0);
    ck_assert_ptr_nonnull(u->sentinels);
    ck_assert_int_eq(u->sentinels->nelts, 3);
    sv = &APR_ARRAY_IDX(u->sentinels, 1, rsp_server_t);
    ck_assert_str_eq(sv->host, "::1");
    ck_assert_int_eq(sv->port, 26380);
    ck_assert_str_eq(u->master_name, "mymaster");
    ck_assert_int_eq(u->db, 2);
    ck_assert_str_eq(u->user, "app");
    ck_assert_str_eq(u->password, "pw");
    ck_assert_ptr_null(u->host); /* asked for at each connection */
    ck_assert_str_eq(u->display, "redis+sentinel://app:***@10.0.0.1:26379,"
                     "[::1]:26380,s3.example:26381/mymaster/2");
    u = parse_ok("rediss+sentinel://s1:26379/m-1.x_y");
    ck_assert_int_eq(u->tls, 1);
    ck_assert_int_eq(u->db, 0);
    ck_assert_str_eq(u->master_name, "m-1.x_y");
    ck_assert_str_eq(u->display, "rediss+sentinel://s1:26379/m-1.x_y/0");
    ck_assert_str_eq(parse_ok("redis+sentinel://s1:26379/m/")->master_name, "m");
    ck_assert_ptr_null(parse_ok("redis://127.0.0.1:6379")->sentinels);

    expect_reject("redis+sentinel://s1:26379");          /* no master name */
    expect_reject("redis+sentinel://s1:26379/");
    expect_reject("redis+sentinel:///m");                /* no sentinel */
    expect_reject("redis+sentinel://s1/m");              /* no port */
    expect_reject("redis+sentinel://s1:26379,/m");
    expect_reject("redis+sentinel://s1:26379,s1:26379/m");
    expect_reject("redis+sentinel://s1:26379/m/x");
    expect_reject("redis+sentinel://s1:26379/m?db=1");
    expect_reject("redis+sentinel://s1:26379/bad name");
    expect_reject("redis+sentinel://s1:26379/b@d");
    expect_reject("redis+sentinel://u@s1:26379/m");      /* no ':' */
    expect_reject("redis+sentinel://:@s1:26379/m");      /* empty password */
}
END_TEST

START_TEST(test_memcache_one_server)
{
    rsp_store_url_t *u = parse_ok("memcache://127.0.0.1:11211");
    rsp_server_t *sv;

    ck_assert_int_eq(u->kind, RSP_STORE_MEMCACHE);
    ck_assert_int_eq(u->servers->nelts, 1);
    sv = &APR_ARRAY_IDX(u->servers, 0, rsp_server_t);
    ck_assert_str_eq(sv->host, "127.0.0.1");
    ck_assert_int_eq(sv->port, 11211);
    ck_assert_str_eq(u->display, "memcache://127.0.0.1:11211");
}
END_TEST

START_TEST(test_memcache_servers_in_order)
{
    rsp_store_url_t *u =
        parse_ok("memcache://mc-b.example:11212,10.0.0.1:11211,[::1]:11213");
    rsp_server_t *sv;

    ck_assert_int_eq(u->kind, RSP_STORE_MEMCACHE);
    ck_assert_int_eq(u->servers->nelts, 3);
    /* the order of the URL is the order of the key mapping */
    sv = &APR_ARRAY_IDX(u->servers, 0, rsp_server_t);
    ck_assert_str_eq(sv->host, "mc-b.example");
    ck_assert_int_eq(sv->port, 11212);
    ck_assert_str_eq(sv->name, "mc-b.example:11212");
    sv = &APR_ARRAY_IDX(u->servers, 1, rsp_server_t);
    ck_assert_str_eq(sv->host, "10.0.0.1");
    ck_assert_int_eq(sv->port, 11211);
    ck_assert_str_eq(sv->name, "10.0.0.1:11211");
    sv = &APR_ARRAY_IDX(u->servers, 2, rsp_server_t);
    ck_assert_str_eq(sv->host, "::1");
    ck_assert_int_eq(sv->port, 11213);
    ck_assert_str_eq(sv->name, "[::1]:11213");
    ck_assert_str_eq(u->display,
                     "memcache://mc-b.example:11212,10.0.0.1:11211,[::1]:11213");
}
END_TEST

START_TEST(test_memcache_rejects)
{
    expect_reject("memcache://");
    expect_reject("memcache://127.0.0.1");            /* no port */
    expect_reject("memcache://127.0.0.1:0");
    expect_reject("memcache://127.0.0.1:11211,");     /* empty entry */
    expect_reject("memcache://,127.0.0.1:11211");
    expect_reject("memcache://a:1,,b:2");
    expect_reject("memcache://a:1,a:1");              /* listed twice */
    expect_reject("memcache://user:pw@a:11211");      /* no credentials */
    expect_reject("memcache://a:11211/0");            /* no path */
    expect_reject("memcache://a:11211?x=1");
    expect_reject("memcache://a:11211, b:11211");     /* spaces */
}
END_TEST

START_TEST(test_memcache_server_limit)
{
    char url[4096];
    int i, n = 0;

    n += snprintf(url + n, sizeof(url) - (size_t)n, "memcache://");
    for (i = 0; i < RSP_MAX_SERVERS; i++) {
        n += snprintf(url + n, sizeof(url) - (size_t)n, "%sh:%d", i ? "," : "",
                      1000 + i);
    }
    ck_assert_int_eq(parse_ok(url)->servers->nelts, RSP_MAX_SERVERS);
    snprintf(url + n, sizeof(url) - (size_t)n, ",h:999");
    expect_reject(url);
}
END_TEST

START_TEST(test_reject_unix)
{
    expect_reject("redis+unix://run/redis.sock");   /* relative path */
    expect_reject("redis+unix://redis.sock");
    expect_reject("redis+unix:///");
    expect_reject("redis+unix:///x.sock?foo=1");    /* unknown query param */
    expect_reject("redis+unix:///x.sock?DB=1");
    expect_reject("redis+unix:///x.sock?");
    expect_reject("redis+unix:///x%2.sock");        /* bad escape */
    expect_reject("redis+unix:///x%00.sock");
}
END_TEST

START_TEST(test_reject_credentials)
{
    expect_reject("redis://:p%4@h:1");        /* truncated escape */
    expect_reject("redis://:p%@h:1");
    expect_reject("redis://:p%zzss@h:1");     /* not hex */
    expect_reject("redis://:p%00ss@h:1");     /* decoded NUL */
    expect_reject("redis://u%g1:pw@h:1");     /* bad escape in user */
    expect_reject("redis://:@h:1");           /* empty password */
    expect_reject("redis://user:@h:1/0");
    expect_reject("redis://secret@h:1");      /* no ':' in credentials */
    expect_reject("redis://h:1/0@x");         /* '@' after '/' */
}
END_TEST

START_TEST(test_display_masks_password)
{
    rsp_store_url_t *u = parse_ok("redis://:secret@h:1/0");

    ck_assert_ptr_nonnull(strstr(u->display, "***"));
    ck_assert_ptr_null(strstr(u->display, "secret"));
    ck_assert_str_eq(u->display, "redis://:***@h:1/0");

    u = parse_ok("redis://admin:secret@[::1]:6379/1");
    ck_assert_ptr_nonnull(strstr(u->display, "***"));
    ck_assert_ptr_null(strstr(u->display, "secret"));
    ck_assert_str_eq(u->display, "redis://admin:***@[::1]:6379/1");

    u = parse_ok("redis://:s%65cret@h:1");   /* "secret" escaped */
    ck_assert_str_eq(u->password, "secret");
    ck_assert_ptr_null(strstr(u->display, "secret"));
    ck_assert_ptr_null(strstr(u->display, "s%65cret"));

    /* no password: nothing to mask */
    u = parse_ok("redis://h:1");
    ck_assert_ptr_null(strstr(u->display, "***"));
}
END_TEST

START_TEST(test_error_messages_specific)
{
    rsp_store_url_t *u = NULL;
    const char *err = NULL;

    ck_assert_int_eq(rsp_store_url_parse(&u, pool, "redis://h", &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "port"));
    err = NULL;
    ck_assert_int_eq(rsp_store_url_parse(&u, pool, "http://h:1", &err),
                     APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "scheme"));
    err = NULL;
    ck_assert_int_eq(rsp_store_url_parse(&u, pool, "redis://:@h:1", &err),
                     APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "password"));
    /* the error never echoes a password */
    err = NULL;
    ck_assert_int_eq(rsp_store_url_parse(&u, pool, "redis://:secret@h:0", &err),
                     APR_EINVAL);
    ck_assert_ptr_null(strstr(err, "secret"));
}
END_TEST

static Suite *url_suite(void)
{
    Suite *s = suite_create("rsp_url");
    TCase *tc;

    tc = tcase_create("accept");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_tcp_default_db);
    tcase_add_test(tc, test_tcp_db);
    tcase_add_test(tc, test_tcp_password_only);
    tcase_add_test(tc, test_tcp_user_encoded_password);
    tcase_add_test(tc, test_tcp_ipv6);
    tcase_add_test(tc, test_unix);
    tcase_add_test(tc, test_unix_db);
    tcase_add_test(tc, test_display_masks_password);
    suite_add_tcase(s, tc);

    tc = tcase_create("reject");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_reject_empty_and_scheme);
    tcase_add_test(tc, test_reject_port);
    tcase_add_test(tc, test_reject_db);
    tcase_add_test(tc, test_reject_trailing_junk_and_spaces);
    tcase_add_test(tc, test_reject_unix);
    tcase_add_test(tc, test_tls_forms);
    tcase_add_test(tc, test_sentinel_forms);
    tcase_add_test(tc, test_memcache_one_server);
    tcase_add_test(tc, test_memcache_servers_in_order);
    tcase_add_test(tc, test_memcache_rejects);
    tcase_add_test(tc, test_memcache_server_limit);
    tcase_add_test(tc, test_reject_credentials);
    tcase_add_test(tc, test_error_messages_specific);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(url_suite());
}
