/* mod_replay_sp glue: what every glue file shares, and only that (the
 * module record and the log tags). Each glue file declares its own API
 * in its own header; the library (rsp_*.h) knows nothing of httpd. */
#ifndef MOD_REPLAY_SP_PRIVATE_H
#define MOD_REPLAY_SP_PRIVATE_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>

/* Stable message tags: RSP_LOGNO(01001) -> "RSP01001: ".
 * Every notice-and-above line carries one; a number is never reused.
 * Next free numbers: 01050 and 02012 (the list is in docs/operations.md). */
#define RSP_LOGNO(n) "RSP" #n ": "

extern module AP_MODULE_DECLARE_DATA replay_sp_module;

#endif
