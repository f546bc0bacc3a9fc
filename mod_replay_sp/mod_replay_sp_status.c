/* What the counters and the store monitor show: a section of mod_status
 * (HTML and ?auto) and a handler an operator can scrape
 * (SetHandler replay-sp-status, Prometheus text exposition format). */
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mod_status.h>

#include "mod_replay_sp_config.h"
#include "mod_replay_sp_counters.h"
#include "mod_replay_sp_refresh.h"
#include "mod_replay_sp_status.h"

APLOG_USE_MODULE(replay_sp);

typedef struct {
    const char *name;     /* Prometheus name; mod_status key derived */
    const char *type;     /* counter, gauge */
    const char *help;
    apr_int64_t value;
} metric_t;

/* The IdPs the SPs of r's server trust, and the earliest validUntil of
 * their signed metadata files (0: none signed). */
static void metadata_figures(request_rec *r, apr_int64_t *idps,
                             apr_time_t *valid_until)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    int i;

    *idps = 0;
    *valid_until = 0;
    for (i = 0; sc && sc->sps && i < sc->sps->nelts; i++) {
        const rsp_saml_sp_t *sp = &APR_ARRAY_IDX(sc->sps, i, rsp_sp_conf_t *)->def;
        rsp_saml_md_state_t st;

        rsp_saml_md_state(sp, &st, r->pool);
        *idps += st.idps;
        if (st.valid_until && (!*valid_until || st.valid_until < *valid_until)) {
            *valid_until = st.valid_until;
        }
    }
}

static int snapshot(metric_t *m, const rsp_shared_t *sh, request_rec *r)
{
    apr_int64_t idps;
    apr_time_t valid_until;
    int n = 0;

    metadata_figures(r, &idps, &valid_until);

#define METRIC(nm, ty, hp, v) \
    do { m[n].name = nm; m[n].type = ty; m[n].help = hp; m[n].value = (v); n++; } while (0)
    METRIC("replay_sp_claims_won_total", "counter",
           "Sign-ins whose claim this host won.", sh->claims_won);
    METRIC("replay_sp_replays_refused_total", "counter",
           "Posts refused because their assertion was already claimed.",
           sh->replays_refused);
    METRIC("replay_sp_replays_reported_total", "counter",
           "Replays a ReplaySPGuard Report location passed on to the SP "
           "(refused where the guard is On).", sh->replays_reported);
    METRIC("replay_sp_guard_reported_total", "counter",
           "Posts a ReplaySPGuard Report location would have refused and "
           "passed on to the SP (replays, invalid responses, store failures).",
           sh->guard_reported);
    METRIC("replay_sp_store_errors_total", "counter",
           "Store operations that gave no verdict (requests failed closed).",
           sh->store_errors);
    METRIC("replay_sp_lasso_servers_built_total", "counter",
           "Lasso servers built (one per worker thread, when a child starts).",
           sh->lasso_servers_built);
    METRIC("replay_sp_fail_open_total", "counter",
           "Sign-ins accepted without a claim (ReplaySPOnStoreFailure open).",
           sh->fail_open);
    METRIC("replay_sp_store_up", "gauge",
           "1 when every store server answered the last poll, 0 when not, "
           "-1 before the first poll.", sh->store_up);
    METRIC("replay_sp_store_used_bytes", "gauge",
           "Memory the store reported in use at the last poll.", sh->used);
    METRIC("replay_sp_store_limit_bytes", "gauge",
           "The store's memory limit at the last poll (0: none).", sh->limit);
    METRIC("replay_sp_store_evictions_seen_total", "counter",
           "Evictions the monitor saw the store make.", sh->evictions_seen);
    METRIC("replay_sp_monitor_alarms_total", "counter",
           "Alarm lines the monitor wrote to the error log.", sh->alarms_raised);
    METRIC("replay_sp_monitor_last_poll_timestamp_seconds", "gauge",
           "When the monitor last polled the store (0: never).",
           apr_time_sec(sh->last_poll));
    METRIC("replay_sp_metadata_idps", "gauge",
           "IdPs the SPs of this virtual host trust, read when httpd started.",
           idps);
    METRIC("replay_sp_metadata_valid_until_timestamp_seconds", "gauge",
           "The earliest validUntil of this virtual host's signed metadata "
           "files (0: none signed); past it their IdPs are refused.",
           apr_time_sec(valid_until));
#undef METRIC
    return n;
}

/* ---- each metadata source ---- */

enum { SRC_GENERATION, SRC_IDPS, SRC_VALID_UNTIL, SRC_AGE, SRC_REFRESH,
       SRC_FAILING, SRC_LAST_ERROR, SRC_METRICS };

static const metric_t source_metrics[SRC_METRICS] = {
    {"replay_sp_metadata_source_generation", "gauge",
     "The generation of this process's metadata in which the source's "
     "current content was read in.", 0},
    {"replay_sp_metadata_source_idps", "gauge",
     "IdPs taken from the source.", 0},
    {"replay_sp_metadata_source_valid_until_timestamp_seconds", "gauge",
     "The source's signed validUntil (0: not signed).", 0},
    {"replay_sp_metadata_source_age_seconds", "gauge",
     "url: seconds since the host last had a verified copy or a 304 for "
     "it; file: since this process last looked at it.", 0},
    {"replay_sp_metadata_source_refresh_seconds", "gauge",
     "ReplaySPMetadataRefresh of the source's SP (0: Off).", 0},
    {"replay_sp_metadata_source_failing", "gauge",
     "1 while the source is refused (reason: fetch, signature, expired, "
     "malformed, too-large) and the last good copy stays in use.", 0},
    {"replay_sp_metadata_source_last_error_timestamp_seconds", "gauge",
     "When the source was last refused (0: never).", 0},
};

static apr_int64_t source_value(const rsp_md_source_row_t *row, int k)
{
    switch (k) {
    case SRC_GENERATION:
        return (apr_int64_t)row->generation;
    case SRC_IDPS:
        return row->idps;
    case SRC_VALID_UNTIL:
        return apr_time_sec(row->valid_until);
    case SRC_AGE:
        return row->age_s;
    case SRC_REFRESH:
        return row->refresh_s;
    case SRC_FAILING:
        return row->failing != NULL;
    default:
        return apr_time_sec(row->last_error_at);
    }
}

/* A label value in the text exposition format. */
static const char *prom_label(apr_pool_t *p, const char *v)
{
    char *out = apr_palloc(p, 2 * strlen(v) + 1), *o = out;

    for (; *v; v++) {
        if (*v == '\\' || *v == '"') {
            *o++ = '\\';
        }
        if (*v == '\n') {
            *o++ = '\\';
            *o++ = 'n';
            continue;
        }
        *o++ = *v;
    }
    *o = '\0';
    return out;
}

static void sources_prometheus(request_rec *r)
{
    apr_array_header_t *rows = rsp_refresh_sources(r->server, r->pool);
    int k, i;

    for (k = 0; rows->nelts && k < SRC_METRICS; k++) {
        const metric_t *m = &source_metrics[k];
        ap_rprintf(r, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
                   m->name, m->type);
        for (i = 0; i < rows->nelts; i++) {
            const rsp_md_source_row_t *row =
                &APR_ARRAY_IDX(rows, i, rsp_md_source_row_t);
            ap_rprintf(r, "%s{sp=\"%s\",source=\"%s\",kind=\"%s\"%s} %"
                       APR_INT64_T_FMT "\n", m->name,
                       prom_label(r->pool, row->sp),
                       prom_label(r->pool, row->source), row->kind,
                       k != SRC_FAILING ? ""
                       : apr_psprintf(r->pool, ",reason=\"%s\"",
                                      row->failing ? row->failing : ""),
                       source_value(row, k));
        }
    }
}

static void sources_status(request_rec *r, int flags)
{
    apr_array_header_t *rows = rsp_refresh_sources(r->server, r->pool);
    int i;

    if (!rows->nelts) {
        return;
    }
    if (!(flags & AP_STATUS_SHORT)) {
        ap_rputs("<h3>Metadata sources</h3>\n<table>\n<tr><th>SP</th>"
                 "<th>source</th><th>generation</th><th>IdPs</th>"
                 "<th>valid until</th><th>age (s)</th><th>refresh (s)</th>"
                 "<th>last error</th></tr>\n", r);
    }
    for (i = 0; i < rows->nelts; i++) {
        const rsp_md_source_row_t *row = &APR_ARRAY_IDX(rows, i, rsp_md_source_row_t);
        const char *err = row->last_error
            ? apr_psprintf(r->pool, "%s%s %s", row->failing ? row->failing : "",
                           row->failing ? ": now;" : "earlier:",
                           row->last_error) : "";
        if (flags & AP_STATUS_SHORT) {
            ap_rprintf(r, "ReplaySPMetadataSource%d: sp=%s %s=%s generation=%"
                       APR_UINT64_T_FMT " idps=%d age=%" APR_INT64_T_FMT
                       " failing=%s\n", i, row->sp, row->kind, row->source,
                       row->generation, row->idps, row->age_s,
                       row->failing ? row->failing : "no");
            continue;
        }
        ap_rprintf(r, "<tr><td>%s</td><td>%s (%s)</td><td>%" APR_UINT64_T_FMT
                   "</td><td>%d</td><td>%s</td><td>%" APR_INT64_T_FMT
                   "</td><td>%" APR_INT64_T_FMT "</td><td>%s</td></tr>\n",
                   ap_escape_html(r->pool, row->sp),
                   ap_escape_html(r->pool, row->source), row->kind,
                   row->generation, row->idps,
                   row->valid_until ? ap_ht_time(r->pool, row->valid_until,
                                                 "%Y-%m-%dT%H:%M:%SZ", 1)
                                    : "unsigned",
                   row->age_s, row->refresh_s, ap_escape_html(r->pool, err));
    }
    if (!(flags & AP_STATUS_SHORT)) {
        ap_rputs("</table>\n", r);
    }
}

/* replay_sp_claims_won_total -> ReplaySPClaimsWon */
static const char *status_key(apr_pool_t *p, const char *name)
{
    char *out, *o;
    const char *c = name + strlen("replay_sp_");
    int up = 1;

    o = out = apr_pcalloc(p, strlen(name) + 16);
    strcpy(o, "ReplaySP");
    o += 8;
    for (; *c; c++) {
        if (!strcmp(c, "_total") || !strcmp(c, "_timestamp_seconds")) {
            break;
        }
        if (*c == '_') {
            up = 1;
            continue;
        }
        *o++ = up ? (char)apr_toupper(*c) : *c;
        up = 0;
    }
    return out;
}

int rsp_status_hook(request_rec *r, int flags)
{
    const rsp_shared_t *sh = rsp_shared();
    metric_t m[24];
    int i, n, b;

    if (!sh) {
        return OK;
    }
    n = snapshot(m, sh, r);
    if (flags & AP_STATUS_SHORT) {
        for (i = 0; i < n; i++) {
            ap_rprintf(r, "%s: %" APR_INT64_T_FMT "\n",
                       status_key(r->pool, m[i].name), m[i].value);
        }
        for (b = 0; b < RSP_LATENCY_BUCKETS; b++) {
            ap_rprintf(r, "ReplaySPClaimLatency%s: %u\n",
                       b < RSP_LATENCY_BUCKETS - 1
                       ? apr_psprintf(r->pool, "Le%" APR_TIME_T_FMT "us",
                                      rsp_latency_bounds[b])
                       : "Over", sh->latency[b]);
        }
        sources_status(r, flags);
        return OK;
    }
    ap_rputs("<hr />\n<h2>mod_replay_sp</h2>\n<table>\n", r);
    for (i = 0; i < n; i++) {
        ap_rprintf(r, "<tr><th>%s</th><td>%" APR_INT64_T_FMT "</td><td>%s</td></tr>\n",
                   status_key(r->pool, m[i].name), m[i].value,
                   ap_escape_html(r->pool, m[i].help));
    }
    ap_rputs("</table>\n<h3>Claim latency</h3>\n<table>\n", r);
    for (b = 0; b < RSP_LATENCY_BUCKETS; b++) {
        ap_rprintf(r, "<tr><th>%s</th><td>%u</td></tr>\n",
                   b < RSP_LATENCY_BUCKETS - 1
                   ? apr_psprintf(r->pool, "&le; %" APR_TIME_T_FMT " ms",
                                  rsp_latency_bounds[b] / 1000)
                   : "more", sh->latency[b]);
    }
    ap_rputs("</table>\n", r);
    sources_status(r, flags);
    return OK;
}

int rsp_status_handler(request_rec *r)
{
    const rsp_shared_t *sh = rsp_shared();
    metric_t m[24];
    apr_uint32_t cum = 0;
    int i, n, b;

    if (!r->handler || strcmp(r->handler, "replay-sp-status") != 0) {
        return DECLINED;
    }
    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    if (!sh) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    ap_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (r->header_only) {
        return OK;
    }
    n = snapshot(m, sh, r);
    for (i = 0; i < n; i++) {
        ap_rprintf(r, "# HELP %s %s\n# TYPE %s %s\n%s %" APR_INT64_T_FMT "\n",
                   m[i].name, m[i].help, m[i].name, m[i].type, m[i].name,
                   m[i].value);
    }
    ap_rputs("# HELP replay_sp_claim_latency_seconds Time the store took to "
             "answer a claim.\n# TYPE replay_sp_claim_latency_seconds "
             "histogram\n", r);
    for (b = 0; b < RSP_LATENCY_BUCKETS; b++) {
        cum += sh->latency[b];
        ap_rprintf(r, "replay_sp_claim_latency_seconds_bucket{le=\"%s\"} %u\n",
                   b < RSP_LATENCY_BUCKETS - 1
                   ? apr_psprintf(r->pool, "%d.%06d",
                                  (int)(rsp_latency_bounds[b] / 1000000),
                                  (int)(rsp_latency_bounds[b] % 1000000))
                   : "+Inf", cum);
    }
    ap_rprintf(r, "replay_sp_claim_latency_seconds_count %u\n", cum);
    ap_rprintf(r, "replay_sp_claim_latency_seconds_sum %.6f\n",
               (double)sh->latency_sum_us_lo / 1e6);
    sources_prometheus(r);
    return OK;
}
