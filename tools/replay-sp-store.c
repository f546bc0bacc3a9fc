/* replay-sp check and replay-sp capacity: the store's health as the
 * module's monitor judges it, and the memory a sign-in rate needs. */
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "replay-sp.h"
#include "rsp_capacity.h"
#include "rsp_log.h"
#include "rsp_monitor.h"

#define DEFAULT_HEADROOM_WARN 80   /* the module's ReplaySPHeadroomWarn */
#define DEFAULT_WINDOW 3900        /* the module's ReplaySPMaxAssertionWindow */
#define DEFAULT_SKEW 60
#define DEFAULT_SESSION 28800
#define DEFAULT_REQUEST 300

/* A whole number option in [min, max]; *out untouched when absent. */
static int num_opt(tool_t *t, const char *name, apr_int64_t min,
                   apr_int64_t max, apr_int64_t *out)
{
    const char *v = tool_opt(t, name);
    char *end;
    apr_int64_t n;

    if (!v) {
        return 1;
    }
    n = apr_strtoi64(v, &end, 10);
    if (!*v || *end || n < min || n > max) {
        tool_error("--%s: expected a whole number from %" APR_INT64_T_FMT
                   " to %" APR_INT64_T_FMT ", not %s", name, min, max, v);
        return 0;
    }
    *out = n;
    return 1;
}

typedef struct {
    const char *level;   /* "error", "warning", "notice" */
    const char *text;
} finding_t;

static void add(apr_array_header_t *f, const char *level, const char *text)
{
    finding_t *x = apr_array_push(f);

    x->level = level;
    x->text = text;
}

/* What the monitor would say at its first poll of h, plus what only an
 * operator's checklist asks (persistence, replicas). Returns whether any
 * finding means claims could be lost or sign-ins refused. */
static int judge(tool_t *t, const rsp_health_t *h, apr_int64_t headroom,
                 apr_array_header_t *f)
{
    rsp_monitor_state_t st;
    rsp_monitor_params_t mp;
    apr_array_header_t *alarms = apr_array_make(t->p, 4, sizeof(rsp_alarm_t));
    int i, bad = 0;

    memset(&st, 0, sizeof(st));
    memset(&mp, 0, sizeof(mp));
    mp.headroom_warn_pct = (int)headroom;
    mp.longest_window_s = DEFAULT_WINDOW + 2 * DEFAULT_SKEW;
    mp.unreachable_repeat = apr_time_from_sec(300);
    rsp_monitor_step(&st, h, &mp, t->p, alarms);
    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        add(f, a->level <= RSP_LOG_ERR ? "error"
               : a->level == RSP_LOG_WARNING ? "warning" : "notice", a->text);
        bad |= a->level <= RSP_LOG_ERR;
    }
    if (h->reachable && h->aof == 0) {
        add(f, "warning", h->last_save > 0
            ? apr_psprintf(t->p, "no append-only file: a restart loses every "
                           "claim made since the last RDB snapshot (%s), and "
                           "their assertions can be replayed until their "
                           "windows end", tool_time(t->p, apr_time_from_sec(
                                                   h->last_save)))
            : "no append-only file: a restart loses every claim");
    }
    return bad;
}

static const char *bytes(apr_pool_t *p, double b)
{
    return b >= 1e9 ? apr_psprintf(p, "%.1f GB", b / 1e9)
         : b >= 1e6 ? apr_psprintf(p, "%.1f MB", b / 1e6)
         : b >= 1e3 ? apr_psprintf(p, "%.1f kB", b / 1e3)
                    : apr_psprintf(p, "%.0f B", b);
}

int cmd_check(tool_t *t)
{
    apr_array_header_t *servers;
    apr_int64_t headroom = DEFAULT_HEADROOM_WARN;
    rsp_store_t *st;
    int i, j, rc, lose = 0, down = 0;

    if (t->args->nelts != 1) {
        tool_error("check: give one STORE-URL");
        return RSP_EXIT_USAGE;
    }
    if (!num_opt(t, "headroom-warn", 1, 100, &headroom)) {
        return RSP_EXIT_USAGE;
    }
    if ((rc = tool_store(t, APR_ARRAY_IDX(t->args, 0, const char *), &st))
        != RSP_EXIT_OK) {
        return rc;
    }
    rsp_health_poll(&servers, t->p, st);
    if (t->json) {
        printf("{\"store\": %s, \"servers\": [", tool_json(t->p, st->url->display));
    }
    for (i = 0; i < servers->nelts; i++) {
        const rsp_health_t *h = &APR_ARRAY_IDX(servers, i, rsp_health_t);
        apr_array_header_t *f = apr_array_make(t->p, 4, sizeof(finding_t));
        int bad = judge(t, h, headroom, f);
        lose |= bad && h->reachable;
        down |= !h->reachable;
        if (t->json) {
            printf("%s{\"server\": %s, \"reachable\": %s", i ? ", " : "",
                   tool_json(t->p, h->name), h->reachable ? "true" : "false");
            if (!h->reachable) {
                printf(", \"error\": %s", tool_json(t->p, h->error));
            }
            else {
                printf(", \"policy\": %s, \"evicting\": %s, \"used_bytes\": %"
                       APR_INT64_T_FMT ", \"limit_bytes\": %" APR_INT64_T_FMT
                       ", \"replica\": %s, \"aof\": %s, \"replicas\": %"
                       APR_INT64_T_FMT, tool_json(t->p, h->policy),
                       h->evicting ? "true" : "false", h->used, h->limit,
                       h->replica ? "true" : "false",
                       h->aof < 0 ? "null" : h->aof ? "true" : "false",
                       h->replicas);
            }
            printf(", \"findings\": [");
            for (j = 0; j < f->nelts; j++) {
                const finding_t *x = &APR_ARRAY_IDX(f, j, finding_t);
                printf("%s{\"level\": \"%s\", \"text\": %s}", j ? ", " : "",
                       x->level, tool_json(t->p, x->text));
            }
            printf("]}");
            continue;
        }
        printf("%s: %s\n", h->name, h->reachable ? "reachable" : "NOT REACHABLE");
        if (h->reachable) {
            printf("  policy: %s%s\n", h->policy,
                   h->evicting ? " (may evict claims)" : "");
            if (h->limit > 0) {
                printf("  memory: %s of %s (%.0f%%)\n", bytes(t->p, (double)h->used),
                       bytes(t->p, (double)h->limit),
                       100.0 * (double)h->used / (double)h->limit);
            }
            else {
                printf("  memory: %s, no limit\n", bytes(t->p, (double)h->used));
            }
            if (st->url->kind != RSP_STORE_MEMCACHE) {
                printf("  role: %s; replicas connected: %" APR_INT64_T_FMT
                       "; append-only file: %s\n",
                       h->replica ? "replica" : "primary", h->replicas,
                       h->aof < 0 ? "unknown" : h->aof ? "on" : "off");
            }
        }
        for (j = 0; j < f->nelts; j++) {
            const finding_t *x = &APR_ARRAY_IDX(f, j, finding_t);
            printf("  %s: %s\n", x->level, x->text);
        }
        if (!f->nelts) {
            printf("  ok: nothing the monitor would alarm on\n");
        }
    }
    rc = down ? RSP_EXIT_ERROR : lose ? RSP_EXIT_FINDING : RSP_EXIT_OK;
    if (t->json) {
        printf("], \"verdict\": \"%s\"}\n", down ? "unreachable"
               : lose ? "could-lose-claims" : "ok");
    }
    else {
        printf("verdict: %s\n", down ? "the store cannot be reached: sign-ins "
               "are refused" : lose ? "the store could lose claims (or refuse "
               "every sign-in): fix the errors above"
               : "ok: configured as the operations guide advises");
    }
    return rc;
}

int cmd_capacity(tool_t *t)
{
    rsp_capacity_in_t in;
    apr_array_header_t *lines;
    const char *v = tool_opt(t, "sign-ins-per-second");
    double total;
    char *end;
    int i;

    memset(&in, 0, sizeof(in));
    in.window_s = DEFAULT_WINDOW;
    in.skew_s = DEFAULT_SKEW;
    in.session_s = DEFAULT_SESSION;
    in.request_s = DEFAULT_REQUEST;
    in.sessions = -1;
    if (t->args->nelts) {
        tool_error("capacity: takes no STORE-URL");
        return RSP_EXIT_USAGE;
    }
    if (!v) {
        tool_error("capacity: --sign-ins-per-second is required");
        return RSP_EXIT_USAGE;
    }
    in.rate = strtod(v, &end);
    if (!*v || *end || !(in.rate > 0) || in.rate > 1e6) {
        tool_error("--sign-ins-per-second: expected a number above 0, not %s", v);
        return RSP_EXIT_USAGE;
    }
    if (!num_opt(t, "window", 1, 29 * 86400, &in.window_s)
        || !num_opt(t, "skew", 0, 600, &in.skew_s)
        || !num_opt(t, "session-lifetime", 60, 30 * 86400, &in.session_s)
        || !num_opt(t, "sessions", 0, APR_INT64_C(1000000000000), &in.sessions)
        || !num_opt(t, "request-lifetime", 5, 3600, &in.request_s)) {
        return RSP_EXIT_USAGE;
    }
    in.sp_initiated = tool_opt(t, "sp-initiated") != NULL;
    in.memcached = tool_opt(t, "memcached") != NULL;
    lines = rsp_capacity(t->p, &in, &total);
    if (t->json) {
        printf("{\"lines\": [");
    }
    for (i = 0; i < lines->nelts; i++) {
        const rsp_capacity_line_t *l = &APR_ARRAY_IDX(lines, i, rsp_capacity_line_t);
        if (t->json) {
            printf("%s{\"what\": %s, \"count\": %.0f, \"bytes_each\": %"
                   APR_INT64_T_FMT ", \"bytes\": %.0f, \"why\": %s}", i ? ", " : "",
                   tool_json(t->p, l->what), l->count, l->bytes_each, l->bytes,
                   tool_json(t->p, l->why));
        }
        else {
            printf("%-21s %s = %.0f x %" APR_INT64_T_FMT " B = %s\n", l->what,
                   l->why, l->count, l->bytes_each, bytes(t->p, l->bytes));
        }
    }
    if (t->json) {
        printf("], \"memcached_factor\": %d, \"total_bytes\": %.0f}\n",
               in.memcached ? RSP_MEMCACHED_FACTOR : 1, total);
    }
    else {
        printf("%s%s\n", in.memcached
               ? apr_psprintf(t->p, "x %d for memcached's slab allocator\n",
                              RSP_MEMCACHED_FACTOR) : "",
               apr_psprintf(t->p, "total: %s (Redis maxmemory / memcached -m: "
                            "at least this, with headroom for peaks)",
                            bytes(t->p, total)));
    }
    return RSP_EXIT_OK;
}
