/* Unit tests for rsp_saml_decrypt.c (and rsp_xenc.c under it) on
 * EncryptedAssertions really encrypted for the SP's certificate
 * (make_saml_cases.py: group encrypted, by the test IdP's xmlsec1 engine,
 * each named for what its plaintext is; group variants, by
 * python3-cryptography, another implementation than the one tested).
 *
 * Through the response path (rsp_saml_process_response): what the
 * plaintext may be (one saml:Assertion, the size, element, attribute and
 * depth limits, at and past each), another SP's key, a CipherReference
 * (never fetched); every key transport (rsa-oaep-mgf1p with each digest,
 * xmlenc11#rsa-oaep with each digest and MGF, labels), every AES in GCM
 * and CBC, the recipient's key named each way or not at all, another
 * recipient's key first, inline and peer keys, the signatures around and
 * inside; refusals before anything is decrypted (RSA-1.5, an unknown
 * digest or MGF, too many keys); and what does not decrypt, whatever
 * broke, refused with one check= and one detail per data mode.
 *
 * Directly (rsp_saml_decrypt.h): the keys loaded (and what a KeyInfo
 * may name them by); each case decrypted with the SP's key alone; the
 * keys tried until one decrypts (another SP's key alone, before or after
 * ours, none); a ciphertext too large refused before any key is tried;
 * an EncryptedKey or EncryptedData changed after it was encrypted;
 * nothing to decrypt; the Response Lasso is given (the assertion in
 * place, a signed Response's signature gone, whether anything is left to
 * verify). */
#include <stdarg.h>
#include <string.h>

#include <apr_strings.h>
#include <libxml/tree.h>

#include "rsp_saml.h"
#include "rsp_saml_decrypt.h"
#include "rsp_saml_int.h"
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

/* The same through python3-cryptography's encryption: x-... accepted,
 * r-... refused before (or, for signatures, after) decryption, u-... what
 * does not decrypt. The key transport matrix is test_transports'. */
static const rsp_unit_saml_case_t variants[] = {
    {"x-mgf1p-nodigest", NULL, "alice"},
    {"x-mgf1p-mgf1sha1", NULL, "alice"},
    {"x-oaep-nodigest-nomgf", NULL, "alice"},
    {"x-mgf1p-label", NULL, "alice"},
    {"x-oaep-label", NULL, "alice"},
    {"x-aes128-gcm", NULL, "alice"},
    {"x-aes192-gcm", NULL, "alice"},
    {"x-aes256-gcm", NULL, "alice"},
    {"x-aes128-cbc", NULL, "alice"},
    {"x-aes192-cbc", NULL, "alice"},
    {"x-aes256-cbc", NULL, "alice"},
    {"x-aes256-cbc-random-padding", NULL, "alice"},
    {"x-ki-cert", NULL, "alice"},
    {"x-ki-issuer-serial", NULL, "alice"},
    {"x-ki-subject-name", NULL, "alice"},
    {"x-ki-key-name", NULL, "alice"},
    {"x-ki-key-name-sha256", NULL, "alice"},
    {"x-ki-key-name-unknown", NULL, "alice"},
    {"x-others-cert", NULL, "alice"},
    {"x-others-issuer-serial", NULL, "alice"},
    {"x-others-none", NULL, "alice"},
    {"x-peer-mgf1p", NULL, "alice"},
    {"x-peer-oaep", NULL, "alice"},
    {"x-peer-others", NULL, "alice"},
    {"x-response-signed", NULL, "alice"},
    {"x-both-signed", NULL, "alice"},
    {"r-neither-signed", "signature", NULL},
    {"r-response-signed-assertion-broken", "signature", NULL},
    {"r-rsa-1_5", "encryption-algorithm", NULL},
    {"r-mgf1p-mgf1sha256", "encryption-algorithm", NULL},
    {"r-digest-md5", "encryption-algorithm", NULL},
    {"r-mgf-unknown", "encryption-algorithm", NULL},
    {"r-too-many-keys", "encryption", NULL},
    /* GCM: the plaintext is authenticated, what is wrong with it is said */
    {"u-gcm-two-assertions", "assertion-count", NULL},
};
#define NVARIANTS ((int)(sizeof(variants) / sizeof(variants[0])))

/* What does not decrypt, per data mode (make_saml_cases.py: u-MODE-...):
 * one check=, one detail. */
static const char *const broken[] = {
    "tag", "padding", "truncate", "data", "key", "key-size", "label",
    "wrong-key", "wrong-cert", "not-base64", "iv-only", "two-assertions",
};
#define NBROKEN ((int)(sizeof(broken) / sizeof(broken[0])))

static const char *const digests[] = {
    "sha1", "sha224", "sha256", "sha384", "sha512"
};
#define NDIGESTS 5

START_TEST(test_case)
{
    rsp_unit_saml_check_case(&cases[_i]);
}
END_TEST

START_TEST(test_variant)
{
    rsp_unit_saml_check_case(&variants[_i]);
}
END_TEST

/* rsa-oaep-mgf1p with each digest; xmlenc11#rsa-oaep with each digest
 * and each MGF: signed in, as alice (_i: digest x 6 + MGF, 5 for
 * rsa-oaep-mgf1p). */
START_TEST(test_transports)
{
    rsp_unit_saml_case_t c = {NULL, NULL, "alice"};
    int d = _i / (NDIGESTS + 1), m = _i % (NDIGESTS + 1);

    c.name = m == NDIGESTS
        ? apr_psprintf(pool, "x-mgf1p-%s", digests[d])
        : apr_psprintf(pool, "x-oaep-%s-mgf1%s", digests[d], digests[m]);
    rsp_unit_saml_check_case(&c);
}
END_TEST

/* Whatever broke, one refusal: check=decrypt, and per data mode one
 * detail (the algorithms named are the message's; nothing says what
 * failed). With AES-CBC (not authenticated) a plaintext that is no
 * assertion is that refusal too; with AES-GCM it is said. The same
 * verdict directly (rsp_saml_decrypt) and through the response path. */
START_TEST(test_no_oracle)
{
    static const char *const modes[] = {"gcm", "cbc"};
    int m, i;

    for (m = 0; m < 2; m++) {
        const char *first = NULL, *first_direct = NULL;
        for (i = 0; i < NBROKEN; i++) {
            const char *name = apr_psprintf(pool, "u-%s-%s", modes[m],
                                            broken[i]);
            rsp_assertion_t *a;
            const char *check = NULL, *detail = NULL;
            rsp_decrypted_t d;
            rsp_shape_t *shape;
            apr_status_t rv;

            if ((m == 0 && (!strcmp(broken[i], "padding")
                            || !strcmp(broken[i], "two-assertions")))
                || (m == 1 && !strcmp(broken[i], "tag"))) {
                continue;
            }
            rv = rsp_unit_saml_process(rsp_unit_saml_case(pool, name), &a,
                                       &check, &detail);
            ck_assert_msg(rv != APR_SUCCESS, "%s: accepted", name);
            ck_assert_msg(!strcmp(check, "decrypt"), "%s: check=%s (%s)", name,
                          check, detail);
            if (!first) {
                first = detail;
                ck_assert_ptr_nonnull(strstr(first, "cannot be decrypted "
                                             "with any key of this SP"));
                ck_assert_ptr_nonnull(strstr(first, m ? "aes128-cbc"
                                                      : "aes128-gcm"));
                ck_assert_ptr_nonnull(strstr(
                    first, "rsa-oaep (sha256, mgf1sha256)"));
                ck_assert((strstr(first, "AES-CBC is not authenticated")
                           != NULL) == (m == 1));
            }
            ck_assert_msg(!strcmp(detail, first), "%s: detail \"%s\", the "
                          "others' \"%s\"", name, detail, first);
            shape = apr_pcalloc(pool, sizeof(*shape));
            {
                char *xml;
                apr_size_t len;
                xmlDocPtr doc = NULL;
                ck_assert_int_eq(rsp_b64_decode(pool, rsp_unit_saml_case(
                                                    pool, name), 1, &xml, &len), 0);
                ck_assert_int_eq(rsp_saml_shape(shape, pool, xml, len, &doc,
                                                &check, &detail), APR_SUCCESS);
                rv = rsp_saml_decrypt(&d, pool, rsp_saml_decryption_keys(
                                          &saml_sp), "sp", shape, &check,
                                      &detail);
                xmlFreeDoc(doc);
            }
            ck_assert_msg(rv != APR_SUCCESS && !strcmp(check, "decrypt"),
                          "%s: directly, check=%s", name,
                          rv == APR_SUCCESS ? "(none)" : check);
            if (!first_direct) {
                first_direct = detail;
            }
            ck_assert_str_eq(detail, first_direct);
        }
    }
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

/* ---- EncryptedIDs in an assertion's Subject (group ids) ---- */

/* id-x-...: accepted as alice, the NameID decrypted here; id-r-...:
 * refused with that check= (before anything is decrypted, or, for the
 * signature, before the EncryptedID is). The key transport matrix is
 * test_id_transports'. */
static const rsp_unit_saml_case_t ids[] = {
    {"id-x-oaep-label", NULL, "alice"},
    {"id-x-aes128-gcm", NULL, "alice"},
    {"id-x-aes192-gcm", NULL, "alice"},
    {"id-x-aes256-gcm", NULL, "alice"},
    {"id-x-aes128-cbc", NULL, "alice"},
    {"id-x-aes192-cbc", NULL, "alice"},
    {"id-x-aes256-cbc", NULL, "alice"},
    {"id-x-ki-cert", NULL, "alice"},
    {"id-x-ki-issuer-serial", NULL, "alice"},
    {"id-x-ki-subject-name", NULL, "alice"},
    {"id-x-ki-key-name", NULL, "alice"},
    {"id-x-others", NULL, "alice"},
    {"id-x-peer", NULL, "alice"},
    {"id-x-xmlsec1", NULL, "alice"},
    {"id-x-lasso", NULL, "alice"},
    {"id-x-response-signed", NULL, "alice"},
    {"id-x-both-signed", NULL, "alice"},
    {"id-x-in-encrypted-assertion", NULL, "alice"},
    {"id-x-qualified", NULL, "alice"},
    {"id-r-rsa-1_5", "encryption-algorithm", NULL},
    {"id-r-mgf1p-mgf1sha256", "encryption-algorithm", NULL},
    {"id-r-digest-md5", "encryption-algorithm", NULL},
    {"id-r-aes-unknown", "encryption-algorithm", NULL},
    {"id-r-too-many-keys", "encryption", NULL},
    {"id-r-signature-broken", "signature", NULL},
    /* AES-GCM: what it holds is said */
    {"id-r-gcm-base-id", "subject", NULL},
    {"id-r-gcm-two-name-ids", "subject", NULL},
    {"id-r-gcm-empty", "subject", NULL},
    {"id-r-gcm-comment", "subject", NULL},
    {"id-r-gcm-too-large", "decrypted-size", NULL},
};
#define NIDS ((int)(sizeof(ids) / sizeof(ids[0])))

/* What does not decrypt, per data mode (id-u-MODE-...). */
static const char *const id_broken[] = {
    "tag", "padding", "truncate", "data", "key", "key-size", "label",
    "wrong-key", "wrong-cert", "not-base64", "iv-only", "base-id",
};
#define NID_BROKEN ((int)(sizeof(id_broken) / sizeof(id_broken[0])))

static void check_id_case(const rsp_unit_saml_case_t *c)
{
    rsp_assertion_t *a = NULL;
    const char *check = NULL, *detail = NULL;

    rsp_unit_saml_check_case(c);
    if (!c->check) {
        ck_assert_int_eq(rsp_unit_saml_process(rsp_unit_saml_case(pool, c->name),
                                               &a, &check, &detail),
                         APR_SUCCESS);
        ck_assert_msg(a->encrypted_id, "%s: the NameID was not decrypted "
                      "here", c->name);
        ck_assert_int_eq(a->encrypted, !strcmp(c->name,
                                               "id-x-in-encrypted-assertion"));
    }
}

START_TEST(test_id)
{
    check_id_case(&ids[_i]);
}
END_TEST

/* rsa-oaep-mgf1p with each digest; xmlenc11#rsa-oaep with each digest
 * and each MGF, in the Subject's EncryptedID: signed in, as alice. */
START_TEST(test_id_transports)
{
    rsp_unit_saml_case_t c = {NULL, NULL, "alice"};
    int d = _i / (NDIGESTS + 1), m = _i % (NDIGESTS + 1);

    c.name = m == NDIGESTS
        ? apr_psprintf(pool, "id-x-mgf1p-%s", digests[d])
        : apr_psprintf(pool, "id-x-oaep-%s-mgf1%s", digests[d], digests[m]);
    check_id_case(&c);
}
END_TEST

/* Whatever broke in the EncryptedID, one refusal: check=decrypt, and per
 * data mode one detail (with AES-CBC a plaintext that is no NameID is
 * that refusal too). */
START_TEST(test_id_no_oracle)
{
    static const char *const modes[] = {"gcm", "cbc"};
    int m, i;

    for (m = 0; m < 2; m++) {
        const char *first = NULL;
        for (i = 0; i < NID_BROKEN; i++) {
            const char *name = apr_psprintf(pool, "id-u-%s-%s", modes[m],
                                            id_broken[i]);
            rsp_assertion_t *a;
            const char *check = NULL, *detail = NULL;
            apr_status_t rv;

            if ((m == 0 && !strcmp(id_broken[i], "padding"))
                || (m == 1 && !strcmp(id_broken[i], "tag"))) {
                continue;
            }
            rv = rsp_unit_saml_process(rsp_unit_saml_case(pool, name), &a,
                                       &check, &detail);
            if (m == 0 && !strcmp(id_broken[i], "base-id")) {
                /* GCM: authenticated, so said */
                ck_assert_msg(rv != APR_SUCCESS && !strcmp(check, "subject"),
                              "%s: check=%s", name, check ? check : "(none)");
                continue;
            }
            ck_assert_msg(rv != APR_SUCCESS, "%s: accepted", name);
            ck_assert_msg(!strcmp(check, "decrypt"), "%s: check=%s (%s)", name,
                          check, detail);
            if (!first) {
                first = detail;
                ck_assert_ptr_nonnull(strstr(first, "the assertion's Subject: "
                                             "the EncryptedID from "
                                             IDP_ENTITY));
                ck_assert_ptr_nonnull(strstr(first, "cannot be decrypted "
                                             "with any key of this SP"));
                ck_assert_ptr_nonnull(strstr(first, m ? "aes128-cbc"
                                                      : "aes128-gcm"));
                ck_assert_ptr_nonnull(strstr(
                    first, "rsa-oaep (sha256, mgf1sha256)"));
                ck_assert((strstr(first, "AES-CBC is not authenticated")
                           != NULL) == (m == 1));
            }
            ck_assert_msg(!strcmp(detail, first), "%s: detail \"%s\", the "
                          "others' \"%s\"", name, detail, first);
        }
    }
}
END_TEST

/* What an EncryptedID may decrypt to (rsp_saml_name_id_plaintext). */
START_TEST(test_name_id_plaintext)
{
#define SAMLNS "xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\""
    static const struct {
        const char *text;
        const char *check;     /* NULL: accepted */
    } t[] = {
        {"<saml:NameID " SAMLNS ">alice</saml:NameID>", NULL},
        {"\n <saml:NameID " SAMLNS " Format=\"f\" NameQualifier=\"nq\" "
         "SPNameQualifier=\"spq\" SPProvidedID=\"spp\">alice</saml:NameID> ",
         NULL},
        {"", "subject"},
        {"alice", "subject"},
        {"<saml:BaseID " SAMLNS ">alice</saml:BaseID>", "subject"},
        {"<saml:NameID " SAMLNS ">alice</saml:NameID><saml:NameID " SAMLNS
         ">bob</saml:NameID>", "subject"},
        {"<saml:NameID " SAMLNS ">alice</saml:NameID>x", "subject"},
        {"<saml:NameID " SAMLNS ">alice</saml:NameID><!-- c -->", "subject"},
        {"<?xml version=\"1.0\"?><saml:NameID " SAMLNS ">alice</saml:NameID>",
         "subject"},
        {"<saml:NameID " SAMLNS "></saml:NameID>", "subject"},
        {"<saml:NameID " SAMLNS ">al<!-- c -->ice</saml:NameID>", "subject"},
        {"<saml:NameID " SAMLNS "><![CDATA[alice]]></saml:NameID>", "subject"},
        {"<saml:NameID " SAMLNS ">al&amp;ice</saml:NameID>", NULL},
        {"<saml:NameID " SAMLNS "><b>alice</b></saml:NameID>", "xml-depth"},
        /* libxml2 reads an undeclared prefix into the name: no NameID */
        {"<saml:NameID>alice</saml:NameID>", "subject"},
        {"<saml:NameID " SAMLNS ">alice</saml:Name>", "xml"},
        {"<!DOCTYPE x><saml:NameID " SAMLNS ">alice</saml:NameID>", "xml"},
        {"<NameID xmlns=\"urn:oasis:names:tc:SAML:2.0:assertion\">alice"
         "</NameID>", NULL},
    };
    int i;

    for (i = 0; i < (int)(sizeof(t) / sizeof(t[0])); i++) {
        rsp_name_id_t n;
        const char *check = NULL;
        const char *why = rsp_saml_name_id_plaintext(pool, t[i].text,
                                                     strlen(t[i].text), &n,
                                                     &check);
        if (!t[i].check) {
            ck_assert_msg(!why, "%d: %s", i, why);
            ck_assert_str_eq(n.value, i == 12 ? "al&ice" : "alice");
        }
        else {
            ck_assert_msg(why && check && !strcmp(check, t[i].check),
                          "%d: check=%s (%s), expected %s", i,
                          check ? check : "(none)", why ? why : "accepted",
                          t[i].check);
            ck_assert_ptr_null(n.value);
        }
    }
    {
        rsp_name_id_t n;
        const char *check = NULL;
        char *big = apr_pcalloc(pool, RSP_DECRYPTED_ID_MAX_SIZE + 100);
        ck_assert_ptr_null(rsp_saml_name_id_plaintext(
            pool, t[1].text, strlen(t[1].text), &n, &check));
        ck_assert_str_eq(n.format, "f");
        ck_assert_str_eq(n.name_qualifier, "nq");
        ck_assert_str_eq(n.sp_name_qualifier, "spq");
        ck_assert_str_eq(n.sp_provided_id, "spp");
        apr_snprintf(big, RSP_DECRYPTED_ID_MAX_SIZE + 100,
                     "<saml:NameID " SAMLNS ">%0*d</saml:NameID>",
                     RSP_DECRYPTED_ID_MAX_SIZE, 0);
        ck_assert_ptr_nonnull(rsp_saml_name_id_plaintext(pool, big, strlen(big),
                                                         &n, &check));
        ck_assert_str_eq(check, "decrypted-size");
    }
#undef SAMLNS
}
END_TEST

/* What an EncryptedID must be before any key is used
 * (rsp_saml_encrypted_id_shape). */
START_TEST(test_encrypted_id_shape)
{
#define EID_OPEN "<saml:EncryptedID xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" " \
    "xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\" " \
    "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">"
#define EDATA_OPEN(alg) "<xenc:EncryptedData><xenc:EncryptionMethod Algorithm=\"" \
    alg "\"/>"
#define EKEY(alg) "<xenc:EncryptedKey><xenc:EncryptionMethod Algorithm=\"" alg \
    "\"/><xenc:CipherData><xenc:CipherValue>AAAA</xenc:CipherValue>" \
    "</xenc:CipherData></xenc:EncryptedKey>"
#define CDATA "<xenc:CipherData><xenc:CipherValue>AAAA</xenc:CipherValue>" \
    "</xenc:CipherData>"
    static const struct {
        const char *xml;
        const char *check;
    } t[] = {
        {EID_OPEN EDATA_OPEN(RSP_ALG_AES128_GCM) "<ds:KeyInfo>"
         EKEY(RSP_ALG_RSA_OAEP) "</ds:KeyInfo>" CDATA "</xenc:EncryptedData>"
         "</saml:EncryptedID>", NULL},
        {EID_OPEN EDATA_OPEN(RSP_ALG_AES128_GCM) CDATA "</xenc:EncryptedData>"
         EKEY(RSP_ALG_RSA_OAEP_MGF1P) "</saml:EncryptedID>", NULL},
        {EID_OPEN EDATA_OPEN(RSP_ALG_AES128_GCM) "<ds:KeyInfo>"
         EKEY(RSP_ALG_RSA_1_5) "</ds:KeyInfo>" CDATA "</xenc:EncryptedData>"
         "</saml:EncryptedID>", "encryption-algorithm"},
        {EID_OPEN EDATA_OPEN(RSP_XENC_NS "tripledes-cbc") "<ds:KeyInfo>"
         EKEY(RSP_ALG_RSA_OAEP) "</ds:KeyInfo>" CDATA "</xenc:EncryptedData>"
         "</saml:EncryptedID>", "encryption-algorithm"},
        {EID_OPEN EDATA_OPEN(RSP_ALG_AES128_GCM) CDATA "</xenc:EncryptedData>"
         "</saml:EncryptedID>", "encryption"},
        {EID_OPEN EDATA_OPEN(RSP_ALG_AES128_GCM) "<ds:KeyInfo>"
         EKEY(RSP_ALG_RSA_OAEP) "</ds:KeyInfo><xenc:CipherData>"
         "<xenc:CipherReference URI=\"http://127.0.0.1:9/x\"/></xenc:CipherData>"
         "</xenc:EncryptedData></saml:EncryptedID>", "encryption"},
        {EID_OPEN "</saml:EncryptedID>", "encryption"},
        {"<saml:NameID xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\">"
         "alice</saml:NameID>", "xml"},
        {"<!DOCTYPE x>" EID_OPEN "</saml:EncryptedID>", "xml"},
        {EID_OPEN, "xml"},
    };
    int i;

    for (i = 0; i < (int)(sizeof(t) / sizeof(t[0])); i++) {
        rsp_shape_t shape;
        xmlDocPtr doc = NULL;
        const char *check = NULL, *detail = NULL;
        apr_status_t rv = rsp_saml_encrypted_id_shape(
            &shape, pool, t[i].xml, strlen(t[i].xml), IDP_ENTITY, &doc,
            &check, &detail);
        if (!t[i].check) {
            ck_assert_msg(rv == APR_SUCCESS, "%d: check=%s (%s)", i, check,
                          detail);
            ck_assert_ptr_nonnull(doc);
            ck_assert_ptr_nonnull(shape.enc_key);
            ck_assert_int_eq(shape.keys, 1);
            xmlFreeDoc(doc);
        }
        else {
            ck_assert_msg(rv != APR_SUCCESS && !strcmp(check, t[i].check),
                          "%d: check=%s, expected %s", i,
                          rv == APR_SUCCESS ? "(none)" : check, t[i].check);
            ck_assert_ptr_null(doc);
        }
    }
#undef EID_OPEN
#undef EDATA_OPEN
#undef EKEY
#undef CDATA
}
END_TEST

/* ---- rsp_saml_decrypt.h itself ---- */

/* "sp", "other" or "third": the private key's PEM (DIR/NAME.key), or its
 * certificate's (DIR/NAME.crt). */
static const char *pem(const char *name)
{
    return rsp_unit_saml_file(pool, apr_pstrcat(pool, name, ".key", NULL));
}

static const char *crt(const char *name)
{
    return rsp_unit_saml_file(pool, apr_pstrcat(pool, name, ".crt", NULL));
}

/* The keys of the NULL-terminated names (sp, other, third), in that
 * order, loaded with their certificates (without, when the name starts
 * with '-': "-sp"). */
static apr_array_header_t *keys_of(const char *name, ...)
{
    apr_array_header_t *pems = apr_array_make(pool, 2, sizeof(const char *));
    apr_array_header_t *certs = apr_array_make(pool, 2, sizeof(const char *));
    apr_array_header_t *keys = NULL;
    const char *err = NULL;
    va_list ap;

    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *)) {
        int bare = name[0] == '-';
        APR_ARRAY_PUSH(pems, const char *) = pem(name + bare);
        APR_ARRAY_PUSH(certs, const char *) = bare ? NULL : crt(name);
    }
    va_end(ap);
    ck_assert_msg(rsp_saml_decrypt_keys_load(&keys, pool, pems, certs, &err)
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
 * rsp_saml_shape), its document (in *docp when docp is not NULL) freed
 * with the test's pool. */
static rsp_shape_t *shape_doc(const char *name, xmlDocPtr *docp)
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
    ck_assert_ptr_nonnull(shape->enc);
    ck_assert_ptr_nonnull(shape->enc_data);
    ck_assert_ptr_nonnull(shape->enc_key);
    if (docp) {
        *docp = doc;
    }
    return shape;
}

static rsp_shape_t *shape_of(const char *name)
{
    return shape_doc(name, NULL);
}

typedef struct {
    apr_status_t rv;
    rsp_decrypted_t dec;
    const char *id, *check, *detail;
} verdict_t;

static verdict_t decrypt(const rsp_shape_t *shape,
                         const apr_array_header_t *keys, const char *names)
{
    verdict_t v;

    v.id = "unset";
    v.check = v.detail = NULL;
    v.rv = rsp_saml_decrypt(&v.dec, pool, keys, names, shape, &v.check,
                            &v.detail);
    v.id = v.rv == APR_SUCCESS ? v.dec.id : NULL;
    if (v.rv == APR_SUCCESS) {
        ck_assert_msg(v.id && v.id[0] == '_', "no ID: %s", v.id ? v.id : "NULL");
        ck_assert_ptr_null(v.check);
        ck_assert_ptr_nonnull(v.dec.text);
        ck_assert_uint_eq(strlen(v.dec.text), v.dec.len);
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
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, NULL, &err),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(keys);
    ck_assert_int_eq(keys->nelts, 0);
    /* the second is no key: refused, named by its place */
    APR_ARRAY_PUSH(pems, const char *) = pem("sp");
    APR_ARRAY_PUSH(pems, const char *) = "-----BEGIN PRIVATE KEY-----\n"
        "bm90IGEga2V5\n-----END PRIVATE KEY-----\n";
    keys = sentinel;
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, NULL, &err),
                     APR_EGENERAL);
    ck_assert_str_eq(err, "decryption key 2 is no RSA private key");
    ck_assert_ptr_eq(keys, sentinel);
    /* the first: named first */
    APR_ARRAY_IDX(pems, 0, const char *) = "";
    err = NULL;
    ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, pems, NULL, &err),
                     APR_EGENERAL);
    ck_assert_str_eq(err, "decryption key 1 is no RSA private key");
    ck_assert_ptr_eq(keys, sentinel);
    /* a certificate that is none */
    {
        apr_array_header_t *one = apr_array_make(pool, 1, sizeof(char *));
        apr_array_header_t *certs = apr_array_make(pool, 1, sizeof(char *));
        APR_ARRAY_PUSH(one, const char *) = pem("sp");
        APR_ARRAY_PUSH(certs, const char *) = "no certificate";
        ck_assert_int_eq(rsp_saml_decrypt_keys_load(&keys, pool, one, certs,
                                                    &err), APR_EGENERAL);
        ck_assert_str_eq(err, "the certificate of decryption key 1 cannot be "
                         "read");
        ck_assert_ptr_eq(keys, sentinel);
    }
}
END_TEST

/* What a KeyInfo may name a key by, read from its certificate; nothing
 * without one. */
START_TEST(test_keys_named)
{
    apr_array_header_t *keys = keys_of("sp", "-other", NULL);
    const rsp_dec_key_t *sp = APR_ARRAY_IDX(keys, 0, rsp_dec_key_t *);
    const rsp_dec_key_t *bare = APR_ARRAY_IDX(keys, 1, rsp_dec_key_t *);

    ck_assert_ptr_nonnull(sp->key);
    ck_assert_ptr_nonnull(sp->cert);
    ck_assert_str_eq(sp->cn, "rsp unit sp");
    ck_assert_str_eq(sp->subject, "cn=rsp unit sp");
    ck_assert_str_eq(sp->issuer, "cn=rsp unit sp");   /* self-signed */
    ck_assert_ptr_nonnull(sp->serial);
    ck_assert_uint_eq(strspn(sp->serial, "0123456789"), strlen(sp->serial));
    ck_assert_uint_eq(strlen(sp->sha256), 64);
    ck_assert_uint_eq(strspn(sp->sha256, "0123456789abcdef"), 64);
    ck_assert_uint_eq(strlen(sp->sha1), 40);
    ck_assert_ptr_nonnull(bare->key);
    ck_assert_ptr_null(bare->cert);
    ck_assert_ptr_null(bare->serial);
    ck_assert_ptr_null(bare->sha256);
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
                   "cannot be decrypted with any key of this SP (tried: sp)");

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

/* The RSA operations a decryption that succeeds took. */
static int unwraps(const rsp_shape_t *shape, const apr_array_header_t *keys)
{
    verdict_t v = decrypt(shape, keys, "k");

    ck_assert_msg(v.rv == APR_SUCCESS, "refused: %s", v.detail);
    return v.dec.unwraps;
}

/* Which key each EncryptedKey is for: the one its KeyInfo names (a
 * certificate: the same public key, a configured certificate or not), or
 * each; one whose certificate is another's is not tried; another
 * recipient's EncryptedKey first (whose key opens the same session key). */
START_TEST(test_recipient)
{
    /* only the key named is tried; each when none is */
    ck_assert_int_eq(unwraps(shape_of("x-ki-cert"), keys_of("other", "sp", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-ki-issuer-serial"),
                             keys_of("other", "third", "sp", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-ki-subject-name"),
                             keys_of("sp", "other", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-ki-key-name"),
                             keys_of("other", "sp", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-ki-key-name-sha256"),
                             keys_of("third", "sp", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-ki-key-name-unknown"),
                             keys_of("third", "sp", NULL)), 2);
    ck_assert_int_eq(unwraps(shape_of("x-aes128-gcm"),
                             keys_of("other", "third", "sp", NULL)), 3);
    /* without its certificate a key is named by X509Certificate only */
    ck_assert_int_eq(unwraps(shape_of("x-ki-issuer-serial"),
                             keys_of("other", "-sp", NULL)), 2);
    ck_assert_int_eq(unwraps(shape_of("x-ki-cert"), keys_of("other", "-sp", NULL)), 1);
    /* another recipient's EncryptedKey named by its certificate: not
     * tried; by an issuer and serial none of ours has: tried with each
     * key (2), then ours with the one it names (1); by nothing: each with
     * each */
    ck_assert_int_eq(unwraps(shape_of("x-others-cert"), keys_of("sp", NULL)), 1);
    ck_assert_int_eq(unwraps(shape_of("x-others-issuer-serial"),
                             keys_of("other", "sp", NULL)), 3);
    ck_assert_int_eq(unwraps(shape_of("x-others-none"),
                             keys_of("other", "sp", NULL)), 4);
    ck_assert_int_eq(decrypt(shape_of("x-ki-cert"), keys_of("other", "sp", NULL),
                             "o, s").rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-ki-cert"), keys_of("-sp", NULL),
                             "s").rv, APR_SUCCESS);
    ASSERT_REFUSED(decrypt(shape_of("x-ki-cert"), keys_of("other", NULL), "o"),
                   "decrypt", "cannot be decrypted with any key of this SP "
                   "(tried: o)");
    ck_assert_int_eq(decrypt(shape_of("x-ki-issuer-serial"),
                             keys_of("third", "sp", NULL), "t, s").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-ki-issuer-serial"),
                             keys_of("-sp", NULL), "s").rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-ki-key-name"),
                             keys_of("other", "sp", NULL), "o, s").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-ki-subject-name"),
                             keys_of("sp", "other", NULL), "s, o").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-ki-key-name-sha256"),
                             keys_of("third", "sp", NULL), "t, s").rv,
                     APR_SUCCESS);
    /* another recipient first */
    ck_assert_int_eq(decrypt(shape_of("x-others-cert"), keys_of("sp", NULL),
                             "s").rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-others-cert"), keys_of("third", NULL),
                             "t").rv, APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-others-none"),
                             keys_of("other", "sp", NULL), "o, s").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("x-peer-others"), keys_of("sp", NULL),
                             "s").rv, APR_SUCCESS);
    ASSERT_REFUSED(decrypt(shape_of("x-others-cert"), keys_of("other", NULL),
                           "o"), "decrypt", "(tried: o)");
    /* for another SP's certificate: not ours, its own key decrypts it */
    ASSERT_REFUSED(decrypt(shape_of("u-gcm-wrong-cert"), keys_of("sp", NULL),
                           "s"), "decrypt", "(tried: s)");
    ck_assert_int_eq(decrypt(shape_of("u-gcm-wrong-cert"),
                             keys_of("sp", "third", NULL), "s, t").rv,
                     APR_SUCCESS);
    ck_assert_int_eq(decrypt(shape_of("u-cbc-wrong-key"),
                             keys_of("third", NULL), "t").rv, APR_SUCCESS);
}
END_TEST

/* The first element named name (any namespace) at or below n. */
static xmlNodePtr find(xmlNodePtr n, const char *name)
{
    xmlNodePtr c, got;

    for (c = n ? n->children : NULL; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name)) {
            return c;
        }
        if ((got = find(c, name)) != NULL) {
            return got;
        }
    }
    return NULL;
}

/* How names are compared: case and whitespace runs do not matter (a
 * KeyName of 200,000 spaces in the middle is one space, read in linear
 * time), a name that is none of the keys' leaves each to be tried, and
 * what a KeyInfo holds after its eighth name is not looked at (nine other
 * certificates before the SP's: the EncryptedKey is another's). */
START_TEST(test_key_names)
{
    rsp_shape_t *shape = shape_of("x-ki-key-name");
    xmlNodePtr kn = find(shape->enc, "KeyName"), x509, cert, ki;
    char *name = apr_palloc(pool, 200020);
    const char *other_b64;
    apr_time_t t0;
    int i;

    ck_assert_ptr_nonnull(kn);
    memcpy(name, "RSP", 3);
    memset(name + 3, ' ', 200000);
    strcpy(name + 200003, "Unit \t sp ");
    xmlNodeSetContent(kn, BAD_CAST name);
    t0 = apr_time_now();
    /* named: the other key is not tried */
    ck_assert_int_eq(unwraps(shape, keys_of("other", "sp", NULL)), 1);
    ck_assert(apr_time_now() - t0 < apr_time_from_sec(2));
    xmlNodeSetContent(kn, BAD_CAST "somebody else");
    ck_assert_int_eq(unwraps(shape, keys_of("other", "sp", NULL)), 2);

    shape = shape_of("x-ki-cert");
    /* the other certificate's base64, without its PEM lines */
    {
        const char *pem_text = rsp_unit_saml_file(pool, "other.crt");
        const char *b = strstr(pem_text, "-----\n") + 6;
        other_b64 = apr_pstrndup(pool, b, (apr_size_t)(strstr(b, "-----END") - b));
    }
    cert = find(shape->enc, "X509Certificate");
    x509 = cert->parent;
    ki = x509->parent;
    ck_assert_int_eq(decrypt(shape, keys_of("sp", NULL), "s").rv, APR_SUCCESS);
    for (i = 0; i < 9; i++) {
        xmlNodePtr other = xmlCopyNode(x509, 1);
        xmlNodeSetContent(other->children, BAD_CAST other_b64);
        xmlAddPrevSibling(ki->children, other);
    }
    ASSERT_REFUSED(decrypt(shape, keys_of("sp", NULL), "s"), "decrypt",
                   "(tried: s)");
}
END_TEST

/* The Response Lasso is given: the decrypted assertion where the
 * EncryptedAssertion was, nothing else of it; a signed Response without
 * its signature; verified only for a signed Response around an assertion
 * without a signature of its own (an unsigned Response never). */
static void check_splice(const char *name, int verified, int assertion_signed)
{
    xmlDocPtr doc, out;
    rsp_shape_t *shape = shape_doc(name, &doc);
    verdict_t v = decrypt(shape, keys_of("sp", NULL), "sp");
    const char *b64 = NULL, *check = NULL, *detail = NULL;
    char *xml;
    apr_size_t len;
    xmlNodePtr root, n, assertion = NULL;
    int assertions = 0, encrypted = 0, signatures = 0;
    int got = -1;
    xmlChar *id;

    ck_assert_msg(v.rv == APR_SUCCESS, "%s: %s", name, v.detail);
    ck_assert_int_eq(rsp_saml_decrypt_splice(&b64, &got, pool, doc, shape,
                                             &v.dec, &check, &detail),
                     APR_SUCCESS);
    ck_assert_msg(got == verified, "%s: verified %d", name, got);
    ck_assert_int_eq(rsp_b64_decode(pool, b64, 0, &xml, &len), 0);
    out = xmlReadMemory(xml, (int)len, NULL, NULL, XML_PARSE_NONET);
    ck_assert_ptr_nonnull(out);
    root = xmlDocGetRootElement(out);
    ck_assert_str_eq((const char *)root->name, "Response");
    for (n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) {
            continue;
        }
        assertions += !strcmp((const char *)n->name, "Assertion");
        encrypted += !strcmp((const char *)n->name, "EncryptedAssertion");
        signatures += !strcmp((const char *)n->name, "Signature");
        if (!strcmp((const char *)n->name, "Assertion")) {
            assertion = n;
        }
    }
    ck_assert_int_eq(assertions, 1);
    ck_assert_int_eq(encrypted, 0);
    ck_assert_int_eq(signatures, 0);
    id = xmlGetProp(assertion, BAD_CAST "ID");
    ck_assert_str_eq((const char *)id, v.dec.id);
    xmlFree(id);
    for (signatures = 0, n = assertion->children; n; n = n->next) {
        signatures += n->type == XML_ELEMENT_NODE
            && !strcmp((const char *)n->name, "Signature");
    }
    ck_assert_int_eq(signatures, assertion_signed);
    xmlFreeDoc(out);
}

START_TEST(test_splice)
{
    rsp_decrypted_t none;
    rsp_shape_t *shape;
    xmlDocPtr doc;
    const char *b64 = "x", *check = NULL, *detail = NULL;
    int verified = 7;

    check_splice("x-response-signed", 1, 0);
    check_splice("x-both-signed", 0, 1);
    check_splice("x-aes128-gcm", 0, 1);
    check_splice("r-neither-signed", 0, 0);
    check_splice("x-peer-others", 0, 1);
    /* nothing decrypted */
    shape = shape_doc("x-aes128-gcm", &doc);
    memset(&none, 0, sizeof(none));
    ck_assert_int_eq(rsp_saml_decrypt_splice(&b64, &verified, pool, doc, shape,
                                             &none, &check, &detail),
                     APR_EGENERAL);
    ck_assert_str_eq(check, "decrypt");
    ck_assert_ptr_null(b64);
    ck_assert_int_eq(verified, 0);
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

    tc = tcase_create("variants");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_variant, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_transports, 0, NDIGESTS * (NDIGESTS + 1));
    tcase_add_test(tc, test_no_oracle);
    suite_add_tcase(s, tc);

    tc = tcase_create("encrypted-ids");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_id, 0, NIDS);
    tcase_add_loop_test(tc, test_id_transports, 0, NDIGESTS * (NDIGESTS + 1));
    tcase_add_test(tc, test_id_no_oracle);
    tcase_add_test(tc, test_name_id_plaintext);
    tcase_add_test(tc, test_encrypted_id_shape);
    suite_add_tcase(s, tc);

    tc = tcase_create("decrypt");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_keys_load);
    tcase_add_test(tc, test_keys_named);
    tcase_add_loop_test(tc, test_decrypt_case, 0, NCASES);
    tcase_add_test(tc, test_keys_in_order);
    tcase_add_test(tc, test_size_before_keys);
    tcase_add_test(tc, test_tampered);
    tcase_add_test(tc, test_nothing_to_decrypt);
    tcase_add_test(tc, test_recipient);
    tcase_add_test(tc, test_key_names);
    tcase_add_test(tc, test_splice);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("encrypted,variants,ids", decrypt_suite);
}
