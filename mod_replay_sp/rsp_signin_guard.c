#include <string.h>

#include "rsp_claim.h"
#include "rsp_signin_guard.h"
#include "rsp_util.h"

void rsp_signin_guard(rsp_signin_result_t *res, apr_pool_t *p,
                      const rsp_signin_guard_in_t *in)
{
    rsp_claim_result_t *c = &res->claim;
    const char *val;

    memset(res, 0, sizeof(*res));
    /* Open until the SP has answered (rsp_signin_guard_finish). */
    rsp_signin_claim(c, p, in->st, in->prefix, in->a, in->replica, NULL,
                     in->now, 1);
    /* The SP answered a server error and made no session: re-driven, by
     * exactly one of any number of retries. Never by age: how long the
     * SP takes is not bounded here. */
    if (c->verdict == RSP_CLAIM_TAKEN && c->taker_known && c->taker.failed) {
        rsp_signin_takeover(c, p, in->st, in->now, RSP_SIGNIN_FAILED_ONLY);
    }
    switch (c->verdict) {
    case RSP_CLAIM_WON:
        res->verdicts = res->won = 1;
        res->outcome = RSP_SIGNIN_ACCEPTED;
        return;
    case RSP_CLAIM_TAKEN:
        res->verdicts = 1;
        val = c->taker_known && c->taker.cookie_name
              ? in->cookie(in->baton, c->taker.cookie_name) : NULL;
        res->target = rsp_signin_repost_target(c, p, val);
        res->outcome = res->target ? RSP_SIGNIN_REPOST : RSP_SIGNIN_REPLAY;
        return;
    default:
        break;
    }
    if (!in->fail_open) {
        rsp_signin_unavailable(res, c->unacked ? RSP_FAILED_UNACKED : RSP_FAILED_CLAIM,
                    c->error);
        return;
    }
    res->store_errors++;
    res->failed_open = 1;
    res->error = c->error;
    res->outcome = RSP_SIGNIN_ACCEPTED;
}

apr_status_t rsp_signin_guard_finish(rsp_store_t *st, apr_pool_t *p,
                                     const char *key, const char *value,
                                     int status, const char *cookie_name,
                                     const char *cookie_value,
                                     const char *target, int *failed,
                                     int *replaced, const char **err)
{
    rsp_claim_rec_t c;
    const char *rec;

    *failed = *replaced = 0;
    if (rsp_claim_decode(&c, p, value) != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    if (cookie_name && cookie_value) {
        /* a session: terminal, whatever the status */
        c.open = 0;
        c.cookie_name = cookie_name;
        c.cookie_hash = rsp_sha256_b64url(p, cookie_value, strlen(cookie_value));
        c.target = target;
    }
    else if (status >= 500) {
        c.failed = *failed = 1;   /* stays open: a retry re-drives it */
    }
    else {
        c.open = 0;               /* answered without a session: terminal */
    }
    rec = rsp_claim_encode(p, &c);
    return rsp_store_replace(st, p, key, value, NULL, rec, replaced, err);
}
