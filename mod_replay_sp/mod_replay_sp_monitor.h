/* The store monitor (mod_replay_sp_monitor.c): one poller per host. */
#ifndef MOD_REPLAY_SP_MONITOR_H
#define MOD_REPLAY_SP_MONITOR_H

#include "mod_replay_sp_config.h"

int rsp_monitor_post_config(apr_pool_t *pconf, apr_pool_t *ptemp,
                            server_rec *s);
void rsp_monitor_register_hooks(apr_pool_t *p);

#endif
