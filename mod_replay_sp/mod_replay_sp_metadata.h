/* The SP's metadata at <path>/metadata (mod_replay_sp_metadata.c). */
#ifndef MOD_REPLAY_SP_METADATA_H
#define MOD_REPLAY_SP_METADATA_H

#include "mod_replay_sp_config.h"

int rsp_metadata_handler(request_rec *r, rsp_dir_cfg_t *dc);
int rsp_discofeed_handler(request_rec *r, rsp_dir_cfg_t *dc);

#endif
