/* Unit tests for rsp_saml_mdq.c: an SP whose IdPs come by MDQ alone
 * (ReplaySPIdPMetadataQuery), loaded as the module loads it and looked up
 * as a request does: found and signing in, the process's table used, a
 * missing entity refused with check=issuer and not asked for again at
 * once, one describing another entity refused, the state the status
 * handler shows. The MDQ server: rsp_unit_mdq.h. */
#include <string.h>

#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_unit_mdq.h"
#include "rsp_unit_server.h"

static rsp_saml_sp_t mdq_sp_def;

/* An SP like the suites' one, its IdPs by MDQ only, loaded as the module
 * loads it, pinned to the test's pool. */
static const rsp_saml_sp_t *mdq_sp(const char *cache_dir)
{
    rsp_sp_input_t input;
    const char *err = NULL;

    memset(&mdq_sp_def, 0, sizeof(mdq_sp_def));
    mdq_sp_def.entity_id = SP_ENTITY;
    mdq_sp_def.key_file = apr_pstrcat(pool, saml_dir, "/sp.key", NULL);
    mdq_sp_def.cert_file = apr_pstrcat(pool, saml_dir, "/sp.crt", NULL);
    mdq_sp_def.idp_files = apr_array_make(pool, 1, sizeof(const char *));
    mdq_sp_def.enc_publish = -1;
    mdq_sp_def.mdq_url = base_url();
    mdq_sp_def.mdq_cert_file = apr_pstrcat(pool, saml_dir, "/md/fed.crt", NULL);
    mdq_sp_def.mdq_cache_dir = cache_dir;
    mdq_sp_def.md_max_validity = WEEKS4;
    ck_assert_msg(rsp_saml_sp_load(&mdq_sp_def, pool, &input, &err)
                  == APR_SUCCESS, "%s", ERR_S(err));
    ck_assert_int_eq(rsp_idp_count(mdq_sp_def.idps), 0);
    return rsp_saml_sp_pin(&mdq_sp_def, pool);
}

static apr_status_t process(const rsp_saml_sp_t *sp, const char *name,
                            const char **check, const char **detail)
{
    rsp_lasso_server_t *server;
    rsp_check_params_t cp;
    rsp_assertion_t *a = NULL;
    const char *err = NULL;
    apr_status_t rv;

    ck_assert_msg(rsp_saml_server_new(&server, sp, &err) == APR_SUCCESS, "%s",
                  ERR_S(err));
    memset(&cp, 0, sizeof(cp));
    cp.sp = sp;
    cp.entity_id = SP_ENTITY;
    cp.acs_url = ACS_URL;
    cp.now = apr_time_now();
    cp.skew_s = 180;
    cp.max_window_s = 3600;
    *check = *detail = NULL;
    rv = rsp_saml_process_response(&a, pool, server,
                                   rsp_unit_saml_case(pool, name), &cp, check,
                                   detail);
    rsp_saml_server_free(server);
    return rv;
}

START_TEST(test_sp_signs_in_by_mdq)
{
    const char *dir = tmpdir(), *check, *detail;
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    const rsp_idp_t *idp;
    apr_pool_t *req;
    int before;

    publish(IDP_ENTITY, "good-entity");
    before = requests_for(IDP_HEX);
    /* a Response from the IdP: its metadata asked for, its signature
     * verified with the key in it */
    ck_assert_msg(process(sp, "good-both-signed", &check, &detail)
                  == APR_SUCCESS, "check=%s %s", ERR_S(check), ERR_S(detail));
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    idp = rsp_saml_idp(sp, IDP_ENTITY);
    ck_assert_ptr_nonnull(idp);
    ck_assert_str_eq(idp->entity_id, IDP_ENTITY);
    ck_assert_int_gt(idp->sso->nelts, 0);
    ck_assert(idp->valid_until > apr_time_now());
    /* another request of this process: the table, no request */
    apr_pool_create(&req, pool);
    ck_assert_ptr_nonnull(rsp_saml_idp(rsp_saml_sp_pin(&mdq_sp_def, req),
                                       IDP_ENTITY));
    apr_pool_destroy(req);
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* a Response signed by another key than the one published: refused */
    ck_assert_int_ne(process(sp, "another-key", &check, &detail), APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "signature");
}
END_TEST

START_TEST(test_sp_refuses_unknown_entity)
{
    const char *dir = tmpdir(), *check, *detail;
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    int before;

    publish(IDP_ENTITY, NULL);
    before = requests_for(IDP_HEX);
    ck_assert_int_ne(process(sp, "good-both-signed", &check, &detail),
                     APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "issuer");
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* published now, but a failed entity is not asked for again at once */
    publish(IDP_ENTITY, "good-entity");
    ck_assert_int_ne(process(sp, "good-both-signed", &check, &detail),
                     APR_SUCCESS);
    ck_assert_str_eq(ERR_S(check), "issuer");
    ck_assert_ptr_null(rsp_saml_idp(sp, IDP_ENTITY));
    ck_assert_int_eq(requests_for(IDP_HEX), before + 1);
    /* an entityID too long to be asked for, and an empty one */
    ck_assert_ptr_null(rsp_saml_idp(sp, apr_psprintf(pool, "https://x/%01100d", 0)));
    ck_assert_ptr_null(rsp_saml_idp(sp, ""));
    /* an entity whose document describes another: refused */
    publish(OTHER_ENTITY, "good-entity");
    ck_assert_ptr_null(rsp_saml_idp(sp, OTHER_ENTITY));
    publish(OTHER_ENTITY, NULL);
}
END_TEST

START_TEST(test_sp_state)
{
    const char *dir = tmpdir();
    const rsp_saml_sp_t *sp = mdq_sp(dir);
    rsp_saml_mdq_state_t st;

    publish(IDP_ENTITY, "good-entity");
    publish(OTHER_ENTITY, NULL);
    ck_assert_ptr_nonnull(rsp_saml_idp(sp, IDP_ENTITY));
    ck_assert_ptr_null(rsp_saml_idp(sp, OTHER_ENTITY));
    rsp_saml_mdq_state(sp, &st, pool);
    ck_assert_int_eq(st.entities, 1);
    ck_assert_uint_eq(st.fetches, 2);
    ck_assert_uint_eq(st.failures, 1);
    /* a 404 is an entity the service does not know: not its failure */
    ck_assert_int_eq(st.failing, 0);
    ck_assert_msg(contains(st.last_error, "HTTP status 404"), "%s",
                  ERR_S(st.last_error));
    ck_assert(st.failed_at > 0);
    /* a document that does not verify is */
    publish(THIRD_ENTITY, "other-key");
    ck_assert_ptr_null(rsp_saml_idp(sp, THIRD_ENTITY));
    publish(THIRD_ENTITY, NULL);
    rsp_saml_mdq_state(sp, &st, pool);
    ck_assert_uint_eq(st.failures, 2);
    ck_assert_int_eq(st.failing, 1);
    ck_assert_int_eq(st.failing_reason, RSP_MD_ERR_SIGNATURE);
    ck_assert_int_eq(st.entities, 1);
}
END_TEST

static Suite *saml_mdq_suite(void)
{
    Suite *s = suite_create("rsp_saml_mdq");
    TCase *tc = tcase_create("saml_mdq");

    mdq_server_start();
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sp_signs_in_by_mdq);
    tcase_add_test(tc, test_sp_refuses_unknown_entity);
    tcase_add_test(tc, test_sp_state);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_saml_main("responses,metadata", saml_mdq_suite);
}
