/* sp_cache.c: the shortest-path cache (spec section 3): a bounded LRU of TANDEM_SP_CACHE paths per context,
 * keyed by the ordered triple (graph id, s, t) because path(t, s) is the reverse of path(s, t) only on
 * lattices. Thread-safe (one mutex; a lookup is a hash probe and a copy). Entries of a graph are dropped
 * when the graph is freed; anonymous graphs (id 0: caller-made CSR views that may change) are never cached.
 * A hit gives the stored path with the calling query's own time, never the time of the query that filled
 * it. Created lazily on first use and freed by tdm_destroy. */
#include "lattice/lattice_internal.h"

#include <pthread.h>
#include <string.h>

typedef struct {
    uint64_t graph;
    int64_t s, t, hops;
    int64_t *vertex;   /* hops+1 vertices; tdm_malloc */
    int32_t prev, next; /* LRU list (most recent at head), -1 ends */
    int32_t chain;      /* next entry in the same hash bucket, -1 ends */
    int used;
} entry;

struct tdm_lat_cache {
    pthread_mutex_t lock;
    int32_t cap, count, head, tail, free_list;
    uint32_t nbuckets; /* power of two */
    int32_t *bucket;
    entry *e;
    uint64_t hits, misses;
};

static uint32_t hash3(uint64_t g, int64_t s, int64_t t) {
    uint64_t h = g * 0x9E3779B97F4A7C15ull ^ (uint64_t)s * 0xBF58476D1CE4E5B9ull ^ (uint64_t)t * 0x94D049BB133111EBull;
    return (uint32_t)(h ^ (h >> 29) ^ (h >> 41));
}

static tdm_lat_cache *cache_new(int cap) {
    tdm_lat_cache *c = tdm_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->cap = cap;
    c->nbuckets = 1;
    while (c->nbuckets < (uint32_t)cap * 2) c->nbuckets *= 2;
    c->bucket = tdm_malloc(c->nbuckets * sizeof *c->bucket);
    c->e = tdm_calloc((size_t)cap, sizeof *c->e);
    if (!c->bucket || !c->e) {
        tdm_free(c->bucket), tdm_free(c->e), tdm_free(c);
        return NULL;
    }
    memset(c->bucket, 0xff, c->nbuckets * sizeof *c->bucket);
    c->head = c->tail = -1;
    c->free_list = 0;
    for (int32_t i = 0; i < cap; i++) c->e[i].next = i + 1 < cap ? i + 1 : -1; /* free list through next */
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void tdm_lat_cache_free(tdm_lat_cache *c) {
    if (!c) return;
    for (int32_t i = 0; i < c->cap; i++) tdm_free(c->e[i].vertex);
    pthread_mutex_destroy(&c->lock);
    tdm_free(c->bucket), tdm_free(c->e), tdm_free(c);
}

/* The context's cache, made on first use; NULL when TANDEM_SP_CACHE is 0 or memory is short (the cache is
 * an optimisation: without it queries still answer). */
static tdm_lat_cache *get_cache(tdm_ctx *ctx) {
    const int cap = tdm_ctx_config(ctx)->sp_cache;
    if (cap <= 0) return NULL;
    tdm_lat_cache *c = atomic_load(&ctx->lattice_cache);
    if (c) return c;
    tdm_lat_cache *fresh = cache_new(cap);
    if (!fresh) return NULL;
    if (!atomic_compare_exchange_strong(&ctx->lattice_cache, &c, fresh)) {
        tdm_lat_cache_free(fresh); /* another thread made it first */
        return c;
    }
    return fresh;
}

static void lru_unlink(tdm_lat_cache *c, int32_t i) {
    entry *x = &c->e[i];
    if (x->prev >= 0) c->e[x->prev].next = x->next;
    else c->head = x->next;
    if (x->next >= 0) c->e[x->next].prev = x->prev;
    else c->tail = x->prev;
}

static void lru_push_front(tdm_lat_cache *c, int32_t i) {
    entry *x = &c->e[i];
    x->prev = -1;
    x->next = c->head;
    if (c->head >= 0) c->e[c->head].prev = i;
    c->head = i;
    if (c->tail < 0) c->tail = i;
}

/* Removes entry i from its bucket chain, the LRU list and the table; puts it on the free list. */
static void remove_entry(tdm_lat_cache *c, int32_t i) {
    entry *x = &c->e[i];
    int32_t *link = &c->bucket[hash3(x->graph, x->s, x->t) & (c->nbuckets - 1)];
    while (*link != i) link = &c->e[*link].chain;
    *link = x->chain;
    lru_unlink(c, i);
    tdm_free(x->vertex);
    memset(x, 0, sizeof *x);
    x->next = c->free_list;
    c->free_list = i;
    c->count--;
}

int tdm_lat_cache_get(tdm_ctx *ctx, uint64_t graph, int64_t s, int64_t t, tdm_lattice_path *out) {
    tdm_lat_cache *c = graph ? get_cache(ctx) : NULL;
    if (!c) return 0;
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (int32_t i = c->bucket[hash3(graph, s, t) & (c->nbuckets - 1)]; i >= 0; i = c->e[i].chain) {
        entry *x = &c->e[i];
        if (x->graph != graph || x->s != s || x->t != t) continue;
        int64_t *copy = tdm_malloc((size_t)(x->hops + 1) * sizeof *copy);
        if (copy) {
            memcpy(copy, x->vertex, (size_t)(x->hops + 1) * sizeof *copy);
            out->vertex = copy;
            out->hops = x->hops;
            lru_unlink(c, i);
            lru_push_front(c, i);
            found = 1;
        }
        break;
    }
    found ? c->hits++ : c->misses++;
    pthread_mutex_unlock(&c->lock);
    return found;
}

void tdm_lat_cache_put(tdm_ctx *ctx, uint64_t graph, int64_t s, int64_t t, const tdm_lattice_path *p) {
    tdm_lat_cache *c = graph && p->hops >= 0 ? get_cache(ctx) : NULL;
    if (!c) return;
    int64_t *copy = tdm_malloc((size_t)(p->hops + 1) * sizeof *copy);
    if (!copy) return;
    memcpy(copy, p->vertex, (size_t)(p->hops + 1) * sizeof *copy);
    pthread_mutex_lock(&c->lock);
    const uint32_t b = hash3(graph, s, t) & (c->nbuckets - 1);
    for (int32_t i = c->bucket[b]; i >= 0; i = c->e[i].chain)
        if (c->e[i].graph == graph && c->e[i].s == s && c->e[i].t == t) { /* filled meanwhile by another thread */
            pthread_mutex_unlock(&c->lock);
            tdm_free(copy);
            return;
        }
    if (c->free_list < 0) remove_entry(c, c->tail); /* full: evict the least recently used */
    int32_t i = c->free_list;
    c->free_list = c->e[i].next;
    entry *x = &c->e[i];
    *x = (entry){.graph = graph, .s = s, .t = t, .hops = p->hops, .vertex = copy, .chain = c->bucket[b], .used = 1};
    c->bucket[b] = i;
    lru_push_front(c, i);
    c->count++;
    pthread_mutex_unlock(&c->lock);
}

void tdm_lat_cache_drop_graph(tdm_ctx *ctx, uint64_t graph) {
    tdm_lat_cache *c = ctx ? atomic_load(&ctx->lattice_cache) : NULL;
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    for (int32_t i = 0; i < c->cap; i++)
        if (c->e[i].used && c->e[i].graph == graph) remove_entry(c, i);
    pthread_mutex_unlock(&c->lock);
}

size_t tdm_lat_cache_trim(tdm_ctx *ctx, size_t wanted) {
    tdm_lat_cache *c = ctx ? atomic_load(&ctx->lattice_cache) : NULL;
    if (!c) return 0;
    size_t freed = 0;
    pthread_mutex_lock(&c->lock);
    while (c->tail >= 0 && freed < wanted) {
        freed += (size_t)(c->e[c->tail].hops + 1) * sizeof(int64_t);
        remove_entry(c, c->tail);
    }
    pthread_mutex_unlock(&c->lock);
    return freed;
}

void tdm_lat_cache_stats(tdm_ctx *ctx, size_t *entries, uint64_t *hits, uint64_t *misses) {
    tdm_lat_cache *c = ctx ? atomic_load(&ctx->lattice_cache) : NULL;
    size_t n = 0;
    uint64_t h = 0, m = 0;
    if (c) {
        pthread_mutex_lock(&c->lock);
        n = (size_t)c->count, h = c->hits, m = c->misses;
        pthread_mutex_unlock(&c->lock);
    }
    if (entries) *entries = n;
    if (hits) *hits = h;
    if (misses) *misses = m;
}
