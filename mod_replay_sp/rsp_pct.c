#include <string.h>

#include <apr_strings.h>

#include "rsp_pct.h"

int rsp_pct_hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
         : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Runs without '%' (or, under the form rule, '+') are found by memchr and
 * copied whole: most of a base64 value is such a run. */
char *rsp_pct_decode(apr_pool_t *p, const char *s, apr_size_t n, int flags,
                     apr_size_t *outlen)
{
    const char *end = s + n, *pct, *plus;
    char *out = apr_palloc(p, n + 1), *o = out;

    pct = n ? memchr(s, '%', n) : NULL;
    plus = n && (flags & RSP_PCT_PLUS) ? memchr(s, '+', n) : NULL;
    for (;;) {
        const char *next = pct ? pct : end;
        int hi, lo;

        if (plus && plus < next) {
            next = plus;
        }
        if (next > s) {
            memcpy(o, s, (apr_size_t)(next - s));
            o += next - s;
            s = next;
        }
        if (s == end) {
            break;
        }
        if (s == plus) {
            *o++ = ' ';
            s++;
            plus = memchr(s, '+', (apr_size_t)(end - s));
            continue;
        }
        hi = end - s >= 3 ? rsp_pct_hexval((unsigned char)s[1]) : -1;
        lo = hi < 0 ? -1 : rsp_pct_hexval((unsigned char)s[2]);
        if (lo >= 0 && ((hi | lo) != 0 || (flags & RSP_PCT_NUL))) {
            *o++ = (char)(hi << 4 | lo);
            s += 3;
        }
        else if (flags & RSP_PCT_LENIENT) {
            *o++ = '%';
            s++;
        }
        else {
            return NULL;
        }
        pct = memchr(s, '%', (apr_size_t)(end - s));
        if (plus && plus < s) {
            plus = memchr(s, '+', (apr_size_t)(end - s));
        }
    }
    *o = '\0';
    if (outlen) {
        *outlen = (apr_size_t)(o - out);
    }
    return out;
}

/* The bytes each set escapes, a bit per byte (bit c & 31 of word c >> 5):
 * UNRESERVED all but A-Z a-z 0-9 - . _ ~; MINIMAL 0x00-0x20, '%', '&',
 * '=', 0x7F-0xFF. */
static const apr_uint32_t escaped[2][8] = {
    {0xFFFFFFFF, 0xFC009FFF, 0x78000001, 0xB8000001,
     0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF},
    {0xFFFFFFFF, 0x20000061, 0x00000000, 0x80000000,
     0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}
};

#define ESCAPES(set, c) ((escaped[set][(c) >> 5] >> ((c) & 31)) & 1)

int rsp_pct_escapes(rsp_pct_set_t set, unsigned char c)
{
    return (int)ESCAPES(set, c);
}

char *rsp_pct_escape_into(char *out, const char *s, rsp_pct_set_t set)
{
    static const char hex[] = "0123456789ABCDEF";
    const apr_uint32_t *bits = escaped[set == RSP_PCT_MINIMAL];

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((bits[c >> 5] >> (c & 31)) & 1) {
            *out++ = '%';
            *out++ = hex[c >> 4];
            *out++ = hex[c & 15];
        }
        else {
            *out++ = (char)c;
        }
    }
    *out = '\0';
    return out;
}

const char *rsp_pct_escape(apr_pool_t *p, const char *s, rsp_pct_set_t set)
{
    char *out = apr_palloc(p, strlen(s) * 3 + 1);

    rsp_pct_escape_into(out, s, set);
    return out;
}
