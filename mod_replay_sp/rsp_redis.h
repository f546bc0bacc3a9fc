/* The Redis backend's parts, for its own files only (callers of the
 * store use rsp_store.h):
 *
 *   rsp_redis_conn.c      a pooled connection: hiredis's encoder and
 *                         reader over rsp_io, pipelines, AUTH and SELECT
 *   rsp_redis_standalone.c, rsp_redis_sentinel.c, rsp_redis_cluster.c
 *                         the topologies: which server a key's commands
 *                         go to, how a connection to it is made, what an
 *                         error reply says about the topology, INFO
 *   rsp_store_redis.c     the store operations (claim, reads, the write
 *                         batch and its scripts, WAIT)
 *
 * One topology is chosen from the URL when the child starts. */
#ifndef RSP_REDIS_H
#define RSP_REDIS_H

#include <stdarg.h>

#include <apr_pools.h>
#include <apr_time.h>
#include <hiredis.h>

#include "rsp_io.h"
#include "rsp_store.h"

#define RSP_REDIS_MAX_PIPE 16      /* commands of one pipeline, remembered */

/* A server connections go to: the Redis server, the master the sentinels
 * give, or one node of a cluster. */
typedef struct {
    const char *host;        /* NULL: the URL's (or the sentinels') */
    int port;
    char name[300];          /* for messages: "host:port", or the URL */
    rsp_pool_t *conns;
} rsp_redis_node_t;

/* A pooled connection and the commands appended to it, not yet sent. */
typedef struct {
    rsp_pooled_t base;       /* base.server: its rsp_redis_node_t */
    redisReader *rd;         /* its replies */
    char *out;               /* commands not yet sent (heap) */
    size_t out_len, out_cap;
    int ncmd;                /* commands in out, and where each ends */
    size_t cmd_end[RSP_REDIS_MAX_PIPE];
    const char *errstr;      /* why the last command could not be built */
} rsp_redis_conn_t;

#define RSP_REDIS_NODE(c) ((rsp_redis_node_t *)(c)->base.server)

/* What differs between standalone, Sentinel and Cluster. */
typedef struct {
    const char *name;
    /* 1: keys live on different servers, so a pipeline is about one key
     * (and its WAIT); 0: any keys may share one. */
    int keys_apart;
    /* Per child, after the common state (rsp_redis_t) is made. */
    apr_status_t (*init)(rsp_store_t *st, apr_pool_t *pchild);
    /* A fresh connection to c's node, set up, by the deadline (the
     * sentinels asked for the master first, and its role checked). */
    apr_status_t (*connect)(rsp_store_t *st, rsp_redis_conn_t *c,
                            apr_pool_t *p, apr_time_t deadline,
                            const char **err);
    /* A connection to the server that holds key. */
    apr_status_t (*acquire)(rsp_store_t *st, apr_pool_t *p, const char *key,
                            apr_time_t deadline, rsp_redis_conn_t **out,
                            const char **err);
    /* The commands appended to *cp and their n replies, by the deadline,
     * sent again where the topology redirects them (*cp is then a
     * connection to that node, or NULL when none could be had). */
    apr_status_t (*exchange)(rsp_store_t *st, rsp_redis_conn_t **cp,
                             apr_pool_t *p, int n, redisReply **out,
                             apr_time_t deadline, const char **err);
    /* An error reply to a command that ran on c (optional). */
    void (*on_error)(rsp_store_t *st, rsp_redis_conn_t *c,
                     const redisReply *r);
    /* INFO [section] (see rsp_store_ops_t.info). */
    apr_status_t (*info)(rsp_store_t *st, apr_pool_t *p, const char *section,
                         const char **text, const char **err);
} rsp_redis_topology_t;

extern const rsp_redis_topology_t rsp_redis_standalone;
/* The standalone topology's acquire and exchange (one server: Sentinel's
 * too). */
apr_status_t rsp_redis_one_acquire(rsp_store_t *st, apr_pool_t *p,
                                   const char *key, apr_time_t deadline,
                                   rsp_redis_conn_t **out, const char **err);
apr_status_t rsp_redis_one_exchange(rsp_store_t *st, rsp_redis_conn_t **cp,
                                    apr_pool_t *p, int n, redisReply **out,
                                    apr_time_t deadline, const char **err);
extern const rsp_redis_topology_t rsp_redis_sentinel;
extern const rsp_redis_topology_t rsp_redis_cluster;

/* The backend's state, per child (rsp_store_t.impl). */
typedef struct {
    const rsp_redis_topology_t *topo;
    void *topo_state;        /* the topology's own */
    rsp_redis_node_t node;   /* standalone and Sentinel: the server */
    int max_conns;
    rsp_tls_cache_t *tls_cache;  /* with TLS: the session to resume */
    char append_sha[41];     /* SHA-1 of the scripts, hex: for EVALSHA */
    char replace_sha[41];
} rsp_redis_t;

/* ---- rsp_redis_conn.c ---- */

/* node's pool of connections (host NULL: the URL's server). */
apr_status_t rsp_redis_node_init(rsp_store_t *st, rsp_redis_node_t *n,
                                 apr_pool_t *p);
/* "host:port", "[v6]:port". */
const char *rsp_redis_hostport(apr_pool_t *p, const char *host, int port);

/* A connection to node n, connected by the deadline if need be. */
apr_status_t rsp_redis_acquire_at(rsp_store_t *st, apr_pool_t *p,
                                  rsp_redis_node_t *n, apr_time_t deadline,
                                  rsp_redis_conn_t **out, const char **err);
void rsp_redis_release(rsp_redis_conn_t *c);
/* Close c's connection (its state is unknown) and forget what was
 * appended; it stays acquired. NULL is fine. */
void rsp_redis_drop(rsp_redis_conn_t *c);
/* Free what a connection not from a pool holds (see rsp_redis_call). */
void rsp_redis_clear(rsp_redis_conn_t *c);

/* One command (or its bytes) after those not yet sent: REDIS_OK, or
 * REDIS_ERR with c->errstr. */
int rsp_redis_append_raw(rsp_redis_conn_t *c, const char *cmd, size_t len);
int rsp_redis_vappend(rsp_redis_conn_t *c, const char *fmt, va_list ap);
int rsp_redis_append(rsp_redis_conn_t *c, const char *fmt, ...);

/* Write what was appended and read n replies, by the deadline, on c's
 * node alone: APR_SUCCESS, or APR_EGENERAL with *err naming the store
 * (and the node of a cluster) and the connection dropped. */
apr_status_t rsp_redis_exchange_at(rsp_store_t *st, rsp_redis_conn_t *c,
                                   apr_pool_t *p, int n, redisReply **out,
                                   apr_time_t deadline, const char **err);
/* One command on c's node alone, its reply (NULL: *err, dropped). */
redisReply *rsp_redis_command_at(rsp_store_t *st, rsp_redis_conn_t *c,
                                 apr_pool_t *p, apr_time_t deadline,
                                 const char **err, const char *fmt, ...);
/* One command through the topology (redirections followed): its reply,
 * or NULL with *err (the connection dropped, or *cp NULL). */
redisReply *rsp_redis_command(rsp_store_t *st, rsp_redis_conn_t **cp,
                              apr_pool_t *p, apr_time_t deadline,
                              const char **err, const char *fmt, ...);
/* One command to a server outside the pools (a sentinel), on a
 * connection of its own made and closed here: its reply, or NULL and
 * *why. */
redisReply *rsp_redis_call(apr_pool_t *p,
                           const rsp_peer_t *peer, apr_time_t deadline,
                           const char **why, const char *fmt, ...);

/* Where a connection to host:port goes (TLS as the URL says; a unix
 * socket when the URL names one). */
void rsp_redis_peer(rsp_store_t *st, rsp_peer_t *peer, const char *host,
                    int port);
/* A fresh connection to peer for c, with AUTH and SELECT as the URL says,
 * by the deadline; where (optional) names the server in messages. */
apr_status_t rsp_redis_connect(rsp_store_t *st, rsp_redis_conn_t *c,
                               apr_pool_t *p, const rsp_peer_t *peer,
                               const char *where, apr_time_t deadline,
                               const char **err);

/* A NULL reply (*err set, connection dropped) or an error reply (*err
 * set, the topology told, the connection kept) is a failure; the reply is
 * then freed. */
apr_status_t rsp_redis_reply_ok(rsp_store_t *st, rsp_redis_conn_t *c,
                                apr_pool_t *p, redisReply *r,
                                const char **err);
/* A reply of a type the command never gives: freed, connection dropped. */
apr_status_t rsp_redis_unexpected(rsp_store_t *st, rsp_redis_conn_t *c,
                                  apr_pool_t *p, redisReply *r,
                                  const char **err);

/* INFO [section] on node n, by st's timeout from now; want_master: a
 * server that says it is a replica is not kept connected (the next
 * connection finds the master again). */
apr_status_t rsp_redis_info_at(rsp_store_t *st, apr_pool_t *p,
                               rsp_redis_node_t *n, const char *section,
                               int want_master, const char **text,
                               const char **err);

#endif
