/* XML Encryption's algorithms as this SP decrypts them, with OpenSSL and
 * without xmlsec (Debian 12's xmlsec 1.2.37 unwraps a key only with
 * rsa-oaep-mgf1p and SHA-1, and has no XML Encryption 1.1 rsa-oaep):
 *
 * - key transport: RSA-OAEP, as xmlenc#rsa-oaep-mgf1p (MGF1 with SHA-1)
 *   or xmlenc11#rsa-oaep (the MGF its xenc11:MGF names, MGF1 with SHA-1
 *   when none), with the digest its ds:DigestMethod names (SHA-1 when
 *   none: SHA-1, SHA-224, SHA-256, SHA-384, SHA-512) and the label its
 *   xenc:OAEPparams carries (none when absent); RSA-1.5 never (a
 *   decryption oracle);
 * - data: AES-128, -192 or -256 in GCM (a 12-byte IV first, the 16-byte
 *   tag last) or CBC (a 16-byte IV first, XML Encryption's padding: the
 *   last byte counts the padding bytes, 1 to 16, whatever the others).
 *
 * A failure says nothing of its cause: no detail, no code, and the work
 * done does not depend on where it failed (rsp_saml_decrypt.c goes on with
 * a random key when no key unwraps). */
#ifndef RSP_XENC_H
#define RSP_XENC_H

#include <apr_pools.h>
#include <libxml/tree.h>
#include <openssl/evp.h>

#define RSP_XENC_NS "http://www.w3.org/2001/04/xmlenc#"
#define RSP_XENC11_NS "http://www.w3.org/2009/xmlenc11#"
#define RSP_DS_NS "http://www.w3.org/2000/09/xmldsig#"

#define RSP_ALG_RSA_OAEP_MGF1P RSP_XENC_NS "rsa-oaep-mgf1p"
#define RSP_ALG_RSA_OAEP RSP_XENC11_NS "rsa-oaep"
#define RSP_ALG_RSA_1_5 RSP_XENC_NS "rsa-1_5"
#define RSP_ALG_AES128_CBC RSP_XENC_NS "aes128-cbc"
#define RSP_ALG_AES192_CBC RSP_XENC_NS "aes192-cbc"
#define RSP_ALG_AES256_CBC RSP_XENC_NS "aes256-cbc"
#define RSP_ALG_AES128_GCM RSP_XENC11_NS "aes128-gcm"
#define RSP_ALG_AES192_GCM RSP_XENC11_NS "aes192-gcm"
#define RSP_ALG_AES256_GCM RSP_XENC11_NS "aes256-gcm"

/* An RSA-OAEP label (xenc:OAEPparams) longer than this is refused. */
#define RSP_XENC_LABEL_MAX 1024

/* A data algorithm: AES in CBC or GCM mode, with a key of key_bytes. */
typedef struct {
    int gcm;            /* 1: GCM, 0: CBC */
    int key_bytes;      /* 16, 24 or 32 */
    const char *name;   /* aes128-gcm, ... */
} rsp_xenc_data_t;

/* The data algorithm of an EncryptionMethod URI, or NULL. */
const rsp_xenc_data_t *rsp_xenc_data_alg(const char *uri);

/* A key transport: the parameters RSA-OAEP decrypts with. */
typedef struct {
    const EVP_MD *md;            /* the OAEP digest */
    const EVP_MD *mgf1_md;       /* MGF1's digest */
    const unsigned char *label;  /* NULL: none (an empty label) */
    apr_size_t label_len;
    const char *desc;            /* e.g. "rsa-oaep (sha256, mgf1sha256,
                                  * a label)", for log lines */
} rsp_xenc_oaep_t;

/* Read the xenc:EncryptionMethod of an xenc:EncryptedKey (NULL: none):
 * RSA-OAEP with a digest, an MGF and a label this SP knows, each given
 * at most once, and nothing else of XML Encryption's or XML-DSig's in it.
 * NULL when it is, *out filled (in p); else why, with *check
 * "encryption-algorithm" (RSA-1.5, an algorithm, digest or MGF that is
 * not one of the above, an MGF with rsa-oaep-mgf1p other than MGF1-SHA1)
 * or "encryption" (twice the same parameter, a label that is not base64
 * or longer than RSP_XENC_LABEL_MAX). */
const char *rsp_xenc_key_method(rsp_xenc_oaep_t *out, apr_pool_t *p,
                                xmlNodePtr method, const char **check);

/* RSA-OAEP decryption of in (inlen bytes) with key, as oaep says, into
 * out (outsize bytes, at least EVP_PKEY_get_size(key)): 1 and *outlen
 * on success, 0 on any failure (which one is not said). */
int rsp_xenc_unwrap(unsigned char *out, apr_size_t *outlen,
                    apr_size_t outsize, EVP_PKEY *key,
                    const rsp_xenc_oaep_t *oaep, const unsigned char *in,
                    apr_size_t inlen);

/* AES decryption of in (inlen bytes: the IV, the ciphertext and, in GCM,
 * the tag) with key (alg->key_bytes bytes): the plaintext in *out (in p,
 * NUL-terminated, *outlen bytes), 1 on success. 0 when in is too short
 * or not whole blocks, the tag does not verify (GCM: *out is then NULL,
 * nothing of the plaintext is handed out), or the padding is not
 * XML Encryption's (CBC: *out is then the whole decrypted text, for a
 * caller that does the same work either way). */
int rsp_xenc_decrypt_data(char **out, apr_size_t *outlen, apr_pool_t *p,
                          const rsp_xenc_data_t *alg, const unsigned char *key,
                          const unsigned char *in, apr_size_t inlen);

#endif
