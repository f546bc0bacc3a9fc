/* The status page and mod_status's (mod_replay_sp_status.c). */
#ifndef MOD_REPLAY_SP_STATUS_H
#define MOD_REPLAY_SP_STATUS_H

#include "mod_replay_sp_config.h"

int rsp_status_handler(request_rec *r);
int rsp_status_hook(request_rec *r, int flags);

#endif
