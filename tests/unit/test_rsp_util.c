/* Unit tests for rsp_util.c: base64, hashes, tokens, xs:dateTime parsing
 * and formatting, memcached's expiry of a TTL. (Claim keys: test_rsp_claim;
 * session keys: test_rsp_session; the window/TTL rule: test_rsp_window.)
 *
 * Expected hashes were computed independently with Python:
 *   b  = lambda x: base64.urlsafe_b64encode(x).rstrip(b'=').decode()
 *   h  = lambda x: b(hashlib.sha256(x).digest())
 */
#include <stdlib.h>
#include <string.h>

#include "rsp_unit.h"
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_time.h>

#include "rsp_util.h"

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

#define ISSUER "https://idp.example.org/idp"
#define ISSUER2 "https://idp2.example.org/idp"
#define AID "_abc123"

/* 2026-11-30T10:00:00Z */
#define T0_SEC APR_INT64_C(1796032800)
#define T0 apr_time_from_sec(T0_SEC)

/* ------------------------------------------------------------------ */
/* base64url and SHA-256                                               */

START_TEST(test_b64url_vectors)
{
    const unsigned char odd[] = { 0xfb, 0xff, 0xfe };

    ck_assert_str_eq(rsp_b64url(pool, (const unsigned char *)"", 0), "");
    ck_assert_str_eq(rsp_b64url(pool, (const unsigned char *)"f", 1), "Zg");
    ck_assert_str_eq(rsp_b64url(pool, (const unsigned char *)"fo", 2), "Zm8");
    ck_assert_str_eq(rsp_b64url(pool, (const unsigned char *)"foo", 3), "Zm9v");
    ck_assert_str_eq(rsp_b64url(pool, (const unsigned char *)"foob", 4), "Zm9vYg");
    /* URL alphabet: '-' and '_' instead of '+' and '/' */
    ck_assert_str_eq(rsp_b64url(pool, odd, sizeof(odd)), "-__-");
}
END_TEST

START_TEST(test_b64_decode_vectors)
{
    static const struct { const char *in; const char *out; apr_size_t len; } ok[] = {
        { "Zg==", "f", 1 }, { "Zm8=", "fo", 2 }, { "Zm9v", "foo", 3 },
        { "Zm9vYg==", "foob", 4 }, { "Zm9vYmE=", "fooba", 5 },
        { "Zm9vYmFy", "foobar", 6 }, { "+/+/", "\xfb\xff\xbf", 3 },
        { "AAAA", "\0\0\0", 3 },
    };
    char *out;
    apr_size_t len, i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_int_eq(rsp_b64_decode(pool, ok[i].in, 0, &out, &len), 0);
        ck_assert_uint_eq(len, ok[i].len);
        ck_assert(memcmp(out, ok[i].out, len) == 0);
        ck_assert_int_eq(out[len], '\0');
    }
}
END_TEST

START_TEST(test_b64_decode_space)
{
    char *out;
    apr_size_t len;

    ck_assert_int_eq(rsp_b64_decode(pool, " Zm9v\r\nYmFy\t", 1, &out, &len), 0);
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(out, "foobar");
    ck_assert_int_eq(rsp_b64_decode(pool, "Zm9v Zg==", 1, &out, &len), 0);
    ck_assert_str_eq(out, "foof");
    /* whitespace after the padding is still only whitespace */
    ck_assert_int_eq(rsp_b64_decode(pool, "Zg==\n", 1, &out, &len), 0);
    /* refused where not skipped */
    ck_assert_int_eq(rsp_b64_decode(pool, "Zm9v Zg==", 0, &out, &len), -1);
    ck_assert_int_eq(rsp_b64_decode(pool, "Zg==\n", 0, &out, &len), -1);
    /* other whitespace-like bytes are not skipped */
    ck_assert_int_eq(rsp_b64_decode(pool, "Zm9v\vZg==", 1, &out, &len), -1);
    ck_assert_int_eq(rsp_b64_decode(pool, "Zm9v\fZg==", 1, &out, &len), -1);
}
END_TEST

START_TEST(test_b64_decode_refuses)
{
    static const char *bad[] = {
        "", "   ", "Zg", "Zg=", "Zm9", "Zm9vY", "Zg===", "Z===", "====",
        "Zg==Zg==", "Zm=v", "=Zm9", "Zm9v-_==", "Zm9v.A==", "Zm9v\x80" "A==",
        "Zm9vYmFy=", "Zm9vYmFy====",
    };
    char *out = NULL;
    apr_size_t len = 0, i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(rsp_b64_decode(pool, bad[i], 1, &out, &len) == -1,
                      "accepted: %s", bad[i]);
    }
}
END_TEST

START_TEST(test_sha256_b64url_known)
{
    const char *h = rsp_sha256_b64url(pool, "abc", 3);

    ck_assert_str_eq(h, "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    ck_assert_uint_eq(strlen(h), RSP_HASH_B64_LEN);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Short hash, random token                               */

START_TEST(test_short_hash)
{
    const char *h = rsp_short_hash(pool, AID);

    ck_assert_uint_eq(strlen(h), 12);
    ck_assert_str_eq(h, "V_d4lG8FiaQe");
    /* NULL hashes like "" (SHA-256("") = 47DEQpj8HBSa...) */
    ck_assert_str_eq(rsp_short_hash(pool, ""), "47DEQpj8HBSa");
    ck_assert_str_eq(rsp_short_hash(pool, NULL), "47DEQpj8HBSa");
}
END_TEST

START_TEST(test_random_token)
{
    const char *a = NULL, *b = NULL;

    ck_assert_int_eq(rsp_random_token(&a, pool, 32), APR_SUCCESS);
    ck_assert_int_eq(rsp_random_token(&b, pool, 32), APR_SUCCESS);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(strlen(a), 43);
    ck_assert_uint_eq(strlen(b), 43);
    ck_assert(is_b64url(a));
    ck_assert(is_b64url(b));
    ck_assert_str_ne(a, b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_parse_time                                                      */

START_TEST(test_parse_time_z)
{
    apr_time_t t = 0;

    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00Z"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    ck_assert_int_eq(apr_time_sec(t), 1796032800);

    ck_assert_int_eq(rsp_parse_time(&t, "2000-02-29T23:59:59Z"), APR_SUCCESS);
    ck_assert_int_eq(t, apr_time_from_sec(951868799));
    ck_assert_int_eq(rsp_parse_time(&t, "1999-12-31T23:59:59Z"), APR_SUCCESS);
    ck_assert_int_eq(t, apr_time_from_sec(946684799));
    ck_assert_int_eq(rsp_parse_time(&t, "1970-01-01T00:00:00Z"), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
}
END_TEST

START_TEST(test_parse_time_fraction)
{
    apr_time_t t = 0;

    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.5Z"), APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 500000);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.123Z"), APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 123000);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.123456Z"),
                     APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 123456);
    /* beyond microseconds: truncated */
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.1234569Z"),
                     APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 123456);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.000Z"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    /* fraction with an offset */
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T12:00:00.25+02:00"),
                     APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 250000);
}
END_TEST

START_TEST(test_parse_time_offsets)
{
    apr_time_t t = 0;

    /* 12:00 at +02:00 is 10:00 UTC */
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T12:00:00+02:00"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    /* 04:30 at -05:30 is 10:00 UTC */
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T04:30:00-05:30"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00+00:00"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00-00:00"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    /* across midnight: 2026-12-01T01:00+15:00 is not allowed (> 14) but
     * 2026-12-01T00:00:00+14:00 is 2026-11-30T10:00Z */
    ck_assert_int_eq(rsp_parse_time(&t, "2026-12-01T00:00:00+14:00"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-29T22:00:00-12:00"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
}
END_TEST

START_TEST(test_parse_time_no_zone_is_utc)
{
    apr_time_t t = 0, tz = 1;

    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00"), APR_SUCCESS);
    ck_assert_int_eq(rsp_parse_time(&tz, "2026-11-30T10:00:00Z"), APR_SUCCESS);
    ck_assert_int_eq(t, T0);
    ck_assert_int_eq(t, tz);
    ck_assert_int_eq(rsp_parse_time(&t, "2026-11-30T10:00:00.5"), APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 500000);
}
END_TEST

START_TEST(test_parse_time_rejects)
{
    static const char *const bad[] = {
        "",
        "garbage",
        "not a date at all, really",
        "2026-11-30",
        "2026-11-30T10:00",
        "2026-13-30T10:00:00Z",      /* bad month */
        "2026-00-30T10:00:00Z",      /* bad month */
        "2026-11-00T10:00:00Z",      /* bad day */
        "2026-11-32T10:00:00Z",      /* bad day */
        "2026-11-30T24:00:00Z",      /* bad hour */
        "2026-11-30T10:60:00Z",      /* bad minute */
        "2026-11-30T10:00:61Z",      /* bad second */
        "2026-11-30 10:00:00Z",      /* no T */
        "2026/11/30T10:00:00Z",
        "2026-11-30T10:00:00Zjunk",  /* trailing junk */
        "2026-11-30T10:00:00Z ",
        "2026-11-30T10:00:00 ",
        "2026-11-30T10:00:00x",
        "2026-11-30T10:00:00+02:00x",
        "2026-11-30T10:00:00ZZ",
        "2026-11-30T10:00:00.Z",     /* empty fraction */
        "2026-11-30T10:00:00.",
        "2026-11-30T10:00:00+2:00",  /* bad offsets */
        "2026-11-30T10:00:00+02",
        "2026-11-30T10:00:00+0200",
        "2026-11-30T10:00:00+02:0",
        "2026-11-30T10:00:00+15:00",
        "2026-11-30T10:00:00+02:60",
        "2026-11-30T10:00:00+",
        " 2026-11-30T10:00:00Z",     /* leading junk */
        "x2026-11-30T10:00:00Z",
        "-2026-11-30T10:00:00Z",
        "2026-1a-30T10:00:00Z",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        apr_time_t t = 12345;
        ck_assert_msg(rsp_parse_time(&t, bad[i]) == APR_EINVAL,
                      "accepted \"%s\"", bad[i]);
        ck_assert_msg(t == 12345, "wrote *out for \"%s\"", bad[i]);
    }
    {
        apr_time_t t = 12345;
        ck_assert_int_eq(rsp_parse_time(&t, NULL), APR_EINVAL);
    }
}
END_TEST

/* Days that do not exist in their month are not xs:dateTime values; they
 * must not be normalised into the next month (Feb 31 -> Mar 3). */
START_TEST(test_parse_time_rejects_impossible_dates)
{
    static const char *const bad[] = {
        "2026-02-29T10:00:00Z", /* 2026 is not a leap year */
        "2026-02-30T10:00:00Z",
        "2026-02-31T10:00:00Z",
        "2026-04-31T10:00:00Z",
        "2026-11-31T10:00:00Z",
        "1900-02-29T10:00:00Z", /* not a leap year (century) */
    };
    apr_size_t i;
    apr_time_t t = 0;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(rsp_parse_time(&t, bad[i]) == APR_EINVAL,
                      "accepted \"%s\" as %s", bad[i], rsp_format_time(pool, t));
    }
    /* real leap days are fine */
    ck_assert_int_eq(rsp_parse_time(&t, "2024-02-29T10:00:00Z"), APR_SUCCESS);
    ck_assert_int_eq(rsp_parse_time(&t, "2000-02-29T10:00:00Z"), APR_SUCCESS);
}
END_TEST

START_TEST(test_format_time)
{
    apr_time_t t = 0;

    ck_assert_str_eq(rsp_format_time(pool, T0), "2026-11-30T10:00:00Z");
    /* sub-second part dropped */
    ck_assert_str_eq(rsp_format_time(pool, T0 + 999999), "2026-11-30T10:00:00Z");
    ck_assert_str_eq(rsp_format_time(pool, 0), "1970-01-01T00:00:00Z");
    ck_assert_str_eq(rsp_format_time(pool, apr_time_from_sec(951868799)),
                     "2000-02-29T23:59:59Z");
    /* round trip */
    ck_assert_int_eq(rsp_parse_time(&t, rsp_format_time(pool, T0 + 3723000000LL)),
                     APR_SUCCESS);
    ck_assert_int_eq(t, T0 + 3723000000LL);
}
END_TEST

START_TEST(test_ttl_seconds)
{
    ck_assert_int_eq(rsp_ttl_seconds(1), 1);
    ck_assert_int_eq(rsp_ttl_seconds(999), 1);
    ck_assert_int_eq(rsp_ttl_seconds(1000), 1);
    ck_assert_int_eq(rsp_ttl_seconds(1001), 2);
    ck_assert_int_eq(rsp_ttl_seconds(2000), 2);
    ck_assert_int_eq(rsp_ttl_seconds(359001), 360);
}
END_TEST

static Suite *util_suite(void)
{
    Suite *s = suite_create("rsp_util");
    TCase *tc;

    tc = tcase_create("hash");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_b64url_vectors);
    tcase_add_test(tc, test_b64_decode_vectors);
    tcase_add_test(tc, test_b64_decode_space);
    tcase_add_test(tc, test_b64_decode_refuses);
    tcase_add_test(tc, test_sha256_b64url_known);
    tcase_add_test(tc, test_short_hash);
    tcase_add_test(tc, test_random_token);
    suite_add_tcase(s, tc);

    tc = tcase_create("time");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_parse_time_z);
    tcase_add_test(tc, test_parse_time_fraction);
    tcase_add_test(tc, test_parse_time_offsets);
    tcase_add_test(tc, test_parse_time_no_zone_is_utc);
    tcase_add_test(tc, test_parse_time_rejects);
    tcase_add_test(tc, test_parse_time_rejects_impossible_dates);
    tcase_add_test(tc, test_format_time);
    suite_add_tcase(s, tc);

    tc = tcase_create("ttl");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_ttl_seconds);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(util_suite());
}
