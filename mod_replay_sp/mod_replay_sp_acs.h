/* The assertion consumer service (mod_replay_sp_acs.c). */
#ifndef MOD_REPLAY_SP_ACS_H
#define MOD_REPLAY_SP_ACS_H

#include "mod_replay_sp_config.h"

int rsp_acs_handler(request_rec *r, rsp_dir_cfg_t *dc);

#endif
