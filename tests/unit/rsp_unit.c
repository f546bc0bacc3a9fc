#include <stdlib.h>

#include <apr_general.h>

#include "rsp_unit.h"

apr_pool_t *pool;

void rsp_unit_setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

void rsp_unit_teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
}

int rsp_unit_run(Suite *s)
{
    SRunner *sr;
    int failed;

    if (apr_initialize() != APR_SUCCESS) {
        return EXIT_FAILURE;
    }
    atexit(apr_terminate);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
