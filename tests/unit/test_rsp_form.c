/* Unit tests for rsp_form.c: the urlencoded-field reader and escaper. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_form.h"

static const char *value(const char *s, const char *name, const char **why)
{
    *why = NULL;
    return rsp_form_value(pool, s, name, why);
}

START_TEST(test_values)
{
    const char *why;

    ck_assert_str_eq(value("a=1&b=2", "b", &why), "2");
    ck_assert_str_eq(value("a=1&b=2", "a", &why), "1");
    ck_assert_str_eq(value("SAMLResponse=PD94%2Bbw%3D%3D&RelayState=%2Fapp",
                           "SAMLResponse", &why), "PD94+bw==");
    ck_assert_str_eq(value("x=a+b%20c", "x", &why), "a b c");
    ck_assert_str_eq(value("flag&x=1", "flag", &why), "");
    ck_assert_str_eq(value("x=", "x", &why), "");
    ck_assert_ptr_null(value("a=1", "b", &why));
    ck_assert_ptr_null(why);
    /* a name is matched whole, not as a prefix */
    ck_assert_ptr_null(value("ab=1", "a", &why));
    ck_assert_ptr_null(value("", "a", &why));
    /* escapes at the start, the end, next to each other, runs between */
    ck_assert_str_eq(value("v=%2Babc%2F%2F+d+%3D", "v", &why), "+abc// d =");
    ck_assert_str_eq(value("v=+", "v", &why), " ");
    ck_assert_str_eq(value("v=%41%42%43&w=1", "v", &why), "ABC");
    ck_assert_str_eq(value("v=abcdefgh", "v", &why), "abcdefgh");
}
END_TEST

START_TEST(test_refusals)
{
    const char *why;

    ck_assert_ptr_null(value("a=1&a=2", "a", &why));
    ck_assert_str_eq(why, "a given twice");
    ck_assert_ptr_null(value("a=%zz", "a", &why));
    ck_assert_str_eq(why, "bad escape in a");
    ck_assert_ptr_null(value("a=%4", "a", &why));
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_null(value("a=x%00y", "a", &why));
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_null(value("a=abc%", "a", &why));
    ck_assert_str_eq(why, "bad escape in a");
    ck_assert_ptr_null(value("a=abc%2", "a", &why));
    ck_assert_str_eq(why, "bad escape in a");
    ck_assert_ptr_null(value("a=+%g0", "a", &why));
    ck_assert_str_eq(why, "bad escape in a");
    ck_assert_ptr_null(rsp_record_field(pool, "v=1&r=a&r=b", "r"));
}
END_TEST

START_TEST(test_escape_round_trip)
{
    static const char *const in[] = {"plain", "a b&c=d%e", "host:8443",
                                     "https://app.example/x?y=1&z=2",
                                     "caf\xc3\xa9 +", "~-._"};
    apr_size_t i;

    ck_assert_str_eq(rsp_form_escape(pool, "a b&c"), "a%20b%26c");
    ck_assert_str_eq(rsp_form_escape(pool, "~-._"), "~-._");
    for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        const char *rec = apr_pstrcat(pool, "v=1&x=", rsp_form_escape(pool, in[i]),
                                      "&y=2", NULL);
        ck_assert_str_eq(rsp_record_field(pool, rec, "x"), in[i]);
        ck_assert_str_eq(rsp_record_field(pool, rec, "y"), "2");
    }
}
END_TEST

START_TEST(test_ambiguity)
{
    /* bodies the guard passes */
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=PD94%2B&RelayState=%2Fa", 0));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=x", 0));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "", 0));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=x&other=1&more", 0));
    /* bodies it refuses */
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLResponse=x&SAMLResponse=y", 0),
                     "parameter SAMLResponse given twice");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "RelayState=a&SAMLResponse=x&RelayState=b", 0),
                     "parameter RelayState given twice");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLRespons%65=x", 0),
                     "a percent-encoded parameter name");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAML+Response=x", 0),
                     "a percent-encoded parameter name");
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "samlresponse=x", 0));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse=x&RELAYSTATE=y", 0));
    ck_assert_str_eq(rsp_form_ambiguity(pool, "a%zz=1", 0),
                     "a badly escaped parameter name");
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "x=1&x=2", 0));
    /* queries */
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "a=1&b=2&a=3", 1));
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLResponse=x", 1),
                     "SAMLResponse in the query string");
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "x=1&relaystate=%2F", 1));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAML%52esponse=x", 1));
}
END_TEST

static Suite *form_suite(void)
{
    Suite *s = suite_create("rsp_form");
    TCase *tc = tcase_create("form");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_escape_round_trip);
    tcase_add_test(tc, test_ambiguity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(form_suite());
}
