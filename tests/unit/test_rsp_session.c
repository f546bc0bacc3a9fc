/* Unit tests for rsp_session.c: the session record codec. */
#include <stdlib.h>
#include <string.h>

#include "rsp_unit.h"
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>

#include "rsp_session.h"

/* A valid record with every field set; tests then change one thing. */
#define GOOD "v=1&sp=https%3A//sp.example.org&iss=https%3A//idp.example.org" \
             "&nid=alice&ct=1796032800000000&exp=1796036400000000"

static apr_status_t decode_str(rsp_session_t **out, const char *data)
{
    return rsp_session_decode(out, pool, data, strlen(data));
}

static void expect_reject(const char *data)
{
    rsp_session_t *s = NULL;

    ck_assert_msg(decode_str(&s, data) == APR_EINVAL, "accepted \"%s\"", data);
    ck_assert_msg(s == NULL, "*out written for \"%s\"", data);
}

static void assert_same(const rsp_session_t *a, const rsp_session_t *b)
{
    ck_assert_str_eq(a->sp, b->sp);
    ck_assert_str_eq(a->issuer, b->issuer);
    ck_assert_str_eq(a->name_id, b->name_id);
    if (a->name_id_format) {
        ck_assert_pstr_eq(a->name_id_format, b->name_id_format);
    }
    else {
        ck_assert_ptr_null(b->name_id_format);
    }
    if (a->session_index) {
        ck_assert_pstr_eq(a->session_index, b->session_index);
    }
    else {
        ck_assert_ptr_null(b->session_index);
    }
    if (a->claim_hash) {
        ck_assert_pstr_eq(a->claim_hash, b->claim_hash);
    }
    else {
        ck_assert_ptr_null(b->claim_hash);
    }
    ck_assert_int_eq(a->created, b->created);
    ck_assert_int_eq(a->expires, b->expires);
}

/* The encoded form has no raw byte that could break the framing or a
 * store protocol line. */
static void assert_clean_encoding(const char *enc)
{
    const unsigned char *c;

    for (c = (const unsigned char *)enc; *c; c++) {
        ck_assert_msg(*c > 0x20 && *c < 0x7f, "raw byte 0x%02x in \"%s\"", *c,
                      enc);
    }
}

START_TEST(test_session_key_known_answer)
{
    const char *k = rsp_session_key(pool, "rsp:", "session-1");

    ck_assert_str_eq(k, "rsp:s:hAl4KPwxqMjSkhDfSJAahd5_0BP2hrF7530b4py3qYs");
    ck_assert_str_ne(k, rsp_session_key(pool, "rsp:", "session-2"));
    ck_assert_str_eq(rsp_session_key(pool, NULL, "session-1"),
                     "s:hAl4KPwxqMjSkhDfSJAahd5_0BP2hrF7530b4py3qYs");
}
END_TEST

START_TEST(test_round_trip_all_fields)
{
    rsp_session_t in, *out = NULL;
    const char *enc;

    memset(&in, 0, sizeof(in));
    in.sp = "https://sp.example.org/saml?x=1&y=2";
    in.issuer = "https://idp.example.org/idp/shibboleth#frag=%41";
    in.name_id = "J\xc3\xa9r\xc3\xb4me O'Brien & co = 100% \xe2\x82\xac\n"
                 "line two\r\n\ttabbed";
    in.name_id_format = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
    in.session_index = "_idx with spaces&amp;=%%20";
    in.claim_hash = "V_d4lG8FiaQe";
    in.created = APR_INT64_C(1796032800123456);
    in.expires = APR_INT64_C(1796061600000001);

    enc = rsp_session_encode(pool, &in);
    ck_assert_ptr_nonnull(enc);
    ck_assert_msg(strncmp(enc, "v=1&", 4) == 0, "no version first: %s", enc);
    assert_clean_encoding(enc);
    /* exactly the 9 fields, separated by 8 '&' (values' '&' are escaped) */
    {
        const char *c;
        int amps = 0;
        for (c = enc; *c; c++) {
            amps += *c == '&';
        }
        ck_assert_int_eq(amps, 8);
    }

    ck_assert_int_eq(rsp_session_decode(&out, pool, enc, strlen(enc)),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(out);
    assert_same(&in, out);
}
END_TEST

START_TEST(test_attributes_round_trip)
{
    rsp_session_t in, *out = NULL;
    apr_array_header_t *attrs = apr_array_make(pool, 4, sizeof(rsp_attribute_t));
    static const char *pairs[][2] = {
        {"group", "staff"},
        {"group", "admins & friends=yes"},
        {"urn:oid:0.9.2342.19200300.100.1.3", "alice@example.org"},
        {"display name", "Al\303\257ce\nNewline%"},
    };
    const char *enc;
    int i;

    for (i = 0; i < 4; i++) {
        rsp_attribute_t *a = apr_array_push(attrs);
        a->name = pairs[i][0];
        a->value = pairs[i][1];
    }
    memset(&in, 0, sizeof(in));
    in.sp = "https://sp";
    in.issuer = "https://idp";
    in.name_id = "alice";
    in.created = 1;
    in.expires = 2;
    in.attributes = attrs;
    enc = rsp_session_encode(pool, &in);
    ck_assert_int_eq(rsp_session_decode(&out, pool, enc, strlen(enc)), APR_SUCCESS);
    ck_assert_ptr_nonnull(out->attributes);
    ck_assert_int_eq(out->attributes->nelts, 4);
    for (i = 0; i < 4; i++) {
        rsp_attribute_t *a = &APR_ARRAY_IDX(out->attributes, i, rsp_attribute_t);
        ck_assert_str_eq(a->name, pairs[i][0]);   /* order kept */
        ck_assert_str_eq(a->value, pairs[i][1]);
    }
}
END_TEST

START_TEST(test_attributes_malformed)
{
    /* a value without its name, a name without its value, two names */
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&av=x");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&an=g");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&an=g&an=h&av=x");
}
END_TEST

START_TEST(test_round_trip_optional_absent)
{
    rsp_session_t in, *out = NULL;
    const char *enc;

    memset(&in, 0, sizeof(in));
    in.sp = "sp";
    in.issuer = "idp";
    in.name_id = "bob";
    in.created = 1;
    in.expires = 2;

    enc = rsp_session_encode(pool, &in);
    ck_assert_str_eq(enc, "v=1&sp=sp&iss=idp&nid=bob&ct=1&exp=2");
    ck_assert_int_eq(rsp_session_decode(&out, pool, enc, strlen(enc)),
                     APR_SUCCESS);
    ck_assert_ptr_null(out->name_id_format);
    ck_assert_ptr_null(out->session_index);
    ck_assert_ptr_null(out->claim_hash);
    assert_same(&in, out);

    /* one optional field present, the others stay NULL */
    in.session_index = "_s1";
    enc = rsp_session_encode(pool, &in);
    ck_assert_int_eq(rsp_session_decode(&out, pool, enc, strlen(enc)),
                     APR_SUCCESS);
    ck_assert_ptr_null(out->name_id_format);
    ck_assert_str_eq(out->session_index, "_s1");
    ck_assert_ptr_null(out->claim_hash);
}
END_TEST

START_TEST(test_encode_escapes)
{
    rsp_session_t in;
    const char *enc;

    memset(&in, 0, sizeof(in));
    in.sp = "a&b=c%d e";
    in.issuer = "\xc3\xa9";
    in.name_id = "x\ny";
    in.created = 10;
    in.expires = 20;

    enc = rsp_session_encode(pool, &in);
    ck_assert_str_eq(enc,
                     "v=1&sp=a%26b%3Dc%25d%20e&iss=%C3%A9&nid=x%0Ay&ct=10&exp=20");
}
END_TEST

START_TEST(test_decode_known_record)
{
    rsp_session_t *s = NULL;

    ck_assert_int_eq(decode_str(&s, GOOD), APR_SUCCESS);
    ck_assert_str_eq(s->sp, "https://sp.example.org");
    ck_assert_str_eq(s->issuer, "https://idp.example.org");
    ck_assert_str_eq(s->name_id, "alice");
    ck_assert_int_eq(s->created, APR_INT64_C(1796032800000000));
    ck_assert_int_eq(s->expires, APR_INT64_C(1796036400000000));
    ck_assert_ptr_null(s->name_id_format);
    ck_assert_ptr_null(s->session_index);
    ck_assert_ptr_null(s->claim_hash);

    /* order does not matter; lower-case escapes decode too */
    ck_assert_int_eq(decode_str(&s, "exp=5&ct=4&nid=n%c3%a9&iss=i&sp=s&v=1"),
                     APR_SUCCESS);
    ck_assert_str_eq(s->name_id, "n\xc3\xa9");
    ck_assert_int_eq(s->created, 4);
    ck_assert_int_eq(s->expires, 5);

    /* only the first len bytes count */
    ck_assert_int_eq(rsp_session_decode(&s, pool, GOOD "&sp=other",
                                        strlen(GOOD)),
                     APR_SUCCESS);
    ck_assert_str_eq(s->sp, "https://sp.example.org");
}
END_TEST

START_TEST(test_decode_unknown_fields_ignored)
{
    rsp_session_t *s = NULL;

    ck_assert_int_eq(decode_str(&s, "future=x%20y&" GOOD "&zz=&new=1%3D2"
                                    "&nidf=fmt&ch=abc"),
                     APR_SUCCESS);
    ck_assert_str_eq(s->sp, "https://sp.example.org");
    ck_assert_str_eq(s->issuer, "https://idp.example.org");
    ck_assert_str_eq(s->name_id, "alice");
    ck_assert_str_eq(s->name_id_format, "fmt");
    ck_assert_ptr_null(s->session_index);
    ck_assert_str_eq(s->claim_hash, "abc");
    ck_assert_int_eq(s->created, APR_INT64_C(1796032800000000));
}
END_TEST

START_TEST(test_decode_missing_mandatory)
{
    expect_reject("");
    expect_reject("v=1");
    /* each mandatory field left out in turn */
    expect_reject("sp=s&iss=i&nid=n&ct=1&exp=2");  /* v */
    expect_reject("v=1&iss=i&nid=n&ct=1&exp=2");   /* sp */
    expect_reject("v=1&sp=s&nid=n&ct=1&exp=2");    /* iss */
    expect_reject("v=1&sp=s&iss=i&nid=n&exp=2");   /* ct */
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1");    /* exp */
    /* empty name_id */
    expect_reject("v=1&sp=s&iss=i&nid=&ct=1&exp=2");
    /* and the complete record is accepted */
    {
        rsp_session_t *s = NULL;
        ck_assert_int_eq(decode_str(&s, "v=1&sp=s&iss=i&nid=n&ct=1&exp=2"),
                         APR_SUCCESS);
    }
}
END_TEST

/* A user named by an attribute (ReplaySPUserAttribute), the IdP having
 * sent no NameID: the session has none, and round-trips so. */
START_TEST(test_session_without_name_id)
{
    rsp_session_t in, *out = NULL;
    const char *enc;

    memset(&in, 0, sizeof(in));
    in.sp = "sp";
    in.issuer = "idp";
    in.created = 1;
    in.expires = 2;
    in.attributes = apr_array_make(pool, 1, sizeof(rsp_attribute_t));
    ((rsp_attribute_t *)apr_array_push(in.attributes))->name = "upn";
    APR_ARRAY_IDX(in.attributes, 0, rsp_attribute_t).value = "alice@example.org";
    enc = rsp_session_encode(pool, &in);
    ck_assert_ptr_null(strstr(enc, "nid="));
    ck_assert_int_eq(decode_str(&out, enc), APR_SUCCESS);
    ck_assert_ptr_null(out->name_id);
    ck_assert_str_eq(out->issuer, "idp");
    ck_assert_int_eq(out->attributes->nelts, 1);
    ck_assert_int_eq(decode_str(&out, "v=1&sp=s&iss=i&ct=1&exp=2"), APR_SUCCESS);
    ck_assert_ptr_null(out->name_id);
}
END_TEST

/* The user a session names: an attribute's first value, or the NameID,
 * qualified with both entity IDs when asked (a NameID is unique per IdP
 * only). */
START_TEST(test_session_user)
{
    rsp_session_t s;
    rsp_attribute_t *a;

    memset(&s, 0, sizeof(s));
    s.sp = "https://sp.example.org/saml";
    s.issuer = "https://idp.example.org";
    s.name_id = "a7f3";
    s.attributes = apr_array_make(pool, 2, sizeof(rsp_attribute_t));
    a = apr_array_push(s.attributes);
    a->name = "mail";
    a->value = "alice@example.org";
    a = apr_array_push(s.attributes);
    a->name = "mail";
    a->value = "second@example.org";
    a = apr_array_push(s.attributes);
    a->name = "empty";
    a->value = "";
    ck_assert_str_eq(rsp_session_user(pool, &s, NULL, 0), "a7f3");
    ck_assert_str_eq(rsp_session_user(pool, &s, NULL, 1),
                     "https://idp.example.org!https://sp.example.org/saml!a7f3");
    /* an attribute names the user as it is, qualified or not */
    ck_assert_str_eq(rsp_session_user(pool, &s, "mail", 1), "alice@example.org");
    ck_assert_ptr_null(rsp_session_user(pool, &s, "uid", 0));
    ck_assert_ptr_null(rsp_session_user(pool, &s, "empty", 0));
    s.name_id = NULL;
    ck_assert_ptr_null(rsp_session_user(pool, &s, NULL, 0));
    ck_assert_ptr_null(rsp_session_user(pool, &s, NULL, 1));
    ck_assert_str_eq(rsp_session_user(pool, &s, "mail", 0), "alice@example.org");
}
END_TEST

START_TEST(test_decode_bad_version)
{
    expect_reject("v=2&sp=s&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=0&sp=s&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=&sp=s&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=x&sp=s&iss=i&nid=n&ct=1&exp=2");
    /* a later v=2 overrides */
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&v=2");
}
END_TEST

START_TEST(test_decode_bad_escapes)
{
    expect_reject("v=1&sp=s%zz&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=1&sp=s&iss=i%4&nid=n&ct=1&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n%&ct=1&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&sidx=%");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&nidf=%g0");
    /* an escaped NUL would truncate the value */
    expect_reject("v=1&sp=s&iss=i&nid=n%00x&ct=1&exp=2");
    /* a field without '=' */
    expect_reject("v=1&sp=s&iss=i&nid=n&junk&ct=1&exp=2");
}
END_TEST

START_TEST(test_decode_embedded_nul)
{
    static const char rec[] = "v=1&sp=s&iss=i&nid=n\0evil&ct=1&exp=2";
    static const char rec2[] = "v=1&sp=s&iss=i&nid=n&ct=1&exp=2\0";
    rsp_session_t *s = NULL;

    ck_assert_int_eq(rsp_session_decode(&s, pool, rec, sizeof(rec) - 1),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_session_decode(&s, pool, rec2, sizeof(rec2) - 1),
                     APR_EINVAL);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_decode_bad_times)
{
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=abc&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=abc");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=12abc&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2x");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1.5&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=0&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=0");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=-1&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=-2");
}
END_TEST

/* The record is "not well-formed" when a time does not fit an apr_time_t:
 * decoding must not silently clamp it (strtoll saturates at INT64_MAX). */
START_TEST(test_decode_time_overflow)
{
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=99999999999999999999");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=99999999999999999999&exp=2");
}
END_TEST

/* Mandatory entity IDs must not be empty (name_id already is checked). */
START_TEST(test_decode_empty_entity_ids)
{
    expect_reject("v=1&sp=&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=1&sp=s&iss=&nid=n&ct=1&exp=2");
}
END_TEST

/* The version must be exactly "1": a "1.5" or "1x" record written by a
 * different format must not be read as version 1. */
START_TEST(test_decode_version_exact)
{
    expect_reject("v=1x&sp=s&iss=i&nid=n&ct=1&exp=2");
    expect_reject("v=1.5&sp=s&iss=i&nid=n&ct=1&exp=2");
}
END_TEST

START_TEST(test_decode_duplicate_field)
{
    /* Two values for one field: which would count? Refused. */
    expect_reject("v=1&sp=s&iss=i&nid=n&nid=m&ct=1&exp=2");
    expect_reject("v=1&sp=s&iss=i&nid=n&ct=1&exp=2&exp=3");
}
END_TEST

static Suite *session_suite(void)
{
    Suite *s = suite_create("rsp_session");
    TCase *tc;

    tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_session_key_known_answer);
    tcase_add_test(tc, test_round_trip_all_fields);
    tcase_add_test(tc, test_round_trip_optional_absent);
    tcase_add_test(tc, test_encode_escapes);
    tcase_add_test(tc, test_decode_known_record);
    tcase_add_test(tc, test_decode_unknown_fields_ignored);
    suite_add_tcase(s, tc);

    tc = tcase_create("reject");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_decode_missing_mandatory);
    tcase_add_test(tc, test_session_without_name_id);
    tcase_add_test(tc, test_session_user);
    tcase_add_test(tc, test_decode_bad_version);
    tcase_add_test(tc, test_decode_bad_escapes);
    tcase_add_test(tc, test_decode_embedded_nul);
    tcase_add_test(tc, test_decode_bad_times);
    tcase_add_test(tc, test_decode_time_overflow);
    tcase_add_test(tc, test_decode_empty_entity_ids);
    tcase_add_test(tc, test_decode_version_exact);
    tcase_add_test(tc, test_decode_duplicate_field);
    tcase_add_test(tc, test_attributes_round_trip);
    tcase_add_test(tc, test_attributes_malformed);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    return rsp_unit_run(session_suite());
}
