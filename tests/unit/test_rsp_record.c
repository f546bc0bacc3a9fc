/* Unit tests for rsp_record.c: the records' encoder, field iterator and
 * lookup. */
#include <string.h>

#include "rsp_unit.h"
#include <apr_strings.h>

#include "rsp_record.h"

static const char *get(const char *rec, const char *name, const char **why)
{
    *why = NULL;
    return rsp_record_get(pool, RSP_RECORD_FORM, rec, name, why);
}

START_TEST(test_encode)
{
    const rsp_record_field_t f[] = {
        {"v", "1"}, {"a", "x y&z=w+%"}, {"gone", NULL}, {"b", ""},
        {"c", "caf\xc3\xa9~-._"}
    };

    ck_assert_str_eq(rsp_record_encode(pool, RSP_RECORD_FORM, f, 5),
                     "v=1&a=x%20y%26z%3Dw%2B%25&b=&c=caf%C3%A9~-._");
    ck_assert_str_eq(rsp_record_encode(pool, RSP_RECORD_SESSION, f, 5),
                     "v=1&a=x%20y%26z%3Dw+%25&b=&c=caf%C3%A9~-._");
    /* no field, or none with a value: "" */
    ck_assert_str_eq(rsp_record_encode(pool, RSP_RECORD_FORM, f, 0), "");
    ck_assert_str_eq(rsp_record_encode(pool, RSP_RECORD_FORM, f + 2, 1), "");
    /* the first field with a value has no '&' before it */
    ck_assert_str_eq(rsp_record_encode(pool, RSP_RECORD_FORM, f + 2, 2), "b=");
}
END_TEST

START_TEST(test_number)
{
    ck_assert_str_eq(rsp_record_number(pool, 0), "0");
    ck_assert_str_eq(rsp_record_number(pool, 7), "7");
    ck_assert_str_eq(rsp_record_number(pool, -42), "-42");
    ck_assert_str_eq(rsp_record_number(pool, APR_INT64_C(1700000000000000)),
                     "1700000000000000");
    ck_assert_str_eq(rsp_record_number(pool, APR_INT64_MAX),
                     "9223372036854775807");
    ck_assert_str_eq(rsp_record_number(pool, APR_INT64_MIN),
                     "-9223372036854775808");
}
END_TEST

static const char *pieces(const char *rec, apr_size_t len)
{
    rsp_record_iter_t it;
    rsp_record_piece_t f;
    const char *out = "";

    rsp_record_iter_init(&it, rec, len);
    while (rsp_record_next(&it, &f)) {
        out = apr_psprintf(pool, "%s[%.*s%s%.*s]", out, (int)f.name_len,
                           f.name, f.value ? "=" : "",
                           (int)f.value_len, f.value ? f.value : "");
    }
    return out;
}

START_TEST(test_iterate)
{
    ck_assert_str_eq(pieces("", 0), "");
    ck_assert_str_eq(pieces("a=1&b=2", 7), "[a=1][b=2]");
    /* a trailing '&' ends the record; an empty piece elsewhere counts */
    ck_assert_str_eq(pieces("a=1&", 4), "[a=1]");
    ck_assert_str_eq(pieces("&", 1), "[]");
    ck_assert_str_eq(pieces("a&&b=", 5), "[a][][b=]");
    /* the name ends at the first '=' */
    ck_assert_str_eq(pieces("a=b=c&=d", 8), "[a=b=c][=d]");
    /* only len bytes */
    ck_assert_str_eq(pieces("a=1&b=2", 5), "[a=1][b]");
    ck_assert_str_eq(pieces(NULL, 0), "");
}
END_TEST

START_TEST(test_unescape)
{
    rsp_record_iter_t it;
    rsp_record_piece_t f;

    rsp_record_iter_init(&it, "x=a+b%2B&y&z=%zz", 16);
    ck_assert(rsp_record_next(&it, &f));
    ck_assert(rsp_record_is(&f, "x"));
    ck_assert(!rsp_record_is(&f, "xy"));
    ck_assert(!rsp_record_is(&f, ""));
    ck_assert_str_eq(rsp_record_unescape(pool, RSP_RECORD_FORM, &f), "a b+");
    ck_assert_str_eq(rsp_record_unescape(pool, RSP_RECORD_SESSION, &f), "a+b+");
    ck_assert(rsp_record_next(&it, &f));
    ck_assert(rsp_record_is(&f, "y"));
    ck_assert_ptr_null(f.value);
    ck_assert_str_eq(rsp_record_unescape(pool, RSP_RECORD_FORM, &f), "");
    ck_assert(rsp_record_next(&it, &f));
    ck_assert_ptr_null(rsp_record_unescape(pool, RSP_RECORD_FORM, &f));
    ck_assert_ptr_null(rsp_record_unescape(pool, RSP_RECORD_SESSION, &f));
    ck_assert(!rsp_record_next(&it, &f));
}
END_TEST

START_TEST(test_lookup)
{
    static const char *const names[] = {"v", "r", "t", "x", "d", "bad"};
    const char *vals[6], *why = NULL;

    rsp_record_lookup(pool, RSP_RECORD_FORM,
                      "v=1&r=a%20b&t=&d=1&d=2&bad=%0&rr=9&flag", 39, names, 6,
                      vals, &why);
    ck_assert_str_eq(vals[0], "1");
    ck_assert_str_eq(vals[1], "a b");
    ck_assert_str_eq(vals[2], "");
    ck_assert_ptr_null(vals[3]);
    ck_assert_ptr_null(vals[4]);
    ck_assert_ptr_null(vals[5]);
    /* the first problem in the names' order */
    ck_assert_str_eq(why, "d given twice");
    why = NULL;
    rsp_record_lookup(pool, RSP_RECORD_FORM, "bad=%0&d=1", 10, names, 6, vals,
                      &why);
    ck_assert_str_eq(why, "bad escape in bad");
    ck_assert_str_eq(vals[4], "1");

    ck_assert_str_eq(get("a=1&b=2", "b", &why), "2");
    ck_assert_ptr_null(why);
    ck_assert_str_eq(get("flag&x=1", "flag", &why), "");
    ck_assert_ptr_null(get("ab=1", "a", &why));
    ck_assert_ptr_null(why);
    ck_assert_ptr_null(get(NULL, "a", &why));
    ck_assert_ptr_null(get("v=1&r=a&r=b", "r", &why));
    ck_assert_str_eq(why, "r given twice");
    ck_assert_ptr_null(get("a=x%00", "a", &why));
    ck_assert_str_eq(why, "bad escape in a");
    /* the name "" is that of an empty piece, or of one starting with '=' */
    ck_assert_str_eq(get("a=1&=x", "", &why), "x");
    ck_assert_ptr_null(get("a=1&&=x", "", &why));
    ck_assert_str_eq(why, " given twice");
    /* more names than the lookup keeps on its stack */
    {
        const char *many[20], *got[20];
        const char *rec = "";
        int i;
        for (i = 0; i < 20; i++) {
            many[i] = apr_psprintf(pool, "k%d", i);
            rec = apr_psprintf(pool, "%s%sk%d=%d", rec, i ? "&" : "", 19 - i, i);
        }
        rsp_record_lookup(pool, RSP_RECORD_FORM, rec, strlen(rec), many, 20,
                          got, NULL);
        for (i = 0; i < 20; i++) {
            ck_assert_str_eq(got[i], apr_psprintf(pool, "%d", 19 - i));
        }
    }
}
END_TEST

/* What the encoder writes, the lookup reads back, under either kind. */
START_TEST(test_round_trip)
{
    static const char *const in[] = {"plain", "a b&c=d%e", "host:8443",
                                     "https://app.example/x?y=1&z=2",
                                     "caf\xc3\xa9 +", "~-._", "", "%00"};
    static const char *const names[] = {"v", "x", "y"};
    apr_size_t i;
    int k;

    for (k = 0; k < 2; k++) {
        for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
            const rsp_record_field_t f[] = {{"v", "1"}, {"x", in[i]},
                                            {"y", "2"}};
            const char *rec = rsp_record_encode(pool, (rsp_record_kind_t)k, f, 3);
            const char *vals[3];
            rsp_record_lookup(pool, (rsp_record_kind_t)k, rec, strlen(rec),
                              names, 3, vals, NULL);
            ck_assert_str_eq(vals[0], "1");
            ck_assert_str_eq(vals[1], in[i]);
            ck_assert_str_eq(vals[2], "2");
        }
    }
}
END_TEST

static Suite *record_suite(void)
{
    Suite *s = suite_create("rsp_record");
    TCase *tc = tcase_create("record");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_encode);
    tcase_add_test(tc, test_number);
    tcase_add_test(tc, test_iterate);
    tcase_add_test(tc, test_unescape);
    tcase_add_test(tc, test_lookup);
    tcase_add_test(tc, test_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(record_suite());
}
