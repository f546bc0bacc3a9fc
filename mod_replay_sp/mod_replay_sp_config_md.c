/* The metadata directives of an SP section: where its IdPs' metadata
 * comes from (files, URLs) and how it is kept up to date. */
#include <apr_strings.h>
#include <http_core.h>

#include "mod_replay_sp_config_md.h"

/* ReplaySPIdPMetadataFile PATH [CERTFILE]: CERTFILE signs the file. */
const char *rsp_cfg_add_idp_file(cmd_parms *cmd, void *mconfig, const char *arg,
                                const char *cert)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    const char *cpath = cert ? ap_server_root_relative(cmd->pool, cert) : NULL;

    if (!path || (cert && !cpath)) {
        return rsp_cfg_invalid(cmd, cpath ? arg : cert, "not a valid path");
    }
    APR_ARRAY_PUSH(sp->def.idp_files, const char *) = path;
    APR_ARRAY_PUSH(sp->def.idp_file_certs, const char *) = cpath;
    return NULL;
}

/* ReplaySPIdPMetadataURL URL CERTFILE BACKINGFILE: fetched, verified with
 * CERTFILE, kept in BACKINGFILE; the module reads BACKINGFILE as it reads
 * a ReplaySPIdPMetadataFile signed by CERTFILE. */
const char *rsp_cfg_add_idp_url(cmd_parms *cmd, void *mconfig, const char *url,
                               const char *cert, const char *backing)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    const char *cpath = ap_server_root_relative(cmd->pool, cert);
    const char *bpath = ap_server_root_relative(cmd->pool, backing);
    rsp_md_url_t *u;

    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
        return rsp_cfg_invalid(cmd, url, "not an http:// or https:// URL");
    }
    if (!cpath || !bpath) {
        return rsp_cfg_invalid(cmd, cpath ? backing : cert, "not a valid path");
    }
    if (!sp->def.md_urls) {
        sp->def.md_urls = apr_array_make(cmd->pool, 1, sizeof(rsp_md_url_t));
    }
    u = apr_array_push(sp->def.md_urls);
    u->url = url;
    u->cert_file = cpath;
    u->backing_file = bpath;
    APR_ARRAY_PUSH(sp->def.idp_files, const char *) = bpath;
    APR_ARRAY_PUSH(sp->def.idp_file_certs, const char *) = cpath;
    return NULL;
}

/* ReplaySPIdPMetadataQuery BASEURL CERTFILE CACHEDIR: once per SP. */
const char *rsp_cfg_set_mdq(cmd_parms *cmd, void *mconfig, const char *url,
                            const char *cert, const char *cache_dir)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    const char *cpath = ap_server_root_relative(cmd->pool, cert);
    const char *dpath = ap_server_root_relative(cmd->pool, cache_dir);

    if (sp->def.mdq_url) {
        return rsp_cfg_invalid(cmd, url, "given twice in one SP section");
    }
    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
        return rsp_cfg_invalid(cmd, url, "not an http:// or https:// URL");
    }
    if (strchr(url, '?') || strchr(url, '#')) {
        return rsp_cfg_invalid(cmd, url, "a base URL has no query or fragment");
    }
    if (!cpath || !dpath) {
        return rsp_cfg_invalid(cmd, cpath ? cache_dir : cert, "not a valid path");
    }
    sp->def.mdq_url = url;
    sp->def.mdq_cert_file = cpath;
    sp->def.mdq_cache_dir = dpath;
    return NULL;
}

/* ReplaySPMetadataCAFile PATH */
const char *rsp_cfg_set_md_ca_file(cmd_parms *cmd, void *mconfig,
                                  const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);

    if (!(sp->def.md_ca_file = ap_server_root_relative(cmd->pool, arg))) {
        return rsp_cfg_invalid(cmd, arg, "not a valid path");
    }
    return NULL;
}

/* ReplaySPMetadataRefresh SECONDS|Off */
const char *rsp_cfg_set_md_refresh(cmd_parms *cmd, void *mconfig,
                                  const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);

    if (!strcasecmp(arg, "Off")) {
        sp->def.md_refresh = -1;
        return NULL;
    }
    return rsp_cfg_parse_num(cmd, arg, 1, 86400, &sp->def.md_refresh);
}

/* ReplaySPMetadataMaxValidity SECONDS */
const char *rsp_cfg_set_md_max_validity(cmd_parms *cmd, void *mconfig,
                                       const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);

    return rsp_cfg_parse_num(cmd, arg, 3600, 366 * 24 * 3600, &sp->def.md_max_validity);
}
