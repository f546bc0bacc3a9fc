#include <string.h>

#include <apr_strings.h>

#include "rsp_pct.h"
#include "rsp_record.h"

static rsp_pct_set_t set_of(rsp_record_kind_t kind)
{
    return kind == RSP_RECORD_SESSION ? RSP_PCT_MINIMAL : RSP_PCT_UNRESERVED;
}

const char *rsp_record_encode(apr_pool_t *p, rsp_record_kind_t kind,
                              const rsp_record_field_t *fields, int n)
{
    rsp_pct_set_t set = set_of(kind);
    apr_size_t room = 1;
    char *out, *o;
    int i;

    for (i = 0; i < n; i++) {
        if (fields[i].value) {
            room += strlen(fields[i].name) + 2 + strlen(fields[i].value) * 3;
        }
    }
    out = o = apr_palloc(p, room);
    *o = '\0';
    for (i = 0; i < n; i++) {
        apr_size_t nl;
        if (!fields[i].value) {
            continue;
        }
        if (o > out) {
            *o++ = '&';
        }
        nl = strlen(fields[i].name);
        memcpy(o, fields[i].name, nl);
        o += nl;
        *o++ = '=';
        o = rsp_pct_escape_into(o, fields[i].value, set);
    }
    return out;
}

const char *rsp_record_number(apr_pool_t *p, apr_int64_t v)
{
    char buf[24], *o = buf + sizeof(buf);
    apr_uint64_t u = v < 0 ? 0 - (apr_uint64_t)v : (apr_uint64_t)v;

    *--o = '\0';
    do {
        *--o = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) {
        *--o = '-';
    }
    return apr_pstrmemdup(p, o, (apr_size_t)(buf + sizeof(buf) - 1 - o));
}

void rsp_record_iter_init(rsp_record_iter_t *it, const char *rec,
                          apr_size_t len)
{
    it->cur = rec;
    it->end = rec ? rec + len : rec;
}

int rsp_record_next(rsp_record_iter_t *it, rsp_record_piece_t *f)
{
    const char *amp, *fend, *eq;

    if (it->cur >= it->end) {
        return 0;
    }
    amp = memchr(it->cur, '&', (apr_size_t)(it->end - it->cur));
    fend = amp ? amp : it->end;
    eq = memchr(it->cur, '=', (apr_size_t)(fend - it->cur));
    f->name = it->cur;
    f->name_len = (apr_size_t)((eq ? eq : fend) - it->cur);
    f->value = eq ? eq + 1 : NULL;
    f->value_len = eq ? (apr_size_t)(fend - eq - 1) : 0;
    it->cur = amp ? amp + 1 : it->end;
    return 1;
}

int rsp_record_is(const rsp_record_piece_t *f, const char *name)
{
    return strlen(name) == f->name_len && !memcmp(f->name, name, f->name_len);
}

char *rsp_record_unescape(apr_pool_t *p, rsp_record_kind_t kind,
                          const rsp_record_piece_t *f)
{
    return rsp_pct_decode(p, f->value ? f->value : "", f->value_len,
                          kind == RSP_RECORD_FORM ? RSP_PCT_PLUS : 0, NULL);
}

#define LOOKUP_ON_STACK 16

void rsp_record_lookup(apr_pool_t *p, rsp_record_kind_t kind, const char *rec,
                       apr_size_t len, const char *const *names, int n,
                       const char **values, const char **why)
{
    rsp_record_piece_t stack_found[LOOKUP_ON_STACK], *found = stack_found;
    int stack_count[LOOKUP_ON_STACK], *count = stack_count;
    apr_size_t stack_len[LOOKUP_ON_STACK], *nlen = stack_len;
    rsp_record_iter_t it;
    rsp_record_piece_t f;
    int i, told = 0;

    if (n > LOOKUP_ON_STACK) {
        found = apr_palloc(p, sizeof(*found) * (apr_size_t)n);
        count = apr_palloc(p, sizeof(*count) * (apr_size_t)n);
        nlen = apr_palloc(p, sizeof(*nlen) * (apr_size_t)n);
    }
    for (i = 0; i < n; i++) {
        count[i] = 0;
        nlen[i] = strlen(names[i]);
        values[i] = NULL;
    }
    rsp_record_iter_init(&it, rec, len);
    while (rsp_record_next(&it, &f)) {
        for (i = 0; i < n; i++) {
            if (f.name_len == nlen[i] && !memcmp(f.name, names[i], nlen[i])) {
                if (count[i]++ == 0) {
                    found[i] = f;
                }
                break;
            }
        }
    }
    for (i = 0; i < n; i++) {
        int twice = count[i] > 1;
        if ((twice || (count[i] == 1
                       && !(values[i] = rsp_record_unescape(p, kind,
                                                            &found[i]))))
            && why && !told) {
            *why = twice ? apr_pstrcat(p, names[i], " given twice", NULL)
                         : apr_pstrcat(p, "bad escape in ", names[i], NULL);
            told = 1;
        }
    }
}

const char *rsp_record_get(apr_pool_t *p, rsp_record_kind_t kind,
                           const char *rec, const char *name,
                           const char **why)
{
    const char *value;

    rsp_record_lookup(p, kind, rec, rec ? strlen(rec) : 0, &name, 1, &value,
                      why);
    return value;
}
