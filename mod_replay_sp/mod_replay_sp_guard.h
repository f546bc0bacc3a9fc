/* The guard in front of another SP (mod_replay_sp_guard.c). */
#ifndef MOD_REPLAY_SP_GUARD_H
#define MOD_REPLAY_SP_GUARD_H

#include "mod_replay_sp_config.h"

void rsp_guard_register_hooks(apr_pool_t *p);

#endif
