#include <stdarg.h>
#include <stdio.h>

#include "rsp_log.h"

/* Per-process by design: set once in post_config, before any thread. */
static rsp_log_fn *sink_fn;
static void *sink_baton;

void rsp_log_set_sink(rsp_log_fn *fn, void *baton)
{
    sink_fn = fn;
    sink_baton = baton;
}

void rsp_log(int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (!sink_fn) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    sink_fn(sink_baton, level, buf);
}
