/* A scan of an XML message's bytes before libxml2 reads them
 * (rsp_xml_scan.h). */
#include <string.h>

#include <apr_strings.h>

#include "rsp_xml_scan.h"

static int blank(const char *c, const char *end)
{
    for (; c < end; c++) {
        if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n') {
            return 0;
        }
    }
    return 1;
}

/* The end of what starts at c with open and ends with close, or NULL. */
static const char *past(const char *c, const char *end, const char *open,
                        const char *close)
{
    apr_size_t o = strlen(open), n = strlen(close);
    const char *q;

    for (q = c + o; q + n <= end; q++) {
        q = memchr(q, close[0], (apr_size_t)(end - q));
        if (!q || q + n > end) {
            return NULL;
        }
        if (!memcmp(q, close, n)) {
            return q + n;
        }
    }
    return NULL;
}

static int starts(const char *c, const char *end, const char *with)
{
    apr_size_t n = strlen(with);

    return (apr_size_t)(end - c) >= n && !memcmp(c, with, n);
}



const char *rsp_xml_scan(apr_pool_t *p, const char *s, apr_size_t len,
                         const rsp_scan_limits_t *lim, const char **check)
{
    const char *c = s, *end = s + len, *q;
    int depth = 0, top = 0, elements = 0, attrs;

    *check = lim->size_check;
    if (lim->max_size && len > lim->max_size) {
        return apr_psprintf(p, "%" APR_SIZE_T_FMT " bytes (at most %"
                            APR_SIZE_T_FMT " are accepted)", len,
                            lim->max_size);
    }
    while (c < end) {
        q = memchr(c, '<', (apr_size_t)(end - c));
        q = q ? q : end;
        if (lim->one_element && depth == 0 && !blank(c, q)) {
            *check = lim->count_check;
            return apr_psprintf(p, "text beside the %s element", lim->what);
        }
        if ((c = q) == end) {
            break;
        }
        if (c + 1 == end) {
            goto malformed;
        }
        if (starts(c, end, "<!--") || starts(c, end, "<![CDATA[")
            || starts(c, end, "<?")) {
            q = c[1] == '?' ? past(c, end, "<?", "?>")
                : c[2] == '-' ? past(c, end, "<!--", "-->")
                : past(c, end, "<![CDATA[", "]]>");
            if (!q) {
                goto malformed;
            }
            if (lim->one_element && depth == 0) {
                *check = lim->count_check;
                return apr_psprintf(p, "%s beside the %s element",
                                    c[1] == '?' ? "a processing instruction "
                                                  "or XML declaration"
                                    : c[2] == '-' ? "a comment" : "text",
                                    lim->what);
            }
            c = q;
            continue;
        }
        if (starts(c, end, "<!")) {
            *check = "xml";
            return "a DOCTYPE or other declaration";
        }
        if (c[1] == '/') {
            q = memchr(c, '>', (apr_size_t)(end - c));
            if (!q || --depth < 0) {
                goto malformed;
            }
            c = q + 1;
            continue;
        }
        /* a start tag: its attributes are its '=' outside quotes */
        if (lim->one_element && depth == 0 && ++top > 1) {
            *check = lim->count_check;
            return apr_psprintf(p, "more than one element (exactly one "
                                "saml:%s is accepted)", lim->what);
        }
        if (lim->max_elements && ++elements > lim->max_elements) {
            *check = lim->size_check;
            return apr_psprintf(p, "more than %d elements (the most accepted)",
                                lim->max_elements);
        }
        for (attrs = 0, q = c + 1; q < end && *q != '>' && *q != '<'; q++) {
            if (*q == '"' || *q == '\'') {
                q = memchr(q + 1, *q, (apr_size_t)(end - q - 1));
                if (!q) {
                    q = end;
                    break;
                }
            }
            else if (*q == '=' && ++attrs > lim->max_attributes) {
                *check = lim->size_check;
                return apr_psprintf(p, "an element with more than %d "
                                    "attributes", lim->max_attributes);
            }
        }
        if (q == end || *q == '<') {
            goto malformed;
        }
        if (q[-1] != '/' && ++depth > lim->max_depth) {
            *check = "xml-depth";
            return apr_psprintf(p, "elements nested more than %d deep",
                                lim->max_depth);
        }
        c = q + 1;
    }
    if (depth != 0) {
        goto malformed;
    }
    if (lim->one_element && top == 0) {
        *check = lim->count_check;
        return apr_psprintf(p, "no element (exactly one saml:%s is "
                            "accepted)", lim->what);
    }
    *check = NULL;
    return NULL;

malformed:
    /* Exact on well-formed XML, so this is not: refused before libxml2
     * reads on past the error (it goes on, without its SAX, and does
     * the quadratic work of a tag beyond). */
    *check = "xml";
    return "not well-formed XML";
}

