/* replay-sp lookup and replay-sp sessions: the records a sign-in wrote,
 * read (and, for sessions --end, removed) with the library's codecs and
 * keys. */
#include <stdio.h>
#include <string.h>

#include <apr_strings.h>

#include "replay-sp.h"
#include "rsp_claim.h"
#include "rsp_logout_index.h"
#include "rsp_session.h"
#include "rsp_util.h"

static const char *required(tool_t *t, const char *cmd, const char *name)
{
    const char *v = tool_opt(t, name);

    if (!v || !*v) {
        tool_error("%s: --%s is required", cmd, name);
        return NULL;
    }
    return v;
}

/* "12 s" or "expired", from a store TTL in ms (-1 none, -2 absent). */
static const char *left(apr_pool_t *p, apr_int64_t ttl_ms)
{
    return ttl_ms == -1 ? "never (no expiry set: not written by this module?)"
         : ttl_ms < 0 ? "gone"
         : apr_psprintf(p, "%" APR_INT64_T_FMT " s", (ttl_ms + 999) / 1000);
}

int cmd_lookup(tool_t *t)
{
    const char *issuer, *id, *key, *val = NULL, *sval = NULL, *err = NULL;
    rsp_session_t *sess = NULL;
    rsp_claim_rec_t c;
    rsp_store_t *st;
    apr_int64_t ttl = -2;
    apr_size_t len;
    int rc, decoded;

    if (t->args->nelts != 1) {
        tool_error("lookup: give one STORE-URL");
        return RSP_EXIT_USAGE;
    }
    if (!(issuer = required(t, "lookup", "issuer"))
        || !(id = required(t, "lookup", "assertion-id"))) {
        return RSP_EXIT_USAGE;
    }
    if ((rc = tool_store(t, APR_ARRAY_IDX(t->args, 0, const char *), &st))
        != RSP_EXIT_OK) {
        return rc;
    }
    key = rsp_claim_key(t->p, t->prefix, issuer, id);
    if (rsp_store_get(st, t->p, key, &val, &len, &err) != APR_SUCCESS
        || (val && rsp_store_ttl(st, t->p, key, &ttl, &err) != APR_SUCCESS)) {
        tool_error("lookup: %s", err);
        return RSP_EXIT_ERROR;
    }
    if (!val) {
        if (t->json) {
            printf("{\"key\": %s, \"claimed\": false}\n", tool_json(t->p, key));
        }
        else {
            printf("not claimed: no claim %s for assertion %s of %s (never "
                   "posted here, refused before its claim, or its claim "
                   "expired)\n", key, rsp_short_hash(t->p, id), issuer);
        }
        return RSP_EXIT_FINDING;
    }
    decoded = rsp_claim_decode(&c, t->p, val) == APR_SUCCESS;
    if (decoded && c.session_hash) {
        const char *skey = rsp_session_key_of_hash(t->p, t->prefix,
                                                   c.session_hash);
        if (rsp_store_get(st, t->p, skey, &sval, &len, &err) != APR_SUCCESS) {
            tool_error("lookup: %s", err);
            return RSP_EXIT_ERROR;
        }
        if (sval && rsp_session_decode(&sess, t->p, sval, len) != APR_SUCCESS) {
            sess = NULL;
        }
    }
    if (t->json) {
        printf("{\"key\": %s, \"claimed\": true, \"record\": %s, \"replica\": %s, "
               "\"claimed_at\": %s, \"expires_in_ms\": %" APR_INT64_T_FMT
               ", \"session\": %s, \"session_live\": %s",
               tool_json(t->p, key), decoded ? "\"ok\"" : "\"unreadable\"",
               tool_json(t->p, decoded ? c.replica : NULL),
               decoded ? tool_json(t->p, tool_time(t->p, c.claimed)) : "null",
               ttl, tool_json(t->p, decoded && c.session_hash
                              ? rsp_short_hash(t->p, c.session_hash) : NULL),
               sess ? "true" : "false");
        if (sess) {
            printf(", \"name_id\": %s, \"session_expires\": %s",
                   tool_json(t->p, sess->name_id),
                   tool_json(t->p, tool_time(t->p, sess->expires)));
        }
        printf("}\n");
        return RSP_EXIT_OK;
    }
    printf("claimed: assertion %s of %s\n", rsp_short_hash(t->p, id), issuer);
    printf("  key: %s\n", key);
    if (!decoded) {
        printf("  record: unreadable (not written by this version?)\n");
    }
    else {
        printf("  by replica: %s\n  at: %s\n", c.replica,
               tool_time(t->p, c.claimed));
    }
    printf("  claim expires in: %s%s\n", left(t->p, ttl), ttl >= 0
           ? " (until then a replay of it is refused)" : "");
    if (!decoded || !c.session_hash) {
        printf("  session: none recorded\n");
    }
    else if (sess) {
        printf("  session: %s, live: the sign-in completed; user %s, until %s\n",
               rsp_short_hash(t->p, c.session_hash),
               sess->name_id ? sess->name_id : "(no NameID)",
               tool_time(t->p, sess->expires));
    }
    else {
        printf("  session: %s, not in the store: ended (logout), expired, or "
               "the sign-in did not complete\n",
               rsp_short_hash(t->p, c.session_hash));
    }
    return RSP_EXIT_OK;
}

/* What sessions lists, as rsp_logout_index_sessions finds them. */
typedef struct {
    tool_t *t;
    const char *issuer, *name_id;
    int listed, opened;
} sessions_baton_t;

/* --json: the object's start, before the first session or the end. */
static void sessions_open(sessions_baton_t *b)
{
    if (b->t->json && !b->opened) {
        printf("{\"issuer\": %s, \"name_id\": %s, \"sessions\": [",
               tool_json(b->t->p, b->issuer), tool_json(b->t->p, b->name_id));
    }
    b->opened = 1;
}

static void sessions_visit(void *baton, const char *h, const rsp_session_t *s,
                           int ended)
{
    sessions_baton_t *b = baton;
    tool_t *t = b->t;

    sessions_open(b);
    if (ended) {
        fprintf(stderr, "replay-sp: ended session %s of %s (IdP %s, SP "
                "%s), signed in %s\n", rsp_short_hash(t->p, h), b->name_id,
                b->issuer, s->sp, tool_time(t->p, s->created));
    }
    if (t->json) {
        printf("%s{\"session\": %s, \"sp\": %s, \"session_index\": %s, "
               "\"created\": %s, \"expires\": %s, \"ended\": %s}",
               b->listed ? ", " : "", tool_json(t->p, rsp_short_hash(t->p, h)),
               tool_json(t->p, s->sp), tool_json(t->p, s->session_index),
               tool_json(t->p, tool_time(t->p, s->created)),
               tool_json(t->p, tool_time(t->p, s->expires)),
               ended ? "true" : "false");
    }
    else {
        printf("session %s  sp %s  session-index %s  signed in %s  until %s%s\n",
               rsp_short_hash(t->p, h), s->sp,
               s->session_index ? s->session_index : "-",
               tool_time(t->p, s->created), tool_time(t->p, s->expires),
               ended ? "  ENDED" : "");
    }
    b->listed++;
}

int cmd_sessions(tool_t *t)
{
    const char *err = NULL;
    int rc, end = tool_opt(t, "end") != NULL, ended = 0;
    sessions_baton_t b;
    rsp_store_t *st;

    memset(&b, 0, sizeof(b));
    b.t = t;
    if (t->args->nelts != 1) {
        tool_error("sessions: give one STORE-URL");
        return RSP_EXIT_USAGE;
    }
    if (!(b.issuer = required(t, "sessions", "issuer"))
        || !(b.name_id = required(t, "sessions", "name-id"))) {
        return RSP_EXIT_USAGE;
    }
    if ((rc = tool_store(t, APR_ARRAY_IDX(t->args, 0, const char *), &st))
        != RSP_EXIT_OK) {
        return rc;
    }
    /* The module's own way of ending them (its SLO endpoint's). */
    if (rsp_logout_index_sessions(st, t->p, t->prefix, b.issuer, b.name_id,
                                  NULL, end, sessions_visit, &b, &ended, &err)
        != APR_SUCCESS) {
        tool_error("sessions: %s", err);
        return RSP_EXIT_ERROR;
    }
    sessions_open(&b);
    if (t->json) {
        printf("], \"ended\": %d}\n", ended);
    }
    else {
        printf("%d session%s of %s at %s%s\n", b.listed, b.listed == 1 ? "" : "s",
               b.name_id, b.issuer,
               end ? apr_psprintf(t->p, "; %d ended", ended) : "");
    }
    return RSP_EXIT_OK;
}
