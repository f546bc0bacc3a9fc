/* Unit tests for rsp_saml_metadata.c: the SP's metadata (its endpoints,
 * both KeyDescriptors, the algorithms it decrypts, names escaped) and the
 * IdP's signing key read from the IdP's metadata, on the SP key pair and
 * the IdP make_saml_cases.py makes (group keys: rsp_unit_saml.c), loaded
 * as the module loads them. */
#include <string.h>

#include "rsp_unit_saml.h"

START_TEST(test_metadata)
{
    const char *md = rsp_saml_metadata(pool, &saml_sp, SP_ENTITY);

    ck_assert_ptr_nonnull(strstr(md, "entityID=\"" SP_ENTITY "\""));
    ck_assert_ptr_nonnull(strstr(md, "Location=\"" SP_ENTITY "/acs\""));
    ck_assert_ptr_nonnull(strstr(md, "bindings:HTTP-Redirect\" Location=\""
                                     SP_ENTITY "/slo\""));
    ck_assert_ptr_nonnull(strstr(md, "bindings:HTTP-POST\" Location=\""
                                     SP_ENTITY "/slo\""));
    ck_assert_ptr_nonnull(strstr(md, "WantAssertionsSigned=\"true\""));
    ck_assert_ptr_nonnull(strstr(md, "<md:KeyDescriptor use=\"signing\">"));
    ck_assert_ptr_nonnull(strstr(md, "<md:KeyDescriptor use=\"encryption\">"));
    ck_assert_ptr_nonnull(strstr(md, "aes256-gcm"));
    ck_assert_ptr_nonnull(strstr(md, "\"http://www.w3.org/2001/04/xmlenc#"
                                     "rsa-oaep-mgf1p\"/>\n   <md:EncryptionMethod "
                                     "Algorithm=\"http://www.w3.org/2009/"
                                     "xmlenc11#rsa-oaep\""));
    ck_assert_ptr_null(strstr(md, "rsa-1_5"));
    /* names are escaped */
    md = rsp_saml_metadata(pool, &saml_sp, "https://sp.example/a&b<\"");
    ck_assert_ptr_nonnull(strstr(md, "https://sp.example/a&amp;b&lt;&quot;/acs"));
    /* the IdP's signing certificate, taken from its metadata */
    ck_assert_int_eq(rsp_idp_count(saml_sp.idps), 1);
    ck_assert_int_eq(rsp_idp_at(saml_sp.idps, 0)->certs->nelts, 1);
}
END_TEST

static Suite *metadata_suite(void)
{
    Suite *s = suite_create("rsp_saml_metadata");
    TCase *tc = tcase_create("metadata");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_metadata);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("keys", metadata_suite);
}
