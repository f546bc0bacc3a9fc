/* Store URL parsing (rsp_url.h): ReplaySPStore's value, redis:// and
 * rediss://, redis+sentinel:// and rediss+sentinel://, redis+cluster://
 * and rediss+cluster://, redis+unix://, memcache:// and memcaches:// with
 * up to RSP_MAX_SERVERS servers. The input is one URL. */
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "rsp_url.h"

static void check_hostport(const char *host, int port)
{
    FUZZ_ASSERT(host && *host);
    FUZZ_ASSERT(port >= 1 && port <= 65535);
}

/* A list of 1 to RSP_MAX_SERVERS distinct, named host:port. */
static void check_list(const apr_array_header_t *list)
{
    int i, j;

    FUZZ_ASSERT(list && list->nelts >= 1 && list->nelts <= RSP_MAX_SERVERS);
    for (i = 0; i < list->nelts; i++) {
        const rsp_server_t *a = &APR_ARRAY_IDX(list, i, rsp_server_t);
        check_hostport(a->host, a->port);
        FUZZ_ASSERT(a->name && *a->name);
        for (j = 0; j < i; j++) {
            const rsp_server_t *b = &APR_ARRAY_IDX(list, j, rsp_server_t);
            FUZZ_ASSERT(a->port != b->port || strcasecmp(a->host, b->host));
        }
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
    const char *url = fuzz_cstr(p, data, size), *err = NULL;
    rsp_store_url_t *u = NULL;

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
            FUZZ_ASSERT(!u->host && !u->cluster);
            check_list(u->sentinels);
            FUZZ_ASSERT(u->master_name && *u->master_name
                        && strlen(u->master_name) <= 64);
        }
        else if (u->cluster) {
            /* seeds: the map says where each key lives; database 0 */
            FUZZ_ASSERT(!u->host && !u->master_name && u->db == 0);
            check_list(u->cluster);
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
        /* The key mapping needs distinct servers. */
        check_list(u->servers);
        break;
    default:
        FUZZ_ASSERT(!"unknown store kind");
    }
    fuzz_pool_end(p);
    return 0;
}
