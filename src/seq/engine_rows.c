/* engine_rows.c: ranked device answers for the engine (engine.c). A threshold query that answers many
 * patterns (KATO's 0.1 answers a third of the store) goes to the device with the core's rank table of its
 * similarities (seq_device.h, tdm_seq_dquery.rank). The device then sends only each row's id and where
 * each rank's rows begin, 4 bytes a row instead of a 16-byte hit, and the rows are written here with the
 * core's own doubles, into the result's array (the caller's, when it keeps its results:
 * tdm_seq_query_opts.reuse), checked as they go: every id inside the tier, ids ascending within a rank,
 * the ranks' extents consistent. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 */
#include "seq/engine_internal.h"

#include <string.h>

/* Most (length, count) entries a rank table may have: it travels with the query (4 bytes each). */
#define RANK_TABLE_MAX 65536

int tdm_seq_ranks_prep(const tdm_seq_query_opts *o, size_t m, const uint32_t *need, size_t n_need, tdm_seq_ranks *rk) {
    memset(rk, 0, sizeof *rk);
    if (o->top_k || o->blocks || !need || o->metric == TDM_SEQ_CHAR) return TDM_OK;
    if ((uint64_t)n_need * (m + 1) > RANK_TABLE_MAX || !tdm_seq_answers_many(need, n_need, m)) return TDM_OK;
    double *sim = tdm_seq_sim_table(o->metric, m, n_need);
    int rc = sim ? tdm_seq_rank_table(sim, n_need * (m + 1), &rk->rank, &rk->value, &rk->nrank) : -1;
    tdm_free(sim);
    if (rc) memset(rk, 0, sizeof *rk);
    return rc ? tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for the rank table") : TDM_OK;
}

void tdm_seq_ranks_clear(tdm_seq_ranks *rk) {
    tdm_free(rk->rank);
    tdm_free(rk->value);
    memset(rk, 0, sizeof *rk);
}

int tdm_seq_place_rows(const tdm_seq_dresult *r, const tdm_seq_ranks *rk, uint32_t limit, int threads, size_t extra,
                       int reuse, tdm_seq_result *out) {
    const size_t n = r->n;
    const uint64_t *start = r->rank_start;
    const uint32_t *ids = r->ids;
    if (!ids || !start || start[0] != 0 || start[rk->nrank] != n)
        return tdm_error(TDM_E_DEVICE, "device query: %zu ranked rows with inconsistent rank extents", n);
    for (uint32_t k = 0; k < rk->nrank; k++)
        if (start[k] > start[k + 1]) return tdm_error(TDM_E_DEVICE, "device query: rank %u's rows end before they begin", k);
    if (tdm_seq_result_room(out, reuse, n + extra)) return tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for %zu hits", n + extra);
    tdm_seq_hit *h = out->hits;
    const double *val = rk->value;
    int parts = n >= (1u << 16) && threads > 1 ? threads : 1;
    size_t bad = n;
    /* Each part finds the rank of its first row, then walks on; the hits' first touch is spread too. */
#pragma omp parallel for num_threads(parts) reduction(min : bad) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        size_t a = n * (size_t)t / (size_t)parts, b = n * (size_t)(t + 1) / (size_t)parts;
        uint32_t lo = 0, hi = rk->nrank; /* the last rank whose rows begin at or before a */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (start[mid] <= a) lo = mid;
            else hi = mid;
        }
        uint32_t k = lo;
        for (size_t i = a; i < b; i++) {
            while (start[k + 1] <= i) k++;
            uint32_t id = ids[i];
            if (id >= limit || (i > start[k] && ids[i - 1] >= id)) bad = i < bad ? i : bad;
            h[i] = (tdm_seq_hit){.id = id, .similarity = val[k]};
        }
    }
    if (bad < n) {
        if (!reuse) tdm_seq_result_clear(out);
        return tdm_error(TDM_E_DEVICE, "device query: row %zu (id %u) out of order or outside the %u-pattern tier", bad, ids[bad], limit);
    }
    out->n = n;
    return TDM_OK;
}
