/* Which IdPs of a metadata file an SP trusts (rsp_md_filter.h). */
#include <string.h>

#include <apr_strings.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "rsp_md_filter.h"
#include "rsp_metadata.h"
#include "rsp_util.h"

#define ENTITY_CATEGORY "http://macedir.org/entity-category"

static const char *const kinds[] = {"entity=", "registrar=", "category=", NULL};

const char *rsp_md_selector_invalid(const char *s)
{
    int i;

    for (i = 0; kinds[i]; i++) {
        apr_size_t n = strlen(kinds[i]);
        if (!strncmp(s, kinds[i], n)) {
            return s[n] ? NULL : "nothing after the '='";
        }
    }
    return "expected entity=ENTITYID, registrar=AUTHORITY or category=URI";
}

/* What selectors are tested against, read once per entity. */
typedef struct {
    const char *entity_id;
    const char *registrar;
    apr_array_header_t *categories;   /* const char * */
} facts_t;

static int matches(const facts_t *f, const char *sel)
{
    int i;

    if (!strncmp(sel, "entity=", 7)) {
        return f->entity_id && !strcmp(f->entity_id, sel + 7);
    }
    if (!strncmp(sel, "registrar=", 10)) {
        return f->registrar && !strcmp(f->registrar, sel + 10);
    }
    for (i = 0; !strncmp(sel, "category=", 9) && i < f->categories->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(f->categories, i, const char *), sel + 9)) {
            return 1;
        }
    }
    return 0;
}

static int any(const facts_t *f, const apr_array_header_t *sels)
{
    int i;

    for (i = 0; sels && i < sels->nelts; i++) {
        if (matches(f, APR_ARRAY_IDX(sels, i, const char *))) {
            return 1;
        }
    }
    return 0;
}

static const char *text_of(apr_pool_t *p, xmlNodePtr n)
{
    xmlChar *c = xmlNodeGetContent(n);
    const char *out = rsp_trimmed(p, (const char *)c);

    xmlFree(c);
    return out;
}

static void read_facts(apr_pool_t *p, xmlNodePtr ed, facts_t *f)
{
    xmlXPathContextPtr ctx = rsp_metadata_xpath(ed);
    xmlXPathObjectPtr res;
    xmlChar *v;
    int i;

    f->categories = apr_array_make(p, 2, sizeof(const char *));
    if (!ctx) {
        return;
    }
    if ((v = xmlGetProp(ed, BAD_CAST "entityID")) != NULL) {
        f->entity_id = apr_pstrdup(p, (const char *)v);
        xmlFree(v);
    }
    res = xmlXPathEvalExpression(
        BAD_CAST "md:Extensions/mdrpi:RegistrationInfo", ctx);
    if (res && res->nodesetval && res->nodesetval->nodeNr == 1
        && (v = xmlGetProp(res->nodesetval->nodeTab[0],
                           BAD_CAST "registrationAuthority")) != NULL) {
        f->registrar = apr_pstrdup(p, (const char *)v);
        xmlFree(v);
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    res = xmlXPathEvalExpression(
        BAD_CAST "md:Extensions/mdattr:EntityAttributes/"
                 "saml:Attribute[@Name='" ENTITY_CATEGORY "']/saml:AttributeValue",
        ctx);
    for (i = 0; res && res->nodesetval && i < res->nodesetval->nodeNr; i++) {
        APR_ARRAY_PUSH(f->categories, const char *) =
            text_of(p, res->nodesetval->nodeTab[i]);
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    xmlXPathFreeContext(ctx);
}

int rsp_md_filter_keeps_entity(apr_pool_t *p, xmlNodePtr ed,
                               const apr_array_header_t *includes,
                               const apr_array_header_t *excludes)
{
    facts_t f;

    if ((!includes || !includes->nelts) && (!excludes || !excludes->nelts)) {
        return 1;
    }
    memset(&f, 0, sizeof(f));
    if (ed) {
        read_facts(p, ed, &f);
    }
    else {
        f.categories = apr_array_make(p, 1, sizeof(const char *));
    }
    if (includes && includes->nelts && !any(&f, includes)) {
        return 0;
    }
    return !any(&f, excludes);
}

int rsp_md_filter_keeps(apr_pool_t *p, const char *entity_md,
                        const apr_array_header_t *includes,
                        const apr_array_header_t *excludes)
{
    xmlDocPtr doc;
    int keeps;

    if ((!includes || !includes->nelts) && (!excludes || !excludes->nelts)) {
        return 1;
    }
    doc = rsp_metadata_read(entity_md, strlen(entity_md));
    keeps = rsp_md_filter_keeps_entity(p, doc ? xmlDocGetRootElement(doc) : NULL,
                                       includes, excludes);
    if (doc) {
        xmlFreeDoc(doc);
    }
    return keeps;
}
