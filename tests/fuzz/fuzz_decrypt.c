/* The decryption path on its own (rsp_saml_decrypt.h): the shape check
 * (rsp_saml_shape: the EncryptedKeys' algorithms, digests, MGFs and
 * labels), which EncryptedKey is for which key (the KeyInfo: certificate,
 * issuer and serial, subject name, KeyName), the unwrap and the data
 * (rsp_xenc.c), the plaintext check, and the Response Lasso would be given
 * (rsp_saml_decrypt_splice). No signature is verified and Lasso is not
 * called: every input reaches the decryption.
 *
 * The input is the decoded XML of a Response; the keys are the fixture
 * SP's (tests/fuzz/saml/sp.key with its certificate, and the same key
 * without one). The seeds are Responses whose assertion python3-cryptography
 * encrypted for that SP (gen-saml-corpus.py): each key transport, AES
 * mode, way of naming the key, inline and peer keys, other recipients,
 * and broken ones.
 *
 * Invariants: a refusal has a check= and a detail; with AES-CBC every
 * refusal after the ciphertext's size is check=decrypt (no oracle); what
 * is accepted is one saml:Assertion within the limits, and the Response
 * made of it holds exactly that assertion, no EncryptedAssertion, no
 * signature of its own, and says it is verified only for a signed
 * Response around an assertion without a signature. */
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
#include "rsp_util.h"

/* Set up once: read only by the inputs. */
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
    /* it lives as long as the process, in pool memory: no leak */
    __lsan_disable();
    if (rsp_saml_decrypt_keys_load(&bare, fuzz_root(), pems, NULL, &err)
        != APR_SUCCESS) {
        fprintf(stderr, "fuzz: %s\n", err);
        abort();
    }
    __lsan_enable();
    return 0;
}

static int is_el(const xmlNode *n, const char *ns, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href
        && !strcmp((const char *)n->ns->href, ns)
        && !strcmp((const char *)n->name, name);
}

#define NS_SAML "urn:oasis:names:tc:SAML:2.0:assertion"

/* The Response made for Lasso, read back. */
static void check_spliced(apr_pool_t *p, const char *b64, int verified,
                          const rsp_shape_t *shape, const rsp_decrypted_t *dec)
{
    char *xml;
    apr_size_t len;
    xmlDocPtr doc;
    xmlNodePtr n, a = NULL;
    int assertions = 0, signed_a = 0;
    xmlChar *id;

    FUZZ_ASSERT(b64 && rsp_b64_decode(p, b64, 0, &xml, &len) == 0);
    doc = xmlReadMemory(xml, (int)len, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR
                            | XML_PARSE_NOWARNING);
    FUZZ_ASSERT(doc);
    for (n = xmlDocGetRootElement(doc)->children; n; n = n->next) {
        FUZZ_ASSERT(!is_el(n, NS_SAML, "EncryptedAssertion"));
        FUZZ_ASSERT(!is_el(n, RSP_DS_NS, "Signature"));
        if (is_el(n, NS_SAML, "Assertion")) {
            assertions++;
            a = n;
        }
    }
    FUZZ_ASSERT(assertions == 1);
    id = xmlGetProp(a, BAD_CAST "ID");
    FUZZ_ASSERT(fuzz_str_eq((const char *)id, dec->id));
    xmlFree(id);
    for (n = a->children; n; n = n->next) {
        signed_a |= is_el(n, RSP_DS_NS, "Signature");
    }
    FUZZ_ASSERT(verified == (shape->response_signed && !signed_a));
    xmlFreeDoc(doc);
}

static void run(apr_pool_t *p, const char *xml, apr_size_t len,
                const apr_array_header_t *keys)
{
    rsp_shape_t shape;
    rsp_decrypted_t dec;
    xmlDocPtr doc = NULL;
    const char *check = NULL, *detail = NULL, *b64 = NULL, *again, *id, *tag;
    const rsp_xenc_data_t *alg;
    apr_status_t rv;
    int verified = -1;

    if (rsp_saml_shape(&shape, p, xml, len, &doc, &check, &detail)
        != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail);
        return;
    }
    if (!shape.encrypted) {
        xmlFreeDoc(doc);
        return;
    }
    alg = rsp_xenc_data_alg(shape.data_alg);
    FUZZ_ASSERT(alg && shape.enc && shape.enc_data && shape.enc_key
                && shape.keys >= 1 && shape.keys <= RSP_ENCRYPTED_KEYS_MAX
                && shape.key_desc);
    check = detail = NULL;
    rv = rsp_saml_decrypt(&dec, p, keys, "fuzz", &shape, &check, &detail);
    if (fuzz_saml_logging()) {
        fprintf(stderr, rv == APR_SUCCESS ? "decrypted: %s\n"
                                          : "refused: check=%s: %s\n",
                rv == APR_SUCCESS ? dec.id : check,
                rv == APR_SUCCESS ? "" : detail);
    }
    if (rv != APR_SUCCESS) {
        FUZZ_ASSERT(check && *check && detail && *detail);
        /* CBC is not authenticated: nothing of the plaintext is told */
        FUZZ_ASSERT(alg->gcm || !strcmp(check, "decrypt")
                    || !strcmp(check, "decrypted-size"));
        xmlFreeDoc(doc);
        return;
    }
    FUZZ_ASSERT(dec.text && strlen(dec.text) == dec.len);
    FUZZ_ASSERT(dec.unwraps >= 1
                && dec.unwraps <= RSP_ENCRYPTED_KEYS_MAX * keys->nelts);
    again = rsp_saml_plaintext_shape(p, dec.text, dec.len, &id, &tag);
    FUZZ_ASSERT(!again && fuzz_str_eq(id, dec.id));
    rv = rsp_saml_decrypt_splice(&b64, &verified, p, doc, &shape, &dec,
                                 &check, &detail);
    FUZZ_ASSERT(rv == APR_SUCCESS);
    check_spliced(p, b64, verified, &shape, &dec);
    xmlFreeDoc(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    char *xml = fuzz_bytes(p, data, size);

    /* the SP's key with its certificate, then without (a guard's) */
    run(p, xml, size, rsp_saml_decryption_keys(&sp.sp));
    run(p, xml, size, bare);
    fuzz_pool_end(p);
    return 0;
}
