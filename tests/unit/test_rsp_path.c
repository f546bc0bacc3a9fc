/* Unit tests for rsp_path.c: which request paths reach a guarded
 * assertion consumer, and which spellings of one are canonical. */
#include <string.h>

#include "rsp_unit.h"

#include "rsp_path.h"

#define ACS "/Shibboleth.sso/SAML2/POST"

START_TEST(test_target_path)
{
    ck_assert_str_eq(rsp_path_of_target(pool, "/a/b?c=1"), "/a/b");
    ck_assert_str_eq(rsp_path_of_target(pool, "/a/b#x?y"), "/a/b");
    ck_assert_str_eq(rsp_path_of_target(pool, "//a//b"), "//a//b");
    ck_assert_str_eq(rsp_path_of_target(pool, "http://h:1/a;x?q"), "/a;x");
    ck_assert_str_eq(rsp_path_of_target(pool, "/"), "/");
    ck_assert_ptr_null(rsp_path_of_target(pool, "*"));
    ck_assert_ptr_null(rsp_path_of_target(pool, "http://h"));
    ck_assert_ptr_null(rsp_path_of_target(pool, "http://h?x"));
    ck_assert_ptr_null(rsp_path_of_target(pool, "h:443"));
    ck_assert_ptr_null(rsp_path_of_target(pool, ""));
}
END_TEST

/* What an SP may dispatch to its consumer: every reading. */
START_TEST(test_reaches)
{
    static const char *const reach[] = {
        ACS, ACS "/", ACS "/x", ACS ";x", ACS ";jsessionid=1", ACS "%3Bx", ACS "%3bx",
        ACS ";/../../x", ACS "%253Bx", ACS "%3Fx", ACS "%23x", "//Shibboleth.sso/SAML2/POST",
        "/Shibboleth.sso//SAML2/POST", "/./Shibboleth.sso/SAML2/POST",
        "/x/../Shibboleth.sso/SAML2/POST", "/Shibboleth.sso/SAML2/POS%54",
        "/Shibboleth.sso/SAML2/%50OST", "/shibboleth.sso/saml2/post",
        "/Shibboleth.sso\\SAML2\\POST", "/Shibboleth.sso/SAML2;x/POST",
        "/Shibboleth.sso;x/SAML2/POST", "/Shibboleth.sso/SAML2/POST/..",
        "/Shibboleth.sso/SAML2/POST/.", "/../Shibboleth.sso/SAML2/POST",
        "/Shibboleth.sso%2FSAML2%2FPOST", "/Shibboleth.sso/SAML2/x/../POST",
        "/Shibboleth.sso/SAML2/./POST", "/Shibboleth.sso/SAML2/POST%00",
        /* kept under it by an SP that leaves dot segments alone */
        "/Shibboleth.sso/SAML2/POST/../../x",
    };
    static const char *const elsewhere[] = {
        "/", "/Shibboleth.sso", "/Shibboleth.sso/SAML2", "/Shibboleth.sso/SAML2/POST-SimpleSign",
        "/Shibboleth.sso/SAML2/POSTx", "/Shibboleth.sso/SAML2/Redirect",
        "/Shibboleth.sso/Login", "/app" ACS,
        "/Shibboleth.sso/SAML2/POS", "/Shibboleth.sso/SAML2/POST%zz",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(reach) / sizeof(reach[0]); i++) {
        ck_assert_msg(rsp_path_reaches(pool, reach[i], ACS), "does not reach: %s", reach[i]);
    }
    for (i = 0; i < sizeof(elsewhere) / sizeof(elsewhere[0]); i++) {
        ck_assert_msg(!rsp_path_reaches(pool, elsewhere[i], ACS), "reaches: %s",
                      elsewhere[i]);
    }
    /* a base with a trailing '/', the root */
    ck_assert(rsp_path_reaches(pool, "/mellon/postResponse", "/mellon/postResponse/"));
    ck_assert(rsp_path_reaches(pool, "/x;y", "/"));
}
END_TEST

START_TEST(test_canonical)
{
    static const struct { const char *path, *why; } cases[] = {
        {ACS, NULL},
        {"/mellon/postResponse", NULL},
        {"/a-b_c.d~e/f!$&'()*+,=:@", NULL},
        {"/", NULL},
        {"/a/", NULL},
        {"/a/.b/..c", NULL},
        {ACS ";x", "a path parameter (';')"},
        {ACS "%3Bx", "a percent-encoded byte"},
        {"/Shibboleth.sso/SAML2/POS%54", "a percent-encoded byte"},
        {"//Shibboleth.sso/SAML2/POST", "an empty segment ('//')"},
        {"/a//b", "an empty segment ('//')"},
        {"/./a", "a dot segment ('.' or '..')"},
        {"/x/../a", "a dot segment ('.' or '..')"},
        {"/a/.", "a dot segment ('.' or '..')"},
        {"/a/..", "a dot segment ('.' or '..')"},
        {"/a\\b", "a backslash"},
        {"/a b", "a character that must be escaped"},
        {"/a\"b", "a character that must be escaped"},
        {"/caf\xc3\xa9", "a byte that is not printable ASCII"},
        {"/a\tb", "a byte that is not printable ASCII"},
        {"a/b", "a path that does not start with '/'"},
    };
    apr_size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = rsp_path_noncanonical(cases[i].path);
        if (!cases[i].why) {
            ck_assert_msg(why == NULL, "%s: %s", cases[i].path, why);
        }
        else {
            ck_assert_msg(why && !strcmp(why, cases[i].why), "%s: %s", cases[i].path,
                          why ? why : "(canonical)");
        }
    }
}
END_TEST

START_TEST(test_under)
{
    ck_assert(rsp_path_under(ACS, ACS));
    ck_assert(rsp_path_under(ACS "/x", ACS));
    ck_assert(!rsp_path_under(ACS "x", ACS));
    ck_assert(!rsp_path_under("/shibboleth.sso/saml2/post", ACS));
    ck_assert(!rsp_path_under("/mellon/postResponse", "/mellon/postResponse/"));
    ck_assert(rsp_path_under("/mellon/postResponse/", "/mellon/postResponse/"));
    ck_assert(rsp_path_under("/anything", "/"));
}
END_TEST

static Suite *path_suite(void)
{
    Suite *s = suite_create("rsp_path");
    TCase *tc = tcase_create("path");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_target_path);
    tcase_add_test(tc, test_reaches);
    tcase_add_test(tc, test_canonical);
    tcase_add_test(tc, test_under);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(path_suite());
}
