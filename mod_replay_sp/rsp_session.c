#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_lib.h>

#include "rsp_record.h"
#include "rsp_session.h"
#include "rsp_util.h"

const char *rsp_session_hash(apr_pool_t *p, const char *session_id)
{
    return session_id ? rsp_sha256_b64url(p, session_id, strlen(session_id))
                      : NULL;
}

const char *rsp_session_key_of_hash(apr_pool_t *p, const char *prefix,
                                    const char *hash)
{
    return hash ? apr_pstrcat(p, prefix ? prefix : "", "s:", hash, NULL) : NULL;
}

const char *rsp_session_key(apr_pool_t *p, const char *prefix,
                            const char *session_id)
{
    return rsp_session_key_of_hash(p, prefix, rsp_session_hash(p, session_id));
}

const char *rsp_session_user(apr_pool_t *p, const rsp_session_t *s,
                             const char *user_attribute, int qualify)
{
    int i;

    if (user_attribute) {
        for (i = 0; s->attributes && i < s->attributes->nelts; i++) {
            const rsp_attribute_t *a =
                &APR_ARRAY_IDX(s->attributes, i, rsp_attribute_t);
            if (!strcmp(a->name, user_attribute)) {
                return *a->value ? a->value : NULL;
            }
        }
        return NULL;
    }
    if (!s->name_id || !*s->name_id) {
        return NULL;
    }
    return qualify ? apr_pstrcat(p, s->issuer, "!", s->sp, "!", s->name_id,
                                 NULL)
                   : s->name_id;
}

/* Sessions keep their escaping (RSP_RECORD_SESSION): '+' and most
 * punctuation are written as they are. */
const char *rsp_session_encode(apr_pool_t *p, const rsp_session_t *s)
{
    const rsp_record_field_t head[] = {
        {"v", "1"},
        {"sp", s->sp},
        {"iss", s->issuer},
        {"nid", s->name_id},
        {"ct", rsp_record_number(p, s->created)},
        {"exp", rsp_record_number(p, s->expires)},
        {"nidf", s->name_id_format},
        {"sidx", s->session_index},
        {"ch", s->claim_hash}
    };
    int nhead = (int)(sizeof(head) / sizeof(head[0]));
    int nattrs = s->attributes ? s->attributes->nelts : 0, i;
    rsp_record_field_t *f =
        apr_palloc(p, sizeof(*f) * (apr_size_t)(nhead + 2 * nattrs));

    memcpy(f, head, sizeof(head));
    /* Attributes: each value as a pair of fields, name then value. */
    for (i = 0; i < nattrs; i++) {
        const rsp_attribute_t *a =
            &APR_ARRAY_IDX(s->attributes, i, rsp_attribute_t);
        f[nhead + 2 * i].name = "an";
        f[nhead + 2 * i].value = a->name;
        f[nhead + 2 * i + 1].name = "av";
        f[nhead + 2 * i + 1].value = a->value;
    }
    return rsp_record_encode(p, RSP_RECORD_SESSION, f, nhead + 2 * nattrs);
}

static int parse_time_field(const char *v, apr_time_t *out)
{
    char *end;
    apr_int64_t n;

    if (!v || !*v || *v < '0' || *v > '9') {
        return 0;
    }
    errno = 0;
    n = apr_strtoi64(v, &end, 10);
    if (*end || errno || n <= 0) {
        return 0;
    }
    *out = n;
    return 1;
}

apr_status_t rsp_session_decode(rsp_session_t **out, apr_pool_t *p,
                                const char *data, apr_size_t len)
{
    rsp_session_t *s = apr_pcalloc(p, sizeof(*s));
    const char *ct = NULL, *exp = NULL, *version = NULL, **slot;
    const char *pending = NULL;
    rsp_record_iter_t it;
    rsp_record_piece_t f;

    if (memchr(data, '\0', len)) {
        return APR_EINVAL;
    }
    rsp_record_iter_init(&it, data, len);
    while (rsp_record_next(&it, &f)) {
        const char *v;

        if (!f.value) {
            return APR_EINVAL;
        }
        if (!(v = rsp_record_unescape(p, RSP_RECORD_SESSION, &f))) {
            return APR_EINVAL;
        }
        if (rsp_record_is(&f, "an") || rsp_record_is(&f, "av")) {
            /* an=NAME then av=VALUE, repeated: the only repeated fields */
            if (!s->attributes) {
                s->attributes = apr_array_make(p, 4, sizeof(rsp_attribute_t));
            }
            if (f.name[1] == 'n') {
                if (pending) {
                    return APR_EINVAL;
                }
                pending = v;
            }
            else {
                rsp_attribute_t *a;
                if (!pending) {
                    return APR_EINVAL;
                }
                a = apr_array_push(s->attributes);
                a->name = pending;
                a->value = v;
                pending = NULL;
            }
            continue;
        }
        if (rsp_record_is(&f, "v")) slot = &version;
        else if (rsp_record_is(&f, "sp")) slot = &s->sp;
        else if (rsp_record_is(&f, "iss")) slot = &s->issuer;
        else if (rsp_record_is(&f, "nid")) slot = &s->name_id;
        else if (rsp_record_is(&f, "nidf")) slot = &s->name_id_format;
        else if (rsp_record_is(&f, "sidx")) slot = &s->session_index;
        else if (rsp_record_is(&f, "ch")) slot = &s->claim_hash;
        else if (rsp_record_is(&f, "ct")) slot = &ct;
        else if (rsp_record_is(&f, "exp")) slot = &exp;
        else slot = NULL; /* written by a newer replica: ignore */
        if (slot) {
            if (*slot) {
                return APR_EINVAL; /* a field twice: which one counts? */
            }
            *slot = v;
        }
    }
    if (pending || !version || strcmp(version, "1") != 0 || !s->sp || !*s->sp
        || !s->issuer || !*s->issuer || (s->name_id && !*s->name_id)
        || !parse_time_field(ct, &s->created)
        || !parse_time_field(exp, &s->expires)) {
        return APR_EINVAL;
    }
    *out = s;
    return APR_SUCCESS;
}

apr_status_t rsp_session_read(rsp_store_t *st, apr_pool_t *p,
                              const char *prefix, const char *sid, int end,
                              rsp_session_t **sess, int *malformed,
                              const char **err)
{
    const char *skey = rsp_session_key(p, prefix, sid), *val = NULL;
    apr_size_t len = 0;
    apr_status_t rv;
    int deleted = 0;

    *sess = NULL;
    *malformed = 0;
    if ((rv = rsp_store_get(st, p, skey, &val, &len, err)) != APR_SUCCESS
        || !val) {
        return rv;
    }
    if (rsp_session_decode(sess, p, val, len) != APR_SUCCESS) {
        *sess = NULL;
        *malformed = 1;
    }
    return end ? rsp_store_del_if_equal(st, p, skey, val, &deleted, err)
               : APR_SUCCESS;
}
