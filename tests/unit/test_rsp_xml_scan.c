/* Unit tests for rsp_xml_scan.c: the byte scan before libxml2 reads a
 * message (limits, DOCTYPEs, what is not well-formed, one element). */
#include <string.h>

#include <apr_strings.h>

#include "rsp_unit.h"
#include "rsp_xml_scan.h"

static const rsp_scan_limits_t msg = {
    100, 3, 0, 2, 0, "size", NULL, NULL
};
static const rsp_scan_limits_t one = {
    0, 10, 5, 10, 1, "plaintext-size", "Assertion", "plaintext"
};

static const char *scan(const rsp_scan_limits_t *lim, const char *s,
                        const char **check)
{
    return rsp_xml_scan(pool, s, strlen(s), lim, check);
}

static void refused(const rsp_scan_limits_t *lim, const char *s,
                    const char *check, const char *why)
{
    const char *c = NULL, *w = scan(lim, s, &c);

    ck_assert_msg(w != NULL, "%s: not refused", s);
    ck_assert_msg(c && !strcmp(c, check), "%s: check=%s, not %s", s,
                  c ? c : "(null)", check);
    ck_assert_msg(strstr(w, why) != NULL, "%s: \"%s\" does not say \"%s\"", s,
                  w, why);
}

START_TEST(test_passes)
{
    const char *c = "x";

    ck_assert_ptr_null(scan(&msg, "<a x='1>' y=\"=\"><b/><!-- <c> --></a>", &c));
    ck_assert_ptr_null(c);
    ck_assert_ptr_null(scan(&msg, "<?xml version='1.0'?><a><![CDATA[<<]]></a>", &c));
    ck_assert_ptr_null(scan(&one, " <a><b>t</b></a>\n", &c));
}
END_TEST

START_TEST(test_limits)
{
    refused(&msg, apr_psprintf(pool, "<a>%0200d</a>", 0), "size", "207 bytes");
    refused(&msg, "<a><b><c><d></d></c></b></a>", "xml-depth", "3 deep");
    refused(&msg, "<a x='1' y='2' z='3'/>", "size", "more than 2 attributes");
    refused(&one, "<a><b/><b/><b/><b/><b/></a>", "plaintext-size",
            "more than 5 elements");
}
END_TEST

START_TEST(test_not_well_formed)
{
    refused(&msg, "<!DOCTYPE a [<!ENTITY x 'y'>]><a/>", "xml", "DOCTYPE");
    refused(&msg, "<a><!-- open", "xml", "not well-formed");
    refused(&msg, "<a x='1", "xml", "not well-formed");
    refused(&msg, "</a>", "xml", "not well-formed");
    refused(&msg, "<a>", "xml", "not well-formed");
    refused(&msg, "<a <b/>", "xml", "not well-formed");
    refused(&msg, "<", "xml", "not well-formed");
}
END_TEST

START_TEST(test_one_element)
{
    refused(&one, "<a/><b/>", "plaintext", "more than one element");
    refused(&one, "t<a/>", "plaintext", "text beside");
    refused(&one, "<a/><!-- c -->", "plaintext", "a comment beside");
    refused(&one, "<?pi x?><a/>", "plaintext", "processing instruction");
    refused(&one, "<![CDATA[x]]><a/>", "plaintext", "text beside");
    refused(&one, "  ", "plaintext", "no element");
}
END_TEST

static Suite *scan_suite(void)
{
    Suite *s = suite_create("rsp_xml_scan");
    TCase *tc = tcase_create("scan");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_passes);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_not_well_formed);
    tcase_add_test(tc, test_one_element);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(scan_suite());
}
