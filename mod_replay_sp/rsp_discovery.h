/* The built-in discovery page: where a browser without a session chooses
 * among an SP's IdPs when it trusts several and has no discovery service
 * of its own (PATH/discovery). Server-side only: the list is filtered by a
 * query parameter, no script runs; every name from metadata is escaped.
 * A federation lists thousands: at most max_shown matches are rendered
 * (in metadata order), with a prompt to narrow the search, so the page
 * stays small whatever the aggregate. */
#ifndef RSP_DISCOVERY_H
#define RSP_DISCOVERY_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "rsp_idp_ui.h"

typedef struct {
    const apr_array_header_t *uis;   /* rsp_idp_ui_t *: the SP's IdPs */
    const char *page_path;           /* PATH/discovery, for the search form */
    const char *login_path;          /* PATH/login, where a choice goes */
    const char *return_to;           /* where the browser goes afterwards */
    const char *query;               /* the search (NULL or "": all) */
    const apr_array_header_t *langs; /* const char *: the browser's, best first */
    const char *remembered;          /* entity ID chosen last time, or NULL */
    const char *stylesheet;          /* ReplaySPDiscoveryStylesheet, or NULL */
    int max_shown;                   /* matches rendered at most (0: default) */
} rsp_discovery_in_t;

/* How many matches the page renders at most unless told otherwise: about
 * 50 kB of HTML (an unfiltered list of 5,000 IdPs is over a megabyte). */
#define RSP_DISCOVERY_MAX_SHOWN 200

/* The page (HTML, UTF-8). IdPs in the hide-from-discovery category are
 * left out, and so is a remembered one that is not listed. With more
 * matches than max_shown, the first max_shown are listed and the count
 * says how many matched and asks for more of the name. */
const char *rsp_discovery_page(apr_pool_t *p, const rsp_discovery_in_t *in);

/* The Content-Security-Policy the page needs: nothing but its own style
 * (the built-in one by its hash, or the stylesheet's URL), https images,
 * forms to itself; no script, no frames. */
const char *rsp_discovery_csp(apr_pool_t *p, const char *stylesheet);

/* The name to show of ui for langs (const char *, best first): an exact
 * language match, else one of the same primary language, else English,
 * else the first name, else the entity ID. */
const char *rsp_discovery_name(const rsp_idp_ui_t *ui,
                               const apr_array_header_t *langs);

/* The languages of an Accept-Language header, by quality then order,
 * without those of quality 0 and "*" (at most 8; NULL header: none). */
apr_array_header_t *rsp_accept_languages(apr_pool_t *p, const char *header);

#endif
