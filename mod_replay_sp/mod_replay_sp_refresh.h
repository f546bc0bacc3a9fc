/* Metadata re-read without a restart (mod_replay_sp_refresh.c): a
 * watchdog thread in every child. */
#ifndef MOD_REPLAY_SP_REFRESH_H
#define MOD_REPLAY_SP_REFRESH_H

#include "mod_replay_sp_config.h"

int rsp_refresh_post_config(apr_pool_t *pconf, server_rec *s);

#endif
