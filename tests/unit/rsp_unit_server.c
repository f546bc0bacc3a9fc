#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <apr_strings.h>

#include "rsp_unit_server.h"
#include "rsp_url.h"

/* ------------------------------------------------------------------ */
/* Processes and sockets                                               */

void sleep_ms(int ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

long long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ports bound_socket handed out last: bind(0) can return a port it
 * returned a moment ago once that socket is closed, and callers often
 * close it and give the number to a server that binds it later. */
#define RECENT_PORTS 256
static int recent_ports[RECENT_PORTS];
static unsigned recent_next;

static int recently_handed_out(int port)
{
    int i;

    for (i = 0; i < RECENT_PORTS; i++) {
        if (recent_ports[i] == port) {
            return 1;
        }
    }
    return 0;
}

static int bind_any(int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0) {
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

int bound_socket(int *port)
{
    int held[32], nheld = 0, fd = -1;

    /* a port handed out lately is held bound while another is asked for,
     * so that the kernel cannot offer it again */
    while (nheld < (int)(sizeof(held) / sizeof(held[0]))
           && (fd = bind_any(port)) >= 0 && recently_handed_out(*port)) {
        held[nheld++] = fd;
        fd = -1;
    }
    while (nheld > 0) {
        close(held[--nheld]);
    }
    if (fd >= 0) {
        recent_ports[recent_next++ % RECENT_PORTS] = *port;
    }
    return fd;
}

pid_t spawn_server(const char *const argv[], const char *log,
                   int (*ready)(void *), void *arg)
{
    long long deadline;
    pid_t pid;
    int i, status;

    if (access(argv[0], X_OK) != 0) {
        fprintf(stderr, "%s: not executable\n", argv[0]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        int nul = open("/dev/null", O_RDONLY);

        if (out < 0 || nul < 0) {
            _exit(126);
        }
#ifdef __linux__
        /* Should the test die without stopping it. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
        dup2(nul, 0);
        dup2(out, 1);
        dup2(out, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }

    deadline = mono_ms() + 10000;
    for (i = 0; i < 500 && mono_ms() < deadline; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "%s exited at start; see %s\n", argv[0], log);
            return -1;
        }
        if (ready(arg)) {
            return pid;
        }
        sleep_ms(20);
    }
    fprintf(stderr, "%s did not answer within 10 s; see %s\n", argv[0], log);
    stop_server(&pid, argv[0]);
    return -1;
}

/* Gone: reaped if it is our child, else a zombie (its parent reaps it) or
 * no such process. */
static int gone(pid_t pid)
{
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);

    if (r == pid) {
        return 1;
    }
    if (r < 0 && errno == ECHILD) {
        char st = proc_state(pid);
        return st == 'Z' || st == '?';
    }
    return 0;
}

void stop_server(pid_t *pid, const char *name)
{
    int i;

    if (*pid <= 0) {
        return;
    }
    kill(*pid, SIGCONT);
    kill(*pid, SIGTERM);
    for (i = 0; i < 250; i++) {
        if (gone(*pid)) {
            *pid = -1;
            return;
        }
        sleep_ms(20);
    }
    fprintf(stderr, "%s (pid %ld) ignored SIGTERM; SIGKILL\n", name,
            (long)*pid);
    kill(*pid, SIGKILL);
    for (i = 0; i < 250 && !gone(*pid); i++) {
        sleep_ms(20);
    }
    *pid = -1;
}

char proc_state(pid_t pid)
{
    char path[64], buf[512], *rp;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (!(f = fopen(path, "r"))) {
        return '?';
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' ? rp[2] : '?';
}

int signal_wait(pid_t pid, int sig)
{
    int i;

    if (pid <= 0 || kill(pid, sig) != 0) {
        return -1;
    }
    for (i = 0; i < 200; i++) {
        char st = proc_state(pid);
        if (sig == SIGSTOP ? st == 'T' : st != 'T') {
            return 0;
        }
        sleep_ms(10);
    }
    return -1;
}

void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int i;

    if (!d) {
        return;
    }
    for (i = 0; i < 100 && (e = readdir(d)) != NULL; i++) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char path[512];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* Test helpers                                                        */

long long ms_since(apr_time_t t0)
{
    return (long long)apr_time_as_msec(apr_time_now() - t0);
}

int contains(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

static apr_status_t fd_close(void *data)
{
    close(*(int *)data);
    return APR_SUCCESS;
}

void pool_fd(int fd)
{
    int *p = apr_palloc(pool, sizeof(*p));

    *p = fd;
    apr_pool_cleanup_register(pool, p, fd_close, apr_pool_cleanup_null);
}

int dead_port(void)
{
    int port = 0, fd = bound_socket(&port);

    ck_assert_int_ge(fd, 0);
    pool_fd(fd);
    return port;
}

int listener(int backlog, int *port)
{
    int fd = bound_socket(port);

    ck_assert_int_ge(fd, 0);
    pool_fd(fd);
    ck_assert_int_eq(listen(fd, backlog), 0);
    return fd;
}

int full_backlog_port(void)
{
    int port = 0, i;

    listener(0, &port);
    for (i = 0; i < 3; i++) {
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

        ck_assert_int_ge(fd, 0);
        pool_fd(fd);
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons((unsigned short)port);
        ck_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
                  errno == EINPROGRESS);
    }
    sleep_ms(50);
    return port;
}

rsp_store_t *store_in(apr_pool_t *p, const char *url,
                      apr_interval_time_t timeout, int max_conns)
{
    rsp_store_url_t *u = NULL;
    rsp_store_t *st = NULL;
    const char *err = NULL;

    ck_assert_msg(rsp_store_url_parse(&u, p, url, &err) == APR_SUCCESS,
                  "parse %s: %s", url, err);
    ck_assert_msg(rsp_store_create(&st, p, u, timeout, &err) == APR_SUCCESS,
                  "create %s: %s", url, err);
    ck_assert_int_eq(rsp_store_child_init(st, p, max_conns), APR_SUCCESS);
    return st;
}

outcome_t timed_claim_in(apr_pool_t *p, rsp_store_t *st, const char *key)
{
    outcome_t o = {APR_SUCCESS, -1, NULL, 0};
    apr_time_t t0 = apr_time_now();

    o.rv = rsp_store_claim(st, p, key, "v", TTL, &o.won, &o.err);
    o.ms = ms_since(t0);
    return o;
}

void assert_timed_out(const char *what, outcome_t o)
{
    ck_assert_msg(o.rv != APR_SUCCESS,
                  "%s: claim succeeded on a stopped server", what);
    ck_assert_msg(o.won != 1, "%s: won=1", what);
    ck_assert_msg(o.err && *o.err, "%s: no error text", what);
    ck_assert_msg(o.ms < HUNG_BOUND_MS,
                  "%s: took %lld ms (timeout %lld ms, bound %lld ms)", what,
                  o.ms, (long long)apr_time_as_msec(T_SHORT), HUNG_BOUND_MS);
}

void assert_failed(outcome_t o, const char *want)
{
    ck_assert_int_ne(o.rv, APR_SUCCESS);
    ck_assert_int_ne(o.won, 1);
    ck_assert_msg(contains(o.err, want), "err: %s (want %s)", ERR_S(o.err),
                  want);
}

void assert_won(const char *what, outcome_t o)
{
    ck_assert_msg(o.rv == APR_SUCCESS, "%s: %s", what, ERR_S(o.err));
    ck_assert_msg(o.won == 1, "%s: won=%d", what, o.won);
}

static void *APR_THREAD_FUNC worker(apr_thread_t *t, void *data)
{
    worker_t *w = data;
    int j;

    apr_thread_mutex_lock(w->gate);
    apr_thread_mutex_unlock(w->gate);
    for (j = 0; j < w->nkeys; j++) {
        const char *key = apr_psprintf(w->p, "%s:%d", w->prefix, j);
        const char *err = NULL;
        apr_time_t t0 = apr_time_now();
        apr_status_t rv;
        long long ms;
        int won = -1;

        rv = rsp_store_claim(w->st, w->p, key, "v", TTL, &won, &err);
        ms = ms_since(t0);
        if (ms > w->max_ms) {
            w->max_ms = ms;
        }
        if (rv != APR_SUCCESS) {
            if (w->nfail++ == 0) {
                w->first_rv = rv;
                w->first_err = err;
            }
        }
        w->won[j] = rv == APR_SUCCESS ? won : -1;
    }
    apr_thread_mutex_lock(w->lock);
    (*w->done)++;
    apr_thread_mutex_unlock(w->lock);
    return NULL;
}

/* Until n workers are done or ms have passed: whether they are. */
static int workers_done(apr_thread_mutex_t *lock, const int *done, int n,
                        int ms)
{
    long long deadline = mono_ms() + ms;
    int all = 0, i;

    for (i = 0; i < 100000 && !all; i++) {
        apr_thread_mutex_lock(lock);
        all = *done == n;
        apr_thread_mutex_unlock(lock);
        if (!all && mono_ms() >= deadline) {
            break;
        }
        if (!all) {
            sleep_ms(5);
        }
    }
    return all;
}

worker_t *run_workers(rsp_store_t *st, const char *prefix, int nkeys,
                      int shared_keys, int wait_ms, pid_t cont_pid)
{
    worker_t *w = apr_pcalloc(pool, NTHREADS * sizeof(*w));
    apr_thread_t *th[NTHREADS];
    apr_thread_mutex_t *gate, *lock;
    int done = 0, i, n = 0, all, late = 0;

    ck_assert_int_eq(
        apr_thread_mutex_create(&gate, APR_THREAD_MUTEX_DEFAULT, pool),
        APR_SUCCESS);
    ck_assert_int_eq(
        apr_thread_mutex_create(&lock, APR_THREAD_MUTEX_DEFAULT, pool),
        APR_SUCCESS);
    apr_thread_mutex_lock(gate);
    for (i = 0; i < NTHREADS; i++) {
        ck_assert_int_eq(apr_pool_create(&w[i].p, pool), APR_SUCCESS);
        w[i].st = st;
        w[i].gate = gate;
        w[i].lock = lock;
        w[i].done = &done;
        w[i].prefix =
            shared_keys ? prefix : apr_psprintf(pool, "%s:t%d", prefix, i);
        w[i].nkeys = nkeys;
        w[i].won = apr_pcalloc(pool, (apr_size_t)nkeys * sizeof(int));
        if (apr_thread_create(&th[i], NULL, worker, &w[i], pool) !=
            APR_SUCCESS) {
            break;
        }
        n++;
    }
    apr_thread_mutex_unlock(gate);

    all = workers_done(lock, &done, n, wait_ms);
    if (cont_pid > 0) {
        signal_wait(cont_pid, SIGCONT);
    }
    /* A worker still inside the library after wait_ms is a hang: reported,
     * but given up to 30 s more to finish first, since the test's pool
     * (the store's with it) must outlive the workers: a failed test goes on
     * to its teardown (CK_FORK=no) or to exit() and apr_terminate. Only a
     * worker that never ends is left running. */
    if (!all) {
        fprintf(stderr, "run_workers %s: workers still running after %d ms\n",
                prefix, wait_ms);
        late = workers_done(lock, &done, n, 30000);
    }
    for (i = 0; (all || late) && i < n; i++) {
        apr_status_t trv;
        apr_thread_join(&trv, th[i]);
    }
    ck_assert_msg(all, "workers still running after %d ms%s", wait_ms,
                  late ? " (they ended later)" : "");
    ck_assert_int_eq(n, NTHREADS);
    return w;
}

void assert_all_won(const worker_t *w)
{
    int i, j;

    for (i = 0; i < NTHREADS; i++) {
        ck_assert_msg(w[i].nfail == 0, "worker %d: %d failures, first: %s", i,
                      w[i].nfail, ERR_S(w[i].first_err));
        for (j = 0; j < w[i].nkeys; j++) {
            ck_assert_msg(w[i].won[j] == 1, "worker %d key %d: won %d", i, j,
                          w[i].won[j]);
        }
    }
}

void assert_one_winner_each(const worker_t *w, int nkeys)
{
    int i, j;

    for (i = 0; i < NTHREADS; i++) {
        ck_assert_msg(w[i].nfail == 0, "worker %d: %d failures, first: %s", i,
                      w[i].nfail, ERR_S(w[i].first_err));
    }
    for (j = 0; j < nkeys; j++) {
        int winners = 0, losers = 0;
        for (i = 0; i < NTHREADS; i++) {
            winners += w[i].won[j] == 1;
            losers += w[i].won[j] == 0;
        }
        ck_assert_msg(winners == 1 && losers == NTHREADS - 1,
                      "key %d: %d winners, %d losers", j, winners, losers);
    }
}

void assert_workers_failed(const worker_t *w, long long bound_ms)
{
    int i;

    for (i = 0; i < NTHREADS; i++) {
        ck_assert_msg(w[i].nfail == 1,
                      "worker %d: claim succeeded on a stopped server", i);
        ck_assert_int_ne(w[i].won[0], 1);
        ck_assert_msg(w[i].first_err && *w[i].first_err, "worker %d: no error",
                      i);
        ck_assert_msg(w[i].max_ms < bound_ms,
                      "worker %d: took %lld ms (bound %lld ms): %s", i,
                      w[i].max_ms, bound_ms, w[i].first_err);
    }
}

int claim_ok(rsp_store_t *st, const char *key, const char *value,
             apr_int64_t ttl_ms)
{
    const char *err = NULL;
    int won = -1;

    ck_assert_msg(rsp_store_claim(st, pool, key, value, ttl_ms, &won, &err) ==
                      APR_SUCCESS,
                  "claim %s: %s", key, ERR_S(err));
    return won;
}

void put_ok(rsp_store_t *st, const char *key, const char *value, apr_size_t len,
            apr_int64_t ttl_ms)
{
    const char *err = NULL;

    ck_assert_msg(rsp_store_put(st, pool, key, value, len, ttl_ms, &err) ==
                      APR_SUCCESS,
                  "put %s: %s", key, ERR_S(err));
}

const char *get_ok(rsp_store_t *st, const char *key, apr_size_t *len)
{
    const char *err = NULL, *value = NULL;

    ck_assert_msg(rsp_store_get(st, pool, key, &value, len, &err) ==
                      APR_SUCCESS,
                  "get %s: %s", key, ERR_S(err));
    return value;
}

int del_ok(rsp_store_t *st, const char *key, const char *value)
{
    const char *err = NULL;
    int deleted = -1;

    ck_assert_msg(rsp_store_del_if_equal(st, pool, key, value, &deleted,
                                         &err) == APR_SUCCESS,
                  "del_if_equal %s: %s", key, ERR_S(err));
    return deleted;
}

void check_get_absent(rsp_store_t *st)
{
    apr_size_t len = 99;

    ck_assert_ptr_null(get_ok(st, "g:absent", &len));
    ck_assert_uint_eq(len, 0);
}

void check_round_trip(rsp_store_t *st, const char *key, const char *value,
                      apr_size_t len)
{
    apr_size_t got_len = len + 1;
    const char *got;

    put_ok(st, key, value, len, TTL);
    got = get_ok(st, key, &got_len);
    ck_assert_msg(got != NULL, "get %s: absent", key);
    ck_assert_uint_eq(got_len, len);
    ck_assert_int_eq(memcmp(got, value, len), 0);
}

char *test_bytes(apr_size_t len)
{
    char *v = apr_palloc(pool, len + 1);
    apr_size_t i;

    for (i = 0; i < len; i++) {
        v[i] = (char)((i * 7919u) >> 3);
    }
    v[len] = '\0';
    return v;
}

void check_not_initialised(const char *url, const char *name)
{
    rsp_store_url_t *u = NULL;
    rsp_store_t *st = NULL;
    const char *err = NULL;
    int won = -1;

    ck_assert_int_eq(rsp_store_url_parse(&u, pool, url, &err), APR_SUCCESS);
    ck_assert_int_eq(rsp_store_create(&st, pool, u, T_NORMAL, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(st->ops->name, name);
    ck_assert_int_ne(rsp_store_claim(st, pool, "n:k", "v", TTL, &won, &err),
                     APR_SUCCESS);
    ck_assert_int_ne(won, 1);
    ck_assert_msg(contains(err, "not initialised"), "err: %s", ERR_S(err));
}

/* One request: the bytes that arrive within 3 s, and then until the client
 * pauses for 20 ms (a request may come in several writes). */
static int fake_read_request(fake_server_t *fs, int cfd)
{
    struct pollfd pfd;
    int wait = 3000, n = 0;

    pfd.fd = cfd;
    pfd.events = POLLIN;
    while (poll(&pfd, 1, wait) == 1) {
        char *at = fs->got + fs->got_len;
        size_t room = sizeof(fs->got) - 1 - fs->got_len;
        char scratch[4096];
        ssize_t r =
            recv(cfd, room ? at : scratch, room ? room : sizeof(scratch), 0);

        if (r <= 0) {
            break;
        }
        if (room) {
            fs->got_len += (size_t)r;
            fs->got[fs->got_len] = '\0';
        }
        n += (int)r;
        wait = 20;
    }
    return n;
}

static void *APR_THREAD_FUNC fake_server(apr_thread_t *t, void *data)
{
    fake_server_t *fs = data;
    struct pollfd pfd;
    size_t i, k;
    int cfd, ok = 1;

    pfd.fd = fs->lfd;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, 3000) != 1 || (cfd = accept(fs->lfd, NULL, NULL)) < 0) {
        return NULL;
    }
    for (k = 0; ok && fs->replies[k]; k++) {
        const char *reply = fs->replies[k];

        if (fake_read_request(fs, cfd) <= 0) {
            break;
        }
        if (fs->gap_ms == 0) {
            size_t len = strlen(reply);
            ok = send(cfd, reply, len, MSG_NOSIGNAL) == (ssize_t)len;
            fs->sent += ok ? (int)len : 0;
            continue;
        }
        for (i = 0; ok && reply[i]; i++) {
            sleep_ms(fs->gap_ms);
            ok = send(cfd, reply + i, 1, MSG_NOSIGNAL) == 1;
            fs->sent += ok;
        }
    }
    if (!fs->close_after) {
        pfd.fd = cfd;
        poll(&pfd, 1, 2000); /* until the client closes */
    }
    close(cfd);
    return NULL;
}

const char **fake_replies(const char *first, ...)
{
    const char **r = apr_pcalloc(pool, 9 * sizeof(*r));
    const char *next = first;
    va_list ap;
    int i;

    va_start(ap, first);
    for (i = 0; i < 8 && next; i++) {
        r[i] = next;
        next = va_arg(ap, const char *);
    }
    va_end(ap);
    return r;
}

void fake_start(fake_server_t *fs, const char *const *replies, int gap_ms,
                int close_after)
{
    memset(fs, 0, sizeof(*fs));
    fs->replies = replies;
    fs->gap_ms = gap_ms;
    fs->close_after = close_after;
    fs->lfd = listener(8, &fs->port);
    ck_assert_int_eq(
        apr_thread_create(&fs->thread, NULL, fake_server, fs, pool),
        APR_SUCCESS);
}

void fake_join(fake_server_t *fs)
{
    apr_status_t trv;

    apr_thread_join(&trv, fs->thread);
}

void check_trickled_claim(fake_server_t *fs, const char *url_prefix,
                          const char *reply, int gap_ms)
{
    const char **replies = apr_pcalloc(pool, 2 * sizeof(*replies));
    rsp_store_t *st;
    outcome_t o;

    replies[0] = reply;
    fake_start(fs, replies, gap_ms, 0);
    st = store_open(apr_psprintf(pool, "%s%d", url_prefix, fs->port), T_SHORT,
                    1);
    o = timed_claim(st, "slow:k");
    fake_join(fs);
    ck_assert_msg(o.ms < HUNG_BOUND_MS,
                  "a reply trickled 1 byte / %d ms held the claim %lld ms "
                  "(timeout %lld ms; rv %d, won %d, %d bytes sent): the "
                  "timeout bounds each read(), not the command",
                  gap_ms, o.ms, (long long)apr_time_as_msec(T_SHORT), o.rv,
                  o.won, fs->sent);
    ck_assert_int_ne(o.rv, APR_SUCCESS);
    ck_assert_int_ne(o.won, 1);
}

int run_with_servers(Suite *(*suite)(void), char *dir, int (*start)(void),
                     void (*stop)(void))
{
    int rc = 99;

    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return rc;
    }
    if (start() == 0) {
        rc = rsp_unit_run(suite());
    }
    else {
        fprintf(stderr, "the servers did not start; see %s\n", dir);
    }
    stop();
    if (rc == 0) {
        remove_dir(dir);
    }
    else {
        fprintf(stderr, "server logs kept in %s\n", dir);
    }
    return rc;
}

TCase *store_tcase(const char *name, void (*setup)(void),
                   void (*teardown)(void), void (*restore)(void))
{
    TCase *tc = tcase_create(name);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_unchecked_fixture(tc, NULL, restore);
    tcase_set_timeout(tc, 60);
    return tc;
}

/* ---- append (the logout index) ---- */

typedef struct {
    rsp_store_t *st;
    apr_pool_t *p;
    int id;
    int failed;
} appender_t;

#define APPENDERS 4
#define APPENDS 20

static void *APR_THREAD_FUNC appender(apr_thread_t *t, void *data)
{
    appender_t *a = data;
    const char *err = NULL;
    int i;

    for (i = 0; i < APPENDS; i++) {
        if (rsp_store_append(a->st, a->p, "x:race",
                             apr_psprintf(a->p, "t%di%d", a->id, i), 60000,
                             &err) != APR_SUCCESS) {
            a->failed++;
        }
    }
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

void check_append(rsp_store_t *st)
{
    appender_t a[APPENDERS];
    apr_thread_t *th[APPENDERS];
    const char *err = NULL, *v, *c;
    apr_size_t len;
    int i, n = 0, items = 0;

    /* Absent: created; then appended to, in order, space-separated. */
    ck_assert_int_eq(rsp_store_append(st, pool, "x:idx", "a", 60000, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "x:idx", &len), " a");
    ck_assert_int_eq(rsp_store_append(st, pool, "x:idx", "bb", 60000, &err),
                     APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "x:idx", &len), " a bb");
    /* A non-positive TTL is refused and changes nothing. */
    err = NULL;
    ck_assert_int_ne(rsp_store_append(st, pool, "x:idx", "c", 0, &err),
                     APR_SUCCESS);
    ck_assert_msg(err && *err, "no error text");
    ck_assert_str_eq(get_ok(st, "x:idx", &len), " a bb");

    /* Concurrent appends to one key (absent at first) all land. */
    for (i = 0; i < APPENDERS; i++) {
        a[i].st = st;
        a[i].id = i;
        a[i].failed = 0;
        ck_assert_int_eq(apr_pool_create(&a[i].p, pool), APR_SUCCESS);
        if (apr_thread_create(&th[i], NULL, appender, &a[i], pool)
            != APR_SUCCESS) {
            break;
        }
        n++;
    }
    for (i = 0; i < n; i++) {
        apr_status_t trv;
        apr_thread_join(&trv, th[i]);
        ck_assert_int_eq(a[i].failed, 0);
    }
    ck_assert_int_eq(n, APPENDERS);
    v = get_ok(st, "x:race", &len);
    ck_assert_ptr_nonnull(v);
    for (c = v; *c; c++) {
        items += *c == ' ';
    }
    ck_assert_int_eq(items, APPENDERS * APPENDS);
    for (i = 0; i < APPENDERS; i++) {
        ck_assert_msg(contains(v, apr_psprintf(pool, " t%di%d", i, APPENDS - 1)),
                      "thread %d's last item missing", i);
    }
}

void check_claim_read(rsp_store_t *st)
{
    rsp_claim_read_t c;
    const char *err = NULL;
    apr_size_t len;

    /* Won: no holder. */
    memset(&c, 0, sizeof(c));
    c.key = "cr:k";
    c.value = "mine";
    c.ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 1);
    ck_assert_ptr_null(c.holder);
    ck_assert_str_eq(get_ok(st, "cr:k", &len), "mine");
    /* Lost: the holder's record, never overwritten. */
    memset(&c, 0, sizeof(c));
    c.key = "cr:k";
    c.value = "theirs";
    c.ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 0);
    ck_assert_str_eq(c.holder, "mine");
    ck_assert_str_eq(get_ok(st, "cr:k", &len), "mine");
    /* Another key: won. */
    memset(&c, 0, sizeof(c));
    c.key = "cr:k2";
    c.value = "v";
    c.ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 1);
    /* A non-positive TTL is refused and claims nothing. */
    memset(&c, 0, sizeof(c));
    c.key = "cr:k3";
    c.value = "v";
    c.ttl_ms = 0;
    err = NULL;
    ck_assert_int_ne(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_msg(err && *err, "no error text");
    ck_assert_ptr_null(get_ok(st, "cr:k3", &len));
}

void check_write_many(rsp_store_t *st)
{
    rsp_write_t w[3];
    const char *err = NULL;
    apr_size_t len;

    memset(w, 0, sizeof(w));
    w[0].kind = RSP_WRITE_APPEND;
    w[0].key = "wm:idx";
    w[0].value = "a";
    w[0].ttl_ms = 60000;
    w[1] = w[0];
    w[1].value = "bb";
    w[2].kind = RSP_WRITE_PUT;
    w[2].key = "wm:s";
    w[2].value = "session\0bytes";
    w[2].len = 13;
    w[2].ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_write_many(st, pool, w, 3, &err), APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "wm:idx", &len), " a bb");
    ck_assert_str_eq(get_ok(st, "wm:s", &len), "session");
    ck_assert_uint_eq(len, 13);
    /* Again: appended to, put replaced. */
    w[2].value = "other";
    w[2].len = 5;
    ck_assert_int_eq(rsp_store_write_many(st, pool, w, 3, &err), APR_SUCCESS);
    ck_assert_str_eq(get_ok(st, "wm:idx", &len), " a bb a bb");
    ck_assert_str_eq(get_ok(st, "wm:s", &len), "other");
    /* A non-positive TTL anywhere: refused. */
    w[1].ttl_ms = 0;
    err = NULL;
    ck_assert_int_ne(rsp_store_write_many(st, pool, w, 3, &err), APR_SUCCESS);
    ck_assert_msg(err && *err, "no error text");
}

typedef struct {
    rsp_store_t *st;
    apr_pool_t *p;
    int id;
    int replaced;
    apr_status_t rv;
} replacer_t;

static void *APR_THREAD_FUNC replacer(apr_thread_t *t, void *data)
{
    replacer_t *a = data;
    const char *err = NULL;

    a->rv = rsp_store_replace(a->st, a->p, "rp:race", "open", NULL,
                              apr_psprintf(a->p, "taken-by-%d", a->id),
                              &a->replaced, &err);
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

#define REPLACERS 6

void check_replace(rsp_store_t *st)
{
    rsp_claim_read_t c;
    rsp_write_t w;
    replacer_t a[REPLACERS];
    apr_thread_t *th[REPLACERS];
    const char *err = NULL;
    apr_int64_t ttl = 0;
    apr_size_t len;
    int replaced = -1, i, n = 0, winners = 0;

    /* Compare-and-set by value; the expiry is kept. */
    put_ok(st, "rp:k", "old", 3, 60000);
    ck_assert_int_eq(rsp_store_replace(st, pool, "rp:k", "old", NULL, "new",
                                       &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 1);
    ck_assert_str_eq(get_ok(st, "rp:k", &len), "new");
    ck_assert_int_eq(rsp_store_ttl(st, pool, "rp:k", &ttl, &err), APR_SUCCESS);
    ck_assert_msg(ttl > 50000 && ttl <= 62000, "expiry not kept: %lld",
                  (long long)ttl);
    ck_assert_int_eq(rsp_store_replace(st, pool, "rp:k", "old", NULL, "newer",
                                       &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    ck_assert_str_eq(get_ok(st, "rp:k", &len), "new");
    ck_assert_int_eq(rsp_store_replace(st, pool, "rp:absent", "old", NULL, "x",
                                       &replaced, &err), APR_SUCCESS);
    ck_assert_int_eq(replaced, 0);
    ck_assert_ptr_null(get_ok(st, "rp:absent", &len));

    /* The version read with a claim, in a batch: once, not twice. */
    memset(&c, 0, sizeof(c));
    c.key = "rp:claim";
    c.value = "open";
    c.ttl_ms = 60000;
    ck_assert_int_eq(rsp_store_claim_read(st, pool, &c, &err), APR_SUCCESS);
    ck_assert_int_eq(c.won, 1);
    memset(&w, 0, sizeof(w));
    w.kind = RSP_WRITE_REPLACE;
    w.key = "rp:claim";
    w.expect = "open";
    w.token = c.token;
    w.value = "done";
    ck_assert_int_eq(rsp_store_write_many(st, pool, &w, 1, &err), APR_SUCCESS);
    ck_assert_int_eq(w.replaced, 1);
    ck_assert_str_eq(get_ok(st, "rp:claim", &len), "done");
    w.value = "again";
    ck_assert_int_eq(rsp_store_write_many(st, pool, &w, 1, &err), APR_SUCCESS);
    ck_assert_int_eq(w.replaced, 0);
    ck_assert_str_eq(get_ok(st, "rp:claim", &len), "done");

    /* Concurrent replacements of one version: exactly one lands. */
    put_ok(st, "rp:race", "open", 4, 60000);
    for (i = 0; i < REPLACERS; i++) {
        a[i].st = st;
        a[i].id = i;
        a[i].replaced = 0;
        a[i].rv = APR_EGENERAL;
        ck_assert_int_eq(apr_pool_create(&a[i].p, pool), APR_SUCCESS);
        if (apr_thread_create(&th[i], NULL, replacer, &a[i], pool) != APR_SUCCESS) {
            break;
        }
        n++;
    }
    for (i = 0; i < n; i++) {
        apr_status_t trv;
        apr_thread_join(&trv, th[i]);
        ck_assert_int_eq(a[i].rv, APR_SUCCESS);
        winners += a[i].replaced;
    }
    ck_assert_int_eq(n, REPLACERS);
    ck_assert_int_eq(winners, 1);
    ck_assert_msg(strncmp(get_ok(st, "rp:race", &len), "taken-by-", 9) == 0,
                  "no replacement landed");
}
