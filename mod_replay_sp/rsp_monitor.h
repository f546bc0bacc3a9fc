/* Store health: read what a store reports about itself (Redis INFO,
 * memcached stats and stats settings), compare one poll with the previous
 * one, and decide which alarms to raise, with their blast radius. No I/O
 * and no httpd here: the poller in the glue feeds it. */
#ifndef RSP_MONITOR_H
#define RSP_MONITOR_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#define RSP_HEALTH_TEXT 160
#define RSP_HEALTH_ERROR 600   /* a store's error: a URL and every sentinel's reason */

/* What one store server said in one poll. Numbers are -1 when the store
 * did not report them. */
typedef struct {
    char name[RSP_HEALTH_TEXT];     /* "host:port" or the store URL */
    int reachable;
    char error[RSP_HEALTH_ERROR];   /* why not, when not reachable */
    apr_time_t polled;
    char instance[64];              /* Redis run_id, memcached pid */
    apr_int64_t uptime;             /* seconds */
    apr_int64_t evictions;          /* evicted_keys; evictions + slab mover's */
    apr_int64_t refusals;           /* errorstat_OOM; store_no_memory */
    apr_int64_t activity;           /* a counter that only a reset lowers */
    apr_int64_t used;               /* bytes */
    apr_int64_t limit;              /* bytes; 0 = no limit */
    int evicting;                   /* the configuration lets it drop claims */
    char policy[RSP_HEALTH_TEXT];   /* the configuration, in words */
    int replica;                    /* a read-only Redis replica */
    int aof;                        /* Redis: append-only file on (1), off
                                     * (0); -1 unknown or memcached */
    apr_int64_t last_save;          /* Redis: last RDB snapshot, epoch s */
    apr_int64_t replicas;           /* Redis: connected replicas */
    apr_int64_t replicas_in_step;   /* Redis: of them, online and acking
                                     * (lag <= 1 s): -1 unknown */
    char primary[RSP_HEALTH_TEXT];  /* Sentinel: the master polled
                                     * ("host:port"); "" otherwise */
} rsp_health_t;

/* Parse the text of Redis `INFO` (all sections, or at least server,
 * memory, stats, replication, errorstats). Works without CONFIG. */
apr_status_t rsp_health_parse_redis(rsp_health_t *h, const char *info);

/* Parse `stats` and `stats settings` of one or several memcached servers
 * as the memcache backend's info() returns them: blocks introduced by a
 * line "server host:port"; a block "error <why>" is a server that did not
 * answer (reachable = 0). *out gets one rsp_health_t per server. */
apr_status_t rsp_health_parse_memcache(apr_array_header_t **out, apr_pool_t *p,
                                       const char *stats, const char *settings);

/* Parse what the Redis backend's info() returns for Redis Cluster: one
 * block per master ("# rsp-node NAME slots LO-HI HOST:PORT", then its
 * INFO or "error <why>"); each rsp_health_t is named "NAME slots LO-HI"
 * (a shard: a failover keeps its slots) with primary HOST:PORT. */
apr_status_t rsp_health_parse_cluster(apr_array_header_t **out, apr_pool_t *p,
                                      const char *text);

/* Ask the store how it is (Redis INFO; memcached stats and stats
 * settings of each server) and parse it: *out gets one rsp_health_t per
 * server, named as in the store's URL. A store that does not answer at
 * all gives every server reachable = 0 and the store's error; this call
 * itself never fails. The I/O is the store's own (bounded by its
 * timeout). */
struct rsp_store_t;
void rsp_health_poll(apr_array_header_t **out, apr_pool_t *p,
                     struct rsp_store_t *st);

/* What the poller remembers of one server between polls. Zero it to start. */
typedef struct {
    rsp_health_t last;          /* the last poll that reached it */
    int have_last;
    int policy_alarmed;
    char policy_seen[RSP_HEALTH_TEXT];
    int headroom_high;
    int role_alarmed;
    int replicas_alarmed;       /* 0, or the replicas alarm last raised */
    apr_time_t down_since;      /* 0 = reachable */
    apr_time_t down_logged;
} rsp_monitor_state_t;

typedef struct {
    apr_int64_t longest_window_s;        /* longest claim TTL handed out lately */
    int headroom_warn_pct;               /* e.g. 80 */
    apr_interval_time_t unreachable_repeat; /* repeat "still down" at most this often */
    int replicas_required;               /* ReplaySPStoreReplicas; 0: none */
} rsp_monitor_params_t;

typedef enum {
    RSP_ALARM_POLICY = 1,       /* error: the store may evict claims */
    RSP_ALARM_POLICY_OK,        /* notice: it no longer may */
    RSP_ALARM_EVICTION,         /* error: claims may have been evicted */
    RSP_ALARM_LOSS,             /* error: restarted or reset: claims lost */
    RSP_ALARM_REFUSALS,         /* error: full, sign-ins refused */
    RSP_ALARM_HEADROOM,         /* warning: memory above the threshold */
    RSP_ALARM_HEADROOM_OK,      /* notice: back under */
    RSP_ALARM_UNREACHABLE,      /* error: cannot be reached */
    RSP_ALARM_REACHABLE,        /* notice: reachable again, after how long */
    RSP_ALARM_ROLE,             /* error: answers as a replica */
    RSP_ALARM_ROLE_OK,          /* notice: a primary again */
    RSP_ALARM_REPLICAS,         /* error: fewer replicas in step than
                                 * ReplaySPStoreReplicas: sign-ins refused */
    RSP_ALARM_REPLICAS_THIN,    /* warning: just enough, one lagging or
                                 * gone: one more and sign-ins are refused */
    RSP_ALARM_REPLICAS_OK,      /* notice: enough replicas again */
    RSP_ALARM_FAILOVER          /* error: Sentinel moved the master: claims
                                 * its replicas lacked are lost */
} rsp_alarm_kind_t;

typedef struct {
    rsp_alarm_kind_t kind;
    int level;                  /* RSP_LOG_* */
    const char *text;
} rsp_alarm_t;

/* Compare cur with what st remembers, push the alarms to raise onto
 * alarms (rsp_alarm_t, texts from p), and remember cur. */
void rsp_monitor_step(rsp_monitor_state_t *st, const rsp_health_t *cur,
                      const rsp_monitor_params_t *mp, apr_pool_t *p,
                      apr_array_header_t *alarms);

#endif
