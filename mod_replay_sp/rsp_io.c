#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <apr_strings.h>

#include "rsp_io.h"

int rsp_io_wait(int fd, short events, apr_time_t deadline)
{
    struct pollfd pfd;
    int n;

    for (;;) {
        apr_interval_time_t left = deadline - apr_time_now();
        if (left <= 0) {
            return APR_TIMEUP;
        }
        pfd.fd = fd;
        pfd.events = events;
        pfd.revents = 0;
        n = poll(&pfd, 1, (int)((left + 999) / 1000));
        if (n > 0) {
            return 0;
        }
        if (n < 0 && errno != EINTR) {
            return errno;
        }
    }
}

int rsp_io_idle_closed(int fd)
{
    struct pollfd pfd;

    pfd.fd = fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, 0) != 0;
}

static apr_status_t try_connect(int *out, const struct addrinfo *ai,
                                apr_time_t deadline, int *why)
{
    int fd, rc, soerr = 0, one = 1;
    socklen_t len = sizeof(soerr);

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *why = errno;
        return APR_EGENERAL;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        *why = errno;
        close(fd);
        return APR_EGENERAL;
    }
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && errno != EINPROGRESS) {
        *why = errno;
        close(fd);
        return APR_EGENERAL;
    }
    if (rc < 0) {
        if ((rc = rsp_io_wait(fd, POLLOUT, deadline)) != 0) {
            *why = rc;
            close(fd);
            return APR_EGENERAL;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
            *why = soerr ? soerr : errno;
            close(fd);
            return APR_EGENERAL;
        }
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *out = fd;
    return APR_SUCCESS;
}

apr_status_t rsp_io_connect(int *fd, apr_pool_t *p, const char *host,
                            int port, apr_time_t deadline, const char **err)
{
    struct addrinfo hints, *res = NULL, *ai;
    char service[16];
    int rc, why = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        *err = apr_psprintf(p, "cannot resolve %s: %s", host, gai_strerror(rc));
        return APR_EGENERAL;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        if (try_connect(fd, ai, deadline, &why) == APR_SUCCESS) {
            freeaddrinfo(res);
            return APR_SUCCESS;
        }
        if (why == APR_TIMEUP) {
            break;
        }
    }
    freeaddrinfo(res);
    *err = why == APR_TIMEUP
        ? apr_psprintf(p, "connect to %s:%d: timed out", host, port)
        : apr_psprintf(p, "connect to %s:%d: %s", host, port, strerror(why));
    return APR_EGENERAL;
}
