/* What the MDQ suites share (rsp_unit_mdq.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_mdq.h"
#include "rsp_unit_mdq.h"
#include "rsp_unit_server.h"

static pid_t srv_pid = -1, owner;
static int http_port, https_port;
static const char *srv_root, *mdq_dir;

const char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = apr_palloc(pool, (apr_size_t)n + 1);
    n = (long)fread(buf, 1, (size_t)n, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

const char *md_case(const char *name)
{
    return slurp(apr_pstrcat(pool, saml_dir, "/md/", name, ".xml", NULL));
}

/* What the MDQ server answers for entity: the case `name`, or a 404. */
void publish(const char *entity, const char *name)
{
    const char *path = apr_pstrcat(pool, mdq_dir, "/",
                                   rsp_mdq_sha1_hex(pool, entity), ".xml", NULL);

    if (name) {
        put_file(path, md_case(name));
    }
    else {
        unlink(path);
    }
}

const char *tmpdir(void)
{
    char *d = apr_pstrcat(pool, saml_dir, "/t-XXXXXX", NULL);

    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

const char *base_url(void)
{
    return apr_psprintf(pool, "http://127.0.0.1:%d/mdq/", http_port);
}

/* How many requests the server has logged for the entity's hash. */
int requests_for(const char *hex)
{
    const char *log = slurp(apr_pstrcat(pool, srv_root, "/requests.log", NULL));
    const char *s = log;
    int n = 0;

    while (s && (s = strstr(s, hex)) != NULL) {
        n++;
        s += strlen(hex);
    }
    return n;
}

static int ports_ready(void *arg)
{
    const char *path = arg;
    FILE *f = fopen(path, "r");
    int ok;

    if (!f) {
        return 0;
    }
    ok = fscanf(f, "%d %d", &http_port, &https_port) == 2;
    fclose(f);
    return ok && http_port > 0 && https_port > 0;
}

static void stop_md_server(void)
{
    if (getpid() != owner) {
        return;   /* a forked test process */
    }
    stop_server(&srv_pid, "md_http_server.py");
    rsp_md_source_global_cleanup();
}


void mdq_server_start(void)
{
    static char root[256], ports[512], log[512], mddir[512], mdq[600];
    const char *argv[] = {"/usr/bin/python3", RSP_SRCDIR "/tests/unit/md_http_server.py",
                          root, mddir, NULL};
    const char *err = NULL;

    owner = getpid();
    snprintf(root, sizeof(root), "%s/srv", saml_dir);
    snprintf(ports, sizeof(ports), "%s/ports", root);
    snprintf(log, sizeof(log), "%s/server.log", root);
    snprintf(mddir, sizeof(mddir), "%s/md", saml_dir);
    snprintf(mdq, sizeof(mdq), "%s/mdq", mddir);
    srv_root = root;
    mdq_dir = mdq;
    if (mkdir(root, 0700) != 0 || mkdir(mdq, 0700) != 0) {
        fprintf(stderr, "mkdir %s: %s\n", root, strerror(errno));
        exit(99);
    }
    if (rsp_md_source_global_init(&err) != APR_SUCCESS) {
        fprintf(stderr, "libcurl: %s\n", err);
        exit(99);
    }
    if ((srv_pid = spawn_server(argv, log, ports_ready, ports)) < 0) {
        fprintf(stderr, "the metadata server did not start\n");
        exit(99);
    }
    atexit(stop_md_server);
}
