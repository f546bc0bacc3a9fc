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

static const char *fixture(const char *name)
{
    return apr_pstrcat(pool, saml_dir, "/", name, NULL);
}

static apr_array_header_t *files(const char *a)
{
    apr_array_header_t *arr = apr_array_make(pool, 1, sizeof(const char *));

    if (a) {
        APR_ARRAY_PUSH(arr, const char *) = fixture(a);
    }
    return arr;
}

/* The SP of the fixtures, as the module configures it. */
static rsp_saml_sp_t sp_of(const char *key, const char *cert, const char *idp)
{
    rsp_saml_sp_t sp;

    memset(&sp, 0, sizeof(sp));
    sp.entity_id = SP_ENTITY;
    sp.key_file = fixture(key);
    sp.cert_file = fixture(cert);
    sp.idp_files = files(idp);
    sp.enc_publish = -1;
    return sp;
}

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
    ck_assert_msg(!want_file || strstr(err, fixture(want_file)),
                  "err %s names %s", err, want_file);
    ck_assert_msg(strstr(err, want_text), "err %s says %s", err, want_text);
}

START_TEST(test_load)
{
    rsp_saml_sp_t sp = sp_of("sp.key", "sp.crt", "idp-metadata.xml");
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

/* An aggregate of n IdPs, each the fixture IdP's metadata under another
 * entityID (idp<i>.fed.example), IDP_ENTITY last; written next to the
 * fixtures. */
static const char *aggregate_of(int n)
{
    const char *one = rsp_unit_saml_file(pool, "idp-metadata.xml");
    const char *at = strstr(one, "<md:EntityDescriptor");
    const char *quoted = "entityID=\"" IDP_ENTITY "\"";
    const char *id = at ? strstr(at, quoted) : NULL;
    char *out = apr_pstrdup(pool, "<md:EntitiesDescriptor xmlns:md=\""
                            "urn:oasis:names:tc:SAML:2.0:metadata\">");
    const char *path = fixture("aggregate.xml");
    apr_file_t *f;
    int i;

    ck_assert_msg(at && id, "the fixture names %s", IDP_ENTITY);
    for (i = 0; i < n; i++) {
        const char *eid = i == n - 1 ? IDP_ENTITY
            : apr_psprintf(pool, "https://idp%d.fed.example/idp", i);
        out = apr_pstrcat(pool, out, apr_pstrmemdup(pool, at, (apr_size_t)(id - at)),
                          "entityID=\"", eid, "\"", id + strlen(quoted), NULL);
    }
    out = apr_pstrcat(pool, out, "</md:EntitiesDescriptor>", NULL);
    ck_assert_int_eq(apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                                   | APR_FOPEN_TRUNCATE, APR_FPROT_OS_DEFAULT,
                                   pool), APR_SUCCESS);
    ck_assert_int_eq(apr_file_write_full(f, out, strlen(out), NULL), APR_SUCCESS);
    apr_file_close(f);
    return "aggregate.xml";
}

/* name: n IdPs https://idpK.HOST/idp (the fixture IdP's metadata under
 * other names), unsigned. */
static const char *aggregate_file(const char *name, const char *host, int n)
{
    const char *one = rsp_unit_saml_file(pool, "idp-metadata.xml");
    const char *at = strstr(one, "<md:EntityDescriptor");
    const char *quoted = "entityID=\"" IDP_ENTITY "\"";
    const char *id = at ? strstr(at, quoted) : NULL;
    char *out = "<md:EntitiesDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\">";
    apr_file_t *f;
    int i;

    ck_assert_msg(at && id, "the fixture names %s", IDP_ENTITY);
    for (i = 0; i < n; i++) {
        out = apr_pstrcat(pool, out, apr_pstrmemdup(pool, at, (apr_size_t)(id - at)),
                          apr_psprintf(pool, "entityID=\"https://idp%d.%s/idp\"", i, host),
                          id + strlen(quoted), NULL);
    }
    out = apr_pstrcat(pool, out, "</md:EntitiesDescriptor>", NULL);
    ck_assert_int_eq(apr_file_open(&f, fixture(name), APR_FOPEN_WRITE | APR_FOPEN_CREATE
                                   | APR_FOPEN_TRUNCATE, APR_FPROT_OS_DEFAULT,
                                   pool), APR_SUCCESS);
    ck_assert_int_eq(apr_file_write_full(f, out, strlen(out), NULL), APR_SUCCESS);
    apr_file_close(f);
    return name;
}

/* What each metadata file gave the generation in use: its IdPs and the
 * generation its content came in; a refused re-read names its file and
 * keeps the generation. */
START_TEST(test_refresh_per_file)
{
    rsp_saml_sp_t sp = sp_of("sp.key", "sp.crt", aggregate_file("fed-a.xml", "a.example", 3));
    rsp_sp_input_t input = 0;
    rsp_saml_md_state_t st;
    apr_uint64_t generation = 0;
    apr_time_t checked;
    const char *err = NULL;
    apr_file_t *f;
    int changed = 0;

    APR_ARRAY_PUSH(sp.idp_files, const char *) =
        fixture(aggregate_file("fed-b.xml", "b.example", 2));
    ck_assert_msg(rsp_saml_sp_load(&sp, pool, &input, &err) == APR_SUCCESS, "load: %s", err);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 1);
    ck_assert_int_eq(st.idps, 5);
    ck_assert_int_eq(st.nfiles, 2);
    ck_assert_int_eq(st.files[0].idps, 3);
    ck_assert_int_eq(st.files[1].idps, 2);
    ck_assert_int_eq(st.files[0].generation, 1);
    ck_assert_int_eq(st.files[1].generation, 1);
    ck_assert_int_eq(st.files[0].valid_until, 0);   /* unsigned */
    ck_assert_int_eq(st.failed_file, -1);
    ck_assert_ptr_null(st.last_error);
    ck_assert_int_gt(st.checked_at, 0);
    checked = st.checked_at;

    /* nothing changed: looked at, nothing read */
    apr_sleep(apr_time_from_msec(5));
    ck_assert_int_eq(rsp_saml_sp_refresh(&sp, pool, &changed, &generation, &err), APR_SUCCESS);
    ck_assert_int_eq(changed, 0);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 1);
    ck_assert_int_gt(st.checked_at, checked);

    /* the second file changes: generation 2, the first's content still
     * the one of generation 1 */
    aggregate_file("fed-b.xml", "b.example", 4);
    ck_assert_int_eq(rsp_saml_sp_refresh(&sp, pool, &changed, &generation, &err), APR_SUCCESS);
    ck_assert_int_eq(changed, 1);
    ck_assert_int_eq(generation, 2);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 2);
    ck_assert_int_eq(st.idps, 7);
    ck_assert_int_eq(st.files[0].generation, 1);
    ck_assert_int_eq(st.files[1].generation, 2);
    ck_assert_int_eq(st.files[1].idps, 4);

    /* the first file broken: refused, named, generation 2 kept */
    ck_assert_int_eq(apr_file_open(&f, fixture("fed-a.xml"), APR_FOPEN_WRITE
                                   | APR_FOPEN_TRUNCATE, APR_FPROT_OS_DEFAULT, pool),
                     APR_SUCCESS);
    ck_assert_int_eq(apr_file_write_full(f, "<not-xml", 8, NULL), APR_SUCCESS);
    apr_file_close(f);
    ck_assert_int_ne(rsp_saml_sp_refresh(&sp, pool, &changed, &generation, &err), APR_SUCCESS);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 2);
    ck_assert_int_eq(st.failed_file, 0);
    ck_assert_int_eq(st.failed_reason, RSP_MD_ERR_MALFORMED);
    ck_assert_int_gt(st.failed_at, 0);
    ck_assert_ptr_nonnull(st.last_error);
    ck_assert_msg(strstr(st.last_error, "fed-a.xml"), "%s", st.last_error);
    ck_assert_int_eq(st.files[0].idps, 3);

    /* the first mended, the second gone: the second named, as a file
     * that cannot be read */
    aggregate_file("fed-a.xml", "a.example", 3);
    ck_assert_int_eq(apr_file_remove(fixture("fed-b.xml"), pool), APR_SUCCESS);
    ck_assert_int_ne(rsp_saml_sp_refresh(&sp, pool, &changed, &generation, &err), APR_SUCCESS);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 2);
    ck_assert_int_eq(st.failed_file, 1);
    ck_assert_int_eq(st.failed_reason, RSP_MD_ERR_FETCH);
    aggregate_file("fed-b.xml", "b.example", 4);

    /* mended: the refusal is gone */
    ck_assert_int_eq(rsp_saml_sp_refresh(&sp, pool, &changed, &generation, &err), APR_SUCCESS);
    rsp_saml_md_state(&sp, &st, pool);
    ck_assert_int_eq(st.generation, 3);
    ck_assert_int_eq(st.failed_file, -1);
    ck_assert_ptr_null(st.last_error);
    ck_assert_int_eq(st.files[0].generation, 3);
    ck_assert_int_eq(st.files[1].generation, 3); /* written again */
}
END_TEST

/* A server knows no IdP until asked for one; holds at most
 * server_idps_max; a process keeps at most process_idp_keys_max IdPs'
 * keys decoded; asking again for one that was let go works. */
START_TEST(test_idps_on_demand)
{
    rsp_saml_sp_t loaded = sp_of("sp.key", "sp.crt", aggregate_of(40)), sp;
    rsp_lasso_server_t *a = NULL, *b = NULL;
    rsp_sp_input_t input = 0;
    const char *err = NULL;
    int i;

    loaded.server_idps_max = 8;
    loaded.process_idp_keys_max = 5;
    ck_assert_msg(rsp_saml_sp_load(&loaded, pool, &input, &err) == APR_SUCCESS,
                  "load: %s", err);
    sp = *rsp_saml_sp_pin(&loaded, pool);
    ck_assert_int_eq(rsp_idp_count(sp.idps), 40);
    /* the load proved one IdP (the first): its keys are decoded */
    ck_assert_int_eq(rsp_saml_idp_keys_loaded(&sp), 1);
    ck_assert_int_eq(rsp_saml_server_new(&a, &sp, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_saml_server_new(&b, &sp, &err), APR_SUCCESS);
    ck_assert_int_eq(g_hash_table_size(a->providers), 0);
    for (i = 0; i < 40; i++) {
        const char *id = rsp_idp_at(sp.idps, i)->entity_id;
        ck_assert_int_eq(rsp_saml_server_idp(a, &sp, id), 0);
        ck_assert_ptr_nonnull(lasso_server_get_provider(a, id));
        ck_assert_int_le(g_hash_table_size(a->providers), 8);
        ck_assert_int_le(rsp_saml_idp_keys_loaded(&sp), 5);
        ck_assert_int_ge(rsp_saml_idp_keys_loaded(&sp), 1);
    }
    /* the first was let go by a; asked for again, it is back; b, which
     * was never asked, knows none */
    ck_assert_ptr_null(lasso_server_get_provider(a, rsp_idp_at(sp.idps, 0)->entity_id));
    ck_assert_int_eq(rsp_saml_server_idp(a, &sp, rsp_idp_at(sp.idps, 0)->entity_id), 0);
    ck_assert_ptr_nonnull(lasso_server_get_provider(a, rsp_idp_at(sp.idps, 0)->entity_id));
    ck_assert_int_eq(g_hash_table_size(b->providers), 0);
    ck_assert_int_eq(rsp_saml_server_idp(b, &sp, IDP_ENTITY), 0);
    ck_assert_int_eq(g_hash_table_size(b->providers), 1);
    /* asking twice changes nothing */
    ck_assert_int_eq(rsp_saml_server_idp(b, &sp, IDP_ENTITY), 0);
    ck_assert_int_eq(g_hash_table_size(b->providers), 1);
    /* an IdP none of the files names */
    ck_assert_int_eq(rsp_saml_server_idp(b, &sp, "https://other.example/idp"),
                     LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND);
    ck_assert_int_eq(rsp_saml_server_idp(b, &sp, IDP_ENTITY "/"),
                     LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND);
    rsp_saml_server_free(a);
    rsp_saml_server_free(b);
}
END_TEST

START_TEST(test_load_refusals)
{
    rsp_saml_sp_t sp;

    sp = sp_of("missing.key", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_KEY, "missing.key", "");
    sp = sp_of("sp.key", "missing.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "missing.crt", "");
    sp = sp_of("idp-metadata.xml", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_KEY, "idp-metadata.xml", "");
    sp = sp_of("sp.key", "idp-metadata.xml", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "idp-metadata.xml",
                 "not a PEM X.509 certificate");
    sp = sp_of("other.key", "sp.crt", "idp-metadata.xml");
    load_refused(&sp, RSP_SP_INPUT_CERT, "other.key",
                 "does not match the certificate");
    sp = sp_of("sp.key", "sp.crt", "missing-idp.xml");
    load_refused(&sp, RSP_SP_INPUT_IDP, "missing-idp.xml", "");
    sp = sp_of("sp.key", "sp.crt", "sp.crt");
    load_refused(&sp, RSP_SP_INPUT_IDP, "sp.crt", "");
}
END_TEST

START_TEST(test_encryption_pairs)
{
    rsp_saml_sp_t sp = sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    rsp_sp_input_t input = 0;
    const char *err = NULL;

    /* certificates without keys, or not as many: they go in pairs */
    sp.enc_cert_files = files("other.crt");
    load_refused(&sp, RSP_SP_INPUT_ENC_CERT, NULL,
                 "1 certificates but no ReplaySPEncryptionKeyFile");
    sp = sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = files("other.key");
    sp.enc_cert_files = files(NULL);
    ck_assert_int_ne(rsp_saml_sp_load(&sp, pool, &input, &err), APR_SUCCESS);
    ck_assert_int_eq(input, RSP_SP_INPUT_ENC_CERT);
    ck_assert_ptr_nonnull(strstr(err, "1 ReplaySPEncryptionKeyFile but 0"));
    /* a pair that does not match */
    sp = sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = files("other.key");
    sp.enc_cert_files = files("sp.crt");
    load_refused(&sp, RSP_SP_INPUT_ENC_CERT, "other.key",
                 "does not match the certificate");
    /* a pair of its own: it decrypts, and the metadata publishes it */
    sp = sp_of("sp.key", "sp.crt", "idp-metadata.xml");
    sp.enc_key_files = files("other.key");
    sp.enc_cert_files = files("other.crt");
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
    tcase_add_test(tc, test_idps_on_demand);
    tcase_add_test(tc, test_refresh_per_file);
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
