/* replay-sp: the operators' command-line tool. A second consumer of the
 * module's library: the store URLs, backends, timeouts, record codecs,
 * health parsing and alarm rules are the library's, not copied here. */
#ifndef REPLAY_SP_TOOL_H
#define REPLAY_SP_TOOL_H

#include <stdio.h>

#include <apr_pools.h>
#include <apr_tables.h>

#include "rsp_store.h"

/* Exit statuses (documented in replay-sp(1)). */
#define RSP_EXIT_OK 0
#define RSP_EXIT_FINDING 1   /* check: the store could lose claims;
                              * lookup: not claimed */
#define RSP_EXIT_ERROR 2     /* unreachable store, wrong password, bad URL */
#define RSP_EXIT_USAGE 64

typedef struct {
    apr_pool_t *p;
    int json;
    apr_interval_time_t timeout;   /* --timeout, like ReplaySPStoreTimeout */
    const char *prefix;            /* --prefix, like ReplaySPStoreKeyPrefix */
    apr_array_header_t *args;      /* positional arguments (const char *) */
    apr_table_t *opts;             /* --name value (flags: "1") */
} tool_t;

/* An option's value, or NULL. */
const char *tool_opt(const tool_t *t, const char *name);

/* Open the store named by url as the module would (URL forms, timeout);
 * RSP_EXIT_OK or RSP_EXIT_ERROR with the reason printed. */
int tool_store(tool_t *t, const char *url, rsp_store_t **st);

/* A JSON string literal of s ("null" for NULL). */
const char *tool_json(apr_pool_t *p, const char *s);

/* A time as xs:dateTime UTC. */
const char *tool_time(apr_pool_t *p, apr_time_t t);

void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_check(tool_t *t);
int cmd_capacity(tool_t *t);
int cmd_lookup(tool_t *t);
int cmd_sessions(tool_t *t);
int cmd_metadata(tool_t *t);

#endif
