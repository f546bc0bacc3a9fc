/* Scoped attributes (rsp_scope.h). */
#include <regex.h>
#include <string.h>
#include <strings.h>

#include <apr_strings.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "rsp_saml.h"
#include "rsp_metadata.h"
#include "rsp_scope.h"
#include "rsp_util.h"


typedef struct {
    const char *value;
    regex_t *re;              /* NULL: literal */
} scope_t;

struct rsp_scopes {
    apr_array_header_t *list; /* scope_t */
};

static const char *const default_scoped[] = {
    "urn:oid:1.3.6.1.4.1.5923.1.1.1.6",           /* eduPersonPrincipalName */
    "urn:oid:1.3.6.1.4.1.5923.1.1.1.9",           /* eduPersonScopedAffiliation */
    "eduPersonPrincipalName",
    "eduPersonScopedAffiliation",
    "urn:oasis:names:tc:SAML:attribute:subject-id",
    "urn:oasis:names:tc:SAML:attribute:pairwise-id",
    NULL
};

static apr_status_t free_regex(void *re)
{
    regfree(re);
    return APR_SUCCESS;
}

/* "true"/"1" or "false"/"0" (xs:boolean), else -1. */
static int xs_boolean(const char *v)
{
    if (!v || !strcmp(v, "false") || !strcmp(v, "0")) {
        return 0;
    }
    if (!strcmp(v, "true") || !strcmp(v, "1")) {
        return 1;
    }
    return -1;
}

static apr_status_t add_scope(rsp_scopes_t *s, apr_pool_t *p, xmlNodePtr n,
                              const char **err)
{
    xmlChar *text = xmlNodeGetContent(n);
    xmlChar *rx = xmlGetProp(n, BAD_CAST "regexp");
    const char *value;
    scope_t *sc;
    int isre, rc;

    value = rsp_trimmed(p, (const char *)text);
    isre = xs_boolean(rx ? (const char *)rx : NULL);
    if (rx && isre < 0) {
        *err = apr_psprintf(p, "shibmd:Scope regexp=\"%s\" is not a boolean",
                            (const char *)rx);
    }
    xmlFree(text);
    xmlFree(rx);
    if (isre < 0) {
        return APR_EINVAL;
    }
    if (!*value) {
        *err = "an empty shibmd:Scope";
        return APR_EINVAL;
    }
    sc = apr_array_push(s->list);
    sc->value = value;
    sc->re = NULL;
    if (isre) {
        sc->re = apr_pcalloc(p, sizeof(*sc->re));
        rc = regcomp(sc->re, apr_pstrcat(p, "^(", value, ")$", NULL),
                     REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[128];
            regerror(rc, sc->re, msg, sizeof(msg));
            *err = apr_psprintf(p, "shibmd:Scope regular expression %s: %s",
                                value, msg);
            return APR_EINVAL;
        }
        apr_pool_cleanup_register(p, sc->re, free_regex, apr_pool_cleanup_null);
    }
    return APR_SUCCESS;
}

apr_status_t rsp_scopes_of_entity(rsp_scopes_t **out, apr_pool_t *p,
                                  xmlNodePtr ed, const char **err)
{
    rsp_scopes_t *s = apr_pcalloc(p, sizeof(*s));
    xmlXPathContextPtr ctx = rsp_metadata_xpath(ed);
    xmlXPathObjectPtr res = NULL;
    apr_status_t rv = APR_SUCCESS;
    int i;

    s->list = apr_array_make(p, 1, sizeof(scope_t));
    if (!ctx) {
        *err = "metadata that cannot be read";
        return APR_EINVAL;
    }
    res = xmlXPathEvalExpression(
        BAD_CAST "md:Extensions/shibmd:Scope | "
                 "md:IDPSSODescriptor/md:Extensions/shibmd:Scope", ctx);
    for (i = 0; res && res->nodesetval && i < res->nodesetval->nodeNr; i++) {
        if ((rv = add_scope(s, p, res->nodesetval->nodeTab[i], err))
            != APR_SUCCESS) {
            break;
        }
    }
    if (rv == APR_SUCCESS) {
        *out = s;
    }
    if (res) {
        xmlXPathFreeObject(res);
    }
    xmlXPathFreeContext(ctx);
    return rv;
}

apr_status_t rsp_scopes_of_metadata(rsp_scopes_t **out, apr_pool_t *p,
                                    const char *md, const char **err)
{
    xmlDocPtr doc = rsp_metadata_read(md, strlen(md));
    apr_status_t rv;

    if (!doc || !xmlDocGetRootElement(doc)) {
        *err = "metadata that cannot be read";
        rv = APR_EINVAL;
    }
    else {
        rv = rsp_scopes_of_entity(out, p, xmlDocGetRootElement(doc), err);
    }
    if (doc) {
        xmlFreeDoc(doc);
    }
    return rv;
}

int rsp_scopes_count(const rsp_scopes_t *s)
{
    return s ? s->list->nelts : 0;
}

int rsp_scope_allowed(const rsp_scopes_t *s, const char *scope)
{
    int i;

    for (i = 0; s && scope && *scope && i < s->list->nelts; i++) {
        const scope_t *sc = &APR_ARRAY_IDX(s->list, i, scope_t);
        if (sc->re ? regexec(sc->re, scope, 0, NULL, 0) == 0
                   : !strcasecmp(sc->value, scope)) {
            return 1;
        }
    }
    return 0;
}

int rsp_scoped_attribute(const apr_array_header_t *extra, const char *name)
{
    int i;

    for (i = 0; default_scoped[i]; i++) {
        if (!strcmp(default_scoped[i], name)) {
            return 1;
        }
    }
    for (i = 0; extra && i < extra->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(extra, i, const char *), name)) {
            return 1;
        }
    }
    return 0;
}

/* The scope of a scoped value: after its one '@' (NULL: no '@', more than
 * one, or nothing on either side). */
static const char *scope_of(const char *value)
{
    const char *at = strchr(value, '@');

    if (!at || at == value || !at[1] || strchr(at + 1, '@')) {
        return NULL;
    }
    return at + 1;
}

apr_array_header_t *rsp_scope_filter(apr_pool_t *p, const rsp_scopes_t *s,
                                     const apr_array_header_t *extra,
                                     apr_array_header_t *attrs)
{
    apr_array_header_t *dropped = apr_array_make(p, 1, sizeof(rsp_scope_drop_t));
    rsp_attribute_t *a = (rsp_attribute_t *)attrs->elts;
    int i, kept = 0;

    for (i = 0; i < attrs->nelts; i++) {
        const char *scope;
        if (rsp_scoped_attribute(extra, a[i].name)
            && !rsp_scope_allowed(s, scope = scope_of(a[i].value))) {
            rsp_scope_drop_t *d = apr_array_push(dropped);
            d->name = a[i].name;
            d->scope = scope;
            continue;
        }
        a[kept++] = a[i];
    }
    attrs->nelts = kept;
    return dropped;
}
