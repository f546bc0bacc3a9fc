/* Unit tests for rsp_idp_ui.c: how an IdP's metadata says it is shown to
 * a user choosing an IdP, and the discovery feed made of it; and
 * rsp_json_string (rsp_util.c), which the feed is written with. */
#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_idp_ui.h"
#include "rsp_util.h"

#define MD_HEAD "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" " \
    "xmlns:mdui=\"urn:oasis:names:tc:SAML:metadata:ui\" " \
    "xmlns:mdattr=\"urn:oasis:names:tc:SAML:metadata:attribute\" " \
    "xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" entityID=\"https://idp.example.org\">"
#define IDP(ui) "<md:IDPSSODescriptor protocolSupportEnumeration=" \
    "\"urn:oasis:names:tc:SAML:2.0:protocol\"><md:Extensions><mdui:UIInfo>" ui \
    "</mdui:UIInfo></md:Extensions></md:IDPSSODescriptor>"
#define HIDE "<md:Extensions><mdattr:EntityAttributes><saml:Attribute " \
    "Name=\"http://macedir.org/entity-category\"><saml:AttributeValue>" \
    " http://refeds.org/category/hide-from-discovery </saml:AttributeValue>" \
    "</saml:Attribute></mdattr:EntityAttributes></md:Extensions>"
#define ORG "<md:Organization><md:OrganizationName xml:lang=\"en\">ex</md:OrganizationName>" \
    "<md:OrganizationDisplayName xml:lang=\"en\">Example Org</md:OrganizationDisplayName>" \
    "<md:OrganizationURL xml:lang=\"en\">https://example.org/</md:OrganizationURL></md:Organization>"

START_TEST(test_ui_read)
{
    rsp_idp_ui_t *ui = rsp_idp_ui_of_metadata(pool, "https://idp.example.org", MD_HEAD
        IDP("<mdui:DisplayName xml:lang=\"en\"> Example University </mdui:DisplayName>"
            "<mdui:DisplayName xml:lang=\"de\">Beispiel-Universit\xc3\xa4t</mdui:DisplayName>"
            "<mdui:DisplayName xml:lang=\"fr\">  </mdui:DisplayName>"
            "<mdui:Description xml:lang=\"en\">Staff &amp; students</mdui:Description>"
            "<mdui:Logo height=\"16\" width=\"16\">https://example.org/16.png</mdui:Logo>"
            "<mdui:Logo height=\"x\" width=\"80\" xml:lang=\"en\">https://example.org/80.png</mdui:Logo>"
            "<mdui:Logo height=\"16\" width=\"16\">http://example.org/plain.png</mdui:Logo>"
            "<mdui:Logo height=\"16\" width=\"16\">javascript:alert(1)</mdui:Logo>"
            "<mdui:InformationURL xml:lang=\"en\">https://example.org/about</mdui:InformationURL>"
            "<mdui:PrivacyStatementURL xml:lang=\"en\">javascript:x</mdui:PrivacyStatementURL>")
        ORG "</md:EntityDescriptor>");
    const rsp_ui_text_t *n;
    const rsp_ui_logo_t *l;

    ck_assert_ptr_nonnull(ui);
    ck_assert_str_eq(ui->entity_id, "https://idp.example.org");
    ck_assert_int_eq(ui->names->nelts, 2);       /* the empty one left out */
    n = (const rsp_ui_text_t *)ui->names->elts;
    ck_assert_str_eq(n[0].value, "Example University");
    ck_assert_str_eq(n[0].lang, "en");
    ck_assert_str_eq(n[1].lang, "de");
    ck_assert_int_eq(ui->descriptions->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(ui->descriptions, 0, rsp_ui_text_t).value,
                     "Staff & students");
    /* logos: https only; a height that is not digits dropped */
    ck_assert_int_eq(ui->logos->nelts, 2);
    l = (const rsp_ui_logo_t *)ui->logos->elts;
    ck_assert_str_eq(l[0].url, "https://example.org/16.png");
    ck_assert_str_eq(l[0].height, "16");
    ck_assert_ptr_null(l[0].lang);
    ck_assert_ptr_null(l[1].height);
    ck_assert_str_eq(l[1].width, "80");
    ck_assert_int_eq(ui->info_urls->nelts, 1);
    ck_assert_int_eq(ui->privacy_urls->nelts, 0); /* not an http(s) URL */
    ck_assert(!ui->hidden);
}
END_TEST

START_TEST(test_ui_fallbacks_and_hidden)
{
    rsp_idp_ui_t *ui = rsp_idp_ui_of_metadata(pool, "https://idp.example.org",
        MD_HEAD HIDE IDP("") ORG "</md:EntityDescriptor>");

    ck_assert_int_eq(ui->names->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(ui->names, 0, rsp_ui_text_t).value, "Example Org");
    ck_assert(ui->hidden);
    ui = rsp_idp_ui_of_metadata(pool, "e", MD_HEAD IDP("") "</md:EntityDescriptor>");
    ck_assert_int_eq(ui->names->nelts, 0);
    ck_assert(!ui->hidden);
    ck_assert_ptr_null(rsp_idp_ui_of_metadata(pool, "e", "<not xml"));
}
END_TEST

START_TEST(test_feed)
{
    apr_array_header_t *uis = apr_array_make(pool, 3, sizeof(rsp_idp_ui_t *));
    const char *feed;

    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = rsp_idp_ui_of_metadata(pool, "https://a.example/idp",
        MD_HEAD IDP("<mdui:DisplayName xml:lang=\"en\">A &lt;/script&gt; \"U\"</mdui:DisplayName>"
                    "<mdui:Logo height=\"16\" width=\"16\">https://a.example/l.png</mdui:Logo>")
        "</md:EntityDescriptor>");
    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = rsp_idp_ui_of_metadata(pool, "https://hidden.example/idp",
        MD_HEAD HIDE IDP("") "</md:EntityDescriptor>");
    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = rsp_idp_ui_of_metadata(pool, "https://b.example/idp",
        MD_HEAD IDP("") "</md:EntityDescriptor>");
    feed = rsp_idp_ui_feed(pool, uis);
    ck_assert_str_eq(feed,
        "[\n{\"entityID\":\"https://a.example/idp\","
        "\"DisplayNames\":[{\"value\":\"A \\u003c/script\\u003e \\\"U\\\"\",\"lang\":\"en\"}],"
        "\"Logos\":[{\"value\":\"https://a.example/l.png\",\"height\":\"16\",\"width\":\"16\"}]},"
        "\n{\"entityID\":\"https://b.example/idp\"}\n]\n");
    ck_assert_str_eq(rsp_idp_ui_feed(pool, NULL), "[\n]\n");
}
END_TEST

START_TEST(test_json_string)
{
    ck_assert_str_eq(rsp_json_string(pool, NULL), "null");
    ck_assert_str_eq(rsp_json_string(pool, ""), "\"\"");
    ck_assert_str_eq(rsp_json_string(pool, "a\"b\\c\n\x01"),
                     "\"a\\\"b\\\\c\\u000a\\u0001\"");
    ck_assert_str_eq(rsp_json_string(pool, "<&>"), "\"\\u003c\\u0026\\u003e\"");
    ck_assert_str_eq(rsp_json_string(pool, "x\xe2\x80\xa8y\xe2\x80\xa9z\xc3\xa4"),
                     "\"x\\u2028y\\u2029z\xc3\xa4\"");
}
END_TEST

static Suite *ui_suite(void)
{
    Suite *s = suite_create("rsp_idp_ui");
    TCase *tc = tcase_create("ui");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_ui_read);
    tcase_add_test(tc, test_ui_fallbacks_and_hidden);
    tcase_add_test(tc, test_feed);
    tcase_add_test(tc, test_json_string);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(ui_suite());
}
