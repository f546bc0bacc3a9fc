#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz_common.h"
#include "fuzz_saml.h"
#include "rsp_log.h"

#include <sanitizer/lsan_interface.h>

#ifndef FUZZ_SAML_DIR
#define FUZZ_SAML_DIR "tests/fuzz/saml"
#endif

/* Set once by fuzz_saml_init. */
static int logging;

int fuzz_saml_logging(void)
{
    return logging;
}

static void log_stderr(void *baton, int level, const char *msg)
{
    fprintf(stderr, "rsp[%d]: %s\n", level, msg);
}

/* GLib ends the process with SIGTRAP on a fatal message (g_error), which
 * libFuzzer does not catch: make it an abort, which it reports with the
 * stack and the input. */
static void on_trap(int sig)
{
    abort();
}

const char *fuzz_saml_dir(void)
{
    return FUZZ_SAML_DIR;
}

void fuzz_saml_init(void)
{
    const char *err = NULL;

    /* GLib's slice allocator would hide Lasso's objects from ASan. */
    setenv("G_SLICE", "always-malloc", 0);
    signal(SIGTRAP, on_trap);
    fuzz_init();
    /* What lives as long as the process is no leak. */
    __lsan_disable();
    if (rsp_saml_global_init(&err) != APR_SUCCESS) {
        fprintf(stderr, "fuzz: Lasso: %s\n", err);
        abort();
    }
    __lsan_enable();
    rsp_saml_log_install();
    if (getenv("FUZZ_LOG")) {
        logging = 1;
        rsp_log_set_sink(log_stderr, NULL);
    }
}

void fuzz_saml_sp(fuzz_sp_t *out, int allow_sha1)
{
    apr_pool_t *p = fuzz_root();
    const char *dir = getenv("RSP_FUZZ_SAML_DIR"), *err = NULL;
    rsp_sp_input_t input;

    if (!dir) {
        dir = FUZZ_SAML_DIR;
    }
    memset(out, 0, sizeof(*out));
    out->sp.entity_id = FUZZ_SP_ENTITY;
    out->sp.key_file = apr_pstrcat(p, dir, "/sp.key", NULL);
    out->sp.cert_file = apr_pstrcat(p, dir, "/sp.crt", NULL);
    out->sp.idp_files = apr_array_make(p, 1, sizeof(const char *));
    APR_ARRAY_PUSH(out->sp.idp_files, const char *) =
        apr_pstrcat(p, dir, "/idp-metadata.xml", NULL);
    out->sp.enc_publish = -1;
    if (allow_sha1) {
        out->sp.sha1_idps = apr_array_make(p, 1, sizeof(const char *));
        APR_ARRAY_PUSH(out->sp.sha1_idps, const char *) = FUZZ_IDP_ENTITY;
    }
    /* The fixtures live as long as the process (in pool memory, which
     * LeakSanitizer does not scan): no leak. */
    __lsan_disable();
    if (rsp_saml_sp_load(&out->sp, p, &input, &err) != APR_SUCCESS
        || rsp_saml_server_new(&out->server, &out->sp, &err) != APR_SUCCESS) {
        fprintf(stderr, "fuzz: cannot load the SP of %s: %s\n", dir, err);
        abort();
    }
    /* seen as a request sees it: its IdPs pinned */
    out->sp = *rsp_saml_sp_pin(&out->sp, p);
    __lsan_enable();
}
