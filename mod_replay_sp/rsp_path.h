/* Request paths and the guarded assertion consumer: which requests an SP
 * might dispatch to the path the guard protects, and which spellings of
 * a path httpd and that SP read the same. */
#ifndef RSP_PATH_H
#define RSP_PATH_H

#include <apr_pools.h>

/* The path of a request target as it was sent (not decoded): the part of
 * an origin-form target ("/a/b?q") or an absolute-form one
 * ("http://h/a/b?q") before '?' or '#'. NULL for "*" and for a target
 * without a path. */
const char *rsp_path_of_target(apr_pool_t *p, const char *target);

/* 1 when some reading of raw (a path as sent) is base or under it: raw as
 * it is, percent-decoded once or twice; path parameters kept, cut at the
 * first ';' (with '?' and '#', decoded ones too), or removed from each
 * segment; '\' read as '/', repeated '/' merged, dot segments resolved
 * or kept; letters in any case. Those are the readings of the SPs the
 * guard is built for (Shibboleth SP cuts at ';' and decodes, Java
 * servlet containers remove ";jsessionid" from each segment, httpd
 * resolves dot segments, some SPs do not). */
int rsp_path_reaches(apr_pool_t *p, const char *raw, const char *base);

/* NULL when raw is spelled so that every reader above reads it as it is:
 * it starts with '/', has only letters, digits and - . _ ~ ! $ & ' ( ) *
 * + , = : @ /, no empty segment ("//"), no "." or ".." segment; else why
 * not ("a percent-encoded byte", "a path parameter (';')", ...). */
const char *rsp_path_noncanonical(const char *raw);

/* 1 when path is base or under it, byte for byte, as httpd matches a
 * <Location base>: base followed by '/' or the end, or, when base ends
 * with '/', any path that starts with base. */
int rsp_path_under(const char *path, const char *base);

#endif
