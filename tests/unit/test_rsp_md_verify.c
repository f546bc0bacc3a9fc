/* Unit tests for rsp_md_verify.c: a metadata file's own signature and
 * validUntil, on an aggregate signed by xmlsec1 with a federation key
 * (make_saml_cases.py, group metadata) and each way it must be refused,
 * with why. */
#include <string.h>

#include <apr_strings.h>

#include "rsp_md_verify.h"
#include "rsp_unit_saml.h"

#define WEEKS4 (28 * 24 * 3600)

static apr_status_t verify(const char *name, const char *cert, const char **err)
{
    const char *md = rsp_unit_saml_file(pool, apr_pstrcat(pool, "md/", name, ".xml", NULL));
    apr_time_t vu = 0;

    *err = NULL;
    return rsp_md_verify(pool, md, strlen(md),
                         rsp_unit_saml_file(pool, apr_pstrcat(pool, "md/", cert, NULL)),
                         apr_time_now(), WEEKS4, &vu, err);
}

static void refused(const char *name, const char *why)
{
    const char *err;

    ck_assert_msg(verify(name, "fed.crt", &err) == APR_EINVAL, "%s accepted", name);
    ck_assert_msg(err && !strncmp(err, "metadata signature: ", 20), "%s: %s", name, err);
    ck_assert_msg(strstr(err, why) != NULL, "%s: \"%s\" does not say \"%s\"", name, err, why);
}

START_TEST(test_signed_aggregate_and_entity_accepted)
{
    const char *err;
    const char *md = rsp_unit_saml_file(pool, "md/good.xml");
    apr_time_t vu = 0;

    ck_assert_msg(verify("good", "fed.crt", &err) == APR_SUCCESS, "%s", err);
    ck_assert_msg(verify("good-entity", "fed.crt", &err) == APR_SUCCESS, "%s", err);
    ck_assert_int_eq(rsp_md_verify(pool, md, strlen(md),
                                   rsp_unit_saml_file(pool, "md/fed.crt"),
                                   apr_time_now(), WEEKS4, &vu, &err), APR_SUCCESS);
    ck_assert(vu > apr_time_now() + apr_time_from_sec(6 * 24 * 3600));
    /* the validity bound is the caller's */
    ck_assert_int_eq(rsp_md_verify(pool, md, strlen(md),
                                   rsp_unit_saml_file(pool, "md/fed.crt"),
                                   apr_time_now(), 24 * 3600, &vu, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "ReplaySPMetadataMaxValidity (86400 s)"));
}
END_TEST

/* The verified tree, handed to the caller on success only. */
START_TEST(test_tree_kept)
{
    const char *err = NULL, *cert = rsp_unit_saml_file(pool, "md/fed.crt");
    const char *md = rsp_unit_saml_file(pool, "md/good.xml");
    const char *bad = rsp_unit_saml_file(pool, "md/tampered.xml");
    xmlDocPtr tree = NULL;
    apr_time_t vu = 0;

    ck_assert_int_eq(rsp_md_verify_tree(pool, md, strlen(md), cert, apr_time_now(),
                                        WEEKS4, &vu, &tree, &err), APR_SUCCESS);
    ck_assert_ptr_nonnull(tree);
    ck_assert_str_eq((const char *)xmlDocGetRootElement(tree)->name,
                     "EntitiesDescriptor");
    xmlFreeDoc(tree);
    tree = NULL;
    ck_assert_int_eq(rsp_md_verify_tree(pool, bad, strlen(bad), cert, apr_time_now(),
                                        WEEKS4, &vu, &tree, &err), APR_EINVAL);
    ck_assert_ptr_null(tree);
    ck_assert_ptr_nonnull(strstr(err, "does not verify with the certificate"));
}
END_TEST

START_TEST(test_refusals)
{
    const char *err;

    refused("tampered", "does not verify with the certificate");
    ck_assert_int_eq(verify("good", "other.crt", &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "does not verify with the certificate"));
    refused("other-key", "does not verify with the certificate");
    refused("sha1", "other than SHA-2");
    refused("unsigned", "not signed");
    refused("doctype", "DOCTYPE");
    refused("no-valid-until", "no validUntil");
    refused("expired", "expired");
    refused("too-long", "more than ReplaySPMetadataMaxValidity");
    refused("wrapped-reference", "is not the root element");
    refused("wrapped-inside", "not signed");
    refused("two-signatures", "more than one ds:Signature");
    refused("duplicate-id", "another element has the root element's ID");
    refused("deep", "nested deeper than 64");
}
END_TEST

START_TEST(test_not_metadata)
{
    const char *err;
    apr_time_t vu;
    const char *cert = rsp_unit_saml_file(pool, "md/fed.crt");

    ck_assert_int_eq(rsp_md_verify(pool, "<x/>", 4, cert, apr_time_now(), WEEKS4,
                                   &vu, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a SAML 2.0"));
    ck_assert_int_eq(rsp_md_verify(pool, "<x", 2, cert, apr_time_now(), WEEKS4,
                                   &vu, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not well-formed"));
    ck_assert_int_eq(rsp_md_verify(pool, "<x/>", (apr_size_t)RSP_MD_MAX_SIZE + 1, cert,
                                   apr_time_now(), WEEKS4, &vu, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "larger than 256 MiB"));
    ck_assert_int_eq(rsp_md_verify(pool, rsp_unit_saml_file(pool, "md/good.xml"),
                                   strlen(rsp_unit_saml_file(pool, "md/good.xml")),
                                   "not a certificate", apr_time_now(), WEEKS4, &vu,
                                   &err), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "certificate cannot be read"));
}
END_TEST

static Suite *md_suite(void)
{
    Suite *s = suite_create("rsp_md_verify");
    TCase *tc = tcase_create("metadata");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_signed_aggregate_and_entity_accepted);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_tree_kept);
    tcase_add_test(tc, test_not_metadata);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("metadata", md_suite);
}
