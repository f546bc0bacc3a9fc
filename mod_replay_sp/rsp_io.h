/* Socket waiting with deadlines, shared by the store backends. */
#ifndef RSP_IO_H
#define RSP_IO_H

#include <apr_pools.h>
#include <apr_time.h>

/* Wait until fd is ready for events (POLLIN/POLLOUT) or the deadline
 * passes: 0 when ready, APR_TIMEUP, or an errno value. */
int rsp_io_wait(int fd, short events, apr_time_t deadline);

/* An idle request/response connection has nothing to read unless the
 * peer closed it (or it is out of step): true then. */
int rsp_io_idle_closed(int fd);

/* A non-blocking TCP connection to host:port within the deadline (name
 * resolution included, as far as the resolver allows). On failure returns
 * non-zero and *err says why. */
apr_status_t rsp_io_connect(int *fd, apr_pool_t *p, const char *host,
                            int port, apr_time_t deadline, const char **err);

#endif
