/* hits.c: ordering query results: similarity descending, then id ascending. A least-significant-digit
 * radix sort (id bytes, then the similarity's bits, which order like the values for non-negative
 * doubles) replaces comparison sorting, which dominated the select step of low-threshold queries that
 * return hundreds of thousands of hits; bytes that are the same in every key are skipped. */
#include "seq/seq_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_hit(const void *x, const void *y) {
    const tdm_seq_hit *a = x, *b = y;
    if (a->similarity != b->similarity) return a->similarity > b->similarity ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Descending similarity as an ascending key: similarities are in [0, 1], never negative or NaN. */
static inline uint64_t sim_key(double sim) {
    uint64_t bits;
    memcpy(&bits, &sim, sizeof bits);
    return ~bits;
}

static inline unsigned byte_of(const tdm_seq_hit *h, int pass) {
    return pass < 4 ? (h->id >> (8 * pass)) & 0xFF : (unsigned)(sim_key(h->similarity) >> (8 * (pass - 4))) & 0xFF;
}

void tdm_seq_hits_sort(tdm_seq_hit *h, size_t n) {
    if (n < 2) return; /* h may be NULL when n is 0, and qsort's pointer must not be */
    if (n < 256) {
        qsort(h, n, sizeof *h, cmp_hit);
        return;
    }
    tdm_seq_hit *tmp = tdm_malloc(n * sizeof *tmp);
    if (!tmp) { /* no scratch: the comparison sort needs none */
        qsort(h, n, sizeof *h, cmp_hit);
        return;
    }
    tdm_seq_hit *src = h, *dst = tmp;
    for (int pass = 0; pass < 12; pass++) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[byte_of(&src[i], pass)]++;
        if (count[byte_of(&src[0], pass)] == n) continue; /* this byte is the same everywhere */
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[byte_of(&src[i], pass)]++] = src[i];
        tdm_seq_hit *t = src;
        src = dst, dst = t;
    }
    if (src != h) memcpy(h, src, n * sizeof *h);
    tdm_free(tmp);
}
