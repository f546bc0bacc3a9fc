/* The logout index: which sessions an IdP's LogoutRequest ends. Two
 * entries per session, under prefix "n:" + base64url(SHA-256(...)) of
 * (IdP, NameID, SessionIndex) and of (IdP, NameID); each holds the hashes
 * of its sessions separated by spaces, appended atomically
 * (rsp_store_append). The index holds hashes, never session IDs. */
#ifndef RSP_LOGOUT_INDEX_H
#define RSP_LOGOUT_INDEX_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "rsp_session.h"
#include "rsp_store.h"

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

/* The two writes that enter a new session (session_hash) in the index:
 * by (issuer, name_id, session_index) and by (issuer, name_id), so that
 * an IdP's LogoutRequest finds it on any replica; both kept ttl_ms (the
 * longest any session of the SP can live, the same for every append: an
 * entry's expiry only ever moves forward). */
void rsp_logout_index_writes(apr_pool_t *p, const char *prefix,
                             const char *issuer, const char *name_id,
                             const char *session_index,
                             const char *session_hash, apr_int64_t ttl_ms,
                             rsp_write_t w[2]);

/* Called for each live session of the user an entry lists: its hash, the
 * session, and whether it was ended by this call. */
typedef void (*rsp_logout_visit_fn)(void *baton, const char *hash,
                                    const rsp_session_t *s, int ended);

/* The sessions of (issuer, name_id) that the logout index lists: under
 * session_index's entry, or the NameID's (session_index NULL). Only live
 * sessions of that user count (an entry may outlive its session, or, a
 * stale entry, name another's; one of another SessionIndex is skipped
 * under a SessionIndex). With end each is deleted (compare-and-delete: a
 * session rewritten meanwhile stays), then the entry is dropped; entries
 * appended meanwhile keep it (their sessions are newer). With several
 * memcached servers every server's copy of the entry is read (a sign-in
 * writes its entries on its claim's server) and each is dropped where it
 * is. visit (optional) sees each session once; *ended counts those
 * ended. The first store failure stops it (err). The ACS's SLO endpoint
 * and `replay-sp sessions --end` both end sessions this way. */
apr_status_t rsp_logout_index_sessions(rsp_store_t *st, apr_pool_t *p,
                                       const char *prefix, const char *issuer,
                                       const char *name_id,
                                       const char *session_index, int end,
                                       rsp_logout_visit_fn visit, void *baton,
                                       int *ended, const char **err);

#endif
