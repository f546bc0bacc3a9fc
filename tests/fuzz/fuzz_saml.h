/* The fixed SAML setting of the SAML targets: one SP and one IdP whose key
 * pairs and metadata are in tests/fuzz/saml/, made once by
 * gen-saml-corpus.py with the test IdP, and the time their seeds were
 * minted for. */
#ifndef FUZZ_SAML_H
#define FUZZ_SAML_H

#include "rsp_saml.h"

#define FUZZ_SP_ENTITY "https://sp.fuzz.example/saml"
#define FUZZ_ACS_URL FUZZ_SP_ENTITY "/acs"
#define FUZZ_IDP_ENTITY "https://idp.test.example/idp"
/* The seeds' IssueInstant (2023-11-14T22:13:20Z); checked 10 s later. */
#define FUZZ_MINTED 1700000000
#define FUZZ_NOW (FUZZ_MINTED + 10)

typedef struct {
    rsp_saml_sp_t sp;
    rsp_lasso_server_t *server;
} fuzz_sp_t;

/* Lasso, libxml2 and xmlsec set up once, their messages routed to the
 * module's log (dropped; printed on stderr when FUZZ_LOG is set). */
void fuzz_saml_init(void);

/* Where the fixed SP's and IdP's files are (keys, certificates, metadata). */
const char *fuzz_saml_dir(void);

/* Whether FUZZ_LOG is set: the targets then print each input's outcome
 * (check= and detail, or what was accepted). */
int fuzz_saml_logging(void);

/* The SP loaded as the module loads it (rsp_saml_sp_load) into the root
 * pool, and a Lasso server for it. allow_sha1: ReplaySPAllowSHA1 names
 * the IdP. Aborts when the fixtures cannot be loaded. */
void fuzz_saml_sp(fuzz_sp_t *out, int allow_sha1);

#endif
