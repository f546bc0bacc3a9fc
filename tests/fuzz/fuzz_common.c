#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>

#include <apr_general.h>
#include <apr_allocator.h>
#include <apr_pools.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>

#include "fuzz_common.h"

/* ---- redzones for pool allocations ----
 *
 * APR hands out pool memory from blocks it maps itself: to ASan a read
 * past the end of one apr_palloc is a read of the next one (or of unused
 * pool memory), never an error. This apr_palloc (the executable's
 * definition wins over libapr's, for libapr's own callers too:
 * apr_pstrdup, apr_pstrcat, apr_array_make, ...) asks for FUZZ_REDZONE
 * more bytes and poisons them, so that a read or write past what was asked
 * for is reported. Each pool's redzones are recorded and unpoisoned by a
 * cleanup of that pool, before its memory is cleared or unmapped (ASan
 * does not reset the shadow of memory that is mapped again).
 *
 * The record is the only state shared between inputs; it is empty between
 * inputs except for the root pool's redzones. */

#define FUZZ_REDZONE 32

typedef void *palloc_fn(apr_pool_t *p, apr_size_t size);

/* Resolved before main, read only after. */
static palloc_fn *real_palloc;

typedef struct rz_pool {
    apr_pool_t *pool;
    char **zones;
    size_t n, cap;
    struct rz_pool *next;
} rz_pool_t;

/* The pools that have poisoned redzones. */
static rz_pool_t *rz_pools;

__attribute__((constructor)) static void find_palloc(void)
{
    real_palloc = (palloc_fn *)dlsym(RTLD_NEXT, "apr_palloc");
    if (!real_palloc) {
        fprintf(stderr, "fuzz: cannot find libapr's apr_palloc\n");
        abort();
    }
}

static apr_status_t rz_release(void *data)
{
    rz_pool_t *r = data, **pp;
    size_t i;

    for (i = 0; i < r->n; i++) {
        ASAN_UNPOISON_MEMORY_REGION(r->zones[i], FUZZ_REDZONE);
    }
    for (pp = &rz_pools; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    free(r->zones);
    free(r);
    return APR_SUCCESS;
}

void *apr_palloc(apr_pool_t *p, apr_size_t size)
{
    char *mem = real_palloc(p, size + FUZZ_REDZONE);
    rz_pool_t *r;

    if (!mem) {
        return mem;
    }
    ASAN_UNPOISON_MEMORY_REGION(mem, size);
    for (r = rz_pools; r && r->pool != p; r = r->next)
        ;
    if (!r) {
        if (!(r = calloc(1, sizeof(*r)))) {
            abort();
        }
        r->pool = p;
        r->next = rz_pools;
        rz_pools = r;
        /* allocates from p: comes back here, and finds r */
        apr_pool_cleanup_register(p, r, rz_release, apr_pool_cleanup_null);
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        if (!(r->zones = realloc(r->zones, r->cap * sizeof(*r->zones)))) {
            abort();
        }
    }
    r->zones[r->n++] = mem + size;
    ASAN_POISON_MEMORY_REGION(mem + size, FUZZ_REDZONE);
    return mem;
}

/* ---- pools ---- */

static apr_pool_t *root;

void fuzz_init(void)
{
    apr_allocator_t *alloc;

    if (root) {
        return;
    }
    /* What lives as long as the process is no leak. */
    __lsan_disable();
    if (apr_initialize() != APR_SUCCESS
        || apr_allocator_create(&alloc) != APR_SUCCESS) {
        fprintf(stderr, "fuzz: cannot initialise APR\n");
        abort();
    }
    /* Keep no free block: every block a pool gives back goes back to the
     * system (unmapped), so a use after its pool ended is reported. */
    apr_allocator_max_free_set(alloc, 1);
    if (apr_pool_create_ex(&root, NULL, NULL, alloc) != APR_SUCCESS) {
        fprintf(stderr, "fuzz: cannot create the root pool\n");
        abort();
    }
    apr_allocator_owner_set(alloc, root);
    __lsan_enable();
}

apr_pool_t *fuzz_root(void)
{
    return root;
}

apr_pool_t *fuzz_pool_begin(void)
{
    apr_pool_t *p;

    if (apr_pool_create(&p, root) != APR_SUCCESS) {
        abort();
    }
    return p;
}

void fuzz_pool_end(apr_pool_t *p)
{
    apr_pool_destroy(p);
}

static apr_status_t free_cleanup(void *data)
{
    free(data);
    return APR_SUCCESS;
}

void *fuzz_malloc(apr_pool_t *p, size_t size)
{
    void *m = malloc(size ? size : 1);

    if (!m) {
        abort();
    }
    apr_pool_cleanup_register(p, m, free_cleanup, apr_pool_cleanup_null);
    return m;
}

char *fuzz_bytes(apr_pool_t *p, const uint8_t *data, size_t size)
{
    char *s = fuzz_malloc(p, size);

    if (size) {
        memcpy(s, data, size);
    }
    return s;
}

char *fuzz_cstr(apr_pool_t *p, const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t len = nul ? (size_t)(nul - data) : size;
    char *s = malloc(len + 1);

    if (!s) {
        abort();
    }
    memcpy(s, data, len);
    s[len] = '\0';
    apr_pool_cleanup_register(p, s, free_cleanup, apr_pool_cleanup_null);
    return s;
}

int fuzz_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}
