/* Golden values for crates/core/src/dict.rs, from Redis 8.6.3's own dict.c.
 *
 * Drives dict.c with a deterministic random stream (splitmix64 standing in for
 * randomULong(), random() and rand()) and prints what the Rust tests
 * `table_sizes_grow_like_redis` and `draws_are_the_ones_redis_makes` expect.
 *
 *   S=/path/to/redis-8.6.3/src
 *   gcc -O1 -I$S -DNDEBUG -o dict-golden scripts/dict-golden.c $S/dict.c $S/siphash.c
 *   ./dict-golden
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dict.h"

static uint64_t sm_state;
static uint64_t sm(void) {
    uint64_t z = (sm_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
unsigned long long genrand64_int64(void) { return sm(); }
long random(void) { return (long)(sm() >> 33); }
int rand(void) { return (int)(sm() >> 33); }

void *zmalloc(size_t n) { return malloc(n); }
void *zcalloc(size_t n) { return calloc(1, n); }
void *ztrycalloc(size_t n) { return calloc(1, n); }
void *zrealloc(void *p, size_t n) { return realloc(p, n); }
void zfree(void *p) { free(p); }
void _serverAssert(const char *e, const char *f, int l) { fprintf(stderr, "assert %s %s:%d\n", e, f, l); abort(); }
uint64_t getMonotonicUs(void) { return 0; }

static uint64_t h(const void *k) { return dictGenHashFunction(k, strlen(k)); }
static int cmp(dictCmpCache *c, const void *a, const void *b) { (void)c; return strcmp(a, b) == 0; }
static dictType t = { h, NULL, NULL, cmp, NULL, NULL, NULL };

static char keys[2000][16];
static void zadd_like(dict *d, char *k) {
    dictEntryLink bucket, link = dictFindLink(d, k, &bucket);
    if (link == NULL) dictSetKeyAtLink(d, k, &bucket, 1);
}
static int idx_of(dictEntry *de) { return atoi((char *)dictGetKey(de) + 7); }

int main(void) {
    dictSetHashFunctionSeed((uint8_t *)"redislab-dict-v1");
    dict *d = dictCreate(&t);
    unsigned long last0 = 0, last1 = 0;
    printf("// inserts (n, size0, size1) on change\n");
    for (int i = 0; i < 1000; i++) {
        snprintf(keys[i], 16, "member:%d", i);
        zadd_like(d, keys[i]);
        unsigned long s0 = dictBuckets(d) - (d->ht_size_exp[1] == -1 ? 0 : 1UL << d->ht_size_exp[1]);
        unsigned long s1 = d->ht_size_exp[1] == -1 ? 0 : 1UL << d->ht_size_exp[1];
        if (s0 != last0 || s1 != last1) printf("(%d, %lu, %lu), ", i + 1, s0, s1);
        last0 = s0; last1 = s1;
    }
    printf("\n");
    sm_state = 42;
    printf("// first 40 fair draws\n");
    uint64_t fp = 1469598103934665603ULL;
    for (int j = 0; j < 20000; j++) {
        int x = idx_of(dictGetFairRandomKey(d));
        if (j < 40) printf("%d, ", x);
        fp = (fp ^ (uint64_t)x) * 1099511628211ULL;
    }
    printf("\n// fingerprint of 20000 fair draws: 0x%016llx\n", (unsigned long long)fp);
    /* Deletes interleaved with all three kinds of draw, through shrinking. */
    fp = 1469598103934665603ULL;
    last0 = last1 = 0;
    printf("// deletes (remaining, size0, size1) on change\n");
    for (int i = 0; i < 995; i++) {
        dictDelete(d, keys[(i * 7) % 1000]);
        dictEntry *a = dictGetRandomKey(d), *b = dictGetFairRandomKey(d);
        dictEntry *some[5];
        unsigned n = dictGetSomeKeys(d, some, 5);
        fp = (fp ^ (uint64_t)idx_of(a)) * 1099511628211ULL;
        fp = (fp ^ (uint64_t)idx_of(b)) * 1099511628211ULL;
        for (unsigned k = 0; k < n; k++) fp = (fp ^ (uint64_t)idx_of(some[k])) * 1099511628211ULL;
        fp = (fp ^ (uint64_t)(1000 + n)) * 1099511628211ULL;
        unsigned long s1 = d->ht_size_exp[1] == -1 ? 0 : 1UL << d->ht_size_exp[1];
        unsigned long s0 = dictBuckets(d) - s1;
        if (s0 != last0 || s1 != last1) printf("(%lu, %lu, %lu), ", dictSize(d), s0, s1);
        last0 = s0; last1 = s1;
    }
    printf("\n// fingerprint of draws during deletes: 0x%016llx\n", (unsigned long long)fp);
    return 0;
}
