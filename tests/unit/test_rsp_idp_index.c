/* Unit tests for rsp_idp_index.c: the IdPs of metadata read once into an
 * index (what each reader finds on the parsed entity), the refusals, the
 * filters, and the metadata handed to Lasso. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>
#include <libxml/parser.h>

#include "rsp_idp_index.h"

#define MD "urn:oasis:names:tc:SAML:2.0:metadata"
#define P2 "urn:oasis:names:tc:SAML:2.0:protocol"
#define HEAD                                                               \
    "<md:EntitiesDescriptor xmlns:md=\"" MD "\" "                          \
    "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" "                     \
    "xmlns:mdui=\"urn:oasis:names:tc:SAML:metadata:ui\" "                  \
    "xmlns:mdrpi=\"urn:oasis:names:tc:SAML:metadata:rpi\" "                \
    "xmlns:shibmd=\"urn:mace:shibboleth:metadata:1.0\">"
#define TAIL "</md:EntitiesDescriptor>"
/* "MIIB" is the base64 of a DER SEQUENCE's first octets */
#define CERT "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n MIIBAAAA\n"    \
             "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
#define FULL(id)                                                           \
    "<md:EntityDescriptor entityID=\"" id "\"><md:Extensions>"             \
    "<mdrpi:RegistrationInfo registrationAuthority=\"https://fed.example/\"/>" \
    "</md:Extensions><md:IDPSSODescriptor protocolSupportEnumeration=\""   \
    "urn:oasis:names:tc:SAML:1.1:protocol " P2 "\" "                       \
    "WantAuthnRequestsSigned=\"true\"><md:Extensions>"                     \
    "<shibmd:Scope regexp=\"false\">uni.example</shibmd:Scope>"            \
    "<mdui:UIInfo><mdui:DisplayName xml:lang=\"en\">Uni &amp; Co"          \
    "</mdui:DisplayName></mdui:UIInfo></md:Extensions>"                    \
    "<md:KeyDescriptor use=\"signing\">" CERT "</md:KeyDescriptor>"        \
    "<md:KeyDescriptor use=\"encryption\"><ds:KeyInfo><ds:X509Data>"       \
    "<ds:X509Certificate>MIIBBBBB</ds:X509Certificate></ds:X509Data>"      \
    "</ds:KeyInfo></md:KeyDescriptor>"                                     \
    "<md:KeyDescriptor>" CERT "</md:KeyDescriptor>"                        \
    "<md:KeyDescriptor use=\"signing\"><ds:KeyInfo><ds:X509Data>"          \
    "<ds:X509Certificate>bm90IERFUg==</ds:X509Certificate></ds:X509Data>"  \
    "</ds:KeyInfo></md:KeyDescriptor>"                                     \
    "<md:SingleLogoutService Binding=\"urn:b:redirect\" "                  \
    "Location=\"https://idp.example/slo?a=1&amp;b=&quot;2&quot;\" "        \
    "ResponseLocation=\"https://idp.example/slo-r\"/>"                     \
    "<md:NameIDFormat> urn:f:transient </md:NameIDFormat>"                 \
    "<md:SingleSignOnService Binding=\"urn:b:redirect\" "                  \
    "Location=\"https://idp.example/sso\"/>"                               \
    "<md:SingleSignOnService Binding=\"urn:b:post\"/>"                     \
    "</md:IDPSSODescriptor></md:EntityDescriptor>"
#define BARE(id)                                                           \
    "<md:EntityDescriptor entityID=\"" id "\"><md:IDPSSODescriptor "       \
    "protocolSupportEnumeration=\"" P2 "\"/></md:EntityDescriptor>"
/* the same, a document of its own */
#define ALONE(id)                                                          \
    "<md:EntityDescriptor xmlns:md=\"" MD "\" entityID=\"" id "\">"         \
    "<md:IDPSSODescriptor protocolSupportEnumeration=\"" P2 "\"/>"         \
    "</md:EntityDescriptor>"
#define SAML1(id)                                                          \
    "<md:EntityDescriptor entityID=\"" id "\"><md:IDPSSODescriptor "       \
    "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:1.1:protocol "   \
    "urn:oasis:names:tc:SAML:2.0:protocolX\"/></md:EntityDescriptor>"
#define SP(id)                                                             \
    "<md:EntityDescriptor entityID=\"" id "\"><md:SPSSODescriptor "        \
    "protocolSupportEnumeration=\"" P2 "\"/></md:EntityDescriptor>"

static apr_status_t add(rsp_idp_index_t *ix, const char *md,
                        apr_time_t valid_until, const char **err)
{
    *err = NULL;
    return rsp_idp_index_add(ix, pool, md, strlen(md), valid_until, NULL,
                             NULL, err);
}

static apr_array_header_t *sels(const char *a)
{
    apr_array_header_t *arr = apr_array_make(pool, 1, sizeof(const char *));

    APR_ARRAY_PUSH(arr, const char *) = a;
    return arr;
}

START_TEST(test_read_once)
{
    rsp_idp_index_t *ix = rsp_idp_index_make(pool);
    const rsp_md_endpoint_t *e;
    const rsp_idp_t *idp;
    const char *err;

    ck_assert_int_eq(add(ix, HEAD SP("https://sp.example/sp")
                         FULL("https://idp.example/idp")
                         SAML1("https://old.example/idp")
                         "<md:EntitiesDescriptor>" BARE("https://b.example/idp")
                         "</md:EntitiesDescriptor>" TAIL,
                         apr_time_from_sec(5000), &err), APR_SUCCESS);
    /* the IdPs in document order, SPs and IdPs without SAML 2.0 left out */
    ck_assert_int_eq(rsp_idp_count(ix), 2);
    ck_assert_str_eq(rsp_idp_at(ix, 0)->entity_id, "https://idp.example/idp");
    ck_assert_str_eq(rsp_idp_at(ix, 1)->entity_id, "https://b.example/idp");
    ck_assert_ptr_null(rsp_idp_at(ix, 2));
    ck_assert_ptr_null(rsp_idp_at(ix, -1));
    ck_assert_ptr_null(rsp_idp_find(ix, "https://old.example/idp"));
    ck_assert_ptr_null(rsp_idp_find(ix, "https://sp.example/sp"));
    ck_assert_ptr_null(rsp_idp_find(ix, NULL));
    idp = rsp_idp_find(ix, "https://idp.example/idp");
    ck_assert_ptr_eq(idp, rsp_idp_at(ix, 0));
    ck_assert_int_eq(idp->pos, 0);
    ck_assert_int_eq(rsp_idp_find(ix, "https://b.example/idp")->pos, 1);
    ck_assert(idp->valid_until == apr_time_from_sec(5000));
    ck_assert(ix->valid_until == apr_time_from_sec(5000));
    ck_assert_int_eq(idp->want_requests_signed, 1);
    /* endpoints (one without Location left out), NameID formats trimmed */
    ck_assert_int_eq(idp->sso->nelts, 1);
    e = &APR_ARRAY_IDX(idp->sso, 0, rsp_md_endpoint_t);
    ck_assert_str_eq(e->location, "https://idp.example/sso");
    ck_assert_ptr_null(e->response_location);
    e = &APR_ARRAY_IDX(idp->slo, 0, rsp_md_endpoint_t);
    ck_assert_str_eq(e->response_location, "https://idp.example/slo-r");
    ck_assert_str_eq(APR_ARRAY_IDX(idp->name_id_formats, 0, const char *),
                     "urn:f:transient");
    /* signing certificates: use="signing" and no use, not encryption, and
     * not what is no DER SEQUENCE */
    ck_assert_int_eq(idp->certs->nelts, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(idp->certs, 0, rsp_der_t).len, 6);
    ck_assert_int_eq(APR_ARRAY_IDX(idp->certs, 0, rsp_der_t).der[0], 0x30);
    /* scopes and discovery names, from the same parse */
    ck_assert_int_eq(rsp_scopes_count(idp->scopes), 1);
    ck_assert(rsp_scope_allowed(idp->scopes, "uni.example"));
    ck_assert_int_eq(idp->ui->names->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(idp->ui->names, 0, rsp_ui_text_t).value,
                     "Uni & Co");
    ck_assert_int_eq(ix->uis->nelts, 2);
    ck_assert_ptr_eq(APR_ARRAY_IDX(ix->uis, 1, rsp_idp_ui_t *),
                     rsp_idp_at(ix, 1)->ui);
    /* the second IdP has none of it */
    idp = rsp_idp_at(ix, 1);
    ck_assert_int_eq(idp->sso->nelts + idp->slo->nelts + idp->certs->nelts, 0);
    ck_assert_int_eq(rsp_scopes_count(idp->scopes), 0);
    ck_assert_int_eq(idp->want_requests_signed, 0);
    /* another file adds to it; the earliest validUntil is the index's */
    ck_assert_int_eq(add(ix, ALONE("https://c.example/idp"),
                         apr_time_from_sec(4000), &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_idp_count(ix), 3);
    ck_assert_int_eq(rsp_idp_find(ix, "https://c.example/idp")->pos, 2);
    ck_assert(ix->valid_until == apr_time_from_sec(4000));
    ck_assert_int_eq(add(ix, ALONE("https://d.example/idp"), 0, &err),
                     APR_SUCCESS);
    ck_assert(ix->valid_until == apr_time_from_sec(4000));
}
END_TEST

START_TEST(test_refusals)
{
    rsp_idp_index_t *ix = rsp_idp_index_make(pool);
    const char *err;

    ck_assert_int_eq(add(ix, "<x", 0, &err), APR_EINVAL);
    ck_assert_str_eq(err, "not well-formed XML");
    ck_assert_int_eq(add(ix, HEAD SP("https://sp.example/sp") TAIL, 0, &err),
                     APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "no entity with an IDPSSODescriptor"));
    ck_assert_int_eq(add(ix, "<!DOCTYPE x []>" ALONE("https://a.example/idp"),
                         0, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "DOCTYPE"));
    ck_assert_int_eq(add(ix, HEAD BARE("https://a.example/idp")
                         "<md:EntityDescriptor><md:IDPSSODescriptor "
                         "protocolSupportEnumeration=\"" P2 "\"/>"
                         "</md:EntityDescriptor>" TAIL, 0, &err), APR_EINVAL);
    ck_assert_str_eq(err, "not valid SAML 2.0 metadata of an IdP (entity 2 "
                          "has no entityID)");
    /* the same IdP twice, in one file or in two */
    ix = rsp_idp_index_make(pool);
    ck_assert_int_eq(add(ix, HEAD BARE("https://a.example/idp")
                         BARE("https://a.example/idp") TAIL, 0, &err),
                     APR_EINVAL);
    ck_assert_str_eq(err, "IdP https://a.example/idp is already configured "
                          "by another metadata file or entity");
    ix = rsp_idp_index_make(pool);
    ck_assert_int_eq(add(ix, ALONE("https://a.example/idp"), 0, &err),
                     APR_SUCCESS);
    ck_assert_int_eq(add(ix, ALONE("https://a.example/idp"), 0, &err),
                     APR_EINVAL);
    /* scopes that cannot be read */
    ck_assert_int_eq(add(ix, HEAD "<md:EntityDescriptor entityID=\"https://r."
                         "example/idp\"><md:Extensions><shibmd:Scope regexp="
                         "\"true\">(</shibmd:Scope></md:Extensions>"
                         "<md:IDPSSODescriptor protocolSupportEnumeration=\""
                         P2 "\"/></md:EntityDescriptor>" TAIL, 0, &err),
                     APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "IdP https://r.example/idp: "));
}
END_TEST

START_TEST(test_filters)
{
    rsp_idp_index_t *ix = rsp_idp_index_make(pool);
    const char *err = NULL;
    const char *agg = HEAD FULL("https://idp.example/idp")
                      BARE("https://b.example/idp") TAIL;

    ck_assert_int_eq(rsp_idp_index_add(ix, pool, agg, strlen(agg), 0,
                                       sels("registrar=https://fed.example/"),
                                       NULL, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_idp_count(ix), 1);
    ck_assert_int_eq(ix->skipped, 1);
    ck_assert_str_eq(rsp_idp_at(ix, 0)->entity_id, "https://idp.example/idp");
    ix = rsp_idp_index_make(pool);
    ck_assert_int_eq(rsp_idp_index_add(ix, pool, agg, strlen(agg), 0, NULL,
                                       sels("entity=https://idp.example/idp"),
                                       &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_idp_count(ix), 1);
    ck_assert_str_eq(rsp_idp_at(ix, 0)->entity_id, "https://b.example/idp");
    /* a skipped IdP is no duplicate of a later one */
    ix = rsp_idp_index_make(pool);
    agg = HEAD BARE("https://b.example/idp") TAIL;
    ck_assert_int_eq(rsp_idp_index_add(ix, pool, agg, strlen(agg), 0, NULL,
                                       sels("entity=https://b.example/idp"),
                                       &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_idp_count(ix), 0);
    ck_assert_int_eq(add(ix, agg, 0, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_idp_count(ix), 1);
}
END_TEST

/* What Lasso is given: parseable, escaped, only the IDPSSODescriptor's
 * endpoints, NameID formats and WantAuthnRequestsSigned. */
START_TEST(test_lasso_metadata)
{
    rsp_idp_index_t *ix = rsp_idp_index_make(pool);
    const char *err, *md;
    xmlDocPtr doc;

    ck_assert_msg(add(ix, HEAD FULL("https://idp.example/idp?a=&lt;1&gt;&amp;b")
                      BARE("https://b.example/idp") TAIL, 0, &err)
                  == APR_SUCCESS, "%s", err);
    md = rsp_idp_lasso_metadata(pool, rsp_idp_at(ix, 0));
    doc = xmlReadMemory(md, (int)strlen(md), NULL, NULL, XML_PARSE_NONET);
    ck_assert_msg(doc != NULL, "not XML: %s", md);
    xmlFreeDoc(doc);
    ck_assert_ptr_nonnull(strstr(md, "entityID=\"https://idp.example/idp?a=&lt;1&gt;&amp;b\""));
    ck_assert_ptr_nonnull(strstr(md, "WantAuthnRequestsSigned=\"true\""));
    ck_assert_ptr_nonnull(strstr(md, "protocolSupportEnumeration=\"" P2 "\""));
    ck_assert_ptr_nonnull(strstr(md, "<md:SingleLogoutService Binding=\"urn:b:redirect\" "
                                     "Location=\"https://idp.example/slo?a=1&amp;b=&quot;2&quot;\" "
                                     "ResponseLocation=\"https://idp.example/slo-r\"/>"
                                     "<md:NameIDFormat>urn:f:transient</md:NameIDFormat>"
                                     "<md:SingleSignOnService Binding=\"urn:b:redirect\" "
                                     "Location=\"https://idp.example/sso\"/>"));
    ck_assert_ptr_null(strstr(md, "KeyDescriptor"));
    ck_assert_ptr_null(strstr(md, "Scope"));
    ck_assert_ptr_null(strstr(md, "urn:b:post"));
    md = rsp_idp_lasso_metadata(pool, rsp_idp_at(ix, 1));
    ck_assert_str_eq(md, "<md:EntityDescriptor xmlns:md=\"" MD "\" entityID="
                         "\"https://b.example/idp\"><md:IDPSSODescriptor "
                         "protocolSupportEnumeration=\"" P2 "\">"
                         "</md:IDPSSODescriptor></md:EntityDescriptor>");
}
END_TEST

static Suite *index_suite(void)
{
    Suite *s = suite_create("rsp_idp_index");
    TCase *tc = tcase_create("index");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_read_once);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_filters);
    tcase_add_test(tc, test_lasso_metadata);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(index_suite());
}
