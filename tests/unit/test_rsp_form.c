/* Unit tests for rsp_form.c: the urlencoded-field reader and the
 * ambiguity checks. */
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
}
END_TEST

START_TEST(test_ambiguity)
{
    /* bodies the guard passes */
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=PD94%2B&RelayState=%2Fa"));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=x"));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, ""));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=x&other=1&more"));
    ck_assert_ptr_null(rsp_form_ambiguity(pool, "SAMLResponse=x&RelayState=https%3A%2F%2Fa"
                                                "%2Fb%3Fc%3D1%26d%3D2"));
    /* bodies it refuses */
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLResponse=x&SAMLResponse=y"),
                     "parameter SAMLResponse given twice");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "RelayState=a&SAMLResponse=x&RelayState=b"),
                     "parameter RelayState given twice");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLRespons%65=x"),
                     "a percent-encoded parameter name");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAML+Response=x"),
                     "a percent-encoded parameter name");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "a%zz=1"), "a percent-encoded parameter name");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "samlresponse=x"),
                     "parameter samlresponse (read as SAMLResponse by some parsers; the "
                     "guard takes SAMLResponse and RelayState only)");
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse=x&RELAYSTATE=y"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "x=1&x=2"));
    /* other SAML names, prefixes, leading punctuation */
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse=x&SAMLart=y"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse=x&SigAlg=y&Signature=z"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLRequest=x"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse[]=x"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "_SAMLResponse=x&SAMLResponse=y"));
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponseX=x"));
    /* a ';', a byte that is not ASCII, a SAML name inside a value */
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLResponse=x;SAMLResponse=y"),
                     "a ';' in the form (some parsers split parameters at it)");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLRe\xc5\xbfponse=x"),
                     "a parameter name with a byte that is not printable ASCII");
    ck_assert_str_eq(rsp_form_ambiguity(pool, "SAMLResponse=x&RelayState=a%26SAMLResponse%3Dy"),
                     "SAMLResponse inside another parameter's value (read as a parameter "
                     "by a parser that decodes before it splits)");
    ck_assert_ptr_nonnull(rsp_form_ambiguity(pool, "SAMLResponse=x&z=a%253BRelayState%253Dy"));
}
END_TEST

/* A query string: every spelling a form parser may read as a SAML
 * parameter is refused; the queries SPs put on their own consumer URLs
 * pass. */
START_TEST(test_query_ambiguity)
{
    static const char *const refused[] = {
        "SAMLResponse=x", "x=1&relaystate=%2F", "SAML%52esponse=x",
        /* the name's '=' encoded: decoded whole, the pair is SAMLResponse=A */
        "SAMLResponse%3DPHNhbWw%2B", "SAMLRespons%65%3DPHNh",
        "samlresponse%3d1", "SAMLResponse%253DPHNh", "x=1%26SAMLResponse%3D2",
        "x=1;SAMLResponse=2", "x=1%3BRelayState=2", "+SAMLResponse=1",
        "%20SAMLResponse=1", "_SAMLResponse=1", "SAMLResponse[]=1", "SAMLResponse",
        "SAMLart=AAQ", "SAMLRequest=x", "SigAlg=x", "Signature=x", "signature",
        "x&SAMLRESPONSE", "SAMLResponseX=1", "RelayState.x=1",
        "SAMLRe%C5%BFponse=1", "SAMLRe\xc5\xbfponse=1", "a%zz=1", "a=%zz", "a=%00",
        "%0aSAMLResponse=1", "SAML%52esponse%3D1",
    };
    static const char *const passed[] = {
        "", "acs", "acs=1", "a=1&b=2&a=3", "target=%2Fapp%2Fpage",
        "return=https%3A%2F%2Fapp.example%2F%3Fx%3D1", "SAML=1", "Sig=1", "Relay=1",
        "x=SAMLResponse", "x=a+b", "entityID=https%3A%2F%2Fidp.example%2F",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        ck_assert_msg(rsp_form_query_ambiguity(pool, refused[i]) != NULL,
                      "query passed: %s", refused[i]);
    }
    for (i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
        const char *why = rsp_form_query_ambiguity(pool, passed[i]);
        ck_assert_msg(why == NULL, "query refused: %s: %s", passed[i], why);
    }
    ck_assert_str_eq(rsp_form_query_ambiguity(pool, "SAMLResponse%3DPHNh"),
                     "SAMLResponse in the query string (a parameter name that a form "
                     "parser may read as it)");
    ck_assert_str_eq(rsp_form_query_ambiguity(pool, "a=%zz"), "a badly escaped query string");
    ck_assert_str_eq(rsp_form_query_ambiguity(pool, "SAMLRe%C5%BFponse=1"),
                     "a parameter name with a byte that is not printable ASCII in the "
                     "query string");
}
END_TEST

static Suite *form_suite(void)
{
    Suite *s = suite_create("rsp_form");
    TCase *tc = tcase_create("form");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_ambiguity);
    tcase_add_test(tc, test_query_ambiguity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(form_suite());
}
