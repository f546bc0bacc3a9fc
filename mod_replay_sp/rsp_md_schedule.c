/* The refresh schedule of a metadata source (rsp_md_source.h): the
 * xs:duration of a root's cacheDuration, and when to refresh next. Pure
 * functions, no I/O. */
#include <ctype.h>
#include <string.h>

#include <libxml/xmlreader.h>

#include <apr_strings.h>

#include "rsp_md_source.h"
#include "rsp_md_verify.h"

apr_status_t rsp_md_duration_parse(const char *s, apr_int64_t *seconds,
                                   const char **err)
{
    static const char date_units[] = "YMD", time_units[] = "HMS";
    static const apr_int64_t date_mult[] = {365 * 86400, 30 * 86400, 86400};
    static const apr_int64_t time_mult[] = {3600, 60, 1};
    const char *c = s ? s : "";
    apr_int64_t total = 0;
    int in_time = 0, next = 0, any = 0, time_any = 0;

    *err = NULL;
    while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
        c++;
    }
    if (*c == '-') {
        *err = "a negative duration";
        return APR_EINVAL;
    }
    if (*c++ != 'P') {
        *err = "not an xs:duration (no leading P)";
        return APR_EINVAL;
    }
    while (*c && !isspace((unsigned char)*c)) {
        const char *units = in_time ? time_units : date_units;
        const apr_int64_t *mult = in_time ? time_mult : date_mult;
        const char *u;
        apr_int64_t n = 0;
        int frac = 0, k;

        if (*c == 'T') {
            if (in_time) {
                *err = "not an xs:duration (a second T)";
                return APR_EINVAL;
            }
            in_time = 1;
            next = 0;
            c++;
            continue;
        }
        if (!isdigit((unsigned char)*c)) {
            *err = "not an xs:duration (a number expected)";
            return APR_EINVAL;
        }
        for (; isdigit((unsigned char)*c); c++) {
            if (n > (APR_INT64_MAX - (*c - '0')) / 10) {
                *err = "an xs:duration too large";
                return APR_EINVAL;
            }
            n = n * 10 + (*c - '0');
        }
        if (*c == '.') {
            for (c++; isdigit((unsigned char)*c); c++) {
                frac++;
            }
            if (!frac || *c != 'S' || !in_time) {
                *err = "not an xs:duration (a fraction other than of seconds)";
                return APR_EINVAL;
            }
        }
        u = *c ? strchr(units, *c) : NULL;
        if (!u || (k = (int)(u - units)) < next) {
            *err = "not an xs:duration (a unit missing, unknown or out of order)";
            return APR_EINVAL;
        }
        if (n > (RSP_MD_DURATION_MAX_S - total) / mult[k]) {
            *err = "an xs:duration too large (over 100 years)";
            return APR_EINVAL;
        }
        total += n * mult[k];
        next = k + 1;
        any = 1;
        time_any |= in_time;
        c++;
    }
    while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
        c++;
    }
    if (*c) {
        *err = "not an xs:duration (trailing characters)";
        return APR_EINVAL;
    }
    if (!any || (in_time && !time_any)) {
        *err = "not an xs:duration (no number of any unit)";
        return APR_EINVAL;
    }
    *seconds = total;
    return APR_SUCCESS;
}

apr_int64_t rsp_md_cache_duration(apr_pool_t *p, const char *md, apr_size_t len,
                                  const char **err)
{
    xmlTextReaderPtr r;
    xmlChar *v = NULL;
    apr_int64_t s = -1;
    int i, ret = 1;

    *err = NULL;
    if (len > RSP_MD_MAX_SIZE) {
        *err = "too large";
        return -1;
    }
    /* Only as far as the root's start tag: a streaming reader. */
    r = xmlReaderForMemory(md, (int)len, NULL, NULL,
                           XML_PARSE_NONET | XML_PARSE_NOERROR
                               | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    if (!r) {
        *err = "cannot read the document";
        return -1;
    }
    for (i = 0; i < 10000 && (ret = xmlTextReaderRead(r)) == 1; i++) {
        if (xmlTextReaderNodeType(r) == XML_READER_TYPE_ELEMENT) {
            v = xmlTextReaderGetAttribute(r, BAD_CAST "cacheDuration");
            break;
        }
    }
    if (v) {
        const char *why = NULL;
        if (rsp_md_duration_parse((const char *)v, &s, &why) != APR_SUCCESS) {
            *err = apr_psprintf(p, "cacheDuration \"%.64s\" ignored: %s",
                                (const char *)v, why);
            s = -1;
        }
        xmlFree(v);
    }
    else if (ret != 1) {
        *err = "no root element";
    }
    xmlFreeTextReader(r);
    return s;
}

apr_int64_t rsp_md_next_refresh(apr_int64_t interval_s,
                                apr_int64_t cache_duration_s, int failures,
                                apr_time_t valid_until, apr_time_t now)
{
    apr_int64_t base = interval_s > 0 ? interval_s : RSP_MD_REFRESH_DEFAULT_S;
    /* never sooner than a minute, or than the interval asked for when
     * that is shorter */
    apr_int64_t floor = base < RSP_MD_REFRESH_MIN_S ? base : RSP_MD_REFRESH_MIN_S;

    if (cache_duration_s >= 0 && cache_duration_s < base) {
        base = cache_duration_s;
    }
    if (valid_until > 0) {
        apr_int64_t left = valid_until > now ? apr_time_sec(valid_until - now) : 0;
        if (left / 2 < base) {
            base = left / 2;
        }
    }
    if (failures > 0) {
        apr_int64_t backoff = floor;
        int i;
        for (i = 1; i < failures && i < 40 && backoff < base; i++) {
            backoff *= 2;
        }
        if (backoff < base) {
            base = backoff;
        }
    }
    if (base < floor) {
        base = floor;
    }
    return base > RSP_MD_REFRESH_MAX_S ? RSP_MD_REFRESH_MAX_S : base;
}
