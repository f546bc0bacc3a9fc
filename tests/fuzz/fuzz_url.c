/* Store URL parsing (rsp_url.h): ReplaySPStore's value, redis:// and
 * rediss://, redis+sentinel:// and rediss+sentinel://, redis+unix://,
 * memcache:// and memcaches:// with up to RSP_MAX_SERVERS servers. The
 * input is one URL. */
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "rsp_url.h"

static void check_hostport(const char *host, int port)
{
    FUZZ_ASSERT(host && *host);
    FUZZ_ASSERT(port >= 1 && port <= 65535);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool_begin();
    const char *url = fuzz_cstr(p, data, size), *err = NULL;
    rsp_store_url_t *u = NULL;
    int i, j;

    if (rsp_store_url_parse(&u, p, url, &err) != APR_SUCCESS) {
        FUZZ_ASSERT(err && *err);
        fuzz_pool_end(p);
        return 0;
    }
    FUZZ_ASSERT(u && u->display);
    switch (u->kind) {
    case RSP_STORE_REDIS:
        if (u->sentinels) {
            /* the master is asked for at each connection */
            FUZZ_ASSERT(!u->host);
            FUZZ_ASSERT(u->sentinels->nelts >= 1
                        && u->sentinels->nelts <= RSP_MAX_SERVERS);
            FUZZ_ASSERT(u->master_name && *u->master_name
                        && strlen(u->master_name) <= 64);
            for (i = 0; i < u->sentinels->nelts; i++) {
                const rsp_server_t *a =
                    &APR_ARRAY_IDX(u->sentinels, i, rsp_server_t);
                check_hostport(a->host, a->port);
                for (j = 0; j < i; j++) {
                    const rsp_server_t *b =
                        &APR_ARRAY_IDX(u->sentinels, j, rsp_server_t);
                    FUZZ_ASSERT(a->port != b->port || strcasecmp(a->host, b->host));
                }
            }
        }
        else {
            check_hostport(u->host, u->port);
            FUZZ_ASSERT(!u->master_name);
        }
        FUZZ_ASSERT(u->db >= 0);
        if (u->password) {
            /* Never in the logs. */
            FUZZ_ASSERT(*u->password);
            FUZZ_ASSERT(strstr(u->display, ":***@"));
        }
        break;
    case RSP_STORE_REDIS_UNIX:
        FUZZ_ASSERT(u->path && u->path[0] == '/');
        FUZZ_ASSERT(u->db >= 0);
        break;
    case RSP_STORE_MEMCACHE:
        FUZZ_ASSERT(u->servers && u->servers->nelts >= 1
                    && u->servers->nelts <= RSP_MAX_SERVERS);
        for (i = 0; i < u->servers->nelts; i++) {
            const rsp_server_t *a = &APR_ARRAY_IDX(u->servers, i, rsp_server_t);
            check_hostport(a->host, a->port);
            FUZZ_ASSERT(a->name && *a->name);
            /* The key mapping needs distinct servers. */
            for (j = 0; j < i; j++) {
                const rsp_server_t *b =
                    &APR_ARRAY_IDX(u->servers, j, rsp_server_t);
                FUZZ_ASSERT(a->port != b->port || strcasecmp(a->host, b->host));
            }
        }
        break;
    default:
        FUZZ_ASSERT(!"unknown store kind");
    }
    fuzz_pool_end(p);
    return 0;
}
