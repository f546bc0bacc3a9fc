/* The claim and session store: one small interface, one file per backend.
 *
 * Every operation is bounded by the store's timeout (connect and each
 * command). A non-APR_SUCCESS return means the outcome is unknown or the
 * store refused: callers fail closed. *err then says why, in the store's
 * own words, allocated from p. */
#ifndef RSP_STORE_H
#define RSP_STORE_H

#include <apr_pools.h>
#include <apr_time.h>

#include "rsp_io.h"
#include "rsp_url.h"

typedef struct rsp_store_t rsp_store_t;

/* A claim with a read of the record that holds it, in one round trip
 * where the backend can (Redis: pipelined). The claim is the same
 * create-if-absent as rsp_store_claim, its reply the verdict; the read
 * comes after it and is never part of the verdict. */
typedef struct {
    const char *key;          /* in: the claim */
    const char *value;
    apr_int64_t ttl_ms;
    const char *home_key;     /* in, optional: claim on the server that
                               * holds home_key, not on key's own (always
                               * the same one for a key: never moved) */
    int won;                  /* out */
    const char *holder;       /* out, when lost: the record that holds the
                               * key (NULL: gone again, or unreadable) */
    const char *token;        /* out: the version of the record read (ours
                               * when won), for rsp_store_replace; NULL
                               * where the backend compares values */
} rsp_claim_read_t;

/* One write of a batch. */
typedef enum {
    RSP_WRITE_PUT = 1,        /* like rsp_store_put */
    RSP_WRITE_APPEND,         /* like rsp_store_append (value: the item) */
    RSP_WRITE_REPLACE         /* like rsp_store_replace (expect, token);
                               * its outcome in replaced, not a failure */
} rsp_write_kind_t;

typedef struct {
    rsp_write_kind_t kind;
    const char *key;
    const char *value;
    apr_size_t len;           /* RSP_WRITE_PUT */
    apr_int64_t ttl_ms;
    /* optional: written on the server that holds home_key rather than on
     * key's own (a store of several servers keeps a sign-in's records with
     * its claim; read such keys on every server: rsp_store_get_at) */
    const char *home_key;
    const char *expect;       /* RSP_WRITE_REPLACE */
    const char *token;
    int replaced;             /* out */
} rsp_write_t;

/* What a backend can do beyond the operations every backend has. */
#define RSP_STORE_CAP_SERVERS 0x1  /* several servers, which callers
                                    * address by number: servers, home,
                                    * get_at and del_if_equal_at are set */

typedef struct {
    const char *name;
    unsigned caps;            /* RSP_STORE_CAP_* */
    /* Per child, after fork: connection pool of up to max_conns. */
    apr_status_t (*child_init)(rsp_store_t *st, apr_pool_t *pchild, int max_conns);
    /* Atomic create-if-absent with expiry: *won = 1 when this call created
     * the key, 0 when it already existed. One round trip. */
    apr_status_t (*claim)(rsp_store_t *st, apr_pool_t *p, const char *key,
                          const char *value, apr_int64_t ttl_ms, int *won,
                          const char **err);
    /* *value = NULL when absent. */
    apr_status_t (*get)(rsp_store_t *st, apr_pool_t *p, const char *key,
                        const char **value, apr_size_t *len, const char **err);
    apr_status_t (*put)(rsp_store_t *st, apr_pool_t *p, const char *key,
                        const char *value, apr_size_t len, apr_int64_t ttl_ms,
                        const char **err);
    /* Delete key only if it still holds value; *deleted says if it did. */
    apr_status_t (*del_if_equal)(rsp_store_t *st, apr_pool_t *p, const char *key,
                                 const char *value, int *deleted,
                                 const char **err);
    /* Append item (with a leading space) to key's value, creating the key
     * when absent, and keep the key at least ttl_ms from now (its expiry
     * is only ever extended). Atomic per call: concurrent appends all
     * land. Used for the logout index (sessions by NameID/SessionIndex). */
    apr_status_t (*append)(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char *item, apr_int64_t ttl_ms,
                           const char **err);
    /* How long key has left: *ttl_ms >= 0, or -1 when it has no expiry,
     * -2 when it is absent (memcached: whole seconds). For operators'
     * tools; the sign-in path never needs it. */
    apr_status_t (*ttl)(rsp_store_t *st, apr_pool_t *p, const char *key,
                        apr_int64_t *ttl_ms, const char **err);
    /* The claim and its read (see rsp_claim_read_t). */
    apr_status_t (*claim_read)(rsp_store_t *st, apr_pool_t *p,
                               rsp_claim_read_t *c, const char **err);
    /* n writes, in one round trip where the backend can (pipelined);
     * every one is attempted, and APR_SUCCESS means all of them were
     * done. */
    apr_status_t (*write_many)(rsp_store_t *st, apr_pool_t *p,
                               rsp_write_t *w, int n, const char **err);
    /* Atomically: if key still holds expect (and, given a token from
     * rsp_store_claim_read, is still that version), make value its value,
     * keeping its expiry; *replaced says whether it did. */
    apr_status_t (*replace)(rsp_store_t *st, apr_pool_t *p, const char *key,
                            const char *expect, const char *token,
                            const char *value, int *replaced,
                            const char **err);
    /* With RSP_STORE_CAP_SERVERS (memcached): how many servers, which
     * one holds a key, and get / del_if_equal on a given one. */
    int (*servers)(rsp_store_t *st);
    int (*home)(rsp_store_t *st, const char *key);
    apr_status_t (*get_at)(rsp_store_t *st, apr_pool_t *p, int server,
                           const char *key, const char **value,
                           apr_size_t *len, const char **err);
    apr_status_t (*del_if_equal_at)(rsp_store_t *st, apr_pool_t *p,
                                    int server, const char *key,
                                    const char *value, int *deleted,
                                    const char **err);
    /* Server statistics as text: Redis INFO [section] (a cluster: of
     * each master, in blocks introduced by a line "# rsp-node NAME slots
     * LO-HI HOST:PORT", NAME being the URL shown in logs and LO-HI the
     * master's first slot range; a master that did not answer as a line
     * "error <why>" in its block); memcached
     * "stats [section]" of each server in blocks "server host:port", a
     * server that did not answer as a block with a line "error <why>"
     * (the call fails only when no server answers). */
    apr_status_t (*info)(rsp_store_t *st, apr_pool_t *p, const char *section,
                         const char **text, const char **err);
} rsp_store_ops_t;

struct rsp_store_t {
    const rsp_store_ops_t *ops;
    const rsp_store_url_t *url;
    apr_interval_time_t timeout;  /* connect and per-command bound */
    rsp_tls_t *tls;               /* required when url->tls: set by the
                                   * caller before child_init */
    /* Redis: a claim (create-if-absent, and a takeover's compare-and-set)
     * counts only once WAIT says this many replicas have it, within
     * replicas_wait (shorter than timeout); 0: not waited for. Set by the
     * caller before child_init. */
    int replicas;
    apr_interval_time_t replicas_wait;
    void *impl;                   /* backend state, per child */
};

/* A claim (or takeover) the store wrote but fewer than st->replicas
 * replicas acknowledged in time: not won (the caller fails closed), and
 * not undone (the record stays, so the assertion stays refused). */
#define RSP_STORE_UNACKED (APR_OS_START_USERERR + 1)

/* rsp_store_ops_t.claim_read, its outputs cleared first. */
apr_status_t rsp_store_claim_read(rsp_store_t *st, apr_pool_t *p,
                                  rsp_claim_read_t *c, const char **err);
#define rsp_store_write_many(st, p, w, n, err) \
    ((st)->ops->write_many((st), (p), (w), (n), (err)))
#define rsp_store_replace(st, p, k, e, t, v, r, err) \
    ((st)->ops->replace((st), (p), (k), (e), (t), (v), (r), (err)))

/* How many servers (1 unless the backend has RSP_STORE_CAP_SERVERS), and
 * which of them holds key (0..servers-1). */
int rsp_store_servers(rsp_store_t *st);
int rsp_store_home(rsp_store_t *st, const char *key);
/* get and del_if_equal on server number server (see rsp_store_servers). */
apr_status_t rsp_store_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                              const char *key, const char **value,
                              apr_size_t *len, const char **err);
apr_status_t rsp_store_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                       int server, const char *key,
                                       const char *value, int *deleted,
                                       const char **err);

/* Redis under Sentinel: the master ("host:port") this process's last new
 * connection went to, NULL before one or for any other store. */
const char *rsp_store_primary(rsp_store_t *st, apr_pool_t *p);

/* Redis Cluster: the slot of a key (CRC16 mod 16384 of the key, or of
 * its hash tag: what is between its first '{' and the next '}', when not
 * empty). */
int rsp_redis_key_slot(const char *key, apr_size_t len);
/* Redis Cluster: the MOVED and ASK redirections this process followed. */
void rsp_store_redirections(rsp_store_t *st, apr_uint64_t *moved,
                            apr_uint64_t *asked);

/* Build a store for url (no connection yet). */
apr_status_t rsp_store_create(rsp_store_t **out, apr_pool_t *p,
                              const rsp_store_url_t *url,
                              apr_interval_time_t timeout, const char **err);

extern const rsp_store_ops_t rsp_store_redis_ops;
extern const rsp_store_ops_t rsp_store_memcache_ops;

#define rsp_store_child_init(st, p, n) ((st)->ops->child_init((st), (p), (n)))
#define rsp_store_claim(st, p, k, v, ttl, won, err) \
    ((st)->ops->claim((st), (p), (k), (v), (ttl), (won), (err)))
#define rsp_store_get(st, p, k, v, l, err) \
    ((st)->ops->get((st), (p), (k), (v), (l), (err)))
#define rsp_store_put(st, p, k, v, l, ttl, err) \
    ((st)->ops->put((st), (p), (k), (v), (l), (ttl), (err)))
#define rsp_store_del_if_equal(st, p, k, v, d, err) \
    ((st)->ops->del_if_equal((st), (p), (k), (v), (d), (err)))
#define rsp_store_append(st, p, k, i, ttl, err) \
    ((st)->ops->append((st), (p), (k), (i), (ttl), (err)))
#define rsp_store_ttl(st, p, k, t, err) \
    ((st)->ops->ttl((st), (p), (k), (t), (err)))
#define rsp_store_info(st, p, s, t, err) \
    ((st)->ops->info((st), (p), (s), (t), (err)))

#endif
