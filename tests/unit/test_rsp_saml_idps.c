/* Unit tests for rsp_saml_idps.c: the IdPs of a loaded SP. A Lasso
 * server learns an IdP only when asked for it, bounded per server, with
 * each process's decoded keys bounded too; the metadata files read again
 * when one changes, each file's IdPs and the generation its content came
 * in, a refused re-read naming its file and keeping the generation in
 * use. The fixtures come from make_saml_cases.py (rsp_unit_saml.c). */
#include <string.h>

#include <apr_file_io.h>
#include <apr_strings.h>
#include <lasso/lasso.h>

#include "rsp_md_source.h"
#include "rsp_saml.h"
#include "rsp_saml_int.h"
#include "rsp_unit_saml.h"

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
    const char *path = saml_fixture("aggregate.xml");
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
    ck_assert_int_eq(apr_file_open(&f, saml_fixture(name), APR_FOPEN_WRITE | APR_FOPEN_CREATE
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
    rsp_saml_sp_t sp = saml_sp_of("sp.key", "sp.crt", aggregate_file("fed-a.xml", "a.example", 3));
    rsp_sp_input_t input = 0;
    rsp_saml_md_state_t st;
    apr_uint64_t generation = 0;
    apr_time_t checked;
    const char *err = NULL;
    apr_file_t *f;
    int changed = 0;

    APR_ARRAY_PUSH(sp.idp_files, const char *) =
        saml_fixture(aggregate_file("fed-b.xml", "b.example", 2));
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
    ck_assert_int_eq(apr_file_open(&f, saml_fixture("fed-a.xml"), APR_FOPEN_WRITE
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
    ck_assert_int_eq(apr_file_remove(saml_fixture("fed-b.xml"), pool), APR_SUCCESS);
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
    rsp_saml_sp_t loaded = saml_sp_of("sp.key", "sp.crt", aggregate_of(40)), sp;
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

static Suite *idps_suite(void)
{
    Suite *s = suite_create("rsp_saml_idps");
    TCase *tc = tcase_create("idps");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_idps_on_demand);
    tcase_add_test(tc, test_refresh_per_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("encrypted", idps_suite);
}
