/* The records this module keeps in its store, as another replica (or
 * whoever can write to the store) may have left them: sessions
 * (rsp_session.h), claims and request uses (rsp_claim.h, and the take-over
 * rule of rsp_signin.h that reads them), pending requests (rsp_pending.h)
 * and logout index entries (rsp_logout_index.h). The input is one stored
 * value, given to every decoder.
 *
 * What a decoder accepts must encode to a record that decodes to the same
 * thing. */
#include <string.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz_common.h"
#include "rsp_claim.h"
#include "rsp_logout_index.h"
#include "rsp_pending.h"
#include "rsp_session.h"
#include "rsp_signin.h"
#include "rsp_util.h"

static void check_session(apr_pool_t *p, const char *data, size_t size)
{
    rsp_session_t *s = NULL, *t = NULL;
    const char *enc;
    int i;

    if (rsp_session_decode(&s, p, data, size) != APR_SUCCESS) {
        return;
    }
    /* A session may name its user without a NameID (ReplaySPUserAttribute),
     * never by an empty one. */
    FUZZ_ASSERT(s->sp && *s->sp && s->issuer && *s->issuer
                && (!s->name_id || *s->name_id) && s->created > 0
                && s->expires > 0);
    enc = rsp_session_encode(p, s);
    FUZZ_ASSERT(rsp_session_decode(&t, p, enc, strlen(enc)) == APR_SUCCESS);
    FUZZ_ASSERT(!strcmp(s->sp, t->sp) && !strcmp(s->issuer, t->issuer)
                && fuzz_str_eq(s->name_id, t->name_id));
    FUZZ_ASSERT(fuzz_str_eq(s->name_id_format, t->name_id_format));
    FUZZ_ASSERT(fuzz_str_eq(s->session_index, t->session_index));
    FUZZ_ASSERT(fuzz_str_eq(s->claim_hash, t->claim_hash));
    FUZZ_ASSERT(s->created == t->created && s->expires == t->expires);
    if (!s->attributes || !s->attributes->nelts) {
        FUZZ_ASSERT(!t->attributes || !t->attributes->nelts);
        return;
    }
    FUZZ_ASSERT(t->attributes && t->attributes->nelts == s->attributes->nelts);
    for (i = 0; i < s->attributes->nelts; i++) {
        const rsp_attribute_t *a = &APR_ARRAY_IDX(s->attributes, i,
                                                  rsp_attribute_t);
        const rsp_attribute_t *b = &APR_ARRAY_IDX(t->attributes, i,
                                                  rsp_attribute_t);
        FUZZ_ASSERT(!strcmp(a->name, b->name) && !strcmp(a->value, b->value));
    }
}

static void check_claim(apr_pool_t *p, const char *val)
{
    rsp_claim_rec_t c, d;
    const char *enc;
    apr_time_t now = apr_time_from_sec(1700000000);

    if (rsp_claim_decode(&c, p, val) != APR_SUCCESS) {
        return;
    }
    FUZZ_ASSERT(c.replica && *c.replica && c.claimed > 0);
    FUZZ_ASSERT(!c.session_hash || rsp_is_hash(c.session_hash));
    FUZZ_ASSERT(!c.cookie_name == !c.cookie_hash);
    FUZZ_ASSERT(!c.failed || c.open); /* only an open claim is a failed one */
    /* The retry take-over reads the claim's time. */
    (void)rsp_signin_may_take_over(&c, now, apr_time_from_sec(30));
    enc = rsp_claim_encode(p, &c);
    FUZZ_ASSERT(rsp_claim_decode(&d, p, enc) == APR_SUCCESS);
    FUZZ_ASSERT(!strcmp(c.replica, d.replica) && c.claimed == d.claimed
                && c.open == d.open && c.failed == d.failed);
    FUZZ_ASSERT(fuzz_str_eq(c.session_hash, d.session_hash));
    FUZZ_ASSERT(fuzz_str_eq(c.cookie_name, d.cookie_name));
    FUZZ_ASSERT(fuzz_str_eq(c.cookie_hash, d.cookie_hash));
    FUZZ_ASSERT(fuzz_str_eq(c.target, d.target));
}

static void check_pending(apr_pool_t *p, const char *val)
{
    rsp_pending_t *pd = rsp_pending_decode(p, val), *again;
    const char *enc;

    if (!pd) {
        return;
    }
    FUZZ_ASSERT(pd->idp && pd->sp && pd->relay_hash && pd->return_to);
    (void)rsp_pending_relay_matches(p, pd, "token");
    FUZZ_ASSERT(!rsp_pending_relay_matches(p, pd, NULL));
    enc = rsp_pending_encode(p, pd->idp, pd->sp, pd->relay_hash, pd->return_to,
                             pd->bind_hash);
    again = rsp_pending_decode(p, enc);
    FUZZ_ASSERT(again && !strcmp(again->idp, pd->idp)
                && !strcmp(again->sp, pd->sp)
                && !strcmp(again->return_to, pd->return_to));
    FUZZ_ASSERT(rsp_pending_relay_matches(p, again, pd->relay_hash));
}

static void check_index(apr_pool_t *p, const char *val)
{
    apr_array_header_t *a = rsp_logout_index_parse(p, val), *b;
    const char *joined;
    int i, j;

    FUZZ_ASSERT(a && a->nelts <= RSP_LOGOUT_INDEX_MAX);
    for (i = 0; i < a->nelts; i++) {
        const char *h = APR_ARRAY_IDX(a, i, const char *);
        FUZZ_ASSERT(rsp_is_hash(h));
        for (j = 0; j < i; j++) {
            FUZZ_ASSERT(strcmp(h, APR_ARRAY_IDX(a, j, const char *)) != 0);
        }
    }
    joined = apr_array_pstrcat(p, a, ' ');
    b = rsp_logout_index_parse(p, joined);
    FUZZ_ASSERT(b->nelts == a->nelts);
    for (i = 0; i < a->nelts; i++) {
        FUZZ_ASSERT(!strcmp(APR_ARRAY_IDX(a, i, const char *),
                            APR_ARRAY_IDX(b, i, const char *)));
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    const char *val = fuzz_cstr(p, data, size);

    /* Sessions are read with their length (the store's reply). */
    check_session(p, fuzz_bytes(p, data, size), size);
    check_claim(p, val);
    check_pending(p, val);
    check_index(p, val);

    fuzz_pool_end(p);
    return 0;
}
