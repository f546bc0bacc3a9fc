/* The metadata directives of an SP section (mod_replay_sp_config_md.c):
 * their handlers and their entries in the module's command table. */
#ifndef MOD_REPLAY_SP_CONFIG_MD_H
#define MOD_REPLAY_SP_CONFIG_MD_H

#include "mod_replay_sp_config.h"

const char *rsp_cfg_add_idp_file(cmd_parms *cmd, void *mconfig, const char *arg,
                                 const char *cert);
const char *rsp_cfg_add_idp_url(cmd_parms *cmd, void *mconfig, const char *url,
                                const char *cert, const char *backing);
const char *rsp_cfg_set_mdq(cmd_parms *cmd, void *mconfig, const char *url,
                            const char *cert, const char *cache_dir);
const char *rsp_cfg_set_md_ca_file(cmd_parms *cmd, void *mconfig,
                                   const char *arg);
const char *rsp_cfg_set_md_refresh(cmd_parms *cmd, void *mconfig,
                                   const char *arg);
const char *rsp_cfg_set_md_max_validity(cmd_parms *cmd, void *mconfig,
                                        const char *arg);

#define RSP_METADATA_DIRECTIVES \
    AP_INIT_TAKE12("ReplaySPIdPMetadataFile", rsp_cfg_add_idp_file, NULL, ACCESS_CONF,  \
                   "SAML 2.0 metadata of a trusted IdP or a federation's "              \
                   "aggregate, and the certificate that signs it (then "                \
                   "verified, validUntil required); repeat for several (no "            \
                   "default; at least one)"),                                           \
    AP_INIT_TAKE3("ReplaySPIdPMetadataURL", rsp_cfg_add_idp_url, NULL, ACCESS_CONF,     \
                  "URL of signed SAML 2.0 metadata (a federation's "                    \
                  "aggregate), the certificate that signs it, and the file "            \
                  "where the last verified copy is kept; repeat for several "           \
                  "(no default)"),                                                      \
    AP_INIT_TAKE3("ReplaySPIdPMetadataQuery", rsp_cfg_set_mdq, NULL, ACCESS_CONF,       \
                  "Base URL of a metadata query (MDQ) service, the "                    \
                  "certificate that signs what it answers, and the directory "          \
                  "where the host keeps the entities it fetched: IdPs none of "         \
                  "the metadata files names, asked for on first sight (no "             \
                  "default)"),                                                          \
    AP_INIT_TAKE1("ReplaySPMetadataCAFile", rsp_cfg_set_md_ca_file, NULL, ACCESS_CONF,  \
                  "PEM CA certificates trusted for https metadata URLs "                \
                  "(default: the system's)"),                                           \
    AP_INIT_TAKE1("ReplaySPMetadataRefresh", rsp_cfg_set_md_refresh, NULL, ACCESS_CONF, \
                  "How often each child looks at the metadata files again "             \
                  "and reads them when one changed, seconds from 1 to "                 \
                  "86400, or Off (default 300)"),                                       \
    AP_INIT_TAKE1("ReplaySPMetadataMaxValidity", rsp_cfg_set_md_max_validity, NULL,     \
                  ACCESS_CONF, "Longest validUntil - now accepted in signed "           \
                  "metadata, seconds (default 2419200: 28 days)"),                      \

#endif
