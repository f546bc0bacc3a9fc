/* Unit tests for rsp_pct.c: the percent-decoder under each rule its
 * readers use, and the escaper's two sets. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_pct.h"

static const char *dec(const char *s, int flags)
{
    return rsp_pct_decode(pool, s, strlen(s), flags, NULL);
}

START_TEST(test_hexval)
{
    ck_assert_int_eq(rsp_pct_hexval('0'), 0);
    ck_assert_int_eq(rsp_pct_hexval('9'), 9);
    ck_assert_int_eq(rsp_pct_hexval('a'), 10);
    ck_assert_int_eq(rsp_pct_hexval('F'), 15);
    ck_assert_int_eq(rsp_pct_hexval('g'), -1);
    ck_assert_int_eq(rsp_pct_hexval('G'), -1);
    ck_assert_int_eq(rsp_pct_hexval('/'), -1);
    ck_assert_int_eq(rsp_pct_hexval(':'), -1);
    ck_assert_int_eq(rsp_pct_hexval('\0'), -1);
}
END_TEST

/* Strict, '+' itself: store URLs' credentials and socket paths, session
 * values. */
START_TEST(test_strict)
{
    ck_assert_str_eq(dec("", 0), "");
    ck_assert_str_eq(dec("abc", 0), "abc");
    ck_assert_str_eq(dec("a+b", 0), "a+b");
    ck_assert_str_eq(dec("%41%62c%2f%2F", 0), "Abc//");
    ck_assert_str_eq(dec("%7e%C3%A9", 0), "~\xc3\xa9");
    ck_assert_str_eq(dec("%25%2541", 0), "%%41");
    ck_assert_ptr_null(dec("%", 0));
    ck_assert_ptr_null(dec("a%4", 0));
    ck_assert_ptr_null(dec("%zz", 0));
    ck_assert_ptr_null(dec("%4g", 0));
    ck_assert_ptr_null(dec("%g4", 0));
    ck_assert_ptr_null(dec("ok%00", 0));
    ck_assert_ptr_null(dec("%+1", 0));
    /* only n bytes are read: an escape cut by n is a bad one */
    ck_assert_ptr_null(rsp_pct_decode(pool, "%41", 2, 0, NULL));
    ck_assert_str_eq(rsp_pct_decode(pool, "%41%42", 3, 0, NULL), "A");
    ck_assert_str_eq(rsp_pct_decode(pool, "ab", 0, 0, NULL), "");
}
END_TEST

/* The form rule: queries, forms, claims and pending requests. */
START_TEST(test_plus)
{
    apr_size_t n = 99;

    ck_assert_str_eq(dec("a+b%20c", RSP_PCT_PLUS), "a b c");
    ck_assert_str_eq(dec("+", RSP_PCT_PLUS), " ");
    ck_assert_str_eq(dec("++%2B+", RSP_PCT_PLUS), "  + ");
    ck_assert_str_eq(dec("%2Babc%2F%2F+d+%3D", RSP_PCT_PLUS), "+abc// d =");
    ck_assert_ptr_null(dec("a+%zz", RSP_PCT_PLUS));
    ck_assert_ptr_null(dec("+%00+", RSP_PCT_PLUS));
    ck_assert_ptr_null(dec("%+20", RSP_PCT_PLUS));
    ck_assert_str_eq(rsp_pct_decode(pool, "a+%41+", 6, RSP_PCT_PLUS, &n),
                     "a A ");
    ck_assert_uint_eq(n, 4);
}
END_TEST

/* Lenient: how the guard reads what other parsers may make of a text. */
START_TEST(test_lenient)
{
    const char *in = "a+b%41%zz%4%00c%2Bd";
    apr_size_t n = 0;
    char *out;

    ck_assert_str_eq(dec(in, RSP_PCT_LENIENT), "a+bA%zz%4%00c+d");
    ck_assert_str_eq(dec(in, RSP_PCT_LENIENT | RSP_PCT_PLUS),
                     "a bA%zz%4%00c+d");
    /* with RSP_PCT_NUL the text ends where %00 was */
    out = rsp_pct_decode(pool, in, strlen(in), RSP_PCT_LENIENT | RSP_PCT_NUL,
                         &n);
    ck_assert_str_eq(out, "a+bA%zz%4");
    ck_assert_uint_eq(n, 13);
    ck_assert_str_eq(out + 10, "c+d");
    /* only n bytes are read */
    ck_assert_str_eq(rsp_pct_decode(pool, "%41%42", 3, RSP_PCT_LENIENT, NULL),
                     "A");
    ck_assert_str_eq(rsp_pct_decode(pool, "%41%42", 5, RSP_PCT_LENIENT, NULL),
                     "A%4");
    ck_assert_str_eq(dec("%", RSP_PCT_LENIENT), "%");
    ck_assert_str_eq(dec("%%41", RSP_PCT_LENIENT), "%A");
    ck_assert_str_eq(dec("%2%41", RSP_PCT_LENIENT), "%2A");
}
END_TEST

START_TEST(test_escape_sets)
{
    ck_assert_str_eq(rsp_pct_escape(pool, "a b&c", RSP_PCT_UNRESERVED),
                     "a%20b%26c");
    ck_assert_str_eq(rsp_pct_escape(pool, "~-._AZaz09", RSP_PCT_UNRESERVED),
                     "~-._AZaz09");
    ck_assert_str_eq(rsp_pct_escape(pool, "a+b/c:d=e%", RSP_PCT_UNRESERVED),
                     "a%2Bb%2Fc%3Ad%3De%25");
    ck_assert_str_eq(rsp_pct_escape(pool, "a+b/c:d=e%", RSP_PCT_MINIMAL),
                     "a+b/c:d%3De%25");
    ck_assert_str_eq(rsp_pct_escape(pool, "x y&\x7f\x01\xc3\xa9", RSP_PCT_MINIMAL),
                     "x%20y%26%7F%01%C3%A9");
    ck_assert_str_eq(rsp_pct_escape(pool, "", RSP_PCT_MINIMAL), "");
}
END_TEST

/* Every byte but NUL, escaped under either set, decodes back: strictly,
 * and, for UNRESERVED (which leaves no '+'), under the form rule too;
 * MINIMAL leaves '+' as it is, so its records are read without it. */
START_TEST(test_round_trip)
{
    char all[256];
    const char *e;
    int c;

    for (c = 1; c < 256; c++) {
        all[c - 1] = (char)c;
    }
    all[255] = '\0';
    e = rsp_pct_escape(pool, all, RSP_PCT_UNRESERVED);
    ck_assert_str_eq(dec(e, 0), all);
    ck_assert_str_eq(dec(e, RSP_PCT_PLUS), all);
    ck_assert_ptr_null(strchr(e, '+'));
    e = rsp_pct_escape(pool, all, RSP_PCT_MINIMAL);
    ck_assert_str_eq(dec(e, 0), all);
    ck_assert_ptr_nonnull(strchr(e, '+'));
    for (c = 1; c < 256; c++) {
        ck_assert_int_eq(rsp_pct_escapes(RSP_PCT_MINIMAL, (unsigned char)c),
                         c <= 0x20 || c >= 0x7f || c == '%' || c == '&'
                         || c == '=');
    }
}
END_TEST

static Suite *pct_suite(void)
{
    Suite *s = suite_create("rsp_pct");
    TCase *tc = tcase_create("pct");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_hexval);
    tcase_add_test(tc, test_strict);
    tcase_add_test(tc, test_plus);
    tcase_add_test(tc, test_lenient);
    tcase_add_test(tc, test_escape_sets);
    tcase_add_test(tc, test_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(pct_suite());
}
