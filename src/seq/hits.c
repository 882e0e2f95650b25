/* hits.c: ordering query results: similarity descending, then id ascending. A query's similarities take
 * few distinct values (each is a function of a count and two lengths), so the hits are sorted by the rank
 * of their value: one pass counts each distinct value (a small hash table on the double's bits), one
 * stable pass places the hits. Stability keeps ids ascending within a value once the input is in id
 * order, which a scan produces; otherwise a radix pass over the id bytes comes first. Comparison sorting
 * remains for tiny inputs and for the (unseen) case of very many distinct values. tdm_seq_rank_table
 * ranks a query's whole similarity table instead, for scans that place hits by rank as they go. */
#include "seq/seq_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DISTINCT 16384

static int cmp_hit(const void *x, const void *y) {
    const tdm_seq_hit *a = x, *b = y;
    if (a->similarity != b->similarity) return a->similarity > b->similarity ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_desc(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a > b ? -1 : a < b;
}

static inline uint64_t bits_of(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* Stable LSD radix sort by id (bytes that are equal everywhere are skipped). */
static void sort_by_id(tdm_seq_hit *h, tdm_seq_hit *tmp, size_t n) {
    tdm_seq_hit *src = h, *dst = tmp;
    for (int pass = 0; pass < 4; pass++) {
        size_t count[256] = {0};
        int shift = 8 * pass;
        for (size_t i = 0; i < n; i++) count[(src[i].id >> shift) & 0xFF]++;
        if (count[(src[0].id >> shift) & 0xFF] == n) continue;
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i].id >> shift) & 0xFF]++] = src[i];
        tdm_seq_hit *t = src;
        src = dst, dst = t;
    }
    if (src != h) memcpy(h, src, n * sizeof *h);
}

void tdm_seq_hits_sort(tdm_seq_hit *h, size_t n) {
    if (n < 2) return;
    if (n < 256) {
        qsort(h, n, sizeof *h, cmp_hit);
        return;
    }
    enum { TCAP = 2 * MAX_DISTINCT };
    uint64_t *keys = tdm_malloc(TCAP * sizeof *keys);
    uint32_t *slot = tdm_calloc(TCAP, sizeof *slot); /* rank index + 1, 0 = empty */
    double *vals = tdm_malloc(MAX_DISTINCT * sizeof *vals);
    size_t *count = tdm_calloc(MAX_DISTINCT, sizeof *count);
    uint32_t *rank_of = tdm_malloc(MAX_DISTINCT * sizeof *rank_of);
    uint32_t *which = tdm_malloc(n * sizeof *which);
    tdm_seq_hit *tmp = tdm_malloc(n * sizeof *tmp);
    size_t distinct = 0;
    int ok = keys && slot && vals && count && rank_of && which && tmp;
    for (size_t i = 0; ok && i < n; i++) { /* the distinct value of each hit, and how many share it */
        uint64_t k = bits_of(h[i].similarity), p = (k * 0x9E3779B97F4A7C15ull) >> 49; /* 15 bits */
        while (slot[p] && keys[p] != k) p = (p + 1) & (TCAP - 1);
        if (!slot[p]) {
            if (distinct == MAX_DISTINCT) {
                ok = 0;
                break;
            }
            keys[p] = k;
            vals[distinct] = h[i].similarity;
            slot[p] = (uint32_t)++distinct;
        }
        which[i] = slot[p] - 1;
        count[slot[p] - 1]++;
    }
    if (ok) {
        int by_id = 1;
        for (size_t i = 1; i < n && by_id; i++) by_id = h[i - 1].id < h[i].id;
        if (!by_id) { /* ids first, then the stable pass by value keeps them ascending */
            sort_by_id(h, tmp, n);
            for (size_t i = 0; i < n; i++) { /* the values moved with their hits: look them up again */
                uint64_t k = bits_of(h[i].similarity), p = (k * 0x9E3779B97F4A7C15ull) >> 49;
                while (keys[p] != k) p = (p + 1) & (TCAP - 1);
                which[i] = slot[p] - 1;
            }
        }
        /* Order the distinct values descending; rank_of[d] = position of value d in that order. */
        double *sorted = (double *)tmp; /* tmp holds n >= 256 hits: room for the distinct values */
        if (distinct * sizeof(double) > n * sizeof *tmp) ok = 0;
        if (ok) {
            memcpy(sorted, vals, distinct * sizeof *sorted);
            qsort(sorted, distinct, sizeof *sorted, cmp_desc);
            for (size_t r = 0; r < distinct; r++) {
                uint64_t k = bits_of(sorted[r]), p = (k * 0x9E3779B97F4A7C15ull) >> 49;
                while (keys[p] != k) p = (p + 1) & (TCAP - 1);
                rank_of[slot[p] - 1] = (uint32_t)r;
            }
            /* Start offset of each rank, then a stable placement. */
            size_t *start = (size_t *)keys; /* the table is no longer needed: reuse it for offsets */
            size_t at = 0;
            for (size_t r = 0; r < distinct; r++) start[r] = 0;
            for (size_t d = 0; d < distinct; d++) start[rank_of[d]] = count[d];
            for (size_t r = 0; r < distinct; r++) {
                size_t c = start[r];
                start[r] = at;
                at += c;
            }
            for (size_t i = 0; i < n; i++) tmp[start[rank_of[which[i]]]++] = h[i];
            memcpy(h, tmp, n * sizeof *h);
        }
    }
    if (!ok) qsort(h, n, sizeof *h, cmp_hit);
    tdm_free(keys);
    tdm_free(slot);
    tdm_free(vals);
    tdm_free(count);
    tdm_free(rank_of);
    tdm_free(which);
    tdm_free(tmp);
}

/* A similarity table ranked (seq_internal.h): its values sorted descending once, equal bits sharing a
 * rank. */
typedef struct {
    double v;
    uint32_t i;
} valued;

static int cmp_desc_value(const void *x, const void *y) {
    double a = ((const valued *)x)->v, b = ((const valued *)y)->v;
    return a > b ? -1 : a < b;
}

int tdm_seq_rank_table(const double *val, size_t e, uint32_t **rank, double **rankval, uint32_t *nrank) {
    valued *by = tdm_malloc((e ? e : 1) * sizeof *by);
    uint32_t *rk = tdm_malloc((e ? e : 1) * sizeof *rk);
    double *rv = tdm_malloc((e ? e : 1) * sizeof *rv);
    int ok = by && rk && rv;
    if (ok) {
        for (size_t i = 0; i < e; i++) by[i] = (valued){val[i], (uint32_t)i};
        qsort(by, e, sizeof *by, cmp_desc_value);
        uint32_t r = 0;
        for (size_t i = 0; i < e; i++) {
            if (i && memcmp(&by[i].v, &by[i - 1].v, sizeof by[i].v)) r++;
            rk[by[i].i] = r;
            rv[r] = by[i].v;
        }
        *rank = rk, *rankval = rv, *nrank = e ? r + 1 : 0;
    } else {
        tdm_free(rk), tdm_free(rv);
    }
    tdm_free(by);
    return ok ? 0 : -1;
}
