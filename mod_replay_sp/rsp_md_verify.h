/* A metadata file's own signature (ReplaySPIdPMetadataFile PATH CERTFILE):
 * a federation's aggregate, or one entity, signed by whoever publishes it,
 * verified before anything in it is trusted. The same discipline as for
 * responses: one enveloped signature on the root element (EntitiesDescriptor
 * or EntityDescriptor), its one Reference the root itself, only the
 * canonicalisations and the SHA-2 digests and RSA or ECDSA signatures of
 * the field, no DOCTYPE, a bounded size and depth; then validUntil, which
 * signed metadata must carry, in the future and no further off than the
 * longest validity allowed. */
#ifndef RSP_MD_VERIFY_H
#define RSP_MD_VERIFY_H

#include <apr_pools.h>
#include <apr_time.h>
#include <libxml/tree.h>

#define RSP_MD_MAX_SIZE (256 * 1024 * 1024)   /* bytes */
#define RSP_MD_MAX_DEPTH 64

/* Verify md (len bytes) with the certificate cert_pem (PEM text) at now,
 * with max_validity_s the longest validUntil - now allowed. APR_SUCCESS
 * with *valid_until; else APR_EINVAL with *err (which check, and why). */
apr_status_t rsp_md_verify(apr_pool_t *p, const char *md, apr_size_t len,
                           const char *cert_pem, apr_time_t now,
                           apr_int64_t max_validity_s, apr_time_t *valid_until,
                           const char **err);

/* The same, and on success *tree: the document as parsed and verified
 * (the caller frees it with xmlFreeDoc), so that what is read of it is
 * exactly what was verified, and the file is parsed once. */
apr_status_t rsp_md_verify_tree(apr_pool_t *p, const char *md, apr_size_t len,
                                const char *cert_pem, apr_time_t now,
                                apr_int64_t max_validity_s,
                                apr_time_t *valid_until, xmlDocPtr *tree,
                                const char **err);

#endif
