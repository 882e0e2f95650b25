/* calib.c: the sequence engine's row of the cost model's op-family table. Work W of a query is the
 * number of symbols it searches (patterns x mean length): scoring is linear in it, and the prefilters
 * keep the same fraction of a store drawn from one distribution. The runner grows one generated store
 * (the shared generator's Zipf symbols and geometric lengths, as in the benchmarks) along the size ladder
 * and times the same threshold queries on the CPU (tdm_seq_query_range, what the engine runs there) and
 * on each device through its store interface (what the engine's device tier runs: rows by rank when the
 * answer is large, placed on the host), end to end on the host clock, since that is what a caller waits
 * for. */
#define _POSIX_C_SOURCE 200809L /* engine_internal.h's locks under -std=c11 */
#include "runtime/router_internal.h"
#include "seq/engine_internal.h"
#include "seq/seq_device.h"
#include "seq/seq_internal.h"

#include <string.h>

#define NSTM 4
#define STM_LEN 64 /* whole stored patterns: a KATO STM is what patterns are learned from */

double tdm_seq_query_work(const void *args) {
    const tdm_seq_work_args *a = (const tdm_seq_work_args *)args;
    return (double)a->symbols;
}

typedef struct {
    const tdm_backend *b;
    tdm_seq_dstore *d; /* device store (NULL for the CPU) */
    int done;
} lane;

/* Adds generated patterns until the store holds at least `symbols` symbols. */
static int grow(tdm_seq_store *s, tdm_seq_gen *g, uint32_t *ranks, uint32_t *ids, double symbols) {
    while ((double)s->nsym < symbols) {
        size_t n;
        tdm_seq_gen_next(g, ranks, &n);
        for (size_t i = 0; i < n; i++) {
            char name[16];
            size_t len = tdm_seq_gen_symbol_name(ranks[i], name);
            int rc = tdm_seq_vocab_intern(s->vocab, name, len, &ids[i]);
            if (rc) return rc;
        }
        int rc = tdm_seq_store_add(s, ids, n, NULL);
        if (rc) return rc;
    }
    return TDM_OK;
}

/* One timed query on lane l over the whole store (device: everything was appended). */
static int run_once(lane *l, const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o,
                    const uint32_t *need, size_t n_need, double *us) {
    double t0 = tdm_cal_now_us();
    int rc;
    if (!l->d) {
        tdm_seq_result res;
        rc = tdm_seq_query_range(s, stm, o, 0, s->count, &res);
        if (!rc) tdm_seq_result_clear(&res);
    } else {
        tdm_seq_ranks rk;
        rc = tdm_seq_ranks_prep(o, stm->n, need, n_need, &rk);
        tdm_seq_dquery q = {.metric = (int)o->metric, .autojunk = o->autojunk, .stm_first = o->stm_first,
                            .stm = stm->ids, .m = stm->n, .limit = s->count, .need = need, .n_need = n_need,
                            .rank = rk.nrank ? rk.rank : NULL, .nrank = rk.nrank};
        tdm_seq_dresult r;
        memset(&r, 0, sizeof r);
        if (!rc) rc = l->b->seq->query(l->d, &q, &r);
        if (!rc && r.ids) {
            tdm_seq_result placed = {0};
            rc = tdm_seq_place_rows(&r, &rk, s->count, o->threads ? o->threads : tdm_ctx_threads(s->ctx), 0, 0, &placed);
            tdm_seq_result_clear(&placed);
        }
        tdm_seq_ranks_clear(&rk);
        tdm_free(r.hits);
        tdm_free(r.blocks);
    }
    *us = tdm_cal_now_us() - t0;
    return rc;
}

int tdm_seq_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts) {
    if (op != TDM_OP_SEQ_LCS && op != TDM_OP_SEQ_DIFFLIB)
        return tdm_error(TDM_E_UNSUPPORTED, "seq calibration: %s is not a query op", tdm_op_name(op));
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = op == TDM_OP_SEQ_DIFFLIB ? TDM_SEQ_DIFFLIB : TDM_SEQ_LCS;
    tdm_seq_gen_opts go;
    tdm_seq_gen_opts_init(&go);
    go.seed = 0x7a6e64656dull; /* fixed: every calibration measures the same data */
    tdm_seq_store *s = NULL;
    tdm_seq_gen *g = NULL;
    uint32_t *ranks = tdm_malloc((size_t)go.max_len * sizeof *ranks), *ids = tdm_malloc((size_t)go.max_len * sizeof *ids);
    lane lanes[TDM_MAX_BACKENDS];
    tdm_seq_stm stms[NSTM];
    memset(lanes, 0, sizeof lanes);
    memset(stms, 0, sizeof stms);
    int rc = !ranks || !ids ? tdm_error(TDM_E_NOMEM, "seq calibration: no memory") : TDM_OK;
    if (!rc) rc = tdm_seq_store_new(ctx, &s);
    if (!rc) rc = tdm_seq_gen_new(&go, &g);
    for (int i = 0; i < nb && !rc; i++) {
        lanes[i].b = bs[i];
        if (bs[i]->kind != TDM_BACKEND_CPU) {
            if (!bs[i]->seq) lanes[i].done = 1; /* computes the op but keeps no store: nothing to time */
            else rc = bs[i]->seq->store_new(bs[i], &lanes[i].d);
        }
    }
    /* STMs: stored patterns, as a KATO STM resembles what was learned. */
    if (!rc) rc = grow(s, g, ranks, ids, TDM_CAL_FIRST_WORK);
    for (int k = 0; k < NSTM && !rc; k++) {
        const uint32_t *syms;
        size_t n;
        rc = tdm_seq_store_get(s, (uint32_t)tdm_seq_gen_uniform(g, s->count), &syms, &n);
        if (!rc) rc = tdm_seq_stm_from_ids(s->vocab, syms, n < STM_LEN ? n : STM_LEN, &stms[k]);
    }
    double start = tdm_cal_now_us(), budget_us = budget_ms * 1e3;
    int live = 0;
    for (int i = 0; i < nb; i++) live += !lanes[i].done;
    /* A step is not started when it would pass the budget: its runs cost about 4x the slowest lane's
     * last median each, and growing the store (learning, indexing) about the last growth's rate per
     * symbol, which dominates on small machines. */
    double last_us = 0.0, grow_rate = 0.0;
    for (double w = TDM_CAL_FIRST_WORK; !rc && live > 0 && pts[0].n < 32; w *= TDM_CAL_STEP) {
        double next = TDM_CAL_STEP * last_us * (TDM_CAL_WARMUPS + TDM_CAL_RUNS) * live + grow_rate * (w - (double)s->nsym);
        if (w > TDM_CAL_FIRST_WORK && tdm_cal_now_us() - start + next > budget_us) break;
        last_us = 0.0;
        double g0 = tdm_cal_now_us(), have_sym = (double)s->nsym;
        rc = grow(s, g, ranks, ids, w);
        if ((double)s->nsym > have_sym) grow_rate = (tdm_cal_now_us() - g0) / ((double)s->nsym - have_sym);
        uint32_t *need[NSTM] = {0};
        size_t n_need[NSTM] = {0};
        for (int k = 0; k < NSTM && !rc; k++)
            if (tdm_seq_need_table(s, stms[k].n, &o, &need[k], &n_need[k])) rc = tdm_error(TDM_E_NOMEM, "seq calibration: need table");
        for (int i = 0; i < nb && !rc; i++) {
            lane *l = &lanes[i];
            if (l->done) continue;
            if (l->d) {
                tdm_seq_dstore_info info;
                l->b->seq->store_info(l->d, &info);
                uint32_t have = (uint32_t)info.patterns;
                rc = l->b->seq->store_append(l->d, s->arena + s->off[have], s->off + have, have, s->count - have);
                if (rc == TDM_E_DEVICE_OOM) { /* the device is full: what was measured stands */
                    tdm_clear_error();
                    rc = TDM_OK;
                    l->done = 1, live--;
                    continue;
                }
            }
            double t[TDM_CAL_RUNS];
            for (int r = 0; r < TDM_CAL_WARMUPS + TDM_CAL_RUNS && !rc; r++) {
                int k = r % NSTM;
                double us;
                rc = run_once(l, s, &stms[k], &o, need[k], n_need[k], &us);
                if (r >= TDM_CAL_WARMUPS) t[r - TDM_CAL_WARMUPS] = us;
            }
            if (rc) break;
            double med = tdm_cal_median(t, TDM_CAL_RUNS);
            tdm_cal_add_point(&pts[i], (double)s->nsym, 0.0, med);
            if (med > last_us) last_us = med;
            if (med > TDM_CAL_STOP_US) l->done = 1, live--;
        }
        for (int k = 0; k < NSTM; k++) tdm_free(need[k]);
        if (tdm_cal_now_us() - start > budget_us) break;
    }
    for (int i = 0; i < nb; i++)
        if (lanes[i].d) lanes[i].b->seq->store_free(lanes[i].d);
    for (int k = 0; k < NSTM; k++) tdm_seq_stm_clear(&stms[k]);
    tdm_seq_gen_free(g);
    tdm_seq_store_free(s);
    tdm_free(ranks);
    tdm_free(ids);
    return rc;
}
