#include <string.h>

#include <apr_lib.h>
#include <apr_tables.h>
#include <apr_strings.h>

#include "rsp_form.h"
#include "rsp_pct.h"
#include "rsp_record.h"

const char *rsp_form_value(apr_pool_t *p, const char *s, const char *name,
                           const char **why)
{
    return rsp_record_get(p, RSP_RECORD_FORM, s, name, why);
}

/* The names a SAML binding carries a message or its state in. An SP reads
 * its message from one of them; the guard checks exactly SAMLResponse and
 * RelayState in a POST body, and lets none of them through anywhere else. */
static const char *const saml_names[] = {
    "SAMLResponse", "RelayState", "SAMLart", "SAMLRequest", "SigAlg",
    "Signature"
};
#define N_SAML (sizeof(saml_names) / sizeof(saml_names[0]))
#define NAME_OTHER (-1)
#define NAME_NOT_ASCII (-2)

/* What a parameter name reads as to a parser that folds letter case and
 * drops what precedes the first letter or digit (PHP drops leading
 * spaces; others strip '_', '[' or control bytes): the index of the SAML
 * name it starts with, NAME_OTHER, or NAME_NOT_ASCII when it has a byte
 * above 0x7E or below 0x20 (Unicode case folding reads U+017F as 's'). */
static int name_reading(const char *name, apr_size_t n)
{
    apr_size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c > 0x7e) {
            return NAME_NOT_ASCII;
        }
    }
    while (n && !apr_isalnum(*name)) {
        name++;
        n--;
    }
    for (i = 0; i < N_SAML; i++) {
        apr_size_t l = strlen(saml_names[i]);
        if (n >= l && !strncasecmp(name, saml_names[i], l)) {
            return (int)i;
        }
    }
    return NAME_OTHER;
}

/* Every way a parser may read the names in text: the text as it is,
 * percent-decoded once ('+' a space or not) or twice before it is split;
 * split at '&' and ';'; each name as it is or decoded after the split.
 * counts[i]: how many names read as saml_names[i] under the reading that
 * finds most of them. NULL, or why the text cannot be read at all. */
static const char *read_names(apr_pool_t *p, const char *text, int counts[N_SAML])
{
    apr_size_t len = strlen(text);
    const char *readings[5];
    int r, i;

    readings[0] = text;
    readings[1] = rsp_pct_decode(p, text, len, RSP_PCT_LENIENT, NULL);
    readings[2] = rsp_pct_decode(p, text, len, RSP_PCT_LENIENT | RSP_PCT_PLUS,
                                 NULL);
    readings[3] = rsp_pct_decode(p, readings[1], strlen(readings[1]),
                                 RSP_PCT_LENIENT, NULL);
    readings[4] = rsp_pct_decode(p, readings[2], strlen(readings[2]),
                                 RSP_PCT_LENIENT | RSP_PCT_PLUS, NULL);
    memset(counts, 0, sizeof(int) * N_SAML);
    for (r = 0; r < 5; r++) {
        int here[3][N_SAML] = {{0}};
        const char *pair = readings[r];
        if (r > 0 && !strcmp(readings[r], readings[r - 1])) {
            continue;
        }
        for (;;) {
            apr_size_t plen = strcspn(pair, "&;");
            apr_size_t nlen = strcspn(pair, "=&;");
            const char *names[3];
            int k;
            names[0] = apr_pstrmemdup(p, pair, nlen < plen ? nlen : plen);
            names[1] = rsp_pct_decode(p, names[0], strlen(names[0]),
                                      RSP_PCT_LENIENT, NULL);
            names[2] = rsp_pct_decode(p, names[0], strlen(names[0]),
                                      RSP_PCT_LENIENT | RSP_PCT_PLUS, NULL);
            for (k = 0; k < 3; k++) {
                int which = name_reading(names[k], strlen(names[k]));
                if (which == NAME_NOT_ASCII) {
                    return "a parameter name with a byte that is not printable "
                           "ASCII";
                }
                if (which >= 0) {
                    here[k][which]++;
                }
            }
            if (!pair[plen]) {
                break;
            }
            pair += plen + 1;
        }
        for (i = 0; i < (int)N_SAML; i++) {
            int k;
            for (k = 0; k < 3; k++) {
                if (here[k][i] > counts[i]) {
                    counts[i] = here[k][i];
                }
            }
        }
    }
    return NULL;
}

const char *rsp_form_query_ambiguity(apr_pool_t *p, const char *query)
{
    int counts[N_SAML];
    const char *why;
    apr_size_t i;

    /* every %XX a valid escape of a byte other than NUL */
    if (!rsp_pct_decode(p, query, strlen(query), 0, NULL)) {
        return "a badly escaped query string";
    }
    if ((why = read_names(p, query, counts)) != NULL) {
        return apr_pstrcat(p, why, " in the query string", NULL);
    }
    for (i = 0; i < N_SAML; i++) {
        if (counts[i]) {
            return apr_psprintf(p, "%s in the query string (a parameter name "
                                "that a form parser may read as it)",
                                saml_names[i]);
        }
    }
    return NULL;
}

const char *rsp_form_ambiguity(apr_pool_t *p, const char *form)
{
    apr_array_header_t *seen = apr_array_make(p, 4, sizeof(char *));
    int raw[N_SAML] = {0}, read[N_SAML];
    const char *pair = form, *why;
    apr_size_t i;
    int j;

    if (strchr(form, ';')) {
        /* A browser encodes ';' in a form; some parsers split at it. */
        return "a ';' in the form (some parsers split parameters at it)";
    }
    while (pair && *pair) {
        const char *next = strchr(pair, '&');
        apr_size_t len = next ? (apr_size_t)(next - pair) : strlen(pair);
        const char *eq = memchr(pair, '=', len);
        apr_size_t nlen = eq ? (apr_size_t)(eq - pair) : len;
        int which;

        if (memchr(pair, '%', nlen) || memchr(pair, '+', nlen)) {
            return "a percent-encoded parameter name";
        }
        which = name_reading(pair, nlen);
        if (which == NAME_NOT_ASCII) {
            return "a parameter name with a byte that is not printable ASCII";
        }
        if (which >= 0) {
            if (which > 1 || nlen != strlen(saml_names[which])
                || strncmp(pair, saml_names[which], nlen)) {
                return apr_psprintf(p, "parameter %s (read as %s by some "
                                    "parsers; the guard takes SAMLResponse "
                                    "and RelayState only)",
                                    apr_pstrmemdup(p, pair, nlen),
                                    saml_names[which]);
            }
            raw[which]++;
        }
        for (j = 0; j < seen->nelts; j++) {
            const char *s = APR_ARRAY_IDX(seen, j, const char *);
            if (strlen(s) == nlen && !strncmp(s, pair, nlen)) {
                return apr_psprintf(p, "parameter %s given twice", s);
            }
        }
        APR_ARRAY_PUSH(seen, const char *) = apr_pstrmemdup(p, pair, nlen);
        pair = next ? next + 1 : NULL;
    }
    /* A parser that decodes before it splits must find no other. */
    if ((why = read_names(p, form, read)) != NULL) {
        return why;
    }
    for (i = 0; i < N_SAML; i++) {
        if (read[i] > raw[i]) {
            return apr_psprintf(p, "%s inside another parameter's value (read "
                                "as a parameter by a parser that decodes "
                                "before it splits)", saml_names[i]);
        }
    }
    return NULL;
}
