/* What every fuzz target shares: APR set up once, a pool per input, the
 * input as a C string, and invariant checks that abort (so that libFuzzer
 * reports them like a crash). */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <apr_pools.h>

/* apr_initialize and the root pool; call from LLVMFuzzerInitialize. */
void fuzz_init(void);

/* The root pool: lives as long as the process (fixtures loaded once). */
apr_pool_t *fuzz_root(void);

/* A fresh subpool of the root for one input, and its end. Every node of
 * it goes back to the system when it ends, so ASan sees a use after the end
 * and LeakSanitizer sees what was not freed. */
apr_pool_t *fuzz_pool_begin(void);
void fuzz_pool_end(apr_pool_t *p);

/* The input as a NUL-terminated string, up to its first NUL byte if it
 * has one, in a malloc'd block of exactly the string's length + 1 bytes
 * (ASan catches a read past its end), freed with p. */
char *fuzz_cstr(apr_pool_t *p, const uint8_t *data, size_t size);

/* size bytes of malloc'd memory (at least 1), freed with p. */
void *fuzz_malloc(apr_pool_t *p, size_t size);

/* [data, data + size) without a terminator, freed with p: for the APIs
 * that take a length. */
char *fuzz_bytes(apr_pool_t *p, const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c)                                                     \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__,     \
                    __LINE__, #c);                                         \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* Both NULL, or both strings and equal. */
int fuzz_str_eq(const char *a, const char *b);

#endif
