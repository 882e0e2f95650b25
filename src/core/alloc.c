/* alloc.c: allocation accounting. Each block carries a small header with its size so that the library
 * can report how much host memory it holds (current, peak) without trusting callers to pass sizes.
 *
 * Large blocks (16 MB and up: a query's answer of a million hits and more) are kept when freed, up to
 * four of them and 512 MB in all, and handed to the next large tdm_malloc they fit (at most 1.5 times its
 * size): glibc returns such blocks to the system at every free, and the next answer then faulted each of
 * its pages in again, which cost as much as computing it (bench/RESULTS.md, sixth session). Kept blocks
 * count as freed in the statistics. */
#include "tandem/tandem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* 16 bytes keep the user pointer aligned for any scalar type: the block's size as the caller sees it and
 * its room (what malloc gave: more when a kept block serves a smaller request). */
typedef union {
    struct {
        size_t size, cap;
    } s;
    max_align_t align;
} header;

#define KEEP_MIN ((size_t)16 << 20)
#define KEEP_SLOTS 4
#define KEEP_BYTES ((size_t)512 << 20)
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static header *kept[KEEP_SLOTS];
static size_t kept_bytes;

/* A kept block with room for bytes and at most half as much again, the smallest such; NULL if none. */
static header *take_kept(size_t bytes) {
    header *best = NULL;
    int at = -1;
    pthread_mutex_lock(&keep_mu);
    for (int i = 0; i < KEEP_SLOTS; i++) {
        header *h = kept[i];
        if (h && h->s.cap >= bytes && h->s.cap - bytes <= bytes / 2 && (!best || h->s.cap < best->s.cap)) best = h, at = i;
    }
    if (best) kept[at] = NULL, kept_bytes -= best->s.cap;
    pthread_mutex_unlock(&keep_mu);
    return best;
}

/* Keeps a freed large block when a slot and the byte budget allow; returns whether it did. */
static int keep(header *h) {
    int done = 0;
    pthread_mutex_lock(&keep_mu);
    for (int i = 0; i < KEEP_SLOTS && !done; i++)
        if (!kept[i] && kept_bytes + h->s.cap <= KEEP_BYTES) kept[i] = h, kept_bytes += h->s.cap, done = 1;
    pthread_mutex_unlock(&keep_mu);
    return done;
}

static atomic_uint_fast64_t cur_bytes, peak_bytes, n_allocs, n_live;

static void account_add(size_t bytes) {
    uint64_t now = atomic_fetch_add(&cur_bytes, bytes) + bytes;
    uint64_t peak = atomic_load(&peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
    }
}

/* Records a fresh block of bytes (h may be NULL: the allocation failed) and returns the caller's part. */
static void *track(header *h, size_t bytes) {
    if (!h)
        return NULL;
    h->s.size = bytes;
    account_add(bytes);
    atomic_fetch_add(&n_allocs, 1);
    atomic_fetch_add(&n_live, 1);
    return h + 1;
}

void *tdm_malloc(size_t bytes) {
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    header *h = bytes >= KEEP_MIN ? take_kept(bytes) : NULL;
    if (!h && (h = malloc(sizeof(header) + bytes)))
        h->s.cap = bytes;
    return track(h, bytes);
}

void *tdm_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t bytes = count * size;
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    /* calloc, not malloc + memset: large blocks arrive as zero pages that cost only when touched (so a
     * kept block, which would need clearing, never serves it). */
    header *h = calloc(1, sizeof(header) + bytes);
    if (h)
        h->s.cap = bytes;
    return track(h, bytes);
}

void *tdm_realloc(void *ptr, size_t bytes) {
    if (!ptr)
        return tdm_malloc(bytes);
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    header *old = (header *)ptr - 1;
    size_t old_size = old->s.size;
    header *h = realloc(old, sizeof(header) + bytes);
    if (!h)
        return NULL;
    h->s.size = h->s.cap = bytes;
    if (bytes >= old_size)
        account_add(bytes - old_size);
    else
        atomic_fetch_sub(&cur_bytes, old_size - bytes);
    return h + 1;
}

void tdm_free(void *ptr) {
    if (!ptr)
        return;
    header *h = (header *)ptr - 1;
    atomic_fetch_sub(&cur_bytes, h->s.size);
    atomic_fetch_sub(&n_live, 1);
    if (h->s.cap >= KEEP_MIN && keep(h))
        return;
    free(h);
}

char *tdm_strndup(const char *s, size_t len) {
    char *p = tdm_malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void tdm_alloc_get_stats(tdm_alloc_stats *out) {
    out->current_bytes = atomic_load(&cur_bytes);
    out->peak_bytes = atomic_load(&peak_bytes);
    out->allocations = atomic_load(&n_allocs);
    out->live = atomic_load(&n_live);
}
