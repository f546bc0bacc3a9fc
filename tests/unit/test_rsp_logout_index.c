/* Unit tests for rsp_logout_index.c: the logout index's keys, entries
 * and writes, and the sessions an IdP's LogoutRequest ends through it
 * (against the in-memory store of rsp_mem_store.c). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_logout_index.h"
#include "rsp_session.h"
#include "rsp_util.h"
#include "rsp_mem_store.h"

#define HASH_A "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define HASH_B "abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE"
#define PREFIX "rsp:"
#define IDP "https://idp.example/"

START_TEST(test_index_keys)
{
    const char *k1 = rsp_logout_index_key(pool, "rsp:", "idp", "alice", "S1");
    const char *k0 = rsp_logout_index_key(pool, "rsp:", "idp", "alice", NULL);
    const char *ke = rsp_logout_index_key(pool, "rsp:", "idp", "alice", "");

    ck_assert_int_eq(strlen(k1), strlen("rsp:n:") + RSP_HASH_B64_LEN);
    ck_assert(!strncmp(k1, "rsp:n:", 6));
    ck_assert(rsp_is_hash(k1 + 6));
    /* the NameID's entry, a session without SessionIndex and one with
     * are three keys */
    ck_assert_str_ne(k1, k0);
    ck_assert_str_ne(k0, ke);
    ck_assert_str_ne(k1, ke);
    /* no two tuples share a key: the separator is not a character */
    ck_assert_str_ne(rsp_logout_index_key(pool, "rsp:", "idpa", "lice", NULL), k0);
    ck_assert_str_ne(rsp_logout_index_key(pool, "rsp:", "idp", "alice", "S"),
                     rsp_logout_index_key(pool, "rsp:", "idp", "aliceS", NULL));
    ck_assert_str_ne(rsp_logout_index_key(pool, "x:", "idp", "alice", NULL), k0);
    ck_assert_str_eq(rsp_logout_index_key(pool, "rsp:", "idp", "alice", "S1"), k1);
}
END_TEST

/* The key is prefix "n:" and the hash of the tuple joined with 0x00. */
START_TEST(test_index_key_bytes)
{
    ck_assert_str_eq(rsp_logout_index_key(pool, "rsp:", "idp", "alice", "S1"),
                     apr_pstrcat(pool, "rsp:n:", rsp_sha256_b64url(
                                     pool, "idp\0alice\0S1", 12), NULL));
    ck_assert_str_eq(rsp_logout_index_key(pool, "rsp:", "idp", "alice", NULL),
                     apr_pstrcat(pool, "rsp:n:", rsp_sha256_b64url(
                                     pool, "idp\0alice", 9), NULL));
    ck_assert_str_eq(rsp_logout_index_key(pool, "", "idp", "alice", ""),
                     apr_pstrcat(pool, "n:", rsp_sha256_b64url(
                                     pool, "idp\0alice\0", 10), NULL));
}
END_TEST

START_TEST(test_index_entries)
{
    apr_array_header_t *h;
    char *many;
    int i;

    h = rsp_logout_index_parse(pool, " " HASH_A " " HASH_B " " HASH_A);
    ck_assert_int_eq(h->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(h, 0, const char *), HASH_A);
    ck_assert_str_eq(APR_ARRAY_IDX(h, 1, const char *), HASH_B);
    /* what is not a hash is skipped */
    h = rsp_logout_index_parse(pool, "junk " HASH_B "x  " HASH_B);
    ck_assert_int_eq(h->nelts, 1);
    ck_assert_int_eq(rsp_logout_index_parse(pool, "")->nelts, 0);
    ck_assert_int_eq(rsp_logout_index_parse(pool, NULL)->nelts, 0);
    /* at most RSP_LOGOUT_INDEX_MAX */
    many = "";
    for (i = 0; i < RSP_LOGOUT_INDEX_MAX + 10; i++) {
        many = apr_pstrcat(pool, many, " ",
                           rsp_session_hash(pool, apr_itoa(pool, i)), NULL);
    }
    ck_assert_int_eq(rsp_logout_index_parse(pool, many)->nelts,
                     RSP_LOGOUT_INDEX_MAX);
}
END_TEST

START_TEST(test_index_writes)
{
    rsp_write_t w[2];
    int i;

    rsp_logout_index_writes(pool, PREFIX, IDP, "alice", "S1", HASH_A, 7000, w);
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(w[i].kind, RSP_WRITE_APPEND);
        ck_assert_str_eq(w[i].value, HASH_A);
        ck_assert_uint_eq(w[i].len, strlen(HASH_A));
        ck_assert_int_eq(w[i].ttl_ms, 7000);
        ck_assert_ptr_null(w[i].home_key);
    }
    ck_assert_str_eq(w[0].key, rsp_logout_index_key(pool, PREFIX, IDP, "alice",
                                                    "S1"));
    ck_assert_str_eq(w[1].key, rsp_logout_index_key(pool, PREFIX, IDP, "alice",
                                                    NULL));
    /* no SessionIndex: the entry of "" (not the NameID's) */
    rsp_logout_index_writes(pool, PREFIX, IDP, "alice", NULL, HASH_A, 7000, w);
    ck_assert_str_eq(w[0].key, rsp_logout_index_key(pool, PREFIX, IDP, "alice",
                                                    ""));
    ck_assert_str_ne(w[0].key, w[1].key);
}
END_TEST

/* A session of name_id (with session_index) stored under sid; its hash. */
static const char *store_session(rsp_store_t *st, const char *sid,
                                 const char *name_id,
                                 const char *session_index)
{
    rsp_session_t s;

    memset(&s, 0, sizeof(s));
    s.sp = "https://sp.example/";
    s.issuer = IDP;
    s.name_id = name_id;
    s.session_index = session_index;
    s.created = apr_time_from_sec(1764581000);
    s.expires = s.created + apr_time_from_sec(3600);
    rsp_mem_store_poke(st, -1, rsp_session_key(pool, PREFIX, sid),
                       rsp_session_encode(pool, &s), 0);
    return rsp_session_hash(pool, sid);
}

typedef struct {
    int n;
    const char *seen;
} visits_t;

static void visit(void *baton, const char *hash, const rsp_session_t *s,
                  int ended)
{
    visits_t *v = baton;

    v->n++;
    v->seen = apr_psprintf(pool, "%s[%s %s %d]", v->seen, s->name_id,
                           s->session_index ? s->session_index : "-", ended);
    ck_assert(rsp_is_hash(hash));
}

START_TEST(test_index_sessions)
{
    rsp_store_t *st = rsp_mem_store_create(pool, 1);
    const char *a1 = store_session(st, "sid-a1", "alice", "S1");
    const char *a2 = store_session(st, "sid-a2", "alice", "S2");
    const char *b1 = store_session(st, "sid-b1", "bob", "S1");
    const char *nid = rsp_logout_index_key(pool, PREFIX, IDP, "alice", NULL);
    const char *s1 = rsp_logout_index_key(pool, PREFIX, IDP, "alice", "S1");
    const char *err = NULL;
    visits_t v = {0, ""};
    int ended = 0;

    /* alice's entry lists her two sessions, bob's (stale, another's) and
     * one that expired (no record) */
    rsp_mem_store_poke(st, -1, nid, apr_pstrcat(pool, " ", a1, " ", b1, " ",
                                                HASH_A, " ", a2, NULL), 0);
    rsp_mem_store_poke(st, -1, s1, apr_pstrcat(pool, " ", a1, " ", a2, NULL), 0);
    /* listed, not ended: only alice's live sessions */
    ck_assert_int_eq(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               NULL, 0, visit, &v, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(v.n, 2);
    ck_assert_str_eq(v.seen, "[alice S1 0][alice S2 0]");
    ck_assert_int_eq(ended, 0);
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1, nid));
    /* under SessionIndex S1: a session of another SessionIndex is skipped */
    v.n = 0;
    v.seen = "";
    ck_assert_int_eq(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               "S1", 1, visit, &v, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_str_eq(v.seen, "[alice S1 1]");
    ck_assert_int_eq(ended, 1);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1,
                                          rsp_session_key(pool, PREFIX, "sid-a1")));
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1,
                                             rsp_session_key(pool, PREFIX, "sid-a2")));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, s1));
    /* the NameID's entry ends the rest; bob's session stays */
    ended = 0;
    ck_assert_int_eq(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               NULL, 1, NULL, NULL, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(ended, 1);
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1,
                                          rsp_session_key(pool, PREFIX, "sid-a2")));
    ck_assert_ptr_nonnull(rsp_mem_store_peek(st, -1,
                                             rsp_session_key(pool, PREFIX, "sid-b1")));
    ck_assert_ptr_null(rsp_mem_store_peek(st, -1, nid));
    /* nothing listed any more */
    ended = 0;
    ck_assert_int_eq(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               NULL, 1, NULL, NULL, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(ended, 0);
}
END_TEST

/* Several memcached servers: every server's copy of an entry is read
 * (a sign-in writes its entries on its claim's server), each dropped
 * where it is; a store failure stops it. */
START_TEST(test_index_sessions_servers)
{
    rsp_store_t *st = rsp_mem_store_create(pool, 3);
    const char *a1 = store_session(st, "sid-a1", "alice", "S1");
    const char *a2 = store_session(st, "sid-a2", "alice", "S2");
    const char *nid = rsp_logout_index_key(pool, PREFIX, IDP, "alice", NULL);
    const char *err = NULL;
    int ended = 0;

    rsp_mem_store_poke(st, 0, nid, apr_pstrcat(pool, " ", a1, NULL), 0);
    rsp_mem_store_poke(st, 2, nid, apr_pstrcat(pool, " ", a2, NULL), 0);
    rsp_mem_store_fault(st, 2, RSP_MEM_FAIL);
    ck_assert_int_ne(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               NULL, 1, NULL, NULL, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(ended, 0);
    ck_assert_int_eq(rsp_logout_index_sessions(st, pool, PREFIX, IDP, "alice",
                                               NULL, 1, NULL, NULL, &ended,
                                               &err), APR_SUCCESS);
    ck_assert_int_eq(ended, 2);
    ck_assert_ptr_null(rsp_mem_store_peek(st, 0, nid));
    ck_assert_ptr_null(rsp_mem_store_peek(st, 2, nid));
}
END_TEST

static Suite *logout_index_suite(void)
{
    Suite *s = suite_create("rsp_logout_index");
    TCase *tc = tcase_create("index");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_index_keys);
    tcase_add_test(tc, test_index_key_bytes);
    tcase_add_test(tc, test_index_entries);
    tcase_add_test(tc, test_index_writes);
    tcase_add_test(tc, test_index_sessions);
    tcase_add_test(tc, test_index_sessions_servers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(logout_index_suite());
}
