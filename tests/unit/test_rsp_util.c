/* Unit tests for rsp_util.c: claim keys (DESIGN.md invariant 3), hashes,
 * tokens, xs:dateTime parsing and the window/TTL rule (invariant 4).
 *
 * Expected hashes were computed independently with Python:
 *   b  = lambda x: base64.urlsafe_b64encode(x).rstrip(b'=').decode()
 *   h  = lambda x: b(hashlib.sha256(x).digest())
 *   claim key = prefix + "a:" + h(issuer + b"\0" + id)
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
/* Claim key (invariant 3)                                             */

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
/* Session key, short hash, random token                               */

START_TEST(test_session_key_known_answer)
{
    const char *k = rsp_session_key(pool, "rsp:", "session-1");

    ck_assert_str_eq(k, "rsp:s:hAl4KPwxqMjSkhDfSJAahd5_0BP2hrF7530b4py3qYs");
    ck_assert_str_ne(k, rsp_session_key(pool, "rsp:", "session-2"));
    ck_assert_str_eq(rsp_session_key(pool, NULL, "session-1"),
                     "s:hAl4KPwxqMjSkhDfSJAahd5_0BP2hrF7530b4py3qYs");
}
END_TEST

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

/* ------------------------------------------------------------------ */
/* rsp_window_check (invariant 4)                                      */
/*
 * The TTL comes from the assertion's own window and the SP's clock only.
 * rsp_window_check deliberately has no session-lifetime parameter: the
 * local session lifetime never enters the TTL (DESIGN.md invariant 4).
 * These tests pin the inputs it does have (times, now, skew, max window).
 */

#define SKEW 60
#define MAXW 3600
#define SEC(n) apr_time_from_sec(n)

static rsp_times_t times4(apr_time_t cnb, apr_time_t cnoa, apr_time_t snb,
                          apr_time_t snoa)
{
    rsp_times_t t;

    t.conditions_not_before = cnb;
    t.conditions_not_on_or_after = cnoa;
    t.scd_not_before = snb;
    t.scd_not_on_or_after = snoa;
    return t;
}

START_TEST(test_window_scd_earlier)
{
    rsp_times_t t = times4(T0 - SEC(5), T0 + SEC(600), 0, T0 + SEC(300));
    apr_time_t end = 0;
    apr_int64_t ttl = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(300));
    ck_assert_int_eq(ttl, 300000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_conditions_earlier)
{
    rsp_times_t t = times4(T0 - SEC(5), T0 + SEC(120), 0, T0 + SEC(300));
    apr_time_t end = 0;
    apr_int64_t ttl = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(120));
    ck_assert_int_eq(ttl, 120000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_only_one)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(200));

    /* only SCD NotOnOrAfter */
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(200));
    ck_assert_int_eq(ttl, 200000 + SKEW * 1000);

    /* only Conditions NotOnOrAfter */
    t = times4(0, T0 + SEC(250), 0, 0);
    end = 0;
    ttl = 0;
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(250));
    ck_assert_int_eq(ttl, 250000 + SKEW * 1000);
}
END_TEST

START_TEST(test_window_missing)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, 0);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_MISSING);
    /* NotBefore alone does not make a window */
    t = times4(T0 - SEC(5), 0, T0 - SEC(5), 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_MISSING);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_MISSING),
                     "window-missing");
}
END_TEST

START_TEST(test_window_expired)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0);

    /* now == end + skew: expired */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* well past */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(3600), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* skew 0: now == end is expired (NotOnOrAfter) */
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    /* the earlier of the two ends decides */
    t = times4(0, T0 + SEC(600), 0, T0);
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    t = times4(0, T0, 0, T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_EXPIRED);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_EXPIRED), "expired");
}
END_TEST

START_TEST(test_window_within_skew)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    rsp_times_t t = times4(0, 0, 0, T0);

    /* 30 s past the end, skew 60: still OK, ttl = -30000 + 60000 */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(30), SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0);
    ck_assert_int_eq(ttl, -30000 + SKEW * 1000);

    /* 1 us before end + skew: OK; remaining = -(60 s - 1 us), rounded up
     * to -59999 ms, + 60000 = 1 */
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(SKEW) - 1, SKEW, MAXW, &end,
                                      &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1);

    /* remaining = -1.5 ms rounds up to -1 ms */
    ck_assert_int_eq(rsp_window_check(&t, T0 + 1500, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, -1 + SKEW * 1000);

    /* exactly at the end: remaining 0 */
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, SKEW * 1000);
}
END_TEST

START_TEST(test_window_not_yet_valid_conditions)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* Conditions NotBefore at now + skew + 1 us: not yet valid */
    rsp_times_t t = times4(T0 + SEC(SKEW) + 1, T0 + SEC(600), 0, 0);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    /* exactly now + skew: valid */
    t = times4(T0 + SEC(SKEW), T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 600000 + SKEW * 1000);
    /* skew 0: NotBefore 1 us ahead fails, == now passes */
    t = times4(T0 + 1, T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    t = times4(T0, T0 + SEC(600), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_NOT_YET_VALID),
                     "not-yet-valid");
}
END_TEST

START_TEST(test_window_not_yet_valid_scd)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* SCD NotBefore at now + skew + 1 us: not yet valid */
    rsp_times_t t = times4(0, 0, T0 + SEC(SKEW) + 1, T0 + SEC(600));

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
    /* boundary: exactly now + skew is valid */
    t = times4(0, 0, T0 + SEC(SKEW), T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(600));
    ck_assert_int_eq(ttl, 600000 + SKEW * 1000);
    /* Conditions NotBefore fine, SCD NotBefore in the future: rejected */
    t = times4(T0 - SEC(10), T0 + SEC(600), T0 + SEC(SKEW + 5), T0 + SEC(600));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_NOT_YET_VALID);
}
END_TEST

START_TEST(test_window_too_long)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* remaining = max + 1 us */
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(MAXW) + 1);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_TOO_LONG);
    /* exactly max: OK */
    t = times4(0, 0, 0, T0 + SEC(MAXW));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(MAXW));
    ck_assert_int_eq(ttl, (apr_int64_t)MAXW * 1000 + SKEW * 1000);
    /* the shorter Conditions end decides: not too long */
    t = times4(0, T0 + SEC(MAXW), 0, T0 + SEC(10 * MAXW));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(end, T0 + SEC(MAXW));
    /* the window is never silently shortened: too long is rejected */
    t = times4(0, T0 + SEC(MAXW + 1), 0, 0);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_TOO_LONG);
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_TOO_LONG),
                     "window-too-long");
}
END_TEST

START_TEST(test_window_ttl_rounding)
{
    apr_time_t end = 0;
    apr_int64_t ttl = 0;
    /* remaining 299.0001 s -> 299001 ms (rounded up) + skew */
    rsp_times_t t = times4(0, 0, 0, T0 + SEC(299) + 100);

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 299001 + SKEW * 1000);

    /* remaining 299 s exactly: no rounding */
    t = times4(0, 0, 0, T0 + SEC(299));
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 299000 + SKEW * 1000);

    /* remaining 1 us -> 1 ms */
    t = times4(0, 0, 0, T0 + 1);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1 + SKEW * 1000);

    /* remaining 999 us -> 1 ms; 1001 us -> 2 ms */
    t = times4(0, 0, 0, T0 + 999);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1 + SKEW * 1000);
    t = times4(0, 0, 0, T0 + 1001);
    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 2 + SKEW * 1000);

    /* skew 0, remaining 1 us: ttl 1 ms, never 0 */
    t = times4(0, 0, 0, T0 + 1);
    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, 1);
}
END_TEST

START_TEST(test_window_skew_added_exactly)
{
    /* Widening the skew widens retention by exactly that much. */
    static const apr_int64_t skews[] = { 0, 1, 30, 60, 180, 300, 3600 };
    rsp_times_t t = times4(T0 - SEC(1), T0 + SEC(299) + 100, T0 - SEC(1),
                           T0 + SEC(500));
    apr_time_t end0 = 0;
    apr_int64_t ttl0 = 0;
    apr_size_t i;

    ck_assert_int_eq(rsp_window_check(&t, T0, 0, MAXW, &end0, &ttl0),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl0, 299001);
    for (i = 0; i < sizeof(skews) / sizeof(skews[0]); i++) {
        apr_time_t end = 0;
        apr_int64_t ttl = 0;

        ck_assert_int_eq(rsp_window_check(&t, T0, skews[i], MAXW, &end, &ttl),
                         RSP_WINDOW_OK);
        ck_assert_int_eq(end, end0);
        ck_assert_int_eq(ttl - ttl0, skews[i] * 1000);
    }
}
END_TEST

START_TEST(test_window_ttl_from_window_only)
{
    /* No session lifetime is passed in (see the comment above): the TTL is
     * the window's remaining time plus the skew, whatever the session
     * lifetime is configured to. An 8-hour window with a 24-hour maximum
     * gives an 8-hour (+ skew) TTL; the same window seen 1 h later gives a
     * TTL exactly 1 h shorter (SP's clock, relative value). */
    rsp_times_t t = times4(0, T0 + SEC(8 * 3600), 0, 0);
    apr_time_t end = 0;
    apr_int64_t ttl = 0, ttl_later = 0;

    ck_assert_int_eq(rsp_window_check(&t, T0, SKEW, 24 * 3600, &end, &ttl),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl, APR_INT64_C(8) * 3600 * 1000 + SKEW * 1000);
    ck_assert_int_eq(rsp_window_check(&t, T0 + SEC(3600), SKEW, 24 * 3600, &end,
                                      &ttl_later),
                     RSP_WINDOW_OK);
    ck_assert_int_eq(ttl - ttl_later, 3600 * 1000);
}
END_TEST

START_TEST(test_verdict_names)
{
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_OK), "ok");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_MISSING), "window-missing");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_EXPIRED), "expired");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_NOT_YET_VALID),
                     "not-yet-valid");
    ck_assert_str_eq(rsp_window_verdict_name(RSP_WINDOW_TOO_LONG),
                     "window-too-long");
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
    tcase_add_test(tc, test_session_key_known_answer);
    tcase_add_test(tc, test_short_hash);
    tcase_add_test(tc, test_random_token);
    suite_add_tcase(s, tc);

    tc = tcase_create("claim_key");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_claim_key_known_answer);
    tcase_add_test(tc, test_claim_key_cross_issuer);
    tcase_add_test(tc, test_claim_key_separator);
    tcase_add_test(tc, test_claim_key_fixed_length);
    tcase_add_test(tc, test_claim_key_charset);
    tcase_add_test(tc, test_claim_key_null_empty);
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

    tc = tcase_create("window");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_window_scd_earlier);
    tcase_add_test(tc, test_window_conditions_earlier);
    tcase_add_test(tc, test_window_only_one);
    tcase_add_test(tc, test_window_missing);
    tcase_add_test(tc, test_window_expired);
    tcase_add_test(tc, test_window_within_skew);
    tcase_add_test(tc, test_window_not_yet_valid_conditions);
    tcase_add_test(tc, test_window_not_yet_valid_scd);
    tcase_add_test(tc, test_window_too_long);
    tcase_add_test(tc, test_window_ttl_rounding);
    tcase_add_test(tc, test_window_skew_added_exactly);
    tcase_add_test(tc, test_window_ttl_from_window_only);
    tcase_add_test(tc, test_verdict_names);
    tcase_add_test(tc, test_ttl_seconds);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(util_suite());
}
