/* alloc.c: allocation accounting. Each block carries a small header with its size so that the library
 * can report how much host memory it holds (current, peak) without trusting callers to pass sizes. */
#include "tandem/tandem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* 16 bytes keep the user pointer aligned for any scalar type. */
typedef union {
    size_t size;
    max_align_t align;
} header;

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
    h->size = bytes;
    account_add(bytes);
    atomic_fetch_add(&n_allocs, 1);
    atomic_fetch_add(&n_live, 1);
    return h + 1;
}

void *tdm_malloc(size_t bytes) {
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    return track(malloc(sizeof(header) + bytes), bytes);
}

void *tdm_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t bytes = count * size;
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    /* calloc, not malloc + memset: large blocks arrive as zero pages that cost only when touched. */
    return track(calloc(1, sizeof(header) + bytes), bytes);
}

void *tdm_realloc(void *ptr, size_t bytes) {
    if (!ptr)
        return tdm_malloc(bytes);
    if (bytes > SIZE_MAX - sizeof(header))
        return NULL;
    header *old = (header *)ptr - 1;
    size_t old_size = old->size;
    header *h = realloc(old, sizeof(header) + bytes);
    if (!h)
        return NULL;
    h->size = bytes;
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
    atomic_fetch_sub(&cur_bytes, h->size);
    atomic_fetch_sub(&n_live, 1);
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
