/* Directives, per-server and per-directory configuration. */
#include <apr_fnmatch.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <http_core.h>

#include "mod_replay_sp_config.h"
#include "mod_replay_sp_config_md.h"
#include "rsp_md_filter.h"
#include "rsp_path.h"
#include "rsp_redirect.h"

APLOG_USE_MODULE(replay_sp);

void *rsp_create_srv_cfg(apr_pool_t *p, server_rec *s)
{
    rsp_srv_cfg_t *sc = apr_pcalloc(p, sizeof(*sc));

    sc->store_timeout = RSP_UNSET;
    sc->replicas = RSP_UNSET;
    sc->replicas_wait_ms = RSP_UNSET;
    sc->on_failure_open = RSP_UNSET;
    sc->monitor_interval = RSP_UNSET;
    sc->headroom_warn = RSP_UNSET;
    sc->sps = apr_array_make(p, 2, sizeof(rsp_sp_conf_t *));
    sc->guard_paths = apr_array_make(p, 1, sizeof(rsp_guard_path_t));
    return sc;
}

void *rsp_merge_srv_cfg(apr_pool_t *p, void *basev, void *addv)
{
    rsp_srv_cfg_t *base = basev, *add = addv;
    rsp_srv_cfg_t *sc = apr_pcalloc(p, sizeof(*sc));

    sc->store_url_str = add->store_url_str ? add->store_url_str : base->store_url_str;
    sc->store_url = add->store_url ? add->store_url : base->store_url;
    sc->store_timeout = add->store_timeout != RSP_UNSET ? add->store_timeout
                                                        : base->store_timeout;
    sc->replicas = add->replicas != RSP_UNSET ? add->replicas : base->replicas;
    sc->replicas_wait_ms = add->replicas != RSP_UNSET ? add->replicas_wait_ms
                                                      : base->replicas_wait_ms;
    sc->tls_ca_file = add->tls_ca_file ? add->tls_ca_file : base->tls_ca_file;
    sc->tls_cert_file = add->tls_cert_file ? add->tls_cert_file
                                           : base->tls_cert_file;
    sc->tls_key_file = add->tls_key_file ? add->tls_key_file
                                         : base->tls_key_file;
    sc->key_prefix = add->key_prefix ? add->key_prefix : base->key_prefix;
    sc->replica_name = add->replica_name ? add->replica_name : base->replica_name;
    sc->on_failure_open = add->on_failure_open != RSP_UNSET ? add->on_failure_open
                                                            : base->on_failure_open;
    /* The monitor is per host: main server only. */
    sc->monitor_interval = base->monitor_interval;
    sc->headroom_warn = base->headroom_warn;
    sc->sps = add->sps; /* SPs defined in this virtual host's sections */
    /* The main server's <Location> sections apply to a virtual host's
     * requests too. */
    sc->guard_paths = apr_array_append(p, base->guard_paths, add->guard_paths);
    return sc;
}

void *rsp_create_dir_cfg(apr_pool_t *p, char *dir)
{
    rsp_dir_cfg_t *dc = apr_pcalloc(p, sizeof(*dc));

    dc->skew = RSP_UNSET;
    dc->session_lifetime = RSP_UNSET;
    dc->max_window = RSP_UNSET;
    dc->max_body = RSP_UNSET;
    dc->request_lifetime = RSP_UNSET;
    dc->allow_unsolicited = RSP_UNSET;
    dc->bind_requests = RSP_UNSET;
    dc->qualify_user = RSP_UNSET;
    dc->guard = RSP_UNSET;
    return dc;
}

#define MERGE_NUM(f) dc->f = add->f != RSP_UNSET ? add->f : base->f
#define MERGE_PTR(f) dc->f = add->f ? add->f : base->f

void *rsp_merge_dir_cfg(apr_pool_t *p, void *basev, void *addv)
{
    rsp_dir_cfg_t *base = basev, *add = addv;
    rsp_dir_cfg_t *dc = apr_pcalloc(p, sizeof(*dc));

    MERGE_PTR(sp);
    MERGE_PTR(endpoint_path);
    MERGE_PTR(cookie_name);
    MERGE_PTR(user_attribute);
    MERGE_PTR(env_prefix);
    MERGE_NUM(skew);
    MERGE_NUM(session_lifetime);
    MERGE_NUM(max_window);
    MERGE_NUM(max_body);
    MERGE_NUM(request_lifetime);
    MERGE_NUM(allow_unsolicited);
    MERGE_NUM(bind_requests);
    MERGE_NUM(qualify_user);
    MERGE_PTR(redirect_domains);
    MERGE_NUM(guard);
    return dc;
}

apr_int64_t rsp_cfg_skew(const rsp_dir_cfg_t *dc)
{
    return dc->skew != RSP_UNSET ? dc->skew : RSP_DEFAULT_SKEW;
}

apr_int64_t rsp_cfg_session_lifetime(const rsp_dir_cfg_t *dc)
{
    return dc->session_lifetime != RSP_UNSET ? dc->session_lifetime
                                             : RSP_DEFAULT_SESSION_LIFETIME;
}

apr_int64_t rsp_cfg_max_window(const rsp_dir_cfg_t *dc)
{
    return dc->max_window != RSP_UNSET ? dc->max_window : RSP_DEFAULT_MAX_WINDOW;
}

apr_int64_t rsp_cfg_max_body(const rsp_dir_cfg_t *dc)
{
    return dc->max_body != RSP_UNSET ? dc->max_body : RSP_DEFAULT_MAX_BODY;
}

const char *rsp_cfg_endpoint(const rsp_dir_cfg_t *dc)
{
    return dc->endpoint_path ? dc->endpoint_path : RSP_DEFAULT_ENDPOINT;
}

const char *rsp_cfg_cookie(const rsp_dir_cfg_t *dc)
{
    return dc->cookie_name ? dc->cookie_name : RSP_DEFAULT_COOKIE;
}

const char *rsp_cfg_env_prefix(const rsp_dir_cfg_t *dc)
{
    return dc->env_prefix ? dc->env_prefix : RSP_DEFAULT_ENV_PREFIX;
}

apr_int64_t rsp_cfg_request_lifetime(const rsp_dir_cfg_t *dc)
{
    return dc->request_lifetime != RSP_UNSET ? dc->request_lifetime
                                             : RSP_DEFAULT_REQUEST_LIFETIME;
}

int rsp_cfg_bind_requests(const rsp_dir_cfg_t *dc)
{
    return dc->bind_requests != 0;
}

int rsp_cfg_qualify_user(const rsp_dir_cfg_t *dc)
{
    if (dc->qualify_user != RSP_UNSET) {
        return dc->qualify_user;
    }
    return dc->sp && dc->sp->def.qualify_default;
}

int rsp_cfg_allow_unsolicited(const rsp_dir_cfg_t *dc)
{
    return dc->allow_unsolicited == 1;
}

const char *rsp_cfg_prefix(const rsp_srv_cfg_t *sc)
{
    return sc->key_prefix ? sc->key_prefix : RSP_DEFAULT_KEY_PREFIX;
}

const char *rsp_cfg_invalid(cmd_parms *cmd, const char *arg, const char *why)
{
    return apr_psprintf(cmd->pool, "Invalid value for directive '%s': '%s': %s",
                        cmd->directive->directive, arg, why);
}

/* An integer in [min, max]. */
const char *rsp_cfg_parse_num(cmd_parms *cmd, const char *arg, apr_int64_t min,
                              apr_int64_t max, apr_int64_t *out)
{
    char *end;
    apr_int64_t v;

    errno = 0;
    v = apr_strtoi64(arg, &end, 10);
    if (!*arg || *end || errno || v < min || v > max) {
        return rsp_cfg_invalid(cmd, arg,
                       apr_psprintf(cmd->pool, "expected a whole number from %"
                                    APR_INT64_T_FMT " to %" APR_INT64_T_FMT,
                                    min, max));
    }
    *out = v;
    return NULL;
}

static rsp_srv_cfg_t *srv_cfg(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &replay_sp_module);
}

static const char *set_store(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_srv_cfg_t *sc = srv_cfg(cmd);
    const char *err;

    if (rsp_store_url_parse(&sc->store_url, cmd->pool, arg, &err) != APR_SUCCESS) {
        return rsp_cfg_invalid(cmd, arg, err);
    }
    sc->store_url_str = arg;
    return NULL;
}

static const char *set_store_timeout(cmd_parms *cmd, void *mconfig, const char *arg)
{
    apr_int64_t ms;
    const char *err = rsp_cfg_parse_num(cmd, arg, 1, 60000, &ms);

    if (!err) {
        srv_cfg(cmd)->store_timeout = ms * 1000;
    }
    return err;
}

/* ReplaySPStoreReplicas N [MILLISECONDS] */
static const char *set_replicas(cmd_parms *cmd, void *mconfig, const char *n,
                                const char *ms)
{
    rsp_srv_cfg_t *sc = srv_cfg(cmd);
    const char *err = rsp_cfg_parse_num(cmd, n, 0, 64, &sc->replicas);

    if (err) {
        return err;
    }
    sc->replicas_wait_ms = RSP_DEFAULT_REPLICAS_WAIT_MS;
    return ms ? rsp_cfg_parse_num(cmd, ms, 1, 60000, &sc->replicas_wait_ms) : NULL;
}

/* ReplaySPStoreTLSCAFile, ...CertFile, ...KeyFile: a readable file. What
 * is in it is checked in check_config (rsp_tls_create). */
static const char *set_store_tls_file(cmd_parms *cmd, void *mconfig,
                                      const char *arg)
{
    rsp_srv_cfg_t *sc = srv_cfg(cmd);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_file_t *f;
    apr_status_t rv;
    char buf[120];

    if (!path) {
        return rsp_cfg_invalid(cmd, arg, "not a valid path");
    }
    rv = apr_file_open(&f, path, APR_FOPEN_READ, APR_OS_DEFAULT, cmd->temp_pool);
    if (rv != APR_SUCCESS) {
        return rsp_cfg_invalid(cmd, arg, apr_psprintf(cmd->pool, "cannot read %s: %s",
                                              path, apr_strerror(rv, buf,
                                                                 sizeof(buf))));
    }
    apr_file_close(f);
    switch ((intptr_t)cmd->info) {
    case 0:
        sc->tls_ca_file = path;
        break;
    case 1:
        sc->tls_cert_file = path;
        break;
    default:
        sc->tls_key_file = path;
    }
    return NULL;
}

static const char *set_key_prefix(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *c;

    if (!*arg || strlen(arg) > 64) {
        return rsp_cfg_invalid(cmd, arg, "expected 1 to 64 characters");
    }
    for (c = arg; *c; c++) {
        if (*c <= ' ' || *c > '~') {
            return rsp_cfg_invalid(cmd, arg, "no spaces or control characters");
        }
        if (*c == '{' || *c == '}') {
            /* Redis Cluster would hash the part between braces alone: every
             * key in one slot, on one shard */
            return rsp_cfg_invalid(cmd, arg, "no '{' or '}' (Redis Cluster reads "
                           "them as a hash tag)");
        }
    }
    srv_cfg(cmd)->key_prefix = arg;
    return NULL;
}

static const char *set_on_failure(cmd_parms *cmd, void *mconfig, const char *arg)
{
    if (!strcasecmp(arg, "closed")) {
        srv_cfg(cmd)->on_failure_open = 0;
    }
    else if (!strcasecmp(arg, "open")) {
        srv_cfg(cmd)->on_failure_open = 1;
    }
    else {
        return rsp_cfg_invalid(cmd, arg, "expected closed or open");
    }
    return NULL;
}

static const char *set_monitor_num(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);

    if (err) {
        return err;
    }
    return (intptr_t)cmd->info == 0
        ? rsp_cfg_parse_num(cmd, arg, 0, 3600, &srv_cfg(cmd)->monitor_interval)
        : rsp_cfg_parse_num(cmd, arg, 1, 100, &srv_cfg(cmd)->headroom_warn);
}

static const char *set_replica_name(cmd_parms *cmd, void *mconfig, const char *arg)
{
    srv_cfg(cmd)->replica_name = arg;
    return NULL;
}

/* The SP of this section, created on its first SP directive. */
rsp_sp_conf_t *rsp_cfg_section_sp(cmd_parms *cmd, rsp_dir_cfg_t *dc)
{
    if (!dc->sp) {
        rsp_srv_cfg_t *sc = srv_cfg(cmd);
        dc->sp = apr_pcalloc(cmd->pool, sizeof(*dc->sp));
        dc->sp->def.idp_files = apr_array_make(cmd->pool, 2, sizeof(char *));
        dc->sp->def.idp_file_certs = apr_array_make(cmd->pool, 2, sizeof(char *));
        dc->sp->def.enc_publish = RSP_UNSET;
        dc->sp->section = cmd->path ? apr_psprintf(cmd->pool, "section for %s",
                                                   cmd->path)
                                    : "server configuration";
        dc->sp->defined_in = apr_psprintf(cmd->pool, "%s:%d",
                                          cmd->directive->filename,
                                          cmd->directive->line_num);
        APR_ARRAY_PUSH(sc->sps, rsp_sp_conf_t *) = dc->sp;
    }
    return dc->sp;
}

static const char *set_entity_id(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);

    if (!*arg) {
        return rsp_cfg_invalid(cmd, arg, "empty entity ID");
    }
    if (sp->def.entity_id) {
        return apr_pstrcat(cmd->pool, cmd->directive->directive,
                           " given twice in one section", NULL);
    }
    sp->def.entity_id = arg;
    return NULL;
}

static const char *set_sp_file(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    const char **slot;

    if (!path) {
        return rsp_cfg_invalid(cmd, arg, "not a valid path");
    }
    slot = cmd->info ? &sp->def.cert_file : &sp->def.key_file;
    if (*slot) {
        return apr_pstrcat(cmd->pool, cmd->directive->directive,
                           " given twice in one section", NULL);
    }
    *slot = path;
    return NULL;
}

/* ReplaySPEncryptionKeyFile PATH, ReplaySPEncryptionCertFile PATH
 * [publish]: repeatable, in pairs (the Nth key with the Nth certificate);
 * the pair whose certificate says "publish" (else the first) is the one
 * the metadata offers, every key decrypts. */
static const char *add_enc_file(cmd_parms *cmd, void *mconfig, const char *arg,
                                const char *flag)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_array_header_t **list = (intptr_t)cmd->info == 0
        ? &sp->def.enc_key_files : &sp->def.enc_cert_files;

    if (!path) {
        return rsp_cfg_invalid(cmd, arg, "not a valid path");
    }
    if (flag && ((intptr_t)cmd->info == 0 || strcasecmp(flag, "publish") != 0)) {
        return rsp_cfg_invalid(cmd, flag, (intptr_t)cmd->info == 0
                       ? "a key file takes no option (mark its certificate "
                         "with publish)"
                       : "expected publish or nothing");
    }
    if (!*list) {
        *list = apr_array_make(cmd->pool, 2, sizeof(const char *));
    }
    if (flag) {
        if (sp->def.enc_publish >= 0) {
            return rsp_cfg_invalid(cmd, flag, "only one certificate can be published");
        }
        sp->def.enc_publish = (*list)->nelts;
    }
    APR_ARRAY_PUSH(*list, const char *) = path;
    return NULL;
}

/* Words added to a list of the SP's: ReplaySPAllowSHA1 IDP-ENTITY-ID...
 * (checked against the SP's IdPs when the configuration is loaded),
 * ReplaySPScopedAttribute NAME... (more scoped attributes, rsp_scope.h),
 * ReplaySPIdPInclude / ReplaySPIdPExclude SELECTOR... (rsp_md_filter.h). */
static const char *add_sp_word(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    intptr_t which = (intptr_t)cmd->info;
    apr_array_header_t **list = which == 1 ? &sp->def.scoped_names
                                : which == 2 ? &sp->def.idp_include
                                : which == 3 ? &sp->def.idp_exclude
                                : &sp->def.sha1_idps;
    const char *why;

    if (!*arg) {
        return rsp_cfg_invalid(cmd, arg, which == 1 ? "expected an attribute's Name"
                                 : which ? "expected a selector"
                                 : "expected an IdP's entityID");
    }
    if (which >= 2 && (why = rsp_md_selector_invalid(arg)) != NULL) {
        return rsp_cfg_invalid(cmd, arg, why);
    }
    if (!*list) {
        *list = apr_array_make(cmd->pool, 2, sizeof(const char *));
    }
    APR_ARRAY_PUSH(*list, const char *) = arg;
    return NULL;
}

/* ReplaySPDiscoveryURL URL: an absolute http(s) URL without a fragment. */
static const char *set_discovery_url(cmd_parms *cmd, void *mconfig,
                                     const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);
    apr_uri_t u;

    if (apr_uri_parse(cmd->pool, arg, &u) != APR_SUCCESS || !u.scheme
        || (strcasecmp(u.scheme, "https") && strcasecmp(u.scheme, "http"))
        || !u.hostname || !*u.hostname || u.fragment || strchr(arg, '#')
        || strpbrk(arg, " \t\r\n\"<>")) {
        return rsp_cfg_invalid(cmd, arg, "expected an absolute http or https URL "
                       "without a fragment");
    }
    sp->def.discovery_url = arg;
    return NULL;
}

/* ReplaySPDefaultIdP ENTITYID (checked against the SP's IdPs when the
 * configuration is loaded) and ReplaySPDiscoveryStylesheet URL. */
static const char *set_sp_word(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_sp_conf_t *sp = rsp_cfg_section_sp(cmd, mconfig);

    if (!*arg) {
        return rsp_cfg_invalid(cmd, arg, "expected a value");
    }
    if (cmd->info) {
        if (strncasecmp(arg, "https://", 8) && arg[0] != '/') {
            return rsp_cfg_invalid(cmd, arg, "expected an https URL or a path");
        }
        if (strpbrk(arg, " \t\r\n\"'<>;,")) {
            return rsp_cfg_invalid(cmd, arg, "a URL without spaces, quotes, "
                           "brackets, ';' or ','");
        }
        sp->def.discovery_stylesheet = arg;
    }
    else {
        sp->def.default_idp = arg;
    }
    return NULL;
}

static const char *set_endpoint(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_dir_cfg_t *dc = mconfig;
    apr_size_t len = strlen(arg);
    const char *c;

    if (arg[0] != '/' || len < 2 || arg[len - 1] == '/' || strstr(arg, "//")
        || strstr(arg, "/./") || strstr(arg, "/../")) {
        return rsp_cfg_invalid(cmd, arg, "expected an absolute path without a "
                       "trailing slash, e.g. /saml");
    }
    for (c = arg; *c; c++) {
        if (*c <= ' ' || *c > '~' || *c == '?' || *c == '#' || *c == '%') {
            return rsp_cfg_invalid(cmd, arg, "only plain printable path characters");
        }
    }
    dc->endpoint_path = arg;
    return NULL;
}

static const char *set_cookie_name(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *c;

    if (!*arg || strlen(arg) > 64) {
        return rsp_cfg_invalid(cmd, arg, "expected 1 to 64 characters");
    }
    for (c = arg; *c; c++) {
        if (!apr_isalnum(*c) && *c != '_' && *c != '-' && *c != '.') {
            return rsp_cfg_invalid(cmd, arg, "letters, digits, '_', '-' and '.' only");
        }
    }
    ((rsp_dir_cfg_t *)mconfig)->cookie_name = arg;
    return NULL;
}

static const char *set_dir_word(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_dir_cfg_t *dc = mconfig;
    const char *c;

    if (!*arg || strlen(arg) > 128) {
        return rsp_cfg_invalid(cmd, arg, "expected 1 to 128 characters");
    }
    for (c = arg; *c; c++) {
        if ((unsigned char)*c <= ' ' || *c == 0x7f) {
            return rsp_cfg_invalid(cmd, arg, "no spaces or control characters");
        }
    }
    if ((intptr_t)cmd->info == 0) {
        dc->user_attribute = arg;
    }
    else {
        for (c = arg; *c; c++) {
            if (!apr_isalnum(*c) && *c != '_') {
                return rsp_cfg_invalid(cmd, arg, "letters, digits and '_' only");
            }
        }
        dc->env_prefix = arg;
    }
    return NULL;
}

static const char *set_dir_num(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_dir_cfg_t *dc = mconfig;

    switch ((intptr_t)cmd->info) {
    case 0:
        return rsp_cfg_parse_num(cmd, arg, 0, 600, &dc->skew);
    case 1:
        return rsp_cfg_parse_num(cmd, arg, 60, 30 * 86400, &dc->session_lifetime);
    case 2:
        return rsp_cfg_parse_num(cmd, arg, 1, RSP_MAX_MAX_WINDOW, &dc->max_window);
    case 3:
        return rsp_cfg_parse_num(cmd, arg, 4096, 16 * 1024 * 1024, &dc->max_body);
    default:
        return rsp_cfg_parse_num(cmd, arg, 5, 3600, &dc->request_lifetime);
    }
}

/* ReplaySPGuard On|Report: this section is another SP's assertion
 * consumer; its SP directives (ReplaySPEntityID, ReplaySPIdPMetadataFile,
 * ReplaySPEncryptionKeyFile) describe that SP. Only in a <Location> with
 * a plain path: the guard also refuses every other spelling of that path
 * (rsp_path.h), which it can only do for a path it knows. Report: every
 * check and claim as On, every request passed on. */
static const char *set_guard(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rsp_dir_cfg_t *dc = mconfig;
    const ap_directive_t *sec = cmd->directive->parent;
    rsp_guard_path_t *gp;
    const char *why;

    if (!strcasecmp(arg, "Off")) {
        dc->guard = 0;
        return NULL;
    }
    if (!strcasecmp(arg, "On")) {
        dc->guard = RSP_GUARD_ON;
    }
    else if (!strcasecmp(arg, "Report")) {
        dc->guard = RSP_GUARD_REPORT;
    }
    else {
        return apr_psprintf(cmd->pool, "ReplaySPGuard %s: give On, Report "
                            "(check and claim, refuse nothing) or Off", arg);
    }
    if (!sec || strcasecmp(sec->directive, "<Location") || !cmd->path
        || sec->args[0] == '~') {
        return apr_psprintf(cmd->pool, "ReplaySPGuard %s belongs in a "
                            "<Location> section with the path of the SP's "
                            "assertion consumer (%s:%d is %s)", arg,
                            cmd->directive->filename, cmd->directive->line_num,
                            sec ? apr_pstrcat(cmd->pool, "in ", sec->directive,
                                              ">", NULL)
                                : "in the server configuration");
    }
    if (apr_fnmatch_test(cmd->path)) {
        return apr_psprintf(cmd->pool, "ReplaySPGuard %s: <Location %s> has a "
                            "wildcard; the guard needs the one path of the "
                            "SP's assertion consumer", arg, cmd->path);
    }
    if ((why = rsp_path_noncanonical(cmd->path)) != NULL) {
        return apr_psprintf(cmd->pool, "ReplaySPGuard %s: <Location %s>: %s; "
                            "give the path as the SP reads it, unescaped",
                            arg, cmd->path, why);
    }
    rsp_cfg_section_sp(cmd, dc)->def.guard = 1;
    gp = apr_array_push(srv_cfg(cmd)->guard_paths);
    gp->path = cmd->path;
    gp->report = dc->guard == RSP_GUARD_REPORT;
    return NULL;
}

static const char *set_bind_requests(cmd_parms *cmd, void *mconfig, int on)
{
    ((rsp_dir_cfg_t *)mconfig)->bind_requests = on ? 1 : 0;
    return NULL;
}

static const char *set_qualify_user(cmd_parms *cmd, void *mconfig, int on)
{
    ((rsp_dir_cfg_t *)mconfig)->qualify_user = on ? 1 : 0;
    return NULL;
}

static const char *set_allow_unsolicited(cmd_parms *cmd, void *mconfig, int on)
{
    ((rsp_dir_cfg_t *)mconfig)->allow_unsolicited = on ? 1 : 0;
    return NULL;
}

/* ReplaySPRedirectDomains host|*.domain ... (one directive, one list: a
 * later directive in the same section replaces nothing, it adds). */
static const char *add_redirect_domain(cmd_parms *cmd, void *mconfig,
                                       const char *arg)
{
    rsp_dir_cfg_t *dc = mconfig;
    const char *why = rsp_redirect_domain_check(arg);

    if (why) {
        return rsp_cfg_invalid(cmd, arg, why);
    }
    if (!dc->redirect_domains) {
        dc->redirect_domains = apr_array_make(cmd->pool, 4, sizeof(char *));
    }
    APR_ARRAY_PUSH(dc->redirect_domains, const char *) = arg;
    return NULL;
}

const command_rec rsp_cmds[] = {
    /* The store: per server. */
    AP_INIT_TAKE1("ReplaySPStore", set_store, NULL, RSRC_CONF,
                  "Claim and session store: redis://[user:password@]host:port[/db], "
                  "rediss://... (TLS), redis+unix:///path[?db=N], "
                  "memcache://host:port[,host:port...] or memcaches://... (TLS) "
                  "(no default; required)"),
    AP_INIT_TAKE12("ReplaySPStoreReplicas", set_replicas, NULL, RSRC_CONF,
                   "Redis: a claim counts only once this many replicas "
                   "acknowledged it (WAIT), within MILLISECONDS (default 0: "
                   "not waited for; wait 100)"),
    AP_INIT_TAKE1("ReplaySPStoreTLSCAFile", set_store_tls_file, (void *)0,
                  RSRC_CONF, "PEM CA certificates the TLS store's certificate "
                  "must chain to (default: the system's CAs)"),
    AP_INIT_TAKE1("ReplaySPStoreTLSCertFile", set_store_tls_file, (void *)1,
                  RSRC_CONF, "PEM certificate (chain) this server presents to "
                  "a TLS store that asks for one (default: none)"),
    AP_INIT_TAKE1("ReplaySPStoreTLSKeyFile", set_store_tls_file, (void *)2,
                  RSRC_CONF, "Unencrypted PEM private key of "
                  "ReplaySPStoreTLSCertFile (default: in the certificate file)"),
    AP_INIT_TAKE1("ReplaySPStoreTimeout", set_store_timeout, NULL, RSRC_CONF,
                  "Milliseconds allowed for connecting to the store and for each "
                  "command (default 1000)"),
    AP_INIT_TAKE1("ReplaySPStoreKeyPrefix", set_key_prefix, NULL, RSRC_CONF,
                  "Prefix of every key this module writes (default rsp:)"),
    AP_INIT_TAKE1("ReplaySPReplicaName", set_replica_name, NULL, RSRC_CONF,
                  "Name of this replica in claims and log lines (default "
                  "hostname:port of the connection)"),
    AP_INIT_TAKE1("ReplaySPOnStoreFailure", set_on_failure, NULL, RSRC_CONF,
                  "closed: refuse a sign-in the store could not claim (503); "
                  "open: accept it, logged at error level (default closed)"),
    AP_INIT_TAKE1("ReplaySPMonitorInterval", set_monitor_num, (void *)0, RSRC_CONF,
                  "Seconds between two polls of the store by the monitor; 0 "
                  "turns it off (default 5; main server only)"),
    AP_INIT_TAKE1("ReplaySPHeadroomWarn", set_monitor_num, (void *)1, RSRC_CONF,
                  "Warn when the store's memory reaches this percentage of "
                  "its limit (default 80; main server only)"),
    /* The SP: per location, in the main configuration only (not .htaccess),
     * all four in the same section. */
    AP_INIT_TAKE1("ReplaySPEntityID", set_entity_id, NULL, ACCESS_CONF,
                  "Entity ID of this SP (no default; required)"),
    AP_INIT_TAKE1("ReplaySPKeyFile", set_sp_file, (void *)0, ACCESS_CONF,
                  "PEM private key of this SP (no default; required)"),
    AP_INIT_TAKE1("ReplaySPCertFile", set_sp_file, (void *)1, ACCESS_CONF,
                  "PEM certificate of this SP (no default; required)"),
    RSP_METADATA_DIRECTIVES
    AP_INIT_TAKE12("ReplaySPEncryptionKeyFile", add_enc_file, (void *)0,
                  ACCESS_CONF, "PEM RSA private key that decrypts assertions; "
                  "repeat for key rollover, each with its "
                  "ReplaySPEncryptionCertFile (default: the ReplaySPKeyFile "
                  "pair also decrypts)"),
    AP_INIT_TAKE12("ReplaySPEncryptionCertFile", add_enc_file, (void *)1,
                   ACCESS_CONF, "PEM certificate of the Nth "
                   "ReplaySPEncryptionKeyFile; 'publish' marks the one the "
                   "metadata offers (default: the first)"),
    AP_INIT_ITERATE("ReplaySPAllowSHA1", add_sp_word, NULL, ACCESS_CONF,
                    "IdP entityIDs whose RSA-SHA1 signatures and SHA-1 "
                    "digests are accepted, each use logged (default: none)"),
    AP_INIT_TAKE1("ReplaySPDiscoveryURL", set_discovery_url, NULL, ACCESS_CONF,
                  "URL of a discovery service where a browser without a session "
                  "chooses among the SP's IdPs (default: none, the first IdP)"),
    AP_INIT_TAKE1("ReplaySPDefaultIdP", set_sp_word, NULL, ACCESS_CONF,
                  "Entity ID of the IdP a browser without a session is sent to "
                  "(default: with several IdPs, the discovery service or page; "
                  "with one, that one)"),
    AP_INIT_TAKE1("ReplaySPDiscoveryStylesheet", set_sp_word, (void *)1,
                  ACCESS_CONF, "Stylesheet of the built-in discovery page, "
                  "an https URL or a path (default: its own)"),
    AP_INIT_ITERATE("ReplaySPIdPInclude", add_sp_word, (void *)2, ACCESS_CONF,
                    "Trust only the IdPs of the metadata files that match one "
                    "of these: entity=ID, registrar=AUTHORITY, category=URI "
                    "(default: every IdP)"),
    AP_INIT_ITERATE("ReplaySPIdPExclude", add_sp_word, (void *)3, ACCESS_CONF,
                    "Do not trust the IdPs of the metadata files that match "
                    "one of these: entity=ID, registrar=AUTHORITY, "
                    "category=URI (default: none)"),
    AP_INIT_ITERATE("ReplaySPScopedAttribute", add_sp_word, (void *)1,
                    ACCESS_CONF, "Names of attributes whose values are "
                    "user@scope, kept only in the scopes the IdP's metadata "
                    "declares (beside eduPersonPrincipalName, "
                    "eduPersonScopedAffiliation, subject-id, pairwise-id)"),
    AP_INIT_TAKE1("ReplaySPEndpointPath", set_endpoint, NULL, ACCESS_CONF,
                  "Path of the SP endpoints (acs, metadata, login, logout, "
                  "slo) (default /saml)"),
    AP_INIT_TAKE1("ReplaySPClockSkew", set_dir_num, (void *)0, ACCESS_CONF,
                  "Seconds of clock skew tolerated; also added to every claim's "
                  "retention (default 60)"),
    AP_INIT_TAKE1("ReplaySPSessionLifetime", set_dir_num, (void *)1, ACCESS_CONF,
                  "Seconds a session lasts, capped by SessionNotOnOrAfter "
                  "(default 28800)"),
    AP_INIT_TAKE1("ReplaySPMaxAssertionWindow", set_dir_num, (void *)2, ACCESS_CONF,
                  "Longest remaining assertion validity accepted, in seconds, "
                  "beyond the clock skew (default 3900)"),
    AP_INIT_TAKE1("ReplaySPMaxBodySize", set_dir_num, (void *)3, ACCESS_CONF,
                  "Largest ACS POST body in bytes (default 262144)"),
    AP_INIT_TAKE1("ReplaySPCookieName", set_cookie_name, NULL, ACCESS_CONF,
                  "Name of the session cookie (default replay_sp_session)"),
    AP_INIT_TAKE1("ReplaySPUserAttribute", set_dir_word, (void *)0, ACCESS_CONF,
                  "Attribute whose first value is REMOTE_USER; an assertion "
                  "without it is refused (default: the NameID)"),
    AP_INIT_TAKE1("ReplaySPEnvPrefix", set_dir_word, (void *)1, ACCESS_CONF,
                  "Prefix of the environment variables that carry the "
                  "attributes (default REPLAYSP_)"),
    AP_INIT_TAKE1("ReplaySPRequestLifetime", set_dir_num, (void *)4, ACCESS_CONF,
                  "Seconds a pending AuthnRequest or LogoutRequest may be "
                  "answered (default 300)"),
    AP_INIT_TAKE1("ReplaySPGuard", set_guard, NULL, ACCESS_CONF,
                  "On: guard another SP's assertion consumer at this location "
                  "(validate and claim each POSTed response before the SP "
                  "reads it); Report: the same checks and claims, what would "
                  "be refused logged and passed on (default Off)"),
    AP_INIT_FLAG("ReplaySPQualifyUser", set_qualify_user, NULL, ACCESS_CONF,
                 "On: a REMOTE_USER from the NameID is IdP!SP!NameID (default: "
                 "On when the SP trusts more than one IdP)"),
    AP_INIT_FLAG("ReplaySPBindRequests", set_bind_requests, NULL, ACCESS_CONF,
                 "On: a sign-in's answer is taken only from the browser that "
                 "started it (a cookie set with the AuthnRequest: login CSRF) "
                 "(default On)"),
    AP_INIT_FLAG("ReplaySPAllowUnsolicited", set_allow_unsolicited, NULL,
                 ACCESS_CONF, "On: accept responses that answer no request "
                 "of ours (IdP-initiated sign-in) (default Off)"),
    AP_INIT_ITERATE("ReplaySPRedirectDomains", add_redirect_domain, NULL,
                    ACCESS_CONF, "Hosts (or *.domain) a redirect may lead "
                    "to besides this host (default: this host only)"),
    {NULL}
};
