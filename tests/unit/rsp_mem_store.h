/* An in-memory store for unit tests: rsp_store_ops_t over APR hashes, one
 * per simulated server, with a clock the test sets, a version counter
 * (memcached's CAS: bumped on every write, given back as a decimal
 * string), per-operation call counters and fault injection.
 *
 * Keys live on the server their hash picks (rsp_store_home); a claim or a
 * write with a home_key lives on home_key's server instead, as with
 * several memcached servers. Every operation other than servers and home
 * is one call (one round trip): write_many counts once however many writes
 * it carries. Values are copied into the store's pool; what a call hands
 * back is allocated from the caller's pool. */
#ifndef RSP_MEM_STORE_H
#define RSP_MEM_STORE_H

#include <apr_pools.h>

#include "rsp_store.h"

typedef enum {
    RSP_MEM_OP_CLAIM = 0,
    RSP_MEM_OP_GET,
    RSP_MEM_OP_PUT,
    RSP_MEM_OP_DEL_IF_EQUAL,
    RSP_MEM_OP_APPEND,
    RSP_MEM_OP_TTL,
    RSP_MEM_OP_CLAIM_READ,
    RSP_MEM_OP_WRITE_MANY,
    RSP_MEM_OP_REPLACE,
    RSP_MEM_OP_GET_AT,
    RSP_MEM_OP_DEL_IF_EQUAL_AT,
    RSP_MEM_OP_INFO,
    RSP_MEM_OP_COUNT,          /* how many kinds; as an argument: all */
    RSP_MEM_OP_ALL = RSP_MEM_OP_COUNT
} rsp_mem_op_t;

typedef enum {
    /* The call does nothing and fails: APR_EGENERAL, err "injected". */
    RSP_MEM_FAIL = 1,
    /* The call's writes are done (all of them, for write_many), then it
     * fails as RSP_MEM_FAIL does: a write that was not acknowledged. A
     * call that writes nothing just fails. */
    RSP_MEM_WRITE_THEN_FAIL,
    /* claim, claim_read, replace and write_many: when the call writes,
     * the write is done and the call returns RSP_STORE_UNACKED (err
     * "injected: unacknowledged"), as Redis does when too few replicas
     * acknowledged it; when it writes nothing (a lost claim, a replace
     * that does not match) it answers normally. Other operations: as
     * RSP_MEM_WRITE_THEN_FAIL. */
    RSP_MEM_UNACKED
} rsp_mem_fault_t;

/* A store of servers (>= 1) simulated servers, kept in p, its clock at
 * RSP_MEM_EPOCH_MS, st->timeout 1 s. */
#define RSP_MEM_EPOCH_MS APR_INT64_C(1000000)
rsp_store_t *rsp_mem_store_create(apr_pool_t *p, int servers);

/* The clock, in ms, that expiries are measured against. */
void rsp_mem_store_set_clock(rsp_store_t *st, apr_int64_t now_ms);
void rsp_mem_store_advance(rsp_store_t *st, apr_int64_t ms);
apr_int64_t rsp_mem_store_clock(rsp_store_t *st);

/* The nth call from now (1: the next one), counting every operation,
 * meets fault. Up to 16 faults may be pending at a time. */
void rsp_mem_store_fault(rsp_store_t *st, int nth, rsp_mem_fault_t fault);
/* How many faults are still pending (not yet met). */
int rsp_mem_store_faults_pending(rsp_store_t *st);

/* Calls made to op (RSP_MEM_OP_ALL: to any) since creation or the last
 * reset; failed calls count too. */
int rsp_mem_store_calls(rsp_store_t *st, rsp_mem_op_t op);
void rsp_mem_store_reset_calls(rsp_store_t *st);

/* For assertions, without counting as a call nor meeting a fault: key's
 * value on server (-1: on key's own server), NULL when absent or
 * expired; its version (0 when absent). */
const char *rsp_mem_store_peek(rsp_store_t *st, int server, const char *key);
apr_uint64_t rsp_mem_store_version(rsp_store_t *st, int server,
                                   const char *key);
/* For setting up a case, without counting as a call nor meeting a fault:
 * write value under key on server (-1: on key's own server), kept ttl_ms
 * (0: no expiry), with a new version as any write gets. */
void rsp_mem_store_poke(rsp_store_t *st, int server, const char *key,
                        const char *value, apr_int64_t ttl_ms);
/* How many live keys server holds (-1: all servers). */
int rsp_mem_store_size(rsp_store_t *st, int server);

#endif
