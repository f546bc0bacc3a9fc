/* The memcached backend's reply readers (rsp_memcache_conn.c): what a
 * memcached server, or anything at its address, sends back.
 *
 * Input: the first byte chooses the store operation (claim, get, claim
 * with its reads, a batch of writes, replace, compare-and-delete, ttl,
 * stats, append); the rest is the server's whole answer. A listener on
 * 127.0.0.1 (made once) accepts the store's connection in a thread of its
 * own, sends the answer at once, closes its side and drains what the store
 * wrote. The store is made anew for each input (one connection), so every
 * input meets a fresh connection and nothing waits past the end of the
 * answer. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <apr_strings.h>

#include "fuzz_common.h"
#include "rsp_store.h"
#include "rsp_url.h"

static int lfd = -1;
static int port;

typedef struct {
    const uint8_t *data;
    size_t size;
} answer_t;

static int wait_fd(int fd, short ev, int ms)
{
    struct pollfd p = {fd, ev, 0};

    return poll(&p, 1, ms) == 1;
}

static void *serve_one(void *arg)
{
    const answer_t *a = arg;
    char sink[4096];
    size_t off = 0;
    int fd, i;

    if (!wait_fd(lfd, POLLIN, 2000) || (fd = accept(lfd, NULL, NULL)) < 0) {
        return NULL;
    }
    while (off < a->size) {
        ssize_t n = send(fd, a->data + off, a->size - off, MSG_NOSIGNAL);
        if (n <= 0) {
            break;
        }
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    for (i = 0; i < 200 && wait_fd(fd, POLLIN, 10); i++) {
        if (read(fd, sink, sizeof(sink)) <= 0) {
            break;
        }
    }
    close(fd);
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);

    fuzz_init();
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0
        || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || listen(lfd, 16) != 0
        || getsockname(lfd, (struct sockaddr *)&sa, &len) != 0) {
        perror("fuzz_memcache: listener");
        abort();
    }
    port = ntohs(sa.sin_port);
    return 0;
}

/* An error always says why. */
static void check(apr_status_t rv, const char *err)
{
    FUZZ_ASSERT(rv == APR_SUCCESS || (err && *err));
}

static void run(rsp_store_t *st, apr_pool_t *p, int op)
{
    const char *err = NULL, *v = NULL;
    apr_size_t len = 0;
    apr_int64_t ttl = 0;
    int won = -1, done = -1;
    apr_status_t rv;

    switch (op) {
    case 0:
        rv = rsp_store_claim(st, p, "rsp:a:k", "v", 60000, &won, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || won == 0 || won == 1);
        break;
    case 1:
        rv = rsp_store_get(st, p, "rsp:s:k", &v, &len, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || !v || len <= 1024 * 1024);
        break;
    case 2: {
        rsp_claim_read_t c;
        memset(&c, 0, sizeof(c));
        c.key = "rsp:a:k";
        c.value = "o=1";
        c.ttl_ms = 60000;
        rv = rsp_store_claim_read(st, p, &c, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || c.won == 0 || c.won == 1);
        FUZZ_ASSERT(rv != APR_SUCCESS || !c.won || !c.holder);
        break;
    }
    case 3: {
        rsp_write_t w[3];
        memset(w, 0, sizeof(w));
        w[0].kind = RSP_WRITE_APPEND;
        w[0].key = "rsp:n:k";
        w[0].value = "h";
        w[0].ttl_ms = 60000;
        w[1].kind = RSP_WRITE_PUT;
        w[1].key = "rsp:s:k";
        w[1].value = "session";
        w[1].len = 7;
        w[1].ttl_ms = 60000;
        w[2].kind = RSP_WRITE_REPLACE;
        w[2].key = "rsp:a:k";
        w[2].expect = "o=1";
        w[2].token = "42";
        w[2].value = "o=0";
        rv = rsp_store_write_many(st, p, w, 3, &err);
        break;
    }
    case 4:
        rv = rsp_store_replace(st, p, "rsp:a:k", "o=1", "42", "o=0", &done, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || done == 0 || done == 1);
        break;
    case 5:
        rv = rsp_store_del_if_equal(st, p, "rsp:s:k", "session", &done, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || done == 0 || done == 1);
        break;
    case 6:
        rv = rsp_store_ttl(st, p, "rsp:a:k", &ttl, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || ttl >= -2);
        break;
    case 7:
        rv = rsp_store_info(st, p, NULL, &v, &err);
        FUZZ_ASSERT(rv != APR_SUCCESS || v);
        break;
    default:
        rv = rsp_store_append(st, p, "rsp:n:k", "h", 60000, &err);
        break;
    }
    check(rv, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    rsp_store_url_t *u = NULL;
    rsp_store_t *st = NULL;
    const char *err = NULL;
    answer_t a;
    pthread_t t;

    if (size == 0) {
        return 0;
    }
    a.data = data + 1;
    a.size = size - 1;
    p = fuzz_pool_begin();
    FUZZ_ASSERT(rsp_store_url_parse(&u, p, apr_psprintf(
        p, "memcache://127.0.0.1:%d", port), &err) == APR_SUCCESS);
    FUZZ_ASSERT(rsp_store_create(&st, p, u, apr_time_from_msec(500), &err)
                == APR_SUCCESS);
    FUZZ_ASSERT(rsp_store_child_init(st, p, 1) == APR_SUCCESS);
    FUZZ_ASSERT(pthread_create(&t, NULL, serve_one, &a) == 0);
    run(st, p, data[0] % 9);
    fuzz_pool_end(p);   /* closes the store's connection */
    pthread_join(t, NULL);
    return 0;
}
