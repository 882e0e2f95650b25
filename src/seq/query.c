/* query.c: one STM against the whole store. Exact prefilters run in order of cost: the length bound
 * (per length, so whole buckets can be skipped), the inverted index's prefix filter (a pattern that can
 * pass shares a symbol with the query's rarest m-Lmin+1 elements), the symbol-multiset overlap bound,
 * computed in the same pass that maps a pattern's symbols onto the query, and for difflib the
 * bit-parallel LCS, which bounds Ratcliff/Obershelp (RO <= LCS <= overlap). Every bound feeds the
 * metric's own monotone formula, so a pattern is dropped only when even the bound fails: filtered and
 * unfiltered queries return the same results. Work is split into chunks spread over OpenMP threads; the
 * final order is similarity descending, then id ascending, whatever the thread count. */
#include "runtime/prof_internal.h"
#include "seq/seq_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 2048
/* Below this many symbols (or postings) per thread, starting a team costs more than it saves. */
#define WORK_PER_THREAD 200000
#define RANKED_MIN_WORK (1u << 20) /* symbols: below, sorting the few hits costs less than the rank table */

void tdm_seq_query_opts_init(tdm_seq_query_opts *o) {
    *o = (tdm_seq_query_opts){.metric = TDM_SEQ_LCS, .threshold = 0.1};
}

void tdm_seq_result_clear(tdm_seq_result *r) {
    if (!r) return;
    tdm_free(r->hits);
    tdm_free(r->blocks);
    memset(r, 0, sizeof *r);
}

int tdm_seq_result_room(tdm_seq_result *out, int reuse, size_t rows) {
    if (reuse && out->hits && out->cap >= rows) return 0;
    if (reuse) tdm_free(out->hits), tdm_free(out->blocks);
    out->blocks = NULL;
    out->n = out->cap = 0;
    if (!(out->hits = tdm_malloc((rows ? rows : 1) * sizeof *out->hits))) return -1;
    out->cap = rows;
    return 0;
}

void tdm_seq_result_drop_blocks(tdm_seq_result *out) {
    tdm_free(out->blocks);
    out->blocks = NULL;
}

const char *tdm_seq_metric_name(tdm_seq_metric m) {
    switch (m) {
    case TDM_SEQ_LCS: return "lcs";
    case TDM_SEQ_DIFFLIB: return "difflib";
    case TDM_SEQ_CHAR: return "char";
    }
    return "unknown";
}

int tdm_seq_metric_parse(const char *name, tdm_seq_metric *out) {
    for (int m = TDM_SEQ_LCS; m <= TDM_SEQ_CHAR; m++)
        if (name && !strcmp(name, tdm_seq_metric_name((tdm_seq_metric)m))) return *out = (tdm_seq_metric)m, TDM_OK;
    return tdm_error(TDM_E_INVAL, "unknown metric \"%s\" (expected lcs, difflib or char)", name ? name : "(null)");
}

/* The similarity a pattern would get with `count` common elements (LCS length, or difflib's matched
 * count); monotone non-decreasing in count, which is what makes every bound exact. */
static inline double value(tdm_seq_metric metric, size_t count, size_t m, size_t n) {
    switch (metric) {
    case TDM_SEQ_LCS: return tdm_seq_ratio_lcs(count, m, n);
    case TDM_SEQ_CHAR: return tdm_seq_ratio_char(count, m, n);
    case TDM_SEQ_DIFFLIB: return tdm_seq_ratio_difflib(count, m, n);
    }
    return 0.0;
}

/* KATO's acceptance test for a threshold (spec section 2.3). */
static inline int passes(tdm_seq_metric metric, size_t count, size_t m, size_t n, double thr) {
    double sim = value(metric, count, m, n);
    if (metric == TDM_SEQ_DIFFLIB) return sim >= thr;
    /* RapidFuzz's cutoff thr*100-1e-6 on the 0-100 score before the division, then sim >= thr. */
    double r = metric == TDM_SEQ_LCS ? tdm_seq_pct_lcs(count, m, n) : tdm_seq_pct_char(count, m, n);
    return r >= thr * 100.0 - 1e-6 && sim >= thr;
}

/* A unit of work: positions begin..end of a length bucket's ids, of the candidate list (CANDIDATES), of
 * the whole store in id order (NO_BUCKET), or ids begin..end with the index bound applied first (BLOCK). */
#define NO_BUCKET UINT32_MAX
#define CANDIDATES (UINT32_MAX - 1)
#define BLOCK (UINT32_MAX - 2)
/* Ids per BLOCK unit: its one-byte counters stay in the first-level cache while the postings are added. */
#define BLOCK_IDS 16384
#define NEVER UINT32_MAX /* need[] of a length that cannot pass */
/* Positions visit_grouped scores per call of tdm_seq_lcs_many: their patterns (about 330 KB of symbols
 * at KATO's mean length) stay in the second-level cache while the groups read them out of order. */
#define GROUP_SPAN 4096

typedef struct {
    uint32_t bucket, begin, end;
} chunk;

typedef struct {
    const tdm_seq_store *s;
    const tdm_seq_stm *stm;
    const tdm_seq_query_opts *o;
    uint32_t lo, hi;     /* the id range searched */
    tdm_seq_lcsq q;
    size_t m;            /* query length in the metric's units */
    uint8_t *map8;       /* token metrics on large stores: slot+1 of each vocabulary id (0 = absent), */
    uint16_t *map16;     /* one byte wide when the query has < 256 distinct symbols */
    uint32_t *need;      /* threshold mode with prefilters, token metrics: per pattern length, the fewest */
    size_t n_need;       /* common elements that pass (NEVER if none can) */
    tdm_seq_walk walk;   /* the index bound, for BLOCK units */
    int one_exact;       /* BLOCK units: a bound count of exactly 1 is the exact common count (no symbol */
                         /* is left unwalked, and difflib's count equals an LCS of 1) */
    double *sim;         /* threshold mode with prefilters: sim[n * (m + 1) + count], each value computed */
                         /* once (NULL when the table would be large: then computed per hit) */
    uint32_t *rank;      /* ranked placement (scan_range): the table's ranks (tdm_seq_rank_table), */
    double *rankval;     /* the value of each rank, and how many; NULL when hits are sorted instead */
    uint32_t nrank;
    int rowmask;         /* difflib with the STM as b, |STM| <= 64: rows of the bit-parallel matcher are q.masks */
    uint64_t *row64;          /* with mask1, p->rowmask and a store of 8+ symbols per vocabulary id: q.masks by */
                              /* vocabulary id (0 = absent), for visit_rows */
    uint64_t *mask1;          /* threshold queries of one word with map8: q.masks by slot + 1 (mask1[0] = 0), */
    uint64_t live;            /* and the query's bits */
    tdm_seq_lcs_many_in many; /* lcs among them: patterns scored in groups (visit_grouped); many.mask1 NULL */
                              /* otherwise */
} prepared;

typedef struct {
    uint32_t *slots, *cnt, *cps;
    size_t cap_slots, cap_cps;
    uint64_t *V, *arow;
    uint32_t *apos;
    size_t cap_arow, cap_apos;
    uint8_t *u;     /* BLOCK units: the counters and the ids that may pass */
    uint32_t *blk;
    tdm_seq_matcher *matcher;
    tdm_seq_hit *hits;
    size_t nhits, cap_hits;
    tdm_seq_rank_hit *rh; /* ranked placement: hits by rank, in visit order, and the current chunk's */
    size_t nrh, cap_rh;   /* count of hits per rank */
    uint32_t *hist;
    uint32_t *gids;              /* visit_grouped: the ids scored, their counts, each position's verdict */
    uint8_t *gcnt, *gtag;
    tdm_seq_lcs_many_scratch gs;
    tdm_seq_query_stats st;
    int err;
} scratch;

/* "a ranks below b": lower similarity, or equal similarity and a larger id. */
static inline int worse(tdm_seq_hit a, tdm_seq_hit b) { return a.similarity < b.similarity || (a.similarity == b.similarity && a.id > b.id); }

/* A pattern's similarity from its common count and length: the query's table where it has one. */
static inline double similarity(const prepared *p, size_t count, size_t n) {
    return p->sim ? p->sim[n * (p->m + 1) + count] : value(p->o->metric, count, p->m, n);
}

/* Top-k keeps a heap whose root is the worst hit kept. */
static void heap_sift_down(tdm_seq_hit *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && worse(h[l], h[w])) w = l;
        if (r < n && worse(h[r], h[w])) w = r;
        if (w == i) return;
        tdm_seq_hit t = h[i];
        h[i] = h[w], h[w] = t, i = w;
    }
}

static int keep_hit(scratch *sc, const tdm_seq_query_opts *o, tdm_seq_hit hit) {
    if (o->top_k && sc->nhits == o->top_k) {
        if (!worse(sc->hits[0], hit)) return 0;
        sc->hits[0] = hit;
        heap_sift_down(sc->hits, sc->nhits, 0);
        return 0;
    }
    if (sc->nhits == sc->cap_hits) {
        if (tdm_grow((void **)&sc->hits, &sc->cap_hits, sc->nhits + 1, sizeof *sc->hits)) return -1;
    }
    sc->hits[sc->nhits++] = hit;
    if (o->top_k) { /* sift up */
        for (size_t i = sc->nhits - 1; i > 0;) {
            size_t p = (i - 1) / 2;
            if (!worse(sc->hits[i], sc->hits[p])) break;
            tdm_seq_hit t = sc->hits[i];
            sc->hits[i] = sc->hits[p], sc->hits[p] = t, i = p;
        }
    }
    return 0;
}

/* Keeps a threshold hit of count common elements and length n: by rank when the scan places hits by
 * rank (sc->hist set for the chunk), else with its similarity. Returns -1 on allocation failure. */
static int keep_count(const prepared *p, scratch *sc, uint32_t id, size_t count, size_t n) {
    if (!sc->hist) return keep_hit(sc, p->o, (tdm_seq_hit){id, similarity(p, count, n)});
    if (sc->nrh == sc->cap_rh) {
        if (tdm_grow((void **)&sc->rh, &sc->cap_rh, sc->nrh + 1, sizeof *sc->rh)) return -1;
    }
    uint32_t r = p->rank[n * (p->m + 1) + count];
    sc->rh[sc->nrh++] = (tdm_seq_rank_hit){id, r};
    sc->hist[r]++;
    return 0;
}

/* The pattern in the metric's units: symbol ids, or code points of the space-joined symbols. */
static int expand(const prepared *p, scratch *sc, const uint32_t *P, size_t n, const uint32_t **vals, size_t *nv) {
    if (p->o->metric != TDM_SEQ_CHAR) {
        *vals = P, *nv = n;
        return 0;
    }
    const tdm_seq_vocab *v = p->s->vocab;
    size_t total = tdm_seq_joined_length(v, P, n);
    if (tdm_grow((void **)&sc->cps, &sc->cap_cps, total + 1, sizeof *sc->cps)) return -1;
    tdm_seq_joined_write(v, P, n, sc->cps);
    *vals = sc->cps, *nv = total;
    return 0;
}

/* Maps the pattern's elements that occur in the query to their slots, in order, and returns the multiset
 * overlap bound (with cnt NULL, the weaker k: a query of one word computes the exact LCS in about
 * the time the multiset count takes); with pos, also their positions in the pattern (difflib's rows). The symbol-map loops are
 * branch-free: every element is written and the cursor advances only for a hit. cnt is all zero on entry
 * and on return. */
#define MAP_LOOP(map)                                                                                              \
    do {                                                                                                           \
        if (pos)                                                                                                   \
            for (size_t t = 0; t < n; t++) {                                                                       \
                uint32_t sl = (map)[vals[t]];                                                                      \
                slots[k] = sl - 1, pos[k] = (uint32_t)t;                                                           \
                k += sl != 0;                                                                                      \
            }                                                                                                      \
        else                                                                                                       \
            for (size_t t = 0; t < n; t++) {                                                                       \
                uint32_t sl = (map)[vals[t]];                                                                      \
                slots[k] = sl - 1;                                                                                 \
                k += sl != 0;                                                                                      \
            }                                                                                                      \
    } while (0)
static size_t collect(const prepared *p, const uint32_t *restrict vals, size_t n, uint32_t *restrict slots,
                      uint32_t *restrict pos, uint32_t *restrict cnt, size_t *nslots) {
    size_t k = 0;
    if (p->map8) {
        MAP_LOOP(p->map8);
    } else if (p->map16) {
        MAP_LOOP(p->map16);
    } else {
        for (size_t t = 0; t < n; t++) {
            int64_t sl = tdm_seq_valset_find(&p->q.set, vals[t]);
            if (sl >= 0) {
                if (pos) pos[k] = (uint32_t)t;
                slots[k++] = (uint32_t)sl;
            }
        }
    }
    *nslots = k;
    if (!cnt) return k; /* no multiset bound asked for: k bounds it */
    const uint32_t *restrict qc = p->q.count;
    size_t overlap = 0;
    for (size_t t = 0; t < k; t++) overlap += cnt[slots[t]]++ < qc[slots[t]];
    for (size_t t = 0; t < k; t++) cnt[slots[t]] = 0;
    *nslots = k;
    return overlap;
}
#undef MAP_LOOP

/* difflib's matched count for pattern P (of np symbols) and the STM, in the requested argument order,
 * given lcs = their LCS length (an upper bound) and the k elements of P found in the STM (their slots
 * and, when p->rowmask is set, positions, from collect). When autojunk cannot act (it needs b of 200 or
 * more), difflib matches every common element the LCS can: an LCS of 0 or 1 is the count itself. With
 * the STM as b and at most 64 long, the rows are the query's own bit sets. */
static int difflib_count(const prepared *p, scratch *sc, const uint32_t *P, size_t np, size_t lcs, size_t k,
                         size_t *count) {
    const tdm_seq_block *bl;
    size_t nbl, nb = p->o->stm_first ? np : p->stm->n;
    if (lcs <= 1 && (!p->o->autojunk || nb < 200)) return *count = lcs, 0;
    if (p->rowmask) {
        if (tdm_grow((void **)&sc->arow, &sc->cap_arow, k + 1, sizeof *sc->arow)) return -1;
        for (size_t e = 0; e < k; e++) sc->arow[e] = p->q.masks[sc->slots[e]];
        *count = tdm_seq_difflib_count_rows(sc->apos, sc->arow, k, np, p->stm->n, lcs);
        return 0;
    }
    if (p->o->stm_first) {
        int rc = tdm_seq_matcher_set_b(sc->matcher, P, np, p->o->autojunk);
        return rc ? rc : tdm_seq_matcher_blocks(sc->matcher, p->stm->ids, p->stm->n, &bl, &nbl, count);
    }
    return tdm_seq_matcher_blocks(sc->matcher, P, np, &bl, &nbl, count);
}

/* The count pattern id needs (its length in *n), or NEVER when its length cannot pass (counted). */
static inline uint32_t length_need(const prepared *p, scratch *sc, uint32_t id, size_t *n) {
    *n = (size_t)(p->s->off[id + 1] - p->s->off[id]);
    uint32_t need = *n < p->n_need ? p->need[*n] : NEVER;
    if (need == NEVER) sc->st.length_pruned++;
    return need;
}

/* Threshold query with prefilters on a token metric: every test is an integer compare against the
 * count the pattern's length needs. Returns -1 on allocation failure. */
static int visit_need(const prepared *p, scratch *sc, uint32_t id) {
    size_t n;
    uint32_t need = length_need(p, sc, id, &n);
    if (need == NEVER) return 0;
    const uint32_t *P = p->s->arena + p->s->off[id];
    if ((n + 1 > sc->cap_slots && tdm_grow((void **)&sc->slots, &sc->cap_slots, n + 1, sizeof *sc->slots)) ||
        (p->rowmask && n + 1 > sc->cap_apos && tdm_grow((void **)&sc->apos, &sc->cap_apos, n + 1, sizeof *sc->apos)))
        return -1;
    size_t k, overlap = collect(p, P, n, sc->slots, p->rowmask ? sc->apos : NULL, p->q.words == 1 ? NULL : sc->cnt, &k);
    if (overlap < need) {
        sc->st.multiset_pruned++;
        return 0;
    }
    size_t count = p->q.words == 1 ? tdm_seq_lcsq_word(&p->q, sc->slots, k) : tdm_seq_lcsq_run(&p->q, sc->slots, k, sc->V);
    if (p->o->metric == TDM_SEQ_DIFFLIB) {
        if (count < need) {
            sc->st.lcs_pruned++;
            return 0;
        }
        if (difflib_count(p, sc, P, n, count, k, &count)) return -1;
    }
    sc->st.scored++;
    if (count < need) return 0;
    return keep_count(p, sc, id, count, n);
}

/* visit_need for difflib with the STM as b, of one word, and map8 (p->rowmask, p->row64). One pass over
 * the pattern lists the rows of its elements found in the STM (their STM positions, read by vocabulary
 * id from row64: one load, where the slot map and the slot's mask were two in a chain), counts them (the
 * first bound), and notes whether two adjacent elements hold a run of two (an absent element's row is
 * empty, so it ends every run). With no run, difflib's count is the chain over the rows (as in
 * tdm_seq_difflib_chain, whose adjacency test the pass has done). Otherwise (about one pattern in seven)
 * the positions are listed in a second pass, and the LCS bounds the block search and tells where it may
 * stop. On the GPU machine's host this took a difflib thr 0.1 query from 17.9-18.3 to 16.0-17.0 ms, the
 * positions' second pass alone gaining nothing (bench/RESULTS.md, eleventh session). Returns -1 on
 * allocation failure. */
static int visit_rows(const prepared *p, scratch *sc, uint32_t id) {
    size_t n;
    uint32_t need = length_need(p, sc, id, &n);
    if (need == NEVER) return 0;
    if ((n + 1 > sc->cap_arow && tdm_grow((void **)&sc->arow, &sc->cap_arow, n + 1, sizeof *sc->arow)) ||
        (n + 1 > sc->cap_apos && tdm_grow((void **)&sc->apos, &sc->cap_apos, n + 1, sizeof *sc->apos)))
        return -1;
    const uint32_t *restrict P = p->s->arena + p->s->off[id];
    const uint64_t *restrict row64 = p->row64;
    uint64_t *restrict rows = sc->arow;
    uint64_t prev = 0, two = 0;
    size_t k = 0;
    for (size_t t = 0; t < n; t++) { /* branch-free, as collect */
        uint64_t r = row64[P[t]];
        rows[k] = r;
        two |= r & (prev << 1);
        prev = r;
        k += r != 0;
    }
    if (k < need) {
        sc->st.multiset_pruned++;
        return 0;
    }
    size_t count;
    if (!two) {
        uint64_t above = ~0ull;
        count = 0;
        for (size_t e = 0; e < k; e++) count += (size_t)tdm_seq_chain_take(rows[e], &above);
    } else {
        uint32_t *restrict pos = sc->apos;
        uint64_t v = ~0ull;
        k = 0;
        for (size_t t = 0; t < n; t++) {
            uint64_t r = row64[P[t]];
            pos[k] = (uint32_t)t;
            v = tdm_seq_lcs_step(v, r); /* an empty row leaves v as it is */
            k += r != 0;
        }
        size_t lcs = tdm_seq_lcs_of(v, p->live);
        if (lcs < need) {
            sc->st.lcs_pruned++;
            return 0;
        }
        count = tdm_seq_difflib_count_search(pos, rows, k, n, p->stm->n, lcs);
    }
    sc->st.scored++;
    if (count < need) return 0;
    return keep_count(p, sc, id, count, n);
}

/* visit_need for positions begin..end of a chunk's ids (ids NULL: the ids begin..end) when the query
 * scores in groups (p->many): the ids the length table keeps are scored together by tdm_seq_lcs_many,
 * span by span, then kept in id order. u: a BLOCK's walked counts (from its first id block_lo), else NULL.
 * The LCS is computed outright, as cheap as the count bound would be, so no pattern is counted as
 * pruned by that bound. Returns -1 on allocation failure. */
static int visit_grouped(const prepared *p, scratch *sc, const uint32_t *ids, uint32_t begin, uint32_t end, const uint8_t *u,
                         uint32_t block_lo) {
    const uint64_t *off = p->s->off;
    for (uint32_t b = begin; b < end; b += GROUP_SPAN) {
        uint32_t e = end - b > GROUP_SPAN ? b + GROUP_SPAN : end;
        size_t ns = 0;
        for (uint32_t i = b; i < e; i++) {
            uint32_t id = ids ? ids[i] : i;
            size_t n;
            uint8_t tag = 2;
            if (length_need(p, sc, id, &n) == NEVER) tag = 0;
            else if (u && p->one_exact && u[id - block_lo] == 1) tag = 1; /* as in scan_range */
            else sc->gids[ns++] = id;
            sc->gtag[i - b] = tag;
        }
        if (tdm_seq_lcs_many(&p->many, sc->gids, ns, sc->gcnt, &sc->gs)) return -1;
        size_t j = 0;
        for (uint32_t i = b; i < e; i++) {
            uint8_t tag = sc->gtag[i - b];
            if (!tag) continue;
            uint32_t id = ids ? ids[i] : i;
            size_t n = (size_t)(off[id + 1] - off[id]), count = tag == 1 ? 1 : sc->gcnt[j++];
            sc->st.scored++;
            if (count >= p->need[n] && keep_count(p, sc, id, count, n)) return -1;
        }
    }
    return 0;
}

/* Every other query: the char metric (lengths in code points), top-k (a moving bar: the k-th best
 * similarity so far in this thread) and unfiltered scoring. Returns -1 on allocation failure. */
static int visit_any(const prepared *p, scratch *sc, uint32_t id) {
    const tdm_seq_query_opts *o = p->o;
    const tdm_seq_store *s = p->s;
    const uint32_t *P = s->arena + s->off[id];
    size_t np = (size_t)(s->off[id + 1] - s->off[id]), n;
    const uint32_t *vals;
    if (expand(p, sc, P, np, &vals, &n)) return -1;
    int filter = !o->no_prefilter;
    /* The bar a bound must reach: the k-th best so far, or the threshold. */
#define BELOW(bound) (o->top_k ? sc->nhits == o->top_k && value(o->metric, (bound), p->m, n) < sc->hits[0].similarity \
                               : !passes(o->metric, (bound), p->m, n, o->threshold))
    if (filter && BELOW(n < p->m ? n : p->m)) {
        sc->st.length_pruned++;
        return 0;
    }
    if (tdm_grow((void **)&sc->slots, &sc->cap_slots, n + 1, sizeof *sc->slots) ||
        (p->rowmask && tdm_grow((void **)&sc->apos, &sc->cap_apos, n + 1, sizeof *sc->apos)))
        return -1;
    size_t k, overlap = collect(p, vals, n, sc->slots, p->rowmask ? sc->apos : NULL, sc->cnt, &k);
    if (filter && BELOW(overlap)) {
        sc->st.multiset_pruned++;
        return 0;
    }
    size_t count = tdm_seq_lcsq_run(&p->q, sc->slots, k, sc->V);
    if (o->metric == TDM_SEQ_DIFFLIB) {
        if (filter && BELOW(count)) {
            sc->st.lcs_pruned++;
            return 0;
        }
        if (difflib_count(p, sc, P, np, count, k, &count)) return -1;
    }
#undef BELOW
    sc->st.scored++;
    if (!o->top_k && !passes(o->metric, count, p->m, n, o->threshold)) return 0;
    return keep_hit(sc, o, (tdm_seq_hit){id, value(o->metric, count, p->m, n)});
}

static void scratch_free(scratch *sc) {
    tdm_free(sc->slots);
    tdm_free(sc->cnt);
    tdm_free(sc->cps);
    tdm_free(sc->V);
    tdm_free(sc->arow);
    tdm_free(sc->apos);
    tdm_free(sc->u);
    tdm_free(sc->blk);
    tdm_free(sc->hits);
    tdm_free(sc->rh);
    tdm_free(sc->gids);
    tdm_seq_lcs_many_free(&sc->gs);
    tdm_free(sc->gcnt);
    tdm_free(sc->gtag);
    tdm_seq_matcher_free(sc->matcher);
}

static int scratch_init(const prepared *p, scratch *sc) {
    memset(sc, 0, sizeof *sc);
    sc->cnt = tdm_calloc(p->q.set.nslots + 1, sizeof *sc->cnt);
    sc->V = tdm_malloc(p->q.words * sizeof *sc->V);
    if (!sc->cnt || !sc->V) return -1;
    if (p->walk.usable && (!(sc->u = tdm_malloc(BLOCK_IDS)) || !(sc->blk = tdm_malloc(BLOCK_IDS * sizeof *sc->blk)))) return -1;
    if (p->many.mask1 && (!(sc->gids = tdm_malloc(GROUP_SPAN * sizeof *sc->gids)) || !(sc->gcnt = tdm_malloc(GROUP_SPAN)) || !(sc->gtag = tdm_malloc(GROUP_SPAN))))
        return -1;
    if (p->o->metric == TDM_SEQ_DIFFLIB) {
        if (tdm_seq_matcher_new(&sc->matcher)) return -1;
        if (!p->o->stm_first && tdm_seq_matcher_set_b(sc->matcher, p->stm->ids, p->stm->n, p->o->autojunk)) return -1;
    }
    return 0;
}

static int check_opts(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o) {
    if (!s || !stm || !o) return tdm_error(TDM_E_INVAL, "tdm_seq_query: NULL argument");
    if (o->metric < TDM_SEQ_LCS || o->metric > TDM_SEQ_CHAR) return tdm_error(TDM_E_INVAL, "tdm_seq_query: unknown metric %d", (int)o->metric);
    if (!o->top_k && !(o->threshold >= 0.0 && o->threshold <= 1.0))
        return tdm_error(TDM_E_INVAL, "tdm_seq_query: threshold %g outside [0, 1]", o->threshold);
    if (o->threads < 0 || o->threads > 1024) return tdm_error(TDM_E_INVAL, "tdm_seq_query: threads %d outside 0..1024", o->threads);
    for (size_t i = 0; i < stm->n; i++)
        if (stm->ids[i] != TDM_SEQ_UNKNOWN && stm->ids[i] >= s->vocab->n)
            return tdm_error(TDM_E_RANGE, "tdm_seq_query: STM symbol %zu is %u, not a vocabulary id", i, stm->ids[i]);
    return TDM_OK;
}

/* What a query owns besides its results: the plan of work. */
typedef struct {
    uint32_t *cand;
    size_t ncand;
    chunk *chunks;
    size_t nchunks, cap;
    uint64_t work; /* symbols the plan will read, to size the thread team */
} plan;

static void query_release(prepared *p, plan *pl) {
    tdm_free(pl->cand);
    tdm_free(pl->chunks);
    tdm_free(p->map8);
    tdm_free(p->map16);
    tdm_free(p->need);
    tdm_free(p->sim);
    tdm_free(p->rank);
    tdm_free(p->rankval);
    tdm_free(p->mask1);
    tdm_free(p->row64);
    tdm_seq_walk_clear(&p->walk);
    tdm_seq_lcsq_clear(&p->q);
}

/* Chunks over positions begin..end of a unit. */
static int add_chunks(plan *pl, uint32_t unit, size_t begin, size_t end) {
    for (size_t i = begin; i < end; i += CHUNK) {
        if (tdm_grow((void **)&pl->chunks, &pl->cap, pl->nchunks + 1, sizeof *pl->chunks)) return -1;
        pl->chunks[pl->nchunks++] = (chunk){unit, (uint32_t)i, (uint32_t)(i + CHUNK < end ? i + CHUNK : end)};
    }
    return 0;
}

double *tdm_seq_sim_table(tdm_seq_metric metric, size_t m, size_t n_need) {
    size_t row = m + 1;
    double *t = tdm_malloc((n_need ? n_need : 1) * row * sizeof *t);
    for (size_t n = 0; t && n < n_need; n++)
        for (size_t c = 0; c < row; c++) t[n * row + c] = value(metric, c, m, n);
    return t;
}

int tdm_seq_need_table(const tdm_seq_store *s, size_t m, const tdm_seq_query_opts *o, uint32_t **need, size_t *n_need) {
    size_t nn = (size_t)s->max_length + 1;
    uint32_t *t = tdm_malloc(nn * sizeof *t);
    if (!t) return -1;
    for (size_t n = 0; n < nn; n++) t[n] = NEVER;
    for (size_t b = 0; b < s->nbuckets; b++) {
        size_t n = s->buckets[b].length, lo = 0, hi = n < m ? n : m;
        if (!passes(o->metric, hi, m, n, o->threshold)) continue;
        while (lo < hi) { /* the smallest passing count; passes() is monotone in it */
            size_t mid = lo + (hi - lo) / 2;
            if (passes(o->metric, mid, m, n, o->threshold)) hi = mid;
            else lo = mid + 1;
        }
        t[n] = (uint32_t)lo;
    }
    *need = t;
    *n_need = nn;
    return 0;
}

/* Some length passes with at most an eighth of the elements in play (STM length m plus pattern length;
 * KATO's 0.1 needs about a twentieth, 0.5 a quarter). */
int tdm_seq_answers_many(const uint32_t *need, size_t n_need, size_t m) {
    for (size_t n = 0; n < n_need; n++)
        if (need[n] != NEVER && (uint64_t)need[n] * 8 <= m + n) return 1;
    return 0;
}

/* Whether the index's postings are few enough to list the candidates outright (an entry costs about what
 * reading two stored symbols does) rather than apply the bound block by block in the scan. */
static int candidate_list(const tdm_seq_walk *w, uint64_t range_sym, uint32_t count) {
    return w->usable && w->cost * 2 <= range_sym && w->cost * 16 < count;
}

/* Prepares the query (bit masks, symbol map, needed counts) and plans the work. When the inverted index
 * narrows the candidates enough, only they are visited; when the length bound keeps few patterns, only
 * the kept length buckets; otherwise the store is scanned in id order (sequential memory) and the length
 * table skips computation. Char lengths are per pattern, so char and top-k queries always scan.
 * Returns a status, or -1 for "no memory" without a message. */
static int prepare(prepared *p, plan *pl, tdm_seq_query_stats *st) {
    const tdm_seq_store *s = p->s;
    const tdm_seq_stm *stm = p->stm;
    const tdm_seq_query_opts *o = p->o;
    int char_mode = o->metric == TDM_SEQ_CHAR;
    p->m = char_mode ? stm->ncp : stm->n;
    int rc = tdm_seq_lcsq_build(&p->q, char_mode ? stm->cps : stm->ids, p->m, !char_mode);
    if (rc) return rc;
    /* A direct map beats hashing once the scan reads more symbols than the map has entries. */
    uint32_t ns = p->q.set.nslots;
    if (!char_mode && s->nsym >= s->vocab->n && s->vocab->n && ns < 65535) {
        if (ns < 255 ? !(p->map8 = tdm_calloc(s->vocab->n, 1)) : !(p->map16 = tdm_calloc(s->vocab->n, 2))) return -1;
        for (size_t i = 0; i < stm->n; i++) {
            if (stm->ids[i] == TDM_SEQ_UNKNOWN) continue;
            uint32_t sl = (uint32_t)tdm_seq_valset_find(&p->q.set, stm->ids[i]) + 1;
            if (p->map8) p->map8[stm->ids[i]] = (uint8_t)sl;
            else p->map16[stm->ids[i]] = (uint16_t)sl;
        }
    }
    p->rowmask = o->metric == TDM_SEQ_DIFFLIB && !o->stm_first && stm->n <= 64;
    uint64_t range = p->hi - p->lo, range_sym = s->off[p->hi] - s->off[p->lo];
    if (o->no_prefilter || o->top_k || char_mode) {
        pl->work = range_sym;
        return add_chunks(pl, NO_BUCKET, p->lo, p->hi);
    }
    if (tdm_seq_need_table(s, p->m, o, &p->need, &p->n_need)) return -1;
    if (p->q.words == 1 && p->map8) { /* visit_grouped (lcs) and visit_rows (difflib) read masks by map8 */
        if (!(p->mask1 = tdm_calloc(256, sizeof *p->mask1))) return -1;
        for (uint32_t k = 0; k < ns; k++) p->mask1[k + 1] = p->q.masks[k];
        p->live = tdm_seq_live_bits(p->m);
        if (o->metric == TDM_SEQ_LCS) p->many = (tdm_seq_lcs_many_in){s->arena, s->off, p->map8, p->mask1, p->live};
        if (p->rowmask && s->nsym >= (size_t)s->vocab->n * 8) { /* the table costs less than the scan */
            if (!(p->row64 = tdm_calloc(s->vocab->n, sizeof *p->row64))) return -1;
            for (size_t i = 0; i < stm->n; i++)
                if (stm->ids[i] != TDM_SEQ_UNKNOWN) p->row64[stm->ids[i]] = p->mask1[p->map8[stm->ids[i]]];
        }
    }
    if ((uint64_t)p->n_need * (p->m + 1) <= TDM_SEQ_LANES_TABLE && !(p->sim = tdm_seq_sim_table(o->metric, p->m, p->n_need)))
        return -1; /* the values a hit can take, once each */
    uint64_t kept = 0, kept_sym = 0;
    for (size_t b = 0; b < s->nbuckets; b++) {
        if (p->need[s->buckets[b].length] == NEVER) continue;
        size_t a = tdm_seq_lower_bound(s->buckets[b].ids, s->buckets[b].n, p->lo), z = tdm_seq_lower_bound(s->buckets[b].ids, s->buckets[b].n, p->hi);
        kept += z - a;
        kept_sym += (uint64_t)(z - a) * s->buckets[b].length;
    }
    if (!kept) {
        st->length_pruned = range;
        return 0;
    }
    /* The index bound: skipped when walking the postings costs more than a scan (an entry costs about
     * what reading two stored symbols does, and the postings cover the whole store, however small the
     * range); a candidate list when the postings are few; otherwise applied block by block in the scan. */
    tdm_seq_walk w;
    if ((rc = tdm_seq_walk_plan(s, stm, p->need, p->n_need, &w))) return rc;
    if (candidate_list(&w, range_sym, s->count)) {
        rc = tdm_seq_walk_candidates(s, &w, &pl->cand, &pl->ncand);
        tdm_seq_walk_clear(&w);
        if (rc) return rc;
        size_t k = 0; /* the postings cover the whole store: keep the range */
        for (size_t i = 0; i < pl->ncand; i++)
            if (pl->cand[i] >= p->lo && pl->cand[i] < p->hi) pl->cand[k++] = pl->cand[i];
        pl->ncand = k;
        st->index_pruned = range - pl->ncand;
        pl->work = (uint64_t)pl->ncand * (s->count ? s->nsym / s->count + 1 : 1);
        return add_chunks(pl, CANDIDATES, 0, pl->ncand);
    }
    if (w.usable && w.cost * 2 <= range_sym) {
        p->walk = w;
        p->one_exact = w.cf == 0 && (o->metric == TDM_SEQ_LCS || (o->metric == TDM_SEQ_DIFFLIB && (!o->autojunk || (!o->stm_first && stm->n < 200))));
        pl->work = range_sym / 2;
        for (uint64_t i = p->lo; i < p->hi; i += BLOCK_IDS) {
            if (tdm_grow((void **)&pl->chunks, &pl->cap, pl->nchunks + 1, sizeof *pl->chunks)) return -1;
            pl->chunks[pl->nchunks++] = (chunk){BLOCK, (uint32_t)i, (uint32_t)(i + BLOCK_IDS < p->hi ? i + BLOCK_IDS : p->hi)};
        }
        return 0;
    }
    tdm_seq_walk_clear(&w);
    if (kept >= range / 4) {
        pl->work = range_sym;
        return add_chunks(pl, NO_BUCKET, p->lo, p->hi);
    }
    pl->work = kept_sym;
    for (size_t b = 0; b < s->nbuckets; b++) {
        size_t a = tdm_seq_lower_bound(s->buckets[b].ids, s->buckets[b].n, p->lo), z = tdm_seq_lower_bound(s->buckets[b].ids, s->buckets[b].n, p->hi);
        if (p->need[s->buckets[b].length] == NEVER) st->length_pruned += z - a;
        else if (add_chunks(pl, (uint32_t)b, a, z)) return -1;
    }
    return 0;
}

int tdm_seq_query(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, tdm_seq_result *out) {
    return tdm_seq_query_range(s, stm, o, 0, s ? s->count : 0, out);
}

int tdm_seq_query_check(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o) { return check_opts(s, stm, o); }

/* A chunk's hits under ranked placement: the thread that visited it and its span of that thread's rh. */
typedef struct {
    int thread;
    size_t begin, end;
} ranked_chunk;

/* Whether the scan places hits by rank: a threshold query whose similarities are tabulated, over many
 * patterns, that answers many of them (tdm_seq_answers_many: the rank table costs a sort of its entries, 0.2 ms,
 * which a few hits do not repay),
 * with chunks that each visit ascending ids and follow each other in id order (id ranges, index blocks,
 * the sorted candidate list; not length buckets). */
static int ranked_plan(const prepared *p, const plan *pl) {
    if (!p->sim || !p->need || p->o->top_k || pl->work < RANKED_MIN_WORK) return 0;
    for (size_t c = 0; c < pl->nchunks; c++)
        if (pl->chunks[c].bucket < BLOCK) return 0; /* a length bucket */
    return tdm_seq_answers_many(p->need, p->n_need, p->m);
}

/* Turns the per-chunk rank counts into places (rank by rank, then chunk by chunk: similarity descending,
 * ids ascending) and writes every hit there, chunks in parallel. */
static void place_ranked(const prepared *p, const scratch *sc, const ranked_chunk *ck, uint32_t *hist, size_t nchunks,
                         int threads, tdm_seq_hit *hits) {
    size_t at = 0;
    for (uint32_t r = 0; r < p->nrank; r++)
        for (size_t c = 0; c < nchunks; c++) {
            uint32_t n = hist[c * p->nrank + r];
            hist[c * p->nrank + r] = (uint32_t)at;
            at += n;
        }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (size_t c = 0; c < nchunks; c++) {
        uint32_t *place = hist + c * p->nrank;
        const tdm_seq_rank_hit *h = sc[ck[c].thread].rh;
        for (size_t i = ck[c].begin; i < ck[c].end; i++) hits[place[h[i].rank]++] = (tdm_seq_hit){h[i].id, p->rankval[h[i].rank]};
    }
}

/* The CPU scan of ids lo..hi-1 (arguments checked by tdm_seq_query_range). */
static int scan_range(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, uint32_t lo,
                      uint32_t hi, tdm_seq_result *out) {
    int rc;
    const tdm_backend *cpu = tdm_backend_get(s->ctx, 0);
    double t0 = tdm_now_ms();
    prepared p = {.s = s, .stm = stm, .o = o, .lo = lo, .hi = hi};
    plan pl = {0};
    tdm_seq_query_stats st = {.patterns = hi - lo, .backend = cpu->name, .route_reason = (int)TDM_ROUTE_FORCED_CPU};
    if ((rc = prepare(&p, &pl, &st))) {
        query_release(&p, &pl);
        return rc != -1 ? rc : tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory to prepare the query");
    }
    double t1 = tdm_now_ms();
    int threads = o->threads ? o->threads : tdm_ctx_threads(s->ctx);
    uint64_t useful = pl.work / WORK_PER_THREAD + 1;
    if ((uint64_t)threads > useful) threads = (int)useful;
    if ((size_t)threads > pl.nchunks) threads = pl.nchunks ? (int)pl.nchunks : 1;
    scratch *sc = tdm_calloc((size_t)threads, sizeof *sc);
    int failed = !sc;
    /* Many hits in id-ordered chunks: placed by rank instead of sorted per thread and merged serially. */
    ranked_chunk *ck = NULL;
    uint32_t *hist = NULL;
    if (sc && ranked_plan(&p, &pl) && !tdm_seq_rank_table(p.sim, p.n_need * (p.m + 1), &p.rank, &p.rankval, &p.nrank)) {
        ck = tdm_malloc(pl.nchunks * sizeof *ck);
        hist = tdm_calloc(pl.nchunks * (size_t)p.nrank + 1, sizeof *hist);
        if (!ck || !hist) { /* no room for the counts: sort instead */
            tdm_free(ck), tdm_free(hist);
            ck = NULL, hist = NULL;
        }
    }
    int (*visit)(const prepared *, scratch *, uint32_t) = !p.need ? visit_any : p.row64 ? visit_rows : visit_need;
    /* Visiting few, scattered ids: fetch ahead in software (dense id lists stream well without it). */
    int sparse = pl.cand && pl.ncand * 4 < s->count;
    if (sc) {
#pragma omp parallel num_threads(threads) reduction(| : failed) if (threads > 1)
        {
            scratch *me = &sc[omp_get_thread_num()];
            failed |= scratch_init(&p, me) != 0;
#pragma omp for schedule(dynamic, 1)
            for (size_t c = 0; c < pl.nchunks; c++) {
                if (hist) {
                    me->hist = hist + c * p.nrank;
                    ck[c] = (ranked_chunk){omp_get_thread_num(), me->nrh, 0};
                }
                uint32_t unit = pl.chunks[c].bucket;
                const uint32_t *ids = unit == NO_BUCKET ? NULL : unit == CANDIDATES ? pl.cand : unit == BLOCK ? me->blk : s->buckets[unit].ids;
                uint32_t begin = pl.chunks[c].begin, end = pl.chunks[c].end;
                uint32_t block_lo = begin;
                if (unit == BLOCK && !failed) { /* the ids of the block that pass the index bound */
                    size_t nb = tdm_seq_walk_block(s, &p.walk, begin, end - begin, me->u, me->blk);
                    me->st.index_pruned += end - begin - nb;
                    begin = 0, end = (uint32_t)nb;
                }
                if (p.many.mask1 && !sparse && !failed) {
                    if (visit_grouped(&p, me, ids, begin, end, unit == BLOCK ? me->u : NULL, block_lo)) me->err = 1;
                    begin = end; /* done */
                }
                for (uint32_t i = begin; i < end && !me->err && !failed; i++) {
                    if (unit == BLOCK && p.one_exact && me->u[ids[i] - block_lo] == 1) {
                        /* a single common element: the LCS (and difflib's count) is 1 */
                        uint32_t id = ids[i];
                        size_t n = (size_t)(s->off[id + 1] - s->off[id]);
                        me->st.scored++;
                        if (keep_count(&p, me, id, 1, n))
                            me->err = 1;
                        continue;
                    }
                    if (sparse) { /* wide gaps between ids defeat the hardware prefetcher: offsets, then symbols */
                        if (i + 16 < end) __builtin_prefetch(&s->off[ids[i + 16]]);
                        if (i + 8 < end) __builtin_prefetch(s->arena + s->off[ids[i + 8]]);
                    } else if (unit == BLOCK && p.row64 && i + 4 < end) {
                        /* difflib's rows: the pattern four visits ahead, two cache lines (32 symbols). The
                         * mapping pass stalls on its first symbols; on the GPU machine's host this
                         * took a thr 0.1 query from 16.0-17.8 to 15.0-16.0 ms (eight ahead: no gain). */
                        const uint32_t *q = s->arena + s->off[ids[i + 4]];
                        __builtin_prefetch(q);
                        __builtin_prefetch((const void *)((uintptr_t)q + 64)); /* may lie past the arena: a hint only */
                    }
                    if (visit(&p, me, ids ? ids[i] : i)) me->err = 1;
                }
                if (hist) ck[c].end = me->nrh;
            }
            failed |= me->err;
            /* Each thread orders its own hits; the main thread then merges the sorted runs. */
            if (!failed && !hist) tdm_seq_hits_sort(me->hits, me->nhits);
        }
    }
    double t2 = tdm_now_ms();
    size_t total = 0;
    for (int t = 0; sc && t < threads; t++) {
        total += sc[t].nhits + sc[t].nrh;
        st.multiset_pruned += sc[t].st.multiset_pruned;
        st.lcs_pruned += sc[t].st.lcs_pruned;
        st.length_pruned += sc[t].st.length_pruned;
        st.index_pruned += sc[t].st.index_pruned;
        st.scored += sc[t].st.scored;
    }
    if (o->top_k && total > o->top_k) total = o->top_k;
    tdm_seq_hit *hits = failed || tdm_seq_result_room(out, o->reuse, total) ? NULL : out->hits;
    if (hits && hist) place_ranked(&p, sc, ck, hist, pl.nchunks, threads, hits);
    size_t *at = hits ? tdm_calloc((size_t)threads, sizeof *at) : NULL;
    for (size_t k = 0; at && !hist && k < total; k++) { /* few runs, one per thread: a linear pick is enough */
        int best = -1;
        for (int t = 0; t < threads; t++)
            if (at[t] < sc[t].nhits && (best < 0 || worse(sc[best].hits[at[best]], sc[t].hits[at[t]]))) best = t;
        hits[k] = sc[best].hits[at[best]++];
    }
    if (hits && !at) hits = NULL; /* out keeps its array; the caller clears it */
    tdm_free(at);
    tdm_free(ck);
    tdm_free(hist);
    for (int t = 0; sc && t < threads; t++) scratch_free(&sc[t]);
    tdm_free(sc);
    query_release(&p, &pl);
    if (!hits) return tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory for scratch or results");
    st.returned = total;
    st.filter_ms = t1 - t0;
    st.score_ms = t2 - t1;
    st.select_ms = tdm_now_ms() - t2;
    out->n = total;
    if (!o->blocks) tdm_seq_result_drop_blocks(out); /* a reused result's, when this query wants none */
    out->stats = st;
    return TDM_OK;
}

int tdm_seq_query_range(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, uint32_t lo,
                        uint32_t hi, tdm_seq_result *out) {
    int rc = check_opts(s, stm, o);
    if (rc) return rc;
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_seq_query: out is NULL");
    if (lo > hi || hi > s->count) return tdm_error(TDM_E_RANGE, "tdm_seq_query: id range %u..%u outside 0..%u", lo, hi, s->count);
    /* Profiled as one CPU op; work = patterns in the range. */
    TDM_PROF_OP_BEGIN(ps, "seq.scan", TDM_PROF_CAT_OP);
    if (ps.id) tdm_prof_annotate("cpu", hi - lo, 0, 0);
    rc = scan_range(s, stm, o, lo, hi, out);
    if (!rc && o->blocks && (rc = tdm_seq_result_add_blocks(s, stm, o, out))) tdm_seq_result_clear(out);
    TDM_PROF_OP_END(ps, rc);
    return rc;
}

/* Whether a query reads most of the store, so that answering it in the lanes of query_lanes.c beats
 * answering it alone: lcs, a threshold, an STM the lanes fit, no candidate list from the index, and a
 * length that passes with few common elements. */
static int lane_query(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, int *lane) {
    *lane = 0;
    if (o->metric != TDM_SEQ_LCS || o->top_k || !tdm_seq_lanes_fit(s, stm->n) || !s->count) return TDM_OK;
    uint32_t *need;
    size_t n_need;
    if (tdm_seq_need_table(s, stm->n, o, &need, &n_need)) return tdm_error(TDM_E_NOMEM, "tdm_seq_query_batch: no memory");
    /* The lanes read every pattern; a query alone reads the patterns its count bound keeps, which is
     * most of the store only when the query answers many; otherwise the bound keeps a few percent, and
     * the query alone wins. */
    tdm_seq_walk w;
    int rc = tdm_seq_walk_plan(s, stm, need, n_need, &w);
    if (!rc) *lane = tdm_seq_answers_many(need, n_need, stm->n) && !candidate_list(&w, s->nsym, s->count);
    tdm_seq_walk_clear(&w);
    tdm_free(need);
    return rc;
}

int tdm_seq_query_batch(const tdm_seq_store *s, const tdm_seq_stm *stms, size_t n, const tdm_seq_query_opts *o,
                        tdm_seq_result *out) {
    if (!s || !o || !out || (n && !stms)) return tdm_error(TDM_E_INVAL, "tdm_seq_query_batch: NULL argument");
    if (!o->reuse) memset(out, 0, n * sizeof *out);
    int threads = o->threads ? o->threads : tdm_ctx_threads(s->ctx);
    int rc = TDM_OK;
    TDM_PROF_OP_BEGIN(ps, "seq.query_batch", TDM_PROF_CAT_OP);
    if (ps.id) tdm_prof_annotate("cpu", n, 0, 0);
    /* Queries that read most of the store go through the lanes together; the rest one by one. */
    size_t *alone = tdm_malloc((n ? n : 1) * sizeof *alone), nalone = 0, nlane = 0;
    const tdm_seq_stm **lstm = tdm_malloc((n ? n : 1) * sizeof *lstm);
    tdm_seq_result **lout = tdm_malloc((n ? n : 1) * sizeof *lout);
    if (!alone || !lstm || !lout) rc = tdm_error(TDM_E_NOMEM, "tdm_seq_query_batch: no memory");
    for (size_t i = 0; i < n && !rc; i++) {
        int lane = 0;
        if ((rc = check_opts(s, &stms[i], o)) || (rc = lane_query(s, &stms[i], o, &lane))) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", tdm_last_error());
            tdm_error(rc, "query %zu: %s", i, msg);
            break;
        }
        if (lane) lstm[nlane] = &stms[i], lout[nlane++] = &out[i];
        else alone[nalone++] = i;
    }
    if (!rc && nlane == 1) alone[nalone++] = (size_t)(lout[0] - out), nlane = 0;
    if (!rc && nlane) rc = tdm_seq_query_lanes(s, lstm, nlane, o, lout);
    for (size_t k = 0; !rc && o->blocks && k < nlane; k++) rc = tdm_seq_result_add_blocks(s, lstm[k], o, lout[k]);
    if (!rc && nalone >= (size_t)threads && threads > 1) {
        /* Enough queries to fill every thread: one query per thread at a time. */
        tdm_seq_query_opts one = *o;
        one.threads = 1;
        char msg[512] = "";
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (size_t k = 0; k < nalone; k++) {
            size_t i = alone[k];
            int r = tdm_seq_query(s, &stms[i], &one, &out[i]);
            if (r) {
#pragma omp critical(tdm_seq_batch_err)
                if (!rc) rc = r, snprintf(msg, sizeof msg, "query %zu: %s", i, tdm_last_error());
            }
        }
        if (rc) tdm_error(rc, "%s", msg);
    } else {
        for (size_t k = 0; k < nalone && !rc; k++) rc = tdm_seq_query(s, &stms[alone[k]], o, &out[alone[k]]);
    }
    tdm_free(alone);
    tdm_free(lstm);
    tdm_free(lout);
    if (rc)
        for (size_t i = 0; i < n; i++) tdm_seq_result_clear(&out[i]);
    TDM_PROF_OP_END(ps, rc);
    return rc;
}
