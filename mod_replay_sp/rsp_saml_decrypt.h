/* An EncryptedAssertion, and an EncryptedID (a Subject's, a
 * LogoutRequest's: rsp_saml_decrypt_id), decrypted by this module, not by
 * Lasso or xmlsec:
 * Debian 12's xmlsec 1.2.37 unwraps a key only with rsa-oaep-mgf1p and
 * SHA-1, which leaves out what much of the field sends (SHA-256 digests,
 * XML Encryption 1.1 rsa-oaep with MGF1-SHA256). The key is unwrapped and
 * the data decrypted with OpenSSL (rsp_xenc.h); the plaintext is checked
 * (rsp_saml_plaintext_shape) and put in the Response in place of the
 * EncryptedAssertion, and Lasso reads that Response: it never decrypts an
 * assertion itself.
 *
 * Where the keys are: EncryptedKeys in the EncryptedData's ds:KeyInfo
 * (inline) and beside the EncryptedData (peer, which a ds:RetrievalMethod
 * names), at most RSP_ENCRYPTED_KEYS_MAX. Which of the SP's keys each is
 * for: the one its ds:KeyInfo names (by X509Certificate: the same public
 * key; X509IssuerSerial; X509SubjectName; KeyName: the certificate's
 * subject common name or distinguished name, or its SHA-256 or SHA-1
 * fingerprint), else each of them; one whose certificate is none of the
 * SP's is for another recipient and is not tried.
 *
 * No oracle: every key an EncryptedKey may be for is tried, whatever the
 * others gave; when none unwraps a key of the data algorithm's size, the
 * data is decrypted all the same with a random key. A wrong key, a changed
 * or truncated ciphertext, a failed GCM tag or bad CBC padding are one
 * refusal, check=decrypt, with the same detail. AES-CBC is not
 * authenticated, so with it a plaintext that is not an acceptable
 * assertion is that same refusal too (what a garbled plaintext looks like
 * is what the CBC attack on XML Encryption reads); with AES-GCM the
 * plaintext is what the key's holder wrote, and its refusals say what is
 * wrong with it. */
#ifndef RSP_SAML_DECRYPT_H
#define RSP_SAML_DECRYPT_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <libxml/tree.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "rsp_saml_shape.h"

/* A decryption key, loaded once: read only after (OpenSSL 3 keys may be
 * used by several threads at once). */
typedef struct {
    EVP_PKEY *key;
    X509 *cert;              /* NULL: none was configured (a guard) */
    /* what a KeyInfo may name it by (NULL without a certificate) */
    const char *serial;      /* decimal */
    const char *issuer;      /* RFC 2253, compared as rsp_saml_decrypt.c
                              * normalises names */
    const char *subject;
    const char *cn;          /* the subject's common name */
    const char *sha256;      /* the certificate's fingerprints, lowercase */
    const char *sha1;        /* hex without separators */
} rsp_dec_key_t;

/* The decryption keys (PEM, in the order they are configured) and their
 * certificates (certs: NULL, or one entry per key, NULL where there is
 * none), loaded into p (freed with it): *out holds rsp_dec_key_t *. */
apr_status_t rsp_saml_decrypt_keys_load(apr_array_header_t **out,
                                        apr_pool_t *p,
                                        const apr_array_header_t *pems,
                                        const apr_array_header_t *certs,
                                        const char **err);

/* What came out of an EncryptedAssertion. */
typedef struct {
    const char *text;   /* the plaintext (NUL-terminated): exactly one
                         * saml:Assertion, within the limits of
                         * rsp_saml_plaintext_shape */
    apr_size_t len;
    const char *id;     /* its ID attribute, NULL if it has none */
    int unwraps;        /* RSA private-key operations it took (one per
                         * key tried on each EncryptedKey) */
} rsp_decrypted_t;

/* Decrypt the EncryptedAssertion whose shape was checked (shape->enc,
 * shape->enc_data, in the document still parsed) with keys
 * (rsp_saml_decrypt_keys_load; names: those keys for the log). On refusal
 * APR_EGENERAL, *check decrypt, decrypted-size (a ciphertext too long for
 * an assertion, before any key is used) or, with AES-GCM, one of
 * rsp_saml_plaintext_shape's, and *detail. */
apr_status_t rsp_saml_decrypt(rsp_decrypted_t *out, apr_pool_t *p,
                              const apr_array_header_t *keys,
                              const char *names, const rsp_shape_t *shape,
                              const char **check, const char **detail);

/* Decrypt an EncryptedID as rsp_saml_decrypt decrypts an
 * EncryptedAssertion (the same keys, the same search for the recipient's
 * key, the same single refusal, check=decrypt, for whatever does not
 * decrypt), its shape read by rsp_saml_encrypted_id_shape. What comes out
 * must be one saml:NameID (rsp_saml_name_id_plaintext): *out. *unwraps:
 * the RSA private-key operations it took. On refusal APR_EGENERAL, *check
 * decrypt, decrypted-size (a ciphertext too long for a NameID, before any
 * key is used) or, with AES-GCM, one of rsp_saml_name_id_plaintext's, and
 * *detail. Called only on an EncryptedID whose message's signature was
 * verified: the ciphertext is the IdP's. */
apr_status_t rsp_saml_decrypt_id(rsp_name_id_t *out, int *unwraps,
                                 apr_pool_t *p,
                                 const apr_array_header_t *keys,
                                 const char *names, const rsp_shape_t *shape,
                                 const char **check, const char **detail);

/* The Response of doc (its shape: shape) with the decrypted assertion in
 * place of its EncryptedAssertion, serialised (UTF-8) and base64-encoded
 * in *b64, as the ACS would receive it. A signed Response (its signature
 * verified by the caller: it covers the ciphertext, not the plaintext)
 * loses its ds:Signature. *verified: 1 only when the Response was signed
 * and the assertion has no ds:Signature of its own: the Response's
 * verified signature is then all there is to verify, and the reader must
 * not ask for another; 0 otherwise (the assertion's own signature is what
 * the reader must verify). doc is changed (shape->enc and the nodes in it
 * are gone). On failure APR_EGENERAL, *check and *detail. */
apr_status_t rsp_saml_decrypt_splice(const char **b64, int *verified,
                                     apr_pool_t *p, xmlDocPtr doc,
                                     const rsp_shape_t *shape,
                                     const rsp_decrypted_t *dec,
                                     const char **check, const char **detail);

#endif
