/* The form reader (rsp_form.h, rsp_record.h: queries, the ACS form, the
 * store's records)
 * and the strict base64 decoder the ACS reads SAMLResponse with
 * (rsp_b64_decode). The input is one query, form body or base64 text. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <apr_lib.h>
#include <apr_strings.h>
#include <openssl/evp.h>

#include "fuzz_common.h"
#include "rsp_form.h"
#include "rsp_path.h"
#include "rsp_pct.h"
#include "rsp_record.h"
#include "rsp_util.h"

static int escaped_ok(const char *e)
{
    for (; *e; e++) {
        unsigned char c = (unsigned char)*e;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
              || c == '~' || c == '%')) {
            return 0;
        }
    }
    return 1;
}

/* What claims and pending requests escape their values with reads back
 * as its input. */
static void check_escape(apr_pool_t *p, const char *value)
{
    const char *e = rsp_pct_escape(p, value, RSP_PCT_UNRESERVED), *back;
    const char *why = NULL;

    FUZZ_ASSERT(escaped_ok(e));
    back = rsp_form_value(p, apr_pstrcat(p, "a=1&k=", e, "&b=2", NULL), "k",
                          &why);
    FUZZ_ASSERT(back && !strcmp(back, value));
}

/* v: the value of name that rsp_form_value read in s; r: the one read
 * with other names in one pass (rsp_record_lookup). */
static void check_field(apr_pool_t *p, const char *s, const char *name,
                        const char *r)
{
    const char *why = NULL, *v = rsp_form_value(p, s, name, &why);

    FUZZ_ASSERT(fuzz_str_eq(v, r));
    if (v) {
        FUZZ_ASSERT(why == NULL);
        check_escape(p, v);
    }
}

static void check_b64(apr_pool_t *p, const char *s)
{
    char *strict = NULL, *loose = NULL, *again = NULL;
    apr_size_t slen = 0, llen = 0, alen = 0;
    int rs = rsp_b64_decode(p, s, 0, &strict, &slen);
    int rl = rsp_b64_decode(p, s, 1, &loose, &llen);
    unsigned char *enc;

    if (rs == 0) {
        /* Without whitespace, strict and loose agree. */
        FUZZ_ASSERT(rl == 0 && slen == llen && !memcmp(strict, loose, slen));
        FUZZ_ASSERT(slen <= strlen(s) / 4 * 3);
    }
    if (!strpbrk(s, " \t\r\n")) {
        FUZZ_ASSERT(rs == rl);
    }
    if (rl != 0) {
        return;
    }
    FUZZ_ASSERT(loose[llen] == '\0');
    /* What it decoded, encoded again, decodes to the same bytes. */
    enc = apr_palloc(p, (llen + 2) / 3 * 4 + 1);
    EVP_EncodeBlock(enc, (const unsigned char *)loose, (int)llen);
    if (llen == 0) {
        return; /* "" is refused as base64 */
    }
    FUZZ_ASSERT(rsp_b64_decode(p, (const char *)enc, 0, &again, &alen) == 0);
    FUZZ_ASSERT(alen == llen && !memcmp(again, loose, llen));
}

/* A form parser of another kind than rsp_form's: it decodes the whole
 * query ('+' a space) before it splits it at '&' or ';', and compares
 * names in any letter case after leading spaces. A query the guard
 * passes has no SAML parameter for it either. */
static int model_query_has_saml(apr_pool_t *p, const char *q)
{
    static const char *const saml[] = {"samlresponse", "relaystate", "samlart",
                                       "samlrequest", "sigalg", "signature"};
    char *d = apr_pstrdup(p, q), *o = d, *last = NULL, *pair;
    const char *s = q;
    apr_size_t i;

    for (; *s; s++) {
        if (*s == '+') {
            *o++ = ' ';
        }
        else if (*s == '%' && apr_isxdigit(s[1]) && apr_isxdigit(s[2])) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        }
        else {
            *o++ = *s;
        }
    }
    *o = '\0';
    for (pair = apr_strtok(d, "&;", &last); pair;
         pair = apr_strtok(NULL, "&;", &last)) {
        while (*pair == ' ') {
            pair++;
        }
        for (i = 0; i < sizeof(saml) / sizeof(saml[0]); i++) {
            if (!strncasecmp(pair, saml[i], strlen(saml[i]))) {
                return 1;
            }
        }
    }
    return 0;
}

/* The input as a request path: a canonical one reaches a guarded path
 * exactly when httpd's <Location> would match it (letter case aside), so
 * that the guard meets every canonical request an SP may dispatch there. */
static void check_path(apr_pool_t *p, const char *s)
{
    static const char *const bases[] = {"/Shibboleth.sso/SAML2/POST",
                                        "/mellon/postResponse", "/a/", "/"};
    apr_size_t i;

    if (*s != '/' || rsp_path_noncanonical(s)) {
        return;
    }
    for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        int reaches = rsp_path_reaches(p, s, bases[i]);
        apr_size_t n = strlen(bases[i]);
        int ci_under;
        while (n > 1 && bases[i][n - 1] == '/') {
            n--;
        }
        ci_under = n == 1 || (!strncasecmp(s, bases[i], n)
                              && (s[n] == '\0' || s[n] == '/'));
        FUZZ_ASSERT(reaches == ci_under);
        if (rsp_path_under(s, bases[i])) {
            FUZZ_ASSERT(reaches);
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
#define N_NAMES 7
    static const char *const names[N_NAMES] = {
        "SAMLResponse", "RelayState", "SAMLRequest", "v", "r", "t", ""
    };
    apr_pool_t *p = fuzz_pool_begin();
    const char *s = fuzz_cstr(p, data, size);
    const char *first, *why, *names_all[N_NAMES + 1], *values[N_NAMES + 1];
    apr_size_t i;

    /* The name of the input's first field, whatever it is. */
    first = apr_pstrmemdup(p, s, strcspn(s, "=&"));
    memcpy(names_all, names, sizeof(names));
    names_all[N_NAMES] = first;
    rsp_record_lookup(p, RSP_RECORD_FORM, s, strlen(s), names_all,
                      N_NAMES + 1, values, NULL);
    for (i = 0; i < N_NAMES + 1; i++) {
        /* a name listed twice is looked up once: the first */
        apr_size_t j;
        for (j = 0; j < i && strcmp(names_all[j], names_all[i]); j++) {
        }
        check_field(p, s, names_all[i], values[j]);
    }

    /* A body the guard finds unambiguous has each SAML field at most once
     * for the ACS's reader; a query it passes has none. */
    if (!rsp_form_ambiguity(p, s)) {
        why = NULL;
        rsp_form_value(p, s, "SAMLResponse", &why);
        FUZZ_ASSERT(why == NULL || strstr(why, "twice") == NULL);
        why = NULL;
        rsp_form_value(p, s, "RelayState", &why);
        FUZZ_ASSERT(why == NULL || strstr(why, "twice") == NULL);
    }
    if (!rsp_form_query_ambiguity(p, s)) {
        why = NULL;
        FUZZ_ASSERT(!rsp_form_value(p, s, "SAMLResponse", &why) && !why);
        FUZZ_ASSERT(!rsp_form_value(p, s, "RelayState", &why) && !why);
        FUZZ_ASSERT(!model_query_has_saml(p, s));
    }

    check_escape(p, s);
    check_b64(p, s);
    check_path(p, s);

    fuzz_pool_end(p);
    return 0;
}
