/* What the store suites share: the servers they start and stop by PID,
 * fake servers of their own, clocks, and the claim helpers (timed claims,
 * concurrent workers) their bounded-time and pool tests are built on. */
#ifndef RSP_UNIT_SERVER_H
#define RSP_UNIT_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include <apr_pools.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include "rsp_store.h"
#include "rsp_unit.h"

/* ------------------------------------------------------------------ */
/* Processes and sockets (plain POSIX: usable before apr_initialize)    */

void sleep_ms(int ms);
long long mono_ms(void);

/* A loopback TCP socket bound to port 0 (not listening); *port gets the
 * port. -1 on failure. */
int bound_socket(int *port);

/* Start argv[0] (argv NULL-terminated) with stdin from /dev/null, stdout
 * and stderr appended to log, and SIGTERM should this thread die (Linux).
 * Waits up to 10 s until ready(arg) is true. The PID, or -1 with the reason
 * on stderr (then it is stopped). Call it from the thread that will stop it;
 * a server that changes its user loses that SIGTERM (Linux clears it). */
pid_t spawn_server(const char *const argv[], const char *log,
                   int (*ready)(void *), void *arg);

/* Stop *pid: SIGCONT, SIGTERM, up to 5 s, then SIGKILL; reaped when it is
 * a child of this process, else waited for until it is a zombie or gone.
 * *pid = -1 after. */
void stop_server(pid_t *pid, const char *name);

/* The state letter from /proc/PID/stat ('T' stopped, 'Z' zombie, '?' no
 * such process). */
char proc_state(pid_t pid);

/* Send sig (SIGSTOP or SIGCONT) and wait up to 2 s until the process is
 * stopped / running. 0 on success. */
int signal_wait(pid_t pid, int sig);

/* Remove dir and the files directly in it. */
void remove_dir(const char *dir);

/* ------------------------------------------------------------------ */
/* Test helpers (Check; the current test's pool)                        */

#define TTL 60000 /* ms */
/* Store timeouts: generous for the working cases, short for the hung ones. */
#define T_NORMAL apr_time_from_sec(2)
#define T_SHORT apr_time_from_msec(300)
/* What a bounded operation may take beyond its timeout. */
#define SLACK apr_time_from_msec(500)
#define HUNG_BOUND_MS ((long long)apr_time_as_msec(T_SHORT + SLACK))

#define ERR_S(e) ((e) ? (e) : "(null)")

long long ms_since(apr_time_t t0);
int contains(const char *s, const char *needle);

/* Close fd with the test's pool. */
void pool_fd(int fd);
/* A port where nothing listens (bound, never listened on: refused). */
int dead_port(void);
/* A listening loopback socket closed with the test's pool. */
int listener(int backlog, int *port);
/* A port whose accept queue is full: a connect to it hangs (the SYN is
 * dropped). */
int full_backlog_port(void);

/* Parse url, create the store and run its child_init, in p. */
rsp_store_t *store_in(apr_pool_t *p, const char *url,
                      apr_interval_time_t timeout, int max_conns);
#define store_open(url, to, n) store_in(pool, (url), (to), (n))

typedef struct {
    apr_status_t rv;
    int won;
    const char *err;
    long long ms;
} outcome_t;

/* One claim of key (value "v", TTL), timed; in p (a thread's own pool). */
outcome_t timed_claim_in(apr_pool_t *p, rsp_store_t *st, const char *key);
#define timed_claim(st, key) timed_claim_in(pool, (st), (key))
/* An error (with text, never won) within HUNG_BOUND_MS. */
void assert_timed_out(const char *what, outcome_t o);
void assert_won(const char *what, outcome_t o);
/* A failed claim (never won) whose error says want. */
void assert_failed(outcome_t o, const char *want);

#define NTHREADS 8

typedef struct {
    rsp_store_t *st;
    apr_pool_t *p;
    apr_thread_mutex_t *gate; /* held by the test until all are created */
    apr_thread_mutex_t *lock; /* guards *done */
    int *done;
    const char *prefix;
    int nkeys; /* claims of prefix:0 .. prefix:nkeys-1 */
    int *won;  /* won[j] for key j; -1 when the claim failed */
    int nfail;
    apr_status_t first_rv;
    const char *first_err;
    long long max_ms;
} worker_t;

/* Run NTHREADS workers on st at once; shared_keys: all claim the same keys,
 * else each its own (prefix:tI:J). Waits up to wait_ms for them; cont_pid >
 * 0: SIGCONT it before joining (a stopped server must not keep them). */
worker_t *run_workers(rsp_store_t *st, const char *prefix, int nkeys,
                      int shared_keys, int wait_ms, pid_t cont_pid);

/* Every worker won every claim (no failures). */
void assert_all_won(const worker_t *w);
/* Workers that all claimed the same nkeys keys: one winner per key, and
 * NTHREADS - 1 losers. */
void assert_one_winner_each(const worker_t *w, int nkeys);
/* Each worker's one claim failed, with an error text, within bound_ms. */
void assert_workers_failed(const worker_t *w, long long bound_ms);

/* Operations that must succeed (else the test fails, with the store's
 * error): claim and del_if_equal return won / deleted, get the value
 * (NULL: absent). */
int claim_ok(rsp_store_t *st, const char *key, const char *value,
             apr_int64_t ttl_ms);
void put_ok(rsp_store_t *st, const char *key, const char *value, apr_size_t len,
            apr_int64_t ttl_ms);
const char *get_ok(rsp_store_t *st, const char *key, apr_size_t *len);
int del_ok(rsp_store_t *st, const char *key, const char *value);

/* Checks through the store interface alone, the same for every backend. */
void check_get_absent(rsp_store_t *st);

/* append: creates, appends in order, refuses a non-positive TTL, and
 * concurrent appends to one key all land (keys x:idx, x:race). */
void check_append(rsp_store_t *st);
/* rsp_store_claim_read: won, lost (the holder's record), the other key. */
void check_claim_read(rsp_store_t *st);
/* rsp_store_write_many: appends and a put, in one call. */
void check_write_many(rsp_store_t *st);
/* rsp_store_replace: by value, by the version read with a claim, and
 * concurrently (exactly one lands). */
void check_replace(rsp_store_t *st);
/* put key (TTL), then get: the same bytes. */
void check_round_trip(rsp_store_t *st, const char *key, const char *value,
                      apr_size_t len);
/* len bytes of a pattern that takes every byte value, in the test's pool. */
char *test_bytes(apr_size_t len);
/* Created from url, never child_init'ed: backend name, and a claim fails
 * ("not initialised"). */
void check_not_initialised(const char *url, const char *name);

/* A fake server in a thread, on a fresh loopback port: accepts one
 * connection; for each request (the bytes that arrive until the client
 * pauses), sends the next reply, gap_ms before each byte (0: at once);
 * then closes (close_after) or waits (up to 2 s) until the client closes. */
typedef struct {
    const char *const *replies; /* NULL-terminated */
    int gap_ms;
    int close_after;
    int port;
    int lfd;
    apr_thread_t *thread;
    int sent;       /* out: reply bytes sent */
    char got[4096]; /* out: what the client sent, NUL-terminated */
    size_t got_len;
} fake_server_t;

/* The replies a fake server sends, in the test's pool: the arguments up
 * to the first NULL (at most 8). */
const char **fake_replies(const char *first, ...);
void fake_start(fake_server_t *fs, const char *const *replies, int gap_ms,
                int close_after);
void fake_join(fake_server_t *fs);

/* A claim (timeout T_SHORT) against a fake server at url_prefix + its port
 * that sends reply one byte every gap_ms: over within HUNG_BOUND_MS, an
 * error. */
void check_trickled_claim(fake_server_t *fs, const char *url_prefix,
                          const char *reply, int gap_ms);

/* main() of a store suite: SIGPIPE ignored (as in httpd: a write to a
 * closed connection is an error, not a signal); dir, a mkdtemp template,
 * made for the servers' files; start() them, run suite(), stop() them; dir
 * removed when all passed, else kept for the logs. The exit status, 99 (a
 * hard error for the automake test driver) when the servers did not
 * start. */
int run_with_servers(Suite *(*suite)(void), char *dir, int (*start)(void),
                     void (*stop)(void));

/* A test case with these fixtures (restore: unchecked teardown, in the
 * parent) and a 60 s timeout. */
TCase *store_tcase(const char *name, void (*setup)(void),
                   void (*teardown)(void), void (*restore)(void));

#endif
