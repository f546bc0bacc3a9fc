/* Unit tests for rsp_md_schedule.c: the xs:duration parser, a root's
 * cacheDuration, and when a metadata source is refreshed next. */
#include <string.h>

#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_unit.h"

#define ERR_S(e) ((e) ? (e) : "(null)")

static int contains(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

START_TEST(test_duration_parse)
{
    static const struct {
        const char *in;
        apr_int64_t s;   /* -1: refused */
    } cases[] = {
        {"PT6H", 6 * 3600},
        {"P1D", 86400},
        {" PT30M\n", 1800},
        {"PT0S", 0},
        {"PT1.5S", 1},
        {"P1Y2M3DT4H5M6S", 365 * 86400 + 60 * 86400 + 3 * 86400 + 4 * 3600 + 5 * 60 + 6},
        {"PT36H", 36 * 3600},
        {"P0Y", 0},
        {"PT100000S", 100000},
        {"P100Y", (apr_int64_t)100 * 365 * 86400},
        {"P101Y", -1},                      /* over 100 years */
        {"PT9223372036854775807S", -1},     /* overflow: more than the bound */
        {"PT99999999999999999999S", -1},    /* overflow: more than 64 bits */
        {"P36500000000000000D", -1},
        {"", -1},
        {"P", -1},
        {"PT", -1},
        {"P1DT", -1},
        {"-PT6H", -1},
        {"6H", -1},
        {"PT6", -1},
        {"PT6X", -1},
        {"P1H", -1},                        /* H without T */
        {"PT1D", -1},                       /* D after T */
        {"P1D2Y", -1},                      /* out of order */
        {"PT1M1H", -1},
        {"P1DD", -1},
        {"P1.5D", -1},                      /* fractions of seconds only */
        {"PT.5S", -1},
        {"PT1.S", -1},
        {"PT1H T1M", -1},
        {"PT1HT1M", -1},
        {"PT6H junk", -1},
        {"pt6h", -1},
        {"P+1D", -1},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        apr_int64_t s = -42;
        const char *err = NULL;
        apr_status_t rv = rsp_md_duration_parse(cases[i].in, &s, &err);

        if (cases[i].s >= 0) {
            ck_assert_msg(rv == APR_SUCCESS, "\"%s\": %s", cases[i].in, ERR_S(err));
            ck_assert_msg(s == cases[i].s, "\"%s\": %lld, expected %lld", cases[i].in,
                          (long long)s, (long long)cases[i].s);
        }
        else {
            ck_assert_msg(rv == APR_EINVAL, "\"%s\" accepted: %lld", cases[i].in,
                          (long long)s);
            ck_assert_msg(err && *err, "\"%s\": no reason", cases[i].in);
            ck_assert_msg(s == -42, "\"%s\": result set", cases[i].in);
        }
    }
    {
        apr_int64_t s;
        const char *err;
        ck_assert_int_eq(rsp_md_duration_parse(NULL, &s, &err), APR_EINVAL);
        ck_assert_int_eq(rsp_md_duration_parse("P101Y", &s, &err), APR_EINVAL);
        ck_assert(contains(err, "100 years"));
        ck_assert_int_eq(rsp_md_duration_parse("-P1D", &s, &err), APR_EINVAL);
        ck_assert(contains(err, "negative"));
    }
}
END_TEST

START_TEST(test_cache_duration_attribute)
{
    static const char ns[] = "xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\"";
    const char *err, *md;

    md = apr_psprintf(pool, "<?xml version=\"1.0\"?><!-- c --><md:EntitiesDescriptor %s "
                      "cacheDuration='P1D'><md:EntityDescriptor cacheDuration=\"PT1S\"/>"
                      "</md:EntitiesDescriptor>", ns);
    ck_assert_int_eq(rsp_md_cache_duration(pool, md, strlen(md), &err), 86400);
    ck_assert_ptr_null(err);
    /* a character reference is the same value */
    md = apr_psprintf(pool, "<md:EntitiesDescriptor %s cacheDuration=\"&#80;T6H\"/>", ns);
    ck_assert_int_eq(rsp_md_cache_duration(pool, md, strlen(md), &err), 6 * 3600);
    /* only the root's */
    md = apr_psprintf(pool, "<md:EntitiesDescriptor %s><md:EntityDescriptor "
                      "cacheDuration=\"PT1S\"/></md:EntitiesDescriptor>", ns);
    ck_assert_int_eq(rsp_md_cache_duration(pool, md, strlen(md), &err), -1);
    ck_assert_ptr_null(err);
    /* a bad one is ignored, and says so */
    md = apr_psprintf(pool, "<md:EntitiesDescriptor %s cacheDuration=\"-PT6H\"/>", ns);
    ck_assert_int_eq(rsp_md_cache_duration(pool, md, strlen(md), &err), -1);
    ck_assert(contains(err, "cacheDuration \"-PT6H\" ignored"));
    md = apr_psprintf(pool, "<md:EntitiesDescriptor %s cacheDuration=\"PT99999999999999999999S\"/>", ns);
    ck_assert_int_eq(rsp_md_cache_duration(pool, md, strlen(md), &err), -1);
    ck_assert(contains(err, "too large"));
    ck_assert_int_eq(rsp_md_cache_duration(pool, "<x", 2, &err), -1);
}
END_TEST

START_TEST(test_next_refresh)
{
    apr_time_t now = apr_time_now(), far = now + apr_time_from_sec(30 * 86400);

    /* the interval, or cacheDuration when shorter */
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 0, 0, now), 3600);
    ck_assert_int_eq(rsp_md_next_refresh(3600, 6 * 3600, 0, far, now), 3600);
    ck_assert_int_eq(rsp_md_next_refresh(4 * 3600, 1800, 0, far, now), 1800);
    ck_assert_int_eq(rsp_md_next_refresh(0, -1, 0, 0, now), RSP_MD_REFRESH_DEFAULT_S);
    /* bounded: not below a minute, not above a day */
    /* an interval under a minute, asked for, is kept */
    ck_assert_int_eq(rsp_md_next_refresh(10, -1, 0, 0, now), 10);
    ck_assert_int_eq(rsp_md_next_refresh(10, 0, 3, 0, now), 10);
    ck_assert_int_eq(rsp_md_next_refresh(3600, 0, 0, far, now), RSP_MD_REFRESH_MIN_S);
    ck_assert_int_eq(rsp_md_next_refresh(7 * 86400, -1, 0, far, now), RSP_MD_REFRESH_MAX_S);
    /* half the time left before validUntil */
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 0, now + apr_time_from_sec(1200), now),
                     600);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 0, now - apr_time_from_sec(5), now),
                     RSP_MD_REFRESH_MIN_S);
    /* after failures: 1, 2, 4, 8 minutes..., never later than the schedule */
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 1, far, now), 60);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 2, far, now), 120);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 3, far, now), 240);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 6, far, now), 1920);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 7, far, now), 3600);
    ck_assert_int_eq(rsp_md_next_refresh(3600, -1, 1000000, far, now), 3600);
    ck_assert_int_eq(rsp_md_next_refresh(3600, 300, 5, far, now), 300);
}
END_TEST

static Suite *schedule_suite(void)
{
    Suite *s = suite_create("rsp_md_schedule");
    TCase *tc = tcase_create("schedule");

    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_duration_parse);
    tcase_add_test(tc, test_cache_duration_attribute);
    tcase_add_test(tc, test_next_refresh);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return rsp_unit_run(schedule_suite());
}
