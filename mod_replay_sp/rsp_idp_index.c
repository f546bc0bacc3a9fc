/* The IdPs an SP trusts, read once into an index (rsp_idp_index.h). */
#include <string.h>

#include <apr_base64.h>
#include <apr_strings.h>

#include <libxml/tree.h>

#include "rsp_idp_index.h"
#include "rsp_md_filter.h"
#include "rsp_metadata.h"
#include "rsp_util.h"
#include "rsp_xml.h"

#define NS_MD "urn:oasis:names:tc:SAML:2.0:metadata"
#define NS_DS "http://www.w3.org/2000/09/xmldsig#"

rsp_idp_index_t *rsp_idp_index_make(apr_pool_t *p)
{
    rsp_idp_index_t *ix = apr_pcalloc(p, sizeof(*ix));

    ix->list = apr_array_make(p, 4, sizeof(rsp_idp_t *));
    ix->uis = apr_array_make(p, 4, sizeof(rsp_idp_ui_t *));
    ix->by_id = apr_hash_make(p);
    return ix;
}

/* An attribute's value in p; NULL when absent or empty. */
static const char *attr(apr_pool_t *p, xmlNodePtr n, const char *name)
{
    const char *v = rsp_xml_attr(p, n, name);

    return v && *v ? v : NULL;
}

static void add_endpoint(apr_array_header_t *to, apr_pool_t *p, xmlNodePtr n)
{
    rsp_md_endpoint_t e;

    e.binding = attr(p, n, "Binding");
    e.location = attr(p, n, "Location");
    e.response_location = attr(p, n, "ResponseLocation");
    if (e.binding && e.location) {
        APR_ARRAY_PUSH(to, rsp_md_endpoint_t) = e;
    }
}

/* A certificate's base64 text, white space and all, as DER. It is not
 * decoded here: OpenSSL 3 takes about a million instructions to decode a
 * certificate (its public key through the provider's decoders), which an
 * aggregate of thousands would pay at every start for IdPs nobody signs
 * in from. It is decoded on the IdP's first use; one that does not
 * decode then is no key of the IdP's (rsp_saml_idp_public_keys). */
static void add_cert(apr_array_header_t *to, apr_pool_t *p,
                     apr_pool_t *scratch, xmlNodePtr n)
{
    xmlChar *text = xmlNodeGetContent(n);
    char *clean, *o;
    const char *c;
    rsp_der_t d;

    if (!text) {
        return;
    }
    clean = o = apr_palloc(scratch, strlen((char *)text) + 1);
    for (c = (char *)text; *c; c++) {
        if (*c != ' ' && *c != '\t' && *c != '\r' && *c != '\n') {
            *o++ = *c;
        }
    }
    *o = '\0';
    xmlFree(text);
    d.der = apr_palloc(p, (apr_size_t)apr_base64_decode_len(clean));
    d.len = apr_base64_decode_binary(d.der, clean);
    if (d.len > 0 && d.der[0] == 0x30) { /* a DER SEQUENCE */
        APR_ARRAY_PUSH(to, rsp_der_t) = d;
    }
}

/* Every ds:X509Certificate under n. */
static void find_certs(apr_array_header_t *to, apr_pool_t *p,
                       apr_pool_t *scratch, xmlNodePtr n, int depth)
{
    xmlNodePtr c;

    for (c = n->children; c && depth < 8; c = c->next) {
        if (rsp_xml_is(c, NS_DS, "X509Certificate")) {
            add_cert(to, p, scratch, c);
        }
        else if (c->type == XML_ELEMENT_NODE) {
            find_certs(to, p, scratch, c, depth + 1);
        }
    }
}

static void read_role(rsp_idp_t *idp, apr_pool_t *p, apr_pool_t *scratch,
                      xmlNodePtr role)
{
    xmlNodePtr c;
    const char *v = attr(scratch, role, "WantAuthnRequestsSigned");

    idp->want_requests_signed = v && (!strcmp(v, "true") || !strcmp(v, "1"));
    idp->sso = apr_array_make(p, 2, sizeof(rsp_md_endpoint_t));
    idp->slo = apr_array_make(p, 2, sizeof(rsp_md_endpoint_t));
    idp->name_id_formats = apr_array_make(p, 1, sizeof(const char *));
    idp->certs = apr_array_make(p, 1, sizeof(rsp_der_t));
    for (c = role->children; c; c = c->next) {
        if (rsp_xml_is(c, NS_MD, "SingleSignOnService")) {
            add_endpoint(idp->sso, p, c);
        }
        else if (rsp_xml_is(c, NS_MD, "SingleLogoutService")) {
            add_endpoint(idp->slo, p, c);
        }
        else if (rsp_xml_is(c, NS_MD, "NameIDFormat")) {
            xmlChar *t = xmlNodeGetContent(c);
            const char *f = rsp_trimmed(p, (const char *)t);
            xmlFree(t);
            if (*f) {
                APR_ARRAY_PUSH(idp->name_id_formats, const char *) = f;
            }
        }
        else if (rsp_xml_is(c, NS_MD, "KeyDescriptor")) {
            const char *use = attr(scratch, c, "use");
            if (!use || !strcmp(use, "signing")) {
                find_certs(idp->certs, p, scratch, c, 0);
            }
        }
    }
}

typedef struct {
    rsp_idp_index_t *ix;
    apr_pool_t *p;
    apr_pool_t *scratch;              /* cleared after each entity */
    apr_time_t valid_until;
    const apr_array_header_t *includes, *excludes;
    int n;                            /* IdP entities seen */
} adding_t;

static const char *add_one(void *baton, xmlNodePtr ed)
{
    adding_t *a = baton;
    apr_pool_t *p = a->p;
    const char *id = attr(p, ed, "entityID"), *why = NULL;
    rsp_idp_t *idp;

    a->n++;
    if (!id) {
        return apr_psprintf(p, "not valid SAML 2.0 metadata of an IdP "
                            "(entity %d has no entityID)", a->n);
    }
    if (!rsp_md_filter_keeps_entity(p, ed, a->includes, a->excludes)) {
        a->ix->skipped++;
        return NULL;
    }
    if (apr_hash_get(a->ix->by_id, id, APR_HASH_KEY_STRING)) {
        return apr_psprintf(p, "IdP %s is already configured by another "
                            "metadata file or entity", id);
    }
    idp = apr_pcalloc(p, sizeof(*idp));
    idp->entity_id = id;
    idp->valid_until = a->valid_until;
    read_role(idp, p, a->scratch, rsp_metadata_idp_role(ed));
    apr_pool_clear(a->scratch);
    if (rsp_scopes_of_entity(&idp->scopes, p, ed, &why) != APR_SUCCESS) {
        return apr_psprintf(p, "IdP %s: %s", id, why);
    }
    if (!(idp->ui = rsp_idp_ui_of_entity(p, id, ed))) {
        return "out of memory";
    }
    idp->pos = a->ix->list->nelts;
    APR_ARRAY_PUSH(a->ix->list, rsp_idp_t *) = idp;
    APR_ARRAY_PUSH(a->ix->uis, rsp_idp_ui_t *) = idp->ui;
    apr_hash_set(a->ix->by_id, id, APR_HASH_KEY_STRING, idp);
    if (a->valid_until && (!a->ix->valid_until
                           || a->valid_until < a->ix->valid_until)) {
        a->ix->valid_until = a->valid_until;
    }
    return NULL;
}

static apr_status_t index_add(rsp_idp_index_t *ix, apr_pool_t *p,
                              const char *md, apr_size_t len, xmlDocPtr tree,
                              apr_time_t valid_until,
                              const apr_array_header_t *includes,
                              const apr_array_header_t *excludes,
                              const char **err)
{
    adding_t a;
    apr_status_t rv;

    memset(&a, 0, sizeof(a));
    if (apr_pool_create(&a.scratch, p) != APR_SUCCESS) {
        *err = "out of memory";
        return APR_ENOMEM;
    }
    a.ix = ix;
    a.p = p;
    a.valid_until = valid_until;
    a.includes = includes;
    a.excludes = excludes;
    rv = tree ? rsp_metadata_each_idp_in(tree, add_one, &a, err)
              : rsp_metadata_each_idp(md, len, add_one, &a, err);
    apr_pool_destroy(a.scratch);
    return rv;
}

apr_status_t rsp_idp_index_add(rsp_idp_index_t *ix, apr_pool_t *p,
                               const char *md, apr_size_t len,
                               apr_time_t valid_until,
                               const apr_array_header_t *includes,
                               const apr_array_header_t *excludes,
                               const char **err)
{
    return index_add(ix, p, md, len, NULL, valid_until, includes, excludes,
                     err);
}

apr_status_t rsp_idp_index_add_tree(rsp_idp_index_t *ix, apr_pool_t *p,
                                    xmlDocPtr tree, apr_time_t valid_until,
                                    const apr_array_header_t *includes,
                                    const apr_array_header_t *excludes,
                                    const char **err)
{
    return index_add(ix, p, NULL, 0, tree, valid_until, includes, excludes,
                     err);
}

const rsp_idp_t *rsp_idp_find(const rsp_idp_index_t *ix, const char *entity_id)
{
    return ix && entity_id
        ? apr_hash_get(ix->by_id, entity_id, APR_HASH_KEY_STRING) : NULL;
}

int rsp_idp_count(const rsp_idp_index_t *ix)
{
    return ix ? ix->list->nelts : 0;
}

const rsp_idp_t *rsp_idp_at(const rsp_idp_index_t *ix, int n)
{
    return ix && n >= 0 && n < ix->list->nelts
        ? APR_ARRAY_IDX(ix->list, n, const rsp_idp_t *) : NULL;
}

static const char *endpoints(apr_pool_t *p, const char *element,
                             const apr_array_header_t *list)
{
    const char *out = "";
    int i;

    for (i = 0; i < list->nelts; i++) {
        const rsp_md_endpoint_t *e = &APR_ARRAY_IDX(list, i, rsp_md_endpoint_t);
        out = apr_pstrcat(
            p, out, "<md:", element, " Binding=\"",
            rsp_html_escape(p, e->binding), "\" Location=\"",
            rsp_html_escape(p, e->location), "\"",
            e->response_location ? " ResponseLocation=\"" : "",
            e->response_location ? rsp_html_escape(p, e->response_location) : "",
            e->response_location ? "\"" : "", "/>", NULL);
    }
    return out;
}

const char *rsp_idp_lasso_metadata(apr_pool_t *p, const rsp_idp_t *idp)
{
    const char *formats = "";
    int i;

    for (i = 0; i < idp->name_id_formats->nelts; i++) {
        formats = apr_pstrcat(
            p, formats, "<md:NameIDFormat>",
            rsp_html_escape(p, APR_ARRAY_IDX(idp->name_id_formats, i,
                                             const char *)),
            "</md:NameIDFormat>", NULL);
    }
    return apr_pstrcat(
        p, "<md:EntityDescriptor xmlns:md=\"" NS_MD "\" entityID=\"",
        rsp_html_escape(p, idp->entity_id), "\"><md:IDPSSODescriptor "
        "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\"",
        idp->want_requests_signed ? " WantAuthnRequestsSigned=\"true\"" : "",
        ">", endpoints(p, "SingleLogoutService", idp->slo), formats,
        endpoints(p, "SingleSignOnService", idp->sso),
        "</md:IDPSSODescriptor></md:EntityDescriptor>", NULL);
}
