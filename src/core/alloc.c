/* alloc.c: allocation accounting. Each block carries a small header with its size so that the library
 * can report how much host memory it holds (current, peak) without trusting callers to pass sizes.
 *
 * Blocks of 4 MB and more (a query's answer of a few hundred thousand hits and up, scratch that grows past
 * that, the store's arena) are mappings of their own, 2 MB-aligned, whole 2 MB pages long, advised for
 * transparent huge pages: a fresh answer is then faulted in 2 MB at a time. From glibc such a block sat
 * at an arbitrary address, and the 4 KB pages at its unaligned ends faulted one by one: for a 5 MB
 * answer most of its pages, which cost a fifth of a batch of lcs queries' time (bench/RESULTS.md, tenth
 * session). Builds with AddressSanitizer keep glibc's blocks, so that its checks cover them.
 *
 * Freed blocks of 4 MB and more from tdm_malloc or tdm_realloc are kept, the four most recent of them
 * and 512 MB in all, and handed to the next large tdm_malloc they fit (at most 1.5 times its size): a
 * fresh mapping is faulted in page by page again, and a caller that answers query after query, freeing
 * each answer, reuses one block (glibc did the same for blocks up to 32 MB, after raising its thresholds;
 * beyond them it gave every block back, and a 10M-pattern answer then cost as much to fault in as to
 * compute: bench/RESULTS.md, sixth session). Blocks from calloc are never kept: no calloc takes one back,
 * and a query's freed counting tables held every slot, so that its answer could no longer be kept. Kept
 * blocks count as freed in the statistics. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE, mremap: <sys/mman.h> hides them under strict C11 */
#include "tandem/tandem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* 16 bytes keep the user pointer aligned for any scalar type: the block's size as the caller sees it and
 * its room (what malloc gave: more when a kept block serves a smaller request; MAPPED set when the block
 * is a mapping of its own, which is then room + the header long). */
typedef union {
    struct {
        size_t size, cap;
    } s;
    max_align_t align;
} header;

#define MAPPED ((size_t)1 << (sizeof(size_t) * 8 - 1))
#define ZEROED ((size_t)1 << (sizeof(size_t) * 8 - 2)) /* from calloc: never kept (no calloc takes one) */
#define ROOM(h) ((h)->s.cap & ~(MAPPED | ZEROED))
#define HUGE ((size_t)2 << 20)
#if defined(__SANITIZE_ADDRESS__) || !defined(MAP_ANONYMOUS)
#define MAP_MIN SIZE_MAX /* never: glibc's blocks, which the sanitizer checks */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAP_MIN SIZE_MAX
#endif
#endif
#ifndef MAP_MIN
#define MAP_MIN ((size_t)4 << 20)
#endif

/* A 2 MB-aligned range of len bytes (a multiple of 2 MB) with protection prot; NULL on failure. */
static char *aligned_range(size_t len, int prot) {
    char *raw = mmap(NULL, len + HUGE, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *at = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (at > raw) munmap(raw, (size_t)(at - raw));
    if (at + len < raw + len + HUGE) munmap(at + len, (size_t)(raw + len + HUGE - (at + len)));
    return at;
}

/* The mapping's length for bytes after the header: whole 2 MB pages. */
static size_t map_length(size_t bytes) { return (sizeof(header) + bytes + HUGE - 1) & ~(HUGE - 1); }

static header *mapped(char *at, size_t len) {
#ifdef MADV_HUGEPAGE
    (void)madvise(at, len, MADV_HUGEPAGE);
#endif
    header *h = (header *)at;
    h->s.cap = (len - sizeof(header)) | MAPPED;
    return h;
}

/* A mapping of whole 2 MB pages, 2 MB-aligned, with room for bytes after the header; NULL on failure. */
static header *map_block(size_t bytes) {
    if (bytes > SIZE_MAX / 2 - 2 * HUGE) return NULL;
    size_t len = map_length(bytes);
    char *at = aligned_range(len, PROT_READ | PROT_WRITE);
    return at ? mapped(at, len) : NULL;
}

/* A mapped block grown to len bytes with no copy: extended where it lies, or its pages moved to a fresh
 * 2 MB-aligned range (mremap); NULL (the block as it was) when neither works. */
static header *grow_mapped(header *old, size_t len) {
    size_t was = ROOM(old) + sizeof(header);
    if (mremap(old, was, len, 0) != MAP_FAILED) return mapped((char *)old, len);
    char *at = aligned_range(len, PROT_NONE);
    if (!at) return NULL;
    if (mremap(old, was, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        munmap(at, len);
        return NULL;
    }
    return mapped(at, len);
}

/* A fresh block with room for bytes: a mapping from MAP_MIN up (glibc's when that fails or below); NULL
 * on failure. */
static header *new_block(size_t bytes) {
    header *h = bytes >= MAP_MIN ? map_block(bytes) : NULL;
    if (!h && (h = malloc(sizeof(header) + bytes)))
        h->s.cap = bytes;
    return h;
}

/* Gives a block back: to the system (a mapping) or to glibc. */
static void release(header *h) {
    if (h->s.cap & MAPPED) munmap(h, ROOM(h) + sizeof(header));
    else free(h);
}

#define KEEP_MIN ((size_t)4 << 20)
#define KEEP_SLOTS 4
#define KEEP_BYTES ((size_t)512 << 20)
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static header *kept[KEEP_SLOTS];
static uint64_t kept_stamp[KEEP_SLOTS], keep_clock; /* when each was kept */
static size_t kept_bytes;

/* A kept block with room for bytes and at most half as much again, the smallest such; NULL if none. */
static header *take_kept(size_t bytes) {
    header *best = NULL;
    int at = -1;
    pthread_mutex_lock(&keep_mu);
    for (int i = 0; i < KEEP_SLOTS; i++) {
        header *h = kept[i];
        if (h && ROOM(h) >= bytes && ROOM(h) - bytes <= bytes / 2 && (!best || ROOM(h) < ROOM(best))) best = h, at = i;
    }
    if (best) kept[at] = NULL, kept_bytes -= ROOM(best);
    pthread_mutex_unlock(&keep_mu);
    return best;
}

/* Keeps a freed large block (not one from calloc, which no calloc would take), making room by giving
 * back the blocks kept longest (so that blocks nobody asks for again do not hold the slots); returns
 * whether it did. */
static int keep(header *h) {
    if ((h->s.cap & ZEROED) || ROOM(h) > KEEP_BYTES) return 0;
    header *out[KEEP_SLOTS];
    int nout = 0, at = -1;
    pthread_mutex_lock(&keep_mu);
    for (;;) {
        int oldest = -1;
        at = -1;
        for (int i = 0; i < KEEP_SLOTS; i++) {
            if (!kept[i]) at = at < 0 ? i : at;
            else if (oldest < 0 || kept_stamp[i] < kept_stamp[oldest]) oldest = i;
        }
        if (at >= 0 && kept_bytes + ROOM(h) <= KEEP_BYTES) break;
        out[nout++] = kept[oldest], kept_bytes -= ROOM(kept[oldest]), kept[oldest] = NULL;
    }
    kept[at] = h, kept_stamp[at] = ++keep_clock, kept_bytes += ROOM(h);
    pthread_mutex_unlock(&keep_mu);
    for (int i = 0; i < nout; i++) release(out[i]);
    return 1;
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
    if (!h)
        h = new_block(bytes);
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
        h->s.cap = bytes | ZEROED;
    return track(h, bytes);
}

/* Moves a block's first keep bytes into a fresh block with room for bytes (new_block);
 * NULL on failure, the old block left as it was. */
static header *move_block(header *old, size_t keep, size_t bytes) {
    header *h = new_block(bytes);
    if (!h)
        return NULL;
    memcpy(h + 1, old + 1, keep);
    release(old);
    return h;
}

void *tdm_realloc(void *ptr, size_t bytes) {
    if (!ptr)
        return tdm_malloc(bytes);
    if (bytes > SIZE_MAX / 2 - 2 * HUGE)
        return NULL;
    header *old = (header *)ptr - 1, *h;
    size_t old_size = old->s.size, keep = bytes < old_size ? bytes : old_size;
    if (old->s.cap & MAPPED) {
        size_t len = ROOM(old) + sizeof(header), need = map_length(bytes);
        if (need <= len) { /* in place: whole 2 MB pages past the new end go back to the system */
            if (need < len) {
                munmap((char *)old + need, len - need);
                old->s.cap = (need - sizeof(header)) | MAPPED;
            }
            h = old;
        } else if (!(h = grow_mapped(old, need))) {
            h = move_block(old, keep, bytes);
        }
    } else if (bytes >= MAP_MIN) {
        h = move_block(old, keep, bytes);
    } else if ((h = realloc(old, sizeof(header) + bytes))) {
        h->s.cap = bytes;
    }
    if (!h)
        return NULL;
    h->s.size = bytes;
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
    if (ROOM(h) >= KEEP_MIN && keep(h))
        return;
    release(h);
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
