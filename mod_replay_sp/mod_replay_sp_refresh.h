/* Metadata re-read without a restart (mod_replay_sp_refresh.c): a
 * watchdog thread in every child. */
#ifndef MOD_REPLAY_SP_REFRESH_H
#define MOD_REPLAY_SP_REFRESH_H

#include "mod_replay_sp_config.h"

int rsp_refresh_post_config(apr_pool_t *pconf, server_rec *s);

/* Before sp is loaded: each ReplaySPIdPMetadataURL fetched and verified,
 * its backing file written (or, the URL failing, the backing file
 * verified and used, with an error logged). OK, or an error logged and
 * HTTP_INTERNAL_SERVER_ERROR when neither is usable. */
int rsp_refresh_fetch_at_start(rsp_sp_conf_t *sp, server_rec *s,
                               apr_pool_t *ptemp);

#endif
