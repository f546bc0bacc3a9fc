/* Decrypting an EncryptedAssertion as Lasso does (lasso_node_decrypt_xmlnode
 * in Lasso 2.8: xmlSecEncCtxDecryptToBuffer on the EncryptedKey with the
 * SP's key, xmlSecKeyReadBuffer of an AES key, then the EncryptedData with
 * it), to a buffer that is checked before Lasso decrypts it again. */
#include <string.h>

#include <apr_strings.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/buffer.h>
#include <xmlsec/crypto.h>
#include <xmlsec/keys.h>
#include <xmlsec/xmlenc.h>
#include <xmlsec/xmltree.h>

#include "rsp_saml_decrypt.h"

static apr_status_t keys_free(void *data)
{
    apr_array_header_t *keys = data;
    int i;

    for (i = 0; i < keys->nelts; i++) {
        xmlSecKeyDestroy(APR_ARRAY_IDX(keys, i, xmlSecKeyPtr));
    }
    return APR_SUCCESS;
}

apr_status_t rsp_saml_decrypt_keys_load(apr_array_header_t **out,
                                        apr_pool_t *p,
                                        const apr_array_header_t *pems,
                                        const char **err)
{
    apr_array_header_t *keys = apr_array_make(p, pems->nelts ? pems->nelts : 1,
                                              sizeof(xmlSecKeyPtr));
    int i;

    apr_pool_cleanup_register(p, keys, keys_free, apr_pool_cleanup_null);
    for (i = 0; i < pems->nelts; i++) {
        const char *pem = APR_ARRAY_IDX(pems, i, const char *);
        /* What Lasso does with each (lasso_xmlsec_load_private_key_from_buffer). */
        xmlSecKeyPtr key = xmlSecCryptoAppKeyLoadMemory(
            (const xmlSecByte *)pem, (xmlSecSize)strlen(pem),
            xmlSecKeyDataFormatPem, NULL, NULL, NULL);

        if (!key) {
            *err = apr_psprintf(p, "xmlsec cannot load decryption key %d", i + 1);
            return APR_EGENERAL;
        }
        APR_ARRAY_PUSH(keys, xmlSecKeyPtr) = key;
    }
    *out = keys;
    return APR_SUCCESS;
}

/* The session key the EncryptedKey carries, with the first key that
 * decrypts it (Lasso's order), or NULL. */
static xmlSecKeyPtr session_key(const apr_array_header_t *keys,
                                xmlNodePtr enc_key)
{
    xmlSecKeyPtr sym = NULL;
    int i;

    for (i = 0; keys && i < keys->nelts && !sym; i++) {
        xmlSecEncCtxPtr ctx = xmlSecEncCtxCreate(NULL);
        xmlSecBufferPtr buf;

        if (!ctx) {
            break;
        }
        /* the context destroys its key: a duplicate (the same EVP_PKEY) */
        ctx->encKey = xmlSecKeyDuplicate(APR_ARRAY_IDX(keys, i, xmlSecKeyPtr));
        ctx->mode = xmlEncCtxModeEncryptedKey;
        buf = ctx->encKey ? xmlSecEncCtxDecryptToBuffer(ctx, enc_key) : NULL;
        if (buf) {
            sym = xmlSecKeyReadBuffer(xmlSecKeyDataAesId, buf);
        }
        xmlSecEncCtxDestroy(ctx);
    }
    return sym;
}

/* The bytes the EncryptedData's CipherValue decodes to, at most: what
 * its decryption can yield is shorter (by the IV, and the tag or the
 * padding). */
static apr_size_t cipher_bytes(xmlNodePtr enc_data)
{
    xmlNodePtr cv = xmlSecFindChild(
        xmlSecFindChild(enc_data, xmlSecNodeCipherData, xmlSecEncNs),
        xmlSecNodeCipherValue, xmlSecEncNs);
    apr_size_t n = 0;
    const xmlChar *c;

    for (cv = cv ? cv->children : NULL; cv; cv = cv->next) {
        for (c = cv->type == XML_TEXT_NODE ? cv->content : NULL; c && *c; c++) {
            n += *c != ' ' && *c != '\t' && *c != '\r' && *c != '\n';
        }
    }
    return n / 4 * 3;
}

#define REFUSE(c, ...) do {                                   \
        *check = (c);                                          \
        *detail = apr_psprintf(p, __VA_ARGS__);                \
        rv = APR_EGENERAL;                                     \
        goto done;                                             \
    } while (0)

apr_status_t rsp_saml_decrypt_check(apr_pool_t *p,
                                    const apr_array_header_t *keys,
                                    const char *names,
                                    const rsp_shape_t *shape, const char **id,
                                    const char **check, const char **detail)
{
    xmlSecEncCtxPtr ctx = NULL;
    xmlSecKeyPtr sym;
    xmlSecBufferPtr buf;
    const char *why;
    apr_status_t rv = APR_SUCCESS;

    *id = NULL;
    if (!shape->enc_data || !shape->enc_key) {
        REFUSE("decrypt", "no EncryptedData or EncryptedKey to decrypt");
    }
    /* Too large to be an assertion: not worth the private key's time. */
    if (cipher_bytes(shape->enc_data) > RSP_DECRYPTED_MAX_SIZE + 64) {
        REFUSE("decrypted-size", "the EncryptedAssertion from %s holds %"
               APR_SIZE_T_FMT " bytes of ciphertext (an assertion of at most "
               "%d bytes is accepted)", shape->issuer,
               cipher_bytes(shape->enc_data), RSP_DECRYPTED_MAX_SIZE);
    }
    if (!(sym = session_key(keys, shape->enc_key))) {
        REFUSE("decrypt", "the EncryptedAssertion from %s (data %s, key "
               "transport %s, %d EncryptedKey) cannot be decrypted with any "
               "key of this SP (tried: %s)", shape->issuer,
               rsp_alg_name(shape->data_alg), rsp_alg_name(shape->key_alg),
               shape->keys, names);
    }
    if (!(ctx = xmlSecEncCtxCreate(NULL))) {
        xmlSecKeyDestroy(sym);
        REFUSE("decrypt", "cannot create an xmlsec decryption context");
    }
    ctx->encKey = sym;
    ctx->mode = xmlEncCtxModeEncryptedData;
    if (!(buf = xmlSecEncCtxDecryptToBuffer(ctx, shape->enc_data))) {
        REFUSE("decrypt", "the EncryptedData from %s (%s) does not decrypt "
               "with the key its EncryptedKey carries", shape->issuer,
               rsp_alg_name(shape->data_alg));
    }
    why = rsp_saml_plaintext_shape(p, (const char *)xmlSecBufferGetData(buf),
                                   (apr_size_t)xmlSecBufferGetSize(buf), id,
                                   check);
    if (why) {
        *detail = apr_psprintf(p, "the EncryptedAssertion from %s decrypts "
                               "to %s", shape->issuer, why);
        rv = APR_EGENERAL;
    }
done:
    if (ctx) {
        xmlSecEncCtxDestroy(ctx);
    }
    return rv;
}
