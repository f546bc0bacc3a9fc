#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "rsp_util.h"

const char *rsp_b64url(apr_pool_t *p, const unsigned char *buf, apr_size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = apr_palloc(p, (len + 2) / 3 * 4 + 1);
    char *o = out;
    apr_size_t i;

    for (i = 0; i + 2 < len; i += 3) {
        *o++ = tab[buf[i] >> 2];
        *o++ = tab[((buf[i] & 0x03) << 4) | (buf[i + 1] >> 4)];
        *o++ = tab[((buf[i + 1] & 0x0f) << 2) | (buf[i + 2] >> 6)];
        *o++ = tab[buf[i + 2] & 0x3f];
    }
    if (len - i == 1) {
        *o++ = tab[buf[i] >> 2];
        *o++ = tab[(buf[i] & 0x03) << 4];
    }
    else if (len - i == 2) {
        *o++ = tab[buf[i] >> 2];
        *o++ = tab[((buf[i] & 0x03) << 4) | (buf[i + 1] >> 4)];
        *o++ = tab[(buf[i + 1] & 0x0f) << 2];
    }
    *o = '\0';
    return out;
}

#define B64_SPACE 64
#define B64_PAD 65
#define B64_BAD 66

static const unsigned char b64_value[256] = {
#define BAD4 B64_BAD, B64_BAD, B64_BAD, B64_BAD
#define BAD16 BAD4, BAD4, BAD4, BAD4
    /* 0x00 */ B64_BAD, B64_BAD, B64_BAD, B64_BAD, B64_BAD, B64_BAD, B64_BAD,
    B64_BAD, B64_BAD, B64_SPACE, B64_SPACE, B64_BAD, B64_BAD, B64_SPACE,
    B64_BAD, B64_BAD,
    /* 0x10 */ BAD16,
    /* 0x20 */ B64_SPACE, B64_BAD, B64_BAD, B64_BAD, B64_BAD, B64_BAD, B64_BAD,
    B64_BAD, B64_BAD, B64_BAD, B64_BAD, 62, B64_BAD, B64_BAD, B64_BAD, 63,
    /* 0x30 */ 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, B64_BAD, B64_BAD,
    B64_BAD, B64_PAD, B64_BAD, B64_BAD,
    /* 0x40 */ B64_BAD, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    /* 0x50 */ 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, B64_BAD, B64_BAD,
    B64_BAD, B64_BAD, B64_BAD,
    /* 0x60 */ B64_BAD, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38,
    39, 40,
    /* 0x70 */ 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, B64_BAD, B64_BAD,
    B64_BAD, B64_BAD, B64_BAD,
    /* 0x80 - 0xff */ BAD16, BAD16, BAD16, BAD16, BAD16, BAD16, BAD16, BAD16
#undef BAD16
#undef BAD4
};

int rsp_b64_decode(apr_pool_t *p, const char *s, int skip_space,
                   char **out, apr_size_t *outlen)
{
    const unsigned char *c = (const unsigned char *)s;
    unsigned char *o, *start;
    apr_uint32_t acc = 0;
    apr_size_t n = 0, pad = 0;

    start = o = apr_palloc(p, strlen(s) / 4 * 3 + 3);
    for (; *c; c++) {
        unsigned v = b64_value[*c];
        if (v < 64) {
            if (pad) {
                return -1; /* data after '=' */
            }
            acc = acc << 6 | v;
            if ((++n & 3) == 0) {
                *o++ = (unsigned char)(acc >> 16);
                *o++ = (unsigned char)(acc >> 8);
                *o++ = (unsigned char)acc;
                acc = 0;
            }
        }
        else if (v == B64_PAD) {
            if (++pad > 2) {
                return -1;
            }
            n++;
        }
        else if (v != B64_SPACE || !skip_space) {
            return -1;
        }
    }
    if (n == 0 || (n & 3) != 0) {
        return -1;
    }
    if (pad == 2) {
        *o++ = (unsigned char)(acc >> 4);
    }
    else if (pad == 1) {
        *o++ = (unsigned char)(acc >> 10);
        *o++ = (unsigned char)(acc >> 2);
    }
    *o = '\0';
    *out = (char *)start;
    *outlen = (apr_size_t)(o - start);
    return 0;
}

const char *rsp_sha256_b64url(apr_pool_t *p, const void *data, apr_size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1) {
        /* Only on allocation failure inside OpenSSL. */
        abort();
    }
    return rsp_b64url(p, md, mdlen);
}

const char *rsp_short_hash(apr_pool_t *p, const char *s)
{
    const char *h = rsp_sha256_b64url(p, s ? s : "", s ? strlen(s) : 0);
    return apr_pstrndup(p, h, 12);
}

int rsp_is_hash(const char *h)
{
    apr_size_t i;

    for (i = 0; h && h[i]; i++) {
        char c = h[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
            return 0;
        }
    }
    return h && i == RSP_HASH_B64_LEN;
}

apr_status_t rsp_random_token(const char **out, apr_pool_t *p, apr_size_t nbytes)
{
    unsigned char buf[64];

    if (nbytes > sizeof(buf) || RAND_bytes(buf, (int)nbytes) != 1) {
        return APR_EGENERAL;
    }
    *out = rsp_b64url(p, buf, nbytes);
    return APR_SUCCESS;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static apr_int64_t days_from_civil(apr_int64_t y, unsigned m, unsigned d)
{
    apr_int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (apr_int64_t)doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

static int digits(const char *s, int n, int *out)
{
    int v = 0, i;

    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

apr_status_t rsp_parse_time(apr_time_t *out, const char *s)
{
    int Y, M, D, h, m, sec, zh, zm;
    apr_int64_t usec = 0, secs;
    const char *c;

    if (!s || strlen(s) < 19 || !digits(s, 4, &Y) || s[4] != '-'
        || !digits(s + 5, 2, &M) || s[7] != '-' || !digits(s + 8, 2, &D)
        || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':'
        || !digits(s + 14, 2, &m) || s[16] != ':' || !digits(s + 17, 2, &sec)) {
        return APR_EINVAL;
    }
    if (M < 1 || M > 12 || D < 1 || D > days_in_month(Y, M) || h > 23
        || m > 59 || sec > 60) {
        return APR_EINVAL;
    }
    c = s + 19;
    if (*c == '.') {
        apr_int64_t scale = 100000;
        c++;
        if (*c < '0' || *c > '9') {
            return APR_EINVAL;
        }
        while (*c >= '0' && *c <= '9') {
            usec += (*c - '0') * scale;
            scale /= 10;
            c++;
        }
    }
    secs = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400
           + h * 3600 + m * 60 + sec;
    if (*c == 'Z') {
        c++;
    }
    else if (*c == '+' || *c == '-') {
        int sign = *c == '-' ? -1 : 1;
        if (!digits(c + 1, 2, &zh) || c[3] != ':' || !digits(c + 4, 2, &zm)
            || zh > 14 || zm > 59) {
            return APR_EINVAL;
        }
        secs -= sign * (zh * 3600 + zm * 60);
        c += 6;
    }
    if (*c != '\0') {
        return APR_EINVAL;
    }
    *out = apr_time_from_sec(secs) + usec;
    return APR_SUCCESS;
}

const char *rsp_format_time(apr_pool_t *p, apr_time_t t)
{
    apr_time_exp_t tm;
    char buf[32];
    apr_size_t len;

    apr_time_exp_gmt(&tm, t);
    apr_strftime(buf, &len, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return apr_pstrndup(p, buf, len);
}

apr_int64_t rsp_ttl_seconds(apr_int64_t ttl_ms)
{
    return (ttl_ms + 999) / 1000;
}

const char *rsp_json_string(apr_pool_t *p, const char *s)
{
    char *out, *o;
    const unsigned char *c;

    if (!s) {
        return "null";
    }
    out = o = apr_palloc(p, strlen(s) * 6 + 3);
    *o++ = '"';
    for (c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            *o++ = '\\';
            *o++ = (char)*c;
        }
        else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&') {
            o += apr_snprintf(o, 7, "\\u%04x", *c);
        }
        else if (c[0] == 0xE2 && c[1] == 0x80 && (c[2] == 0xA8 || c[2] == 0xA9)) {
            o += apr_snprintf(o, 7, "\\u%04x", c[2] == 0xA8 ? 0x2028 : 0x2029);
            c += 2;
        }
        else {
            *o++ = (char)*c;
        }
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

const char *rsp_html_escape(apr_pool_t *p, const char *s)
{
    apr_size_t len = 0;
    const char *c;
    char *out, *o;

    for (c = s; *c; c++) {
        len += *c == '&' ? 5 : (*c == '<' || *c == '>') ? 4
               : (*c == '"' || *c == '\'') ? 6 : 1;
    }
    out = o = apr_palloc(p, len + 1);
    for (c = s; *c; c++) {
        switch (*c) {
        case '&': memcpy(o, "&amp;", 5); o += 5; break;
        case '<': memcpy(o, "&lt;", 4); o += 4; break;
        case '>': memcpy(o, "&gt;", 4); o += 4; break;
        case '"': memcpy(o, "&quot;", 6); o += 6; break;
        case '\'': memcpy(o, "&#039;", 6); o += 6; break;
        default: *o++ = *c;
        }
    }
    *o = '\0';
    return out;
}

const char *rsp_trimmed(apr_pool_t *p, const char *s)
{
    const char *ws = " \t\r\n";
    apr_size_t len;

    s = s ? s : "";
    s += strspn(s, ws);
    len = strlen(s);
    while (len && strchr(ws, s[len - 1])) {
        len--;
    }
    return apr_pstrmemdup(p, s, len);
}
