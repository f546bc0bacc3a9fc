/* Unit tests for rsp_metadata.c: IdPs out of one EntityDescriptor or a
 * federation's EntitiesDescriptor. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>
#include <libxml/parser.h>

#include "rsp_metadata.h"

#define MD "urn:oasis:names:tc:SAML:2.0:metadata"
#define DS "http://www.w3.org/2000/09/xmldsig#"

/* An entity using the md: and ds: prefixes declared (or not) on itself. */
#define IDP(id, decl)                                                      \
    "<md:EntityDescriptor " decl " entityID=\"" id "\">"                   \
    "<md:IDPSSODescriptor protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">" \
    "<md:KeyDescriptor use=\"signing\"><ds:KeyInfo><ds:X509Data>"          \
    "<ds:X509Certificate>AAAA</ds:X509Certificate></ds:X509Data></ds:KeyInfo>" \
    "</md:KeyDescriptor></md:IDPSSODescriptor></md:EntityDescriptor>"
#define SP(id, decl)                                                       \
    "<md:EntityDescriptor " decl " entityID=\"" id "\"><md:SPSSODescriptor " \
    "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\"/>" \
    "</md:EntityDescriptor>"
#define DECLS "xmlns:md=\"" MD "\" xmlns:ds=\"" DS "\""

static apr_array_header_t *idps(const char *md, const char **err)
{
    apr_array_header_t *out = NULL;

    *err = NULL;
    if (rsp_metadata_idps(&out, pool, md, err) != APR_SUCCESS) {
        ck_assert_ptr_nonnull(*err);
        return NULL;
    }
    return out;
}

/* The standalone document parses, is an EntityDescriptor of entity id,
 * with its namespaces declared. */
static void check_entity(const char *doc, const char *id)
{
    xmlDocPtr d = xmlReadMemory(doc, (int)strlen(doc), NULL, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR);
    xmlNodePtr root;
    xmlChar *eid;

    ck_assert_msg(d != NULL, "not XML: %s", doc);
    root = xmlDocGetRootElement(d);
    ck_assert_str_eq((const char *)root->name, "EntityDescriptor");
    ck_assert_str_eq((const char *)root->ns->href, MD);
    eid = xmlGetProp(root, BAD_CAST "entityID");
    ck_assert_str_eq((const char *)eid, id);
    xmlFree(eid);
    ck_assert_ptr_nonnull(strstr(doc, "xmlns:ds=\"" DS "\""));
    xmlFreeDoc(d);
}

START_TEST(test_one_entity)
{
    const char *err;
    apr_array_header_t *l = idps(IDP("https://idp.example/", DECLS), &err);

    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->nelts, 1);
    check_entity(APR_ARRAY_IDX(l, 0, const char *), "https://idp.example/");
}
END_TEST

START_TEST(test_aggregate)
{
    const char *err;
    apr_array_header_t *l = idps(
        "<md:EntitiesDescriptor " DECLS " Name=\"federation\">"
        IDP("https://a.example/", "") SP("https://sp.example/", "")
        "<md:EntitiesDescriptor>" IDP("https://b.example/", "") "</md:EntitiesDescriptor>"
        IDP("https://c.example/", "xmlns:md=\"" MD "\"")
        "</md:EntitiesDescriptor>", &err);

    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->nelts, 3);
    /* document order, SPs skipped, namespaces of the aggregate carried */
    check_entity(APR_ARRAY_IDX(l, 0, const char *), "https://a.example/");
    check_entity(APR_ARRAY_IDX(l, 1, const char *), "https://b.example/");
    check_entity(APR_ARRAY_IDX(l, 2, const char *), "https://c.example/");
}
END_TEST

START_TEST(test_refused)
{
    const char *err;

    ck_assert_ptr_null(idps(SP("https://sp.example/", DECLS), &err));
    ck_assert_str_eq(err, "the entity has no IDPSSODescriptor");
    ck_assert_ptr_null(idps("<md:EntitiesDescriptor " DECLS ">" SP("https://sp/", "")
                            "</md:EntitiesDescriptor>", &err));
    ck_assert_ptr_nonnull(strstr(err, "no entity with an IDPSSODescriptor"));
    ck_assert_ptr_null(idps("<x/>", &err));
    ck_assert_ptr_nonnull(strstr(err, "not SAML 2.0 metadata"));
    ck_assert_ptr_null(idps("this is neither", &err));
    ck_assert_str_eq(err, "not well-formed XML");
    ck_assert_ptr_null(idps("<!DOCTYPE md:EntityDescriptor [<!ENTITY e \"x\">]>"
                            IDP("https://idp.example/", DECLS), &err));
    ck_assert_ptr_nonnull(strstr(err, "DOCTYPE"));
}
END_TEST

START_TEST(test_nesting_bounded)
{
    const char *err, *md = IDP("https://deep.example/", "");
    int i;

    for (i = 0; i < 20; i++) {
        md = apr_pstrcat(pool, "<md:EntitiesDescriptor", i == 19 ? " " DECLS : "",
                         ">", md, "</md:EntitiesDescriptor>", NULL);
    }
    ck_assert_ptr_null(idps(md, &err));
    ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));
}
END_TEST

static Suite *metadata_suite(void)
{
    Suite *s = suite_create("rsp_metadata");
    TCase *tc = tcase_create("metadata");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_one_entity);
    tcase_add_test(tc, test_aggregate);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_nesting_bounded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(metadata_suite());
}
