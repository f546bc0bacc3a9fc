/* The SAML response path (rsp_saml_process_response): base64, the shape
 * check before Lasso (rsp_saml_shape), Lasso's parsing, signature checks
 * and decryption, and this module's checks after it (issuer, subject,
 * bearer, recipient, destination, audience, InResponseTo, the window).
 *
 * The input is the decoded XML of a Response; it is sent base64-encoded
 * as the ACS receives it, to an SP whose IdP's key is fixed
 * (tests/fuzz/saml/). The seeds are responses the test IdP signed for that
 * SP at FUZZ_MINTED, and the clock is set just after: a seed passes every
 * check, so mutations reach the checks after Lasso. A response refused
 * for a SHA-1 signature is tried again by an SP that allows SHA-1 for the
 * IdP (ReplaySPAllowSHA1). */
#include <string.h>

#include <apr_strings.h>
#include <openssl/evp.h>

#include "fuzz_common.h"
#include "fuzz_saml.h"
#include "rsp_saml.h"

/* Set up once: read only by the inputs. */
static fuzz_sp_t strict, sha1;

static apr_status_t process(apr_pool_t *p, const fuzz_sp_t *s, const char *b64,
                            rsp_assertion_t **a, const char **check,
                            const char **detail)
{
    rsp_check_params_t cp;

    memset(&cp, 0, sizeof(cp));
    cp.sp = &s->sp;
    cp.entity_id = FUZZ_SP_ENTITY;
    cp.acs_url = FUZZ_ACS_URL;
    cp.now = apr_time_from_sec(FUZZ_NOW);
    cp.skew_s = 180;
    cp.max_window_s = 3600;
    *check = *detail = NULL;
    return rsp_saml_process_response(a, p, s->server, b64, &cp, check, detail);
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
    unsigned char *b64;
    rsp_assertion_t *a = NULL;
    const char *check, *detail;
    apr_status_t rv;
    int i, weak_ok = 0;

    /* of exactly its size: ASan sees a read past its end */
    b64 = fuzz_malloc(p, (size + 2) / 3 * 4 + 1);
    EVP_EncodeBlock(b64, data, (int)size);

    rv = process(p, &strict, (const char *)b64, &a, &check, &detail);
    if (rv != APR_SUCCESS && check && !strcmp(check, "weak-signature")) {
        rv = process(p, &sha1, (const char *)b64, &a, &check, &detail);
        weak_ok = 1;
    }
    if (fuzz_saml_logging()) {
        fprintf(stderr, rv == APR_SUCCESS ? "accepted: %s %s %s\n"
                                          : "refused: check=%s: %s\n",
                rv == APR_SUCCESS ? a->issuer : check,
                rv == APR_SUCCESS ? a->name_id : detail,
                rv == APR_SUCCESS ? (a->weak_signature ? a->weak_signature : "")
                                  : "");
    }
    if (rv != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail);
        fuzz_pool_end(p);
        return 0;
    }
    /* Accepted: from our IdP, for us, with a window. */
    FUZZ_ASSERT(a);
    /* SHA-1 only where allowed, and then said. */
    FUZZ_ASSERT(weak_ok ? a->weak_signature != NULL : a->weak_signature == NULL);
    FUZZ_ASSERT(a->issuer && !strcmp(a->issuer, FUZZ_IDP_ENTITY));
    FUZZ_ASSERT(a->id && *a->id && a->name_id && *a->name_id);
    FUZZ_ASSERT(a->ttl_ms >= 1 && a->window_end > apr_time_from_sec(FUZZ_MINTED));
    FUZZ_ASSERT(a->window_end - apr_time_from_sec(FUZZ_NOW)
                <= apr_time_from_sec(3600));
    FUZZ_ASSERT(a->attributes);
    for (i = 0; i < a->attributes->nelts; i++) {
        const rsp_attribute_t *at = &APR_ARRAY_IDX(a->attributes, i,
                                                   rsp_attribute_t);
        FUZZ_ASSERT(at->name && at->value);
    }
    fuzz_pool_end(p);
    return 0;
}
