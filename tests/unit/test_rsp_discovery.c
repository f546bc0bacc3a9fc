/* Unit tests for rsp_discovery.c: the built-in page where a browser
 * chooses an IdP (escaping, names by language, the filter, the last
 * choice), its Content-Security-Policy and Accept-Language. */
#include "rsp_unit.h"
#include <stdarg.h>

#include <apr_strings.h>

#include "rsp_discovery.h"

static rsp_idp_ui_t *ui(const char *entity, int hidden, ...)
{
    rsp_idp_ui_t *u = apr_pcalloc(pool, sizeof(*u));
    const char *lang, *value;
    va_list ap;

    u->entity_id = entity;
    u->hidden = hidden;
    u->names = apr_array_make(pool, 2, sizeof(rsp_ui_text_t));
    u->descriptions = apr_array_make(pool, 1, sizeof(rsp_ui_text_t));
    u->info_urls = apr_array_make(pool, 1, sizeof(rsp_ui_text_t));
    u->privacy_urls = apr_array_make(pool, 1, sizeof(rsp_ui_text_t));
    u->logos = apr_array_make(pool, 1, sizeof(rsp_ui_logo_t));
    va_start(ap, hidden);
    while ((lang = va_arg(ap, const char *)) != NULL) {
        rsp_ui_text_t *t = apr_array_push(u->names);
        value = va_arg(ap, const char *);
        t->lang = *lang ? lang : NULL;
        t->value = value;
    }
    va_end(ap);
    return u;
}

static apr_array_header_t *langs(const char *header)
{
    return rsp_accept_languages(pool, header);
}

START_TEST(test_accept_language)
{
    apr_array_header_t *l = langs("fr;q=0.4, de-CH ,en;q=0.8,*;q=0.1, it;q=0, x y");

    ck_assert_int_eq(l->nelts, 3);
    ck_assert_str_eq(APR_ARRAY_IDX(l, 0, const char *), "de-CH");
    ck_assert_str_eq(APR_ARRAY_IDX(l, 1, const char *), "en");
    ck_assert_str_eq(APR_ARRAY_IDX(l, 2, const char *), "fr");
    ck_assert_int_eq(langs(NULL)->nelts, 0);
    ck_assert_int_eq(langs("q=1;de")->nelts, 0);
}
END_TEST

START_TEST(test_name_by_language)
{
    rsp_idp_ui_t *u = ui("https://idp", 0, "de", "Eins", "en-GB", "One", "fr", "Un", NULL);

    ck_assert_str_eq(rsp_discovery_name(u, langs("fr")), "Un");
    ck_assert_str_eq(rsp_discovery_name(u, langs("de-AT")), "Eins");   /* primary */
    ck_assert_str_eq(rsp_discovery_name(u, langs("it")), "One");       /* English */
    ck_assert_str_eq(rsp_discovery_name(u, NULL), "One");
    u = ui("https://idp", 0, "de", "Eins", NULL);
    ck_assert_str_eq(rsp_discovery_name(u, langs("it")), "Eins");      /* the first */
    u = ui("https://idp", 0, NULL);
    ck_assert_str_eq(rsp_discovery_name(u, langs("it")), "https://idp");
}
END_TEST

static rsp_discovery_in_t input(void)
{
    rsp_discovery_in_t in;
    apr_array_header_t *uis = apr_array_make(pool, 3, sizeof(rsp_idp_ui_t *));

    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = ui("https://a.example/idp", 0,
                                             "en", "Alpha <b>\"U\"</b>", NULL);
    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = ui("https://hidden.example/idp", 1,
                                             "en", "Hidden", NULL);
    APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = ui("https://b.example/idp?x=1&y=2", 0,
                                             "en", "Beta", NULL);
    memset(&in, 0, sizeof(in));
    in.uis = uis;
    in.page_path = "/saml/discovery";
    in.login_path = "/saml/login";
    in.return_to = "/app/?a=1&b=\"<x>";
    return in;
}

START_TEST(test_page_lists_and_escapes)
{
    rsp_discovery_in_t in = input();
    const char *page = rsp_discovery_page(pool, &in);

    ck_assert_ptr_nonnull(strstr(page, "<li><a href=\"/saml/login?ReturnTo="
                                 "%2Fapp%2F%3Fa%3D1%26b%3D%22%3Cx%3E&amp;IdP="
                                 "https%3A%2F%2Fa.example%2Fidp\"><span>"
                                 "Alpha &lt;b&gt;&quot;U&quot;&lt;/b&gt;</span></a></li>"));
    ck_assert_ptr_nonnull(strstr(page, "IdP=https%3A%2F%2Fb.example%2Fidp%3Fx%3D1%26y%3D2"));
    ck_assert_ptr_null(strstr(page, "Hidden"));
    ck_assert_ptr_null(strstr(page, "<b>"));
    ck_assert_ptr_null(strstr(page, "<script"));
    /* the return in the search form, escaped */
    ck_assert_ptr_nonnull(strstr(page, "name=\"ReturnTo\" value=\"/app/?a=1&amp;b=&quot;&lt;x&gt;\""));
    ck_assert_ptr_nonnull(strstr(page, "2 of 2 organisations</p>"));
    ck_assert_ptr_null(strstr(page, "Last time"));
    ck_assert_ptr_nonnull(strstr(page, "<html lang=\"en\">"));
}
END_TEST

START_TEST(test_page_filter_and_last_choice)
{
    rsp_discovery_in_t in = input();
    const char *page;

    in.query = "ALPHA";
    in.remembered = "https://b.example/idp?x=1&y=2";
    in.langs = langs("de");
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_nonnull(strstr(page, "Alpha"));
    ck_assert_ptr_nonnull(strstr(page, "1 of 2 organisations matching"));
    ck_assert_ptr_nonnull(strstr(page, "Last time you signed in with</h2>\n"
                                 "<ul class=\"last\">\n<li>"));
    ck_assert_ptr_nonnull(strstr(page, "<span>Beta</span>"));  /* offered first */
    ck_assert_ptr_nonnull(strstr(page, "<html lang=\"de\">"));
    /* a query is shown escaped; by entity ID too; a hidden IdP is never
     * the last choice */
    in.query = "<script>";
    in.remembered = "https://hidden.example/idp";
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_null(strstr(page, "<script>"));
    ck_assert_ptr_nonnull(strstr(page, "value=\"&lt;script&gt;\""));
    ck_assert_ptr_nonnull(strstr(page, "0 of 2 organisations"));
    ck_assert_ptr_null(strstr(page, "Last time"));
    in.query = "b.example";
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_nonnull(strstr(page, "1 of 2 organisations"));
}
END_TEST

START_TEST(test_page_caps_a_long_list)
{
    rsp_discovery_in_t in = input();
    apr_array_header_t *many = apr_array_make(pool, 1000, sizeof(rsp_idp_ui_t *));
    const char *page, *at;
    int i, n;

    for (i = 0; i < 1000; i++) {
        APR_ARRAY_PUSH(many, rsp_idp_ui_t *) =
            ui(apr_psprintf(pool, "https://idp%04d.example/idp", i), i == 3, "en",
               apr_psprintf(pool, "Org %04d", i), NULL);
    }
    in.uis = many;
    /* the default: the first RSP_DISCOVERY_MAX_SHOWN, in metadata order,
     * and a prompt */
    page = rsp_discovery_page(pool, &in);
    for (n = 0, at = page; (at = strstr(at, "<li>")) != NULL; at++) {
        n++;
    }
    ck_assert_int_eq(n, RSP_DISCOVERY_MAX_SHOWN);
    ck_assert_ptr_nonnull(strstr(page, "<span>Org 0000</span>"));
    ck_assert_ptr_null(strstr(page, "<span>Org 0003</span>"));      /* hidden */
    ck_assert_ptr_nonnull(strstr(page, apr_psprintf(pool, "<span>Org %04d</span>",
                                                    RSP_DISCOVERY_MAX_SHOWN)));
    ck_assert_ptr_null(strstr(page, apr_psprintf(pool, "<span>Org %04d</span>",
                                                 RSP_DISCOVERY_MAX_SHOWN + 1)));
    ck_assert_ptr_nonnull(strstr(page, apr_psprintf(
        pool, ">The first %d shown of 999 of 999 organisations: type more of the name "
        "to find yours</p>", RSP_DISCOVERY_MAX_SHOWN)));
    /* a search with more matches than the cap */
    in.max_shown = 5;
    in.query = "org 01";
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_nonnull(strstr(page, "<span>Org 0104</span>"));
    ck_assert_ptr_null(strstr(page, "<span>Org 0105</span>"));
    ck_assert_ptr_nonnull(strstr(page, "The first 5 shown of 100 of 999 organisations "
                                 "matching \xe2\x80\x9corg 01\xe2\x80\x9d: type more"));
    /* as many as the cap: no prompt */
    in.query = "org 010";
    in.max_shown = 10;
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_nonnull(strstr(page, ">10 of 999 organisations matching"));
    ck_assert_ptr_null(strstr(page, "type more"));
}
END_TEST

START_TEST(test_csp_and_stylesheet)
{
    rsp_discovery_in_t in = input();
    const char *csp = rsp_discovery_csp(pool, NULL), *page;

    ck_assert_ptr_nonnull(strstr(csp, "default-src 'none'; style-src 'sha256-"));
    ck_assert_ptr_nonnull(strstr(csp, "img-src https:; form-action 'self'; "
                                 "base-uri 'none'; frame-ancestors 'none'"));
    ck_assert_str_eq(rsp_discovery_csp(pool, "https://cdn.example/d.css"),
                     "default-src 'none'; style-src https://cdn.example/d.css; "
                     "img-src https:; form-action 'self'; base-uri 'none'; "
                     "frame-ancestors 'none'");
    ck_assert_ptr_nonnull(strstr(rsp_discovery_csp(pool, "/css/d.css"),
                                 "style-src 'self';"));
    in.stylesheet = "https://cdn.example/d.css";
    page = rsp_discovery_page(pool, &in);
    ck_assert_ptr_nonnull(strstr(page, "<link rel=\"stylesheet\" href=\"https://cdn.example/d.css\">"));
    ck_assert_ptr_null(strstr(page, "<style>"));
}
END_TEST

static Suite *discovery_suite(void)
{
    Suite *s = suite_create("rsp_discovery");
    TCase *tc = tcase_create("discovery");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_accept_language);
    tcase_add_test(tc, test_name_by_language);
    tcase_add_test(tc, test_page_lists_and_escapes);
    tcase_add_test(tc, test_page_filter_and_last_choice);
    tcase_add_test(tc, test_page_caps_a_long_list);
    tcase_add_test(tc, test_csp_and_stylesheet);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(discovery_suite());
}
