/* The percent-decoder (rsp_pct.h) under every combination of its rules,
 * against a plain byte-by-byte model of each, and the escaper's two sets.
 * The input is the text to decode, NUL bytes included (the decoder reads
 * a length). */
#include <string.h>

#include <apr_strings.h>

#include "fuzz_common.h"
#include "rsp_pct.h"

static int hex(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* The rules as the four decoders this one replaced wrote them: the form
 * reader's and the records' (strict, '+' a space), the sessions' and the
 * store URLs' (strict), the guard's readings (lenient, '+' a space or
 * not, %00 kept or decoded). -1: refused. */
static long model(const unsigned char *s, size_t n, int flags, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        if (s[i] == '+' && (flags & RSP_PCT_PLUS)) {
            out[o++] = ' ';
        }
        else if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0
                 && hex(s[i + 2]) >= 0
                 && (s[i + 1] != '0' || s[i + 2] != '0'
                     || (flags & RSP_PCT_NUL))) {
            out[o++] = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        }
        else if (s[i] == '%' && !(flags & RSP_PCT_LENIENT)) {
            return -1;
        }
        else {
            out[o++] = (char)s[i];
        }
    }
    return (long)o;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    const char *bytes = fuzz_bytes(p, data, size);
    char *want = fuzz_malloc(p, size + 1);
    const char *strict = NULL, *cstr;
    apr_size_t strict_len = 0;
    int flags;

    for (flags = 0; flags < 8; flags++) {
        apr_size_t len = 12345;
        char *got = rsp_pct_decode(p, bytes, size, flags, &len);
        long wlen = model(data, size, flags, want);

        if (wlen < 0) {
            FUZZ_ASSERT(!got && len == 12345);
            FUZZ_ASSERT(!(flags & RSP_PCT_LENIENT));
            continue;
        }
        FUZZ_ASSERT(got && len == (apr_size_t)wlen && len <= size);
        FUZZ_ASSERT(!memcmp(got, want, len) && got[len] == '\0');
        if (flags == 0) {
            strict = got;
            strict_len = len;
        }
        /* Without a '+', the form rule reads as the other. */
        if ((flags & RSP_PCT_PLUS) && !memchr(bytes, '+', size)) {
            apr_size_t l2;
            char *other = rsp_pct_decode(p, bytes, size, flags & ~RSP_PCT_PLUS,
                                         &l2);
            FUZZ_ASSERT(other && l2 == len && !memcmp(other, got, len));
        }
    }
    /* What the strict rule accepts, the lenient one reads the same. */
    if (strict) {
        apr_size_t l2;
        char *lenient = rsp_pct_decode(p, bytes, size, RSP_PCT_LENIENT, &l2);
        FUZZ_ASSERT(l2 == strict_len && !memcmp(lenient, strict, l2));
    }

    /* Escaped under either set, a text reads back as itself: strictly, and
     * under the form rule for UNRESERVED (which leaves no '+'). */
    cstr = fuzz_cstr(p, data, size);
    {
        const char *u = rsp_pct_escape(p, cstr, RSP_PCT_UNRESERVED);
        const char *m = rsp_pct_escape(p, cstr, RSP_PCT_MINIMAL);
        const char *c;
        char *back;

        FUZZ_ASSERT(!strchr(u, '+'));
        for (c = m; *c; c++) {
            FUZZ_ASSERT(!rsp_pct_escapes(RSP_PCT_MINIMAL, (unsigned char)*c)
                        || *c == '%');
        }
        back = rsp_pct_decode(p, u, strlen(u), 0, NULL);
        FUZZ_ASSERT(back && !strcmp(back, cstr));
        back = rsp_pct_decode(p, u, strlen(u), RSP_PCT_PLUS, NULL);
        FUZZ_ASSERT(back && !strcmp(back, cstr));
        back = rsp_pct_decode(p, m, strlen(m), 0, NULL);
        FUZZ_ASSERT(back && !strcmp(back, cstr));
        /* UNRESERVED escapes every byte MINIMAL does */
        FUZZ_ASSERT(strlen(u) >= strlen(m));
    }

    fuzz_pool_end(p);
    return 0;
}
