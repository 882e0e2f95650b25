/* store.c: the append-only pattern store. One arena holds every pattern's symbol ids back to back,
 * addressed by 64-bit offsets, so millions of patterns cost one allocation each for arena and offsets;
 * the length index (ids grouped by exact length, sorted by length) lets queries skip whole length ranges
 * that cannot reach a threshold. */
#include "seq/seq_internal.h"

#include <string.h>

int tdm_seq_store_new(tdm_ctx *ctx, tdm_seq_store **out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_seq_store_new: ctx and out must not be NULL");
    tdm_seq_store *s = tdm_calloc(1, sizeof *s);
    if (!s) return tdm_error(TDM_E_NOMEM, "tdm_seq_store_new: no memory");
    s->ctx = ctx;
    int rc = tdm_seq_vocab_new(&s->vocab);
    if (!rc) {
        s->capoff = 1024;
        s->off = tdm_calloc(s->capoff, sizeof *s->off);
        if (!s->off) rc = tdm_error(TDM_E_NOMEM, "tdm_seq_store_new: no memory");
    }
    if (rc) {
        tdm_seq_store_free(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}

void tdm_seq_store_free(tdm_seq_store *s) {
    if (!s) return;
    tdm_seq_vocab_free(s->vocab);
    tdm_free(s->arena);
    tdm_free(s->off);
    for (size_t i = 0; i < s->nbuckets; i++) tdm_free(s->buckets[i].ids);
    tdm_free(s->buckets);
    for (size_t i = 0; i < s->npost; i++) tdm_free(s->post[i].ids), tdm_free(s->post[i].rep);
    tdm_free(s->post);
    tdm_free(s);
}

tdm_seq_vocab *tdm_seq_store_vocab(tdm_seq_store *s) { return s->vocab; }
const tdm_seq_vocab *tdm_seq_store_vocab_const(const tdm_seq_store *s) { return s->vocab; }
uint32_t tdm_seq_store_count(const tdm_seq_store *s) { return s->count; }
uint64_t tdm_seq_store_total_symbols(const tdm_seq_store *s) { return s->nsym; }
uint32_t tdm_seq_store_max_length(const tdm_seq_store *s) { return s->max_length; }

/* Index of the bucket for length, or where it would be inserted. */
static size_t bucket_pos(const tdm_seq_store *s, uint32_t length) {
    size_t lo = 0, hi = s->nbuckets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->buckets[mid].length < length) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void tdm_seq_store_by_length(const tdm_seq_store *s, uint32_t length, const uint32_t **ids, size_t *n) {
    size_t p = bucket_pos(s, length);
    if (p < s->nbuckets && s->buckets[p].length == length) {
        *ids = s->buckets[p].ids;
        *n = s->buckets[p].n;
    } else {
        *ids = NULL;
        *n = 0;
    }
}

int tdm_seq_store_get(const tdm_seq_store *s, uint32_t id, const uint32_t **syms, size_t *n) {
    if (id >= s->count) return tdm_error(TDM_E_RANGE, "pattern id %u out of range (%u patterns)", id, s->count);
    *syms = s->arena + s->off[id];
    *n = (size_t)(s->off[id + 1] - s->off[id]);
    return TDM_OK;
}

/* Appends id to a list of n entries and room for cap, growing it: 0, or -1 out of memory. */
static int list_push(uint32_t **ids, uint32_t *n, uint32_t *cap, uint32_t id) {
    if (*n == *cap) {
        size_t c = *cap;
        if (tdm_grow((void **)ids, &c, (size_t)*n + 1, sizeof **ids)) return -1;
        *cap = (uint32_t)c;
    }
    (*ids)[(*n)++] = id;
    return 0;
}

/* Adds pattern id to the postings of each distinct symbol, and to rep for each repeat. Ids arrive in
 * increasing order, so a repeated symbol finds id already at the end of its list. On failure the entries
 * made for id are taken out again (they are at the ends of their lists), so that the next pattern, which
 * reuses id, is not counted with symbols it lacks. */
static int index_pattern(tdm_seq_store *s, const uint32_t *syms, size_t n, uint32_t id) {
    for (size_t i = 0; i < n; i++) {
        uint32_t sym = syms[i];
        if (sym >= s->npost) {
            size_t cap = s->npost, want = (size_t)s->vocab->n > (size_t)sym + 1 ? s->vocab->n : (size_t)sym + 1;
            if (tdm_grow((void **)&s->post, &cap, want, sizeof *s->post)) goto undo;
            memset(s->post + s->npost, 0, (cap - s->npost) * sizeof *s->post);
            s->npost = cap;
        }
        tdm_seq_postings *pl = &s->post[sym];
        int rc = pl->n && pl->ids[pl->n - 1] == id ? list_push(&pl->rep, &pl->nrep, &pl->caprep, id)
                                                   : list_push(&pl->ids, &pl->n, &pl->cap, id);
        if (rc) goto undo;
    }
    return 0;
undo:
    for (size_t i = 0; i < n; i++) {
        if (syms[i] >= s->npost) continue;
        tdm_seq_postings *pl = &s->post[syms[i]];
        while (pl->n && pl->ids[pl->n - 1] == id) pl->n--;
        while (pl->nrep && pl->rep[pl->nrep - 1] == id) pl->nrep--;
    }
    return -1;
}

int tdm_seq_store_append_checked(tdm_seq_store *s, const uint32_t *syms, size_t n, uint32_t *id) {
    if (s->count >= UINT32_MAX - 1) return tdm_error(TDM_E_OVERFLOW, "store full (%u patterns)", s->count);
    if (n > UINT32_MAX) return tdm_error(TDM_E_OVERFLOW, "pattern of %zu symbols exceeds 2^32-1", n);
    if (n > SIZE_MAX - s->nsym) return tdm_error(TDM_E_OVERFLOW, "store arena size overflows");
    /* syms may be a stored pattern (from tdm_seq_store_get): growing the arena moves it, so keep its
     * offset and find it again afterwards. */
    uintptr_t a0 = (uintptr_t)s->arena, sp = (uintptr_t)syms;
    int inside = n && s->arena && sp >= a0 && sp < a0 + s->nsym * sizeof *s->arena;
    size_t inside_at = inside ? (size_t)(syms - s->arena) : 0;
    if (tdm_grow((void **)&s->arena, &s->capsym, s->nsym + n, sizeof *s->arena) ||
        tdm_grow((void **)&s->off, &s->capoff, (size_t)s->count + 2, sizeof *s->off))
        return tdm_error(TDM_E_NOMEM, "store: no memory for pattern %u (%zu symbols)", s->count, n);
    if (inside) syms = s->arena + inside_at;
    uint32_t len = (uint32_t)n;
    size_t p = bucket_pos(s, len);
    if (p == s->nbuckets || s->buckets[p].length != len) {
        if (tdm_grow((void **)&s->buckets, &s->capbuckets, s->nbuckets + 1, sizeof *s->buckets))
            return tdm_error(TDM_E_NOMEM, "store: no memory for the length index");
        memmove(s->buckets + p + 1, s->buckets + p, (s->nbuckets - p) * sizeof *s->buckets);
        s->buckets[p] = (tdm_seq_lenbucket){.length = len};
        s->nbuckets++;
    }
    tdm_seq_lenbucket *b = &s->buckets[p];
    if (tdm_grow((void **)&b->ids, &b->cap, b->n + 1, sizeof *b->ids))
        return tdm_error(TDM_E_NOMEM, "store: no memory for the length index");
    if (index_pattern(s, syms, n, s->count)) return tdm_error(TDM_E_NOMEM, "store: no memory for the symbol index");
    if (n && syms != s->arena + s->nsym) memmove(s->arena + s->nsym, syms, n * sizeof *syms);
    s->nsym += n;
    uint32_t nid = s->count++;
    s->off[nid + 1] = s->nsym;
    b->ids[b->n++] = nid;
    if (len > s->max_length) s->max_length = len;
    if (id) *id = nid;
    return TDM_OK;
}

int tdm_seq_store_add(tdm_seq_store *s, const uint32_t *syms, size_t n, uint32_t *id) {
    if (!s || (n && !syms)) return tdm_error(TDM_E_INVAL, "tdm_seq_store_add: NULL argument");
    uint32_t nv = s->vocab->n;
    for (size_t i = 0; i < n; i++)
        if (syms[i] >= nv)
            return tdm_error(TDM_E_RANGE, "tdm_seq_store_add: symbol %zu is %u, not a vocabulary id (< %u)", i,
                             syms[i], nv);
    return tdm_seq_store_append_checked(s, syms, n, id);
}

int tdm_seq_store_add_strings(tdm_seq_store *s, const char *const *syms, const size_t *lens, size_t n,
                              uint32_t *id) {
    if (!s || (n && (!syms || !lens))) return tdm_error(TDM_E_INVAL, "tdm_seq_store_add_strings: NULL argument");
    size_t bytes;
    if (tdm_size_mul(n ? n : 1, sizeof(uint32_t), &bytes))
        return tdm_error(TDM_E_OVERFLOW, "pattern of %zu symbols is too large", n);
    uint32_t *ids = tdm_malloc(bytes);
    if (!ids) return tdm_error(TDM_E_NOMEM, "store: no memory for a pattern of %zu symbols", n);
    int rc = TDM_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = tdm_seq_vocab_intern(s->vocab, syms[i], lens[i], &ids[i]);
        if (rc == TDM_E_UTF8) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", tdm_last_error());
            rc = tdm_error(TDM_E_UTF8, "symbol %zu: %s", i, msg);
        }
    }
    if (!rc) rc = tdm_seq_store_append_checked(s, ids, n, id);
    tdm_free(ids);
    return rc;
}

uint64_t tdm_seq_store_bytes(const tdm_seq_store *s) {
    uint64_t b = (uint64_t)s->capsym * sizeof *s->arena + (uint64_t)s->capoff * sizeof *s->off +
                 (uint64_t)s->capbuckets * sizeof *s->buckets;
    for (size_t i = 0; i < s->nbuckets; i++) b += (uint64_t)s->buckets[i].cap * sizeof(uint32_t);
    b += (uint64_t)s->npost * sizeof *s->post;
    for (size_t i = 0; i < s->npost; i++) b += ((uint64_t)s->post[i].cap + s->post[i].caprep) * sizeof(uint32_t);
    const tdm_seq_vocab *v = s->vocab;
    b += v->capbytes + v->capcps * sizeof *v->cps + v->capoff * sizeof *v->off +
         v->capcpoff * sizeof *v->cpoff + v->caphash * sizeof *v->hash + v->tcap * sizeof *v->table;
    return b;
}

/* Shrinks *buf to n elements (at least one) and updates *cap; keeps the old block if realloc fails. */
static void shrink(void **buf, size_t *cap, size_t n, size_t elem) {
    if (!*buf || *cap <= n) return;
    size_t keep = n ? n : 1;
    void *p = tdm_realloc(*buf, keep * elem);
    if (p) *buf = p, *cap = keep;
}

/* Capacity a shrunk id list keeps. Learning goes on after a load: with lists cut to their exact size, the
 * first append to each list copies it whole, and a learn touches ~20 lists, mostly distinct ones, so
 * learns right after a 10M load took tens of microseconds (4 us p50 at 1M, 9 us at 4M on the developer
 * machine). An eighth of headroom (~9 bytes per pattern) keeps those appends copy-free; the two big
 * arrays (arena, offsets) are single blocks that glibc grows with mremap, so they are cut exactly. */
static size_t list_keep(size_t n) {
    size_t keep = n + n / 8 + 4;
    return keep > UINT32_MAX ? UINT32_MAX : keep;
}

void tdm_seq_store_shrink(tdm_seq_store *s) {
    if (!s) return;
    shrink((void **)&s->arena, &s->capsym, s->nsym, sizeof *s->arena);
    shrink((void **)&s->off, &s->capoff, (size_t)s->count + 1, sizeof *s->off);
    for (size_t i = 0; i < s->nbuckets; i++)
        shrink((void **)&s->buckets[i].ids, &s->buckets[i].cap, list_keep(s->buckets[i].n), sizeof(uint32_t));
    for (size_t i = 0; i < s->npost; i++) {
        size_t cap = s->post[i].cap;
        shrink((void **)&s->post[i].ids, &cap, list_keep(s->post[i].n), sizeof(uint32_t));
        s->post[i].cap = (uint32_t)cap;
        cap = s->post[i].caprep;
        shrink((void **)&s->post[i].rep, &cap, s->post[i].nrep ? list_keep(s->post[i].nrep) : 0, sizeof(uint32_t));
        s->post[i].caprep = (uint32_t)cap;
    }
}
