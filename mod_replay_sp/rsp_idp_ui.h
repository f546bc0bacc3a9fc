/* What an IdP's metadata says about how to show it to a user choosing
 * an IdP (discovery): its names, descriptions, logos and links
 * (mdui:UIInfo in its IDPSSODescriptor's Extensions; the Organization's
 * display names when it has no mdui:DisplayName), and whether it asks to
 * be left out of discovery (the REFEDS hide-from-discovery entity
 * category). The discovery feed (PATH/DiscoFeed) is built from it. */
#ifndef RSP_IDP_UI_H
#define RSP_IDP_UI_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <libxml/tree.h>

#define RSP_HIDE_FROM_DISCOVERY "http://refeds.org/category/hide-from-discovery"

/* A text in a language (lang NULL: none given). */
typedef struct {
    const char *value;
    const char *lang;
} rsp_ui_text_t;

typedef struct {
    const char *url;          /* https only */
    const char *lang;
    const char *height;       /* as written (digits), or NULL */
    const char *width;
} rsp_ui_logo_t;

typedef struct {
    const char *entity_id;
    apr_array_header_t *names;          /* rsp_ui_text_t */
    apr_array_header_t *descriptions;   /* rsp_ui_text_t */
    apr_array_header_t *info_urls;      /* rsp_ui_text_t, https/http only */
    apr_array_header_t *privacy_urls;   /* rsp_ui_text_t, https/http only */
    apr_array_header_t *logos;          /* rsp_ui_logo_t */
    int hidden;                         /* hide-from-discovery */
} rsp_idp_ui_t;

/* What md (one EntityDescriptor) says, for entity_id. Texts are trimmed;
 * empty ones, logos that are not https URLs and links that are not http(s)
 * URLs are left out. NULL only when md cannot be parsed. */
rsp_idp_ui_t *rsp_idp_ui_of_metadata(apr_pool_t *p, const char *entity_id,
                                     const char *md);

/* The same of an EntityDescriptor in a parsed document. NULL only when
 * out of memory. */
rsp_idp_ui_t *rsp_idp_ui_of_entity(apr_pool_t *p, const char *entity_id,
                                   xmlNodePtr ed);

/* The discovery feed of uis (rsp_idp_ui_t *), hidden ones left out: a
 * JSON array in the shape Shibboleth SP's DiscoFeed has (entityID,
 * DisplayNames, Descriptions, Logos, InformationURLs,
 * PrivacyStatementURLs; each text {value, lang}, each logo {value,
 * height, width, lang}), safe to embed in HTML (<, >, & escaped). */
const char *rsp_idp_ui_feed(apr_pool_t *p, const apr_array_header_t *uis);

#endif
