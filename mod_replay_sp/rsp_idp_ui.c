/* How to show an IdP to a user choosing one (rsp_idp_ui.h). */
#include <string.h>
#include <strings.h>

#include <apr_strings.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "rsp_idp_ui.h"
#include "rsp_metadata.h"
#include "rsp_util.h"

#define ENTITY_CATEGORY "http://macedir.org/entity-category"

#define UIINFO "md:IDPSSODescriptor/md:Extensions/mdui:UIInfo/"

static const char *prop(apr_pool_t *p, xmlNodePtr n, const char *name,
                        const char *ns)
{
    xmlChar *v = ns ? xmlGetNsProp(n, BAD_CAST name, BAD_CAST ns)
                    : xmlGetProp(n, BAD_CAST name);
    const char *out = v && *v ? rsp_trimmed(p, (const char *)v) : NULL;

    xmlFree(v);
    return out && *out ? out : NULL;
}

static int url_with(const char *v, int http_too)
{
    return !strncasecmp(v, "https://", 8)
           || (http_too && !strncasecmp(v, "http://", 7));
}

static xmlXPathObjectPtr eval(xmlXPathContextPtr ctx, const char *path)
{
    return xmlXPathEvalExpression(BAD_CAST path, ctx);
}

/* Each node of path as a text in its xml:lang; only URLs when urls (1:
 * https, 2: http or https). */
static apr_array_header_t *texts(apr_pool_t *p, xmlXPathContextPtr ctx,
                                 const char *path, int urls)
{
    apr_array_header_t *out = apr_array_make(p, 2, sizeof(rsp_ui_text_t));
    xmlXPathObjectPtr res = eval(ctx, path);
    int i;

    for (i = 0; res && res->nodesetval && i < res->nodesetval->nodeNr; i++) {
        xmlNodePtr n = res->nodesetval->nodeTab[i];
        xmlChar *c = xmlNodeGetContent(n);
        const char *v = rsp_trimmed(p, (const char *)c);
        rsp_ui_text_t *t;

        xmlFree(c);
        if (!*v || (urls && !url_with(v, urls == 2))) {
            continue;
        }
        t = apr_array_push(out);
        t->value = v;
        t->lang = prop(p, n, "lang", (const char *)XML_XML_NAMESPACE);
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    return out;
}

static apr_array_header_t *logos(apr_pool_t *p, xmlXPathContextPtr ctx)
{
    apr_array_header_t *out = apr_array_make(p, 1, sizeof(rsp_ui_logo_t));
    xmlXPathObjectPtr res = eval(ctx, UIINFO "mdui:Logo");
    int i;

    for (i = 0; res && res->nodesetval && i < res->nodesetval->nodeNr; i++) {
        xmlNodePtr n = res->nodesetval->nodeTab[i];
        xmlChar *c = xmlNodeGetContent(n);
        const char *v = rsp_trimmed(p, (const char *)c);
        rsp_ui_logo_t *l;

        xmlFree(c);
        if (!url_with(v, 0)) {
            continue;
        }
        l = apr_array_push(out);
        l->url = v;
        l->lang = prop(p, n, "lang", (const char *)XML_XML_NAMESPACE);
        l->height = prop(p, n, "height", NULL);
        l->width = prop(p, n, "width", NULL);
        if (l->height && strspn(l->height, "0123456789") != strlen(l->height)) {
            l->height = NULL;
        }
        if (l->width && strspn(l->width, "0123456789") != strlen(l->width)) {
            l->width = NULL;
        }
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    return out;
}

rsp_idp_ui_t *rsp_idp_ui_of_entity(apr_pool_t *p, const char *entity_id,
                                   xmlNodePtr ed)
{
    xmlXPathContextPtr ctx = rsp_metadata_xpath(ed);
    xmlXPathObjectPtr res;
    rsp_idp_ui_t *ui;

    if (!ctx) {
        return NULL;
    }
    ui = apr_pcalloc(p, sizeof(*ui));
    ui->entity_id = apr_pstrdup(p, entity_id);
    ui->names = texts(p, ctx, UIINFO "mdui:DisplayName", 0);
    if (!ui->names->nelts) {
        ui->names = texts(p, ctx, "md:Organization/md:OrganizationDisplayName",
                          0);
    }
    ui->descriptions = texts(p, ctx, UIINFO "mdui:Description", 0);
    ui->info_urls = texts(p, ctx, UIINFO "mdui:InformationURL", 2);
    ui->privacy_urls = texts(p, ctx, UIINFO "mdui:PrivacyStatementURL", 2);
    ui->logos = logos(p, ctx);
    res = eval(ctx, "md:Extensions/mdattr:EntityAttributes/"
                    "saml:Attribute[@Name='" ENTITY_CATEGORY "']/"
                    "saml:AttributeValue[normalize-space(.)='"
                    RSP_HIDE_FROM_DISCOVERY "']");
    ui->hidden = res && res->nodesetval && res->nodesetval->nodeNr > 0;
    if (res) {
        xmlXPathFreeObject(res);
    }
    xmlXPathFreeContext(ctx);
    return ui;
}

rsp_idp_ui_t *rsp_idp_ui_of_metadata(apr_pool_t *p, const char *entity_id,
                                     const char *md)
{
    xmlDocPtr doc = rsp_metadata_read(md, strlen(md));
    rsp_idp_ui_t *ui = NULL;

    if (doc && xmlDocGetRootElement(doc)) {
        ui = rsp_idp_ui_of_entity(p, entity_id, xmlDocGetRootElement(doc));
    }
    if (doc) {
        xmlFreeDoc(doc);
    }
    return ui;
}

/* ,"Key":[{"value":..,"lang":..},...] (nothing when texts is empty). */
static void feed_texts(apr_pool_t *p, apr_array_header_t *parts,
                       const char *key, const apr_array_header_t *texts)
{
    int i;

    if (!texts->nelts) {
        return;
    }
    APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(p, ",\"%s\":[", key);
    for (i = 0; i < texts->nelts; i++) {
        const rsp_ui_text_t *t = &APR_ARRAY_IDX(texts, i, rsp_ui_text_t);
        APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
            p, "%s{\"value\":%s%s%s}", i ? "," : "", rsp_json_string(p, t->value),
            t->lang ? ",\"lang\":" : "", t->lang ? rsp_json_string(p, t->lang) : "");
    }
    APR_ARRAY_PUSH(parts, const char *) = "]";
}

const char *rsp_idp_ui_feed(apr_pool_t *p, const apr_array_header_t *uis)
{
    apr_array_header_t *parts = apr_array_make(p, 16, sizeof(const char *));
    int i, j, n = 0;

    APR_ARRAY_PUSH(parts, const char *) = "[";
    for (i = 0; uis && i < uis->nelts; i++) {
        const rsp_idp_ui_t *ui = APR_ARRAY_IDX(uis, i, const rsp_idp_ui_t *);
        if (!ui || ui->hidden) {
            continue;
        }
        APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
            p, "%s\n{\"entityID\":%s", n++ ? "," : "",
            rsp_json_string(p, ui->entity_id));
        feed_texts(p, parts, "DisplayNames", ui->names);
        feed_texts(p, parts, "Descriptions", ui->descriptions);
        if (ui->logos->nelts) {
            APR_ARRAY_PUSH(parts, const char *) = ",\"Logos\":[";
            for (j = 0; j < ui->logos->nelts; j++) {
                const rsp_ui_logo_t *l = &APR_ARRAY_IDX(ui->logos, j, rsp_ui_logo_t);
                APR_ARRAY_PUSH(parts, const char *) = apr_psprintf(
                    p, "%s{\"value\":%s%s%s%s%s%s%s}", j ? "," : "",
                    rsp_json_string(p, l->url),
                    l->height ? ",\"height\":" : "",
                    l->height ? rsp_json_string(p, l->height) : "",
                    l->width ? ",\"width\":" : "",
                    l->width ? rsp_json_string(p, l->width) : "",
                    l->lang ? ",\"lang\":" : "",
                    l->lang ? rsp_json_string(p, l->lang) : "");
            }
            APR_ARRAY_PUSH(parts, const char *) = "]";
        }
        feed_texts(p, parts, "InformationURLs", ui->info_urls);
        feed_texts(p, parts, "PrivacyStatementURLs", ui->privacy_urls);
        APR_ARRAY_PUSH(parts, const char *) = "}";
    }
    APR_ARRAY_PUSH(parts, const char *) = "\n]\n";
    return apr_array_pstrcat(p, parts, 0);
}
