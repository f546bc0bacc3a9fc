#include <string.h>

#include <apr_strings.h>
#include <apr_lib.h>

#include "rsp_pct.h"
#include "rsp_url.h"

/* A decimal number in [min, max] spanning exactly [s, s+len). */
static int parse_int(const char *s, apr_size_t len, int min, int max, int *out)
{
    long v = 0;
    apr_size_t i;

    if (len == 0 || len > 9) {
        return 0;
    }
    for (i = 0; i < len; i++) {
        if (!apr_isdigit(s[i])) {
            return 0;
        }
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max) {
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int has_bad_chars(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f) {
            return 1;
        }
    }
    return 0;
}

#define FAIL(msg) do { *err = (msg); return APR_EINVAL; } while (0)

/* host:port or [v6]:port spanning exactly [hp, hp+len). */
static apr_status_t parse_hostport(apr_pool_t *p, const char *hp,
                                   apr_size_t len, const char *port_hint,
                                   const char **host, int *port,
                                   const char **err)
{
    const char *colon;

    if (len == 0) {
        FAIL("missing host");
    }
    if (hp[0] == '[') {
        const char *rb = memchr(hp, ']', len);
        if (!rb || rb == hp + 1) {
            FAIL("malformed [IPv6] host");
        }
        *host = apr_pstrndup(p, hp + 1, (apr_size_t)(rb - hp - 1));
        colon = rb + 1;
        if (colon == hp + len) {
            colon = NULL;
        }
        else if (*colon != ':') {
            FAIL("expected ':port' after the [IPv6] host");
        }
    }
    else {
        colon = memchr(hp, ':', len);
        *host = apr_pstrndup(p, hp, colon ? (apr_size_t)(colon - hp) : len);
    }
    if (!**host || has_bad_chars(*host)) {
        FAIL("missing or malformed host");
    }
    if (!colon) {
        *err = apr_psprintf(p, "missing port: write host:port (%s)", port_hint);
        return APR_EINVAL;
    }
    if (!parse_int(colon + 1, (apr_size_t)(hp + len - colon - 1), 1, 65535,
                   port)) {
        FAIL("port must be a number from 1 to 65535");
    }
    return APR_SUCCESS;
}

static const char *hostport_display(apr_pool_t *p, const char *host, int port)
{
    return apr_psprintf(p, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

/* host:port[,host:port...] in list[0..len): distinct, at most
 * RSP_MAX_SERVERS, pushed onto *out in order; *display gets them joined
 * by commas. what ("server", "sentinel") names them in messages. */
static apr_status_t parse_server_list(apr_pool_t *p, const char *list,
                                      apr_size_t len, const char *port_hint,
                                      const char *what,
                                      apr_array_header_t **out,
                                      const char **display, const char **err)
{
    const char *cur = list, *end = list + len;

    *out = apr_array_make(p, 4, sizeof(rsp_server_t));
    *display = "";
    for (;;) {
        const char *comma = memchr(cur, ',', (apr_size_t)(end - cur));
        apr_size_t n = comma ? (apr_size_t)(comma - cur) : (apr_size_t)(end - cur);
        rsp_server_t sv;
        int i;

        if (parse_hostport(p, cur, n, port_hint, &sv.host, &sv.port, err)
            != APR_SUCCESS) {
            return APR_EINVAL;
        }
        for (i = 0; i < (*out)->nelts; i++) {
            rsp_server_t *o = &APR_ARRAY_IDX(*out, i, rsp_server_t);
            if (o->port == sv.port && !strcasecmp(o->host, sv.host)) {
                *err = apr_psprintf(p, "a %s is listed twice", what);
                return APR_EINVAL;
            }
        }
        if ((*out)->nelts >= RSP_MAX_SERVERS) {
            *err = apr_psprintf(p, "too many %ss", what);
            return APR_EINVAL;
        }
        sv.name = hostport_display(p, sv.host, sv.port);
        APR_ARRAY_PUSH(*out, rsp_server_t) = sv;
        *display = apr_pstrcat(p, *display, (*out)->nelts > 1 ? "," : "",
                               sv.name, NULL);
        if (!comma) {
            return APR_SUCCESS;
        }
        cur = comma + 1;
    }
}

/* user:password@ (user may be empty) in cred[0..at), percent-decoded. */
static apr_status_t parse_credentials(rsp_store_url_t *u, apr_pool_t *p,
                                      const char *cred, const char *at,
                                      const char **err)
{
    const char *c = memchr(cred, ':', (apr_size_t)(at - cred));

    if (!c) {
        FAIL("credentials must be user:password@ (user may be empty)");
    }
    /* percent-decoded strictly: a bad escape or %00 refused, '+' itself */
    u->user = c > cred ? rsp_pct_decode(p, cred, (apr_size_t)(c - cred), 0,
                                        NULL)
                       : NULL;
    u->password = rsp_pct_decode(p, c + 1, (apr_size_t)(at - c - 1), 0, NULL);
    if ((c > cred && !u->user) || !u->password) {
        FAIL("bad percent-escape in the credentials");
    }
    if (!*u->password) {
        FAIL("empty password");
    }
    return APR_SUCCESS;
}

/* [user:password@]HOSTS[/...] of a Redis URL: the credentials into u,
 * *hosts where the host part starts, *slash the first '/' (NULL: none).
 * what names the host part in messages ("host", "sentinels", "nodes");
 * no_query is the message for a query or fragment. */
static apr_status_t split_authority(rsp_store_url_t *u, apr_pool_t *p,
                                    const char *rest, const char *what,
                                    const char *no_query, const char **hosts,
                                    const char **slash, const char **err)
{
    const char *at = strrchr(rest, '@');

    *slash = strchr(rest, '/');
    if (at && *slash && at > *slash) {
        *err = apr_psprintf(p, "'@' after the first '/': put credentials "
                            "before the %s", what);
        return APR_EINVAL;
    }
    if (strchr(rest, '?') || strchr(rest, '#')) {
        FAIL(no_query);
    }
    if (at && parse_credentials(u, p, rest, at, err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    *hosts = at ? at + 1 : rest;
    return APR_SUCCESS;
}

/* memcache://host:port[,host:port...]: the order is the key mapping. */
static apr_status_t parse_memcache(rsp_store_url_t *u, apr_pool_t *p,
                                   const char *rest, const char **err)
{
    const char *list;

    u->kind = RSP_STORE_MEMCACHE;
    if (strpbrk(rest, "/?#@")) {
        FAIL("memcache:// and memcaches:// URLs are a comma-separated list "
             "of host:port, with no credentials, path or query");
    }
    if (parse_server_list(p, rest, strlen(rest),
                          "memcached listens on 11211 by default", "server",
                          &u->servers, &list, err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    u->display = apr_pstrcat(p, u->tls ? "memcaches://" : "memcache://", list,
                             NULL);
    return APR_SUCCESS;
}

static apr_status_t parse_unix(rsp_store_url_t *u, apr_pool_t *p,
                               const char *rest, const char **err)
{
    const char *q = strchr(rest, '?');
    apr_size_t plen = q ? (apr_size_t)(q - rest) : strlen(rest);

    u->kind = RSP_STORE_REDIS_UNIX;
    if (plen < 2 || rest[0] != '/') {
        FAIL("redis+unix:// needs an absolute socket path, "
             "e.g. redis+unix:///run/redis/redis.sock");
    }
    u->path = rsp_pct_decode(p, rest, plen, 0, NULL);
    if (!u->path) {
        FAIL("bad percent-escape in the socket path");
    }
    if (q) {
        const char *arg = q + 1;
        if (strncmp(arg, "db=", 3) != 0
            || !parse_int(arg + 3, strlen(arg + 3), 0, 1000000, &u->db)) {
            FAIL("the only query parameter accepted is db=N "
                 "(a non-negative database number)");
        }
    }
    u->display = apr_pstrcat(p, "redis+unix://", u->path,
                             u->db ? apr_psprintf(p, "?db=%d", u->db) : "",
                             NULL);
    return APR_SUCCESS;
}

static apr_status_t parse_tcp(rsp_store_url_t *u, apr_pool_t *p,
                              const char *rest, const char **err)
{
    const char *slash, *hostport;
    apr_size_t hplen;

    u->kind = RSP_STORE_REDIS;
    if (split_authority(u, p, rest, "host", "redis:// URLs take no query or "
                        "fragment; give the database as /N", &hostport, &slash,
                        err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    hplen = slash ? (apr_size_t)(slash - hostport) : strlen(hostport);
    if (parse_hostport(p, hostport, hplen, "Redis listens on 6379 by default",
                       &u->host, &u->port, err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    if (slash && slash[1] != '\0') {
        if (!parse_int(slash + 1, strlen(slash + 1), 0, 1000000, &u->db)) {
            FAIL("database must be a non-negative number: redis://host:port/N");
        }
    }
    u->display = apr_psprintf(p, "%s://%s%s%s/%d", u->tls ? "rediss" : "redis",
                              u->password && u->user ? u->user : "",
                              u->password ? ":***@" : "",
                              hostport_display(p, u->host, u->port), u->db);
    return APR_SUCCESS;
}

/* redis+sentinel://[user:password@]s1:26379[,s2:26379...]/MASTER[/db] */
static apr_status_t parse_sentinel(rsp_store_url_t *u, apr_pool_t *p,
                                   const char *rest, const char **err)
{
    const char *slash, *list, *name, *end, *c, *servers;
    const char *scheme = u->tls ? "rediss+sentinel" : "redis+sentinel";

    u->kind = RSP_STORE_REDIS;
    if (split_authority(u, p, rest, "sentinels", "redis+sentinel:// URLs take "
                        "no query or fragment", &list, &slash, err)
        != APR_SUCCESS) {
        return APR_EINVAL;
    }
    if (!slash) {
        FAIL("redis+sentinel:// needs the master's name after the sentinels: "
             "redis+sentinel://host:26379,host:26379/MASTER[/db]");
    }
    if (list == slash) {
        FAIL("no sentinel before the master's name");
    }
    if (parse_server_list(p, list, (apr_size_t)(slash - list),
                          "Sentinel listens on 26379 by default", "sentinel",
                          &u->sentinels, &servers, err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    name = slash + 1;
    end = strchr(name, '/');
    if (!end) {
        end = name + strlen(name);
    }
    if (end == name || end - name > 64) {
        FAIL("the master's name must be 1 to 64 characters");
    }
    for (c = name; c < end; c++) {
        if (!apr_isalnum(*c) && *c != '-' && *c != '_' && *c != '.') {
            FAIL("the master's name may contain letters, digits, '-', '_' "
                 "and '.' only");
        }
    }
    u->master_name = apr_pstrmemdup(p, name, (apr_size_t)(end - name));
    if (*end && end[1] != '\0'
        && !parse_int(end + 1, strlen(end + 1), 0, 1000000, &u->db)) {
        FAIL("database must be a non-negative number: .../MASTER/N");
    }
    u->display = apr_psprintf(p, "%s://%s%s%s/%s/%d", scheme,
                              u->password && u->user ? u->user : "",
                              u->password ? ":***@" : "", servers,
                              u->master_name, u->db);
    return APR_SUCCESS;
}

/* redis+cluster://[user:password@]host:port[,host:port...][/]: seed nodes,
 * any of which gives the map of the rest. Database 0 only (the cluster
 * has no other). */
static apr_status_t parse_cluster(rsp_store_url_t *u, apr_pool_t *p,
                                  const char *rest, const char **err)
{
    const char *slash, *list, *servers;

    u->kind = RSP_STORE_REDIS;
    if (split_authority(u, p, rest, "nodes", "redis+cluster:// URLs take no "
                        "query or fragment", &list, &slash, err)
        != APR_SUCCESS) {
        return APR_EINVAL;
    }
    if (slash && strcmp(slash, "/") != 0 && strcmp(slash, "/0") != 0) {
        FAIL("Redis Cluster has database 0 only: redis+cluster://host:port"
             "[,host:port...] takes no database or path");
    }
    if (parse_server_list(p, list,
                          slash ? (apr_size_t)(slash - list) : strlen(list),
                          "Redis Cluster nodes listen on 6379 by default",
                          "node", &u->cluster, &servers, err) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    u->display = apr_psprintf(p, "%s://%s%s%s", u->tls ? "rediss+cluster"
                                                       : "redis+cluster",
                              u->password && u->user ? u->user : "",
                              u->password ? ":***@" : "", servers);
    return APR_SUCCESS;
}

apr_status_t rsp_store_url_parse(rsp_store_url_t **out, apr_pool_t *p,
                                 const char *url, const char **err)
{
    rsp_store_url_t *u = apr_pcalloc(p, sizeof(*u));
    apr_status_t rv;

    if (!url || !*url) {
        FAIL("empty store URL");
    }
    if (has_bad_chars(url)) {
        FAIL("the URL contains spaces or control characters");
    }
    if (strncasecmp(url, "redis+unix://", 13) == 0) {
        rv = parse_unix(u, p, url + 13, err);
    }
    else if (strncasecmp(url, "redis://", 8) == 0) {
        rv = parse_tcp(u, p, url + 8, err);
    }
    else if (strncasecmp(url, "rediss://", 9) == 0) {
        u->tls = 1;
        rv = parse_tcp(u, p, url + 9, err);
    }
    else if (strncasecmp(url, "redis+sentinel://", 17) == 0) {
        rv = parse_sentinel(u, p, url + 17, err);
    }
    else if (strncasecmp(url, "rediss+sentinel://", 18) == 0) {
        u->tls = 1;
        rv = parse_sentinel(u, p, url + 18, err);
    }
    else if (strncasecmp(url, "redis+cluster://", 16) == 0) {
        rv = parse_cluster(u, p, url + 16, err);
    }
    else if (strncasecmp(url, "rediss+cluster://", 17) == 0) {
        u->tls = 1;
        rv = parse_cluster(u, p, url + 17, err);
    }
    else if (strncasecmp(url, "memcache://", 11) == 0) {
        rv = parse_memcache(u, p, url + 11, err);
    }
    else if (strncasecmp(url, "memcaches://", 12) == 0) {
        u->tls = 1;
        rv = parse_memcache(u, p, url + 12, err);
    }
    else {
        FAIL("unknown scheme: expected redis://host:port[/db] or "
             "rediss://host:port[/db] (TLS), "
             "redis+sentinel://host:port[,...]/MASTER[/db] (or "
             "rediss+sentinel://), redis+cluster://host:port[,...] (or "
             "rediss+cluster://), redis+unix:///path[?db=N], "
             "memcache://host:port[,host:port...] or memcaches://... (TLS)");
    }
    if (rv == APR_SUCCESS) {
        *out = u;
    }
    return rv;
}
