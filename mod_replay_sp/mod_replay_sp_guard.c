/* The guard: fleet-wide single use in front of another SP
 * (mod_auth_mellon's postResponse, Shibboleth SP's SAML2/POST).
 *
 * In a section with ReplaySPGuard On, a POSTed SAMLResponse is read before
 * any other module sees a byte (header_parser, first: before access,
 * authentication and the handler, where the SPs read it), validated as the
 * module's own ACS validates it, and its assertion claimed with the same
 * command, key and TTL. Won: the very same bytes are handed to the SP
 * through an input filter, as if nobody had read them. Taken: 403. Store
 * failure: 503 (or the audited fail-open). Anything the guard and the SP
 * could read differently is refused (400) before any claim. */
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_cookies.h>
#include <util_filter.h>

#include "mod_replay_sp_guard.h"
#include "mod_replay_sp_request.h"
#include "mod_replay_sp_signin.h"
#include "rsp_form.h"
#include "rsp_path.h"
#include "rsp_signin_guard.h"
#include "rsp_util.h"

APLOG_USE_MODULE(replay_sp);

#define GUARD_FILTER "REPLAY_SP_GUARD_BODY"
#define GUARD_FINISH_FILTER "REPLAY_SP_GUARD_FINISH"
/* r->notes: a Report location's path check said this request's path
 * would be refused */
#define PATH_SAID "replay-sp-path-reported"

typedef struct {
    apr_bucket_brigade *body; /* what was read, handed back once */
} guard_ctx_t;

/* A claim this request won, to complete with what the SP answered. */
typedef struct {
    rsp_store_t *store;
    const char *key;
    const char *value;        /* the record the claim wrote */
    const char *hash;         /* the assertion's short hash, for logs */
    int done;                 /* completed (or tried to) */
} guard_won_t;

/* Serve the saved body, then EOS; never read from the filters below (the
 * body has been read from them already). */
static apr_status_t guard_body_filter(ap_filter_t *f, apr_bucket_brigade *bb,
                                      ap_input_mode_t mode,
                                      apr_read_type_e block, apr_off_t readbytes)
{
    guard_ctx_t *ctx = f->ctx;
    apr_bucket *b, *stop;
    apr_status_t rv;

    if (mode == AP_MODE_INIT) {
        return APR_SUCCESS;
    }
    if (APR_BRIGADE_EMPTY(ctx->body)) {
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
        return APR_SUCCESS;
    }
    stop = APR_BRIGADE_SENTINEL(ctx->body);
    if ((mode == AP_MODE_READBYTES || mode == AP_MODE_SPECULATIVE)
        && readbytes > 0) {
        rv = apr_brigade_partition(ctx->body, readbytes, &stop);
        if (rv != APR_SUCCESS && rv != APR_INCOMPLETE) {
            return rv;
        }
    }
    /* GETLINE and EXHAUSTIVE get the rest: a form body is one line. */
    while ((b = APR_BRIGADE_FIRST(ctx->body)) != stop) {
        if (mode == AP_MODE_SPECULATIVE) {
            for (; b != stop; b = APR_BUCKET_NEXT(b)) {
                apr_bucket *copy;
                if ((rv = apr_bucket_copy(b, &copy)) != APR_SUCCESS) {
                    return rv;
                }
                APR_BRIGADE_INSERT_TAIL(bb, copy);
            }
            break;
        }
        APR_BUCKET_REMOVE(b);
        APR_BRIGADE_INSERT_TAIL(bb, b);
    }
    return APR_SUCCESS;
}

static int refuse(request_rec *r, const char *check, const char *detail)
{
    return rsp_refuse_response(r, check, apr_pstrcat(r->pool, "guard: ",
                                                     detail, NULL));
}

/* Read the whole body (Content-Length bytes, at most max) without
 * touching the request's body-reading state, so that the SP can read it
 * afterwards as if it were the first. */
static int read_whole(request_rec *r, apr_off_t max, apr_bucket_brigade **out,
                      char **text, apr_size_t *len)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_bucket_brigade *body = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_off_t total = 0;
    int seen_eos = 0;
    apr_status_t rv;

    do {
        apr_bucket *b;
        rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES,
                            APR_BLOCK_READ, HUGE_STRING_LEN);
        if (rv != APR_SUCCESS) {
            return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
        }
        while (!APR_BRIGADE_EMPTY(bb)) {
            b = APR_BRIGADE_FIRST(bb);
            if (APR_BUCKET_IS_EOS(b)) {
                seen_eos = 1;
                apr_bucket_delete(b);
                continue;
            }
            if (APR_BUCKET_IS_METADATA(b)) {
                apr_bucket_delete(b);
                continue;
            }
            if ((rv = apr_bucket_setaside(b, r->pool)) != APR_SUCCESS) {
                return HTTP_INTERNAL_SERVER_ERROR;
            }
            total += (apr_off_t)b->length;
            APR_BUCKET_REMOVE(b);
            APR_BRIGADE_INSERT_TAIL(body, b);
        }
        if (total > max) {
            return HTTP_REQUEST_ENTITY_TOO_LARGE;
        }
    } while (!seen_eos);
    *len = (apr_size_t)total;
    *text = apr_palloc(r->pool, *len + 1);
    if (apr_brigade_flatten(body, *text, len) != APR_SUCCESS) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    (*text)[*len] = '\0';
    *out = body;
    return OK;
}

/* The request's value of cookie name (NULL: none), for the core to tell
 * the browser that won a claim by the SP's session cookie. */
static const char *request_cookie(void *baton, const char *name)
{
    const char *val = NULL;

    return ap_cookie_read(baton, name, &val, 0) == APR_SUCCESS ? val : NULL;
}

/* The session cookie in the SP's answer: the first Set-Cookie that sets a
 * value (not one that expires a cookie). *name and *value, or 0. */
static int sp_cookie(request_rec *r, const char **name, const char **value)
{
    const apr_table_t *tables[2] = {r->err_headers_out, r->headers_out};
    int t, i;

    for (t = 0; t < 2; t++) {
        const apr_array_header_t *h = apr_table_elts(tables[t]);
        const apr_table_entry_t *e = (const apr_table_entry_t *)h->elts;
        for (i = 0; i < h->nelts; i++) {
            const char *sc = e[i].val, *eq, *semi;
            if (!e[i].key || strcasecmp(e[i].key, "Set-Cookie") || !sc) {
                continue;
            }
            eq = strchr(sc, '=');
            semi = strchr(sc, ';');
            if (!eq || (semi && semi < eq) || eq == sc
                || ap_strcasestr(sc, "max-age=0")
                || ap_strcasestr(sc, "expires=thu, 01 jan 1970")) {
                continue;
            }
            *name = apr_pstrmemdup(r->pool, sc, (apr_size_t)(eq - sc));
            *value = apr_pstrmemdup(r->pool, eq + 1, semi ? (apr_size_t)(semi - eq - 1)
                                                          : strlen(eq + 1));
            if (**value && strcmp(*value, "cookietest")) {
                return 1;
            }
        }
    }
    return 0;
}

/* After the SP has answered a response whose claim this request won:
 * complete the claim (rsp_signin_guard_finish), recording the SP's
 * session cookie (by its hash) and where it sent the browser, so that the
 * same browser's re-post gets that answer again rather than a 403; or,
 * when the SP answered a server error without a session, leave it to be
 * re-driven by the user's retry. The claim's expiry stays what it was.
 * status is the one the browser gets. */
static void guard_finish(request_rec *r, guard_won_t *w, int status)
{
    const char *name = NULL, *value = NULL, *err = NULL;
    int failed = 0, replaced = 0;

    w->done = 1;
    if (!sp_cookie(r, &name, &value)) {
        name = value = NULL;
    }
    if (rsp_signin_guard_finish(w->store, r->pool, w->key, w->value, status,
                                name, value,
                                apr_table_get(r->headers_out, "Location"),
                                &failed, &replaced, &err) != APR_SUCCESS) {
        /* Not completed: a re-post gets 403, as a replay does (and the
         * claim stays open: it expires with its window). */
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01050)
                      "guard: cannot complete the claim after the SP "
                      "answered %d: %s (assertion=%s replica=%s)",
                      status, err, w->hash, rsp_replica(r));
    }
    else if (failed && replaced) {
        /* notice: the SP (or mod_proxy) says why at its own level */
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01051)
                      "guard: the SP answered %d without a session: the "
                      "claim is left for a retry of the same response "
                      "(assertion=%s client=%s replica=%s)", status,
                      w->hash, r->useragent_ip, rsp_replica(r));
    }
}

/* The SP's answer, as its headers are about to go out: the claim is
 * completed before the browser can post again. */
static apr_status_t guard_finish_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    guard_won_t *w = f->ctx;

    if (!w->done) {
        guard_finish(f->r, w, f->r->status);
    }
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

/* An error answer starts the response over without the content filters
 * (ap_send_error_response): the finish filter goes back in. */
static void guard_insert_error_filter(request_rec *r)
{
    guard_won_t *w = ap_get_module_config(r->request_config, &replay_sp_module);

    if (w && !w->done) {
        ap_add_output_filter(GUARD_FINISH_FILTER, w, r, r->connection);
    }
}

/* The answer went out some other way (an ErrorDocument's internal
 * redirect): completed now, by the status the browser got. */
static int guard_log_transaction(request_rec *r)
{
    guard_won_t *w = ap_get_module_config(r->request_config, &replay_sp_module);
    const request_rec *last = r;

    if (w && !w->done) {
        while (last->next) {
            last = last->next;
        }
        guard_finish(r, w, last->status);
    }
    return DECLINED;
}

/* The guard's verdict: DECLINED to hand the request on to the SP (won, or
 * the audited fail-open), or the answer. */
static int guard_render(request_rec *r, const rsp_assertion_t *a,
                        const rsp_signin_result_t *res, apr_int64_t skew_s)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    guard_won_t *w;

    rsp_signin_counted(r, res, a, skew_s);
    switch (res->outcome) {
    case RSP_SIGNIN_UNAVAILABLE:
        return rsp_claim_unavailable(r, a, res);
    case RSP_SIGNIN_REPLAY:
        return rsp_refuse_replay(r, a, &res->claim);
    case RSP_SIGNIN_REPOST:
        /* The browser that won it posts it again (back button, double
         * submit): the SP's first answer again, the SP not called. */
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01042)
                      "guard: re-post by the browser that claimed it: "
                      "issuer=%s assertion=%s client=%s replica=%s; sent "
                      "where the SP sent it%s", a->issuer,
                      res->claim.assertion_hash, r->useragent_ip,
                      rsp_replica(r), rsp_not_enforced(r));
        apr_table_setn(r->headers_out, "Location", res->target);
        return HTTP_SEE_OTHER;
    default:
        break;
    }
    if (res->failed_open) {
        return DECLINED; /* said so already (RSP01025) */
    }
    if (res->claim.taken_over) {
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01044)
                      "claim taken over: the SP behind the guard answered the "
                      "post that won it at %s on replica %s with a server "
                      "error and no session: issuer=%s assertion=%s "
                      "client=%s replica=%s",
                      rsp_format_time(r->pool, res->claim.taker.claimed),
                      res->claim.taker.replica, a->issuer,
                      res->claim.assertion_hash, r->useragent_ip,
                      rsp_replica(r));
    }
    w = apr_pcalloc(r->pool, sizeof(*w));
    w->store = sc->store;
    w->key = res->claim.key;
    w->value = res->claim.value;
    w->hash = res->claim.assertion_hash;
    ap_set_module_config(r->request_config, &replay_sp_module, w);
    ap_add_output_filter(GUARD_FINISH_FILTER, w, r, r->connection);
    ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RSP_LOGNO(01040)
                  "guard: claim won, response handed to the SP: issuer=%s "
                  "assertion=%s client=%s replica=%s claim-ttl=%"
                  APR_INT64_T_FMT "ms", a->issuer, res->claim.assertion_hash,
                  r->useragent_ip, rsp_replica(r), a->ttl_ms);
    return DECLINED;
}

/* The guard's decision on a request at its location: DECLINED to hand it
 * to the SP, or the answer. *body: the body it read (to be handed back),
 * or NULL. *unread: the body could not be read whole (nothing to hand
 * back). */
static int guard_decide(request_rec *r, rsp_dir_cfg_t *dc,
                        apr_bucket_brigade **body, int *unread)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *ctype, *clen, *saml, *raw, *why = NULL;
    rsp_check_params_t cp;
    rsp_signin_guard_in_t in;
    rsp_signin_result_t res;
    rsp_assertion_t *a;
    apr_size_t len = 0;
    char *text = NULL, *end;
    apr_off_t n;
    int rc;

    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    /* The path the SP reads (r->unparsed_uri: mod_shib does) is the one
     * httpd matched this section with, byte for byte: else the guard would
     * claim for a request the SP refuses, or one it reads elsewhere. */
    raw = rsp_path_of_target(r->pool, r->unparsed_uri);
    if (!raw || (why = rsp_path_noncanonical(raw)) != NULL
        || strcmp(raw, r->uri)) {
        if (apr_table_get(r->notes, PATH_SAID)) {
            return DECLINED; /* Report: said and counted already */
        }
        return refuse(r, "path", apr_psprintf(r->pool, "the path %s is not "
                      "spelled as the guarded section's (%s)",
                      ap_escape_logitem(r->pool, raw ? raw : r->unparsed_uri),
                      why ? why : "httpd read it as another"));
    }
    /* A fragment ('#') never gets here: httpd refuses it (AH02421). */
    if (r->args && (why = rsp_form_query_ambiguity(r->pool, r->args)) != NULL) {
        return refuse(r, "ambiguous", why);
    }
    if (r->method_number != M_POST) {
        return DECLINED; /* no response to guard; the SP answers as it will */
    }
    ctype = apr_table_get(r->headers_in, "Content-Type");
    if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33)
        || (ctype[33] && ctype[33] != ';' && ctype[33] != ' ')) {
        return refuse(r, "ambiguous", "Content-Type is not "
                      "application/x-www-form-urlencoded");
    }
    if (apr_table_get(r->headers_in, "Transfer-Encoding")) {
        return refuse(r, "ambiguous", "a chunked body (a Content-Length is "
                      "required)");
    }
    clen = apr_table_get(r->headers_in, "Content-Length");
    if (!clen || apr_strtoff(&n, clen, &end, 10) != APR_SUCCESS || *end || n < 0) {
        return refuse(r, "form", "no valid Content-Length");
    }
    if (n > rsp_cfg_max_body(dc)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, RSP_LOGNO(01015)
                      "saml response refused: check=size: body larger than "
                      "ReplaySPMaxBodySize %" APR_INT64_T_FMT " (client %s)%s",
                      rsp_cfg_max_body(dc), r->useragent_ip, rsp_not_enforced(r));
        return HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if ((rc = read_whole(r, rsp_cfg_max_body(dc), body, &text, &len)) != OK) {
        *unread = 1;
        return rc;
    }
    if ((apr_off_t)len != n || memchr(text, '\0', len)) {
        return refuse(r, "form", "the body is not Content-Length bytes of text");
    }
    if ((why = rsp_form_ambiguity(r->pool, text)) != NULL) {
        return refuse(r, "ambiguous", why);
    }
    saml = rsp_form_value(r->pool, text, "SAMLResponse", &why);
    if (!saml || !*saml) {
        return refuse(r, "form", why ? why : "no SAMLResponse in the form");
    }
    if (!sc->store) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, RSP_LOGNO(01016)
                      "no ReplaySPStore for this server%s", rsp_not_enforced(r));
        return rsp_unavailable(r);
    }

    /* Validate as the ACS does; InResponseTo is the SP's business. */
    if ((rc = rsp_validate(r, dc, saml, ap_construct_url(r->pool, r->uri, r),
                           "guard", &cp, &a)) != OK) {
        return rc;
    }

    memset(&in, 0, sizeof(in));
    in.st = sc->store;
    in.prefix = rsp_cfg_prefix(sc);
    in.a = a;
    in.replica = rsp_replica(r);
    in.now = cp.now;
    in.cookie = request_cookie;
    in.baton = r;
    in.fail_open = sc->on_failure_open == 1;
    rsp_signin_guard(&res, r->pool, &in);
    return guard_render(r, a, &res, cp.skew_s);
}

static int guard_check(request_rec *r)
{
    rsp_dir_cfg_t *dc = ap_get_module_config(r->per_dir_config, &replay_sp_module);
    apr_bucket_brigade *body = NULL;
    guard_ctx_t *ctx;
    int rc, unread = 0;

    if (dc->guard < RSP_GUARD_ON || !dc->sp || r->main || r->prev) {
        return DECLINED;
    }
    if (dc->guard == RSP_GUARD_REPORT) {
        rsp_set_report_only(r);
    }
    else {
        rsp_clear_report_only(r);
    }
    rc = guard_decide(r, dc, &body, &unread);
    if (rc != DECLINED) {
        /* Report: refused where the guard is On (said so, marked not
         * enforced), passed on here; but a body that could not be read
         * whole cannot be handed on. */
        if (!rsp_report_only(r) || unread) {
            return rc;
        }
        rsp_report_passed(r);
    }
    if (body) {
        ctx = apr_pcalloc(r->pool, sizeof(*ctx));
        ctx->body = body;
        ap_add_input_filter(GUARD_FILTER, ctx, r, r->connection);
    }
    return DECLINED;
}

/* Every request, before httpd decodes and normalises its path: one whose
 * path some SP may read as a guarded assertion consumer's (rsp_path_reaches)
 * must spell it exactly, so that the section's guard is what meets it.
 * Path parameters, escapes, dot segments, doubled slashes, another letter
 * case: refused here, before any module reads the request. */
static int guard_paths_check(request_rec *r)
{
    rsp_srv_cfg_t *sc = ap_get_module_config(r->server->module_config,
                                             &replay_sp_module);
    const char *raw, *why, *reported = NULL;
    int i;

    if (!sc || !sc->guard_paths || !sc->guard_paths->nelts || r->main
        || r->prev || !(raw = rsp_path_of_target(r->pool, r->unparsed_uri))) {
        return DECLINED;
    }
    for (i = 0; i < sc->guard_paths->nelts; i++) {
        const rsp_guard_path_t *gp = &APR_ARRAY_IDX(sc->guard_paths, i,
                                                    rsp_guard_path_t);
        const char *base = gp->path;
        if (!rsp_path_reaches(r->pool, raw, base)) {
            continue;
        }
        why = rsp_path_noncanonical(raw);
        if (!why && !rsp_path_under(raw, base)) {
            why = "another letter case";
        }
        if (!why) {
            continue;
        }
        why = apr_psprintf(r->pool, "the path %s may be read as the guarded "
                           "%s, but is not spelled as it (%s)",
                           ap_escape_logitem(r->pool, raw), base, why);
        if (!gp->report) {
            apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
            return refuse(r, "path", why);
        }
        reported = reported ? reported : why;
    }
    if (reported) {
        /* only guards in Report mode would refuse it: said, passed on */
        rsp_set_report_only(r);
        refuse(r, "path", reported);
        rsp_clear_report_only(r);
        apr_table_setn(r->notes, PATH_SAID, "1");
        rsp_report_passed(r);
    }
    return DECLINED;
}

void rsp_guard_register_hooks(apr_pool_t *p)
{
    ap_hook_post_read_request(guard_paths_check, NULL, NULL,
                              APR_HOOK_REALLY_FIRST);
    ap_hook_header_parser(guard_check, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_insert_error_filter(guard_insert_error_filter, NULL, NULL,
                                APR_HOOK_MIDDLE);
    ap_hook_log_transaction(guard_log_transaction, NULL, NULL, APR_HOOK_FIRST);
    ap_register_input_filter(GUARD_FILTER, guard_body_filter, NULL,
                             AP_FTYPE_RESOURCE);
    /* After every content filter (mod_shib adds its Set-Cookie in one),
     * before the headers go out. */
    ap_register_output_filter(GUARD_FINISH_FILTER, guard_finish_filter, NULL,
                              AP_FTYPE_PROTOCOL - 1);
}
