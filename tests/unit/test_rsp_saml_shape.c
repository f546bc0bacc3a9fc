/* Unit tests for rsp_saml_shape.c: what a Response must look like before
 * Lasso reads it (counts, encryption algorithms, SHA-1 signatures), what
 * an EncryptedAssertion may decrypt to (one saml:Assertion, the size,
 * element, attribute and depth limits, at and past each), and an
 * HTTP-Redirect message before Lasso reads it. The documents are
 * structure only: no signature here is meant to verify. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_base64.h>
#include <apr_strings.h>
#include <zlib.h>

#include "rsp_saml_shape.h"

#define NS_DECL                                                          \
    " xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\""              \
    " xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\""              \
    " xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\""                   \
    " xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\""

#define ISSUER "<saml:Issuer>https://idp.example/</saml:Issuer>"
#define SIG(sm, dm)                                                      \
    "<ds:Signature><ds:SignedInfo>"                                      \
    "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/"  \
    "xml-exc-c14n#\"/><ds:SignatureMethod Algorithm=\"" sm "\"/>"        \
    "<ds:Reference URI=\"#x\"><ds:DigestMethod Algorithm=\"" dm "\"/>"   \
    "<ds:DigestValue>AA==</ds:DigestValue></ds:Reference>"               \
    "</ds:SignedInfo><ds:SignatureValue>AA==</ds:SignatureValue>"        \
    "</ds:Signature>"
#define RSA256 "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
#define SHA256 "http://www.w3.org/2001/04/xmlenc#sha256"
#define RSA1 "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
#define SHA1 "http://www.w3.org/2000/09/xmldsig#sha1"
#define GOOD_SIG SIG(RSA256, SHA256)

#define ASSERTION(sig) "<saml:Assertion ID=\"a1\">" ISSUER sig "</saml:Assertion>"

#define EKEY(alg)                                                        \
    "<xenc:EncryptedKey><xenc:EncryptionMethod Algorithm=\"" alg "\"/>"  \
    "<xenc:CipherData><xenc:CipherValue>AA==</xenc:CipherValue>"         \
    "</xenc:CipherData></xenc:EncryptedKey>"
#define EDATA(alg, keyinfo)                                              \
    "<xenc:EncryptedData Type=\"http://www.w3.org/2001/04/xmlenc#Element\">" \
    "<xenc:EncryptionMethod Algorithm=\"" alg "\"/>"                     \
    "<ds:KeyInfo>" keyinfo "</ds:KeyInfo>"                               \
    "<xenc:CipherData><xenc:CipherValue>AA==</xenc:CipherValue>"         \
    "</xenc:CipherData></xenc:EncryptedData>"
#define ENC(inner) "<saml:EncryptedAssertion>" inner "</saml:EncryptedAssertion>"
#define EID(data, key) "<saml:EncryptedID>" EDATA(data, EKEY(key)) "</saml:EncryptedID>"
#define RSA15 "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
#define TDES "http://www.w3.org/2001/04/xmlenc#tripledes-cbc"
#define SUBJECT_NS "<saml:Subject xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\" " \
    "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">"
#define GOOD_ENC ENC(EDATA(RSP_ALG_AES128_GCM, EKEY(RSP_ALG_RSA_OAEP_MGF1P)))

#define RESPONSE(body) "<samlp:Response" NS_DECL " ID=\"r1\">" ISSUER body \
    "</samlp:Response>"

static rsp_shape_t shape;

/* The check that refuses xml, or NULL when accepted. */
static const char *check_of(const char *xml)
{
    const char *check = NULL, *detail = NULL;
    apr_status_t rv = rsp_saml_shape(&shape, pool, xml, strlen(xml), NULL,
                                     &check, &detail);

    if (rv == APR_SUCCESS) {
        ck_assert_ptr_null(check);
        return NULL;
    }
    ck_assert_ptr_nonnull(check);
    ck_assert_ptr_nonnull(detail);
    return check;
}

#define REFUSED(xml, c) do {                                             \
        const char *got_ = check_of(xml);                                \
        ck_assert_msg(got_ && !strcmp(got_, (c)), "%s: wanted check=%s, " \
                      "got %s", #xml, (c), got_ ? got_ : "accepted");    \
    } while (0)
#define ACCEPTED(xml) do {                                               \
        const char *got_ = check_of(xml);                                \
        ck_assert_msg(!got_, "%s: refused check=%s", #xml, got_);        \
    } while (0)

START_TEST(test_plain)
{
    ACCEPTED(RESPONSE(GOOD_SIG ASSERTION(GOOD_SIG)));
    ck_assert_int_eq(shape.assertions, 1);
    ck_assert_int_eq(shape.encrypted, 0);
    ck_assert_int_eq(shape.response_signed, 1);
    ck_assert_str_eq(shape.issuer, "https://idp.example/");
    ck_assert_ptr_null(shape.weak);
    ACCEPTED(RESPONSE(ASSERTION(GOOD_SIG)));
    ck_assert_int_eq(shape.response_signed, 0);
}
END_TEST

START_TEST(test_counts)
{
    REFUSED(RESPONSE(GOOD_SIG), "assertion-count");
    REFUSED(RESPONSE(ASSERTION("") ASSERTION("")), "assertion-count");
    REFUSED(RESPONSE(GOOD_ENC GOOD_ENC), "assertion-count");
    /* a plaintext assertion next to an encrypted one (Lasso would drop
     * the one it cannot decrypt and go on with the other) */
    REFUSED(RESPONSE(ASSERTION(GOOD_SIG) GOOD_ENC), "assertion-count");
    REFUSED(RESPONSE(GOOD_ENC ASSERTION(GOOD_SIG)), "assertion-count");
    /* an assertion that is not a child of the Response does not count:
     * one wrapped elsewhere plus none at the top is zero */
    REFUSED(RESPONSE("<samlp:Extensions>" ASSERTION(GOOD_SIG)
                     "</samlp:Extensions>"), "assertion-count");
}
END_TEST

START_TEST(test_not_a_response)
{
    REFUSED("<x/>", "xml");
    REFUSED("not xml", "xml");
    REFUSED("<samlp:Response" NS_DECL ">" ASSERTION(""), "xml");
    REFUSED("<saml:Assertion" NS_DECL "/>", "xml");
    /* the right name in another namespace */
    REFUSED("<Response xmlns=\"urn:example\">" ASSERTION("") "</Response>",
            "xml");
    REFUSED("<!DOCTYPE r [<!ENTITY e \"x\">]>" RESPONSE(ASSERTION("")), "xml");
    REFUSED("<!DOCTYPE r SYSTEM \"http://127.0.0.1:1/x.dtd\">"
            RESPONSE(ASSERTION("")), "xml");
}
END_TEST

START_TEST(test_encrypted_good)
{
    static const char *const data_algs[] = {
        RSP_ALG_AES128_GCM, RSP_ALG_AES256_GCM, RSP_ALG_AES128_CBC,
        RSP_ALG_AES256_CBC, RSP_ALG_AES192_CBC, RSP_ALG_AES192_GCM};
    apr_size_t i;

    ACCEPTED(RESPONSE(GOOD_SIG GOOD_ENC));
    ck_assert_int_eq(shape.encrypted, 1);
    ck_assert_int_eq(shape.assertions, 0);
    ck_assert_int_eq(shape.keys, 1);
    ck_assert_str_eq(shape.data_alg, RSP_ALG_AES128_GCM);
    ck_assert_str_eq(shape.key_alg, RSP_ALG_RSA_OAEP_MGF1P);
    for (i = 0; i < sizeof(data_algs) / sizeof(data_algs[0]); i++) {
        const char *xml = apr_pstrcat(
            pool, "<samlp:Response" NS_DECL " ID=\"r1\">" ISSUER
            "<saml:EncryptedAssertion><xenc:EncryptedData>"
            "<xenc:EncryptionMethod Algorithm=\"", data_algs[i], "\"/>"
            "<ds:KeyInfo>" EKEY(RSP_ALG_RSA_OAEP_MGF1P) "</ds:KeyInfo>"
            "</xenc:EncryptedData></saml:EncryptedAssertion></samlp:Response>",
            NULL);
        ck_assert_msg(check_of(xml) == NULL, "%s refused", data_algs[i]);
        ck_assert_str_eq(shape.data_alg, data_algs[i]);
    }
    /* the EncryptedKey beside the EncryptedData (also SAML's shape) */
    ACCEPTED(RESPONSE(ENC(EDATA(RSP_ALG_AES256_CBC, "")
                          EKEY(RSP_ALG_RSA_OAEP_MGF1P))));
    ck_assert_int_eq(shape.keys, 1);
    /* XML Encryption 1.1 RSA-OAEP */
    ACCEPTED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM, EKEY(RSP_ALG_RSA_OAEP)))));
    ck_assert_str_eq(shape.key_alg, RSP_ALG_RSA_OAEP);
    ck_assert_str_eq(shape.key_desc, "rsa-oaep (sha1, mgf1sha1)");
    /* an unsigned Response: the decrypted assertion must be signed (Lasso
     * checks that after decryption) */
    ACCEPTED(RESPONSE(GOOD_ENC));
    ck_assert_int_eq(shape.response_signed, 0);
}
END_TEST

START_TEST(test_encrypted_refused)
{
    /* RSA-1.5 key transport (a decryption oracle), wherever the key is */
    REFUSED(RESPONSE(GOOD_SIG ENC(EDATA(RSP_ALG_AES128_GCM,
                                        EKEY(RSP_XENC_NS "rsa-1_5")))),
            "encryption-algorithm");
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_CBC, "")
                         EKEY(RSP_XENC_NS "rsa-1_5"))),
            "encryption-algorithm");
    /* a good key first, a PKCS#1 v1.5 one after: every key must be OAEP */
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_CBC,
                               EKEY(RSP_ALG_RSA_OAEP_MGF1P))
                         EKEY(RSP_XENC_NS "rsa-1_5"))),
            "encryption-algorithm");
    /* a key transport that is no RSA-OAEP */
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM,
                               EKEY(RSP_XENC_NS "kw-aes128")))),
            "encryption-algorithm");
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM,
                               "<xenc:EncryptedKey/>"))),
            "encryption-algorithm");
    /* data encryption that is not AES */
    REFUSED(RESPONSE(ENC(EDATA(RSP_XENC_NS "tripledes-cbc",
                               EKEY(RSP_ALG_RSA_OAEP_MGF1P)))),
            "encryption-algorithm");
    REFUSED(RESPONSE(ENC("<xenc:EncryptedData>" EKEY(RSP_ALG_RSA_OAEP_MGF1P)
                         "</xenc:EncryptedData>")),
            "encryption-algorithm");
    /* structure */
    REFUSED(RESPONSE(ENC("")), "encryption");
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM, EKEY(RSP_ALG_RSA_OAEP_MGF1P))
                         EDATA(RSP_ALG_AES128_GCM, EKEY(RSP_ALG_RSA_OAEP_MGF1P)))),
            "encryption");
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM, ""))), "encryption");
    /* an EncryptedKey only where nobody looks for one (not beside the
     * EncryptedData, not in its KeyInfo): no key (Lasso would leak a copy
     * of the SP's private key on it) */
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM,
                               "<ds:KeyName>" EKEY(RSP_ALG_RSA_OAEP_MGF1P)
                               "</ds:KeyName>"))),
            "encryption");
    REFUSED(RESPONSE(ENC(EDATA(RSP_ALG_AES128_GCM, "")
                         "<saml:Extra>" EKEY(RSP_ALG_RSA_OAEP_MGF1P)
                         "</saml:Extra>")),
            "encryption");
    /* in a second KeyInfo: Lasso reads the first */
    REFUSED(RESPONSE(ENC("<xenc:EncryptedData><xenc:EncryptionMethod "
                         "Algorithm=\"" RSP_ALG_AES128_GCM "\"/><ds:KeyInfo/>"
                         "<ds:KeyInfo>" EKEY(RSP_ALG_RSA_OAEP_MGF1P)
                         "</ds:KeyInfo></xenc:EncryptedData>")),
            "encryption");
}
END_TEST

/* ------------------------------------------------------------------ */
/* HTTP-Redirect messages before Lasso: rsp_saml_redirect_peek         */

/* xml, raw-DEFLATEd and base64-encoded, as an HTTP-Redirect message. */
static const char *redirect_of(const char *xml, apr_size_t len)
{
    z_stream z;
    unsigned char *out = apr_palloc(pool, len + 1024);
    char *b64;

    memset(&z, 0, sizeof(z));
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)xml;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)(len + 1024);
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    b64 = apr_palloc(pool, apr_base64_encode_len((int)z.total_out));
    apr_base64_encode(b64, (const char *)out, (int)z.total_out);
    deflateEnd(&z);
    return b64;
}

#define LR_OPEN "<samlp:LogoutRequest" NS_DECL " ID=\"l1\" Version=\"2.0\">"
#define LR(body) LR_OPEN body "</samlp:LogoutRequest>"
#define NAMEID "<saml:NameID>alice</saml:NameID>"

/* The check of a refused message (and its reason contains why), or NULL
 * when accepted (*issuer then set). */
static const char *peek(const char *xml, const char *root, const char *why,
                        const char **issuer)
{
    const char *check = NULL, *got;

    got = rsp_saml_redirect_peek(pool, redirect_of(xml, strlen(xml)), root,
                                 issuer, &check);
    if (!got) {
        return NULL;
    }
    ck_assert_ptr_null(*issuer);
    ck_assert_msg(!why || strstr(got, why), "\"%s\" not in \"%s\"", why, got);
    return check;
}

static const char *check_nul(void)
{
    static const char xml[] = LR_OPEN ISSUER NAMEID "\0</samlp:LogoutRequest>";
    const char *issuer = NULL, *check = NULL;

    ck_assert_ptr_nonnull(rsp_saml_redirect_peek(
        pool, redirect_of(xml, sizeof(xml) - 1), "LogoutRequest", &issuer, &check));
    return check;
}

START_TEST(test_redirect_peek)
{
    const char *issuer = NULL, *check = NULL, *big;
    char *xml;
    apr_size_t n;

    /* accepted: what Lasso then reads without trouble */
    ck_assert_ptr_null(peek(LR(ISSUER NAMEID), "LogoutRequest", NULL, &issuer));
    ck_assert_str_eq(issuer, "https://idp.example/");
    ck_assert_ptr_null(peek(LR(ISSUER EID(RSP_ALG_AES128_GCM, RSP_ALG_RSA_OAEP_MGF1P)),
                            "LogoutRequest", NULL, &issuer));
    /* an EncryptedID without EncryptedData: nothing Lasso could decrypt */
    ck_assert_str_eq(peek(LR(ISSUER "<saml:EncryptedID/>"), "LogoutRequest",
                          "0 EncryptedData", &issuer), "encryption");
    ck_assert_ptr_null(peek(LR(NAMEID), "LogoutRequest", NULL, &issuer));
    ck_assert_ptr_null(issuer); /* no Issuer: the caller refuses that */
    ck_assert_ptr_null(peek("<samlp:LogoutResponse" NS_DECL ">" ISSUER
                            "</samlp:LogoutResponse>", "LogoutResponse", NULL,
                            &issuer));
    ck_assert_str_eq(issuer, "https://idp.example/");

    /* what makes Lasso abort the process: not a LogoutRequest at all, or
     * one without exactly one identifier */
    ck_assert_str_eq(peek("<x/>", "LogoutRequest", "not a samlp:LogoutRequest",
                          &issuer), "xml");
    ck_assert_str_eq(peek("<saml:LogoutRequest" NS_DECL ">" NAMEID
                          "</saml:LogoutRequest>", "LogoutRequest",
                          "not a samlp:LogoutRequest", &issuer), "xml");
    ck_assert_str_eq(peek(LR(ISSUER), "LogoutRequest", "0 of BaseID", &issuer),
                     "xml");
    ck_assert_str_eq(peek(LR(ISSUER NAMEID NAMEID), "LogoutRequest", "2 of BaseID",
                          &issuer), "xml");
    ck_assert_str_eq(peek(LR(ISSUER NAMEID "<saml:BaseID/>"), "LogoutRequest",
                          "2 of BaseID", &issuer), "xml");
    /* a NameID in another namespace is no NameID */
    ck_assert_str_eq(peek(LR(ISSUER "<samlp:NameID>alice</samlp:NameID>"),
                          "LogoutRequest", "0 of BaseID", &issuer), "xml");
    ck_assert_str_eq(peek(LR(ISSUER), "LogoutResponse", "not a samlp:LogoutResponse",
                          &issuer), "xml");
    /* Issuer: at most one, not empty */
    ck_assert_str_eq(peek(LR(ISSUER ISSUER NAMEID), "LogoutRequest",
                          "more than one Issuer", &issuer), "xml");
    ck_assert_str_eq(peek(LR("<saml:Issuer></saml:Issuer>" NAMEID), "LogoutRequest",
                          "an empty Issuer", &issuer), "xml");
    /* XML */
    ck_assert_str_eq(peek("<!DOCTYPE x [<!ENTITY e \"alice\">]>" LR(ISSUER NAMEID),
                          "LogoutRequest", "DOCTYPE", &issuer), "xml");
    ck_assert_str_eq(peek(LR_OPEN ISSUER NAMEID, "LogoutRequest",
                          "not well-formed", &issuer), "xml");
    /* the binding: base64 of raw DEFLATE, of a bounded size */
    ck_assert_ptr_nonnull(rsp_saml_redirect_peek(pool, "not base64!", "LogoutRequest",
                                                 &issuer, &check));
    ck_assert_str_eq(check, "binding");
    ck_assert_ptr_nonnull(rsp_saml_redirect_peek(pool, "PHgvPg==", /* "<x/>" */
                                                 "LogoutRequest", &issuer, &check));
    ck_assert_str_eq(check, "binding");
    ck_assert_ptr_nonnull(rsp_saml_redirect_peek(pool, NULL, "LogoutRequest",
                                                 &issuer, &check));
    ck_assert_str_eq(check, "binding");
    n = 200 * 1024;
    xml = apr_palloc(pool, n + 1);
    memset(xml, ' ', n);
    memcpy(xml, LR_OPEN, strlen(LR_OPEN));
    xml[n] = '\0';
    big = rsp_saml_redirect_peek(pool, redirect_of(xml, n), "LogoutRequest",
                                 &issuer, &check);
    ck_assert_ptr_nonnull(big);
    ck_assert_msg(strstr(big, "128 KiB"), "%s", big);
    ck_assert_str_eq(check, "binding");
    /* a NUL inside */
    ck_assert_str_eq(check_nul(), "xml");
}
END_TEST

START_TEST(test_weak_signatures)
{
    ACCEPTED(RESPONSE(SIG(RSA1, SHA256) ASSERTION(GOOD_SIG)));
    ck_assert_ptr_nonnull(shape.weak);
    ck_assert_ptr_nonnull(strstr(shape.weak, "Response"));
    ck_assert_ptr_nonnull(strstr(shape.weak, "rsa-sha1"));
    ACCEPTED(RESPONSE(GOOD_SIG ASSERTION(SIG(RSA256, SHA1))));
    ck_assert_ptr_nonnull(shape.weak);
    ck_assert_ptr_nonnull(strstr(shape.weak, "assertion"));
    ck_assert_ptr_nonnull(strstr(shape.weak, "sha1 digest"));
    ACCEPTED(RESPONSE(ASSERTION(SIG("http://www.w3.org/2001/04/"
                                    "xmldsig-more#ecdsa-sha1", SHA256))));
    ck_assert_ptr_nonnull(shape.weak);
    ACCEPTED(RESPONSE(GOOD_SIG ASSERTION(GOOD_SIG)));
    ck_assert_ptr_null(shape.weak);
    ACCEPTED(RESPONSE(ASSERTION(SIG("http://www.w3.org/2001/04/"
                                    "xmldsig-more#rsa-sha512",
                                    "http://www.w3.org/2001/04/xmlenc#sha512"))));
    ck_assert_ptr_null(shape.weak);
    ck_assert_str_eq(rsp_alg_name(RSA1), "rsa-sha1");
    ck_assert_str_eq(rsp_alg_name(NULL), "(none)");
}
END_TEST

/* What a decryption may yield (rsp_saml_plaintext_shape), as text: the
 * scan's reading of tags, and each refusal with its check=. */
typedef struct {
    const char *what;
    const char *text;
    const char *check;    /* NULL: accepted */
} plaintext_case_t;

#define A_OPEN "<saml:Assertion xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" ID=\"_a1\">"
#define A_CLOSE "</saml:Assertion>"
#define A(inner) A_OPEN inner A_CLOSE

static const plaintext_case_t plaintext_cases[] = {
    {"bare", A(""), NULL},
    {"whitespace around", " \r\n\t" A("") "\n", NULL},
    {"'>' and '<' where they are no tags",
     A("<x a='>' b=\"/>\"><!-- <y> --><![CDATA[<z>]]><?pi <w>?>&lt;</x>"), NULL},
    {"default namespace",
     "<Assertion xmlns=\"urn:oasis:names:tc:SAML:2.0:assertion\"/>", NULL},
    {"empty", "", "assertion-count"},
    {"whitespace only", " \n", "assertion-count"},
    {"two", A("") A(""), "assertion-count"},
    {"another element after", A("") "<x/>", "assertion-count"},
    {"another element before", "<x/>" A(""), "assertion-count"},
    {"not an assertion", "<x/>", "assertion-count"},
    {"another namespace", "<saml:Assertion xmlns:saml=\"urn:other\"/>",
     "assertion-count"},
    {"prefix not declared", "<saml:Assertion/>", "assertion-count"},
    {"text after", A("") "x", "assertion-count"},
    {"byte order mark", "\xef\xbb\xbf" A(""), "assertion-count"},
    {"comment before", "<!-- c -->" A(""), "assertion-count"},
    {"CDATA after", A("") "<![CDATA[x]]>", "assertion-count"},
    {"XML declaration", "<?xml version=\"1.0\"?>" A(""), "assertion-count"},
    {"DOCTYPE", "<!DOCTYPE x>" A(""), "xml"},
    {"DOCTYPE inside", A("<!DOCTYPE x>"), "xml"},
    {"not closed", A_OPEN, "xml"},
    {"end tag without start", A("</x>"), "xml"},
    {"comment not closed", A("<!-- x"), "xml"},
    {"value not closed", A("<x a=\"1/>"), "xml"},
    {"'<' in a tag", A("<x <y/>"), "xml"},
    {"'<' last", A("") "<", "xml"},
    {"'<' in a value", A("<x a=\"<\"/>"), "xml"},
    {"undeclared entity", A("&x;"), "xml"},
    {"an EncryptedID in its Subject",
     A(SUBJECT_NS EID(RSP_ALG_AES128_GCM, RSP_ALG_RSA_OAEP_MGF1P) "</saml:Subject>"), NULL},
    {"an EncryptedID with RSA-1.5 in its Subject",
     A(SUBJECT_NS EID(RSP_ALG_AES128_GCM, RSA15) "</saml:Subject>"), "encryption-algorithm"},
};
#define NPLAINTEXT ((int)(sizeof(plaintext_cases) / sizeof(plaintext_cases[0])))

START_TEST(test_plaintext)
{
    const plaintext_case_t *c = &plaintext_cases[_i];
    const char *check = "unset", *id = NULL;
    const char *why = rsp_saml_plaintext_shape(pool, c->text, strlen(c->text),
                                               &id, &check);

    if (!c->check) {
        ck_assert_msg(!why, "%s: refused, check=%s: %s", c->what, check, why);
        ck_assert_ptr_null(check);
    }
    else {
        ck_assert_msg(why && *why, "%s: accepted, expected check=%s", c->what,
                      c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->what,
                      check ? check : "(none)", why, c->check);
    }
}
END_TEST

/* A NUL byte (the text is given with its length) */
START_TEST(test_plaintext_nul)
{
    static const char text[] = A("x\0y");
    const char *check = NULL, *id = NULL;

    ck_assert_ptr_nonnull(rsp_saml_plaintext_shape(pool, text, sizeof(text) - 1,
                                                   &id, &check));
    ck_assert_str_eq(check, "xml");
}
END_TEST

/* Each limit: at it accepted, one past it refused with its check=. */
static const char *repeat(apr_pool_t *p, const char *s, int n)
{
    apr_size_t len = strlen(s);
    char *out = apr_palloc(p, len * (apr_size_t)n + 1);
    int i;

    for (i = 0; i < n; i++) {
        memcpy(out + len * (apr_size_t)i, s, len);
    }
    out[len * (apr_size_t)n] = '\0';
    return out;
}

static const char *limit_check(const char *text)
{
    const char *check = NULL, *id = NULL;

    return rsp_saml_plaintext_shape(pool, text, strlen(text), &id, &check)
        ? check : NULL;
}

START_TEST(test_plaintext_limits)
{
    const char *at, *over, *check = NULL, *id = NULL;
    apr_size_t pad;
    int n;

    /* depth: the Assertion is level 1 */
    n = RSP_DECRYPTED_MAX_DEPTH - 1;
    at = apr_pstrcat(pool, A_OPEN, repeat(pool, "<x>", n),
                     repeat(pool, "</x>", n), A_CLOSE, NULL);
    over = apr_pstrcat(pool, A_OPEN, repeat(pool, "<x>", n + 1),
                       repeat(pool, "</x>", n + 1), A_CLOSE, NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "xml-depth");
    /* refused at the first level too deep, whatever follows */
    ck_assert_str_eq(limit_check(apr_pstrcat(pool, A_OPEN,
                                             repeat(pool, "<x>", 18000), NULL)),
                     "xml-depth");
    /* elements, the Assertion included */
    n = RSP_DECRYPTED_MAX_ELEMENTS - 1;
    ck_assert_ptr_null(limit_check(apr_pstrcat(
        pool, A_OPEN, repeat(pool, "<x/>", n), A_CLOSE, NULL)));
    ck_assert_str_eq(limit_check(apr_pstrcat(
        pool, A_OPEN, repeat(pool, "<x/>", n + 1), A_CLOSE, NULL)),
        "decrypted-size");
    /* attributes of one element (an '=' in a value is none) */
    at = apr_pstrcat(pool, A_OPEN, "<x", NULL);
    for (n = 0; n < RSP_DECRYPTED_MAX_ATTRIBUTES; n++) {
        at = apr_psprintf(pool, "%s a%d='='", at, n);
    }
    over = apr_pstrcat(pool, at, " b='1'/>", A_CLOSE, NULL);
    at = apr_pstrcat(pool, at, "/>", A_CLOSE, NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "decrypted-size");
    /* bytes: whitespace after the Assertion up to the limit */
    pad = RSP_DECRYPTED_MAX_SIZE - strlen(A(""));
    at = apr_pstrcat(pool, A(""), repeat(pool, " ", (int)pad), NULL);
    over = apr_pstrcat(pool, at, " ", NULL);
    ck_assert_ptr_null(limit_check(at));
    ck_assert_str_eq(limit_check(over), "decrypted-size");
    /* the ID of what is accepted */
    ck_assert_ptr_null(rsp_saml_plaintext_shape(pool, A(""), strlen(A("")),
                                                &id, &check));
    ck_assert_str_eq(id, "_a1");
}
END_TEST

/* An EncryptedID (a LogoutRequest's, an assertion's Subject's; Lasso
 * decrypts it) gets the algorithms of an EncryptedAssertion, before
 * anything is decrypted: RSA-1.5 and other data algorithms refused. */
START_TEST(test_encrypted_ids)
{
    const char *issuer = NULL;

    /* in a LogoutRequest */
    ck_assert_ptr_null(peek(LR(ISSUER EID(RSP_ALG_AES128_GCM, RSP_ALG_RSA_OAEP_MGF1P)),
                            "LogoutRequest", NULL, &issuer));
    ck_assert_str_eq(peek(LR(ISSUER EID(RSP_ALG_AES128_GCM, RSA15)), "LogoutRequest",
                          "EncryptedID", &issuer), "encryption-algorithm");
    ck_assert_str_eq(peek(LR(ISSUER EID(TDES, RSP_ALG_RSA_OAEP_MGF1P)), "LogoutRequest",
                          "EncryptedID: data encryption", &issuer),
                     "encryption-algorithm");
    ck_assert_str_eq(peek(LR(ISSUER "<saml:EncryptedID>" EDATA(RSP_ALG_AES128_GCM, "")
                             "</saml:EncryptedID>"), "LogoutRequest",
                          "no EncryptedKey", &issuer), "encryption");
    /* in a plaintext assertion's Subject */
    ACCEPTED(RESPONSE("<saml:Assertion ID=\"a1\">" ISSUER "<saml:Subject>"
                      EID(RSP_ALG_AES256_CBC, RSP_ALG_RSA_OAEP_MGF1P)
                      "</saml:Subject></saml:Assertion>"));
    REFUSED(RESPONSE("<saml:Assertion ID=\"a1\">" ISSUER "<saml:Subject>"
                     EID(RSP_ALG_AES256_CBC, RSA15) "</saml:Subject></saml:Assertion>"),
            "encryption-algorithm");
}
END_TEST

static Suite *shape_suite(void)
{
    Suite *s = suite_create("rsp_saml_shape");
    TCase *tc = tcase_create("shape");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_not_a_response);
    tcase_add_test(tc, test_encrypted_good);
    tcase_add_test(tc, test_encrypted_refused);
    tcase_add_test(tc, test_redirect_peek);
    tcase_add_test(tc, test_weak_signatures);
    tcase_add_test(tc, test_encrypted_ids);
    suite_add_tcase(s, tc);

    /* what an EncryptedAssertion may decrypt to */
    tc = tcase_create("plaintext");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_plaintext, 0, NPLAINTEXT);
    tcase_add_test(tc, test_plaintext_nul);
    tcase_add_test(tc, test_plaintext_limits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(shape_suite());
}
