/* What every Check suite here shares: a pool per test, and a main. */
#ifndef RSP_UNIT_H
#define RSP_UNIT_H

#include <check.h>
#include <apr_pools.h>

/* The current test's pool (created by rsp_unit_setup). */
extern apr_pool_t *pool;

void rsp_unit_setup(void);
void rsp_unit_teardown(void);

/* apr_initialize, run the suite, report; the process exit status. */
int rsp_unit_run(Suite *s);

#endif
