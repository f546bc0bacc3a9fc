/* Session records as stored in the shared store (under a hash of the
 * session ID, never the ID itself: rsp_session_key). Encoded as
 * "v=1&k=v&..." (rsp_record.h, RSP_RECORD_SESSION: only controls, space,
 * bytes above 0x7E, '%', '&' and '=' escaped), so any replica can read
 * what another wrote. */
#ifndef RSP_SESSION_H
#define RSP_SESSION_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "rsp_saml.h"
#include "rsp_store.h"

/* A session ID: this many bytes of randomness, in base64url. */
#define RSP_SESSION_ID_BYTES 32

typedef struct {
    const char *sp;             /* our entity ID: a session serves one SP */
    const char *issuer;         /* IdP entity ID */
    const char *name_id;
    const char *name_id_format; /* may be NULL */
    const char *session_index;  /* may be NULL */
    const char *claim_hash;     /* short hash of the assertion ID, for logs */
    apr_time_t created;
    apr_time_t expires;
    apr_array_header_t *attributes; /* rsp_attribute_t; may be NULL */
} rsp_session_t;

/* Session key: prefix + "s:" + base64url(SHA-256(session id)). The
 * session's hash (what claims and the logout index record) is the part
 * after "s:"; NULL in, NULL out. */
const char *rsp_session_key(apr_pool_t *p, const char *prefix,
                            const char *session_id);
const char *rsp_session_hash(apr_pool_t *p, const char *session_id);
const char *rsp_session_key_of_hash(apr_pool_t *p, const char *prefix,
                                    const char *hash);

/* The user a session names (REMOTE_USER): the first value of
 * user_attribute when that is given (NULL when the session has none);
 * else its NameID (NULL when it has none), qualified when qualify as
 * "IdP!SP!NameID" (the issuer's and this SP's entity IDs, as Shibboleth
 * SP writes a persistent ID): a NameID is unique per IdP only. */
const char *rsp_session_user(apr_pool_t *p, const rsp_session_t *s,
                             const char *user_attribute, int qualify);

const char *rsp_session_encode(apr_pool_t *p, const rsp_session_t *s);

/* APR_EINVAL when data is not a well-formed version-1 record with the
 * mandatory fields (sp, issuer, name_id, created, expires). */
apr_status_t rsp_session_decode(rsp_session_t **out, apr_pool_t *p,
                                const char *data, apr_size_t len);

/* The session whose ID is sid, from st under prefix. APR_SUCCESS with
 * *sess NULL when there is none (*malformed 1: a record that does not
 * decode, treated as none); another status when the store failed. With
 * end, the record read is also deleted (compare-and-delete). */
apr_status_t rsp_session_read(rsp_store_t *st, apr_pool_t *p,
                              const char *prefix, const char *sid, int end,
                              rsp_session_t **sess, int *malformed,
                              const char **err);

#endif
