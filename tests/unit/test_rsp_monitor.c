/* Unit tests for rsp_monitor.c: parsing what a store reports about itself
 * (Redis INFO; memcached stats and stats settings as the memcache backend's
 * info() returns them) and comparing one poll with the previous one to
 * decide the alarms of DESIGN.md invariant 6 (the Monitoring section and
 * issue 4): policy, eviction, loss, refusals, headroom, reachability, role,
 * each with its blast radius in the text.
 *
 * The fixtures below are real output, captured from Debian's
 * /usr/bin/redis-server 7.0.15 and /usr/bin/memcached 1.6.18 on 127.0.0.1
 * (port 17379 for Redis, 17211/17212 for memcached), each state produced
 * the way its comment says, one state after the other in one server's
 * life unless a comment says otherwise.
 *
 * Redis: `redis-cli -p 17379 info`, byte for byte (CRLF line ends, as the
 * INFO bulk reply carries them). R_DEFAULT is kept whole; the others keep
 * the whole sections the monitor reads (Server, Memory, Stats, Replication,
 * Errorstats) and drop Clients, Persistence, CPU, Modules, Cluster and
 * Keyspace.
 *
 * memcached: `stats` and `stats settings` sent over a socket, whole, turned
 * into what mc_info() in rsp_store_memcache.c returns: a line
 * "server 127.0.0.1:11211" (the name the backend would give it) before each
 * server's block, and each "STAT x y" line as "x y\n"; the END line is not
 * part of it. MC_HALF and MC_SET_HALF are the backend's own output, real
 * port names and all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsp_unit.h"
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "rsp_log.h"
#include "rsp_monitor.h"
#include "rsp_util.h"

/* ------------------------------------------------------------------ */
/* Fixtures: Redis INFO                                                */

/* default configuration: noeviction, maxmemory 0 (all sections) */
static const char *R_DEFAULT; /* monitor/r-default.txt */

/* CONFIG SET maxmemory 10mb */
static const char *R_LIMIT; /* monitor/r-limit.txt */

/* then CONFIG SET maxmemory-policy allkeys-lru */
static const char *R_ALLKEYS; /* monitor/r-allkeys.txt */

/* then CONFIG SET maxmemory-policy volatile-lru */
static const char *R_VOLATILE; /* monitor/r-volatile.txt */

/* allkeys-lru, maxmemory just above used_memory, 2000 SETs of 1000 bytes:
 * evicted_keys > 0 */
static const char *R_EVICTED; /* monitor/r-evicted.txt */

/* FLUSHALL, noeviction, maxmemory = used_memory + 100000 */
static const char *R_OOM_BEFORE; /* monitor/r-oom-before.txt */

/* then 300 SETs of 1000 bytes: OOM refusals (errorstat_OOM) */
static const char *R_OOM; /* monitor/r-oom.txt */

/* then CONFIG RESETSTAT */
static const char *R_RESETSTAT; /* monitor/r-resetstat.txt */

/* CONFIG SET maxmemory 10mb, FLUSHALL, REPLICAOF 127.0.0.1 17390 (nothing
 * listens there) */
static const char *R_REPLICA; /* monitor/r-replica.txt */

/* then REPLICAOF NO ONE */
static const char *R_PRIMARY; /* monitor/r-primary.txt */

/* the same redis-server stopped and started again: new run_id, default
 * configuration */
static const char *R_RESTARTED; /* monitor/r-restarted.txt */

/* then CONFIG SET maxmemory 10mb */
static const char *R_RESTARTED_LIMIT; /* monitor/r-restarted-limit.txt */

/* another redis-server: CONFIG SET maxmemory 10mb, 20 small SETs */
static const char *R_QUIET; /* monitor/r-quiet.txt */

/* then CONFIG RESETSTAT (nothing was evicted or refused before) */
static const char *R_QUIET_RESET; /* monitor/r-quiet-reset.txt */

/* a redis-server started with --maxmemory 10mb --maxmemory-policy
 * noeviction --rename-command CONFIG '' (CONFIG GET answers: ERR unknown
 * command 'config') */
static const char *R_NOCONFIG; /* monitor/r-noconfig.txt */

/* ------------------------------------------------------------------ */
/* Fixtures: memcached stats and stats settings                        */

/* memcached -m 2 (evictions on, slab page mover on) */
static const char *MC_DEFAULT; /* monitor/mc-default.txt */

/* then 6000 sets of 1000 bytes: evictions */
static const char *MC_EVICTED; /* monitor/mc-evicted.txt */

/* then stats reset */
static const char *MC_RESET; /* monitor/mc-reset.txt */

/* memcached -M */
static const char *MC_M; /* monitor/mc-m.txt */

/* memcached -o no_slab_reassign */
static const char *MC_NOSLAB; /* monitor/mc-noslab.txt */

/* memcached -M -o no_slab_reassign -m 2 */
static const char *MC_SAFE; /* monitor/mc-safe.txt */

/* then 6000 sets of 1000 bytes: SERVER_ERROR out of memory storing object */
static const char *MC_FULL; /* monitor/mc-full.txt */

/* the same memcached -M -o no_slab_reassign -m 2 stopped and started
 * again: new pid */
static const char *MC_SAFE_RESTARTED; /* monitor/mc-safe-restarted.txt */

/* two servers: the restarted one above as 127.0.0.1:11211 and memcached -M
 * -o no_slab_reassign (64 MB) as 127.0.0.1:11212 */
static const char *MC_TWO; /* monitor/mc-two.txt */

/* another memcached -M -o no_slab_reassign -m 2: 20 sets of 100 bytes */
static const char *MC_QUIET; /* monitor/mc-quiet.txt */

/* then stats reset (nothing was evicted or refused before) */
static const char *MC_QUIET_RESET; /* monitor/mc-quiet-reset.txt */

/* what the memcache backend's info() itself returned (a scratch program
 * linked with librsp, store memcache://127.0.0.1:17211,127.0.0.1:17212)
 * with memcached -M -o no_slab_reassign -m 2 on 17211 and nothing on
 * 17212: real port names, and the backend's "error" block for the server
 * that did not answer */
static const char *MC_HALF; /* monitor/mc-half.txt */

/* the same for stats settings */
static const char *MC_SET_HALF; /* monitor/mc-set-half.txt */

/* stats settings of memcached -m 2 */
static const char *MC_SET_DEFAULT; /* monitor/mc-set-default.txt */

/* stats settings of memcached -M */
static const char *MC_SET_M; /* monitor/mc-set-m.txt */

/* stats settings of memcached -o no_slab_reassign */
static const char *MC_SET_NOSLAB; /* monitor/mc-set-noslab.txt */

/* stats settings of memcached -M -o no_slab_reassign -m 2 */
static const char *MC_SET_SAFE; /* monitor/mc-set-safe.txt */

/* stats settings of the two servers of MC_TWO */
static const char *MC_SET_TWO; /* monitor/mc-set-two.txt */

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

#define REDIS_NAME "redis://127.0.0.1:17379"
#define MC_NAME "127.0.0.1:11211"
#define RUN_ID_A "328a48ddd74eae51397df95d750875fcc6978603"
#define RUN_ID_B "966958ca9c34778cb709b6c16116fa00a79da460"

/* 2026-11-30T10:00:00Z, a few minutes before the captures were made */
#define T0_SEC APR_INT64_C(1796032800)
#define T0 apr_time_from_sec(T0_SEC)
#define SEC(n) apr_time_from_sec(n)

#define WINDOW_S 3600

static const rsp_monitor_params_t params = {
    WINDOW_S,           /* longest_window_s */
    80,                 /* headroom_warn_pct */
    APR_USEC_PER_SEC * 300 /* unreachable_repeat: 5 minutes */
};

/* text with the one occurrence of from replaced by to (for the few
 * fixtures a real server cannot be made to produce) */
static const char *edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);

    ck_assert_msg(at != NULL, "fixture lacks \"%s\"", from);
    ck_assert_msg(strstr(at + 1, from) == NULL, "\"%s\" twice", from);
    return apr_pstrcat(pool, apr_pstrndup(pool, text, (apr_size_t)(at - text)),
                       to, at + strlen(from), NULL);
}

/* Redis INFO parsed, named as the glue names it (its store URL) */
static rsp_health_t redis(const char *info)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, info), APR_SUCCESS);
    apr_cpystrn(h.name, REDIS_NAME, sizeof(h.name));
    return h;
}

/* the parsed memcached servers, checking how many there are */
static apr_array_header_t *mc_all(const char *stats, const char *settings,
                                  int n)
{
    apr_array_header_t *out = NULL;

    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, stats, settings),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(out->nelts, n);
    return out;
}

#define MC_IDX(a, i) (&APR_ARRAY_IDX((a), (i), rsp_health_t))

/* the one memcached server of a one-server stats text */
static rsp_health_t mc(const char *stats, const char *settings)
{
    return *MC_IDX(mc_all(stats, settings, 1), 0);
}

/* what the glue feeds the monitor when a store does not answer */
static rsp_health_t down(const char *name, const char *error)
{
    rsp_health_t h;

    memset(&h, 0, sizeof(h));
    apr_cpystrn(h.name, name, sizeof(h.name));
    apr_cpystrn(h.error, error, sizeof(h.error));
    return h;
}

/* one poll at time `polled`; the alarms it raised */
static apr_array_header_t *step(rsp_monitor_state_t *st, rsp_health_t h,
                                apr_time_t polled)
{
    apr_array_header_t *alarms = apr_array_make(pool, 4, sizeof(rsp_alarm_t));

    h.polled = polled;
    rsp_monitor_step(st, &h, &params, pool, alarms);
    return alarms;
}

static const char *kind_name(rsp_alarm_kind_t k)
{
    switch (k) {
    case RSP_ALARM_POLICY: return "POLICY";
    case RSP_ALARM_POLICY_OK: return "POLICY_OK";
    case RSP_ALARM_EVICTION: return "EVICTION";
    case RSP_ALARM_LOSS: return "LOSS";
    case RSP_ALARM_REFUSALS: return "REFUSALS";
    case RSP_ALARM_HEADROOM: return "HEADROOM";
    case RSP_ALARM_HEADROOM_OK: return "HEADROOM_OK";
    case RSP_ALARM_UNREACHABLE: return "UNREACHABLE";
    case RSP_ALARM_REACHABLE: return "REACHABLE";
    case RSP_ALARM_ROLE: return "ROLE";
    case RSP_ALARM_ROLE_OK: return "ROLE_OK";
    case RSP_ALARM_REPLICAS: return "REPLICAS";
    case RSP_ALARM_REPLICAS_THIN: return "REPLICAS_THIN";
    case RSP_ALARM_REPLICAS_OK: return "REPLICAS_OK";
    case RSP_ALARM_FAILOVER: return "FAILOVER";
    }
    return "?";
}

/* the kinds raised, in order, comma-separated ("" for none) */
static const char *kinds(const apr_array_header_t *alarms)
{
    const char *s = "";
    int i;

    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        s = apr_pstrcat(pool, s, i ? "," : "", kind_name(a->kind), NULL);
    }
    return s;
}

static int count(const apr_array_header_t *alarms, rsp_alarm_kind_t k)
{
    int i, n = 0;

    for (i = 0; i < alarms->nelts; i++) {
        n += APR_ARRAY_IDX(alarms, i, rsp_alarm_t).kind == k;
    }
    return n;
}

/* the one alarm of kind k */
static const rsp_alarm_t *only(const apr_array_header_t *alarms,
                               rsp_alarm_kind_t k)
{
    int i;

    ck_assert_msg(count(alarms, k) == 1, "%d %s alarms in [%s]",
                  count(alarms, k), kind_name(k), kinds(alarms));
    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        if (a->kind == k) {
            ck_assert_ptr_nonnull(a->text);
            return a;
        }
    }
    return NULL;
}

#define ck_assert_has(text, part)                                          \
    ck_assert_msg(strstr((text), (part)) != NULL,                          \
                  "\"%s\" not in \"%s\"", (part), (text))
#define ck_assert_lacks(text, part)                                        \
    ck_assert_msg(strstr((text), (part)) == NULL,                          \
                  "\"%s\" in \"%s\"", (part), (text))

static const char *fmt(apr_time_t t)
{
    return rsp_format_time(pool, t);
}

/* ------------------------------------------------------------------ */
/* rsp_health_parse_redis                                              */

START_TEST(test_redis_default)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_DEFAULT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.uptime, 2);
    ck_assert_int_eq(h.evictions, 0);
    /* "# Errorstats" is there, without errorstat_OOM: none refused */
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 1);
    ck_assert_int_eq(h.used, 941584);
    ck_assert_int_eq(h.limit, 0);
    /* noeviction, but no maxmemory: it grows until the system kills it */
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "no maxmemory");
    ck_assert_int_eq(h.replica, 0);
    ck_assert_int_eq(h.reachable, 1);
    ck_assert_str_eq(h.error, "");
    ck_assert_str_eq(h.name, ""); /* the glue names it */
}
END_TEST

START_TEST(test_redis_noeviction_with_limit)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.limit, 10485760);
    ck_assert_int_eq(h.used, 990960);
    ck_assert_int_eq(h.activity, 3);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");
}
END_TEST

START_TEST(test_redis_evicting_policies)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_ALLKEYS), APR_SUCCESS);
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_str_eq(h.policy, "maxmemory-policy allkeys-lru");
    ck_assert_int_eq(h.limit, 10485760);

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_VOLATILE), APR_SUCCESS);
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_str_eq(h.policy, "maxmemory-policy volatile-lru");
}
END_TEST

START_TEST(test_redis_evicted)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_EVICTED), APR_SUCCESS);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 2011);
    ck_assert_int_eq(h.used, 1190464);
    ck_assert_int_eq(h.limit, 1189320);
    ck_assert_int_eq(h.evicting, 1);
}
END_TEST

START_TEST(test_redis_oom_refusals)
{
    rsp_health_t h;

    /* errorstat_OOM:count=209 */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_OOM), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, 209);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.uptime, 6);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_OOM_BEFORE), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, 0);
}
END_TEST

START_TEST(test_redis_resetstat)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_RESETSTAT), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_A);
    ck_assert_int_eq(h.uptime, 6);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 1);
}
END_TEST

START_TEST(test_redis_restarted)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_RESTARTED), APR_SUCCESS);
    ck_assert_str_eq(h.instance, RUN_ID_B);
    ck_assert_int_eq(h.uptime, 1);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.activity, 1);
}
END_TEST

START_TEST(test_redis_replica)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, R_REPLICA), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 1);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_PRIMARY), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_int_eq(h.replica, 0);
}
END_TEST

START_TEST(test_redis_without_config)
{
    rsp_health_t h;

    /* Managed Redis disables or renames CONFIG. The parser reads only the
     * INFO text (maxmemory and maxmemory_policy are in INFO memory), so
     * this Redis, whose CONFIG GET answered "ERR unknown command 'config'"
     * (counted in its Errorstats as errorstat_ERR), is read in full. */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_NOCONFIG), APR_SUCCESS);
    ck_assert_str_eq(h.instance, "f1a76140b5aa3ace59f76f0a00974ab27920c4fa");
    ck_assert_int_eq(h.uptime, 0);
    ck_assert_int_eq(h.limit, 10485760);
    ck_assert_int_eq(h.used, 941848);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "maxmemory-policy noeviction");
    /* an error other than OOM is no refusal */
    ck_assert_int_eq(h.refusals, 0);
}
END_TEST

START_TEST(test_redis_without_errorstats)
{
    rsp_health_t h;
    /* INFO cut before "# Replication": no Errorstats section, so whether
     * anything was refused is unknown (-1), not 0 */
    const char *cut = apr_pstrndup(pool, R_OOM,
                                   (apr_size_t)(strstr(R_OOM, "# Replication")
                                                - R_OOM));

    ck_assert_int_eq(rsp_health_parse_redis(&h, cut), APR_SUCCESS);
    ck_assert_int_eq(h.refusals, -1);
    ck_assert_int_eq(h.evictions, 1840);
    ck_assert_int_eq(h.replica, 0);
}
END_TEST

START_TEST(test_redis_lf_line_ends)
{
    rsp_health_t crlf, lf;
    char *text = apr_pstrdup(pool, R_OOM), *r, *w;

    for (r = w = text; *r; r++) {
        if (*r != '\r') {
            *w++ = *r;
        }
    }
    *w = '\0';
    ck_assert_int_eq(rsp_health_parse_redis(&crlf, R_OOM), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&lf, text), APR_SUCCESS);
    ck_assert_str_eq(lf.instance, crlf.instance);
    ck_assert_int_eq(lf.refusals, 209);
    ck_assert_int_eq(lf.used, crlf.used);
    ck_assert_int_eq(lf.limit, crlf.limit);
    ck_assert_str_eq(lf.policy, crlf.policy);
}
END_TEST

START_TEST(test_redis_rejects)
{
    rsp_health_t h;
    const char *memory = strstr(R_LIMIT, "# Memory");
    const char *server_only = apr_pstrndup(pool, R_LIMIT,
                                           (apr_size_t)(memory - R_LIMIT));

    ck_assert_int_eq(rsp_health_parse_redis(&h, ""), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, "garbage"), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, "\r\n\r\n"), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(
                         &h, "-ERR unknown command 'INFO'\r\n"), APR_EINVAL);
    /* INFO without the server section: no run_id, no uptime */
    ck_assert_int_eq(rsp_health_parse_redis(&h, memory), APR_EINVAL);
    /* INFO server only: no maxmemory, no policy */
    ck_assert_int_eq(rsp_health_parse_redis(&h, server_only), APR_EINVAL);
    /* memcached stats are not Redis INFO */
    ck_assert_int_eq(rsp_health_parse_redis(&h, MC_SAFE), APR_EINVAL);
}
END_TEST

/* Numbers no store reports (above 10^15): refused, so that sums,
 * percentages and microseconds of what is accepted fit in 64 bits. */
START_TEST(test_rejects_huge_numbers)
{
    rsp_health_t h;
    apr_array_header_t *out = NULL;

    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nused_memory:",
                                                     "\nused_memory:9" )), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
        "\nuptime_in_seconds:1000000000000001\r\n")), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
        "\nuptime_in_seconds:1000000000000000\r\n")), APR_SUCCESS);
    ck_assert_int_eq(rsp_health_parse_redis(&h, edit(R_LIMIT, "\nmaxmemory:10485760\r\n",
        "\nmaxmemory:92233720368547758\r\n")), APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, edit(MC_SAFE, "\nuptime 4\n",
        "\nuptime 99999999999999999\n"), MC_SET_SAFE), APR_EINVAL);
}
END_TEST

/* An uptime longer than the epoch (accepted: under 10^15 s) dates a
 * restart at the poll, not before 1970. */
START_TEST(test_step_uptime_beyond_epoch)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    al = step(&st, redis(edit(R_RESTARTED_LIMIT, "\nuptime_in_seconds:",
                              "\nuptime_in_seconds:99999999999")), T0 + SEC(5));
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_has(a->text, fmt(T0 + SEC(5)));
}
END_TEST

START_TEST(test_redis_rejects_bad_numbers)
{
    rsp_health_t h1, h2;
    apr_status_t rv1, rv2, rv3;
    apr_array_header_t *out = NULL;

    /* A value that is not a number is as good as a missing one: the
     * header says numbers the store did not report are -1, and a missing
     * maxmemory or uptime_in_seconds makes the text unusable (APR_EINVAL).
     * Not "0 = no limit" (a policy alarm that names the wrong cause) nor
     * the digits before the junk. */
    rv1 = rsp_health_parse_redis(&h1, edit(R_LIMIT, "\nmaxmemory:10485760\r\n",
                                           "\nmaxmemory:lots\r\n"));
    rv2 = rsp_health_parse_redis(&h2, edit(R_LIMIT, "\nuptime_in_seconds:2\r\n",
                                           "\nuptime_in_seconds:2x\r\n"));
    /* the same for memcached's uptime */
    rv3 = rsp_health_parse_memcache(
        &out, pool, edit(MC_SAFE, "\nuptime 4\n", "\nuptime 4x\n"),
        MC_SET_SAFE);
    ck_assert_msg(rv1 == APR_EINVAL && rv2 == APR_EINVAL && rv3 == APR_EINVAL,
                  "maxmemory:lots -> rv %d, limit %" APR_INT64_T_FMT
                  ", policy \"%s\"; uptime_in_seconds:2x -> rv %d, uptime %"
                  APR_INT64_T_FMT "; memcached uptime 4x -> rv %d, uptime %"
                  APR_INT64_T_FMT "; expected APR_EINVAL (%d) for all",
                  rv1, h1.limit, h1.policy, rv2, h2.uptime, rv3,
                  rv3 == APR_SUCCESS ? MC_IDX(out, 0)->uptime : -1,
                  APR_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_health_parse_memcache                                           */

START_TEST(test_mc_one_server)
{
    rsp_health_t h = mc(MC_EVICTED, MC_SET_DEFAULT);

    ck_assert_str_eq(h.name, MC_NAME);
    ck_assert_int_eq(h.reachable, 1);
    ck_assert_str_eq(h.instance, "2766");
    ck_assert_int_eq(h.uptime, 3);
    ck_assert_int_eq(h.evictions, 4230);
    ck_assert_int_eq(h.refusals, 0);
    ck_assert_int_eq(h.activity, 6);
    ck_assert_int_eq(h.used, 1883280);
    ck_assert_int_eq(h.limit, 2097152);
    ck_assert_int_eq(h.replica, 0);
    /* no -M, slab page mover on: both named */
    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "evictions on");
    ck_assert_has(h.policy, "slab page mover on");
}
END_TEST

START_TEST(test_mc_evictions_include_slab_mover)
{
    /* evictions + slab_reassign_evictions_nomem. The slab mover's count
     * could not be made non-zero on demand: the real text with 0 -> 7. */
    const char *stats = edit(MC_EVICTED, "\nslab_reassign_evictions_nomem 0\n",
                             "\nslab_reassign_evictions_nomem 7\n");
    rsp_health_t h = mc(stats, MC_SET_DEFAULT);

    ck_assert_int_eq(h.evictions, 4230 + 7);
    /* without that stat (-o no_slab_reassign), evictions alone */
    h = mc(MC_SAFE, MC_SET_SAFE);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_ptr_null(strstr(MC_SAFE, "slab_reassign_evictions_nomem"));
}
END_TEST

START_TEST(test_mc_refusals)
{
    rsp_health_t h = mc(MC_FULL, MC_SET_SAFE);

    ck_assert_str_eq(h.instance, "2853");
    ck_assert_int_eq(h.refusals, 4230);
    ck_assert_int_eq(h.evictions, 0);
    ck_assert_int_eq(h.used, 1882170);
    ck_assert_int_eq(h.limit, 2097152);
}
END_TEST

START_TEST(test_mc_safe_settings)
{
    /* -M -o no_slab_reassign: cannot drop a claim */
    rsp_health_t h = mc(MC_SAFE, MC_SET_SAFE);

    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "evictions off (-M), slab page mover off");
    ck_assert_str_eq(h.instance, "2853");
    ck_assert_int_eq(h.uptime, 4);
    ck_assert_int_eq(h.used, 0);
}
END_TEST

START_TEST(test_mc_settings_without_M)
{
    /* -o no_slab_reassign but no -M: evictions on */
    rsp_health_t h = mc(MC_NOSLAB, MC_SET_NOSLAB);

    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "evictions on");
    ck_assert_lacks(h.policy, "slab page mover");
    ck_assert_int_eq(h.limit, 67108864);
}
END_TEST

START_TEST(test_mc_settings_slab_reassign)
{
    /* -M but the slab page mover on (slab_reassign yes) */
    rsp_health_t h = mc(MC_M, MC_SET_M);

    ck_assert_int_eq(h.evicting, 1);
    ck_assert_has(h.policy, "slab page mover on");
    ck_assert_lacks(h.policy, "evictions on");
}
END_TEST

START_TEST(test_mc_two_servers)
{
    apr_array_header_t *a = mc_all(MC_TWO, MC_SET_TWO, 2);

    ck_assert_str_eq(MC_IDX(a, 0)->name, "127.0.0.1:11211");
    ck_assert_str_eq(MC_IDX(a, 0)->instance, "2940");
    ck_assert_int_eq(MC_IDX(a, 0)->uptime, 4);
    ck_assert_int_eq(MC_IDX(a, 0)->limit, 2097152);
    ck_assert_int_eq(MC_IDX(a, 0)->activity, 5);
    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->name, "127.0.0.1:11212");
    ck_assert_str_eq(MC_IDX(a, 1)->instance, "2999");
    ck_assert_int_eq(MC_IDX(a, 1)->uptime, 3);
    ck_assert_int_eq(MC_IDX(a, 1)->limit, 67108864);
    ck_assert_int_eq(MC_IDX(a, 1)->activity, 3);
    ck_assert_int_eq(MC_IDX(a, 1)->evicting, 0);
}
END_TEST

START_TEST(test_mc_settings_go_to_their_server)
{
    /* the second server's settings are those of a memcached without -M:
     * only that server is evicting */
    const char *second = strstr(MC_SET_TWO, "server 127.0.0.1:11212\n");
    const char *settings = apr_pstrcat(
        pool, apr_pstrndup(pool, MC_SET_TWO, (apr_size_t)(second - MC_SET_TWO)),
        "server 127.0.0.1:11212\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), NULL);
    apr_array_header_t *a = mc_all(MC_TWO, settings, 2);

    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 0)->policy,
                     "evictions off (-M), slab page mover off");
    ck_assert_int_eq(MC_IDX(a, 1)->evicting, 1);
    ck_assert_has(MC_IDX(a, 1)->policy, "evictions on");
}
END_TEST

START_TEST(test_mc_settings_of_unknown_server_ignored)
{
    /* settings of a server that stats did not list: ignored, no server
     * added, and its "evictions on" does not stick to another one */
    const char *settings = apr_pstrcat(
        pool, "server 127.0.0.1:11299\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), MC_SET_SAFE, NULL);
    const char *settings2 = apr_pstrcat(
        pool, MC_SET_SAFE, "server 127.0.0.1:11299\n",
        MC_SET_DEFAULT + strlen("server " MC_NAME "\n"), NULL);
    rsp_health_t h = mc(MC_SAFE, settings);

    ck_assert_str_eq(h.name, MC_NAME);
    ck_assert_int_eq(h.evicting, 0);
    h = mc(MC_SAFE, settings2);
    ck_assert_int_eq(h.evicting, 0);
    ck_assert_str_eq(h.policy, "evictions off (-M), slab page mover off");
}
END_TEST

#define HALF_ERROR "memcached 127.0.0.1:17212: connect to 127.0.0.1:17212: " \
    "Connection refused"

START_TEST(test_mc_server_down)
{
    /* one of two servers did not answer: the backend's "error" block makes
     * it an unreachable server, not an unreadable text */
    apr_array_header_t *a = mc_all(MC_HALF, MC_SET_HALF, 2);

    ck_assert_str_eq(MC_IDX(a, 0)->name, "127.0.0.1:17211");
    ck_assert_int_eq(MC_IDX(a, 0)->reachable, 1);
    ck_assert_str_eq(MC_IDX(a, 0)->instance, "26510");
    ck_assert_int_eq(MC_IDX(a, 0)->uptime, 7);
    ck_assert_int_eq(MC_IDX(a, 0)->limit, 2097152);
    ck_assert_int_eq(MC_IDX(a, 0)->evicting, 0);
    ck_assert_str_eq(MC_IDX(a, 0)->error, "");
    ck_assert_str_eq(MC_IDX(a, 1)->name, "127.0.0.1:17212");
    ck_assert_int_eq(MC_IDX(a, 1)->reachable, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->error, HALF_ERROR);
    ck_assert_str_eq(MC_IDX(a, 1)->instance, "");

    /* settings fetched without their own error blocks: the same */
    a = mc_all(MC_HALF, edit(MC_SET_HALF, "server 127.0.0.1:17212\nerror "
                             HALF_ERROR "\n", ""), 2);
    ck_assert_int_eq(MC_IDX(a, 0)->reachable, 1);
    ck_assert_int_eq(MC_IDX(a, 1)->reachable, 0);
    ck_assert_str_eq(MC_IDX(a, 1)->error, HALF_ERROR);
}
END_TEST

START_TEST(test_mc_rejects)
{
    apr_array_header_t *out = NULL;

    /* no pid */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_SAFE, "\npid 2853\n", "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* no uptime */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_SAFE, "\nuptime 4\n", "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* one of two servers without its pid */
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, edit(MC_TWO, "\npid 2999\n", "\n"),
                         MC_SET_TWO), APR_EINVAL);
    /* nothing, garbage, no "server" line */
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, "", MC_SET_SAFE),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, "ERROR\n", NULL),
                     APR_EINVAL);
    ck_assert_int_eq(rsp_health_parse_memcache(
                         &out, pool, MC_SAFE + strlen("server " MC_NAME "\n"),
                         MC_SET_SAFE), APR_EINVAL);
    /* a Redis INFO is not memcached stats */
    ck_assert_int_eq(rsp_health_parse_memcache(&out, pool, R_LIMIT, NULL),
                     APR_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: policy                                            */

START_TEST(test_step_policy_first_poll)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    al = step(&st, redis(R_ALLKEYS), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "maxmemory-policy allkeys-lru");
    ck_assert_has(a->text, "3600 s");

    /* the same policy next poll: said once */
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0 + SEC(5))), "");

    /* noeviction without maxmemory is a policy alarm too */
    memset(&st, 0, sizeof(st));
    al = step(&st, redis(R_DEFAULT), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    ck_assert_has(only(al, RSP_ALARM_POLICY)->text, "no maxmemory");

    /* memcached without -M */
    memset(&st, 0, sizeof(st));
    al = step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0);
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "evictions on");

    /* a safe configuration: nothing at all */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), T0)), "");
}
END_TEST

START_TEST(test_step_policy_changes)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    /* CONFIG SET maxmemory-policy allkeys-lru at run time */
    al = step(&st, redis(R_ALLKEYS), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "POLICY");
    ck_assert_has(only(al, RSP_ALARM_POLICY)->text, "allkeys-lru");
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0 + SEC(10))), "");
    /* allkeys-lru -> volatile-lru: still evicting, said again */
    al = step(&st, redis(R_VOLATILE), T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "POLICY");
    a = only(al, RSP_ALARM_POLICY);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "volatile-lru");
    ck_assert_str_eq(kinds(step(&st, redis(R_VOLATILE), T0 + SEC(20))), "");
    /* back to noeviction (R_OOM_BEFORE: after the evictions, memory at
     * 91%): the notice, besides the eviction and headroom alarms */
    al = step(&st, redis(R_OOM_BEFORE), T0 + SEC(25));
    ck_assert_str_eq(kinds(al), "EVICTION,POLICY_OK,HEADROOM");
    a = only(al, RSP_ALARM_POLICY_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "maxmemory-policy noeviction");
    /* and said once */
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(30)),
                           RSP_ALARM_POLICY_OK), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: eviction, loss, refusals                          */

START_TEST(test_step_eviction_redis)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0, t2 = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), t1)), "POLICY");
    /* filled until allkeys-lru evicted 1840 keys (and memory is full) */
    al = step(&st, redis(R_EVICTED), t2);
    ck_assert_str_eq(kinds(al), "EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "1840 claims may have been evicted");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(t1), " and ",
                                       fmt(t2), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "claimed before ", fmt(t2),
                                       NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));
    ck_assert_str_eq(fmt(t2 + SEC(WINDOW_S)), "2026-11-30T11:00:05Z");
    /* no more evictions: nothing */
    ck_assert_str_eq(kinds(step(&st, redis(R_EVICTED), T0 + SEC(10))), "");
}
END_TEST

START_TEST(test_step_eviction_memcache)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0 + SEC(60), t2 = T0 + SEC(65);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), t1)),
                     "POLICY");
    al = step(&st, mc(MC_EVICTED, MC_SET_DEFAULT), t2);
    ck_assert_str_eq(kinds(al), "EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "4230 claims may have been evicted");
    ck_assert_has(a->text, fmt(t1));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));

    /* the slab mover's evictions count too */
    memset(&st, 0, sizeof(st));
    step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), t1);
    al = step(&st, mc(edit(MC_EVICTED, "\nslab_reassign_evictions_nomem 0\n",
                           "\nslab_reassign_evictions_nomem 7\n"),
                      MC_SET_DEFAULT), t2);
    ck_assert_has(only(al, RSP_ALARM_EVICTION)->text,
                  "4237 claims may have been evicted");
}
END_TEST

START_TEST(test_step_restart_redis)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(30);
    apr_time_t at = t2 - SEC(1); /* R_RESTARTED_LIMIT: uptime 1 s */

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    al = step(&st, redis(R_RESTARTED_LIMIT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, RUN_ID_B);
    ck_assert_has(a->text, RUN_ID_A);
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "before ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(at + SEC(WINDOW_S)), NULL));
    ck_assert_str_eq(fmt(at), "2026-11-30T10:00:29Z");
    /* said once */
    ck_assert_str_eq(kinds(step(&st, redis(R_RESTARTED_LIMIT),
                                t2 + SEC(5))), "");
}
END_TEST

START_TEST(test_step_restart_memcache)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(20);
    apr_time_t at = t2 - SEC(3); /* MC_SAFE_RESTARTED: uptime 3 */

    memset(&st, 0, sizeof(st));
    step(&st, mc(MC_SAFE, MC_SET_SAFE), T0);
    ck_assert_str_eq(kinds(step(&st, mc(MC_FULL, MC_SET_SAFE), T0 + SEC(5))),
                     "REFUSALS,HEADROOM");
    /* restarted: new pid; its counters are lower too, one LOSS only */
    al = step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE), t2);
    ck_assert_str_eq(kinds(al), "LOSS,HEADROOM_OK");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, MC_NAME);
    ck_assert_has(a->text, "2940");
    ck_assert_has(a->text, "2853");
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(at), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(at + SEC(WINDOW_S)), NULL));
}
END_TEST

START_TEST(test_step_uptime_backwards)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t2 = T0 + SEC(10);

    /* the same run_id, uptime 6 then 2 (two real INFOs of one Redis, fed
     * in reverse order); counters not lower (activity 1 -> 3) */
    memset(&st, 0, sizeof(st));
    step(&st, redis(R_RESETSTAT), T0);
    al = step(&st, redis(R_LIMIT), t2);
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, apr_pstrcat(pool, "about ", fmt(t2 - SEC(2)),
                                       NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 - SEC(2) + SEC(WINDOW_S)),
                                       NULL));
    ck_assert_int_eq(count(al, RSP_ALARM_EVICTION), 0);
}
END_TEST

START_TEST(test_step_resetstat)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0 + SEC(5), t2 = T0 + SEC(10);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM), t1)), "HEADROOM");
    /* CONFIG RESETSTAT: evicted_keys 1840 -> 0, errorstat_OOM 209 -> gone,
     * total_commands_processed 2108 -> 1; same run_id, uptime 6 */
    al = step(&st, redis(R_RESETSTAT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    a = only(al, RSP_ALARM_LOSS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "reset");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(t1), " and ",
                                       fmt(t2), NULL));
    ck_assert_has(a->text, apr_pstrcat(pool, "until ",
                                       fmt(t2 + SEC(WINDOW_S)), NULL));

    /* memcached stats reset: evictions 4230 -> 0, total_connections 6 -> 1 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_EVICTED, MC_SET_DEFAULT), t1)),
                     "POLICY,HEADROOM");
    al = step(&st, mc(MC_RESET, MC_SET_DEFAULT), t2);
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");
}
END_TEST

START_TEST(test_step_reset_without_evictions)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    rsp_health_t before = redis(R_QUIET), after = redis(R_QUIET_RESET);

    /* nothing evicted or refused yet: only the activity counter tells
     * (total_commands_processed 22 -> 1) */
    ck_assert_int_eq(before.evictions, 0);
    ck_assert_int_eq(after.evictions, 0);
    ck_assert_int_eq(before.refusals, 0);
    ck_assert_int_eq(after.refusals, 0);
    ck_assert_int_eq(before.activity, 22);
    ck_assert_int_eq(after.activity, 1);
    ck_assert_str_eq(before.instance, after.instance);
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, before, T0)), "");
    al = step(&st, after, T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");

    /* memcached stats reset: total_connections 4 -> 1 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_QUIET, MC_SET_SAFE), T0)), "");
    al = step(&st, mc(MC_QUIET_RESET, MC_SET_SAFE), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "LOSS");
    ck_assert_has(only(al, RSP_ALARM_LOSS)->text, "reset");
}
END_TEST

START_TEST(test_step_refusals_first_seen)
{
    rsp_monitor_state_t st;
    /* the poll before reported no Errorstats section (refusals unknown):
     * a count seen for the first time is no increase (it would be
     * reported as 209 - (-1) = 210) */
    const char *no_errorstats = apr_pstrndup(
        pool, R_OOM_BEFORE,
        (apr_size_t)(strstr(R_OOM_BEFORE, "# Replication") - R_OOM_BEFORE));

    memset(&st, 0, sizeof(st));
    step(&st, redis(no_errorstats), T0);
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(5)),
                           RSP_ALARM_REFUSALS), 0);
}
END_TEST

START_TEST(test_step_refusals)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    apr_time_t t1 = T0, t2 = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM_BEFORE), t1)), "HEADROOM");
    /* 300 SETs under noeviction, 209 refused with OOM */
    al = step(&st, redis(R_OOM), t2);
    ck_assert_str_eq(kinds(al), "REFUSALS");
    a = only(al, RSP_ALARM_REFUSALS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "209 writes refused");
    ck_assert_has(a->text, fmt(t1));
    ck_assert_has(a->text, fmt(t2));
    ck_assert_has(a->text, "sign-ins are being refused");
    ck_assert_str_eq(kinds(step(&st, redis(R_OOM), T0 + SEC(10))), "");

    /* memcached -M full: store_no_memory 0 -> 4230 */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), t1)), "");
    al = step(&st, mc(MC_FULL, MC_SET_SAFE), t2);
    ck_assert_str_eq(kinds(al), "REFUSALS,HEADROOM");
    ck_assert_has(only(al, RSP_ALARM_REFUSALS)->text, "4230 writes refused");
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: headroom, reachability, role                      */

START_TEST(test_step_headroom)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    /* 990960 of 10485760 bytes: 9% */
    ck_assert_int_eq(count(step(&st, redis(R_LIMIT), T0),
                           RSP_ALARM_HEADROOM), 0);
    /* 1040304 of 1138696: 91% */
    al = step(&st, redis(R_OOM_BEFORE), T0 + SEC(5));
    a = only(al, RSP_ALARM_HEADROOM);
    ck_assert_int_eq(a->level, RSP_LOG_WARNING);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "91%");
    ck_assert_has(a->text, "1040304 of 1138696 bytes");
    ck_assert_has(a->text, "warning at 80%");
    /* 100%, then 91%: still above, nothing */
    ck_assert_int_eq(count(step(&st, redis(R_OOM), T0 + SEC(10)),
                           RSP_ALARM_HEADROOM), 0);
    al = step(&st, redis(R_RESETSTAT), T0 + SEC(15));
    ck_assert_int_eq(count(al, RSP_ALARM_HEADROOM), 0);
    ck_assert_int_eq(count(al, RSP_ALARM_HEADROOM_OK), 0);
    /* 1040304 of 10485760: 9%, back under */
    al = step(&st, redis(R_PRIMARY), T0 + SEC(20));
    ck_assert_str_eq(kinds(al), "HEADROOM_OK");
    a = only(al, RSP_ALARM_HEADROOM_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "80%");
    ck_assert_str_eq(kinds(step(&st, redis(R_PRIMARY), T0 + SEC(25))), "");

    /* no limit (maxmemory 0): no headroom to speak of */
    memset(&st, 0, sizeof(st));
    ck_assert_int_eq(count(step(&st, redis(R_DEFAULT), T0),
                           RSP_ALARM_HEADROOM), 0);
}
END_TEST

START_TEST(test_step_headroom_threshold)
{
    rsp_monitor_state_t st;
    rsp_monitor_params_t mp = params;
    apr_array_header_t *al = apr_array_make(pool, 4, sizeof(rsp_alarm_t));
    rsp_health_t h = redis(R_OOM_BEFORE); /* 91.36% */

    h.polled = T0;
    mp.headroom_warn_pct = 91; /* at the threshold: warned */
    memset(&st, 0, sizeof(st));
    rsp_monitor_step(&st, &h, &mp, pool, al);
    ck_assert_str_eq(kinds(al), "HEADROOM");
    ck_assert_has(only(al, RSP_ALARM_HEADROOM)->text, "warning at 91%");

    mp.headroom_warn_pct = 92; /* under it: not */
    apr_array_clear(al);
    memset(&st, 0, sizeof(st));
    rsp_monitor_step(&st, &h, &mp, pool, al);
    ck_assert_str_eq(kinds(al), "");
}
END_TEST

START_TEST(test_step_unreachable)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;
    rsp_health_t gone;
    const char *err = "Connection refused";
    apr_time_t t_down = T0 + SEC(5);

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_ALLKEYS), T0)), "POLICY");

    /* down: one error */
    al = step(&st, down(REDIS_NAME, err), t_down);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    a = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, err);

    /* down again within unreachable_repeat: nothing; and while down no
     * other kind, even when the health carries numbers that would raise
     * one (an evicting policy, evictions, full memory) */
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err), t_down + SEC(5))),
                     "");
    gone = redis(R_EVICTED);
    gone.reachable = 0;
    apr_cpystrn(gone.error, err, sizeof(gone.error));
    ck_assert_str_eq(kinds(step(&st, gone, t_down + SEC(10))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(299))), "");

    /* after the repeat interval: one more */
    al = step(&st, down(REDIS_NAME, err), t_down + SEC(300));
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    a = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "still unreachable");
    ck_assert_has(a->text, apr_pstrcat(pool, "since ", fmt(t_down), NULL));
    ck_assert_has(a->text, "5m00s");
    ck_assert_has(a->text, err);
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(305))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(599))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(600))), "UNREACHABLE");

    /* up after 1h01m40s, having evicted meanwhile: the notice with the
     * outage's length, and the evictions counted from the last poll that
     * reached it (T0), not from the outage */
    al = step(&st, redis(R_EVICTED), t_down + SEC(3700));
    ck_assert_str_eq(kinds(al), "REACHABLE,EVICTION,HEADROOM");
    a = only(al, RSP_ALARM_REACHABLE);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "after 1h01m40s");
    ck_assert_has(a->text, fmt(t_down));
    a = only(al, RSP_ALARM_EVICTION);
    ck_assert_has(a->text, "1840 claims");
    ck_assert_has(a->text, apr_pstrcat(pool, "between ", fmt(T0), " and ",
                                       fmt(t_down + SEC(3700)), NULL));

    /* up stays up; a new outage is said at once */
    ck_assert_str_eq(kinds(step(&st, redis(R_EVICTED),
                                t_down + SEC(3705))), "");
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, err),
                                t_down + SEC(3710))), "UNREACHABLE");
    al = step(&st, redis(R_EVICTED), t_down + SEC(3740));
    ck_assert_str_eq(kinds(al), "REACHABLE");
    ck_assert_has(only(al, RSP_ALARM_REACHABLE)->text, "after 30s");
}
END_TEST

START_TEST(test_step_unreachable_first_poll)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;

    /* never reached yet: the error, then on first contact the notice and
     * the policy alarm of a first poll */
    memset(&st, 0, sizeof(st));
    al = step(&st, down(MC_NAME, "Connection refused"), T0);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    al = step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0 + SEC(125));
    ck_assert_str_eq(kinds(al), "REACHABLE,POLICY");
    ck_assert_has(only(al, RSP_ALARM_REACHABLE)->text, "after 2m05s");
}
END_TEST

START_TEST(test_step_one_server_down)
{
    /* each memcached server has its own state: the one that answers is
     * judged, the one that does not raises one UNREACHABLE */
    rsp_monitor_state_t st[2];
    apr_array_header_t *a = mc_all(MC_HALF, MC_SET_HALF, 2), *al;
    const rsp_alarm_t *u;

    memset(st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st[0], *MC_IDX(a, 0), T0)), "");
    al = step(&st[1], *MC_IDX(a, 1), T0);
    ck_assert_str_eq(kinds(al), "UNREACHABLE");
    u = only(al, RSP_ALARM_UNREACHABLE);
    ck_assert_has(u->text, "127.0.0.1:17212");
    ck_assert_has(u->text, HALF_ERROR);
    ck_assert_str_eq(kinds(step(&st[0], *MC_IDX(a, 0), T0 + SEC(5))), "");
    ck_assert_str_eq(kinds(step(&st[1], *MC_IDX(a, 1), T0 + SEC(5))), "");
}
END_TEST

START_TEST(test_step_role)
{
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    /* REPLICAOF: role:slave */
    al = step(&st, redis(R_REPLICA), T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "ROLE");
    a = only(al, RSP_ALARM_ROLE);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "replica");
    ck_assert_str_eq(kinds(step(&st, redis(R_REPLICA), T0 + SEC(10))), "");
    /* REPLICAOF NO ONE */
    al = step(&st, redis(R_PRIMARY), T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "ROLE_OK");
    a = only(al, RSP_ALARM_ROLE_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_str_eq(kinds(step(&st, redis(R_PRIMARY), T0 + SEC(20))), "");

    /* a replica at the first poll */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_REPLICA), T0)), "ROLE");
}
END_TEST

/* R_LIMIT (a primary) with its replication section's replicas: lines
 * as Redis 7.0 writes them ("slaveN:ip=...,port=...,state=...,offset=...,
 * lag=..."). */
static const char *with_replicas(int connected, const char *lines)
{
    const char *at = strstr(R_LIMIT, "connected_slaves:0\r\n");

    ck_assert_ptr_nonnull(at);
    return apr_psprintf(pool, "%.*sconnected_slaves:%d\r\n%s%s",
                        (int)(at - R_LIMIT), R_LIMIT, connected, lines,
                        at + strlen("connected_slaves:0\r\n"));
}

#define REPL_OK0 "slave0:ip=127.0.0.1,port=6380,state=online,offset=4242,lag=0\r\n"
#define REPL_OK1 "slave1:ip=127.0.0.1,port=6381,state=online,offset=4242,lag=1\r\n"
#define REPL_LAG1 "slave1:ip=127.0.0.1,port=6381,state=online,offset=4000,lag=7\r\n"
#define REPL_SYNC1 "slave1:ip=127.0.0.1,port=6381,state=wait_bgsave,offset=0,lag=0\r\n"

START_TEST(test_redis_replicas_in_step)
{
    rsp_health_t h;

    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_OK1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 2);
    ck_assert_int_eq(h.replicas_in_step, 2);
    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_LAG1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 2);
    ck_assert_int_eq(h.replicas_in_step, 1);        /* 7 s behind */
    ck_assert_int_eq(rsp_health_parse_redis(&h, with_replicas(2, REPL_OK0 REPL_SYNC1)),
                     APR_SUCCESS);
    ck_assert_int_eq(h.replicas_in_step, 1);        /* still syncing */
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_LIMIT), APR_SUCCESS);
    ck_assert_int_eq(h.replicas, 0);
    ck_assert_int_eq(h.replicas_in_step, 0);
    ck_assert_int_eq(rsp_health_parse_redis(&h, R_REPLICA), APR_SUCCESS);
    ck_assert_int_eq(h.replicas_in_step, 0);
}
END_TEST

/* ReplaySPStoreReplicas 1: the error before sign-ins are refused is the
 * warning that there is no spare; the error when they are. */
START_TEST(test_step_replicas)
{
    rsp_monitor_params_t mp = params;
    rsp_monitor_state_t st;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    mp.replicas_required = 1;
#define STEP(info, t) ({ al = apr_array_make(pool, 4, sizeof(rsp_alarm_t)); \
        rsp_health_t h_ = redis(info); h_.polled = (t);                          \
        rsp_monitor_step(&st, &h_, &mp, pool, al); al; })
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0)), "");
    /* one lags: just enough left */
    al = STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(5));
    a = only(al, RSP_ALARM_REPLICAS_THIN);
    ck_assert_int_eq(a->level, RSP_LOG_WARNING);
    ck_assert_has(a->text, REDIS_NAME);
    ck_assert_has(a->text, "if one more drops out, sign-ins are refused");
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(10))), "");
    /* it is gone: still just enough, said once */
    ck_assert_str_eq(kinds(STEP(with_replicas(1, REPL_OK0), T0 + SEC(15))), "");
    /* none: refused */
    al = STEP(R_LIMIT, T0 + SEC(20));
    a = only(al, RSP_ALARM_REPLICAS);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "0 replica(s) in step");
    ck_assert_has(a->text, "asks for 1");
    ck_assert_has(a->text, "sign-ins are refused");
    ck_assert_str_eq(kinds(STEP(R_LIMIT, T0 + SEC(25))), "");
    /* back */
    al = STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0 + SEC(30));
    a = only(al, RSP_ALARM_REPLICAS_OK);
    ck_assert_int_eq(a->level, RSP_LOG_NOTICE);
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_OK1), T0 + SEC(35))), "");
    /* one replica asked for and one there, from the first poll: no spare,
     * but nothing lost either: quiet */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(STEP(with_replicas(1, REPL_OK0), T0)), "");
    /* not asked for: never */
    memset(&st, 0, sizeof(st));
    mp.replicas_required = 0;
    ck_assert_str_eq(kinds(STEP(R_LIMIT, T0)), "");
    ck_assert_str_eq(kinds(STEP(with_replicas(2, REPL_OK0 REPL_LAG1), T0 + SEC(5))), "");
    /* a replica itself (role:slave) is the role alarm's business */
    memset(&st, 0, sizeof(st));
    mp.replicas_required = 1;
    ck_assert_str_eq(kinds(STEP(R_REPLICA, T0)), "ROLE");
#undef STEP
}
END_TEST

/* Sentinel moved the master: one error naming both masters and the
 * blast radius, instead of a "restarted" loss (another run_id is expected
 * of another server). */
START_TEST(test_step_failover)
{
    rsp_monitor_state_t st;
    rsp_monitor_params_t mp = params;
    rsp_health_t h;
    apr_array_header_t *al;
    const rsp_alarm_t *a;

    memset(&st, 0, sizeof(st));
    h = redis(R_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6379", sizeof(h.primary));
    ck_assert_str_eq(kinds(step(&st, h, T0)), "");
    ck_assert_str_eq(kinds(step(&st, h, T0 + SEC(5))), "");
    /* the master killed: a poll fails, then the new master answers */
    ck_assert_str_eq(kinds(step(&st, down(REDIS_NAME, "connection refused"),
                                T0 + SEC(10))), "UNREACHABLE");
    h = redis(R_RESTARTED_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6380", sizeof(h.primary));
    al = step(&st, h, T0 + SEC(15));
    ck_assert_str_eq(kinds(al), "REACHABLE,FAILOVER");
    a = only(al, RSP_ALARM_FAILOVER);
    ck_assert_int_eq(a->level, RSP_LOG_ERR);
    ck_assert_has(a->text, "the master is now 127.0.0.1:6380 (was 127.0.0.1:6379");
    ck_assert_has(a->text, "may be accepted again until");
    ck_assert_has(a->text, "replication is asynchronous");
    ck_assert_str_eq(kinds(step(&st, h, T0 + SEC(20))), "");
    /* with acknowledged claims the radius is what was refused */
    mp.replicas_required = 1;
    h = redis(R_LIMIT);
    apr_cpystrn(h.primary, "127.0.0.1:6379", sizeof(h.primary));
    al = apr_array_make(pool, 4, sizeof(rsp_alarm_t));
    h.polled = T0 + SEC(25);
    rsp_monitor_step(&st, &h, &mp, pool, al);
    a = only(al, RSP_ALARM_FAILOVER);
    ck_assert_has(a->text, "with ReplaySPStoreReplicas 1, only claims that "
                  "were refused");
    /* not under Sentinel: another run_id is a restart, as before */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, redis(R_LIMIT), T0)), "");
    ck_assert_str_eq(kinds(step(&st, redis(R_RESTARTED_LIMIT), T0 + SEC(5))),
                     "LOSS");
}
END_TEST

/* ------------------------------------------------------------------ */
/* rsp_monitor_step: whole captured lives, poll by poll                */

START_TEST(test_step_redis_life)
{
    /* every Redis INFO in the order it was captured, one poll each */
    const struct {
        const char *info, *expect;
    } polls[] = {
        { R_DEFAULT, "POLICY" },                    /* no maxmemory */
        { R_LIMIT, "POLICY_OK" },                   /* maxmemory 10mb */
        { R_ALLKEYS, "POLICY" },
        { R_VOLATILE, "POLICY" },
        { R_EVICTED, "EVICTION,POLICY,HEADROOM" },  /* allkeys-lru again */
        { R_OOM_BEFORE, "POLICY_OK" },              /* still 91% */
        { R_OOM, "REFUSALS" },
        { R_RESETSTAT, "LOSS" },
        { R_REPLICA, "HEADROOM_OK,ROLE" },
        { R_PRIMARY, "ROLE_OK" },
        { R_RESTARTED, "LOSS,POLICY" },             /* no maxmemory again */
        { R_RESTARTED_LIMIT, "POLICY_OK" },
    };
    rsp_monitor_state_t st;
    unsigned i;

    memset(&st, 0, sizeof(st));
    for (i = 0; i < sizeof(polls) / sizeof(polls[0]); i++) {
        const char *got = kinds(step(&st, redis(polls[i].info),
                                     T0 + SEC(5 * i)));
        ck_assert_msg(!strcmp(got, polls[i].expect),
                      "poll %u: [%s], expected [%s]", i, got, polls[i].expect);
    }
}
END_TEST

START_TEST(test_step_memcache_lives)
{
    rsp_monitor_state_t st;

    /* memcached -m 2: filled until it evicted, then stats reset */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_DEFAULT, MC_SET_DEFAULT), T0)),
                     "POLICY");
    ck_assert_str_eq(kinds(step(&st, mc(MC_EVICTED, MC_SET_DEFAULT),
                                T0 + SEC(5))), "EVICTION,HEADROOM");
    ck_assert_str_eq(kinds(step(&st, mc(MC_RESET, MC_SET_DEFAULT),
                                T0 + SEC(10))), "LOSS");

    /* memcached -M -o no_slab_reassign -m 2: filled until it refused,
     * then restarted */
    memset(&st, 0, sizeof(st));
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE, MC_SET_SAFE), T0)), "");
    ck_assert_str_eq(kinds(step(&st, mc(MC_FULL, MC_SET_SAFE), T0 + SEC(5))),
                     "REFUSALS,HEADROOM");
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE),
                                T0 + SEC(10))), "LOSS,HEADROOM_OK");
    ck_assert_str_eq(kinds(step(&st, mc(MC_SAFE_RESTARTED, MC_SET_SAFE),
                                T0 + SEC(15))), "");
}
END_TEST

/* Redis Cluster: one block per master, named by its shard's slots, its
 * address the primary; a master that did not answer is unreachable; a
 * shard whose master changes between polls raises FAILOVER. */
START_TEST(test_parse_cluster)
{
    const char *text = apr_pstrcat(pool,
        "# rsp-node redis+cluster://a:1 slots 0-5460 127.0.0.1:7000\r\n",
        R_LIMIT, "\r\n",
        "# rsp-node redis+cluster://a:1 slots 5461-10922 127.0.0.1:7001\r\n",
        "error redis+cluster://a:1 (node 127.0.0.1:7001): connection refused\r\n",
        "# rsp-node redis+cluster://a:1 slots 10923-16383 127.0.0.1:7002\r\n",
        R_DEFAULT, "\r\n", NULL);
    const char *moved = apr_pstrcat(pool,
        "# rsp-node redis+cluster://a:1 slots 0-5460 127.0.0.1:7003\r\n",
        R_RESTARTED_LIMIT, "\r\n", NULL);
    apr_array_header_t *out = NULL, *later = NULL, *al;
    rsp_health_t *h;
    rsp_monitor_state_t st;

    ck_assert_int_eq(rsp_health_parse_cluster(&out, pool, text), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 3);
    h = &APR_ARRAY_IDX(out, 0, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 0-5460");
    ck_assert_str_eq(h->primary, "127.0.0.1:7000");
    ck_assert_int_eq(h->reachable, 1);
    ck_assert_str_eq(h->instance, RUN_ID_A);
    h = &APR_ARRAY_IDX(out, 1, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 5461-10922");
    ck_assert_int_eq(h->reachable, 0);
    ck_assert_has(h->error, "connection refused");
    h = &APR_ARRAY_IDX(out, 2, rsp_health_t);
    ck_assert_str_eq(h->primary, "127.0.0.1:7002");
    ck_assert_int_eq(h->reachable, 1);
    /* the first shard's replica promoted */
    memset(&st, 0, sizeof(st));
    h = &APR_ARRAY_IDX(out, 0, rsp_health_t);
    ck_assert_str_eq(kinds(step(&st, *h, T0)), "");
    ck_assert_int_eq(rsp_health_parse_cluster(&later, pool, moved), APR_SUCCESS);
    h = &APR_ARRAY_IDX(later, 0, rsp_health_t);
    ck_assert_str_eq(h->name, "redis+cluster://a:1 slots 0-5460");
    al = step(&st, *h, T0 + SEC(5));
    ck_assert_str_eq(kinds(al), "FAILOVER");
    ck_assert_has(only(al, RSP_ALARM_FAILOVER)->text,
                  "the master is now 127.0.0.1:7003 (was 127.0.0.1:7000");
    /* not blocks */
    ck_assert_int_ne(rsp_health_parse_cluster(&out, pool, R_LIMIT), APR_SUCCESS);
    ck_assert_int_ne(rsp_health_parse_cluster(&out, pool,
                                              "# rsp-node noaddress\r\n"),
                     APR_SUCCESS);
}
END_TEST

static Suite *monitor_suite(void)
{
    Suite *s = suite_create("rsp_monitor");
    TCase *tc;

    tc = tcase_create("parse_redis");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_redis_default);
    tcase_add_test(tc, test_parse_cluster);
    tcase_add_test(tc, test_redis_noeviction_with_limit);
    tcase_add_test(tc, test_redis_evicting_policies);
    tcase_add_test(tc, test_redis_evicted);
    tcase_add_test(tc, test_redis_oom_refusals);
    tcase_add_test(tc, test_redis_resetstat);
    tcase_add_test(tc, test_redis_restarted);
    tcase_add_test(tc, test_redis_replica);
    tcase_add_test(tc, test_redis_without_config);
    tcase_add_test(tc, test_redis_without_errorstats);
    tcase_add_test(tc, test_redis_lf_line_ends);
    tcase_add_test(tc, test_redis_rejects);
    tcase_add_test(tc, test_redis_rejects_bad_numbers);
    tcase_add_test(tc, test_rejects_huge_numbers);
    suite_add_tcase(s, tc);

    tc = tcase_create("parse_memcache");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_mc_one_server);
    tcase_add_test(tc, test_mc_evictions_include_slab_mover);
    tcase_add_test(tc, test_mc_refusals);
    tcase_add_test(tc, test_mc_safe_settings);
    tcase_add_test(tc, test_mc_settings_without_M);
    tcase_add_test(tc, test_mc_settings_slab_reassign);
    tcase_add_test(tc, test_mc_two_servers);
    tcase_add_test(tc, test_mc_settings_go_to_their_server);
    tcase_add_test(tc, test_mc_settings_of_unknown_server_ignored);
    tcase_add_test(tc, test_mc_server_down);
    tcase_add_test(tc, test_mc_rejects);
    suite_add_tcase(s, tc);

    tc = tcase_create("step");
    tcase_add_checked_fixture(tc, rsp_unit_setup, rsp_unit_teardown);
    tcase_add_test(tc, test_step_policy_first_poll);
    tcase_add_test(tc, test_step_policy_changes);
    tcase_add_test(tc, test_step_eviction_redis);
    tcase_add_test(tc, test_step_eviction_memcache);
    tcase_add_test(tc, test_step_restart_redis);
    tcase_add_test(tc, test_step_restart_memcache);
    tcase_add_test(tc, test_step_uptime_backwards);
    tcase_add_test(tc, test_step_resetstat);
    tcase_add_test(tc, test_step_reset_without_evictions);
    tcase_add_test(tc, test_step_refusals);
    tcase_add_test(tc, test_step_refusals_first_seen);
    tcase_add_test(tc, test_step_headroom);
    tcase_add_test(tc, test_step_headroom_threshold);
    tcase_add_test(tc, test_step_unreachable);
    tcase_add_test(tc, test_step_unreachable_first_poll);
    tcase_add_test(tc, test_step_one_server_down);
    tcase_add_test(tc, test_step_role);
    tcase_add_test(tc, test_step_uptime_beyond_epoch);
    tcase_add_test(tc, test_step_failover);
    tcase_add_test(tc, test_step_replicas);
    tcase_add_test(tc, test_redis_replicas_in_step);
    tcase_add_test(tc, test_step_redis_life);
    tcase_add_test(tc, test_step_memcache_lives);
    suite_add_tcase(s, tc);

    return s;
}

/* The fixtures, read from tests/unit/monitor/ before the suite runs (the
 * forked tests inherit them). */
static const char *fixture(apr_pool_t *p, const char *name)
{
    const char *path = apr_pstrcat(p, RSP_SRCDIR "/tests/unit/monitor/", name,
                                   NULL);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n = 0;
    char *buf;

    if (apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p)
            != APR_SUCCESS
        || apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS) {
        fprintf(stderr, "cannot read the fixture %s\n", path);
        exit(99);
    }
    buf = apr_palloc(p, (apr_size_t)fi.size + 1);
    if (apr_file_read_full(f, buf, (apr_size_t)fi.size, &n) != APR_SUCCESS) {
        fprintf(stderr, "cannot read the fixture %s\n", path);
        exit(99);
    }
    buf[n] = '\0';
    apr_file_close(f);
    return buf;
}

static void load_fixtures(apr_pool_t *p)
{
    R_DEFAULT = fixture(p, "r-default.txt");
    R_LIMIT = fixture(p, "r-limit.txt");
    R_ALLKEYS = fixture(p, "r-allkeys.txt");
    R_VOLATILE = fixture(p, "r-volatile.txt");
    R_EVICTED = fixture(p, "r-evicted.txt");
    R_OOM_BEFORE = fixture(p, "r-oom-before.txt");
    R_OOM = fixture(p, "r-oom.txt");
    R_RESETSTAT = fixture(p, "r-resetstat.txt");
    R_REPLICA = fixture(p, "r-replica.txt");
    R_PRIMARY = fixture(p, "r-primary.txt");
    R_RESTARTED = fixture(p, "r-restarted.txt");
    R_RESTARTED_LIMIT = fixture(p, "r-restarted-limit.txt");
    R_QUIET = fixture(p, "r-quiet.txt");
    R_QUIET_RESET = fixture(p, "r-quiet-reset.txt");
    R_NOCONFIG = fixture(p, "r-noconfig.txt");
    MC_DEFAULT = fixture(p, "mc-default.txt");
    MC_EVICTED = fixture(p, "mc-evicted.txt");
    MC_RESET = fixture(p, "mc-reset.txt");
    MC_M = fixture(p, "mc-m.txt");
    MC_NOSLAB = fixture(p, "mc-noslab.txt");
    MC_SAFE = fixture(p, "mc-safe.txt");
    MC_FULL = fixture(p, "mc-full.txt");
    MC_SAFE_RESTARTED = fixture(p, "mc-safe-restarted.txt");
    MC_TWO = fixture(p, "mc-two.txt");
    MC_QUIET = fixture(p, "mc-quiet.txt");
    MC_QUIET_RESET = fixture(p, "mc-quiet-reset.txt");
    MC_HALF = fixture(p, "mc-half.txt");
    MC_SET_HALF = fixture(p, "mc-set-half.txt");
    MC_SET_DEFAULT = fixture(p, "mc-set-default.txt");
    MC_SET_M = fixture(p, "mc-set-m.txt");
    MC_SET_NOSLAB = fixture(p, "mc-set-noslab.txt");
    MC_SET_SAFE = fixture(p, "mc-set-safe.txt");
    MC_SET_TWO = fixture(p, "mc-set-two.txt");
}

int main(void)
{
    apr_pool_t *p;

    apr_initialize();
    apr_pool_create(&p, NULL);
    load_fixtures(p);
    return rsp_unit_run(monitor_suite());
}
