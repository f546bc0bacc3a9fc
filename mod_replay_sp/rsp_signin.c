#include <string.h>

#include "rsp_session.h"
#include "rsp_signin.h"
#include "rsp_util.h"

void rsp_signin_claim(rsp_claim_result_t *out, apr_pool_t *p, rsp_store_t *st,
                      const char *prefix, const rsp_assertion_t *a,
                      const char *replica, const char *session_hash,
                      apr_time_t now, int open)
{
    rsp_claim_rec_t rec;
    rsp_claim_read_t c;
    const char *err = NULL;
    apr_time_t t0, t1;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    out->key = rsp_claim_key(p, prefix, a->issuer, a->id);
    out->assertion_hash = rsp_short_hash(p, a->id);
    memset(&rec, 0, sizeof(rec));
    rec.replica = replica;
    rec.claimed = now;
    rec.session_hash = session_hash;
    out->done_value = rsp_claim_encode(p, &rec);
    rec.open = open;
    out->value = rsp_claim_encode(p, &rec);
    memset(&c, 0, sizeof(c));
    c.key = out->key;
    c.value = out->value;
    c.ttl_ms = a->ttl_ms;
    t0 = apr_time_now();
    if ((rv = rsp_store_claim_read(st, p, &c, &err)) != APR_SUCCESS) {
        out->verdict = RSP_CLAIM_NO_VERDICT;
        out->unacked = rv == RSP_STORE_UNACKED;
        out->error = err ? err : "the store gave no verdict";
        return;
    }
    t1 = apr_time_now();
    out->latency = t1 - t0;
    out->expiry = t1 + a->ttl_ms * 1000;
    out->token = c.token;
    if (c.won) {
        out->verdict = RSP_CLAIM_WON;
        return;
    }
    out->verdict = RSP_CLAIM_TAKEN;
    out->holder = c.holder;
    if (c.holder && rsp_claim_decode(&out->taker, p, c.holder) == APR_SUCCESS) {
        out->taker_known = 1;
    }
}

void rsp_signin_peek(rsp_claim_result_t *out, apr_pool_t *p, rsp_store_t *st,
                     const char *prefix, const rsp_assertion_t *a)
{
    const char *err = NULL, *val = NULL;
    apr_size_t len;

    memset(out, 0, sizeof(*out));
    out->key = rsp_claim_key(p, prefix, a->issuer, a->id);
    out->assertion_hash = rsp_short_hash(p, a->id);
    if (rsp_store_get(st, p, out->key, &val, &len, &err) != APR_SUCCESS) {
        out->verdict = RSP_CLAIM_NO_VERDICT;
        out->error = err ? err : "the store could not be read";
        return;
    }
    if (!val) {
        out->verdict = RSP_CLAIM_ABSENT;
        return;
    }
    out->verdict = RSP_CLAIM_TAKEN;
    out->holder = val;
    if (rsp_claim_decode(&out->taker, p, val) == APR_SUCCESS) {
        out->taker_known = 1;
    }
}

int rsp_signin_is_repost(const rsp_claim_result_t *c, apr_pool_t *p,
                         const char *session_id)
{
    return c->verdict == RSP_CLAIM_TAKEN && c->taker_known && session_id
        && *session_id && c->taker.session_hash
        && !strcmp(c->taker.session_hash, rsp_session_hash(p, session_id));
}

const char *rsp_signin_repost_target(const rsp_claim_result_t *c,
                                     apr_pool_t *p, const char *cookie_value)
{
    if (c->verdict != RSP_CLAIM_TAKEN || !c->taker_known
        || !c->taker.cookie_hash || !c->taker.target || !cookie_value
        || !*cookie_value) {
        return NULL;
    }
    return strcmp(rsp_sha256_b64url(p, cookie_value, strlen(cookie_value)),
                  c->taker.cookie_hash) ? NULL : c->taker.target;
}

int rsp_signin_may_take_over(const rsp_claim_rec_t *rec, apr_time_t now,
                             apr_interval_time_t age)
{
    /* claimed is in whole seconds, rounded down: one more */
    return rec->open
        && (rec->failed || now - age - apr_time_from_sec(1) > rec->claimed);
}

void rsp_signin_takeover(rsp_claim_result_t *c, apr_pool_t *p, rsp_store_t *st,
                         apr_time_t now, apr_interval_time_t age)
{
    const char *err = NULL;
    int replaced = 0;
    apr_status_t rv;

    if (c->verdict != RSP_CLAIM_TAKEN || !c->taker_known || !c->holder
        || !c->value || !rsp_signin_may_take_over(&c->taker, now, age)) {
        return;
    }
    rv = rsp_store_replace(st, p, c->key, c->holder, c->token, c->value,
                           &replaced, &err);
    if (rv == APR_SUCCESS && replaced) {
        c->verdict = RSP_CLAIM_WON;
        c->taken_over = 1;
        c->token = NULL; /* ours is another version now */
    }
    else if (rv != APR_SUCCESS) {
        /* the store failed (ours may be written: then a later retry may
         * take it over in its turn), or ours is on the primary, not yet
         * on enough replicas: not won, and no verdict (not a replay) */
        c->verdict = RSP_CLAIM_NO_VERDICT;
        c->unacked = rv == RSP_STORE_UNACKED;
        c->error = err ? err : "the store gave no verdict";
    }
}

apr_status_t rsp_signin_session_id(const char **sid, apr_pool_t *p,
                                   rsp_store_t *st, const char *prefix,
                                   const char *home_key, apr_size_t nbytes)
{
    int n = rsp_store_servers(st), home, tries;

    if (n <= 1) {
        return rsp_random_token(sid, p, nbytes);
    }
    home = rsp_store_home(st, home_key);
    /* (1 - 1/n)^(64 n) < e^-64: the bound is never reached in practice,
     * and the last draw is as good an ID, only on another server. */
    for (tries = 0; tries < 64 * n; tries++) {
        if (rsp_random_token(sid, p, nbytes) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        if (rsp_store_home(st, rsp_session_key(p, prefix, *sid)) == home) {
            break;
        }
    }
    return APR_SUCCESS;
}
