/* Golden values for the scan test of crates/core/src/dict.rs
 * (`scan_walks_like_redis_through_growth_and_shrinking`), from Redis 8.6.3's
 * own dict.c: dictScan's cursors and the keys each call emits, while keys are
 * added between calls (so the table grows and rehashes mid-walk) and, in a
 * second walk, removed (so it shrinks).
 *
 *   S=/path/to/redis-8.6.3/src
 *   gcc -O1 -I$S -DNDEBUG -o dict-scan-golden scripts/dict-scan-golden.c $S/dict.c $S/siphash.c
 *   ./dict-scan-golden
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dict.h"

unsigned long long genrand64_int64(void) { return 0; }
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

static char keys[4000][16];
static void zadd_like(dict *d, char *k) {
    dictEntryLink bucket, link = dictFindLink(d, k, &bucket);
    if (link == NULL) dictSetKeyAtLink(d, k, &bucket, 1);
}

static uint64_t fp;
static void mix(uint64_t x) { fp = (fp ^ x) * 1099511628211ULL; }
static void emit(void *privdata, const dictEntry *de, dictEntryLink plink) {
    (void)privdata; (void)plink;
    mix((uint64_t)atoi((char *)dictGetKey(de) + 7));
}

int main(void) {
    dictSetHashFunctionSeed((uint8_t *)"redislab-dict-v1");
    for (int i = 0; i < 4000; i++) snprintf(keys[i], 16, "member:%d", i);
    dict *d = dictCreate(&t);
    for (int i = 0; i < 300; i++) zadd_like(d, keys[i]);

    /* Walk 1: three keys added after every call. */
    fp = 1469598103934665603ULL;
    unsigned long cursor = 0;
    int next = 300, calls = 0;
    do {
        cursor = dictScan(d, cursor, emit, NULL);
        mix(cursor);
        calls++;
        for (int j = 0; j < 3 && next < 4000; j++) zadd_like(d, keys[next++]);
    } while (cursor != 0);
    printf("// growing walk: %d calls, %d keys at the end, fingerprint 0x%016llx\n",
           calls, (int)dictSize(d), (unsigned long long)fp);

    /* Walk 2: five keys removed after every call (from the top down). */
    fp = 1469598103934665603ULL;
    cursor = 0;
    calls = 0;
    int del = next - 1;
    do {
        cursor = dictScan(d, cursor, emit, NULL);
        mix(cursor);
        calls++;
        for (int j = 0; j < 5 && del >= 40; j++) dictDelete(d, keys[del--]);
    } while (cursor != 0);
    printf("// shrinking walk: %d calls, %d keys at the end, fingerprint 0x%016llx\n",
           calls, (int)dictSize(d), (unsigned long long)fp);
    return 0;
}
