/* What the rsp_saml*.c files share and nothing else needs. */
#ifndef RSP_SAML_INT_H
#define RSP_SAML_INT_H

/* A certificate, DER (rsp_idp_index.h). */
typedef rsp_der_t der_t;

/* rsp_saml_metadata.c: the SP's metadata (with_keys 0: without its
 * KeyDescriptors, for its own Lasso servers); the public keys (PEM) of
 * certificates (der_t). */
const char *rsp_saml_metadata_xml(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                  const char *base_url, int with_keys);
apr_array_header_t *rsp_saml_idp_public_keys(apr_pool_t *p,
                                             const apr_array_header_t *certs);

/* rsp_saml.c: the decryption keys loaded (rsp_dec_key_t *, in the order
 * of sp->dec_keys; rsp_saml_decrypt.h), NULL before rsp_saml_sp_load. */
const apr_array_header_t *rsp_saml_decryption_keys(const rsp_saml_sp_t *sp);

/* rsp_saml.c: the SP's own keys, loaded once. */
struct _LassoKey;
struct rsp_saml_keys {
    struct _LassoKey *signing;   /* NULL for a guard */
    apr_array_header_t *dec;     /* rsp_dec_key_t *: dec_keys and
                                  * dec_certs, for rsp_saml_decrypt.c
                                  * (read by every thread) */
};
/* A public or private key, PEM, as Lasso signs and verifies with it. */
struct _LassoKey *rsp_saml_key_from_pem(const char *pem);
/* A file's text (NUL-terminated) if it is no larger than max. */
apr_status_t rsp_saml_read_file(const char **out, apr_pool_t *p,
                                const char *path, apr_off_t max,
                                const char **err);

/* rsp_saml_idps.c: the SP's first generation of IdPs, read from its
 * metadata files, proven by making the first IdP known to a server. */
apr_status_t rsp_saml_idps_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                                rsp_sp_input_t *input, const char **err);
/* How many IdPs' keys the generation sp sees holds decoded. */
int rsp_saml_idp_keys_loaded(const rsp_saml_sp_t *sp);

/* rsp_saml_idps.c: a generation of its own for idps (an MDQ entity):
 * pool (unmanaged) is its memory from now on; one reference (the
 * caller's), counted under ref_lock. NULL when it cannot be made (pool
 * still the caller's). */
struct apr_thread_mutex_t;
struct rsp_idp_gen *rsp_saml_gen_new(apr_pool_t *pool, rsp_idp_index_t *idps,
                                     apr_uint64_t number,
                                     struct apr_thread_mutex_t *ref_lock);
/* A reference more, given back when p is cleared (ref_lock held). */
void rsp_saml_gen_pin_locked(struct rsp_idp_gen *g, apr_pool_t *p);
/* A reference less (ref_lock held): whether it was the last (then
 * rsp_saml_gen_free, once the lock is released). */
int rsp_saml_gen_unref_locked(struct rsp_idp_gen *g);
void rsp_saml_gen_free(struct rsp_idp_gen *g);
/* A reference less, taking ref_lock; freed with the last. */
void rsp_saml_gen_release(struct rsp_idp_gen *g);

/* rsp_saml_mdq.c: sp's table of MDQ entities in this process (sp->mdq),
 * made at load when ReplaySPIdPMetadataQuery is set: the certificate
 * read, the cache directory checked. */
apr_status_t rsp_saml_mdq_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                               const char **err);
/* The IdP entity_id by MDQ (none of sp's generation's): from this
 * process's table while current, else the host's copy or the server
 * (rsp_mdq_get), checked, filtered as the metadata files are; *g its own
 * generation, pinned to sp->pin_pool. NULL when it cannot be had (logged
 * once per RSP_MDQ_NEGATIVE_S), or sp is not pinned. */
const rsp_idp_t *rsp_saml_mdq_find(const rsp_saml_sp_t *sp,
                                   const char *entity_id,
                                   struct rsp_idp_gen **g);

/* rsp_saml_encrypted_id.c: the EncryptedID Lasso parsed in place of a
 * NameID (*encrypted; *name_id NULL), in a message whose signatures are
 * verified (where: which, for the log: "the assertion's Subject", "the
 * LogoutRequest"; issuer: its Issuer), decrypted with the SP's keys
 * (rsp_saml_decrypt_id): *name_id the NameID it holds, *encrypted
 * released. Lasso itself has no decryption key (rsp_saml_server_new):
 * it stops at an EncryptedID with
 * LASSO_PROFILE_ERROR_MISSING_ENCRYPTION_PRIVATE_KEY, after the checks
 * of signatures that come before it. On refusal APR_EGENERAL, *check and
 * *detail (rsp_saml_decrypt_id's; subject when there is nothing to
 * decrypt). */
struct _LassoSaml2NameID;
struct _LassoSaml2EncryptedElement;
apr_status_t rsp_saml_encrypted_id_take(apr_pool_t *p, const rsp_saml_sp_t *sp,
                                        const char *issuer, const char *where,
                                        struct _LassoSaml2NameID **name_id,
                                        struct _LassoSaml2EncryptedElement **encrypted,
                                        const char **check,
                                        const char **detail);

/* The check= name of a Lasso error code. */
const char *rsp_saml_check_of(int rc);

/* Parse an optional time attribute (absent: 0); 0 when malformed. */
int rsp_saml_opt_time(const char *s, apr_time_t *out);

/* Refuse with a check name and a detail: in functions with p, check,
 * detail, rv and a label done. */
#define REFUSE(c, ...) do {                                   \
        *check = (c);                                          \
        *detail = apr_psprintf(p, __VA_ARGS__);                \
        rv = APR_EGENERAL;                                     \
        goto done;                                             \
    } while (0)

#endif
