#include <string.h>

#include "rsp_signin.h"
#include "rsp_util.h"

void rsp_signin_claim(rsp_claim_result_t *out, apr_pool_t *p, rsp_store_t *st,
                      const char *prefix, const rsp_assertion_t *a,
                      const char *replica, const char *session_hash,
                      apr_time_t now, const char *also_key)
{
    rsp_claim_rec_t rec;
    rsp_claim_read_t c;
    const char *err = NULL;
    apr_time_t t0, t1;

    memset(out, 0, sizeof(*out));
    out->key = rsp_claim_key(p, prefix, a->issuer, a->id);
    out->assertion_hash = rsp_short_hash(p, a->id);
    memset(&rec, 0, sizeof(rec));
    rec.replica = replica;
    rec.claimed = now;
    rec.session_hash = session_hash;
    out->value = rsp_claim_encode(p, &rec);
    memset(&c, 0, sizeof(c));
    c.key = out->key;
    c.value = out->value;
    c.ttl_ms = a->ttl_ms;
    c.also_key = also_key;
    t0 = apr_time_now();
    if (rsp_store_claim_read(st, p, &c, &err) != APR_SUCCESS) {
        out->verdict = RSP_CLAIM_NO_VERDICT;
        out->error = err ? err : "the store gave no verdict";
        return;
    }
    t1 = apr_time_now();
    out->latency = t1 - t0;
    out->expiry = t1 + a->ttl_ms * 1000;
    out->also = c.also;
    if (c.won) {
        out->verdict = RSP_CLAIM_WON;
        return;
    }
    out->verdict = RSP_CLAIM_TAKEN;
    if (c.holder && rsp_claim_decode(&out->taker, p, c.holder) == APR_SUCCESS) {
        out->taker_known = 1;
    }
}
