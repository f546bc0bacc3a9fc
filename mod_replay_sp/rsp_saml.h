/* SAML with Lasso: load and check an SP definition at startup, build
 * Lasso servers for worker threads, and validate a POSTed Response. */
#ifndef RSP_SAML_H
#define RSP_SAML_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "rsp_idp_index.h"
#include "rsp_util.h"

typedef struct _LassoServer rsp_lasso_server_t;

/* ReplaySPMetadataRefresh's default: 5 minutes */
#define RSP_MD_REFRESH 300
/* ReplaySPMetadataMaxValidity's default: 28 days */
#define RSP_MD_MAX_VALIDITY (28 * 24 * 3600)

#define RSP_IDPDISC_NS "urn:oasis:names:tc:SAML:profiles:SSO:idp-discovery-protocol"

/* A metadata source by URL: ReplaySPIdPMetadataURL URL CERTFILE
 * BACKINGFILE. */
typedef struct {
    const char *url;
    const char *cert_file;
    const char *backing_file;
} rsp_md_url_t;

/* One value of one attribute; a multi-valued attribute is several of these
 * with the same name, in the assertion's order. */
typedef struct {
    const char *name;
    const char *value;
} rsp_attribute_t;

/* One SP as configured in one <Location>: what the directives name and,
 * after rsp_saml_sp_load, what was read from the files. */
typedef struct {
    const char *entity_id;
    const char *key_file;
    const char *cert_file;
    apr_array_header_t *idp_files;  /* const char * */
    apr_array_header_t *md_urls;    /* rsp_md_url_t: ReplaySPIdPMetadataURL
                                     * (each one's backing file is also in
                                     * idp_files, with its certificate) */
    const char *md_ca_file;         /* ReplaySPMetadataCAFile, or NULL */
    apr_array_header_t *idp_file_certs; /* const char *, same order: the
                                         * certificate that signs each file
                                         * (NULL: not checked) */
    apr_int64_t md_max_validity;    /* ReplaySPMetadataMaxValidity, s; 0:
                                     * RSP_MD_MAX_VALIDITY */
    apr_int64_t md_refresh;         /* ReplaySPMetadataRefresh, s; 0:
                                     * RSP_MD_REFRESH */
    /* ReplaySPIdPMetadataQuery BASEURL CERTFILE CACHEDIR (NULL: none):
     * IdPs none of the files names, asked for one by one (rsp_mdq.h) */
    const char *mdq_url;
    const char *mdq_cert_file;
    const char *mdq_cache_dir;
    /* ReplaySPEncryptionKeyFile / ReplaySPEncryptionCertFile, in pairs
     * (NULL: none; the signing pair also decrypts), and which pair the
     * metadata publishes (-1: the first) */
    apr_array_header_t *enc_key_files;  /* const char * */
    apr_array_header_t *enc_cert_files; /* const char * */
    int enc_publish;
    apr_array_header_t *sha1_idps;      /* const char *: ReplaySPAllowSHA1 */
    const char *discovery_url;          /* ReplaySPDiscoveryURL, or NULL */
    const char *discovery_stylesheet;   /* ReplaySPDiscoveryStylesheet */
    const char *default_idp;            /* ReplaySPDefaultIdP, or NULL */
    apr_array_header_t *idp_include;    /* const char *: ReplaySPIdPInclude */
    apr_array_header_t *idp_exclude;    /* const char *: ReplaySPIdPExclude */
    apr_array_header_t *scoped_names;   /* const char *: ReplaySPScopedAttribute
                                         * (beside rsp_scope.h's defaults) */
    int server_idps_max;                /* 0: RSP_SERVER_IDPS */
    int process_idp_keys_max;           /* 0: RSP_PROCESS_IDP_KEYS */
    int guard;                          /* guards another SP: no signing
                                         * pair; decryption keys without
                                         * certificates */
    /* filled by rsp_saml_sp_load */
    const char *key_pem;
    const char *cert_pem;
    const char *cert_b64;           /* DER in base64, for metadata */
    const char *sp_metadata;        /* for our own LassoServer */
    /* The IdPs of every metadata file, read once into a generation:
     * this process's current one in the SP as configured
     * (rsp_saml_sp_refresh replaces it), the one a request started with
     * in rsp_saml_sp_pin's copy. Read them from a pinned copy. */
    rsp_idp_index_t *idps;
    struct rsp_idp_gen *gen;
    struct rsp_idp_live *live;        /* the current generation, this
                                       * process's (per process by design) */
    struct rsp_saml_mdq *mdq;         /* the MDQ entities this process holds
                                       * (per process by design), or NULL */
    apr_pool_t *pin_pool;             /* a pinned copy's request pool */
    int qualify_default;              /* more than one IdP at load */
    struct rsp_saml_keys *keys;       /* the signing and decryption keys,
                                       * loaded once: what servers are
                                       * built from */
    apr_array_header_t *dec_keys;     /* const char *: PEM of every key that
                                       * decrypts, tried in this order */
    apr_array_header_t *dec_certs;    /* const char *: the certificate (PEM)
                                       * of each, NULL where a guard's key
                                       * has none */
    const char *dec_names;            /* those keys, by the SHA-256
                                       * fingerprint of their certificate */
    const char *enc_cert_b64;         /* certificate published for encryption */
} rsp_saml_sp_t;

/* Process-wide Lasso/libxml2/xmlsec initialisation; call once per process
 * before threads start. */
apr_status_t rsp_saml_global_init(const char **err);

/* Route Lasso, libxml2 and xmlsec diagnostics to rsp_log (debug level), and
 * undo it. The callbacks live in this library: whoever may unload it (httpd
 * on restart) must remove them first. */
void rsp_saml_log_install(void);
void rsp_saml_log_remove(void);

/* Which input a load error is about. */
typedef enum {
    RSP_SP_INPUT_KEY = 1,
    RSP_SP_INPUT_CERT,
    RSP_SP_INPUT_IDP,
    RSP_SP_INPUT_ENC_KEY,
    RSP_SP_INPUT_ENC_CERT,
    RSP_SP_INPUT_SHA1,
    RSP_SP_INPUT_OTHER
} rsp_sp_input_t;

/* Read key, certificate and IdP metadata; check that the key matches the
 * certificate, that each metadata file describes an IdP, and that a
 * LassoServer can be built. *err names the file and the problem, *input
 * which of the inputs it is. */
apr_status_t rsp_saml_sp_load(rsp_saml_sp_t *sp, apr_pool_t *p,
                              rsp_sp_input_t *input, const char **err);

/* sp as a request sees it, in p: its IdPs those of the current
 * generation, kept (even once another replaces it) until p is cleared.
 * The same copy for the same p. */
const rsp_saml_sp_t *rsp_saml_sp_pin(const rsp_saml_sp_t *sp, apr_pool_t *p);

/* The IdP entity_id of sp (read from a pinned copy): what its metadata
 * says of it, NULL when it is none of sp's IdPs. Every question a request
 * asks about an IdP goes through here. */
const rsp_idp_t *rsp_saml_idp(const rsp_saml_sp_t *sp, const char *entity_id);

/* Read sp's metadata files again when one of them changed since the
 * current generation was read (or a read of them failed): a new
 * generation replaces the current one in this process (requests under
 * way keep theirs). APR_SUCCESS with *changed 0 when no file changed, 1
 * with the new generation's number in *generation; APR_EINVAL with *err
 * (the file and why, as at load) when they are refused: the current
 * generation stays, and the same files are not read again until they
 * change. */
apr_status_t rsp_saml_sp_refresh(rsp_saml_sp_t *sp, apr_pool_t *ptemp,
                                 int *changed, apr_uint64_t *generation,
                                 const char **err);

/* What this process holds of the IdPs learnt by MDQ
 * (ReplaySPIdPMetadataQuery): the entities in its table, the requests it
 * made to the service (not the host's copies it read), the lookups that
 * failed, and the last failure. */
typedef struct {
    int entities;
    apr_uint64_t fetches, failures;
    apr_uint64_t generation;       /* the last entity's number (1, 2...) */
    int failing;                   /* the last fetch failed, other than
                                      with a 404 (an entity the service
                                      does not know is not its failure) */
    int failing_reason;            /* its rsp_md_reason_e */
    apr_time_t failed_at;          /* the last failure (0: none) */
    const char *last_error;        /* "reason: detail", or NULL */
} rsp_saml_mdq_state_t;
void rsp_saml_mdq_state(const rsp_saml_sp_t *sp, rsp_saml_mdq_state_t *out,
                        apr_pool_t *p);

/* What one metadata file (idp_files[i]) gave the current generation. */
typedef struct {
    apr_uint64_t generation;       /* the generation its content came in */
    int idps;                      /* the IdPs taken from it */
    apr_time_t valid_until;        /* its signed validUntil (0: unsigned) */
} rsp_saml_md_file_t;

/* The current generation's number (1: as loaded), its IdPs, its
 * earliest validUntil (0: none), when it was read and when the files
 * were last looked at (rsp_saml_sp_refresh); what each file gave; the
 * last refused read, if the files have not changed since. */
typedef struct {
    apr_uint64_t generation;
    int idps;
    apr_time_t valid_until;
    apr_time_t read_at;
    apr_time_t checked_at;
    int nfiles;
    const rsp_saml_md_file_t *files;   /* nfiles, in idp_files' order */
    apr_time_t failed_at;          /* the last refused read (0: none) */
    int failed_file;               /* the file it refused (-1: none, or the
                                      files together) */
    int failed_reason;             /* its rsp_md_reason_e */
    const char *last_error;        /* its reason, or NULL */
} rsp_saml_md_state_t;
void rsp_saml_md_state(const rsp_saml_sp_t *sp, rsp_saml_md_state_t *out,
                       apr_pool_t *p);

/* A new LassoServer for a loaded sp (each thread uses its own: nothing
 * shared). Parses no signing key: only the decryption keys (Lasso has no
 * way to be given them parsed). It knows no IdP until
 * rsp_saml_server_idp is asked for one. */
apr_status_t rsp_saml_server_new(rsp_lasso_server_t **out,
                                 const rsp_saml_sp_t *sp, const char **err);
void rsp_saml_server_free(rsp_lasso_server_t *server);

/* Make the IdP entity_id known to server, from sp's index: its Lasso
 * provider is built on the server's first need of it, with its keys as
 * decoded on their first use in this process (both bounded: see
 * RSP_SERVER_IDPS and RSP_PROCESS_IDP_KEYS). 0, or a Lasso error code
 * (LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND when the IdP is none of sp's). */
int rsp_saml_server_idp(rsp_lasso_server_t *server, const rsp_saml_sp_t *sp,
                        const char *entity_id);

/* At most this many IdPs in one server (one worker thread's): past it,
 * the server forgets those it holds and starts again. */
#define RSP_SERVER_IDPS 128
/* At most this many IdPs' decoded keys per process: past it, all are
 * dropped and decoded again as they are used. */
#define RSP_PROCESS_IDP_KEYS 2048

/* Whether ReplaySPAllowSHA1 names idp. */
int rsp_saml_sha1_allowed(const rsp_saml_sp_t *sp, const char *idp);

/* SP metadata: entityID, signing certificate, encryption certificate
 * (with the algorithms we decrypt), HTTP-Redirect
 * SingleLogoutService at base_url/slo, HTTP-POST ACS at base_url/acs
 * (base_url: the public URL of ReplaySPEndpointPath). */
const char *rsp_saml_metadata(apr_pool_t *p, const rsp_saml_sp_t *sp,
                              const char *base_url);

typedef struct {
    const rsp_saml_sp_t *sp; /* its decryption keys and SHA-1 policy */
    const char *entity_id;   /* our entity ID: the Audience */
    const char *acs_url;     /* Destination and Recipient must equal it */
    apr_time_t now;
    apr_int64_t skew_s;
    apr_int64_t max_window_s;
    const char *user_attribute; /* names the user where the Subject has no
                                 * NameID; NULL: a NameID is required */
} rsp_check_params_t;

/* What a validated assertion yields. All strings come from the Lasso
 * objects of the verified assertion, never from re-parsed XML. */
typedef struct {
    const char *issuer;
    const char *id;
    const char *name_id;                /* NULL: none (user_attribute) */
    const char *name_id_format;
    const char *session_index;
    const char *in_response_to;         /* NULL: unsolicited */
    apr_time_t session_not_on_or_after; /* 0 = absent */
    apr_time_t window_end;
    apr_int64_t ttl_ms;
    apr_array_header_t *attributes;     /* rsp_attribute_t, in order; no
                                         * value out of its IdP's scopes */
    apr_array_header_t *scope_dropped;  /* rsp_scope_drop_t: values of
                                         * scoped attributes dropped */
    int encrypted;                      /* it came in an EncryptedAssertion */
    int encrypted_id;                   /* its Subject's NameID came in an
                                         * EncryptedID (decrypted here) */
    const char *weak_signature;         /* a SHA-1 signature accepted under
                                         * ReplaySPAllowSHA1: which; else NULL */
} rsp_assertion_t;

/* Validate a base64 SAMLResponse (HTTP-POST binding). On refusal returns
 * APR_EGENERAL with *check a short stable name of the failed check
 * (base64, xml, xml-depth, issuer, signature, weak-signature, status,
 * assertion-count, encryption, encryption-algorithm, decrypt,
 * decrypted-size, subject, bearer, recipient, destination, audience,
 * in-response-to, window-missing, expired, not-yet-valid, window-too-long,
 * scope, metadata-expired) and *detail. metadata-expired: the signed
 * metadata file that names the issuer is past its validUntil (a fleet not
 * restarted with a fresh copy stops trusting it).
 *
 * Values of scoped attributes whose scope the issuer's metadata does not
 * declare are dropped (rsp_scope.h) and named in scope_dropped; when one of
 * them is of cp->user_attribute, the response is refused (scope).
 *
 * An EncryptedAssertion is decrypted with the SP's decryption keys
 * (rsp_saml_decrypt.h, not by Lasso), and only after: its shape and
 * algorithms were checked (rsp_saml_shape.h), and the Response's
 * signature, where it has one, was verified; an unsigned Response needs
 * a signed assertion inside. Exactly one assertion goes in and exactly
 * one comes out: the decrypted one, which Lasso then reads in place of
 * the EncryptedAssertion. What a decryption yields is scanned before
 * anything parses it (size, elements, attributes, depth, exactly one
 * saml:Assertion: rsp_saml_shape.h).
 * Whether InResponseTo names a request of ours is the caller's business:
 * it is returned in (*out)->in_response_to. */
apr_status_t rsp_saml_process_response(rsp_assertion_t **out, apr_pool_t *p,
                                       rsp_lasso_server_t *server,
                                       const char *b64,
                                       const rsp_check_params_t *cp,
                                       const char **check, const char **detail);

/* An AuthnRequest to idp_id with the HTTP-Redirect binding, built by
 * Lasso: *url is the IdP's SingleSignOnService with SAMLRequest,
 * RelayState and (signed when the IdP's metadata asks for it) SigAlg and
 * Signature; *request_id the request's ID. The response is asked for at
 * acs_url with the HTTP-POST binding. */
apr_status_t rsp_saml_authn_request(apr_pool_t *p, rsp_lasso_server_t *server,
                                    const rsp_saml_sp_t *sp, const char *idp_id, const char *acs_url,
                                    const char *relay_state, const char **url,
                                    const char **request_id, const char **err);

/* ---- single logout, HTTP-Redirect and HTTP-POST bindings ---- */

/* A logout message as it reached PATH/slo. */
typedef struct {
    const char *query;    /* HTTP-Redirect: the raw query; NULL: HTTP-POST */
    const char *message;  /* HTTP-POST: the SAMLRequest or SAMLResponse value */
    const char *relay;    /* HTTP-POST: the RelayState value, or NULL */
} rsp_saml_in_t;

/* The IdP's HTTP-Redirect SingleLogoutService, or NULL when it has none. */
char *rsp_saml_idp_slo_url(apr_pool_t *p, rsp_lasso_server_t *server,
                           const rsp_saml_sp_t *sp, const char *idp_id);

/* Whose session a LogoutRequest ends. */
typedef struct {
    const char *idp;
    const char *name_id;
    const char *name_id_format;   /* NULL: none */
    const char *session_index;    /* NULL: none */
} rsp_logout_subject_t;

/* A signed LogoutRequest to the IdP's SingleLogoutService: *url carries
 * SAMLRequest, RelayState, SigAlg and Signature. */
apr_status_t rsp_saml_logout_request(apr_pool_t *p, rsp_lasso_server_t *server,
                                     const rsp_saml_sp_t *sp,
                                     const rsp_logout_subject_t *who,
                                     const char *relay_state, const char **url,
                                     const char **request_id, const char **err);

typedef struct {
    const char *issuer;
    const char *in_response_to;
    const char *status;           /* top-level StatusCode */
    const char *weak_signature;   /* RSA-SHA1 accepted (ReplaySPAllowSHA1) */
} rsp_logout_response_t;

/* A LogoutResponse received as a query (HTTP-Redirect: the query's
 * signature) or a form (HTTP-POST: the message's own signature): from a
 * known IdP, signed (RSA-SHA256/384/512; RSA-SHA1 where ReplaySPAllowSHA1
 * names the IdP) by one of the signing certificates of its metadata;
 * refusals as for rsp_saml_process_response. A non-Success status is
 * returned, not refused. */
apr_status_t rsp_saml_logout_response_in(apr_pool_t *p,
                                         rsp_lasso_server_t *server,
                                         const rsp_saml_sp_t *sp,
                                         const rsp_saml_in_t *in,
                                         rsp_logout_response_t *out,
                                         const char **check,
                                         const char **detail);

typedef struct {
    const char *issuer;
    const char *id;
    const char *name_id;
    const char *name_id_format;
    apr_array_header_t *session_indexes; /* const char *; may be empty */
    apr_time_t issue_instant;
    apr_time_t not_on_or_after;          /* 0: absent */
    const char *weak_signature;          /* RSA-SHA1 accepted (ReplaySPAllowSHA1) */
    int encrypted_id;                    /* the NameID came in an EncryptedID
                                          * (decrypted here) */
} rsp_logout_request_t;

/* An IdP's LogoutRequest (HTTP-Redirect or HTTP-POST): from a known IdP,
 * signature verified as for rsp_saml_logout_response_in; a NameID with
 * qualifiers, or an EncryptedID decrypted by this module with the SP's
 * keys once the signature is verified (rsp_saml_decrypt_id: the
 * algorithms and refusals of an EncryptedAssertion, check=decrypt for
 * whatever does not decrypt). *slo keeps what the answer needs: answer with
 * rsp_saml_logout_answer, using the same server; freed with p or by
 * rsp_saml_slo_free. */
typedef struct rsp_slo_t rsp_slo_t;
apr_status_t rsp_saml_logout_request_in(rsp_slo_t **slo, apr_pool_t *p,
                                        rsp_lasso_server_t *server,
                                        const rsp_saml_sp_t *sp,
                                        const rsp_saml_in_t *in,
                                        rsp_logout_request_t *req,
                                        const char **check,
                                        const char **detail);
/* The signed LogoutResponse (Success) to the IdP, RelayState echoed:
 * *form NULL, a redirect to *url (HTTP-Redirect: every answer where the
 * IdP's metadata has that binding); else an HTTP-POST of SAMLResponse
 * *form (and the RelayState the request came with) to *url. */
apr_status_t rsp_saml_logout_answer(rsp_slo_t *slo, apr_pool_t *p,
                                    const rsp_logout_request_t *req,
                                    const char **url, const char **form,
                                    const char **err);
void rsp_saml_slo_free(rsp_slo_t *slo, apr_pool_t *p);

#endif
