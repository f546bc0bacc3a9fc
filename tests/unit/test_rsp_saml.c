/* Unit tests for rsp_saml.c's own part: loading an SP definition (its
 * pairs of keys and certificates, the IdPs' metadata), each refusal with
 * the input it is about and the file it names, ReplaySPAllowSHA1's list,
 * the check= names of Lasso's errors and the optional time attributes.
 * The fixtures (the SP's pair, another SP's pair, the IdP's metadata) come
 * from make_saml_cases.py (rsp_unit_saml.c). */
#include <string.h>

#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <lasso/lasso.h>

#include "rsp_md_source.h"
#include "rsp_saml.h"
#include "rsp_saml_int.h"
#include "rsp_unit_saml.h"

/* Refused, about want_input, naming want_file (NULL: no file), saying
 * want_text. */
static void load_refused(rsp_saml_sp_t *sp, rsp_sp_input_t want_input,
                         const char *want_file, const char *want_text)
{
    rsp_sp_input_t input = 0;
    const char *err = NULL;

    ck_assert_int_ne(rsp_saml_sp_load(sp, pool, &input, &err), APR_SUCCESS);
    ck_assert_int_eq(input, want_input);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(!want_file || strstr(err, saml_fixture(want_file)),
                  "err %s names %s", err, want_file);
    ck_assert_msg(strstr(err, want_text), "err %s says %s", err, want_text);
}

START_TEST(test_load)
{
    rsp_saml_sp_t sp = saml_sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    rsp_lasso_server_t *a = NULL, *b = NULL;
    rsp_sp_input_t input = 0;
    const char *err = NULL;

    ck_assert_msg(rsp_saml_sp_load(&sp, pool, &input, &err) == APR_SUCCESS,
                  "load: %s", err);
    ck_assert_ptr_null(sp.idps);      /* requests pin a generation */
    ck_assert_int_eq(rsp_idp_count(rsp_saml_sp_pin(&sp, pool)->idps), 1);
    ck_assert_str_eq(rsp_idp_at(rsp_saml_sp_pin(&sp, pool)->idps, 0)->entity_id,
                     IDP_ENTITY);
    ck_assert_int_gt((int)strlen(sp.cert_b64), 100);
    /* the signing pair also decrypts, and the metadata publishes it */
    ck_assert_int_eq(sp.dec_keys->nelts, 1);
    ck_assert_str_eq(sp.enc_cert_b64, sp.cert_b64);
    ck_assert_ptr_nonnull(strstr(sp.dec_names, "(the signing key)"));
    /* one server per thread, nothing shared */
    ck_assert_int_eq(rsp_saml_server_new(&a, &sp, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_saml_server_new(&b, &sp, &err), APR_SUCCESS);
    ck_assert_ptr_ne(a, b);
    rsp_saml_server_free(a);
    rsp_saml_server_free(b);
}
END_TEST

START_TEST(test_load_refusals)
{
    rsp_saml_sp_t sp;

    sp = saml_sp_of("missing.key", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_KEY, "missing.key", "");
    sp = saml_sp_of("sp.key", "missing.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "missing.crt", "");
    sp = saml_sp_of("idp-metadata.xml", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_KEY, "idp-metadata.xml", "");
    sp = saml_sp_of("sp.key", "idp-metadata.xml", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "idp-metadata.xml",
                 "not a PEM X.509 certificate");
    sp = saml_sp_of("other.key", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "other.key",
                 "does not match the certificate");
    sp = saml_sp_of("sp.key", "sp.crt", "missing-idp.xml");
    load_refused(&sp, RSP_SP_INPUT_IDP, "missing-idp.xml", "");
    sp = saml_sp_of("sp.key", "sp.crt", "sp.crt");
    load_refused(&sp, RSP_SP_INPUT_IDP, "sp.crt", "");
}
END_TEST

START_TEST(test_encryption_pairs)
{
    rsp_saml_sp_t sp = saml_sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    rsp_sp_input_t input = 0;
    const char *err = NULL;

    /* certificates without keys, or not as many: they go in pairs */
    sp.enc_cert_files = saml_files("other.crt");
    load_refused(&sp, RSP_SP_INPUT_ENC_CERT, NULL,
                 "1 certificates but no ReplaySPEncryptionKeyFile");
    sp = saml_sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = saml_files("other.key");
    sp.enc_cert_files = saml_files(NULL);
    ck_assert_int_ne(rsp_saml_sp_load(&sp, pool, &input, &err), APR_SUCCESS);
    ck_assert_int_eq(input, RSP_SP_INPUT_ENC_CERT);
    ck_assert_ptr_nonnull(strstr(err, "1 ReplaySPEncryptionKeyFile but 0"));
    /* a pair that does not match */
    sp = saml_sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = saml_files("other.key");
    sp.enc_cert_files = saml_files("sp.crt");
    load_refused(&sp, RSP_SP_INPUT_ENC_CERT, "other.key",
                 "does not match the certificate");
    /* a pair of its own: it decrypts, and the metadata publishes it */
    sp = saml_sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = saml_files("other.key");
    sp.enc_cert_files = saml_files("other.crt");
    ck_assert_msg(rsp_saml_sp_load(&sp, pool, &input, &err) == APR_SUCCESS,
                  "load: %s", err);
    ck_assert_int_eq(sp.dec_keys->nelts, 1);
    ck_assert_str_ne(sp.enc_cert_b64, sp.cert_b64);
    ck_assert_ptr_null(strstr(sp.dec_names, "(the signing key)"));
    ck_assert_ptr_nonnull(strstr(sp.dec_names, "cert sha256 "));
}
END_TEST

START_TEST(test_sha1_allowed)
{
    rsp_saml_sp_t sp;

    memset(&sp, 0, sizeof(sp));
    ck_assert_int_eq(rsp_saml_sha1_allowed(&sp, IDP_ENTITY), 0);
    sp.sha1_idps = apr_array_make(pool, 2, sizeof(const char *));
    APR_ARRAY_PUSH(sp.sha1_idps, const char *) = "https://old.example/idp";
    APR_ARRAY_PUSH(sp.sha1_idps, const char *) = IDP_ENTITY;
    ck_assert_int_eq(rsp_saml_sha1_allowed(&sp, IDP_ENTITY), 1);
    ck_assert_int_eq(rsp_saml_sha1_allowed(&sp, "https://old.example/idp"), 1);
    ck_assert_int_eq(rsp_saml_sha1_allowed(&sp, IDP_ENTITY "/"), 0);
    ck_assert_int_eq(rsp_saml_sha1_allowed(&sp, NULL), 0);
}
END_TEST

START_TEST(test_check_of)
{
    ck_assert_str_eq(rsp_saml_check_of(LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND),
                     "issuer");
    ck_assert_str_eq(rsp_saml_check_of(LASSO_PROFILE_ERROR_MISSING_ISSUER),
                     "issuer");
    ck_assert_str_eq(
        rsp_saml_check_of(LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE),
        "signature");
    ck_assert_str_eq(rsp_saml_check_of(LASSO_PROFILE_ERROR_MISSING_ASSERTION),
                     "assertion-count");
    ck_assert_str_eq(rsp_saml_check_of(LASSO_PROFILE_ERROR_MISSING_SUBJECT),
                     "subject");
    ck_assert_str_eq(rsp_saml_check_of(LASSO_PROFILE_ERROR_INVALID_MSG), "xml");
    ck_assert_str_eq(rsp_saml_check_of(LASSO_LOGIN_ERROR_STATUS_NOT_SUCCESS),
                     "status");
    /* Lasso's XML-signature errors, either sign */
    ck_assert_str_eq(rsp_saml_check_of(101), "signature");
    ck_assert_str_eq(rsp_saml_check_of(-199), "signature");
    ck_assert_str_eq(rsp_saml_check_of(-200), "lasso");
    ck_assert_str_eq(rsp_saml_check_of(-1), "lasso");
}
END_TEST

START_TEST(test_opt_time)
{
    apr_time_t t = 1;

    ck_assert_int_eq(rsp_saml_opt_time(NULL, &t), 1);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rsp_saml_opt_time("2026-12-02T10:00:00Z", &t), 1);
    ck_assert(t == apr_time_from_sec(1796205600));
    ck_assert_int_eq(rsp_saml_opt_time("yesterday", &t), 0);
    ck_assert_int_eq(t, 0);
}
END_TEST

static Suite *saml_suite(void)
{
    Suite *s = suite_create("rsp_saml");
    TCase *tc = tcase_create("sp");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_load_refusals);
    tcase_add_test(tc, test_encryption_pairs);
    tcase_add_test(tc, test_sha1_allowed);
    tcase_add_test(tc, test_check_of);
    tcase_add_test(tc, test_opt_time);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* "encrypted": the SP's pair, the IdP, and another SP's pair */
    return rsp_unit_saml_main("encrypted", saml_suite);
}
