/* A signed metadata file's check (rsp_md_verify.h) on any bytes, with the
 * fuzz IdP's certificate as the signer's: whatever the input, an answer
 * (never a crash, a leak or a read out of bounds); what it accepts is a
 * SAML metadata root with exactly one signature, that verifies, and a
 * validUntil. The seeds are an aggregate signed with that key and its
 * refused variants (rsp_testidp.sign_metadata with tests/fuzz/saml's key,
 * validUntil 2023-11-21). The time is
 * the seeds' signing time, so that their validUntil is in the future. */
#include <string.h>

#include <apr_file_io.h>
#include <apr_strings.h>

#include "fuzz_common.h"
#include "fuzz_saml.h"
#include "rsp_md_verify.h"

static const char *cert_pem;

static void load_cert(void)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;
    apr_pool_t *p = fuzz_root();

    if (apr_file_open(&f, apr_pstrcat(p, fuzz_saml_dir(), "/idp.crt", NULL),
                      APR_FOPEN_READ, 0, p)
        != APR_SUCCESS
        || apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS) {
        abort();
    }
    buf = apr_palloc(p, (apr_size_t)fi.size + 1);
    if (apr_file_read_full(f, buf, (apr_size_t)fi.size, &n) != APR_SUCCESS) {
        abort();
    }
    buf[n] = '\0';
    apr_file_close(f);
    cert_pem = buf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_saml_init();
    load_cert();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    const char *err = NULL;
    apr_time_t vu = 0;
    apr_status_t rv;

    p = fuzz_pool_begin();
    rv = rsp_md_verify(p, fuzz_bytes(p, data, size), size, cert_pem,
                       apr_time_from_sec(FUZZ_MINTED), 366 * 24 * 3600, &vu, &err);
    if (rv == APR_SUCCESS) {
        FUZZ_ASSERT(vu > apr_time_from_sec(FUZZ_MINTED));
        FUZZ_ASSERT(memmem(data, size, "Signature", 9) != NULL);
    }
    else {
        FUZZ_ASSERT(rv == APR_EINVAL && err
                    && !strncmp(err, "metadata signature: ", 20));
    }
    fuzz_pool_end(p);
    return 0;
}
