/* Unit tests for rsp_scope.c: the scopes an IdP's metadata declares and
 * the values of scoped attributes they allow. */
#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_saml.h"
#include "rsp_scope.h"

#define MD_HEAD "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" " \
    "xmlns:shibmd=\"urn:mace:shibboleth:metadata:1.0\" entityID=\"https://idp.example.org\">"
#define MD_TAIL "</md:EntityDescriptor>"
#define IDP(ext) "<md:IDPSSODescriptor protocolSupportEnumeration=" \
    "\"urn:oasis:names:tc:SAML:2.0:protocol\"><md:Extensions>" ext \
    "</md:Extensions></md:IDPSSODescriptor>"

static rsp_scopes_t *load(const char *md)
{
    rsp_scopes_t *s = NULL;
    const char *err = NULL;

    ck_assert_msg(rsp_scopes_of_metadata(&s, pool, md, &err) == APR_SUCCESS,
                  "%s", err ? err : "?");
    return s;
}

static const char *load_error(const char *md)
{
    rsp_scopes_t *s = NULL;
    const char *err = NULL;

    ck_assert(rsp_scopes_of_metadata(&s, pool, md, &err) == APR_EINVAL);
    ck_assert(err != NULL);
    return err;
}

START_TEST(test_literal_and_regexp_scopes)
{
    rsp_scopes_t *s = load(MD_HEAD
        "<md:Extensions><shibmd:Scope regexp=\"false\">example.org</shibmd:Scope>"
        "</md:Extensions>"
        IDP("<shibmd:Scope regexp=\"true\">^.+\\.example\\.net$</shibmd:Scope>"
            "<shibmd:Scope>\n  staff.example.com \n</shibmd:Scope>")
        MD_TAIL);

    ck_assert_int_eq(rsp_scopes_count(s), 3);
    ck_assert(rsp_scope_allowed(s, "example.org"));
    ck_assert(rsp_scope_allowed(s, "EXAMPLE.org"));     /* a domain name */
    ck_assert(rsp_scope_allowed(s, "staff.example.com"));
    ck_assert(rsp_scope_allowed(s, "a.example.net"));
    ck_assert(rsp_scope_allowed(s, "b.a.example.net"));
    /* a literal is the whole scope, not a suffix or a prefix */
    ck_assert(!rsp_scope_allowed(s, "sub.example.org"));
    ck_assert(!rsp_scope_allowed(s, "example.org.evil.example"));
    ck_assert(!rsp_scope_allowed(s, "evilexample.org"));
    /* a regular expression matches the whole scope */
    ck_assert(!rsp_scope_allowed(s, "example.net"));
    ck_assert(!rsp_scope_allowed(s, "a.example.net.evil.example"));
    ck_assert(!rsp_scope_allowed(s, ""));
    ck_assert(!rsp_scope_allowed(s, NULL));
}
END_TEST

START_TEST(test_unanchored_regexp_is_anchored)
{
    rsp_scopes_t *s = load(MD_HEAD IDP("<shibmd:Scope regexp=\"1\">example\\.org</shibmd:Scope>")
                           MD_TAIL);

    ck_assert(rsp_scope_allowed(s, "example.org"));
    ck_assert(!rsp_scope_allowed(s, "evil-example.org"));
    ck_assert(!rsp_scope_allowed(s, "example.org.evil"));
}
END_TEST

START_TEST(test_no_scopes_allow_nothing)
{
    rsp_scopes_t *s = load(MD_HEAD IDP("") MD_TAIL);

    ck_assert_int_eq(rsp_scopes_count(s), 0);
    ck_assert(!rsp_scope_allowed(s, "example.org"));
    ck_assert(!rsp_scope_allowed(NULL, "example.org"));
    /* scopes of another element (an SP's, an AttributeAuthority's) do not count */
    s = load(MD_HEAD "<md:SPSSODescriptor protocolSupportEnumeration=\"x\"><md:Extensions>"
             "<shibmd:Scope>example.org</shibmd:Scope></md:Extensions></md:SPSSODescriptor>"
             IDP("") MD_TAIL);
    ck_assert_int_eq(rsp_scopes_count(s), 0);
}
END_TEST

START_TEST(test_bad_scopes_refused)
{
    ck_assert_str_eq(load_error(MD_HEAD IDP("<shibmd:Scope> </shibmd:Scope>") MD_TAIL),
                     "an empty shibmd:Scope");
    ck_assert(strstr(load_error(MD_HEAD IDP("<shibmd:Scope regexp=\"yes\">a</shibmd:Scope>")
                                MD_TAIL), "not a boolean"));
    ck_assert(strstr(load_error(MD_HEAD IDP("<shibmd:Scope regexp=\"true\">(a</shibmd:Scope>")
                                MD_TAIL), "regular expression (a"));
    ck_assert_str_eq(load_error("<not xml"), "metadata that cannot be read");
}
END_TEST

static apr_array_header_t *attrs(const char *const *pairs)
{
    apr_array_header_t *a = apr_array_make(pool, 4, sizeof(rsp_attribute_t));
    int i;

    for (i = 0; pairs[i]; i += 2) {
        rsp_attribute_t *x = apr_array_push(a);
        x->name = pairs[i];
        x->value = pairs[i + 1];
    }
    return a;
}

#define EPPN "urn:oid:1.3.6.1.4.1.5923.1.1.1.6"
#define AFFIL "urn:oid:1.3.6.1.4.1.5923.1.1.1.9"
#define SUBJECT_ID "urn:oasis:names:tc:SAML:attribute:subject-id"

START_TEST(test_filter_drops_foreign_and_malformed_scopes)
{
    rsp_scopes_t *s = load(MD_HEAD IDP("<shibmd:Scope>example.org</shibmd:Scope>") MD_TAIL);
    static const char *const in[] = {
        "mail", "alice@evil.example",               /* not scoped: kept */
        EPPN, "alice@example.org",                  /* kept */
        AFFIL, "member@example.org",                /* kept */
        AFFIL, "staff@evil.example",                /* dropped: foreign */
        SUBJECT_ID, "alice",                        /* dropped: no scope */
        SUBJECT_ID, "alice@evil.example@example.org", /* dropped: two '@' */
        "urn:oasis:names:tc:SAML:attribute:pairwise-id", "@example.org", /* dropped */
        "eduPersonPrincipalName", "bob@EXAMPLE.ORG", /* kept (by name) */
        NULL
    };
    apr_array_header_t *a = attrs(in), *d = rsp_scope_filter(pool, s, NULL, a);
    const rsp_attribute_t *k = (const rsp_attribute_t *)a->elts;
    const rsp_scope_drop_t *x = (const rsp_scope_drop_t *)d->elts;

    ck_assert_int_eq(a->nelts, 4);
    ck_assert_str_eq(k[0].value, "alice@evil.example");
    ck_assert_str_eq(k[1].value, "alice@example.org");
    ck_assert_str_eq(k[2].value, "member@example.org");
    ck_assert_str_eq(k[3].value, "bob@EXAMPLE.ORG");
    ck_assert_int_eq(d->nelts, 4);
    ck_assert_str_eq(x[0].name, AFFIL);
    ck_assert_str_eq(x[0].scope, "evil.example");
    ck_assert_str_eq(x[1].name, SUBJECT_ID);
    ck_assert(x[1].scope == NULL);
    ck_assert(x[2].scope == NULL);
    ck_assert(x[3].scope == NULL);
}
END_TEST

START_TEST(test_filter_operator_named_and_no_scopes)
{
    static const char *const in[] = {
        "urn:example:scopedId", "x@example.org",
        EPPN, "alice@example.org",
        "mail", "alice@example.org",
        NULL
    };
    apr_array_header_t *extra = apr_array_make(pool, 1, sizeof(const char *));
    apr_array_header_t *a, *d;

    APR_ARRAY_PUSH(extra, const char *) = "urn:example:scopedId";
    ck_assert(rsp_scoped_attribute(extra, "urn:example:scopedId"));
    ck_assert(!rsp_scoped_attribute(NULL, "urn:example:scopedId"));
    ck_assert(rsp_scoped_attribute(NULL, EPPN));
    ck_assert(!rsp_scoped_attribute(extra, "mail"));
    /* an IdP that declares no scope asserts no scoped value */
    a = attrs(in);
    d = rsp_scope_filter(pool, NULL, extra, a);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(a, 0, rsp_attribute_t).name, "mail");
    ck_assert_int_eq(d->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(d, 0, rsp_scope_drop_t).scope, "example.org");
}
END_TEST

static Suite *scope_suite(void)
{
    Suite *s = suite_create("rsp_scope");
    TCase *tc = tcase_create("scope");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_literal_and_regexp_scopes);
    tcase_add_test(tc, test_unanchored_regexp_is_anchored);
    tcase_add_test(tc, test_no_scopes_allow_nothing);
    tcase_add_test(tc, test_bad_scopes_refused);
    tcase_add_test(tc, test_filter_drops_foreign_and_malformed_scopes);
    tcase_add_test(tc, test_filter_operator_named_and_no_scopes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(scope_suite());
}
