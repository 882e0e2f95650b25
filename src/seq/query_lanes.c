/* query_lanes.c: lcs threshold queries of a batch answered together, 16 or 32 per pass over the store. At
 * low thresholds most of the store must be scored for every query, and one query at a time spends its
 * time mapping each pattern's symbols onto its STM. Here each pattern is read and mapped once per group
 * of STMs (onto the union of their symbols), and the bit-parallel LCS runs in lanes (lanes_kernels.c):
 * lane q holds query q's bit vector, and one union symbol brings one mask per lane (zero where the
 * symbol is not in that STM), so the step V = (V + (V & M)) | (V - (V & M)) is one vector operation. A
 * group is wide (sixteen lanes of 64 bits) or, when its STMs are at most 32 long, narrow (32 lanes of 32
 * bits, in the same two registers): the batch's short STMs are grouped together, so that a pass over the
 * store answers twice as many of them. Each lane computes exactly what tdm_seq_lcsq_run computes for its
 * query alone. A lane's similarity is a
 * function of (pattern length, LCS), so its rank among the lane's distinct values is looked up in a
 * table as the hit is found; threads take contiguous id ranges (a few per thread, dynamically), count
 * each range's hits per rank, and then place them straight into the answer: rank ascending (similarity
 * descending), and ids ascending within a rank because ranges are placed in id order. Every result
 * equals tdm_seq_query's. The lanes move more bytes than they compute (each hit is written, read back
 * and placed), so a range's hit is one 32-bit word: its id's offset in the range and its rank. */
#include "runtime/prof_internal.h"
#include "seq/seq_internal.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WIDE 16   /* lanes of a wide group (64 bits each) */
#define NARROW 32 /* lanes of a narrow group (32 bits each, STMs of at most 32 symbols) */
#define MAXL NARROW
#define LANE_BLOCK 4096 /* ids per scan step */
#define NEVER UINT32_MAX
#define RANK_BITS 14 /* a range's hit: (id - the range's first id) << RANK_BITS | rank */
#define RANGE_IDS (1u << (32 - RANK_BITS)) /* the most ids a range spans */
_Static_assert(TDM_SEQ_LANES_TABLE <= 1u << RANK_BITS, "a lane's ranks fit RANK_BITS");
_Static_assert(RANGE_IDS % LANE_BLOCK == 0, "ranges are whole blocks");

typedef struct {
    const tdm_seq_store *s;
    tdm_seq_lanes_fn *lcs;
    const tdm_seq_stm *stm[MAXL];
    size_t m[MAXL], nlanes, width; /* width: WIDE or NARROW lanes, nlanes of them used */
    union {                        /* the STMs' bits (lanes past nlanes: 0) */
        uint64_t w[WIDE];
        uint32_t n[NARROW];
    } live;
    uint32_t *need[MAXL];  /* per length; NEVER where the length cannot pass */
    size_t n_need;         /* lengths 0..max_length */
    uint32_t *minneed;     /* per length: the smallest need over the lanes (NEVER: no lane passes) */
    uint8_t *need8;        /* per length, width bytes: the lanes' needs, 255 where one cannot pass */
    uint16_t *rank[MAXL];  /* per lane: rank[q][n * (m + 1) + L] = rank of the similarity of LCS L (16 bits:
                              the tables, read per hit, take 40 KB for sixteen 20-symbol STMs over lengths
                              up to 60) */
    double *rankval[MAXL]; /* per lane and rank: the similarity, descending */
    uint32_t nrank[MAXL];
    uint16_t *umap;        /* vocabulary id -> union slot + 1 (0: in no STM of the group) */
    void *masks;           /* per union slot, 128 bytes: width masks (lane q's STM positions holding the symbol) */
    uint32_t nunion;
} group;

/* One contiguous id range's work of a group (reused by the next group). */
typedef struct {
    uint32_t *hits[MAXL];        /* (id - first id of the range) << RANK_BITS | rank, in id order */
    size_t nhits[MAXL], cap[MAXL];
    uint32_t *hist[MAXL];        /* hits per rank, then (after the count) where this range's go */
    size_t cap_hist[MAXL];
    uint64_t union_pruned[MAXL]; /* patterns skipped by the union bound in lanes where they could pass */
    uint32_t *slots;
    size_t cap_slots;
    int err;
} lane_scratch;

/* The pattern's symbols that occur in some STM of the group, as union slots, in order. (An AVX-512
 * gather version was slower on a Sapphire Rapids VM: gathers are microcoded there.) */
static size_t map_union(const uint16_t *restrict map, const uint32_t *restrict P, size_t n, uint32_t *restrict slots) {
    size_t k = 0;
    for (size_t t = 0; t < n; t++) {
        uint32_t sl = map[P[t]];
        slots[k] = sl - 1;
        k += sl != 0;
    }
    return k;
}

/* Scans ids lo..hi-1 of the range that starts at id base into each lane's hits (in id order) and counts
 * them per rank. The lanes' cursors, hit arrays and counts are held in locals (the stores into the hit
 * arrays would otherwise force every one of them back to memory per hit). */
static void scan_block(const group *g, lane_scratch *ls, uint32_t base, uint32_t lo, uint32_t hi) {
    const tdm_seq_store *s = g->s;
    uint32_t lcs[MAXL];
    size_t nl = g->nlanes, width = g->width;
    for (size_t q = 0; q < nl; q++) /* room for a hit per id of the block: the emission below cannot fail */
        if (ls->nhits[q] + (hi - lo) > ls->cap[q] &&
            tdm_grow((void **)&ls->hits[q], &ls->cap[q], ls->nhits[q] + (hi - lo), sizeof **ls->hits)) {
            ls->err = 1;
            return;
        }
    uint32_t *hp[MAXL], *hs[MAXL];
    size_t nh[MAXL];
    for (size_t q = 0; q < nl; q++) hp[q] = ls->hits[q], nh[q] = ls->nhits[q], hs[q] = ls->hist[q];
    for (uint32_t id = lo; id < hi; id++) {
        const uint32_t *P = s->arena + s->off[id];
        size_t n = (size_t)(s->off[id + 1] - s->off[id]);
        uint32_t low = g->minneed[n];
        if (low == NEVER) continue; /* length-pruned in every lane (counted from the length index) */
        if (n + 1 > ls->cap_slots && tdm_grow((void **)&ls->slots, &ls->cap_slots, n + 1, sizeof *ls->slots)) {
            ls->err = 1;
            break;
        }
        size_t k = map_union(g->umap, P, n, ls->slots);
        const uint8_t *nd = g->need8 + n * width;
        if (k < low) { /* k bounds every lane's common elements */
            for (size_t q = 0; q < nl; q++) ls->union_pruned[q] += nd[q] != 255;
            continue;
        }
        /* the lanes the pattern passes in (a quarter of them at threshold 0.1 here) */
        for (uint32_t pass = g->lcs(g->masks, ls->slots, k, &g->live, nd, lcs); pass; pass &= pass - 1) {
            int q = __builtin_ctz(pass);
            uint32_t r = g->rank[q][n * (g->m[q] + 1) + lcs[q]];
            hs[q][r]++;
            hp[q][nh[q]++] = (id - base) << RANK_BITS | r;
        }
    }
    for (size_t q = 0; q < nl; q++) ls->nhits[q] = nh[q];
}

static void group_clear(group *g) {
    for (size_t q = 0; q < MAXL; q++)
        tdm_free(g->need[q]), tdm_free(g->rank[q]), tdm_free(g->rankval[q]);
    tdm_free(g->need8);
    tdm_free(g->minneed);
    tdm_free(g->masks);
}

/* Lane q's similarity table, ranked (tdm_seq_rank_table; at most TDM_SEQ_LANES_TABLE ranks). -1: no memory. */
static int rank_lane(group *g, size_t q) {
    double *sim = tdm_seq_sim_table(TDM_SEQ_LCS, g->m[q], g->n_need);
    size_t e = g->n_need * (g->m[q] + 1);
    uint32_t *rank = NULL;
    int rc = sim ? tdm_seq_rank_table(sim, e, &rank, &g->rankval[q], &g->nrank[q]) : -1;
    if (!rc && !(g->rank[q] = tdm_malloc(e * sizeof *g->rank[q]))) rc = -1;
    for (size_t i = 0; !rc && i < e; i++) g->rank[q][i] = (uint16_t)rank[i];
    tdm_free(sim);
    tdm_free(rank);
    return rc;
}

/* Prepares the lanes of nl queries, narrow (nl <= NARROW, every STM at most 32 long) or wide (nl <= WIDE).
 * umap is the caller's zeroed map, left holding the union. */
static int group_init(group *g, const tdm_seq_store *s, const tdm_seq_stm *const *stms, size_t nl, int narrow,
                      const tdm_seq_query_opts *o, uint16_t *umap) {
    memset(g, 0, sizeof *g);
    g->s = s, g->nlanes = nl, g->umap = umap;
    g->width = narrow ? NARROW : WIDE;
    g->lcs = tdm_seq_lanes_kernel(narrow);
    size_t total = 0;
    for (size_t q = 0; q < nl; q++) total += stms[q]->n, g->stm[q] = stms[q];
    g->masks = tdm_calloc(total ? total : 1, 128); /* a union slot's masks: 128 bytes either way */
    g->n_need = (size_t)s->max_length + 1;
    g->minneed = tdm_malloc(g->n_need * sizeof *g->minneed);
    g->need8 = tdm_malloc(g->n_need * g->width);
    if (!g->masks || !g->minneed || !g->need8) return -1;
    memset(g->need8, 255, g->n_need * g->width);
    for (size_t n = 0; n < g->n_need; n++) g->minneed[n] = NEVER;
    for (size_t q = 0; q < nl; q++) {
        const tdm_seq_stm *stm = stms[q];
        g->m[q] = stm->n;
        if (narrow) g->live.n[q] = (uint32_t)tdm_seq_live_bits(stm->n);
        else g->live.w[q] = tdm_seq_live_bits(stm->n);
        size_t nn;
        if (tdm_seq_need_table(s, stm->n, o, &g->need[q], &nn) || rank_lane(g, q)) return -1;
        for (size_t n = 0; n < g->n_need; n++) {
            if (g->need[q][n] < g->minneed[n]) g->minneed[n] = g->need[q][n];
            if (g->need[q][n] != NEVER) g->need8[n * g->width + q] = (uint8_t)g->need[q][n];
        }
        for (size_t i = 0; i < stm->n; i++) {
            uint32_t sym = stm->ids[i];
            if (sym == TDM_SEQ_UNKNOWN) continue;
            if (!umap[sym]) umap[sym] = (uint16_t)++g->nunion;
            size_t at = (size_t)(umap[sym] - 1) * g->width + q;
            if (narrow) ((uint32_t *)g->masks)[at] |= 1u << i;
            else ((uint64_t *)g->masks)[at] |= 1ull << i;
        }
    }
    return 0;
}

int tdm_seq_lanes_fit(const tdm_seq_store *s, size_t m) {
    return m >= 1 && m <= 64 && ((uint64_t)s->max_length + 1) * (m + 1) <= TDM_SEQ_LANES_TABLE;
}

/* One group: scan and count, then place every hit into its answer. The store is cut into nparts contiguous
 * ranges of blocks (none over RANGE_IDS ids) that threads take dynamically (balance), each with its own
 * hits and counts, so the placement can still go rank by rank, then range by range (id order). Returns 0,
 * or -1 (no memory). */
static int run_group(const group *g, lane_scratch *ls, int nparts, int threads, const tdm_seq_query_opts *o,
                     tdm_seq_result *const *out) {
    const tdm_seq_store *s = g->s;
    uint32_t nblocks = (s->count + LANE_BLOCK - 1) / LANE_BLOCK;
    size_t nl = g->nlanes;
    int failed = 0;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(dynamic, 1)
        for (int pt = 0; pt < nparts; pt++) {
            lane_scratch *me = &ls[pt];
            me->err = 0;
            for (size_t q = 0; q < nl && !me->err; q++) {
                me->nhits[q] = 0, me->union_pruned[q] = 0;
                if (tdm_grow((void **)&me->hist[q], &me->cap_hist[q], g->nrank[q] + 1, sizeof *me->hist[q])) me->err = 1;
                else memset(me->hist[q], 0, g->nrank[q] * sizeof *me->hist[q]);
            }
            uint32_t b0 = (uint32_t)((uint64_t)nblocks * pt / nparts), b1 = (uint32_t)((uint64_t)nblocks * (pt + 1) / nparts);
            for (uint32_t b = b0; b < b1 && !me->err; b++)
                scan_block(g, me, b0 * LANE_BLOCK, b * LANE_BLOCK,
                           (b + 1) * LANE_BLOCK < s->count ? (b + 1) * LANE_BLOCK : s->count);
        }
#pragma omp single
        {
            for (int u = 0; u < nparts; u++) failed |= ls[u].err;
            for (size_t q = 0; q < nl && !failed; q++) {
                size_t total = 0;
                for (int u = 0; u < nparts; u++) total += ls[u].nhits[q];
                if (tdm_seq_result_room(out[q], o->reuse, total)) {
                    failed = 1;
                    break;
                }
                out[q]->n = total;
                if (!o->blocks) tdm_seq_result_drop_blocks(out[q]);
                uint32_t at = 0; /* counts -> each range's first place per rank: rank-major, then range */
                for (uint32_t r = 0; r < g->nrank[q]; r++)
                    for (int u = 0; u < nparts; u++) {
                        uint32_t c = ls[u].hist[q][r];
                        ls[u].hist[q][r] = at;
                        at += c;
                    }
            }
        }
        if (!failed) {
#pragma omp for schedule(dynamic, 1)
            for (int pt = 0; pt < nparts; pt++)
                for (size_t q = 0; q < nl; q++) {
                    const lane_scratch *me = &ls[pt];
                    tdm_seq_hit *dst = out[q]->hits;
                    uint32_t *place = me->hist[q];
                    const double *val = g->rankval[q];
                    uint32_t base = (uint32_t)((uint64_t)nblocks * pt / nparts) * LANE_BLOCK;
                    for (size_t i = 0; i < me->nhits[q]; i++) {
                        uint32_t h = me->hits[q][i], r = h & ((1u << RANK_BITS) - 1);
                        uint32_t at = place[r]++;
                        /* two lines ahead in this rank's run, for writing: each range writes a few hundred
                           runs at once, too many for the hardware prefetchers to follow (a hint only; past the
                           array's end it does nothing) */
                        __builtin_prefetch((const void *)((uintptr_t)(dst + at) + 128), 1, 3);
                        dst[at] = (tdm_seq_hit){base + (h >> RANK_BITS), val[r]};
                    }
                }
        }
    }
    return failed ? -1 : 0;
}

int tdm_seq_query_lanes(const tdm_seq_store *s, const tdm_seq_stm *const *stms, size_t n, const tdm_seq_query_opts *o,
                        tdm_seq_result *const *out) {
    int threads = o->threads ? o->threads : tdm_ctx_threads(s->ctx);
    uint32_t nblocks = (s->count + LANE_BLOCK - 1) / LANE_BLOCK;
    if ((uint32_t)threads > nblocks) threads = nblocks ? (int)nblocks : 1;
    int nparts = threads == 1 ? 1 : 4 * threads; /* ranges taken dynamically: a few per thread */
    if ((uint32_t)nparts > nblocks) nparts = nblocks ? (int)nblocks : 1;
    uint32_t span = RANGE_IDS / LANE_BLOCK; /* and none over RANGE_IDS ids */
    if ((uint32_t)nparts < (nblocks + span - 1) / span) nparts = (int)((nblocks + span - 1) / span);
    const tdm_backend *cpu = tdm_backend_get(s->ctx, 0);
    uint16_t *umap = tdm_calloc(s->vocab->n ? s->vocab->n : 1, sizeof *umap);
    lane_scratch *ls = tdm_calloc((size_t)nparts, sizeof *ls);
    size_t *order = tdm_malloc((n ? n : 1) * sizeof *order), nshort = 0;
    int failed = !umap || !ls || !order;
    for (size_t i = 0; i < n && !failed; i++) /* STMs of at most 32 symbols first: they may go in narrow groups */
        if (stms[i]->n <= 32) order[nshort++] = i;
    for (size_t i = 0, at = nshort; i < n && !failed; i++)
        if (stms[i]->n > 32) order[at++] = i;
    /* As many narrow groups as make the fewest passes over the store, the rest wide: the short STMs' full
       groups of 32, and one more for the remainder where that saves a pass. */
    size_t full = nshort / NARROW, part = (nshort + NARROW - 1) / NARROW;
    size_t pass_full = full + (n - full * NARROW + WIDE - 1) / WIDE, pass_part = part + (n - nshort + WIDE - 1) / WIDE;
    size_t in_narrow = pass_part < pass_full ? nshort : full * NARROW;
    for (size_t g0 = 0; g0 < n && !failed;) {
        int narrow = g0 < in_narrow;
        size_t nl = narrow ? (in_narrow - g0 < NARROW ? in_narrow - g0 : NARROW) : (n - g0 < WIDE ? n - g0 : WIDE);
        const tdm_seq_stm *gstm[MAXL];
        tdm_seq_result *gout[MAXL];
        for (size_t q = 0; q < nl; q++) gstm[q] = stms[order[g0 + q]], gout[q] = out[order[g0 + q]];
        TDM_PROF_OP_BEGIN(ps, "seq.lanes", TDM_PROF_CAT_OP); /* one span per group; work = lanes x patterns */
        if (ps.id) tdm_prof_annotate("cpu", (uint64_t)s->count * nl, 0, 0);
        double t0 = tdm_now_ms();
        group g;
        failed = group_init(&g, s, gstm, nl, narrow, o, umap) != 0;
        double t1 = tdm_now_ms();
        failed = failed || run_group(&g, ls, nparts, threads, o, gout);
        double t2 = tdm_now_ms();
        TDM_PROF_OP_END(ps, failed ? TDM_E_NOMEM : TDM_OK);
        for (size_t q = 0; q < nl && !failed; q++) {
            tdm_seq_query_stats st = {.patterns = s->count, .backend = cpu->name, .route_reason = (int)TDM_ROUTE_FORCED_CPU};
            for (size_t b = 0; b < s->nbuckets; b++)
                if (g.need[q][s->buckets[b].length] == NEVER) st.length_pruned += s->buckets[b].n;
            for (int t = 0; t < nparts; t++) st.multiset_pruned += ls[t].union_pruned[q];
            st.scored = st.patterns - st.length_pruned - st.multiset_pruned;
            st.returned = gout[q]->n;
            st.filter_ms = (t1 - t0) / (double)nl; /* the group's times, shared out */
            st.score_ms = (t2 - t1) / (double)nl;
            gout[q]->stats = st;
        }
        for (size_t q = 0; q < nl; q++) /* leave the map zeroed for the next group */
            for (size_t i = 0; i < gstm[q]->n; i++)
                if (gstm[q]->ids[i] != TDM_SEQ_UNKNOWN) umap[gstm[q]->ids[i]] = 0;
        group_clear(&g);
        g0 += nl;
    }
    for (int t = 0; ls && t < nparts; t++) {
        for (size_t q = 0; q < MAXL; q++) tdm_free(ls[t].hits[q]), tdm_free(ls[t].hist[q]);
        tdm_free(ls[t].slots);
    }
    tdm_free(ls);
    tdm_free(umap);
    tdm_free(order);
    return failed ? tdm_error(TDM_E_NOMEM, "tdm_seq_query_batch: no memory for the lanes") : TDM_OK;
}
