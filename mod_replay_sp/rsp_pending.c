#include <string.h>

#include <apr_strings.h>

#include "rsp_binding.h"
#include "rsp_claim.h"
#include "rsp_pending.h"
#include "rsp_record.h"
#include "rsp_util.h"

static const char *hashed(apr_pool_t *p, const char *prefix, const char *kind,
                          const char *data, apr_size_t len)
{
    return apr_pstrcat(p, prefix, kind, rsp_sha256_b64url(p, data, len), NULL);
}

const char *rsp_pending_key(apr_pool_t *p, const char *prefix,
                            rsp_pending_kind_t kind, const char *request_id)
{
    return hashed(p, prefix, kind == RSP_PENDING_LOGOUT ? "l:" : "q:",
                  request_id, strlen(request_id));
}

const char *rsp_pending_use_key(apr_pool_t *p, const char *prefix,
                                const char *request_id)
{
    return hashed(p, prefix, "u:", request_id, strlen(request_id));
}

const char *rsp_idp_request_key(apr_pool_t *p, const char *prefix,
                                const char *issuer, const char *request_id)
{
    apr_size_t il = strlen(issuer), dl = strlen(request_id);
    char *buf = apr_palloc(p, il + 1 + dl);

    memcpy(buf, issuer, il);
    buf[il] = '\0';
    memcpy(buf + il + 1, request_id, dl);
    return hashed(p, prefix, "i:", buf, il + 1 + dl);
}

const char *rsp_pending_encode(apr_pool_t *p, const char *idp, const char *sp,
                               const char *token, const char *return_to,
                               const char *binding)
{
    const rsp_record_field_t f[] = {
        {"v", "1"},
        {"i", idp},
        {"p", sp},
        {"h", rsp_sha256_b64url(p, token, strlen(token))},
        {"u", return_to},
        {"b", binding ? rsp_sha256_b64url(p, binding, strlen(binding)) : NULL}
    };

    return rsp_record_encode(p, RSP_RECORD_FORM, f,
                             (int)(sizeof(f) / sizeof(f[0])));
}

/* A field given twice or badly escaped reads as absent. */
enum { F_V, F_I, F_P, F_H, F_U, F_B, F_N };

rsp_pending_t *rsp_pending_decode(apr_pool_t *p, const char *val)
{
    static const char *const names[F_N] = {"v", "i", "p", "h", "u", "b"};
    rsp_pending_t *pd;
    const char *f[F_N];

    if (!val) {
        return NULL;
    }
    rsp_record_lookup(p, RSP_RECORD_FORM, val, strlen(val), names, F_N, f,
                      NULL);
    if (!f[F_V] || strcmp(f[F_V], "1") != 0) {
        return NULL;
    }
    pd = apr_pcalloc(p, sizeof(*pd));
    pd->idp = f[F_I];
    pd->sp = f[F_P];
    pd->relay_hash = f[F_H];
    pd->return_to = f[F_U];
    pd->bind_hash = f[F_B];
    if (!pd->idp || !pd->sp || !pd->relay_hash || !pd->return_to
        || (pd->bind_hash && !*pd->bind_hash)) {
        return NULL;
    }
    return pd;
}

int rsp_pending_relay_matches(apr_pool_t *p, const rsp_pending_t *pd,
                              const char *token)
{
    return token && !strcmp(pd->relay_hash,
                            rsp_sha256_b64url(p, token, strlen(token)));
}

const char *rsp_pending_refusal(apr_pool_t *p, const char *val,
                                const rsp_pending_answer_t *ans,
                                rsp_pending_t **pd, const char **detail)
{
    const char *why = NULL;

    *pd = NULL;
    if (!val) {
        *detail = apr_psprintf(p, "InResponseTo names request %s, which this "
                               "fleet did not send or which expired "
                               "(ReplaySPRequestLifetime %" APR_INT64_T_FMT
                               " s)", ans->rid, ans->lifetime_s);
        return "request-unknown";
    }
    if (!(*pd = rsp_pending_decode(p, val))) {
        *detail = apr_psprintf(p, "malformed record of request %s", ans->rid);
        return "request-unknown";
    }
    if (strcmp((*pd)->sp, ans->sp) != 0 || strcmp((*pd)->idp, ans->issuer) != 0) {
        *detail = apr_psprintf(p, "request %s was sent to %s for SP %s; the "
                               "response comes from %s for SP %s", ans->rid,
                               (*pd)->idp, (*pd)->sp, ans->issuer, ans->sp);
        return "request-mismatch";
    }
    if (!rsp_pending_relay_matches(p, *pd, ans->relay)) {
        *detail = apr_psprintf(p, "RelayState %s the one sent with request %s",
                               ans->relay ? "is not" : "missing; expected",
                               ans->rid);
        return "relay-state";
    }
    /* Login CSRF: only the browser that started the sign-in may finish
     * it. */
    if (ans->cookie_base && (*pd)->bind_hash
        && !rsp_binding_matches(p, ans->cookie_header,
                                rsp_binding_cookie_name(p, ans->cookie_base,
                                                        ans->relay),
                                (*pd)->bind_hash, &why)) {
        *detail = apr_psprintf(p, "request %s was started by another browser: "
                               "%s (ReplaySPBindRequests)", ans->rid, why);
        return "request-browser";
    }
    return NULL;
}

apr_status_t rsp_pending_put(rsp_store_t *st, apr_pool_t *p, const char *prefix,
                             rsp_pending_kind_t kind, const char *request_id,
                             const char *idp, const char *sp,
                             const char *token, const char *return_to,
                             const char *binding, apr_int64_t lifetime_s,
                             const char **err)
{
    const char *rec = rsp_pending_encode(p, idp, sp, token, return_to, binding);

    return rsp_store_put(st, p, rsp_pending_key(p, prefix, kind, request_id),
                         rec, strlen(rec), lifetime_s * 1000, err);
}

apr_status_t rsp_pending_read(rsp_store_t *st, apr_pool_t *p,
                              const char *prefix, rsp_pending_kind_t kind,
                              const char *request_id, const char **val,
                              const char **err)
{
    apr_size_t len;

    return rsp_store_get(st, p, rsp_pending_key(p, prefix, kind, request_id),
                         val, &len, err);
}

apr_status_t rsp_pending_use(rsp_store_t *st, apr_pool_t *p, const char *prefix,
                             rsp_pending_kind_t kind, const char *request_id,
                             const char *replica, apr_time_t now,
                             apr_int64_t lifetime_s, int *won,
                             const char **err)
{
    rsp_claim_rec_t use;
    rsp_claim_read_t uc;
    apr_status_t rv;

    memset(&use, 0, sizeof(use));
    use.replica = replica;
    use.claimed = now;
    /* The request's use lives with the request (several memcached
     * servers: one server fewer that a sign-in depends on). */
    memset(&uc, 0, sizeof(uc));
    uc.key = rsp_pending_use_key(p, prefix, request_id);
    uc.home_key = rsp_pending_key(p, prefix, kind, request_id);
    uc.value = rsp_claim_encode(p, &use);
    uc.ttl_ms = lifetime_s * 1000;
    rv = rsp_store_claim_read(st, p, &uc, err);
    *won = uc.won;
    return rv;
}

apr_status_t rsp_idp_request_take(rsp_store_t *st, apr_pool_t *p,
                                  const char *prefix, const char *issuer,
                                  const char *request_id, const char *replica,
                                  apr_time_t now, apr_int64_t ttl_ms, int *won,
                                  const char **err)
{
    rsp_claim_rec_t taken;

    memset(&taken, 0, sizeof(taken));
    taken.replica = replica;
    taken.claimed = now;
    return rsp_store_claim(st, p,
                           rsp_idp_request_key(p, prefix, issuer, request_id),
                           rsp_claim_encode(p, &taken), ttl_ms, won, err);
}
