/* Unit tests for rsp_xml.c: what the SAML readers ask of a libxml2 tree
 * (an element by namespace and name, a child element, an attribute in no
 * namespace). */
#include <string.h>

#include <libxml/parser.h>

#include "rsp_unit.h"
#include "rsp_xml.h"

#define NS_A "urn:test:a"
#define NS_B "urn:test:b"

static const char doc_text[] =
    "<a:root xmlns:a='" NS_A "' xmlns:b='" NS_B "' x='1' e='' b:y='2'>"
    "text<!-- c --><b:kid n='first'/><a:kid n='second'/><a:kid n='third'/>"
    "<kid n='no namespace'/></a:root>";

static xmlDocPtr doc;

static void parse(void)
{
    rsp_unit_setup();
    doc = xmlReadMemory(doc_text, (int)strlen(doc_text), "t.xml", NULL, XML_PARSE_NONET);
    ck_assert_ptr_nonnull(doc);
}

static void unparse(void)
{
    xmlFreeDoc(doc);
    rsp_unit_teardown();
}

START_TEST(test_is)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);

    ck_assert(rsp_xml_is(root, NS_A, "root"));
    ck_assert(rsp_xml_is(root, NS_A, NULL));
    ck_assert(!rsp_xml_is(root, NS_B, "root"));
    ck_assert(!rsp_xml_is(root, NS_A, "Root"));
    ck_assert(!rsp_xml_is(NULL, NS_A, NULL));
    /* text and comments are not elements; an element without a namespace
     * is in none */
    ck_assert(!rsp_xml_is(root->children, NS_A, NULL));
    ck_assert(!rsp_xml_is(root->children->next, NS_A, NULL));
    ck_assert(!rsp_xml_is(root->last, NS_A, "kid"));
}
END_TEST

START_TEST(test_child)
{
    xmlNodePtr root = xmlDocGetRootElement(doc), k;

    k = rsp_xml_child(root, NS_A, "kid");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(rsp_xml_attr(pool, k, "n"), "second");   /* the first in NS_A */
    k = rsp_xml_child(root, NS_B, NULL);
    ck_assert_str_eq(rsp_xml_attr(pool, k, "n"), "first");
    ck_assert_ptr_null(rsp_xml_child(root, NS_B, "root"));
    ck_assert_ptr_null(rsp_xml_child(k, NS_A, NULL));          /* no children */
    ck_assert_ptr_null(rsp_xml_child(NULL, NS_A, "kid"));
}
END_TEST

START_TEST(test_attr)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);

    ck_assert_str_eq(rsp_xml_attr(pool, root, "x"), "1");
    ck_assert_str_eq(rsp_xml_attr(pool, root, "e"), "");
    /* an attribute in a namespace is not one in none */
    ck_assert_ptr_null(rsp_xml_attr(pool, root, "y"));
    ck_assert_ptr_null(rsp_xml_attr(pool, root, "missing"));
    ck_assert_ptr_null(rsp_xml_attr(pool, NULL, "x"));
}
END_TEST

static Suite *xml_suite(void)
{
    Suite *s = suite_create("rsp_xml");
    TCase *tc = tcase_create("xml");

    tcase_add_checked_fixture(tc, parse, unparse);
    tcase_add_test(tc, test_is);
    tcase_add_test(tc, test_child);
    tcase_add_test(tc, test_attr);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(xml_suite());
}
