/* Store connections: TCP or unix sockets, plaintext or TLS, every step
 * (connect, handshake, each read and write) bounded by a deadline. Shared
 * by the store backends. */
#ifndef RSP_IO_H
#define RSP_IO_H

#include <apr_pools.h>
#include <apr_time.h>

/* Wait until fd is ready for events (POLLIN/POLLOUT) or the deadline
 * passes: 0 when ready, APR_TIMEUP, or an errno value. */
int rsp_io_wait(int fd, short events, apr_time_t deadline);

/* A non-blocking TCP connection to host:port within the deadline (name
 * resolution included, as far as the resolver allows). On failure returns
 * non-zero and *err says why. */
apr_status_t rsp_io_connect(int *fd, apr_pool_t *p, const char *host,
                            int port, apr_time_t deadline, const char **err);

/* A client TLS context (TLS 1.2 or later, the server's certificate
 * verified against ca_file, or the system's CAs when ca_file is NULL;
 * with cert_file and key_file, our certificate for mutual TLS). Built
 * once per configuration load, shared by every connection; freed with p.
 * On failure *input (optional) says which file and *err why. */
typedef struct rsp_tls_t rsp_tls_t;
typedef enum {
    RSP_TLS_INPUT_NONE = 0,
    RSP_TLS_INPUT_CA,        /* ca_file (or the system's CAs) */
    RSP_TLS_INPUT_CERT,      /* cert_file */
    RSP_TLS_INPUT_KEY        /* key_file (or the key in cert_file) */
} rsp_tls_input_t;
apr_status_t rsp_tls_create(rsp_tls_t **out, apr_pool_t *p,
                            const char *ca_file, const char *cert_file,
                            const char *key_file, rsp_tls_input_t *input,
                            const char **err);

/* The last TLS session a server gave us, to resume on the next
 * connection to it (per child, per server; thread-safe). */
typedef struct rsp_tls_cache_t rsp_tls_cache_t;
apr_status_t rsp_tls_cache_create(rsp_tls_cache_t **out, apr_pool_t *p);
/* Whether it holds a session it can offer (for tests and diagnostics). */
int rsp_tls_cache_ready(rsp_tls_cache_t *cache);

/* Where a connection goes. */
typedef struct {
    const char *host;        /* TCP, and the name the certificate must
                              * carry (DNS name or IP address) */
    int port;
    const char *path;        /* or a unix socket (no TLS) */
    rsp_tls_t *tls;          /* NULL: plaintext */
    rsp_tls_cache_t *cache;  /* optional, with tls */
} rsp_peer_t;

typedef struct rsp_conn_t rsp_conn_t;

/* Connect (and with TLS, handshake and verify) within the deadline. The
 * connection is heap-allocated: it outlives requests; rsp_conn_close frees
 * it. On failure *err (from p) says why: refused, timed out, or which
 * certificate check failed. */
apr_status_t rsp_conn_open(rsp_conn_t **out, apr_pool_t *p,
                           const rsp_peer_t *peer, apr_time_t deadline,
                           const char **err);

/* Send all of data within the deadline. APR_SUCCESS, APR_TIMEUP (no
 * *err), or APR_EGENERAL with *err. */
apr_status_t rsp_conn_send(rsp_conn_t *c, const char *data, apr_size_t len,
                           apr_time_t deadline, apr_pool_t *p,
                           const char **err);

/* Read what is there (at least one byte, at most cap) within the
 * deadline: APR_SUCCESS with *got > 0, APR_TIMEUP (no *err), APR_EOF
 * (closed by the server), or APR_EGENERAL with *err. */
apr_status_t rsp_conn_recv(rsp_conn_t *c, char *buf, apr_size_t cap,
                           apr_size_t *got, apr_time_t deadline,
                           apr_pool_t *p, const char **err);

/* An idle request/response connection has nothing to read unless the
 * peer closed it (or it is out of step): true then. TLS records that
 * carry no data (session tickets) are consumed and do not count. */
int rsp_conn_idle_closed(rsp_conn_t *c);

/* Whether the handshake resumed a cached session (0 for plaintext). */
int rsp_conn_resumed(const rsp_conn_t *c);

/* Close and free (NULL is fine). */
void rsp_conn_close(rsp_conn_t *c);

/* Per-server connection pools (per child, thread-safe): up to max
 * connections to one server, reused across requests, each connected when
 * first needed and again after it was dropped. Shared by the store
 * backends; a backend's connection struct begins with an rsp_pooled_t. */
typedef struct rsp_pool_t rsp_pool_t;

typedef struct {
    rsp_conn_t *io;          /* NULL: not connected */
    void *server;            /* the backend's server (given at create) */
    rsp_pool_t *pool;
} rsp_pooled_t;

typedef struct {
    apr_size_t size;         /* of the backend's struct (zeroed at first) */
    /* Connect c (c->io) and set it up, by the deadline; ctx is what the
     * caller of rsp_pool_acquire gave. On failure c->io is NULL and *err
     * says why. */
    apr_status_t (*connect)(rsp_pooled_t *c, void *ctx, apr_pool_t *p,
                            apr_time_t deadline, const char **err);
    /* Optional: c->io was closed; forget what went with it. */
    void (*closed)(rsp_pooled_t *c);
    /* Optional: free what c holds beside its struct (after closed). */
    void (*destroy)(rsp_pooled_t *c);
    /* Optional: c is open but out of step (bytes left unread). */
    int (*stale)(const rsp_pooled_t *c);
} rsp_pool_kind_t;

/* A pool for server (kept in every connection's ->server); waiting for a
 * free connection is bounded by wait. Freed with p. */
apr_status_t rsp_pool_create(rsp_pool_t **out, apr_pool_t *p,
                             const rsp_pool_kind_t *kind, void *server,
                             int max, apr_interval_time_t wait);

/* A connection of the pool, connected by the deadline when it is not. One
 * the server closed while it was idle, or out of step, is made again
 * first: nothing was sent on it for this caller, so that is safe. On
 * failure nothing is held and *err says why: "NAME: no free connection
 * within the timeout", or the connect's reason. */
apr_status_t rsp_pool_acquire(rsp_pool_t *pool, void *ctx, apr_pool_t *p,
                              const char *name, apr_time_t deadline,
                              rsp_pooled_t **out, const char **err);

/* Back to its pool (NULL is fine). */
void rsp_pool_release(rsp_pooled_t *c);

/* Close c's connection, its state being unknown (it stays acquired; the
 * next acquire connects again). NULL is fine. */
void rsp_pool_drop(rsp_pooled_t *c);

#endif
