/* query_index.c: the count bound of a threshold query through the inverted index. For a pattern p, the
 * multiset overlap with the STM is U(p) = sum of min(cS(x), cP(x)) over the STM's distinct symbols x
 * that p contains (cS, cP = counts in the STM and in p): each posting adds 1, and when cS(x) >= 2 the
 * repeat list (a pattern once per further occurrence) adds up to cS(x) - 1 more. The most frequent
 * symbols F (whose STM counts add up to less than the smallest need, Lmin) are not walked: U(p) <=
 * U_W(p) + C_F, where U_W sums over the walked symbols' postings and C_F the STM counts of F. A pattern in
 * no walked posting has U_W = 0 and C_F < Lmin, so it cannot pass; a touched one is kept only if U_W(p) +
 * C_F reaches the need of its own length, checked from the offsets alone, before its symbols are read.
 * The bound is applied in one of two ways: a sorted candidate list when the postings are few (high
 * thresholds), or block by block inside the scan, with the block's counters small enough to stay in the
 * first-level cache (low thresholds, where the walk touches most of the store). */
#include "seq/seq_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

void tdm_seq_walk_clear(tdm_seq_walk *w) {
    tdm_free(w->sym);
    tdm_free(w->cnt);
    tdm_free(w->tneed);
    memset(w, 0, sizeof *w);
}

int tdm_seq_walk_plan(const tdm_seq_store *s, const tdm_seq_stm *q, const uint32_t *need, size_t n_need, tdm_seq_walk *w) {
    memset(w, 0, sizeof *w);
    uint64_t lmin = UINT32_MAX;
    for (size_t n = 0; n < n_need; n++)
        if (need[n] < lmin) lmin = need[n];
    if (lmin == 0 || lmin == UINT32_MAX) return TDM_OK; /* a pattern with nothing in common may pass */
    /* Distinct known symbols with their STM counts, most frequent in the store first. */
    size_t cap = q->n ? q->n : 1;
    uint64_t *key = tdm_malloc(cap * sizeof *key);
    w->sym = tdm_malloc(cap * sizeof *w->sym);
    w->cnt = tdm_malloc(cap * sizeof *w->cnt);
    if (!key || !w->sym || !w->cnt) {
        tdm_free(key);
        tdm_seq_walk_clear(w);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory");
    }
    size_t known = 0;
    for (size_t i = 0; i < q->n; i++) {
        uint32_t sym = q->ids[i];
        if (sym == TDM_SEQ_UNKNOWN) continue;
        uint64_t len = sym < s->npost ? s->post[sym].n : 0;
        key[known++] = (UINT32_MAX - len) << 32 | sym; /* longest postings first, equal symbols together */
    }
    qsort(key, known, sizeof *key, cmp_u64);
    int walking = 0;
    for (size_t i = 0; i < known;) {
        size_t j = i;
        while (j < known && (uint32_t)key[j] == (uint32_t)key[i]) j++;
        uint32_t sym = (uint32_t)key[i], c = (uint32_t)(j - i);
        if (!walking && w->cf + c < lmin) {
            w->cf += c; /* skipped: assumed present in every pattern */
        } else {
            walking = 1;
            w->sym[w->n] = sym, w->cnt[w->n] = c, w->n++;
            w->cost += s->post[sym].n + (c > 1 ? s->post[sym].nrep : 0);
        }
        i = j;
    }
    tdm_free(key);
    if (!(w->tneed = tdm_malloc((n_need ? n_need : 1) * sizeof *w->tneed))) {
        tdm_seq_walk_clear(w);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory");
    }
    for (size_t n = 0; n < n_need; n++)
        w->tneed[n] = need[n] == UINT32_MAX ? 256 : need[n] <= w->cf ? 1 : need[n] - w->cf > 255 ? 255 : (uint16_t)(need[n] - w->cf);
    w->usable = 1;
    return TDM_OK;
}

/* Adds min(c, the pattern's count of the symbol) to u[id], saturating at 255 (which always passes), for
 * every id in lo..hi-1 of the symbol's postings. A repeat entry counts while fewer than c - 1 entries of
 * the same id precede it: the list is ascending, so that is the entry c - 1 places back differing. */
static void add_counts(const tdm_seq_postings *pl, uint32_t c, uint32_t lo, uint32_t hi, uint8_t *restrict u) {
    const uint32_t *ids = pl->ids;
    if (c >= 255) {
        for (uint32_t e = (uint32_t)tdm_seq_lower_bound(ids, pl->n, lo); e < pl->n && ids[e] < hi; e++) u[ids[e] - lo] = 255;
        return;
    }
    for (uint32_t e = (uint32_t)tdm_seq_lower_bound(ids, pl->n, lo); e < pl->n && ids[e] < hi; e++) u[ids[e] - lo] += u[ids[e] - lo] != 255;
    if (c < 2) return;
    const uint32_t *rep = pl->rep, d = c - 1;
    for (uint32_t e = (uint32_t)tdm_seq_lower_bound(rep, pl->nrep, lo); e < pl->nrep && rep[e] < hi; e++)
        u[rep[e] - lo] += u[rep[e] - lo] != 255 && (e < d || rep[e - d] != rep[e]);
}

int tdm_seq_walk_candidates(const tdm_seq_store *s, const tdm_seq_walk *w, uint32_t **cand, size_t *ncand) {
    /* One byte per pattern; 255 means "255 or more" and always makes a candidate, so the bound stays an
     * upper bound. Add the postings up, then revisit them (clearing each byte to see each id once) rather
     * than the whole array, and put the candidates in id order so visits read memory forwards. */
    uint8_t *u = tdm_calloc(s->count ? s->count : 1, 1);
    uint32_t *out = u ? tdm_malloc((w->cost ? w->cost : 1) * sizeof *out) : NULL;
    if (!out) {
        tdm_free(u);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory");
    }
    size_t n = 0;
    for (size_t k = 0; k < w->n; k++) add_counts(&s->post[w->sym[k]], w->cnt[k], 0, UINT32_MAX, u);
    for (size_t k = 0; k < w->n; k++)
        for (uint32_t e = 0; e < s->post[w->sym[k]].n; e++) {
            uint32_t id = s->post[w->sym[k]].ids[e];
            if (!u[id]) continue;
            if (u[id] >= w->tneed[s->off[id + 1] - s->off[id]]) out[n++] = id;
            u[id] = 0;
        }
    qsort(out, n, sizeof *out, cmp_u32);
    tdm_free(u);
    *cand = out;
    *ncand = n;
    return TDM_OK;
}

size_t tdm_seq_walk_block(const tdm_seq_store *s, const tdm_seq_walk *w, uint32_t lo, uint32_t n, uint8_t *restrict u,
                          uint32_t *restrict out) {
    memset(u, 0, n);
    for (size_t k = 0; k < w->n; k++) add_counts(&s->post[w->sym[k]], w->cnt[k], lo, lo + n, u);
    /* Branch-free selection (about half the touched ids pass at low thresholds): id passes when its
     * count reaches t[len] = need[len] - cf, at least 1; 256 (never) where no count passes; a saturated
     * 255 passes wherever a count can. */
    uint16_t *t = w->tneed;
    size_t m = 0;
    const uint64_t *off = s->off + lo;
    for (uint32_t i = 0; i < n; i += 8) {
        uint32_t e = i + 8 < n ? i + 8 : n;
        if (e == i + 8) { /* eight zero counters: nothing to read */
            uint64_t x;
            memcpy(&x, u + i, sizeof x);
            if (!x) continue;
        }
        for (uint32_t j = i; j < e; j++) {
            out[m] = lo + j;
            m += u[j] >= t[off[j + 1] - off[j]];
        }
    }
    return m;
}
