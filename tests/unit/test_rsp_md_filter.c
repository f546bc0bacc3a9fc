/* Unit tests for rsp_md_filter.c: which IdPs of a metadata file an SP
 * trusts, by entityID, registration authority and entity category. */
#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_md_filter.h"

#define ENTITY(id, ext) "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" " \
    "xmlns:mdrpi=\"urn:oasis:names:tc:SAML:metadata:rpi\" " \
    "xmlns:mdattr=\"urn:oasis:names:tc:SAML:metadata:attribute\" " \
    "xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" entityID=\"" id "\">" \
    "<md:Extensions>" ext "</md:Extensions><md:IDPSSODescriptor " \
    "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\"/>" \
    "</md:EntityDescriptor>"
#define REG(a) "<mdrpi:RegistrationInfo registrationAuthority=\"" a "\"/>"
#define CATS(v) "<mdattr:EntityAttributes><saml:Attribute " \
    "Name=\"http://macedir.org/entity-category\">" v "</saml:Attribute>" \
    "</mdattr:EntityAttributes>"
#define CAT(u) "<saml:AttributeValue> " u " </saml:AttributeValue>"

static apr_array_header_t *sels(const char *a, const char *b)
{
    apr_array_header_t *s = apr_array_make(pool, 2, sizeof(const char *));

    if (a) {
        APR_ARRAY_PUSH(s, const char *) = a;
    }
    if (b) {
        APR_ARRAY_PUSH(s, const char *) = b;
    }
    return s;
}

static const char *uni = ENTITY("https://idp.uni.example/idp",
                                REG("https://fed.example/") CATS(CAT("http://refeds.org/category/research-and-scholarship")
                                                                  CAT("http://refeds.org/category/hide-from-discovery")));
static const char *other = ENTITY("https://idp.other.example/idp",
                                  REG("https://edugain.example/"));
static const char *bare = ENTITY("https://idp.bare.example/idp", "");

START_TEST(test_selectors)
{
    ck_assert_ptr_null(rsp_md_selector_invalid("entity=https://idp"));
    ck_assert_ptr_null(rsp_md_selector_invalid("registrar=https://fed/"));
    ck_assert_ptr_null(rsp_md_selector_invalid("category=http://refeds.org/x"));
    ck_assert_ptr_nonnull(rsp_md_selector_invalid("entity="));
    ck_assert_ptr_nonnull(rsp_md_selector_invalid("https://idp"));
    ck_assert_ptr_nonnull(rsp_md_selector_invalid("Entity=https://idp"));
}
END_TEST

START_TEST(test_keeps)
{
    /* no selector: every IdP */
    ck_assert(rsp_md_filter_keeps(pool, uni, NULL, NULL));
    ck_assert(rsp_md_filter_keeps(pool, bare, sels(NULL, NULL), NULL));
    /* includes: one must match */
    ck_assert(rsp_md_filter_keeps(pool, uni, sels("registrar=https://fed.example/", NULL), NULL));
    ck_assert(!rsp_md_filter_keeps(pool, other, sels("registrar=https://fed.example/", NULL), NULL));
    ck_assert(!rsp_md_filter_keeps(pool, bare, sels("registrar=https://fed.example/", NULL), NULL));
    ck_assert(rsp_md_filter_keeps(pool, uni, sels("category=http://refeds.org/category/research-and-scholarship", NULL), NULL));
    ck_assert(!rsp_md_filter_keeps(pool, other, sels("category=http://refeds.org/category/research-and-scholarship", NULL), NULL));
    ck_assert(rsp_md_filter_keeps(pool, other, sels("category=x", "entity=https://idp.other.example/idp"), NULL));
    /* whole values only */
    ck_assert(!rsp_md_filter_keeps(pool, other, sels("entity=https://idp.other.example", NULL), NULL));
    ck_assert(!rsp_md_filter_keeps(pool, uni, sels("registrar=https://fed.example", NULL), NULL));
    /* excludes win */
    ck_assert(!rsp_md_filter_keeps(pool, uni, sels("registrar=https://fed.example/", NULL),
                                   sels("entity=https://idp.uni.example/idp", NULL)));
    ck_assert(rsp_md_filter_keeps(pool, other, NULL, sels("category=http://refeds.org/category/hide-from-discovery", NULL)));
    ck_assert(!rsp_md_filter_keeps(pool, uni, NULL, sels("category=http://refeds.org/category/hide-from-discovery", NULL)));
    /* unreadable metadata matches nothing */
    ck_assert(!rsp_md_filter_keeps(pool, "<x", sels("entity=x", NULL), NULL));
    ck_assert(rsp_md_filter_keeps(pool, "<x", NULL, sels("entity=x", NULL)));
}
END_TEST

static Suite *filter_suite(void)
{
    Suite *s = suite_create("rsp_md_filter");
    TCase *tc = tcase_create("filter");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_selectors);
    tcase_add_test(tc, test_keeps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(filter_suite());
}
