/* calib.c: the lattice engine's rows of the cost model's op-family table. Work units: BFS arcs (what a
 * sweep scans) with the level count beside it, since a level-synchronous device BFS pays per level; XOR
 * bytes; GEMM m*n*k (times the batch for the batched form); element-wise ops and sums elements. The runner
 * times, along the size ladder, what the engine runs: on the CPU the same bodies the entry points call,
 * on a device its lattice entry points (host operands in, results back, as every call moves them), end to
 * end on the host clock. A device's time is kept less the modelled copies of its operands, because the
 * router adds those per call from the bytes each one moves (and only those a call does move: a lattice's
 * CSR stays on the device between BFS calls). BFS measures two shapes per rung, a deep 2D lattice and a
 * shallow 4D one of about the same arcs, so that the fit can tell the per-level cost from the per-arc one.
 * Matrix ops are measured in f32 (the model has no dtype in its key yet). */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"
#include "runtime/router_internal.h"

#include <math.h>
#include <string.h>

#define CAL_MAX_BYTES ((size_t)512 << 20) /* host operands of one case: past this the ladder stops */
#define GEMM_ITEM 16                      /* batched GEMM items are 16 x 16 x 16 */

static volatile double cal_sink; /* keeps the CPU sum from being optimised away */

double tdm_lat_op_work(const void *args) {
    const tdm_lat_work_args *a = (const tdm_lat_work_args *)args;
    switch (a->op) {
    case TDM_OP_LATTICE_BFS: return a->arcs;
    case TDM_OP_LATTICE_XOR: return a->bytes;
    case TDM_OP_LATTICE_GEMM: return a->m * a->n * a->k;
    case TDM_OP_LATTICE_GEMM_BATCHED: return a->m * a->n * a->k * a->batch;
    case TDM_OP_LATTICE_EWISE:
    case TDM_OP_LATTICE_REDUCE: return a->elements;
    default: return 0.0;
    }
}

/* One measured size of one op: its operands and what a call over them costs in the model's terms. */
typedef struct {
    tdm_ctx *ctx;
    tdm_op op;
    double work, levels;  /* levels: device BFS only */
    uint64_t h2d, d2h;    /* bytes a device call moves */
    tdm_lattice *lat;     /* BFS */
    tdm_lattice_csr g;
    int32_t *dist, *queue;
    void *x, *y, *z;      /* dense operands */
    int64_t side, batch;  /* GEMM */
    size_t n;             /* XOR bytes, element count */
    uint8_t key[37];
} cal_case;

static void case_free(cal_case *c) {
    tdm_lattice_free(c->lat);
    tdm_free(c->dist), tdm_free(c->queue), tdm_free(c->x), tdm_free(c->y), tdm_free(c->z);
    c->lat = NULL, c->dist = c->queue = NULL, c->x = c->y = c->z = NULL;
}

/* The smallest side whose d-dimensional lattice has at least w arcs. */
static int64_t side_for(int d, double w) {
    int64_t L = 2, V, E;
    while (!tdm_lattice_sizes(d, L + 1, &V, &E, NULL) && 2.0 * (double)E < w) L++;
    tdm_clear_error();
    return L;
}

static void fill(void *p, size_t n, int floats) {
    if (floats) {
        float *f = p;
        for (size_t i = 0; i < n; i++) f[i] = (float)((i * 2654435761u) % 1000) * 0.001f - 0.5f;
    } else {
        unsigned char *b = p;
        for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131 + 7);
    }
}

/* Sets c up for about w work units (variant: BFS 0 = 2D, 1 = 4D). TDM_E_NOMEM past the size cap or when
 * memory is short: the ladder stops there. */
static int case_setup(cal_case *c, double w, int variant) {
    case_free(c);
    size_t bytes;
    switch (c->op) {
    case TDM_OP_LATTICE_BFS: {
        const int d = variant ? 4 : 2;
        int64_t L = side_for(d, w), V, E;
        uint64_t csr;
        if (tdm_lattice_sizes(d, L, &V, &E, &csr) || csr > CAL_MAX_BYTES) return tdm_error(TDM_E_NOMEM, "calibration: size cap");
        int rc = tdm_lattice_new(c->ctx, d, L, 0, &c->lat);
        if (rc) return rc;
        tdm_lattice_get_csr(c->lat, &c->g);
        c->dist = tdm_malloc((size_t)V * sizeof *c->dist);
        c->queue = tdm_malloc((size_t)V * sizeof *c->queue);
        if (!c->dist || !c->queue) return tdm_error(TDM_E_NOMEM, "calibration: BFS buffers");
        c->work = 2.0 * (double)E;
        c->levels = (double)d * (double)(L - 1); /* the sweeps start at vertex 0, a corner */
        c->h2d = 0;                              /* the CSR stays on the device after the warm-ups */
        c->d2h = 4u * (uint64_t)V;
        return TDM_OK;
    }
    case TDM_OP_LATTICE_XOR:
        c->n = (size_t)w;
        if (c->n > CAL_MAX_BYTES / 2) return tdm_error(TDM_E_NOMEM, "calibration: size cap");
        c->x = tdm_malloc(c->n), c->y = tdm_malloc(c->n);
        if (!c->x || !c->y) return tdm_error(TDM_E_NOMEM, "calibration: XOR buffers");
        fill(c->x, c->n, 0);
        fill(c->key, sizeof c->key, 0);
        c->work = (double)c->n;
        c->h2d = c->n + sizeof c->key, c->d2h = c->n;
        return TDM_OK;
    case TDM_OP_LATTICE_GEMM:
    case TDM_OP_LATTICE_GEMM_BATCHED:
        if (c->op == TDM_OP_LATTICE_GEMM) {
            c->side = (int64_t)llround(cbrt(w)), c->batch = 1;
            if (c->side < 1) c->side = 1;
        } else {
            c->side = GEMM_ITEM;
            c->batch = (int64_t)llround(w / (GEMM_ITEM * GEMM_ITEM * GEMM_ITEM));
            if (c->batch < 1) c->batch = 1;
        }
        c->n = (size_t)(c->side * c->side * c->batch); /* elements of each operand */
        bytes = c->n * 4;
        if (bytes > CAL_MAX_BYTES / 3) return tdm_error(TDM_E_NOMEM, "calibration: size cap");
        c->x = tdm_malloc(bytes), c->y = tdm_malloc(bytes), c->z = tdm_calloc(c->n, 4);
        if (!c->x || !c->y || !c->z) return tdm_error(TDM_E_NOMEM, "calibration: GEMM operands");
        fill(c->x, c->n, 1), fill(c->y, c->n, 1);
        c->work = (double)c->side * (double)c->side * (double)c->side * (double)c->batch;
        c->h2d = 3u * bytes, c->d2h = bytes;
        return TDM_OK;
    case TDM_OP_LATTICE_EWISE:
    case TDM_OP_LATTICE_REDUCE:
        c->n = (size_t)w;
        bytes = c->n * 4;
        if (bytes > CAL_MAX_BYTES / 3) return tdm_error(TDM_E_NOMEM, "calibration: size cap");
        c->x = tdm_malloc(bytes);
        if (c->op == TDM_OP_LATTICE_EWISE) c->y = tdm_malloc(bytes), c->z = tdm_malloc(bytes);
        if (!c->x || (c->op == TDM_OP_LATTICE_EWISE && (!c->y || !c->z)))
            return tdm_error(TDM_E_NOMEM, "calibration: element-wise buffers");
        fill(c->x, c->n, 1);
        if (c->y) fill(c->y, c->n, 1);
        c->work = (double)c->n;
        c->h2d = (c->op == TDM_OP_LATTICE_EWISE ? 2u : 1u) * bytes;
        c->d2h = c->op == TDM_OP_LATTICE_EWISE ? bytes : 8;
        return TDM_OK;
    default:
        return tdm_error(TDM_E_UNSUPPORTED, "lattice calibration: %s has no runner", tdm_op_name(c->op));
    }
}

/* One call of c on b (the CPU, or a device through its lattice entry points). */
static int case_run(cal_case *c, const tdm_backend *b) {
    const int cpu = b->kind == TDM_BACKEND_CPU;
    const tdm_lattice_dev_ops *ops = b->lattice;
    const int64_t s = c->side, st = s * s;
    double sum;
    int rc;
    switch (c->op) {
    case TDM_OP_LATTICE_BFS:
        if (!cpu) {
            /* The device now holds this lattice's CSR, not what the engine last searched there. */
            rc = ops->bfs_dist(b, &c->g, 0, c->dist);
            tdm_lat_bfs_device_ran(c->ctx, &c->g, rc == TDM_OK);
            return rc;
        }
        memset(c->dist, 0xff, (size_t)c->g.nvertices * sizeof *c->dist);
        tdm_lat_bfs(&c->g, 0, c->dist, c->queue, NULL, 0, NULL);
        return TDM_OK;
    case TDM_OP_LATTICE_XOR: {
        if (!cpu) return ops->xor_key(b, c->x, c->y, c->n, c->key, sizeof c->key, 0);
        tdm_lattice_key k = {c->key, sizeof c->key, 0};
        tdm_lat_xor_cpu(c->x, c->y, c->n, &k, tdm_ctx_threads(c->ctx));
        return TDM_OK;
    }
    case TDM_OP_LATTICE_GEMM:
    case TDM_OP_LATTICE_GEMM_BATCHED:
        if (!cpu)
            return ops->gemm(b, TDM_LATTICE_F32, TDM_LATTICE_NOTRANS, TDM_LATTICE_NOTRANS, s, s, s, 1.0, c->x, s, st, c->y, s,
                             st, 0.0, c->z, s, st, c->batch);
        return tdm_lat_gemm_cpu(c->ctx, TDM_LATTICE_F32, TDM_LATTICE_NOTRANS, TDM_LATTICE_NOTRANS, s, s, s, 1.0, c->x, s, st,
                                c->y, s, st, 0.0, c->z, s, st, c->batch);
    case TDM_OP_LATTICE_EWISE:
        if (!cpu) return ops->ewise(b, TDM_LATTICE_EW_ADD, TDM_LATTICE_F32, c->x, c->y, 0.0, c->z, c->n);
        tdm_lat_ewise_cpu(TDM_LATTICE_EW_ADD, TDM_LATTICE_F32, c->x, c->y, 0.0, c->z, c->n);
        return TDM_OK;
    case TDM_OP_LATTICE_REDUCE:
        if (!cpu) return ops->reduce(b, TDM_LATTICE_RED_SUM, TDM_LATTICE_F32, c->x, c->n, &sum);
        cal_sink = tdm_lat_reduce_cpu(TDM_LATTICE_RED_SUM, TDM_LATTICE_F32, c->x, c->n);
        return TDM_OK;
    default:
        return TDM_E_UNSUPPORTED;
    }
}

int tdm_lat_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts) {
    if (op != TDM_OP_LATTICE_BFS && op != TDM_OP_LATTICE_XOR && op != TDM_OP_LATTICE_GEMM &&
        op != TDM_OP_LATTICE_GEMM_BATCHED && op != TDM_OP_LATTICE_EWISE && op != TDM_OP_LATTICE_REDUCE)
        return tdm_error(TDM_E_UNSUPPORTED, "lattice calibration: %s is not a lattice op", tdm_op_name(op));
    const int variants = op == TDM_OP_LATTICE_BFS ? 2 : 1;
    /* done[i][v]: lane i stops timing variant v (a median above the stop time; a full device stops both). */
    int done[TDM_MAX_BACKENDS][2];
    for (int i = 0; i < nb; i++) {
        /* A device that computes the op but offers no lattice entry points has nothing to time. */
        done[i][0] = done[i][1] = bs[i]->kind != TDM_BACKEND_CPU && !bs[i]->lattice;
        if (variants == 1) done[i][1] = 1;
    }
    cal_case c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx, c.op = op;
    double start = tdm_cal_now_us(), budget_us = budget_ms * 1e3, last_us = 0.0, setup_rate = 0.0, last_work = 0.0;
    int rc = TDM_OK;
    for (double w = TDM_CAL_FIRST_WORK; !rc; w *= TDM_CAL_STEP) {
        int live = 0;
        for (int i = 0; i < nb; i++)
            for (int v = 0; v < variants; v++) live += !done[i][v] && pts[i].n < 32;
        if (!live) break;
        /* A step is not started when it would pass the budget: its runs cost about 4x the slowest lane's
         * last median each, its setup (building a lattice, filling operands) about the last one's rate. */
        double next = TDM_CAL_STEP * last_us * (TDM_CAL_WARMUPS + TDM_CAL_RUNS) * live + variants * setup_rate * w;
        if (w > TDM_CAL_FIRST_WORK && tdm_cal_now_us() - start + next > budget_us) break;
        if (w <= last_work) continue; /* a rung that rounded to the last one's size */
        last_us = 0.0;
        int stop = 0;
        for (int v = 0; v < variants && !rc && !stop; v++) {
            int any = 0;
            for (int i = 0; i < nb; i++) any |= !done[i][v] && pts[i].n < 32;
            if (!any) continue;
            double s0 = tdm_cal_now_us();
            int src = case_setup(&c, w, v);
            if (src == TDM_E_NOMEM) { /* past the cap or out of memory: what was measured stands */
                tdm_clear_error();
                stop = 1;
                break;
            }
            if ((rc = src)) break;
            setup_rate = (tdm_cal_now_us() - s0) / w;
            if (c.work > last_work) last_work = c.work;
            for (int i = 0; i < nb && !rc; i++) {
                if (done[i][v] || pts[i].n >= 32) continue;
                double t[TDM_CAL_RUNS];
                for (int r = 0; r < TDM_CAL_WARMUPS + TDM_CAL_RUNS && !rc; r++) {
                    double t0 = tdm_cal_now_us();
                    rc = case_run(&c, bs[i]);
                    if (r >= TDM_CAL_WARMUPS) t[r - TDM_CAL_WARMUPS] = tdm_cal_now_us() - t0;
                }
                const int gpu = bs[i]->kind != TDM_BACKEND_CPU;
                if (rc == TDM_E_DEVICE_OOM && gpu) { /* the device is full: what was measured stands */
                    tdm_clear_error();
                    rc = TDM_OK;
                    done[i][0] = done[i][1] = 1;
                    continue;
                }
                if (rc) break;
                double med = tdm_cal_median(t, TDM_CAL_RUNS);
                double us = gpu ? tdm_cal_less_link(ctx, med, c.h2d, c.d2h) : med;
                /* the CPU's queue BFS pays nothing per level */
                tdm_cal_add_point(&pts[i], c.work, gpu ? c.levels : 0.0, us);
                if (med > last_us) last_us = med;
                if (med > TDM_CAL_STOP_US) done[i][v] = 1;
            }
        }
        if (stop || tdm_cal_now_us() - start > budget_us) break;
    }
    case_free(&c);
    return rc;
}
