/* An in-memory store with fault injection, for unit tests: see
 * rsp_mem_store.h. */
#include <string.h>

#include <apr_hash.h>
#include <apr_strings.h>

#include "rsp_mem_store.h"

#define MEM_MAX_FAULTS 16

typedef struct {
    const char *key;          /* in the store's pool: the hash's key */
    const char *value;
    apr_size_t len;
    apr_int64_t expires_ms;   /* 0: never */
    apr_uint64_t version;
} mem_item_t;

typedef struct {
    apr_uint64_t at;          /* the call number that meets it */
    rsp_mem_fault_t fault;
} mem_pending_t;

typedef struct {
    apr_pool_t *pool;
    int n;
    apr_hash_t **maps;        /* one per server */
    apr_int64_t now_ms;
    apr_uint64_t version;     /* the last version given to a write */
    apr_uint64_t serial;      /* calls ever made: numbers the faults */
    int calls[RSP_MEM_OP_COUNT];
    mem_pending_t faults[MEM_MAX_FAULTS];
    int nfaults;
} mem_t;

static const char injected[] = "injected";
static const char injected_unacked[] = "injected: unacknowledged";

/* FNV-1a: a stable, well spread choice of server. */
static int home_of(const mem_t *m, const char *key)
{
    apr_uint32_t h = 2166136261u;
    const unsigned char *s;

    for (s = (const unsigned char *)key; *s; s++) {
        h ^= *s;
        h *= 16777619u;
    }
    return (int)(h % (apr_uint32_t)m->n);
}

/* One call of op: counted, and the fault it meets (0: none). */
static rsp_mem_fault_t begin(mem_t *m, rsp_mem_op_t op)
{
    rsp_mem_fault_t f = 0;
    int i;

    m->serial++;
    m->calls[op]++;
    for (i = 0; i < m->nfaults; i++) {
        if (m->faults[i].at == m->serial) {
            f = m->faults[i].fault;
            m->faults[i] = m->faults[--m->nfaults];
            break;
        }
    }
    return f;
}

/* The outcome of a call that met fault f after doing its work (rv: its
 * own outcome; wrote: whether it wrote; unackable: whether the operation
 * can answer RSP_STORE_UNACKED). */
static apr_status_t finish(rsp_mem_fault_t f, int wrote, int unackable,
                           apr_status_t rv, const char **err)
{
    if (!f || rv != APR_SUCCESS) {
        return rv;
    }
    if (f == RSP_MEM_UNACKED && unackable) {
        if (!wrote) {
            return rv;
        }
        *err = injected_unacked;
        return RSP_STORE_UNACKED;
    }
    *err = injected;
    return APR_EGENERAL;
}

static apr_status_t failed(const char **err)
{
    *err = injected;
    return APR_EGENERAL;
}

static int live(const mem_t *m, const mem_item_t *it)
{
    return !it->expires_ms || m->now_ms < it->expires_ms;
}

/* key's item on server, NULL when absent; an expired one is dropped. */
static mem_item_t *lookup(mem_t *m, int server, const char *key)
{
    mem_item_t *it = apr_hash_get(m->maps[server], key, APR_HASH_KEY_STRING);

    if (it && !live(m, it)) {
        apr_hash_set(m->maps[server], it->key, APR_HASH_KEY_STRING, NULL);
        it = NULL;
    }
    return it;
}

static int equal(const mem_item_t *it, const char *value)
{
    return it && value && it->len == strlen(value)
        && !memcmp(it->value, value, it->len);
}

static mem_item_t *store(mem_t *m, int server, const char *key,
                         const char *value, apr_size_t len,
                         apr_int64_t expires_ms)
{
    mem_item_t *it = apr_pcalloc(m->pool, sizeof(*it));

    it->key = apr_pstrdup(m->pool, key);
    it->value = apr_pstrmemdup(m->pool, value, len);
    it->len = len;
    it->expires_ms = expires_ms;
    it->version = ++m->version;
    apr_hash_set(m->maps[server], it->key, APR_HASH_KEY_STRING, it);
    return it;
}

static apr_int64_t expiry(const mem_t *m, apr_int64_t ttl_ms)
{
    return ttl_ms > 0 ? m->now_ms + ttl_ms : 0;
}

static const char *token_of(apr_pool_t *p, const mem_item_t *it)
{
    return apr_psprintf(p, "%" APR_UINT64_T_FMT, it->version);
}

static int do_claim(mem_t *m, int server, const char *key, const char *value,
                    apr_int64_t ttl_ms)
{
    if (lookup(m, server, key)) {
        return 0;
    }
    store(m, server, key, value, strlen(value), expiry(m, ttl_ms));
    return 1;
}

static void do_append(mem_t *m, int server, const char *key, const char *item,
                      apr_int64_t ttl_ms)
{
    mem_item_t *it = lookup(m, server, key);
    apr_int64_t exp = expiry(m, ttl_ms);

    if (!it) {
        const char *v = apr_pstrcat(m->pool, " ", item, NULL);
        store(m, server, key, v, strlen(v), exp);
        return;
    }
    /* the expiry is only ever extended (none stays none) */
    if (!it->expires_ms || !exp || exp < it->expires_ms) {
        exp = it->expires_ms;
    }
    store(m, server, key, apr_pstrcat(m->pool, it->value, " ", item, NULL),
          it->len + 1 + strlen(item), exp);
}

/* The compare-and-set: value, and the version when token is given. */
static int do_replace(mem_t *m, int server, const char *key,
                      const char *expect, const char *token, const char *value)
{
    mem_item_t *it = lookup(m, server, key);

    if (!equal(it, expect)
        || (token && strcmp(token, token_of(m->pool, it)))) {
        return 0;
    }
    store(m, server, key, value, strlen(value), it->expires_ms);
    return 1;
}

static apr_status_t mem_child_init(rsp_store_t *st, apr_pool_t *pchild,
                                   int max_conns)
{
    return APR_SUCCESS;
}

static apr_status_t mem_claim(rsp_store_t *st, apr_pool_t *p, const char *key,
                              const char *value, apr_int64_t ttl_ms, int *won,
                              const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_CLAIM);

    *won = 0;
    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    *won = do_claim(m, home_of(m, key), key, value, ttl_ms);
    return finish(f, *won, 1, APR_SUCCESS, err);
}

static apr_status_t get_on(mem_t *m, apr_pool_t *p, rsp_mem_fault_t f,
                           int server, const char *key, const char **value,
                           apr_size_t *len, const char **err)
{
    mem_item_t *it;

    *value = NULL;
    *len = 0;
    if (f) {
        return failed(err);
    }
    if ((it = lookup(m, server, key)) != NULL) {
        *value = apr_pstrmemdup(p, it->value, it->len);
        *len = it->len;
    }
    return APR_SUCCESS;
}

static apr_status_t mem_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                            const char **value, apr_size_t *len,
                            const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_GET);

    return get_on(m, p, f, home_of(m, key), key, value, len, err);
}

static apr_status_t mem_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                            const char *value, apr_size_t len,
                            apr_int64_t ttl_ms, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_PUT);

    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    store(m, home_of(m, key), key, value, len, expiry(m, ttl_ms));
    return finish(f, 1, 0, APR_SUCCESS, err);
}

static apr_status_t del_on(mem_t *m, rsp_mem_fault_t f, int server,
                           const char *key, const char *value, int *deleted,
                           const char **err)
{
    mem_item_t *it;

    *deleted = 0;
    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    it = lookup(m, server, key);
    if (equal(it, value)) {
        apr_hash_set(m->maps[server], it->key, APR_HASH_KEY_STRING, NULL);
        *deleted = 1;
    }
    return finish(f, *deleted, 0, APR_SUCCESS, err);
}

static apr_status_t mem_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                     const char *key, const char *value,
                                     int *deleted, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_DEL_IF_EQUAL);

    return del_on(m, f, home_of(m, key), key, value, deleted, err);
}

static apr_status_t mem_append(rsp_store_t *st, apr_pool_t *p, const char *key,
                               const char *item, apr_int64_t ttl_ms,
                               const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_APPEND);

    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    do_append(m, home_of(m, key), key, item, ttl_ms);
    return finish(f, 1, 0, APR_SUCCESS, err);
}

static apr_status_t mem_ttl(rsp_store_t *st, apr_pool_t *p, const char *key,
                            apr_int64_t *ttl_ms, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_TTL);
    mem_item_t *it;

    *ttl_ms = -2;
    if (f) {
        return failed(err);
    }
    if ((it = lookup(m, home_of(m, key), key)) != NULL) {
        *ttl_ms = it->expires_ms ? it->expires_ms - m->now_ms : -1;
    }
    return APR_SUCCESS;
}

static apr_status_t mem_claim_read(rsp_store_t *st, apr_pool_t *p,
                                   rsp_claim_read_t *c, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_CLAIM_READ);
    int server = home_of(m, c->home_key ? c->home_key : c->key);
    mem_item_t *it;

    c->won = 0;
    c->holder = NULL;
    c->token = NULL;
    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    c->won = do_claim(m, server, c->key, c->value, c->ttl_ms);
    it = lookup(m, server, c->key);
    c->token = token_of(p, it);
    if (!c->won) {
        c->holder = apr_pstrmemdup(p, it->value, it->len);
    }
    return finish(f, c->won, 1, APR_SUCCESS, err);
}

static apr_status_t mem_write_many(rsp_store_t *st, apr_pool_t *p,
                                   rsp_write_t *w, int n, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_WRITE_MANY);
    int i, wrote = 0;

    for (i = 0; i < n; i++) {
        w[i].replaced = 0;
    }
    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    for (i = 0; i < n; i++) {
        int server = home_of(m, w[i].home_key ? w[i].home_key : w[i].key);
        switch (w[i].kind) {
        case RSP_WRITE_PUT:
            store(m, server, w[i].key, w[i].value, w[i].len,
                  expiry(m, w[i].ttl_ms));
            wrote = 1;
            break;
        case RSP_WRITE_APPEND:
            do_append(m, server, w[i].key, w[i].value, w[i].ttl_ms);
            wrote = 1;
            break;
        case RSP_WRITE_REPLACE:
            if (!w[i].expect || !w[i].value) {
                *err = "write_many: a replace without its values";
                return APR_EINVAL;
            }
            w[i].replaced = do_replace(m, server, w[i].key, w[i].expect,
                                       w[i].token, w[i].value);
            wrote |= w[i].replaced;
            break;
        default:
            *err = "write_many: unknown kind of write";
            return APR_EINVAL;
        }
    }
    return finish(f, wrote, 1, APR_SUCCESS, err);
}

static apr_status_t mem_replace(rsp_store_t *st, apr_pool_t *p,
                                const char *key, const char *expect,
                                const char *token, const char *value,
                                int *replaced, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_REPLACE);

    *replaced = 0;
    if (!expect || !value) {
        *err = "replace: no expected value or no new value";
        return APR_EINVAL;
    }
    if (f == RSP_MEM_FAIL) {
        return failed(err);
    }
    *replaced = do_replace(m, home_of(m, key), key, expect, token, value);
    return finish(f, *replaced, 1, APR_SUCCESS, err);
}

static int mem_servers(rsp_store_t *st)
{
    return ((mem_t *)st->impl)->n;
}

static int mem_home(rsp_store_t *st, const char *key)
{
    return home_of(st->impl, key);
}

static apr_status_t mem_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                               const char *key, const char **value,
                               apr_size_t *len, const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_GET_AT);

    if (server < 0 || server >= m->n) {
        *value = NULL;
        *err = "no such server";
        return APR_EINVAL;
    }
    return get_on(m, p, f, server, key, value, len, err);
}

static apr_status_t mem_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                        int server, const char *key,
                                        const char *value, int *deleted,
                                        const char **err)
{
    mem_t *m = st->impl;
    rsp_mem_fault_t f = begin(m, RSP_MEM_OP_DEL_IF_EQUAL_AT);

    if (server < 0 || server >= m->n) {
        *deleted = 0;
        *err = "no such server";
        return APR_EINVAL;
    }
    return del_on(m, f, server, key, value, deleted, err);
}

static apr_status_t mem_info(rsp_store_t *st, apr_pool_t *p,
                             const char *section, const char **text,
                             const char **err)
{
    mem_t *m = st->impl;
    const char *out = "";
    int i;

    if (begin(m, RSP_MEM_OP_INFO)) {
        return failed(err);
    }
    for (i = 0; i < m->n; i++) {
        out = apr_psprintf(p, "%sserver mem%d\nkeys %d\n", out, i,
                           rsp_mem_store_size(st, i));
    }
    *text = out;
    return APR_SUCCESS;
}

static const rsp_store_ops_t mem_ops = {
    "mem",
    RSP_STORE_CAP_SERVERS,
    mem_child_init,
    mem_claim,
    mem_get,
    mem_put,
    mem_del_if_equal,
    mem_append,
    mem_ttl,
    mem_claim_read,
    mem_write_many,
    mem_replace,
    mem_servers,
    mem_home,
    mem_get_at,
    mem_del_if_equal_at,
    mem_info,
};

rsp_store_t *rsp_mem_store_create(apr_pool_t *p, int servers)
{
    rsp_store_t *st = apr_pcalloc(p, sizeof(*st));
    mem_t *m = apr_pcalloc(p, sizeof(*m));
    int i;

    m->pool = p;
    m->n = servers > 0 ? servers : 1;
    m->maps = apr_pcalloc(p, m->n * sizeof(*m->maps));
    for (i = 0; i < m->n; i++) {
        m->maps[i] = apr_hash_make(p);
    }
    m->now_ms = RSP_MEM_EPOCH_MS;
    st->ops = &mem_ops;
    st->timeout = apr_time_from_sec(1);
    st->impl = m;
    return st;
}

void rsp_mem_store_set_clock(rsp_store_t *st, apr_int64_t now_ms)
{
    ((mem_t *)st->impl)->now_ms = now_ms;
}

void rsp_mem_store_advance(rsp_store_t *st, apr_int64_t ms)
{
    ((mem_t *)st->impl)->now_ms += ms;
}

apr_int64_t rsp_mem_store_clock(rsp_store_t *st)
{
    return ((mem_t *)st->impl)->now_ms;
}

void rsp_mem_store_fault(rsp_store_t *st, int nth, rsp_mem_fault_t fault)
{
    mem_t *m = st->impl;

    if (nth >= 1 && m->nfaults < MEM_MAX_FAULTS) {
        m->faults[m->nfaults].at = m->serial + (apr_uint64_t)nth;
        m->faults[m->nfaults].fault = fault;
        m->nfaults++;
    }
}

int rsp_mem_store_faults_pending(rsp_store_t *st)
{
    return ((mem_t *)st->impl)->nfaults;
}

int rsp_mem_store_calls(rsp_store_t *st, rsp_mem_op_t op)
{
    mem_t *m = st->impl;
    int i, n = 0;

    if (op >= 0 && op < RSP_MEM_OP_COUNT) {
        return m->calls[op];
    }
    for (i = 0; i < RSP_MEM_OP_COUNT; i++) {
        n += m->calls[i];
    }
    return n;
}

void rsp_mem_store_reset_calls(rsp_store_t *st)
{
    mem_t *m = st->impl;

    memset(m->calls, 0, sizeof(m->calls));
}

static int server_for(const mem_t *m, int server, const char *key)
{
    return server >= 0 && server < m->n ? server : home_of(m, key);
}

const char *rsp_mem_store_peek(rsp_store_t *st, int server, const char *key)
{
    mem_t *m = st->impl;
    mem_item_t *it = lookup(m, server_for(m, server, key), key);

    return it ? it->value : NULL;
}

apr_uint64_t rsp_mem_store_version(rsp_store_t *st, int server,
                                   const char *key)
{
    mem_t *m = st->impl;
    mem_item_t *it = lookup(m, server_for(m, server, key), key);

    return it ? it->version : 0;
}

void rsp_mem_store_poke(rsp_store_t *st, int server, const char *key,
                        const char *value, apr_int64_t ttl_ms)
{
    mem_t *m = st->impl;

    store(m, server_for(m, server, key), key, value, strlen(value),
          expiry(m, ttl_ms));
}

int rsp_mem_store_size(rsp_store_t *st, int server)
{
    mem_t *m = st->impl;
    apr_hash_index_t *hi;
    int i, n = 0;

    for (i = 0; i < m->n; i++) {
        if (server >= 0 && i != server) {
            continue;
        }
        for (hi = apr_hash_first(NULL, m->maps[i]); hi;
             hi = apr_hash_next(hi)) {
            const void *k;
            void *v;
            apr_hash_this(hi, &k, NULL, &v);
            if (live(m, v)) {
                n++;
            }
        }
    }
    return n;
}
