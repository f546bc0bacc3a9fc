/* Logout (mod_replay_sp_logout.c): <path>/logout and the IdP's SLO. */
#ifndef MOD_REPLAY_SP_LOGOUT_H
#define MOD_REPLAY_SP_LOGOUT_H

#include "mod_replay_sp_config.h"

int rsp_logout_handler(request_rec *r, rsp_dir_cfg_t *dc);
int rsp_slo_handler(request_rec *r, rsp_dir_cfg_t *dc);

#endif
