/* Unit tests for rsp_store.c: the choice of backend, the claim with its
 * read, and the servers of a store (one, unless the backend declares
 * RSP_STORE_CAP_SERVERS), over a minimal backend that keeps a journal of
 * the calls it gets. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_hash.h>
#include <apr_strings.h>

#include "rsp_store.h"
#include "rsp_url.h"

static apr_hash_t *kv;
static const char *journal;
static int fail_at;   /* the nth call fails (0: none) */
static int calls;

static apr_status_t note(const char *what, const char *key, const char **err)
{
    journal = apr_pstrcat(pool, journal, *journal ? " " : "", what, ":", key,
                          NULL);
    if (++calls == fail_at) {
        *err = "injected";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t j_claim(rsp_store_t *st, apr_pool_t *p, const char *key,
                            const char *value, apr_int64_t ttl_ms, int *won,
                            const char **err)
{
    if (note("claim", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    *won = apr_hash_get(kv, key, APR_HASH_KEY_STRING) == NULL;
    if (*won) {
        apr_hash_set(kv, key, APR_HASH_KEY_STRING, value);
    }
    return APR_SUCCESS;
}

static apr_status_t j_get(rsp_store_t *st, apr_pool_t *p, const char *key,
                          const char **value, apr_size_t *len,
                          const char **err)
{
    if (note("get", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    *value = apr_hash_get(kv, key, APR_HASH_KEY_STRING);
    *len = *value ? strlen(*value) : 0;
    return APR_SUCCESS;
}

static apr_status_t j_put(rsp_store_t *st, apr_pool_t *p, const char *key,
                          const char *value, apr_size_t len,
                          apr_int64_t ttl_ms, const char **err)
{
    if (note("put", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    apr_hash_set(kv, key, APR_HASH_KEY_STRING, apr_pstrmemdup(pool, value, len));
    return APR_SUCCESS;
}

static apr_status_t j_del_if_equal(rsp_store_t *st, apr_pool_t *p,
                                   const char *key, const char *value,
                                   int *deleted, const char **err)
{
    const char *v;

    if (note("del", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    v = apr_hash_get(kv, key, APR_HASH_KEY_STRING);
    *deleted = v && !strcmp(v, value);
    if (*deleted) {
        apr_hash_set(kv, key, APR_HASH_KEY_STRING, NULL);
    }
    return APR_SUCCESS;
}

static apr_status_t j_append(rsp_store_t *st, apr_pool_t *p, const char *key,
                             const char *item, apr_int64_t ttl_ms,
                             const char **err)
{
    const char *v;

    if (note("append", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    v = apr_hash_get(kv, key, APR_HASH_KEY_STRING);
    apr_hash_set(kv, key, APR_HASH_KEY_STRING,
                 apr_pstrcat(pool, v ? v : "", " ", item, NULL));
    return APR_SUCCESS;
}

static apr_status_t j_replace(rsp_store_t *st, apr_pool_t *p, const char *key,
                             const char *expect, const char *token,
                             const char *value, int *replaced,
                             const char **err)
{
    const char *v;

    if (note("replace", key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    v = apr_hash_get(kv, key, APR_HASH_KEY_STRING);
    *replaced = v && !strcmp(v, expect);
    if (*replaced) {
        apr_hash_set(kv, key, APR_HASH_KEY_STRING, value);
    }
    return APR_SUCCESS;
}

static int two_servers(rsp_store_t *st)
{
    return 2;
}

static int home_by_first_letter(rsp_store_t *st, const char *key)
{
    return key[0] == 'b';
}

static apr_status_t j_claim_read(rsp_store_t *st, apr_pool_t *p,
                                 rsp_claim_read_t *c, const char **err)
{
    /* sets only the verdict: what it leaves must read as cleared */
    return j_claim(st, p, c->key, c->value, c->ttl_ms, &c->won, err);
}

static apr_status_t j_get_at(rsp_store_t *st, apr_pool_t *p, int server,
                             const char *key, const char **value,
                             apr_size_t *len, const char **err)
{
    if (note(apr_psprintf(pool, "get@%d", server), key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return j_get(st, p, key, value, len, err);
}

static apr_status_t j_del_if_equal_at(rsp_store_t *st, apr_pool_t *p,
                                      int server, const char *key,
                                      const char *value, int *deleted,
                                      const char **err)
{
    if (note(apr_psprintf(pool, "del@%d", server), key, err) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return j_del_if_equal(st, p, key, value, deleted, err);
}

/* What every backend must have. */
static const rsp_store_ops_t journal_ops = {
    .name = "journal",
    .claim = j_claim,
    .get = j_get,
    .put = j_put,
    .del_if_equal = j_del_if_equal,
    .append = j_append,
    .replace = j_replace,
    .claim_read = j_claim_read,
    /* servers' members set, but not declared: one server */
    .servers = two_servers,
    .home = home_by_first_letter,
    .get_at = j_get_at,
    .del_if_equal_at = j_del_if_equal_at
};

static rsp_store_t *journal_store(const rsp_store_ops_t *ops)
{
    rsp_store_t *st = apr_pcalloc(pool, sizeof(*st));

    st->ops = ops;
    return st;
}

static void setup(void)
{
    rsp_unit_setup();
    kv = apr_hash_make(pool);
    journal = "";
    fail_at = 0;
    calls = 0;
}

START_TEST(test_create)
{
    static const struct {
        const char *url;
        const char *ops;
    } cases[] = {
        {"redis://127.0.0.1:6379", "redis"},
        {"redis+unix:///run/redis.sock", "redis"},
        {"redis+cluster://h1:6379,h2:6379", "redis"},
        {"memcache://h1:11211,h2:11211", "memcache"},
    };
    apr_size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rsp_store_url_t *u = NULL;
        rsp_store_t *st = NULL;
        const char *err = NULL;
        ck_assert_int_eq(rsp_store_url_parse(&u, pool, cases[i].url, &err),
                         APR_SUCCESS);
        ck_assert_int_eq(rsp_store_create(&st, pool, u, 1500000, &err),
                         APR_SUCCESS);
        ck_assert_ptr_eq(st->ops, !strcmp(cases[i].ops, "redis")
                                      ? &rsp_store_redis_ops
                                      : &rsp_store_memcache_ops);
        ck_assert_ptr_eq(st->url, u);
        ck_assert_int_eq(st->timeout, 1500000);
    }
    {
        rsp_store_url_t u;
        rsp_store_t *st = NULL;
        const char *err = NULL;
        memset(&u, 0, sizeof(u));
        ck_assert_int_eq(rsp_store_create(&st, pool, &u, 1, &err), APR_ENOTIMPL);
        ck_assert_str_eq(err, "no backend for this store URL");
        ck_assert_ptr_null(st);
    }
}
END_TEST

START_TEST(test_claim_read_clears_what_the_backend_leaves)
{
    rsp_store_t *st = journal_store(&journal_ops);
    rsp_claim_read_t c;
    const char *err = NULL;

    memset(&c, 0, sizeof(c));
    c.key = "a:1";
    c.value = "mine";
    c.won = 1;
    c.holder = "stale";
    apr_hash_set(kv, "a:1", APR_HASH_KEY_STRING, "theirs");
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 0);
    ck_assert_ptr_null(c.holder);
    ck_assert_str_eq(journal, "claim:a:1");
    /* a failure is the backend's, as it says it */
    fail_at = calls + 1;
    c.won = 1;
    ck_assert_int_ne(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_str_eq(err, "injected");
    ck_assert_int_eq(c.won, 0);
}
END_TEST

START_TEST(test_several_servers)
{
    rsp_store_ops_t ops = journal_ops;
    rsp_store_t *st = journal_store(&ops);
    const char *v = NULL, *err = NULL;
    apr_size_t len = 0;
    int deleted = -1;

    ops.caps = RSP_STORE_CAP_SERVERS;
    ck_assert_int_eq(rsp_store_servers(st), 2);
    ck_assert_int_eq(rsp_store_home(st, "a:1"), 0);
    ck_assert_int_eq(rsp_store_home(st, "b:1"), 1);
    apr_hash_set(kv, "b:1", APR_HASH_KEY_STRING, "v1");
    ck_assert_int_eq(rsp_store_get_at(st, pool, 1, "b:1", &v, &len, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(v, "v1");
    ck_assert_int_eq(rsp_store_del_if_equal_at(st, pool, 1, "b:1", "v1",
                                               &deleted, &err), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_str_eq(journal, "get@1:b:1 get:b:1 del@1:b:1 del:b:1");
}
END_TEST

START_TEST(test_one_server)
{
    rsp_store_t *st = journal_store(&journal_ops);
    const char *v = NULL, *err = NULL;
    apr_size_t len = 0;
    int deleted = -1;

    /* the servers' members are set, but only the capability counts */
    ck_assert_int_eq(rsp_store_servers(st), 1);
    ck_assert_int_eq(rsp_store_home(st, "b:1"), 0);
    apr_hash_set(kv, "k", APR_HASH_KEY_STRING, "v1");
    /* get_at and del_if_equal_at: the store's own get and del_if_equal */
    ck_assert_int_eq(rsp_store_get_at(st, pool, 0, "k", &v, &len, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(v, "v1");
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(rsp_store_del_if_equal_at(st, pool, 0, "k", "v2", &deleted,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(deleted, 0);
    ck_assert_int_eq(rsp_store_del_if_equal_at(st, pool, 0, "k", "v1", &deleted,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_str_eq(journal, "get:k del:k del:k");
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("rsp_store");
    TCase *tc = tcase_create("store");

    tcase_add_checked_fixture(tc, setup, rsp_unit_teardown);
    tcase_add_test(tc, test_create);
    tcase_add_test(tc, test_claim_read_clears_what_the_backend_leaves);
    tcase_add_test(tc, test_several_servers);
    tcase_add_test(tc, test_one_server);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(store_suite());
}
