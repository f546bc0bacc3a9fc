/* Store URLs: redis://[user:password@]host:port[/db]
 *             rediss://[user:password@]host:port[/db]      (TLS)
 *             redis+sentinel://[user:password@]host:port[,host:port...]/MASTER[/db]
 *             rediss+sentinel://...                       (TLS)
 *             redis+cluster://[user:password@]host:port[,host:port...]
 *             rediss+cluster://...                        (TLS)
 *             redis+unix:///path/to/socket[?db=N]
 *             memcache://host:port[,host:port...]
 *             memcaches://host:port[,host:port...]         (TLS) */
#ifndef RSP_URL_H
#define RSP_URL_H

#include <apr_pools.h>
#include <apr_tables.h>

typedef enum {
    RSP_STORE_REDIS = 1,
    RSP_STORE_REDIS_UNIX,
    RSP_STORE_MEMCACHE
} rsp_store_kind_t;

#define RSP_MAX_SERVERS 64

typedef struct {
    const char *host;
    int port;
    const char *name;     /* "host:port" or "[v6]:port", for logs */
} rsp_server_t;

typedef struct {
    rsp_store_kind_t kind;
    int tls;              /* rediss://, memcaches:// */
    const char *host;     /* TCP: host name or address */
    int port;             /* TCP: 1..65535 */
    const char *path;     /* unix: absolute socket path */
    const char *user;     /* NULL when absent */
    const char *password; /* NULL when absent */
    int db;               /* Redis database number, 0 by default */
    apr_array_header_t *servers; /* memcache: rsp_server_t, in URL order */
    apr_array_header_t *sentinels; /* Redis under Sentinel: rsp_server_t, in
                                    * URL order (host/port then unset: the
                                    * master is asked for at each connect) */
    const char *master_name;       /* the master's name at the sentinels */
    apr_array_header_t *cluster;   /* Redis Cluster: the seed nodes,
                                    * rsp_server_t in URL order (host/port
                                    * then unset: the map says where each
                                    * key lives) */
    const char *display;  /* the URL with the password masked, for logs */
} rsp_store_url_t;

/* Parse url. On failure returns APR_EINVAL and *err says why. */
apr_status_t rsp_store_url_parse(rsp_store_url_t **out, apr_pool_t *p,
                                 const char *url, const char **err);

#endif
