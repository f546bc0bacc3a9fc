#include <errno.h>
#include <string.h>

#include <apr_strings.h>

#include "rsp_claim.h"
#include "rsp_record.h"
#include "rsp_util.h"

#define RSP_CLAIM_MAX_TIME APR_INT64_C(253402300799) /* 9999-12-31T23:59:59Z */

const char *rsp_claim_key(apr_pool_t *p, const char *prefix,
                          const char *issuer, const char *id)
{
    apr_size_t ilen, dlen;
    char *buf;

    if (!issuer || !*issuer || !id || !*id) {
        return NULL;
    }
    /* issuer || 0x00 || id: the separator cannot occur in either string,
     * so no two (issuer, id) pairs share an input. */
    ilen = strlen(issuer);
    dlen = strlen(id);
    buf = apr_palloc(p, ilen + 1 + dlen);
    memcpy(buf, issuer, ilen);
    buf[ilen] = '\0';
    memcpy(buf + ilen + 1, id, dlen);
    return apr_pstrcat(p, prefix ? prefix : "", "a:",
                       rsp_sha256_b64url(p, buf, ilen + 1 + dlen), NULL);
}

const char *rsp_claim_encode(apr_pool_t *p, const rsp_claim_rec_t *c)
{
    int cookie = c->cookie_name && c->cookie_hash;
    const rsp_record_field_t f[] = {
        {"v", "1"},
        {"r", c->replica},
        {"t", rsp_record_number(p, apr_time_sec(c->claimed))},
        {"s", c->session_hash},
        {"o", c->open ? "1" : NULL},
        {"f", c->open && c->failed ? "1" : NULL},
        {"cn", cookie ? c->cookie_name : NULL},
        {"ch", cookie ? c->cookie_hash : NULL},
        {"l", c->target}
    };

    return rsp_record_encode(p, RSP_RECORD_FORM, f,
                             (int)(sizeof(f) / sizeof(f[0])));
}

/* A field given twice or badly escaped reads as absent (as every reader
 * of these records has read it). */
enum { F_V, F_T, F_O, F_F, F_R, F_S, F_CN, F_CH, F_L, F_N };

apr_status_t rsp_claim_decode(rsp_claim_rec_t *c, apr_pool_t *p,
                              const char *val)
{
    static const char *const names[F_N] = {"v", "t", "o", "f", "r", "s", "cn",
                                           "ch", "l"};
    const char *f[F_N];
    char *end;
    apr_int64_t secs;

    memset(c, 0, sizeof(*c));
    rsp_record_lookup(p, RSP_RECORD_FORM, val, val ? strlen(val) : 0, names, F_N,
                      f, NULL);
    if (!f[F_V] || strcmp(f[F_V], "1") != 0 || !f[F_T] || !*f[F_T]) {
        return APR_EINVAL;
    }
    errno = 0;
    secs = apr_strtoi64(f[F_T], &end, 10);
    /* a time in seconds before the year 10000: in microseconds it fits */
    if (*end || errno || secs <= 0 || secs > RSP_CLAIM_MAX_TIME) {
        return APR_EINVAL;
    }
    c->replica = f[F_R];
    c->session_hash = f[F_S];
    c->cookie_name = f[F_CN];
    c->cookie_hash = f[F_CH];
    c->target = f[F_L];
    if (f[F_O] && strcmp(f[F_O], "1") != 0) {
        return APR_EINVAL;
    }
    c->open = f[F_O] != NULL;
    if (f[F_F] && (strcmp(f[F_F], "1") != 0 || !c->open)) {
        return APR_EINVAL;
    }
    c->failed = f[F_F] != NULL;
    if (!c->replica || !*c->replica
        || (c->session_hash && !rsp_is_hash(c->session_hash))
        || (!c->cookie_name != !c->cookie_hash)
        || (c->cookie_hash && !rsp_is_hash(c->cookie_hash))) {
        return APR_EINVAL;
    }
    c->claimed = apr_time_from_sec(secs);
    return APR_SUCCESS;
}
