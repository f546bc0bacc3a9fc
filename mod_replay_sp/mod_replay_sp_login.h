/* SP-initiated login (mod_replay_sp_login.c): <path>/login and the
 * AuthnRequest a protected page without a session starts. */
#ifndef MOD_REPLAY_SP_LOGIN_H
#define MOD_REPLAY_SP_LOGIN_H

#include "mod_replay_sp_config.h"

/* Store a pending AuthnRequest for idp and answer with the redirect to
 * the IdP; return_to must have been checked. idp NULL: ReplaySPDefaultIdP,
 * else with several IdPs the discovery service or the built-in page, else
 * the one IdP. */
int rsp_login_start(request_rec *r, rsp_dir_cfg_t *dc, const char *idp,
                    const char *return_to);
int rsp_login_handler(request_rec *r, rsp_dir_cfg_t *dc);
/* <path>/discovery: the built-in page to choose an IdP. */
int rsp_discovery_handler(request_rec *r, rsp_dir_cfg_t *dc);

#endif
