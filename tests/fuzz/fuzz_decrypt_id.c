/* An EncryptedID decrypted by this module (rsp_saml_decrypt.h): its shape
 * (rsp_saml_encrypted_id_shape: the algorithms, digests, MGFs, labels,
 * CipherValues only), which EncryptedKey is for which key, the unwrap and
 * the data (rsp_xenc.c), and what it decrypts to
 * (rsp_saml_name_id_plaintext: one saml:NameID). Lasso is not called: in
 * the module the EncryptedID is one Lasso parsed from a message whose
 * signature was verified, serialised; here any input reaches the
 * decryption.
 *
 * The input is the XML of a saml:EncryptedID; the keys are the fixture
 * SP's (tests/fuzz/saml/sp.key with its certificate, and the same key
 * without one). The seeds are EncryptedIDs of a NameID that
 * python3-cryptography and xmlsec1 encrypted for that SP
 * (gen-saml-corpus.py).
 *
 * Invariants: a refusal has a check= and a detail; with AES-CBC every
 * refusal after the shape is check=decrypt or decrypted-size (no oracle);
 * what is accepted is a NameID with a non-empty value, within
 * RSP_DECRYPTED_ID_MAX_SIZE, after at least one unwrap. */
#include <string.h>

#include <apr_strings.h>
#include <libxml/parser.h>
#include <sanitizer/lsan_interface.h>

#include "fuzz_common.h"
#include "fuzz_saml.h"
#include "rsp_saml.h"
#include "rsp_saml_decrypt.h"
#include "rsp_saml_int.h"
#include "rsp_saml_shape.h"

static fuzz_sp_t sp;
static apr_array_header_t *bare;   /* the SP's key without its certificate */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    apr_array_header_t *pems;
    const char *err = NULL;

    fuzz_saml_init();
    fuzz_saml_sp(&sp, 0);
    pems = apr_array_make(fuzz_root(), 1, sizeof(const char *));
    APR_ARRAY_PUSH(pems, const char *) = sp.sp.key_pem;
    __lsan_disable();
    if (rsp_saml_decrypt_keys_load(&bare, fuzz_root(), pems, NULL, &err)
        != APR_SUCCESS) {
        fprintf(stderr, "fuzz: %s\n", err);
        abort();
    }
    __lsan_enable();
    return 0;
}

static void run(apr_pool_t *p, const char *xml, apr_size_t len,
                const apr_array_header_t *keys)
{
    rsp_shape_t shape;
    rsp_name_id_t n;
    xmlDocPtr doc = NULL;
    const char *check = NULL, *detail = NULL;
    const rsp_xenc_data_t *alg;
    apr_status_t rv;
    int unwraps = -1;

    if (rsp_saml_encrypted_id_shape(&shape, p, xml, len, "fuzz", &doc, &check,
                                    &detail) != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail && !doc);
        return;
    }
    alg = rsp_xenc_data_alg(shape.data_alg);
    FUZZ_ASSERT(doc && alg && shape.enc && shape.enc_data && shape.enc_key
                && shape.keys >= 1 && shape.keys <= RSP_ENCRYPTED_KEYS_MAX
                && shape.key_desc);
    check = detail = NULL;
    rv = rsp_saml_decrypt_id(&n, &unwraps, p, keys, "fuzz", &shape, &check,
                             &detail);
    if (fuzz_saml_logging()) {
        fprintf(stderr, rv == APR_SUCCESS ? "decrypted: %s%s\n"
                                          : "refused: check=%s: %s\n",
                rv == APR_SUCCESS ? n.value : check,
                rv == APR_SUCCESS ? "" : detail);
    }
    if (rv != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail && *detail && !n.value);
        FUZZ_ASSERT(alg->gcm || !strcmp(check, "decrypt")
                    || !strcmp(check, "decrypted-size"));
    }
    else {
        FUZZ_ASSERT(n.value && *n.value
                    && strlen(n.value) < RSP_DECRYPTED_ID_MAX_SIZE);
        FUZZ_ASSERT(unwraps >= 1
                    && unwraps <= RSP_ENCRYPTED_KEYS_MAX * keys->nelts);
    }
    xmlFreeDoc(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    char *xml = fuzz_bytes(p, data, size);

    run(p, xml, size, rsp_saml_decryption_keys(&sp.sp));
    run(p, xml, size, bare);
    fuzz_pool_end(p);
    return 0;
}
