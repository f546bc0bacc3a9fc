/* The logout index: which sessions an IdP's LogoutRequest ends. Two
 * entries per session, under prefix "n:" + base64url(SHA-256(...)) of
 * (IdP, NameID, SessionIndex) and of (IdP, NameID); each holds the hashes
 * of its sessions separated by spaces, appended atomically
 * (rsp_store_append). The index holds hashes, never session IDs. */
#ifndef RSP_LOGOUT_INDEX_H
#define RSP_LOGOUT_INDEX_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Sessions one entry can end at most: each costs two store round trips,
 * and a NameID with more sessions than this in one session lifetime is
 * not a person. */
#define RSP_LOGOUT_INDEX_MAX 256

/* The entry's key. session_index NULL: the entry of the NameID (every
 * session of it); "" is a session that had no SessionIndex. The inputs
 * are joined with 0x00, so no two tuples share a key. */
const char *rsp_logout_index_key(apr_pool_t *p, const char *prefix,
                                 const char *issuer, const char *name_id,
                                 const char *session_index);

/* The session hashes (const char *) an entry's value lists, in order,
 * each once, at most RSP_LOGOUT_INDEX_MAX; anything that is not a hash is
 * skipped. */
apr_array_header_t *rsp_logout_index_parse(apr_pool_t *p, const char *val);

#endif
