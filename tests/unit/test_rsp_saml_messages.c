/* Unit tests for rsp_saml_messages.c on messages the test IdP really
 * signed (make_saml_cases.py, group logout: rsp_unit_saml.c): the IdP's
 * LogoutRequests (HTTP-Redirect, signature checked by the module itself:
 * RSA-SHA256 and -SHA512 taken, a NameID with qualifiers and an
 * EncryptedID taken and answered, over HTTP-POST too (the message's own
 * signature), EncryptedIDs encrypted with OAEP over SHA-256 and XML
 * Encryption 1.1 rsa-oaep with MGF1-SHA256 (python3-cryptography) taken,
 * RSA-1.5 refused and whatever does not decrypt refused with one
 * check=decrypt and one detail, RSA-SHA1 (not allowed here), tampered,
 * unsigned, another key, no SAMLRequest and too many attributes refused
 * with their exact check= names), our signed answers to them, and our
 * AuthnRequests. */
#include <string.h>

#include <apr_strings.h>

#include "rsp_unit_saml.h"

typedef struct {
    const char *name;
    const char *check;    /* NULL: taken */
} logout_case_t;

static const logout_case_t logout_cases[] = {
    {"good", NULL},
    {"good-sha512", NULL},
    {"good-qualified", NULL},       /* NameQualifier, SPNameQualifier, SPProvidedID */
    {"good-encrypted", NULL},       /* an EncryptedID, decrypted with our key */
    {"sha1", "signature"},          /* ReplaySPAllowSHA1 not given */
    {"tampered", "signature"},
    {"unsigned", "signature"},
    {"another-key", "signature"},
    {"no-saml-request", "binding"},
    {"many-attributes", "xml"},     /* before its signature is looked at */
    /* HTTP-POST: the message's own signature */
    {"post-good", NULL},
    {"post-good-encrypted", NULL},
    {"post-tampered", "signature"},
    {"post-unsigned", "signature"},
    {"post-another-key", "signature"},
    {"post-not-base64", "binding"},
    {"post-not-logout-request", "xml"},
    /* EncryptedIDs as the field encrypts them, decrypted by the module
     * once the signature is verified */
    {"good-encrypted-mgf1p-sha256", NULL},  /* OAEP with SHA-256 */
    {"good-encrypted-oaep-sha256", NULL},   /* rsa-oaep, MGF1-SHA256 */
    {"good-encrypted-aes256-cbc", NULL},
    {"post-good-encrypted-mgf1p-sha256", NULL},
    {"post-good-encrypted-oaep-sha256", NULL},
    {"encrypted-rsa-1_5", "encryption-algorithm"},
    {"encrypted-gcm-tag", "decrypt"},
    {"encrypted-gcm-truncate", "decrypt"},
    {"encrypted-gcm-key", "decrypt"},
    {"encrypted-gcm-wrong-key", "decrypt"},
    {"encrypted-cbc-padding", "decrypt"},
    {"encrypted-cbc-wrong-key", "decrypt"},
    {"post-encrypted-gcm-tag", "decrypt"},
    {"post-encrypted-cbc-wrong-key", "decrypt"},
};
#define NLOGOUT ((int)(sizeof(logout_cases) / sizeof(logout_cases[0])))

/* logout/NAME.txt: a raw HTTP-Redirect query. */
static const char *read_logout(apr_pool_t *p, const char *name)
{
    return rsp_unit_saml_file(p, apr_pstrcat(p, "logout/", name, ".txt", NULL));
}

START_TEST(test_logout_request)
{
    const logout_case_t *c = &logout_cases[_i];
    rsp_logout_request_t req;
    rsp_slo_t *slo = NULL;
    const char *check = NULL, *detail = NULL, *url = NULL, *err = NULL;
    const char *form = NULL;
    rsp_saml_in_t in = {NULL, NULL, NULL};
    apr_status_t rv;

    memset(&req, 0, sizeof(req));
    if (!strncmp(c->name, "post-", 5)) {
        in.message = read_logout(pool, c->name);
        in.relay = "/bye";
    }
    else {
        in.query = read_logout(pool, c->name);
    }
    rv = rsp_saml_logout_request_in(&slo, pool, saml_server, &saml_sp, &in,
                                    &req, &check, &detail);
    if (!c->check) {
        ck_assert_msg(rv == APR_SUCCESS, "%s: refused, check=%s: %s", c->name,
                      check ? check : "?", detail ? detail : "?");
        ck_assert_str_eq(req.issuer, IDP_ENTITY);
        ck_assert_str_eq(req.name_id, "alice");
        ck_assert_int_eq(req.session_indexes->nelts, 1);
        ck_assert_str_eq(APR_ARRAY_IDX(req.session_indexes, 0, const char *),
                         "_s1");
        ck_assert_ptr_null(req.weak_signature);
        ck_assert_int_eq(req.encrypted_id,
                         strstr(c->name, "good-encrypted") != NULL);
        /* the answer: a signed LogoutResponse back to the IdP */
        ck_assert_msg(rsp_saml_logout_answer(slo, pool, &req, &url, &form,
                                             &err)
                      == APR_SUCCESS, "answer: %s", err ? err : "?");
        ck_assert_ptr_null(form);
        ck_assert_ptr_nonnull(strstr(url, "SAMLResponse="));
        ck_assert_ptr_nonnull(strstr(url, "&Signature="));
        ck_assert_ptr_nonnull(strstr(url, "RelayState=%2Fbye"));
    }
    else {
        ck_assert_msg(rv != APR_SUCCESS, "%s: taken, expected check=%s",
                      c->name, c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->name,
                      check ? check : "(none)", detail ? detail : "", c->check);
    }
    if (slo) {
        rsp_saml_slo_free(slo, pool);
    }
}
END_TEST

/* An EncryptedID that does not decrypt, whatever broke and over either
 * binding: one check=decrypt, one detail per data mode (the algorithms
 * the message names; nothing says what failed). */
START_TEST(test_encrypted_id_no_oracle)
{
    static const char *const gcm[] = {
        "encrypted-gcm-tag", "encrypted-gcm-truncate", "encrypted-gcm-key",
        "encrypted-gcm-wrong-key", "post-encrypted-gcm-tag", NULL
    };
    static const char *const cbc[] = {
        "encrypted-cbc-padding", "encrypted-cbc-wrong-key",
        "post-encrypted-cbc-wrong-key", NULL
    };
    const char *const *modes[] = {gcm, cbc};
    int m, i;

    for (m = 0; m < 2; m++) {
        const char *first = NULL;
        for (i = 0; modes[m][i]; i++) {
            const char *name = modes[m][i];
            rsp_logout_request_t req;
            rsp_slo_t *slo = NULL;
            const char *check = NULL, *detail = NULL;
            rsp_saml_in_t in = {NULL, NULL, NULL};

            memset(&req, 0, sizeof(req));
            if (!strncmp(name, "post-", 5)) {
                in.message = read_logout(pool, name);
            }
            else {
                in.query = read_logout(pool, name);
            }
            ck_assert_int_ne(rsp_saml_logout_request_in(&slo, pool, saml_server,
                                                        &saml_sp, &in, &req,
                                                        &check, &detail),
                             APR_SUCCESS);
            ck_assert_ptr_null(slo);
            ck_assert_str_eq(check, "decrypt");
            if (!first) {
                first = detail;
                ck_assert_ptr_nonnull(strstr(first, "the LogoutRequest: the "
                                             "EncryptedID from " IDP_ENTITY));
                ck_assert_ptr_nonnull(strstr(first, "cannot be decrypted "
                                             "with any key of this SP"));
            }
            ck_assert_msg(!strcmp(detail, first), "%s: detail \"%s\", the "
                          "others' \"%s\"", name, detail, first);
        }
    }
}
END_TEST

START_TEST(test_authn_request)
{
    const char *url = NULL, *id = NULL, *err = NULL;

    ck_assert_msg(rsp_saml_authn_request(pool, saml_server, &saml_sp, IDP_ENTITY,
                                         ACS_URL, "token-1", &url, &id, &err)
                  == APR_SUCCESS, "AuthnRequest: %s", err ? err : "?");
    /* to the IdP's SingleSignOnService, the RelayState as given, unsigned
     * (the IdP's metadata does not ask for signed requests) */
    ck_assert_msg(!strncmp(url, "http://127.0.0.1/idp/sso?", 25), "url %s", url);
    ck_assert_ptr_nonnull(strstr(url, "SAMLRequest="));
    ck_assert_ptr_nonnull(strstr(url, "RelayState=token-1"));
    ck_assert_ptr_null(strstr(url, "Signature="));
    ck_assert(id && id[0] == '_' && strlen(id) >= 16);
    /* an IdP this SP does not know */
    ck_assert_int_ne(rsp_saml_authn_request(pool, saml_server, &saml_sp,
                                            "https://unknown.example/idp",
                                            ACS_URL, "t", &url, &id, &err),
                     APR_SUCCESS);
}
END_TEST

static Suite *messages_suite(void)
{
    Suite *s = suite_create("rsp_saml_messages");
    TCase *tc = tcase_create("messages");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_logout_request, 0, NLOGOUT);
    tcase_add_test(tc, test_encrypted_id_no_oracle);
    tcase_add_test(tc, test_authn_request);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("logout", messages_suite);
}
