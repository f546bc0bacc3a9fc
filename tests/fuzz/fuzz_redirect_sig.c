/* The HTTP-Redirect and HTTP-POST bindings of single logout: an IdP's LogoutRequest
 * (rsp_saml_logout_request_in, then the signed answer,
 * rsp_saml_logout_answer) and its LogoutResponse
 * (rsp_saml_logout_response_in). Both split the raw query, have Lasso
 * inflate and parse the message, and verify the query signature
 * (SigAlg, Signature over the parameters as received) against the IdP's
 * certificates.
 *
 * The input is the raw query string (HTTP-Redirect), or "POST\n" and the
 * urlencoded form body (HTTP-POST: the message's own signature), each
 * dispatched as the SLO endpoint does:
 * exactly one of SAMLRequest and SAMLResponse (each once, well escaped)
 * picks the function, anything else is refused before the library. The
 * IdP's key is fixed
 * (tests/fuzz/saml/) and the seeds are queries the test IdP signed, so
 * mutations of what is signed reach the signature check, and the seeds
 * themselves everything after it. A query refused for RSA-SHA1 is tried
 * again by an SP that allows SHA-1 for the IdP. */
#include <string.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz_common.h"
#include "fuzz_saml.h"
#include "rsp_form.h"
#include "rsp_saml.h"

/* Set up once: read only by the inputs. */
static fuzz_sp_t strict, sha1;

static int refused_for_sha1(const char *check, const char *detail)
{
    return check && !strcmp(check, "signature") && detail
        && strstr(detail, "SHA-1 is refused");
}

static void request_in(apr_pool_t *p, const rsp_saml_in_t *in)
{
    rsp_logout_request_t req;
    rsp_slo_t *slo = NULL;
    const char *check = NULL, *detail = NULL, *url = NULL, *err = NULL;
    const char *form = NULL;
    const fuzz_sp_t *s = &strict;
    apr_status_t rv;
    int i;

    memset(&req, 0, sizeof(req));
    rv = rsp_saml_logout_request_in(&slo, p, s->server, &s->sp, in, &req,
                                    &check, &detail);
    if (rv != APR_SUCCESS && refused_for_sha1(check, detail)) {
        s = &sha1;
        memset(&req, 0, sizeof(req));
        rv = rsp_saml_logout_request_in(&slo, p, s->server, &s->sp, in, &req,
                                        &check, &detail);
    }
    if (fuzz_saml_logging()) {
        fprintf(stderr, "LogoutRequest %s: %s %s\n",
                rv == APR_SUCCESS ? "accepted" : "refused",
                rv == APR_SUCCESS ? req.name_id : check,
                rv == APR_SUCCESS ? (req.weak_signature ? req.weak_signature : "")
                                  : detail);
    }
    if (rv != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail && !slo);
        return;
    }
    FUZZ_ASSERT(slo);
    FUZZ_ASSERT(req.issuer && !strcmp(req.issuer, FUZZ_IDP_ENTITY));
    FUZZ_ASSERT(req.id && *req.id && req.name_id && *req.name_id);
    FUZZ_ASSERT(s == &sha1 ? req.weak_signature != NULL
                           : req.weak_signature == NULL);
    FUZZ_ASSERT(req.session_indexes);
    for (i = 0; i < req.session_indexes->nelts; i++) {
        FUZZ_ASSERT(*APR_ARRAY_IDX(req.session_indexes, i, const char *));
    }
    if (rsp_saml_logout_answer(slo, p, &req, &url, &form, &err) == APR_SUCCESS) {
        /* the IdP has an HTTP-Redirect SingleLogoutService */
        FUZZ_ASSERT(!form && url && strstr(url, "SAMLResponse=")
                    && strstr(url, "Signature="));
    }
    else {
        FUZZ_ASSERT(err);
    }
    rsp_saml_slo_free(slo, p);
}

static void response_in(apr_pool_t *p, const rsp_saml_in_t *in)
{
    rsp_logout_response_t res;
    const char *check = NULL, *detail = NULL;
    const fuzz_sp_t *s = &strict;
    apr_status_t rv;

    memset(&res, 0, sizeof(res));
    rv = rsp_saml_logout_response_in(p, s->server, &s->sp, in, &res, &check,
                                     &detail);
    if (rv != APR_SUCCESS && refused_for_sha1(check, detail)) {
        s = &sha1;
        memset(&res, 0, sizeof(res));
        rv = rsp_saml_logout_response_in(p, s->server, &s->sp, in, &res, &check,
                                         &detail);
    }
    if (fuzz_saml_logging()) {
        fprintf(stderr, "LogoutResponse %s: %s %s\n",
                rv == APR_SUCCESS ? "accepted" : "refused",
                rv == APR_SUCCESS ? res.status : check,
                rv == APR_SUCCESS ? (res.weak_signature ? res.weak_signature : "")
                                  : detail);
    }
    if (rv != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail);
        return;
    }
    FUZZ_ASSERT(res.issuer && !strcmp(res.issuer, FUZZ_IDP_ENTITY));
    FUZZ_ASSERT(res.in_response_to && *res.in_response_to && res.status);
    FUZZ_ASSERT(s == &sha1 ? res.weak_signature != NULL
                           : res.weak_signature == NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_saml_init();
    fuzz_saml_sp(&strict, 0);
    fuzz_saml_sp(&sha1, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    const char *q = fuzz_cstr(p, data, size), *why = NULL;
    int post = !strncmp(q, "POST\n", 5);
    const char *form = post ? q + 5 : q;
    const char *request = rsp_form_value(p, form, "SAMLRequest", &why);
    const char *response = rsp_form_value(p, form, "SAMLResponse", &why);
    const char *relay = rsp_form_value(p, form, "RelayState", &why);
    rsp_saml_in_t in;

    /* mod_replay_sp_logout.c: one of them, once, or a refusal */
    if (!why && !request != !response) {
        in.query = post ? NULL : q;
        in.message = request ? request : response;
        in.relay = post ? relay : NULL;
        if (request) {
            request_in(p, &in);
        }
        else {
            response_in(p, &in);
        }
    }
    fuzz_pool_end(p);
    return 0;
}
