/* replay-sp metadata: what a metadata file holds and what the module
 * would trust of it, read as the module reads it (rsp_md_verify.h,
 * rsp_idp_index.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <apr_file_io.h>
#include <apr_strings.h>

#include "replay-sp.h"
#include "rsp_idp_index.h"
#include "rsp_md_source.h"
#include "rsp_md_verify.h"
#include "rsp_mdq.h"
#include "rsp_saml.h"
#include "rsp_scope.h"

static int read_all(tool_t *t, const char *path, const char **out)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;

    if (apr_file_open(&f, path, APR_FOPEN_READ, 0, t->p) != APR_SUCCESS
        || apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS
        || fi.size > RSP_MD_MAX_SIZE) {
        tool_error("%s: cannot be read (or larger than %d MiB)", path,
                   RSP_MD_MAX_SIZE >> 20);
        return RSP_EXIT_ERROR;
    }
    buf = apr_palloc(t->p, (apr_size_t)fi.size + 1);
    if (apr_file_read_full(f, buf, (apr_size_t)fi.size, &n) != APR_SUCCESS) {
        tool_error("%s: cannot be read", path);
        apr_file_close(f);
        return RSP_EXIT_ERROR;
    }
    apr_file_close(f);
    buf[n] = '\0';
    if (strlen(buf) != n) {
        tool_error("%s: a NUL byte: not XML", path);
        return RSP_EXIT_ERROR;
    }
    *out = buf;
    return RSP_EXIT_OK;
}

/* A URL's document, fetched as the module fetches it (rsp_md_source.h),
 * verification aside (done below, as for a file); nothing written. */
static int fetch(tool_t *t, const char *url, const char *pem,
                 apr_int64_t max_validity, const char **out)
{
    rsp_md_source_t src;
    rsp_md_result_t res;
    const char *err = NULL;

    if (!pem) {
        tool_error("metadata: a URL needs --cert (the certificate that signs "
                   "it, as ReplaySPIdPMetadataURL's second argument)");
        return RSP_EXIT_USAGE;
    }
    if (rsp_md_source_global_init(&err) != APR_SUCCESS) {
        tool_error("metadata: %s", err);
        return RSP_EXIT_ERROR;
    }
    memset(&src, 0, sizeof(src));
    src.url = url;
    src.cert_pem = pem;
    src.ca_file = tool_opt(t, "ca-file");
    src.max_validity_s = max_validity;
    if (rsp_md_source_get(&res, t->p, &src, NULL, apr_time_now())
        != APR_SUCCESS) {
        tool_error("%s: %s: %s", url, rsp_md_reason_name(res.reason),
                   res.detail ? res.detail : "");
        return RSP_EXIT_FINDING;
    }
    *out = res.data;
    return RSP_EXIT_OK;
}

int cmd_metadata(tool_t *t)
{
    const char *path, *cert, *md, *pem = NULL, *err = NULL, *verdict, *v;
    const char *entity, *refusal = "the module would refuse this file (httpd "
                                   "does not start)";
    rsp_idp_index_t *idps = rsp_idp_index_make(t->p);
    apr_time_t valid_until = 0;
    apr_int64_t max_validity = RSP_MD_MAX_VALIDITY;
    char *end;
    int rc, i, refused = 0;

    if (t->args->nelts != 1) {
        tool_error("metadata: one FILE");
        return RSP_EXIT_USAGE;
    }
    path = APR_ARRAY_IDX(t->args, 0, const char *);
    cert = tool_opt(t, "cert");
    if ((entity = tool_opt(t, "entity"))) {
        /* the URL is an MDQ service's base (ReplaySPIdPMetadataQuery) */
        if (strncasecmp(path, "http://", 7) && strncasecmp(path, "https://", 8)) {
            tool_error("metadata: --entity goes with the base URL of an MDQ "
                       "service (ReplaySPIdPMetadataQuery's first argument)");
            return RSP_EXIT_USAGE;
        }
        path = rsp_mdq_url(t->p, path, entity);
        refusal = "the module would refuse this entity (its sign-ins are "
                  "refused)";
    }
    if ((v = tool_opt(t, "max-validity"))) {
        max_validity = apr_strtoi64(v, &end, 10);
        if (*end || max_validity < 3600 || max_validity > 366 * 24 * 3600) {
            tool_error("metadata: --max-validity: seconds from 3600 to 31622400, "
                       "not %s", v);
            return RSP_EXIT_USAGE;
        }
    }
    if (rsp_saml_global_init(&err) != APR_SUCCESS) {
        tool_error("metadata: %s", err);
        return RSP_EXIT_ERROR;
    }
    if (cert && (rc = read_all(t, cert, &pem)) != RSP_EXIT_OK) {
        return rc;
    }
    if (!strncasecmp(path, "http://", 7) || !strncasecmp(path, "https://", 8)) {
        if ((rc = fetch(t, path, pem, max_validity, &md)) != RSP_EXIT_OK) {
            return rc;
        }
    }
    else if ((rc = read_all(t, path, &md)) != RSP_EXIT_OK) {
        return rc;
    }
    verdict = "not checked (no --cert: the module trusts the file as it is)";
    if (pem) {
        if (rsp_md_verify(t->p, md, strlen(md), pem, apr_time_now(),
                          max_validity, &valid_until, &err) == APR_SUCCESS) {
            verdict = "verified";
        }
        else {
            verdict = err;
            refused = 1;
        }
    }
    if (rsp_idp_index_add(idps, t->p, md, strlen(md), valid_until, NULL, NULL,
                          &err) != APR_SUCCESS) {
        tool_error("%s: %s", path, err);
        return RSP_EXIT_FINDING;
    }
    if (entity && !refused
        && (rsp_idp_count(idps) != 1
            || strcmp(rsp_idp_at(idps, 0)->entity_id, entity))) {
        verdict = apr_psprintf(t->p, "verified, but not %s alone as an IdP",
                               entity);
        refused = 1;
    }
    if (t->json) {
        printf("{\"file\":%s,\"signature\":%s,\"trusted\":%s,\"valid_until\":%s,"
               "\"idps\":[", tool_json(t->p, path), tool_json(t->p, verdict),
               refused ? "false" : "true",
               valid_until ? tool_json(t->p, tool_time(t->p, valid_until)) : "null");
    }
    else {
        printf("%s: %d IdPs\nsignature: %s\n", path, rsp_idp_count(idps),
               verdict);
        if (valid_until) {
            printf("valid until: %s\n", tool_time(t->p, valid_until));
        }
        printf("%s\n", refused ? refusal : "the module would trust these IdPs:");
    }
    for (i = 0; i < rsp_idp_count(idps); i++) {
        const rsp_idp_t *idp = rsp_idp_at(idps, i);
        const char *id = idp->entity_id;
        int nscopes = rsp_scopes_count(idp->scopes);
        const char *name = idp->ui->names->nelts
            ? APR_ARRAY_IDX(idp->ui->names, 0, rsp_ui_text_t).value : NULL;
        if (t->json) {
            printf("%s{\"entity_id\":%s,\"name\":%s,\"scopes\":%d,\"hidden\":%s}",
                   i ? "," : "", tool_json(t->p, id), tool_json(t->p, name),
                   nscopes, idp->ui->hidden ? "true" : "false");
        }
        else {
            printf("  %s%s  scopes: %d%s\n", id,
                   name ? apr_psprintf(t->p, "  \"%s\"", name) : "", nscopes,
                   idp->ui->hidden ? "  (hidden from discovery)" : "");
        }
    }
    if (t->json) {
        printf("]}\n");
    }
    return refused ? RSP_EXIT_FINDING : RSP_EXIT_OK;
}
