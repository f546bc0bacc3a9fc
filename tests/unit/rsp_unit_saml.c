/* What the SAML suites share (rsp_unit_saml.h): the fixtures, the SP
 * loaded from them, the listener, the Response cases' check. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>

#include "rsp_unit_saml.h"

#ifndef RSP_SRCDIR
#define RSP_SRCDIR "."
#endif

static char dir[] = "/tmp/rsp-saml-XXXXXX";
const char *saml_dir = dir;
rsp_saml_sp_t saml_sp;
rsp_lasso_server_t *saml_server;
static int listen_fd = -1;
static apr_pool_t *root;

const char *rsp_unit_saml_file(apr_pool_t *p, const char *rel)
{
    const char *path = apr_pstrcat(p, dir, "/", rel, NULL);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;

    ck_assert_msg(apr_file_open(&f, path, APR_FOPEN_READ, 0, p) == APR_SUCCESS,
                  "no fixture %s", path);
    ck_assert_int_eq(apr_file_info_get(&fi, APR_FINFO_SIZE, f), APR_SUCCESS);
    buf = apr_palloc(p, (apr_size_t)fi.size + 1);
    ck_assert_int_eq(apr_file_read_full(f, buf, (apr_size_t)fi.size, &n),
                     APR_SUCCESS);
    buf[n] = '\0';
    apr_file_close(f);
    return buf;
}

const char *rsp_unit_saml_case(apr_pool_t *p, const char *name)
{
    return rsp_unit_saml_file(p, apr_pstrcat(p, "cases/", name, ".b64", NULL));
}

int rsp_unit_saml_fetched(void)
{
    struct pollfd pfd;

    pfd.fd = listen_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, 200) != 0;
}

apr_status_t rsp_unit_saml_process(const char *b64, rsp_assertion_t **a,
                                   const char **check, const char **detail)
{
    return rsp_unit_saml_process_user(b64, NULL, a, check, detail);
}

apr_status_t rsp_unit_saml_process_user(const char *b64,
                                        const char *user_attribute,
                                        rsp_assertion_t **a,
                                        const char **check,
                                        const char **detail)
{
    rsp_check_params_t cp;

    memset(&cp, 0, sizeof(cp));
    cp.sp = &saml_sp;
    cp.entity_id = SP_ENTITY;
    cp.acs_url = ACS_URL;
    cp.now = apr_time_now();
    cp.skew_s = 180;
    cp.max_window_s = 3600;
    cp.user_attribute = user_attribute;
    *a = NULL;
    *check = *detail = NULL;
    return rsp_saml_process_response(a, pool, saml_server, b64, &cp, check,
                                     detail);
}

void rsp_unit_saml_check_case(const rsp_unit_saml_case_t *c)
{
    rsp_assertion_t *a;
    const char *check, *detail;
    apr_status_t rv = rsp_unit_saml_process(rsp_unit_saml_case(pool, c->name),
                                            &a, &check, &detail);

    if (!c->check) {
        ck_assert_msg(rv == APR_SUCCESS, "%s: refused, check=%s: %s", c->name,
                      check ? check : "?", detail ? detail : "?");
        ck_assert_ptr_nonnull(a);
        /* the whole signed value, whatever splits its text */
        ck_assert_str_eq(a->name_id, c->name_id);
        ck_assert_str_eq(a->issuer, IDP_ENTITY);
        ck_assert(a->ttl_ms > 0);
    }
    else {
        ck_assert_msg(rv != APR_SUCCESS, "%s: accepted (user %s), expected "
                      "check=%s", c->name, a && a->name_id ? a->name_id : "?",
                      c->check);
        ck_assert_msg(check && !strcmp(check, c->check),
                      "%s: check=%s (%s), expected check=%s", c->name,
                      check ? check : "(none)", detail ? detail : "", c->check);
        ck_assert_msg(detail && *detail, "%s: no detail", c->name);
    }
}

/* A listening loopback socket (never accepted on): the address of the
 * fixtures' external DTD and CipherReference. */
static int listener(int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || listen(fd, 4) != 0
        || getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("listener");
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* make_saml_cases.py DIR PORT GROUPS, bounded by its own work (a few
 * seconds). */
static int make_cases(int port, const char *groups)
{
    char portbuf[16];
    pid_t pid;
    int status = 0;

    snprintf(portbuf, sizeof(portbuf), "%d", port);
    pid = fork();
    if (pid == 0) {
        execl("/usr/bin/python3", "python3",
              RSP_SRCDIR "/tests/unit/make_saml_cases.py", dir, portbuf, groups,
              (char *)NULL);
        perror("exec /usr/bin/python3");
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "make_saml_cases.py failed (status %d)\n", status);
        return -1;
    }
    return 0;
}

static void remove_tree(const char *d)
{
    pid_t pid = fork();
    int status;

    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", d, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        waitpid(pid, &status, 0);
    }
}

/* The SP's pool, at exit: also in the forked test processes, which never
 * return here (what the pool holds the key objects through is memory
 * LeakSanitizer does not scan: APR maps it). */
static void release_root(void)
{
    if (root) {
        apr_pool_destroy(root);
        root = NULL;
    }
}

const char *saml_fixture(const char *name)
{
    return apr_pstrcat(pool, saml_dir, "/", name, NULL);
}

apr_array_header_t *saml_files(const char *a)
{
    apr_array_header_t *arr = apr_array_make(pool, 1, sizeof(const char *));

    if (a) {
        APR_ARRAY_PUSH(arr, const char *) = saml_fixture(a);
    }
    return arr;
}

/* The SP of the fixtures, as the module configures it. */
rsp_saml_sp_t saml_sp_of(const char *key, const char *cert, const char *idp)
{
    rsp_saml_sp_t sp;

    memset(&sp, 0, sizeof(sp));
    sp.entity_id = SP_ENTITY;
    sp.key_file = saml_fixture(key);
    sp.cert_file = saml_fixture(cert);
    sp.idp_files = saml_files(idp);
    sp.enc_publish = -1;
    return sp;
}

int rsp_unit_saml_main(const char *groups, Suite *(*suite)(void))
{
    const char *err = NULL;
    rsp_sp_input_t input;
    int port = 0, rc = 99;

    if (!mkdtemp(dir) || (listen_fd = listener(&port)) < 0
        || make_cases(port, groups) != 0) {
        fprintf(stderr, "cannot make the SAML fixtures in %s\n", dir);
        return 99;
    }
    apr_initialize();
    apr_pool_create(&root, NULL);
    atexit(release_root);
    if (rsp_saml_global_init(&err) != APR_SUCCESS) {
        fprintf(stderr, "Lasso: %s\n", err);
        return 99;
    }
    rsp_saml_log_install();   /* Lasso's messages to our log (dropped) */
    memset(&saml_sp, 0, sizeof(saml_sp));
    saml_sp.entity_id = SP_ENTITY;
    saml_sp.key_file = apr_pstrcat(root, dir, "/sp.key", NULL);
    saml_sp.cert_file = apr_pstrcat(root, dir, "/sp.crt", NULL);
    saml_sp.idp_files = apr_array_make(root, 1, sizeof(const char *));
    APR_ARRAY_PUSH(saml_sp.idp_files, const char *) =
        apr_pstrcat(root, dir, "/idp-metadata.xml", NULL);
    saml_sp.enc_publish = -1;
    if (rsp_saml_sp_load(&saml_sp, root, &input, &err) != APR_SUCCESS
        || rsp_saml_server_new(&saml_server, &saml_sp, &err) != APR_SUCCESS) {
        fprintf(stderr, "cannot load the SP of %s: %s\n", dir, err);
    }
    else {
        /* the suites see it as a request does: its IdPs pinned */
        saml_sp = *rsp_saml_sp_pin(&saml_sp, root);
        rc = rsp_unit_run(suite());
        rsp_saml_server_free(saml_server);
        saml_server = NULL;
    }
    close(listen_fd);
    if (rc == 0) {
        remove_tree(dir);
    }
    else {
        fprintf(stderr, "fixtures kept in %s\n", dir);
    }
    release_root();
    apr_terminate();
    return rc;
}
