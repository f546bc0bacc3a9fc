/* Logging seam: the library never includes httpd headers; it reports
 * through a callback that the glue maps to ap_log_error. Levels use the
 * syslog numbering that httpd's APLOG_* levels share. */
#ifndef RSP_LOG_H
#define RSP_LOG_H

#include <apr_errno.h>

#define RSP_LOG_EMERG   0
#define RSP_LOG_ALERT   1
#define RSP_LOG_CRIT    2
#define RSP_LOG_ERR     3
#define RSP_LOG_WARNING 4
#define RSP_LOG_NOTICE  5
#define RSP_LOG_INFO    6
#define RSP_LOG_DEBUG   7

typedef void rsp_log_fn(void *baton, int level, const char *msg);

/* Process-wide sink, set once by the glue before threads start. */
void rsp_log_set_sink(rsp_log_fn *fn, void *baton);

void rsp_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
