/* query_lanes.c: lcs threshold queries of a batch answered together, sixteen per pass over the store. At
 * low thresholds most of the store must be scored for every query, and one query at a time spends its
 * time mapping each pattern's symbols onto its STM. Here each pattern is read and mapped once per group
 * of sixteen STMs (onto the union of their symbols), and the bit-parallel LCS runs in sixteen lanes:
 * lane q holds query q's bit vector, and one union symbol brings one mask per lane (zero where the
 * symbol is not in that STM), so the step V = (V + (V & M)) | (V - (V & M)) is one vector operation.
 * Each lane computes exactly what tdm_seq_lcsq_run computes for its query alone. A lane's similarity is a
 * function of (pattern length, LCS), so it is looked up, together with its rank among the lane's
 * distinct values, in a table; threads take contiguous id ranges (a few per thread, dynamically), count
 * each range's hits per rank, and then place them straight into the answer: rank ascending (similarity
 * descending), and ids ascending within a rank because ranges are placed in id order. Every result
 * equals tdm_seq_query's. */
#include "runtime/prof_internal.h"
#include "seq/seq_internal.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16
#define LANE_BLOCK 4096 /* ids per scan step */
#define NEVER UINT32_MAX
#define LCS_BITS 7 /* a scanned hit's rank field holds length << LCS_BITS | LCS (LCS <= 64) */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* One machine-code copy for AVX-512 (the lanes fill two registers) and the baseline, picked at load time. */
#define LANES_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define LANES_CLONES
#endif

typedef struct {
    const tdm_seq_store *s;
    const tdm_seq_stm *stm[LANES];
    size_t m[LANES], nlanes;
    uint64_t live[LANES];
    uint32_t *need[LANES]; /* per length; NEVER where the length cannot pass */
    size_t n_need;         /* lengths 0..max_length */
    uint32_t *minneed;     /* per length: the smallest need over the lanes (NEVER: no lane passes) */
    uint8_t *need8;        /* per length, per lane: the need, 255 where it cannot pass (LCS <= 64) */
    uint32_t *rank[LANES]; /* per lane: rank[q][n * (m + 1) + L] = rank of the similarity of LCS L */
    double *rankval[LANES]; /* per lane and rank: the similarity, descending */
    uint32_t nrank[LANES];
    uint16_t *umap;        /* vocabulary id -> union slot + 1 (0: in no STM of the group) */
    uint64_t *masks;       /* per union slot, LANES masks (query q's STM positions holding the symbol) */
    uint32_t nunion;
} group;

/* One contiguous id range's work of a group (reused by the next group). */
typedef struct {
    tdm_seq_rank_hit *hits[LANES];
    size_t nhits[LANES], cap[LANES];
    uint32_t *hist[LANES];        /* hits per rank, then (after the count) where this range's go */
    size_t cap_hist[LANES];
    uint64_t union_pruned[LANES]; /* patterns skipped by the union bound in lanes where they could pass */
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

/* LCS lengths of the pattern (as k union slots) against every lane. */
LANES_CLONES static void lanes_lcs(const uint64_t *restrict masks, const uint32_t *restrict slots, size_t k,
                                   const uint64_t *restrict live, uint32_t *restrict lcs) {
    uint64_t v[LANES];
    for (int q = 0; q < LANES; q++) v[q] = ~0ull;
    for (size_t t = 0; t < k; t++) {
        const uint64_t *restrict M = masks + (size_t)slots[t] * LANES;
        for (int q = 0; q < LANES; q++) v[q] = tdm_seq_lcs_step(v[q], M[q]);
    }
    for (int q = 0; q < LANES; q++) lcs[q] = (uint32_t)__builtin_popcountll(~v[q] & live[q]);
}

/* Scans ids lo..hi-1 into each lane's hits in id order, each with (length << LCS_BITS | LCS) where its rank
 * goes: the ranks are looked up afterwards (count_ranks), lane by lane, where a lane's table stays in the
 * first-level cache (sixteen lanes' tables, read per pattern here, would not). The lanes' cursors and hit
 * arrays are held in locals (the stores into the hit arrays would otherwise force every one of them back
 * to memory per lane and pattern). */
static void scan_block(const group *g, lane_scratch *ls, uint32_t lo, uint32_t hi) {
    const tdm_seq_store *s = g->s;
    uint32_t lcs[LANES];
    size_t nl = g->nlanes;
    for (size_t q = 0; q < nl; q++) /* room for a hit per id of the block: the emission below cannot fail */
        if (ls->nhits[q] + (hi - lo) > ls->cap[q] &&
            tdm_grow((void **)&ls->hits[q], &ls->cap[q], ls->nhits[q] + (hi - lo), sizeof **ls->hits)) {
            ls->err = 1;
            return;
        }
    tdm_seq_rank_hit *hp[LANES];
    size_t nh[LANES];
    for (size_t q = 0; q < nl; q++) hp[q] = ls->hits[q], nh[q] = ls->nhits[q];
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
        const uint8_t *nd = g->need8 + n * LANES;
        if (k < low) { /* k bounds every lane's common elements */
            for (size_t q = 0; q < nl; q++) ls->union_pruned[q] += nd[q] != 255;
            continue;
        }
        lanes_lcs(g->masks, ls->slots, k, g->live, lcs);
        for (size_t q = 0; q < nl; q++) { /* branch-free: write every lane's row, keep those that pass */
            uint32_t L = lcs[q];
            hp[q][nh[q]] = (tdm_seq_rank_hit){id, (uint32_t)(n << LCS_BITS | L)};
            nh[q] += L >= nd[q];
        }
    }
    for (size_t q = 0; q < nl; q++) ls->nhits[q] = nh[q];
}

/* A range's hits: each (length, LCS) pair turned into its rank, and the hits per rank counted. */
static void count_ranks(const group *g, lane_scratch *ls) {
    for (size_t q = 0; q < g->nlanes; q++) {
        uint32_t *hist = ls->hist[q];
        const uint32_t *rk = g->rank[q];
        size_t row = g->m[q] + 1;
        tdm_seq_rank_hit *h = ls->hits[q];
        for (size_t i = 0; i < ls->nhits[q]; i++) {
            uint32_t r = rk[(h[i].rank >> LCS_BITS) * row + (h[i].rank & ((1u << LCS_BITS) - 1))];
            h[i].rank = r;
            hist[r]++;
        }
    }
}

static void group_clear(group *g) {
    for (size_t q = 0; q < LANES; q++) tdm_free(g->need[q]), tdm_free(g->rank[q]), tdm_free(g->rankval[q]);
    tdm_free(g->need8);
    tdm_free(g->minneed);
    tdm_free(g->masks);
}

/* Lane q's similarity table, ranked (tdm_seq_rank_table). -1: no memory. */
static int rank_lane(group *g, size_t q) {
    double *sim = tdm_seq_sim_table(TDM_SEQ_LCS, g->m[q], g->n_need);
    int rc = sim ? tdm_seq_rank_table(sim, g->n_need * (g->m[q] + 1), &g->rank[q], &g->rankval[q], &g->nrank[q]) : -1;
    tdm_free(sim);
    return rc;
}

/* Prepares the lanes of up to LANES queries (umap is the caller's zeroed map; left holding the union). */
static int group_init(group *g, const tdm_seq_store *s, const tdm_seq_stm *const *stms, size_t nl,
                      const tdm_seq_query_opts *o, uint16_t *umap) {
    memset(g, 0, sizeof *g);
    g->s = s, g->nlanes = nl, g->umap = umap;
    size_t total = 0;
    for (size_t q = 0; q < nl; q++) total += stms[q]->n, g->stm[q] = stms[q];
    g->masks = tdm_calloc((total ? total : 1) * LANES, sizeof *g->masks);
    g->n_need = (size_t)s->max_length + 1;
    g->minneed = tdm_malloc(g->n_need * sizeof *g->minneed);
    g->need8 = tdm_malloc(g->n_need * LANES);
    if (!g->masks || !g->minneed || !g->need8) return -1;
    memset(g->need8, 255, g->n_need * LANES);
    for (size_t n = 0; n < g->n_need; n++) g->minneed[n] = NEVER;
    for (size_t q = 0; q < nl; q++) {
        const tdm_seq_stm *stm = stms[q];
        g->m[q] = stm->n;
        g->live[q] = tdm_seq_live_bits(stm->n);
        size_t nn;
        if (tdm_seq_need_table(s, stm->n, o, &g->need[q], &nn) || rank_lane(g, q)) return -1;
        for (size_t n = 0; n < g->n_need; n++) {
            if (g->need[q][n] < g->minneed[n]) g->minneed[n] = g->need[q][n];
            if (g->need[q][n] != NEVER) g->need8[n * LANES + q] = (uint8_t)g->need[q][n];
        }
        for (size_t i = 0; i < stm->n; i++) {
            uint32_t sym = stm->ids[i];
            if (sym == TDM_SEQ_UNKNOWN) continue;
            if (!umap[sym]) umap[sym] = (uint16_t)++g->nunion;
            g->masks[(size_t)(umap[sym] - 1) * LANES + q] |= 1ull << i;
        }
    }
    return 0;
}

int tdm_seq_lanes_fit(const tdm_seq_store *s, size_t m) {
    return m >= 1 && m <= 64 && ((uint64_t)s->max_length + 1) * (m + 1) <= TDM_SEQ_LANES_TABLE;
}

/* One group: scan, count, then place every hit into its answer. The store is cut into nparts contiguous
 * ranges of blocks that threads take dynamically (balance), each with its own hits and counts, so the
 * placement can still go rank by rank, then range by range (id order). Returns 0, or -1 (no memory). */
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
                scan_block(g, me, b * LANE_BLOCK, (b + 1) * LANE_BLOCK < s->count ? (b + 1) * LANE_BLOCK : s->count);
            if (!me->err) count_ranks(g, me);
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
                    for (size_t i = 0; i < me->nhits[q]; i++) {
                        tdm_seq_rank_hit h = me->hits[q][i];
                        uint32_t at = place[h.rank]++;
                        /* two lines ahead in this rank's run, for writing: each range writes a few hundred
                           runs at once, too many for the hardware prefetchers to follow (a hint only; past the
                           array's end it does nothing) */
                        __builtin_prefetch((const void *)((uintptr_t)(dst + at) + 128), 1, 3);
                        dst[at] = (tdm_seq_hit){h.id, val[h.rank]};
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
    const tdm_backend *cpu = tdm_backend_get(s->ctx, 0);
    uint16_t *umap = tdm_calloc(s->vocab->n ? s->vocab->n : 1, sizeof *umap);
    lane_scratch *ls = tdm_calloc((size_t)nparts, sizeof *ls);
    int failed = !umap || !ls;
    for (size_t g0 = 0; g0 < n && !failed; g0 += LANES) {
        size_t nl = n - g0 < LANES ? n - g0 : LANES;
        TDM_PROF_OP_BEGIN(ps, "seq.lanes", TDM_PROF_CAT_OP); /* one span per group; work = lanes x patterns */
        if (ps.id) tdm_prof_annotate("cpu", (uint64_t)s->count * nl, 0, 0);
        double t0 = tdm_now_ms();
        group g;
        failed = group_init(&g, s, stms + g0, nl, o, umap) != 0;
        double t1 = tdm_now_ms();
        failed = failed || run_group(&g, ls, nparts, threads, o, out + g0);
        double t2 = tdm_now_ms();
        TDM_PROF_OP_END(ps, failed ? TDM_E_NOMEM : TDM_OK);
        for (size_t q = 0; q < nl && !failed; q++) {
            tdm_seq_query_stats st = {.patterns = s->count, .backend = cpu->name, .route_reason = (int)TDM_ROUTE_FORCED_CPU};
            for (size_t b = 0; b < s->nbuckets; b++)
                if (g.need[q][s->buckets[b].length] == NEVER) st.length_pruned += s->buckets[b].n;
            for (int t = 0; t < nparts; t++) st.multiset_pruned += ls[t].union_pruned[q];
            st.scored = st.patterns - st.length_pruned - st.multiset_pruned;
            st.returned = out[g0 + q]->n;
            st.filter_ms = (t1 - t0) / (double)nl; /* the group's times, shared out */
            st.score_ms = (t2 - t1) / (double)nl;
            out[g0 + q]->stats = st;
        }
        for (size_t q = 0; q < nl; q++) /* leave the map zeroed for the next group */
            for (size_t i = 0; i < g.stm[q]->n; i++)
                if (g.stm[q]->ids[i] != TDM_SEQ_UNKNOWN) umap[g.stm[q]->ids[i]] = 0;
        group_clear(&g);
    }
    for (int t = 0; ls && t < nparts; t++) {
        for (size_t q = 0; q < LANES; q++) tdm_free(ls[t].hits[q]), tdm_free(ls[t].hist[q]);
        tdm_free(ls[t].slots);
    }
    tdm_free(ls);
    tdm_free(umap);
    return failed ? tdm_error(TDM_E_NOMEM, "tdm_seq_query_batch: no memory for the lanes") : TDM_OK;
}
