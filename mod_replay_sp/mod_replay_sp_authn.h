/* AuthType ReplaySP and its Require providers (mod_replay_sp_authn.c). */
#ifndef MOD_REPLAY_SP_AUTHN_H
#define MOD_REPLAY_SP_AUTHN_H

#include "mod_replay_sp_config.h"

int rsp_check_authn(request_rec *r);
void rsp_authz_register(apr_pool_t *p);

#endif
