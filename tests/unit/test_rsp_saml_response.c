/* Unit tests for rsp_saml_response.c (rsp_saml_process_response, with
 * rsp_saml_shape.c before Lasso) on Responses the test IdP really signed:
 * make_saml_cases.py (group responses: rsp_unit_saml.c) makes one per
 * case, the attacks made from signed responses changed afterwards as an
 * attacker would, and each is checked against the SP loaded as the module
 * loads it: accepted with the identity the signature covers, or refused
 * with its exact check= name.
 *
 * The XML-signature-wrapping family (an evil assertion before, after or
 * inside the signed one, the signed one moved into Extensions or into a
 * Signature's Object, two assertions with one ID), a comment splitting
 * the signed NameID, DOCTYPE (an internal entity; an external DTD, which
 * must never be fetched: a listener sees whether anything connects), two
 * and zero assertions, another key, a broken signature, and the checks
 * after the signatures. Any Response: the attributes of one element, the
 * depth. (Encrypted assertions: test_rsp_saml_decrypt.c.) */
#include "rsp_unit_saml.h"
#include "rsp_scope.h"

static const rsp_unit_saml_case_t cases[] = {
    {"good-both-signed", NULL, "alice"},
    {"good-assertion-signed", NULL, "alice"},
    {"good-response-signed", NULL, "alice"},
    {"unsigned", "signature", NULL},
    {"another-key", "signature", NULL},
    {"broken-signature", "signature", NULL},
    {"two-assertions", "assertion-count", NULL},
    {"zero-assertions", "assertion-count", NULL},
    {"xsw-evil-before", "assertion-count", NULL},
    {"xsw-evil-after", "assertion-count", NULL},
    {"xsw-evil-inside", "assertion-count", NULL},
    {"xsw-signed-in-extensions", "signature", NULL},
    {"xsw-signed-in-object", "signature", NULL},
    {"xsw-duplicate-id", "assertion-count", NULL},
    {"nameid-comment", NULL, "alice.admin@example.org"},
    {"doctype-entity", "xml", NULL},
    {"doctype-external", "xml", NULL},
    {"wrong-audience", "audience", NULL},
    {"wrong-destination", "destination", NULL},
    {"expired", "expired", NULL},
    {"window-too-long", "window-too-long", NULL},
    /* no NameID, and no ReplaySPUserAttribute to name the user */
    {"no-name-id", "subject", NULL},
    {"empty-name-id", "subject", NULL},
    /* any Response, before it is parsed */
    {"response-many-attributes", "xml", NULL},
    {"response-deep-over", "xml-depth", NULL},
    {"response-deep-at-limit", NULL, "alice"},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

START_TEST(test_case)
{
    rsp_unit_saml_check_case(&cases[_i]);
}
END_TEST

/* The external DTD was never asked for: nothing connected to the port
 * the fixture names. */
START_TEST(test_external_dtd_never_fetched)
{
    rsp_assertion_t *a;
    const char *check, *detail;

    ck_assert_int_ne(rsp_unit_saml_process(
                         rsp_unit_saml_case(pool, "doctype-external"), &a,
                         &check, &detail), APR_SUCCESS);
    ck_assert(!rsp_unit_saml_fetched());
}
END_TEST

/* The same response is the same verdict: a case run twice. */
START_TEST(test_verdicts_are_stable)
{
    rsp_assertion_t *a;
    const char *check, *detail;
    const char *good = rsp_unit_saml_case(pool, "good-both-signed");
    const char *bad = rsp_unit_saml_case(pool, "xsw-evil-before");
    int i;

    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(rsp_unit_saml_process(good, &a, &check, &detail),
                         APR_SUCCESS);
        ck_assert_int_ne(rsp_unit_saml_process(bad, &a, &check, &detail),
                         APR_SUCCESS);
        ck_assert_str_eq(check, "assertion-count");
    }
}
END_TEST

/* AD FS without a NameID rule: with ReplaySPUserAttribute the Subject
 * may have no NameID (the attribute names the user; that it is there is
 * the ACS's check); an empty NameID is refused either way. */
START_TEST(test_user_without_name_id)
{
    rsp_assertion_t *a;
    const char *check, *detail;

    ck_assert_int_eq(rsp_unit_saml_process_user(
                         rsp_unit_saml_case(pool, "no-name-id"), "upn", &a,
                         &check, &detail), APR_SUCCESS);
    ck_assert_ptr_null(a->name_id);
    ck_assert_ptr_null(a->name_id_format);
    ck_assert_int_eq(a->attributes->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(a->attributes, 0, rsp_attribute_t).value,
                     "alice@example.org");
    ck_assert_int_ne(rsp_unit_saml_process_user(
                         rsp_unit_saml_case(pool, "empty-name-id"), "upn", &a,
                         &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "subject");
    /* and a NameID is still taken as it comes */
    ck_assert_int_eq(rsp_unit_saml_process_user(
                         rsp_unit_saml_case(pool, "good-both-signed"), "upn",
                         &a, &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(a->name_id, "alice");
}
END_TEST

/* Scoped attributes: the unit IdP declares example.org. A value in
 * another scope is dropped (and named); when it is the user attribute's,
 * the response is refused with check=scope. */
START_TEST(test_scoped_attributes)
{
    const char *eppn = "urn:oid:1.3.6.1.4.1.5923.1.1.1.6";
    const char *foreign = rsp_unit_saml_case(pool, "scoped-foreign");
    const char *mixed = rsp_unit_saml_case(pool, "scoped-mixed");
    const rsp_scope_drop_t *d;
    rsp_assertion_t *a;
    const char *check, *detail;

    ck_assert_int_ne(rsp_unit_saml_process_user(foreign, eppn, &a, &check,
                                                &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "scope");
    ck_assert_ptr_nonnull(strstr(detail, "the scope evil.example"));
    ck_assert_ptr_null(strstr(detail, "mallory"));
    /* not the user attribute: dropped, the rest kept */
    ck_assert_int_eq(rsp_unit_saml_process_user(foreign, "mail", &a, &check,
                                                &detail), APR_SUCCESS);
    ck_assert_int_eq(a->attributes->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(a->attributes, 0, rsp_attribute_t).name,
                     "mail");
    ck_assert_int_eq(a->scope_dropped->nelts, 1);
    d = &APR_ARRAY_IDX(a->scope_dropped, 0, rsp_scope_drop_t);
    ck_assert_str_eq(d->name, eppn);
    ck_assert_str_eq(d->scope, "evil.example");
    /* the user's own value in scope, another attribute's value out of it */
    ck_assert_int_eq(rsp_unit_saml_process_user(mixed, eppn, &a, &check,
                                                &detail), APR_SUCCESS);
    ck_assert_int_eq(a->attributes->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(a->attributes, 1, rsp_attribute_t).value,
                     "member@example.org");
    ck_assert_int_eq(a->scope_dropped->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(a->scope_dropped, 0, rsp_scope_drop_t).scope,
                     "evil.example");
}
END_TEST

/* A signed metadata file past its validUntil: the IdP it names is no
 * longer trusted (a fleet that was not restarted with a fresh copy). */
START_TEST(test_metadata_expired)
{
    const char *good = rsp_unit_saml_case(pool, "good-both-signed");
    apr_time_t *vu;
    rsp_assertion_t *a;
    const char *check, *detail;

    ck_assert_int_eq(rsp_idp_count(saml_sp.idps), 1);
    vu = &((rsp_idp_t *)rsp_idp_at(saml_sp.idps, 0))->valid_until;
    ck_assert(*vu == 0);             /* not signed: no validUntil kept */
    *vu = apr_time_now() - apr_time_from_sec(1);
    ck_assert_int_ne(rsp_unit_saml_process(good, &a, &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "metadata-expired");
    ck_assert_ptr_nonnull(strstr(detail, IDP_ENTITY));
    *vu = apr_time_now() + apr_time_from_sec(3600);
    ck_assert_int_eq(rsp_unit_saml_process(good, &a, &check, &detail), APR_SUCCESS);
    *vu = 0;
}
END_TEST

static Suite *response_suite(void)
{
    Suite *s = suite_create("rsp_saml_response");
    TCase *tc = tcase_create("responses");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_case, 0, NCASES);
    tcase_add_test(tc, test_external_dtd_never_fetched);
    tcase_add_test(tc, test_verdicts_are_stable);
    tcase_add_test(tc, test_user_without_name_id);
    tcase_add_test(tc, test_scoped_attributes);
    tcase_add_test(tc, test_metadata_expired);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("responses", response_suite);
}
