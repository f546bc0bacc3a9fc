#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "rsp_log.h"
#include "rsp_monitor.h"
#include "rsp_store.h"
#include "rsp_util.h"

static void init_health(rsp_health_t *h)
{
    memset(h, 0, sizeof(*h));
    h->reachable = 1;
    h->uptime = h->evictions = h->refusals = h->activity = -1;
    h->used = h->limit = -1;
    h->aof = -1;
    h->last_save = h->replicas = h->replicas_in_step = -1;
}

static void copy(char *dst, apr_size_t size, const char *src, apr_size_t len)
{
    if (len >= size) {
        len = size - 1;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* No counter, size or uptime a store reports comes near this (10^15:
 * a petabyte, 31 million years); sums, percentages and microseconds of
 * such numbers fit in 64 bits. */
#define MAX_REPORTED APR_INT64_C(1000000000000000)

/* A whole non-negative decimal number up to MAX_REPORTED; *out untouched
 * when it is not. */
static int parse_i64(const char *s, apr_size_t len, apr_int64_t *out)
{
    char buf[32], *end;
    apr_int64_t v;

    if (len == 0 || len >= sizeof(buf) || s[0] < '0' || s[0] > '9') {
        return 0;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = apr_strtoi64(buf, &end, 10);
    if (*end != '\0' || errno || v < 0 || v > MAX_REPORTED) {
        return 0;
    }
    *out = v;
    return 1;
}

/* A number the parsers rely on: a malformed one makes the reply unusable. */
#define NUM(v, vl, dst, bad) do {           \
        if (!parse_i64((v), (vl), (dst))) { \
            (bad) = 1;                      \
        }                                   \
    } while (0)

/* Calls fn(key, klen, value, vlen) for each "key<sep>value" line. */
typedef void line_fn(void *ctx, const char *k, apr_size_t kl, const char *v,
                     apr_size_t vl);

static void each_line(const char *text, char sep, line_fn *fn, void *ctx)
{
    const char *cur = text;

    while (cur && *cur) {
        const char *nl = strchr(cur, '\n');
        apr_size_t len = nl ? (apr_size_t)(nl - cur) : strlen(cur);
        const char *s = memchr(cur, sep, len);
        if (len && cur[len - 1] == '\r') {
            len--;
        }
        if (s && s < cur + len && cur[0] != '#') {
            fn(ctx, cur, (apr_size_t)(s - cur), s + 1,
               len - (apr_size_t)(s - cur) - 1);
        }
        cur = nl ? nl + 1 : NULL;
    }
}

#define KEY(name) (kl == sizeof(name) - 1 && !memcmp(k, name, kl))

typedef struct {
    rsp_health_t *h;
    char policy[64];
    int role_seen;
    int bad;
} redis_ctx_t;

static void redis_line(void *c, const char *k, apr_size_t kl, const char *v,
                       apr_size_t vl)
{
    redis_ctx_t *ctx = c;
    rsp_health_t *h = ctx->h;

    if (KEY("run_id")) {
        copy(h->instance, sizeof(h->instance), v, vl);
    }
    else if (KEY("uptime_in_seconds")) {
        NUM(v, vl, &h->uptime, ctx->bad);
    }
    else if (KEY("evicted_keys")) {
        NUM(v, vl, &h->evictions, ctx->bad);
    }
    else if (KEY("total_commands_processed")) {
        NUM(v, vl, &h->activity, ctx->bad);
    }
    else if (KEY("used_memory")) {
        NUM(v, vl, &h->used, ctx->bad);
    }
    else if (KEY("maxmemory")) {
        NUM(v, vl, &h->limit, ctx->bad);
    }
    else if (KEY("maxmemory_policy")) {
        copy(ctx->policy, sizeof(ctx->policy), v, vl);
    }
    else if (KEY("role")) {
        ctx->role_seen = 1;
        h->replica = vl == 5 && !memcmp(v, "slave", 5);
    }
    else if (KEY("aof_enabled")) {
        h->aof = vl == 1 && v[0] == '1';
    }
    else if (KEY("rdb_last_save_time")) {
        NUM(v, vl, &h->last_save, ctx->bad);
    }
    else if (KEY("connected_slaves")) {
        NUM(v, vl, &h->replicas, ctx->bad);
        if (h->replicas_in_step < 0) {
            h->replicas_in_step = 0;
        }
    }
    else if (kl > 5 && !memcmp(k, "slave", 5) && k[5] >= '0' && k[5] <= '9') {
        /* slave0:ip=10.0.0.2,port=6379,state=online,offset=42,lag=0 */
        char buf[RSP_HEALTH_TEXT];
        const char *lag;
        apr_int64_t n = -1;
        copy(buf, sizeof(buf), v, vl);
        lag = strstr(buf, ",lag=");
        if (h->replicas_in_step < 0) {
            h->replicas_in_step = 0;
        }
        if (strstr(buf, "state=online") && lag
            && parse_i64(lag + 5, strcspn(lag + 5, ",\r"), &n) && n <= 1) {
            h->replicas_in_step++;
        }
    }
    else if (KEY("errorstat_OOM")) {
        /* errorstat_OOM:count=3 */
        if (vl > 6 && !memcmp(v, "count=", 6)) {
            const char *comma = memchr(v, ',', vl);
            NUM(v + 6, (comma ? (apr_size_t)(comma - v) : vl) - 6,
                &h->refusals, ctx->bad);
        }
    }
}

apr_status_t rsp_health_parse_redis(rsp_health_t *h, const char *info)
{
    redis_ctx_t ctx;

    init_health(h);
    memset(&ctx, 0, sizeof(ctx));
    ctx.h = h;
    each_line(info, ':', redis_line, &ctx);
    if (ctx.bad || !h->instance[0] || h->uptime < 0 || !ctx.policy[0]
        || h->limit < 0) {
        return APR_EINVAL; /* not an INFO with server and memory sections */
    }
    /* The errorstats section lists errorstat_OOM only once one happened. */
    if (h->refusals < 0 && strstr(info, "# Errorstats")) {
        h->refusals = 0;
    }
    if (strcmp(ctx.policy, "noeviction") != 0) {
        h->evicting = 1;
        snprintf(h->policy, sizeof(h->policy), "maxmemory-policy %s",
                 ctx.policy);
    }
    else if (h->limit == 0) {
        h->evicting = 1;
        snprintf(h->policy, sizeof(h->policy),
                 "no maxmemory set (grows until the system kills it)");
    }
    else {
        snprintf(h->policy, sizeof(h->policy), "maxmemory-policy noeviction");
    }
    return APR_SUCCESS;
}

typedef struct {
    apr_array_header_t *servers;
    rsp_health_t *cur;
    int settings;
    int bad;
} mc_ctx_t;

static rsp_health_t *mc_server(mc_ctx_t *ctx, const char *name, apr_size_t len)
{
    int i;

    for (i = 0; i < ctx->servers->nelts; i++) {
        rsp_health_t *h = &APR_ARRAY_IDX(ctx->servers, i, rsp_health_t);
        if (strlen(h->name) == len && !memcmp(h->name, name, len)) {
            return h;
        }
    }
    if (ctx->settings) {
        return NULL; /* settings of a server stats did not list */
    }
    {
        rsp_health_t *h = apr_array_push(ctx->servers);
        init_health(h);
        copy(h->name, sizeof(h->name), name, len);
        return h;
    }
}

static void mc_line(void *c, const char *k, apr_size_t kl, const char *v,
                    apr_size_t vl)
{
    mc_ctx_t *ctx = c;
    rsp_health_t *h;
    apr_int64_t n;

    if (KEY("server")) {
        ctx->cur = mc_server(ctx, v, vl);
        return;
    }
    if (!(h = ctx->cur)) {
        return;
    }
    if (KEY("error")) {
        h->reachable = 0;
        copy(h->error, sizeof(h->error), v, vl);
        return;
    }
    if (ctx->settings) {
        if (KEY("evictions")) {
            int on = vl == 2 && !memcmp(v, "on", 2);
            h->evicting |= on;
            if (on) {
                snprintf(h->policy + strlen(h->policy),
                         sizeof(h->policy) - strlen(h->policy),
                         "%sevictions on (started without -M)",
                         h->policy[0] ? "; " : "");
            }
        }
        else if (KEY("slab_reassign")) {
            int on = vl == 3 && !memcmp(v, "yes", 3);
            h->evicting |= on;
            if (on) {
                snprintf(h->policy + strlen(h->policy),
                         sizeof(h->policy) - strlen(h->policy),
                         "%sslab page mover on (started without "
                         "-o no_slab_reassign)", h->policy[0] ? "; " : "");
            }
        }
        return;
    }
    if (KEY("pid")) {
        copy(h->instance, sizeof(h->instance), v, vl);
    }
    else if (KEY("uptime")) {
        NUM(v, vl, &h->uptime, ctx->bad);
    }
    else if (KEY("evictions") || KEY("slab_reassign_evictions_nomem")) {
        if (parse_i64(v, vl, &n)) {
            h->evictions = (h->evictions < 0 ? 0 : h->evictions) + n;
        }
        else {
            ctx->bad = 1;
        }
    }
    else if (KEY("store_no_memory")) {
        NUM(v, vl, &h->refusals, ctx->bad);
    }
    else if (KEY("total_connections")) {
        NUM(v, vl, &h->activity, ctx->bad);
    }
    else if (KEY("bytes")) {
        NUM(v, vl, &h->used, ctx->bad);
    }
    else if (KEY("limit_maxbytes")) {
        NUM(v, vl, &h->limit, ctx->bad);
    }
}

apr_status_t rsp_health_parse_memcache(apr_array_header_t **out, apr_pool_t *p,
                                       const char *stats, const char *settings)
{
    mc_ctx_t ctx;
    int i;

    memset(&ctx, 0, sizeof(ctx));
    ctx.servers = apr_array_make(p, 2, sizeof(rsp_health_t));
    each_line(stats, ' ', mc_line, &ctx);
    ctx.settings = 1;
    ctx.cur = NULL;
    if (settings) {
        each_line(settings, ' ', mc_line, &ctx);
    }
    if (ctx.servers->nelts == 0 || ctx.bad) {
        return APR_EINVAL;
    }
    for (i = 0; i < ctx.servers->nelts; i++) {
        rsp_health_t *h = &APR_ARRAY_IDX(ctx.servers, i, rsp_health_t);
        if (!h->reachable) {
            continue;
        }
        if (!h->instance[0] || h->uptime < 0) {
            return APR_EINVAL;
        }
        if (!h->policy[0]) {
            snprintf(h->policy, sizeof(h->policy),
                     "evictions off (-M), slab page mover off");
        }
    }
    *out = ctx.servers;
    return APR_SUCCESS;
}

/* ---- comparing polls ---- */

static void raise_alarm(apr_array_header_t *alarms, rsp_alarm_kind_t kind,
                        int level, const char *text)
{
    rsp_alarm_t *a = apr_array_push(alarms);

    a->kind = kind;
    a->level = level;
    a->text = text;
}

static const char *t(apr_pool_t *p, apr_time_t when)
{
    return rsp_format_time(p, when);
}

static const char *duration(apr_pool_t *p, apr_interval_time_t d)
{
    apr_int64_t s = apr_time_sec(d);

    return s >= 3600 ? apr_psprintf(p, "%" APR_INT64_T_FMT "h%02" APR_INT64_T_FMT
                                    "m%02" APR_INT64_T_FMT "s", s / 3600,
                                    s / 60 % 60, s % 60)
         : s >= 60 ? apr_psprintf(p, "%" APR_INT64_T_FMT "m%02" APR_INT64_T_FMT
                                  "s", s / 60, s % 60)
         : apr_psprintf(p, "%" APR_INT64_T_FMT "s", s);
}

/* A counter that went down (-1 = not reported, never "down"). */
static int went_down(apr_int64_t before, apr_int64_t now)
{
    return before >= 0 && now >= 0 && now < before;
}

void rsp_monitor_step(rsp_monitor_state_t *st, const rsp_health_t *cur,
                      const rsp_monitor_params_t *mp, apr_pool_t *p,
                      apr_array_header_t *alarms)
{
    const rsp_health_t *prev = st->have_last ? &st->last : NULL;
    apr_interval_time_t window = apr_time_from_sec(mp->longest_window_s);

    if (!cur->reachable) {
        if (!st->down_since) {
            st->down_since = st->down_logged = cur->polled;
            raise_alarm(alarms, RSP_ALARM_UNREACHABLE, RSP_LOG_ERR, apr_psprintf(
                p, "store %s unreachable: %s; sign-ins that need it are "
                "refused (fail closed)", cur->name, cur->error));
        }
        else if (cur->polled - st->down_logged >= mp->unreachable_repeat) {
            st->down_logged = cur->polled;
            raise_alarm(alarms, RSP_ALARM_UNREACHABLE, RSP_LOG_ERR, apr_psprintf(
                p, "store %s still unreachable, since %s (%s): %s", cur->name,
                t(p, st->down_since), duration(p, cur->polled - st->down_since),
                cur->error));
        }
        return; /* nothing else can be judged; the last good poll stays */
    }
    if (st->down_since) {
        raise_alarm(alarms, RSP_ALARM_REACHABLE, RSP_LOG_NOTICE, apr_psprintf(
            p, "store %s reachable again after %s (down since %s)", cur->name,
            duration(p, cur->polled - st->down_since), t(p, st->down_since)));
        st->down_since = st->down_logged = 0;
    }

    /* Failover: Sentinel gave another master, or the cluster promoted a
     * replica of this shard. What it had not passed on
     * to the replica now promoted is gone. */
    if (prev && prev->primary[0] && cur->primary[0]
        && strcmp(prev->primary, cur->primary) != 0) {
        raise_alarm(alarms, RSP_ALARM_FAILOVER, RSP_LOG_ERR, apr_psprintf(
            p, "store %s failed over: the master is now %s (was %s, last "
            "polled at %s): claims the old master had not passed to its "
            "replicas are lost (%s); an assertion claimed before %s may be "
            "accepted again until %s", cur->name, cur->primary, prev->primary,
            t(p, prev->polled),
            mp->replicas_required > 0
                ? apr_psprintf(p, "with ReplaySPStoreReplicas %d, only claims "
                               "that were refused for want of acknowledgement",
                               mp->replicas_required)
                : "replication is asynchronous: the last second or so of "
                  "claims, or more if the replicas lagged",
            t(p, cur->polled), t(p, cur->polled + window)));
    }
    /* Loss: another instance, uptime back, or counters reset (a new
     * master after a failover is another instance: said above). */
    else if (prev) {
        if (strcmp(prev->instance, cur->instance) != 0
            || went_down(prev->uptime, cur->uptime)) {
            apr_time_t at = cur->uptime >= 0
                            && cur->uptime < apr_time_sec(cur->polled)
                ? cur->polled - apr_time_from_sec(cur->uptime) : cur->polled;
            raise_alarm(alarms, RSP_ALARM_LOSS, RSP_LOG_ERR, apr_psprintf(
                p, "store %s restarted about %s (instance %s, was %s): claims "
                "made before %s are lost; replays possible until %s",
                cur->name, t(p, at), cur->instance, prev->instance, t(p, at),
                t(p, at + window)));
        }
        else if (went_down(prev->activity, cur->activity)
                 || went_down(prev->evictions, cur->evictions)
                 || went_down(prev->refusals, cur->refusals)) {
            raise_alarm(alarms, RSP_ALARM_LOSS, RSP_LOG_ERR, apr_psprintf(
                p, "store %s counters were reset between %s and %s (CONFIG "
                "RESETSTAT or stats reset): evictions in that interval "
                "cannot be counted; if claims were lost, replays are "
                "possible until %s", cur->name, t(p, prev->polled),
                t(p, cur->polled), t(p, cur->polled + window)));
        }
        else {
            if (cur->evictions > prev->evictions && prev->evictions >= 0) {
                raise_alarm(alarms, RSP_ALARM_EVICTION, RSP_LOG_ERR, apr_psprintf(
                    p, "store %s evicted %" APR_INT64_T_FMT " keys between %s "
                    "and %s: %" APR_INT64_T_FMT " claims may have been "
                    "evicted; an assertion claimed before %s may be replayed "
                    "until %s", cur->name, cur->evictions - prev->evictions,
                    t(p, prev->polled), t(p, cur->polled),
                    cur->evictions - prev->evictions, t(p, cur->polled),
                    t(p, cur->polled + window)));
            }
            if (cur->refusals > prev->refusals && prev->refusals >= 0) {
                raise_alarm(alarms, RSP_ALARM_REFUSALS, RSP_LOG_ERR, apr_psprintf(
                    p, "store %s is full: %" APR_INT64_T_FMT " writes refused "
                    "for lack of memory between %s and %s; sign-ins are being "
                    "refused (fail closed)", cur->name,
                    cur->refusals - prev->refusals, t(p, prev->polled),
                    t(p, cur->polled)));
            }
        }
    }

    /* Policy: at the first poll and whenever it changes. */
    if (cur->evicting && (!st->policy_alarmed
                          || strcmp(st->policy_seen, cur->policy) != 0)) {
        raise_alarm(alarms, RSP_ALARM_POLICY, RSP_LOG_ERR, apr_psprintf(
            p, "store %s may evict claims: %s; an evicted claim lets its "
            "assertion be replayed until its window ends (up to %"
            APR_INT64_T_FMT " s)", cur->name, cur->policy,
            mp->longest_window_s));
        st->policy_alarmed = 1;
    }
    else if (!cur->evicting && st->policy_alarmed) {
        raise_alarm(alarms, RSP_ALARM_POLICY_OK, RSP_LOG_NOTICE, apr_psprintf(
            p, "store %s no longer evicts: %s", cur->name, cur->policy));
        st->policy_alarmed = 0;
    }
    copy(st->policy_seen, sizeof(st->policy_seen), cur->policy,
         strlen(cur->policy));

    /* Headroom. */
    if (cur->limit > 0 && cur->used >= 0) {
        apr_int64_t pct = cur->used * 100 / cur->limit;
        if (pct >= mp->headroom_warn_pct && !st->headroom_high) {
            st->headroom_high = 1;
            raise_alarm(alarms, RSP_ALARM_HEADROOM, RSP_LOG_WARNING, apr_psprintf(
                p, "store %s memory at %" APR_INT64_T_FMT "%% of its limit (%"
                APR_INT64_T_FMT " of %" APR_INT64_T_FMT " bytes, warning at %d%%)"
                ": when full, sign-ins are refused", cur->name, pct, cur->used,
                cur->limit, mp->headroom_warn_pct));
        }
        else if (pct < mp->headroom_warn_pct && st->headroom_high) {
            st->headroom_high = 0;
            raise_alarm(alarms, RSP_ALARM_HEADROOM_OK, RSP_LOG_NOTICE, apr_psprintf(
                p, "store %s memory back under %d%% of its limit (%"
                APR_INT64_T_FMT "%%)", cur->name, mp->headroom_warn_pct, pct));
        }
    }

    /* Role. */
    if (cur->replica && !st->role_alarmed) {
        st->role_alarmed = 1;
        raise_alarm(alarms, RSP_ALARM_ROLE, RSP_LOG_ERR, apr_psprintf(
            p, "store %s answers as a replica: claims cannot be written, "
            "sign-ins are refused (fail closed); point ReplaySPStore at the "
            "primary", cur->name));
    }
    else if (!cur->replica && st->role_alarmed) {
        st->role_alarmed = 0;
        raise_alarm(alarms, RSP_ALARM_ROLE_OK, RSP_LOG_NOTICE, apr_psprintf(
            p, "store %s is a primary again", cur->name));
    }

    /* Replicas, when claims wait for them (ReplaySPStoreReplicas). */
    if (mp->replicas_required > 0 && !cur->replica && cur->replicas_in_step >= 0) {
        apr_int64_t ok = cur->replicas_in_step, need = mp->replicas_required;
        /* thin: just enough, and a spare was lost (it lags, or it is
         * gone: until there is a spare again) */
        rsp_alarm_kind_t now = ok < need ? RSP_ALARM_REPLICAS
            : ok == need && (cur->replicas > ok
                             || (st->have_last && st->last.replicas_in_step > ok)
                             || st->replicas_alarmed == RSP_ALARM_REPLICAS_THIN)
                ? RSP_ALARM_REPLICAS_THIN : RSP_ALARM_REPLICAS_OK;
        if (now == RSP_ALARM_REPLICAS && st->replicas_alarmed != (int)now) {
            raise_alarm(alarms, now, RSP_LOG_ERR, apr_psprintf(
                p, "store %s has %" APR_INT64_T_FMT " replica(s) in step (%"
                APR_INT64_T_FMT " connected), ReplaySPStoreReplicas asks for %"
                APR_INT64_T_FMT ": claims are not acknowledged, sign-ins are "
                "refused (fail closed)", cur->name, ok, cur->replicas, need));
            st->replicas_alarmed = (int)now;
        }
        else if (now == RSP_ALARM_REPLICAS_THIN
                 && st->replicas_alarmed != (int)now) {
            raise_alarm(alarms, now, RSP_LOG_WARNING, apr_psprintf(
                p, "store %s has just the %" APR_INT64_T_FMT " replica(s) in "
                "step that ReplaySPStoreReplicas asks for (%" APR_INT64_T_FMT
                " connected, some lagging or gone): if one more drops out, "
                "sign-ins are refused", cur->name, ok, cur->replicas));
            st->replicas_alarmed = (int)now;
        }
        else if (now == RSP_ALARM_REPLICAS_OK && st->replicas_alarmed) {
            raise_alarm(alarms, now, RSP_LOG_NOTICE, apr_psprintf(
                p, "store %s has %" APR_INT64_T_FMT " replica(s) in step "
                "again (ReplaySPStoreReplicas %" APR_INT64_T_FMT ")", cur->name,
                ok, need));
            st->replicas_alarmed = 0;
        }
    }

    st->last = *cur;
    st->have_last = 1;
}

apr_status_t rsp_health_parse_cluster(apr_array_header_t **out, apr_pool_t *p,
                                      const char *text)
{
    static const char mark[] = "# rsp-node ";
    apr_array_header_t *servers = apr_array_make(p, 3, sizeof(rsp_health_t));
    const char *at = text;

    if (strncmp(at, mark, sizeof(mark) - 1) != 0) {
        return APR_EGENERAL;
    }
    while (at && !strncmp(at, mark, sizeof(mark) - 1)) {
        const char *head = at + sizeof(mark) - 1;
        const char *eol = strstr(head, "\r\n"), *next, *sp;
        const char *body;
        rsp_health_t *h = apr_array_push(servers);

        init_health(h);
        if (!eol) {
            return APR_EGENERAL;
        }
        sp = eol;
        while (sp > head && sp[-1] != ' ') {
            sp--;
        }
        if (sp == head) {
            return APR_EGENERAL; /* NAME slots LO-HI HOST:PORT */
        }
        apr_cpystrn(h->name, apr_pstrmemdup(p, head, (apr_size_t)(sp - 1 - head)),
                    sizeof(h->name));
        apr_cpystrn(h->primary, apr_pstrmemdup(p, sp, (apr_size_t)(eol - sp)),
                    sizeof(h->primary));
        body = eol + 2;
        next = strstr(body, "\r\n# rsp-node ");
        body = next ? apr_pstrmemdup(p, body, (apr_size_t)(next - body))
                    : body;
        if (!strncmp(body, "error ", 6)) {
            const char *e = body + 6;
            apr_size_t n = strcspn(e, "\r\n");
            h->reachable = 0;
            apr_cpystrn(h->error, apr_pstrmemdup(p, e, n), sizeof(h->error));
        }
        else {
            char name[RSP_HEALTH_TEXT], primary[RSP_HEALTH_TEXT];
            memcpy(name, h->name, sizeof(name));
            memcpy(primary, h->primary, sizeof(primary));
            if (rsp_health_parse_redis(h, body) != APR_SUCCESS) {
                return APR_EGENERAL;
            }
            memcpy(h->name, name, sizeof(name));
            memcpy(h->primary, primary, sizeof(primary));
        }
        at = next ? next + 2 : NULL;
    }
    *out = servers;
    return APR_SUCCESS;
}

void rsp_health_poll(apr_array_header_t **out, apr_pool_t *p, rsp_store_t *st)
{
    apr_array_header_t *servers = NULL;
    const char *text = NULL, *settings = NULL, *err = NULL;
    apr_status_t rv;
    int i, n;

    rv = rsp_store_info(st, p, NULL, &text, &err);
    if (rv == APR_SUCCESS && st->url->kind == RSP_STORE_MEMCACHE) {
        if (rsp_store_info(st, p, "settings", &settings, &err) != APR_SUCCESS
            || rsp_health_parse_memcache(&servers, p, text, settings)
               != APR_SUCCESS) {
            rv = APR_EGENERAL;
            err = err ? err : "unreadable memcached stats";
        }
    }
    else if (rv == APR_SUCCESS && st->url->cluster) {
        if (rsp_health_parse_cluster(&servers, p, text) != APR_SUCCESS) {
            rv = APR_EGENERAL;
            err = "unreadable INFO replies";
        }
    }
    else if (rv == APR_SUCCESS) {
        rsp_health_t *h;
        servers = apr_array_make(p, 1, sizeof(rsp_health_t));
        h = apr_array_push(servers);
        if (rsp_health_parse_redis(h, text) != APR_SUCCESS) {
            rv = APR_EGENERAL;
            err = "unreadable INFO reply";
        }
        apr_cpystrn(h->name, st->url->display, sizeof(h->name));
        if (rsp_store_primary(st, p)) {
            apr_cpystrn(h->primary, rsp_store_primary(st, p), sizeof(h->primary));
        }
    }
    if (rv != APR_SUCCESS) {
        /* Not even one server answered: all of them are down for us. */
        n = st->url->kind == RSP_STORE_MEMCACHE ? st->url->servers->nelts : 1;
        servers = apr_array_make(p, n, sizeof(rsp_health_t));
        for (i = 0; i < n; i++) {
            rsp_health_t *h = apr_array_push(servers);
            init_health(h);
            h->reachable = 0;
            apr_cpystrn(h->name, st->url->kind == RSP_STORE_MEMCACHE
                        ? APR_ARRAY_IDX(st->url->servers, i, rsp_server_t).name
                        : st->url->display, sizeof(h->name));
            apr_cpystrn(h->error, err ? err : "no answer", sizeof(h->error));
        }
    }
    *out = servers;
}
