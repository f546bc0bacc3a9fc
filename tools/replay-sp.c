/* replay-sp: check a store, size one, look up a claim, list or end a
 * user's sessions, read a metadata file as the module would. Options and the common parts; one file per group of
 * commands (replay-sp-store.c, replay-sp-records.c). */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <apr_general.h>
#include <apr_strings.h>

#include "replay-sp.h"
#include "rsp_log.h"
#include "rsp_util.h"

#define DEFAULT_TIMEOUT_MS 1000    /* the module's ReplaySPStoreTimeout */
#define DEFAULT_PREFIX "rsp:"      /* the module's ReplaySPStoreKeyPrefix */

typedef struct {
    const char *name;
    int (*run)(tool_t *t);
    const char *usage;             /* after "replay-sp NAME " */
    const char *help;
    const char *const *opts;       /* options it takes ("name" or "name=") */
} command_t;

#define TLS_OPTS "tls-ca=", "tls-cert=", "tls-key="
static const char *const check_opts[] = {"timeout=", "headroom-warn=", "json",
                                         TLS_OPTS, NULL};
static const char *const capacity_opts[] = {
    "sign-ins-per-second=", "window=", "skew=", "session-lifetime=",
    "sessions=", "sp-initiated", "request-lifetime=", "memcached", "json", NULL};
static const char *const lookup_opts[] = {"issuer=", "assertion-id=", "prefix=",
                                          "timeout=", "json", TLS_OPTS, NULL};
static const char *const metadata_opts[] = {"cert=", "max-validity=", "json",
                                            "ca-file=", "entity=", NULL};
static const char *const sessions_opts[] = {"issuer=", "name-id=", "end",
                                            "prefix=", "timeout=", "json",
                                            TLS_OPTS, NULL};

static const command_t commands[] = {
    {"check", cmd_check, "STORE-URL [--timeout MS] [--headroom-warn PCT] [--json]",
     "Connect to the store as the module does and report what its monitor\n"
     "would alarm on: eviction policy, memory limit and headroom,\n"
     "persistence, role, replicas. Exit status 1 when the store could lose\n"
     "claims (or refuse every sign-in), 2 when it cannot be reached.\n",
     check_opts},
    {"capacity", cmd_capacity,
     "--sign-ins-per-second N [--window S] [--skew S] [--session-lifetime S]\n"
     "       [--sessions N] [--sp-initiated] [--request-lifetime S] [--memcached] [--json]",
     "The memory the store needs at a peak sign-in rate, with the arithmetic\n"
     "(the operations guide's planning figures per record). Defaults: window\n"
     "3900 (ReplaySPMaxAssertionWindow), skew 60, session lifetime 28800,\n"
     "request lifetime 300; --sessions: signed-in users at once (default:\n"
     "every sign-in of one session lifetime).\n",
     capacity_opts},
    {"lookup", cmd_lookup,
     "STORE-URL --issuer ISSUER --assertion-id ID [--prefix P] [--timeout MS] [--json]",
     "Incident response: was this assertion claimed, when, by which replica,\n"
     "does the session its sign-in made exist, and how long until the claim\n"
     "expires. Exit status 1 when it is not claimed.\n",
     lookup_opts},
    {"sessions", cmd_sessions,
     "STORE-URL --issuer ISSUER --name-id NAMEID [--end] [--prefix P] [--timeout MS] [--json]",
     "List a user's sessions, fleet-wide, through the logout index; with\n"
     "--end, end them all (each logged to standard error): every replica\n"
     "refuses their cookies from then on.\n",
     sessions_opts},
    {"metadata", cmd_metadata, "FILE|URL [--cert CERTFILE] [--max-validity S] "
     "[--ca-file CAFILE] [--entity ENTITYID] [--json]",
     "What a metadata file or URL holds and what the module would trust of\n"
     "it (a URL is fetched as ReplaySPIdPMetadataURL fetches it, https\n"
     "peers checked against --ca-file or the system's CAs, and needs\n"
     "--cert; nothing is written): with\n"
     "--cert (the certificate that signs it, as ReplaySPIdPMetadataFile's\n"
     "second argument), its signature and validUntil checked as the module\n"
     "checks them (--max-validity: ReplaySPMetadataMaxValidity, default\n"
     "2419200); its IdPs with their display name, the number of scopes they\n"
     "declare and whether they are hidden from discovery. Exit status 1 when\n"
     "the module would refuse the file. With --entity, URL is the base of an\n"
     "MDQ service (ReplaySPIdPMetadataQuery): the entity is asked for as the\n"
     "module asks, and refused unless the answer describes it alone, as an IdP.\n",
     metadata_opts},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void tool_error(const char *fmt, ...)
{
    va_list ap;

    fputs("replay-sp: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *tool_opt(const tool_t *t, const char *name)
{
    return apr_table_get(t->opts, name);
}

const char *tool_json(apr_pool_t *p, const char *s)
{
    return rsp_json_string(p, s);
}

const char *tool_time(apr_pool_t *p, apr_time_t t)
{
    return rsp_format_time(p, t);
}

int tool_store(tool_t *t, const char *url, rsp_store_t **st)
{
    rsp_store_url_t *u;
    const char *err = NULL;

    if (rsp_store_url_parse(&u, t->p, url, &err) != APR_SUCCESS) {
        tool_error("%s: %s", url, err);
        return RSP_EXIT_ERROR;
    }
    if (!u->tls && (tool_opt(t, "tls-ca") || tool_opt(t, "tls-cert")
                    || tool_opt(t, "tls-key"))) {
        tool_error("%s: --tls-ca, --tls-cert and --tls-key are for rediss:// "
                   "and memcaches:// stores", u->display);
        return RSP_EXIT_USAGE;
    }
    if (tool_opt(t, "tls-key") && !tool_opt(t, "tls-cert")) {
        tool_error("--tls-key needs --tls-cert");
        return RSP_EXIT_USAGE;
    }
    if (rsp_store_create(st, t->p, u, t->timeout, &err) != APR_SUCCESS) {
        tool_error("%s: %s", u->display, err);
        return RSP_EXIT_ERROR;
    }
    if (u->tls && rsp_tls_create(&(*st)->tls, t->p, tool_opt(t, "tls-ca"),
                                 tool_opt(t, "tls-cert"), tool_opt(t, "tls-key"),
                                 NULL, &err) != APR_SUCCESS) {
        tool_error("%s: TLS: %s", u->display, err);
        return RSP_EXIT_ERROR;
    }
    if (rsp_store_child_init(*st, t->p, 1) != APR_SUCCESS) {
        tool_error("%s: %s", u->display, err ? err : "cannot set up the store");
        return RSP_EXIT_ERROR;
    }
    return RSP_EXIT_OK;
}

static void usage_of(FILE *f, const command_t *c)
{
    fprintf(f, "usage: replay-sp %s %s\n", c->name, c->usage);
}

static void usage(FILE *f)
{
    apr_size_t i;

    fputs("usage: replay-sp COMMAND [ARGS]  (replay-sp COMMAND --help)\n\n", f);
    for (i = 0; i < N_COMMANDS; i++) {
        fprintf(f, "  %s %s\n", commands[i].name, commands[i].usage);
    }
    fputs("\nSTORE-URL is what ReplaySPStore takes: redis://[user:password@]"
          "host:port[/db],\nrediss://... (TLS), redis+unix:///path[?db=N], "
          "memcache://host:port[,host:port...],\nmemcaches://... (TLS). With "
          "TLS: --tls-ca FILE (default: the system's CAs),\n--tls-cert FILE "
          "and --tls-key FILE (mutual TLS), like ReplaySPStoreTLS*File.\n", f);
}

/* --name value, --name=value, --flag; refused: unknown options, a value
 * missing, an option twice. */
static int parse(tool_t *t, const command_t *c, int argc, const char *const *argv)
{
    int i;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *eq, *name, *value = NULL;
        const char *const *o;
        int takes = -1;

        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            APR_ARRAY_PUSH(t->args, const char *) = a;
            continue;
        }
        eq = strchr(a + 2, '=');
        name = eq ? apr_pstrmemdup(t->p, a + 2, (apr_size_t)(eq - a - 2)) : a + 2;
        for (o = c->opts; *o; o++) {
            apr_size_t n = strlen(name);
            if (!strncmp(*o, name, n) && ((*o)[n] == '\0' || (*o)[n] == '=')) {
                takes = (*o)[n] == '=';
            }
        }
        if (takes < 0) {
            tool_error("%s: unknown option --%s", c->name, name);
            return RSP_EXIT_USAGE;
        }
        if (takes) {
            value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!value) {
                tool_error("%s: --%s needs a value", c->name, name);
                return RSP_EXIT_USAGE;
            }
        }
        else if (eq) {
            tool_error("%s: --%s takes no value", c->name, name);
            return RSP_EXIT_USAGE;
        }
        if (apr_table_get(t->opts, name)) {
            tool_error("%s: --%s given twice", c->name, name);
            return RSP_EXIT_USAGE;
        }
        apr_table_setn(t->opts, name, value ? value : "1");
    }
    return RSP_EXIT_OK;
}

/* Library messages (a store's reconnect, say) go to standard error. */
static void log_sink(void *baton, int level, const char *msg)
{
    if (level <= RSP_LOG_WARNING) {
        fprintf(stderr, "replay-sp: %s\n", msg);
    }
}

int main(int argc, const char *const *argv)
{
    const command_t *c = NULL;
    tool_t t;
    const char *v;
    char *end;
    apr_size_t i;
    int rc;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")
        || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? RSP_EXIT_USAGE : RSP_EXIT_OK;
    }
    for (i = 0; i < N_COMMANDS; i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            c = &commands[i];
        }
    }
    if (!c) {
        tool_error("unknown command %s", argv[1]);
        usage(stderr);
        return RSP_EXIT_USAGE;
    }
    for (i = 2; i < (apr_size_t)argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage_of(stdout, c);
            fputs("\n", stdout);
            fputs(c->help, stdout);
            return RSP_EXIT_OK;
        }
    }
    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fputs("replay-sp: cannot initialise APR\n", stderr);
        return RSP_EXIT_ERROR;
    }
    atexit(apr_terminate);
    signal(SIGPIPE, SIG_IGN); /* a store that closes: an error, not a kill */
    apr_pool_create(&t.p, NULL);
    rsp_log_set_sink(log_sink, NULL);
    t.args = apr_array_make(t.p, 2, sizeof(const char *));
    t.opts = apr_table_make(t.p, 8);
    if ((rc = parse(&t, c, argc - 2, argv + 2)) != RSP_EXIT_OK) {
        usage_of(stderr, c);
        return rc;
    }
    t.json = tool_opt(&t, "json") != NULL;
    t.prefix = (v = tool_opt(&t, "prefix")) ? v : DEFAULT_PREFIX;
    t.timeout = apr_time_from_msec(DEFAULT_TIMEOUT_MS);
    if ((v = tool_opt(&t, "timeout"))) {
        long ms = strtol(v, &end, 10);
        if (*end || ms < 1 || ms > 60000) {
            tool_error("%s: --timeout: expected milliseconds from 1 to 60000, "
                       "not %s", c->name, v);
            return RSP_EXIT_USAGE;
        }
        t.timeout = apr_time_from_msec(ms);
    }
    if (!*t.prefix || strlen(t.prefix) > 64) {
        tool_error("%s: --prefix: expected 1 to 64 characters", c->name);
        return RSP_EXIT_USAGE;
    }
    rc = c->run(&t);
    if (rc == RSP_EXIT_USAGE) {
        usage_of(stderr, c);
    }
    apr_pool_destroy(t.p);
    return rc;
}
