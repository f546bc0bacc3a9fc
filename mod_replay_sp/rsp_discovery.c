/* The built-in discovery page (rsp_discovery.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <apr_base64.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <openssl/evp.h>

#include "rsp_discovery.h"
#include "rsp_pct.h"
#include "rsp_util.h"

#define MAX_LANGS 8

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}"
    "main{max-width:40rem;margin:2rem auto;padding:0 1rem}"
    "h1{font-size:1.5rem}h2{font-size:1.1rem}"
    "form{display:flex;align-items:center;gap:.5rem;margin:1rem 0}"
    "input[type=search]{flex:1;padding:.5rem;font-size:1rem}"
    "button{padding:.5rem 1rem;font-size:1rem}"
    "ul{list-style:none;padding:0;margin:0}"
    "li a{display:flex;align-items:center;gap:.75rem;padding:.75rem;margin:.25rem 0;"
    "background:#fff;border:1px solid #d0d4da;border-radius:.4rem;color:inherit;"
    "text-decoration:none}"
    "li a:hover,li a:focus{border-color:#1f5fbf;outline:2px solid #1f5fbf}"
    "li img{max-height:2rem;max-width:4rem}"
    ".count{color:#4a5360}";

/* SHA-256 of data in standard base64 (a CSP hash source). */
static const char *sha256_b64(apr_pool_t *p, const char *data, apr_size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char *out;

    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL)) {
        return "";
    }
    out = apr_palloc(p, (apr_size_t)apr_base64_encode_len((int)n));
    apr_base64_encode_binary(out, md, (int)n);
    return out;
}

const char *rsp_discovery_csp(apr_pool_t *p, const char *stylesheet)
{
    /* a path is this site's ('self'); a URL stands for itself */
    const char *styles = stylesheet
        ? (stylesheet[0] == '/' ? "'self'" : stylesheet)
        : apr_psprintf(p, "'sha256-%s'",
                       sha256_b64(p, style, sizeof(style) - 1));

    return apr_psprintf(p, "default-src 'none'; style-src %s; img-src https:; "
                        "form-action 'self'; base-uri 'none'; "
                        "frame-ancestors 'none'", styles);
}

/* The primary subtag of a language tag's length ("de-CH": 2). */
static apr_size_t primary_len(const char *tag)
{
    return strcspn(tag, "-_");
}

static const char *pick(const apr_array_header_t *texts,
                        const apr_array_header_t *langs)
{
    int i, j;

    if (!texts || !texts->nelts) {
        return NULL;
    }
    for (j = 0; langs && j < langs->nelts; j++) {
        const char *want = APR_ARRAY_IDX(langs, j, const char *);
        for (i = 0; i < texts->nelts; i++) {
            const rsp_ui_text_t *t = &APR_ARRAY_IDX(texts, i, rsp_ui_text_t);
            if (t->lang && !strcasecmp(t->lang, want)) {
                return t->value;
            }
        }
        for (i = 0; i < texts->nelts; i++) {
            const rsp_ui_text_t *t = &APR_ARRAY_IDX(texts, i, rsp_ui_text_t);
            if (t->lang && primary_len(t->lang) == primary_len(want)
                && !strncasecmp(t->lang, want, primary_len(want))) {
                return t->value;
            }
        }
    }
    for (i = 0; i < texts->nelts; i++) {
        const rsp_ui_text_t *t = &APR_ARRAY_IDX(texts, i, rsp_ui_text_t);
        if (t->lang && primary_len(t->lang) == 2 && !strncasecmp(t->lang, "en", 2)) {
            return t->value;
        }
    }
    return APR_ARRAY_IDX(texts, 0, rsp_ui_text_t).value;
}

const char *rsp_discovery_name(const rsp_idp_ui_t *ui,
                               const apr_array_header_t *langs)
{
    const char *n = pick(ui->names, langs);

    return n ? n : ui->entity_id;
}

typedef struct {
    const char *tag;
    double q;
    int order;
} lang_t;

static int by_quality(const void *a, const void *b)
{
    const lang_t *x = a, *y = b;

    if (x->q != y->q) {
        return x->q > y->q ? -1 : 1;
    }
    return x->order - y->order;
}

apr_array_header_t *rsp_accept_languages(apr_pool_t *p, const char *header)
{
    apr_array_header_t *out = apr_array_make(p, MAX_LANGS, sizeof(const char *));
    lang_t found[MAX_LANGS];
    char *copy, *item, *state = NULL;
    int n = 0, i;

    if (!header) {
        return out;
    }
    copy = apr_pstrdup(p, header);
    for (item = apr_strtok(copy, ",", &state); item && n < MAX_LANGS;
         item = apr_strtok(NULL, ",", &state)) {
        char *semi = strchr(item, ';'), *tag = item, *end;
        double q = 1.0;
        if (semi) {
            const char *qs = semi + 1;
            *semi = '\0';
            while (*qs == ' ') {
                qs++;
            }
            if (!strncmp(qs, "q=", 2)) {
                q = strtod(qs + 2, &end);
                if (end == qs + 2 || q < 0 || q > 1) {
                    continue;
                }
            }
        }
        while (*tag == ' ' || *tag == '\t') {
            tag++;
        }
        end = tag + strlen(tag);
        while (end > tag && (end[-1] == ' ' || end[-1] == '\t')) {
            *--end = '\0';
        }
        if (!*tag || !strcmp(tag, "*") || q <= 0
            || strspn(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789-") != strlen(tag)) {
            continue;
        }
        found[n].tag = tag;
        found[n].q = q;
        found[n].order = n;
        n++;
    }
    qsort(found, (size_t)n, sizeof(found[0]), by_quality);
    for (i = 0; i < n; i++) {
        APR_ARRAY_PUSH(out, const char *) = found[i].tag;
    }
    return out;
}

/* Whether needle is in hay, ASCII letter case aside. */
static int contains(const char *hay, const char *needle)
{
    apr_size_t n = strlen(needle);

    for (; *hay; hay++) {
        if (!strncasecmp(hay, needle, n)) {
            return 1;
        }
    }
    return !n;
}

static int matches(const rsp_idp_ui_t *ui, const char *q)
{
    int i;

    if (!q || !*q || contains(ui->entity_id, q)) {
        return 1;
    }
    for (i = 0; i < ui->names->nelts; i++) {
        if (contains(APR_ARRAY_IDX(ui->names, i, rsp_ui_text_t).value, q)) {
            return 1;
        }
    }
    return 0;
}

/* One IdP as a list item: a link that signs in through it. */
static const char *item(apr_pool_t *p, const rsp_discovery_in_t *in,
                        const rsp_idp_ui_t *ui)
{
    const char *href = apr_pstrcat(
        p, in->login_path, "?ReturnTo=",
        rsp_pct_escape(p, in->return_to, RSP_PCT_UNRESERVED), "&IdP=",
        rsp_pct_escape(p, ui->entity_id, RSP_PCT_UNRESERVED), NULL);
    const char *img = "";

    if (ui->logos->nelts) {
        const rsp_ui_logo_t *l = &APR_ARRAY_IDX(ui->logos, 0, rsp_ui_logo_t);
        img = apr_psprintf(p, "<img src=\"%s\" alt=\"\"%s%s%s%s%s%s> ",
                           rsp_html_escape(p, l->url),
                           l->width ? " width=\"" : "", l->width ? l->width : "",
                           l->width ? "\"" : "",
                           l->height ? " height=\"" : "", l->height ? l->height : "",
                           l->height ? "\"" : "");
    }
    return apr_psprintf(p, "<li><a href=\"%s\">%s<span>%s</span></a></li>\n",
                        rsp_html_escape(p, href), img,
                        rsp_html_escape(p, rsp_discovery_name(ui, in->langs)));
}

const char *rsp_discovery_page(apr_pool_t *p, const rsp_discovery_in_t *in)
{
    apr_array_header_t *parts = apr_array_make(p, 32, sizeof(const char *));
    const rsp_idp_ui_t *last = NULL;
    const char *lang = in->langs && in->langs->nelts
                       ? APR_ARRAY_IDX(in->langs, 0, const char *) : "en";
    const int max = in->max_shown > 0 ? in->max_shown : RSP_DISCOVERY_MAX_SHOWN;
    const int q = in->query && *in->query;
    int i, shown = 0, matched = 0, listed = 0;

    for (i = 0; in->uis && i < in->uis->nelts; i++) {
        const rsp_idp_ui_t *ui = APR_ARRAY_IDX(in->uis, i, const rsp_idp_ui_t *);
        if (ui && !ui->hidden) {
            listed++;
            if (in->remembered && !strcmp(ui->entity_id, in->remembered)) {
                last = ui;
            }
        }
    }
    APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
        p, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<title>Sign in: choose your organisation</title>\n%s\n</head>\n<body>\n"
        "<main>\n<h1>Choose your organisation</h1>\n",
        rsp_html_escape(p, lang),
        in->stylesheet
            ? apr_psprintf(p, "<link rel=\"stylesheet\" href=\"%s\">",
                           rsp_html_escape(p, in->stylesheet))
            : apr_pstrcat(p, "<style>", style, "</style>", NULL));
    if (last) {
        APR_ARRAY_PUSH(parts, const char *) = apr_pstrcat(
            p, "<section aria-labelledby=\"last\">\n<h2 id=\"last\">Last time "
            "you signed in with</h2>\n<ul class=\"last\">\n", item(p, in, last),
            "</ul>\n<h2>Or choose another</h2>\n</section>\n", NULL);
    }
    APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
        p, "<form method=\"get\" action=\"%s\" role=\"search\">\n"
        "<input type=\"hidden\" name=\"ReturnTo\" value=\"%s\">\n"
        "<label for=\"q\">Search</label>\n"
        "<input id=\"q\" name=\"q\" type=\"search\" value=\"%s\" "
        "autocomplete=\"off\">\n<button type=\"submit\">Search</button>\n</form>\n",
        rsp_html_escape(p, in->page_path), rsp_html_escape(p, in->return_to),
        rsp_html_escape(p, in->query ? in->query : ""));
    APR_ARRAY_PUSH(parts, const char *) = "<ul class=\"idps\" aria-labelledby=\"count\">\n";
    for (i = 0; in->uis && i < in->uis->nelts; i++) {
        const rsp_idp_ui_t *ui = APR_ARRAY_IDX(in->uis, i, const rsp_idp_ui_t *);
        if (!ui || ui->hidden || !matches(ui, in->query)) {
            continue;
        }
        if (++matched <= max) {
            APR_ARRAY_PUSH(parts, const char *) = item(p, in, ui);
            shown++;
        }
    }
    APR_ARRAY_PUSH(parts, const char *) = "</ul>\n";
    APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
        p, "<p class=\"count\" id=\"count\" role=\"status\">%s%d of %d "
        "organisations%s%s%s%s</p>\n</main>\n</body>\n</html>\n",
        matched > shown ? apr_psprintf(p, "The first %d shown of ", shown) : "",
        matched, listed, q ? " matching \xe2\x80\x9c" : "",
        q ? rsp_html_escape(p, in->query) : "", q ? "\xe2\x80\x9d" : "",
        matched > shown ? ": type more of the name to find yours" : "");
    return apr_array_pstrcat(p, parts, 0);
}
