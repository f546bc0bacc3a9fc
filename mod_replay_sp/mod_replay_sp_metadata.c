/* SP metadata at <endpoint>/metadata; the IdPs to choose from at
 * <endpoint>/DiscoFeed. */
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include "mod_replay_sp_metadata.h"
#include "mod_replay_sp_request.h"
#include "rsp_idp_ui.h"

APLOG_USE_MODULE(replay_sp);

int rsp_metadata_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    const char *md;

    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    md = rsp_saml_metadata(r->pool, rsp_sp_def(r, dc->sp),
                           ap_construct_url(r->pool, rsp_cfg_endpoint(dc), r));
    ap_set_content_type(r, "application/samlmetadata+xml");
    if (!r->header_only) {
        ap_rputs(md, r);
    }
    return OK;
}

/* The IdPs this SP trusts, as a discovery service shows them (JSON in the
 * shape of Shibboleth SP's DiscoFeed: rsp_idp_ui.h), built from what was
 * read at startup. */
int rsp_discofeed_handler(request_rec *r, rsp_dir_cfg_t *dc)
{
    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    ap_set_content_type(r, "application/json");
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    if (!r->header_only) {
        ap_rputs(rsp_idp_ui_feed(r->pool, rsp_sp_def(r, dc->sp)->idps->uis), r);
    }
    return OK;
}
