/* memcached backend: a small client of our own over the module's
 * connections (plaintext or TLS, rsp_io.h); its connections and protocol
 * messages are rsp_memcache_conn.c's, the store operations are here.
 *
 * Why not libmemcached or apr_memcache: a claim must never move to another
 * server (DESIGN.md invariant 7) and must never wait past the timeout
 * (invariant 8). Here a key always maps to the same server,
 *     index = first 4 bytes of SHA-256(key), big-endian, mod N
 * over the servers in URL order, whatever their state; an operation on a
 * server that is down, slow or full fails, and the caller fails closed.
 * Every command, connect included, runs against one deadline.
 *
 * Commands that go together are pipelined: one round trip per server.
 * Connections are per child, pooled per server, reused, and rebuilt after
 * any error. */
#include <string.h>

#include <apr_strings.h>
#include <openssl/evp.h>

#include "rsp_memcache.h"
#include "rsp_util.h"

/* memcached reads an expiry above 30 days as an absolute Unix time. */
#define MC_MAX_RELATIVE_EXPIRY (30 * 86400)

static apr_status_t mc_child_init(rsp_store_t *st, apr_pool_t *pchild,
                                  int max_conns)
{
    const apr_array_header_t *list = st->url->servers;
    rsp_mc_t *impl = apr_pcalloc(pchild, sizeof(*impl));
    apr_status_t rv;
    int i;

    if (max_conns < 1) {
        max_conns = 1;
    }
    impl->n = list->nelts;
    impl->servers = apr_pcalloc(pchild, sizeof(rsp_mc_server_t) * (apr_size_t)impl->n);
    for (i = 0; i < impl->n; i++) {
        rsp_mc_server_t *sv = &impl->servers[i];
        sv->server = &APR_ARRAY_IDX(list, i, rsp_server_t);
        sv->name = sv->server->name;
        if ((rv = rsp_mc_server_init(st, sv, pchild, max_conns))
            != APR_SUCCESS) {
            return rv;
        }
    }
    st->impl = impl;
    return APR_SUCCESS;
}

/* The server a key lives on: fixed by the key and the configured list. */
static rsp_mc_server_t *server_of(rsp_mc_t *impl, const char *key)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    apr_uint32_t h;

    EVP_Digest(key, strlen(key), md, &mdlen, EVP_sha256(), NULL);
    h = ((apr_uint32_t)md[0] << 24) | ((apr_uint32_t)md[1] << 16)
        | ((apr_uint32_t)md[2] << 8) | md[3];
    return &impl->servers[h % (apr_uint32_t)impl->n];
}

static apr_status_t check_ready(rsp_store_t *st, const char **err)
{
    if (!st->impl) {
        *err = "store not initialised in this process";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t expiry(apr_int64_t ttl_ms, apr_int64_t *exp, const char **err)
{
    if (ttl_ms < 1) {
        *err = "TTL must be positive";
        return APR_EINVAL;
    }
    /* memcached's clock ticks once a second and an item set just before a
     * tick loses up to a second: one more keeps every item for at least
     * its TTL (a claim must never expire before its window). */
    *exp = rsp_ttl_seconds(ttl_ms) + 1;
    if (*exp > MC_MAX_RELATIVE_EXPIRY) {
        *err = "TTL beyond memcached's 30-day relative expiry";
        return APR_EINVAL;
    }
    return APR_SUCCESS;
}

/* add or set: one storage command, "STORED" or not. */
static apr_status_t store_cmd(rsp_store_t *st, apr_pool_t *p, const char *cmd,
                              const char *key, const char *value,
                              apr_size_t len, apr_int64_t ttl_ms, int *stored,
                              const char **err)
{
    rsp_mc_op_t op;
    rsp_mc_buf_t b;
    apr_int64_t exp;
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = expiry(ttl_ms, &exp, err)) != APR_SUCCESS) {
        return rv;
    }
    if (len > MC_MAX_VALUE) {
        *err = "value too large for memcached";
        return APR_EINVAL;
    }
    if ((rv = rsp_mc_begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    memset(&b, 0, sizeof(b));
    rsp_mc_buf_store(p, &b, cmd, key, exp, value, len);
    if ((rv = rsp_mc_send(&op, b.data, b.len)) == APR_SUCCESS) {
        rv = rsp_mc_read_stored(&op, stored);
    }
    rsp_mc_end(&op);
    return rv;
}

static apr_status_t mc_claim(rsp_store_t *st, apr_pool_t *p, const char *key,
                             const char *value, apr_int64_t ttl_ms, int *won,
                             const char **err)
{
    return store_cmd(st, p, "add", key, value, strlen(value), ttl_ms, won, err);
}

static apr_status_t mc_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char *value, apr_size_t len,
                           apr_int64_t ttl_ms, const char **err)
{
    int stored = 0;
    apr_status_t rv = store_cmd(st, p, "set", key, value, len, ttl_ms, &stored,
                                err);

    if (rv == APR_SUCCESS && !stored) {
        *err = "memcached did not store the value";
        return APR_EGENERAL;
    }
    return rv;
}

/* The reply to "get key": VALUE ... data END, or END (absent). */
static apr_status_t read_get(rsp_mc_op_t *op, const char *key, const char **value,
                             apr_size_t *len)
{
    const char *line, *prefix;
    apr_status_t rv;
    char *data;

    *value = NULL;
    *len = 0;
    if ((rv = rsp_mc_read_line(op, &line)) != APR_SUCCESS || !strcmp(line, "END")) {
        return rv;
    }
    prefix = apr_pstrcat(op->p, "VALUE ", key, " ", NULL);
    if (!strncmp(line, prefix, strlen(prefix))) {
        unsigned flags;
        apr_size_t n;
        char extra;
        if (sscanf(line + strlen(prefix), "%u %zu%c", &flags, &n, &extra) != 2
            || n > MC_MAX_VALUE) {
            return rsp_mc_unexpected(op, line);
        }
        if ((rv = rsp_mc_read_data(op, n, &data)) == APR_SUCCESS
            && (rv = rsp_mc_read_line(op, &line)) == APR_SUCCESS) {
            if (strcmp(line, "END")) {
                return rsp_mc_unexpected(op, line);
            }
            *value = data;
            *len = n;
        }
        return rv;
    }
    return rsp_mc_unexpected(op, line);
}

static apr_status_t get_on(rsp_store_t *st, apr_pool_t *p, rsp_mc_server_t *sv,
                           const char *key, const char **value,
                           apr_size_t *len, const char **err)
{
    rsp_mc_op_t op;
    apr_status_t rv;
    const char *cmd;

    *value = NULL;
    *len = 0;
    if ((rv = rsp_mc_begin(&op, st, sv, p, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = apr_pstrcat(p, "get ", key, "\r\n", NULL);
    if ((rv = rsp_mc_send(&op, cmd, strlen(cmd))) == APR_SUCCESS) {
        rv = read_get(&op, key, value, len);
    }
    rsp_mc_end(&op);
    return rv;
}

static apr_status_t mc_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                           const char **value, apr_size_t *len,
                           const char **err)
{
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    return get_on(st, p, server_of(st->impl, key), key, value, len, err);
}

/* Server number server (0..N-1, URL order). */
static apr_status_t server_at(rsp_store_t *st, int server, rsp_mc_server_t **sv,
                              const char **err)
{
    rsp_mc_t *impl = st->impl;
    apr_status_t rv;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    if (server < 0 || server >= impl->n) {
        *err = "no such memcached server";
        return APR_EINVAL;
    }
    *sv = &impl->servers[server];
    return APR_SUCCESS;
}

static apr_status_t mc_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                              const char *key, const char **value,
                              apr_size_t *len, const char **err)
{
    rsp_mc_server_t *sv;
    apr_status_t rv = server_at(st, server, &sv, err);

    return rv != APR_SUCCESS ? rv : get_on(st, p, sv, key, value, len, err);
}

/* mg key t: "HD t<seconds>" (t-1: no expiry) or "EN" (absent). */
static apr_status_t mc_ttl(rsp_store_t *st, apr_pool_t *p, const char *key,
                           apr_int64_t *ttl_ms, const char **err)
{
    rsp_mc_op_t op;
    apr_status_t rv;
    const char *line, *cmd;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = rsp_mc_begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = apr_pstrcat(p, "mg ", key, " t\r\n", NULL);
    if ((rv = rsp_mc_send(&op, cmd, strlen(cmd))) == APR_SUCCESS
        && (rv = rsp_mc_read_line(&op, &line)) == APR_SUCCESS) {
        char *e;
        apr_int64_t secs;
        if (!strcmp(line, "EN")) {
            *ttl_ms = -2;
        }
        else if (!strncmp(line, "HD t", 4)
                 && ((secs = apr_strtoi64(line + 4, &e, 10)) >= -1)
                 && (*e == '\0' || *e == ' ')) {
            *ttl_ms = secs < 0 ? -1 : secs * 1000;
        }
        else {
            rv = rsp_mc_unexpected(&op, line);
        }
    }
    rsp_mc_end(&op);
    return rv;
}

/* mg key v c, then md key C<cas>: deleted only if the value is still ours
 * and nobody changed it in between. */
static apr_status_t del_on(rsp_store_t *st, apr_pool_t *p, rsp_mc_server_t *sv,
                           const char *key, const char *value, int *deleted,
                           const char **err)
{
    rsp_mc_op_t op;
    apr_status_t rv;
    const char *cmd, *data, *cas;
    apr_size_t n;

    if ((rv = rsp_mc_begin(&op, st, sv, p, err)) != APR_SUCCESS) {
        return rv;
    }
    *deleted = 0;
    cmd = apr_pstrcat(p, "mg ", key, " v c\r\n", NULL);
    if ((rv = rsp_mc_send(&op, cmd, strlen(cmd))) == APR_SUCCESS
        && (rv = rsp_mc_read_mg(&op, &data, &n, &cas, NULL)) == APR_SUCCESS
        /* absent, or someone else's now: nothing of ours to release */
        && data && n == strlen(value) && memcmp(data, value, n) == 0) {
        cmd = apr_pstrcat(p, "md ", key, " C", cas, "\r\n", NULL);
        if ((rv = rsp_mc_send(&op, cmd, strlen(cmd))) == APR_SUCCESS) {
            rv = rsp_mc_read_outcome(&op, "HD", "EX", "NF", deleted);
        }
    }
    rsp_mc_end(&op);
    return rv;
}

static apr_status_t mc_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                    const char *key, const char *value,
                                    int *deleted, const char **err)
{
    apr_status_t rv;

    *deleted = 0;
    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    return del_on(st, p, server_of(st->impl, key), key, value, deleted, err);
}

static apr_status_t mc_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                       int server, const char *key,
                                       const char *value, int *deleted,
                                       const char **err)
{
    rsp_mc_server_t *sv;
    apr_status_t rv = server_at(st, server, &sv, err);

    *deleted = 0;
    return rv != APR_SUCCESS ? rv : del_on(st, p, sv, key, value, deleted, err);
}

/* "stats" or "stats <section>" of every server, each block introduced by
 * a line "server host:port". A server that cannot answer gets a block
 * with one line "error <why>"; the call fails only if none answers. */
/* An append to the logout index, as three pipelined commands: add the
 * key empty (NOT_STORED when it exists: either is fine), append the item
 * (atomic: concurrent appends all land), then set its expiry (mg T: the
 * same TTL every time, so it only moves forward). */
static void buf_append(apr_pool_t *p, rsp_mc_buf_t *b, const char *key,
                       const char *item, apr_int64_t exp)
{
    const char *val = apr_pstrcat(p, " ", item, NULL);

    rsp_mc_buf_store(p, b, "add", key, exp, "", 0);
    rsp_mc_buf_store(p, b, "append", key, 0, val, strlen(val));
    rsp_mc_buf_str(p, b, apr_psprintf(p, "mg %s T%" APR_INT64_T_FMT "\r\n", key, exp));
}

static apr_status_t read_append(rsp_mc_op_t *op, const char *key)
{
    const char *line;
    apr_status_t rv;
    int stored = 0;

    if ((rv = rsp_mc_read_stored(op, &stored)) != APR_SUCCESS
        || (rv = rsp_mc_read_stored(op, &stored)) != APR_SUCCESS
        || (rv = rsp_mc_read_line(op, &line)) != APR_SUCCESS) {
        return rv;
    }
    if (!stored || strcmp(line, "HD")) {
        if (!stored || !strcmp(line, "EN")) {
            /* The item went between the add and the append (a flush): the
             * index entry is lost. */
            *op->err = apr_psprintf(op->p, "memcached %s: append to %s: the "
                                    "item vanished", op->sv->name, key);
            return APR_EGENERAL;
        }
        return rsp_mc_unexpected(op, line);
    }
    return APR_SUCCESS;
}

#define MAX_WRITES 8

static apr_status_t mc_replace(rsp_store_t *st, apr_pool_t *p, const char *key,
                               const char *expect, const char *token,
                               const char *value, int *replaced,
                               const char **err);

/* Every write to its server (its own key's, or its home_key's), each
 * server's writes in one pipeline; all servers are written to before any
 * reply is read. */
static apr_status_t mc_write_many(rsp_store_t *st, apr_pool_t *p,
                                  rsp_write_t *w, int n, const char **err)
{
    rsp_mc_server_t *where[MAX_WRITES];
    rsp_mc_op_t ops[MAX_WRITES];
    rsp_mc_buf_t bufs[MAX_WRITES];
    apr_int64_t exps[MAX_WRITES];
    int used[MAX_WRITES], group[MAX_WRITES], ok[MAX_WRITES];
    apr_status_t rv;
    int i, g, ngroups = 0;
    const char *e = NULL;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    if (n < 1 || n > MAX_WRITES) {
        *err = "write_many: 1 to 8 writes";
        return APR_EINVAL;
    }
    for (i = 0; i < n; i++) {
        rsp_mc_server_t *sv = server_of(st->impl, w[i].home_key ? w[i].home_key
                                                         : w[i].key);
        w[i].replaced = 0;
        group[i] = -1;
        if (w[i].kind == RSP_WRITE_REPLACE) {
            if (!w[i].token) {
                continue; /* no version to compare: after the pipelines */
            }
            exps[i] = 0;
        }
        else if ((rv = expiry(w[i].ttl_ms, &exps[i], err)) != APR_SUCCESS) {
            return rv;
        }
        if (w[i].kind == RSP_WRITE_PUT && w[i].len > MC_MAX_VALUE) {
            *err = "value too large for memcached";
            return APR_EINVAL;
        }
        for (g = 0; g < ngroups && where[g] != sv; g++)
            ;
        if (g == ngroups) {
            where[ngroups] = sv;
            memset(&bufs[ngroups], 0, sizeof(bufs[ngroups]));
            used[ngroups] = 0;
            ngroups++;
        }
        group[i] = g;
        if (w[i].kind == RSP_WRITE_PUT) {
            rsp_mc_buf_store(p, &bufs[g], "set", w[i].key, exps[i], w[i].value,
                      w[i].len);
        }
        else if (w[i].kind == RSP_WRITE_APPEND) {
            buf_append(p, &bufs[g], w[i].key, w[i].value, exps[i]);
        }
        else {
            rsp_mc_buf_replace(p, &bufs[g], w[i].key, w[i].token, w[i].value);
        }
    }
    /* Write every pipeline, then read every reply. */
    for (g = 0; g < ngroups; g++) {
        ok[g] = rsp_mc_begin(&ops[g], st, where[g], p, &e) == APR_SUCCESS;
        used[g] = ok[g];
        if (ok[g] && rsp_mc_send(&ops[g], bufs[g].data, bufs[g].len) != APR_SUCCESS) {
            ok[g] = 0;
        }
        if (!ok[g] && rv == APR_SUCCESS) {
            rv = APR_EGENERAL;
            *err = e;
        }
    }
    for (i = 0; i < n; i++) {
        g = group[i];
        if (g < 0 || !ok[g]) {
            continue;
        }
        if (w[i].kind == RSP_WRITE_PUT) {
            int stored = 0;
            if (rsp_mc_read_stored(&ops[g], &stored) != APR_SUCCESS) {
                ok[g] = 0;
            }
            else if (!stored) {
                e = apr_psprintf(p, "memcached %s did not store the value",
                                 where[g]->name);
                ok[g] = 0;
            }
        }
        else if (w[i].kind == RSP_WRITE_APPEND) {
            if (read_append(&ops[g], w[i].key) != APR_SUCCESS) {
                ok[g] = 0;
            }
        }
        else if (rsp_mc_read_replace(&ops[g], &w[i].replaced) != APR_SUCCESS) {
            ok[g] = 0;
        }
        if (!ok[g] && rv == APR_SUCCESS) {
            rv = APR_EGENERAL;
            *err = e;
        }
    }
    for (g = 0; g < ngroups; g++) {
        if (used[g]) {
            if (!ok[g] && ops[g].c) {
                rsp_mc_conn_close(ops[g].c); /* replies may be left unread */
            }
            rsp_mc_end(&ops[g]);
        }
    }
    for (i = 0; i < n && rv == APR_SUCCESS; i++) {
        if (group[i] < 0) {
            rv = mc_replace(st, p, w[i].key, w[i].expect, NULL, w[i].value,
                            &w[i].replaced, err);
        }
    }
    return rv;
}

static apr_status_t mc_append(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *item, apr_int64_t ttl_ms,
                              const char **err)
{
    rsp_write_t w;

    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_APPEND;
    w.key = key;
    w.value = item;
    w.ttl_ms = ttl_ms;
    return mc_write_many(st, p, &w, 1, err);
}

/* The claim (add: its reply is the verdict) and a read of the key after
 * it, pipelined on the claim's server. */
static apr_status_t mc_claim_read(rsp_store_t *st, apr_pool_t *p,
                                  rsp_claim_read_t *c, const char **err)
{
    rsp_mc_t *impl = st->impl;
    rsp_mc_server_t *home;
    rsp_mc_op_t op;
    rsp_mc_buf_t b;
    apr_int64_t exp;
    apr_size_t len;
    apr_status_t rv;
    const char *cas, *ttl;

    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = expiry(c->ttl_ms, &exp, err)) != APR_SUCCESS) {
        return rv;
    }
    home = server_of(impl, c->home_key ? c->home_key : c->key);
    memset(&b, 0, sizeof(b));
    rsp_mc_buf_store(p, &b, "add", c->key, exp, c->value, strlen(c->value));
    rsp_mc_buf_str(p, &b, apr_pstrcat(p, "mg ", c->key, " v c t\r\n", NULL));
    if ((rv = rsp_mc_begin(&op, st, home, p, err)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = rsp_mc_send(&op, b.data, b.len)) != APR_SUCCESS) {
        rsp_mc_end(&op);
        return rv;
    }
    if ((rv = rsp_mc_read_stored(&op, &c->won)) == APR_SUCCESS
        && (rv = rsp_mc_read_mg(&op, &c->holder, &len, &cas, &ttl)) == APR_SUCCESS) {
        c->token = rsp_mc_version_token(p, cas, ttl);
        if (c->won) {
            c->holder = NULL; /* our own record (its version in token) */
        }
    }
    rsp_mc_end(&op);
    return rv;
}

/* Compare-and-set: with a token, one "ms C<cas>"; without, the version
 * is read first (mg v c t) and the value compared. */
static apr_status_t mc_replace(rsp_store_t *st, apr_pool_t *p, const char *key,
                               const char *expect, const char *token,
                               const char *value, int *replaced,
                               const char **err)
{
    rsp_mc_op_t op;
    rsp_mc_buf_t b;
    apr_status_t rv;

    *replaced = 0;
    if ((rv = check_ready(st, err)) != APR_SUCCESS
        || (rv = rsp_mc_begin(&op, st, server_of(st->impl, key), p, err)) != APR_SUCCESS) {
        return rv;
    }
    if (!token) {
        const char *cur, *cas, *ttl;
        const char *cmd = apr_pstrcat(p, "mg ", key, " v c t\r\n", NULL);
        apr_size_t len;
        if ((rv = rsp_mc_send(&op, cmd, strlen(cmd))) != APR_SUCCESS
            || (rv = rsp_mc_read_mg(&op, &cur, &len, &cas, &ttl)) != APR_SUCCESS
            || !cur || len != strlen(expect) || memcmp(cur, expect, len)) {
            rsp_mc_end(&op);
            return rv;
        }
        token = rsp_mc_version_token(p, cas, ttl);
    }
    memset(&b, 0, sizeof(b));
    rsp_mc_buf_replace(p, &b, key, token, value);
    if ((rv = rsp_mc_send(&op, b.data, b.len)) == APR_SUCCESS) {
        rv = rsp_mc_read_replace(&op, replaced);
    }
    rsp_mc_end(&op);
    return rv;
}

static int mc_servers(rsp_store_t *st)
{
    return st->impl ? ((rsp_mc_t *)st->impl)->n : 0;
}

static int mc_home(rsp_store_t *st, const char *key)
{
    rsp_mc_t *impl = st->impl;

    return impl ? (int)(server_of(impl, key) - impl->servers) : 0;
}

static apr_status_t mc_info(rsp_store_t *st, apr_pool_t *p, const char *section,
                            const char **text, const char **err)
{
    rsp_mc_t *impl = st->impl;
    const char *out = "", *cmd, *line, *why = NULL;
    apr_status_t rv;
    int i, lines, answered = 0;

    if ((rv = check_ready(st, err)) != APR_SUCCESS) {
        return rv;
    }
    cmd = section ? apr_pstrcat(p, "stats ", section, "\r\n", NULL) : "stats\r\n";
    for (i = 0; i < impl->n; i++) {
        const char *block = "";
        rsp_mc_op_t op;
        if ((rv = rsp_mc_begin(&op, st, &impl->servers[i], p, &why)) == APR_SUCCESS) {
            rv = rsp_mc_send(&op, cmd, strlen(cmd));
            for (lines = 0; rv == APR_SUCCESS; lines++) {
                if ((rv = rsp_mc_read_line(&op, &line)) != APR_SUCCESS) {
                    break;
                }
                if (!strcmp(line, "END")) {
                    break;
                }
                if (strncmp(line, "STAT ", 5) != 0 || lines > 10000) {
                    rv = rsp_mc_unexpected(&op, line);
                    break;
                }
                block = apr_pstrcat(p, block, line + 5, "\n", NULL);
            }
            rsp_mc_end(&op);
        }
        if (rv == APR_SUCCESS) {
            answered++;
        }
        else {
            block = apr_pstrcat(p, "error ", why, "\n", NULL);
        }
        out = apr_pstrcat(p, out, "server ", impl->servers[i].name, "\n",
                          block, NULL);
    }
    if (!answered) {
        *err = why;
        return APR_EGENERAL;
    }
    *text = out;
    return APR_SUCCESS;
}

const rsp_store_ops_t rsp_store_memcache_ops = {
    "memcache",
    RSP_STORE_CAP_SERVERS,
    mc_child_init,
    mc_claim,
    mc_get,
    mc_put,
    mc_del_if_equal,
    mc_append,
    mc_ttl,
    mc_claim_read,
    mc_write_many,
    mc_replace,
    mc_servers,
    mc_home,
    mc_get_at,
    mc_del_if_equal_at,
    mc_info,
};
