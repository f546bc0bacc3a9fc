/* How much memory the store needs: the sizing rule of the operations
 * guide, with the planning figures it gives per record (measured on
 * Redis 7.0 with the default key prefix and short entity IDs, rounded up).
 * One place for the arithmetic, so that the guide, the replay-sp tool and
 * their tests agree. */
#ifndef RSP_CAPACITY_H
#define RSP_CAPACITY_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Planning figures, bytes of Redis used_memory per record. */
#define RSP_BYTES_CLAIM 400         /* a: (measured 184 B MEMORY USAGE) */
#define RSP_BYTES_SESSION 600       /* s: (measured 360 B) */
#define RSP_BYTES_INDEX 250         /* n: with one session (measured 152 B;
                                     * 245 B of used_memory) */
#define RSP_BYTES_PENDING 500       /* q: plus its return URL (measured 296 B) */
#define RSP_BYTES_USE 200           /* u: (measured 136 B) */
/* memcached's slab allocator works in pages per size class. */
#define RSP_MEMCACHED_FACTOR 2

typedef struct {
    double rate;                  /* peak sign-ins per second */
    apr_int64_t window_s;         /* longest assertion window */
    apr_int64_t skew_s;           /* ReplaySPClockSkew */
    apr_int64_t session_s;        /* ReplaySPSessionLifetime */
    apr_int64_t sessions;         /* signed-in users at once; <0: rate x
                                   * session_s (every sign-in of a lifetime) */
    int sp_initiated;             /* sign-ins start with an AuthnRequest */
    apr_int64_t request_s;        /* ReplaySPRequestLifetime */
    int memcached;                /* size for memcached (x RSP_MEMCACHED_FACTOR) */
} rsp_capacity_in_t;

/* One line of the computation. */
typedef struct {
    const char *what;             /* "claims", "sessions", ... */
    double count;                 /* records held at once */
    apr_int64_t bytes_each;
    double bytes;                 /* count x bytes_each */
    const char *why;              /* how count was found, in words */
} rsp_capacity_line_t;

/* The lines (rsp_capacity_line_t) and, in *total, the bytes to plan for
 * (memcached: already multiplied). */
apr_array_header_t *rsp_capacity(apr_pool_t *p, const rsp_capacity_in_t *in,
                                 double *total);

#endif
