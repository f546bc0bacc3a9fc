/* What a store reports about itself (rsp_monitor.h): Redis INFO, and
 * memcached's stats and stats settings as the memcache backend joins them
 * ("server host:port" blocks), then the alarm logic over two polls.
 *
 * Input: the first byte chooses ('k': Redis Cluster, else even: Redis,
 * odd: memcached; the seeds start with 'k', 'r' or 'm'); the rest is two
 * texts separated by the first NUL byte. Redis: two INFO replies, polled a
 * minute apart. Redis Cluster: two polls of "# rsp-node" blocks.
 * memcached: stats, then stats settings (none without a NUL), and the
 * same again a minute later. */
#include <string.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz_common.h"
#include "rsp_monitor.h"

static const rsp_monitor_params_t params = {
    3600,                       /* longest_window_s */
    80,                         /* headroom_warn_pct */
    APR_USEC_PER_SEC * 300      /* unreachable_repeat */
};

static void check_text(const char *s, apr_size_t size)
{
    FUZZ_ASSERT(memchr(s, '\0', size) != NULL);
}

static void check_health(const rsp_health_t *h)
{
    check_text(h->name, sizeof(h->name));
    check_text(h->error, sizeof(h->error));
    check_text(h->instance, sizeof(h->instance));
    check_text(h->policy, sizeof(h->policy));
    if (h->reachable) {
        FUZZ_ASSERT(h->instance[0] && h->uptime >= 0 && h->policy[0]);
    }
}

static void step(rsp_monitor_state_t *st, rsp_health_t *h, apr_time_t when,
                 apr_pool_t *p)
{
    apr_array_header_t *alarms = apr_array_make(p, 4, sizeof(rsp_alarm_t));
    int i;

    h->polled = when;
    rsp_monitor_step(st, h, &params, p, alarms);
    for (i = 0; i < alarms->nelts; i++) {
        const rsp_alarm_t *a = &APR_ARRAY_IDX(alarms, i, rsp_alarm_t);
        FUZZ_ASSERT(a->text && *a->text);
        FUZZ_ASSERT(a->kind >= RSP_ALARM_POLICY && a->kind <= RSP_ALARM_FAILOVER);
    }
}

static void redis(apr_pool_t *p, const char *a, const char *b, apr_time_t t0)
{
    rsp_monitor_state_t st;
    rsp_health_t h1, h2;

    memset(&st, 0, sizeof(st));
    if (rsp_health_parse_redis(&h1, a) == APR_SUCCESS) {
        apr_cpystrn(h1.name, "redis://127.0.0.1:6379/0", sizeof(h1.name));
        check_health(&h1);
        step(&st, &h1, t0, p);
    }
    if (rsp_health_parse_redis(&h2, b) == APR_SUCCESS) {
        apr_cpystrn(h2.name, "redis://127.0.0.1:6379/0", sizeof(h2.name));
        check_health(&h2);
        step(&st, &h2, t0 + apr_time_from_sec(60), p);
    }
}

static void memcache(apr_pool_t *p, const char *stats, const char *settings,
                     apr_time_t t0)
{
    apr_array_header_t *servers = NULL;
    int i;

    if (rsp_health_parse_memcache(&servers, p, stats, settings)
        != APR_SUCCESS) {
        return;
    }
    FUZZ_ASSERT(servers && servers->nelts > 0);
    for (i = 0; i < servers->nelts; i++) {
        rsp_health_t *h = &APR_ARRAY_IDX(servers, i, rsp_health_t);
        rsp_health_t again = *h;
        rsp_monitor_state_t st;

        check_health(h);
        memset(&st, 0, sizeof(st));
        step(&st, h, t0, p);
        step(&st, &again, t0 + apr_time_from_sec(60), p);
    }
}

/* Two polls of a cluster: each shard's state carried from one to the
 * next by name, as the poller does. */
static void cluster(apr_pool_t *p, const char *a, const char *b, apr_time_t t0)
{
    apr_array_header_t *one = NULL, *two = NULL;
    rsp_monitor_state_t st[8];
    int i, j;

    memset(st, 0, sizeof(st));
    if (rsp_health_parse_cluster(&one, p, a) != APR_SUCCESS) {
        return;
    }
    FUZZ_ASSERT(one && one->nelts > 0);
    for (i = 0; i < one->nelts && i < 8; i++) {
        rsp_health_t *h = &APR_ARRAY_IDX(one, i, rsp_health_t);
        check_health(h);
        check_text(h->primary, sizeof(h->primary));
        step(&st[i], h, t0, p);
    }
    if (rsp_health_parse_cluster(&two, p, b) != APR_SUCCESS) {
        return;
    }
    for (j = 0; j < two->nelts; j++) {
        rsp_health_t *h = &APR_ARRAY_IDX(two, j, rsp_health_t);
        check_health(h);
        for (i = 0; i < one->nelts && i < 8; i++) {
            if (!strcmp(APR_ARRAY_IDX(one, i, rsp_health_t).name, h->name)) {
                step(&st[i], h, t0 + apr_time_from_sec(60), p);
                break;
            }
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    apr_time_t t0 = apr_time_from_sec(1700000000);
    const uint8_t *nul;
    const char *a, *b = NULL;

    if (size == 0) {
        fuzz_pool_end(p);
        return 0;
    }
    nul = memchr(data + 1, 0, size - 1);
    a = fuzz_cstr(p, data + 1, size - 1);
    if (nul) {
        b = fuzz_cstr(p, nul + 1, size - (size_t)(nul + 1 - data));
    }
    if (data[0] == 'k') {
        cluster(p, a, b ? b : a, t0);
    }
    else if ((data[0] & 1) == 0) {
        redis(p, a, b ? b : a, t0);
    }
    else {
        memcache(p, a, b, t0);
    }
    fuzz_pool_end(p);
    return 0;
}
