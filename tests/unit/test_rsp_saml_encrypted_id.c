/* Unit tests for rsp_saml_encrypted_id.c: an EncryptedID as Lasso holds it
 * (made here by Lasso from the EncryptedID of make_saml_cases.py's
 * signed responses), decrypted with the SP's keys into the NameID Lasso
 * would have put in its place, the EncryptedID released; each refusal
 * with its check= and a detail that says where, the EncryptedID kept. */
#include <string.h>

#include <apr_base64.h>
#include <apr_strings.h>
#include <lasso/lasso.h>
#include <lasso/xml/saml-2.0/saml2_encrypted_element.h>
#include <lasso/xml/saml-2.0/saml2_name_id.h>
#include <libxml/parser.h>

#include "rsp_saml.h"
#include "rsp_saml_int.h"
#include "rsp_unit_saml.h"

#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"
#define WHERE "the assertion's Subject"

static xmlNodePtr find(xmlNodePtr n, const char *name)
{
    xmlNodePtr c, f;

    for (; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && n->ns
            && !strcmp((const char *)n->ns->href, NS_SAML)
            && !strcmp((const char *)n->name, name)) {
            return n;
        }
        for (c = n->children; c; c = c->next) {
            if ((f = find(c, name))) {
                return f;
            }
        }
    }
    return NULL;
}

/* The EncryptedID of the response case name, as Lasso parses it. */
static LassoSaml2EncryptedElement *encrypted_id_of(const char *name)
{
    const char *b64 = rsp_unit_saml_case(pool, name);
    char *xml = apr_palloc(pool, (apr_size_t)apr_base64_decode_len(b64) + 1);
    int len = apr_base64_decode(xml, b64);
    xmlDocPtr doc = xmlReadMemory(xml, len, "r.xml", NULL, XML_PARSE_NONET);
    xmlNodePtr id;
    LassoNode *node;

    ck_assert_ptr_nonnull(doc);
    id = find(xmlDocGetRootElement(doc), "EncryptedID");
    ck_assert_msg(id != NULL, "%s has no EncryptedID", name);
    node = lasso_node_new_from_xmlNode(id);
    xmlFreeDoc(doc);
    ck_assert_msg(LASSO_IS_SAML2_ENCRYPTED_ELEMENT(node), "%s: not an encrypted element",
                  name);
    return LASSO_SAML2_ENCRYPTED_ELEMENT(node);
}

static apr_status_t take(LassoSaml2NameID **nid, LassoSaml2EncryptedElement **enc,
                         const char **check, const char **detail)
{
    *check = *detail = NULL;
    return rsp_saml_encrypted_id_take(pool, &saml_sp, IDP_ENTITY, WHERE, nid, enc, check,
                                      detail);
}

START_TEST(test_taken)
{
    static const char *const cases[] = {
        "id-x-aes128-gcm", "id-x-aes256-cbc", "id-x-oaep-label", "id-x-qualified",
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        LassoSaml2EncryptedElement *enc = encrypted_id_of(cases[i]);
        LassoSaml2NameID *nid = NULL;
        const char *check, *detail;

        ck_assert_msg(take(&nid, &enc, &check, &detail) == APR_SUCCESS, "%s: check=%s %s",
                      cases[i], check, detail);
        ck_assert_ptr_nonnull(nid);
        ck_assert_str_eq(nid->content, "alice");
        ck_assert_ptr_null(enc);   /* released, as Lasso does */
        if (!strcmp(cases[i], "id-x-qualified")) {
            ck_assert_ptr_nonnull(nid->NameQualifier);
        }
        g_object_unref(nid);
    }
}
END_TEST

START_TEST(test_refused)
{
    static const struct {
        const char *name, *check;
    } cases[] = {
        {"id-r-rsa-1_5", "encryption-algorithm"},
        {"id-r-too-many-keys", "encryption"},
        {"id-r-gcm-two-name-ids", "subject"},
        {"id-r-gcm-too-large", "decrypted-size"},
        {"id-u-gcm-tag", "decrypt"},
        {"id-u-cbc-padding", "decrypt"},
        {"id-u-gcm-wrong-key", "decrypt"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        LassoSaml2EncryptedElement *enc = encrypted_id_of(cases[i].name), *held = enc;
        LassoSaml2NameID *nid = NULL;
        const char *check, *detail;

        ck_assert_int_ne(take(&nid, &enc, &check, &detail), APR_SUCCESS);
        ck_assert_msg(check && !strcmp(check, cases[i].check), "%s: check=%s, not %s",
                      cases[i].name, check ? check : "(null)", cases[i].check);
        ck_assert_msg(detail && !strncmp(detail, WHERE ": ", strlen(WHERE) + 2), "%s: %s",
                      cases[i].name, detail ? detail : "(null)");
        ck_assert_ptr_null(nid);
        ck_assert_ptr_eq(enc, held);   /* kept */
        g_object_unref(enc);
    }
}
END_TEST

START_TEST(test_nothing_to_decrypt)
{
    LassoSaml2EncryptedElement *enc = NULL, *empty;
    LassoSaml2NameID *nid = NULL, *had;
    const char *check, *detail;

    /* no EncryptedID at all */
    ck_assert_int_ne(take(&nid, &enc, &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "subject");
    ck_assert_str_eq(detail, WHERE " from " IDP_ENTITY ": no NameID and no EncryptedID to "
                     "decrypt");
    /* one without its EncryptedData */
    empty = LASSO_SAML2_ENCRYPTED_ELEMENT(lasso_saml2_encrypted_element_new());
    enc = empty;
    ck_assert_int_ne(take(&nid, &enc, &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "subject");
    ck_assert_ptr_eq(enc, empty);
    /* a NameID already there: not replaced */
    had = LASSO_SAML2_NAME_ID(lasso_saml2_name_id_new_with_string("bob"));
    nid = had;
    enc = encrypted_id_of("id-x-aes128-gcm");
    ck_assert_int_ne(take(&nid, &enc, &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "subject");
    ck_assert_ptr_eq(nid, had);
    g_object_unref(had);
    g_object_unref(enc);
    g_object_unref(empty);
}
END_TEST

static Suite *encrypted_id_suite(void)
{
    Suite *s = suite_create("rsp_saml_encrypted_id");
    TCase *tc = tcase_create("encrypted_id");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_taken);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_nothing_to_decrypt);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("encrypted,ids", encrypted_id_suite);
}
