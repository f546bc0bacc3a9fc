/* The form reader (rsp_form.h: queries, the ACS form, the store's records)
 * and the strict base64 decoder the ACS reads SAMLResponse with
 * (rsp_b64_decode). The input is one query, form body or base64 text. */
#include <string.h>

#include <apr_strings.h>
#include <openssl/evp.h>

#include "fuzz_common.h"
#include "rsp_form.h"
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

/* rsp_form_escape's output reads back as its input. */
static void check_escape(apr_pool_t *p, const char *value)
{
    const char *e = rsp_form_escape(p, value), *back, *why = NULL;

    FUZZ_ASSERT(escaped_ok(e));
    back = rsp_form_value(p, apr_pstrcat(p, "a=1&k=", e, "&b=2", NULL), "k",
                          &why);
    FUZZ_ASSERT(back && !strcmp(back, value));
}

static void check_field(apr_pool_t *p, const char *s, const char *name)
{
    const char *why = NULL, *v = rsp_form_value(p, s, name, &why);
    const char *r = rsp_record_field(p, s, name);

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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {
        "SAMLResponse", "RelayState", "SAMLRequest", "v", "r", "t", ""
    };
    apr_pool_t *p = fuzz_pool_begin();
    const char *s = fuzz_cstr(p, data, size);
    const char *first, *why;
    apr_size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        check_field(p, s, names[i]);
    }
    /* The name of the input's first field, whatever it is. */
    first = apr_pstrmemdup(p, s, strcspn(s, "=&"));
    check_field(p, s, first);

    /* A body the guard finds unambiguous has each SAML field at most once
     * for the ACS's reader; a query it passes has none. */
    if (!rsp_form_ambiguity(p, s, 0)) {
        why = NULL;
        rsp_form_value(p, s, "SAMLResponse", &why);
        FUZZ_ASSERT(why == NULL || strstr(why, "twice") == NULL);
        why = NULL;
        rsp_form_value(p, s, "RelayState", &why);
        FUZZ_ASSERT(why == NULL || strstr(why, "twice") == NULL);
    }
    if (!rsp_form_ambiguity(p, s, 1)) {
        why = NULL;
        FUZZ_ASSERT(!rsp_form_value(p, s, "SAMLResponse", &why) && !why);
        FUZZ_ASSERT(!rsp_form_value(p, s, "RelayState", &why) && !why);
    }

    check_escape(p, s);
    check_b64(p, s);

    fuzz_pool_end(p);
    return 0;
}
