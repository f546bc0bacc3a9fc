/* The shape of a SAML Response, read from the parsed document before Lasso
 * sees it: how many assertions, plaintext or encrypted; which algorithms
 * an EncryptedAssertion uses; whether a signature uses SHA-1.
 *
 * This is a count and a list of algorithm names, never a source of
 * identity: who signed in comes from the Lasso objects of the verified
 * assertion. What it proves is what the decryption (rsp_saml_decrypt.h)
 * and Lasso rely on: exactly one assertion, plaintext or encrypted (Lasso
 * would drop an EncryptedAssertion it could not decrypt and go on with
 * whatever plaintext assertions remain), and an encryption this SP
 * decrypts: RSA-OAEP key transport (never RSA-1.5), AES data, nothing
 * fetched from elsewhere. */
#ifndef RSP_SAML_SHAPE_H
#define RSP_SAML_SHAPE_H

#include <apr_pools.h>
#include <libxml/tree.h>

#include "rsp_xenc.h"

/* EncryptedKeys an EncryptedAssertion may hold (one per recipient): each
 * may cost an RSA private-key operation per decryption key. */
#define RSP_ENCRYPTED_KEYS_MAX 4

typedef struct {
    const char *issuer;     /* the Response's Issuer, as written: it selects
                             * a policy (ReplaySPAllowSHA1), nothing else */
    int assertions;         /* saml:Assertion children of the Response */
    int encrypted;          /* saml:EncryptedAssertion children */
    int response_signed;    /* the Response has a ds:Signature child */
    const char *data_alg;   /* encrypted: the EncryptedData's algorithm */
    const char *key_alg;    /* encrypted: the first EncryptedKey's
                             * algorithm URI */
    const char *key_desc;   /* and its key transport in words (digest,
                             * MGF, a label), for log lines */
    int keys;               /* encrypted: EncryptedKey elements */
    xmlNodePtr enc;         /* encrypted, in *doc_out: the
                             * EncryptedAssertion, */
    xmlNodePtr enc_data;    /* its EncryptedData, */
    xmlNodePtr enc_key;     /* and the first EncryptedKey where keys are
                             * looked for (in the EncryptedData's first
                             * KeyInfo, else beside it) */
    const char *weak;       /* NULL, or where a SHA-1 signature or digest is
                             * (the caller decides whether it is allowed) */
} rsp_shape_t;

/* Parse the decoded Response (len bytes, no DOCTYPE: refused; within
 * RSP_MESSAGE_MAX_DEPTH and RSP_MESSAGE_MAX_ATTRIBUTES, checked before it
 * is parsed) and check its shape: a samlp:Response with exactly one
 * Assertion or
 * EncryptedAssertion child; an EncryptedAssertion holds one EncryptedData
 * encrypted with AES (CBC or GCM) and at most RSP_ENCRYPTED_KEYS_MAX
 * EncryptedKeys that all use RSA-OAEP with parameters known here
 * (rsp_xenc_key_method), at least one in the EncryptedData's KeyInfo or
 * beside it, every ciphertext a CipherValue (a CipherReference's URI
 * would be fetched, before any signature is checked).
 * On refusal APR_EGENERAL with *check one of
 * xml, xml-depth, assertion-count, encryption, encryption-algorithm and
 * *detail.
 * *doc_out (may be NULL) receives the parsed document on success; the
 * caller frees it with xmlFreeDoc. */
apr_status_t rsp_saml_shape(rsp_shape_t *out, apr_pool_t *p, const char *xml,
                            apr_size_t len, xmlDocPtr *doc_out,
                            const char **check, const char **detail);

/* What a decryption may yield: it may come before any signature is
 * checked (an unsigned Response), and Lasso reads it after, so it is
 * checked first. */
#define RSP_DECRYPTED_MAX_SIZE (128 * 1024)  /* bytes */
#define RSP_DECRYPTED_MAX_DEPTH 64           /* the Assertion is level 1 */
#define RSP_DECRYPTED_MAX_ELEMENTS 4096
#define RSP_DECRYPTED_MAX_ATTRIBUTES 64      /* on one element, xmlns too */

/* What any SAML message read here may have, before libxml2 parses it
 * (rsp_saml_shape, rsp_saml_redirect_peek): libxml2 2.9 checks an
 * element's attributes for duplicates pairwise (a 180 KB element of
 * 25,000 attributes is a second and a half, parsed twice, ours and
 * Lasso's), and the signature checks after do work that grows with the
 * depth of every element. Refused with check=xml (attributes) or
 * xml-depth; the size is ReplaySPMaxBodySize's business. */
#define RSP_MESSAGE_MAX_DEPTH (RSP_DECRYPTED_MAX_DEPTH + 1) /* Response 1 */
#define RSP_MESSAGE_MAX_ATTRIBUTES RSP_DECRYPTED_MAX_ATTRIBUTES

/* The plaintext of an EncryptedAssertion (len bytes): NULL when it is
 * exactly one saml:Assertion element, with nothing beside it but
 * whitespace, within the limits above (*id, when id is not NULL: its ID
 * attribute, NULL if it has none); else why, with *check one of
 * decrypted-size (bytes, elements, or attributes of one element),
 * xml-depth, assertion-count (no element, more than one, one that is not
 * saml:Assertion, or text, a comment or a processing instruction beside
 * it) or xml (not well-formed, a DOCTYPE). The limits are checked by a
 * scan of the bytes that stops at the first one exceeded, before libxml2
 * parses anything (its duplicate-attribute check is quadratic). */
const char *rsp_saml_plaintext_shape(apr_pool_t *p, const char *text,
                                     apr_size_t len, const char **id,
                                     const char **check);

/* What an EncryptedID may decrypt to: one saml:NameID, its value one
 * text, within these limits (an identifier, not a document). */
#define RSP_DECRYPTED_ID_MAX_SIZE 4096        /* bytes */
#define RSP_DECRYPTED_ID_MAX_ATTRIBUTES 16    /* xmlns too */

/* A NameID as an EncryptedID gave it (strings in the caller's pool;
 * NULL: the attribute is absent). */
typedef struct {
    const char *value;
    const char *format;
    const char *name_qualifier;
    const char *sp_name_qualifier;
    const char *sp_provided_id;
} rsp_name_id_t;

/* An EncryptedID as XML text (len bytes: one saml:EncryptedID element,
 * serialised from what Lasso parsed of a message whose signature was
 * verified), read as rsp_saml_shape reads an EncryptedAssertion: the
 * same algorithms (one EncryptedData with AES, RSA-OAEP key transport
 * with known parameters, at most RSP_ENCRYPTED_KEYS_MAX EncryptedKeys,
 * inline or beside the EncryptedData), CipherValues only, within
 * RSP_MESSAGE_MAX_DEPTH and RSP_MESSAGE_MAX_ATTRIBUTES. On success *out
 * is filled (issuer: for log lines; enc: the EncryptedID) and *doc_out
 * holds the document its nodes are in (the caller frees it); else
 * APR_EGENERAL with *check xml, xml-depth, encryption or
 * encryption-algorithm, and *detail. */
apr_status_t rsp_saml_encrypted_id_shape(rsp_shape_t *out, apr_pool_t *p,
                                         const char *xml, apr_size_t len,
                                         const char *issuer,
                                         xmlDocPtr *doc_out,
                                         const char **check,
                                         const char **detail);

/* The plaintext of an EncryptedID (len bytes): NULL when it is exactly
 * one saml:NameID element whose value is one non-empty text (no child
 * element, comment or CDATA section), with nothing beside it but
 * whitespace, within RSP_DECRYPTED_ID_MAX_SIZE bytes and
 * RSP_DECRYPTED_ID_MAX_ATTRIBUTES attributes; *out then holds it. Else
 * why, with *check decrypted-size, xml-depth (an element inside it), xml
 * (not well-formed, a DOCTYPE) or subject (no element, another element,
 * more than one, anything beside it, an empty or split value). Scanned before libxml2 parses it, as
 * rsp_saml_plaintext_shape does. */
const char *rsp_saml_name_id_plaintext(apr_pool_t *p, const char *text,
                                       apr_size_t len, rsp_name_id_t *out,
                                       const char **check);

/* An HTTP-Redirect message (the SAMLRequest or SAMLResponse parameter,
 * URL-decoded: base64 of raw DEFLATE), read before Lasso parses it (Lasso
 * aborts the whole process on some malformed messages): it must inflate
 * to at most 128 KiB of well-formed XML (within RSP_MESSAGE_MAX_DEPTH and
 * RSP_MESSAGE_MAX_ATTRIBUTES) without a DOCTYPE whose root is
 * samlp:ROOT with at most one saml:Issuer, non-empty, in *issuer (NULL when
 * there is none); a LogoutRequest must hold exactly one of saml:BaseID,
 * saml:NameID and saml:EncryptedID. NULL when it does, else why, with
 * *check "binding" (not base64 or not DEFLATE), "xml" or "xml-depth". */
const char *rsp_saml_redirect_peek(apr_pool_t *p, const char *message,
                                   const char *root, const char **issuer,
                                   const char **check);

/* An HTTP-POST message (the SAMLRequest or SAMLResponse form value:
 * base64, whitespace allowed, of at most 128 KiB of XML), read as
 * rsp_saml_redirect_peek reads one: the same checks, *xml the decoded
 * text (NUL-terminated) and *weak whether its own signature uses SHA-1
 * (rsp_saml_weak_signature), else NULL. */
const char *rsp_saml_post_peek(apr_pool_t *p, const char *message,
                               const char *root, const char **xml,
                               const char **issuer, const char **weak,
                               const char **check);

/* NULL, or "WHERE signature uses ALG" when a ds:Signature child of node
 * uses a SHA-1 signature method or digest. */
const char *rsp_saml_weak_signature(apr_pool_t *p, xmlNodePtr node,
                                    const char *where);

/* A short name of an algorithm URI (the part after '#'), for log lines. */
const char *rsp_alg_name(const char *uri);

#endif
