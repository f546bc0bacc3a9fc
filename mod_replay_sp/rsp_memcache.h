/* The memcached backend's parts, for its own files only (callers of the
 * store use rsp_store.h): rsp_memcache_conn.c holds the connections and
 * the protocol's messages, rsp_store_memcache.c the store operations. */
#ifndef RSP_MEMCACHE_H
#define RSP_MEMCACHE_H

#include <apr_pools.h>
#include <apr_time.h>

#include "rsp_io.h"
#include "rsp_store.h"

#define MC_LINE_MAX 1024
#define MC_MAX_VALUE (1024 * 1024)

typedef struct {
    rsp_pooled_t base;      /* base.server: its rsp_mc_server_t */
    char buf[4096];
    apr_size_t start, end;  /* unread bytes in buf */
} rsp_mc_conn_t;

typedef struct {
    const rsp_server_t *server;
    const char *name;       /* host:port for messages */
    rsp_pool_t *conns;
    rsp_tls_cache_t *tls_cache; /* with TLS: the session to resume */
} rsp_mc_server_t;

/* The backend's state, per child (rsp_store_t.impl). */
typedef struct {
    int n;
    rsp_mc_server_t *servers;
} rsp_mc_t;

/* One command in flight: the connection, its server and the deadline. */
typedef struct {
    rsp_store_t *st;
    rsp_mc_server_t *sv;
    rsp_mc_conn_t *c;
    apr_pool_t *p;
    apr_time_t deadline;
    const char **err;
} rsp_mc_op_t;

/* Commands that go together, written at once (one round trip). */
typedef struct {
    char *data;
    apr_size_t len, cap;
} rsp_mc_buf_t;

/* sv's pool of up to max_conns connections (and its TLS session cache). */
apr_status_t rsp_mc_server_init(rsp_store_t *st, rsp_mc_server_t *sv,
                                apr_pool_t *pchild, int max_conns);

/* An operation on sv: a connection (connected if need be) and the
 * deadline, st's timeout from now. On failure *err says why. */
apr_status_t rsp_mc_begin(rsp_mc_op_t *op, rsp_store_t *st,
                          rsp_mc_server_t *sv, apr_pool_t *p,
                          const char **err);
/* The connection back to its pool (nothing when there is none). */
void rsp_mc_end(rsp_mc_op_t *op);
/* Close a connection whose replies may be left unread (NULL is fine). */
void rsp_mc_conn_close(rsp_mc_conn_t *c);

/* Each failure below sets *op->err ("memcached host:port: why") and
 * closes the connection: its state is unknown. */
apr_status_t rsp_mc_fail(rsp_mc_op_t *op, const char *what);
/* A reply line that is not the expected one: the server's own words. */
apr_status_t rsp_mc_unexpected(rsp_mc_op_t *op, const char *line);
apr_status_t rsp_mc_send(rsp_mc_op_t *op, const char *data, apr_size_t len);
/* One reply line, without its CRLF, copied into op->p. */
apr_status_t rsp_mc_read_line(rsp_mc_op_t *op, const char **line);
/* Exactly len bytes of data followed by CRLF. */
apr_status_t rsp_mc_read_data(rsp_mc_op_t *op, apr_size_t len, char **out);

void rsp_mc_buf_add(apr_pool_t *p, rsp_mc_buf_t *b, const void *d,
                    apr_size_t n);
void rsp_mc_buf_str(apr_pool_t *p, rsp_mc_buf_t *b, const char *s);
/* "add|set|append key 0 exp len" CRLF data CRLF */
void rsp_mc_buf_store(apr_pool_t *p, rsp_mc_buf_t *b, const char *verb,
                      const char *key, apr_int64_t exp, const char *data,
                      apr_size_t len);
/* "ms key len <token>" data: HD (replaced), EX or NF (not). */
void rsp_mc_buf_replace(apr_pool_t *p, rsp_mc_buf_t *b, const char *key,
                        const char *token, const char *value);

/* The reply to "mg key v c t" (or, ttl NULL, "mg key v c"): VA <len>
 * c<cas> [t<ttl>] + data, or EN (*value NULL). *cas and *ttl: the version
 * and the seconds left (-1: no expiry); each required when asked for. */
apr_status_t rsp_mc_read_mg(rsp_mc_op_t *op, const char **value,
                            apr_size_t *len, const char **cas,
                            const char **ttl);
/* What a compare-and-set of the version rsp_mc_read_mg saw sends:
 * "C<cas> T<ttl>" (NULL when nothing was read). */
const char *rsp_mc_version_token(apr_pool_t *p, const char *cas,
                                 const char *ttl);
/* One of two replies: *out 1 for yes, 0 for no or no2 (NULL: none);
 * anything else fails the operation. */
apr_status_t rsp_mc_read_outcome(rsp_mc_op_t *op, const char *yes,
                                 const char *no, const char *no2, int *out);
/* STORED (1) or NOT_STORED (0). */
apr_status_t rsp_mc_read_stored(rsp_mc_op_t *op, int *stored);
/* HD (1), EX or NF (0). */
apr_status_t rsp_mc_read_replace(rsp_mc_op_t *op, int *replaced);

#endif
