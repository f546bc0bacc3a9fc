/* What the SAML suites share: the fixtures make_saml_cases.py makes when
 * a suite runs (an SP key pair, the IdP it trusts, the messages a group
 * names) in a mkdtemp directory, the SP loaded from them as the module
 * loads it, a loopback listener the fixtures point their external URLs at,
 * and the Response case table's type and check. */
#ifndef RSP_UNIT_SAML_H
#define RSP_UNIT_SAML_H

#include <apr_pools.h>

#include "rsp_saml.h"
#include "rsp_unit.h"

#define SP_ENTITY "https://sp.unit.example/saml"   /* make_saml_cases.py */
#define ACS_URL SP_ENTITY "/acs"
#define IDP_ENTITY "https://idp.unit.example/idp"

/* The fixtures' directory, the SP loaded from it and a LassoServer for it
 * (set before the suite runs). */
extern const char *saml_dir;
extern rsp_saml_sp_t saml_sp;
extern rsp_lasso_server_t *saml_server;

/* make_saml_cases.py DIR PORT groups (comma-separated: responses,
 * encrypted, logout, keys), the SP loaded, suite run; the fixtures are
 * removed when it passes, kept (and named on stderr) when not. The
 * process exit status (99: the fixtures or the SP could not be made). */
int rsp_unit_saml_main(const char *groups, Suite *(*suite)(void));

/* DIR/name, in the test's pool; an array of it (none for NULL); the SP
 * of the fixtures as the module configures it (the key, the certificate
 * and one metadata file of DIR, NULL: none), not loaded. */
const char *saml_fixture(const char *name);
apr_array_header_t *saml_files(const char *name);
rsp_saml_sp_t saml_sp_of(const char *key, const char *cert, const char *idp);

/* The text of the fixture DIR/rel, in p. */
const char *rsp_unit_saml_file(apr_pool_t *p, const char *rel);
/* cases/NAME.b64: a base64 SAMLResponse. */
const char *rsp_unit_saml_case(apr_pool_t *p, const char *name);

/* Whether something connected to the listener the fixtures' external
 * URLs name (a DTD, a CipherReference), waiting up to 200 ms. */
int rsp_unit_saml_fetched(void);

/* rsp_saml_process_response on b64 for SP_ENTITY at ACS_URL, now, skew
 * 180 s, window up to an hour, no ReplaySPUserAttribute; *a, *check,
 * *detail cleared first. */
apr_status_t rsp_unit_saml_process(const char *b64, rsp_assertion_t **a,
                                   const char **check, const char **detail);
/* The same with ReplaySPUserAttribute user_attribute. */
apr_status_t rsp_unit_saml_process_user(const char *b64,
                                        const char *user_attribute,
                                        rsp_assertion_t **a,
                                        const char **check,
                                        const char **detail);

/* One Response fixture and its verdict. */
typedef struct {
    const char *name;
    const char *check;    /* NULL: accepted */
    const char *name_id;  /* when accepted */
} rsp_unit_saml_case_t;

/* Process the fixture c->name: accepted with c->name_id from IDP_ENTITY,
 * or refused with exactly check=c->check and a detail. */
void rsp_unit_saml_check_case(const rsp_unit_saml_case_t *c);

#endif
