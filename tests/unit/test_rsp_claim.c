/* Unit tests for rsp_claim.c: claim keys, and the records of claims and
 * request uses. (Pending requests: test_rsp_pending; the logout index:
 * test_rsp_logout_index; the take-over and re-post rules that read
 * claims: test_rsp_signin.) */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_session.h"
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

START_TEST(test_claim_failed)
{
    rsp_claim_rec_t in = {"r1", apr_time_from_sec(1764581000), NULL}, out;
    const char *rec;

    /* a guard's claim whose SP answered a server error: open and failed */
    in.open = in.failed = 1;
    rec = rsp_claim_encode(pool, &in);
    ck_assert_ptr_nonnull(strstr(rec, "&o=1&f=1"));
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_int_eq(out.open, 1);
    ck_assert_int_eq(out.failed, 1);
    /* failed only ever with open: a completed claim says nothing of it */
    in.open = 0;
    rec = rsp_claim_encode(pool, &in);
    ck_assert_ptr_null(strstr(rec, "f="));
    ck_assert_int_eq(rsp_claim_decode(&out, pool, rec), APR_SUCCESS);
    ck_assert_int_eq(out.failed, 0);
    /* refused: failed without open, another value */
    ck_assert_int_eq(rsp_claim_decode(&out, pool, "v=1&r=h&t=17&f=1"),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_claim_decode(&out, pool, "v=1&r=h&t=17&o=1&f=2"),
                     APR_EINVAL);
    /* given twice: absent (not failed: taken over only by age, never) */
    ck_assert_int_eq(rsp_claim_decode(&out, pool,
                                      "v=1&r=h&t=17&o=1&f=1&f=1"),
                     APR_SUCCESS);
    ck_assert_int_eq(out.failed, 0);
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
    tcase_add_test(tc, test_claim_failed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(claim_suite());
}
