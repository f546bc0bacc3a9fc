/* Unit tests for rsp_saml_decrypt.c on EncryptedAssertions the test IdP
 * really encrypted for the SP's certificate (make_saml_cases.py, group
 * encrypted: rsp_unit_saml.c; each named for what its plaintext is).
 *
 * Through the response path (rsp_saml_process_response; an unsigned
 * Response: decrypted before any signature is checked, so what comes out
 * is checked first): what the plaintext may be (one saml:Assertion, the
 * size, element, attribute and depth limits, at and past each), another
 * SP's key, a CipherReference (never fetched: a listener sees whether
 * anything connects), accepted with the identity the signature covers or
 * refused with its exact check= name.
 *
 * Directly (rsp_saml_decrypt.h): the keys loaded for xmlsec (each in
 * order, one that is no key named by its place); each case decrypted
 * with the SP's key alone, the refusals being rsp_saml_decrypt_check's
 * own; the keys tried in order until one decrypts (another SP's key
 * alone, before or after ours, none); a ciphertext too large refused
 * before any key is tried; an EncryptedKey or EncryptedData changed
 * after it was encrypted; no EncryptedData or EncryptedKey to decrypt. */
#include <stdarg.h>
#include <string.h>

#include <apr_strings.h>
#include <libxml/tree.h>

#include "rsp_saml_decrypt.h"
#include "rsp_saml_shape.h"
#include "rsp_unit_saml.h"
#include "rsp_util.h"

/* EncryptedAssertion in an unsigned Response: decrypted before any
 * signature is checked, so what comes out is checked first */
static const rsp_unit_saml_case_t cases[] = {
    {"enc-good", NULL, "alice"},
    {"enc-good-response-signed", NULL, "alice"},
    {"enc-whitespace-around", NULL, "alice"},
    {"enc-another-key", "decrypt", NULL},
    {"enc-cipher-reference", "encryption", NULL},
    {"enc-deep-18000", "xml-depth", NULL},
    {"enc-deep-over", "xml-depth", NULL},
    {"enc-deep-at-limit", NULL, "alice"},
    {"enc-size-at-limit", NULL, "alice"},
    {"enc-size-over", "decrypted-size", NULL},
    {"enc-size-large", "decrypted-size", NULL},
    {"enc-many-elements", "decrypted-size", NULL},
    {"enc-many-attributes", "decrypted-size", NULL},
    {"enc-two-genuine-first", "assertion-count", NULL},
    {"enc-two-genuine-second", "assertion-count", NULL},
    {"enc-other-element-after", "assertion-count", NULL},
    {"enc-not-an-assertion", "assertion-count", NULL},
    {"enc-comment-after", "assertion-count", NULL},
    {"enc-text-after", "assertion-count", NULL},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

START_TEST(test_case)
{
    rsp_unit_saml_check_case(&cases[_i]);
}
END_TEST

/* xmlsec fetches a CipherReference's URI while it decrypts: the
 * Response is refused before, and nothing connected to the port the
 * fixture names (the same listener as the DTD's). */
START_TEST(test_cipher_reference_never_fetched)
{
    rsp_assertion_t *a;
    const char *check, *detail;

    ck_assert_int_ne(rsp_unit_saml_process(
                         rsp_unit_saml_case(pool, "enc-cipher-reference"), &a,
                         &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(check, "encryption");
    ck_assert(!rsp_unit_saml_fetched());
}
END_TEST

/* ---- rsp_saml_decrypt.h itself ---- */

/* "sp" or "other": the private key's PEM (DIR/NAME.key). */
static const char *pem(const char *name)
{
    return rsp_unit_saml_file(pool, apr_pstrcat(pool, name, ".key", NULL));
}

/* The keys of the NULL-terminated names (sp, other), in that order,
 * loaded for xmlsec. */
static apr_array_header_t *keys_of(const char *name, ...)
{
    apr_array_header_t *pems = apr_array_make(pool, 2, sizeof(const char *));
    apr_array_header_t *keys = NULL;
    const char *err = NULL;
    va_list ap;

    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *)) {
        APR_ARRAY_PUSH(pems, const char *) = pem(name);
    }
    va_end(ap);
    ck_assert_msg(rsp_saml_decrypt_keys_load(&keys, pool, pems, &err)
                  == APR_SUCCESS, "keys: %s", err ? err : "?");
    ck_assert_ptr_nonnull(keys);
    ck_assert_int_eq(keys->nelts, pems->nelts);
    return keys;
}

static apr_status_t doc_free(void *doc)
{
    xmlFreeDoc(doc);
    return APR_SUCCESS;
}

/* The shape of the fixture NAME (an EncryptedAssertion, accepted by
 * rsp_saml_shape), its document freed with the test's pool. */
static rsp_shape_t *shape_of(const char *name)
{
    rsp_shape_t *shape = apr_pcalloc(pool, sizeof(*shape));
    const char *check = NULL, *detail = NULL;
    xmlDocPtr doc = NULL;
    char *xml;
    apr_size_t len;

    ck_assert_int_eq(rsp_b64_decode(pool, rsp_unit_saml_case(pool, name), 1,
                                    &xml, &len), 0);
    ck_assert_msg(rsp_saml_shape(shape, pool, xml, len, &doc, &check, &detail)
                  == APR_SUCCESS, "%s: shape refused, check=%s: %s", name,
                  check ? check : "?", detail ? detail : "?");
    ck_assert_ptr_nonnull(doc);
    apr_pool_cleanup_register(pool, doc, doc_free, apr_pool_cleanup_null);
    ck_assert_int_eq(shape->encrypted, 1);
    ck_assert_ptr_nonnull(shape->enc_data);
    ck_assert_ptr_nonnull(shape->enc_key);
    return shape;
}

typedef struct {
    apr_status_t rv;
    const char *id, *check, *detail;
} verdict_t;

static verdict_t decrypt(const rsp_shape_t *shape,
                         const apr_array_header_t *keys, const char *names)
{
    verdict_t v;

    v.id = "unset";
    v.check = v.detail = NULL;
    v.rv = rsp_saml_decrypt_check(pool, keys, names, shape, &v.id, &v.check,
                                  &v.detail);
    if (v.rv == APR_SUCCESS) {
        ck_assert_msg(v.id && v.id[0] == '_', "no ID: %s", v.id ? v.id : "NULL");
        ck_assert_ptr_null(v.check);
    }
    else {
        ck_assert_int_eq(v.rv, APR_EGENERAL);
        ck_assert_ptr_nonnull(v.check);
        ck_assert_msg(v.detail && *v.detail, "check=%s without a detail",
                      v.check);
    }
    return v;
}

#define ASSERT_REFUSED(v, c, in_detail) do {                                  \
        verdict_t v_ = (v);                                                    \
        ck_assert_msg(v_.rv != APR_SUCCESS, "decrypted (ID %s), expected "    \
                      "check=%s", v_.id, (c));                                 \
        ck_assert_msg(!strcmp(v_.check, (c)), "check=%s (%s), expected "      \
                      "check=%s", v_.check, v_.detail, (c));                   \
        ck_assert_msg(strstr(v_.detail, (in_detail)), "detail \"%s\" does "   \
                      "not say \"%s\"", v_.detail, (in_detail));               \
    } while (0)

/* The keys xmlsec is given: each PEM in order; one that is no key is
 * named by its place, and nothing is handed out. */
START_TEST(test_keys_load)
{
    apr_array_header_t *pems = apr_array_make(pool, 2, sizeof(const char *));
    apr_array_header_t *keys = NULL, *sentinel = apr_array_make(pool, 1, 1);
    const char *err = NULL;

    keys = keys_of("sp", "other", NULL);
    ck_assert_ptr_nonnull(APR_ARRAY_IDX(keys, 0, void *));
    ck_assert_ptr_nonnull(APR_ARRAY_IDX(keys, 1, void *));
    ck_assert_ptr_ne(APR_ARRAY_IDX(keys, 0, void *),
                     APR_ARRAY_IDX(keys, 1, void *));
    /* none: an empty list */
    keys = NULL;
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, &err),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(keys);
    ck_assert_int_eq(keys->nelts, 0);
    /* the second is no key: refused, named by its place */
    APR_ARRAY_PUSH(pems, const char *) = pem("sp");
    APR_ARRAY_PUSH(pems, const char *) = "-----BEGIN PRIVATE KEY-----\n"
        "bm90IGEga2V5\n-----END PRIVATE KEY-----\n";
    keys = sentinel;
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, &err),
                     APR_EGENERAL);
    ck_assert_str_eq(err, "xmlsec cannot load decryption key 2");
    ck_assert_ptr_eq(keys, sentinel);
    /* the first: named first */
    APR_ARRAY_IDX(pems, 0, const char *) = "";
    err = NULL;
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, &err),
                     APR_EGENERAL);
    ck_assert_str_eq(err, "xmlsec cannot load decryption key 1");
    ck_assert_ptr_eq(keys, sentinel);
}
END_TEST

/* Each case that reaches decryption, decrypted with the SP's key alone:
 * the same verdict as the response path's, given here by
 * rsp_saml_decrypt_check itself; the ID of what it accepts is the one the
 * response path yields. The CipherReference never reaches it: the shape
 * refuses it first. */
START_TEST(test_decrypt_case)
{
    const rsp_unit_saml_case_t *c = &cases[_i];
    rsp_assertion_t *a;
    const char *check = NULL, *detail = NULL;
    verdict_t v;

    if (c->check && !strcmp(c->check, "encryption")) {
        rsp_shape_t shape;
        char *xml;
        apr_size_t len;

        ck_assert_int_eq(rsp_b64_decode(pool, rsp_unit_saml_case(pool, c->name),
                                        1, &xml, &len), 0);
        ck_assert_int_ne(rsp_saml_shape(&shape, pool, xml, len, NULL, &check,
                                        &detail), APR_SUCCESS);
        ck_assert_str_eq(check, "encryption");
        return;
    }
    v = decrypt(shape_of(c->name), keys_of("sp", NULL), "sp");
    if (!c->check) {
        ck_assert_msg(v.rv == APR_SUCCESS, "%s: refused, check=%s: %s",
                      c->name, v.check, v.detail);
        ck_assert_int_eq(rsp_unit_saml_process(rsp_unit_saml_case(pool, c->name),
                                               &a, &check, &detail),
                         APR_SUCCESS);
        ck_assert_str_eq(v.id, a->id);
        ck_assert_int_eq(a->encrypted, 1);
    }
    else {
        ck_assert_msg(v.rv != APR_SUCCESS, "%s: decrypted (ID %s), expected "
                      "check=%s", c->name, v.id, c->check);
        ck_assert_msg(!strcmp(v.check, c->check), "%s: check=%s (%s), "
                      "expected check=%s", c->name, v.check, v.detail,
                      c->check);
        ck_assert_ptr_null(v.id);
    }
}
END_TEST

/* The keys are tried in order until one decrypts the EncryptedKey; the
 * detail of a refusal says which were tried (the names given). */
START_TEST(test_keys_in_order)
{
    const rsp_shape_t *ours = shape_of("enc-good");
    const rsp_shape_t *theirs = shape_of("enc-another-key");
    apr_array_header_t *none = apr_array_make(pool, 1, sizeof(void *));
    verdict_t v;

    ck_assert_int_eq(decrypt(ours, keys_of("sp", NULL), "sp").rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(ours, keys_of("other", "sp", NULL), "o, s").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(ours, keys_of("sp", "other", NULL), "s, o").rv,
                     APR_SUCCESS);
    ASSERT_REFUSED(decrypt(ours, keys_of("other", NULL), "other-fp"), "decrypt",
                   "cannot be decrypted with any key of this SP (tried: "
                   "other-fp)");
    ASSERT_REFUSED(decrypt(ours, none, "-"), "decrypt", "(tried: -)");
    ASSERT_REFUSED(decrypt(ours, NULL, "-"), "decrypt", "(tried: -)");
    /* for another SP: its key decrypts it, wherever it is in the list */
    ASSERT_REFUSED(decrypt(theirs, keys_of("sp", NULL), "sp"), "decrypt",
                   "cannot be decrypted with any key");
    v = decrypt(theirs, keys_of("other", NULL), "other");
    ck_assert_int_eq(v.rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(theirs, keys_of("sp", "other", NULL), "s, o").rv,
                     APR_SUCCESS);
    /* the detail names the algorithms, from the shape */
    v = decrypt(theirs, none, "-");
    ck_assert_ptr_nonnull(strstr(v.detail, rsp_alg_name(theirs->data_alg)));
    ck_assert_ptr_nonnull(strstr(v.detail, rsp_alg_name(theirs->key_alg)));
}
END_TEST

/* Too much ciphertext to be an assertion: refused before the private key
 * is used (with no key at all, the same refusal); just past the limit in
 * plaintext, the keys are tried and the plaintext refused. */
START_TEST(test_size_before_keys)
{
    const rsp_shape_t *large = shape_of("enc-size-large");
    const rsp_shape_t *over = shape_of("enc-size-over");
    apr_array_header_t *none = apr_array_make(pool, 1, sizeof(void *));

    ASSERT_REFUSED(decrypt(large, none, "-"), "decrypted-size",
                   "bytes of ciphertext");
    ASSERT_REFUSED(decrypt(large, keys_of("sp", NULL), "sp"), "decrypted-size",
                   "bytes of ciphertext");
    ASSERT_REFUSED(decrypt(over, none, "-"), "decrypt",
                   "cannot be decrypted with any key");
    ASSERT_REFUSED(decrypt(over, keys_of("sp", NULL), "sp"), "decrypted-size",
                   "decrypts to");
    ck_assert_int_eq(decrypt(shape_of("enc-size-at-limit"), keys_of("sp", NULL),
                             "sp").rv, APR_SUCCESS);
}
END_TEST

/* The first element child of node named name (XML Encryption's
 * namespace), or NULL. */
static xmlNodePtr xenc_child(xmlNodePtr node, const char *name)
{
    xmlNodePtr c;

    for (c = node ? node->children : NULL; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE && c->ns
            && !strcmp((const char *)c->ns->href, RSP_XENC_NS)
            && !strcmp((const char *)c->name, name)) {
            return c;
        }
    }
    return NULL;
}

/* One base64 character in the middle of the CipherValue of node changed
 * (to another base64 character). */
static void tamper(xmlNodePtr node)
{
    xmlNodePtr cv = xenc_child(xenc_child(node, "CipherData"), "CipherValue");
    xmlChar *text;
    char *s;
    apr_size_t i;

    ck_assert_ptr_nonnull(cv);
    text = xmlNodeGetContent(cv);
    ck_assert_ptr_nonnull(text);
    s = apr_pstrdup(pool, (const char *)text);
    xmlFree(text);
    for (i = strlen(s) / 2; s[i] && (s[i] == '\n' || s[i] == '\r'); i++)
        ;
    ck_assert(s[i] && s[i] != '=');
    s[i] = s[i] == 'A' ? 'B' : 'A';
    xmlNodeSetContent(cv, (const xmlChar *)s);
}

/* A ciphertext changed after it was encrypted: the EncryptedKey's (no
 * key decrypts it), the EncryptedData's (AES-GCM: its tag fails under
 * the key the EncryptedKey carries). */
START_TEST(test_tampered)
{
    rsp_shape_t *shape = shape_of("enc-good");
    apr_array_header_t *keys = keys_of("sp", NULL);

    ck_assert_int_eq(decrypt(shape, keys, "sp").rv, APR_SUCCESS);
    ck_assert_str_eq(rsp_alg_name(shape->data_alg), "aes128-gcm");
    tamper(shape->enc_data);
    ASSERT_REFUSED(decrypt(shape, keys, "sp"), "decrypt",
                   "does not decrypt with the key its EncryptedKey carries");

    shape = shape_of("enc-good");
    tamper(shape->enc_key);
    ASSERT_REFUSED(decrypt(shape, keys, "sp"), "decrypt",
                   "cannot be decrypted with any key of this SP (tried: sp)");
}
END_TEST

/* Nothing to decrypt: no EncryptedData, or no EncryptedKey beside it. */
START_TEST(test_nothing_to_decrypt)
{
    rsp_shape_t *shape = shape_of("enc-good"), copy;
    apr_array_header_t *keys = keys_of("sp", NULL);

    copy = *shape;
    copy.enc_key = NULL;
    ASSERT_REFUSED(decrypt(&copy, keys, "sp"), "decrypt",
                   "no EncryptedData or EncryptedKey");
    copy = *shape;
    copy.enc_data = NULL;
    ASSERT_REFUSED(decrypt(&copy, keys, "sp"), "decrypt",
                   "no EncryptedData or EncryptedKey");
    memset(&copy, 0, sizeof(copy));
    ASSERT_REFUSED(decrypt(&copy, keys, "sp"), "decrypt",
                   "no EncryptedData or EncryptedKey");
}
END_TEST

static Suite *decrypt_suite(void)
{
    Suite *s = suite_create("rsp_saml_decrypt");
    TCase *tc = tcase_create("encrypted");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_case, 0, NCASES);
    tcase_add_test(tc, test_cipher_reference_never_fetched);
    suite_add_tcase(s, tc);

    tc = tcase_create("decrypt");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_keys_load);
    tcase_add_loop_test(tc, test_decrypt_case, 0, NCASES);
    tcase_add_test(tc, test_keys_in_order);
    tcase_add_test(tc, test_size_before_keys);
    tcase_add_test(tc, test_tampered);
    tcase_add_test(tc, test_nothing_to_decrypt);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("encrypted", decrypt_suite);
}
