/* The records' form (rsp_record.h): its field iterator on any bytes, and
 * the round trip of its encoder. The input is read twice:
 *
 * - as a record (NUL bytes included: the iterator reads a length): its
 *   fields put back together are the input; each value unescapes (or is
 *   refused) under both kinds; a lookup agrees with the iterator;
 * - as fields to encode: the first byte's low bit is the kind, the rest
 *   is split at NUL bytes into name, value, name, value... (a value
 *   "\x01" is none: the field left out; '&', '=' and '%' in a name, which
 *   the encoder does not escape, become '_'). The record iterates back to
 *   exactly the fields with a value. */
#include <string.h>

#include <apr_strings.h>

#include "fuzz_common.h"
#include "rsp_record.h"

#define MAX_FIELDS 64

static void check_parse(apr_pool_t *p, const char *rec, size_t len)
{
    static const char *const names[] = {"v", "r", "sp", "an", ""};
    const char *values[5], *joined = "";
    rsp_record_iter_t it;
    rsp_record_piece_t f;
    int n = 0, i;
    size_t at = 0;

    rsp_record_iter_init(&it, rec, len);
    while (rsp_record_next(&it, &f)) {
        const char *form, *sess, *piece;
        FUZZ_ASSERT(f.name == rec + at && at <= len && (size_t)n <= len);
        FUZZ_ASSERT(!memchr(f.name, '&', f.name_len)
                    && !memchr(f.name, '=', f.name_len));
        if (f.value) {
            FUZZ_ASSERT(f.value == f.name + f.name_len + 1
                        && !memchr(f.value, '&', f.value_len));
        }
        piece = apr_pstrmemdup(p, f.name,
                               f.name_len + (f.value ? 1 + f.value_len : 0));
        joined = n ? apr_pstrcat(p, joined, "&", piece, NULL) : piece;
        at += f.name_len + (f.value ? 1 + f.value_len : 0) + 1;
        form = rsp_record_unescape(p, RSP_RECORD_FORM, &f);
        sess = rsp_record_unescape(p, RSP_RECORD_SESSION, &f);
        /* the same refusals; without a '+', the same value */
        FUZZ_ASSERT(!form == !sess);
        if (f.value && !memchr(f.value, '+', f.value_len)) {
            FUZZ_ASSERT(fuzz_str_eq(form, sess));
        }
        n++;
    }
    /* the fields joined again are the input (up to a NUL in it, which
     * pstrmemdup/pstrcat would cut, and but for a trailing '&') */
    if (!memchr(rec, '\0', len)) {
        size_t jl = strlen(joined);
        FUZZ_ASSERT(jl <= len && !memcmp(joined, rec, jl));
        FUZZ_ASSERT(jl == len || (jl + 1 == len && rec[jl] == '&')
                    || (n == 0 && len == 0));
    }
    /* one lookup of several names: each alone says the same */
    rsp_record_lookup(p, RSP_RECORD_SESSION, rec, len, names, 5, values, NULL);
    for (i = 0; i < 5; i++) {
        const char *one;
        rsp_record_lookup(p, RSP_RECORD_SESSION, rec, len, &names[i], 1, &one,
                          NULL);
        FUZZ_ASSERT(fuzz_str_eq(one, values[i]));
    }
}

static void check_round_trip(apr_pool_t *p, const uint8_t *data, size_t size)
{
    rsp_record_field_t fields[MAX_FIELDS];
    rsp_record_kind_t kind;
    rsp_record_iter_t it;
    rsp_record_piece_t f;
    const char *rec, *cur, *end;
    int n = 0, i;

    if (size < 1) {
        return;
    }
    kind = (data[0] & 1) ? RSP_RECORD_SESSION : RSP_RECORD_FORM;
    cur = fuzz_bytes(p, data + 1, size - 1);
    end = cur + size - 1;
    while (cur < end && n < MAX_FIELDS) {
        const char *nul = memchr(cur, '\0', (size_t)(end - cur));
        const char *stop = nul ? nul : end;
        char *name = apr_pstrmemdup(p, cur, (size_t)(stop - cur)), *c;
        const char *value = NULL;
        for (c = name; *c; c++) {
            if (*c == '&' || *c == '=' || *c == '%') {
                *c = '_';
            }
        }
        cur = nul ? nul + 1 : end;
        if (cur < end) {
            nul = memchr(cur, '\0', (size_t)(end - cur));
            stop = nul ? nul : end;
            value = apr_pstrmemdup(p, cur, (size_t)(stop - cur));
            cur = nul ? nul + 1 : end;
        }
        fields[n].name = name;
        fields[n].value = value && strcmp(value, "\x01") ? value : NULL;
        n++;
    }
    rec = rsp_record_encode(p, kind, fields, n);
    rsp_record_iter_init(&it, rec, strlen(rec));
    for (i = 0; i < n; i++) {
        char *v;
        if (!fields[i].value) {
            continue;
        }
        FUZZ_ASSERT(rsp_record_next(&it, &f));
        FUZZ_ASSERT(rsp_record_is(&f, fields[i].name) && f.value);
        v = rsp_record_unescape(p, kind, &f);
        FUZZ_ASSERT(v && !strcmp(v, fields[i].value));
    }
    FUZZ_ASSERT(!rsp_record_next(&it, &f));
    /* a name given once is found by the lookup */
    for (i = 0; i < n; i++) {
        const char *one, *why = NULL, *written = NULL;
        int j, times = 0;
        for (j = 0; j < n; j++) {
            if (fields[j].value && !strcmp(fields[j].name, fields[i].name)) {
                times++;
                written = fields[j].value;
            }
        }
        rsp_record_lookup(p, kind, rec, strlen(rec), &fields[i].name, 1, &one,
                          &why);
        if (times == 1) {
            FUZZ_ASSERT(one && !strcmp(one, written) && !why);
        }
        else {
            FUZZ_ASSERT(!one && (times == 0) == !why);
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();

    check_parse(p, fuzz_bytes(p, data, size), size);
    check_round_trip(p, data, size);
    fuzz_pool_end(p);
    return 0;
}
