#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <apr_reslist.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include "rsp_io.h"

int rsp_io_wait(int fd, short events, apr_time_t deadline)
{
    struct pollfd pfd;
    int n;

    for (;;) {
        apr_interval_time_t left = deadline - apr_time_now();
        if (left <= 0) {
            return APR_TIMEUP;
        }
        pfd.fd = fd;
        pfd.events = events;
        pfd.revents = 0;
        n = poll(&pfd, 1, (int)((left + 999) / 1000));
        if (n > 0) {
            return 0;
        }
        if (n < 0 && errno != EINTR) {
            return errno;
        }
    }
}

static apr_status_t try_connect(int *out, const struct addrinfo *ai,
                                apr_time_t deadline, int *why)
{
    int fd, rc, soerr = 0, one = 1;
    socklen_t len = sizeof(soerr);

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *why = errno;
        return APR_EGENERAL;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        *why = errno;
        close(fd);
        return APR_EGENERAL;
    }
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && errno != EINPROGRESS) {
        *why = errno;
        close(fd);
        return APR_EGENERAL;
    }
    if (rc < 0) {
        if ((rc = rsp_io_wait(fd, POLLOUT, deadline)) != 0) {
            *why = rc;
            close(fd);
            return APR_EGENERAL;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
            *why = soerr ? soerr : errno;
            close(fd);
            return APR_EGENERAL;
        }
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *out = fd;
    return APR_SUCCESS;
}

apr_status_t rsp_io_connect(int *fd, apr_pool_t *p, const char *host,
                            int port, apr_time_t deadline, const char **err)
{
    struct addrinfo hints, *res = NULL, *ai;
    char service[16];
    int rc, why = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        *err = apr_psprintf(p, "cannot resolve %s: %s", host, gai_strerror(rc));
        return APR_EGENERAL;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        if (try_connect(fd, ai, deadline, &why) == APR_SUCCESS) {
            freeaddrinfo(res);
            return APR_SUCCESS;
        }
        if (why == APR_TIMEUP) {
            break;
        }
    }
    freeaddrinfo(res);
    *err = why == APR_TIMEUP
        ? apr_psprintf(p, "connect to %s:%d: timed out", host, port)
        : apr_psprintf(p, "connect to %s:%d: %s", host, port, strerror(why));
    return APR_EGENERAL;
}

/* ---- connections: plaintext or TLS ---- */

struct rsp_tls_t {
    SSL_CTX *ctx;
};

struct rsp_tls_cache_t {
    apr_thread_mutex_t *lock;
    SSL_SESSION *session;     /* the server's latest ticket, or NULL */
};

struct rsp_conn_t {
    int fd;
    SSL *ssl;                 /* NULL: plaintext */
    rsp_tls_cache_t *cache;   /* where its server's session is kept */
    int broken;               /* closed by the peer or failed: no
                               * close_notify from us */
    int fatal;                /* a TLS error (not a mere close): its
                               * session is not to be resumed */
    int resumed;
};

/* OpenSSL's first queued error, as text (the queue is then emptied). */
static const char *tls_reason(apr_pool_t *p, const char *fallback)
{
    unsigned long e = ERR_get_error();
    char buf[256];

    ERR_clear_error();
    if (!e) {
        return fallback;
    }
    ERR_error_string_n(e, buf, sizeof(buf));
    return apr_pstrdup(p, buf);
}

static apr_status_t tls_ctx_free(void *data)
{
    rsp_tls_t *t = data;

    if (t->ctx) {
        SSL_CTX_free(t->ctx);
        t->ctx = NULL;
    }
    return APR_SUCCESS;
}

/* Never prompt for a passphrase (httpd may have a terminal at start). */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return 0;
}

/* A new session (TLS 1.3: a ticket) from the server: a copy of it is
 * kept, so that what OpenSSL later does to the connection's own session
 * (marking it not resumable when the connection is freed without a
 * close_notify of ours) does not reach the cache. */
static int tls_new_session(SSL *ssl, SSL_SESSION *session)
{
    rsp_tls_cache_t *cache = SSL_get_app_data(ssl);
    SSL_SESSION *copy, *old;

    if (!cache || !(copy = SSL_SESSION_dup(session))) {
        return 0;
    }
    apr_thread_mutex_lock(cache->lock);
    old = cache->session;
    cache->session = copy;
    apr_thread_mutex_unlock(cache->lock);
    if (old) {
        SSL_SESSION_free(old);
    }
    return 0; /* OpenSSL keeps its reference to session */
}

/* After a TLS error on a connection: its server's session is not offered
 * again (the next connection makes a full handshake). */
static void tls_cache_forget(rsp_tls_cache_t *cache)
{
    SSL_SESSION *old;

    apr_thread_mutex_lock(cache->lock);
    old = cache->session;
    cache->session = NULL;
    apr_thread_mutex_unlock(cache->lock);
    if (old) {
        SSL_SESSION_free(old);
    }
}

apr_status_t rsp_tls_create(rsp_tls_t **out, apr_pool_t *p,
                            const char *ca_file, const char *cert_file,
                            const char *key_file, rsp_tls_input_t *input,
                            const char **err)
{
    rsp_tls_t *t = apr_pcalloc(p, sizeof(*t));
    rsp_tls_input_t dummy;

    if (!input) {
        input = &dummy;
    }
    *input = RSP_TLS_INPUT_NONE;

    ERR_clear_error();
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (!t->ctx) {
        *err = tls_reason(p, "cannot create a TLS context");
        return APR_EGENERAL;
    }
    apr_pool_cleanup_register(p, t, tls_ctx_free, apr_pool_cleanup_null);
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_default_passwd_cb(t->ctx, no_passphrase);
    /* The replies say where they end; a close without close_notify is
     * a closed connection, not an attack on a truncated stream. */
    SSL_CTX_set_options(t->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    *input = RSP_TLS_INPUT_CA;
    if (ca_file) {
        if (SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL) != 1) {
            *err = apr_psprintf(p, "CA file %s: %s", ca_file,
                                tls_reason(p, "no certificate in it"));
            return APR_EGENERAL;
        }
    }
    else if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
        *err = apr_psprintf(p, "the system's CA certificates: %s",
                            tls_reason(p, "cannot load them"));
        return APR_EGENERAL;
    }
    if (cert_file) {
        *input = RSP_TLS_INPUT_CERT;
        if (SSL_CTX_use_certificate_chain_file(t->ctx, cert_file) != 1) {
            *err = apr_psprintf(p, "certificate file %s: %s", cert_file,
                                tls_reason(p, "no certificate in it"));
            return APR_EGENERAL;
        }
        *input = RSP_TLS_INPUT_KEY;
        if (SSL_CTX_use_PrivateKey_file(t->ctx, key_file ? key_file : cert_file,
                                        SSL_FILETYPE_PEM) != 1) {
            *err = apr_psprintf(p, "key file %s: %s (an unencrypted PEM key "
                                "is expected)", key_file ? key_file : cert_file,
                                tls_reason(p, "no key in it"));
            return APR_EGENERAL;
        }
        if (SSL_CTX_check_private_key(t->ctx) != 1) {
            *err = apr_psprintf(p, "key file %s does not match the certificate "
                                "in %s", key_file ? key_file : cert_file,
                                cert_file);
            ERR_clear_error();
            return APR_EGENERAL;
        }
    }
    *input = RSP_TLS_INPUT_NONE;
    SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT
                                   | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(t->ctx, tls_new_session);
    *out = t;
    return APR_SUCCESS;
}

static apr_status_t tls_cache_free(void *data)
{
    rsp_tls_cache_t *cache = data;

    if (cache->session) {
        SSL_SESSION_free(cache->session);
        cache->session = NULL;
    }
    return APR_SUCCESS;
}

apr_status_t rsp_tls_cache_create(rsp_tls_cache_t **out, apr_pool_t *p)
{
    rsp_tls_cache_t *cache = apr_pcalloc(p, sizeof(*cache));
    apr_status_t rv;

    rv = apr_thread_mutex_create(&cache->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    apr_pool_cleanup_register(p, cache, tls_cache_free, apr_pool_cleanup_null);
    *out = cache;
    return APR_SUCCESS;
}

int rsp_tls_cache_ready(rsp_tls_cache_t *cache)
{
    int ready;

    apr_thread_mutex_lock(cache->lock);
    ready = cache->session && SSL_SESSION_is_resumable(cache->session);
    apr_thread_mutex_unlock(cache->lock);
    return ready;
}

static apr_status_t connect_unix(int *out, apr_pool_t *p, const char *path,
                                 apr_time_t deadline, const char **err)
{
    struct sockaddr_un sa;
    int fd, rc, soerr = 0;
    socklen_t len = sizeof(soerr);

    if (strlen(path) >= sizeof(sa.sun_path)) {
        *err = apr_psprintf(p, "socket path too long: %s", path);
        return APR_EGENERAL;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err = apr_psprintf(p, "socket: %s", strerror(errno));
        return APR_EGENERAL;
    }
    rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    if (rc < 0 && errno != EINPROGRESS && errno != EAGAIN) {
        *err = apr_psprintf(p, "connect to %s: %s", path, strerror(errno));
        close(fd);
        return APR_EGENERAL;
    }
    if (rc < 0) {
        if ((rc = rsp_io_wait(fd, POLLOUT, deadline)) != 0
            || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
            *err = apr_psprintf(p, "connect to %s: %s", path,
                                rc == APR_TIMEUP ? "timed out"
                                : strerror(rc ? rc : soerr ? soerr : errno));
            close(fd);
            return APR_EGENERAL;
        }
    }
    *out = fd;
    return APR_SUCCESS;
}

/* Wait for what OpenSSL asked for (after a return of r from an SSL_*
 * call): 0 to try again, else APR_TIMEUP, APR_EOF or APR_EGENERAL with
 * *err. */
static apr_status_t tls_wait(rsp_conn_t *c, int r, apr_time_t deadline,
                             apr_pool_t *p, const char **err)
{
    int e = SSL_get_error(c->ssl, r), rc;

    switch (e) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        rc = rsp_io_wait(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                         deadline);
        if (rc == 0) {
            return APR_SUCCESS;
        }
        if (rc == APR_TIMEUP) {
            return APR_TIMEUP;
        }
        *err = apr_psprintf(p, "poll: %s", strerror(rc));
        return APR_EGENERAL;
    case SSL_ERROR_ZERO_RETURN:
        return APR_EOF;
    case SSL_ERROR_SYSCALL:
        c->broken = 1;
        if (ERR_peek_error() == 0) {
            if (errno == 0 || errno == ECONNRESET || errno == EPIPE) {
                return APR_EOF;
            }
            *err = apr_pstrdup(p, strerror(errno));
            return APR_EGENERAL;
        }
        /* fall through */
    default:
        c->broken = c->fatal = 1;
        *err = apr_psprintf(p, "TLS: %s", tls_reason(p, "protocol error"));
        return APR_EGENERAL;
    }
}

static int is_ip(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, host, buf) == 1
        || inet_pton(AF_INET6, host, buf) == 1;
}

static apr_status_t handshake(rsp_conn_t *c, apr_pool_t *p,
                              const rsp_peer_t *peer, apr_time_t deadline,
                              const char **err)
{
    X509_VERIFY_PARAM *param;
    const char *why = NULL;
    apr_status_t rv;
    int r;

    ERR_clear_error();
    if (!(c->ssl = SSL_new(peer->tls->ctx))) {
        *err = tls_reason(p, "cannot create a TLS connection");
        return APR_EGENERAL;
    }
    SSL_set_fd(c->ssl, c->fd);
    param = SSL_get0_param(c->ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    /* The server's name is checked against its certificate: its DNS
     * name (also sent as SNI), or its IP address. */
    if (is_ip(peer->host)) {
        r = X509_VERIFY_PARAM_set1_ip_asc(param, peer->host);
    }
    else {
        r = SSL_set_tlsext_host_name(c->ssl, peer->host) == 1
            && X509_VERIFY_PARAM_set1_host(param, peer->host, 0) == 1;
    }
    if (r != 1) {
        *err = tls_reason(p, "cannot set the name to verify");
        c->broken = 1;
        return APR_EGENERAL;
    }
    if (peer->cache) {
        c->cache = peer->cache;
        SSL_set_app_data(c->ssl, peer->cache);
        apr_thread_mutex_lock(peer->cache->lock);
        if (peer->cache->session) {
            SSL_set_session(c->ssl, peer->cache->session);
        }
        apr_thread_mutex_unlock(peer->cache->lock);
    }
    while ((r = SSL_connect(c->ssl)) != 1) {
        long v = SSL_get_verify_result(c->ssl);
        if (v != X509_V_OK) {
            c->broken = c->fatal = 1;
            ERR_clear_error();
            *err = apr_psprintf(p, "TLS handshake: the server's certificate "
                                "is not accepted: %s",
                                X509_verify_cert_error_string(v));
            return APR_EGENERAL;
        }
        rv = tls_wait(c, r, deadline, p, &why);
        if (rv == APR_SUCCESS) {
            continue;
        }
        c->broken = c->fatal = 1; /* whatever failed, start afresh */
        *err = rv == APR_TIMEUP
            ? "TLS handshake: timed out"
            : rv == APR_EOF ? "TLS handshake: connection closed by the server"
            : apr_psprintf(p, "TLS handshake: %s", why);
        return APR_EGENERAL;
    }
    c->resumed = SSL_session_reused(c->ssl);
    return APR_SUCCESS;
}

apr_status_t rsp_conn_open(rsp_conn_t **out, apr_pool_t *p,
                           const rsp_peer_t *peer, apr_time_t deadline,
                           const char **err)
{
    rsp_conn_t *c;
    int fd = -1;
    apr_status_t rv;

    rv = peer->path ? connect_unix(&fd, p, peer->path, deadline, err)
                    : rsp_io_connect(&fd, p, peer->host, peer->port, deadline,
                                     err);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        close(fd);
        *err = "out of memory";
        return APR_ENOMEM;
    }
    c->fd = fd;
    if (peer->tls && !peer->path
        && (rv = handshake(c, p, peer, deadline, err)) != APR_SUCCESS) {
        rsp_conn_close(c);
        return rv;
    }
    *out = c;
    return APR_SUCCESS;
}

apr_status_t rsp_conn_send(rsp_conn_t *c, const char *data, apr_size_t len,
                           apr_time_t deadline, apr_pool_t *p,
                           const char **err)
{
    while (len > 0) {
        if (c->ssl) {
            apr_status_t rv;
            int r;
            ERR_clear_error();
            r = SSL_write(c->ssl, data, len > INT_MAX ? INT_MAX : (int)len);
            if (r > 0) {
                data += r;
                len -= (apr_size_t)r;
                continue;
            }
            if ((rv = tls_wait(c, r, deadline, p, err)) == APR_EOF) {
                *err = "connection closed by the server";
                return APR_EGENERAL;
            }
            if (rv != APR_SUCCESS) {
                return rv;
            }
        }
        else {
            ssize_t n;
            int rc = rsp_io_wait(c->fd, POLLOUT, deadline);
            if (rc != 0) {
                if (rc == APR_TIMEUP) {
                    return APR_TIMEUP;
                }
                *err = apr_psprintf(p, "poll: %s", strerror(rc));
                return APR_EGENERAL;
            }
            n = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) {
                    continue;
                }
                *err = apr_pstrdup(p, strerror(errno));
                return APR_EGENERAL;
            }
            data += n;
            len -= (apr_size_t)n;
        }
    }
    return APR_SUCCESS;
}

apr_status_t rsp_conn_recv(rsp_conn_t *c, char *buf, apr_size_t cap,
                           apr_size_t *got, apr_time_t deadline,
                           apr_pool_t *p, const char **err)
{
    for (;;) {
        if (c->ssl) {
            /* Read first: OpenSSL may hold decrypted bytes already. */
            apr_status_t rv;
            int r;
            ERR_clear_error();
            r = SSL_read(c->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
            if (r > 0) {
                *got = (apr_size_t)r;
                return APR_SUCCESS;
            }
            if ((rv = tls_wait(c, r, deadline, p, err)) != APR_SUCCESS) {
                return rv;
            }
        }
        else {
            ssize_t n;
            int rc = rsp_io_wait(c->fd, POLLIN, deadline);
            if (rc != 0) {
                if (rc == APR_TIMEUP) {
                    return APR_TIMEUP;
                }
                *err = apr_psprintf(p, "poll: %s", strerror(rc));
                return APR_EGENERAL;
            }
            n = recv(c->fd, buf, cap, MSG_DONTWAIT);
            if (n > 0) {
                *got = (apr_size_t)n;
                return APR_SUCCESS;
            }
            if (n == 0) {
                return APR_EOF;
            }
            if (errno != EAGAIN && errno != EINTR) {
                if (errno == ECONNRESET) {
                    return APR_EOF;
                }
                *err = apr_pstrdup(p, strerror(errno));
                return APR_EGENERAL;
            }
        }
    }
}

int rsp_conn_idle_closed(rsp_conn_t *c)
{
    struct pollfd pfd;
    char b;
    int r;

    if (c->ssl && SSL_pending(c->ssl) > 0) {
        return 1; /* a reply nobody asked for: out of step */
    }
    pfd.fd = c->fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    if (poll(&pfd, 1, 0) == 0) {
        return 0;
    }
    if (!c->ssl) {
        return 1;
    }
    /* Readable: session tickets are records without data; anything
     * else (data, an alert, EOF) means the connection is done. */
    ERR_clear_error();
    r = SSL_peek(c->ssl, &b, 1);
    if (r <= 0 && SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_READ) {
        return 0;
    }
    c->broken = r <= 0;
    ERR_clear_error();
    return 1;
}

int rsp_conn_resumed(const rsp_conn_t *c)
{
    return c->resumed;
}

void rsp_conn_close(rsp_conn_t *c)
{
    if (!c) {
        return;
    }
    if (c->ssl) {
        if (!c->broken) {
            SSL_shutdown(c->ssl); /* close_notify, not waited for */
        }
        if (c->fatal && c->cache) {
            tls_cache_forget(c->cache);
        }
        SSL_free(c->ssl);
        ERR_clear_error();
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    free(c);
}

/* ------------------------------------------------------------------ */
/* Per-server pools                                                     */

struct rsp_pool_t {
    apr_reslist_t *list;
    const rsp_pool_kind_t *kind;
    void *server;
};

static apr_status_t pooled_make(void **res, void *params, apr_pool_t *p)
{
    rsp_pool_t *pool = params;
    rsp_pooled_t *c = calloc(1, pool->kind->size);

    (void)p;
    if (!c) {
        return APR_ENOMEM;
    }
    c->server = pool->server;
    c->pool = pool;
    *res = c;
    return APR_SUCCESS;
}

static apr_status_t pooled_free(void *res, void *params, apr_pool_t *p)
{
    rsp_pooled_t *c = res;
    rsp_pool_t *pool = params;

    (void)p;
    rsp_pool_drop(c);
    if (pool->kind->destroy) {
        pool->kind->destroy(c);
    }
    free(c);
    return APR_SUCCESS;
}

apr_status_t rsp_pool_create(rsp_pool_t **out, apr_pool_t *p,
                             const rsp_pool_kind_t *kind, void *server,
                             int max, apr_interval_time_t wait)
{
    rsp_pool_t *pool = apr_pcalloc(p, sizeof(*pool));
    apr_status_t rv;

    pool->kind = kind;
    pool->server = server;
    if (max < 1) {
        max = 1;
    }
    rv = apr_reslist_create(&pool->list, 0, max, max, 0, pooled_make,
                            pooled_free, pool, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* Waiting for a free connection is bounded like everything else. */
    apr_reslist_timeout_set(pool->list, wait);
    *out = pool;
    return APR_SUCCESS;
}

apr_status_t rsp_pool_acquire(rsp_pool_t *pool, void *ctx, apr_pool_t *p,
                              const char *name, apr_time_t deadline,
                              rsp_pooled_t **out, const char **err)
{
    rsp_pooled_t *c;
    void *res;
    apr_status_t rv;

    rv = apr_reslist_acquire(pool->list, &res);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "%s: %s", name, APR_STATUS_IS_TIMEUP(rv)
                            ? "no free connection within the timeout"
                            : "cannot acquire a connection");
        return rv;
    }
    c = res;
    if (c->io && ((pool->kind->stale && pool->kind->stale(c))
                  || rsp_conn_idle_closed(c->io))) {
        rsp_pool_drop(c);
    }
    if (!c->io
        && (rv = pool->kind->connect(c, ctx, p, deadline, err))
           != APR_SUCCESS) {
        rsp_pool_drop(c);
        apr_reslist_release(pool->list, c);
        return rv;
    }
    *out = c;
    return APR_SUCCESS;
}

void rsp_pool_release(rsp_pooled_t *c)
{
    if (c) {
        apr_reslist_release(c->pool->list, c);
    }
}

void rsp_pool_drop(rsp_pooled_t *c)
{
    if (!c) {
        return;
    }
    rsp_conn_close(c->io);
    c->io = NULL;
    if (c->pool->kind->closed) {
        c->pool->kind->closed(c);
    }
}
