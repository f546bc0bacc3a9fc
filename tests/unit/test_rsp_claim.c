/* Unit tests for the records a sign-in writes: rsp_claim.c (claim and
 * request-use records), rsp_logout_index.c (logout index keys and
 * entries), rsp_pending.c (pending requests and request keys). */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_logout_index.h"
#include "rsp_binding.h"
#include "rsp_pending.h"
#include "rsp_session.h"
#include "rsp_signin.h"
#include "rsp_util.h"

#define ISSUER "https://idp.example.org/idp"
#define ISSUER2 "https://idp2.example.org/idp"
#define AID "_abc123"

/* Only base64url characters: A-Z a-z 0-9 - _ */
static int is_b64url(const char *s)
{
    for (; *s; s++) {
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')
              || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_')) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* Claim key (invariant 3): expected keys computed with Python,
 * prefix + "a:" + base64url(sha256(issuer + b"\\0" + id)) unpadded  */

START_TEST(test_claim_key_known_answer)
{
    ck_assert_str_eq(rsp_claim_key(pool, "rsp:", ISSUER, AID),
                     "rsp:a:ZThSSVT6VFG5v1_3rPQSPXhTkQCEMtl5w3-ZOaWEm20");
    /* NULL prefix = empty prefix */
    ck_assert_str_eq(rsp_claim_key(pool, NULL, ISSUER, AID),
                     "a:ZThSSVT6VFG5v1_3rPQSPXhTkQCEMtl5w3-ZOaWEm20");
    ck_assert_str_eq(rsp_claim_key(pool, "", ISSUER, AID),
                     "a:ZThSSVT6VFG5v1_3rPQSPXhTkQCEMtl5w3-ZOaWEm20");
}
END_TEST

START_TEST(test_claim_key_cross_issuer)
{
    const char *k1 = rsp_claim_key(pool, "rsp:", ISSUER, AID);
    const char *k2 = rsp_claim_key(pool, "rsp:", ISSUER2, AID);

    ck_assert_ptr_nonnull(k1);
    ck_assert_ptr_nonnull(k2);
    ck_assert_str_ne(k1, k2);
    ck_assert_str_eq(k2, "rsp:a:OAlemmfl8gFe9ccakmG09yCl9BaDH3p-Sb6spH2SIRY");
}
END_TEST

START_TEST(test_claim_key_separator)
{
    const char *k1 = rsp_claim_key(pool, NULL, "ab", "c");
    const char *k2 = rsp_claim_key(pool, NULL, "a", "bc");

    ck_assert_str_ne(k1, k2);
    ck_assert_str_eq(k1, "a:bAMuYx05oU2Fr_fjGVRq9wHibJe1fKlfv-nGuoVfZ78");
    ck_assert_str_eq(k2, "a:QLtUfZNrvTExjuN6yHmefsuyLtomUfZeMhS_-4zpe7Q");
}
END_TEST

START_TEST(test_claim_key_fixed_length)
{
    const apr_size_t n = 100000;
    char *li = apr_palloc(pool, n + 1), *ld = apr_palloc(pool, n + 1);
    const char *k;

    memset(li, 'I', n);
    li[n] = '\0';
    memset(ld, 'D', n);
    ld[n] = '\0';

    k = rsp_claim_key(pool, "rsp:", "i", "d");
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(strlen(k), strlen("rsp:") + 2 + 43);

    k = rsp_claim_key(pool, "rsp:", li, ld);
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(strlen(k), strlen("rsp:") + 2 + 43);
    ck_assert_str_eq(k, "rsp:a:6y6yTJSVhHhfdu_WlENo5SHlquX7-BbGj8D-tZzF598");

    k = rsp_claim_key(pool, "a-much-longer-prefix:", ISSUER, li);
    ck_assert_uint_eq(strlen(k), strlen("a-much-longer-prefix:") + 2 + 43);
}
END_TEST

START_TEST(test_claim_key_charset)
{
    /* Inputs full of whitespace, '=', control and non-ASCII bytes: the
     * key still has none of them (memcached keys). */
    static const char *const ids[] = {
        "id with spaces", "id\twith\ttabs\r\n", "===", "\xc3\xa9\xe2\x82\xac",
        "a", "_", "\x01\x7f",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        const char *k = rsp_claim_key(pool, "rsp:", "iss uer\n", ids[i]);
        ck_assert_ptr_nonnull(k);
        ck_assert_msg(strncmp(k, "rsp:a:", 6) == 0, "prefix: %s", k);
        ck_assert_msg(is_b64url(k + 6), "non-base64url char in %s", k);
        ck_assert_ptr_null(strpbrk(k, " \t\r\n\v\f="));
        ck_assert_uint_eq(strlen(k), 6 + 43);
    }
}
END_TEST

START_TEST(test_claim_key_null_empty)
{
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", NULL, AID));
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", "", AID));
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", ISSUER, NULL));
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", ISSUER, ""));
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", NULL, NULL));
    ck_assert_ptr_null(rsp_claim_key(pool, "rsp:", "", ""));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Claim records                                                       */

#define HASH_A "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define HASH_B "abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE"

START_TEST(test_claim_round_trip)
{
    rsp_claim_rec_t in = {"replica one&two=3", apr_time_from_sec(1764581000),
                          NULL}, out;
    const char *rec;

    in.session_hash = rsp_session_hash(pool, "a session id");
    rec = rsp_claim_encode(pool, &in);
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_str_eq(out.replica, in.replica);
    ck_assert_int_eq(out.claimed, in.claimed);
    ck_assert_str_eq(out.session_hash, in.session_hash);
    /* a request's use: no session */
    in.session_hash = NULL;
    rec = rsp_claim_encode(pool, &in);
    ck_assert_ptr_null(strstr(rec, "s="));
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_ptr_null(out.session_hash);
    /* a guard's record, with the SP's cookie and target */
    in.cookie_name = "_shibsession_64656661756c74";
    in.cookie_hash = HASH_B;
    in.target = "https://app.example/page?a=1&b=%2F";
    rec = rsp_claim_encode(pool, &in);
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_str_eq(out.cookie_name, in.cookie_name);
    ck_assert_str_eq(out.cookie_hash, HASH_B);
    ck_assert_str_eq(out.target, in.target);
    in.cookie_name = in.cookie_hash = in.target = NULL;
    /* what earlier versions wrote, and fields a newer one may add */
    ck_assert_int_eq(rsp_claim_decode(&out, pool, "v=1&r=h:80&t=17&s=" HASH_A
                                      "&z=new"), APR_SUCCESS);
    ck_assert_str_eq(out.replica, "h:80");
    ck_assert_str_eq(out.session_hash, HASH_A);
    ck_assert_int_eq(apr_time_sec(out.claimed), 17);
}
END_TEST

START_TEST(test_claim_open)
{
    rsp_claim_rec_t in = {"r1", apr_time_from_sec(1764581000), NULL}, out;
    const char *rec;

    /* an ACS's claim while its sign-in runs: open; completed: not */
    in.session_hash = HASH_A;
    in.open = 1;
    rec = rsp_claim_encode(pool, &in);
    ck_assert_ptr_nonnull(strstr(rec, "&o=1"));
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_int_eq(out.open, 1);
    in.open = 0;
    rec = rsp_claim_encode(pool, &in);
    ck_assert_ptr_null(strstr(rec, "o="));
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_int_eq(out.open, 0);
    /* what earlier versions wrote is complete: never taken over */
    ck_assert_int_eq(rsp_claim_decode(&out, pool, "v=1&r=h&t=17&s=" HASH_A),
                     APR_SUCCESS);
    ck_assert_int_eq(out.open, 0);
    /* given twice: not open (never taken over) */
    ck_assert_int_eq(rsp_claim_decode(&out, pool, "v=1&r=h&t=17&o=1&o=1"),
                     APR_SUCCESS);
    ck_assert_int_eq(out.open, 0);
}
END_TEST

START_TEST(test_claim_take_over_rule)
{
    rsp_claim_rec_t rec;
    apr_time_t now = apr_time_from_sec(1764581000);
    apr_interval_time_t age = apr_time_from_sec(4);

    memset(&rec, 0, sizeof(rec));
    rec.replica = "r1";
    rec.open = 1;
    /* claimed is whole seconds: age + 1 s must have passed */
    rec.claimed = now - apr_time_from_sec(6);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 1);
    rec.claimed = now - apr_time_from_sec(5);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    rec.claimed = now;
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    /* a completed sign-in's claim: never, however old */
    rec.open = 0;
    rec.claimed = now - apr_time_from_sec(86400);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    /* the latest time a record can carry (9999-12-31): in the future,
     * never taken over, and no overflow on the way */
    ck_assert_int_eq(rsp_claim_decode(&rec, pool, "v=1&r=a&t=253402300799&o=1"),
                     APR_SUCCESS);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, age), 0);
    ck_assert_int_eq(rsp_signin_may_take_over(&rec, now, APR_INT64_C(1) << 40), 0);
}
END_TEST

/* The re-post rule: only the browser whose session the claim records (by
 * the hash of its cookie) gets its first answer again; anyone else posting
 * the same response is a replay. */
START_TEST(test_repost_rule)
{
    rsp_claim_result_t c;
    const char *sid = "S3ss10n-1d-of-the-w1nner";

    memset(&c, 0, sizeof(c));
    c.verdict = RSP_CLAIM_TAKEN;
    c.taker_known = 1;
    c.taker.replica = "r1";
    c.taker.session_hash = rsp_session_hash(pool, sid);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 1);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, "another-browser"), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, NULL), 0);
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, ""), 0);
    /* the hash is what is compared, never the value itself */
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, c.taker.session_hash), 0);
    /* a claim that records no session (the guard's), or unreadable */
    c.taker.session_hash = NULL;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);
    c.taker.session_hash = rsp_session_hash(pool, sid);
    c.taker_known = 0;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);
    /* a won claim is no re-post */
    c.taker_known = 1;
    c.verdict = RSP_CLAIM_WON;
    ck_assert_int_eq(rsp_signin_is_repost(&c, pool, sid), 0);

    /* the guard: the SP's cookie, by its hash */
    memset(&c, 0, sizeof(c));
    c.verdict = RSP_CLAIM_TAKEN;
    c.taker_known = 1;
    c.taker.cookie_name = "mellon-cookie";
    c.taker.cookie_hash = rsp_sha256_b64url(pool, "v4lue", 5);
    c.taker.target = "/app/";
    ck_assert_str_eq(rsp_signin_repost_target(&c, pool, "v4lue"), "/app/");
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, "v4lue2"));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, ""));
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, NULL));
    c.taker.target = NULL;
    ck_assert_ptr_null(rsp_signin_repost_target(&c, pool, "v4lue"));
}
END_TEST

START_TEST(test_claim_malformed)
{
    static const char *const bad[] = {
        "", "v=2&r=a&t=1", "r=a&t=1", "v=1&t=1", "v=1&r=&t=1", "v=1&r=a",
        "v=1&r=a&t=", "v=1&r=a&t=x", "v=1&r=a&t=-1", "v=1&r=a&t=1&s=short",
        "v=1&r=a&t=1&s=" HASH_A "x", "v=1&r=a&r=b&t=1", "v=1&r=a&t=1&t=2",
        "v=1&r=%zz&t=1", "v=1&r=a&t=1&cn=x", "v=1&r=a&t=1&ch=" HASH_A,
        "v=1&r=a&t=1&cn=x&ch=nothash", "v=1&r=a&t=1&o=0", "v=1&r=a&t=1&o=yes",
        "v=1&r=a&t=1&o=",
        /* after the year 9999: in microseconds it would not fit */
        "v=1&r=a&t=253402300800", "v=1&r=a&t=9223372036854&o=1",
        "v=1&r=a&t=9223372036854775807"};
    rsp_claim_rec_t out;
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(rsp_claim_decode(&out, pool, bad[i]) == APR_EINVAL,
                      "accepted %s", bad[i]);
    }
}
END_TEST

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

START_TEST(test_pending_round_trip)
{
    const char *rec = rsp_pending_encode(pool, "https://idp.example/?a=1&b",
                                         "https://sp.example/", "token-1",
                                         "/app/page?x=1&y=%2F z", NULL);
    rsp_pending_t *pd = rsp_pending_decode(pool, rec);

    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->idp, "https://idp.example/?a=1&b");
    ck_assert_str_eq(pd->sp, "https://sp.example/");
    ck_assert_str_eq(pd->return_to, "/app/page?x=1&y=%2F z");
    ck_assert(rsp_pending_relay_matches(pool, pd, "token-1"));
    ck_assert(!rsp_pending_relay_matches(pool, pd, "token-2"));
    ck_assert(!rsp_pending_relay_matches(pool, pd, NULL));
    ck_assert_ptr_null(pd->bind_hash);    /* not bound */
    /* the token itself is not in the record */
    ck_assert_ptr_null(strstr(rec, "token-1"));
    /* what ap_escape_urlencoded wrote (spaces as '+') still reads */
    pd = rsp_pending_decode(pool, "v=1&i=idp&p=sp&h=" HASH_A "&u=%2Fa+b");
    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->return_to, "/a b");
}
END_TEST

/* A bound request keeps the hash of the browser's binding value, never
 * the value; the ACS takes it from the browser's cookie of that request
 * (or its twin) only. */
/* The checks of a response against the request it answers, each with its
 * tag, in order; a logout is never bound. */
START_TEST(test_pending_refusal)
{
    const char *bound = rsp_pending_encode(pool, "idp", "sp", "tok", "/back",
                                           "B-value");
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");
    rsp_pending_answer_t ans;
    rsp_pending_t *pd = NULL;
    const char *detail = NULL;

    memset(&ans, 0, sizeof(ans));
    ans.rid = "RID";
    ans.sp = "sp";
    ans.issuer = "idp";
    ans.relay = "tok";
    ans.cookie_base = "rsp_session";
    ans.cookie_header = apr_psprintf(pool, "x=1; %s=B-value", name);
    ans.lifetime_s = 300;
    /* the browser that started it, with the request's token */
    ck_assert_ptr_null(rsp_pending_refusal(pool, bound, &ans, &pd, &detail));
    ck_assert_ptr_nonnull(pd);
    ck_assert_str_eq(pd->return_to, "/back");
    /* absent (never sent, or expired) */
    ck_assert_str_eq(rsp_pending_refusal(pool, NULL, &ans, &pd, &detail),
                     "request-unknown");
    ck_assert_ptr_null(pd);
    ck_assert_ptr_nonnull(strstr(detail, "RID"));
    ck_assert_ptr_nonnull(strstr(detail, "ReplaySPRequestLifetime 300 s"));
    ck_assert_str_eq(rsp_pending_refusal(pool, "v=2&i=idp", &ans, &pd, &detail),
                     "request-unknown");
    ck_assert_ptr_nonnull(strstr(detail, "malformed"));
    /* another IdP, another SP */
    ans.issuer = "idp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
    ans.issuer = "idp";
    ans.sp = "sp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
    ans.sp = "sp";
    /* another RelayState, none */
    ans.relay = "tok2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "relay-state");
    ans.relay = NULL;
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "relay-state");
    ck_assert_ptr_nonnull(strstr(detail, "missing"));
    ans.relay = "tok";
    /* another browser: no cookie, another value */
    ans.cookie_header = NULL;
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-browser");
    ck_assert_ptr_nonnull(strstr(detail, "no binding cookie"));
    ans.cookie_header = apr_psprintf(pool, "%s=B-valuf", name);
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-browser");
    ck_assert_ptr_nonnull(strstr(detail, "another browser"));
    /* a logout is not bound; an unbound request takes any browser */
    ans.cookie_base = NULL;
    ck_assert_ptr_null(rsp_pending_refusal(pool, bound, &ans, &pd, &detail));
    ans.cookie_base = "rsp_session";
    ck_assert_ptr_null(rsp_pending_refusal(
        pool, rsp_pending_encode(pool, "idp", "sp", "tok", "/", NULL), &ans,
        &pd, &detail));
    /* the first failing check counts: another IdP and another browser */
    ans.issuer = "idp2";
    ck_assert_str_eq(rsp_pending_refusal(pool, bound, &ans, &pd, &detail),
                     "request-mismatch");
}
END_TEST

START_TEST(test_pending_binding)
{
    const char *rec = rsp_pending_encode(pool, "idp", "sp", "tok", "/", "B-value");
    rsp_pending_t *pd = rsp_pending_decode(pool, rec);
    const char *name = rsp_binding_cookie_name(pool, "rsp_session", "tok");
    const char *why = NULL;
    apr_array_header_t *set = apr_array_make(pool, 2, sizeof(const char *));

    ck_assert_ptr_nonnull(pd);
    ck_assert_ptr_nonnull(pd->bind_hash);
    ck_assert_ptr_null(strstr(rec, "B-value"));
    /* the name: the session cookie's, _req_, 16 characters of the token's
     * hash (another token, another cookie: sign-ins in two tabs) */
    ck_assert_int_eq(strlen(name), strlen("rsp_session_req_") + 16);
    ck_assert(!strncmp(name, "rsp_session_req_", 16));
    ck_assert_str_ne(name, rsp_binding_cookie_name(pool, "rsp_session", "tok2"));
    /* the browser that started it */
    ck_assert(rsp_binding_matches(pool, apr_psprintf(pool, "%s=B-value", name),
                                  name, pd->bind_hash, &why));
    ck_assert(rsp_binding_matches(pool, apr_psprintf(
        pool, "a=b; rsp_session=xyz;  %s_l=B-value", name), name, pd->bind_hash,
        &why));
    ck_assert(rsp_binding_matches(pool, apr_psprintf(
        pool, "%s=other; %s=B-value", name, name), name, pd->bind_hash, &why));
    /* no cookie, or another one's */
    ck_assert(!rsp_binding_matches(pool, NULL, name, pd->bind_hash, &why));
    ck_assert_str_eq(why, "no binding cookie");
    ck_assert(!rsp_binding_matches(pool, "rsp_session=B-value; x=B-value", name,
                                   pd->bind_hash, &why));
    ck_assert_str_eq(why, "no binding cookie");
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=B-valuf", name),
                                   name, pd->bind_hash, &why));
    ck_assert_str_eq(why, "a binding cookie of another browser");
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=", name), name,
                                   pd->bind_hash, &why));
    ck_assert_str_eq(why, "a binding cookie of another browser");
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "x%s=B-value", name),
                                   name, pd->bind_hash, &why));
    /* the hash, posted as a value, is not the value */
    ck_assert(!rsp_binding_matches(pool, apr_psprintf(pool, "%s=%s", name,
                                                      pd->bind_hash),
                                   name, pd->bind_hash, &why));
    /* an empty binding hash is a malformed record */
    ck_assert_ptr_null(rsp_pending_decode(pool, "v=1&i=a&p=b&h=c&u=d&b="));
    /* the cookies: http, one without SameSite; https, SameSite=None; Secure
     * and a twin without SameSite; expired */
    rsp_binding_set_cookies(pool, "n", "v", "/saml", 300, 0, set);
    ck_assert_int_eq(set->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=v; Path=/saml; Max-Age=300; HttpOnly");
    apr_array_clear(set);
    rsp_binding_set_cookies(pool, "n", "v", "/saml", 300, 1, set);
    ck_assert_int_eq(set->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=v; Path=/saml; Max-Age=300; HttpOnly; SameSite=None; Secure");
    ck_assert_str_eq(APR_ARRAY_IDX(set, 1, const char *),
                     "n_l=v; Path=/saml; Max-Age=300; HttpOnly; Secure");
    apr_array_clear(set);
    rsp_binding_set_cookies(pool, "n", "", "/saml", 0, 0, set);
    ck_assert_str_eq(APR_ARRAY_IDX(set, 0, const char *),
                     "n=; Path=/saml; Max-Age=0; HttpOnly");
}
END_TEST

START_TEST(test_pending_malformed)
{
    static const char *const bad[] = {
        "", "v=2&i=a&p=b&h=c&u=d", "i=a&p=b&h=c&u=d", "v=1&p=b&h=c&u=d",
        "v=1&i=a&h=c&u=d", "v=1&i=a&p=b&u=d", "v=1&i=a&p=b&h=c",
        "v=1&i=a&i=b&p=b&h=c&u=d", "v=1&i=%zz&p=b&h=c&u=d"};
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(rsp_pending_decode(pool, bad[i]) == NULL, "accepted %s", bad[i]);
    }
    ck_assert_ptr_null(rsp_pending_decode(pool, NULL));
}
END_TEST

START_TEST(test_request_keys)
{
    const char *q = rsp_pending_key(pool, "rsp:", RSP_PENDING_LOGIN, "_r1");
    const char *l = rsp_pending_key(pool, "rsp:", RSP_PENDING_LOGOUT, "_r1");
    const char *u = rsp_pending_use_key(pool, "rsp:", "_r1");
    const char *i1 = rsp_idp_request_key(pool, "rsp:", "idp", "_r1");

    ck_assert(!strncmp(q, "rsp:q:", 6) && rsp_is_hash(q + 6));
    ck_assert(!strncmp(l, "rsp:l:", 6) && rsp_is_hash(l + 6));
    ck_assert(!strncmp(u, "rsp:u:", 6) && rsp_is_hash(u + 6));
    ck_assert(!strncmp(i1, "rsp:i:", 6) && rsp_is_hash(i1 + 6));
    /* the same request, three kinds of record: the same hash */
    ck_assert_str_eq(q + 6, l + 6);
    ck_assert_str_eq(q + 6, u + 6);
    ck_assert_str_eq(q + 6, rsp_sha256_b64url(pool, "_r1", 3));
    /* an IdP's request is keyed by IdP and ID: no cross-IdP collision */
    ck_assert_str_ne(i1, rsp_idp_request_key(pool, "rsp:", "idp2", "_r1"));
    ck_assert_str_ne(rsp_idp_request_key(pool, "rsp:", "idp_", "r1"), i1);
}
END_TEST

static Suite *claim_suite(void)
{
    Suite *s = suite_create("rsp_claim");
    TCase *tc = tcase_create("records");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_claim_key_known_answer);
    tcase_add_test(tc, test_claim_key_cross_issuer);
    tcase_add_test(tc, test_claim_key_separator);
    tcase_add_test(tc, test_claim_key_fixed_length);
    tcase_add_test(tc, test_claim_key_charset);
    tcase_add_test(tc, test_claim_key_null_empty);
    tcase_add_test(tc, test_claim_round_trip);
    tcase_add_test(tc, test_claim_malformed);
    tcase_add_test(tc, test_claim_open);
    tcase_add_test(tc, test_claim_take_over_rule);
    tcase_add_test(tc, test_repost_rule);
    tcase_add_test(tc, test_index_keys);
    tcase_add_test(tc, test_index_entries);
    tcase_add_test(tc, test_pending_round_trip);
    tcase_add_test(tc, test_pending_malformed);
    tcase_add_test(tc, test_pending_binding);
    tcase_add_test(tc, test_pending_refusal);
    tcase_add_test(tc, test_request_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(claim_suite());
}
