/* What the MDQ suites share (test_rsp_mdq, test_rsp_saml_mdq): the
 * metadata server of the unit tests (md_http_server.py, its /mdq/ route)
 * started on ports of its own choosing and stopped by PID at exit, the
 * entities it answers for, and files. */
#ifndef RSP_UNIT_MDQ_H
#define RSP_UNIT_MDQ_H

#include <apr_pools.h>

#include "rsp_unit_saml.h"

#define WEEKS4 (28 * 24 * 3600)
#define IDP_HEX "c1f75106a51f3195f8461ba5cff40eb0c8d024ea" /* sha1(IDP_ENTITY) */
#define OTHER_ENTITY "https://other.unit.example/idp"
#define THIRD_ENTITY "https://third.unit.example/idp"

/* The server started (exit(99) if it cannot be), libcurl initialised;
 * both undone at exit. Call from the suite function. */
void mdq_server_start(void);

/* A file's text (NULL: cannot be read), a file written, in the test's pool. */
const char *slurp(const char *path);
void put_file(const char *path, const char *text);
/* The metadata case NAME of make_saml_cases.py (md/NAME.xml). */
const char *md_case(const char *name);
/* What the MDQ server answers for entity: the case `name`, or 404 (NULL). */
void publish(const char *entity, const char *name);
/* A fresh directory under the fixtures. */
const char *tmpdir(void);
/* The MDQ service's base URL (http). */
const char *base_url(void);
/* How many requests the server has logged with hex in their path. */
int requests_for(const char *hex);

#endif
