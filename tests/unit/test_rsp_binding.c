/* Unit tests for rsp_binding.c: the cookie that binds a pending sign-in
 * to the browser that started it (its name, its Set-Cookie values, and
 * the check of a request's Cookie header against the hash kept with the
 * request). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_binding.h"
#include "rsp_util.h"

#define VALUE "B-value"

static const char *hash_of(const char *v)
{
    return rsp_sha256_b64url(pool, v, strlen(v));
}

START_TEST(test_cookie_name)
{
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");

    /* the session cookie's name, _req_, 16 characters of the token's
     * hash (another token, another cookie: sign-ins in two tabs) */
    ck_assert_int_eq(strlen(name), strlen("rsp_session_req_") + 16);
    ck_assert(!strncmp(name, "rsp_session_req_", 16));
    ck_assert(!strncmp(name + 16, hash_of("tok"), 16));
    ck_assert_str_eq(name, rsp_binding_cookie_name(pool, "rsp_session", "tok"));
    ck_assert_str_ne(name, rsp_binding_cookie_name(pool, "rsp_session", "tok2"));
    ck_assert_str_ne(name, rsp_binding_cookie_name(pool, "other", "tok"));
    /* the token itself is not in the name */
    ck_assert_ptr_null(strstr(rsp_binding_cookie_name(pool, "c", "the-token"),
                              "the-token"));
}
END_TEST

START_TEST(test_matches)
{
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");
    const char *h = hash_of(VALUE), *why = NULL;

    /* the browser that started it, under the name or its twin, among
     * other cookies, with spaces or tabs before a pair */
    ck_assert(rsp_binding_matches(pool, apr_psprintf(pool, "%s=" VALUE, name),
                                  name, h, &why));
    ck_assert(rsp_binding_matches(pool, apr_psprintf(
        pool, "a=b; rsp_session=xyz;  %s_l=" VALUE, name), name, h, &why));
    ck_assert(rsp_binding_matches(pool, apr_psprintf(
        pool, "a=b;\t%s=" VALUE "; c=d", name), name, h, &why));
    /* a stale cookie of the same name before the right one */
    ck_assert(rsp_binding_matches(pool, apr_psprintf(
        pool, "%s=other; %s=" VALUE, name, name), name, h, &why));
    /* none, or another one's */
    why = NULL;
    ck_assert(!rsp_binding_matches(pool, NULL, name, h, &why));
    ck_assert_str_eq(why, "no binding cookie");
    ck_assert(!rsp_binding_matches(pool, "", name, h, &why));
    ck_assert_str_eq(why, "no binding cookie");
    ck_assert(!rsp_binding_matches(pool, "rsp_session=" VALUE "; x=" VALUE,
                                   name, h, &why));
    ck_assert_str_eq(why, "no binding cookie");
    /* a name that only starts or ends like it, a name without '=' */
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "x%s=" VALUE, name),
                                   name, h, &why));
    ck_assert_str_eq(why, "no binding cookie");
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%sx=" VALUE, name),
                                   name, h, &why));
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s", name), name,
                                   h, &why));
    ck_assert_str_eq(why, "no binding cookie");
    /* the cookie with another value, or empty */
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=B-valuf", name),
                                   name, h, &why));
    ck_assert_str_eq(why, "a binding cookie of another browser");
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=", name), name,
                                   h, &why));
    ck_assert_str_eq(why, "a binding cookie of another browser");
    /* the value is compared whole: no trailing space trimmed */
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=" VALUE " ",
                                                      name), name, h, &why));
    /* the hash, posted as a value, is not the value */
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=%s", name, h),
                                   name, h, &why));
    ck_assert_str_eq(why, "a binding cookie of another browser");
}
END_TEST

START_TEST(test_set_cookies)
{
    apr_array_header_t *set = apr_array_make(pool, 2, sizeof(const char *));

    /* http: one, without SameSite (browsers refuse None without Secure) */
    rsp_binding_set_cookies(pool, "n", "v", "/saml", 300, 0, set);
    ck_assert_int_eq(set->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=v; Path=/saml; Max-Age=300; HttpOnly");
    /* https: SameSite=None; Secure, and a twin without SameSite */
    apr_array_clear(set);
    rsp_binding_set_cookies(pool, "n", "v", "/saml", 300, 1, set);
    ck_assert_int_eq(set->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=v; Path=/saml; Max-Age=300; HttpOnly; SameSite=None; Secure");
    ck_assert_str_eq(APR_ARRAY_IDX(set, 1, const char *),
                     "n_l=v; Path=/saml; Max-Age=300; HttpOnly; Secure");
    /* expired: Max-Age=0 */
    apr_array_clear(set);
    rsp_binding_set_cookies(pool, "n", "", "/saml", 0, 0, set);
    ck_assert_int_eq(set->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=; Path=/saml; Max-Age=0; HttpOnly");
    /* pushed after what out already holds */
    rsp_binding_set_cookies(pool, "m", "w", "/", 1, 1, set);
    ck_assert_int_eq(set->nelts, 3);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=; Path=/saml; Max-Age=0; HttpOnly");
    ck_assert_str_eq(APR_ARRAY_IDX(set, 2, const char *),
                     "m_l=w; Path=/; Max-Age=1; HttpOnly; Secure");
}
END_TEST

/* What the login step sets, the ACS finds: the value of each Set-Cookie,
 * sent back as a Cookie header, matches its hash. */
START_TEST(test_set_then_matches)
{
    apr_array_header_t *set = apr_array_make(pool, 2, sizeof(const char *));
    const char *name = rsp_binding_cookie_name(pool, "c", "tok"), *why = NULL;
    int i;

    rsp_binding_set_cookies(pool, name, VALUE, "/", 300, 1, set);
    for (i = 0; i < set->nelts; i++) {
        const char *sc = APR_ARRAY_IDX(set, i, const char *);
        const char *pair = apr_pstrmemdup(pool, sc, strcspn(sc, ";"));
        ck_assert(rsp_binding_matches(pool, pair, name, hash_of(VALUE), &why));
        ck_assert(!rsp_binding_matches(pool, pair, name, hash_of("x"), &why));
    }
}
END_TEST

static Suite *binding_suite(void)
{
    Suite *s = suite_create("rsp_binding");
    TCase *tc = tcase_create("binding");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_cookie_name);
    tcase_add_test(tc, test_matches);
    tcase_add_test(tc, test_set_cookies);
    tcase_add_test(tc, test_set_then_matches);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(binding_suite());
}
