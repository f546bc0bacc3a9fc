/* An EncryptedAssertion decrypted before Lasso decrypts it, to see what
 * comes out: Lasso hands the plaintext to xmlsec, which parses it without
 * libxml2's limits (XML_PARSE_HUGE: no depth limit; quadratic work in the
 * depth follows, in c14n and in Lasso's copies), and Lasso keeps only its
 * first node (a second Assertion was ignored, silently). The decryption
 * is the one Lasso does, with the same keys in the same order, the same
 * EncryptedKey and the same xmlsec calls: Lasso then decrypts the very
 * plaintext checked here. */
#ifndef RSP_SAML_DECRYPT_H
#define RSP_SAML_DECRYPT_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "rsp_saml.h"
#include "rsp_saml_shape.h"

/* The decryption keys (PEM, in the order they are tried) loaded once for
 * xmlsec: *out holds xmlSecKeyPtr, destroyed with p. Only read after:
 * each decryption works on a duplicate (the same OpenSSL key, counted). */
apr_status_t rsp_saml_decrypt_keys_load(apr_array_header_t **out,
                                        apr_pool_t *p,
                                        const apr_array_header_t *pems,
                                        const char **err);

/* Decrypt the EncryptedAssertion whose shape was checked (shape->enc_data
 * and shape->enc_key, in the document still parsed): the session key
 * from the EncryptedKey with the first of keys (rsp_saml_decrypt_keys_load)
 * that decrypts it, the EncryptedData with that key; then check the
 * plaintext (rsp_saml_plaintext_shape). *id: the ID of the Assertion that
 * came out (NULL if it has none). On refusal APR_EGENERAL, *check decrypt
 * or one of rsp_saml_plaintext_shape's, and *detail; names (the keys
 * tried, for the log) says which keys were tried. */
apr_status_t rsp_saml_decrypt_check(apr_pool_t *p,
                                    const apr_array_header_t *keys,
                                    const char *names,
                                    const rsp_shape_t *shape, const char **id,
                                    const char **check, const char **detail);

#endif
