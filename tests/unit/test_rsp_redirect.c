/* Unit tests for rsp_redirect.c: what a redirect may point at. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_tables.h>

#include "rsp_redirect.h"

#define SELF "sp.example.org"

static apr_array_header_t *domains(const char *a, const char *b)
{
    apr_array_header_t *d = apr_array_make(pool, 2, sizeof(const char *));

    if (a) {
        APR_ARRAY_PUSH(d, const char *) = a;
    }
    if (b) {
        APR_ARRAY_PUSH(d, const char *) = b;
    }
    return d;
}

static void expect(const char *t, const apr_array_header_t *d, int ok)
{
    const char *why = rsp_redirect_check(t, SELF, d);

    ck_assert_msg((why == NULL) == ok, "%s: %s", t ? t : "(null)",
                  why ? why : "accepted");
}

#define OK(t, d) expect((t), (d), 1)
#define NO(t, d) expect((t), (d), 0)

START_TEST(test_local_paths)
{
    OK("/", NULL);
    OK("/app/page?x=1&y=%2F#frag", NULL);
    OK("/%2F%2Fevil.example", NULL);      /* a path, not a host */
    NO("//evil.example/", NULL);
    NO("/\\evil.example/", NULL);
    NO("", NULL);
    NO(NULL, NULL);
    NO("app", NULL);
    NO("?x=1", NULL);
    NO("#f", NULL);
    NO("../x", NULL);
}
END_TEST

START_TEST(test_control_and_odd_bytes)
{
    NO("/a\tb", NULL);
    NO("/a\nLocation: x", NULL);
    NO("/a\rb", NULL);
    NO("/a b", NULL);
    NO("/a\x7f", NULL);
    NO("/caf\xc3\xa9", NULL);
    NO("/a\\b", NULL);
    NO("\t//evil.example", NULL);
    NO(" /x", NULL);
}
END_TEST

START_TEST(test_schemes)
{
    OK("http://sp.example.org/x", NULL);
    OK("https://sp.example.org", NULL);
    OK("HTTPS://SP.Example.ORG:8443/x?q", NULL);
    NO("javascript:alert(1)", NULL);
    NO("data:text/html,x", NULL);
    NO("ftp://sp.example.org/", NULL);
    NO("http:/sp.example.org/", NULL);
    NO("http:sp.example.org", NULL);
    NO("https:///x", NULL);
    NO("http://", NULL);
}
END_TEST

START_TEST(test_hosts)
{
    NO("https://evil.example/", NULL);
    NO("https://sp.example.org.evil.example/", NULL);
    NO("https://evilsp.example.org/", NULL);
    NO("https://sp.example.org@evil.example/", NULL);
    NO("https://user:pw@sp.example.org/", NULL);
    NO("https://sp.example.org:x/", NULL);
    NO("https://sp.example.org:/", NULL);
    NO("https://sp.example.org:1234567/", NULL);
    NO("https://sp..example.org/", NULL);
    NO("https://.sp.example.org/", NULL);
    NO("https://sp_example.org/", NULL);
    NO("https://[::1/", NULL);
    ck_assert_ptr_nonnull(strstr(rsp_redirect_check("https://evil.example/",
                                                    SELF, NULL),
                                 "ReplaySPRedirectDomains"));
}
END_TEST

START_TEST(test_domains)
{
    apr_array_header_t *d = domains("app.example.com", "*.example.net");

    OK("https://app.example.com/x", d);
    OK("https://APP.example.com:444/x", d);
    NO("https://example.com/x", d);
    NO("https://x.app.example.com/x", d);
    OK("https://a.example.net/", d);
    OK("https://a.b.example.net/", d);
    NO("https://example.net/", d);            /* "*." is below, not at */
    NO("https://aexample.net/", d);
    NO("https://a.example.net.evil.example/", d);
    OK("https://sp.example.org/", d);          /* this host always */
    ck_assert_ptr_null(rsp_redirect_check("https://[::1]:8443/x", "[::1]", NULL));
}
END_TEST

START_TEST(test_length)
{
    char *big = apr_palloc(pool, RSP_REDIRECT_MAX + 2);

    big[0] = '/';
    memset(big + 1, 'a', RSP_REDIRECT_MAX - 1);
    big[RSP_REDIRECT_MAX] = '\0';
    OK(big, NULL);
    big[RSP_REDIRECT_MAX] = 'a';
    big[RSP_REDIRECT_MAX + 1] = '\0';
    NO(big, NULL);
}
END_TEST

START_TEST(test_domain_patterns)
{
    ck_assert_ptr_null(rsp_redirect_domain_check("app.example.com"));
    ck_assert_ptr_null(rsp_redirect_domain_check("*.example.com"));
    ck_assert_ptr_null(rsp_redirect_domain_check("localhost"));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check(""));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("*"));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("*."));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("a.*.com"));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("https://a.com"));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("a.com/"));
    ck_assert_ptr_nonnull(rsp_redirect_domain_check("a..com"));
}
END_TEST

static Suite *redirect_suite(void)
{
    Suite *s = suite_create("rsp_redirect");
    TCase *tc = tcase_create("rules");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_local_paths);
    tcase_add_test(tc, test_control_and_odd_bytes);
    tcase_add_test(tc, test_schemes);
    tcase_add_test(tc, test_hosts);
    tcase_add_test(tc, test_domains);
    tcase_add_test(tc, test_length);
    tcase_add_test(tc, test_domain_patterns);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(redirect_suite());
}
