/* The built-in discovery page (rsp_discovery.h) with what a browser
 * sends — Accept-Language, the search q, the remembered IdP, ReturnTo —
 * and IdP names from metadata, all taken from the input (five lines: the
 * three browser values, ReturnTo, then names joined by '|'). Whatever they
 * are, nothing of them reaches the page unescaped: every '<' in it opens
 * a tag the page writes, and it lists no more IdPs than there are. */
#include <string.h>

#include <apr_strings.h>

#include "fuzz_common.h"
#include "rsp_discovery.h"

static char *field(char **s)
{
    char *f = *s, *nl;

    if (!f) {
        return NULL;
    }
    if ((nl = strchr(f, '\n')) != NULL) {
        *nl = '\0';
        *s = nl + 1;
    }
    else {
        *s = NULL;
    }
    return f;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (; (hay = strstr(hay, needle)) != NULL; hay++) {
        n++;
    }
    return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    char *in = fuzz_cstr(p, data, size), *rest = in, *names, *name, *state;
    const char *accept = field(&rest), *q = field(&rest), *last = field(&rest);
    const char *ret = field(&rest), *page;
    apr_array_header_t *uis = apr_array_make(p, 4, sizeof(rsp_idp_ui_t *));
    rsp_discovery_in_t din;
    int listed = 0;

    names = field(&rest);
    for (name = names ? apr_strtok(names, "|", &state) : NULL; name && listed < 8;
         name = apr_strtok(NULL, "|", &state)) {
        rsp_idp_ui_t *u = apr_pcalloc(p, sizeof(*u));
        rsp_ui_text_t *t;
        u->entity_id = apr_psprintf(p, "https://idp%d.example/idp", listed);
        u->names = apr_array_make(p, 1, sizeof(rsp_ui_text_t));
        t = apr_array_push(u->names);
        t->value = name;
        t->lang = listed % 2 ? "de" : NULL;
        u->descriptions = u->info_urls = u->privacy_urls =
            apr_array_make(p, 1, sizeof(rsp_ui_text_t));
        u->logos = apr_array_make(p, 1, sizeof(rsp_ui_logo_t));
        APR_ARRAY_PUSH(uis, rsp_idp_ui_t *) = u;
        listed++;
    }
    memset(&din, 0, sizeof(din));
    din.uis = uis;
    din.page_path = "/saml/discovery";
    din.login_path = "/saml/login";
    din.return_to = ret ? ret : "/";
    din.query = q;
    din.remembered = last;
    din.langs = rsp_accept_languages(p, accept);
    page = rsp_discovery_page(p, &din);
    FUZZ_ASSERT(din.langs->nelts <= 8);
    /* the markup is the page's own: as many tags and quotes as with
     * inputs that carry none of '<', '>', '"' */
    FUZZ_ASSERT(count(page, "<li>") <= (size_t)listed * 2);
    FUZZ_ASSERT(count(page, "<script") == 0);
    {
        /* every '<' of the page opens one of the tags it writes */
        static const char *const tags[] = {
            "<!DOCTYPE", "<html", "<head", "<meta", "<title", "<style", "<link",
            "<body", "<main", "<h1", "<h2", "<section", "<ul", "<li", "<a ",
            "<img", "<span", "<form", "<input", "<label", "<button", "<p ", "</",
            NULL};
        const char *c;
        int i, known;
        for (c = strchr(page, '<'); c; c = strchr(c + 1, '<')) {
            for (known = 0, i = 0; tags[i] && !known; i++) {
                known = !strncmp(c, tags[i], strlen(tags[i]));
            }
            FUZZ_ASSERT(known);
        }
    }
    fuzz_pool_end(p);
    return 0;
}
